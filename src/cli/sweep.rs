//! `mlugen sweep --trace FILE...`: the evaluation on what the H200 ran.
//!
//! Each trace (version 2) is joined with its Nsight Compute counters
//! (`--ncu-dir`, default `<trace dir>/ncu/`), its iteration-2 kernels are
//! timed by the calibrated SM model unchecked (the baseline, validated
//! against the measured durations) and then checked, for every point of
//! MLB entries x structure x mode x walkers (`eval::sweep`). Prints the
//! validation and a table on stdout, progress on stderr; `--json`, `--csv`
//! write the results, `--svg DIR` one plot per workload.
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use sim::config::{Mode, Replacement, Structure};

#[derive(clap::Args)]
pub struct Args {
    /// Trace files (`*.jsonl.gz`, gpuarmor-trace version 2).
    #[arg(long = "trace", required = true, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// Directory of the Nsight Compute files (`<workload>.csv.gz`); default
    /// `<trace dir>/ncu`.
    #[arg(long = "ncu-dir")]
    pub ncu_dir: Option<PathBuf>,
    /// MLB sizes (0 = no MLB; else 1, 2, 4, 8, 16, 32).
    #[arg(long, value_delimiter = ',', default_value = "0,1,2,4,8,16,32")]
    pub entries: Vec<usize>,
    /// Metadata structures: list, bst, sol.
    #[arg(long, value_delimiter = ',', default_value = "list,bst,sol")]
    pub structure: Vec<Structure>,
    /// Modes: compiler, hwonly.
    #[arg(long, value_delimiter = ',', default_value = "compiler,hwonly")]
    pub mode: Vec<Mode>,
    /// Walkers K (1, 2, 4, 8).
    #[arg(long, value_delimiter = ',', default_value = "4")]
    pub walkers: Vec<usize>,
    /// MLB replacement policy: plru or round_robin.
    #[arg(long, default_value = "plru")]
    pub replacement: Replacement,
    /// Locations from the host: the runtime passes each pointer argument's
    /// metadata location at launch, kernels run no LOADMETA, and a
    /// MEMCHECK.G miss fetches the one node (compiler mode; eval/README.md
    /// section 9).
    #[arg(long)]
    pub host_locations: bool,
    /// The SM model's global parameters as JSON (every field of
    /// `eval::sm_model::GpuParams`); default: the committed calibration.
    #[arg(long = "gpu-params")]
    pub gpu_params: Option<PathBuf>,
    /// Worker threads (1..=256; default: available cores).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub threads: Option<usize>,
    /// Write the baseline and all points as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the points as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Directory for one SVG plot per workload (`DIR/<workload>.svg`).
    #[arg(long, value_parser = svg_dir)]
    pub svg: Option<PathBuf>,
    /// Also run the walker sweep (1, 2, 4, 8 walkers; bst and list at 1 and
    /// 8 entries, compiler mode) and write the evaluation report (Markdown)
    /// here, with the baseline's plot in `<its dir>/svg/baseline.svg`
    /// (`eval/run.sh` writes eval/README.md this way).
    #[arg(long)]
    pub report: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let (structures, modes) = (a.structure.clone(), a.mode.clone());
    // Every point is a configuration the golden model accepts (one check,
    // the config type's).
    for &entries in &a.entries {
        for &walkers in &a.walkers {
            let unit = sim::config::UnitShape { walkers, ..Default::default() };
            let cfg = sim::config::MluConfig { entries, unit: Some(unit), ..Default::default() };
            if let Err(e) = cfg.validate(sim::config::Target::Model) {
                let flag = if e.field.as_deref() == Some("entries") { format!("--entries {entries}") } else { format!("--walkers {walkers}") };
                anyhow::bail!("{flag}: {}", e.message);
            }
        }
    }
    if a.host_locations && a.report.is_some() {
        anyhow::bail!("--host-locations with --report: the report sets host locations against the LOADMETAs itself (section 9); run it without --host-locations");
    }
    let replacement = a.replacement;
    let gpu: eval::sm_model::GpuParams = match &a.gpu_params {
        None => Default::default(),
        Some(f) => {
            let text = std::fs::read_to_string(f).with_context(|| format!("--gpu-params {}", f.display()))?;
            serde_json::from_str(&text).with_context(|| format!("--gpu-params {}", f.display()))?
        }
    };
    gpu.validate().map_err(|e| anyhow::anyhow!("--gpu-params: {e}"))?;
    let load = super::progress::Progress::stage("mlugen sweep: reading the traces and counters");
    let ws = a
        .traces
        .iter()
        .map(|t| eval::workload::load(t, a.ncu_dir.as_deref()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    load.finish("read");
    let grid = eval::sweep::Grid {
        entries: a.entries.clone(),
        structures,
        modes,
        walkers: a.walkers.clone(),
        check: eval::mlu_model::CheckParams { replacement, host_locations: a.host_locations, ..Default::default() },
    };
    let threads = a.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let total = ws.len() * grid.entries.len() * grid.structures.len() * grid.modes.len() * grid.walkers.len();
    let bar = super::progress::Progress::new("mlugen sweep", "points", total as u64);
    let r = eval::sweep::run(&ws, &gpu, &grid, threads, &|done, _| bar.set(done as u64));
    bar.finish(&format!("{} points", r.points.len()));
    let grid_secs = started.elapsed().as_secs_f64();
    let mut out = super::out::stdout();
    writeln!(out, "baseline (unchecked model against the measured kernel durations):")?;
    writeln!(out, "workload          kernels  median|err|  p90|err|  iteration  simulated_ms  measured_ms")?;
    for b in &r.baseline {
        writeln!(
            out,
            "{:<17} {:>7} {:>11.1}% {:>8.1}% {:>+9.1}% {:>13.3} {:>12.3}",
            b.workload,
            b.kernels,
            100.0 * b.median_abs_error,
            100.0 * b.p90_abs_error,
            100.0 * b.iteration_error,
            b.simulated_kernel_ms,
            b.measured_kernel_ms
        )?;
    }
    writeln!(out, "workload          entries structure mode     walkers  slowdown  mlb_hits  misses/SM-kernel  meta_L1  meta_L2")?;
    for p in &r.points {
        writeln!(
            out,
            "{:<17} {:>7} {:<9} {:<8} {:>7} {:>9.4} {:>8.2}% {:>17.1} {:>7.1}% {:>7.1}%",
            p.workload,
            p.entries,
            p.structure.name(),
            p.mode.name(),
            p.walkers,
            p.slowdown,
            100.0 * p.mlb_hit_rate,
            p.misses_per_sm_kernel,
            100.0 * p.meta_l1_hit_rate,
            100.0 * p.meta_l2_hit_rate
        )?;
    }
    drop(out);
    if let Some(f) = &a.json {
        std::fs::write(f, serde_json::to_string_pretty(&r)? + "\n").with_context(|| format!("--json {}", f.display()))?;
    }
    if let Some(f) = &a.csv {
        std::fs::write(f, eval::sweep::to_csv(&r.points)).with_context(|| format!("--csv {}", f.display()))?;
    }
    if let Some(d) = &a.svg {
        std::fs::create_dir_all(d).with_context(|| format!("--svg {}", d.display()))?;
        // One plot per workload, of the first walker count swept.
        let k = grid.walkers[0];
        let caption = eval::plot::caption(&gpu, &grid.check, k);
        for w in &ws {
            let f = d.join(format!("{}.svg", w.name));
            std::fs::write(&f, eval::plot::workload_svg(&w.name, &r.points, k, &caption)?)
                .with_context(|| format!("--svg {}", f.display()))?;
        }
    }
    if let Some(f) = &a.report {
        // (Refused before any point runs; see the top of `run`.)
        let timing = a.traces.first().and_then(|t| t.parent()).map(|d| d.join("h200_timing.json"));
        let timing: Option<serde_json::Value> =
            timing.and_then(|t| std::fs::read_to_string(t).ok()).and_then(|s| serde_json::from_str(&s).ok());
        let command = format!("mlugen sweep --trace {} --report {}", a.traces.iter().map(|t| t.display().to_string()).collect::<Vec<_>>().join(" "), f.display());
        let bars = std::sync::Mutex::new(Vec::<(String, super::progress::Progress)>::new());
        let progress = |stage: &str, done: usize, total: usize| {
            let mut bars = bars.lock().unwrap_or_else(|e| e.into_inner());
            if !bars.iter().any(|(s, _)| s == stage) {
                bars.push((stage.to_string(), super::progress::Progress::new(&format!("mlugen sweep: {stage}"), "points", total as u64)));
            }
            if let Some((_, b)) = bars.iter().find(|(s, _)| s == stage) {
                b.set(done as u64);
            }
        };
        eval::report::write(f, &r, &ws, &gpu, &grid.check, threads, timing.as_ref(), &command, &progress)?;
        for (_, b) in bars.into_inner().unwrap_or_else(|e| e.into_inner()) {
            b.finish("done");
        }
    }
    let total = started.elapsed().as_secs_f64();
    super::progress::note(&format!(
        "mlugen sweep: {} points over {} workloads in {grid_secs:.1} s ({threads} threads){}",
        r.points.len(),
        ws.len(),
        if a.report.is_some() { format!("; {total:.1} s with the report's walker and host-location sweeps") } else { String::new() }
    ));
    Ok(())
}

/// `--svg DIR`: a directory; a path ending in `.svg` is a mistake.
fn svg_dir(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("svg")) {
        return Err(format!("--svg takes a directory (it writes <workload>.svg per trace in it), not a file: {s}"));
    }
    Ok(p)
}
