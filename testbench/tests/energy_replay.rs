//! Record-and-replay energy runs: stimuli recorded on the RTL under
//! Verilator (verif/src/recorder.rs, energy_workload.rs) replayed into
//! the mapped netlist by synth::activity, with every recorded output
//! compared cycle by cycle.
use std::path::PathBuf;
use synth::activity::{self, Stimulus};
use synth::flow::{self, MapOptions};
use synth::liberty::LibSpec;
use synth::sweep;
use sim::config::Replacement;
use sim::top::TopKind;
use synth::workload;
use verif::energy_workload::{canary_params, canary_workloads, unit_workloads};
use verif::recorder::record_open_loop;
use verif::verilator::{verilog_out_dir, Top};

fn work_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../build/test-energy-replay").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// mlb1_plru on Nangate45 (a few seconds to map): the RTL's outputs under
/// synth's range-hit stimulus are reproduced by the gate-level netlist in
/// every compared cycle, the energy is positive and finite, and a recording
/// with one output bit flipped is reported as a mismatch at that cycle.
#[test]
fn recorded_rtl_replays_exactly_and_a_mutated_recording_is_a_mismatch() {
    let lib = sweep::library(&LibSpec::Nangate45).unwrap();
    let g = sweep::resolve(&verilog_out_dir().expect("the workspace has verilog_out/"), &TopKind::Mlb { entries: 1, replacement: Replacement::Plru, hit_latency: 1 }).unwrap();
    let dir = work_dir("mlb1");
    let (m, _) = flow::map_with(&g.design, &lib, &MapOptions { clock_ps: 1000.0, flatten: true, clock_gating: true }, &dir.join("flat")).unwrap();
    let text = std::fs::read_to_string(&m.netlist).unwrap();
    let (ports, _) = activity::parse_netlist(&text).unwrap();
    let loc_width = ports.iter().find(|p| p.name == "fill_loc").unwrap().width;
    let outputs = ports.iter().filter(|p| !p.input).count();
    let open = workload::mlb("range_hit", 1, 40, loc_width);
    let top = Top::load(&verilog_out_dir().expect("the workspace has verilog_out/"), &g.design.top).unwrap();
    let rec: Stimulus = record_open_loop(&top, &open, 1).unwrap();
    assert_eq!((rec.cycles.len(), rec.warmup), (open.cycles.len(), open.warmup));
    // The RTL did the workload: a hit in every measured cycle after the first
    // (rs_hit is registered: it shows the previous cycle's search).
    let hit = |c: usize| rec.expect[c].iter().find(|(n, _)| n == "rs_hit").unwrap().1;
    assert!((rec.warmup + 1..rec.cycles.len()).all(|c| hit(c) == 1));

    let (act, n) = activity::measure(&lib, &m.netlist, &g.design.top, "clock", 1000.0, &rec, &m.dir, &dir, "_rec").unwrap();
    assert_eq!(n, 40);
    assert_eq!(act.rtl_checks, outputs * (rec.cycles.len() - 1), "every output compared in every cycle after reset");
    let (_, p) = flow::sta(&g.design, &lib, &m, 1000.0, &act, "_rec").unwrap();
    let pj = (p.internal_w + p.switching_w) * 1e-9 / rec.ops_per_cycle * 1e12;
    assert!(pj.is_finite() && pj > 0.0, "energy per hit {pj} pJ");

    let mut bad = rec.clone();
    let c = bad.warmup + 7;
    bad.expect[c].iter_mut().find(|(n, _)| n == "rs_hit").unwrap().1 ^= 1;
    let err = format!("{:#}", activity::measure(&lib, &m.netlist, &g.design.top, "clock", 1000.0, &bad, &m.dir, &dir, "_bad").unwrap_err());
    assert!(err.contains("disagrees with the recorded RTL outputs") && err.contains(&format!("cycle {c} port rs_hit")), "{err}");
    assert!(err.contains("1 of "), "exactly the flipped bit differs: {err}");
}

/// A recorded workload's measured cycles (at least `min`) and its whole
/// number of operations (at least one); every cycle has its expected outputs.
fn whole_operations(name: &str, st: &Stimulus, min: usize) -> (usize, f64) {
    let measured = st.cycles.len() - st.warmup;
    assert!(measured >= min, "{name}: {measured} cycles");
    let ops = st.ops_per_cycle * measured as f64;
    assert!((ops - ops.round()).abs() < 1e-9 && ops >= 1.0, "{name}: {ops} operations");
    assert_eq!(st.expect.len(), st.cycles.len());
    (measured, ops)
}

/// The canary unit's closed-loop recordings do what they say (checked
/// against the model while recording; here: windows and operation counts).
#[test]
fn canary_recordings_measure_whole_operations() {
    let ct = Top::load(&verilog_out_dir().expect("the workspace has verilog_out/"), "canary_alloc").unwrap();
    let cw = canary_workloads(&ct, &canary_params(&ct).unwrap(), 60).unwrap();
    let names: Vec<&str> = cw.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["malloc", "free", "check", "idle"]);
    for (n, st) in &cw {
        let measured = st.cycles.len() - st.warmup;
        let ops = st.ops_per_cycle * measured as f64;
        assert!(measured >= 60 && ops >= 1.0 && (ops - ops.round()).abs() < 1e-9, "{n}: {ops} ops in {measured} cycles");
        let cpo = measured as f64 / ops;
        match n.as_str() {
            // docs/canary.md: ~25 cycles per malloc and ~29 per free, ~25 per check.
            "malloc" | "free" | "check" => assert!((15.0..45.0).contains(&cpo), "{n}: {cpo} cycles per op"),
            _ => assert_eq!(cpo, 1.0),
        }
    }
}

/// The unit's recordings (made by the model, checked against the RTL while
/// recording) measure what they name: hits one per cycle, every lane of the
/// warp-wide MEMCHECK.G active, misses overlapped by the K walkers.
#[test]
fn unit_recordings_measure_whole_operations() {
    let top = Top::load(&verilog_out_dir().expect("the workspace has verilog_out/"), "mlu8_bst_k4_l32_p2_c2").unwrap();
    let cfg = sim::config::MluConfig { entries: 8, unit: Some(sim::config::UnitShape { walkers: 4, lanes: 32, mlb_latency: 2, check_latency: 2, heap_path: true }), ..Default::default() };
    let p = sim::mlu_unit::UnitParams::from_config(&cfg).unwrap();
    let ws = unit_workloads(&top, &p, 60).unwrap();
    let names: Vec<&str> = ws.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["loadmeta_hit", "memcheck_hit", "loadmeta_miss", "idle"]);
    for (n, st) in &ws {
        let (measured, ops) = whole_operations(n, st, 60);
        let fact = |k: &str| st.facts.iter().find(|f| f.0 == k).map(|f| f.1).unwrap();
        let cpo = fact("cycles_per_op");
        eprintln!("{n}: {ops} ops in {measured} cycles ({cpo:.2} cycles/op) {:?}", st.facts);
        match n.as_str() {
            "loadmeta_miss" => {
                // Four walks in flight: a miss is issued faster than one
                // walk of its nodes can take (at least 2 cycles a node: the
                // read, its answer a cycle later, then the next read).
                let nodes = fact("nodes_per_op");
                assert!(nodes >= 3.0 && cpo < 2.0 * nodes, "{cpo} cycles per miss of {nodes} nodes");
            }
            _ => assert_eq!(cpo, 1.0, "{n}: one per cycle"),
        }
    }
    // Every lane of the measured MEMCHECK.G requests is active.
    let g = &ws[1].1;
    let set: Vec<bool> = (0..32).map(|k| g.cycles[g.warmup..].iter().chain(&g.cycles[..g.warmup]).any(|c| c.iter().any(|(p, v)| *p == format!("req_mask_{k}") && *v == 1))).collect();
    assert!(set.iter().all(|&b| b), "lanes never active: {set:?}");
}
