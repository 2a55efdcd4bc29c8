//! Testbenches shared by the integration tests under `testbench/tests/`.
pub mod lint;
pub mod memport;
pub mod mlu_driver;
