//! MLB replacement policies (docs/design.md "MLB"); mirrors the RTL's
//! `plru` block (hw/src/plru.rs) bit for bit.
//!
//! Tree pseudo-LRU: N-1 bits in heap order (node 0 = root, children of node i
//! are 2i+1 = left and 2i+2 = right, leaves are ways 0..N-1 left to right).
//! The victim is found from the root, going left on 0 and right on 1; a touch
//! of way w sets every node on w's path to point *away* from w. Reset: all 0.
//!
//! Round robin: a log2(N)-bit pointer, reset 0; only a fill that replaces a
//! valid entry advances it.
//!
//! Who calls what (the MLB applies the design's rules through this trait):
//! `touch(way)` on every hit; `on_fill(way, replaced_valid)` on every fill;
//! `victim()` only when every entry is valid; `reset()` on flush and reset.
use crate::config::Replacement;

/// A replacement policy over N ways.
pub trait ReplacementPolicy {
    /// The way to replace when every entry is valid.
    fn victim(&self) -> usize;
    /// A hit on `way`.
    fn touch(&mut self, way: usize);
    /// A fill into `way`; `replaced_valid` says whether it evicted a valid
    /// entry (true only when `way` came from [`ReplacementPolicy::victim`]).
    fn on_fill(&mut self, way: usize, replaced_valid: bool);
    /// Back to the reset state.
    fn reset(&mut self);
    /// The state register as the RTL holds it (PLRU: bit i = tree node i;
    /// round robin: the pointer).
    fn state_bits(&self) -> u64;
}

/// Tree pseudo-LRU over N = 1, 2, 4, ..., 32 ways (N = 1 has no bits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreePlru {
    ways: usize,
    bits: u64,
    /// Per way: the nodes on its path (`path[w]`) and the values a touch
    /// writes into them (`away[w]`), precomputed so a touch is one
    /// mask-and-or (the hot path of every MLB hit).
    path: [u32; 32],
    away: [u32; 32],
}

impl TreePlru {
    /// Panics unless `ways` is a power of two in 1..=32 (a caller bug: the
    /// configuration is validated before any MLB is built).
    pub fn new(ways: usize) -> Self {
        assert!(ways.is_power_of_two() && ways <= 32, "tree PLRU needs a power-of-two way count <= 32, got {ways}");
        let (mut path, mut away) = ([0u32; 32], [0u32; 32]);
        for way in 0..ways {
            let mut node = way + ways - 1;
            while node > 0 {
                let parent = (node - 1) / 2;
                path[way] |= 1 << parent;
                if node == 2 * parent + 1 {
                    // `way` is in the left subtree: point right, away from it.
                    away[way] |= 1 << parent;
                }
                node = parent;
            }
        }
        TreePlru { ways, bits: 0, path, away }
    }

    /// A PLRU in a given state (bit i = node i), for exhaustive tests.
    pub fn with_bits(ways: usize, bits: u64) -> Self {
        let mut p = TreePlru::new(ways);
        p.bits = bits & p.mask();
        p
    }

    pub fn ways(&self) -> usize {
        self.ways
    }

    /// The N-1 state bits, bit i = heap node i.
    pub fn bits(&self) -> u64 {
        self.bits
    }

    fn mask(&self) -> u64 {
        (1u64 << (self.ways - 1)) - 1
    }
}

impl ReplacementPolicy for TreePlru {
    #[inline]
    fn victim(&self) -> usize {
        let inner = self.ways - 1;
        let mut node = 0;
        while node < inner {
            node = 2 * node + 1 + ((self.bits >> node) & 1) as usize;
        }
        node - inner
    }

    #[inline]
    fn touch(&mut self, way: usize) {
        debug_assert!(way < self.ways);
        self.bits = (self.bits & !(self.path[way] as u64)) | self.away[way] as u64;
    }

    #[inline]
    fn on_fill(&mut self, way: usize, _replaced_valid: bool) {
        self.touch(way);
    }

    fn reset(&mut self) {
        self.bits = 0;
    }

    fn state_bits(&self) -> u64 {
        self.bits
    }
}

/// Round-robin replacement over N = 1, 2, 4, ..., 32 ways.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundRobin {
    ways: usize,
    ptr: usize,
}

impl RoundRobin {
    /// Panics unless `ways` is a power of two in 1..=32.
    pub fn new(ways: usize) -> Self {
        assert!(ways.is_power_of_two() && ways <= 32, "round robin needs a power-of-two way count <= 32, got {ways}");
        RoundRobin { ways, ptr: 0 }
    }

    /// A round robin with its pointer at `ptr`, for exhaustive tests.
    pub fn with_ptr(ways: usize, ptr: usize) -> Self {
        let mut r = RoundRobin::new(ways);
        r.ptr = ptr % ways;
        r
    }

    pub fn ptr(&self) -> usize {
        self.ptr
    }

    /// Advance the pointer: a fill replaced the valid entry it pointed at.
    pub fn on_fill_replacing_valid(&mut self) {
        self.ptr = (self.ptr + 1) % self.ways;
    }
}

impl ReplacementPolicy for RoundRobin {
    #[inline]
    fn victim(&self) -> usize {
        self.ptr
    }
    #[inline]
    fn touch(&mut self, _way: usize) {}
    #[inline]
    fn on_fill(&mut self, _way: usize, replaced_valid: bool) {
        if replaced_valid {
            self.on_fill_replacing_valid();
        }
    }
    fn reset(&mut self) {
        self.ptr = 0;
    }
    fn state_bits(&self) -> u64 {
        self.ptr as u64
    }
}

/// The configured policy, as an enum so the MLB's hot path has no dynamic
/// dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    Plru(TreePlru),
    RoundRobin(RoundRobin),
}

impl Policy {
    pub fn new(kind: Replacement, ways: usize) -> Policy {
        match kind {
            Replacement::Plru => Policy::Plru(TreePlru::new(ways)),
            Replacement::RoundRobin => Policy::RoundRobin(RoundRobin::new(ways)),
        }
    }
}

impl ReplacementPolicy for Policy {
    #[inline]
    fn victim(&self) -> usize {
        match self {
            Policy::Plru(p) => p.victim(),
            Policy::RoundRobin(r) => r.victim(),
        }
    }
    #[inline]
    fn touch(&mut self, way: usize) {
        match self {
            Policy::Plru(p) => p.touch(way),
            Policy::RoundRobin(r) => r.touch(way),
        }
    }
    #[inline]
    fn on_fill(&mut self, way: usize, replaced_valid: bool) {
        match self {
            Policy::Plru(p) => p.on_fill(way, replaced_valid),
            Policy::RoundRobin(r) => r.on_fill(way, replaced_valid),
        }
    }
    fn reset(&mut self) {
        match self {
            Policy::Plru(p) => p.reset(),
            Policy::RoundRobin(r) => r.reset(),
        }
    }
    fn state_bits(&self) -> u64 {
        match self {
            Policy::Plru(p) => p.state_bits(),
            Policy::RoundRobin(r) => r.state_bits(),
        }
    }
}
