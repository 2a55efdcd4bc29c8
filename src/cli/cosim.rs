//! `mlugen cosim`: run the emitted Verilog under Verilator against the golden
//! model (testbench::cosim) and print throughput and mismatches. `--top mlb`
//! compares random cycles of the MLB block, `--top mlu` random programs of
//! the MLU top. The Verilog is `verilog_out/<top>.v` when that configuration
//! is committed, else generated now. On a mismatch the first differing
//! cycle/request is printed with its inputs and both outputs, with
//! `--trace vcd` a VCD of the cycles before it is written, and the exit status
//! is non-zero. `--seeds K` runs K seeds one after the other, `--shard I/N`
//! only this job's part of them, `--json F` writes the per-seed report that
//! `mlugen merge` joins (docs/scale-out.md).
use anyhow::{bail, Context, Result};
use sim::config::{Mode, MluConfig, Replacement, Structure, Target};
use std::io::Write;
use std::path::PathBuf;
use super::progress::Progress;
use std::sync::{Arc, Mutex, OnceLock};
use testbench::cosim::{self, Progress as CosimProgress, ProgressHook, RunOptions};
use testbench::shard::{shard_seeds, CosimReport, SeedRun, Shard};
use testbench::harness::program::ProgramConfig;

#[derive(clap::Args)]
pub struct Args {
    /// MLU configuration JSON (entries, structure, replacement, mode,
    /// step_limit); the flags below override its fields.
    #[arg(long)]
    config: Option<PathBuf>,
    /// MLB entries (1, 2, 4, 8, 16, 32).
    #[arg(long)]
    entries: Option<usize>,
    /// Metadata structure (MLU only): list or bst.
    #[arg(long)]
    structure: Option<String>,
    /// Checking mode (MLU only): compiler or hwonly.
    #[arg(long)]
    mode: Option<String>,
    /// MLB replacement: plru or rr.
    #[arg(long)]
    replacement: Option<String>,
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
    /// Also time the rust-hdl simulator on this many requests of the same
    /// program (MLU only; 0..=100000, about 5000 a second; default 2000; 0 = skip).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=100_000))]
    rust_hdl_requests: Option<u64>,
}

pub fn run(a: Args) -> Result<()> {
    let mut cfg = match &a.config {
        Some(p) => MluConfig::from_json_file(p).map_err(|e| anyhow::anyhow!("{e}"))?,
        None => MluConfig::default(),
    };
    if let Some(n) = a.entries {
        cfg.entries = n;
    }
    if let Some(s) = &a.structure {
        cfg.structure = match s.as_str() {
            "list" => Structure::List,
            "bst" => Structure::Bst,
            _ => bail!("--structure: `{s}` is not a hardware structure (allowed: list, bst)"),
        };
    }
    if let Some(m) = &a.mode {
        cfg.mode = Mode::from_name(m).with_context(|| format!("--mode: `{m}` (allowed: compiler, hwonly)"))?;
    }
    if let Some(r) = &a.replacement {
        cfg.replacement = match r.as_str() {
            "plru" => Replacement::Plru,
            "rr" | "round_robin" | "round-robin" => Replacement::RoundRobin,
            _ => bail!("--replacement: `{r}` (allowed: plru, rr)"),
        };
    }
    let src = a.config.as_ref().map_or("--entries/--structure".to_string(), |p| p.display().to_string());
    cfg.validate(Target::Hardware).map_err(|e| anyhow::anyhow!("{src}: {e}"))?;
    let target = match a.top.as_str() {
        t @ ("mlb" | "mlu") => t,
        t => bail!("--top: `{t}` (allowed: mlb, mlu)"),
    };
    if target == "mlb" {
        // The MLB block has no structure, mode or step limit: refuse what would be ignored.
        let mlu_only: Vec<&str> = [
            a.structure.as_ref().map(|_| "--structure"),
            a.mode.as_ref().map(|_| "--mode"),
            a.config.as_ref().map(|_| "--config"),
            a.rust_hdl_requests.map(|_| "--rust-hdl-requests"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !mlu_only.is_empty() {
            bail!("{} only apply to --top mlu (the MLB block has no structure, mode or step limit)", mlu_only.join(", "));
        }
    }
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
        Some("vcd") => Some(()),
        Some(t) => bail!("--trace: `{t}` (allowed: vcd)"),
    };
    let user_verilog = match &a.verilog {
        Some(p) => Some(std::fs::read_to_string(p).with_context(|| format!("--verilog: cannot read {}", p.display()))?),
        None => None,
    };
    let variant = if user_verilog.is_some() { "-user" } else { "" };
    let top = if target == "mlb" { cosim::mlb_top(cfg.entries, cfg.replacement)? } else { cosim::mlu_top_for(&cfg)? };
    let verilog = user_verilog.as_deref().unwrap_or(&top.verilog);
    let unit = if target == "mlb" { "cycles" } else { "requests" };
    let mut out = super::out::stdout();
    writeln!(
        out,
        "mlugen cosim: {} ({} entries, {}{}), {} random {unit} per seed, seed{} {}",
        top.name(),
        cfg.entries,
        cfg.replacement.name(),
        if target == "mlu" { format!(", {}, {} mode", cfg.structure.name(), cfg.mode.name()) } else { String::new() },
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
        let o = if target == "mlb" {
            let r = cosim::run_mlb(&top, verilog, variant, cfg.entries, cfg.replacement, &opts)?;
            SeedOutcome {
                compared: r.cycles,
                line: format!("cycles compared: {}, mismatches: {}", r.cycles, r.mismatch.is_some() as u8),
                throughput: vec![format!(
                    "Verilator cosimulation {:.0} cycles/s (wall, model overlapped); golden model alone {:.0} cycles/s",
                    r.cycles_per_second(),
                    r.model_cycles_per_second()
                )],
                coverage: r.stats.to_string(),
                counts: serde_json::to_value(r.stats)?,
                mismatch: r.mismatch.as_ref().map(|m| (m.to_string(), format!("cycle {}", m.cycle))),
                vcd: r.vcd,
                build: r.build,
            }
        } else {
            let pc = ProgramConfig { replacement: cfg.replacement, step_limit: cfg.step_limit, ..ProgramConfig::new(cfg.entries, cfg.structure, cfg.mode) };
            let r = cosim::run_mlu(&top, verilog, variant, &pc, &opts)?;
            let mut throughput = vec![format!(
                "Verilator cosimulation {:.0} requests/s (wall, model overlapped); golden model alone {:.0} requests/s",
                r.requests_per_second(),
                r.model_requests_per_second()
            )];
            let rust_hdl_requests = a.rust_hdl_requests.unwrap_or(2000);
            if k == 0 && rust_hdl_requests > 0 && r.mismatch.is_none() {
                let t = Progress::stage(&format!("mlugen cosim: timing rust-hdl on {rust_hdl_requests} requests"));
                throughput.push(match cosim::rust_hdl_mlu_rate(&pc, seed, rust_hdl_requests) {
                    Ok(rate) => {
                        t.finish("done");
                        format!("rust-hdl simulation of the same block {rate:.0} requests/s (first {rust_hdl_requests} requests)")
                    }
                    Err(e) => {
                        t.finish("not measured");
                        format!("rust-hdl not measured: {e}")
                    }
                });
            }
            SeedOutcome {
                compared: r.requests,
                line: match &r.mismatch {
                    None => format!("requests compared: {} ({} clock cycles), mismatches: 0", r.requests, r.cycles),
                    Some(_) => format!("requests compared: {}, mismatches: 1", r.requests),
                },
                throughput,
                coverage: r.stats.to_string(),
                counts: serde_json::to_value(r.stats)?,
                mismatch: r.mismatch.as_ref().map(|m| (m.to_string(), format!("request {}", m.index))),
                vcd: r.vcd,
                build: r.build,
            }
        };
        // What follows is the same for both targets.
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

/// What one seed's run printed and reports, for the MLB or the MLU target.
struct SeedOutcome {
    compared: u64,
    /// `cycles compared: ..` / `requests compared: ..`.
    line: String,
    throughput: Vec<String>,
    coverage: String,
    counts: serde_json::Value,
    /// The mismatch report and where it happened (`cycle 12`, `request 7`).
    mismatch: Option<(String, String)>,
    vcd: Option<PathBuf>,
    build: testbench::verilator::Built,
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
