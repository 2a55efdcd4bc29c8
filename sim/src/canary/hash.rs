//! Page-selection hash (RTL block `hash`).
//!
//! ScatterAlloc (Steinberger et al., InPar 2012; mallocMC's Scatter creation
//! policy) picks a request's first page from the request size and the
//! multiprocessor id: page = (S * k_S + mp * k_mp) mod #pages (mallocMC adds
//! warp terms; we leave them out: one requester id per SM/warp slot is `mp`).
//! We use S = the chosen size class's chunk size (not the raw byte count), so
//! every request of one class from one requester starts at the same page and
//! fills it before spilling, which is the point of the hash.

/// ScatterAlloc's default multipliers as published in mallocMC
/// (`hashingK`, `hashingDistMP`).
pub const DEFAULT_K_S: u64 = 38183;
pub const DEFAULT_K_MP: u64 = 17497;

/// First page probed for a request of chunk size `size` from requester `mp`.
/// Wrapping 64-bit arithmetic, as a 64-bit multiplier in hardware would do.
pub fn page_hash(size: u64, mp: u64, k_s: u64, k_mp: u64, pages: u64) -> u64 {
    debug_assert!(pages > 0);
    size.wrapping_mul(k_s).wrapping_add(mp.wrapping_mul(k_mp)) % pages
}
