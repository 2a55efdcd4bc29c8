//! `mlugen bench`: the golden model's throughput on one core (the model is
//! single-threaded). Prints MEMCHECK.G checks per second with a warm MLB and
//! LOADMETA hit and miss throughput for list and bst.
use anyhow::{bail, Result};
use std::io::Write;
use eval::model_bench as bench;
use sim::config::{MluConfig, Structure, Target};

#[derive(clap::Args)]
pub struct Args {
    /// MLB entries of the MEMCHECK.G measurement (1, 2, 4, 8, 16, 32).
    #[arg(long, default_value_t = 8)]
    entries: usize,
    /// Number of MEMCHECK.G checks to time (1..=10^10; about 100 M/s).
    #[arg(long, default_value_t = 200_000_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000_000))]
    checks: u64,
    /// Number of LOADMETA operations per LOADMETA measurement (1..=10^7).
    #[arg(long, default_value_t = 2_000_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    loadmetas: u64,
    /// Allocations in the structure for the LOADMETA measurements
    /// (1..=4096: a list walk to the oldest one must stay within the default
    /// step limit of 4096 nodes).
    #[arg(long, default_value_t = 64, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    allocs: usize,
}

pub fn run(a: Args) -> Result<()> {
    let cfg = MluConfig { entries: a.entries, ..MluConfig::default() };
    if let Err(e) = cfg.validate(Target::Hardware) {
        bail!("--entries: {}", e.message);
    }
    // writeln! rather than println!: a closed pipe (`| head`) is an error
    // return, not a panic.
    let mut out = std::io::stdout().lock();
    writeln!(out, "mlugen golden model, one core (single-threaded)")?;
    let mut print = |r: &bench::Rate| -> Result<()> {
        let extra = if r.steps_per_op > 0.0 { format!(", {:.2} steps/op", r.steps_per_op) } else { String::new() };
        writeln!(out, "{:<58} {:>10.2} M ops/s  ({} ops in {:.3} s{extra})", r.what, r.per_second() / 1e6, r.ops, r.seconds)?;
        out.flush()?;
        Ok(())
    };
    print(&bench::memcheck_g_warm(a.entries, a.checks))?;
    for s in [Structure::List, Structure::Bst] {
        print(&bench::loadmeta(s, a.allocs, a.entries, true, a.loadmetas))?;
        print(&bench::loadmeta(s, a.allocs, a.entries, false, a.loadmetas))?;
    }
    Ok(())
}
