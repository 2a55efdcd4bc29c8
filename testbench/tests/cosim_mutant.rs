//! The cosimulation catches wrong Verilog: textual mutants of the committed
//! MLB and MLU unit Verilog (an off-by-one in a range compare, a stuck PLRU
//! bit, an off-by-one in lane 0's MEMCHECK.G bounds) are built and run, and
//! each must be reported as a mismatch; one of them also writes the VCD of
//! its last cycles. (The unit's other mutants: cosim_unit.rs.)
use sim::config::{MluConfig, Replacement, Structure};
use verif::cosim::{mlb_top, run_mlb, RunOptions};
use verif::unit_driver::UnitCosim;
use verif::unit_stimulus::Stream;

/// `text` with the first `from` replaced by `to`; the mutation must apply.
fn mutate(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "mutation site `{from}` not found in the Verilog");
    let m = text.replacen(from, to, 1);
    assert_ne!(m, text, "the mutation changed nothing");
    m
}

#[test]
fn mlb_range_compare_off_by_one_is_caught_with_a_vcd() {
    let top = mlb_top(8, Replacement::Plru).unwrap();
    let v = mutate(&top.verilog, "(cs_s_3 >= cs_nr_3)", "(cs_s_3 > cs_nr_3)");
    let vcd = std::env::temp_dir().join(format!("mlugen-mutant-{}.vcd", std::process::id()));
    let opts = RunOptions { count: 300_000, seed: 41, vcd: Some(vcd.clone()), vcd_window: 50, ..Default::default() };
    let r = run_mlb(&top, &v, "-mutant-range", 8, Replacement::Plru, &opts).unwrap();
    let m = r.mismatch.expect("the off-by-one range compare must be caught");
    println!("{m}");
    assert!(m.output.starts_with("rs_"), "the mutant shows on the range port: {m}");
    // The unmutated design passes the same stimulus up to that cycle.
    let ok = run_mlb(&top, &top.verilog, "", 8, Replacement::Plru, &RunOptions { count: m.cycle + 1, seed: 41, ..Default::default() }).unwrap();
    assert!(ok.mismatch.is_none());
    let text = std::fs::read_to_string(&vcd).expect("a VCD was written");
    let _ = std::fs::remove_file(&vcd);
    assert!(text.contains("$enddefinitions") && text.contains("rs_addr"), "not a VCD of the MLB");
    let last: u64 = text.lines().filter_map(|l| l.strip_prefix('#')).filter_map(|t| t.parse().ok()).max().unwrap();
    assert!(last >= m.cycle * 10, "the VCD ends at time {last}, before the mismatch at cycle {}", m.cycle);
}

#[test]
fn mlb_stuck_plru_bit_is_caught() {
    let top = mlb_top(8, Replacement::Plru).unwrap();
    let v = mutate(&top.verilog, "bits_d_comb = after_c;", "bits_d_comb = after_c & 8'hFD;");
    let r = run_mlb(&top, &v, "-mutant-plru", 8, Replacement::Plru, &RunOptions { count: 300_000, seed: 42, ..Default::default() }).unwrap();
    let m = r.mismatch.expect("a PLRU bit stuck at 0 must be caught");
    println!("{m}");
}

/// Lane 0's MEMCHECK.G bounds test of the MLU as an SM unit off by one (the
/// access one byte wider than it is): an access ending exactly at the
/// allocation's end faults.
#[test]
fn mlu_memcheck_bounds_off_by_one_is_caught() {
    let u = verif::unit_program::unit_top(&MluConfig { entries: 8, structure: Structure::Bst, ..MluConfig::default() }).unwrap();
    let (top, params) = u;
    let v = mutate(&top.verilog, "g_bounds_w = g_w;", "g_bounds_w = g_w + 56'h1;");
    let mut cs = UnitCosim::start_with_cxx_opt(&top, &v, "-mutant-bounds", params.lanes, 43, Some("-O0"), &[]).unwrap();
    let r = cs.run_random(&params, Stream::Hot, 43, 20_000).unwrap();
    cs.finish().unwrap();
    let m = r.mismatch.expect("an access ending exactly at the allocation's end must not fault");
    println!("{m}");
    assert!(m.ports.iter().any(|(p, _, _)| p == "resp_pass_0" || p == "resp_fault" || p == "resp_lane"), "the mutant shows on lane 0's verdict: {m}");
}
