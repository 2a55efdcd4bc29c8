//! Zero false positives on the four recorded PyTorch traces (traces/*.jsonl.gz:
//! resnet50 inference and training, gpt2 training, bert inference) in both
//! modes (COMPILER, HWONLY) and both structures (list, bst).
//!
//! Each trace is expanded into per-warp LOADMETA/MEMCHECK.G streams
//! (`sim::expand`) and replayed as one program on the golden model's runtime
//! with the trace's own allocation bases (`harness::program::TraceReplay`,
//! the same replay the Verilog runs): every MEMCHECK.G and LOADMETA must
//! answer NONE.
//! - Golden model: every kernel of every trace, at the evaluation's default
//!   expansion (32 warps, 128-byte steps, at most 8 steps per warp per
//!   argument) and 8 MLB entries.
//! - Verilator (verilog_out/mlu8_{bst,list}.v): the same replay at a smaller
//!   expansion (4 warps, at most 8 steps per argument), every request
//!   compared with the model: every trace whole (360,200 requests in all,
//!   about 30 s on 2 cores; `VERILOG_REQUESTS` caps each run should the
//!   expansion grow).
use sim::config::{Mode, Structure};
use sim::expand::ExpandConfig;
use testbench::cosim::{check_mlu_batch, mlu_top};
use testbench::harness::mlu::{build_mlu_harness, MluSim};
use testbench::harness::program::{ProgramConfig, TraceReplay};

const TRACES: [&str; 4] = ["resnet50_infer", "resnet50_train", "gpt2_train", "bert_infer"];
const CONFIGS: [(Structure, Mode); 4] =
    [(Structure::Bst, Mode::Compiler), (Structure::Bst, Mode::Hwonly), (Structure::List, Mode::Compiler), (Structure::List, Mode::Hwonly)];

fn workload(name: &str, cfg: &ExpandConfig) -> sim::expand::Workload {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces").join(format!("{name}.jsonl.gz"));
    sim::expand::load(&path, cfg).unwrap_or_else(|e| panic!("{e}"))
}

fn faults(r: &TraceReplay) -> u64 {
    r.stats().faults[1..].iter().sum()
}

#[test]
fn golden_model_full_traces_have_no_false_positives() {
    let expand = ExpandConfig::default();
    for name in TRACES {
        let wl = workload(name, &expand);
        for (structure, mode) in CONFIGS {
            let t = std::time::Instant::now();
            let mut r = TraceReplay::new(ProgramConfig::new(8, structure, mode), wl.clone());
            while r.batch(1 << 20).unwrap().is_some() {}
            let s = *r.stats();
            println!("{name} {} {}: {} requests, {} faults, {:.1} s", structure.name(), mode.name(), s.requests, faults(&r), t.elapsed().as_secs_f64());
            assert_eq!(faults(&r), 0, "{name} {} {}: {s}", structure.name(), mode.name());
            assert!(s.requests > 10_000 && s.range_hits > 0, "{s}");
        }
    }
}

const VERILOG_REQUESTS: u64 = 60_000;

#[test]
fn verilog_replays_every_trace_without_false_positives() {
    let expand = ExpandConfig { step: 128, alu: 0, warps: 4, cap: 8, sms: 132 };
    let wls: Vec<_> = TRACES.iter().map(|n| workload(n, &expand)).collect();
    let mut total = 0;
    for structure in [Structure::Bst, Structure::List] {
        let top = mlu_top(8, structure).unwrap();
        let build = build_mlu_harness(&top, &top.verilog, "", false).unwrap();
        for (name, wl) in TRACES.iter().zip(&wls) {
            for mode in [Mode::Compiler, Mode::Hwonly] {
                let t = std::time::Instant::now();
                let mut sim = MluSim::start(&build, 1).unwrap();
                let mut r = TraceReplay::new(ProgramConfig::new(8, structure, mode), wl.clone());
                let mut whole = true;
                while let Some(b) = r.batch(8192).unwrap() {
                    let answers = sim.run(&b.cmds).unwrap();
                    if let Some(m) = check_mlu_batch(&b, &answers, r.issued() - b.requests) {
                        panic!("{name} {}: {m}", mode.name());
                    }
                    if r.issued() >= VERILOG_REQUESTS {
                        whole = false;
                        break;
                    }
                }
                sim.finish().unwrap();
                let s = *r.stats();
                println!(
                    "{name} on {} {}: {} requests through the Verilog{}, {} faults, {:.1} s",
                    top.name(),
                    mode.name(),
                    s.requests,
                    if whole { " (whole trace, counters compared)" } else { "" },
                    faults(&r),
                    t.elapsed().as_secs_f64()
                );
                assert_eq!(faults(&r), 0, "{name} {}: {s}", mode.name());
                assert!(s.requests >= VERILOG_REQUESTS.min(5_000), "{s}");
                total += s.requests;
            }
        }
    }
    println!("{total} trace requests through the Verilog, all NONE and equal to the model");
}
