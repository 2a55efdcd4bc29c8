//! `mlugen alloc-bench`: the canary allocator golden model's modeled
//! throughput (allocations per cycle), the overhead of check-on-free and of
//! always-on detection against the unchecked allocator, fragmentation, and the
//! k_s / k_mp sensitivity. Cycles are the model's cost model (docs/canary.md),
//! not a measured RTL: the RTL unit is not built yet.
use anyhow::{bail, Result};
use sim::canary::bench::{run as run_bench, BenchConfig, BenchResult};
use sim::canary::hash::{DEFAULT_K_MP, DEFAULT_K_S};
use sim::canary::heap::{CheckMode, HeapConfig};
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    /// Requesters (warps, one per SM id) arbitrated round robin.
    #[arg(long, default_value_t = 32)]
    threads: u32,
    /// Request sizes in bytes, comma separated, drawn uniformly.
    #[arg(long, value_delimiter = ',', default_value = "16,24,48,100,200,500,1000")]
    sizes: Vec<u64>,
    /// Check mode; without it all three are run and compared.
    #[arg(long, value_parser = ["off", "free", "always"])]
    check: Option<String>,
    #[arg(long, default_value_t = DEFAULT_K_S)]
    k_s: u64,
    #[arg(long, default_value_t = DEFAULT_K_MP)]
    k_mp: u64,
    /// malloc/free operations per run.
    #[arg(long, default_value_t = 200_000)]
    ops: u64,
    /// Heap pages (4096 bytes each).
    #[arg(long, default_value_t = 1024)]
    pages: u32,
    /// Background checker rate R, chunks per cycle (< 0.5).
    #[arg(long, default_value_t = 0.125)]
    rate: f64,
    /// Over-provisioning slack in bytes before the rear canary.
    #[arg(long, default_value_t = 0)]
    slack: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Skip the k_s / k_mp sensitivity grid.
    #[arg(long)]
    no_sweep: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn mode(s: &str) -> CheckMode {
    match s {
        "off" => CheckMode::Off,
        "free" => CheckMode::Free,
        _ => CheckMode::Always,
    }
}

pub fn run(a: Args) -> Result<()> {
    if a.ops == 0 {
        bail!("--ops must be at least 1");
    }
    if a.sizes.iter().any(|&s| s == 0) {
        bail!("--sizes: a size of 0 is not a request (malloc(0) is the ZeroSize error)");
    }
    let cfg = |check: CheckMode, k_s: u64, k_mp: u64| BenchConfig {
        threads: a.threads,
        sizes: a.sizes.clone(),
        ops: a.ops,
        seed: a.seed,
        heap: HeapConfig { pages: a.pages, check, k_s, k_mp, slack: a.slack, checker_rate: a.rate, ..HeapConfig::default() },
    };
    let go = |c: BenchConfig| -> Result<BenchResult> {
        run_bench(&c).map_err(|e| anyhow::anyhow!("alloc-bench: {e}"))
    };
    let modes: Vec<CheckMode> = match &a.check {
        Some(m) => vec![mode(m)],
        None => vec![CheckMode::Off, CheckMode::Free, CheckMode::Always],
    };
    let mut results = Vec::new();
    for &m in &modes {
        results.push(go(cfg(m, a.k_s, a.k_mp))?);
    }
    let base = results.iter().find(|r| r.check == "off").map(|r| r.cycles);
    let overhead = |r: &BenchResult| base.map(|b| 100.0 * (r.cycles as f64 / b as f64 - 1.0));
    let mut sweep = Vec::new();
    if !a.no_sweep {
        let m = modes[modes.len().min(2) - 1];
        for k_s in [1, 7, DEFAULT_K_S] {
            for k_mp in [0, 1, DEFAULT_K_MP] {
                sweep.push(go(BenchConfig { ops: a.ops.min(50_000), ..cfg(m, k_s, k_mp) })?);
            }
        }
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        let runs: Vec<_> = results
            .iter()
            .map(|r| serde_json::json!({"result": r, "overhead_vs_off_percent": overhead(r)}))
            .collect();
        let v = serde_json::json!({"model": "canary allocator golden model (modeled cycles)", "threads": a.threads, "sizes": a.sizes, "runs": runs, "k_sweep": sweep});
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(out, "canary allocator golden model: {} requesters, {} ops, sizes {:?}, k_s {}, k_mp {} (modeled cycles)", a.threads, a.ops, a.sizes, a.k_s, a.k_mp)?;
    writeln!(out, "{:<7} {:>10} {:>9} {:>9} {:>10} {:>9} {:>8} {:>9} {:>9}", "check", "cycles", "alloc/cy", "op/cy", "overhead%", "probes", "int.frag", "page.frag", "exhausted")?;
    for r in &results {
        let o = overhead(r).map(|o| format!("{o:.1}")).unwrap_or_else(|| "-".into());
        writeln!(out, "{:<7} {:>10} {:>9.4} {:>9.4} {:>10} {:>9.2} {:>8.3} {:>9.3} {:>9}", r.check, r.cycles, r.allocs_per_cycle, r.ops_per_cycle, o, r.mean_probes, r.internal_fragmentation, r.page_fragmentation, r.exhausted)?;
        if r.check == "always" {
            writeln!(out, "        checker: R = {} chunks/cycle, {} port cycles stolen, live-list entry {} bits (vs 64), latency bound <= {} cycles", a.rate, r.checker_cycles, r.checker_index_bits, r.checker_latency_bound_cycles)?;
        }
    }
    if !sweep.is_empty() {
        writeln!(out, "k_s / k_mp sensitivity ({} mode, {} ops):", sweep[0].check, sweep[0].ops)?;
        writeln!(out, "{:>7} {:>7} {:>9} {:>9} {:>9}", "k_s", "k_mp", "alloc/cy", "probes", "page.frag")?;
        for r in &sweep {
            writeln!(out, "{:>7} {:>7} {:>9.4} {:>9.2} {:>9.3}", r.k_s, r.k_mp, r.allocs_per_cycle, r.mean_probes, r.page_fragmentation)?;
        }
    }
    Ok(())
}
