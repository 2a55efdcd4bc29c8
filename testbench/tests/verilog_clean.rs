//! The clean emission pass (hw/src/clean.rs) changes nothing: Yosys proves
//! rust-hdl's raw Verilog and the shipped clean Verilog equivalent, block by
//! block, for every committed top (testbench/src/equiv.rs says how), and
//! mutants of the clean text fail the check, so it can fail.
use hw::generate::{committed_tops, TopKind, TopSpec};
use sim::config::Replacement;
use testbench::equiv::{prove_clean, Prover};

fn scratch(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("mlugen-equiv-{}-{name}", std::process::id()))
}

/// Prove the committed tops `which` selects, sharing one prover so a block
/// met again (the MLB inside an MLU) is proven once.
fn prove_committed(which: impl Fn(&str) -> bool) {
    let mut prover = Prover::default();
    let tops: Vec<_> = committed_tops().into_iter().filter(|t| which(&t.name())).collect();
    assert!(!tops.is_empty());
    for t in tops {
        let g = t.build().unwrap();
        let t0 = std::time::Instant::now();
        let dir = scratch(g.name());
        prover.prove(&g, &dir).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("{}: equivalent ({:.1} s; blocks proven/reused so far {:?})", g.name(), t0.elapsed().as_secs_f64(), prover.blocks);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

// The 32-entry MLB, the 8-entry MLU unit and two 16-entry MLB variants are
// about half the work: they run beside the rest (each test has its own
// prover, so the halves share no proven block).
const BESIDE: [&str; 4] = ["mlb32_plru", "mlu8_bst_k4_l32_p2_c2", "mlb16_rr", "mlb16_plru_p2"];

#[test]
fn clean_mlb32_and_mlu8_unit_are_equivalent_to_the_raw_verilog() {
    prove_committed(|name| BESIDE.contains(&name));
}

#[test]
fn every_other_committed_top_is_equivalent_to_the_raw_verilog() {
    prove_committed(|name| !BESIDE.contains(&name));
}

#[test]
fn a_changed_register_load_or_initial_value_is_caught() {
    let g = TopSpec::new(TopKind::Mlb { entries: 2, replacement: Replacement::Plru, hit_latency: 1 }).build().unwrap();
    for (what, from, to) in [
        ("a register loads another signal", "valid_1_q <= valid_1_d;", "valid_1_q <= valid_0_d;"),
        ("an initial value", "valid_1_q = 1'h0;", "valid_1_q = 1'h1;"),
    ] {
        let mut m = g.clone();
        assert!(m.verilog.contains(from), "{what}: `{from}` is in the clean text");
        m.verilog = m.verilog.replacen(from, to, 1);
        let dir = scratch(&format!("mutant-{}", what.len()));
        assert!(prove_clean(&m, &dir).is_err(), "{what}: the mutant passed the equivalence check");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
