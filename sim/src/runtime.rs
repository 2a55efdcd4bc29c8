//! The host-side runtime of the model (docs/design.md "Runtime"): the
//! cudaMalloc/cudaFree wrapper that tags pointers, writes metadata nodes and
//! keeps the structure, plus the memory image and the [`Mlu`] it drives. It
//! stands for GPUArmor's software runtime; there is no hardware counterpart.
//!
//! - Tags: splitmix64 seeded by `seed`, the top byte of each output, 0 and
//!   0xFF rejected, and so is any tag that one of the last `tag_history`
//!   (default 8) allocations covering any byte of the new range held, plus
//!   the tag of every FREED node this malloc retires (see [`TagHistory`]):
//!   a dangling pointer into reused memory is a TAG_MISMATCH for the next
//!   `tag_history` reuses of the address it points to.
//! - Bases: first fit from `heap_base` at 512-byte granularity over the gaps
//!   between live allocations (freed ranges are reusable) and outside the node
//!   pool; a caller-given base is used as is and must not overlap a live
//!   allocation or the node pool.
//! - Nodes: 32-byte slots from `node_pool_base` upwards (retired slots
//!   reused, last retired first), in a reserved region of
//!   [`NODE_POOL_BYTES`].
//! - free: rewrites only the size|tag word (tag := FREED) and INVALIDATEs the
//!   location; the node stays linked.
//! - malloc over FREED nodes retires them: unlinked, INVALIDATEd, their words
//!   removed from the memory image (a stale location then reads as a memory
//!   error instead of filling the MLB with a node that no longer exists), the
//!   slot returned to the pool. Safe because this runtime runs between
//!   kernels.
//! - list: new node at the head. bst: after every insert/retire a perfectly
//!   balanced tree is rebuilt from the nodes sorted by base (element n/2 of
//!   each sorted run is its subtree's root), rewriting only link words that
//!   change. sol: nodes are not linked (the table is the runtime's index).
//!
//! - Device heap (optional, [`Runtime::attach_device_heap`]): the canary
//!   allocator's tagged heap, looked up by the MLU through its heap window
//!   (`sim::device_heap`); in-kernel `device_malloc`/`device_free` go to it,
//!   and cudaMalloc-style allocations may not overlap it.
//!
//! Length: this file is over 800 lines because the runtime is one type whose
//! malloc, free, retire and rebuild steps share its state (structure, node
//! pool, memory image, MLU); the tag history is its own file
//! (`tag_history.rs`).
use crate::canary::heap::{AllocError, FreeError, Freed, HeapConfig};
use crate::config::{ConfigError, Mode, MluConfig, Structure};
use crate::device_heap::DeviceHeap;
use crate::fault::Fault;
use crate::memory::{MemError, MemoryImage, MetaMemory};
use crate::mlb::LOC_MASK;
use crate::mlu::{Counters, Mlu};
use crate::node::{pack_size_tag, unpack_size_tag, Meta, BASE, LINK0, LINK1, NODE_BYTES, SIZE_TAG};
use crate::pointer::{tagged, untag, ADDR_MASK, TAG_FREED};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;

pub use crate::tag_history::TagHistory;

/// Default start of the heap the base allocator hands out.
pub const DEFAULT_HEAP_BASE: u64 = 0x7f00_0000_0000;
/// Default start of the metadata node pool.
pub const DEFAULT_NODE_POOL_BASE: u64 = 0x0000_1000_0000_0000;
/// Bytes reserved for the node pool (2^27 nodes).
pub const NODE_POOL_BYTES: u64 = 1 << 32;
/// cudaMalloc-like base granularity.
pub const ALLOC_GRANULE: u64 = 512;
/// One past the highest address.
const ADDR_END: u128 = 1u128 << 56;
/// Default of [`RuntimeConfig::tag_history`] (spec section 1: "the last 8
/// generations").
pub const DEFAULT_TAG_HISTORY: usize = 8;
/// Largest [`RuntimeConfig::tag_history`] accepted.
pub const TAG_HISTORY_MAX: usize = 64;

/// Runtime parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RuntimeConfig {
    pub mlu: MluConfig,
    /// Seed of the tag PRNG.
    pub seed: u64,
    pub heap_base: u64,
    pub node_pool_base: u64,
    /// Tag generations remembered per address (0..=[`TAG_HISTORY_MAX`]): a
    /// new allocation never gets a tag that one of the last `tag_history`
    /// allocations covering any of its bytes held. 0 keeps only the older
    /// rule (the tags of the FREED nodes the malloc retires are excluded).
    pub tag_history: usize,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            mlu: MluConfig::default(),
            seed: 1,
            heap_base: DEFAULT_HEAP_BASE,
            node_pool_base: DEFAULT_NODE_POOL_BASE,
            tag_history: DEFAULT_TAG_HISTORY,
        }
    }
}

/// Lifecycle of an allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AllocState {
    /// Live: its node holds its tag.
    Live,
    /// Freed: its node holds FREED and is still in the structure.
    Freed,
    /// Freed and its node retired by a later overlapping malloc.
    Retired,
}

/// One allocation, as the runtime recorded it (for oracles and reports).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allocation {
    /// Index in [`Runtime::allocations`], in malloc order.
    pub id: usize,
    /// The tagged pointer handed out.
    pub ptr: u64,
    pub base: u64,
    pub size: u64,
    pub tag: u8,
    /// Its node's location (kept after retirement, when the slot may hold
    /// another node).
    pub location: u64,
    pub state: AllocState,
}

impl Allocation {
    pub fn end(&self) -> u128 {
        self.base as u128 + self.size as u128
    }
}

/// Why a malloc was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuntimeError {
    ZeroSize,
    /// The size does not fit the node's 56-bit size field.
    SizeTooLarge { size: u64 },
    /// A given base is not a 56-bit address.
    BaseOutOfRange { base: u64 },
    /// The range overlaps a live allocation.
    Overlap { base: u64, size: u64, other_base: u64, other_size: u64 },
    /// The range overlaps the metadata node pool.
    OverlapsNodePool { base: u64, size: u64 },
    /// The range overlaps the device heap or its directory.
    OverlapsDeviceHeap { base: u64, size: u64 },
    /// No gap in the heap is large enough.
    OutOfMemory { size: u64 },
    NodePoolExhausted,
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::ZeroSize => write!(f, "malloc of size 0"),
            RuntimeError::SizeTooLarge { size } => write!(f, "malloc size {size} does not fit 56 bits (must be < 2^56)"),
            RuntimeError::BaseOutOfRange { base } => write!(f, "base {base:#x} is not a 56-bit address"),
            RuntimeError::Overlap { base, size, other_base, other_size } => write!(
                f,
                "allocation [{base:#x}, +{size}) overlaps the live allocation at {other_base:#x} of size {other_size}"
            ),
            RuntimeError::OverlapsNodePool { base, size } => {
                write!(f, "allocation [{base:#x}, +{size}) overlaps the metadata node pool")
            }
            RuntimeError::OverlapsDeviceHeap { base, size } => {
                write!(f, "allocation [{base:#x}, +{size}) overlaps the device heap or its directory")
            }
            RuntimeError::OutOfMemory { size } => write!(f, "no free range of {size} bytes in the heap"),
            RuntimeError::NodePoolExhausted => write!(f, "metadata node pool exhausted"),
        }
    }
}

impl std::error::Error for RuntimeError {}

/// A free the runtime rejects (its own findings; the MLU is not involved).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FreeFinding {
    /// The pointer was handed out and already freed.
    DoubleFree,
    /// The pointer is not a live allocation's tagged base pointer.
    InvalidFree,
}

impl FreeFinding {
    /// "DOUBLE_FREE" / "INVALID_FREE".
    pub fn name(self) -> &'static str {
        match self {
            FreeFinding::DoubleFree => "DOUBLE_FREE",
            FreeFinding::InvalidFree => "INVALID_FREE",
        }
    }
}

impl fmt::Display for FreeFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// splitmix64 (Steele, Lea, Flood 2014).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (modulo bias; for stimulus, not statistics).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// Uniform in lo..=hi (modulo bias, as `below`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}

/// A node in the structure (live or FREED, not retired).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NodeRec {
    id: usize,
    loc: u64,
    base: u64,
    size: u64,
    link0: u64,
    link1: u64,
}

/// The memory as the MLU sees it: the image, the sol table and the device
/// heap's directory.
struct MemView<'a> {
    image: &'a MemoryImage,
    nodes: &'a BTreeMap<u64, NodeRec>,
    device: Option<&'a DeviceHeap>,
}

impl MetaMemory for MemView<'_> {
    #[inline]
    fn read_word(&self, addr: u64) -> Result<u64, MemError> {
        match self.device.and_then(|d| d.read_word(addr)) {
            Some(r) => r,
            None => self.image.read_word(addr),
        }
    }
    fn sol_lookup(&self, a: u64) -> Option<u64> {
        let (_, n) = self.nodes.range(..=a).next_back()?;
        (a - n.base < n.size).then_some(n.loc)
    }
}

/// The runtime: allocations, node pool, metadata structure, memory, MLU.
#[derive(Clone, Debug)]
pub struct Runtime {
    cfg: RuntimeConfig,
    mem: MemoryImage,
    mlu: Mlu,
    rng: SplitMix64,
    allocs: Vec<Allocation>,
    /// Live allocations by base.
    live: BTreeMap<u64, usize>,
    /// Structure nodes (live and FREED) by base.
    nodes: BTreeMap<u64, NodeRec>,
    /// List order, head first (list structure only).
    list: VecDeque<u64>,
    /// Every handed-out tagged pointer -> allocation ids.
    by_ptr: HashMap<u64, Vec<usize>>,
    free_slots: Vec<u64>,
    next_slot: u64,
    /// List head / bst root as written to the MLU's root CSR.
    root: u64,
    /// Per-address tags of the last `tag_history` allocations.
    hist: TagHistory,
    /// The host operations sent to the MLU since the last
    /// [`Runtime::take_host_ops`], in order.
    host_ops: Vec<HostOp>,
    /// The device heap registered with the MLU, if attached.
    device: Option<DeviceHeap>,
}

/// A host operation of the runtime on its MLU (INVALIDATE after a free or a
/// retirement, FLUSH, a ROOT CSR write), logged so that another MLU (the
/// pipelined unit, an RTL one) can be kept in step with the same sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostOp {
    Invalidate(u64),
    Flush,
    Root(u64),
}

fn align_up(x: u128) -> u128 {
    x.div_ceil(ALLOC_GRANULE as u128) * ALLOC_GRANULE as u128
}

impl Runtime {
    /// A runtime with an empty heap. Errors name the bad field.
    pub fn new(cfg: RuntimeConfig) -> Result<Runtime, ConfigError> {
        let mlu = Mlu::new(&cfg.mlu)?;
        if cfg.heap_base as u128 >= ADDR_END {
            return Err(ConfigError::field("heap_base", format!("{:#x} is not a 56-bit address", cfg.heap_base)));
        }
        if cfg.node_pool_base == 0
            || !cfg.node_pool_base.is_multiple_of(NODE_BYTES)
            || cfg.node_pool_base as u128 + NODE_POOL_BYTES as u128 > ADDR_END
        {
            return Err(ConfigError::field(
                "node_pool_base",
                format!(
                    "{:#x} must be a non-zero 32-byte-aligned address with {NODE_POOL_BYTES:#x} bytes below 2^56",
                    cfg.node_pool_base
                ),
            ));
        }
        if cfg.tag_history > TAG_HISTORY_MAX {
            return Err(ConfigError::field(
                "tag_history",
                format!("{} generations is out of range; allowed: 0..={TAG_HISTORY_MAX}", cfg.tag_history),
            ));
        }
        Ok(Runtime {
            rng: SplitMix64(cfg.seed),
            hist: TagHistory::new(cfg.tag_history),
            host_ops: Vec::new(),
            next_slot: cfg.node_pool_base,
            cfg,
            mem: MemoryImage::new(),
            mlu,
            allocs: Vec::new(),
            live: BTreeMap::new(),
            nodes: BTreeMap::new(),
            list: VecDeque::new(),
            by_ptr: HashMap::new(),
            free_slots: Vec::new(),
            root: 0,
            device: None,
        })
    }

    pub fn config(&self) -> &RuntimeConfig {
        &self.cfg
    }
    pub fn mlu(&self) -> &Mlu {
        &self.mlu
    }
    /// Direct access to the MLU (CSR writes, counters reset).
    pub fn mlu_mut(&mut self) -> &mut Mlu {
        &mut self.mlu
    }
    pub fn counters(&self) -> &Counters {
        self.mlu.counters()
    }
    pub fn memory(&self) -> &MemoryImage {
        &self.mem
    }
    /// The list head / bst root (0 when empty or sol).
    pub fn root(&self) -> u64 {
        self.root
    }
    pub fn structure(&self) -> Structure {
        self.cfg.mlu.structure
    }
    pub fn mode(&self) -> Mode {
        self.cfg.mlu.mode
    }
    /// Every allocation ever made, in malloc order, with its state.
    pub fn allocations(&self) -> &[Allocation] {
        &self.allocs
    }
    /// The structure's nodes (live and FREED), sorted by base: (location, meta
    /// as the runtime wrote it).
    pub fn structure_nodes(&self) -> Vec<(u64, Meta)> {
        self.nodes
            .values()
            .map(|n| {
                let a = &self.allocs[n.id];
                let tag = if a.state == AllocState::Live { a.tag } else { TAG_FREED };
                (n.loc, Meta { base: n.base, size: n.size, tag })
            })
            .collect()
    }

    /// The live allocation overlapping `[base, end)`, if any.
    fn live_overlap(&self, base: u64, end: u128) -> Option<&Allocation> {
        let hi = end.min(u64::MAX as u128) as u64;
        let (_, &id) = self.live.range(..hi).next_back()?;
        let a = &self.allocs[id];
        (a.end() > base as u128).then_some(a)
    }

    fn overlaps_pool(&self, base: u64, end: u128) -> bool {
        let p = self.cfg.node_pool_base as u128;
        (base as u128) < p + NODE_POOL_BYTES as u128 && end > p
    }

    /// First fit: the lowest 512-aligned base at or above `heap_base` whose
    /// range overlaps no live allocation and not the node pool. One sweep
    /// over the live allocations in address order (restarted only when the
    /// candidate has to jump over the pool).
    fn pick_base(&self, size: u64) -> Result<u64, RuntimeError> {
        let pool_end = self.cfg.node_pool_base as u128 + NODE_POOL_BYTES as u128;
        let mut cand = align_up(self.cfg.heap_base as u128);
        loop {
            let first = self.live.range(..=cand.min(u64::MAX as u128) as u64).next_back().map_or(0, |(&b, _)| b);
            for (_, &id) in self.live.range(first..) {
                let a = &self.allocs[id];
                if a.end() <= cand {
                    continue;
                }
                if a.base as u128 >= cand + size as u128 {
                    break;
                }
                cand = align_up(a.end());
            }
            if cand + size as u128 > ADDR_END {
                return Err(RuntimeError::OutOfMemory { size });
            }
            if self.overlaps_pool(cand as u64, cand + size as u128) {
                cand = align_up(pool_end);
                continue;
            }
            return Ok(cand as u64);
        }
    }

    fn new_slot(&mut self) -> Result<u64, RuntimeError> {
        if let Some(s) = self.free_slots.pop() {
            return Ok(s);
        }
        if self.next_slot + NODE_BYTES > self.cfg.node_pool_base + NODE_POOL_BYTES {
            return Err(RuntimeError::NodePoolExhausted);
        }
        let s = self.next_slot;
        self.next_slot += NODE_BYTES;
        Ok(s)
    }

    /// The per-address tag history (see [`TagHistory`]).
    pub fn tag_history(&self) -> &TagHistory {
        &self.hist
    }

    /// The tag of a new allocation of `[base, end)`: the next PRNG draw that
    /// is not 0, not FREED and not forbidden. Forbidden: the tags in the
    /// most recent `d` entries of the history of every segment the range
    /// overlaps, plus `retired` (the tags of the FREED nodes this malloc
    /// retires, already among the most recent entries when `d` >= 1), with
    /// `d` = `tag_history`. If that covers all 254 live tags (a huge
    /// allocation over many histories), `d` is reduced one step at a time
    /// until a live tag is left; if even `d` = 0 (`retired` alone) covers
    /// them all, nothing is forbidden. Deterministic, never loops forever.
    fn next_tag(&mut self, base: u64, end: u64, retired: &HashSet<u8>) -> u8 {
        let depth = self.hist.min_depths(base, end);
        let live = |t: usize| t != 0 && t != TAG_FREED as usize;
        let mut is_retired = [false; 256];
        for &t in retired {
            is_retired[t as usize] = true;
        }
        // count[d]: live tags forbidden with depth d.
        let h = self.cfg.tag_history;
        let mut count = [0usize; TAG_HISTORY_MAX + 1];
        for t in (0..256).filter(|&t| live(t)) {
            if is_retired[t] {
                count[0] += 1;
            } else if depth[t] != 0 {
                count[depth[t] as usize] += 1;
            }
        }
        for d in 1..=h {
            count[d] += count[d - 1];
        }
        let forbidden: [bool; 256] = match (0..=h).rev().find(|&d| count[d] < 254) {
            Some(d) => std::array::from_fn(|t| is_retired[t] || (depth[t] != 0 && depth[t] as usize <= d)),
            None => [false; 256],
        };
        loop {
            let t = (self.rng.next_u64() >> 56) as u8;
            if t != 0 && t != TAG_FREED && !forbidden[t as usize] {
                return t;
            }
        }
    }

    /// malloc: a new allocation of `size` bytes at `base` (or where the base
    /// allocator puts it); returns its tagged pointer.
    pub fn malloc(&mut self, size: u64, base: Option<u64>) -> Result<u64, RuntimeError> {
        if size == 0 {
            return Err(RuntimeError::ZeroSize);
        }
        if size > ADDR_MASK {
            return Err(RuntimeError::SizeTooLarge { size });
        }
        let base = match base {
            Some(b) => {
                if b > ADDR_MASK {
                    return Err(RuntimeError::BaseOutOfRange { base: b });
                }
                let end = b as u128 + size as u128;
                if let Some(a) = self.live_overlap(b, end) {
                    return Err(RuntimeError::Overlap { base: b, size, other_base: a.base, other_size: a.size });
                }
                if self.overlaps_pool(b, end) {
                    return Err(RuntimeError::OverlapsNodePool { base: b, size });
                }
                if self.device.as_ref().is_some_and(|d| d.overlaps(b, end)) {
                    return Err(RuntimeError::OverlapsDeviceHeap { base: b, size });
                }
                b
            }
            None => self.pick_base(size)?,
        };
        if self.free_slots.is_empty() && self.next_slot + NODE_BYTES > self.cfg.node_pool_base + NODE_POOL_BYTES {
            // Checked before any state changes (retirement below may free a
            // slot, but refusing early keeps malloc all-or-nothing).
            return Err(RuntimeError::NodePoolExhausted);
        }
        let end = base as u128 + size as u128;
        // Retire the FREED nodes the new range overlaps (live ones were ruled
        // out above). Nodes are disjoint and sorted, so they are the run
        // ending at the last node starting below `end`.
        let hi = end.min(u64::MAX as u128) as u64;
        let doomed: Vec<NodeRec> = self
            .nodes
            .range(..hi)
            .rev()
            .take_while(|(_, n)| n.base as u128 + n.size as u128 > base as u128)
            .map(|(_, n)| *n)
            .collect();
        let mut retired_tags = HashSet::new();
        for n in &doomed {
            debug_assert_eq!(self.allocs[n.id].state, AllocState::Freed);
            retired_tags.insert(self.allocs[n.id].tag);
            self.retire(n);
        }
        let tag = self.next_tag(base, end as u64, &retired_tags);
        self.hist.record(base, end as u64, tag);
        let loc = self.new_slot()?;
        let id = self.allocs.len();
        let ptr = tagged(tag, base);
        // No INVALIDATE of a reused slot is needed: it was invalidated when
        // retired, and with its words removed nothing could refill it since.
        self.mem.write_word(loc + BASE, base);
        self.mem.write_word(loc + SIZE_TAG, pack_size_tag(size, tag));
        let mut rec = NodeRec { id, loc, base, size, link0: 0, link1: 0 };
        if self.cfg.mlu.structure == Structure::List {
            rec.link0 = self.list.front().copied().unwrap_or(0);
            self.list.push_front(loc);
        }
        self.mem.write_word(loc + LINK0, rec.link0);
        self.mem.write_word(loc + LINK1, 0);
        self.nodes.insert(base, rec);
        self.live.insert(base, id);
        self.by_ptr.entry(ptr).or_default().push(id);
        self.allocs.push(Allocation { id, ptr, base, size, tag, location: loc, state: AllocState::Live });
        self.relink();
        Ok(ptr)
    }

    /// Unlink a FREED node, INVALIDATE it, clear its words, free its slot.
    fn retire(&mut self, n: &NodeRec) {
        self.nodes.remove(&n.base);
        if self.cfg.mlu.structure == Structure::List {
            if let Some(i) = self.list.iter().position(|&l| l == n.loc) {
                self.list.remove(i);
                if i > 0 {
                    let pred = self.list[i - 1];
                    let next = self.list.get(i).copied().unwrap_or(0);
                    self.set_link0_of_loc(pred, next);
                }
            }
        }
        self.mlu.invalidate(n.loc);
        self.host_ops.push(HostOp::Invalidate(n.loc));
        // The slot is recycled as fresh memory: its words (and any test
        // poison) are gone.
        for off in [BASE, SIZE_TAG, LINK0, LINK1] {
            self.mem.remove_word(n.loc + off);
            self.mem.unpoison(n.loc + off);
        }
        self.free_slots.push(n.loc);
        self.allocs[n.id].state = AllocState::Retired;
    }

    fn set_link0_of_loc(&mut self, loc: u64, value: u64) {
        self.mem.write_word(loc + LINK0, value);
        if let Some(r) = self.nodes.values_mut().find(|r| r.loc == loc) {
            r.link0 = value;
        }
    }

    /// Bring the structure's root (and for bst the links) up to date.
    fn relink(&mut self) {
        match self.cfg.mlu.structure {
            Structure::List => self.root = self.list.front().copied().unwrap_or(0),
            Structure::Sol => self.root = 0,
            Structure::Bst => {
                let recs: Vec<&mut NodeRec> = self.nodes.values_mut().collect();
                let locs: Vec<u64> = recs.iter().map(|r| r.loc).collect();
                let mut links = vec![(0u64, 0u64); locs.len()];
                fn build(lo: usize, hi: usize, locs: &[u64], links: &mut [(u64, u64)]) -> u64 {
                    if lo >= hi {
                        return 0;
                    }
                    let mid = lo + (hi - lo) / 2;
                    links[mid] = (build(lo, mid, locs, links), build(mid + 1, hi, locs, links));
                    locs[mid]
                }
                let root = build(0, locs.len(), &locs, &mut links);
                for (r, &(l0, l1)) in recs.into_iter().zip(&links) {
                    if r.link0 != l0 {
                        r.link0 = l0;
                        self.mem.write_word(r.loc + LINK0, l0);
                    }
                    if r.link1 != l1 {
                        r.link1 = l1;
                        self.mem.write_word(r.loc + LINK1, l1);
                    }
                }
                self.root = root;
            }
        }
        if self.mlu.csrs().root != self.root {
            self.host_ops.push(HostOp::Root(self.root));
        }
        self.mlu.set_root(self.root);
    }

    /// free: mark the allocation's node FREED and INVALIDATE it. `ptr` must be
    /// the tagged pointer malloc returned.
    pub fn free(&mut self, ptr: u64) -> Result<(), FreeFinding> {
        let Some(ids) = self.by_ptr.get(&ptr) else {
            return Err(FreeFinding::InvalidFree);
        };
        let Some(&id) = ids.iter().find(|&&i| self.allocs[i].state == AllocState::Live) else {
            return Err(FreeFinding::DoubleFree);
        };
        let a = &mut self.allocs[id];
        a.state = AllocState::Freed;
        let (loc, base, size) = (a.location, a.base, a.size);
        self.live.remove(&base);
        self.mem.write_word(loc + SIZE_TAG, pack_size_tag(size, TAG_FREED));
        self.mlu.invalidate(loc);
        self.host_ops.push(HostOp::Invalidate(loc));
        Ok(())
    }

    /// A global access of `width` bytes through `ptr`. COMPILER mode:
    /// LOADMETA(root, default `ptr`) then MEMCHECK.G with that location;
    /// HWONLY: MEMCHECK.G alone. Returns the checked untagged address.
    pub fn access(&mut self, ptr: u64, width: u32, root: Option<u64>) -> Result<u64, Fault> {
        let view = MemView { image: &self.mem, nodes: &self.nodes, device: self.device.as_ref() };
        match self.mlu.csrs().mode {
            Mode::Compiler => {
                let loc = self.mlu.loadmeta(&view, root.unwrap_or(ptr))?;
                self.mlu.memcheck_g(&view, ptr, width, loc)
            }
            Mode::Hwonly => self.mlu.memcheck_g(&view, ptr, width, 0),
        }
    }

    /// LOADMETA on the runtime's memory.
    pub fn loadmeta(&mut self, p: u64) -> Result<u64, Fault> {
        let view = MemView { image: &self.mem, nodes: &self.nodes, device: self.device.as_ref() };
        self.mlu.loadmeta(&view, p)
    }

    /// MEMCHECK.G on the runtime's memory.
    pub fn memcheck_g(&mut self, p: u64, width: u32, loc: u64) -> Result<u64, Fault> {
        let view = MemView { image: &self.mem, nodes: &self.nodes, device: self.device.as_ref() };
        self.mlu.memcheck_g(&view, p, width, loc)
    }

    /// MEMCHECK.S (no metadata).
    pub fn memcheck_s(&mut self, a: u64, width: u32, base: u64, size: u64) -> Result<u64, Fault> {
        self.mlu.memcheck_s(a, width, base, size)
    }

    /// Attach the canary allocator's heap `cfg` (tagged: `tag_seed` set)
    /// with its directory at `dir`, and point the MLU's heap window at it.
    /// Before any allocation; errors name the field.
    pub fn attach_device_heap(&mut self, cfg: HeapConfig, dir: u64) -> Result<(), ConfigError> {
        let bad = |m: String| {
            let (field, message) = m.split_once(": ").unwrap_or(("device_heap", &m));
            ConfigError::field(field, message.to_string())
        };
        if !self.allocs.is_empty() || self.device.is_some() {
            return Err(bad("device_heap: attach the device heap before any allocation, once".into()));
        }
        let d = DeviceHeap::new(cfg, dir).map_err(bad)?;
        let p = self.cfg.node_pool_base;
        if d.overlaps(p, p as u128 + NODE_POOL_BYTES as u128) {
            return Err(bad(format!("device_heap: the heap or its directory overlaps the node pool at {p:#x}")));
        }
        self.mlu.set_heap_window(d.window());
        self.device = Some(d);
        Ok(())
    }

    pub fn device_heap(&self) -> Option<&DeviceHeap> {
        self.device.as_ref()
    }

    /// In-kernel malloc from requester `mp` on the device heap: the tagged
    /// pointer, after INVALIDATEs of the MLB entries the chunk may shadow
    /// ([`DeviceHeap::malloc`]). Panics if no device heap is attached (a
    /// caller bug).
    pub fn device_malloc(&mut self, size: u64, mp: u64) -> Result<u64, AllocError> {
        let (a, stale) = self.device.as_mut().expect("device heap attached").malloc(size, mp)?;
        for loc in stale {
            self.mlu.invalidate(loc);
            self.host_ops.push(HostOp::Invalidate(loc));
        }
        Ok(a.ptr)
    }

    /// In-kernel free on the device heap: the chunk retagged FREED and its
    /// location INVALIDATEd (as the host runtime's free). The allocator's
    /// canary check comes back in [`Freed::overflow`].
    pub fn device_free(&mut self, ptr: u64) -> Result<Freed, FreeError> {
        let d = self.device.as_mut().expect("device heap attached");
        let freed = d.free(ptr)?;
        let loc = d.location(freed.chunk);
        self.mlu.invalidate(loc);
        self.host_ops.push(HostOp::Invalidate(loc));
        Ok(freed)
    }

    /// A store the MLU let through: its bytes land in the device heap, if
    /// they fall there (see [`DeviceHeap::store`]).
    pub fn store(&mut self, a: u64, width: u32) {
        if let Some(d) = &mut self.device {
            d.store(a, width);
        }
    }

    /// FLUSH the MLB (e.g. at a kernel boundary).
    pub fn flush_mlb(&mut self) {
        self.mlu.flush();
        self.host_ops.push(HostOp::Flush);
    }

    /// The host operations since the last call, oldest first.
    pub fn take_host_ops(&mut self) -> Vec<HostOp> {
        std::mem::take(&mut self.host_ops)
    }

    /// The memory as the MLU reads it (the image, and the sol table).
    pub fn meta_memory(&self) -> impl MetaMemory + '_ {
        MemView { image: &self.mem, nodes: &self.nodes, device: self.device.as_ref() }
    }

    /// The location of the structure node whose range holds `untag(ptr)`
    /// (live or FREED), ignoring the tag.
    pub fn node_of(&self, ptr: u64) -> Option<u64> {
        MemView { image: &self.mem, nodes: &self.nodes, device: self.device.as_ref() }.sol_lookup(untag(ptr))
    }

    /// The live allocation whose range holds `untag(ptr)`.
    pub fn live_allocation_at(&self, ptr: u64) -> Option<&Allocation> {
        let a = untag(ptr);
        let (_, &id) = self.live.range(..=a).next_back()?;
        let al = &self.allocs[id];
        ((a as u128) < al.end()).then_some(al)
    }

    /// Test hook: overwrite link `link` (0 or 1) of the node at `location`,
    /// e.g. to make a cycle. The runtime's own view is not changed, so
    /// [`Runtime::check_invariants`] reports the corruption.
    pub fn corrupt_link(&mut self, location: u64, link: usize, value: u64) {
        let off = if link == 0 { LINK0 } else { LINK1 };
        self.mem.write_word((location & LOC_MASK) + off, value);
    }

    /// Test hook: every read of the node at `location` answers with an error.
    pub fn poison_node(&mut self, location: u64) {
        for off in [BASE, SIZE_TAG, LINK0, LINK1] {
            self.mem.poison((location & LOC_MASK) + off);
        }
    }

    /// Check the runtime invariants: node slots distinct, aligned and in the
    /// pool; node ranges disjoint; node words equal to what the runtime wrote;
    /// the structure in memory well formed (list: exactly the nodes, head
    /// first, no cycle; bst: ordered, exactly the nodes, depth
    /// ceil(log2(n+1))); the root CSR; the MLB coherent with memory and free of
    /// duplicates. Returns the first violation found.
    pub fn check_invariants(&self) -> Result<(), String> {
        let pool = self.cfg.node_pool_base..self.cfg.node_pool_base + NODE_POOL_BYTES;
        let mut locs = HashSet::new();
        let mut prev_end: Option<u128> = None;
        for n in self.nodes.values() {
            if n.loc % NODE_BYTES != 0 || !pool.contains(&n.loc) || !locs.insert(n.loc) {
                return Err(format!("node location {:#x} misaligned, outside the pool or shared", n.loc));
            }
            if prev_end.is_some_and(|e| e > n.base as u128) {
                return Err(format!("node at {:#x} (base {:#x}) overlaps its predecessor", n.loc, n.base));
            }
            prev_end = Some(n.base as u128 + n.size as u128);
            let a = &self.allocs[n.id];
            let want_tag = match a.state {
                AllocState::Live => a.tag,
                AllocState::Freed => TAG_FREED,
                AllocState::Retired => return Err(format!("retired allocation {} still has a node", a.id)),
            };
            let rd = |off| self.mem.read_word(n.loc + off).map_err(|e| format!("node at {:#x}: {e}", n.loc));
            if rd(BASE)? != a.base || rd(SIZE_TAG)? != pack_size_tag(a.size, want_tag) {
                return Err(format!("node at {:#x} does not hold allocation {}'s metadata", n.loc, a.id));
            }
        }
        for (&base, &id) in &self.live {
            let a = &self.allocs[id];
            if a.state != AllocState::Live || a.base != base || self.nodes.get(&base).map(|n| n.id) != Some(id) {
                return Err(format!("live allocation {id} at {base:#x} has no matching node"));
            }
        }
        let n = self.nodes.len();
        let read = |addr: u64| self.mem.read_word(addr).map_err(|e| format!("structure: {e}"));
        match self.cfg.mlu.structure {
            Structure::List => {
                let mut seen = Vec::new();
                let mut node = self.root;
                while node != 0 {
                    if seen.len() > n {
                        return Err("list: longer than the node count (cycle?)".into());
                    }
                    seen.push(node);
                    node = read(node + LINK0)?;
                }
                if seen.iter().ne(self.list.iter()) || seen.len() != n {
                    return Err(format!("list: memory holds {} nodes in another order than the {} the runtime has", seen.len(), n));
                }
            }
            Structure::Bst => {
                // In-order walk with bounds; also measures depth.
                fn visit(
                    rt: &Runtime,
                    node: u64,
                    lo: u128,
                    hi: u128,
                    depth: usize,
                    out: &mut Vec<u64>,
                    max_depth: &mut usize,
                ) -> Result<(), String> {
                    if node == 0 {
                        return Ok(());
                    }
                    if out.len() > rt.nodes.len() || depth > rt.nodes.len() {
                        return Err("bst: more nodes than the runtime has (cycle?)".into());
                    }
                    let rd = |off| rt.mem.read_word(node + off).map_err(|e| format!("bst: {e}"));
                    let base = rd(BASE)?;
                    let (size, _) = unpack_size_tag(rd(SIZE_TAG)?);
                    let end = base as u128 + size as u128;
                    if (base as u128) < lo || end > hi {
                        return Err(format!("bst: node at {node:#x} out of order"));
                    }
                    *max_depth = (*max_depth).max(depth);
                    visit(rt, rd(LINK0)?, lo, base as u128, depth + 1, out, max_depth)?;
                    out.push(node);
                    visit(rt, rd(LINK1)?, end, hi, depth + 1, out, max_depth)
                }
                let mut order = Vec::new();
                let mut depth = 0;
                visit(self, self.root, 0, u128::MAX, 1, &mut order, &mut depth)?;
                let want: Vec<u64> = self.nodes.values().map(|r| r.loc).collect();
                if order != want {
                    return Err(format!("bst: in-order walk gives {} nodes, not the runtime's {}", order.len(), n));
                }
                let balanced = (usize::BITS - n.leading_zeros()) as usize; // ceil(log2(n+1))
                if depth != balanced {
                    return Err(format!("bst: depth {depth} with {n} nodes, balanced is {balanced}"));
                }
            }
            Structure::Sol => {}
        }
        if self.mlu.csrs().root != self.root {
            return Err(format!("root CSR {:#x} != structure root {:#x}", self.mlu.csrs().root, self.root));
        }
        let mut cached = HashSet::new();
        for (way, e) in self.mlu.mlb().entries().iter().enumerate().filter(|(_, e)| e.valid) {
            if !cached.insert(e.location) {
                return Err(format!("MLB holds location {:#x} twice", e.location));
            }
            let mem_meta = self
                .mem
                .read_word(e.location + BASE)
                .and_then(|b| Ok(Meta::from_words(b, self.mem.read_word(e.location + SIZE_TAG)?)));
            if mem_meta != Ok(e.meta()) {
                return Err(format!("MLB way {way} (location {:#x}) is not coherent with memory", e.location));
            }
            // One-hot range search: no other entry's range holds this one's
            // first or last byte.
            let mlb = self.mlu.mlb();
            if e.size > 0
                && (mlb.range_matches(e.base) != 1 << way || mlb.range_matches(e.base + (e.size - 1).min(ADDR_MASK - e.base)) != 1 << way)
            {
                return Err(format!("MLB way {way}: range search not one-hot"));
            }
        }
        Ok(())
    }
}
