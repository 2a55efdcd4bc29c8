//! The traverser: the MLU's FSM that walks the metadata structure on an MLB
//! range miss (spec section 6, docs/design.md "Traverser"); mirrors the RTL's
//! `traverser` block (hw/src/traverser.rs) read by read.
//!
//! One step = one node visited. A visit reads `+0` (base) then `+8`
//! (size|tag); if `base <= a < base + size` the node is found (its tag is not
//! looked at, so a FREED node is found and a dangling pointer reaches
//! USE_AFTER_FREE). Otherwise it reads one link: list `+16`; bst `+16` (left)
//! when `a < base`, `+24` (right) when `a >= base + size`. A link of 0 ends
//! the walk (not found). Node addresses (root, links) are interpreted by
//! bits 55..5 only, like MLB locations (docs/design.md "Golden model
//! decisions"), so a link's bits 63..56 and 4..0 are ignored. A root of 0 is an empty structure (0 steps, 0 reads).
//! Before visiting a node, if `step_limit` nodes have been visited the walk
//! ends with `StepLimit` (so a limit of 0 faults on the first node). A read
//! error ends it with `MemError`.
//!
//! `sol` (models only): one step and one read: the memory's
//! [`MetaMemory::sol_lookup`] table gives the location, and the recorded read
//! is the node's base word (the metadata itself comes with it: the
//! hypothetical table costs one access).
use crate::config::Structure;
use crate::memory::MetaMemory;
use crate::mlb::LOC_MASK;
use crate::node::{Meta, BASE, LINK0, LINK1, SIZE_TAG};

/// How a walk ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkOutcome {
    /// The node at `location` holds the address.
    Found { location: u64, meta: Meta },
    /// No node holds it (LOADMETA answers NO_META).
    NotFound,
    /// The step limit was reached (TRAVERSAL_LIMIT).
    StepLimit,
    /// The read of the word at `addr` failed (MEM_ERROR).
    MemError { addr: u64 },
}

/// A finished walk: its outcome, the nodes visited and every word read, in
/// order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walk {
    pub outcome: WalkOutcome,
    pub steps: u32,
    pub reads: Vec<u64>,
}

/// Walk `structure` from `root` looking for untagged address `a`.
pub fn walk(mem: &(impl MetaMemory + ?Sized), root: u64, structure: Structure, a: u64, step_limit: u32) -> Walk {
    let mut reads = Vec::new();
    let (outcome, steps) = walk_with(mem, root, structure, a, step_limit, |addr| reads.push(addr));
    Walk { outcome, steps, reads }
}

/// The walk without collecting reads: calls `on_read(addr)` for every word
/// read and returns `(outcome, steps)`. The MLU model uses it to count reads
/// without allocating.
pub fn walk_with(
    mem: &(impl MetaMemory + ?Sized),
    root: u64,
    structure: Structure,
    a: u64,
    step_limit: u32,
    mut on_read: impl FnMut(u64),
) -> (WalkOutcome, u32) {
    let mut read = |addr: u64| {
        on_read(addr);
        mem.read_word(addr).map_err(|_| WalkOutcome::MemError { addr })
    };
    if structure == Structure::Sol {
        if step_limit == 0 {
            return (WalkOutcome::StepLimit, 0);
        }
        let Some(loc) = mem.sol_lookup(a).map(|l| l & LOC_MASK) else {
            return (WalkOutcome::NotFound, 1);
        };
        let base = match read(loc + BASE) {
            Ok(v) => v,
            Err(o) => return (o, 1),
        };
        // Not a separate read in the sol cost model: the table's one access
        // returns the whole metadata.
        let size_tag = match mem.read_word(loc + SIZE_TAG) {
            Ok(v) => v,
            Err(_) => return (WalkOutcome::MemError { addr: loc + SIZE_TAG }, 1),
        };
        return (WalkOutcome::Found { location: loc, meta: Meta::from_words(base, size_tag) }, 1);
    }
    // Node addresses are taken by bits 55..5, as the MLB stores locations:
    // every read is an aligned word of the 56-bit space.
    let mut node = root & LOC_MASK;
    let mut steps = 0u32;
    while node != 0 {
        if steps >= step_limit {
            return (WalkOutcome::StepLimit, steps);
        }
        steps += 1;
        let base = match read(node.wrapping_add(BASE)) {
            Ok(v) => v,
            Err(o) => return (o, steps),
        };
        let size_tag = match read(node.wrapping_add(SIZE_TAG)) {
            Ok(v) => v,
            Err(o) => return (o, steps),
        };
        let meta = Meta::from_words(base, size_tag);
        if meta.contains(a) {
            return (WalkOutcome::Found { location: node, meta }, steps);
        }
        let link = match structure {
            Structure::List => LINK0,
            _ if a < base => LINK0,
            _ => LINK1,
        };
        node = match read(node.wrapping_add(link)) {
            Ok(v) => v & LOC_MASK,
            Err(o) => return (o, steps),
        };
    }
    (WalkOutcome::NotFound, steps)
}
