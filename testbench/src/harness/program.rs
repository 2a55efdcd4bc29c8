//! Random MLU programs on the golden model's [`Runtime`], turned into
//! harness commands with the model's expected answer for each one.
//!
//! A *program* is a fresh runtime (seeded) and a reset MLU: random mallocs
//! (allocator-chosen and caller-given bases), frees (also double frees), and
//! accesses through live, dangling, untagged and wild pointers with in-bounds,
//! boundary, straddling and far offsets, MEMCHECK.S, FLUSH ("kernel
//! boundaries"), INVALIDATEs of arbitrary locations, step-limit CSR changes;
//! near the end of some programs a corrupted link (a cycle, or a link into
//! unmapped memory) or a poisoned node. COMPILER mode issues LOADMETA on the
//! root pointer and passes the location (sometimes a stale cached one, or a
//! bad one) to MEMCHECK.G; HWONLY issues MEMCHECK.G with a garbage location.
//!
//! Every metadata-memory change the runtime makes is mirrored into the
//! harness as word writes/forgets/poisons before the request that follows it:
//! after each runtime mutation the words of every node slot it may have
//! touched (the structure's nodes before and after, plus corrupted ones) are
//! read back from the runtime's memory image and diffed against the mirror.
//! The runtime's own INVALIDATEs (free, retirement) become INVALIDATE
//! requests, and root changes CSR writes. A program ends by reading the
//! hardware counters and CSRs, which must equal the model's.
//!
//! Latency prediction (hw/src/mlu.rs "Latencies"): with `c` the path's fixed
//! cost (as documented there; a MEMCHECK.G whose walk or fetch ends in
//! MEM_ERROR or TRAVERSAL_LIMIT skips the check cycle, one less) and the R
//! metadata reads the model counts, a response comes
//! `c + R + sum(latency drawn) + sum(ready stalls)` cycles after the request
//! is taken (each read is one request cycle plus its wait and latency); with
//! a fixed latency L and an always-ready port that is `c + R(L + 1)`.
use super::fault::{Change, FaultPlan, InjectedMemory};
use super::mlu::{counters_mod32, Cmd, HwState, Injection, MluReq, MluResp, CSR_MODE, CSR_ROOT, CSR_STEP_LIMIT, CSR_STRUCTURE};
use sim::config::{Mode, MluConfig, Replacement, Structure};
use sim::fault::{Fault, FaultCode};
use sim::memory::MemError;
use sim::mlu::Counters;
use sim::pointer::{tag, tagged, untag, NO_META};
use sim::runtime::{AllocState, Runtime, RuntimeConfig, SplitMix64};
use sim::scenario::{LinkTarget, PtrSpec, Scenario, ScenarioEvent};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

/// Requests left in a batch below which [`MluBench::batch`] issues only
/// one-request operations.
const TAIL: u64 = 32;

/// What a run draws its programs from.
#[derive(Clone, Debug)]
pub struct ProgramConfig {
    pub entries: usize,
    pub structure: Structure,
    pub mode: Mode,
    pub replacement: Replacement,
    /// Requests per program before the counters are compared and the MLU reset.
    pub program_len: u64,
    /// Live allocations kept at most.
    pub max_live: usize,
    /// Step limit of most programs (some use tiny ones to reach TRAVERSAL_LIMIT).
    pub step_limit: u32,
}

impl ProgramConfig {
    pub fn new(entries: usize, structure: Structure, mode: Mode) -> Self {
        // A list walk visits every node before the sought one: fewer live
        // allocations keep list programs' cycles per request near the bst's.
        let max_live = if structure == Structure::List { 12 } else { 48 };
        ProgramConfig { entries, structure, mode, replacement: Replacement::Plru, program_len: 50_000, max_live, step_limit: 4096 }
    }
}

/// The model's answer to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    pub req: MluReq,
    pub fault: FaultCode,
    /// LOADMETA's location (NO_META on a fault, as the RTL answers).
    pub loc: Option<u64>,
    /// The checked address on a MEMCHECK pass.
    pub addr: Option<u64>,
    /// Allocation base/size of a MEMCHECK.G fault that knows it.
    pub alloc: Option<(u64, u64)>,
    /// Metadata words the model read.
    pub reads: u64,
    /// Fixed cost of the path (cycles besides the reads).
    pub fixed_cycles: u32,
    /// Index of the request in the run.
    pub index: u64,
    /// For a request with an [`Injection`]: whether the model reached the
    /// injected read (the harness's flag 16 must agree).
    pub injected: Option<bool>,
}

/// The model's state at the end of a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateExpect {
    pub counters: Counters,
    pub root: u64,
    pub step_limit: u64,
    pub mode: u64,
}

/// One expectation per answer of the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    Resp(Expect),
    State(StateExpect),
}

/// A batch: the commands and what their answers must be.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub cmds: Vec<Cmd>,
    pub expected: Vec<Expected>,
    /// Requests in the batch.
    pub requests: u64,
    /// For a scenario replay ([`MluBench::replay`]): per scenario event, its
    /// index and the range of `expected` its requests produced.
    pub events: Vec<(usize, std::ops::Range<usize>)>,
}

/// How a request's answer differs from the model's.
pub fn check_resp(e: &Expect, r: &MluResp) -> Option<String> {
    let mut errs = vec![];
    if r.flags & 2 != 0 {
        return Some(format!("no response within {} cycles (hang)", super::mlu::CYCLE_LIMIT));
    }
    if r.flags & 1 != 0 {
        errs.push("mlb_multi (one-hot assertion) was high".to_string());
    }
    if r.flags & 4 != 0 {
        errs.push("resp_valid without a request in flight".to_string());
    }
    if r.flags & 8 != 0 {
        errs.push("memory port misuse (unaligned address, or a request changed/dropped before taken)".to_string());
    }
    if let Some(fired) = e.injected {
        if (r.flags & 16 != 0) != fired {
            errs.push(format!("injected fault fired in the harness: {}, in the model: {fired}", r.flags & 16 != 0));
        }
    }
    if r.op != e.req.op_bits() {
        errs.push(format!("resp_op {} != request op {}", r.op, e.req.op_bits()));
    }
    if r.fault != e.fault.bits() {
        let got = r.fault_code().map_or("?", |c| c.name());
        errs.push(format!("fault {got} != model {}", e.fault.name()));
    }
    if let Some(l) = e.loc {
        if r.loc != l {
            errs.push(format!("location {:#x} != model {l:#x}", r.loc));
        }
    }
    if let Some(a) = e.addr {
        if r.addr != a {
            errs.push(format!("address {:#x} != model {a:#x}", r.addr));
        }
    }
    if let Some((b, s)) = e.alloc {
        if (r.base, r.size) != (b, s) {
            errs.push(format!("allocation (base {:#x}, size {:#x}) != model (base {b:#x}, size {s:#x})", r.base, r.size));
        }
    }
    if r.reads as u64 != e.reads {
        errs.push(format!("{} metadata reads != model {}", r.reads, e.reads));
    }
    let predicted = e.fixed_cycles as u64 + e.reads + r.lat_sum as u64 + r.stall_sum as u64;
    if r.cycles as u64 != predicted {
        errs.push(format!(
            "latency {} cycles != predicted {predicted} (fixed {} + {} reads + latency sum {} + ready stalls {})",
            r.cycles, e.fixed_cycles, e.reads, r.lat_sum, r.stall_sum
        ));
    }
    (!errs.is_empty()).then(|| errs.join("; "))
}

/// How the hardware state at a program's end differs from the model's.
pub fn check_state(e: &StateExpect, h: &HwState) -> Option<String> {
    let mut errs = vec![];
    let want = counters_mod32(&e.counters);
    if h.counters != want {
        errs.push(format!("counters differ:\n    hardware {:?}\n    model    {:?}", h.counters, want));
    }
    if h.csr_root != e.root {
        errs.push(format!("csr_root {:#x} != model {:#x}", h.csr_root, e.root));
    }
    if h.csr_step_limit != e.step_limit {
        errs.push(format!("csr_step_limit {} != model {}", h.csr_step_limit, e.step_limit));
    }
    if h.csr_mode != e.mode {
        errs.push(format!("csr_mode {} != model {}", h.csr_mode, e.mode));
    }
    if h.idle_flags & 1 != 0 {
        errs.push("mlb_multi was high in a CSR/reset cycle".into());
    }
    (!errs.is_empty()).then(|| errs.join("; "))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Word {
    Value(u64),
    Unmapped,
    Poisoned,
}

/// Aggregate event counts (coverage of a run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ProgramStats {
    pub programs: u64,
    pub requests: u64,
    pub mallocs: u64,
    pub frees: u64,
    pub faults: [u64; 8],
    pub range_hits: u64,
    pub range_misses: u64,
    pub loc_hits: u64,
    pub loc_misses: u64,
    pub meta_reads: u64,
    pub mem_writes_mirrored: u64,
    pub corruptions: u64,
    pub poisons: u64,
}

impl fmt::Display for ProgramStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} programs, {} requests, {} mallocs, {} frees; range hits/misses {}/{}, location hits/misses {}/{}, {} metadata reads; faults:",
            self.programs, self.requests, self.mallocs, self.frees, self.range_hits, self.range_misses, self.loc_hits, self.loc_misses, self.meta_reads)?;
        for c in FaultCode::ALL {
            write!(f, " {}={}", c.name(), self.faults[c.bits() as usize])?;
        }
        write!(f, "; {} words mirrored, {} corrupted links, {} poisoned nodes", self.mem_writes_mirrored, self.corruptions, self.poisons)
    }
}

/// The program generator and the model run alongside it.
pub struct MluBench {
    cfg: ProgramConfig,
    rng: SplitMix64,
    seed: u64,
    rt: Runtime,
    mirror: HashMap<u64, Word>,
    nodes: BTreeSet<u64>,
    root: u64,
    step_limit: u32,
    /// Allocation ids by state (indices into `rt.allocations()`).
    live: Vec<usize>,
    dead: Vec<usize>,
    /// Freed allocations whose nodes are still in the structure.
    freed: BTreeSet<usize>,
    /// COMPILER mode: locations from earlier LOADMETAs ("per kernel").
    loc_cache: BTreeMap<usize, u64>,
    in_program: u64,
    /// Requests issued so far (the index of the next one).
    pub issued: u64,
    pub stats: ProgramStats,
    /// Seconds spent in the model and the generator.
    pub model_seconds: f64,
    damaged: bool,
    /// Fault injection into LOADMETA / MEMCHECK.G requests (off: None).
    pub faults: Option<FaultPlan>,
    /// Commands sent after each program's own timing (e.g. a longer
    /// latency and [`Cmd::Hold`]); None: the program's timing alone.
    pub timing_override: Option<Vec<Cmd>>,
    /// Tagged MEMCHECK.G passes of an access that is not inside a live
    /// allocation with the pointer's tag when issued (must stay 0), and the
    /// first one.
    pub false_passes: u64,
    pub first_false_pass: Option<String>,
}

fn read_word(rt: &Runtime, addr: u64) -> Word {
    match rt.memory().read_word(addr) {
        Ok(v) => Word::Value(v),
        Err(MemError::Poisoned { .. }) => Word::Poisoned,
        Err(_) => Word::Unmapped,
    }
}

impl MluBench {
    pub fn new(cfg: ProgramConfig, seed: u64) -> MluBench {
        let rt = Self::runtime(&cfg, seed);
        let mut b = MluBench {
            rng: SplitMix64(seed ^ 0x6d6c_755f_7072_6f67),
            seed,
            rt,
            cfg,
            mirror: HashMap::new(),
            nodes: BTreeSet::new(),
            root: 0,
            step_limit: 4096,
            live: vec![],
            dead: vec![],
            freed: BTreeSet::new(),
            loc_cache: BTreeMap::new(),
            in_program: 0,
            issued: 0,
            stats: ProgramStats::default(),
            model_seconds: 0.0,
            damaged: false,
            faults: None,
            timing_override: None,
            false_passes: 0,
            first_false_pass: None,
        };
        b.in_program = b.cfg.program_len; // the first batch starts a program
        b
    }

    fn runtime(cfg: &ProgramConfig, seed: u64) -> Runtime {
        let mlu = MluConfig { entries: cfg.entries, structure: cfg.structure, replacement: cfg.replacement, mode: cfg.mode, step_limit: 4096, unit: None };
        Runtime::new(RuntimeConfig { mlu, seed, ..Default::default() }).expect("a valid hardware configuration")
    }

    pub fn runtime_ref(&self) -> &Runtime {
        &self.rt
    }

    pub fn config(&self) -> &ProgramConfig {
        &self.cfg
    }

    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n.max(1)
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    fn start_program(&mut self, b: &mut Batch) {
        let p = self.stats.programs;
        let rt = Self::runtime(&self.cfg, self.seed.wrapping_mul(0x9E37_79B9).wrapping_add(p));
        // Half the programs: a fixed latency and an always-ready port (the
        // documented latencies exactly); the rest random latency and ready.
        let timing = match p % 4 {
            0 => Cmd::Timing { lmin: 1, lmax: 1, ready_pct: 100, seed: p },
            1 => Cmd::Timing { lmin: 3, lmax: 3, ready_pct: 100, seed: p },
            2 => Cmd::Timing { lmin: 1, lmax: 5, ready_pct: 100, seed: p },
            _ => Cmd::Timing { lmin: 1, lmax: 3, ready_pct: 60, seed: p },
        };
        let step_limit = match p % 5 {
            // Programs with a tiny step limit (TRAVERSAL_LIMIT on most misses).
            3 if p % 10 == 3 => self.below(4) as u32,
            4 => 1 + self.below(12) as u32,
            _ => self.cfg.step_limit,
        };
        self.begin(b, rt, step_limit, timing);
        if let Some(extra) = &self.timing_override {
            b.cmds.extend(extra.iter().cloned());
        }
    }

    /// Reset the hardware and start a program on `rt` (its MLU freshly reset).
    fn begin(&mut self, b: &mut Batch, rt: Runtime, step_limit: u32, timing: Cmd) {
        self.stats.programs += 1;
        self.rt = rt;
        self.mirror.clear();
        self.nodes.clear();
        self.root = 0;
        self.live.clear();
        self.dead.clear();
        self.freed.clear();
        self.loc_cache.clear();
        self.in_program = 0;
        self.damaged = false;
        b.cmds.push(Cmd::Reset);
        b.cmds.push(Cmd::ForgetAll);
        b.cmds.push(timing);
        self.step_limit = step_limit;
        self.rt.mlu_mut().set_step_limit(step_limit);
        let csrs = *self.rt.mlu().csrs();
        b.cmds.push(Cmd::Csr { addr: CSR_MODE, data: csrs.mode.bits() as u64 });
        b.cmds.push(Cmd::Csr { addr: CSR_STRUCTURE, data: csrs.structure.bits().unwrap_or(0) as u64 });
        b.cmds.push(Cmd::Csr { addr: CSR_STEP_LIMIT, data: csrs.step_limit as u64 });
        b.cmds.push(Cmd::Csr { addr: CSR_ROOT, data: 0 });
    }

    fn end_program(&mut self, b: &mut Batch) {
        b.cmds.push(Cmd::ReadState);
        b.expected.push(Expected::State(StateExpect {
            counters: *self.rt.counters(),
            root: self.rt.mlu().csrs().root,
            step_limit: self.rt.mlu().csrs().step_limit as u64,
            mode: self.rt.mlu().csrs().mode.bits() as u64,
        }));
    }

    /// Mirror the runtime's memory changes for the slots in `extra` and the
    /// structure's nodes (before and after), and a root change.
    fn sync(&mut self, b: &mut Batch, extra: &[u64]) {
        let now: BTreeSet<u64> = self.rt.structure_nodes().into_iter().map(|(l, _)| l).collect();
        let mut slots: Vec<u64> = now.union(&self.nodes).copied().chain(extra.iter().copied()).collect();
        slots.sort_unstable();
        slots.dedup();
        for loc in slots {
            for off in [0, 8, 16, 24] {
                let a = loc + off;
                let w = read_word(&self.rt, a);
                let old = self.mirror.get(&a).copied().unwrap_or(Word::Unmapped);
                if w != old {
                    b.cmds.push(match w {
                        Word::Value(data) => Cmd::Write { addr: a, data },
                        Word::Unmapped => Cmd::Forget { addr: a },
                        Word::Poisoned => Cmd::Poison { addr: a },
                    });
                    self.stats.mem_writes_mirrored += 1;
                    self.mirror.insert(a, w);
                }
            }
        }
        self.nodes = now;
        if self.rt.root() != self.root {
            self.root = self.rt.root();
            b.cmds.push(Cmd::Csr { addr: CSR_ROOT, data: self.root });
        }
    }

    /// A request the model has already executed (`before` = its counters
    /// before): record the expectation.
    fn expect(&mut self, b: &mut Batch, req: MluReq, result: Result<u64, Fault>, before: Counters) {
        let after = *self.rt.counters();
        let reads = after.meta_reads - before.meta_reads;
        let range_hit = after.range_hits > before.range_hits;
        let range_miss = after.range_misses > before.range_misses;
        let loc_hit = after.loc_hits > before.loc_hits;
        let loc_miss = after.loc_misses > before.loc_misses;
        self.stats.range_hits += range_hit as u64;
        self.stats.range_misses += range_miss as u64;
        self.stats.loc_hits += loc_hit as u64;
        self.stats.loc_misses += loc_miss as u64;
        self.stats.meta_reads += reads;
        let hwonly = self.rt.mlu().csrs().mode == Mode::Hwonly;
        let fixed = match req {
            MluReq::Invalidate { .. } | MluReq::Flush => 1,
            MluReq::MemcheckS { .. } => 2,
            MluReq::LoadMeta { p } => {
                if tag(p) == 0 {
                    1
                } else if range_hit {
                    2
                } else {
                    3
                }
            }
            MluReq::MemcheckG { p, .. } => {
                // A walk or fetch that ends in a memory error or the step
                // limit answers at once; every other path ends with the check.
                let aborted = matches!(&result, Err(f) if matches!(f.code, FaultCode::MemError | FaultCode::TraversalLimit));
                if tag(p) == 0 {
                    2
                } else if range_hit || loc_hit {
                    3
                } else if range_miss {
                    if aborted { 3 } else { 4 }
                } else if loc_miss {
                    if aborted { 2 } else { 3 }
                } else {
                    // COMPILER mode, location 0 / NO_META.
                    debug_assert!(!hwonly);
                    2
                }
            }
        };
        let (fault, loc, addr, alloc) = match (&req, &result) {
            (MluReq::LoadMeta { .. }, Ok(l)) => (FaultCode::None, Some(*l), None, None),
            (MluReq::LoadMeta { .. }, Err(f)) => (f.code, Some(NO_META), None, None),
            (MluReq::MemcheckG { .. } | MluReq::MemcheckS { .. }, Ok(a)) => (FaultCode::None, None, Some(*a), None),
            (MluReq::MemcheckG { .. }, Err(f)) => (f.code, None, None, f.alloc.map(|m| (m.base, m.size))),
            (MluReq::MemcheckS { .. }, Err(f)) => (f.code, None, None, None),
            (_, _) => (FaultCode::None, None, None, None),
        };
        if let (MluReq::MemcheckG { p, w, .. }, Ok(_)) = (&req, &result) {
            // The no-false-pass oracle, from the runtime's own records.
            let inside = tag(*p) == 0
                || self.rt.live_allocation_at(*p).is_some_and(|a| a.tag == tag(*p) && untag(*p) as u128 + *w as u128 <= a.end());
            if !inside {
                self.false_passes += 1;
                if self.first_false_pass.is_none() {
                    self.first_false_pass = Some(format!("request {}: {req} passed outside every live allocation with its tag", self.issued));
                }
            }
        }
        self.stats.faults[fault.bits() as usize] += 1;
        self.stats.requests += 1;
        b.cmds.push(Cmd::Req(req));
        b.expected.push(Expected::Resp(Expect { req, fault, loc, addr, alloc, reads, fixed_cycles: fixed, index: self.issued, injected: None }));
        self.issued += 1;
        b.requests += 1;
        self.in_program += 1;
    }

    /// Draw a fault for request `req` from the plan: the read number and
    /// the change, or None. Only requests that read metadata get one.
    fn draw_fault(&mut self, req: &MluReq) -> Option<(u32, Change)> {
        let plan = self.faults.as_mut()?;
        let r = plan.below(1000);
        let kind = if r < plan.error_per_mille {
            0
        } else if r < plan.error_per_mille + plan.free_per_mille {
            1
        } else if r < plan.error_per_mille + plan.free_per_mille + plan.link_per_mille {
            2
        } else {
            return None;
        };
        // The reads this request will make, from a dry run on a copy of
        // the MLU, so that the injected read number lands inside the walk.
        let mut dry = self.rt.mlu().clone();
        let before = dry.counters().meta_reads;
        let mem = self.rt.memory();
        let _ = match *req {
            MluReq::LoadMeta { p } => dry.loadmeta(mem, p),
            MluReq::MemcheckG { p, w, loc } => dry.memcheck_g(mem, p, w, loc),
            _ => return None,
        };
        let reads = dry.counters().meta_reads - before;
        if reads == 0 {
            return None;
        }
        let plan = self.faults.as_mut()?;
        // An error lands on one of the reads; a change may also land after
        // the last read (before the response), the other end of the race.
        let at = plan.below(if kind == 0 { reads } else { reads + 1 }) as u32;
        let p = match *req {
            MluReq::LoadMeta { p } | MluReq::MemcheckG { p, .. } => p,
            _ => 0,
        };
        let change = match kind {
            0 => Change::Error,
            1 => Change::Free(self.rt.live_allocation_at(p).filter(|a| a.tag == tag(p))?.ptr),
            _ => {
                let nodes: Vec<u64> = self.rt.structure_nodes().into_iter().map(|(l, _)| l).collect();
                let plan = self.faults.as_mut()?;
                let loc = nodes[plan.below(nodes.len() as u64) as usize];
                let other = nodes[plan.below(nodes.len() as u64) as usize];
                let value = match plan.below(6) {
                    // Another node: a wrong order, or a cycle through an ancestor.
                    0..=2 => other,
                    3 => loc,
                    4 => 0,
                    // Into the middle of a node (aliases it: links are taken
                    // by bits 55..5) or to unmapped memory.
                    _ => if plan.below(2) == 0 { other + 8 * (1 + plan.below(3)) } else { 0x0000_3000_0000_0000 + 32 * plan.below(1 << 16) },
                };
                Change::Link { loc, link: plan.below(2) as usize, value }
            }
        };
        Some((at, change))
    }

    /// Run `req` with the fault `(at, change)`: the model on an
    /// [`InjectedMemory`], the harness with the same [`Injection`]; then
    /// the change is made for good (a free through the runtime, with its
    /// INVALIDATE; a link through the runtime's corruption hook).
    fn injected(&mut self, b: &mut Batch, req: MluReq, at: u32, change: Change) -> Result<u64, Fault> {
        let writes: Vec<(u64, u64)> = match change {
            Change::Error => vec![],
            Change::Free(_) | Change::Link { .. } => {
                let mut after = self.rt.clone();
                let extra = match change {
                    Change::Free(p) => {
                        after.free(p).expect("a live allocation frees");
                        vec![]
                    }
                    Change::Link { loc, link, value } => {
                        after.corrupt_link(loc, link, value);
                        vec![loc]
                    }
                    Change::Error => unreachable!(),
                };
                let slots: BTreeSet<u64> = self.rt.structure_nodes().into_iter().chain(after.structure_nodes()).map(|(l, _)| l).chain(extra).collect();
                let mut w = vec![];
                for loc in slots {
                    for off in [0, 8, 16, 24] {
                        if let (Word::Value(old), Word::Value(new)) = (read_word(&self.rt, loc + off), read_word(&after, loc + off)) {
                            if old != new {
                                w.push((loc + off, new));
                            }
                        }
                    }
                }
                w
            }
        };
        let image = self.rt.memory().clone();
        let mem = InjectedMemory { image: &image, at: at as u64, error: change == Change::Error, writes: &writes, reads: std::cell::Cell::new(0) };
        let before = *self.rt.counters();
        let r = match req {
            MluReq::LoadMeta { p } => self.rt.mlu_mut().loadmeta(&mem, p),
            MluReq::MemcheckG { p, w, loc } => self.rt.mlu_mut().memcheck_g(&mem, p, w, loc),
            _ => unreachable!("only LOADMETA and MEMCHECK.G read metadata"),
        };
        let fired = mem.fired();
        b.cmds.push(Cmd::Inject(Injection { at, error: change == Change::Error, writes }));
        self.expect(b, req, r.clone(), before);
        if let Some(Expected::Resp(e)) = b.expected.last_mut() {
            e.injected = Some(fired);
        }
        let plan = self.faults.as_mut().expect("injections come from a plan");
        let s = &mut plan.stats;
        s.fired += fired as u64;
        if r.is_ok() {
            s.passes += 1;
        } else {
            s.faults += 1;
        }
        match change {
            Change::Error => s.errors += 1,
            Change::Free(p) => {
                s.frees += 1;
                if matches!(req, MluReq::MemcheckG { .. }) {
                    match &r {
                        Ok(_) => s.free_pass += 1,
                        Err(f) if f.code == FaultCode::UseAfterFree => s.free_uaf += 1,
                        Err(_) => {}
                    }
                }
                self.apply_free(b, p);
            }
            Change::Link { loc, link, value } => {
                s.links += 1;
                self.rt.corrupt_link(loc, link, value);
                self.damaged = true;
                self.sync(b, &[loc]);
            }
        }
        r
    }

    fn do_loadmeta(&mut self, b: &mut Batch, p: u64) -> Result<u64, Fault> {
        if let Some((at, change)) = self.draw_fault(&MluReq::LoadMeta { p }) {
            return self.injected(b, MluReq::LoadMeta { p }, at, change);
        }
        let before = *self.rt.counters();
        let r = self.rt.loadmeta(p);
        self.expect(b, MluReq::LoadMeta { p }, r.clone(), before);
        r
    }

    fn do_memcheck_g(&mut self, b: &mut Batch, p: u64, w: u32, loc: u64) {
        if let Some((at, change)) = self.draw_fault(&MluReq::MemcheckG { p, w, loc }) {
            let _ = self.injected(b, MluReq::MemcheckG { p, w, loc }, at, change);
            return;
        }
        let before = *self.rt.counters();
        let r = self.rt.memcheck_g(p, w, loc);
        self.expect(b, MluReq::MemcheckG { p, w, loc }, r, before);
    }

    fn do_invalidate(&mut self, b: &mut Batch, loc: u64) {
        let before = *self.rt.counters();
        self.rt.mlu_mut().invalidate(loc);
        self.expect(b, MluReq::Invalidate { loc }, Ok(0), before);
    }

    fn do_flush(&mut self, b: &mut Batch) {
        let before = *self.rt.counters();
        self.rt.flush_mlb();
        self.loc_cache.clear();
        self.expect(b, MluReq::Flush, Ok(0), before);
    }

    /// The runtime already invalidated `loc` (free, retirement): send the
    /// same INVALIDATE to the hardware.
    fn runtime_invalidate(&mut self, b: &mut Batch, loc: u64, before: Counters) {
        debug_assert!(self.rt.counters().invalidates > before.invalidates);
        b.cmds.push(Cmd::Req(MluReq::Invalidate { loc }));
        b.expected.push(Expected::Resp(Expect {
            req: MluReq::Invalidate { loc },
            fault: FaultCode::None,
            loc: None,
            addr: None,
            alloc: None,
            reads: 0,
            fixed_cycles: 1,
            index: self.issued,
            injected: None,
        }));
        self.stats.requests += 1;
        self.stats.faults[0] += 1;
        self.issued += 1;
        b.requests += 1;
        self.in_program += 1;
    }

    fn malloc(&mut self, b: &mut Batch) {
        let size = match self.below(20) {
            0..=5 => 1 + self.below(64),
            6..=13 => 65 + self.below(4032),
            14..=18 => 4097 + self.below(1 << 20),
            _ => 1 + self.below(1 << 28),
        };
        let base = if self.chance(60) {
            // A caller-given, arbitrarily aligned base far from the heap.
            Some(0x7f80_0000_0000 + self.below(1 << 36))
        } else {
            None
        };
        let _ = self.apply_malloc(b, size, base);
    }

    /// A malloc on the runtime, mirrored: memory words, root, the
    /// INVALIDATEs of the nodes it retired. Returns the runtime's answer.
    fn apply_malloc(&mut self, b: &mut Batch, size: u64, base: Option<u64>) -> Result<u64, sim::runtime::RuntimeError> {
        let before = *self.rt.counters();
        let p = self.rt.malloc(size, base)?;
        self.stats.mallocs += 1;
        let id = self.rt.allocations().len() - 1;
        self.live.push(id);
        // Retired nodes (the runtime INVALIDATEd each of them; a retired slot
        // may already hold the new node).
        let allocs = self.rt.allocations();
        let retired: Vec<usize> = self.freed.iter().copied().filter(|&d| allocs[d].state == AllocState::Retired).collect();
        let mut locs: Vec<u64> = retired.iter().map(|&d| allocs[d].location).collect();
        for d in &retired {
            self.freed.remove(d);
        }
        let inv = self.rt.counters().invalidates - before.invalidates;
        assert_eq!(inv, locs.len() as u64, "every retirement INVALIDATE is a freed allocation that became retired");
        self.sync(b, &locs);
        locs.sort_unstable();
        for loc in locs {
            self.runtime_invalidate(b, loc, before);
        }
        let allocs = self.rt.allocations();
        self.dead.retain(|&d| allocs[d].state != AllocState::Live);
        Ok(p)
    }

    /// A free of pointer `p` on the runtime, mirrored (the node's size|tag
    /// word and the INVALIDATE); a rejected free changes nothing.
    fn apply_free(&mut self, b: &mut Batch, p: u64) {
        let allocs = self.rt.allocations();
        let target = self.live.iter().position(|&l| allocs[l].ptr == p);
        let before = *self.rt.counters();
        if self.rt.free(p).is_err() {
            return;
        }
        let i = target.expect("the runtime freed a live allocation with this pointer");
        let id = self.live.swap_remove(i);
        let loc = self.rt.allocations()[id].location;
        self.stats.frees += 1;
        self.dead.push(id);
        self.freed.insert(id);
        if self.dead.len() > 64 {
            self.dead.remove(0);
        }
        self.sync(b, &[]);
        self.runtime_invalidate(b, loc, before);
    }

    fn free(&mut self, b: &mut Batch) {
        if self.chance(50) && !self.dead.is_empty() {
            // A double free: the runtime's finding, no MLU request.
            let k = self.below(self.dead.len() as u64) as usize;
            let id = self.dead[k];
            let allocs = self.rt.allocations();
            let p = allocs[id].ptr;
            // Not if a live allocation got the same tagged pointer back (same
            // base, same tag): that free would be a real one.
            if !self.live.iter().any(|&l| allocs[l].ptr == p) {
                let r = self.rt.free(p);
                assert!(r.is_err(), "a freed pointer frees nothing");
            }
            return;
        }
        if self.live.is_empty() {
            return;
        }
        let i = self.below(self.live.len() as u64) as usize;
        let p = self.rt.allocations()[self.live[i]].ptr;
        self.apply_free(b, p);
    }

    fn width(&mut self) -> u32 {
        [1, 2, 4, 8, 16][self.below(5) as usize]
    }

    fn access(&mut self, b: &mut Batch) {
        let w = self.width();
        let r = self.below(100);
        let (id, root) = if r < 80 && !self.live.is_empty() {
            // Locality, as in real kernels: mostly a hot set about the MLB's
            // size (the paper's working sets fit 8 entries), else any.
            let n = self.live.len() as u64;
            let hot = (self.cfg.entries as u64 * 3 / 4).clamp(1, n);
            let k = if self.chance(850) { n - 1 - self.below(hot) } else { self.below(n) } as usize;
            let id = self.live[k];
            (Some(id), self.rt.allocations()[id].ptr)
        } else if r < 88 && !self.dead.is_empty() {
            let k = self.below(self.dead.len() as u64) as usize;
            let id = self.dead[k];
            (Some(id), self.rt.allocations()[id].ptr)
        } else if r < 97 {
            // An untagged pointer: unchecked.
            (None, untag(0x7f00_0000_0000 + self.below(1 << 24)))
        } else {
            // A wild tagged pointer.
            (None, tagged(1 + self.below(254) as u8, 0x7f00_0000_0000 + self.below(1 << 32)))
        };
        let size = id.map_or(4096, |i| self.rt.allocations()[i].size);
        let off: i64 = match self.below(20) {
            0 => size as i64,
            1 => size as i64 - w as i64 + 1,
            2 => -1 - self.below(64) as i64,
            3 => self.below(1 << 30) as i64,
            _ => self.below(size.saturating_sub(w as u64) + 1) as i64,
        };
        let p = root.wrapping_add(off as u64);
        match self.cfg.mode {
            Mode::Compiler => {
                let cached = id.and_then(|i| self.loc_cache.get(&i).copied());
                let loc = match (cached, self.below(100)) {
                    (_, 0) => 0,
                    (_, 1) => NO_META,
                    // A location a few bytes into a node: aliases it (bits 55..5).
                    (_, 2) => self.nodes.iter().next().map_or(8, |l| l + 8),
                    // A location with no node: MEM_ERROR.
                    (_, 3) => 0x0000_2000_0000_0000 + 32 * self.below(1 << 20),
                    (Some(l), r) if r < 60 => l,
                    _ => {
                        let l = self.do_loadmeta(b, root);
                        match l {
                            Ok(l) => {
                                if let Some(i) = id {
                                    self.loc_cache.insert(i, l);
                                }
                                l
                            }
                            // LOADMETA's own faults end the access.
                            Err(_) => return,
                        }
                    }
                };
                self.do_memcheck_g(b, p, w, loc);
            }
            Mode::Hwonly => {
                if self.chance(30) {
                    let _ = self.do_loadmeta(b, p);
                }
                let garbage = self.rng.next_u64();
                self.do_memcheck_g(b, p, w, garbage);
            }
        }
    }

    fn memcheck_s(&mut self, b: &mut Batch) {
        let base = (self.rng.next_u64() as u32) & 0xFFFF_FF00;
        let size = 1 + self.below(1 << 16) as u32;
        let w = self.width();
        let a = match self.below(6) {
            0 => base.wrapping_add(size),
            1 => base.wrapping_add(size).wrapping_sub(w - 1),
            2 => base.wrapping_sub(1),
            3 => self.rng.next_u64() as u32,
            _ => base.wrapping_add(self.below(size as u64) as u32),
        };
        let before = *self.rt.counters();
        let r = self.rt.memcheck_s(a as u64, w, base as u64, size as u64);
        self.expect(b, MluReq::MemcheckS { a, w, base, size }, r, before);
    }

    /// Damage the structure near a program's end: a link to itself (a cycle),
    /// a link into unmapped memory, or a poisoned node.
    fn damage(&mut self, b: &mut Batch) {
        let nodes: Vec<u64> = self.rt.structure_nodes().into_iter().map(|(l, _)| l).collect();
        if nodes.is_empty() {
            return;
        }
        let loc = nodes[self.below(nodes.len() as u64) as usize];
        // The kind rotates over the damaged programs (every third one).
        match (self.stats.programs / 3) % 3 {
            0 => {
                let link = self.below(2) as usize;
                self.rt.corrupt_link(loc, link, loc);
                self.stats.corruptions += 1;
            }
            1 => {
                let link = self.below(2) as usize;
                let to = 0x0000_3000_0000_0000 + 32 * self.below(1 << 16);
                self.rt.corrupt_link(loc, link, to);
                self.stats.corruptions += 1;
            }
            _ => {
                self.rt.poison_node(loc);
                self.stats.poisons += 1;
            }
        }
        self.damaged = true;
        self.sync(b, &[loc]);
        // Make the next lookups walk from the root, then look up the damaged
        // node's own allocation (a poisoned node always faults MEM_ERROR).
        self.do_flush(b);
        let allocs = self.rt.allocations();
        if let Some(a) = allocs.iter().rev().find(|a| a.location == loc && a.state != AllocState::Retired) {
            let p = a.ptr;
            match self.cfg.mode {
                Mode::Compiler => {
                    let _ = self.do_loadmeta(b, p);
                }
                Mode::Hwonly => {
                    let g = self.rng.next_u64();
                    self.do_memcheck_g(b, p, 1, g);
                }
            }
        }
    }

    /// Draw about `n` requests (finishing the current step) into a batch.
    /// Draws operations until `n` requests are in the batch; exactly `n`
    /// unless one malloc retires more than [`TAIL`] FREED nodes at once.
    pub fn batch(&mut self, n: u64) -> Batch {
        let t = std::time::Instant::now();
        let mut b = Batch::default();
        while b.requests < n {
            if self.in_program >= self.cfg.program_len {
                if self.stats.programs > 0 {
                    self.end_program(&mut b);
                }
                self.start_program(&mut b);
            }
            let near_end = self.in_program + 300 > self.cfg.program_len;
            let r = self.below(1000);
            if n - b.requests < TAIL {
                // The last few requests of a batch are one-request operations
                // (MEMCHECK.S), so a run compares exactly the count asked for:
                // an access or a malloc may issue several.
                self.memcheck_s(&mut b);
            } else if (self.live.len() < 4 || r < 15) && self.live.len() < self.cfg.max_live {
                self.malloc(&mut b);
            } else if r < 30 || self.live.len() >= self.cfg.max_live {
                self.free(&mut b);
            } else if r < 110 {
                self.memcheck_s(&mut b);
            } else if r < 114 {
                self.do_flush(&mut b);
            } else if r < 118 {
                let loc = match self.below(3) {
                    0 => self.nodes.iter().next().copied().unwrap_or(0),
                    1 => self.rng.next_u64(),
                    _ => self.loc_cache.values().next().copied().unwrap_or(32),
                };
                self.do_invalidate(&mut b, loc);
            } else if near_end && !self.damaged && self.stats.programs % 3 == 1 {
                self.damage(&mut b);
            } else {
                self.access(&mut b);
            }
        }
        self.model_seconds += t.elapsed().as_secs_f64();
        b
    }

    /// A batch that replays scenario `sc` (its own configuration, seed and
    /// step limit) as one program under memory timing `timing`, ending with
    /// the state check. Accesses follow the scenario runner
    /// ([`sim::scenario::Scenario::run`]): COMPILER mode LOADMETA on the
    /// root pointer (the allocation's tagged base, or the raw pointer) then,
    /// unless it faulted, MEMCHECK.G with its location; HWONLY MEMCHECK.G
    /// alone.
    pub fn replay(&mut self, sc: &Scenario, timing: Cmd) -> Result<Batch, String> {
        let t = std::time::Instant::now();
        let mut b = Batch::default();
        let rt = Runtime::new(RuntimeConfig { mlu: sc.config.clone(), seed: sc.seed, tag_history: sc.tag_history, ..Default::default() })
            .map_err(|e| format!("scenario {}: {e}", sc.name))?;
        self.cfg.mode = sc.config.mode;
        self.begin(&mut b, rt, sc.config.step_limit, timing);
        let mut ids: HashMap<&str, usize> = HashMap::new();
        for (i, ev) in sc.events.iter().enumerate() {
            let first = b.expected.len();
            self.replay_event(&mut b, sc, i, ev, &mut ids)?;
            b.events.push((i, first..b.expected.len()));
        }
        self.end_program(&mut b);
        self.model_seconds += t.elapsed().as_secs_f64();
        Ok(b)
    }

    /// One event of [`Self::replay`].
    fn replay_event<'s>(&mut self, b: &mut Batch, sc: &'s Scenario, i: usize, ev: &'s ScenarioEvent, ids: &mut HashMap<&'s str, usize>) -> Result<(), String> {
        {
            let err = |m: String| format!("scenario {}: event {i} ({}): {m}", sc.name, ev.op());
            let resolve = |rt: &Runtime, ids: &HashMap<&str, usize>, p: &PtrSpec| -> Result<(u64, u64), String> {
                match p {
                    PtrSpec::Alloc { name, offset } => {
                        let id = ids.get(name.as_str()).ok_or_else(|| format!("unknown allocation {name}"))?;
                        let base = rt.allocations()[*id].ptr;
                        Ok((base.wrapping_add(*offset as u64), base))
                    }
                    PtrSpec::Raw(p) => Ok((*p, *p)),
                }
            };
            let node = |rt: &Runtime, ids: &HashMap<&str, usize>, name: &str| -> Result<u64, String> {
                let id = ids.get(name).ok_or_else(|| format!("unknown allocation {name}"))?;
                let a = &rt.allocations()[*id];
                if a.state == AllocState::Retired {
                    return Err(format!("allocation {name} has no node any more"));
                }
                Ok(a.location)
            };
            match ev {
                ScenarioEvent::Malloc { name, size, base } => {
                    self.apply_malloc(b, *size, *base).map_err(|e| err(format!("malloc refused: {e}")))?;
                    ids.insert(name.as_str(), self.rt.allocations().len() - 1);
                }
                ScenarioEvent::Free { ptr, .. } => {
                    let (p, _) = resolve(&self.rt, &ids, ptr).map_err(err)?;
                    self.apply_free(b, p);
                }
                ScenarioEvent::Access { ptr, width, .. } => {
                    let (p, root) = resolve(&self.rt, &ids, ptr).map_err(err)?;
                    let w = *width as u32;
                    match sc.config.mode {
                        Mode::Compiler => {
                            if let Ok(loc) = self.do_loadmeta(b, root) {
                                self.do_memcheck_g(b, p, w, loc);
                            }
                        }
                        Mode::Hwonly => self.do_memcheck_g(b, p, w, 0),
                    }
                }
                ScenarioEvent::SharedAccess { addr, width, base, size, .. } => {
                    let before = *self.rt.counters();
                    let r = self.rt.memcheck_s(*addr, *width as u32, *base, *size);
                    let narrow = |v: u64, f: &str| u32::try_from(v).map_err(|_| err(format!("{f} {v:#x} is not a 32-bit shared address")));
                    let req = MluReq::MemcheckS { a: narrow(*addr, "address")?, w: *width as u32, base: narrow(*base, "base")?, size: narrow(*size, "size")? };
                    self.expect(b, req, r, before);
                }
                ScenarioEvent::CorruptLink { name, link, to } => {
                    let loc = node(&self.rt, &ids, name).map_err(err)?;
                    let value = match to {
                        LinkTarget::Node(n) => node(&self.rt, &ids, n).map_err(err)?,
                        LinkTarget::Addr(v) => *v,
                    };
                    self.rt.corrupt_link(loc, *link as usize, value);
                    self.sync(b, &[loc]);
                }
                ScenarioEvent::Poison { name } => {
                    let loc = node(&self.rt, &ids, name).map_err(err)?;
                    self.rt.poison_node(loc);
                    self.sync(b, &[loc]);
                }
                ScenarioEvent::Flush => self.do_flush(b),
            }
        }
        Ok(())
    }

    /// Close the current program: its state check.
    pub fn finish(&mut self) -> Batch {
        let mut b = Batch::default();
        if self.stats.programs > 0 {
            self.end_program(&mut b);
        }
        b
    }
}

/// A recorded workload trace replayed through the MLU as one program
/// (`sim::expand` gives each operator's per-warp streams; see its module doc
/// for the sweep: 32/128-byte warp steps of every argument range, sampled,
/// dealt to warps, one LOADMETA per argument per warp in the compiler pass).
/// The warps of an operator are interleaved round-robin, one instruction per
/// warp in turn (ALU and the loads/stores themselves do not reach the MLU);
/// allocs and frees go through the runtime with the trace's own bases.
pub struct TraceReplay {
    bench: MluBench,
    items: Vec<sim::expand::Item>,
    pos: usize,
    /// Trace block id -> runtime allocation id.
    ids: HashMap<u64, usize>,
    started: bool,
    ended: bool,
    file: String,
}

impl TraceReplay {
    pub fn new(cfg: ProgramConfig, workload: sim::expand::Workload) -> TraceReplay {
        TraceReplay { bench: MluBench::new(cfg, 1), items: workload.items, pos: 0, ids: HashMap::new(), started: false, ended: false, file: workload.file }
    }

    pub fn stats(&self) -> &ProgramStats {
        &self.bench.stats
    }
    pub fn model_seconds(&self) -> f64 {
        self.bench.model_seconds
    }
    pub fn issued(&self) -> u64 {
        self.bench.issued
    }

    /// The next batch of about `n` requests (whole trace items), None at the end.
    pub fn batch(&mut self, n: u64) -> Result<Option<Batch>, String> {
        use sim::expand::{Instr, Item};
        if self.ended {
            return Ok(None);
        }
        let t = std::time::Instant::now();
        let mut b = Batch::default();
        let bench = &mut self.bench;
        if !self.started {
            self.started = true;
            let rt = MluBench::runtime(&bench.cfg, 1);
            let timing = Cmd::Timing { lmin: 2, lmax: 2, ready_pct: 100, seed: 1 };
            let limit = bench.cfg.step_limit;
            bench.begin(&mut b, rt, limit, timing);
        }
        while b.requests < n && self.pos < self.items.len() {
            match &self.items[self.pos] {
                Item::Alloc { id, base, size, line } => {
                    bench.apply_malloc(&mut b, *size, Some(*base)).map_err(|e| format!("{}:{line}: malloc of block {id} refused: {e}", self.file))?;
                    self.ids.insert(*id, bench.rt.allocations().len() - 1);
                }
                Item::Free { id, line } => {
                    let a = self.ids.get(id).ok_or_else(|| format!("{}:{line}: free of unknown block {id}", self.file))?;
                    let p = bench.rt.allocations()[*a].ptr;
                    bench.apply_free(&mut b, p);
                }
                Item::Kernel { kernel, line } => {
                    let ptrs: Vec<u64> = kernel
                        .args
                        .iter()
                        .map(|a| self.ids.get(&a.id).map(|&i| bench.rt.allocations()[i].ptr))
                        .collect::<Option<_>>()
                        .ok_or_else(|| format!("{}:{line}: operator {} touches an unknown block", self.file, kernel.op))?;
                    let mut locs = vec![vec![NO_META; kernel.args.len()]; kernel.warps.len()];
                    let longest = kernel.warps.iter().map(|w| w.len()).max().unwrap_or(0);
                    for i in 0..longest {
                        for (w, stream) in kernel.warps.iter().enumerate() {
                            match stream.get(i) {
                                Some(Instr::LoadMeta { arg }) if bench.cfg.mode == Mode::Compiler => {
                                    let a = &kernel.args[*arg as usize];
                                    let root = ptrs[*arg as usize].wrapping_add(a.offset);
                                    if let Ok(l) = bench.do_loadmeta(&mut b, root) {
                                        locs[w][*arg as usize] = l;
                                    }
                                }
                                Some(Instr::MemCheck { arg, off, width }) => {
                                    let p = ptrs[*arg as usize].wrapping_add(*off);
                                    let loc = if bench.cfg.mode == Mode::Compiler { locs[w][*arg as usize] } else { 0 };
                                    bench.do_memcheck_g(&mut b, p, *width as u32, loc);
                                }
                                _ => {}
                            }
                        }
                    }
                }
            }
            self.pos += 1;
        }
        if self.pos >= self.items.len() {
            bench.end_program(&mut b);
            self.ended = true;
        }
        bench.model_seconds += t.elapsed().as_secs_f64();
        Ok(Some(b))
    }
}
