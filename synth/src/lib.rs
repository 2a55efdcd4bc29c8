//! synth crate
