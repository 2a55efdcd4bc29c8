//! The random stimulus of the unit's cosimulations: a heap of random
//! allocations, an endless stream of random requests over it, and the two
//! named streams (`Cold`, `Hot`) that `mlugen cosim` and the tests run
//! through [`UnitCosim::run`].
use crate::unit_driver::{UnitCosim, UnitRun};
use anyhow::Result;
use sim::canary::alloc_unit::rtl_heap_config;
use sim::canary::heap::{CheckMode, HeapConfig, CANARY_BYTES};
use sim::config::MluConfig;
use sim::device_heap::DEFAULT_DIRECTORY_BASE;
use sim::fault::Op;
use sim::meta_port::PortParams;
use sim::mlu_unit::{UnitParams, UnitRequest};
use sim::pointer::{tagged, untag, NO_META};
use sim::runtime::{Runtime, RuntimeConfig, SplitMix64};

/// `req_id` is 16 bits wide: ids repeat every 65,536 requests.
const ID_MASK: u32 = 0xFFFF;

/// A heap of `allocations` random-sized allocations (16..4,016 bytes) in a
/// runtime built for `cfg`'s structure and entry count.
pub fn heap(cfg: &MluConfig, allocations: usize, seed: u64) -> Result<Runtime> {
    let mut rt = Runtime::new(RuntimeConfig { mlu: cfg.clone(), seed, ..RuntimeConfig::default() })?;
    let mut rng = SplitMix64(seed);
    for _ in 0..allocations {
        rt.malloc(16 + rng.next_u64() % 4000, None)?;
    }
    Ok(rt)
}

/// [`heap`] with the device heap attached (sim::device_heap: the canary RTL
/// unit's geometry, tags seeded by `seed`): `chunks` in-kernel mallocs of
/// 1..240 bytes from random requesters, every third freed. Returns the
/// runtime and every allocation as (tagged pointer, size, location), host
/// ones first, for [`RandomRequests::over`].
pub fn with_device_heap(cfg: &MluConfig, allocations: usize, chunks: usize, seed: u64) -> Result<(Runtime, Vec<(u64, u64, u64)>)> {
    let mut rt = Runtime::new(RuntimeConfig { mlu: cfg.clone(), seed, ..RuntimeConfig::default() })?;
    let heap = HeapConfig { tag_seed: Some((seed % 65535) as u16 + 1), ..rtl_heap_config(CheckMode::Free, 0) };
    rt.attach_device_heap(heap, DEFAULT_DIRECTORY_BASE)?;
    let mut rng = SplitMix64(seed);
    for _ in 0..allocations {
        rt.malloc(16 + rng.next_u64() % 4000, None)?;
    }
    let mut allocs: Vec<(u64, u64, u64)> = rt.allocations().iter().map(|a| (a.ptr, a.size, a.location)).collect();
    for i in 0..chunks {
        let size = 1 + rng.below(240);
        let Ok(p) = rt.device_malloc(size, rng.below(8)) else { continue };
        let loc = rt.device_heap().expect("attached").location(untag(p) - CANARY_BYTES);
        allocs.push((p, size, loc));
        if i % 3 == 0 {
            rt.device_free(p).map_err(|e| anyhow::anyhow!("device_free: {e:?}"))?;
        }
    }
    rt.take_host_ops();
    Ok((rt, allocs))
}

/// An endless stream of random requests over `rt`'s allocations: 15%
/// LOADMETA, 75% MEMCHECK.G, 6% MEMCHECK.S, 3% INVALIDATE, 1% FLUSH. Lane
/// pointers are mostly in bounds, with untagged, stale-tag and one-past-end
/// pointers; 1 in 10 locations is 0, NO_META or another allocation's. Ids
/// count up modulo 2^16 (the width of `req_id`).
pub struct RandomRequests {
    allocs: Vec<(u64, u64, u64)>,
    lanes: usize,
    rng: SplitMix64,
    next_id: u32,
}

impl RandomRequests {
    pub fn new(rt: &Runtime, lanes: usize, seed: u64) -> RandomRequests {
        let allocs = rt.allocations().iter().map(|a| (a.ptr, a.size, a.location)).collect();
        Self::over(allocs, lanes, seed)
    }
    /// The same over the allocations `allocs`: (tagged pointer, size,
    /// location) each.
    pub fn over(allocs: Vec<(u64, u64, u64)>, lanes: usize, seed: u64) -> RandomRequests {
        RandomRequests { allocs, lanes, rng: SplitMix64(seed), next_id: 0 }
    }
}

impl Iterator for RandomRequests {
    type Item = UnitRequest;
    fn next(&mut self) -> Option<UnitRequest> {
        let id = self.next_id;
        self.next_id = (id + 1) & ID_MASK;
        let k = self.rng.next_u64() as usize % self.allocs.len();
        let (ptr, size, loc) = self.allocs[k];
        let x = self.rng.next_u64();
        let lane_ptr = |i: usize| -> u64 {
            match x.rotate_left(i as u32 * 7) % 64 {
                0 => 0x1000 + i as u64,
                1 => tagged(0x55, untag(ptr)),
                2 => ptr + size,
                h => ptr + (h * 13 + i as u64) % size,
            }
        };
        let op = match x % 100 {
            0..=14 => Op::LoadMeta,
            15..=89 => Op::MemcheckG,
            90..=95 => Op::MemcheckS,
            96..=98 => Op::Invalidate,
            _ => Op::Flush,
        };
        let loc = match (x >> 20) % 20 {
            0 => 0,
            1 => NO_META,
            2 => self.allocs[(k + 1) % self.allocs.len()].2,
            _ => loc,
        };
        let lanes = self.lanes;
        let mut r = UnitRequest {
            id,
            op,
            mask: if lanes == 1 { 1 } else { (x >> 24) as u32 | 1 },
            ptrs: (0..lanes).map(lane_ptr).collect(),
            width: [1, 2, 4, 8, 16][(x >> 40) as usize % 5],
            loc,
            sbase: 0x100,
            ssize: 0xC00,
        };
        match op {
            Op::MemcheckS => r.ptrs = (0..lanes).map(|i| (x >> 8) % 0x1000 + 4 * i as u64).collect(),
            Op::LoadMeta => r.mask = 1,
            _ => {}
        }
        Some(r)
    }
}

/// The random request streams of the unit's cosimulations
/// ([`RandomRequests`] over a heap): `Cold`, 40 allocations (mostly
/// misses) with a slow port (latency 1..120, 70% ready); `Hot`, 12
/// allocations (hits and misses mixed, walks back to back) with a fast one
/// (latency 1..30, 90% ready). Both reorder and fail 0.2% of the reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Cold,
    Hot,
}

impl UnitCosim {
    /// `n` requests of `stream`, seeded by `seed` (heap, requests and port),
    /// through [`UnitCosim::run`].
    pub fn run_random(&mut self, p: &UnitParams, stream: Stream, seed: u64, n: u64) -> Result<UnitRun> {
        let (allocs, max_latency, ready_percent) = match stream {
            Stream::Cold => (40, 120, 70),
            Stream::Hot => (12, 30, 90),
        };
        let rt = heap(&p.cfg, allocs, seed)?;
        let port = PortParams { min_latency: 1, max_latency, ready_percent, errors_per_million: 2000, shuffle: true, seed };
        self.run(p, &rt, RandomRequests::new(&rt, p.lanes, seed * 31), n, port)
    }
}
