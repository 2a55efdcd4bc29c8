//! What the MLB's rust-hdl tests (`mlb.rs`, `mlb_p2.rs`: the one- and
//! two-stage MLB) share: the stimulus generator, the allocations to fill
//! from, and the check of the state after a clock edge against the model.
#![allow(dead_code)] // each test binary uses its own part
use hw::mlb::Mlb;
use rust_hdl::prelude::*;
use sim::mlb::{Mlb as Model, MlbCycleInputs, LOC_MASK};
use sim::node::Meta;
use sim::pointer::{ADDR_MASK, NO_META};

/// One step of splitmix64 on `s` (sim::runtime::SplitMix64's step).
pub fn splitmix(s: &mut u64) -> u64 {
    let mut g = sim::runtime::SplitMix64(*s);
    let v = g.next_u64();
    *s = g.0;
    v
}

/// The 51 location bits an MLB port carries.
pub fn loc51(loc: u64) -> Bits<51> {
    bits((loc & LOC_MASK) >> 5)
}

pub fn meta(base: u64, size: u64, tag: u8) -> Meta {
    Meta { base, size, tag }
}

/// The state after the edge, equal in both MLBs: the replacement state and
/// every entry's valid bit and storage.
pub fn check_state<const N: usize, const IW: usize>(u: &Mlb<N, IW>, model: &Model, ctx: &str) {
    assert_eq!(u.repl_state.val().to_u64(), model.policy_bits(), "{ctx}: replacement state");
    for (i, e) in model.entries().iter().enumerate() {
        assert_eq!(u.valid[i].q.val(), e.valid, "{ctx}: entry {i} valid");
        if e.valid {
            assert_eq!(u.loc[i].q.val().to_u64() << 5, e.location, "{ctx}: entry {i} location");
            assert_eq!(u.base[i].q.val().to_u64(), e.base, "{ctx}: entry {i} base");
            assert_eq!(u.size[i].q.val().to_u64(), e.size, "{ctx}: entry {i} size");
            assert_eq!(u.tag[i].q.val().to_u64(), e.tag as u64, "{ctx}: entry {i} tag");
        }
    }
}

/// Disjoint allocations (location, metadata) to fill from, including ranges
/// at address 0, ending at 2^56 - 1, and one whose base + size exceeds 2^56.
pub fn pool(n: usize, seed: u64) -> Vec<(u64, Meta)> {
    let mut s = seed;
    let mut v = vec![];
    let mut base = splitmix(&mut s) % 4096;
    let count = (3 * n / 2).max(4) + 2;
    for k in 0..count - 2 {
        let r = splitmix(&mut s);
        let size = match r % 8 {
            0 => 1,
            1 => 16,
            2 => 1 + (r >> 8) % 64,
            3 => 1 + (r >> 8) % (1 << 20),
            4 => 1 << (20 + (r >> 8) % 20),
            5 => 0, // never matches a range search
            _ => 512 * (1 + (r >> 8) % 64),
        };
        let loc = (0x0000_1000_0000_0000 + 32 * (k as u64) * 7919 + 32 * (r >> 50)) & LOC_MASK;
        v.push((loc, Meta { base, size, tag: (r >> 32) as u8 }));
        base += size + (r >> 16) % 3 * 512;
    }
    v.push((0x00FF_FFFF_FFFF_FFE0, Meta { base: ADDR_MASK - 4095, size: 4096, tag: 0xFF }));
    v.push((0x0000_0FFF_FFFF_FFE0, Meta { base: ADDR_MASK - 1_000_000, size: 1 << 40, tag: 7 }));
    v[0].1.base = 0;
    v
}

/// One cycle's random inputs: range searches at, around and beyond an
/// allocation's bounds, location searches (junk bits, NO_META, held
/// locations), invalidates, and fills only of allocations `model` does not
/// hold (never fill on a hit), sometimes invalidated in the same cycle.
pub fn random_inputs(r: &mut impl FnMut() -> u64, allocs: &[(u64, Meta)], model: &Model) -> MlbCycleInputs {
    let pick = |x: u64| allocs[(x % allocs.len() as u64) as usize];
    let mut inp = MlbCycleInputs::default();
    if r() % 10 < 6 {
        let (_, m) = pick(r());
        let x = r();
        let a = match x % 7 {
            0 => m.base,
            1 => m.base.wrapping_add(m.size).wrapping_sub(1),
            2 => m.base.wrapping_add(m.size),
            3 => m.base.wrapping_sub(1),
            4 => m.base.wrapping_add((x >> 8) % m.size.max(1)),
            5 => x >> 3,
            _ => m.base.wrapping_add((x >> 8) % 64),
        };
        inp.range_lookup = Some(a & ADDR_MASK);
    }
    if r() % 2 == 0 {
        let x = r();
        inp.loc_lookup = Some(match x % 5 {
            0 => x,                       // junk bits outside 55..5 are ignored
            1 => NO_META,
            _ => pick(x >> 8).0 | (x >> 61), // low bits are not compared either
        });
    }
    if r() % 8 == 0 {
        let x = r();
        inp.invalidate = Some(if x % 4 == 0 { x & LOC_MASK } else { pick(x >> 8).0 });
    }
    if r() % 3 == 0 {
        let (loc, m) = pick(r());
        if model.search_location(loc).is_none() {
            inp.fill = Some((loc, m));
            // Sometimes invalidate the location being filled (fill dropped).
            if r() % 16 == 0 {
                inp.invalidate = Some(loc);
            }
        }
    }
    inp
}
