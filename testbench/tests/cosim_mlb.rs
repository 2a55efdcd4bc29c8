//! Verilator cosimulation of the committed MLB Verilog (verilog_out/mlb*.v)
//! against the golden model's cycle-accurate `sim::mlb::Mlb::cycle`: random
//! per-cycle stimulus from Rust, every output of every cycle compared
//! (verif/src/harness/mlb.rs). Each configuration is built once.
use sim::config::Replacement;
use verif::cosim::{mlb_top, run_mlb, MlbRun, RunOptions};

fn run(entries: usize, replacement: Replacement, cycles: u64, seed: u64) -> MlbRun {
    let top = mlb_top(entries, replacement).expect("the committed MLB top loads");
    let opts = RunOptions { count: cycles, seed, ..Default::default() };
    let r = run_mlb(&top, &top.verilog, "", entries, replacement, &opts).expect("the cosimulation runs");
    println!(
        "{}: {} cycles, {:.0} cycles/s (model alone {:.0}/s), build {:.1}s{}\n  {:?}",
        r.top,
        r.cycles,
        r.cycles_per_second(),
        r.model_cycles_per_second(),
        r.build.seconds,
        if r.build.compiled { "" } else { " (cached)" },
        r.stats
    );
    if let Some(m) = &r.mismatch {
        panic!("{m}");
    }
    assert_eq!(r.cycles, cycles);
    r
}

/// The stimulus reached every case it is meant to exercise.
fn assert_coverage(r: &MlbRun) {
    let s = &r.stats;
    assert!(s.range_hits * 10 > s.range_searches, "range hit rate too low: {s:?}");
    assert!(s.loc_hits * 10 > s.loc_searches, "location hit rate too low: {s:?}");
    assert!(s.evictions > 1000, "too few fills into a full MLB: {s:?}");
    assert!(s.fills_dropped_by_invalidate > 100, "same-cycle invalidate/fill not exercised: {s:?}");
    assert!(s.invalidates_matched > 1000 && s.both_hits_same_cycle > 1000, "{s:?}");
    assert!(s.fills_present > 10, "fills of a held location (dropped, no duplicate) not exercised: {s:?}");
    assert!(s.flushes > 10 && s.resets > 2, "{s:?}");
}

#[test]
fn mlb8_plru_million_cycles() {
    assert_coverage(&run(8, Replacement::Plru, 1_000_000, 11));
}

#[test]
fn mlb16_plru_million_cycles() {
    assert_coverage(&run(16, Replacement::Plru, 1_000_000, 12));
}

#[test]
fn mlb8_rr_million_cycles() {
    assert_coverage(&run(8, Replacement::RoundRobin, 1_000_000, 13));
}

#[test]
fn mlb16_rr_million_cycles() {
    assert_coverage(&run(16, Replacement::RoundRobin, 1_000_000, 14));
}

/// The smallest and largest committed MLBs (1 entry: no PLRU bits, 1-bit
/// way index; 32 entries: a 32-bit replacement state), on shorter runs.
#[test]
fn mlb1_and_mlb32_plru() {
    run(1, Replacement::Plru, 200_000, 15);
    run(32, Replacement::Plru, 200_000, 16);
}
