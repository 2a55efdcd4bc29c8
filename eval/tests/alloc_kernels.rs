//! The alloc-bench model on the cycle-level unit: its cycle accounting holds
//! exactly (always = free + checks + checker insert/remove cycles), the
//! canaries' cost is the unit's SipHash/memory rule, bad parameters named.
use sim::canary::bench::{rate_csr, run, BenchConfig};
use sim::canary::heap::{CheckMode, HeapConfig};
use eval::alloc_kernels::{run_mode, AllocKernelConfig};
use sim::canary::alloc_unit::UnitTiming;

fn cfg(check: CheckMode, rate: f64) -> BenchConfig {
    BenchConfig {
        threads: 8,
        sizes: vec![16, 50, 100, 300, 1000], // 50 + 16 canary bytes moves up a class
        ops: 20_000,
        seed: 3,
        heap: HeapConfig { check, checker_rate: rate, pages: 128, ..HeapConfig::default() },
        timing: UnitTiming::default(),
    }
}

#[test]
fn always_on_is_check_on_free_plus_checks_and_list_updates() {
    let free = run(&cfg(CheckMode::Free, 0.03125)).unwrap();
    let always = run(&cfg(CheckMode::Always, 0.03125)).unwrap();
    // All requesters always wait, so grants are strict round robin whatever
    // the timing: the same heap decisions.
    assert_eq!((always.mallocs, always.frees, always.mean_probes), (free.mallocs, free.frees, free.mean_probes));
    // Each check holds the unit 5 + 2 * 10 cycles; a malloc pays 1 cycle for
    // the list insert, a free 4 (one move) or 6 (two moves) for the removal.
    assert_eq!(always.checker_cycles, 25 * always.checks);
    let list = always.mallocs + 4 * always.frees + 2 * always.two_move_removes;
    assert_eq!(always.cycles, free.cycles + always.checker_cycles + list);
    assert!(always.checks > 1000 && always.checker_latency_bound_cycles >= (always.peak_live as f64 / 0.03125) as u64);
    assert_eq!(free.allocs_per_cycle, free.mallocs as f64 / free.cycles as f64);
}

#[test]
fn canaries_cost_two_siphashes_per_malloc_and_two_checked_reads_per_free() {
    let off = run(&cfg(CheckMode::Off, 0.125)).unwrap();
    let free = run(&cfg(CheckMode::Free, 0.125)).unwrap();
    // Off: a free is 4 cycles; free mode: 2 + 2 * (9 + 1) + 2 = 24.
    assert_eq!((off.mean_free_cycles, free.mean_free_cycles), (4.0, 24.0));
    // A malloc: 2 + P + 1 (off) vs 2 + P + 19 (free): 18 more beyond probes.
    let extra = free.mean_malloc_cycles - free.mean_probes - (off.mean_malloc_cycles - off.mean_probes);
    assert!((extra - 18.0).abs() < 1e-9, "{extra}");
    assert!(free.internal_fragmentation > off.internal_fragmentation);
    // A slower canary memory port costs the free, not the malloc (posted writes).
    let slow = run(&BenchConfig { timing: UnitTiming { mem_latency: 20, ..UnitTiming::default() }, ..cfg(CheckMode::Free, 0.125) }).unwrap();
    assert_eq!(slow.mean_free_cycles, 2.0 + 2.0 * 21.0 + 2.0);
    assert_eq!(slow.mean_malloc_cycles, free.mean_malloc_cycles);
}

#[test]
fn bench_rejects_bad_parameters() {
    let e = run(&BenchConfig { threads: 0, ..cfg(CheckMode::Off, 0.125) }).unwrap_err();
    assert!(e.starts_with("threads"), "{e}");
    let e = run(&cfg(CheckMode::Always, 0.3)).unwrap_err();
    assert!(e.contains("checker rate 0.3"), "{e}");
    // 11/256 with 25-cycle checks would never let a request in.
    let e = run(&cfg(CheckMode::Always, 11.0 / 256.0)).unwrap_err();
    assert!(e.starts_with("rate: 11/256 checks per cycle starves requests"), "{e}");
    assert_eq!(rate_csr(0.03125), Ok(8));
    let e = run(&BenchConfig { sizes: vec![5000], ..cfg(CheckMode::Free, 0.125) }).unwrap_err();
    assert!(e.starts_with("sizes: 5000"), "{e}");
}

fn kcfg(alu: u32) -> AllocKernelConfig {
    AllocKernelConfig { warps: 8, size: 48, accesses: 4, alu, iters: 3, rate: 8, slack: 0, mem_latency: 100, canary_latency: 1 }
}

#[test]
fn kernel_overhead_falls_with_compute_per_allocation() {
    let ov = |alu| {
        let off = run_mode(&kcfg(alu), CheckMode::Off).unwrap();
        let free = run_mode(&kcfg(alu), CheckMode::Free).unwrap();
        assert_eq!((off.mallocs, free.mallocs, free.frees, free.free_overflows), (24, 24, 24, 0));
        free.cycles as f64 / off.cycles as f64 - 1.0
    };
    let (a, b) = (ov(0), ov(20_000));
    assert!(a > 0.05 && b.abs() < 0.02, "overheads {a} {b}");
    let e = run_mode(&AllocKernelConfig { size: 241, ..kcfg(0) }, CheckMode::Free).unwrap_err();
    assert!(e.starts_with("size: must be 1..=240"), "{e}");
}
