//! Fault injection for the MLU cosimulation: faults the harness
//! injects into the metadata memory while a request runs, and the golden
//! model's view of the same faults, so the two can still be compared exactly.
//!
//! - [`Injection`] (in `mlu.rs`, command `'T'`): at metadata read number `at`
//!   of the next request, the memory answers with an error (a transient ECC
//!   or page fault), or words change first (a free, or links rewritten, while
//!   a walk is reading the structure). Reads before `at` see the old memory,
//!   reads from `at` on the new one.
//! - [`InjectedMemory`]: the model's memory for that request, with the same
//!   read numbering (the model counts its reads as the port takes them; the
//!   cosimulation checks that the counts agree).
//! - [`FaultPlan`]: how often [`super::program::MluBench`] injects which
//!   fault into the LOADMETA / MEMCHECK.G requests of its random programs.
//!
//! The defined results (docs/verification.md "Fault injection"): the MLU
//! answers exactly what the model answers reading the same word values in
//! the same order, a transient error ends the request with MEM_ERROR (no
//! fill), and every pass of a tagged MEMCHECK.G is an access inside a live
//! allocation with the pointer's tag at the time the request was issued
//! (checked by `MluBench` on every request: `false_passes`).
use sim::memory::{MemError, MemoryImage, MetaMemory};
use sim::runtime::SplitMix64;
use std::cell::Cell;

/// The metadata memory as the model sees it during one injected request.
pub struct InjectedMemory<'a> {
    pub image: &'a MemoryImage,
    pub at: u64,
    pub error: bool,
    pub writes: &'a [(u64, u64)],
    /// Reads so far (the next read's number).
    pub reads: Cell<u64>,
}

impl MetaMemory for InjectedMemory<'_> {
    fn read_word(&self, addr: u64) -> Result<u64, MemError> {
        let i = self.reads.get();
        self.reads.set(i + 1);
        if self.error && i == self.at {
            return Err(MemError::Poisoned { addr });
        }
        if !self.error && i >= self.at && addr.is_multiple_of(8) {
            if let Some(&(_, d)) = self.writes.iter().find(|(a, _)| *a == addr) {
                return Ok(d);
            }
        }
        self.image.read_word(addr)
    }
}

impl InjectedMemory<'_> {
    /// Whether the injection happened (the request reached read `at`).
    pub fn fired(&self) -> bool {
        self.reads.get() > self.at
    }
}

/// What changes under the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Read `at` answers with an error; memory is unchanged.
    Error,
    /// The allocation with this tagged pointer is freed (its node's
    /// size|tag word becomes FREED) after `at` reads; the runtime's
    /// INVALIDATE follows the request.
    Free(u64),
    /// Link word `link` of the node at `loc` becomes `value` after `at`
    /// reads (another node: a wrong order or a cycle; itself; 0; an
    /// unmapped or misaligned location), and stays so.
    Link { loc: u64, link: usize, value: u64 },
}

/// Counts of what the injections did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultStats {
    pub errors: u64,
    pub frees: u64,
    pub links: u64,
    /// Injections whose read `at` was reached (the others changed the
    /// memory only after the request: frees and links still apply).
    pub fired: u64,
    /// Injected requests by the model's answer: pass, and fault.
    pub passes: u64,
    pub faults: u64,
    /// Of the frees during a MEMCHECK.G: answered USE_AFTER_FREE (the
    /// request read the FREED size|tag word) or passed (it read the word
    /// before the free landed: the allocation was live at issue).
    pub free_uaf: u64,
    pub free_pass: u64,
}

impl std::fmt::Display for FaultStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "injected: {} transient errors, {} mid-walk frees ({} answered USE_AFTER_FREE, {} passed), {} link rewrites; {} fired; answers {} pass / {} fault",
            self.errors, self.frees, self.free_uaf, self.free_pass, self.links, self.fired, self.passes, self.faults
        )
    }
}

/// How often each fault is injected, per LOADMETA / MEMCHECK.G request
/// (per mille), drawn from its own PRNG so a plan never changes the
/// program's own draws.
#[derive(Clone, Debug)]
pub struct FaultPlan {
    pub error_per_mille: u64,
    pub free_per_mille: u64,
    pub link_per_mille: u64,
    pub rng: SplitMix64,
    pub stats: FaultStats,
}

impl FaultPlan {
    pub fn new(error_per_mille: u64, free_per_mille: u64, link_per_mille: u64, seed: u64) -> FaultPlan {
        FaultPlan { error_per_mille, free_per_mille, link_per_mille, rng: SplitMix64(seed ^ 0x6661_756c_7473), stats: FaultStats::default() }
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n.max(1)
    }
}
