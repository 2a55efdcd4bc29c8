//! The alloc-bench model: the cost model's accounting holds exactly.
use sim::canary::bench::{run, BenchConfig};
use sim::canary::heap::{CheckMode, HeapConfig};

fn cfg(check: CheckMode, rate: f64) -> BenchConfig {
    BenchConfig {
        threads: 8,
        sizes: vec![16, 50, 100, 300, 1000], // 50 + 16 canary bytes moves up a class
        ops: 20_000,
        seed: 3,
        heap: HeapConfig { check, checker_rate: rate, pages: 128, ..HeapConfig::default() },
    }
}

#[test]
fn always_on_is_check_on_free_plus_stolen_checker_cycles() {
    let free = run(&cfg(CheckMode::Free, 0.1)).unwrap();
    let always = run(&cfg(CheckMode::Always, 0.1)).unwrap();
    // The checker does not change heap decisions, only steals port cycles.
    assert_eq!((always.mallocs, always.frees), (free.mallocs, free.frees));
    assert_eq!(always.cycles - always.checker_cycles, free.cycles);
    // It takes 2 port cycles per check at R checks per cycle: a 2R share.
    let share = always.checker_cycles as f64 / always.cycles as f64;
    assert!((share - 0.2).abs() < 0.01, "checker share {share}");
    assert!(always.checker_latency_bound_cycles >= (always.peak_live as f64 / 0.1) as u64);
    assert_eq!(free.allocs_per_cycle, free.mallocs as f64 / free.cycles as f64);
}

#[test]
fn canaries_cost_four_port_cycles_per_malloc_free_pair_at_most_plus_probe_changes() {
    let off = run(&cfg(CheckMode::Off, 0.1)).unwrap();
    let free = run(&cfg(CheckMode::Free, 0.1)).unwrap();
    assert!(off.cycles < free.cycles);
    // Same request stream; canaries add 2 cycles per malloc and 2 per free,
    // the rest of the difference is class/probe changes from the 16 bytes.
    let canary = 2 * (free.mallocs + free.frees);
    let rest = free.cycles as i64 - off.cycles as i64 - canary as i64;
    assert!(rest.unsigned_abs() < off.cycles / 10, "non-canary difference {rest}");
    assert!(free.internal_fragmentation > off.internal_fragmentation);
}

#[test]
fn bench_rejects_bad_parameters() {
    let e = run(&BenchConfig { threads: 0, ..cfg(CheckMode::Off, 0.1) }).unwrap_err();
    assert!(e.starts_with("threads"), "{e}");
    let e = run(&cfg(CheckMode::Always, 0.5)).unwrap_err();
    assert!(e.contains("0.5"), "{e}");
    let e = run(&BenchConfig { sizes: vec![5000], ..cfg(CheckMode::Free, 0.1) }).unwrap_err();
    assert!(e.starts_with("sizes: 5000"), "{e}");
}
