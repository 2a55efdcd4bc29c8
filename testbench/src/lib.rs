//! Test-only support for the integration tests under `testbench/tests/`:
//! Verilog lint, formal checks (Yosys `sat` over the property wrappers in
//! formal/), equivalence checks, and the rust-hdl simulation drivers of the SM
//! pipelines and the canary timing model. What the `mlugen` commands also
//! need (harnesses, cosim runner, drivers, recorder) is the `verif` crate.
pub mod lint;
pub mod equiv;
pub mod formal;
pub mod sm_pipeline_driver;
pub mod sm_pipeline_alloc_driver;
pub mod canary_timing;
