//! The verification library: everything that drives generated Verilog
//! against the golden model, for the `mlugen` commands and for the tests in
//! `testbench/` alike. Test-only pieces (lint, formal, equivalence, the
//! rust-hdl pipeline drivers, mutants) live in the `testbench` crate, which
//! the `mlugen` binary does not depend on.
//!
//! - [`verilator`]: port layout from a manifest, the cached Verilator build,
//!   the harness child process; [`harness`]: the generated C++ (askama
//!   templates under `verif/templates/`) and the Icarus testbench.
//! - [`cosim`]: the MLB cosimulation runner; [`unit_driver`]: the MLU unit's
//!   cosimulation against `sim::mlu_unit`, [`unit_stimulus`] its random
//!   requests; [`unit_program`]: scenarios and
//!   trace replays as unit requests; [`canary_driver`]: the canary unit's.
//! - [`gatelevel`]: the same runs on a synthesized netlist.
//! - [`recorder`], [`vectors`], [`energy_workload`]: port records, the
//!   committed vector files, and the switching workloads of the energy report.
//! - [`wave`]: the VCD of `mlugen wave`.
//! - [`shard`]: seed shards of a cosim run and their merge.
pub mod verilator;
pub mod harness;
pub mod cosim;
pub mod shard;
pub mod canary_driver;
pub mod gatelevel;
pub mod recorder;
pub mod energy_workload;
pub mod vectors;
pub mod unit_driver;
pub mod unit_stimulus;
pub mod unit_program;
pub mod wave;
