//! `mlugen alloc-bench`: the canary allocator unit's throughput (allocations
//! per cycle), the overhead of check-on-free and of always-on detection
//! against the unchecked allocator, fragmentation, and the k_s / k_mp
//! sensitivity, in cycles of the cycle-level unit model (the RTL FSM's
//! timing, sim::canary::alloc_unit); `--workload pipeline`: the run-time overhead
//! of synthetic allocation kernels on the SM pipeline (eval::alloc_kernels).
use anyhow::{bail, Result};
use sim::canary::bench::{rate_csr, run as run_bench, BenchConfig, BenchResult};
use eval::alloc_kernels::{run_mode, AllocKernelConfig};
use sim::canary::alloc_unit::UnitTiming;
use sim::canary::hash::{DEFAULT_K_MP, DEFAULT_K_S};
use sim::canary::heap::{CheckMode, HeapConfig};
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    /// Requesters (warps, one per SM id) arbitrated round robin (1..=4096).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
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
    /// malloc/free operations per run (1..=10^8).
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    ops: u64,
    /// Heap pages, 4096 bytes each (16..=2^20: at least one region of 16 pages).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(16..=1 << 20))]
    pages: u32,
    /// Background checker rate R, chunks per cycle: n/256 (always mode: n <=
    /// 10 at the default latencies, a check holds the unit 25 cycles).
    #[arg(long, default_value_t = 0.03125)]
    rate: f64,
    /// The unit's canary memory port latency (cycles, 1..=100000).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    canary_latency: u64,
    /// allocator: closed-loop requesters on the unit; pipeline: synthetic
    /// allocation kernels on the SM pipeline (run-time overhead).
    #[arg(long, default_value = "allocator", value_parser = ["allocator", "pipeline"])]
    workload: String,
    /// pipeline: ALU instructions per allocation, comma separated (a sweep;
    /// each 0..=10^6, and warps x iters x (alu + accesses + 2) at most 10^8).
    #[arg(long, value_delimiter = ',', default_value = "0,100,1000,3000,10000,30000,100000")]
    alu: Vec<u32>,
    /// pipeline: warp accesses (store/load) over each chunk.
    #[arg(long, default_value_t = 4)]
    accesses: u32,
    /// pipeline: bytes per malloc.
    #[arg(long, default_value_t = 48)]
    size: u64,
    /// pipeline: malloc/compute/free rounds per warp.
    #[arg(long, default_value_t = 4)]
    iters: u32,
    /// pipeline: warps (requester = warp mod 8).
    #[arg(long, default_value_t = 8)]
    warps: usize,
    /// pipeline: SM memory latency of loads and stores (cycles).
    #[arg(long, default_value_t = 400)]
    mem_latency: u64,
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
    if a.sizes.iter().any(|&s| s == 0) {
        bail!("--sizes: a size of 0 is not a request (malloc(0) is the ZeroSize error)");
    }
    let timing = UnitTiming { mem_latency: a.canary_latency, ..UnitTiming::default() };
    if a.workload == "pipeline" {
        return run_pipeline(&a);
    }
    let cfg = |check: CheckMode, k_s: u64, k_mp: u64| BenchConfig {
        timing,
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
        let v = serde_json::json!({"model": "canary allocator unit, cycle-level model (RTL FSM timing)", "threads": a.threads, "sizes": a.sizes, "runs": runs, "k_sweep": sweep});
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(out, "canary allocator unit (cycle-level model, RTL FSM timing; canary latency {}): {} requesters, {} ops, sizes {:?}, k_s {}, k_mp {}", a.canary_latency, a.threads, a.ops, a.sizes, a.k_s, a.k_mp)?;
    writeln!(out, "{:<7} {:>10} {:>9} {:>9} {:>10} {:>8} {:>8} {:>9} {:>8} {:>9} {:>9}", "check", "cycles", "alloc/cy", "op/cy", "overhead%", "malloc", "free", "probes", "int.frag", "page.frag", "exhausted")?;
    for r in &results {
        let o = overhead(r).map(|o| format!("{o:.1}")).unwrap_or_else(|| "-".into());
        writeln!(out, "{:<7} {:>10} {:>9.4} {:>9.4} {:>10} {:>8.2} {:>8.2} {:>9.2} {:>8.3} {:>9.3} {:>9}", r.check, r.cycles, r.allocs_per_cycle, r.ops_per_cycle, o, r.mean_malloc_cycles, r.mean_free_cycles, r.mean_probes, r.internal_fragmentation, r.page_fragmentation, r.exhausted)?;
        if r.check == "always" {
            writeln!(out, "        checker: R = {} chunks/cycle, {} checks holding the unit {} cycles, live-list entry {} bits (vs 64), latency bound <= {} cycles", a.rate, r.checks, r.checker_cycles, r.checker_index_bits, r.checker_latency_bound_cycles)?;
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

/// `--workload pipeline`: the kernel in each check mode for every `--alu`.
fn run_pipeline(a: &Args) -> Result<()> {
    let rate = rate_csr(a.rate).map_err(|e| anyhow::anyhow!("--rate: {e}"))?;
    let configs: Vec<AllocKernelConfig> = a
        .alu
        .iter()
        .map(|&alu| AllocKernelConfig {
            warps: a.warps,
            size: a.size,
            accesses: a.accesses,
            alu,
            iters: a.iters,
            rate,
            slack: a.slack,
            mem_latency: a.mem_latency,
            canary_latency: a.canary_latency,
        })
        .collect();
    // Every row is checked before the first runs.
    for c in &configs {
        c.validate().map_err(|e| anyhow::anyhow!("alloc-bench --workload pipeline: --{e}"))?;
    }
    let mut rows = Vec::new();
    for c in configs {
        let go = |m| run_mode(&c, m).map_err(|e| anyhow::anyhow!("alloc-bench --workload pipeline: --{e}"));
        let runs = [go(CheckMode::Off)?, go(CheckMode::Free)?, go(CheckMode::Always)?];
        rows.push((c, runs));
    }
    let ov = |r: u64, b: u64| 100.0 * (r as f64 / b as f64 - 1.0);
    let mut out = std::io::stdout().lock();
    if a.json {
        let v: Vec<_> = rows
            .iter()
            .map(|(c, r)| serde_json::json!({"config": c, "runs": r, "overhead_free_percent": ov(r[1].cycles, r[0].cycles), "overhead_always_percent": ov(r[2].cycles, r[0].cycles)}))
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&serde_json::json!({"model": "synthetic allocation kernels on the SM pipeline model with the cycle-level canary unit", "rows": v}))?)?;
        return Ok(());
    }
    writeln!(out, "allocation kernels on the SM pipeline: {} warps x {} rounds of malloc({}) + {} accesses + ALU + free; memory latency {}, canary latency {}, checker {}/256 per cycle", a.warps, a.iters, a.size, a.accesses, a.mem_latency, a.canary_latency, rate)?;
    writeln!(out, "{:>8} {:>10} {:>10} {:>10} {:>8} {:>8} {:>7} {:>6}", "alu", "off", "free", "always", "free%", "always%", "checks", "errors")?;
    for (c, r) in &rows {
        let errors: u64 = r.iter().map(|x| x.alloc_errors).sum();
        writeln!(out, "{:>8} {:>10} {:>10} {:>10} {:>8.2} {:>8.2} {:>7} {:>6}", c.alu, r[0].cycles, r[1].cycles, r[2].cycles, ov(r[1].cycles, r[0].cycles), ov(r[2].cycles, r[0].cycles), r[2].unit_checks, errors)?;
    }
    writeln!(out, "paper (application run time): check-on-free 1-3%, always-on 28-35%")?;
    Ok(())
}
