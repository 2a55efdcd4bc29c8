//! Throughput of the golden model (no hardware counterpart): how fast the
//! model checks, so that trace replays and cosimulation reference runs stay
//! cheap. Used by `mlugen bench`.
//!
//! - MEMCHECK.G, compiler mode, warm MLB (every check a location hit): the
//!   hot path of every replay.
//! - LOADMETA hits (warm MLB range hits) and misses (MLB flushed before each
//!   lookup, so every lookup walks the structure) for list and bst.
use sim::config::{Mode, MluConfig, Replacement, Structure};
use sim::runtime::{Runtime, RuntimeConfig};
use std::hint::black_box;
use std::time::Instant;

/// One measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Rate {
    pub what: String,
    pub ops: u64,
    pub seconds: f64,
    /// Average traversal steps per op (LOADMETA misses).
    pub steps_per_op: f64,
}

impl Rate {
    pub fn per_second(&self) -> f64 {
        self.ops as f64 / self.seconds
    }
}

fn runtime(structure: Structure, entries: usize) -> Runtime {
    let mlu = MluConfig { entries, structure, mode: Mode::Compiler, replacement: Replacement::Plru, step_limit: 4096, unit: None };
    Runtime::new(RuntimeConfig { mlu, seed: 1, ..RuntimeConfig::default() }).expect("valid bench configuration")
}

/// MEMCHECK.G throughput with `entries` MLB entries, `entries` (at least 1)
/// live allocations all cached, `checks` checks.
pub fn memcheck_g_warm(entries: usize, checks: u64) -> Rate {
    let n = entries.max(1);
    let mut rt = runtime(Structure::Bst, entries);
    let ptrs: Vec<u64> = (0..n).map(|_| rt.malloc(256, None).expect("bench malloc")).collect();
    let locs: Vec<u64> = ptrs.iter().map(|&p| rt.loadmeta(p).expect("bench loadmeta")).collect();
    for (&p, &l) in ptrs.iter().zip(&locs) {
        rt.memcheck_g(p, 4, l).expect("warm-up check passes");
    }
    let mask = n.next_power_of_two() - 1;
    let t = Instant::now();
    let mut acc = 0u64;
    for i in 0..checks {
        let k = (i as usize) & mask;
        let k = if k < n { k } else { k - n };
        let p = ptrs[k] + (i & 0xF8);
        match rt.memcheck_g(black_box(p), 4, black_box(locs[k])) {
            Ok(a) => acc = acc.wrapping_add(a),
            Err(_) => panic!("bench check faulted"),
        }
    }
    let seconds = t.elapsed().as_secs_f64();
    black_box(acc);
    Rate { what: format!("MEMCHECK.G, warm {entries}-entry MLB (location hits)"), ops: checks, seconds, steps_per_op: 0.0 }
}

/// LOADMETA throughput over `allocs` allocations in `structure`: hits (warm
/// MLB, `entries` allocations cycled) or misses (MLB flushed before each).
pub fn loadmeta(structure: Structure, allocs: usize, entries: usize, hits: bool, ops: u64) -> Rate {
    let mut rt = runtime(structure, entries);
    let ptrs: Vec<u64> = (0..allocs).map(|_| rt.malloc(256, None).expect("bench malloc")).collect();
    let working = if hits { entries.max(1).min(allocs) } else { allocs };
    for &p in &ptrs[..working] {
        rt.loadmeta(p).expect("bench loadmeta");
    }
    let steps0 = rt.counters().steps;
    let t = Instant::now();
    let mut acc = 0u64;
    for i in 0..ops {
        // Odd stride: visits every allocation, in an order unrelated to the tree.
        let k = (i as usize).wrapping_mul(7) % working;
        if !hits {
            rt.flush_mlb();
        }
        acc = acc.wrapping_add(rt.loadmeta(black_box(ptrs[k] + 8)).expect("bench loadmeta"));
    }
    let seconds = t.elapsed().as_secs_f64();
    black_box(acc);
    let steps = rt.counters().steps - steps0;
    Rate {
        what: format!(
            "LOADMETA {} {}, {allocs} allocations",
            structure.name(),
            if hits { "hits (warm MLB)" } else { "misses (traversal)" }
        ),
        ops,
        seconds,
        steps_per_op: steps as f64 / ops as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miss_measurements_walk_the_expected_average_depth() {
        // 64 nodes, each looked up equally often: a list visits (64+1)/2 nodes
        // on average; a balanced bst has 1,2,4,8,16,32 nodes at depths 1..6
        // and 1 at depth 7: 328/64 = 5.125.
        let l = loadmeta(Structure::List, 64, 8, false, 64 * 10);
        assert_eq!(l.steps_per_op, 32.5);
        let b = loadmeta(Structure::Bst, 64, 8, false, 64 * 10);
        assert_eq!(b.steps_per_op, 5.125);
        let h = loadmeta(Structure::Bst, 64, 8, true, 1000);
        assert_eq!(h.steps_per_op, 0.0);
        let m = memcheck_g_warm(8, 1000);
        assert_eq!(m.ops, 1000);
    }
}
