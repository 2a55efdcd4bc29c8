//! `mlugen cosim`: run the emitted Verilog under Verilator against the golden
//! model and print throughput and mismatches. `--top mlb` compares random
//! cycles of the MLB block (verif::cosim), `--top mlu` every output of
//! the MLU as an SM unit every cycle against its golden twin
//! sim::mlu_unit::MluUnit on random requests (verif::unit_driver: the
//! hot stream, LOADMETA, warp-wide MEMCHECK.G/S, INVALIDATE and FLUSH
//! racing walks on a heap of 12 allocations, the metadata port at latency
//! 1..30, reordered, 90% ready, 0.2% errors). The Verilog is
//! `verilog_out/<top>.v` when that configuration is committed, else
//! generated now. On a mismatch the first differing
//! cycle/request is printed with its inputs and both outputs, with
//! `--trace vcd` a VCD of the cycles before it is written, and the exit status
//! is non-zero. `--seeds K` runs K seeds one after the other, `--shard I/N`
//! only this job's part of them, `--json F` writes the per-seed report that
//! `mlugen merge` joins (docs/scale-out.md).
use anyhow::{bail, Context, Result};
use sim::mlu_unit::UnitParams;
use std::io::Write;
use std::path::PathBuf;
use super::progress::Progress;
use std::sync::{Arc, Mutex, OnceLock};
use verif::cosim::{self, Progress as CosimProgress, ProgressHook, RunOptions};
use verif::shard::{shard_seeds, CosimReport, SeedRun, Shard};

#[derive(clap::Args)]
pub struct Args {
    /// The configuration (`--top mlu`: the MLU as an SM unit, by default
    /// in the committed shape, 4 walkers, 32 lanes (1 in HWONLY mode), two
    /// MLB search and two lane-check stages; `--top mlb`: entries and
    /// replacement only).
    #[command(flatten)]
    mlu: super::mlu_flags::MluFlags,
    /// Requests (MLU) or cycles (MLB) to compare per seed (1..=10^9).
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    transactions: u64,
    /// Seed of the stimulus (same seed, same run); with --seeds K the first.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Independent seeds to run: --seed, --seed + 1, ... (1..=10^6).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    seeds: u64,
    /// Run only shard I of N of the seeds (seed k of --seeds in shard k mod N).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Write the per-seed report as JSON (what `mlugen merge` joins).
    #[arg(long)]
    json: Option<PathBuf>,
    /// `vcd`: on a mismatch, write a VCD of the cycles before it.
    #[arg(long)]
    trace: Option<String>,
    /// Where that VCD goes (default mlugen-cosim-<top>.vcd).
    #[arg(long)]
    vcd_out: Option<PathBuf>,
    /// What to run: mlb (the MLB block, cycle level) or mlu (the MLU top).
    #[arg(long, default_value = "mlu")]
    top: String,
    /// Simulate this Verilog file instead of the top's own (same module name
    /// and ports, e.g. a hand-edited or post-synthesis copy).
    #[arg(long)]
    verilog: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<()> {
    let target = match a.top.as_str() {
        t @ ("mlb" | "mlu") => t,
        t => bail!("--top: `{t}` (allowed: mlb, mlu)"),
    };
    let f = &a.mlu;
    if target == "mlb" {
        // The MLB block has no structure, mode, step limit or unit shape:
        // refuse what would be ignored.
        let mlu_only: Vec<&str> = [
            f.structure.as_ref().map(|_| "--structure"),
            f.mode.as_ref().map(|_| "--mode"),
            f.config.as_ref().map(|_| "--config"),
            f.unit_flags().then_some("--unit/--walkers/--lanes/--mlb-latency/--check-latency"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !mlu_only.is_empty() {
            bail!("{} only apply to --top mlu (the MLB block has no structure, mode, step limit or unit shape)", mlu_only.join(", "));
        }
    }
    // For --top mlu the unit in the committed shape unless the file or a
    // flag says (one lane in HWONLY mode, which needs it).
    let cfg = f.resolve()?;
    let shard = match &a.shard {
        Some(s) => Some(Shard::parse(s).map_err(|e| anyhow::anyhow!("--{e}"))?),
        None => None,
    };
    let seeds = shard_seeds(shard, a.seed, a.seeds);
    if seeds.is_empty() {
        bail!("--shard {}: no seed of --seeds {} falls in this shard", a.shard.as_deref().unwrap_or_default(), a.seeds);
    }
    let vcd = match a.trace.as_deref() {
        None => None,
        Some("vcd") if target == "mlu" => bail!("--trace vcd: only --top mlb writes a VCD (the unit's harness does not yet)"),
        Some("vcd") => Some(()),
        Some(t) => bail!("--trace: `{t}` (allowed: vcd)"),
    };
    let user_verilog = match &a.verilog {
        Some(p) => Some(std::fs::read_to_string(p).with_context(|| format!("--verilog: cannot read {}", p.display()))?),
        None => None,
    };
    let variant = if user_verilog.is_some() { "-user" } else { "" };
    let top = if target == "mlb" {
        cosim::mlb_top(cfg.entries, cfg.replacement)?
    } else {
        let spec = hw::generate::tops_for_config(&cfg)?.pop().context("the configuration has no unit top")?;
        verif::verilator::Top::committed_or_generated(&spec.name(), || Ok(spec.clone()))?
    };
    let run = if target == "mlb" {
        cosim::Target::Mlb { entries: cfg.entries, replacement: cfg.replacement }
    } else {
        cosim::Target::Unit(UnitParams::from_config(&cfg).context("the configuration has no unit")?)
    };
    let verilog = user_verilog.as_deref().unwrap_or(&top.verilog);
    let unit = run.unit();
    let mut out = super::out::stdout();
    writeln!(
        out,
        "mlugen cosim: {} ({} entries, {}{}), {} random {unit} per seed, seed{} {}",
        top.name(),
        cfg.entries,
        cfg.replacement.name(),
        match &cfg.unit {
            Some(u) if target == "mlu" => format!(
                ", {}, {} mode, {} walkers, {} lane(s), MLB search {} stage(s), lane checks {} stage(s)",
                cfg.structure.name(),
                cfg.mode.name(),
                u.walkers,
                u.lanes,
                u.mlb_latency,
                u.check_latency
            ),
            _ => String::new(),
        },
        a.transactions,
        if seeds.len() > 1 { "s" } else { "" },
        seed_list(&seeds)
    )?;
    out.flush()?;
    let mut runs = Vec::new();
    let mut failed = None;
    for (k, &seed) in seeds.iter().enumerate() {
        // A spinner while Verilator builds (first seed only; later ones hit
        // the cache), then a bar over the compared requests.
        let build = (k == 0).then(|| Progress::stage(&format!("mlugen cosim: building {} under Verilator", top.name())));
        let label = if seeds.len() > 1 { format!("mlugen cosim: seed {seed}") } else { "mlugen cosim".to_string() };
        let bar: Arc<OnceLock<Progress>> = Arc::new(OnceLock::new());
        let hook = {
            let bar = bar.clone();
            let total = a.transactions;
            let build = Mutex::new(build);
            ProgressHook(Arc::new(move |p| match p {
                CosimProgress::Built { compiled, .. } => {
                    if let Some(b) = build.lock().expect("progress lock").take() {
                        b.finish(if compiled { "compiled" } else { "cached" });
                    }
                    let _ = bar.set(Progress::new(&label, unit, total));
                }
                CosimProgress::Compared(n) => {
                    if let Some(b) = bar.get() {
                        b.set(n);
                    }
                }
            }))
        };
        let vcd_path = vcd.map(|_| a.vcd_out.clone().unwrap_or_else(|| PathBuf::from(format!("mlugen-cosim-{}.vcd", top.name()))));
        let opts = RunOptions {
            count: a.transactions,
            seed,
            vcd: vcd_path,
            vcd_window: if target == "mlb" { 200 } else { 20 },
            progress: Some(hook),
            ..Default::default()
        };
        let o = cosim::run_seed(&run, &top, verilog, variant, &opts)?;
        if let Some(b) = bar.get() {
            b.finish(&format!("{} {unit} compared", o.compared));
        }
        if k == 0 {
            writeln!(out, "build: {} ({:.1} s, {})", if o.build.compiled { "compiled" } else { "cached" }, o.build.seconds, o.build.dir.display())?;
        }
        writeln!(out, "seed {seed}: {}", o.line)?;
        for t in &o.throughput {
            writeln!(out, "  throughput: {t}")?;
        }
        writeln!(out, "  coverage (stimulus drawn{}): {}", if o.mismatch.is_some() { ", up to a batch past the mismatch" } else { "" }, o.coverage)?;
        let text = o.mismatch.map(|(mut report, at)| {
            if let Some(v) = &o.vcd {
                report.push_str(&format!("\nVCD of the last {} {unit}: {}", opts.vcd_window, v.display()));
            }
            (report, format!("the Verilog of {} differs from the golden model at {at} (seed {seed})", top.name()))
        });
        let run = SeedRun { seed, compared: o.compared, mismatch: text.as_ref().map(|t| t.0.clone()), counts: o.counts };
        runs.push(run);
        if let Some((report, err)) = text {
            writeln!(out, "{report}")?;
            failed = Some(err);
            break;
        }
    }
    let config = serde_json::json!({
        "entries": cfg.entries,
        "replacement": cfg.replacement.name(),
        "structure": (target == "mlu").then(|| cfg.structure.name()),
        "mode": (target == "mlu").then(|| cfg.mode.name()),
        "step_limit": (target == "mlu").then_some(cfg.step_limit),
        "unit": cfg.unit.filter(|_| target == "mlu").map(|u| serde_json::json!({
            "walkers": u.walkers, "lanes": u.lanes, "mlb_latency": u.mlb_latency, "check_latency": u.check_latency,
        })),
        "verilog": a.verilog.as_ref().map(|p| p.display().to_string()),
    });
    let report = CosimReport::new(&top.name().to_string(), target, config, a.transactions, a.seed, a.seeds, shard, runs);
    writeln!(out, "total: {} {unit} compared over {} seed(s), {} mismatching", report.compared, report.runs.len(), report.mismatches)?;
    if let Some(f) = &a.json {
        std::fs::write(f, serde_json::to_string_pretty(&report)? + "\n").with_context(|| format!("--json {}", f.display()))?;
    }
    if let Some(e) = failed {
        bail!("{e}");
    }
    Ok(())
}

/// `1` or `1..=8` or `1, 3, 5` (a shard's seeds).
fn seed_list(seeds: &[u64]) -> String {
    match seeds {
        [one] => one.to_string(),
        [first, .., last] if seeds.windows(2).all(|w| w[1] == w[0].wrapping_add(1)) => format!("{first}..={last}"),
        _ if seeds.len() <= 8 => seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
        _ => format!("{} seeds from {} to {}", seeds.len(), seeds[0], seeds[seeds.len() - 1]),
    }
}
