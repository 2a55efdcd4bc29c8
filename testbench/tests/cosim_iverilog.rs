//! Icarus Verilog as a second simulator of the committed MLB Verilog: the
//! same cycle records (verif/templates/iverilog_tb.v) compared with the
//! golden model, and with Verilator's output records for the same stimulus.
use sim::config::Replacement;
use verif::cosim::{mlb_top, run_mlb_iverilog, RunOptions};
use verif::harness::iverilog::IverilogSim;
use verif::harness::mlb::{MlbBench, MlbPorts};
use verif::harness::{build_cycle_harness, CycleSim};

#[test]
fn iverilog_agrees_with_the_model() {
    for (n, r) in [(8, Replacement::Plru), (16, Replacement::RoundRobin)] {
        let top = mlb_top(n, r).unwrap();
        let run = run_mlb_iverilog(&top, n, r, &RunOptions { count: 5_000, seed: 21, ..Default::default() }).unwrap();
        println!("{} under Icarus: {} cycles, {:.0} cycles/s; {:?}", run.top, run.cycles, run.cycles_per_second(), run.stats);
        if let Some(m) = &run.mismatch {
            panic!("{m}");
        }
        assert_eq!(run.cycles, 5_000);
        assert!(run.stats.range_hits > 500 && run.stats.evictions > 100, "{:?}", run.stats);
    }
}

/// Both simulators give the same bits for every output that is defined
/// (Icarus starts registers at x, Verilator at random values: only outputs
/// Icarus knows are compared), cycle by cycle after the first reset.
#[test]
fn iverilog_and_verilator_give_identical_outputs() {
    let top = mlb_top(8, Replacement::Plru).unwrap();
    let (layout, built) = build_cycle_harness(&top, &top.verilog, "", false).unwrap();
    let ports = MlbPorts::new(&layout, 8).unwrap();
    let mut bench = MlbBench::new(8, Replacement::Plru, 22);
    let n = 4_000;
    let mut recs = vec![0u8; n * layout.in_bytes];
    for i in 0..n {
        bench.next().0.encode(&ports, &mut recs[i * layout.in_bytes..(i + 1) * layout.in_bytes]);
    }
    let mut vl = CycleSim::start(layout.clone(), &built, 5).unwrap();
    let mut vout = vec![];
    vl.run(&recs, &mut vout).unwrap();
    vl.finish().unwrap();
    let iv = IverilogSim::build(&top, &top.verilog).unwrap();
    let (iout, xmask) = iv.run(&recs).unwrap();
    let ob = layout.out_bytes;
    let mut known = 0u64;
    for c in 1..n {
        for k in c * ob..(c + 1) * ob {
            let m = !xmask[k];
            known += m.count_ones() as u64;
            assert_eq!(vout[k] & m, iout[k] & m, "cycle {c}, output record byte {}: Verilator {:#04x}, Icarus {:#04x} (known bits {m:#04x})", k - c * ob, vout[k], iout[k]);
        }
    }
    // Almost every bit is known after the reset.
    assert!(known * 10 > ((n - 1) * ob * 8) as u64 * 9, "only {known} known output bits");
}
