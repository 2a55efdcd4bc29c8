//! The SM pipeline model: hand-computed cycle counts for tiny kernels, zero
//! faults on every published trace, and MLU counts equal to feeding the same
//! operations to the MLU directly.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sim::config::{Mode, MluConfig, Structure};
use sim::expand::{self, Arg, ExpandConfig, Instr, Item, Kernel};
use sim::sm_pipeline::{run_kernel, run_workload, PipelineConfig};
use sim::pointer::NO_META;
use sim::runtime::{Runtime, RuntimeConfig};
use sim::trace::Rw;

fn traces_dir() -> PathBuf {
    match std::env::var_os("MLUGEN_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces"),
    }
}

fn kernel(warps: Vec<Vec<Instr>>) -> Kernel {
    Kernel {
        op: "k".into(),
        args: vec![Arg { id: 0, offset: 0, length: 128, rw: Rw::R }],
        warps,
        working_set: 1,
        full_steps: 1,
    }
}

fn runtime(entries: usize, structure: Structure, mode: Mode) -> (Runtime, u64) {
    let mlu = MluConfig { entries, structure, mode, ..MluConfig::default() };
    let mut rt = Runtime::new(RuntimeConfig { mlu, ..RuntimeConfig::default() }).unwrap();
    let p = rt.malloc(4096, Some(0x7f00_0000_0000)).unwrap();
    (rt, p)
}

const L10: PipelineConfig = PipelineConfig {
    mem_latency: 10,
    meta_latency: 10,
    max_outstanding: 4,
    host_locations: false,
    hit_under_miss: false,
};

fn one_warp() -> Kernel {
    kernel(vec![vec![
        Instr::LoadMeta { arg: 0 },
        Instr::MemCheck { arg: 0, off: 0, width: 4 },
        Instr::Load { arg: 0, off: 0 },
        Instr::Alu(2),
    ]])
}

#[test]
fn one_warp_exact_cycles() {
    let k = one_warp();
    // Unchecked: load at 0, data at 10, two ALU cycles: 12.
    let (_, p) = runtime(8, Structure::List, Mode::Compiler);
    assert_eq!(run_kernel(&L10, &k, &[p], None).cycles, 12);
    // Compiler, cold MLB, one list node: LOADMETA reads base and size|tag
    // (1 + 2 * 10 = 21), MEMCHECK hits by location (22), load (32), ALU (34).
    let (mut rt, p) = runtime(8, Structure::List, Mode::Compiler);
    let r = run_kernel(&L10, &k, &[p], Some(&mut rt));
    assert_eq!((r.cycles, r.meta_reads, r.mlu_ops, r.faults), (34, 2, 2, 0));
    // The same kernel again, MLB warm: 1 + 1 + 10 + 2 = 14.
    assert_eq!(run_kernel(&L10, &k, &[p], Some(&mut rt)).cycles, 14);
    // No MLB: the MEMCHECK's location miss fetches two more words: 21 + 21 + 10 + 2.
    let (mut rt, p) = runtime(0, Structure::Bst, Mode::Compiler);
    assert_eq!(run_kernel(&L10, &k, &[p], Some(&mut rt)).cycles, 54);
    // HWONLY skips LOADMETA: the MEMCHECK's range miss walks (21), load, ALU: 33.
    let (mut rt, p) = runtime(8, Structure::List, Mode::Hwonly);
    let r = run_kernel(&L10, &k, &[p], Some(&mut rt));
    assert_eq!((r.cycles, r.mlu_ops), (33, 1));
    // sol: one read per miss: 11, MEMCHECK hit 12, load 22, ALU 24.
    let (mut rt, p) = runtime(8, Structure::Sol, Mode::Compiler);
    assert_eq!(run_kernel(&L10, &k, &[p], Some(&mut rt)).cycles, 24);
    // Metadata latency apart from data latency: 1 + 2 * 3 = 7, 8, 18, 20.
    let (mut rt, p) = runtime(8, Structure::List, Mode::Compiler);
    let c = PipelineConfig { meta_latency: 3, ..L10 };
    assert_eq!(run_kernel(&c, &k, &[p], Some(&mut rt)).cycles, 20);
}

#[test]
fn outstanding_limit_and_port_sharing() {
    let (_, p) = runtime(8, Structure::List, Mode::Compiler);
    let two = kernel(vec![vec![Instr::Load { arg: 0, off: 0 }], vec![Instr::Load { arg: 0, off: 128 }]]);
    // One request in flight: the second load waits for the first answer.
    let c1 = PipelineConfig { max_outstanding: 1, ..L10 };
    assert_eq!(run_kernel(&c1, &two, &[p], None).cycles, 20);
    assert_eq!(run_kernel(&L10, &two, &[p], None).cycles, 11);
    // A store frees its warp at once but holds its request slot until answered.
    let st = kernel(vec![vec![Instr::Store { arg: 0, off: 0 }, Instr::Store { arg: 0, off: 0 }, Instr::Alu(1)]]);
    assert_eq!(run_kernel(&c1, &st, &[p], None).cycles, 20);
    assert_eq!(run_kernel(&L10, &st, &[p], None).cycles, 11);
    // Warp 0's LOADMETA miss takes the port at cycles 1 and 11; warp 1's loads
    // would issue at 1 and 11 and are pushed to 2 and 12: done at 22, not 21.
    let (mut rt, p) = runtime(8, Structure::List, Mode::Compiler);
    let k = kernel(vec![
        vec![Instr::LoadMeta { arg: 0 }],
        vec![Instr::Load { arg: 0, off: 0 }, Instr::Load { arg: 0, off: 128 }],
    ]);
    assert_eq!(run_kernel(&L10, &k, &[p], None).cycles, 20);
    assert_eq!(run_kernel(&L10, &k, &[p], Some(&mut rt)).cycles, 22);
}

#[test]
fn mlu_is_blocking_and_the_scheduler_round_robins() {
    // Two warps each LOADMETA then MEMCHECK; the first LOADMETA misses (21),
    // warp 1's LOADMETA must wait for it, then hits (22); warp 0's MEMCHECK
    // at 22 (done 23) and warp 1's at 23 (done 24) hit. One issue per cycle:
    // the loads go at 24 and 25, the last answer at 35.
    let (mut rt, p) = runtime(8, Structure::List, Mode::Compiler);
    let w = vec![Instr::LoadMeta { arg: 0 }, Instr::MemCheck { arg: 0, off: 0, width: 4 }, Instr::Load { arg: 0, off: 0 }];
    let k = kernel(vec![w.clone(), w]);
    let r = run_kernel(&L10, &k, &[p], Some(&mut rt));
    assert_eq!((r.cycles, r.mlu_ops, r.meta_reads), (35, 4, 2));
    let c = rt.counters();
    assert_eq!((c.range_hits, c.range_misses, c.loc_hits, c.loc_misses), (1, 1, 2, 0));
}

#[test]
fn a_bad_access_is_a_counted_fault_not_a_stop() {
    // An access 8 KiB into a 4 KiB allocation: OUT_OF_BOUNDS, the warp goes on.
    let (mut rt, p) = runtime(8, Structure::Bst, Mode::Compiler);
    let k = kernel(vec![vec![Instr::LoadMeta { arg: 0 }, Instr::MemCheck { arg: 0, off: 8192, width: 4 }, Instr::Alu(1)]]);
    let r = run_kernel(&L10, &k, &[p], Some(&mut rt));
    assert_eq!(r.faults, 1);
    assert_eq!(r.first_fault.unwrap().code.name(), "OUT_OF_BOUNDS");
    assert_eq!(r.cycles, 21 + 1 + 1);
    let _ = NO_META;
}

fn trace(name: &str, cfg: &ExpandConfig) -> expand::Workload {
    expand::load(traces_dir().join(format!("{name}.jsonl.gz")), cfg).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn published_traces_run_without_faults() {
    let pc = PipelineConfig::default();
    for name in ["resnet50_infer", "resnet50_train", "gpt2_train", "bert_infer"] {
        let wl = trace(name, &ExpandConfig::default());
        let base = run_workload(&wl, &pc, None, 1).unwrap();
        for (entries, structure, mode) in [
            (8, Structure::Bst, Mode::Compiler),
            (8, Structure::Bst, Mode::Hwonly),
            (16, Structure::List, Mode::Compiler),
            (0, Structure::Sol, Mode::Hwonly),
        ] {
            let m = MluConfig { entries, structure, mode, ..MluConfig::default() };
            let r = run_workload(&wl, &pc, Some(&m), 1).unwrap();
            assert_eq!(r.faults, 0, "{name} {m:?}: {:?}", r.first_fault);
            assert_eq!(r.counters.faults, 0);
            // The same streams: the same data accesses, plus the checks.
            assert_eq!((r.loads, r.stores), (base.loads, base.stores), "{name}");
            assert_eq!(r.kernels, base.kernels);
            assert!(r.cycles >= base.cycles, "{name} {m:?}");
            let accesses = base.loads + base.stores;
            assert_eq!(r.counters.memcheck_g, accesses, "{name}: one MEMCHECK per access");
            if mode == Mode::Hwonly {
                assert_eq!(r.counters.loadmeta, 0);
            }
        }
    }
}

/// Feeds a one-warp workload's LOADMETA/MEMCHECK stream straight to a
/// runtime's MLU (no pipeline): with one warp the issue order is the stream
/// order, so every counter must agree with the pipeline's run.
#[test]
fn counts_equal_the_mlu_fed_directly() {
    let cfg = ExpandConfig { warps: 1, cap: 8, ..ExpandConfig::default() };
    let wl = trace("gpt2_train", &cfg);
    for (entries, structure, mode) in
        [(8, Structure::Bst, Mode::Compiler), (4, Structure::List, Mode::Hwonly), (2, Structure::Sol, Mode::Compiler)]
    {
        let m = MluConfig { entries, structure, mode, ..MluConfig::default() };
        let piped = run_workload(&wl, &PipelineConfig::default(), Some(&m), 7).unwrap();
        let mut rt = Runtime::new(RuntimeConfig { mlu: m.clone(), seed: 7, ..RuntimeConfig::default() }).unwrap();
        let mut ptr: HashMap<u64, u64> = HashMap::new();
        for item in &wl.items {
            match item {
                Item::Alloc { id, base, size, .. } => {
                    ptr.insert(*id, rt.malloc(*size, Some(*base)).unwrap());
                }
                Item::Free { id, .. } => rt.free(ptr.remove(id).unwrap()).unwrap(),
                Item::Kernel { kernel, .. } => {
                    for s in &kernel.warps {
                        let mut loc = vec![NO_META; kernel.args.len()];
                        for i in s {
                            match *i {
                                Instr::LoadMeta { arg } if mode == Mode::Compiler => {
                                    let a = &kernel.args[arg as usize];
                                    loc[arg as usize] = rt.loadmeta(ptr[&a.id] + a.offset).unwrap();
                                }
                                Instr::MemCheck { arg, off, width } => {
                                    let a = &kernel.args[arg as usize];
                                    rt.memcheck_g(ptr[&a.id] + off, width as u32, loc[arg as usize]).unwrap();
                                }
                                _ => {}
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(&piped.counters, rt.counters(), "{m:?}");
        assert!(piped.counters.range_misses > 0 && piped.counters.range_hits > 0);
    }
}

#[test]
fn host_locations_replace_loadmeta_by_a_location_fetch() {
    // No LOADMETA; the MEMCHECK misses by location and fetches 2 words (21),
    // load (31), ALU (33), whatever the structure.
    let c = PipelineConfig { host_locations: true, ..L10 };
    for s in [Structure::List, Structure::Bst, Structure::Sol] {
        let (mut rt, p) = runtime(8, s, Mode::Compiler);
        let r = run_kernel(&c, &one_warp(), &[p], Some(&mut rt));
        assert_eq!((r.cycles, r.mlu_ops, r.meta_reads, r.faults), (33, 1, 2, 0), "{s:?}");
        assert_eq!(rt.counters().loadmeta, 0);
    }
}

#[test]
fn hit_under_miss_lets_other_entries_hit_during_a_walk() {
    let mlu = MluConfig { entries: 8, structure: Structure::Sol, mode: Mode::Compiler, ..MluConfig::default() };
    let setup = || {
        let mut rt = Runtime::new(RuntimeConfig { mlu: mlu.clone(), ..RuntimeConfig::default() }).unwrap();
        let a = rt.malloc(4096, Some(0x7f00_0000_0000)).unwrap();
        let b = rt.malloc(4096, Some(0x7f00_0001_0000)).unwrap();
        rt.loadmeta(b).unwrap(); // b's entry is in the MLB
        (rt, a, b)
    };
    let mut k = kernel(vec![vec![Instr::LoadMeta { arg: 0 }], vec![Instr::LoadMeta { arg: 1 }, Instr::Alu(1)]]);
    k.args.push(Arg { id: 1, offset: 0, length: 128, rw: Rw::R });
    let hum = PipelineConfig { hit_under_miss: true, ..L10 };
    // Blocking: a's miss (1 read: 11), then b's hit (12), ALU (13).
    let (mut rt, a, b) = setup();
    assert_eq!(run_kernel(&L10, &k, &[a, b], Some(&mut rt)).cycles, 13);
    // Hit under miss: b hits at 1, ALU at 2; a's walk ends at 11.
    let (mut rt, a, b) = setup();
    assert_eq!(run_kernel(&hum, &k, &[a, b], Some(&mut rt)).cycles, 11);
    // A hit on the entry being filled waits for the walk: 11, then 12.
    let (mut rt, a, b) = setup();
    let same = kernel(vec![vec![Instr::LoadMeta { arg: 0 }], vec![Instr::LoadMeta { arg: 0 }]]);
    assert_eq!(run_kernel(&hum, &same, &[a, b], Some(&mut rt)).cycles, 12);
    // A second miss waits for the walker too: 11, then 11 + 11 = 22.
    let (mut rt, a, _) = setup();
    let c2 = rt.malloc(4096, Some(0x7f00_0002_0000)).unwrap();
    let mut two = kernel(vec![vec![Instr::LoadMeta { arg: 0 }], vec![Instr::LoadMeta { arg: 1 }]]);
    two.args.push(Arg { id: 2, offset: 0, length: 128, rw: Rw::R });
    assert_eq!(run_kernel(&hum, &two, &[a, c2], Some(&mut rt)).cycles, 22);
}
