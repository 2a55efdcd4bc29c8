//! `mlugen cosim`: run the emitted Verilog under Verilator against the golden
//! model (testbench::cosim) and print throughput and mismatches. `--top mlb`
//! compares random cycles of the MLB block, `--top mlu` random programs of
//! the MLU top. The Verilog is `verilog_out/<top>.v` when that configuration
//! is committed, else generated now. On a mismatch the first differing
//! cycle/request is printed with its inputs and both outputs, with
//! `--trace vcd` a VCD of the cycles before it is written, and the exit status
//! is non-zero.
use anyhow::{bail, Context, Result};
use sim::config::{Mode, MluConfig, Replacement, Structure, Target};
use std::io::Write;
use std::path::PathBuf;
use testbench::cosim::{self, RunOptions};
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
    /// Requests (MLU) or cycles (MLB) to compare.
    #[arg(long, default_value_t = 1_000_000)]
    transactions: u64,
    /// Seed of the stimulus (same seed, same run).
    #[arg(long, default_value_t = 1)]
    seed: u64,
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
    /// program (MLU, 8 or 16 entries; 0 = skip).
    #[arg(long, default_value_t = 2000)]
    rust_hdl_requests: u64,
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
    if a.transactions == 0 {
        bail!("--transactions must be at least 1");
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
    let mut out = std::io::stdout().lock();
    match a.top.as_str() {
        "mlb" => {
            let top = cosim::mlb_top(cfg.entries, cfg.replacement)?;
            let opts = RunOptions {
                count: a.transactions,
                seed: a.seed,
                vcd: vcd.map(|_| a.vcd_out.clone().unwrap_or_else(|| PathBuf::from(format!("mlugen-cosim-{}.vcd", top.name())))),
                ..Default::default()
            };
            writeln!(out, "mlugen cosim: {} ({} entries, {}), {} random cycles, seed {}", top.name(), cfg.entries, cfg.replacement.name(), a.transactions, a.seed)?;
            out.flush()?;
            let verilog = user_verilog.as_deref().unwrap_or(&top.verilog);
            let r = cosim::run_mlb(&top, verilog, variant, cfg.entries, cfg.replacement, &opts)?;
            writeln!(out, "build: {} ({:.1} s, {})", if r.build.compiled { "compiled" } else { "cached" }, r.build.seconds, r.build.dir.display())?;
            writeln!(out, "cycles compared: {}, mismatches: {}", r.cycles, r.mismatch.is_some() as u8)?;
            writeln!(out, "throughput: Verilator cosimulation {:.0} cycles/s (wall, model overlapped); golden model alone {:.0} cycles/s", r.cycles_per_second(), r.model_cycles_per_second())?;
            writeln!(out, "coverage: {:?}", r.stats)?;
            if let Some(m) = &r.mismatch {
                writeln!(out, "{m}")?;
                if let Some(v) = &r.vcd {
                    writeln!(out, "VCD of the last {} cycles: {}", opts.vcd_window, v.display())?;
                }
                bail!("the Verilog of {} differs from the golden model at cycle {}", r.top, m.cycle);
            }
        }
        "mlu" => {
            let top = cosim::mlu_top_for(&cfg)?;
            let pc = ProgramConfig { replacement: cfg.replacement, step_limit: cfg.step_limit, ..ProgramConfig::new(cfg.entries, cfg.structure, cfg.mode) };
            let opts = RunOptions {
                count: a.transactions,
                seed: a.seed,
                vcd: vcd.map(|_| a.vcd_out.clone().unwrap_or_else(|| PathBuf::from(format!("mlugen-cosim-{}.vcd", top.name())))),
                vcd_window: 20,
                ..Default::default()
            };
            writeln!(
                out,
                "mlugen cosim: {} ({} entries, {}, {}, {} mode), {} requests, seed {}",
                top.name(),
                cfg.entries,
                cfg.structure.name(),
                cfg.replacement.name(),
                cfg.mode.name(),
                a.transactions,
                a.seed
            )?;
            out.flush()?;
            let verilog = user_verilog.as_deref().unwrap_or(&top.verilog);
            let r = cosim::run_mlu(&top, verilog, variant, &pc, &opts)?;
            writeln!(out, "build: {} ({:.1} s, {})", if r.build.compiled { "compiled" } else { "cached" }, r.build.seconds, r.build.dir.display())?;
            writeln!(out, "requests compared: {} ({} clock cycles), mismatches: {}", r.requests, r.cycles, r.mismatch.is_some() as u8)?;
            writeln!(out, "throughput: Verilator cosimulation {:.0} requests/s (wall, model overlapped); golden model alone {:.0} requests/s", r.requests_per_second(), r.model_requests_per_second())?;
            if a.rust_hdl_requests > 0 && r.mismatch.is_none() {
                match cosim::rust_hdl_mlu_rate(&pc, a.seed, a.rust_hdl_requests) {
                    Ok(rate) => writeln!(out, "throughput: rust-hdl simulation of the same block {rate:.0} requests/s (first {} requests)", a.rust_hdl_requests)?,
                    Err(e) => writeln!(out, "throughput: rust-hdl not measured: {e}")?,
                }
            }
            writeln!(out, "coverage: {}", r.stats)?;
            if let Some(m) = &r.mismatch {
                writeln!(out, "{m}")?;
                if let Some(v) = &r.vcd {
                    writeln!(out, "VCD of the last {} requests: {}", opts.vcd_window, v.display())?;
                }
                bail!("the Verilog of {} differs from the golden model at request {}", r.top, m.index);
            }
        }
        t => bail!("--top: `{t}` (allowed: mlb, mlu)"),
    }
    Ok(())
}
