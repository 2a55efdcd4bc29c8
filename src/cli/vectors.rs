//! `mlugen vectors --all | --top NAME`: record the vector files of the
//! standalone Verilog testbenches (`verilog_out/tb/<top>.vec`; how each is
//! made: verif/src/vectors.rs). Needs Verilator for the MLU and canary
//! tops (their programs run on the Verilog); the MLB and MEMCHECK vectors come
//! from the golden model alone.
use anyhow::{bail, Result};
use hw::generate::{committed_tops, VERILOG_OUT};
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    /// Record every committed top's vectors.
    #[arg(long)]
    pub all: bool,
    /// Record one committed top's vectors (e.g. mlu8_bst).
    #[arg(long)]
    pub top: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    let all: Vec<String> = committed_tops().iter().map(|t| t.name()).collect();
    let tops = match (&args.top, args.all) {
        (Some(t), false) if all.contains(t) => vec![t.clone()],
        (Some(t), false) => bail!("--top {t}: not a committed top; committed: {}", all.join(", ")),
        (None, true) => all,
        _ => bail!("give either --all or --top NAME"),
    };
    let dir = super::project::default_path(VERILOG_OUT);
    let mut stdout = super::out::stdout();
    for name in tops {
        let top = verif::verilator::Top::load(&dir, &name)?;
        let v = verif::vectors::record(&top)?;
        let path = dir.join(hw::tb::vec_file(&name));
        hw::generate::write_files(&dir, [(hw::tb::vec_file(&name).as_str(), v.text().as_str())])?;
        writeln!(stdout, "{name}: {} vectors, {} outputs compared -> {}", v.rows.len(), v.checks(), path.display())?;
    }
    Ok(())
}
