//! `mlugen sweep --trace FILE...`: the trace-driven evaluation:
//! every trace x MLB size x structure x mode through the SM pipeline model,
//! against the unchecked baseline. Prints a table on stdout, progress and
//! the elapsed time on stderr; `--json`, `--csv` write the points, `--svg
//! DIR` one plot per trace (`DIR/<workload>.svg`). `--shard I/N` runs one
//! part of the points; `mlugen merge` joins the parts' JSON.
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use sim::config::{Mode, Replacement, Structure};
use sim::sweep::{self, SweepConfig};

#[derive(clap::Args)]
pub struct Args {
    /// Trace files (`*.jsonl.gz`, gpuarmor-trace version 1).
    #[arg(long = "trace", required = true, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// MLB sizes (0 = no MLB).
    #[arg(long, value_delimiter = ',', default_value = "0,1,2,4,8,16,32")]
    pub entries: Vec<usize>,
    /// Metadata structures: list, bst, sol.
    #[arg(long, value_delimiter = ',', default_value = "list,bst,sol")]
    pub structure: Vec<String>,
    /// Modes: compiler, hwonly.
    #[arg(long, value_delimiter = ',', default_value = "compiler,hwonly")]
    pub mode: Vec<String>,
    /// MLB replacement policy: plru or rr.
    #[arg(long, default_value = "plru")]
    pub replacement: String,
    /// Warps per SM (1..=64, an H200 SM's most resident warps).
    #[arg(long, default_value_t = 32, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub warps: usize,
    /// Memory latency in cycles (data and metadata reads).
    #[arg(long = "mem-latency", default_value_t = 400)]
    pub mem_latency: u64,
    /// Metadata read latency in cycles (default: --mem-latency).
    #[arg(long = "meta-latency")]
    pub meta_latency: Option<u64>,
    /// Data requests in flight at most (1..=4096).
    #[arg(long = "max-outstanding", default_value_t = 64, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub max_outstanding: usize,
    /// Bytes per warp access: 32 or 128.
    #[arg(long, default_value_t = 128)]
    pub step: u64,
    /// ALU instructions after every global access (0..=1000). The run time
    /// grows with --warps x --cap x --alu: one point of resnet50_train takes
    /// 3.6 s at the default 32 warps and cap with --alu 1000, but 100 s at 64
    /// warps, --cap 4096, --alu 300 (list, no MLB, the slowest point).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub alu: u32,
    /// Most warp accesses per argument per kernel (1..=4096; default 8 x warps).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub cap: Option<u64>,
    /// SMs an operator's grid is spread over, the model is one of them (1..=1024).
    #[arg(long, default_value_t = 132, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub sms: u64,
    /// Extension: the runtime passes argument metadata locations at launch
    /// (compiler mode runs no LOADMETA).
    #[arg(long = "host-locations")]
    pub host_locations: bool,
    /// Extension (model only; the RTL that built it, `MluHum`, was retired:
    /// the MLU unit serves hits under misses): MLB hits are answered while
    /// the traverser walks.
    #[arg(long = "hit-under-miss")]
    pub hit_under_miss: bool,
    /// MLU operation latencies: `ideal` (the model's rule: 1 cycle without
    /// memory, 1 + k x L with k reads; the committed evaluation) or `unit`
    /// (the MLU as an SM unit, cycle by cycle: pipelined, K walkers, misses
    /// merged; the timing the RTL SM pipeline matches cycle for cycle,
    /// testbench/tests/sm_pipeline.rs).
    #[arg(long = "mlu-timing", default_value = "ideal")]
    pub mlu_timing: String,
    /// Tag PRNG seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (1..=256; default: available cores).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub threads: Option<usize>,
    /// Run only shard I of N of the points (0 <= I < N): an independent job
    /// whose --json `mlugen merge` joins with the others' (docs/scale-out.md).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Write all points and per-trace facts as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the points as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Directory for one SVG plot per trace (`DIR/<workload>.svg`, created
    /// if missing). A path ending in `.svg` is refused ("--svg takes a
    /// directory"), even with one trace: the file is always named after the
    /// trace's workload.
    #[arg(long, value_parser = svg_dir)]
    pub svg: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let mut cfg = SweepConfig::full(a.traces.clone());
    cfg.entries = a.entries.clone();
    cfg.structures = a
        .structure
        .iter()
        .map(|s| Structure::from_name(s).with_context(|| format!("--structure: unknown structure {s:?} (list, bst, sol)")))
        .collect::<anyhow::Result<_>>()?;
    cfg.modes = a
        .mode
        .iter()
        .map(|s| Mode::from_name(s).with_context(|| format!("--mode: unknown mode {s:?} (compiler, hwonly)")))
        .collect::<anyhow::Result<_>>()?;
    cfg.replacement = Replacement::from_name(&a.replacement)
        .with_context(|| format!("--replacement: unknown policy {:?} (plru, rr)", a.replacement))?;
    cfg.expand.warps = a.warps;
    cfg.expand.step = a.step;
    cfg.expand.alu = a.alu;
    cfg.expand.cap = a.cap.unwrap_or(8 * a.warps as u64);
    cfg.expand.sms = a.sms;
    cfg.pipeline.mem_latency = a.mem_latency;
    cfg.pipeline.meta_latency = a.meta_latency.unwrap_or(a.mem_latency);
    cfg.pipeline.max_outstanding = a.max_outstanding;
    cfg.pipeline.host_locations = a.host_locations;
    cfg.pipeline.hit_under_miss = a.hit_under_miss;
    cfg.timing = sim::pipeline::MluTiming::from_name(&a.mlu_timing)
        .with_context(|| format!("--mlu-timing: unknown timing {:?} (ideal, unit)", a.mlu_timing))?;
    cfg.seed = a.seed;
    if let Some(t) = a.threads {
        cfg.threads = t;
    }
    if let Some(s) = &a.shard {
        cfg.shard = Some(sweep::Shard::parse(s).map_err(|e| anyhow::anyhow!("--{e}"))?);
    }
    if let Err(m) = cfg.expand.validate() {
        bail!("--{m}");
    }
    // Reading and expanding the traces comes first, then the runs; the bar
    // starts with the first finished run (the total is known only then).
    let load = super::progress::Progress::stage("mlugen sweep: reading the traces");
    let bar: std::sync::OnceLock<super::progress::Progress> = std::sync::OnceLock::new();
    let progress = |done: usize, total: usize| {
        bar.get_or_init(|| {
            load.finish("read");
            super::progress::Progress::new("mlugen sweep", "runs", total as u64)
        })
        .set(done as u64);
    };
    let r = sweep::run(&cfg, &progress)?;
    if let Some(b) = bar.get() {
        b.finish(&format!("{} points", r.points.len()));
    }
    for p in &r.points {
        if p.faults != 0 {
            eprintln!(
                "mlugen sweep: warning: {} {} {} {} entries: {} faults on a bug-free trace",
                p.workload, p.structure, p.mode, p.entries, p.faults
            );
        }
    }
    let mut out = super::out::stdout();
    writeln!(out, "workload          entries structure mode      slowdown  hit_rate  meta_reads      steps")?;
    for p in &r.points {
        writeln!(
            out,
            "{:<17} {:>7} {:<9} {:<8} {:>9.4} {:>8.2}% {:>11} {:>10}",
            p.workload,
            p.entries,
            p.structure,
            p.mode,
            p.slowdown,
            100.0 * p.hit_rate,
            p.meta_reads,
            p.steps
        )?;
    }
    drop(out);
    if let Some(f) = &a.json {
        std::fs::write(f, serde_json::to_string_pretty(&r)? + "\n").with_context(|| format!("--json {}", f.display()))?;
    }
    if let Some(f) = &a.csv {
        std::fs::write(f, sweep::to_csv(&r.points)).with_context(|| format!("--csv {}", f.display()))?;
    }
    if let Some(d) = &a.svg {
        std::fs::create_dir_all(d).with_context(|| format!("--svg {}", d.display()))?;
        let caption = sim::plot::caption(&cfg);
        for t in &r.traces {
            let f = d.join(format!("{}.svg", t.workload));
            std::fs::write(&f, sim::plot::workload_svg(&t.workload, &r.points, &caption)?)
                .with_context(|| format!("--svg {}", f.display()))?;
        }
    }
    super::progress::note(&format!(
        "mlugen sweep: {} points over {} traces in {:.1} s ({} threads{})",
        r.points.len(),
        r.traces.len(),
        r.seconds,
        cfg.threads,
        cfg.shard.map_or(String::new(), |s| format!(", shard {}/{}", s.index, s.count))
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
