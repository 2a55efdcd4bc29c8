//! mlugen RTL in rust-hdl. One block per file; the golden model (`sim`) uses
//! the same names. Conventions every block follows (see docs/design.md,
//! "RTL conventions"): registers have no reset of their own, so state that
//! must reset (valid bits, replacement state) has an explicit synchronous
//! reset/flush input; every combinational signal gets a default first (no
//! latches); literals that reach the Verilog are sized constants.
pub mod prio_enc;
pub mod counter;
pub mod plru;
pub mod mlb;
pub mod in_bounds;
pub mod memcheck;
pub mod lane_checks;
pub mod mlu_unit;
pub mod manifest;
pub mod interface;
pub mod tb;
pub mod clean;
pub mod generate;
pub mod state_reg;
pub mod walker;
pub mod mlu;
pub mod warp_sched;
pub mod mem_model;
pub mod sm_pipeline;
pub mod sm_pipeline_alloc;
pub mod canary;
