//! One walker of the MLU as an SM unit (spec section 6, docs/design.md "The
//! MLU as an SM unit"); the unit ([`crate::mlu_unit`]) has K of them. The
//! golden twin of the RTL walker, cycle by cycle.
//!
//! A walker reads whole 32-byte nodes through the metadata port (one request
//! returns base, size|tag, link0 and link1) with at most one read
//! outstanding, and serves one [`WalkKey`]:
//! - `Range(a)` (LOADMETA, HWONLY MEMCHECK.G): from the root, list: the node
//!   holds `a` or follow link0; bst: `a < base` left (link0), `a >= base +
//!   size` right (link1), else found. A link of 0 ends it (not found). Before
//!   a node is read, if `step_limit` nodes have been visited the walk ends
//!   in `StepLimit` (a limit of 0 faults at once); a read error ends it in
//!   `MemError`. A root of 0 is an empty structure. Node addresses use bits
//!   55..5 only, as MLB locations do.
//! - `Location(loc)` (a COMPILER-mode MEMCHECK.G whose location missed the
//!   MLB): one read of the node at `loc`.
//! - `sol` (models only): one read that the port answers with the node the
//!   speed-of-light table names (one step, as in [`crate::traverser`]).
//! - `Range(a)` with `a` in the heap window (`sim::mlu` "Heap window"): one
//!   read of the directory node of `a`'s granule, whatever the structure,
//!   root or step limit; its link0 is the chunk's location (0: not found).
//!   The node's address takes a cycle of its own (`HeapNode`: the RTL
//!   registers the sum, so the port's request path has no adder).
//!
//! Unlike the word-by-word [`crate::traverser`], an error response fails the
//! whole sector: a node whose link word is unreadable ends its walk in
//! `MemError` even where the link is not needed.
//!
//! Timing: a walker started in cycle t asks for the port from cycle t+1
//! (`Issue`); the read leaves in the first cycle the port takes it (`Wait`);
//! the cycle its sector arrives the data is registered (`Decide` in the next
//! cycle), where the node is compared and the walker either asks for the
//! next node (`Issue` the cycle after) or is `Done`. So a node costs the
//! port's latency plus 2 cycles when the port is free.
use crate::config::Structure;
use crate::mlb::LOC_MASK;
use crate::mlu::HeapWindow;
use crate::node::Meta;

/// What a walk looks for; also the key that merges a second miss onto a walk
/// in flight (the unit's MSHR match).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WalkKey {
    /// The node whose range holds this untagged address.
    Range(u64),
    /// The node at this location (bits 55..5).
    Location(u64),
}

/// How a walk ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkResult {
    Found { location: u64, meta: Meta },
    NotFound,
    StepLimit,
    MemError,
}

/// A walker's state register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WalkerState {
    #[default]
    Idle,
    /// A heap lookup forms its directory node's address (one cycle).
    HeapNode { node: u64 },
    /// Asks the port for a read of the node at `node`.
    Issue { node: u64 },
    /// The read of `node` is outstanding.
    Wait { node: u64 },
    /// The sector of `node` arrived last cycle (`None`: an error response);
    /// compared this cycle.
    Decide { node: u64, data: Option<[u64; 4]>, sol_node: Option<u64> },
    /// Finished; the unit fills the MLB and hands the result to the requests
    /// waiting on it, then the walker is idle again.
    Done(WalkResult),
}

/// One read on the metadata port: the 32-byte node at `addr`, or for the
/// models' `sol` structure the node holding `sol` (then `addr` is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemReq {
    /// The walker's index: responses come back with it.
    pub id: usize,
    pub addr: u64,
    pub sol: Option<u64>,
}

/// One response of the metadata port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemResp {
    pub id: usize,
    /// base, size|tag, link0, link1; `None` is an error response.
    pub data: Option<[u64; 4]>,
    /// `sol` requests only: the location of the node found (None: none).
    pub sol_node: Option<u64>,
}

/// One walker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Walker {
    pub state: WalkerState,
    pub key: WalkKey,
    /// Nodes visited so far.
    pub steps: u32,
    /// An INVALIDATE or FLUSH met this walk in flight: it does not fill the
    /// MLB and takes no more merged misses (what it read may be stale).
    pub cancelled: bool,
}

impl Default for Walker {
    fn default() -> Self {
        Walker { state: WalkerState::Idle, key: WalkKey::Location(0), steps: 0, cancelled: false }
    }
}

/// The walker's view of the unit's CSRs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkCsrs {
    pub structure: Structure,
    pub root: u64,
    pub step_limit: u32,
    pub heap: HeapWindow,
}

impl Walker {
    pub fn is_idle(&self) -> bool {
        self.state == WalkerState::Idle
    }

    /// Still reading memory (a merge candidate unless cancelled).
    pub fn in_flight(&self) -> bool {
        matches!(
            self.state,
            WalkerState::HeapNode { .. } | WalkerState::Issue { .. } | WalkerState::Wait { .. } | WalkerState::Decide { .. }
        )
    }

    /// Start a walk for `key` (the walker is idle).
    pub fn start(&mut self, key: WalkKey, csrs: &WalkCsrs) {
        debug_assert!(self.is_idle());
        *self = Walker { key, ..Walker::default() };
        self.state = match key {
            WalkKey::Location(loc) => WalkerState::Issue { node: loc & LOC_MASK },
            WalkKey::Range(a) if csrs.heap.holds(a) => WalkerState::HeapNode { node: csrs.heap.node_of(a) },
            WalkKey::Range(_) if csrs.structure != Structure::Sol && csrs.root & LOC_MASK == 0 => {
                WalkerState::Done(WalkResult::NotFound)
            }
            WalkKey::Range(_) if csrs.step_limit == 0 => WalkerState::Done(WalkResult::StepLimit),
            WalkKey::Range(_) if csrs.structure == Structure::Sol => WalkerState::Issue { node: 0 },
            WalkKey::Range(_) => WalkerState::Issue { node: csrs.root & LOC_MASK },
        };
    }

    /// The read this walker asks the port for this cycle.
    pub fn request(&self, id: usize, csrs: &WalkCsrs) -> Option<MemReq> {
        match (self.state, self.key) {
            (WalkerState::Issue { .. }, WalkKey::Range(a)) if csrs.structure == Structure::Sol && !csrs.heap.holds(a) => {
                Some(MemReq { id, addr: 0, sol: Some(a) })
            }
            (WalkerState::Issue { node }, _) => Some(MemReq { id, addr: node, sol: None }),
            _ => None,
        }
    }

    /// The state after this cycle: `granted` = the port took this walker's
    /// read; `resp` = its sector arrived this cycle.
    pub fn next(&mut self, granted: bool, resp: Option<&MemResp>, csrs: &WalkCsrs) {
        self.state = match self.state {
            WalkerState::HeapNode { node } => WalkerState::Issue { node },
            WalkerState::Issue { node } if granted => WalkerState::Wait { node },
            WalkerState::Wait { node } => match resp {
                Some(r) => WalkerState::Decide { node, data: r.data, sol_node: r.sol_node },
                None => WalkerState::Wait { node },
            },
            WalkerState::Decide { node, data, sol_node } => {
                self.steps += 1;
                self.decide(node, data, sol_node, csrs)
            }
            s => s,
        };
    }

    /// Compare the node just read (one node visited, counted in `steps`).
    fn decide(&self, node: u64, data: Option<[u64; 4]>, sol_node: Option<u64>, csrs: &WalkCsrs) -> WalkerState {
        let Some(d) = data else { return WalkerState::Done(WalkResult::MemError) };
        let meta = Meta::from_words(d[0], d[1]);
        let a = match self.key {
            WalkKey::Location(_) => return WalkerState::Done(WalkResult::Found { location: node, meta }),
            WalkKey::Range(a) => a,
        };
        if csrs.heap.holds(a) {
            return WalkerState::Done(match d[2] & LOC_MASK {
                0 => WalkResult::NotFound,
                location => WalkResult::Found { location, meta },
            });
        }
        if csrs.structure == Structure::Sol {
            return WalkerState::Done(match sol_node {
                Some(location) => WalkResult::Found { location: location & LOC_MASK, meta },
                None => WalkResult::NotFound,
            });
        }
        if meta.contains(a) {
            return WalkerState::Done(WalkResult::Found { location: node, meta });
        }
        let link = match csrs.structure {
            Structure::Bst if a >= meta.base => d[3],
            _ => d[2],
        } & LOC_MASK;
        if link == 0 {
            WalkerState::Done(WalkResult::NotFound)
        } else if self.steps >= csrs.step_limit {
            WalkerState::Done(WalkResult::StepLimit)
        } else {
            WalkerState::Issue { node: link }
        }
    }
}
