//! GPUArmor's MLU in the SM model: the checked run.
//!
//! The timing follows the MLU unit's rules (spec section 6,
//! `sim::mlu_unit`): one request accepted per cycle; an MLB hit answered at
//! the unit's fixed latency (1 + m + c); a miss takes a miss slot at stage
//! C and waits on the walk in flight for its key (merged: a range lookup's
//! key is its address, a location lookup's its location) or on one of K
//! walkers; a walk reads its nodes one after another, each a 32-byte sector
//! and 2 cycles of the walker's own; its misses replay into stage A one per
//! cycle, taking the cycle from new requests, and free their slots.
//! Back-pressure is the unit's: no request is taken while the free slots
//! could not hold a miss of every request before stage C and of this one
//! (hits included). Whether a lookup hits is decided by the golden MLB
//! itself (`sim::mlb::Mlb`: its range and location searches, replacement
//! and fill rules), holding the real allocations of the trace. What is
//! abstracted: requests are timed as events, not cycle by cycle, and a
//! walk's nodes come from the structure's shape over the live allocations
//! rather than from memory. [`crate::unit_agreement`] measures how close
//! this comes to the cycle model on the same requests (eval/README.md
//! section 1).
//!
//! The compiler pass (spec section 7): each warp issues one LOADMETA per
//! root pointer at its start (a range lookup, a walk on a miss), and one
//! MEMCHECK.G before every global memory instruction (a location lookup; a
//! miss fetches the one node by its location). HWONLY: no LOADMETA and no
//! added instruction; every global memory instruction is looked up by its
//! own address (a walk on a miss).
//!
//! Synthesized (the trace does not say which instruction touches which
//! allocation): a kernel's global memory instructions touch its operator's
//! allocations; CTA `c` uses `blocks_per_cta` of them (consecutive in the
//! operator's list, starting at `c * blocks_per_cta`), its warps cycle
//! through them instruction by instruction, and its root pointers are those
//! allocations. Metadata nodes live in a pool in allocation order (node of
//! allocation `id` at `META_BASE + 32 id`); the BST is the balanced tree
//! over the live allocations by base, the list holds them newest first. A
//! free INVALIDATEs its node in the MLB. Metadata sectors go through a
//! per-SM L1 and the shared L2 as LRU caches of [`CheckParams::meta_l1_sectors`]
//! and [`CheckParams::meta_l2_sectors`] sectors at the data latencies; their
//! bandwidth is not charged (a walk reads one sector per node).
use std::collections::{BTreeSet, HashMap, VecDeque};

use serde::{Deserialize, Serialize};
use sim::config::{Mode, Replacement, Structure};
use sim::mlb::Mlb;
use sim::node::Meta;

use crate::sm_model::{Checks, GpuParams, WarpRef};
use crate::workload::Operator;

/// Where the metadata pool starts (node of allocation `id` at
/// `META_BASE + 32 * id`).
pub const META_BASE: u64 = 0x00f0_0000_0000;

/// One design point of the checked run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckParams {
    /// MLB entries (0: no MLB).
    pub entries: usize,
    pub structure: Structure,
    pub mode: Mode,
    /// K walkers.
    pub walkers: usize,
    pub replacement: Replacement,
    /// Cycles from request to answer on the fixed path (1 + m + c; the
    /// synthesized unit has m = 2, c = 2: 5).
    pub hit_latency: f64,
    /// m, the unit's MLB search stages: a request reaches stage C, where a
    /// miss takes its slot, 1 + m cycles after it is taken, and its walker
    /// issues the first read a cycle later.
    pub mlb_latency: f64,
    /// What the unit adds to a walk beyond its node reads (`sim::mlu_unit`;
    /// [`crate::unit_agreement`] checks the timing against it): per node,
    /// the walker's issue and decide cycles (2); from the walk's end to the
    /// earliest replay of a waiting request into stage A (1).
    pub node_overhead: f64,
    pub replay: f64,
    /// Metadata sectors the per-SM L1 and the shared L2 keep (LRU).
    pub meta_l1_sectors: usize,
    pub meta_l2_sectors: usize,
    /// Allocations (root pointers) one CTA uses.
    pub blocks_per_cta: usize,
    /// R: misses that can wait on walks (the unit's `MISS_SLOTS`).
    pub miss_slots: usize,
    /// Locations from the host (compiler mode; the version-1 evaluation's
    /// design option): the runtime, which made each argument's node, passes
    /// its location with the pointer at launch, so warps run no LOADMETA
    /// and a MEMCHECK.G that misses fetches the one node by its location
    /// instead of a walk having found it first. An ABI change; no MLU
    /// hardware.
    #[serde(default)]
    pub host_locations: bool,
}

impl Default for CheckParams {
    fn default() -> Self {
        CheckParams {
            entries: 8,
            structure: Structure::Bst,
            mode: Mode::Compiler,
            walkers: 4,
            replacement: Replacement::Plru,
            hit_latency: 5.0,
            mlb_latency: 2.0,
            node_overhead: 2.0,
            replay: 1.0,
            // 8 KB of a 256 KB L1 and 1 MB of the 50 MB L2.
            meta_l1_sectors: 256,
            meta_l2_sectors: 32768,
            blocks_per_cta: 4,
            miss_slots: sim::mlu_unit::MISS_SLOTS,
            host_locations: false,
        }
    }
}

impl CheckParams {
    /// The fixed-path and miss timing of a unit with `m` MLB search stages
    /// and `c` lane-check stages (the defaults are the synthesized unit's,
    /// m = c = 2).
    pub fn with_unit_stages(self, m: usize, c: usize) -> CheckParams {
        CheckParams { hit_latency: (1 + m + c) as f64, mlb_latency: m as f64, ..self }
    }
}

/// Counters of the checked run (spec section 6's, plus the metadata caches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MluCounters {
    pub lookups: u64,
    pub hits: u64,
    pub misses: u64,
    pub merged: u64,
    pub walks: u64,
    pub nodes: u64,
    pub meta_l1_hits: u64,
    pub meta_l2_hits: u64,
}

/// An LRU set of sector addresses: a map to the last-use stamp and a queue
/// of (address, stamp) in use order, stale entries dropped lazily.
#[derive(Clone)]
struct Lru {
    cap: usize,
    stamp: u64,
    at: HashMap<u64, u64>,
    order: VecDeque<(u64, u64)>,
}

impl Lru {
    fn new(cap: usize) -> Lru {
        Lru { cap, stamp: 0, at: HashMap::new(), order: VecDeque::new() }
    }
    /// Touches `addr`; whether it was present.
    fn access(&mut self, addr: u64) -> bool {
        if self.cap == 0 {
            return false;
        }
        self.stamp += 1;
        let hit = self.at.insert(addr, self.stamp).is_some();
        self.order.push_back((addr, self.stamp));
        while self.at.len() > self.cap {
            let (a, s) = self.order.pop_front().unwrap_or((0, 0));
            if self.at.get(&a) == Some(&s) {
                self.at.remove(&a);
            }
        }
        // Stale queue entries of re-touched sectors are dropped lazily.
        if self.order.len() > 4 * self.cap + 64 {
            let at = &self.at;
            self.order.retain(|(a, s)| at.get(a) == Some(s));
        }
        hit
    }
}

/// The metadata of one allocation a kernel touches.
#[derive(Clone, Debug)]
struct Block {
    location: u64,
    meta: Meta,
    /// Node locations a walk for it visits, root first.
    walk: Vec<u64>,
}

/// What carries over from launch to launch (saved at a launch's start).
#[derive(Clone)]
struct Held {
    mlb: Mlb,
    l1: Lru,
    l2: Lru,
    counters: MluCounters,
}

/// The MLU of the simulated SM, across the kernels of a workload.
pub struct MluModel {
    p: CheckParams,
    g: GpuParams,
    mlb: Mlb,
    l1: Lru,
    l2: Lru,
    saved: Option<Held>,
    walkers: Vec<f64>,
    /// The end of the walk in flight per key, as the unit merges: a range
    /// lookup by the address it looks up (here the block's base), a location
    /// lookup by the location. A range miss and a location miss of the same
    /// block are two walks, as in the unit.
    in_flight: HashMap<(bool, u64), f64>,
    /// Fills of walks in flight: (cycle the walk ends, location, metadata).
    /// A fill enters the MLB when its walk ends, not when it starts.
    fills: Vec<(f64, u64, Meta)>,
    next_accept: f64,
    /// Requests taken in the last 1 + m cycles (still before stage C), by
    /// the cycle they were taken: the unit keeps a slot free for each.
    recent: VecDeque<f64>,
    /// Held miss slots: (cycle the miss reached stage C, cycle its replay
    /// frees it).
    slots: Vec<(f64, f64)>,
    /// Cycles stage A is taken by a replay (no request is taken then).
    replays: BTreeSet<u64>,
    pub counters: MluCounters,
    sm_count: u64,
    // The current kernel.
    blocks: Vec<Block>,
    per_cta: usize,
    warp_seq: Vec<usize>,
}

/// A node's location.
pub fn node_location(id: u64) -> u64 {
    META_BASE + 32 * id
}

impl MluModel {
    pub fn new(p: CheckParams, g: GpuParams, sm_count: u64) -> MluModel {
        MluModel {
            mlb: Mlb::new(p.entries, p.replacement),
            l1: Lru::new(p.meta_l1_sectors),
            l2: Lru::new(p.meta_l2_sectors),
            saved: None,
            walkers: vec![0.0; p.walkers.max(1)],
            in_flight: HashMap::new(),
            fills: Vec::new(),
            next_accept: 0.0,
            recent: VecDeque::new(),
            slots: Vec::new(),
            replays: BTreeSet::new(),
            counters: MluCounters::default(),
            sm_count,
            blocks: Vec::new(),
            per_cta: 1,
            warp_seq: Vec::new(),
            p,
            g,
        }
    }

    /// Prepares the kernels of operator `op`: INVALIDATEs for the frees
    /// before it, and the walks of the allocations it touches.
    pub fn start_operator(&mut self, op: &Operator) {
        // Walks of the previous launch have ended (and filled) before any
        // free that follows it INVALIDATEs: a freed allocation's entry never
        // survives.
        self.apply_fills(f64::INFINITY);
        for &id in &op.freed_before {
            self.mlb.invalidate(node_location(id));
        }
        let mut by_base: Vec<(u64, u64, u64)> = op.live.iter().map(|&(id, b, s)| (b, s, id)).collect();
        by_base.sort_unstable();
        let mut seen = Vec::new();
        self.blocks.clear();
        for t in &op.touches {
            if seen.contains(&t.id) {
                continue;
            }
            seen.push(t.id);
            let walk = match self.p.structure {
                Structure::Sol => vec![node_location(t.id)],
                Structure::List => {
                    // Newest first: every live allocation made after it, then it.
                    let mut w: Vec<u64> = op.live.iter().rev().take_while(|l| l.0 > t.id).map(|l| node_location(l.0)).collect();
                    w.push(node_location(t.id));
                    w
                }
                Structure::Bst => {
                    let (mut lo, mut hi) = (0usize, by_base.len());
                    let mut w = Vec::new();
                    while lo < hi {
                        let mid = lo + (hi - lo) / 2;
                        let (b, s, id) = by_base[mid];
                        w.push(node_location(id));
                        if t.block_base < b {
                            hi = mid;
                        } else if t.block_base - b >= s {
                            lo = mid + 1;
                        } else {
                            break;
                        }
                    }
                    w
                }
            };
            self.blocks.push(Block {
                location: node_location(t.id),
                meta: Meta { base: t.block_base, size: t.block_size, tag: 1 },
                walk,
            });
        }
        self.per_cta = self.p.blocks_per_cta.clamp(1, self.blocks.len().max(1));
    }

    /// Sets the blocks directly, (location, metadata, nodes of a range
    /// walk), in place of an operator's (for [`crate::unit_agreement`]).
    pub(crate) fn load_blocks(&mut self, blocks: Vec<(u64, Meta, Vec<u64>)>) {
        self.blocks = blocks.into_iter().map(|(location, meta, walk)| Block { location, meta, walk }).collect();
        self.per_cta = 1;
    }

    /// The allocation the `j`-th checked instruction of a warp of CTA `cta`
    /// touches.
    fn block_of(&self, cta: u64, j: usize) -> Option<usize> {
        let n = self.blocks.len();
        if n == 0 {
            return None;
        }
        let first = (cta * self.sm_count) as usize * self.per_cta;
        Some((first + j % self.per_cta) % n)
    }

    fn read_node(&mut self, loc: u64) -> f64 {
        self.counters.nodes += 1;
        let sector = loc & !31;
        if self.l1.access(sector) {
            self.counters.meta_l1_hits += 1;
            self.l2.access(sector);
            return self.g.l1_latency;
        }
        if self.l2.access(sector) {
            self.counters.meta_l2_hits += 1;
            return self.g.l2_latency;
        }
        self.g.dram_latency
    }

    /// Writes the fills of the walks that ended by cycle `t` into the MLB,
    /// in the order they ended (never a duplicate: a location already held
    /// is not filled again).
    fn apply_fills(&mut self, t: f64) {
        if self.fills.iter().all(|f| f.0 > t) {
            return;
        }
        self.fills.sort_by(|x, y| x.0.total_cmp(&y.0));
        let n = self.fills.iter().take_while(|f| f.0 <= t).count();
        for (_, loc, meta) in self.fills.drain(..n).collect::<Vec<_>>() {
            if self.mlb.search_location(loc).is_none() {
                self.mlb.fill(loc, meta);
            }
        }
    }

    /// One MLU request for allocation `b` at cycle `t`: a range lookup (and a
    /// walk on a miss) or a location lookup (one node fetched on a miss).
    /// Returns the cycle of the answer.
    pub(crate) fn lookup(&mut self, t: f64, b: usize, by_range: bool) -> f64 {
        let a = self.accept(t);
        self.apply_fills(a);
        self.counters.lookups += 1;
        let (loc, base) = (self.blocks[b].location, self.blocks[b].meta.base);
        let way = if by_range { self.mlb.search_range(base) } else { self.mlb.search_location(loc) };
        if let Some(way) = way {
            self.mlb.touch(way);
            self.counters.hits += 1;
            return a + self.p.hit_latency;
        }
        self.counters.misses += 1;
        let key = (by_range, if by_range { base } else { loc });
        let at_c = a + 1.0 + self.p.mlb_latency;
        if let Some(done) = self.in_flight.get(&key).copied().filter(|&d| d > a) {
            self.counters.merged += 1;
            return self.replay(at_c, done);
        }
        let (k, free) = self.walkers.iter().copied().enumerate().fold((0, f64::INFINITY), |m, (i, f)| if f < m.1 { (i, f) } else { m });
        let mut end = (at_c + 1.0).max(free);
        self.counters.walks += 1;
        // A range lookup walks the structure; a location lookup fetches the
        // one node.
        let nodes = if by_range { self.blocks[b].walk.len() } else { 1 };
        for i in 0..nodes {
            let n = if by_range { self.blocks[b].walk[i] } else { loc };
            end += self.read_node(n) + self.p.node_overhead;
        }
        self.walkers[k] = end;
        self.in_flight.insert(key, end);
        self.fills.push((end, loc, self.blocks[b].meta));
        self.replay(at_c, end)
    }

    /// A miss that took its slot at `at_c` and waits on the walk ending at
    /// `done`: it replays into stage A in the first cycle from `done +
    /// replay` that no other replay has (one per cycle, in the order the
    /// misses came), which frees its slot. Returns the cycle of its answer.
    fn replay(&mut self, at_c: f64, done: f64) -> f64 {
        let mut q = (done + self.p.replay).ceil() as u64;
        while !self.replays.insert(q) {
            q += 1;
        }
        self.slots.push((at_c, q as f64));
        q as f64 + self.p.hit_latency
    }

    /// The cycle a request presented at `t` is taken, the unit's
    /// `req_ready`: the cycle after the previous one at the earliest, not in
    /// a cycle a replay takes stage A, and only while the free miss slots
    /// could hold a miss of every request before stage C and of this one.
    fn accept(&mut self, t: f64) -> f64 {
        let depth = 1.0 + self.p.mlb_latency;
        let r = self.p.miss_slots.max(1);
        let mut a = t.max(self.next_accept);
        loop {
            while self.replays.contains(&(a as u64)) {
                a = a.floor() + 1.0;
            }
            self.slots.retain(|s| s.1 > a);
            while self.recent.front().is_some_and(|&x| x + depth <= a) {
                self.recent.pop_front();
            }
            let held = self.slots.iter().filter(|s| s.0 <= a).count();
            if held + self.recent.len() < r {
                break;
            }
            // Wait for a slot to free or a request to reach stage C.
            let free = self.slots.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
            let exits = self.recent.front().map_or(f64::INFINITY, |&x| x + depth);
            a = free.min(exits);
        }
        if self.replays.first().is_some_and(|&q| q + 64 < a as u64) {
            self.replays = self.replays.split_off(&(a as u64));
        }
        self.recent.push_back(a);
        self.next_accept = a + 1.0;
        a
    }

    /// The checked-instruction counter of the warp in `slot`.
    fn seq(&mut self, slot: usize) -> &mut usize {
        if self.warp_seq.len() <= slot {
            self.warp_seq.resize(slot + 1, 0);
        }
        &mut self.warp_seq[slot]
    }

    fn next_block(&mut self, warp: WarpRef) -> Option<usize> {
        let seq = self.seq(warp.slot);
        let j = *seq;
        *seq += 1;
        self.block_of(warp.cta, j + warp.index)
    }
}

impl Checks for MluModel {
    fn begin_launch(&mut self) {
        // The previous launch's walks have all ended by now.
        self.apply_fills(f64::INFINITY);
        self.saved = Some(Held { mlb: self.mlb.clone(), l1: self.l1.clone(), l2: self.l2.clone(), counters: self.counters });
    }

    fn begin_run(&mut self) {
        if let Some(h) = &self.saved {
            self.mlb = h.mlb.clone();
            self.l1 = h.l1.clone();
            self.l2 = h.l2.clone();
            self.counters = h.counters;
        }
        self.walkers.iter_mut().for_each(|w| *w = 0.0);
        self.in_flight.clear();
        self.fills.clear();
        self.next_accept = 0.0;
        self.recent.clear();
        self.slots.clear();
        self.replays.clear();
        self.warp_seq.clear();
    }

    fn extra_per_global(&self) -> usize {
        match self.p.mode {
            Mode::Compiler => 1,
            Mode::Hwonly => 0,
        }
    }

    fn loadmeta(&mut self, t: f64, warp: WarpRef) -> f64 {
        *self.seq(warp.slot) = 0;
        if self.p.mode == Mode::Hwonly || self.p.host_locations || self.blocks.is_empty() {
            return t;
        }
        let mut ready = t;
        for j in 0..self.per_cta {
            if let Some(b) = self.block_of(warp.cta, j) {
                // One LOADMETA instruction per root pointer, issued back to back.
                ready = ready.max(self.lookup(t + j as f64, b, true));
            }
        }
        ready
    }

    fn memcheck(&mut self, t: f64, warp: WarpRef) -> f64 {
        match self.next_block(warp) {
            None => {
                // No allocation behind it (tag-0 pointer): the fixed latency.
                self.accept(t) + self.p.hit_latency
            }
            Some(b) => self.lookup(t, b, self.p.mode == Mode::Hwonly),
        }
    }
}
