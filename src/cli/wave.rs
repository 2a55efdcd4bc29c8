//! `mlugen wave --out loadmeta_miss.vcd [--entries 8] [--structure bst]
//! [--latency 3] [--allocations 6]`: a VCD waveform of the MLU as an SM unit
//! serving a LOADMETA miss, the same LOADMETA as a hit and a MEMCHECK.G
//! (verif::wave says what runs). Prints a JSON summary (each request's
//! latency from the cycle it is taken to the cycle of its response; its
//! fault and location; the nodes read) on stdout.
use anyhow::Result;
use sim::config::Structure;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Output VCD file.
    #[arg(long)]
    pub out: PathBuf,
    /// MLB entries: 1, 2, 4, 8, 16 or 32.
    #[arg(long, default_value_t = 8)]
    pub entries: usize,
    /// Metadata structure: list or bst.
    #[arg(long, default_value = "bst")]
    pub structure: Structure,
    /// Metadata memory latency in cycles (1..=1000).
    #[arg(long, default_value_t = 3)]
    pub latency: u32,
    /// Allocations made before the LOADMETA (1..=1000); the lookup targets
    /// the first one, so a list walk visits all of them.
    #[arg(long, default_value_t = 6)]
    pub allocations: usize,
}

pub fn run(args: Args) -> Result<()> {
    let w = verif::wave::Wave { out: args.out, entries: args.entries, structure: args.structure, latency: args.latency, allocations: args.allocations };
    let summary = verif::wave::record(&w)?;
    writeln!(super::out::stdout(), "{}", serde_json::to_string_pretty(&summary)?)?;
    Ok(())
}
