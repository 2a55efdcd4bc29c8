//! `mlugen generate`: emit Verilog + JSON manifests (hw::generate).
//!
//! `--all` regenerates every top kept under verilog_out/; otherwise the tops
//! of one configuration: defaults, then `--config FILE`, then the flags.
use anyhow::{anyhow, bail, Context, Result};
use hw::generate::{committed_tops, tops_for_config, TopSpec, VERILOG_OUT};
use sim::config::{MluConfig, Replacement, Structure, Target};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// JSON configuration file (sim::config::MluConfig: entries, structure,
    /// replacement, mode, step_limit, unit); flags below
    /// override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// MLB entries: 1, 2, 4, 8, 16 or 32.
    #[arg(long)]
    pub entries: Option<usize>,
    /// Metadata structure: list or bst.
    #[arg(long)]
    pub structure: Option<String>,
    /// MLB replacement policy: plru or rr (round robin).
    #[arg(long)]
    pub replacement: Option<String>,
    /// Build the MLU as an SM unit (pipelined, non-blocking, warp-wide; top
    /// `mlu<N>_<structure>_k<K>_l<L>[_p2]`; config field `unit`), with 4
    /// walkers, 32 lanes and a one-stage MLB search unless given below.
    #[arg(long)]
    pub unit: bool,
    /// MLU unit: walkers K (1, 2, 4 or 8); implies --unit.
    #[arg(long)]
    pub walkers: Option<usize>,
    /// MLU unit: lanes (1 or 32); implies --unit.
    #[arg(long)]
    pub lanes: Option<usize>,
    /// MLU unit: MLB search stages (1, or 2 for a clock a one-cycle search
    /// cannot make); implies --unit.
    #[arg(long)]
    pub mlb_latency: Option<usize>,
    /// MLU unit: lane-check stages (1, or 2 for a clock one stage cannot
    /// make: the lowest faulting lane is picked a cycle later); implies --unit.
    #[arg(long)]
    pub check_latency: Option<usize>,
    /// Output directory (default: verilog_out/ of the project, or of the
    /// current directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Regenerate every committed top (verilog_out/); no other option may be given.
    #[arg(long)]
    pub all: bool,
}

/// The configuration the arguments describe (validated for hardware).
pub fn config_from_args(args: &Args) -> Result<MluConfig> {
    let mut cfg = match &args.config {
        Some(path) => MluConfig::from_json_file(path).map_err(|e| anyhow!("{e}"))?,
        None => MluConfig::default(),
    };
    if let Some(n) = args.entries {
        cfg.entries = n;
    }
    if let Some(s) = &args.structure {
        cfg.structure = Structure::from_name(s)
            .ok_or_else(|| anyhow!("--structure {s}: unknown structure; allowed: list, bst"))?;
    }
    if let Some(r) = &args.replacement {
        cfg.replacement = match r.as_str() {
            "rr" => Replacement::RoundRobin,
            other => Replacement::from_name(other)
                .ok_or_else(|| anyhow!("--replacement {r}: unknown policy; allowed: plru, rr"))?,
        };
    }
    if args.unit || args.walkers.is_some() || args.lanes.is_some() || args.mlb_latency.is_some() || args.check_latency.is_some() {
        let mut u = cfg.unit.unwrap_or_default();
        u.walkers = args.walkers.unwrap_or(u.walkers);
        u.lanes = args.lanes.unwrap_or(u.lanes);
        u.mlb_latency = args.mlb_latency.unwrap_or(u.mlb_latency);
        u.check_latency = args.check_latency.unwrap_or(u.check_latency);
        cfg.unit = Some(u);
    }
    cfg.validate(Target::Hardware).map_err(|e| {
        // Name where the bad value came from: the flag that set it, else the file.
        let flag = match e.field.as_deref() {
            Some("entries") if args.entries.is_some() => Some("--entries"),
            Some("structure") if args.structure.is_some() => Some("--structure"),
            Some("replacement") if args.replacement.is_some() => Some("--replacement"),
            Some("unit.walkers") if args.walkers.is_some() => Some("--walkers"),
            Some("unit.lanes") if args.lanes.is_some() => Some("--lanes"),
            Some("unit.mlb_latency") if args.mlb_latency.is_some() => Some("--mlb-latency"),
            Some("unit.check_latency") if args.check_latency.is_some() => Some("--check-latency"),
            _ => None,
        };
        match (flag, &args.config) {
            (Some(f), _) => anyhow!("invalid configuration: {f}: {e}"),
            (None, Some(p)) => anyhow!("invalid configuration: {}", e.clone().in_file(p.display().to_string())),
            (None, None) => anyhow!("invalid configuration: {e}"),
        }
    })?;
    Ok(cfg)
}

pub fn run(args: Args) -> Result<()> {
    let tops: Vec<TopSpec> = if args.all {
        if args.config.is_some()
            || args.entries.is_some()
            || args.structure.is_some()
            || args.replacement.is_some()
            || args.unit
            || args.walkers.is_some()
            || args.lanes.is_some()
            || args.mlb_latency.is_some()
            || args.check_latency.is_some()
        {
            bail!("--all regenerates every committed top; it takes no --config/--entries/--structure/--replacement/--unit/--walkers/--lanes/--mlb-latency/--check-latency");
        }
        committed_tops()
    } else {
        tops_for_config(&config_from_args(&args)?)?
    };
    // writeln! rather than println!: a closed stdout (`| head`) is an error, not a panic.
    let out = args.out.clone().unwrap_or_else(|| super::project::default_path(VERILOG_OUT));
    let mut stdout = super::out::stdout();
    let names: Vec<String> = tops.iter().map(|t| t.name()).collect();
    for top in tops {
        let g = top.build()?;
        let (v, j) = g.write(&out)?;
        writeln!(stdout, "{} ({} modules) -> {}, {}", g.name(), g.manifest.modules.len(), v.display(), j.display())?;
    }
    // The lint waivers, the README and the FuseSoC core beside the tops. The
    // core lists every top of the directory (each has its `<top>.f`
    // filelist), not only this run's: `generate` of the default MLU into
    // verilog_out/ must leave the committed core as it is.
    let mut names = names;
    names.extend(tops_in_dir(&out)?);
    let shared = hw::generate::shared_files(&names);
    hw::generate::write_files(&out, shared.iter().map(|(f, t)| (f.as_str(), t.as_str())))?;
    for (file, _) in &shared {
        writeln!(stdout, "{}", out.join(file).display())?;
    }
    Ok(())
}

/// The tops already generated into `dir`: the stems of its `<top>.f` filelists
/// that have their `<top>.v` beside them.
fn tops_in_dir(dir: &std::path::Path) -> Result<Vec<String>> {
    let mut tops = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry.with_context(|| format!("reading {}", dir.display()))?.path();
        if path.extension().is_some_and(|e| e == "f") && path.with_extension("v").is_file() {
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                tops.push(stem.to_string());
            }
        }
    }
    Ok(tops)
}
