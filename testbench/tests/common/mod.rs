//! What the MLB's rust-hdl tests (`mlb.rs`, `mlb_p2.rs`: the one- and
//! two-stage MLB) share: the stimulus generator, the allocations to fill
//! from, and the check of the state after a clock edge against the model.
#![allow(dead_code)] // each test binary uses its own part
use hw::mlb::Mlb;
use rust_hdl::prelude::*;
use sim::mlb::{Mlb as Model, MlbCycleInputs, MlbCycleOutputs, MlbEntry, LOC_MASK};
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

/// Present one cycle's inputs (and `reset`) to the RTL MLB and settle.
pub fn present<const N: usize, const IW: usize>(u: &mut Mlb<N, IW>, inp: &MlbCycleInputs, reset: bool) {
    u.reset.next = reset;
    u.rs_valid.next = inp.range_lookup.is_some();
    u.rs_addr.next = bits(inp.range_lookup.unwrap_or(0) & ADDR_MASK);
    u.ls_valid.next = inp.loc_lookup.is_some();
    u.ls_loc.next = loc51(inp.loc_lookup.unwrap_or(0));
    u.inv_valid.next = inp.invalidate.is_some();
    u.inv_loc.next = loc51(inp.invalidate.unwrap_or(0));
    u.flush.next = inp.flush;
    let (floc, fmeta) = inp.fill.unwrap_or((0, Meta { base: 0, size: 0, tag: 0 }));
    u.fill_valid.next = inp.fill.is_some();
    u.fill_loc.next = loc51(floc);
    u.fill_base.next = bits(fmeta.base);
    u.fill_size.next = bits(fmeta.size);
    u.fill_tag.next = bits(fmeta.tag as u64);
    assert!(simulate(u, 100), "did not settle");
}

/// One rising and falling clock edge.
pub fn clock<const N: usize, const IW: usize>(u: &mut Mlb<N, IW>) {
    u.clock.next = true.into();
    assert!(simulate(u, 100), "did not settle");
    u.clock.next = false.into();
    assert!(simulate(u, 100), "did not settle");
}

/// What the MLB's combinational outputs must show before the edge, and the
/// model's cycle: the one-hot assertions' inputs (more than one match for
/// the range and the location search), the victim, whether the fill is
/// taken, whether its location is present. Returns (the model's outputs,
/// None in reset; range multi-match; location multi-match).
pub fn model_cycle<const N: usize, const IW: usize>(
    u: &Mlb<N, IW>,
    model: &mut Model,
    inp: MlbCycleInputs,
    reset: bool,
    ctx: &str,
) -> (Option<MlbCycleOutputs>, bool, bool) {
    let rs_multi = inp.range_lookup.is_some_and(|a| model.range_matches(a & ADDR_MASK).count_ones() > 1);
    let ls_multi = inp.loc_lookup.is_some_and(|l| model.location_matches(l).count_ones() > 1);
    let victim = model.victim().expect("N >= 1");
    if reset {
        model.reset();
        return (None, rs_multi, ls_multi);
    }
    assert_eq!(u.victim.val().index(), victim, "{ctx}: victim");
    let out = model.cycle(MlbCycleInputs { range_lookup: inp.range_lookup.map(|a| a & ADDR_MASK), ..inp });
    assert_eq!(u.fill_ok.val(), out.fill_way.is_some(), "{ctx}: fill_ok");
    assert_eq!(u.fill_present.val(), out.fill_present, "{ctx}: fill_present");
    if let Some(w) = out.fill_way {
        assert_eq!(w, victim, "{ctx}: the model filled its victim");
    }
    (Some(out), rs_multi, ls_multi)
}

/// The registered search outputs after the edge: range (`rs`) and location
/// (`ls`) hits with their way and entry, the multi-match assertions, and
/// data 0 without a hit (the MLU unit ORs the ports' data).
pub fn check_search<const N: usize, const IW: usize>(
    u: &Mlb<N, IW>,
    rs: Option<(usize, MlbEntry)>,
    ls: Option<(usize, MlbEntry)>,
    (rs_multi, ls_multi): (bool, bool),
    ctx: &str,
) {
    assert_eq!(u.rs_hit.val(), rs.is_some(), "{ctx}: rs_hit");
    assert_eq!(u.rs_multi.val(), rs_multi, "{ctx}: rs_multi");
    if let Some((w, e)) = rs {
        assert_eq!(u.rs_way.val().index(), w, "{ctx}: rs_way");
        assert_eq!(u.rs_loc.val().to_u64() << 5, e.location, "{ctx}: rs_loc");
        assert_eq!(u.rs_base.val().to_u64(), e.base, "{ctx}: rs_base");
        assert_eq!(u.rs_size.val().to_u64(), e.size, "{ctx}: rs_size");
        assert_eq!(u.rs_tag.val().to_u64(), e.tag as u64, "{ctx}: rs_tag");
    } else {
        let data = (u.rs_loc.val().to_u64(), u.rs_base.val().to_u64(), u.rs_size.val().to_u64(), u.rs_tag.val().to_u64());
        assert_eq!(data, (0, 0, 0, 0), "{ctx}: rs data without a hit");
    }
    assert_eq!(u.ls_hit.val(), ls.is_some(), "{ctx}: ls_hit");
    assert_eq!(u.ls_multi.val(), ls_multi, "{ctx}: ls_multi");
    if let Some((w, e)) = ls {
        assert_eq!(u.ls_way.val().index(), w, "{ctx}: ls_way");
        assert_eq!(u.ls_base.val().to_u64(), e.base, "{ctx}: ls_base");
        assert_eq!(u.ls_size.val().to_u64(), e.size, "{ctx}: ls_size");
        assert_eq!(u.ls_tag.val().to_u64(), e.tag as u64, "{ctx}: ls_tag");
    } else {
        let data = (u.ls_base.val().to_u64(), u.ls_size.val().to_u64(), u.ls_tag.val().to_u64());
        assert_eq!(data, (0, 0, 0), "{ctx}: ls data without a hit");
    }
}
