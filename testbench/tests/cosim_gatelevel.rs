//! Gate-level cosimulation: the committed 8-entry PLRU MLB mapped by the
//! synthesis flow (Yosys + ABC, flattened, library cells) runs under
//! Verilator with the RTL cosimulation's random stimulus and is compared
//! with the golden model every cycle (verif/src/gatelevel.rs). A
//! one-gate mutant of the same netlist must be caught.
use sim::config::Replacement;
use std::path::PathBuf;
use verif::cosim::RunOptions;
use verif::gatelevel::{map_mlb, GateNetlist};
use synth::liberty::LibSpec;

fn work(name: &str) -> PathBuf {
    let d = synth::liberty::repo_root().join("target/gatelevel-tests").join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn map(spec: &LibSpec, name: &str) -> GateNetlist {
    let g = map_mlb(8, Replacement::Plru, spec, &work(name)).expect("the MLB maps");
    println!(
        "{} on {}: {} instances, {} flip-flops, {:.1} um2 at {} ps, mapped in {:.1}s",
        g.top.name(),
        g.lib.name,
        g.instances(),
        g.flip_flops,
        g.area_um2,
        g.clock_ps,
        g.map_seconds
    );
    // A real mapping: every storage bit (8 x 172, docs/design.md) is a flop.
    assert!(g.flip_flops >= 8 * 172, "{} flip-flops", g.flip_flops);
    g
}

fn run(g: &GateNetlist, verilog: &str, variant: &str, cycles: u64, seed: u64) -> verif::cosim::MlbRun {
    let opts = RunOptions { count: cycles, seed, ..Default::default() };
    let r = g.run(verilog, variant, "-O0", 8, Replacement::Plru, &opts).expect("the gate-level cosimulation runs");
    println!(
        "{}{variant}: {} cycles, {:.0} cycles/s, build {:.1}s{}",
        g.lib.name,
        r.cycles,
        r.cycles_per_second(),
        r.build.seconds,
        if r.build.compiled { "" } else { " (cached)" }
    );
    r
}

/// The suite run: one Verilator build holds the netlist and a one-gate
/// mutant behind a switch input (`GateNetlist::switched_mutant`; at 0 the
/// netlist's own function, exactly), so the flat netlist is compiled once.
/// The report run below simulates the netlist alone.
#[test]
fn mlb8_nangate45_netlist_matches_model_and_mutant_is_caught() {
    let g = map(&LibSpec::Nangate45, "mlb8_nangate45");
    // One gate near the rs_hit register swapped for its dual.
    let m = g.mutant("rs_hit", 0).expect("a two-input gate feeds rs_hit");
    let (layout, v) = g.switched_mutant(&m, &g.netlist_path.parent().unwrap().join("mutant")).unwrap();
    let opts = RunOptions { count: 200_000, seed: 21, ..Default::default() };
    let r = g.run_switched(&layout, &v, false, "-O0", 8, Replacement::Plru, &opts).expect("the gate-level cosimulation runs");
    println!("{}: {} cycles, {:.0} cycles/s, build {:.1}s{}", g.lib.name, r.cycles, r.cycles_per_second(), r.build.seconds, if r.build.compiled { "" } else { " (cached)" });
    if let Some(mm) = &r.mismatch {
        panic!("gate-level netlist {} differs from the golden model:\n{mm}", g.netlist_path.display());
    }
    assert_eq!(r.cycles, 200_000);
    // The stimulus reached hits, evictions and the same-cycle cases.
    let s = &r.stats;
    assert!(s.range_hits * 10 > s.range_searches && s.loc_hits * 10 > s.loc_searches, "{s:?}");
    assert!(s.evictions > 100 && s.fills_dropped_by_invalidate > 10 && s.fills_present > 0 && s.resets > 1, "{s:?}");

    let r = g.run_switched(&layout, &v, true, "-O0", 8, Replacement::Plru, &opts).unwrap();
    let mm = r.mismatch.unwrap_or_else(|| panic!("mutant {} {} -> {} not caught in 200k cycles", m.instance, m.from, m.to));
    println!("mutant {} {} -> {} caught at cycle {}: {}", m.instance, m.from, m.to, mm.cycle, mm.output);
}

/// Cell models: a statetable clock gate gets the latch + AND model, and a
/// cell the library lacks, or a statetable cell that is no clock gate, is
/// an error naming the cell and the instance.
#[test]
fn cell_models_handle_clock_gates_and_reject_unknown_cells() {
    use synth::activity::Inst;
    use verif::gatelevel::cell_models;
    let inst = |cell: &str, name: &str| Inst { cell: cell.into(), name: name.into(), pins: vec![] };
    let lib = synth::sweep::library(&LibSpec::Nangate45).unwrap();
    let w = work("models");
    std::fs::create_dir_all(&w).unwrap();
    // Nangate45's CLKGATETST_X1 is described by a statetable only.
    let (m, icg) = cell_models(&lib, &[inst("CLKGATETST_X1", "cg"), inst("DFF_X1", "r")], &w).unwrap();
    assert_eq!(icg, vec!["CLKGATETST_X1".to_string()]);
    assert!(m.contains("module CLKGATETST_X1(CK, E, GCK, SE);") && m.contains("if (!CK) en_latch = E | SE;"), "{m}");
    assert!(m.contains("module DFF_X1(") && m.contains("always @(posedge CK)"), "{m}");
    // CLKGATE_X1 (the flow's Nangate45 clock gate) has no test enable.
    let (m, _) = cell_models(&lib, &[inst("CLKGATE_X1", "cg")], &w).unwrap();
    assert!(m.contains("module CLKGATE_X1(CK, E, GCK);") && m.contains("if (!CK) en_latch = E;"), "{m}");
    // ASAP7's ICGx1 (a statetable too, and an internal IQ pin).
    let a7 = synth::sweep::library(&LibSpec::Asap7).unwrap();
    let (m, _) = cell_models(&a7, &[inst("ICGx1_ASAP7_75t_R", "cg")], &w).unwrap();
    assert!(m.contains("module ICGx1_ASAP7_75t_R(CLK, ENA, GCLK, SE);") && m.contains("if (!CLK) en_latch = ENA | SE;"), "{m}");
    let e = format!("{:#}", cell_models(&lib, &[inst("NOPE_X1", "u7")], &w).unwrap_err());
    assert!(e.contains("u7") && e.contains("NOPE_X1") && e.contains("does not define"), "{e}");

    // A library with a statetable cell that is not a clock gate.
    let text = r#"library (tiny) {
  time_unit : "1ns"; nom_voltage : 1.0;
  cell (INV) { area : 1; pin (A) { direction : input; } pin (Y) { direction : output; function : "!A"; } }
  cell (DFF) { area : 4; ff (IQ, IQN) { next_state : "D"; clocked_on : "CK"; }
    pin (D) { direction : input; } pin (CK) { direction : input; clock : true; }
    pin (Q) { direction : output; function : "IQ"; } }
  cell (ODD) { area : 4; statetable ("A", "S") { table : "H : - : H, L : - : L"; }
    pin (A) { direction : input; } pin (Y) { direction : output; state_function : "S"; } }
}
"#;
    let p = w.join("tiny.lib");
    std::fs::write(&p, text).unwrap();
    let tiny = synth::liberty::prepare(&LibSpec::Path(p), &w).unwrap();
    assert!(cell_models(&tiny, &[inst("INV", "i"), inst("DFF", "d")], &w).is_ok());
    let e = format!("{:#}", cell_models(&tiny, &[inst("INV", "i"), inst("ODD", "u3")], &w).unwrap_err());
    assert!(e.contains("no behavioural model for cell ODD (instance u3)"), "{e}");
}

/// The report run (not in the suite): `MLUGEN_GATELEVEL_CYCLES` cycles
/// (default 2M) of Nangate45 and ASAP7 netlists, and mutants at several
/// depths of the rs_hit and fill_ok cones.
/// `cargo test --release -p testbench --test cosim_gatelevel -- --ignored --nocapture`
#[test]
#[ignore]
fn gatelevel_long_run_both_libraries_and_mutants() {
    let cycles: u64 = std::env::var("MLUGEN_GATELEVEL_CYCLES").ok().and_then(|s| s.parse().ok()).unwrap_or(2_000_000);
    for (spec, name) in [(LibSpec::Nangate45, "long_nangate45"), (LibSpec::Asap7, "long_asap7")] {
        let g = map(&spec, name);
        let cells: Vec<String> = g.cells.iter().map(|(c, n)| format!("{c}:{n}")).collect();
        println!("  cells: {}", cells.join(" "));
        let r = run(&g, &g.verilog(), "", cycles, 31);
        if let Some(m) = &r.mismatch {
            panic!("gate-level netlist {} differs from the golden model:\n{m}", g.netlist_path.display());
        }
        println!("  {:?}", r.stats);
        let dir = g.netlist_path.parent().unwrap().join("mutant");
        for (port, skip) in [("rs_hit", 0), ("rs_hit", 20), ("rs_hit", 100), ("fill_ok", 0), ("fill_ok", 30)] {
            let Ok(m) = g.mutant(port, skip) else {
                println!("  no mutant {port}/{skip}");
                continue;
            };
            let v = g.mutant_verilog(&m, &dir).unwrap();
            let r = run(&g, &v, &format!("-mutant-{port}-{skip}"), cycles, 31);
            // A mutant's build (about 13 MB) is not needed again.
            let _ = std::fs::remove_dir_all(&r.build.dir);
            match &r.mismatch {
                Some(mm) => println!("  mutant {port}/{skip} {} {} -> {}: caught at cycle {} ({})", m.instance, m.from, m.to, mm.cycle, mm.output),
                None => println!("  mutant {port}/{skip} {} {} -> {}: NOT caught in {cycles} cycles", m.instance, m.from, m.to),
            }
        }
    }
}

/// The clock-gate models under Verilator: Nangate45's CLKGATETST_X1 and
/// CLKGATE_X1 each gating a DFF_X1 (through the same harness and build as
/// the MLB netlists); the flop must load exactly on the edges whose cycle
/// had E (or SE, where the cell has it) high.
#[test]
fn clock_gate_model_gates_a_flip_flop_under_verilator() {
    gated_flop("CLKGATETST_X1", true);
    gated_flop("CLKGATE_X1", false);
}

fn gated_flop(cell: &str, test_pin: bool) {
    use synth::activity::parse_netlist;
    use verif::gatelevel::{build, cell_models};
    use verif::harness::{portvec_cpp, CycleSim};
    use verif::verilator::Layout;
    let netlist = "module gated(clock, en, se, d, q);\n  input clock;\n  input en;\n  input se;\n  input d;\n  output q;\n  wire gclk;\n  CELL cg (\n    .CK(clock),\n    .E(en),\n    SE    .GCK(gclk)\n  );\n  DFF_X1 r (\n    .D(d),\n    .CK(gclk),\n    .Q(q)\n  );\nendmodule\n";
    let netlist = netlist.replace("CELL", cell).replace("SE    ", if test_pin { ".SE(se),\n    " } else { "" });
    let netlist = netlist.as_str();
    let lib = synth::sweep::library(&LibSpec::Nangate45).unwrap();
    let w = work(&format!("icg_{cell}"));
    std::fs::create_dir_all(&w).unwrap();
    let (_, insts) = parse_netlist(netlist).unwrap();
    let (models, icg) = cell_models(&lib, &insts, &w).unwrap();
    assert_eq!(icg, vec![cell.to_string()]);
    let ports: Vec<serde_json::Value> = [("clock", "input"), ("en", "input"), ("se", "input"), ("d", "input"), ("q", "output")]
        .iter()
        .map(|(n, d)| serde_json::json!({"name": n, "direction": d, "width": 1}))
        .collect();
    let manifest = serde_json::from_value(serde_json::json!({"manifest_version": 1, "top": "gated", "block": "test", "generator": "test", "hdl": "verilog", "parameters": {}, "ports": ports, "modules": []})).unwrap();
    let layout = Layout::from_manifest(&manifest).unwrap();
    let built = build(&format!("icg-test-{cell}"), "gated", &format!("{netlist}\n{models}"), &portvec_cpp(&layout).unwrap(), "-O0").unwrap();
    let mut sim = CycleSim::start(layout, &built, 7).unwrap();
    let mut rng = sim::runtime::SplitMix64(5);
    let n = 4000;
    let cycles: Vec<[u8; 3]> = (0..n).map(|i| {
        let r = rng.next_u64();
        // Cycle 0 loads the flop so its random start value is gone.
        [(i == 0 || r.is_multiple_of(4)) as u8, (r % 16 == 1) as u8, ((r >> 8) & 1) as u8]
    }).collect();
    let mut out = Vec::new();
    sim.run(&cycles.concat(), &mut out).unwrap();
    sim.finish().unwrap();
    let (mut q, mut loads, mut holds) = (0u8, 0, 0);
    for (i, c) in cycles.iter().enumerate() {
        if i > 0 {
            assert_eq!(out[i], q, "{cell}, cycle {i}: q sampled before the edge");
        }
        if c[0] == 1 || (test_pin && c[1] == 1) {
            loads += 1;
            q = c[2];
        } else {
            holds += (q != c[2]) as u32;
        }
    }
    assert!(loads > 500 && holds > 500, "{loads} loads, {holds} held edges with d != q");
}
