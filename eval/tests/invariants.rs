//! Invariants of the checked run on the four public traces, and the issue
//! cost of the added instructions on a kernel whose time is all issue.
use std::path::{Path, PathBuf};

use eval::baseline;
use eval::mlu_model::{CheckParams, MluModel};
use eval::sm_model::{self, GpuParams, Shape, Timing};
use eval::sweep::{self, run_point, Grid};
use eval::workload::Workload;
use sim::config::{Mode, Structure};

fn traces() -> PathBuf {
    match std::env::var_os("MLUGEN_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces"),
    }
}

fn workloads() -> Vec<Workload> {
    ["resnet50_infer", "resnet50_train", "gpt2_train", "bert_infer"]
        .iter()
        .map(|w| eval::workload::load(&traces().join(format!("{w}.jsonl.gz")), None).unwrap_or_else(|e| panic!("{e:#}")))
        .collect()
}

/// The points of a grid run on every core (cargo runs the test binaries
/// one after another).
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn unchecked(w: &Workload, g: &GpuParams) -> Vec<Timing> {
    baseline::validate(w, g).per_kernel.iter().map(|k| k.timing).collect()
}

/// Checked time is never below the unchecked one (to 0.5%), kernel by
/// kernel and for the iteration, over both modes, the three structures and
/// MLBs of 0, 1 and 8 entries.
#[test]
fn checking_never_makes_a_kernel_faster() {
    let g = GpuParams::default();
    for w in &workloads() {
        let u = unchecked(w, &g);
        for (entries, structure, mode) in [
            (8, Structure::Bst, Mode::Compiler),
            (0, Structure::List, Mode::Hwonly),
            (1, Structure::Sol, Mode::Compiler),
            (8, Structure::Sol, Mode::Hwonly),
        ] {
            let c = CheckParams { entries, structure, mode, ..Default::default() };
            let p = run_point(w, &g, &u, &c);
            assert!(p.slowdown >= 0.995, "{} {c:?}: slowdown {}", w.name, p.slowdown);
            assert_eq!(
                p.kernels_faster_checked, 0,
                "{} {c:?}: {} kernels faster checked, least ratio {}",
                w.name, p.kernels_faster_checked, p.fastest_kernel_ratio
            );
        }
    }
}

/// More walkers never slow the run down (to 0.5%): BST at 1 and 8 MLB
/// entries. Over a list this does not hold everywhere, and not as noise:
/// with fewer walkers more misses merge onto a walk that waits, with more
/// the walk has ended and they walk again, and a list's walks are long
/// (eval/README.md sections 6 and 8 give the points and walk counts).
#[test]
fn slowdown_does_not_grow_with_walkers() {
    let (ws, g) = (workloads(), GpuParams::default());
    let grid = Grid { entries: vec![1, 8], structures: vec![Structure::Bst], modes: vec![Mode::Compiler], walkers: vec![1, 2, 4, 8], check: CheckParams::default() };
    let points = sweep::run(&ws, &g, &grid, threads(), &|_, _| {}).points;
    // Grid order: per workload and entry count, walkers ascending.
    for run in points.chunks(grid.walkers.len()) {
        for pair in run.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert_eq!((&a.workload, a.entries), (&b.workload, b.entries));
            assert!(b.slowdown <= a.slowdown * 1.005, "{} bst/{}: {} walkers: slowdown {} > {} with {}", b.workload, b.entries, b.walkers, b.slowdown, a.slowdown, a.walkers);
        }
    }
}

/// A larger MLB never slows the run down (to 0.5%): every structure,
/// compiler mode, 4 walkers, from no MLB to 32 entries.
#[test]
fn slowdown_does_not_grow_with_mlb_entries() {
    let (ws, g) = (workloads(), GpuParams::default());
    let structures = vec![Structure::List, Structure::Bst, Structure::Sol];
    let grid = Grid { entries: vec![0, 1, 2, 4, 8, 32], structures: structures.clone(), modes: vec![Mode::Compiler], walkers: vec![4], check: CheckParams::default() };
    let points = sweep::run(&ws, &g, &grid, threads(), &|_, _| {}).points;
    // Grid order: workload, entries, structure.
    for w in &ws {
        for &structure in &structures {
            let run: Vec<_> = points.iter().filter(|p| p.workload == w.name && p.structure == structure).collect();
            assert_eq!(run.len(), grid.entries.len());
            for pair in run.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                assert!(b.entries > a.entries);
                assert!(b.slowdown <= a.slowdown * 1.005, "{} {structure:?}: {} entries: slowdown {} > {} with {}", w.name, b.entries, b.slowdown, a.slowdown, a.entries);
            }
        }
    }
}

#[test]
fn with_free_metadata_and_hits_the_cost_is_the_added_instructions() {
    // Free memory (every latency 0) and one allocation that a 32-entry MLB
    // keeps after its first miss: what is left of checking is the issue
    // slot of each MEMCHECK.G. 64 warps keep all 4 schedulers busy every
    // cycle, so time is instructions / 4 and the slowdown is exactly
    // (own + added) / own instructions, computed here from the mix.
    let g = GpuParams {
        l1_latency: 0.0,
        l2_latency: 0.0,
        dram_latency: 0.0,
        shared_latency: 0.0,
        launch_ns: 0.0,
        cta_launch_cycles: 0.0,
        issue_interval: 1.0,
        use_distance: 1,
        ..GpuParams::default()
    };
    let (f_load, f_store) = (0.10, 0.05);
    let shape = Shape {
        ctas_on_sm: 64,
        resident: 8,
        warps_per_cta: 8,
        total_warps: 64.0 * 8.0,
        insts_per_warp: 20_000.0,
        f_load,
        f_store,
        f_tma: 0.0,
        f_shared: 0.0,
        l1_hit: 1.0,
        l2_hit: 1.0,
        footprint_bytes: 0.0,
    };
    let plain = sm_model::simulate(&shape, &g);
    let op = eval::workload::Operator {
        op: "k".into(),
        line: 1,
        touches: vec![eval::workload::Touch { id: 0, block_base: 1 << 20, block_size: 1 << 20, offset: 0, length: 1 << 20, rw: sim::trace::Rw::RW }],
        live: vec![(0, 1 << 20, 1 << 20)],
        freed_before: vec![],
    };
    let c = CheckParams { entries: 32, hit_latency: 0.0, ..Default::default() };
    let mut mlu = MluModel::new(c, g.clone(), 132);
    mlu.start_operator(&op);
    let checked = sm_model::simulate_checked(&shape, &g, &mut mlu, &plain).cycles;
    let plain = plain.cycles;
    let expected = 1.0 + f_load + f_store;
    assert!((plain - 64.0 * 8.0 * 20_000.0 / 4.0).abs() / plain < 0.005, "unchecked is issue-bound: {plain}");
    assert!((checked / plain - expected).abs() < 0.005 * expected, "slowdown {} against {expected}", checked / plain);
}
