//! hw crate
