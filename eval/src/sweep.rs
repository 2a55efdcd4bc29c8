//! `mlugen sweep`: every workload x MLB entries x structure x mode x walkers
//! through the SM model, checked against unchecked.
//!
//! Per workload the unchecked run is simulated once ([`crate::baseline`]);
//! each point runs the checked model over the same kernels in launch order
//! with one MLU whose MLB and metadata caches carry over from kernel to
//! kernel (frees INVALIDATE between operators). Iteration time is the
//! iteration's kernels plus its measured copy-engine time (memset/memcpy,
//! the same in both runs).
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use sim::config::{Mode, Structure};

use crate::baseline::{self, Baseline};
use crate::mlu_model::{CheckParams, MluCounters, MluModel};
use crate::sm_model::{self, GpuParams, Timing};
use crate::workload::Workload;

/// One point's result (an element of `points` in the JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub workload: String,
    pub entries: usize,
    pub structure: Structure,
    pub mode: Mode,
    pub walkers: usize,
    /// Locations from the host, no LOADMETA ([`CheckParams::host_locations`]).
    #[serde(default)]
    pub host_locations: bool,
    /// Checked / unchecked iteration time.
    pub slowdown: f64,
    pub mlb_hit_rate: f64,
    /// MLB misses per simulated SM per kernel (counted in the simulated
    /// samples, not scaled up).
    pub misses_per_sm_kernel: f64,
    /// Of the metadata node reads: the share that hit the L1, and of the
    /// rest, the share that hit the L2.
    pub meta_l1_hit_rate: f64,
    pub meta_l2_hit_rate: f64,
    pub unchecked_ms: f64,
    pub checked_ms: f64,
    /// Kernels whose checked time is below their unchecked time by more than
    /// 0.5% (the model's noise; 0 expected).
    pub kernels_faster_checked: usize,
    /// The least checked / unchecked time of any kernel.
    pub fastest_kernel_ratio: f64,
    pub counters: MluCounters,
}

/// The whole sweep (the JSON document).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub gpu: GpuParams,
    pub baseline: Vec<Baseline>,
    pub points: Vec<Point>,
}

/// The axes of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub entries: Vec<usize>,
    pub structures: Vec<Structure>,
    pub modes: Vec<Mode>,
    pub walkers: Vec<usize>,
    /// Everything but the axes (entries, structure, mode, walkers are set
    /// per point).
    pub check: CheckParams,
}

/// One checked run of a workload; `unchecked` is its kernels' unchecked
/// simulations ([`baseline::validate`]), in launch order.
pub fn run_point(w: &Workload, g: &GpuParams, unchecked: &[Timing], c: &CheckParams) -> Point {
    let mut mlu = MluModel::new(c.clone(), g.clone(), w.sm_count);
    let mut checked = 0.0;
    let mut faster = 0;
    let mut fastest = f64::INFINITY;
    let mut op = usize::MAX;
    for (k, ut) in w.kernels.iter().zip(unchecked) {
        if k.operator != op {
            op = k.operator;
            mlu.start_operator(&w.operators[op]);
        }
        let t = sm_model::simulate_checked(&baseline::shape(k, w, g), g, &mut mlu, ut).ns;
        let u = ut.ns;
        fastest = fastest.min(t / u);
        if t < u * 0.995 {
            faster += 1;
        }
        checked += t;
    }
    let unchecked: f64 = unchecked.iter().map(|u| u.ns).sum();
    let copy = w.copy_ns as f64;
    let n = &mlu.counters;
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    Point {
        workload: w.name.clone(),
        entries: c.entries,
        structure: c.structure,
        mode: c.mode,
        walkers: c.walkers,
        host_locations: c.host_locations,
        slowdown: (checked + copy) / (unchecked + copy),
        mlb_hit_rate: ratio(n.hits, n.lookups),
        misses_per_sm_kernel: ratio(n.misses, w.kernels.len() as u64),
        meta_l1_hit_rate: ratio(n.meta_l1_hits, n.nodes),
        meta_l2_hit_rate: ratio(n.meta_l2_hits, n.nodes - n.meta_l1_hits),
        unchecked_ms: (unchecked + copy) / 1e6,
        checked_ms: (checked + copy) / 1e6,
        kernels_faster_checked: faster,
        fastest_kernel_ratio: fastest,
        counters: *n,
    }
}

/// Runs the grid over the workloads on `threads` threads; `progress(done,
/// total)` after each point. Points come out in grid order (workload,
/// entries, structure, mode, walkers).
pub fn run(ws: &[Workload], g: &GpuParams, grid: &Grid, threads: usize, progress: &(dyn Fn(usize, usize) + Sync)) -> Sweep {
    let baselines: Vec<Baseline> = ws.iter().map(|w| baseline::validate(w, g)).collect();
    run_with_baselines(ws, g, grid, baselines, threads, progress)
}

/// [`run`] with the workloads' baselines already validated (with the same
/// `g`), as a second grid over the same workloads has them from the first:
/// their unchecked simulations are what every checked point pairs with.
pub fn run_with_baselines(
    ws: &[Workload],
    g: &GpuParams,
    grid: &Grid,
    baselines: Vec<Baseline>,
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Sweep {
    let mut jobs = Vec::new();
    for (wi, _) in ws.iter().enumerate() {
        for &entries in &grid.entries {
            for &structure in &grid.structures {
                for &mode in &grid.modes {
                    for &walkers in &grid.walkers {
                        jobs.push((wi, CheckParams { entries, structure, mode, walkers, ..grid.check.clone() }));
                    }
                }
            }
        }
    }
    let done = AtomicUsize::new(0);
    let points = sim::parallel::map_on(threads, &jobs, |(wi, c)| {
        let unchecked: Vec<Timing> = baselines[*wi].per_kernel.iter().map(|k| k.timing).collect();
        let p = run_point(&ws[*wi], g, &unchecked, c);
        progress(done.fetch_add(1, Ordering::Relaxed) + 1, jobs.len());
        p
    });
    Sweep { gpu: g.clone(), baseline: baselines, points }
}

/// The points as CSV (one header line, one line per point).
pub fn to_csv(points: &[Point]) -> String {
    let mut s = String::from(
        "workload,entries,structure,mode,walkers,slowdown,mlb_hit_rate,misses_per_sm_kernel,meta_l1_hit_rate,meta_l2_hit_rate,unchecked_ms,checked_ms\n",
    );
    for p in points {
        s.push_str(&format!(
            "{},{},{},{},{},{:.6},{:.6},{:.3},{:.6},{:.6},{:.6},{:.6}\n",
            p.workload,
            p.entries,
            p.structure.name(),
            p.mode.name(),
            p.walkers,
            p.slowdown,
            p.mlb_hit_rate,
            p.misses_per_sm_kernel,
            p.meta_l1_hit_rate,
            p.meta_l2_hit_rate,
            p.unchecked_ms,
            p.checked_ms
        ));
    }
    s
}
