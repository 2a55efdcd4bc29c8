//! The Metadata Loading Unit, transaction level (spec section 4,
//! docs/design.md); mirrors the RTL top `mlu` (hw/src/mlu.rs): the MLB, the
//! traverser, the MEMCHECK datapath, the CSRs and the counters.
//!
//! Each method is one MLU operation run to completion (the MLU is blocking:
//! one operation in flight), reading metadata through a [`MetaMemory`].
//!
//! - `loadmeta(p)`: tag 0 gives location 0 without touching the MLB; else an
//!   MLB range search of `untag(p)`; on a miss the traverser walks the
//!   structure from the `root` CSR; a found node is filled into the MLB and
//!   its location returned; not found gives `NO_META`; the step limit gives
//!   TRAVERSAL_LIMIT and a read error MEM_ERROR (faults of op LOADMETA).
//! - `memcheck_g(p, w, loc)`: docs/design.md's seven steps. In HWONLY mode the
//!   location operand is ignored and steps 2-3 become the LOADMETA path on
//!   `untag(p)` (a not-found address faults NO_META).
//! - `sol` structure: the memory's [`MetaMemory::sol_lookup`] table stands for
//!   the hypothetical O(1) structure (the runtime's memory view provides it).
//! - Heap window (CSRs `heap`, spec section 8's registration of the canary
//!   allocator's chunks): a naturally aligned power-of-two region, as a
//!   PMP NAPOT region, so that decoding it needs no carry chain: a range
//!   miss whose address has `a & !heap.mask == heap.base` is not walked:
//!   the MLU reads one 32-byte node from the allocator's directory, at
//!   `heap.dir | (a & heap.mask)` (bits 55..5).
//!   The node holds base and size|tag as any node, and in its link0 word the
//!   chunk's location (the directory node of its first granule; 0 = no
//!   chunk). The chunk is filled into the MLB unless its location is there
//!   already (an address in a chunk's canary or slack is outside the entry's
//!   range but inside the chunk), so there is never a duplicate. A
//!   MEMCHECK.G location miss fetches the location's node as for any node.
use crate::config::{ConfigError, Mode, MluConfig, Structure, Target};
use crate::fault::{Fault, FaultCode, Op};
use crate::memcheck::{self, check_meta};
use crate::memory::MetaMemory;
use crate::mlb::{Mlb, LOC_MASK};
use crate::node::{Meta, BASE, LINK0, SIZE_TAG};
use crate::pointer::{tag, untag, NO_META};
use crate::traverser::{walk_with, WalkOutcome};
use serde::{Deserialize, Serialize};

/// The MLU's control/status registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Csrs {
    pub mode: Mode,
    pub structure: Structure,
    /// List head or bst root (0 = empty structure).
    pub root: u64,
    /// 16-bit traversal step limit.
    pub step_limit: u32,
    /// The device heap's window (reset: empty).
    #[serde(default)]
    pub heap: HeapWindow,
}

/// The device heap's window: a region of `mask + 1` bytes (a power of two)
/// at `base` (aligned to it) whose addresses are looked up in the
/// allocator's directory at `dir` (aligned likewise; one 32-byte node per
/// 32-byte granule) instead of the structure. `mask` = 0 (reset) turns it
/// off. Aligned power-of-two regions decode with an equality compare and
/// form the node with an OR: no adder or magnitude compare, which a walker
/// could not fit in a 500 ps cycle beside its other work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeapWindow {
    pub base: u64,
    pub mask: u64,
    pub dir: u64,
}

impl HeapWindow {
    pub fn holds(&self, a: u64) -> bool {
        self.mask != 0 && a & !self.mask == self.base
    }
    /// Whether byte address `a` is in the directory window.
    pub fn in_directory(&self, a: u64) -> bool {
        a >= self.dir && a - self.dir <= self.mask
    }
    /// The directory node of the granule holding `a` (in the window): bits
    /// 55..5 of `dir | (a & mask)`, as the walker forms it.
    pub fn node_of(&self, a: u64) -> u64 {
        (self.dir | (a & self.mask)) & LOC_MASK
    }
}

/// Event counters (the RTL keeps the same set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counters {
    /// Operations issued.
    pub loadmeta: u64,
    pub memcheck_g: u64,
    pub memcheck_s: u64,
    /// MLB range searches (LOADMETA and HWONLY MEMCHECK.G of tagged pointers).
    pub range_lookups: u64,
    pub range_hits: u64,
    pub range_misses: u64,
    /// MLB location searches (COMPILER-mode MEMCHECK.G of tagged pointers with
    /// a location other than 0 / NO_META).
    pub loc_lookups: u64,
    pub loc_hits: u64,
    pub loc_misses: u64,
    /// Nodes visited by the traverser.
    pub steps: u64,
    /// 8-byte metadata words read (traversal and location-miss fetches).
    pub meta_reads: u64,
    /// Faults raised by LOADMETA, MEMCHECK.G and MEMCHECK.S.
    pub faults: u64,
    pub invalidates: u64,
    pub flushes: u64,
}

/// The MLU model.
#[derive(Clone, Debug, PartialEq)]
pub struct Mlu {
    cfg: MluConfig,
    mlb: Mlb,
    csrs: Csrs,
    counters: Counters,
    /// When enabled, every metadata word address requested, in order (for
    /// read-by-read comparison with the RTL's memory port).
    read_log: Option<Vec<u64>>,
}

impl Mlu {
    /// An MLU with an empty MLB and CSRs at their reset values (root 0).
    /// The configuration is validated for the model.
    pub fn new(cfg: &MluConfig) -> Result<Mlu, ConfigError> {
        cfg.validate(Target::Model)?;
        Ok(Mlu {
            cfg: cfg.clone(),
            mlb: Mlb::new(cfg.entries, cfg.replacement),
            csrs: Csrs {
                mode: cfg.mode,
                structure: cfg.structure,
                root: 0,
                step_limit: cfg.step_limit,
                heap: HeapWindow::default(),
            },
            counters: Counters::default(),
            read_log: None,
        })
    }

    pub fn config(&self) -> &MluConfig {
        &self.cfg
    }
    pub fn mlb(&self) -> &Mlb {
        &self.mlb
    }
    pub fn csrs(&self) -> &Csrs {
        &self.csrs
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    pub fn reset_counters(&mut self) {
        self.counters = Counters::default();
    }

    /// Start (or stop, clearing it) recording the metadata read addresses.
    pub fn set_read_log(&mut self, on: bool) {
        self.read_log = on.then(Vec::new);
    }

    /// The metadata word addresses requested since the last call (traversal
    /// and location-miss fetches, in order); empty when logging is off.
    pub fn take_reads(&mut self) -> Vec<u64> {
        self.read_log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// CSR writes.
    pub fn set_root(&mut self, root: u64) {
        self.csrs.root = root;
    }
    pub fn set_mode(&mut self, mode: Mode) {
        self.csrs.mode = mode;
    }
    pub fn set_structure(&mut self, structure: Structure) {
        self.csrs.structure = structure;
    }
    /// The device heap's window (`base` and `dir` 32-byte aligned, checked by
    /// the runtime that sets it).
    pub fn set_heap_window(&mut self, heap: HeapWindow) {
        self.csrs.heap = heap;
    }
    /// Values above 16 bits are truncated as the 16-bit CSR would.
    pub fn set_step_limit(&mut self, limit: u32) {
        self.csrs.step_limit = limit & 0xFFFF;
    }

    /// Hardware reset: empty MLB, CSRs at reset values, counters cleared.
    pub fn reset(&mut self) {
        self.mlb.reset();
        self.csrs = Csrs {
            mode: self.cfg.mode,
            structure: self.cfg.structure,
            root: 0,
            step_limit: self.cfg.step_limit,
            heap: HeapWindow::default(),
        };
        self.counters = Counters::default();
    }

    /// The range path shared by LOADMETA and HWONLY MEMCHECK.G: MLB range
    /// search, traversal and fill on a miss. Ok(None) = not found.
    #[inline]
    fn range_path(&mut self, mem: &(impl MetaMemory + ?Sized), a: u64) -> Result<Option<(u64, Meta)>, FaultCode> {
        self.counters.range_lookups += 1;
        if let Some(w) = self.mlb.search_range(a) {
            self.counters.range_hits += 1;
            self.mlb.touch(w);
            let e = self.mlb.entry(w);
            return Ok(Some((e.location, e.meta())));
        }
        self.counters.range_misses += 1;
        if self.csrs.heap.holds(a) {
            return self.heap_path(mem, a);
        }
        let mut reads = 0u64;
        let log = &mut self.read_log;
        let (outcome, steps) = walk_with(mem, self.csrs.root, self.csrs.structure, a, self.csrs.step_limit, |addr| {
            reads += 1;
            if let Some(l) = log {
                l.push(addr);
            }
        });
        self.counters.steps += steps as u64;
        self.counters.meta_reads += reads;
        match outcome {
            WalkOutcome::Found { location, meta } => {
                self.mlb.fill(location, meta);
                Ok(Some((location, meta)))
            }
            WalkOutcome::NotFound => Ok(None),
            WalkOutcome::StepLimit => Err(FaultCode::TraversalLimit),
            WalkOutcome::MemError { .. } => Err(FaultCode::MemError),
        }
    }

    /// The heap window's lookup: one directory node read instead of a walk
    /// (see the module doc). Ok(None) = no chunk holds `a`.
    #[inline(never)]
    fn heap_path(&mut self, mem: &(impl MetaMemory + ?Sized), a: u64) -> Result<Option<(u64, Meta)>, FaultCode> {
        let node = self.csrs.heap.node_of(a);
        self.counters.steps += 1;
        let location = self.read(mem, node + LINK0)? & LOC_MASK;
        if location == 0 {
            return Ok(None);
        }
        let meta = Meta::from_words(self.read(mem, node + BASE)?, self.read(mem, node + SIZE_TAG)?);
        match self.mlb.search_location(location) {
            Some(w) => self.mlb.touch(w),
            None => {
                self.mlb.fill(location, meta);
            }
        }
        Ok(Some((location, meta)))
    }

    /// One metadata word read, counted and logged.
    fn read(&mut self, mem: &(impl MetaMemory + ?Sized), addr: u64) -> Result<u64, FaultCode> {
        self.counters.meta_reads += 1;
        if let Some(l) = &mut self.read_log {
            l.push(addr);
        }
        mem.read_word(addr).map_err(|_| FaultCode::MemError)
    }

    #[cold]
    #[inline(never)]
    fn fault(&mut self, code: FaultCode, op: Op, p: u64, meta: Option<Meta>) -> Fault {
        self.counters.faults += 1;
        let alloc = if code.has_alloc() { meta } else { None };
        let distance = match (code, &alloc) {
            (FaultCode::OutOfBounds | FaultCode::SharedOob, Some(m)) => {
                let a = if op == Op::MemcheckS { p } else { untag(p) };
                Some(memcheck::distance(a, m.base, m.size))
            }
            _ => None,
        };
        Fault { code, op, ptr: p, alloc, distance }
    }

    /// LOADMETA: the location of the node holding `untag(p)`, 0 for a tag-0
    /// pointer, NO_META when none holds it.
    pub fn loadmeta(&mut self, mem: &(impl MetaMemory + ?Sized), p: u64) -> Result<u64, Fault> {
        self.counters.loadmeta += 1;
        if tag(p) == 0 {
            return Ok(0);
        }
        match self.range_path(mem, untag(p)) {
            Ok(Some((loc, _))) => Ok(loc),
            Ok(None) => Ok(NO_META),
            Err(code) => Err(self.fault(code, Op::LoadMeta, p, None)),
        }
    }

    /// MEMCHECK.G of pointer `p`, width `w` (1, 2, 4, 8 or 16; other widths
    /// are not issued by the hardware and are computed with the same formula),
    /// location `loc` (ignored in HWONLY). Returns `untag(p)` or the fault.
    #[inline]
    pub fn memcheck_g(&mut self, mem: &(impl MetaMemory + ?Sized), p: u64, w: u32, loc: u64) -> Result<u64, Fault> {
        self.counters.memcheck_g += 1;
        if tag(p) == 0 {
            return Ok(untag(p));
        }
        let meta = match self.csrs.mode {
            Mode::Compiler => {
                if loc == 0 || loc == NO_META {
                    return Err(self.fault(FaultCode::NoMeta, Op::MemcheckG, p, None));
                }
                self.counters.loc_lookups += 1;
                if let Some(way) = self.mlb.search_location(loc) {
                    self.counters.loc_hits += 1;
                    self.mlb.touch(way);
                    self.mlb.entry(way).meta()
                } else {
                    self.counters.loc_misses += 1;
                    match self.fetch(mem, loc) {
                        Ok(m) => {
                            self.mlb.fill(loc, m);
                            m
                        }
                        Err(code) => return Err(self.fault(code, Op::MemcheckG, p, None)),
                    }
                }
            }
            Mode::Hwonly => match self.range_path(mem, untag(p)) {
                Ok(Some((_, m))) => m,
                Ok(None) => return Err(self.fault(FaultCode::NoMeta, Op::MemcheckG, p, None)),
                Err(code) => return Err(self.fault(code, Op::MemcheckG, p, None)),
            },
        };
        match check_meta(p, w, &meta) {
            Ok(a) => Ok(a),
            Err(code) => Err(self.fault(code, Op::MemcheckG, p, Some(meta))),
        }
    }

    /// The location-miss fetch: base at `loc+0`, size|tag at `loc+8`, with
    /// the location taken by bits 55..5 as the MLB stores it (so a misaligned
    /// location aliases the node holding it, and the fill stays coherent).
    #[inline(never)]
    fn fetch(&mut self, mem: &(impl MetaMemory + ?Sized), loc: u64) -> Result<Meta, FaultCode> {
        let loc = loc & LOC_MASK;
        let base = self.read(mem, loc + BASE)?;
        let size_tag = self.read(mem, loc + SIZE_TAG)?;
        Ok(Meta::from_words(base, size_tag))
    }

    /// MEMCHECK.S of shared address `a`, width `w`, against the compile-time
    /// `base`/`size`: returns `a` or SHARED_OOB (the report's alloc carries
    /// base and size with tag 0).
    pub fn memcheck_s(&mut self, a: u64, w: u32, base: u64, size: u64) -> Result<u64, Fault> {
        self.counters.memcheck_s += 1;
        match memcheck::memcheck_s(a, w, base, size) {
            Ok(a) => Ok(a),
            Err(code) => Err(self.fault(code, Op::MemcheckS, a, Some(Meta { base, size, tag: 0 }))),
        }
    }

    /// INVALIDATE: drop the MLB entry holding `loc`.
    pub fn invalidate(&mut self, loc: u64) {
        self.counters.invalidates += 1;
        self.mlb.invalidate(loc);
    }

    /// FLUSH: drop every MLB entry.
    pub fn flush(&mut self) {
        self.counters.flushes += 1;
        self.mlb.flush();
    }
}
