pub mod bench;
pub mod check;
pub mod cosim;
pub mod generate;
pub mod sweep;
pub mod synth;
pub mod trace;
pub mod wave;
