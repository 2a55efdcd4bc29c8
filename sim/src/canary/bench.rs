//! Allocator throughput (`mlugen alloc-bench`): T requesters in a closed
//! loop on the cycle-level unit ([`CanaryUnit`], the RTL FSM's timing, equal
//! to the RTL's cycle for cycle on its geometry; on the bench's larger heap
//! the same FSM extrapolated, see unit.rs).
//!
//! Each requester (requester t is the `mp` of the hash) presents its next
//! request as soon as it has its previous response; the unit's round-robin
//! arbiter grants one at a time. A requester mallocs while it holds fewer
//! than 8 live chunks, frees at 16, and in between mallocs or frees with
//! probability 1/2; a free releases a random one of its chunks. Sizes are
//! drawn uniformly from the given list. Always mode: the background checks
//! (rate/256 per cycle, about 25 cycles each) go before waiting requests.
use super::heap::{AllocError, CheckMode, HeapConfig};
use super::alloc_unit::{CanaryUnit, Outcome, Request, UnitTiming};

#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub threads: u32,
    pub sizes: Vec<u64>,
    pub ops: u64,
    pub seed: u64,
    pub heap: HeapConfig,
    /// The unit's FSM constants (SipHash and canary memory latency).
    pub timing: UnitTiming,
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
    /// Grant to response of successful mallocs / frees.
    pub mean_malloc_cycles: f64,
    pub mean_free_cycles: f64,
    /// Probe cycles per successful malloc.
    pub mean_probes: f64,
    /// Background checks, and frees whose checker removal took two moves.
    pub checks: u64,
    pub two_move_removes: u64,
    pub peak_live: usize,
    /// 1 - requested bytes / class bytes of live chunks (at the peak).
    pub internal_fragmentation: f64,
    /// 1 - requested bytes / bytes of pages in use (at the peak).
    pub page_fragmentation: f64,
    pub checker_index_bits: u32,
    pub checker_latency_bound_cycles: u64,
}

pub fn run(cfg: &BenchConfig) -> Result<BenchResult, String> {
    if cfg.threads == 0 {
        return Err("threads: must be at least 1".into());
    }
    if cfg.sizes.is_empty() {
        return Err("sizes: at least one size is needed".into());
    }
    let rate = rate_csr(cfg.heap.checker_rate)?;
    let mut unit = CanaryUnit::new(cfg.heap.clone(), cfg.threads as usize, rate, cfg.timing)?;
    for &s in &cfg.sizes {
        unit.heap().class_for(s).map_err(|e| format!("sizes: {e}"))?;
    }
    let mut rng = crate::runtime::SplitMix64(cfg.seed);
    let t = cfg.threads as usize;
    let mut owned: Vec<Vec<u64>> = vec![Vec::new(); t];
    let mut reqs: Vec<Option<Request>> = vec![None; t];
    let (mut issued, mut answered, mut exhausted) = (0u64, 0u64, 0u64);
    let (mut peak_live, mut frag_int, mut frag_page) = (0usize, 0f64, 0f64);
    let mut bound = 0u64;
    let mut waiting = vec![false; t];
    while answered < cfg.ops {
        // Closed loop: every requester not waiting presents its next request.
        for i in 0..t {
            if reqs[i].is_none() && !waiting[i] && issued < cfg.ops {
                let mine = &mut owned[i];
                let do_malloc = mine.len() < 8 || (mine.len() < 16 && rng.below(2) == 0);
                reqs[i] = Some(if do_malloc {
                    Request { free: false, arg: cfg.sizes[rng.below(cfg.sizes.len() as u64) as usize] }
                } else {
                    let j = rng.below(mine.len() as u64) as usize;
                    Request { free: true, arg: mine.swap_remove(j) }
                });
                issued += 1;
            }
        }
        let out = unit.step(&reqs);
        if let Some(g) = out.grant {
            reqs[g] = None;
            waiting[g] = true;
        }
        if let Some(r) = out.resp {
            answered += 1;
            waiting[r.id] = false;
            match r.outcome {
                Outcome::Malloc(Ok(a)) => owned[r.id].push(a.ptr),
                Outcome::Malloc(Err(AllocError::Exhausted { .. })) => exhausted += 1,
                Outcome::Malloc(Err(e)) => return Err(format!("malloc failed: {e}")),
                Outcome::Free(Ok(_)) => {}
                Outcome::Free(Err(e)) => return Err(format!("bench free failed: {e:?}")),
            }
            let heap = unit.heap();
            if heap.live() > peak_live {
                peak_live = heap.live();
                let live = heap.live_chunks();
                let req: u64 = live.iter().map(|l| l.2).sum();
                let cls: u64 = live.iter().map(|l| l.3).sum();
                frag_int = 1.0 - req as f64 / cls as f64;
                frag_page = 1.0 - req as f64 / (heap.pages_in_use() as u64 * cfg.heap.page_size) as f64;
            }
            if cfg.heap.check == CheckMode::Always {
                bound = bound.max(heap.checker().latency_bound(heap.live()));
            }
        }
    }
    let st = unit.stats.clone();
    let cycles = unit.cycle();
    Ok(BenchResult {
        check: cfg.heap.check.name(),
        k_s: cfg.heap.k_s,
        k_mp: cfg.heap.k_mp,
        ops: cfg.ops,
        mallocs: st.mallocs_ok,
        frees: st.frees_ok,
        exhausted,
        cycles,
        checker_cycles: st.check_cycles,
        allocs_per_cycle: st.mallocs_ok as f64 / cycles.max(1) as f64,
        ops_per_cycle: (st.mallocs_ok + st.frees_ok) as f64 / cycles.max(1) as f64,
        mean_malloc_cycles: st.malloc_cycles as f64 / st.mallocs_ok.max(1) as f64,
        mean_free_cycles: st.free_cycles as f64 / st.frees_ok.max(1) as f64,
        mean_probes: st.probe_cycles as f64 / st.mallocs_ok.max(1) as f64,
        checks: st.checks,
        two_move_removes: st.two_move_removes,
        peak_live,
        internal_fragmentation: frag_int,
        page_fragmentation: frag_page,
        checker_index_bits: unit.heap().checker().index_bits(),
        checker_latency_bound_cycles: bound,
    })
}

/// The checker rate CSR (rate / 256 checks per cycle) for a rate R in
/// checks per cycle: R * 256 must be a whole number in 1..=255.
pub fn rate_csr(r: f64) -> Result<u8, String> {
    let x = r * 256.0;
    if !(x >= 1.0 && x <= 255.0) || (x - x.round()).abs() > 1e-9 {
        return Err(format!("checker rate {r}: the unit's rate CSR is n/256 checks per cycle, n = 1..=255 (e.g. 0.125 = 32/256)"));
    }
    Ok(x.round() as u8)
}
