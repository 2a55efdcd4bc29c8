//! `mlugen check --scenario FILE.json [--engine model] [--verify]`: run a
//! scenario (spec section 10) and print `{"results": [...], "counters": {...}}`.
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The golden model (sim crate).
    Model,
    /// The rust-hdl RTL simulation.
    Rtl,
    /// The generated Verilog under Verilator.
    Verilator,
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
        Engine::Rtl | Engine::Verilator => anyhow::bail!(
            "--engine {}: that engine does not exist yet (only --engine model is implemented)",
            if args.engine == Engine::Rtl { "rtl" } else { "verilator" }
        ),
    };
    println!("{}", out.to_json_pretty());
    if args.verify {
        let bad = out.mismatches(&sc);
        if !bad.is_empty() {
            anyhow::bail!("{file}: {} verdict(s) differ from `expect`:\n  {}", bad.len(), bad.join("\n  "));
        }
    }
    Ok(())
}
