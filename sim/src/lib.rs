//! sim crate
pub mod scenario;
pub mod trace;
