//! The canary allocator unit in RTL (spec section 8, issue 7). Golden model:
//! `sim::canary` (same block names); design and decisions: docs/canary.md.
//! - [`siphash`]: SipHash-2-4 core behind `canary_key` (one SipRound a cycle).
pub mod siphash;
