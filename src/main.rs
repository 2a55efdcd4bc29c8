//! `mlugen`: the command-line front end. Each subcommand lives in its own
//! module under `src/cli/` and only parses arguments and prints; the work is
//! done by the `sim`, `hw`, `testbench` and `synth` crates.
use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(name = "mlugen", version, about = "GPUArmor Metadata Loading Unit generator")]
struct Cli {
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
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(a) => cli::check::run(a),
        Command::Bench(a) => cli::bench::run(a),
        Command::Trace(a) => cli::trace::run(a),
        Command::Generate(a) => cli::generate::run(a),
        Command::Synth(a) => cli::synth::run(a),
        Command::Wave(a) => cli::wave::run(a),
        Command::Sweep(a) => cli::sweep::run(a),
        Command::AllocBench(a) => cli::alloc_bench::run(a),
        Command::Cosim(a) => cli::cosim::run(a),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mlugen: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
