//! `mlugen synth`: synthesize the generated MLB/MLU Verilog with Yosys/ABC,
//! time and power it with OpenSTA, and (with --report) write the MLB sweep
//! report. The flow itself is the `synth` crate (docs/synth.md).
use super::progress::{note, Progress};
use super::project::default_path;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::PathBuf;
use synth::liberty::LibSpec;
use synth::sweep::{self, JobOptions, TopKind};

#[derive(clap::Args)]
pub struct Args {
    /// MLU configuration JSON (its `entries` is used unless --entries is given).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Comma-separated MLB sizes (1,2,4,8,16,32).
    #[arg(long, value_delimiter = ',')]
    entries: Vec<usize>,
    /// Which generated top: mlb, mlu (the MLU as an SM unit, of the
    /// configuration's `unit` shape, else the committed one: 4 walkers, 32
    /// lanes, two MLB search and two lane-check stages; `unit` is the same),
    /// or canary (the canary allocator unit, verilog_out/canary_alloc.v;
    /// --entries does not apply). The MLU and canary energy runs replay
    /// workloads recorded on the RTL under Verilator
    /// (verif::energy_workload), checked cycle by cycle.
    #[arg(long, default_value = "mlb")]
    top: String,
    /// Comma-separated libraries: nangate45, asap7 or a path to a .lib/.lib.gz.
    #[arg(long, value_delimiter = ',', default_value = "nangate45")]
    lib: Vec<String>,
    /// Clock period in ps (default: 1000 for nangate45 and user libraries, 500 for asap7).
    #[arg(long)]
    clock_ps: Option<f64>,
    /// Print the results as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Working directory for scripts, logs and netlists (default:
    /// build/synth of the project, or of the current directory).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write mlb_sweep.md and mlb_sweep.json into this directory.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Directory holding the generated Verilog and manifests (default:
    /// verilog_out/ of the project, or of the current directory, where
    /// `mlugen generate` writes it).
    #[arg(long)]
    verilog_out: Option<PathBuf>,
    /// Synthesize this Verilog file instead of the generated one (needs --top-module).
    #[arg(long)]
    verilog: Option<PathBuf>,
    /// Top module name for --verilog.
    #[arg(long)]
    top_module: Option<String>,
    /// Skip the workload energy simulations (faster; power at default activity only).
    #[arg(long)]
    no_energy: bool,
    /// Skip the hierarchical run that splits the area by block.
    #[arg(long)]
    no_blocks: bool,
    /// Write the report (--report DIR) from every `*.json` in this directory,
    /// each the output of `mlugen synth --json` (no synthesis; synth/report.sh).
    #[arg(long, value_name = "DIR")]
    report_from: Option<PathBuf>,
    /// Only re-render DIR/mlb_sweep.md from DIR/mlb_sweep.json (no synthesis).
    #[arg(long, value_name = "DIR")]
    rerender: Option<PathBuf>,
    /// Integrated clock gating of the flip-flops per enable group (on/off;
    /// nangate45 and asap7 only; docs/synth.md).
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    clock_gating: String,
    /// MLB search latency: 1 (the one-cycle MLB) or 2 (the two-stage
    /// `mlb<N>_<policy>_p2`; MLB top only).
    #[arg(long, default_value_t = 1)]
    hit_latency: u64,
    /// Measured cycles per energy workload (2..=100000).
    #[arg(long, default_value_t = 200, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=100_000))]
    energy_cycles: usize,
}

/// The current synthesis stage's spinner (JobOptions::on_stage is a plain fn).
static STAGE: std::sync::Mutex<Option<Progress>> = std::sync::Mutex::new(None);

fn on_stage(name: &str) {
    let mut cur = STAGE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = cur.take() {
        p.finish("done");
    }
    if !name.is_empty() {
        *cur = Some(Progress::stage(&format!("mlugen synth: {name}")));
    }
}

pub fn run(mut a: Args) -> Result<()> {
    let verilog_out = a.verilog_out.take().unwrap_or_else(|| default_path("verilog_out"));
    let out_dir = a.out.take().unwrap_or_else(|| default_path("build/synth"));
    if let Some(dir) = &a.rerender {
        synth::report::rerender(dir)?;
        note(&format!("mlugen synth: re-rendered {}/mlb_sweep.md", dir.display()));
        return Ok(());
    }
    if let Some(from) = &a.report_from {
        let Some(dir) = &a.report else { bail!("--report-from needs --report DIR") };
        let mut paths: Vec<PathBuf> = std::fs::read_dir(from)
            .with_context(|| format!("reading {}", from.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        let mut reports: Vec<synth::sweep::SynthReport> = Vec::new();
        let mut parts = Vec::new();
        for p in &paths {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let mut r: Vec<synth::sweep::SynthReport> =
                serde_json::from_str(&text).with_context(|| format!("{}: not the output of mlugen synth --json", p.display()))?;
            // Which parts were made from Verilog that has changed since.
            let stale = r
                .iter()
                .filter(|x| {
                    let v = verilog_out.join(format!("{}.v", x.top));
                    !v.is_file() || synth::sweep::fnv64(&[v]) != x.verilog_fnv64
                })
                .map(|x| format!("{} {}", x.top, x.library))
                .collect();
            let job = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            parts.push(synth::report::Part { job, tops: r.iter().map(|x| format!("{} {}", x.top, x.library)).collect(), stale });
            reports.append(&mut r);
        }
        if reports.is_empty() {
            bail!("--report-from {}: no reports found", from.display());
        }
        synth::report::write_parts(dir, &reports, "synth/report.sh            # every job\nsynth/report.sh a7_mlb a7_unit8 # only these jobs (the others' committed parts are kept)", &parts)?;
        note(&format!("mlugen synth: wrote {}/mlb_sweep.md and mlb_sweep.json from {} files", dir.display(), paths.len()));
        return Ok(());
    }
    let kind = match a.top.as_str() {
        "mlb" => TopKind::Mlb,
        "mlu" | "unit" => TopKind::Unit,
        "canary" => TopKind::Canary,
        other => bail!("--top {other:?}: expected mlb, mlu, unit or canary"),
    };
    let mut cfg = match &a.config {
        Some(p) => {
            let c = sim::config::MluConfig::from_json_file(p)?;
            c.validate(sim::config::Target::Hardware).map_err(|e| e.in_file(p.display().to_string()))?;
            c
        }
        None => sim::config::MluConfig::default(),
    };
    if kind == TopKind::Unit && cfg.unit.is_none() {
        cfg.unit = Some(cfg.unit_shape());
    }
    let mut entries = a.entries.clone();
    if kind == TopKind::Canary {
        if !entries.is_empty() {
            bail!("--entries does not apply to --top canary (the unit has no MLB)");
        }
        entries.push(0);
    } else if entries.is_empty() {
        entries.push(cfg.entries);
    }
    for &n in entries.iter().filter(|_| kind != TopKind::Canary) {
        if !sim::config::HARDWARE_ENTRIES.contains(&n) {
            bail!("--entries: {n} MLB entries is not supported; allowed: 1, 2, 4, 8, 16, 32");
        }
    }
    if let Some(c) = a.clock_ps {
        if !(c.is_finite() && c > 0.0) {
            bail!("--clock-ps {c}: must be a positive number of picoseconds");
        }
    }
    if a.energy_cycles < 2 {
        bail!("--energy-cycles {}: need at least 2", a.energy_cycles);
    }
    if a.verilog.is_some() != a.top_module.is_some() {
        bail!("--verilog and --top-module go together");
    }
    if a.verilog.is_some() && entries.len() > 1 {
        bail!("--verilog names one design: give at most one --entries value");
    }
    if !(a.hit_latency == 1 || (a.hit_latency == 2 && kind == TopKind::Mlb)) {
        bail!("--hit-latency {}: expected 1, or 2 for --top mlb (the two-stage MLB)", a.hit_latency);
    }
    let gating = a.clock_gating == "on";
    let specs: Vec<LibSpec> = a.lib.iter().map(|s| LibSpec::parse(s)).collect::<Result<_>>()?;
    let mut reports = Vec::new();
    let mut recordings: Vec<(String, Vec<verif::energy_workload::Workload>)> = Vec::new();
    for spec in &specs {
        let lib = sweep::library(spec)?;
        let clock_ps = a.clock_ps.unwrap_or_else(|| sweep::default_clock_ps(spec));
        for &n in &entries {
            let (design, generated) = match (&a.verilog, &a.top_module) {
                (Some(v), Some(t)) => (synth::flow::Design { verilog: vec![v.clone()], top: t.clone(), clock: "clock".into() }, false),
                _ if kind == TopKind::Canary => (sweep::resolve_canary(&verilog_out)?.design, true),
                _ if kind == TopKind::Unit => (resolve_unit(&verilog_out, &sim::config::MluConfig { entries: n, ..cfg.clone() })?, true),
                _ => (sweep::resolve_latency(&verilog_out, kind, n, cfg.replacement.name(), cfg.structure.name(), a.hit_latency)?.design, true),
            };
            note(&format!("mlugen synth: {} ({} entries) on {} at {} ps", design.top, n, lib.name, clock_ps));
            let o = JobOptions { on_stage: Some(on_stage), out: out_dir.clone(), clock_ps, blocks: !a.no_blocks, energy: !a.no_energy, energy_cycles: a.energy_cycles, clock_gating: gating && lib.tech.is_some() };
            // The MLU and canary workloads are closed loop (a memory answers
            // the unit): recorded on the RTL once per top, replayed per library.
            let recorded = if !o.energy || !generated || kind == TopKind::Mlb {
                None
            } else {
                let key = design.top.clone();
                if let Some((_, w)) = recordings.iter().find(|(k, _)| *k == key) {
                    Some(w)
                } else {
                    let w = record(&verilog_out, &design.top, kind, &sim::config::MluConfig { entries: n, ..cfg.clone() }, a.energy_cycles)?;
                    recordings.push((key, w));
                    recordings.last().map(|(_, w)| w)
                }
            };
            let r = sweep::run_with(&design, kind, n, &lib, &o, recorded.map(|w| w.as_slice()))
                .with_context(|| format!("synthesizing {} for {}", design.top, lib.name))?;
            if !a.json {
                print_summary(&r)?;
            }
            reports.push(r);
        }
    }
    if a.json {
        writeln!(super::out::stdout(), "{}", serde_json::to_string_pretty(&reports)?)?;
    }
    if let Some(dir) = &a.report {
        let cmd = format!("mlugen {}", std::env::args().skip(1).collect::<Vec<_>>().join(" "));
        synth::report::write(dir, &reports, &cmd)?;
        note(&format!("mlugen synth: wrote {}/mlb_sweep.md and mlb_sweep.json", dir.display()));
    }
    Ok(())
}

/// The generated unit top of `cfg` (its `unit` set): the name
/// `mlugen generate` gives it, in `verilog_out`.
fn resolve_unit(verilog_out: &std::path::Path, cfg: &sim::config::MluConfig) -> Result<synth::flow::Design> {
    let spec = hw::generate::tops_for_config(cfg)?.pop().context("the configuration generates no top")?;
    let top = spec.name();
    let verilog = verilog_out.join(format!("{top}.v"));
    if !verilog.is_file() {
        bail!("{} does not exist: generate the unit first (`mlugen generate --unit --entries {}`, with the same --config)", verilog.display(), cfg.entries);
    }
    Ok(synth::flow::Design { verilog: vec![verilog], top, clock: "clock".into() })
}

/// Record the energy workloads of a generated MLU, unit or canary top on its
/// Verilog (Verilator), windows of at least `cycles` cycles.
fn record(verilog_out: &std::path::Path, top: &str, kind: TopKind, cfg: &sim::config::MluConfig, cycles: usize) -> Result<Vec<verif::energy_workload::Workload>> {
    let t = verif::verilator::Top::load(verilog_out, top)?;
    let t0 = std::time::Instant::now();
    let w = match kind {
        TopKind::Unit => {
            let p = sim::mlu_unit::UnitParams::from_config(cfg).context("a unit top needs the configuration's unit shape")?;
            verif::energy_workload::unit_workloads(&t, &p, cycles)
        }
        _ => verif::energy_workload::canary_workloads(&t, &verif::energy_workload::canary_params(&t)?, cycles),
    }
    .with_context(|| format!("recording the energy workloads of {top} on its RTL"))?;
    note(&format!("mlugen synth: recorded {} workloads of {top} on the RTL in {:.1} s", w.len(), t0.elapsed().as_secs_f64()));
    Ok(w)
}

fn print_summary(r: &synth::sweep::SynthReport) -> Result<()> {
    let mut out = super::out::stdout();
    writeln!(
        out,
        "{} {}: {:.1} um2, {} cells, {} flip-flops; min period {:.1} ps, slack {:.1} ps at {} ps; leakage {:.3} uW",
        r.top, r.library, r.area_um2, r.cells, r.flip_flops, r.timing.min_period_ps, r.timing.slack_ps, r.clock_ps, r.leakage_w * 1e6
    )?;
    for b in &r.blocks {
        writeln!(out, "  block {:<55} {:>10.1} um2", b.block, b.area_um2)?;
    }
    for e in &r.energy {
        writeln!(out, "  energy {:<10} {:>8.3} pJ per {}", e.workload, e.dynamic_pj_per_op, e.op)?;
    }
    Ok(())
}
