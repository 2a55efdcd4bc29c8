//! Verilator cosimulation of the committed MLU Verilog (verilog_out/mlu*.v)
//! against the golden model: random programs on `sim::runtime::Runtime`
//! (testbench/src/harness/program.rs), every request's fault, location,
//! address, allocation, metadata reads and latency compared, and every
//! program's final counters and CSRs; then every scenario of the corpus
//! (testbench/scenarios/) replayed through the same harness. Each top is
//! built once per test binary run (cached across runs).
use sim::config::{Mode, Replacement, Structure};
use sim::fault::FaultCode;
use sim::scenario::Scenario;
use testbench::cosim::{mlu_top, run_mlu, run_scenarios, RunOptions};
use testbench::harness::program::ProgramConfig;
use testbench::verilator::Top;

/// Requests per top: 1,000,000 (issue "The MLU as an SM unit"), half in
/// each mode. Each half alone reaches every fault and both MLB outcomes
/// (asserted below); a whole million per mode doubled the file's time
/// (HWONLY over a 16-entry list is 56 M cycles) for no new coverage.
const REQUESTS_PER_TOP: u64 = 1_000_000;
const MODES: [Mode; 2] = [Mode::Compiler, Mode::Hwonly];

fn run(entries: usize, structure: Structure, seed: u64) {
    let top = mlu_top(entries, structure).expect("the committed MLU top loads");
    let per_mode = REQUESTS_PER_TOP / MODES.len() as u64;
    for mode in MODES {
        let cfg = ProgramConfig::new(entries, structure, mode);
        let opts = RunOptions { count: per_mode, seed, ..Default::default() };
        let r = run_mlu(&top, &top.verilog, "", &cfg, &opts).expect("the cosimulation runs");
        println!(
            "{} {}: {} requests, {:.0} requests/s (model alone {:.0}/s), {} cycles, build {:.1}s{}\n  {}",
            r.top,
            mode.name(),
            r.requests,
            r.requests_per_second(),
            r.model_requests_per_second(),
            r.cycles,
            r.build.seconds,
            if r.build.compiled { "" } else { " (cached)" },
            r.stats
        );
        if let Some(m) = &r.mismatch {
            panic!("{m}");
        }
        assert!(r.requests >= per_mode);
        // The programs reached every fault and both MLB outcomes.
        let s = &r.stats;
        for c in FaultCode::ALL {
            let needed = !(mode == Mode::Hwonly && c == FaultCode::MemError && s.poisons == 0 && s.corruptions == 0);
            if needed {
                assert!(s.faults[c.bits() as usize] > 0, "no {} in {}: {s}", c.name(), mode.name());
            }
        }
        assert!(s.range_hits > 10_000 && s.range_misses > 10_000, "{s}");
        if mode == Mode::Compiler {
            assert!(s.loc_hits > 10_000 && s.loc_misses > 1_000, "{s}");
        }
        assert!(s.programs >= 10 && s.mallocs > 1000 && s.frees > 1000 && s.corruptions + s.poisons > 0, "{s}");
    }
}

#[test]
fn mlu8_bst_million_requests() {
    run(8, Structure::Bst, 31);
}

#[test]
fn mlu8_list_million_requests() {
    run(8, Structure::List, 32);
}

#[test]
fn mlu16_bst_million_requests() {
    run(16, Structure::Bst, 33);
}

#[test]
fn mlu16_list_million_requests() {
    run(16, Structure::List, 34);
}

/// A 1-entry round-robin MLU, for the corpus's thrashing reference scenario.
fn mlu1_rr_bst() -> Top {
    use hw::mlu::{Mlu, MluParams};
    use hw::traverser::Structures;
    let mut uut = Mlu::<1, 1>::new(MluParams { replacement: Replacement::RoundRobin, ..MluParams::new(Structures::Bst) });
    hw::generate::emit("mlu1_rr_bst", "hw::mlu::Mlu<1, 1>", &mut uut, Default::default(), &hw::interface::mlu()).expect("Mlu<1, 1> emits").into()
}

#[test]
fn scenario_corpus_through_the_verilog() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    files.sort();
    let mut groups: std::collections::BTreeMap<String, (Option<Top>, Vec<Scenario>)> = Default::default();
    let mut not_buildable = vec![];
    for f in &files {
        let sc = Scenario::from_file(f).unwrap_or_else(|e| panic!("{e}"));
        let c = &sc.config;
        let key = match (c.entries, c.structure, c.replacement) {
            (8 | 16, Structure::List | Structure::Bst, Replacement::Plru) => format!("mlu{}_{}", c.entries, c.structure.name()),
            (1, Structure::Bst, Replacement::RoundRobin) => "mlu1_rr_bst".to_string(),
            _ => {
                // No MLB (0 entries) and the sol table are model-only
                // reference points: there is no RTL for them.
                assert!(c.entries == 0 || c.structure == Structure::Sol, "{}: a buildable configuration left out", f.display());
                not_buildable.push(f.file_name().unwrap().to_string_lossy().to_string());
                continue;
            }
        };
        groups.entry(key).or_default().1.push(sc);
    }
    let mut total = 0;
    let mut requests = 0;
    for (key, (_, scs)) in groups.iter_mut() {
        let top = if key == "mlu1_rr_bst" {
            mlu1_rr_bst()
        } else {
            let sc = &scs[0];
            mlu_top(sc.config.entries, sc.config.structure).unwrap()
        };
        let runs = run_scenarios(&top, scs).expect("the scenarios run");
        for r in &runs {
            if let Some(m) = &r.mismatch {
                panic!("scenario {} on {key}:\n{m}", r.name);
            }
            requests += r.requests;
        }
        // Each scenario under two memory timings.
        assert_eq!(runs.len(), 2 * scs.len());
        total += scs.len();
    }
    println!("{total} scenarios ({requests} requests) agree with the model; model-only (no RTL): {not_buildable:?}");
    assert!(total >= 60, "only {total} scenarios ran");
    assert!(not_buildable.len() <= 2, "{not_buildable:?}");
}

/// Real workloads: two recorded PyTorch traces, expanded into per-warp
/// LOADMETA/MEMCHECK streams (sim::expand: 128-byte warp steps, 4 warps, at
/// most 8 steps per argument), run through the MLU Verilog in both modes:
/// no fault, and every request and the final MLB hit/miss counters equal
/// to the model's.
#[test]
fn recorded_traces_through_the_verilog() {
    let expand = sim::expand::ExpandConfig { step: 128, alu: 0, warps: 4, cap: 8, sms: 132 };
    for (trace, entries) in [("bert_infer.jsonl.gz", 8), ("gpt2_train.jsonl.gz", 16)] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces").join(trace);
        let top = mlu_top(entries, Structure::Bst).unwrap();
        for mode in [Mode::Compiler, Mode::Hwonly] {
            let cfg = ProgramConfig::new(entries, Structure::Bst, mode);
            let r = testbench::cosim::run_trace(&top, &cfg, &path, &expand, &RunOptions { batch: 20_000, ..Default::default() }).unwrap();
            println!("{trace} on {} {}: {} requests, {:.0} requests/s, {} cycles\n  {}", r.top, mode.name(), r.requests, r.requests_per_second(), r.cycles, r.stats);
            if let Some(m) = &r.mismatch {
                panic!("{trace}: {m}");
            }
            let s = &r.stats;
            assert!(r.requests > 5_000, "{s}");
            assert_eq!(s.faults[1..].iter().sum::<u64>(), 0, "a real workload faults: {s}");
            assert!(s.range_hits > 0 && s.range_misses > 0, "{s}");
        }
    }
}
