//! `alloc_unit` at cycle level: the canary allocator unit's timing as the RTL
//! FSM (hw/src/canary/alloc_unit.rs, checker.rs, arbiter.rs, siphash.rs)
//! has it, around the result model [`Heap`]. Grant, response and
//! background-check cycles equal the RTL's for every operation
//! (testbench/tests/canary_timing.rs runs both under Verilator in lockstep).
//!
//! # Timing rule (cycle g = the grant cycle; H = [`UnitTiming::siphash_latency`],
//! L = [`UnitTiming::mem_latency`], D = max(H, L) + 1)
//! - `arbiter`: in an `Idle` cycle without a due check, the first requester at
//!   or after last-granted + 1 (wrapping; requester 0 after reset) with a
//!   request is granted in that cycle. The unit is `Idle` again in its
//!   response cycle, so a response and the next grant can share a cycle.
//! - malloc: `MDec` at g + 1; zero size / too large: response at g + 2.
//!   `Probe` from g + 2 for P cycles: one page per cycle, or the rest of a
//!   full region in one cycle at the first page and at region boundaries;
//!   the cycle that finds the page counts; `Exhausted` after a full sweep
//!   answers at g + 2 + P (P includes the cycle that sees the sweep done).
//!   `Claim` at C = g + 2 + P; mode off: response at C + 1. With canaries the
//!   front canary's SipHash starts in `Claim` (`MFront`), is written at
//!   C + H, the rear's starts then (`MRear`) and is written at C + 2H; mode
//!   free: response at C + 2H + 1; always: the checker inserts the entry at
//!   C + 2H (`MIns`; its length shows at C + 2H + 1), response at C + 2H + 2.
//! - free: `FDec` at g + 1; outside / not a chunk / double free (with a
//!   tagged heap also a stale tag, [`Heap::decode_free`]): response at
//!   g + 2. `FSize` at S = g + 2; mode off: `FCommit` at g + 3, response at
//!   g + 4. With canaries the front canary's read and SipHash start at S and
//!   both are in hand at S + D (`FFront`); the rear's start then and are in
//!   hand at S + 2D (`FRear`); `FCommit` at S + 2D + 1; free: response at
//!   S + 2D + 2; always: the checker removes the entry (`FRem`): 5 cycles when
//!   the hole is ahead of the cursor (one move), 7 when behind it (two
//!   moves), response at S + 2D + 6 or + 8 (length shows one cycle before).
//! - background check (always): in an `Idle` cycle K with a check due
//!   (pending credit and a non-empty list; before any request), `CTake` takes
//!   the cursor's entry (2 cycles), `FSize` at K + 3, the two canaries as in
//!   free, report (`chk_done`) at K + 5 + 2D, `Idle` in that cycle.
//! - checker credit: every cycle `acc += rate` (8 bits); a carry adds one
//!   pending check (saturating at 255), a take removes one; a cycle in which
//!   the list length (as the RTL's `len` register shows it) is 0 clears the
//!   pending count.
//!
//! Results (pointer, codes, overflow flags) are [`Heap`]'s. The heap applies
//! a malloc at its grant, a free and a check at their response (their canaries
//! are compared with memory as of that cycle; the RTL reads them between
//! S + 1 and S + 2D, and the testbench stores only in response cycles).
//!
//! The rule is the RTL's for its geometry; on other geometries (alloc-bench's
//! 4 MiB heap, 32 requesters) it is the same FSM extrapolated: one page probe
//! per cycle whatever the page's bitfield width, a round robin over T
//! requesters.
use super::hash::page_hash;
use super::heap::{Alloc, AllocError, CheckMode, FreeError, Freed, Heap, HeapConfig};

/// The FSM's constants. [`Default`] is the RTL's (SipHash 9 cycles start to
/// done, memory latency 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitTiming {
    /// SipHash start to done (hw/src/canary/siphash.rs `SIPHASH_LATENCY`).
    pub siphash_latency: u64,
    /// Canary memory port: cycles from a read request to its data (>= 1).
    pub mem_latency: u64,
}

impl Default for UnitTiming {
    fn default() -> Self {
        UnitTiming { siphash_latency: 9, mem_latency: 1 }
    }
}

/// The RTL unit's fixed geometry (hw::canary::alloc_unit: 16 pages x 256 B,
/// classes 32..256, regions of 4 pages, 8 requesters) with its default base
/// and hash multipliers, in check mode `check` with `slack`.
pub fn rtl_heap_config(check: CheckMode, slack: u64) -> HeapConfig {
    HeapConfig {
        base: 0x1000_0000,
        page_size: 256,
        pages: 16,
        region_pages: 4,
        classes: vec![32, 64, 128, 256],
        slack,
        check,
        ..HeapConfig::default()
    }
}

/// The RTL unit's requesters.
pub const RTL_REQUESTERS: usize = 8;

/// A request presented by a requester (held until granted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub free: bool,
    /// malloc: size; free: pointer.
    pub arg: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Malloc(Result<Alloc, AllocError>),
    Free(Result<Freed, FreeError>),
}

/// One response pulse (`resp_valid`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub id: usize,
    pub outcome: Outcome,
    /// The grant cycle of this operation.
    pub granted: u64,
}

/// One background check's report (`chk_done`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckReport {
    pub chunk: u64,
    pub front: bool,
    pub rear: bool,
}

/// What the unit did in one cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnitStep {
    pub grant: Option<usize>,
    pub resp: Option<Response>,
    pub check: Option<CheckReport>,
}

#[derive(Clone, Debug)]
enum Busy {
    Malloc { id: usize, granted: u64, result: Result<Alloc, AllocError> },
    Free { id: usize, granted: u64, ptr: u64 },
    Check { started: u64 },
}

/// Cycle totals per kind of operation (grant to response).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct UnitStats {
    pub mallocs_ok: u64,
    pub malloc_cycles: u64,
    pub frees_ok: u64,
    pub free_cycles: u64,
    /// Unsuccessful requests (errors, exhaustion).
    pub errors: u64,
    /// Background checks reported.
    pub checks: u64,
    /// Cycles the unit spent on reported background checks (take to report).
    pub check_cycles: u64,
    /// Page-probe cycles of successful mallocs.
    pub probe_cycles: u64,
    /// Frees whose checker removal took the two-move path (7 cycles, else 5).
    pub two_move_removes: u64,
}

/// The unit: arbiter, FSM timing, checker credit, and the [`Heap`].
pub struct CanaryUnit {
    heap: Heap,
    timing: UnitTiming,
    requesters: usize,
    /// Checker rate CSR (rate / 256 checks per cycle).
    rate: u8,
    cycle: u64,
    /// Arbiter: the first requester the next grant search considers.
    nxt: usize,
    busy: Option<(u64, Busy)>,
    acc: u8,
    pending: u8,
    /// The checker's `len` register as the RTL shows it, and a scheduled change.
    len: u64,
    len_change: Option<(u64, i64)>,
    pub stats: UnitStats,
}

impl CanaryUnit {
    /// `requesters` >= 1; `rate`: checker rate CSR (always mode). The heap's
    /// `checker_rate` is set to rate / 256 (for its latency bound).
    pub fn new(mut cfg: HeapConfig, requesters: usize, rate: u8, timing: UnitTiming) -> Result<Self, String> {
        if requesters == 0 {
            return Err("requesters: must be at least 1".into());
        }
        if timing.mem_latency == 0 {
            return Err("mem_latency: must be at least 1 cycle".into());
        }
        if cfg.check == CheckMode::Always && rate == 0 {
            return Err("rate: the always-on checker needs a rate of at least 1/256".into());
        }
        // A check holds the unit 5 + 2D cycles and goes before requests: at
        // a rate of one per that many cycles or more, requests never get in.
        let hold = 5 + 2 * (timing.siphash_latency.max(timing.mem_latency) + 1);
        if cfg.check == CheckMode::Always && rate as u64 * hold >= 256 {
            return Err(format!(
                "rate: {rate}/256 checks per cycle starves requests: one check holds the unit {hold} cycles, so at most {}/256",
                255 / hold
            ));
        }
        cfg.checker_rate = rate.max(1) as f64 / 256.0;
        Ok(CanaryUnit {
            heap: Heap::new(cfg)?,
            timing,
            requesters,
            rate,
            cycle: 0,
            nxt: 0,
            busy: None,
            acc: 0,
            pending: 0,
            len: 0,
            len_change: None,
            stats: UnitStats::default(),
        })
    }

    pub fn heap(&self) -> &Heap {
        &self.heap
    }
    /// A program store into the heap (overflow injection).
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), String> {
        self.heap.write(addr, bytes)
    }
    /// The cycle the next [`step`](Self::step) models.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }
    pub fn requesters(&self) -> usize {
        self.requesters
    }
    pub fn timing(&self) -> UnitTiming {
        self.timing
    }
    /// No operation or check in progress.
    pub fn idle(&self) -> bool {
        self.busy.is_none()
    }
    /// The cycle the current operation answers in (its response cycle).
    pub fn busy_until(&self) -> Option<u64> {
        self.busy.as_ref().map(|b| b.0)
    }

    fn d(&self) -> u64 {
        self.timing.siphash_latency.max(self.timing.mem_latency) + 1
    }

    /// Probe cycles P of a malloc of class `class` from `mp` on the current
    /// heap, and whether it claims a page (else exhaustion).
    fn probe(&self, class: usize, mp: u64) -> (u64, bool) {
        let cfg = self.heap.config();
        let pages = cfg.pages as u64;
        let rp = cfg.region_pages as u64;
        let pt = self.heap.page_table();
        let full = self.heap.region_full();
        let cpp = self.heap.chunks_per_page(class);
        let mut p = page_hash(cfg.classes[class], mp, cfg.k_s, cfg.k_mp, pages);
        let (mut vis, mut first, mut n) = (0u64, true, 0u64);
        loop {
            n += 1;
            if vis >= pages {
                return (n, false);
            }
            let r = (p / rp) as usize;
            let at_rs = first || p % rp == 0;
            first = false;
            let rlen = rp.min(pages - r as u64 * rp);
            if at_rs && full[r] as u64 == rlen {
                let next = r as u64 * rp + rlen;
                vis += next - p;
                p = next % pages;
                continue;
            }
            let e = &pt[p as usize];
            if e.class.is_none() || (e.class == Some(class) && e.used < cpp) {
                return (n, true);
            }
            p = (p + 1) % pages;
            vis += 1;
        }
    }

    /// One clock cycle with requester i presenting `reqs[i]`:
    /// [`begin_cycle`](Self::begin_cycle) then [`end_cycle`](Self::end_cycle).
    pub fn step(&mut self, reqs: &[Option<Request>]) -> UnitStep {
        let mut out = self.begin_cycle();
        out.grant = self.end_cycle(reqs);
        out
    }

    /// The requester whose response comes in cycle `cycle` (if the current
    /// operation is a malloc or free answering then).
    pub fn answering(&self, cycle: u64) -> Option<usize> {
        match &self.busy {
            Some((t, Busy::Malloc { id, .. } | Busy::Free { id, .. })) if *t == cycle => Some(*id),
            _ => None,
        }
    }

    /// The registered half of a cycle: the response or check report due in
    /// this cycle (the unit is then idle for [`end_cycle`](Self::end_cycle)).
    pub fn begin_cycle(&mut self) -> UnitStep {
        let c = self.cycle;
        let mut out = UnitStep::default();
        if let Some((t, d)) = self.len_change {
            if t == c {
                self.len = self.len.wrapping_add_signed(d);
                self.len_change = None;
            }
        }
        if self.busy.as_ref().is_some_and(|b| b.0 == c) {
            let (_, b) = self.busy.take().expect("busy");
            match b {
                Busy::Malloc { id, granted, result } => {
                    if result.is_ok() {
                        self.stats.mallocs_ok += 1;
                        self.stats.malloc_cycles += c - granted;
                    } else {
                        self.stats.errors += 1;
                    }
                    out.resp = Some(Response { id, outcome: Outcome::Malloc(result), granted });
                }
                Busy::Free { id, granted, ptr } => {
                    let r = self.heap.free(ptr);
                    if r.is_ok() {
                        self.stats.frees_ok += 1;
                        self.stats.free_cycles += c - granted;
                    } else {
                        self.stats.errors += 1;
                    }
                    out.resp = Some(Response { id, outcome: Outcome::Free(r), granted });
                }
                Busy::Check { started } => {
                    self.stats.checks += 1;
                    self.stats.check_cycles += c - started;
                    let ck = self.heap.checker();
                    let at = if ck.cursor() >= ck.len() { 0 } else { ck.cursor() };
                    let cfg = self.heap.config();
                    let chunk = cfg.base + ck.entries()[at] as u64 * cfg.classes[0];
                    let (found, _) = self.heap.checker_run(1);
                    let (front, rear) = found.first().map(|o| (o.front, o.rear)).unwrap_or((false, false));
                    out.check = Some(CheckReport { chunk, front, rear });
                }
            }
        }
        out
    }

    /// The combinational half and the clock edge: a due check or the
    /// arbiter's grant (returned) if idle, the checker credit; then the next
    /// cycle.
    pub fn end_cycle(&mut self, reqs: &[Option<Request>]) -> Option<usize> {
        let c = self.cycle;
        let mut grant = None;
        let always = self.heap.config().check == CheckMode::Always;
        let mut took = false;
        if self.busy.is_none() {
            if always && self.pending != 0 && self.len != 0 {
                took = true;
                let done = c + 5 + 2 * self.d();
                self.busy = Some((done, Busy::Check { started: c }));
            } else if let Some(id) = self.arbitrate(reqs) {
                let r = reqs[id].expect("arbitrated a request");
                grant = Some(id);
                let busy = if r.free { self.grant_free(c, id, r.arg) } else { self.grant_malloc(c, id, r.arg) };
                self.busy = Some(busy);
            }
        }
        let (sum, carry) = self.acc.overflowing_add(self.rate);
        self.acc = sum;
        if carry && !took && self.pending != 255 {
            self.pending += 1;
        }
        if !carry && took && self.pending != 0 {
            self.pending -= 1;
        }
        if self.len == 0 {
            self.pending = 0;
        }
        self.cycle += 1;
        grant
    }

    fn arbitrate(&mut self, reqs: &[Option<Request>]) -> Option<usize> {
        let n = self.requesters.min(reqs.len());
        let pick = (self.nxt..n).chain(0..self.nxt.min(n)).find(|&i| reqs[i].is_some())?;
        self.nxt = (pick + 1) % self.requesters;
        Some(pick)
    }

    fn grant_malloc(&mut self, g: u64, id: usize, size: u64) -> (u64, Busy) {
        let class = match self.heap.class_for(size) {
            Ok(c) => c,
            Err(e) => return (g + 2, Busy::Malloc { id, granted: g, result: Err(e) }),
        };
        let (p, claims) = self.probe(class, id as u64);
        let result = self.heap.malloc(size, id as u64);
        assert_eq!(claims, result.is_ok(), "the unit's probe and the heap disagree on exhaustion");
        if !claims {
            return (g + 2 + p, Busy::Malloc { id, granted: g, result });
        }
        self.stats.probe_cycles += p;
        let claim = g + 2 + p;
        let h = self.timing.siphash_latency;
        let done = match self.heap.config().check {
            CheckMode::Off => claim + 1,
            CheckMode::Free => claim + 2 * h + 1,
            CheckMode::Always => {
                self.len_change = Some((claim + 2 * h + 1, 1));
                claim + 2 * h + 2
            }
        };
        (done, Busy::Malloc { id, granted: g, result })
    }

    fn grant_free(&mut self, g: u64, id: usize, ptr: u64) -> (u64, Busy) {
        let b = Busy::Free { id, granted: g, ptr };
        let Ok((_, _, chunk)) = self.heap.decode_free(ptr) else {
            return (g + 2, b);
        };
        let s = g + 2;
        let d = self.d();
        let done = match self.heap.config().check {
            CheckMode::Off => g + 4,
            CheckMode::Free => s + 2 * d + 2,
            CheckMode::Always => {
                let ck = self.heap.checker();
                let idx = self.heap.chunk_index(chunk);
                let j = ck.position(idx).expect("a live chunk is in the checker list");
                let moves_two = j < ck.cursor();
                self.stats.two_move_removes += moves_two as u64;
                let commit = s + 2 * d + 1;
                let fin = commit + if moves_two { 5 } else { 3 };
                self.len_change = Some((fin + 1, -1));
                fin + 2
            }
        };
        (done, b)
    }
}
