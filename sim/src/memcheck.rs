//! MEMCHECK decisions as pure functions (spec section 4, docs/design.md
//! "MEMCHECK.G" and "Fault reports"); mirrors the RTL's `memcheck` block
//! (hw/src/memcheck.rs), which is combinational.
//!
//! Bounds are whole-access: `base <= a && a + w <= base + size`, computed in
//! u64 on the offset `a - base`, so `base + size` may exceed 2^56 and `a + w` never wraps.
use crate::fault::FaultCode;
use crate::node::Meta;
use crate::pointer::{tag, untag, NO_META, TAG_FREED};

/// Access widths of MEMCHECK.G and MEMCHECK.S.
pub const WIDTHS: [u32; 5] = [1, 2, 4, 8, 16];

/// Whether `w` is one of 1, 2, 4, 8, 16.
#[inline]
pub fn valid_width(w: u32) -> bool {
    matches!(w, 1 | 2 | 4 | 8 | 16)
}

/// The whole-access bounds test without overflow.
#[inline]
pub fn in_bounds(a: u64, w: u32, base: u64, size: u64) -> bool {
    // Same as `a + w <= base + size` in u128, rewritten on the offset
    // `a - base` (no overflow once `a >= base`): fewer instructions on the
    // model's hot path.
    a >= base && {
        let off = a - base;
        off <= size && w as u64 <= size - off
    }
}

/// Steps 4-7 of MEMCHECK.G for a tagged pointer whose metadata is `meta`:
/// FREED, then tag, then bounds. Returns the untagged address on a pass.
#[inline]
pub fn check_meta(p: u64, w: u32, meta: &Meta) -> Result<u64, FaultCode> {
    let a = untag(p);
    if meta.tag == TAG_FREED {
        Err(FaultCode::UseAfterFree)
    } else if meta.tag != tag(p) {
        Err(FaultCode::TagMismatch)
    } else if !in_bounds(a, w, meta.base, meta.size) {
        Err(FaultCode::OutOfBounds)
    } else {
        Ok(a)
    }
}

/// The whole MEMCHECK.G decision in order, given the location operand and the
/// metadata found for it (`None`: the metadata read failed). Step 1: tag 0
/// passes; step 2: location 0 or NO_META faults NO_META; then
/// MEM_ERROR if `meta` is None; then [`check_meta`]. `meta` is not looked at
/// in steps 1 and 2.
pub fn memcheck_g_decide(p: u64, w: u32, loc: u64, meta: Option<Meta>) -> Result<u64, FaultCode> {
    if tag(p) == 0 {
        return Ok(untag(p));
    }
    if loc == 0 || loc == NO_META {
        return Err(FaultCode::NoMeta);
    }
    match meta {
        None => Err(FaultCode::MemError),
        Some(m) => check_meta(p, w, &m),
    }
}

/// MEMCHECK.S: ok (returns `a`) or SHARED_OOB.
#[inline]
pub fn memcheck_s(a: u64, w: u32, base: u64, size: u64) -> Result<u64, FaultCode> {
    if in_bounds(a, w, base, size) {
        Ok(a)
    } else {
        Err(FaultCode::SharedOob)
    }
}

/// The distance of an out-of-bounds access, worded as compute-sanitizer does:
/// `a < base`: "{base - a} bytes before"; otherwise, with the first byte past
/// the end `f = max(a, base + size)`: "{f - (base + size) + 1} bytes after"
/// (an access at exactly `base + size` is "1 bytes after").
pub fn distance(a: u64, base: u64, size: u64) -> String {
    if a < base {
        format!("{} bytes before", base - a)
    } else {
        let end = base as u128 + size as u128;
        let f = (a as u128).max(end);
        format!("{} bytes after", f - end + 1)
    }
}

/// The metadata of a warp-wide MEMCHECK.G: found, or the fault of its lookup
/// (NO_META, TRAVERSAL_LIMIT, MEM_ERROR).
pub type LaneMeta = Result<Meta, FaultCode>;

/// A warp-wide MEMCHECK (spec section 6), lane by lane, as the RTL's lane
/// checks do it: every active lane (bit i of `mask`) is decided on its own
/// pointer `ptrs[i]`, in the fault order of [`memcheck_g_decide`]
/// (MEMCHECK.G: tag 0 passes; a location operand of 0 or NO_META faults
/// NO_META, `loc` None meaning HWONLY, which has none; then `meta`) or of
/// [`memcheck_s`] (`shared`: bits 31..0 of the lane against `sbase`/`ssize`,
/// 32-bit shared-window addresses). `meta` is looked at only for tagged lanes
/// of a MEMCHECK.G that needs it. Returns the mask of active lanes that
/// passed and the lowest faulting lane with its fault.
#[allow(clippy::too_many_arguments)]
pub fn check_lanes(
    shared: bool,
    mask: u32,
    ptrs: &[u64],
    w: u32,
    loc: Option<u64>,
    meta: Option<LaneMeta>,
    sbase: u64,
    ssize: u64,
) -> (u32, Option<(u8, FaultCode)>) {
    let (mut pass, mut first) = (0u32, None);
    for (i, &p) in ptrs.iter().enumerate().filter(|(i, _)| mask >> i & 1 == 1) {
        let v = if shared {
            memcheck_s(p & 0xFFFF_FFFF, w, sbase, ssize).map(|_| ())
        } else if tag(p) == 0 {
            Ok(())
        } else if loc.is_some_and(|l| l == 0 || l == NO_META) {
            Err(FaultCode::NoMeta)
        } else {
            match meta {
                Some(Ok(m)) => check_meta(p, w, &m).map(|_| ()),
                Some(Err(f)) => Err(f),
                None => Err(FaultCode::MemError),
            }
        };
        match v {
            Ok(()) => pass |= 1 << i,
            Err(f) => {
                first.get_or_insert((i as u8, f));
            }
        }
    }
    (pass, first)
}
