//! Zero false positives on the four recorded PyTorch traces (traces/*.jsonl.gz:
//! resnet50 inference and training, gpt2 training, bert inference) in both
//! modes (COMPILER, HWONLY) and both structures (list, bst).
//!
//! Each trace is expanded into per-warp LOADMETA/MEMCHECK.G streams
//! (`sim::expand`) and replayed as one program on the golden model's runtime
//! with the trace's own allocation bases (`unit_program::TraceWalk`, the
//! same walk the Verilog runs): every MEMCHECK.G and LOADMETA must answer
//! NONE.
//! - Golden model: every kernel of every trace, at the evaluation's default
//!   expansion (32 warps, 128-byte steps, at most 8 steps per warp per
//!   argument) and 8 MLB entries.
//! - Verilator, the MLU as an SM unit (verif::unit_program::replay_trace:
//!   the committed mlu8_bst_k4_l32_p2_c2 in COMPILER mode, one-lane units
//!   generated for HWONLY and the list): the same replay at a smaller
//!   expansion (4 warps, at most 8 steps per argument), each operator's
//!   requests streamed into the unit, every output compared with the golden
//!   twin every cycle, every answer NONE (`VERILOG_REQUESTS` caps each run
//!   should the expansion grow).
use sim::config::{MluConfig, Mode, Structure};
use sim::expand::ExpandConfig;
use sim::fault::Op;
use sim::runtime::{Runtime, RuntimeConfig};
use verif::unit_program::{replay_trace, TraceWalk};

const TRACES: [&str; 4] = ["resnet50_infer", "resnet50_train", "gpt2_train", "bert_infer"];
const CONFIGS: [(Structure, Mode); 4] =
    [(Structure::Bst, Mode::Compiler), (Structure::Bst, Mode::Hwonly), (Structure::List, Mode::Compiler), (Structure::List, Mode::Hwonly)];

fn workload(name: &str, cfg: &ExpandConfig) -> sim::expand::Workload {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces").join(format!("{name}.jsonl.gz"));
    sim::expand::load(&path, cfg).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn golden_model_full_traces_have_no_false_positives() {
    let expand = ExpandConfig::default();
    for name in TRACES {
        let wl = workload(name, &expand);
        for (structure, mode) in CONFIGS {
            let t = std::time::Instant::now();
            let cfg = MluConfig { entries: 8, structure, mode, ..MluConfig::default() };
            let mut rt = Runtime::new(RuntimeConfig { mlu: cfg, seed: 1, ..RuntimeConfig::default() }).unwrap();
            let mut walk = TraceWalk::new(&wl, mode);
            let mut requests = 0u64;
            while let Some(ops) = walk.next(&mut rt).unwrap() {
                for o in ops {
                    requests += 1;
                    let fault = match o.op {
                        Op::LoadMeta => o.fault,
                        _ => rt.memcheck_g(o.ptr, o.width, o.loc).err().map(|f| f.code),
                    };
                    assert!(fault.is_none(), "{name} {} {}: a false positive, {fault:?} on {o:?}", structure.name(), mode.name());
                }
            }
            let c = *rt.counters();
            println!("{name} {} {}: {requests} requests, 0 faults, {} range hits, {:.1} s", structure.name(), mode.name(), c.range_hits, t.elapsed().as_secs_f64());
            assert!(requests > 10_000 && c.range_hits > 0, "{requests} requests, {c:?}");
        }
    }
}

const VERILOG_REQUESTS: u64 = 60_000;

#[test]
fn verilog_replays_every_trace_without_false_positives() {
    let expand = ExpandConfig { step: 128, alu: 0, warps: 4, cap: 8, sms: 132 };
    let wls: Vec<_> = TRACES.iter().map(|n| workload(n, &expand)).collect();
    // Sixteen independent runs (a Verilator process each): on every core.
    let runs: Vec<(usize, (Structure, Mode))> = CONFIGS.iter().flat_map(|&c| (0..TRACES.len()).map(move |k| (k, c))).collect();
    let requests = sim::parallel::map(&runs, |&(k, (structure, mode))| {
        let (name, wl) = (TRACES[k], &wls[k]);
        let cfg = MluConfig { entries: 8, structure, mode, ..MluConfig::default() };
        let t = std::time::Instant::now();
        let r = replay_trace(&cfg, wl, VERILOG_REQUESTS).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let run = &r.run;
        if let Some(m) = &run.mismatch {
            panic!("{name} on {} {}: {m}", r.top, mode.name());
        }
        let faults = run.answers.iter().filter(|a| a.fault != 0).count();
        println!(
            "{name} on {} {}: {} requests through the Verilog in {} cycles{}, {faults} faults, {:.1} s",
            r.top,
            mode.name(),
            run.requests,
            run.cycles,
            if r.whole { " (whole trace)" } else { "" },
            t.elapsed().as_secs_f64()
        );
        assert_eq!(faults, 0, "{name} on {} {}: a false positive", r.top, mode.name());
        assert_eq!(run.responses, run.requests, "{name}: every request answered");
        assert!(run.requests >= VERILOG_REQUESTS.min(5_000), "{name}: {} requests", run.requests);
        run.requests
    });
    let total: u64 = requests.iter().sum();
    println!("{total} trace requests through the Verilog, all NONE, every output equal to the model every cycle");
}
