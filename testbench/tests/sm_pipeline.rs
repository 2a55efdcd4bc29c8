//! The cycle model (`sim::sm_pipeline` with the MLU as an SM unit:
//! `MluTiming::Unit`) against the RTL SM pipeline (`hw::sm_pipeline` with
//! `hw::mlu_unit::MluUnit`, rust-hdl simulation) on short pieces of the real
//! traces: per-kernel cycles, the pipeline's issue counts, the node reads
//! and the faults must be identical.
use rust_hdl::prelude::*;
use sim::config::{Mode, MluConfig, Structure};
use sim::expand::{self, ExpandConfig, Item, Workload};
use sim::sm_pipeline::{run_workload_with, MluTiming, PipelineConfig};
use std::path::PathBuf;
use std::time::Instant;
use testbench::sm_pipeline_driver::{RtlRun, SmPipelineDriver};

const SEED: u64 = 7;

fn trace(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../traces").join(name)
}

/// The first `kernels` kernels of a trace with everything before them
/// (allocs and frees), starting at kernel `skip`; kernels before it are kept
/// as allocation history but dropped from the streams.
fn piece(name: &str, warps: usize, cap: u64, skip: usize, kernels: usize) -> Workload {
    let cfg = ExpandConfig { cap, ..ExpandConfig::new(warps) };
    let mut wl = expand::load(trace(name), &cfg).unwrap();
    let mut seen = 0;
    let mut items = Vec::new();
    for it in wl.items.drain(..) {
        if let Item::Kernel { .. } = it {
            seen += 1;
            if seen <= skip {
                continue;
            }
            if seen > skip + kernels {
                break;
            }
        }
        items.push(it);
    }
    wl.items = items;
    wl
}

fn compare(what: &str, wl: &Workload, mlu: &MluConfig, p: &PipelineConfig, rtl: &RtlRun) {
    let m = run_workload_with(wl, p, MluTiming::Unit, Some(mlu), SEED).unwrap();
    let c = m.unit.expect("the unit's counters");
    eprintln!(
        "{what}: model hits {} misses {} merged {} walks {} reads {}",
        c.hits, c.misses, c.merged, c.walks, c.reads
    );
    assert_eq!(m.faults, 0, "{what}: the model faulted: {:?}", m.first_fault);
    assert_eq!(rtl.kernel_cycles, m.kernel_cycles, "{what}: per-kernel cycles");
    assert_eq!(rtl.cycles, m.cycles, "{what}: cycles");
    assert_eq!(rtl.issued, m.issued, "{what}: issued");
    assert_eq!(rtl.loads, m.loads, "{what}: loads");
    assert_eq!(rtl.stores, m.stores, "{what}: stores");
    assert_eq!(rtl.mlu_ops, m.mlu_ops, "{what}: MLU operations");
    assert_eq!(rtl.meta_reads, m.meta_reads, "{what}: node reads");
    assert_eq!(rtl.faults, m.faults, "{what}: faults");
}

/// One case: the piece through the model and the RTL (N = 8 or 2 entries,
/// W = 4 or 8 warps), compared; prints the simulated cycles and time.
#[allow(clippy::too_many_arguments)]
fn case(name: &str, warps: usize, entries: usize, structure: Structure, mode: Mode, p: PipelineConfig, skip: usize, kernels: usize) {
    let wl = piece(name, warps, 2 * warps as u64, skip, kernels);
    let mlu = MluConfig { entries, structure, mode, ..MluConfig::default() };
    let t = Instant::now();
    let rtl = match (warps, entries) {
        (4, 8) => SmPipelineDriver::<4, 2, 8, 3, 16, 4>::new(&mlu, &p, SEED).unwrap().run_workload(&wl),
        (4, 2) => SmPipelineDriver::<4, 2, 2, 1, 16, 4>::new(&mlu, &p, SEED).unwrap().run_workload(&wl),
        (8, 8) => SmPipelineDriver::<8, 3, 8, 3, 16, 4>::new(&mlu, &p, SEED).unwrap().run_workload(&wl),
        _ => panic!("no pipeline built for {warps} warps x {entries} entries"),
    }
    .unwrap();
    let what = format!("{name} kernels {skip}..{} W={warps} N={entries} {structure:?} {mode:?} {p:?}", skip + kernels);
    eprintln!(
        "{what}: {} kernel cycles, {} sim cycles in {:.1?}; reads {}",
        rtl.cycles,
        rtl.sim_cycles,
        t.elapsed(),
        rtl.meta_reads
    );
    compare(&what, &wl, &mlu, &p, &rtl);
}

fn lat(mem: u64, meta: u64, out: usize) -> PipelineConfig {
    PipelineConfig { mem_latency: mem, meta_latency: meta, max_outstanding: out, ..PipelineConfig::default() }
}

// The pieces: inference and training, list and bst, COMPILER and HWONLY,
// 2 and 8 MLB entries, 4 and 8 warps, equal and different data/metadata
// latencies, outstanding bounds that bind (1, 2) and that do not. About
// 450k simulated cycles in all; the training pieces include optimizer
// kernels (76-322 arguments), where the MLB thrashes and walks dominate.

#[test]
fn resnet50_infer_bst_compiler() {
    case("resnet50_infer.jsonl.gz", 4, 8, Structure::Bst, Mode::Compiler, lat(20, 20, 4), 0, 60);
}

#[test]
fn bert_infer_list_hwonly() {
    case("bert_infer.jsonl.gz", 4, 8, Structure::List, Mode::Hwonly, lat(12, 3, 2), 100, 60);
}

#[test]
fn gpt2_train_optimizer_bst_compiler() {
    case("gpt2_train.jsonl.gz", 4, 8, Structure::Bst, Mode::Compiler, lat(8, 8, 4), 565, 2);
}

#[test]
fn gpt2_train_list_compiler_2_entries() {
    case("gpt2_train.jsonl.gz", 4, 2, Structure::List, Mode::Compiler, lat(6, 2, 1), 300, 40);
}

#[test]
fn resnet50_train_optimizer_bst_hwonly_8_warps() {
    case("resnet50_train.jsonl.gz", 8, 8, Structure::Bst, Mode::Hwonly, lat(30, 5, 16), 885, 8);
}

#[test]
fn resnet50_train_list_hwonly_2_entries() {
    case("resnet50_train.jsonl.gz", 4, 2, Structure::List, Mode::Hwonly, lat(4, 1, 3), 200, 40);
}

/// The comparison can fail: the model's ideal MLU timing (a blocking MLU,
/// 1-cycle hit, L per 8-byte read) does not match the RTL unit's.
#[test]
fn ideal_mlu_timing_differs_from_the_rtl() {
    let wl = piece("resnet50_infer.jsonl.gz", 4, 8, 0, 5);
    let mlu = MluConfig { entries: 8, structure: Structure::Bst, mode: Mode::Compiler, ..MluConfig::default() };
    let p = lat(20, 20, 4);
    let rtl = SmPipelineDriver::<4, 2, 8, 3, 16, 4>::new(&mlu, &p, SEED).unwrap().run_workload(&wl).unwrap();
    let ideal = run_workload_with(&wl, &p, MluTiming::Ideal, Some(&mlu), SEED).unwrap();
    let exact = run_workload_with(&wl, &p, MluTiming::Unit, Some(&mlu), SEED).unwrap();
    assert_eq!(rtl.kernel_cycles, exact.kernel_cycles);
    assert_ne!(ideal.cycles, rtl.cycles, "ideal {} vs RTL {}", ideal.cycles, rtl.cycles);
    let differ = ideal.kernel_cycles.iter().zip(&rtl.kernel_cycles).filter(|(i, r)| i != r).count();
    assert!(differ * 2 > rtl.kernel_cycles.len(), "only {differ} kernels differ");
}

/// The scheduler alone, exhaustively: every candidate set and last issuer
/// against the rotation `last+1, ..., last` of `sim::sm_pipeline`.
#[test]
fn warp_sched_is_the_models_rotation() {
    fn check<const W: usize, const WW: usize>() {
        let mut s = hw::warp_sched::WarpSched::<W, WW>::default();
        s.connect_all();
        for mask in 0u32..(1 << W) {
            for last in 0..W {
                for w in 0..W {
                    s.can[w].next = mask & (1 << w) != 0;
                }
                s.last.next = (last as u64).into();
                assert!(simulate(&mut s, 100));
                let want = (1..=W).map(|i| (last + i) % W).find(|&w| mask & (1 << w) != 0);
                assert_eq!(s.valid.val(), want.is_some(), "W={W} mask={mask:b} last={last}");
                assert_eq!(s.pick.val().to_u64() as usize, want.unwrap_or(0), "W={W} mask={mask:b} last={last}");
            }
        }
    }
    check::<4, 2>();
    check::<8, 3>();
    check::<3, 2>();
}

