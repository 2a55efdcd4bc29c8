//! Testbenches shared by the integration tests under `testbench/tests/`.
pub mod memport;
pub mod lint;
pub mod equiv;
pub mod verilator;
pub mod harness;
pub mod cosim;
pub mod shard;
pub mod mlu_driver;
pub mod formal;
pub mod canary_driver;
pub mod gatelevel;
pub mod recorder;
pub mod energy_workload;
pub mod vectors;
pub mod sm_pipeline_driver;
pub mod sm_pipeline_alloc_driver;
pub mod canary_timing;
