//! The clean emission pass (hw/src/clean.rs) changes nothing: Yosys proves
//! rust-hdl's raw Verilog and the shipped clean Verilog equivalent
//! (testbench/src/equiv.rs says how), and mutants of the clean text fail
//! the check, so it can fail.
use hw::generate::{TopKind, TopSpec};
use sim::config::Replacement;
use testbench::equiv::prove_clean;

fn scratch(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("mlugen-equiv-{}-{name}", std::process::id()))
}

fn mlb(entries: usize, replacement: Replacement) -> hw::generate::Generated {
    TopSpec::new(TopKind::Mlb { entries, replacement }).build().unwrap()
}

#[test]
fn clean_mlb_is_equivalent_to_the_raw_verilog() {
    for g in [mlb(2, Replacement::Plru), mlb(2, Replacement::RoundRobin), TopSpec::new(TopKind::Memcheck).build().unwrap()] {
        let t0 = std::time::Instant::now();
        let dir = scratch(g.name());
        prove_clean(&g, &dir).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("{}: equivalent ({:.1} s)", g.name(), t0.elapsed().as_secs_f64());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_changed_register_load_or_initial_value_is_caught() {
    let g = mlb(2, Replacement::Plru);
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
