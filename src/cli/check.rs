//! `mlugen check --scenario FILE.json [--engine model|verilator] [--verify]`: run a
//! scenario (spec section 10) and print `{"results": [...], "counters": {...}}`.
use std::io::Write;
use std::path::PathBuf;

/// Which implementation runs the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The golden model (sim crate).
    Model,
    /// The Verilog of the MLU as an SM unit under Verilator, beside its
    /// golden twin every cycle (verif::unit_program): the committed
    /// unit of the scenario's configuration, else one generated now with
    /// one lane. The MLU verdicts are the Verilog's; any difference from the
    /// model is listed on stderr and the exit is non-zero.
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
        Engine::Verilator => {
            let v = verif::unit_program::check_scenario(&sc).map_err(|e| anyhow::anyhow!("{file}: {e:#}"))?;
            writeln!(super::out::stdout(), "{}", v.outcome.to_json_pretty())?;
            if !v.differences.is_empty() || v.mismatch.is_some() {
                let mut msg = format!("{file}: the Verilog ({}) differs from the golden model", v.top);
                for d in &v.differences {
                    msg += &format!("\n  {d}");
                }
                if let Some(m) = &v.mismatch {
                    msg += &format!("\n{m}");
                }
                anyhow::bail!(msg);
            }
            v.outcome
        }
    };
    if args.engine == Engine::Model {
        writeln!(super::out::stdout(), "{}", out.to_json_pretty())?;
    }
    if args.verify {
        let bad = out.mismatches(&sc);
        if !bad.is_empty() {
            anyhow::bail!("{file}: {} verdict(s) differ from `expect`:\n  {}", bad.len(), bad.join("\n  "));
        }
    }
    Ok(())
}
