//! hw::mlb::Mlb at hit latency 2 (the two-stage MLB) against the golden
//! model sim::mlb::Mlb::cycle shifted by one cycle: the search outputs seen
//! after the edge ending cycle t+1 are the model's answer to cycle t (hits,
//! ways, entry outputs, one-hot assertion), while the victim, fill
//! acceptance, replacement state and storage are the model's of cycle t, as
//! in the one-stage MLB. Random fill/lookup/invalidate/flush/reset runs for
//! 1..32 entries and both policies, plus the latency itself and the one
//! difference: a fill replacing the entry a same-cycle search hit makes that
//! search a miss.
mod common;
use common::{check_search, check_state, clock, meta, model_cycle, pool, present, random_inputs, splitmix};
use hw::mlb::Mlb;
use rust_hdl::prelude::*;
use sim::config::Replacement;
use sim::mlb::{Mlb as Model, MlbCycleInputs, MlbEntry};


/// What the search outputs must show one cycle later than the one-stage MLB.
#[derive(Clone, Copy, Debug, Default)]
struct Expect {
    rs: Option<(usize, MlbEntry)>,
    ls: Option<(usize, MlbEntry)>,
    rs_multi: bool,
    ls_multi: bool,
    ctx_cycle: usize,
}

struct Rig<const N: usize, const IW: usize> {
    uut: Box<Mlb<N, IW>>,
    model: Model,
    cycle: usize,
    label: String,
    /// The model's answer to the previous cycle's searches.
    pending: Expect,
}

impl<const N: usize, const IW: usize> Rig<N, IW> {
    fn new(replacement: Replacement) -> Self {
        let mut uut = Box::new(Mlb::<N, IW>::new(replacement, 2));
        uut.connect_all();
        let mut rig = Rig {
            uut,
            model: Model::new(N, replacement),
            cycle: 0,
            label: format!("p2 N={N} {replacement:?}"),
            pending: Expect::default(),
        };
        // Two reset cycles: the first clears the state, the second flushes
        // the pipeline's stage-1 registers.
        rig.step(MlbCycleInputs::default(), true);
        rig.step(MlbCycleInputs::default(), true);
        rig
    }

    /// One clock cycle; checks the outputs against the model (searches one
    /// cycle late). Returns the model's answer for this cycle (None in reset).
    fn step(&mut self, inp: MlbCycleInputs, reset: bool) -> Option<sim::mlb::MlbCycleOutputs> {
        present(&mut self.uut, &inp, reset);
        let ctx = format!("{} cycle {} inputs {inp:?} reset {reset}", self.label, self.cycle);
        let (out, rs_multi, ls_multi) = model_cycle(&self.uut, &mut self.model, inp, reset, &ctx);
        clock(&mut self.uut);
        // The search outputs now answer the previous cycle's requests.
        let p = self.pending;
        let pctx = format!("{ctx}: result of cycle {}", p.ctx_cycle);
        let u = &*self.uut;
        check_search(u, p.rs, p.ls, (p.rs_multi, p.ls_multi), &pctx);
        // A hit whose way this cycle's fill wrote is reported as a miss.
        let kept = |h: Option<(usize, MlbEntry)>, o: &sim::mlb::MlbCycleOutputs| h.filter(|&(w, _)| o.fill_way != Some(w));
        self.pending = Expect {
            rs: out.and_then(|o| kept(o.range_hit, &o)),
            ls: out.and_then(|o| kept(o.loc_hit, &o)),
            rs_multi: rs_multi && !reset,
            ls_multi: ls_multi && !reset,
            ctx_cycle: self.cycle,
        };
        self.cycle += 1;
        // State after the edge: not delayed.
        check_state(&u, &self.model, &ctx);
        out
    }
}

/// A random legal sequence (as for the one-stage MLB), fills over the
/// entry a same-cycle search hits included.
fn random_run<const N: usize, const IW: usize>(replacement: Replacement, seed: u64, cycles: usize) {
    let mut rig = Rig::<N, IW>::new(replacement);
    let allocs = pool(N, seed);
    let mut s = seed ^ 0xABCD;
    let (mut hits, mut fills, mut clobbers) = (0, 0, 0);
    for _ in 0..cycles {
        let mut r = || splitmix(&mut s);
        let mut inp = random_inputs(&mut r, &allocs, &rig.model);
        if inp.fill.is_some() {
            let v = rig.model.victim().unwrap();
            let hit_v = inp.range_lookup.and_then(|a| rig.model.search_range(a)) == Some(v)
                || inp.loc_lookup.and_then(|l| rig.model.search_location(l)) == Some(v);
            clobbers += hit_v as usize;
        }
        inp.flush = r() % 60 == 0;
        let reset = r() % 150 == 0;
        if let Some(out) = rig.step(inp, reset) {
            hits += out.range_hit.is_some() as usize + out.loc_hit.is_some() as usize;
            fills += out.fill_way.is_some() as usize;
        }
    }
    rig.step(MlbCycleInputs::default(), false); // check the last cycle's result
    assert!(hits > cycles / 10 && fills > N, "N={N}: only {hits} hits and {fills} fills in {cycles} cycles ({clobbers} fills over a same-cycle hit)");
}

#[test]
fn p2_random_all_sizes_plru_and_rr() {
    for (r, seed) in [(Replacement::Plru, 11), (Replacement::RoundRobin, 12)] {
        random_run::<1, 1>(r, seed, 2000);
        random_run::<2, 1>(r, seed + 10, 2000);
        random_run::<4, 2>(r, seed + 20, 3000);
        random_run::<8, 3>(r, seed + 30, 5000);
        random_run::<16, 4>(r, seed + 40, 5000);
    }
    random_run::<32, 5>(Replacement::Plru, 99, 3000);
}

#[test]
fn p2_hit_appears_two_cycles_after_the_request() {
    let mut rig = Rig::<8, 3>::new(Replacement::Plru);
    rig.step(MlbCycleInputs { fill: Some((0x1000_0000_0020, meta(0x7000, 0x100, 9))), ..Default::default() }, false);
    rig.step(MlbCycleInputs { range_lookup: Some(0x7080), ..Default::default() }, false);
    // After the edge ending the request cycle the result is not out yet.
    assert!(!rig.uut.rs_hit.val());
    rig.step(MlbCycleInputs::default(), false);
    assert!(rig.uut.rs_hit.val());
    assert_eq!(rig.uut.rs_base.val().to_u64(), 0x7000);
    assert_eq!(rig.uut.rs_tag.val().to_u64(), 9);
    rig.step(MlbCycleInputs::default(), false);
    assert!(!rig.uut.rs_hit.val());
}

#[test]
fn p2_fill_over_a_same_cycle_hit_reports_a_miss() {
    // The fill of the search's cycle replaces the entry the search hit: the
    // search reports a miss (the model's hit would read the old entry, which
    // stage 2 no longer has); a search of the other port in the same cycle
    // that hit another way is unaffected.
    let mut rig = Rig::<4, 2>::new(Replacement::Plru);
    for k in 0..4u64 {
        rig.step(MlbCycleInputs { fill: Some((0x1000_0000_0020 + 32 * k, meta(0x10000 * (k + 1), 0x100, k as u8))), ..Default::default() }, false);
    }
    let v = rig.model.victim().unwrap();
    let hit = *rig.model.entry(v);
    let other = *rig.model.entry((v + 1) % 4);
    let new = meta(0x9_0000, 0x40, 0xAB);
    rig.step(MlbCycleInputs { range_lookup: Some(hit.base + 1), loc_lookup: Some(other.location), fill: Some((0x1000_0000_0fe0, new)), ..Default::default() }, false);
    rig.step(MlbCycleInputs { range_lookup: Some(new.base), ..Default::default() }, false);
    assert!(!rig.uut.rs_hit.val(), "the replaced entry's hit is withdrawn");
    assert!(rig.uut.ls_hit.val() && rig.uut.ls_tag.val().to_u64() == other.tag as u64);
    rig.step(MlbCycleInputs::default(), false);
    assert!(rig.uut.rs_hit.val() && rig.uut.rs_way.val().index() == v && rig.uut.rs_tag.val().to_u64() == 0xAB, "the new entry is found");
}

#[test]
fn p2_multi_match_is_flagged_and_lowest_wins() {
    // Illegal on purpose (the runtime never makes overlapping allocations):
    // two overlapping ranges; the Rig checks multi, way and data against the
    // model (lowest way wins) one cycle late. A second fill of a held
    // location is dropped, so the location search cannot match twice.
    let loc = 0x1000_0000_0000;
    let mut rig = Rig::<4, 2>::new(Replacement::Plru);
    rig.step(MlbCycleInputs { fill: Some((loc, meta(0x1000, 0x100, 1))), ..Default::default() }, false);
    rig.step(MlbCycleInputs { fill: Some((loc + 0x20, meta(0x1080, 0x100, 2))), ..Default::default() }, false);
    rig.step(MlbCycleInputs { fill: Some((loc, meta(0x9000, 0x10, 3))), ..Default::default() }, false);
    rig.step(MlbCycleInputs { range_lookup: Some(0x10a0), loc_lookup: Some(loc), ..Default::default() }, false);
    rig.step(MlbCycleInputs { range_lookup: Some(0x1150), ..Default::default() }, false);
    assert!(rig.uut.rs_multi.val() && !rig.uut.ls_multi.val());
    assert_eq!((rig.uut.rs_way.val().index(), rig.uut.rs_tag.val().to_u64()), (0, 1));
    rig.step(MlbCycleInputs::default(), false);
    assert!(!rig.uut.rs_multi.val() && rig.uut.rs_way.val().index() == 1);
}
