//! `mlugen generate`: emit Verilog + JSON manifests (hw::generate).
//!
//! `--all` regenerates every top kept under verilog_out/; otherwise the tops
//! of one configuration (super::mlu_flags: defaults, then `--config FILE`,
//! then the flags).
use anyhow::{bail, Context, Result};
use hw::generate::{committed_tops, tops_for_config, TopSpec, VERILOG_OUT};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub mlu: super::mlu_flags::MluFlags,
    /// Output directory (default: verilog_out/ of the project, or of the
    /// current directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Regenerate every committed top (verilog_out/); no other option may be given.
    #[arg(long)]
    pub all: bool,
}

pub fn run(args: Args) -> Result<()> {
    let tops: Vec<TopSpec> = if args.all {
        if args.mlu.any() {
            bail!("--all regenerates every committed top; it takes no --config/--entries/--structure/--replacement/--mode/--unit/--walkers/--lanes/--mlb-latency/--check-latency");
        }
        committed_tops()
    } else {
        tops_for_config(&args.mlu.resolve()?)?
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
