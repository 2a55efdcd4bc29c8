//! End-to-end tests of the synthesis flow: Yosys, ABC, OpenSTA and Icarus
//! Verilog really run (CI installs them; nothing is skipped). Nangate45 is
//! fetched by scripts/fetch-nangate45.sh when missing.
use std::path::PathBuf;
use synth::flow::{self, Activity, Design};
use synth::liberty::{self, LibSpec};
use synth::sweep::{self, Family, JobOptions};
use sim::config::Replacement;
use sim::top::TopKind;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A fresh per-test working directory under target/.
fn work(name: &str) -> PathBuf {
    let d = liberty::repo_root().join("target/synth-tests").join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The 8-entry PLRU MLB that `mlugen generate` commits under verilog_out/.
fn mlb8() -> Design {
    sweep::resolve(&liberty::repo_root().join("verilog_out"), &TopKind::Mlb { entries: 8, replacement: Replacement::Plru, hit_latency: 1 })
        .expect("verilog_out/ must hold the generated 8-entry MLB (mlugen generate)")
        .design
}

#[test]
fn mlb8_nangate45_area_timing_power_energy() {
    let lib = sweep::library(&LibSpec::Nangate45).unwrap();
    let work_dir = work("mlb8");
    let o = JobOptions { out: work_dir.clone(), clock_ps: 1000.0, blocks: true, energy: true, energy_cycles: 60, clock_gating: true, on_stage: None };
    let r = sweep::run(&mlb8(), Family::Mlb, 8, &lib, &o).unwrap();

    // Area: at least the storage (8 x (172 + 56) bits: the entry of
    // docs/design.md and its stored base ^ size, hw/src/mlb.rs) in the
    // library's smallest flip-flop, and logic on top of it.
    let storage_bits = 8 * (172 + 56);
    assert!(r.flip_flops >= storage_bits as u64, "{} flip-flops", r.flip_flops);
    assert!(r.ff_area_um2 >= storage_bits as f64 * r.smallest_ff_area_um2 - 1e-6);
    assert!(r.area_um2 > r.ff_area_um2 && r.area_um2 < 20.0 * r.ff_area_um2, "area {}", r.area_um2);
    assert!(r.cells > r.flip_flops);
    // The block split adds up, and the MLB's own block (registers are inlined
    // into their block by the clean emission pass) holds at least the storage.
    let mlb = r.blocks.iter().find(|b| b.block.starts_with("MLB entries")).expect("the MLB block");
    assert!(mlb.flip_flops >= storage_bits as u64, "{} flip-flops in the MLB block", mlb.flip_flops);
    let sum: f64 = r.blocks.iter().map(|b| b.area_um2).sum();
    assert!((sum - r.blocks_total_um2).abs() < 1e-3 * sum);

    // Clock gating: one ICG per entry (its 51 + 56 + 56 + 8 + 56 location,
    // base, size, tag and base ^ size flops share the write enable) and one per output-data
    // bank (rs: way 3 + 51 + 56 + 56 + 8, ls: way 3 + 56 + 56 + 8, loaded
    // only on a request); the gated flops lost their enable (no $_DFFE_ left
    // for them in the netlist handed to the mapper).
    let g = r.clock_gating.as_ref().expect("clock gating is on");
    assert_eq!(g.icgs, 8 + 2, "{g:?}");
    assert_eq!(g.gated_flip_flops, 8 * (171 + 56) + 174 + 123, "{g:?}");
    let gated = std::fs::read_to_string(work_dir.join("mlb8_plru_nangate45/flat/gated.json")).unwrap();
    assert_eq!(gated.matches("\"type\": \"CLKGATE_X1\"").count() + gated.matches("\"type\":\"CLKGATE_X1\"").count(), 10);
    let dffe = gated.matches("$_DFFE_P").count() + gated.matches("$_SDFFCE_P").count();
    assert_eq!(dffe as u64, g.ungated_enable_flip_flops, "only the small enable groups keep their enable");
    let netlist = std::fs::read_to_string(liberty::repo_root().join(&r.netlist)).unwrap();
    assert_eq!(netlist.matches("CLKGATE_X1 ").count(), 10);
    assert!(r.icg_area_um2 > 0.0 && r.icg_area_um2 < 0.05 * r.area_um2);

    // Timing: a parsed path, with slack = period - required period.
    assert!(r.timing.arrival_ps > 100.0 && r.timing.arrival_ps < 20_000.0, "{:?}", r.timing);
    assert!((r.timing.min_period_ps + r.timing.slack_ps - 1000.0).abs() < 1e-6);
    assert_eq!(r.timing.met, r.timing.slack_ps >= 0.0);

    // Power: the parts add up and are all there.
    let p = &r.power_default_activity;
    assert!(p.internal_w > 0.0 && p.switching_w > 0.0 && p.leakage_w > 0.0);
    assert!((p.internal_w + p.switching_w + p.leakage_w - p.total_w).abs() < 1e-3 * p.total_w);

    // Energy: the gate-level runs did what the workloads say, and a search
    // costs more than an idle cycle, a miss with its fill more than a hit.
    let e = |w: &str| r.energy.iter().find(|x| x.workload == w).unwrap();
    let duty = |w: &str, port: &str| e(w).output_duty[port];
    assert!(duty("range_hit", "rs_hit") > 0.95, "{:?}", e("range_hit").output_duty);
    assert!(duty("loc_hit", "ls_hit") > 0.95);
    assert_eq!(duty("miss_fill", "rs_hit"), 0.0);
    assert_eq!(duty("idle", "rs_hit"), 0.0);
    assert_eq!(duty("range_hit", "rs_multi"), 0.0);
    let idle = e("idle").dynamic_pj_per_op;
    assert!(idle > 0.0);
    assert!(e("range_hit").dynamic_pj_per_op > idle);
    assert!(e("loc_hit").dynamic_pj_per_op > idle);
    assert!(e("miss_fill").dynamic_pj_per_op > e("range_hit").dynamic_pj_per_op);
    assert!(e("idle").mean_input_activity == 0.0 && e("range_hit").mean_input_activity > 0.0);
}

#[test]
fn asap7_merged_library_maps_and_times_the_fixture() {
    let lib = sweep::library(&LibSpec::Asap7).unwrap();
    assert_eq!(lib.time_unit_ps, 1.0);
    assert_eq!(lib.voltage, 0.7);
    // All five files' cells are there, and the flip-flop used is the x1.
    for c in ["INVx1_ASAP7_75t_R", "AND2x2_ASAP7_75t_R", "AO21x1_ASAP7_75t_R", "OA21x2_ASAP7_75t_R", "DFFHQNx1_ASAP7_75t_R"] {
        assert!(lib.cell_area.contains_key(c), "{c} missing from the merged library");
    }
    assert_eq!(lib.cell_area["INVx1_ASAP7_75t_R"], 0.04374); // the one without `;`
    let w = work("fixture_asap7");
    let d = Design { verilog: vec![fixture("range4.v")], top: "range4".into(), clock: "clock".into() };
    let (m, _) = flow::map(&d, &lib, 500.0, &w, true).unwrap();
    // 4 entries x (56 + 56 + 1) + 3 output bits, all DFFHQNx1.
    assert_eq!(m.flip_flops, 455);
    assert!((m.ff_area_um2 - 455.0 * lib.cell_area["DFFHQNx1_ASAP7_75t_R"]).abs() < 1e-6);
    let (t, p) = flow::sta(&d, &lib, &m, 500.0, &Activity::default(), "").unwrap();
    assert!(t.arrival_ps > 20.0 && t.arrival_ps < 5000.0, "{t:?}");
    assert!(p.total_w > 0.0 && p.leakage_w > 0.0 && p.leakage_w < p.total_w);
}

#[test]
fn broken_netlist_is_an_error_naming_the_file() {
    let lib = sweep::library(&LibSpec::Nangate45).unwrap();
    let d = Design { verilog: vec![fixture("broken.v")], top: "broken".into(), clock: "clock".into() };
    let err = flow::map(&d, &lib, 1000.0, &work("broken"), true).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("yosys failed") && msg.contains("broken.v"), "{msg}");
    // A top that does not exist is also Yosys's error, not a panic.
    let d = Design { verilog: vec![fixture("range4.v")], top: "no_such_top".into(), clock: "clock".into() };
    let msg = format!("{:#}", flow::map(&d, &lib, 1000.0, &work("notop"), true).unwrap_err());
    assert!(msg.contains("yosys failed"), "{msg}");
}

#[test]
fn missing_or_bad_library_is_an_error_naming_the_path() {
    let w = work("badlib");
    let msg = format!("{:#}", liberty::prepare(&LibSpec::Path("/nonexistent/cells.lib".into()), &w).unwrap_err());
    assert!(msg.contains("/nonexistent/cells.lib") && msg.contains("missing or unreadable"), "{msg}");
    std::fs::create_dir_all(&w).unwrap();
    let junk = w.join("junk.lib");
    std::fs::write(&junk, "this is not liberty\n").unwrap();
    let msg = format!("{:#}", liberty::prepare(&LibSpec::Path(junk.clone()), &w).unwrap_err());
    assert!(msg.contains("junk.lib"), "{msg}");
    assert!(LibSpec::parse("tsmc3").is_err());
    // An ASAP7 directory without the files names the file it looked for.
    let msg = format!("{:#}", liberty::prepare_with(&LibSpec::Asap7, &w.join("a7"), "/nonexistent/asap7".as_ref()).unwrap_err());
    assert!(msg.contains("/nonexistent/asap7/asap7sc7p5t_SIMPLE_RVT_TT_nldm_211120.lib.gz"), "{msg}");
}

#[test]
fn kogge_stone_carry_map_is_equivalent_to_yosys_default() {
    // Prove with Yosys's SAT solver that adders, subtractors and the MLB's
    // range comparison mapped through the Kogge-Stone $lcu equal the
    // default (ripple) mapping, for odd and power-of-two widths.
    let w = work("kogge");
    std::fs::create_dir_all(&w).unwrap();
    let v = w.join("arith.v");
    std::fs::write(
        &v,
        "module arith(input [20:0] a, b, c, input [7:0] d, e, output y, output [20:0] s, output [21:0] t, output [7:0] u);\n\
         assign y = (b <= a) && ((a - b) < c);\n assign s = a + b + c;\n assign t = {1'b0,a} - {1'b0,c};\n assign u = d - e;\nendmodule\n",
    )
    .unwrap();
    let map = w.join("lcu.v");
    std::fs::write(&map, flow::LCU_KOGGE_STONE).unwrap();
    let (v, map) = (v.display(), map.display());
    let script = format!(
        "read_verilog {v}; synth -top arith -flatten; rename arith gold; design -stash gold; \
         read_verilog {v}; synth -top arith -flatten -run :fine; techmap -autoproc -map {map} -map +/techmap.v; synth -run fine:; \
         rename arith gate; design -stash gate; design -copy-from gold -as gold gold; design -copy-from gate -as gate gate; \
         miter -equiv -flatten -make_assert gold gate miter; sat -verify -prove-asserts miter"
    );
    let out = std::process::Command::new("yosys").args(["-p", &script]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("SUCCESS"), "{text}");
    assert!(text.contains("_80_lcu_kogge_stone"), "the Kogge-Stone map was not used");
}
