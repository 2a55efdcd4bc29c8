//! hw::mlb::Mlb against the golden model sim::mlb::Mlb::cycle, cycle by
//! cycle: random fill/lookup/invalidate/flush/reset sequences for every size
//! and both policies (hits, ways, entry outputs, one-hot assertion, victim,
//! fill acceptance, replacement state, every entry's storage), and the
//! explicit same-cycle cases of docs/design.md.
mod common;
use common::{check_search, check_state, clock, meta, model_cycle, pool, present, random_inputs, splitmix};
use hw::mlb::{Mlb, Mlb1, Mlb16, Mlb2, Mlb32, Mlb4, Mlb8};
use rust_hdl::prelude::*;
use sim::config::Replacement;
use sim::mlb::{Mlb as Model, MlbCycleInputs, MlbCycleOutputs};
use sim::node::Meta;


/// The RTL MLB and the model side by side.
struct Rig<const N: usize, const IW: usize> {
    uut: Box<Mlb<N, IW>>,
    model: Model,
    cycle: usize,
    label: String,
}

impl<const N: usize, const IW: usize> Rig<N, IW> {
    fn new(replacement: Replacement) -> Self {
        let mut uut = Box::new(Mlb::<N, IW>::new(replacement, 1));
        uut.connect_all();
        let mut rig = Rig { uut, model: Model::new(N, replacement), cycle: 0, label: format!("N={N} {replacement:?}") };
        // Power-up: registers start at their initial values; reset once.
        rig.step(MlbCycleInputs::default(), true);
        rig
    }

    /// One clock cycle with these inputs (and `reset`); checks everything the
    /// RTL shows against the model. Returns the model's outputs.
    fn step(&mut self, inp: MlbCycleInputs, reset: bool) -> Option<MlbCycleOutputs> {
        present(&mut self.uut, &inp, reset);
        let ctx = format!("{} cycle {} inputs {inp:?} reset {reset}", self.label, self.cycle);
        self.cycle += 1;
        let (out, rs_multi, ls_multi) = model_cycle(&self.uut, &mut self.model, inp, reset, &ctx);
        clock(&mut self.uut);
        let u = &*self.uut;
        // Registered search results of this cycle's requests.
        let (rh, lh) = (out.and_then(|o| o.range_hit), out.and_then(|o| o.loc_hit));
        check_search(u, rh, lh, (rs_multi && !reset, ls_multi && !reset), &ctx);
        // State after the edge: replacement state and every entry.
        check_state(&u, &self.model, &ctx);
        out
    }
}

/// A random legal sequence: fills only of allocations the MLB does not hold.
fn random_run<const N: usize, const IW: usize>(replacement: Replacement, seed: u64, cycles: usize) {
    let mut rig = Rig::<N, IW>::new(replacement);
    let allocs = pool(N, seed);
    let mut s = seed ^ 0xABCD;
    let (mut hits, mut fills) = (0, 0);
    for _ in 0..cycles {
        let mut r = || splitmix(&mut s);
        let mut inp = random_inputs(&mut r, &allocs, &rig.model);
        inp.flush = r() % 60 == 0;
        let reset = r() % 150 == 0;
        if let Some(out) = rig.step(inp, reset) {
            hits += out.range_hit.is_some() as usize + out.loc_hit.is_some() as usize;
            fills += out.fill_way.is_some() as usize;
        }
    }
    // The sequence must have exercised the block.
    assert!(hits > cycles / 10 && fills > N, "N={N}: only {hits} hits and {fills} fills in {cycles} cycles");
}

#[test]
fn random_small_plru_and_rr() {
    for (r, seed) in [(Replacement::Plru, 1), (Replacement::RoundRobin, 2)] {
        random_run::<1, 1>(r, seed, 5000);
        random_run::<2, 1>(r, seed + 10, 5000);
        random_run::<4, 2>(r, seed + 20, 8000);
    }
}

#[test]
fn random_8_plru_and_rr() {
    random_run::<8, 3>(Replacement::Plru, 3, 12000);
    random_run::<8, 3>(Replacement::RoundRobin, 4, 12000);
}

#[test]
fn random_16_plru_and_rr() {
    random_run::<16, 4>(Replacement::Plru, 5, 10000);
    random_run::<16, 4>(Replacement::RoundRobin, 6, 10000);
}

#[test]
fn random_32_plru_and_rr() {
    random_run::<32, 5>(Replacement::Plru, 7, 8000);
    random_run::<32, 5>(Replacement::RoundRobin, 8, 8000);
}

const A: (u64, u64, u64, u8) = (0x1000_0000_0000, 0x7f00_0000_0000, 2400, 5);
const B: (u64, u64, u64, u8) = (0x1000_0000_0020, 0x7f00_0000_0a00, 24, 9);

fn fill_of(x: (u64, u64, u64, u8)) -> Option<(u64, Meta)> {
    Some((x.0, meta(x.1, x.2, x.3)))
}

#[test]
fn fill_and_lookup_same_range_same_cycle() {
    let mut rig = Rig::<4, 2>::new(Replacement::Plru);
    let inp = MlbCycleInputs { range_lookup: Some(A.1 + 100), fill: fill_of(A), ..Default::default() };
    let out = rig.step(inp, false).unwrap();
    assert!(out.range_hit.is_none() && out.fill_way == Some(0));
    assert!(!rig.uut.rs_hit.val(), "the lookup sees the state before the fill");
    let out = rig.step(MlbCycleInputs { range_lookup: Some(A.1 + 100), ..Default::default() }, false).unwrap();
    assert_eq!(out.range_hit.map(|h| h.0), Some(0));
    assert!(rig.uut.rs_hit.val() && rig.uut.rs_way.val().index() == 0);
    assert_eq!(rig.uut.rs_size.val().to_u64(), 2400);
    assert_eq!(rig.uut.rs_loc.val().to_u64() << 5, A.0);
}

#[test]
fn invalidate_and_fill_same_location_drops_fill() {
    let mut rig = Rig::<4, 2>::new(Replacement::Plru);
    let inp = MlbCycleInputs { invalidate: Some(A.0), fill: fill_of(A), ..Default::default() };
    rig.step(inp, false);
    assert!(!rig.uut.valid.iter().any(|v| v.q.val()), "the fill was dropped");
    rig.step(MlbCycleInputs { loc_lookup: Some(A.0), range_lookup: Some(A.1), ..Default::default() }, false);
    assert!(!rig.uut.ls_hit.val() && !rig.uut.rs_hit.val());
    // An invalidate of another location does not drop the fill.
    rig.step(MlbCycleInputs { invalidate: Some(B.0), fill: fill_of(A), ..Default::default() }, false);
    assert!(rig.uut.valid[0].q.val());
}

#[test]
fn invalidate_of_the_victim_drops_fill() {
    // N = 1: the only entry is the victim; invalidating it drops a fill of
    // another location in the same cycle.
    let mut rig = Rig::<1, 1>::new(Replacement::Plru);
    rig.step(MlbCycleInputs { fill: fill_of(A), ..Default::default() }, false);
    let out = rig.step(MlbCycleInputs { invalidate: Some(A.0), fill: fill_of(B), ..Default::default() }, false);
    assert_eq!(out.unwrap().fill_way, None);
    assert!(!rig.uut.valid[0].q.val());
}

#[test]
fn flush_with_fill() {
    let mut rig = Rig::<4, 2>::new(Replacement::Plru);
    rig.step(MlbCycleInputs { fill: fill_of(A), ..Default::default() }, false);
    rig.step(
        MlbCycleInputs { flush: true, fill: fill_of(B), range_lookup: Some(A.1), ..Default::default() },
        false,
    );
    assert!(rig.uut.rs_hit.val(), "the lookup in the flush cycle sees the state before it");
    assert!(!rig.uut.valid.iter().any(|v| v.q.val()), "flush clears everything and drops the fill");
    assert_eq!(rig.uut.repl_state.val().to_u64(), 0);
}

#[test]
fn both_ports_hit_same_cycle() {
    let mut rig = Rig::<4, 2>::new(Replacement::Plru);
    let allocs: Vec<_> = (0..4u64).map(|k| (0x1000_0000_0000 + 32 * k, meta(0x7f00_0000_0000 + 0x1000 * k, 0x100, k as u8 + 1))).collect();
    for &(l, m) in &allocs {
        rig.step(MlbCycleInputs { fill: Some((l, m)), ..Default::default() }, false);
    }
    // Range hit on way 1 and location hit on way 2 in one cycle.
    let out = rig
        .step(
            MlbCycleInputs { range_lookup: Some(allocs[1].1.base + 5), loc_lookup: Some(allocs[2].0), ..Default::default() },
            false,
        )
        .unwrap();
    assert_eq!((out.range_hit.unwrap().0, out.loc_hit.unwrap().0), (1, 2));
    assert!(rig.uut.rs_hit.val() && rig.uut.ls_hit.val());
    assert_eq!((rig.uut.rs_way.val().index(), rig.uut.ls_way.val().index()), (1, 2));
    assert_eq!(rig.uut.ls_tag.val().to_u64(), 3);
    // By hand (nodes: 0 root, 1 over ways 0-1, 2 over ways 2-3): fills touch
    // 0, 1, 2, 3, then the range hit touches 1 (root=1, node1=0) and the
    // location hit touches 2 (root=0, node2=1): bits 0b100, victim way 0.
    // The opposite order (2 then 1) would give 0b001 and victim 2.
    assert_eq!(rig.uut.victim.val().index(), 0);
    assert_eq!(rig.uut.repl_state.val().to_u64(), 0b100);
}

#[test]
fn multi_match_is_flagged_and_lowest_wins() {
    // Illegal on purpose (the runtime never makes overlapping allocations):
    // two overlapping ranges. A second fill of a held location is dropped,
    // so the location search cannot match twice.
    let mut rig = Rig::<4, 2>::new(Replacement::Plru);
    rig.step(MlbCycleInputs { fill: Some((A.0, meta(0x1000, 0x100, 1))), ..Default::default() }, false);
    rig.step(MlbCycleInputs { fill: Some((A.0 + 0x20, meta(0x1080, 0x100, 2))), ..Default::default() }, false);
    let dup = MlbCycleInputs { fill: Some((A.0, meta(0x9000, 0x10, 3))), ..Default::default() };
    rig.step(dup, false);
    rig.step(MlbCycleInputs { range_lookup: Some(0x10a0), loc_lookup: Some(A.0), ..Default::default() }, false);
    assert!(rig.uut.rs_multi.val() && !rig.uut.ls_multi.val());
    assert_eq!((rig.uut.rs_way.val().index(), rig.uut.rs_tag.val().to_u64()), (0, 1));
    assert_eq!((rig.uut.ls_way.val().index(), rig.uut.ls_tag.val().to_u64()), (0, 1));
    rig.step(MlbCycleInputs { range_lookup: Some(0x1150), ..Default::default() }, false);
    assert!(!rig.uut.rs_multi.val() && rig.uut.rs_way.val().index() == 1);
}

/// A fill of a location the MLB holds writes nothing, whichever way it
/// would have gone to (two walks of the unit finding one node).
#[test]
fn a_fill_of_a_held_location_writes_nothing() {
    let mut rig = Rig::<2, 1>::new(Replacement::Plru);
    rig.step(MlbCycleInputs { fill: Some((A.0, meta(0x1000, 0x100, 1))), ..Default::default() }, false);
    rig.step(MlbCycleInputs { fill: Some((A.0 + 0x20, meta(0x2000, 0x100, 2))), ..Default::default() }, false);
    // Full: the duplicate would evict the PLRU victim (way 0).
    rig.step(MlbCycleInputs { fill: Some((A.0 + 0x20, meta(0x3000, 0x100, 3))), ..Default::default() }, false);
    assert_eq!(rig.model.location_matches(A.0 + 0x20).count_ones(), 1);
    assert!(rig.model.search_location(A.0).is_some(), "the victim survived");
    rig.step(MlbCycleInputs { loc_lookup: Some(A.0 + 0x20), ..Default::default() }, false);
    assert!(rig.uut.ls_hit.val() && rig.uut.ls_tag.val().to_u64() == 2, "the entry kept its first metadata");
}

#[test]
fn reset_clears_entries_state_and_outputs() {
    let mut rig = Rig::<8, 3>::new(Replacement::RoundRobin);
    for k in 0..10u64 {
        rig.step(MlbCycleInputs { fill: Some((0x1000_0000_0000 + 32 * k, meta(0x1000 * (k + 1), 0x100, 1))), ..Default::default() }, false);
    }
    assert_eq!(rig.uut.repl_state.val().to_u64(), 2, "two fills replaced valid entries");
    rig.step(MlbCycleInputs { range_lookup: Some(0x3000), ..Default::default() }, true);
    assert!(!rig.uut.rs_hit.val());
    assert!(!rig.uut.valid.iter().any(|v| v.q.val()));
    assert_eq!(rig.uut.repl_state.val().to_u64(), 0);
}

/// The aliases build with their documented sizes.
#[test]
fn aliases() {
    assert_eq!(Mlb1::new(Replacement::Plru, 1).valid.len(), 1);
    assert_eq!(Mlb2::new(Replacement::Plru, 1).valid.len(), 2);
    assert_eq!(Mlb4::new(Replacement::Plru, 2).valid.len(), 4);
    assert_eq!(Mlb8::new(Replacement::Plru, 1).valid.len(), 8);
    assert_eq!(Mlb16::new(Replacement::RoundRobin, 1).replacement(), Replacement::RoundRobin);
    assert_eq!(Mlb16::new(Replacement::Plru, 2).hit_latency(), 2);
    assert_eq!(Mlb32::default().valid.len(), 32);
    assert_eq!(Mlb32::default().hit_latency(), 1);
}
