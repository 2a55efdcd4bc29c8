//! The canary allocator unit (spec section 8): the golden model.
//! These modules are the executable specification the RTL (hw::canary) is
//! checked against, named as its blocks are:
//! - [`heap`]: pages, size classes, usage bitfields, page_table, region
//!   (super-block) full-page counters, malloc/free, canaries in memory.
//! - [`hash`]: the page-selection hash with k_s and k_mp.
//! - [`keyed`]: the keyed primitive behind canary_key (SipHash-2-4).
//! - [`checker`]: the always-on background checker and its compressed
//!   live-chunk list.
//! - [`mod@unit`]: the unit at cycle level (the RTL FSM's timing around
//!   [`heap::Heap`]).
//! - [`kernels`]: synthetic allocation kernels on the SM pipeline model
//!   (run-time overhead of check-on-free and always-on).
//! - [`mod@bench`]: the arbiter model and the cycle cost model (`mlugen alloc-bench`).
//!
//! Design and decisions: docs/canary.md.
pub mod bench;
pub mod checker;
pub mod hash;
pub mod heap;
pub mod keyed;
pub mod kernels;
pub mod unit;
