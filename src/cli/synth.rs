//! `mlugen synth`: synthesize the generated MLB/MLU Verilog with Yosys/ABC,
//! time and power it with OpenSTA, and (with --report) write the MLB sweep
//! report. The flow itself is the `synth` crate (docs/synth.md).
use super::progress::{note, Progress};
use super::project::default_path;
use anyhow::{bail, Result};
use std::io::Write;
use sim::config::{MluConfig, Target};
use sim::top::TopKind;
use std::path::PathBuf;
use synth::liberty::LibSpec;
use synth::sweep::{self, Family, Job, JobOptions, SynthReport};

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
    /// --entries does not apply). A top not in verilog_out/ (another
    /// configuration, `--tag-seed`) is generated into the work directory.
    /// The MLU and canary energy runs replay workloads recorded on the RTL
    /// under Verilator (verif::energy_workload), checked cycle by cycle.
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
    /// --top canary: the tagged unit (`canary_alloc_tag<seed>`; malloc
    /// returns tagged pointers), tags from this nonzero 16-bit seed (decimal
    /// or 0x hex).
    #[arg(long, value_parser = parse_tag_seed)]
    tag_seed: Option<u16>,
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
        // The report-only tops (the `_noheap` units, the tagged canary
        // unit), regenerated so their parts are checked against the
        // Verilog the generator makes now.
        let gen = out_dir.join("report-only-tops");
        for t in hw::generate::report_only_tops() {
            t.build()?.write(&gen)?;
        }
        let n = synth::report::write_from_parts(dir, from, &[&verilog_out, &gen])?;
        note(&format!("mlugen synth: wrote {}/mlb_sweep.md and mlb_sweep.json from {n} files", dir.display()));
        return Ok(());
    }
    // The flags are checked first, then the libraries are loaded, then the
    // designs are found: the first error is the one to fix first.
    let planned = plan(&a)?;
    let libs = a
        .lib
        .iter()
        .map(|s| {
            let spec = LibSpec::parse(s)?;
            let lib = sweep::library(&spec)?;
            Ok((spec, lib))
        })
        .collect::<Result<Vec<_>>>()?;
    // Where each generated top's Verilog is: verilog_out/, else generated
    // into the work directory now.
    let mut dirs = std::collections::BTreeMap::new();
    if let Plan::Generated(_, kinds) = &planned {
        for kind in kinds {
            dirs.insert(kind.name(), top_dir(&verilog_out, &out_dir, kind)?);
        }
    }
    let jobs = match planned {
        Plan::User(job) => vec![job],
        Plan::Generated(family, kinds) => kinds
            .into_iter()
            .map(|kind| {
                let design = sweep::resolve(&dirs[&kind.name()], &kind)?.design;
                let entries = match &kind {
                    TopKind::Mlb { entries, .. } => *entries,
                    TopKind::MluUnit(p) => p.cfg.entries,
                    _ => 0,
                };
                Ok(Job { design, family, entries, kind: Some(kind) })
            })
            .collect::<Result<Vec<_>>>()?,
    };
    let o = JobOptions {
        on_stage: Some(on_stage),
        out: out_dir,
        clock_ps: 0.0,
        blocks: !a.no_blocks,
        energy: !a.no_energy,
        energy_cycles: a.energy_cycles,
        clock_gating: a.clock_gating == "on",
    };
    let mut record = |kind: &sim::top::TopKind| {
        let t0 = std::time::Instant::now();
        let w = verif::energy_workload::record(&dirs[&kind.name()], kind, a.energy_cycles)?;
        note(&format!("mlugen synth: recorded {} workloads of {} on the RTL in {:.1} s", w.len(), kind.name(), t0.elapsed().as_secs_f64()));
        Ok(w)
    };
    let mut done = |r: &SynthReport| if a.json { Ok(()) } else { print_summary(r) };
    let reports = sweep::run_jobs(&jobs, &libs, a.clock_ps, &o, &mut record, &mut done)?;
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

/// The directory holding `kind`'s Verilog and manifest: `verilog_out` if it
/// has them (the committed product, as it is), else `out/rtl`, where the
/// top is generated now (a configuration or tag seed not kept in
/// verilog_out/).
fn top_dir(verilog_out: &std::path::Path, out: &std::path::Path, kind: &TopKind) -> Result<PathBuf> {
    let name = kind.name();
    if verilog_out.join(format!("{name}.v")).is_file() {
        return Ok(verilog_out.to_path_buf());
    }
    let dir = out.join("rtl");
    hw::generate::TopSpec::new(kind.clone()).build()?.write(&dir)?;
    note(&format!("mlugen synth: {name} is not in {}; generated it into {}", verilog_out.display(), dir.display()));
    Ok(dir)
}

/// `--tag-seed`: a nonzero 16-bit number, decimal or 0x hex.
fn parse_tag_seed(s: &str) -> Result<u16, String> {
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u16::from_str_radix(h, 16),
        None => s.parse::<u16>(),
    }
    .map_err(|_| format!("{s:?} is not a 16-bit number (decimal or 0x hex)"))?;
    if v == 0 {
        return Err("0 means untagged: leave --tag-seed out".into());
    }
    Ok(v)
}

/// What the flags ask for: the user's `--verilog`, or generated tops (found
/// in `verilog_out/` by the name `mlugen generate` gives them).
enum Plan {
    User(Job),
    Generated(Family, Vec<TopKind>),
}

/// The flags checked, and what they ask for.
fn plan(a: &Args) -> Result<Plan> {
    let family = match a.top.as_str() {
        "mlb" => Family::Mlb,
        "mlu" | "unit" => Family::Unit,
        "canary" => Family::Canary,
        other => bail!("--top {other:?}: expected mlb, mlu, unit or canary"),
    };
    let cfg = match &a.config {
        Some(p) => {
            let c = MluConfig::from_json_file(p)?;
            c.validate(Target::Hardware).map_err(|e| e.in_file(p.display().to_string()))?;
            c
        }
        None => MluConfig::default(),
    };
    if a.tag_seed.is_some() && family != Family::Canary {
        bail!("--tag-seed applies to --top canary only");
    }
    if family == Family::Canary && !a.entries.is_empty() {
        bail!("--entries does not apply to --top canary (the unit has no MLB)");
    }
    let entries = if a.entries.is_empty() { vec![cfg.entries] } else { a.entries.clone() };
    if let Some(c) = a.clock_ps {
        if !(c.is_finite() && c > 0.0) {
            bail!("--clock-ps {c}: must be a positive number of picoseconds");
        }
    }
    if !(a.hit_latency == 1 || (a.hit_latency == 2 && family == Family::Mlb)) {
        bail!("--hit-latency {}: expected 1, or 2 for --top mlb (the two-stage MLB)", a.hit_latency);
    }
    if let (Some(v), Some(t)) = (&a.verilog, &a.top_module) {
        if entries.len() > 1 {
            bail!("--verilog names one design: give at most one --entries value");
        }
        let design = synth::flow::Design { verilog: vec![v.clone()], top: t.clone(), clock: "clock".into() };
        let entries = if family == Family::Canary { 0 } else { entries[0] };
        return Ok(Plan::User(Job { design, family, entries, kind: None }));
    }
    if a.verilog.is_some() != a.top_module.is_some() {
        bail!("--verilog and --top-module go together");
    }
    let kinds: Vec<TopKind> = if family == Family::Canary {
        vec![TopKind::CanaryAlloc { tag_seed: a.tag_seed }]
    } else {
        let mut kinds = Vec::new();
        for &n in &entries {
            // Each entry count checked as the configuration's own field.
            let c = MluConfig { entries: n, ..cfg.clone() };
            c.validate(Target::Hardware).map_err(|e| anyhow::anyhow!("--entries: {e}"))?;
            kinds.push(match family {
                Family::Unit => TopKind::for_config(&c).map_err(|e| anyhow::anyhow!("{e}"))?[1].clone(),
                _ => TopKind::Mlb { entries: n, replacement: cfg.replacement, hit_latency: a.hit_latency as usize },
            });
        }
        kinds
    };
    Ok(Plan::Generated(family, kinds))
}

fn print_summary(r: &SynthReport) -> Result<()> {
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
