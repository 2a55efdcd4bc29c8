//! Allocator throughput model (`mlugen alloc-bench`): the `arbiter` and the
//! cycle cost model.
//!
//! T requesters (warps; requester t runs on SM `t`, the `mp` of the hash)
//! each always have one request pending (closed loop). The arbiter is round
//! robin: after granting requester i it grants the next requester after i.
//! The unit serves one request at a time; a request takes the cycles the
//! heap reports (see heap.rs). In `always` mode the checker earns R checks per
//! cycle and steals the port for 2 cycles (two canary reads) per check,
//! between requests. A requester mallocs while it holds fewer than 8 live
//! chunks, frees at 16, and in between mallocs or frees with probability
//! 1/2; a free releases a random one of its chunks. Sizes are drawn uniformly from the given list.
use super::heap::{AllocError, CheckMode, Heap, HeapConfig};

#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub threads: u32,
    pub sizes: Vec<u64>,
    pub ops: u64,
    pub seed: u64,
    pub heap: HeapConfig,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchResult {
    pub check: &'static str,
    pub k_s: u64,
    pub k_mp: u64,
    pub ops: u64,
    pub mallocs: u64,
    pub frees: u64,
    pub exhausted: u64,
    pub cycles: u64,
    pub checker_cycles: u64,
    pub allocs_per_cycle: f64,
    pub ops_per_cycle: f64,
    pub mean_malloc_cycles: f64,
    pub mean_probes: f64,
    pub peak_live: usize,
    /// 1 - requested bytes / class bytes of live chunks (at the peak).
    pub internal_fragmentation: f64,
    /// 1 - requested bytes / bytes of pages in use (at the peak).
    pub page_fragmentation: f64,
    pub checker_index_bits: u32,
    pub checker_latency_bound_cycles: u64,
}

/// splitmix64: a small deterministic generator (no rand dependency).
pub struct SplitMix(pub u64);
impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        // The runtime's generator, one step on this state.
        let mut g = crate::runtime::SplitMix64(self.0);
        let v = g.next_u64();
        self.0 = g.0;
        v
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

pub fn run(cfg: &BenchConfig) -> Result<BenchResult, String> {
    if cfg.threads == 0 {
        return Err("threads: must be at least 1".into());
    }
    if cfg.sizes.is_empty() {
        return Err("sizes: at least one size is needed".into());
    }
    if cfg.heap.check == CheckMode::Always && cfg.heap.checker_rate >= 0.5 {
        return Err(format!("checker rate {}: must be < 0.5 (2 port reads per check)", cfg.heap.checker_rate));
    }
    let mut heap = Heap::new(cfg.heap.clone())?;
    for &s in &cfg.sizes {
        heap.class_for(s).map_err(|e| format!("sizes: {s}: {e:?}"))?;
    }
    let mut rng = SplitMix(cfg.seed);
    let mut owned: Vec<Vec<u64>> = vec![Vec::new(); cfg.threads as usize];
    let (mut cycles, mut checker_cycles, mut credit) = (0u64, 0u64, 0f64);
    let (mut mallocs, mut frees, mut exhausted, mut malloc_cycles, mut probes) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut peak_live, mut frag_int, mut frag_page) = (0usize, 0f64, 0f64);
    let mut bound = 0u64;
    for op in 0..cfg.ops {
        let t = (op % cfg.threads as u64) as usize; // round-robin grant
        let mine = &mut owned[t];
        let do_malloc = mine.len() < 8 || (mine.len() < 16 && rng.below(2) == 0);
        let c = if do_malloc {
            let size = cfg.sizes[rng.below(cfg.sizes.len() as u64) as usize];
            match heap.malloc(size, t as u64) {
                Ok(a) => {
                    mallocs += 1;
                    malloc_cycles += a.cycles;
                    probes += a.probes;
                    owned[t].push(a.ptr);
                    a.cycles
                }
                Err(AllocError::Exhausted { .. }) => {
                    exhausted += 1;
                    1 + heap.config().pages as u64 // a full failed probe
                }
                Err(e) => return Err(format!("unexpected {e:?}")),
            }
        } else {
            let i = rng.below(mine.len() as u64) as usize;
            let p = mine.swap_remove(i);
            frees += 1;
            heap.free(p).map_err(|e| format!("bench free failed: {e:?}"))?.cycles
        };
        cycles += c;
        if heap.live() > peak_live {
            peak_live = heap.live();
            let live = heap.live_chunks();
            let req: u64 = live.iter().map(|l| l.2).sum();
            let cls: u64 = live.iter().map(|l| l.3).sum();
            frag_int = 1.0 - req as f64 / cls as f64;
            frag_page = 1.0 - req as f64 / (heap.pages_in_use() as u64 * cfg.heap.page_size) as f64;
        }
        if cfg.heap.check == CheckMode::Always {
            // Checks earned during this request run now, each stealing 2 port
            // cycles, during which further credit accrues.
            credit += cfg.heap.checker_rate * c as f64;
            while credit >= 1.0 && !heap.checker().is_empty() {
                let (_, n) = heap.checker_run(1);
                credit -= n as f64;
                cycles += 2;
                checker_cycles += 2;
                credit += cfg.heap.checker_rate * 2.0;
            }
            if heap.checker().is_empty() {
                credit = 0.0;
            }
            bound = bound.max(heap.checker().latency_bound(heap.live()));
        }
    }
    Ok(BenchResult {
        check: cfg.heap.check.name(),
        k_s: cfg.heap.k_s,
        k_mp: cfg.heap.k_mp,
        ops: cfg.ops,
        mallocs,
        frees,
        exhausted,
        cycles,
        checker_cycles,
        allocs_per_cycle: mallocs as f64 / cycles.max(1) as f64,
        ops_per_cycle: (mallocs + frees) as f64 / cycles.max(1) as f64,
        mean_malloc_cycles: malloc_cycles as f64 / mallocs.max(1) as f64,
        mean_probes: probes as f64 / mallocs.max(1) as f64,
        peak_live,
        internal_fragmentation: frag_int,
        page_fragmentation: frag_page,
        checker_index_bits: heap.checker().index_bits(),
        checker_latency_bound_cycles: bound,
    })
}
