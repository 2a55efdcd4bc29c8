//! The trace-driven evaluation (`mlugen sweep`): every trace x MLB size x
//! structure x mode through the SM pipeline model ([`crate::pipeline`]),
//! against the same trace's unchecked baseline. Points run in parallel on
//! `threads` std threads; each point replays its trace from the start with
//! a fresh runtime and MLU.
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::config::{Mode, MluConfig, Replacement, Structure};
use crate::expand::{self, ExpandConfig, Workload};
use crate::pipeline::{run_workload_with, MluTiming, PipelineConfig, WorkloadRun};
pub use crate::shard::Shard;

/// A run: trace index and (entries, structure, mode), None = unchecked.
type Job = (usize, Option<(usize, Structure, Mode)>);

/// What to sweep.
#[derive(Clone, Debug)]
pub struct SweepConfig {
    pub traces: Vec<PathBuf>,
    pub entries: Vec<usize>,
    pub structures: Vec<Structure>,
    pub modes: Vec<Mode>,
    pub replacement: Replacement,
    pub expand: ExpandConfig,
    pub pipeline: PipelineConfig,
    /// MLU operation latencies: the model's ideal rule (default, as the
    /// committed evaluation) or the MLU as an SM unit, cycle by cycle (what
    /// the RTL SM pipeline matches cycle for cycle; see `MluTiming`).
    pub timing: MluTiming,
    /// Tag PRNG seed of the runtime.
    pub seed: u64,
    pub threads: usize,
    /// Run only this shard of the points, in the canonical order (trace,
    /// structure, mode, entries, as given); [`merge`] joins the shards.
    pub shard: Option<Shard>,
}

/// The grid a sweep covers (in the order of the report), echoed into the
/// output so that shards can be checked and merged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    pub traces: Vec<String>,
    pub entries: Vec<usize>,
    pub structures: Vec<String>,
    pub modes: Vec<String>,
}

impl SweepConfig {
    /// The full sweep of the evaluation over `traces`.
    pub fn full(traces: Vec<PathBuf>) -> SweepConfig {
        SweepConfig {
            traces,
            entries: vec![0, 1, 2, 4, 8, 16, 32],
            structures: vec![Structure::List, Structure::Bst, Structure::Sol],
            modes: vec![Mode::Compiler, Mode::Hwonly],
            replacement: Replacement::Plru,
            expand: ExpandConfig::default(),
            pipeline: PipelineConfig::default(),
            timing: MluTiming::Ideal,
            seed: 1,
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            shard: None,
        }
    }
}

/// One point's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub workload: String,
    pub entries: usize,
    pub structure: String,
    pub mode: String,
    pub cycles_checked: u64,
    pub cycles_unchecked: u64,
    /// cycles_checked / cycles_unchecked.
    pub slowdown: f64,
    /// MLB searches (range + location) and hits, the model's counters.
    pub mlb_lookups: u64,
    pub mlb_hits: u64,
    pub hit_rate: f64,
    pub range_lookups: u64,
    pub range_hits: u64,
    pub loc_lookups: u64,
    pub loc_hits: u64,
    pub meta_reads: u64,
    pub steps: u64,
    pub loadmeta: u64,
    pub memcheck: u64,
    pub faults: u64,
    /// Share of the extra cycles spent in operators whose allocation working
    /// set exceeds 8 blocks.
    pub overhead_share_ws_gt8: f64,
}

/// Per-trace facts for the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceInfo {
    pub file: String,
    pub workload: String,
    pub kernels: u64,
    /// Warp accesses simulated (after sampling) and in the full ranges.
    pub sampled_steps: u64,
    pub full_steps: u64,
    /// Per-operator working set -> operators.
    pub working_set_histogram: BTreeMap<usize, u64>,
    /// Operators with a working set > 8 and their names -> count.
    pub large_ops: BTreeMap<String, (u64, usize, usize)>,
    pub cycles_unchecked: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    pub params: Params,
    /// The whole sweep's grid; `shard` says which part of it this result is
    /// (None: all of it). Absent in files written before sharding existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<Grid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The traces this result ran (a shard: those with points in it).
    pub traces: Vec<TraceInfo>,
    pub points: Vec<Point>,
    /// Wall time (merged: the sum over the shards).
    pub seconds: f64,
}

/// The sweep's parameters, echoed into the outputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub step: u64,
    pub alu: u32,
    pub warps: usize,
    pub cap: u64,
    pub mem_latency: u64,
    pub meta_latency: u64,
    pub sms: u64,
    pub max_outstanding: usize,
    pub replacement: String,
    pub host_locations: bool,
    pub hit_under_miss: bool,
    pub mlu_timing: String,
    pub seed: u64,
    pub threads: usize,
}

fn trace_info(wl: &Workload, base: &WorkloadRun) -> TraceInfo {
    let mut hist = BTreeMap::new();
    let mut large: BTreeMap<String, (u64, usize, usize)> = BTreeMap::new();
    let (mut sampled, mut full) = (0, 0);
    for k in wl.kernels() {
        *hist.entry(k.working_set).or_insert(0) += 1;
        full += k.full_steps;
        sampled += k
            .warps
            .iter()
            .flatten()
            .filter(|i| matches!(i, expand::Instr::MemCheck { .. }))
            .count() as u64;
        if k.working_set > 8 {
            let e = large.entry(k.op.clone()).or_insert((0, usize::MAX, 0));
            e.0 += 1;
            e.1 = e.1.min(k.working_set);
            e.2 = e.2.max(k.working_set);
        }
    }
    TraceInfo {
        file: wl.file.clone(),
        workload: wl.workload.clone(),
        kernels: wl.kernels().count() as u64,
        sampled_steps: sampled,
        full_steps: full,
        working_set_histogram: hist,
        large_ops: large,
        cycles_unchecked: base.cycles,
    }
}

fn point(wl: &Workload, entries: usize, s: Structure, m: Mode, run: &WorkloadRun, base: &WorkloadRun) -> Point {
    let c = &run.counters;
    let lookups = c.range_lookups + c.loc_lookups;
    let hits = c.range_hits + c.loc_hits;
    let (mut extra, mut extra_large) = (0i128, 0i128);
    for (k, (a, b)) in wl.kernels().zip(run.kernel_cycles.iter().zip(&base.kernel_cycles)) {
        let d = *a as i128 - *b as i128;
        extra += d;
        if k.working_set > 8 {
            extra_large += d;
        }
    }
    Point {
        workload: wl.workload.clone(),
        entries,
        structure: s.name().to_string(),
        mode: m.name().to_string(),
        cycles_checked: run.cycles,
        cycles_unchecked: base.cycles,
        slowdown: run.cycles as f64 / base.cycles.max(1) as f64,
        mlb_lookups: lookups,
        mlb_hits: hits,
        hit_rate: if lookups == 0 { 0.0 } else { hits as f64 / lookups as f64 },
        range_lookups: c.range_lookups,
        range_hits: c.range_hits,
        loc_lookups: c.loc_lookups,
        loc_hits: c.loc_hits,
        meta_reads: c.meta_reads,
        steps: c.steps,
        loadmeta: c.loadmeta,
        memcheck: c.memcheck_g,
        faults: c.faults,
        overhead_share_ws_gt8: if extra > 0 { extra_large as f64 / extra as f64 } else { 0.0 },
    }
}

/// Runs the sweep; `progress(done, total)` is called after every finished run
/// (from worker threads). Errors name the trace file and line.
pub fn run(cfg: &SweepConfig, progress: &(dyn Fn(usize, usize) + Sync)) -> anyhow::Result<SweepResult> {
    let t0 = Instant::now();
    cfg.pipeline.validate().map_err(|m| anyhow::anyhow!("{m}"))?;
    if cfg.timing == MluTiming::Unit && (cfg.pipeline.hit_under_miss || cfg.pipeline.host_locations) {
        anyhow::bail!(
            "mlu timing unit (the MLU as an SM unit) cannot be combined with hit_under_miss or host_locations"
        );
    }
    for &e in &cfg.entries {
        MluConfig { entries: e, ..MluConfig::default() }
            .validate(crate::config::Target::Model)
            .map_err(|err| anyhow::anyhow!("entries {e}: {err}"))?;
    }
    if cfg.entries.is_empty() || cfg.structures.is_empty() || cfg.modes.is_empty() || cfg.traces.is_empty() {
        anyhow::bail!("the sweep needs at least one trace, entry count, structure and mode");
    }
    // The canonical point order (the report's), then this shard's part of it.
    let mut pts = Vec::new();
    for t in 0..cfg.traces.len() {
        for &s in &cfg.structures {
            for &m in &cfg.modes {
                for &e in &cfg.entries {
                    pts.push((t, Some((e, s, m))));
                }
            }
        }
    }
    if let Some(sh) = cfg.shard {
        pts = pts.into_iter().enumerate().filter(|(k, _)| sh.holds(*k as u64)).map(|(_, j)| j).collect();
    }
    // Only the traces this shard has points of are read.
    let used: Vec<usize> = (0..cfg.traces.len()).filter(|t| pts.iter().any(|j| j.0 == *t)).collect();
    let mut wls = Vec::new();
    for &t in &used {
        wls.push(Arc::new(expand::load(&cfg.traces[t], &cfg.expand)?));
    }
    for j in &mut pts {
        j.0 = used.iter().position(|&t| t == j.0).expect("a used trace");
    }
    // Jobs: the unchecked baseline of each trace, then every checked point;
    // the slow ones (list, small MLBs) first so the threads finish together.
    let mut jobs: Vec<Job> = (0..wls.len()).map(|t| (t, None)).collect();
    let cost = |j: &Job| match j.1 {
        Some((e, Structure::List, _)) => 100 - e.min(32) as i64,
        Some((e, Structure::Bst, _)) => 50 - e.min(32) as i64,
        _ => 0,
    };
    pts.sort_by_key(|j| -cost(j));
    jobs.extend(pts);
    let total = jobs.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<anyhow::Result<WorkloadRun>>>> = Mutex::new((0..total).map(|_| None).collect());
    std::thread::scope(|sc| {
        for _ in 0..cfg.threads.max(1) {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let (t, spec) = jobs[i];
                let mlu = spec.map(|(entries, structure, mode)| MluConfig {
                    entries,
                    structure,
                    mode,
                    replacement: cfg.replacement,
                    ..MluConfig::default()
                });
                let r = run_workload_with(&wls[t], &cfg.pipeline, cfg.timing, mlu.as_ref(), cfg.seed).map_err(anyhow::Error::from);
                results.lock().unwrap()[i] = Some(r);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            });
        }
    });
    let mut runs: Vec<WorkloadRun> = Vec::with_capacity(total);
    for r in results.into_inner().unwrap() {
        runs.push(r.expect("every job ran")?);
    }
    let results = runs;
    let base: Vec<&WorkloadRun> = (0..wls.len()).map(|t| &results[t]).collect();
    // Report order: trace, structure, mode, entries (as given).
    let mut keyed = Vec::new();
    for (i, (t, spec)) in jobs.iter().enumerate().skip(wls.len()) {
        let (e, s, m) = spec.unwrap();
        let key = (
            *t,
            cfg.structures.iter().position(|&x| x == s),
            cfg.modes.iter().position(|&x| x == m),
            cfg.entries.iter().position(|&x| x == e),
        );
        keyed.push((key, point(&wls[*t], e, s, m, &results[i], base[*t])));
    }
    keyed.sort_by_key(|(k, _)| *k);
    let points = keyed.into_iter().map(|(_, p)| p).collect();
    let traces = wls.iter().zip(&base).map(|(w, b)| trace_info(w, b)).collect();
    Ok(SweepResult {
        params: Params {
            step: cfg.expand.step,
            alu: cfg.expand.alu,
            warps: cfg.expand.warps,
            cap: cfg.expand.cap,
            mem_latency: cfg.pipeline.mem_latency,
            meta_latency: cfg.pipeline.meta_latency,
            sms: cfg.expand.sms,
            max_outstanding: cfg.pipeline.max_outstanding,
            replacement: cfg.replacement.name().to_string(),
            host_locations: cfg.pipeline.host_locations,
            hit_under_miss: cfg.pipeline.hit_under_miss,
            mlu_timing: cfg.timing.name().to_string(),
            seed: cfg.seed,
            threads: cfg.threads,
        },
        grid: Some(Grid {
            traces: cfg.traces.iter().map(|t| t.display().to_string()).collect(),
            entries: cfg.entries.clone(),
            structures: cfg.structures.iter().map(|s| s.name().to_string()).collect(),
            modes: cfg.modes.iter().map(|m| m.name().to_string()).collect(),
        }),
        shard: cfg.shard,
        traces,
        points,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Join the results of the shards 0..N of one sweep (any order) into the
/// result the unsharded sweep gives: the same traces and points in the same
/// order. Refuses parts of different sweeps (parameters or grid), a missing
/// or repeated shard, and results that are not shards.
pub fn merge(mut parts: Vec<(String, SweepResult)>) -> Result<SweepResult, String> {
    // The first part's name, parameters and grid (not a copy of its points).
    let (first_name, first) = parts.first().ok_or("no sweep results to merge")?;
    let (first_name, params) = (first_name.clone(), first.params.clone());
    let grid = first.grid.clone().ok_or_else(|| format!("{first_name}: no `grid`: not the output of `mlugen sweep --shard`"))?;
    // Thread counts may differ between machines; nothing else may.
    let same = |p: &Params| Params { threads: 0, ..p.clone() };
    for (name, r) in &parts {
        if r.grid.as_ref() != Some(&grid) {
            return Err(format!("{name}: a different sweep grid (traces, entries, structures, modes) than {first_name}"));
        }
        if same(&r.params) != same(&params) {
            return Err(format!("{name}: different sweep parameters than {first_name}"));
        }
    }
    Shard::check_cover(parts.iter().map(|(n, r)| (n.as_str(), r.shard)))?;
    // Traces in grid order (each shard that read a trace computed the same facts).
    let mut traces: Vec<TraceInfo> = Vec::new();
    for f in &grid.traces {
        let mut found: Option<&TraceInfo> = None;
        for (name, r) in &parts {
            for t in r.traces.iter().filter(|t| &t.file == f) {
                match found {
                    Some(prev) if prev != t => return Err(format!("{name}: facts of trace {f} differ from another shard's")),
                    _ => found = Some(t),
                }
            }
        }
        if let Some(t) = found {
            if traces.iter().any(|x| x.workload == t.workload) {
                return Err(format!("two traces of workload {}: points cannot be told apart", t.workload));
            }
            traces.push(t.clone());
        }
    }
    let pos = |xs: &[String], x: &str| xs.iter().position(|y| y == x);
    let key = |p: &Point| {
        (
            traces.iter().position(|t| t.workload == p.workload),
            pos(&grid.structures, &p.structure),
            pos(&grid.modes, &p.mode),
            grid.entries.iter().position(|&e| e == p.entries),
        )
    };
    let mut points: Vec<Point> = parts.iter_mut().flat_map(|(_, r)| std::mem::take(&mut r.points)).collect();
    points.sort_by_key(|p| key(p));
    let want = grid.traces.len() * grid.structures.len() * grid.modes.len() * grid.entries.len();
    if points.len() != want {
        return Err(format!("the shards hold {} points; the grid has {want}", points.len()));
    }
    Ok(SweepResult {
        params,
        grid: Some(grid),
        shard: None,
        traces,
        points,
        seconds: parts.iter().map(|(_, r)| r.seconds).sum(),
    })
}

/// The CSV columns of [`to_csv`].
pub const CSV_HEADER: &str = "workload,entries,structure,mode,cycles_checked,cycles_unchecked,slowdown,hit_rate,mlb_lookups,mlb_hits,meta_reads,steps,loadmeta,memcheck,faults,overhead_share_ws_gt8";

/// One line per point.
pub fn to_csv(points: &[Point]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for p in points {
        s.push_str(&format!(
            "{},{},{},{},{},{},{:.6},{:.6},{},{},{},{},{},{},{},{:.4}\n",
            p.workload,
            p.entries,
            p.structure,
            p.mode,
            p.cycles_checked,
            p.cycles_unchecked,
            p.slowdown,
            p.hit_rate,
            p.mlb_lookups,
            p.mlb_hits,
            p.meta_reads,
            p.steps,
            p.loadmeta,
            p.memcheck,
            p.faults,
            p.overhead_share_ws_gt8
        ));
    }
    s
}
