//! The canary allocator unit (spec section 8): the golden model.
//! These modules are the executable specification the RTL (hw::canary) is
//! checked against, named as its blocks are:
//! - [`heap`]: pages, size classes, usage bitfields, page_table, region
//!   (super-block) full-page counters, malloc/free, canaries in memory.
//! - [`hash`]: the page-selection hash with k_s and k_mp.
//! - [`siphash`]: the keyed primitive behind canary_key (SipHash-2-4; RTL
//!   `siphash`).
//! - [`checker`]: the always-on background checker and its compressed
//!   live-chunk list.
//! - [`alloc_unit`]: the unit at cycle level (the RTL FSM's timing around
//!   [`heap::Heap`]).
//! - [`mod@bench`]: the arbiter model and the cycle cost model (`mlugen alloc-bench`;
//!   its kernels on the SM pipeline model are `eval::alloc_kernels`).
//!
//! Design and decisions: docs/canary.md.
pub mod bench;
pub mod checker;
pub mod hash;
pub mod heap;
pub mod siphash;
pub mod alloc_unit;
