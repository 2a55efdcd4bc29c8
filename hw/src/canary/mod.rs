//! The canary allocator unit in RTL (spec section 8). Golden model:
//! `sim::canary` (same block names); design and decisions: docs/canary.md.
//! - [`siphash`]: SipHash-2-4 core behind `canary_key` (one SipRound a cycle).
//! - [`arbiter`]: round-robin arbiter of the requesters.
//! - [`checker`]: the always-on checker's compressed live list and cursor.
//! - [`alloc_unit`]: the unit (page_table, bitfields, region counters, size
//!   table, hash, probe, canary write/check, checker sweep).
//! - [`tag_table`]: the registration with the MLU (tagged builds): tag
//!   LFSR, per-chunk tag/size records, pages' last classes, directory port.
//! - [`widen`]: the width casts the unit's arithmetic needs.
//!
//! Its Verilog top (`canary_alloc`) is emitted by `hw::generate`.
pub mod alloc_unit;
pub mod arbiter;
pub mod checker;
pub mod siphash;
pub mod tag_table;
pub mod widen;
