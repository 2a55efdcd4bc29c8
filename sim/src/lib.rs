//! sim crate
