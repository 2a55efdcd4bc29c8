//! mlugen synthesis flow: Yosys + ABC technology mapping of the emitted
//! Verilog, OpenSTA timing and power, report parsing, and the MLB sweep
//! report. See docs/synth.md for every choice the flow makes.
pub mod activity;
pub mod flow;
pub mod gating;
pub mod liberty;
pub mod report;
pub mod sweep;
pub mod tools;
pub mod workload;
