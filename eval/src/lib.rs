//! The evaluation above the golden model. Its core is the calibrated SM
//! model: what the H200 really
//! ran, kernel by kernel, timed unchecked and with GPUArmor's MLU.
//!
//! - [`ncu`]: reader for the Nsight Compute CSV of a workload's iteration 2.
//! - [`workload`]: a version-2 trace's iteration-2 kernel launches joined
//!   launch for launch with their ncu rows.
//! - [`sm_model`]: the SM model: CTAs over SMs in waves by the launch's
//!   occupancy, per-warp instruction streams with the launch's real count
//!   and mix, 4 schedulers, loads scoreboarded, L1/L2/DRAM latency from the
//!   launch's hit rates, L2 and DRAM bandwidth floors.
//! - [`baseline`]: the unchecked model against each kernel's measured time.
//! - [`mlu_model`]: GPUArmor's MLU in the SM model (the checked run).
//! - [`unit_agreement`]: the checked run's MLU timing against the unit's
//!   cycle model (`sim::mlu_unit`), request by request.
//! - [`sweep`], [`plot`]: `mlugen sweep`'s grid of design points and plots.
//! - [`alloc_kernels`]: the canary allocator's run-time overhead on the SM
//!   pipeline model (`mlugen alloc-bench`); [`model_bench`]: the golden
//!   model's own throughput (`mlugen bench`).
//!
//! This crate sits above the golden model (`sim`): it reads traces through
//! `sim::trace` and never the other way round.
pub mod alloc_kernels;
pub mod baseline;
pub mod mlu_model;
pub mod model_bench;
pub mod ncu;
pub mod plot;
pub mod report;
pub mod sm_model;
pub mod sweep;
pub mod unit_agreement;
pub mod workload;
