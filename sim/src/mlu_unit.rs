//! The MLU as an SM unit, cycle by cycle (spec section 6, docs/design.md
//! "The MLU as an SM unit"): pipelined, non-blocking, warp-wide. This is the
//! golden twin the RTL of the pipelined MLU is built and checked against;
//! [`crate::mlu`] stays the transaction-level reference for what each
//! operation answers.
//!
//! The unit, with K walkers, R miss slots, lanes L (1 or 32), an MLB of
//! search latency m (1 or 2) and c check stages (1 or 2):
//!
//! ```text
//!  request --> [A] --MLB search (m cycles)--> [C] --check (c)--> response
//!   (id)        ^  INVALIDATE/FLUSH apply      |  hit / no lookup: answered
//!               |                              |  miss: to a miss slot, merged
//!               +---- replay (slot + result) <-+  onto the walk of its key or
//!                                                 given a walker (K of them)
//! ```
//!
//! - A request presented in cycle t (`req_ready` high) enters stage A in
//!   t+1, where it issues its MLB search (range for LOADMETA and HWONLY
//!   MEMCHECK.G, location for COMPILER MEMCHECK.G), reaches C with the MLB's
//!   answer in t+1+m, and its response is on the outputs in t+1+m+c: the
//!   fixed latency of hits, tag-0 pointers, NO_META operands, MEMCHECK.S,
//!   INVALIDATE and FLUSH, one per cycle in any mix.
//! - A miss at C takes a miss slot (which keeps the whole request) and waits
//!   on a walk: the walk in flight for the same key if there is one and it
//!   was not cancelled (a merged miss: one walk, many requests), else a free
//!   walker, else it waits unassigned until a walker frees (the oldest
//!   unassigned slot first, one per cycle; every unassigned slot of the same
//!   key joins it).
//!   When the walk ends, its result is copied into its slots, the MLB is
//!   filled (through a fill register, so a cycle later; one fill per cycle,
//!   lowest walker first), and each slot
//!   re-enters stage A with the result, one per cycle (lowest slot first),
//!   skipping the MLB search; its response follows at the fixed latency.
//!   Responses carry the request's id and overtake each other freely.
//! - `req_ready` is low in a cycle a slot re-enters (the replay takes the
//!   request's place) and when the free slots could not hold a miss of every
//!   request already in the pipeline plus this one. With R >= m + 2 an
//!   all-hit stream is never held up.
//! - Fills never duplicate: a fill whose location the MLB already holds
//!   (two walks found the same node) writes nothing (the MLB's own rule).
//! - At m = 2 the MLB reads the entry a cycle after its search: a fill that
//!   replaces the entry a same-cycle search hit makes that search a miss.
//! - INVALIDATE and FLUSH apply to the MLB in stage A, in order with the
//!   requests around them: a later request's search sees them. The fill
//!   register is emptied, and every walk in flight or done in that cycle is
//!   cancelled: it fills nothing (what it read may predate the free) and
//!   takes no more merged misses; the requests already
//!   waiting on it still get its result (they are older than the free). So
//!   a freed allocation's entry never survives an INVALIDATE, whatever is in
//!   flight.
//! - Warp-wide MEMCHECK.G: one location operand, one width, an active-lane
//!   mask and one pointer per lane; one metadata lookup per instruction
//!   (none if no active lane is tagged); each lane checked in the fault
//!   order of spec section 4; the response gives the pass mask, the
//!   untagged addresses and the lowest faulting lane with its fault.
//!   LOADMETA takes lane 0's pointer (the compiler issues it on a uniform
//!   root pointer). HWONLY needs lanes = 1 (a warp-wide HWONLY lookup, one
//!   per allocation the warp touches, is not built).
//!
//! Interface timing: [`MluUnit::outputs`] gives the cycle's outputs from the
//! registers alone (`req_ready`, the response, the walker's read request);
//! [`MluUnit::tick`] then takes the cycle's inputs (the request, whether the
//! port took the read, the port's response) and advances one clock edge.
use crate::config::{Mode, MluConfig, Structure, UnitShape};
use crate::fault::{FaultCode, Op};
use crate::memcheck::{check_lanes, LaneMeta};
use crate::mlb::{Mlb, MlbCycleInputs, LOC_MASK};
use crate::mlu::HeapWindow;
use crate::node::Meta;
use crate::pointer::{tag, untag, NO_META};
use crate::walker::{MemReq, MemResp, WalkCsrs, WalkKey, WalkResult, Walker, WalkerState};
use std::collections::VecDeque;
use std::fmt;

/// R, the miss slots the unit is built with (the RTL's too: hw::mlu_unit):
/// m + 2 or more so an all-hit stream is never held up, and room for two
/// misses per walker.
pub const MISS_SLOTS: usize = 8;

/// The unit's generator parameters beyond [`MluConfig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitParams {
    pub cfg: MluConfig,
    /// K: walks in flight at once.
    pub walkers: usize,
    /// L: lanes per request.
    pub lanes: usize,
    /// m: MLB search stages.
    pub mlb_latency: usize,
    /// c: lane-check stages.
    pub check_latency: usize,
    /// The heap window's lookup path is built ([`UnitShape::heap_path`]).
    pub heap_path: bool,
    /// R: requests that can wait on walks.
    pub miss_slots: usize,
}

impl Default for UnitParams {
    fn default() -> Self {
        let u = UnitShape::default();
        UnitParams {
            cfg: MluConfig::default(),
            walkers: u.walkers,
            lanes: u.lanes,
            mlb_latency: u.mlb_latency,
            check_latency: u.check_latency,
            heap_path: u.heap_path,
            miss_slots: MISS_SLOTS,
        }
    }
}

impl UnitParams {
    /// The unit a configuration with a `unit` field describes (8 miss
    /// slots, as the RTL is built); None without one.
    pub fn from_config(cfg: &MluConfig) -> Option<UnitParams> {
        let u = cfg.unit?;
        Some(UnitParams {
            cfg: cfg.clone(),
            walkers: u.walkers,
            lanes: u.lanes,
            mlb_latency: u.mlb_latency,
            check_latency: u.check_latency,
            heap_path: u.heap_path,
            ..UnitParams::default()
        })
    }
}

/// A parameter the unit cannot be built with: the field and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for ParamError {}

impl UnitParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        let err = |field, message: String| Err(ParamError { field, message });
        // The shape is checked where every configuration is: MluConfig.
        let shape = UnitShape {
            walkers: self.walkers,
            lanes: self.lanes,
            mlb_latency: self.mlb_latency,
            check_latency: self.check_latency,
            heap_path: self.heap_path,
        };
        let cfg = MluConfig { unit: Some(shape), ..self.cfg.clone() };
        if let Err(e) = cfg.validate(crate::config::Target::Model) {
            return err("cfg", e.to_string());
        }
        if !(1..=2).contains(&self.check_latency) {
            return err("check_latency", format!("{} (allowed: 1, 2)", self.check_latency));
        }
        if self.miss_slots < self.mlb_latency + 2 || self.miss_slots > 32 {
            return err(
                "miss_slots",
                format!("{} (allowed: {}..=32: fewer would hold up an all-hit stream)", self.miss_slots, self.mlb_latency + 2),
            );
        }
        Ok(())
    }

    /// Cycles from a request's presentation to its response on the fixed
    /// path: 1 (stage A) + m + c.
    pub fn hit_latency(&self) -> usize {
        1 + self.mlb_latency + self.check_latency
    }
}

/// One request of the SM's load/store unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitRequest {
    /// The requester's tag, returned with the response.
    pub id: u32,
    pub op: Op,
    /// Active lanes (bit i = lane i).
    pub mask: u32,
    /// One pointer per lane: LOADMETA reads lane 0's; MEMCHECK.S lanes hold
    /// shared-window addresses.
    pub ptrs: Vec<u64>,
    /// Access width of MEMCHECK.G/S (1, 2, 4, 8, 16).
    pub width: u32,
    /// MEMCHECK.G: the location operand; INVALIDATE: the location dropped.
    pub loc: u64,
    /// MEMCHECK.S: the compile-time base and size.
    pub sbase: u64,
    pub ssize: u64,
}

/// One response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitResponse {
    pub id: u32,
    pub op: Op,
    /// Active lanes that passed (MEMCHECK.G/S; lane 0 for a LOADMETA
    /// without fault).
    pub pass: u32,
    /// The fault of the lowest faulting active lane, NONE if none.
    pub fault: FaultCode,
    /// That lane (0 when there is no fault).
    pub lane: u8,
    /// LOADMETA: the location found (0 for tag 0, NO_META when none or on
    /// a fault).
    pub loc: u64,
    /// The metadata the lanes were checked against, for fault reports.
    pub meta: Option<Meta>,
    /// The untagged address of every lane.
    pub addrs: Vec<u64>,
}

/// The cycle's inputs.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnitIn<'a> {
    /// `req_valid` with the request; taken when `req_ready` is high.
    pub req: Option<&'a UnitRequest>,
    /// The metadata port takes this cycle's read request.
    pub mem_req_ready: bool,
    /// A response of the metadata port this cycle.
    pub mem_resp: Option<MemResp>,
}

/// The cycle's outputs, from the registers alone.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct UnitOut {
    pub req_ready: bool,
    pub resp: Option<UnitResponse>,
    pub mem_req: Option<MemReq>,
    /// The counters, in a cycle that starts with the unit idle, as did the
    /// one before (the RTL's `cnt_*` equal them then; in between, the RTL
    /// counts an event up to two cycles later than the model: it registers
    /// the event, then increments).
    pub idle_counters: Option<UnitCounters>,
}

/// Event counters (spec section 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct UnitCounters {
    pub requests: u64,
    /// MLB searches issued and how many hit.
    pub lookups: u64,
    pub hits: u64,
    /// Misses, and those merged onto a walk in flight or waiting for one.
    pub misses: u64,
    pub merged: u64,
    /// Walks started, nodes visited, port reads.
    pub walks: u64,
    pub nodes: u64,
    pub reads: u64,
    /// Responses carrying a fault.
    pub faults: u64,
    /// Fills written, and fills dropped as cancelled or already present.
    pub fills: u64,
    pub fills_cancelled: u64,
    pub fills_present: u64,
    /// Cycles a request was presented and not taken.
    pub stalls: u64,
}

/// What a request looks up.
fn lookup_of(req: &UnitRequest, mode: Mode) -> Option<WalkKey> {
    let tagged = |i: usize| req.mask >> i & 1 == 1 && tag(req.ptrs[i]) != 0;
    match req.op {
        Op::LoadMeta => (tag(req.ptrs[0]) != 0).then(|| WalkKey::Range(untag(req.ptrs[0]))),
        Op::MemcheckG if mode == Mode::Hwonly => tagged(0).then(|| WalkKey::Range(untag(req.ptrs[0]))),
        Op::MemcheckG => {
            let any = (0..req.ptrs.len()).any(tagged);
            (any && req.loc != 0 && req.loc != NO_META).then_some(WalkKey::Location(req.loc & LOC_MASK))
        }
        Op::MemcheckS | Op::Invalidate | Op::Flush => None,
    }
}

/// Where a request's metadata came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// No lookup was needed.
    None,
    /// The MLB, or a walk.
    Found { location: u64, meta: Meta },
    Walk(WalkResult),
}

/// The response to `req` given its metadata (the lane checks of stage C).
fn answer(req: &UnitRequest, mode: Mode, src: Source) -> UnitResponse {
    let found = match src {
        Source::Found { location, meta } | Source::Walk(WalkResult::Found { location, meta }) => Some((location, meta)),
        _ => None,
    };
    let lookup: Option<LaneMeta> = match src {
        Source::None => None,
        Source::Found { meta, .. } | Source::Walk(WalkResult::Found { meta, .. }) => Some(Ok(meta)),
        Source::Walk(WalkResult::NotFound) => Some(Err(FaultCode::NoMeta)),
        Source::Walk(WalkResult::StepLimit) => Some(Err(FaultCode::TraversalLimit)),
        Source::Walk(WalkResult::MemError) => Some(Err(FaultCode::MemError)),
    };
    let mut r = UnitResponse {
        id: req.id,
        op: req.op,
        pass: 0,
        fault: FaultCode::None,
        lane: 0,
        loc: 0,
        meta: None,
        addrs: req.ptrs.iter().map(|&p| untag(p)).collect(),
    };
    match req.op {
        Op::LoadMeta => {
            (r.loc, r.fault) = match (tag(req.ptrs[0]), lookup) {
                (0, _) | (_, None) => (0, FaultCode::None),
                (_, Some(Ok(_))) => (found.map_or(NO_META, |(l, _)| l), FaultCode::None),
                (_, Some(Err(FaultCode::NoMeta))) => (NO_META, FaultCode::None),
                // A faulting LOADMETA answers NO_META, as the blocking MLU does.
                (_, Some(Err(f))) => (NO_META, f),
            };
            r.pass = (r.fault == FaultCode::None) as u32;
        }
        Op::MemcheckG | Op::MemcheckS => {
            let shared = req.op == Op::MemcheckS;
            let loc = (mode == Mode::Compiler).then_some(req.loc);
            let (pass, first) = check_lanes(shared, req.mask, &req.ptrs, req.width, loc, lookup, req.sbase, req.ssize);
            r.pass = pass;
            if let Some((lane, f)) = first {
                (r.lane, r.fault) = (lane, f);
            }
            r.meta = if shared { Some(Meta { base: req.sbase, size: req.ssize, tag: 0 }) } else { found.map(|(_, m)| m) };
        }
        Op::Invalidate | Op::Flush => {}
    }
    r
}

/// A request in the pipeline.
#[derive(Clone, Debug)]
struct Inflight {
    req: UnitRequest,
    key: Option<WalkKey>,
    /// A replay: the result of the walk it waited on.
    replay: Option<WalkResult>,
    /// The MLB's answer to its search.
    hit: Option<(u64, Meta)>,
}

/// A request waiting on a walk.
#[derive(Clone, Debug)]
struct Slot {
    req: UnitRequest,
    key: WalkKey,
    /// The walker it waits on; None: waiting for a free walker.
    walker: Option<usize>,
    /// The walk's result, once it ended: the slot replays.
    result: Option<WalkResult>,
}

/// The unit.
#[derive(Clone, Debug)]
pub struct MluUnit {
    p: UnitParams,
    mlb: Mlb,
    /// The walkers' CSRs; `csrs.heap` is the window in effect: the heap
    /// CSRs' value with the heap path built, else none.
    csrs: WalkCsrs,
    /// The heap CSRs as written (read back by [`MluUnit::heap_window`]).
    heap_csrs: HeapWindow,
    mode: Mode,
    /// Stages A .. C: `pipe[0]` is A, `pipe[m]` is C.
    pipe: VecDeque<Option<Inflight>>,
    /// Response registers, oldest last (c of them).
    resp: VecDeque<Option<UnitResponse>>,
    walkers: Vec<Walker>,
    slots: Vec<Option<Slot>>,
    /// The fill register: a walk's result on its way to the MLB.
    fill_q: Option<(u64, Meta)>,
    counters: UnitCounters,
    /// The unit was idle at the start of the last cycle (the RTL counts an
    /// event a cycle or two after the model: `UnitOut::idle_counters`).
    was_idle: bool,
    cycle: u64,
}

impl MluUnit {
    pub fn new(p: &UnitParams) -> Result<MluUnit, ParamError> {
        p.validate()?;
        let mut u = MluUnit {
            p: p.clone(),
            mlb: Mlb::new(p.cfg.entries, p.cfg.replacement),
            csrs: WalkCsrs { structure: p.cfg.structure, root: 0, step_limit: p.cfg.step_limit, heap: HeapWindow::default() },
            heap_csrs: HeapWindow::default(),
            mode: p.cfg.mode,
            pipe: VecDeque::new(),
            resp: VecDeque::new(),
            walkers: vec![],
            slots: vec![],
            fill_q: None,
            counters: UnitCounters::default(),
            was_idle: true,
            cycle: 0,
        };
        u.reset();
        Ok(u)
    }

    /// Reset: empty MLB, pipeline, walkers and slots; CSRs at reset values.
    pub fn reset(&mut self) {
        self.mlb.reset();
        self.csrs =
            WalkCsrs { structure: self.p.cfg.structure, root: 0, step_limit: self.p.cfg.step_limit, heap: HeapWindow::default() };
        self.heap_csrs = HeapWindow::default();
        self.mode = self.p.cfg.mode;
        self.pipe = (0..=self.p.mlb_latency).map(|_| None).collect();
        self.resp = (0..self.p.check_latency).map(|_| None).collect();
        self.walkers = vec![Walker::default(); self.p.walkers];
        self.slots = vec![None; self.p.miss_slots];
        self.fill_q = None;
        self.counters = UnitCounters::default();
        self.was_idle = true;
        self.cycle = 0;
    }

    pub fn params(&self) -> &UnitParams {
        &self.p
    }
    pub fn mlb(&self) -> &Mlb {
        &self.mlb
    }
    pub fn walkers(&self) -> &[Walker] {
        &self.walkers
    }
    pub fn counters(&self) -> &UnitCounters {
        &self.counters
    }
    pub fn cycle(&self) -> u64 {
        self.cycle
    }
    /// CSR writes (only while the unit is idle: walks read them).
    pub fn set_root(&mut self, root: u64) {
        self.csrs.root = root;
    }
    /// The device heap's window (see `sim::mlu` "Heap window").
    pub fn set_heap_window(&mut self, heap: HeapWindow) {
        self.heap_csrs = heap;
        self.csrs.heap = if self.p.heap_path { heap } else { HeapWindow::default() };
    }
    pub fn heap_window(&self) -> HeapWindow {
        self.heap_csrs
    }
    pub fn set_structure(&mut self, s: Structure) {
        self.csrs.structure = s;
    }
    pub fn set_step_limit(&mut self, limit: u32) {
        self.csrs.step_limit = limit & 0xFFFF;
    }
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// Nothing in the pipeline, no walk, no waiting request.
    pub fn is_idle(&self) -> bool {
        self.pipe.iter().all(Option::is_none)
            && self.resp.iter().all(Option::is_none)
            && self.walkers.iter().all(Walker::is_idle)
            && self.slots.iter().all(Option::is_none)
            && self.fill_q.is_none()
    }

    /// The slot that re-enters stage A next cycle, if any.
    fn replay_pick(&self) -> Option<usize> {
        self.slots.iter().position(|s| s.as_ref().is_some_and(|s| s.result.is_some()))
    }

    /// The lowest walker asking for the port.
    fn port_pick(&self) -> Option<MemReq> {
        self.walkers.iter().enumerate().find_map(|(i, w)| w.request(i, &self.csrs))
    }

    /// This cycle's outputs (from the registers).
    pub fn outputs(&self) -> UnitOut {
        let may_miss = self.pipe.iter().flatten().filter(|f| f.replay.is_none() && f.key.is_some()).count();
        let free = self.slots.iter().filter(|s| s.is_none()).count();
        UnitOut {
            req_ready: self.replay_pick().is_none() && free > may_miss,
            resp: self.resp.back().cloned().flatten(),
            mem_req: self.port_pick(),
            idle_counters: (self.was_idle && self.is_idle()).then_some(self.counters),
        }
    }

    /// One clock edge with the cycle's inputs; returns the cycle's outputs
    /// (as [`MluUnit::outputs`] gave them before the edge). A response for
    /// a walker with no read outstanding is the port's protocol error.
    pub fn tick(&mut self, inp: UnitIn) -> Result<UnitOut, String> {
        let out = self.outputs();
        self.was_idle = self.is_idle();
        let replay = self.replay_pick();
        let m = self.p.mlb_latency;
        if inp.req.is_some() && !out.req_ready {
            self.counters.stalls += 1;
        }
        if let Some(r) = &inp.mem_resp {
            match self.walkers.get(r.id).map(|w| w.state) {
                Some(WalkerState::Wait { .. }) => {}
                _ => return Err(format!("cycle {}: metadata response for walker {} with no read outstanding", self.cycle, r.id)),
            }
        }
        if let Some(req) = inp.req {
            if req.ptrs.len() != self.p.lanes {
                return Err(format!("cycle {}: request {} has {} lane pointers, the unit {} lanes", self.cycle, req.id, req.ptrs.len(), self.p.lanes));
            }
        }
        if out.resp.as_ref().is_some_and(|r| r.fault != FaultCode::None) {
            self.counters.faults += 1;
        }
        // Walker state at the start of the cycle: merges and cancels look at
        // these registers.
        let was_idle: Vec<bool> = self.walkers.iter().map(Walker::is_idle).collect();
        let mergeable: Vec<Option<WalkKey>> =
            self.walkers.iter().map(|w| (w.in_flight() && !w.cancelled).then_some(w.key)).collect();
        let a_op = self.pipe[0].as_ref().filter(|f| f.replay.is_none()).map(|f| f.req.op);
        let maintenance = matches!(a_op, Some(Op::Invalidate | Op::Flush));

        // Walks that ended: the lowest one with a fill to write moves it to
        // the fill register; the others without one hand their result over
        // now. The fill register writes the MLB a cycle later, so no
        // decision runs on into the MLB's write enables. An INVALIDATE or
        // FLUSH in either cycle drops the fill (what it holds may predate
        // the free).
        let mut next_fill = None;
        let mut taken = vec![];
        for (i, w) in self.walkers.iter().enumerate() {
            let WalkerState::Done(result) = w.state else { continue };
            let wants_fill = matches!(result, WalkResult::Found { .. }) && !w.cancelled;
            if !wants_fill {
                if matches!(result, WalkResult::Found { .. }) {
                    self.counters.fills_cancelled += 1;
                }
                taken.push(i);
            } else if next_fill.is_none() {
                let WalkResult::Found { location, meta } = result else { unreachable!() };
                next_fill = Some((location, meta));
                taken.push(i);
            }
        }
        let fill = self.fill_q.take();
        if maintenance {
            self.counters.fills_cancelled += fill.is_some() as u64 + next_fill.is_some() as u64;
        }
        let fill = fill.filter(|_| !maintenance);
        self.fill_q = next_fill.filter(|_| !maintenance);

        // Stage A: the MLB search, INVALIDATE or FLUSH, with the fill.
        let mut mlb_in = MlbCycleInputs { fill, ..Default::default() };
        if let Some(f) = self.pipe[0].as_ref().filter(|f| f.replay.is_none()) {
            match (f.req.op, f.key) {
                (Op::Invalidate, _) => mlb_in.invalidate = Some(f.req.loc & LOC_MASK),
                (Op::Flush, _) => mlb_in.flush = true,
                (_, Some(WalkKey::Range(a))) => mlb_in.range_lookup = Some(a),
                (_, Some(WalkKey::Location(l))) => mlb_in.loc_lookup = Some(l),
                _ => {}
            }
        }
        let mlb_out = if self.p.cfg.entries == 0 { Default::default() } else { self.mlb.cycle(mlb_in) };
        // (The MLB writes nothing for a location it already holds.)
        self.counters.fills += mlb_out.fill_way.is_some() as u64;
        self.counters.fills_present += mlb_out.fill_present as u64;
        if let Some(f) = self.pipe[0].as_mut().filter(|f| f.replay.is_none() && f.key.is_some()) {
            self.counters.lookups += 1;
            // A two-stage MLB reads the entry a cycle after the search: a
            // fill of this cycle over the way hit turns the hit into a miss
            // (hw/src/mlb.rs).
            let clobbered = |way: usize| m == 2 && mlb_out.fill_way == Some(way);
            f.hit = mlb_out.range_hit.or(mlb_out.loc_hit).filter(|&(w, _)| !clobbered(w)).map(|(_, e)| (e.location, e.meta()));
            self.counters.hits += f.hit.is_some() as u64;
        }

        // Walkers advance (from their state at the start of the cycle).
        let granted = out.mem_req.filter(|_| inp.mem_req_ready).map(|r| r.id);
        if granted.is_some() {
            self.counters.reads += 1;
        }
        for (i, w) in self.walkers.iter_mut().enumerate() {
            let resp = inp.mem_resp.as_ref().filter(|r| r.id == i);
            let before = w.steps;
            w.next(granted == Some(i), resp, &self.csrs);
            self.counters.nodes += (w.steps - before) as u64;
        }
        for &i in &taken {
            let WalkerState::Done(result) = self.walkers[i].state else { unreachable!() };
            // Only the slots still waiting on this walk: a slot already done
            // keeps its walker while it waits to replay, and the walker may
            // have ended another walk since.
            for s in self.slots.iter_mut().flatten().filter(|s| s.walker == Some(i) && s.result.is_none()) {
                s.result = Some(result);
            }
            self.walkers[i] = Walker::default();
        }
        // A walk in flight when an INVALIDATE or FLUSH applies is cancelled.
        if maintenance {
            for (w, idle) in self.walkers.iter_mut().zip(&was_idle) {
                if !idle {
                    w.cancelled = true;
                }
            }
        }

        // Free walkers (idle at the start of the cycle) go to the oldest
        // unassigned slot first (one slot group per cycle), then to stage C's
        // miss.
        let mut free: VecDeque<usize> = (0..self.walkers.len()).filter(|&i| was_idle[i]).collect();
        let unassigned = self.slots.iter().position(|s| s.as_ref().is_some_and(|s| s.walker.is_none() && s.result.is_none()));
        if let (Some(s), Some(&w)) = (unassigned, free.front()) {
            free.pop_front();
            let key = self.slots[s].as_ref().map(|s| s.key).expect("picked");
            self.start_walk(w, key);
            for slot in self.slots.iter_mut().flatten().filter(|x| x.walker.is_none() && x.result.is_none() && x.key == key) {
                slot.walker = Some(w);
            }
        }

        // Stage C: answer, or a miss to a slot.
        let mut answered = None;
        if let Some(f) = self.pipe[m].take() {
            let src = match (f.replay, f.hit, f.key) {
                (Some(r), _, _) => Some(Source::Walk(r)),
                (None, Some((location, meta)), _) => Some(Source::Found { location, meta }),
                (None, None, None) => Some(Source::None),
                (None, None, Some(_)) => None,
            };
            match src {
                Some(src) => answered = Some(answer(&f.req, self.mode, src)),
                None => {
                    let key = f.key.expect("a miss has a key");
                    self.counters.misses += 1;
                    let merge = mergeable
                        .iter()
                        .enumerate()
                        .position(|(_, k)| *k == Some(key))
                        .map(Some)
                        .or_else(|| {
                            self.slots.iter().flatten().any(|s| s.walker.is_none() && s.result.is_none() && s.key == key).then_some(None)
                        });
                    let walker = match merge {
                        Some(w) => {
                            self.counters.merged += 1;
                            w
                        }
                        None => free.pop_front().inspect(|&w| self.start_walk(w, key)),
                    };
                    let s = self.slots.iter().position(Option::is_none).ok_or_else(|| format!("cycle {}: a miss found no free slot", self.cycle))?;
                    self.slots[s] = Some(Slot { req: f.req, key, walker, result: None });
                }
            }
        }

        // Shift: the responses, the pipeline, and stage A's new entry (a
        // replay before a new request).
        self.resp.push_front(answered);
        self.resp.pop_back();
        for i in (1..=m).rev() {
            self.pipe[i] = self.pipe[i - 1].take();
        }
        self.pipe[0] = match replay {
            Some(s) => {
                let slot = self.slots[s].take().expect("picked");
                Some(Inflight { req: slot.req, key: Some(slot.key), replay: slot.result, hit: None })
            }
            None => inp.req.filter(|_| out.req_ready).map(|req| {
                self.counters.requests += 1;
                Inflight { req: req.clone(), key: lookup_of(req, self.mode), replay: None, hit: None }
            }),
        };
        self.cycle += 1;
        Ok(out)
    }

    fn start_walk(&mut self, w: usize, key: WalkKey) {
        self.counters.walks += 1;
        self.walkers[w].start(key, &self.csrs);
    }
}
