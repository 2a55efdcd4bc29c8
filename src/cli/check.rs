//! `mlugen check --scenario FILE.json [--engine model] [--verify]`: run a
//! scenario (spec section 10) and print `{"results": [...], "counters": {...}}`.
use std::io::Write;
use std::path::PathBuf;

/// Which implementation runs the scenario. Only the golden model is a
/// `check` engine; the corpus runs through the Verilog in the test suite
/// (testbench/tests/cosim_mlu.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The golden model (sim crate).
    Model,
}

#[derive(clap::Args)]
pub struct Args {
    /// Scenario file (JSON, spec section 10).
    #[arg(long)]
    pub scenario: PathBuf,
    /// Which implementation runs the scenario.
    #[arg(long, value_enum, default_value = "model")]
    pub engine: Engine,
    /// Also compare every verdict with its event's `expect` and exit non-zero
    /// (listing the differences on stderr) if any differs.
    #[arg(long)]
    pub verify: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let file = args.scenario.display().to_string();
    let sc = sim::scenario::Scenario::from_file(&args.scenario)?;
    let out = match args.engine {
        Engine::Model => sc.run().map_err(|e| e.with_file(&file))?,
    };
    writeln!(super::out::stdout(), "{}", out.to_json_pretty())?;
    if args.verify {
        let bad = out.mismatches(&sc);
        if !bad.is_empty() {
            anyhow::bail!("{file}: {} verdict(s) differ from `expect`:\n  {}", bad.len(), bad.join("\n  "));
        }
    }
    Ok(())
}
