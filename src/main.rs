//! `mlugen`: the command-line front end. Each subcommand lives in its own
//! module under `src/cli/` and only parses arguments and prints; the work is
//! done by the `sim`, `hw`, `testbench` and `synth` crates.
use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(name = "mlugen", version, about = "GPUArmor Metadata Loading Unit generator")]
struct Cli {
    /// No progress output on stderr (errors and warnings are still printed).
    #[arg(long, short, global = true)]
    quiet: bool,
    /// The mlugen source tree (verilog_out/, synth/reports/, pdk/, build/):
    /// needed only by the commands that read or write project files. Default:
    /// `$MLUGEN_PROJECT`, else the current directory if it is one. An
    /// installed binary never looks at the path it was compiled from.
    #[arg(long, global = true, value_name = "DIR")]
    project: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (spec section 10) and print the results as JSON.
    Check(cli::check::Args),
    /// Measure the golden model's MEMCHECK.G throughput.
    Bench(cli::bench::Args),
    /// Summarise a gpuarmor-trace v1 file (validates it line by line).
    Trace(cli::trace::Args),
    /// Emit the MLU (and its blocks) as Verilog with a JSON manifest.
    Generate(cli::generate::Args),
    /// Synthesize with Yosys/ABC and time/power with OpenSTA.
    Synth(cli::synth::Args),
    /// Write a VCD of the RTL MLU: a LOADMETA miss, its traversal and fill, then hits.
    Wave(cli::wave::Args),
    /// Trace-driven evaluation: slowdown and MLB hit rate over MLB sizes, structures and modes.
    Sweep(cli::sweep::Args),
    /// Canary allocator model: allocations per cycle, check overheads, fragmentation, k_s/k_mp.
    AllocBench(cli::alloc_bench::Args),
    /// Run the emitted Verilog under Verilator against the golden model.
    Cosim(cli::cosim::Args),
    /// Combine the JSON of `cosim --shard` jobs into one.
    Merge(cli::merge::Args),
    /// Record the vector files of the standalone Verilog testbenches (verilog_out/tb/).
    Vectors(cli::vectors::Args),
}

fn main() -> std::process::ExitCode {
    // Usage errors exit 1 like every other error (clap's own default is 2);
    // --help and --version exit 0.
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { std::process::ExitCode::FAILURE } else { std::process::ExitCode::SUCCESS };
        }
    };
    cli::progress::set_quiet(cli.quiet);
    let result = cli::project::init(cli.project.as_deref()).and_then(|()| match cli.command {
        Command::Check(a) => cli::check::run(a),
        Command::Bench(a) => cli::bench::run(a),
        Command::Trace(a) => cli::trace::run(a),
        Command::Generate(a) => cli::generate::run(a),
        Command::Synth(a) => cli::synth::run(a),
        Command::Wave(a) => cli::wave::run(a),
        Command::Sweep(a) => cli::sweep::run(a),
        Command::AllocBench(a) => cli::alloc_bench::run(a),
        Command::Cosim(a) => cli::cosim::run(a),
        Command::Merge(a) => cli::merge::run(a),
        Command::Vectors(a) => cli::vectors::run(a),
    });
    // Whatever is still buffered must reach stdout, or the run failed (a full
    // disk is an error, not a silent truncation).
    let result = result.and_then(|()| {
        use std::io::Write;
        std::io::stdout().flush().map_err(|e| anyhow::Error::new(e).context("writing to stdout"))
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // A reader that went away (`| head`) ends the run quietly, as Unix
        // tools do; nothing else on stdout could be seen anyway.
        Err(e) if cli::out::is_broken_pipe(&e) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mlugen: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
