//! Programs on the MLU as an SM unit: a runtime (`sim::runtime::Runtime`)
//! that changes between requests, its requests through the unit's Verilog
//! under Verilator beside the golden twin `sim::mlu_unit::MluUnit` (every
//! output compared every cycle, [`UnitCosim::run_phases`]).
//!
//! - [`check_scenario`]: `mlugen check --engine verilator`, a scenario
//!   (spec section 10) one access at a time, its verdicts set against the
//!   golden model's (`sim::scenario::Scenario::run`).
//! - [`replay_trace`]: a recorded workload (`sim::expand`), each operator's
//!   per-warp requests streamed into the unit, pipelined.
//!
//! The top ([`unit_top`]): the committed unit of the MLB (entries and
//! replacement) and structure in COMPILER mode when there is one
//! (`mlu8_bst_k4_l32_p2_c2`, `mlu16_bst_k4_l32_p2_c2`), else one generated
//! now with the committed shape but one lane (the requests here are
//! scalar; HWONLY needs one lane). The mode and the step limit are CSRs,
//! written after reset, so they never need a top of their own.
//!
//! The runtime holds the heap: its metadata memory is what the unit's port
//! reads, and what it asks of the MLU (INVALIDATE on a free or a retired
//! node, FLUSH, a new ROOT) goes to the unit, the unit idle. The port
//! answers at random latencies (1..30 cycles, reordered, 90% ready) and
//! with no injected errors, so a verdict depends only on the memory, as the
//! model's does.
//!
//! A scenario runs one access at a time, each until the unit is idle: in
//! COMPILER mode a LOADMETA of the allocation's base pointer (the root
//! pointer) and, unless it faults, MEMCHECK.G with the location the unit
//! answered; in HWONLY mode MEMCHECK.G alone. An event's verdict is the
//! fault of its last response and the op that gave it.
use crate::unit_driver::{Csr, Phase, UnitAnswer, UnitCosim, UnitMismatch};
use crate::verilator::Top;
use anyhow::{anyhow, bail, Result};
use sim::config::{Mode, MluConfig, Structure, UnitShape};
use sim::fault::{FaultCode, Op};
use sim::meta_port::PortParams;
use sim::mlu_unit::{UnitParams, UnitRequest};
use sim::pointer::NO_META;
use sim::runtime::{AllocState, HostOp, Runtime, RuntimeConfig};
use sim::scenario::{LinkTarget, PtrSpec, Scenario, ScenarioEvent};
use std::collections::HashMap;

/// What `mlugen check --engine verilator` prints and reports.
pub struct VerilogCheck {
    /// The model's outcome with every MLU verdict as the Verilog gave it.
    pub outcome: sim::scenario::Outcome,
    /// The top the scenario ran on.
    pub top: String,
    /// Where the Verilog's verdicts differ from the model's, one line each.
    pub differences: Vec<String>,
    /// The first cycle in which the Verilog and its golden twin differ.
    pub mismatch: Option<UnitMismatch>,
    /// The unit's counters at the end (the Verilog's equal them: compared
    /// in every idle cycle).
    pub counters: sim::mlu_unit::UnitCounters,
}

/// The metadata port of these programs (module doc).
fn port(seed: u64) -> PortParams {
    PortParams { min_latency: 1, max_latency: 30, ready_percent: 90, errors_per_million: 0, shuffle: true, seed }
}

/// The unit a program of configuration `c` runs on (module doc) and its
/// model parameters. `c.unit` is ignored.
pub fn unit_top(c: &MluConfig) -> Result<(Top, UnitParams)> {
    // The committed shape (MluConfig::unit_shape of a COMPILER-mode
    // configuration) with `lanes` lanes.
    let cfg = |lanes| {
        let base = MluConfig { entries: c.entries, structure: c.structure, replacement: c.replacement, ..MluConfig::default() };
        MluConfig { unit: Some(UnitShape { lanes, ..base.unit_shape() }), ..base }
    };
    let spec = |cfg: &MluConfig| -> Result<hw::generate::TopSpec> {
        hw::generate::tops_for_config(cfg)?.pop().ok_or_else(|| anyhow!("no unit top for {cfg:?}"))
    };
    let wide = spec(&cfg(32))?;
    let committed = c.mode == Mode::Compiler && hw::generate::committed_tops().iter().any(|t| t.name() == wide.name());
    let cfg = if committed { cfg(32) } else { cfg(1) };
    let spec = spec(&cfg)?;
    let top = Top::committed_or_generated(&spec.name(), || Ok(spec.clone()))?;
    let params = UnitParams::from_config(&cfg).ok_or_else(|| anyhow!("{cfg:?} has no unit"))?;
    Ok((top, params))
}

/// Run `sc` on the unit (module doc) and set its verdicts against the model's.
pub fn check_scenario(sc: &Scenario) -> Result<VerilogCheck> {
    let c = &sc.config;
    if c.entries == 0 || c.structure == Structure::Sol {
        bail!(
            "scenario {}: no RTL for {} (an MLB of 0 entries and the sol table are model-only reference points); use --engine model",
            sc.name,
            if c.entries == 0 { "mlb_entries 0".to_string() } else { "structure sol".to_string() }
        );
    }
    let (top, params) = unit_top(c)?;
    let model = sc.run().map_err(|e| anyhow!("{e}"))?;
    let mut rt = sc.runtime().map_err(|e| anyhow!("scenario {}: {e}", sc.name))?;
    let port = port(sc.seed);
    let mut csrs = vec![Csr::Mode(sc.config.mode), Csr::StepLimit(sc.config.step_limit), Csr::Root(rt.root())];
    if sc.device_heap.is_some() {
        csrs.extend(Csr::heap_window(rt.mlu().csrs().heap));
    }
    let mut cosim = UnitCosim::start(&top, &top.verilog, "", params.lanes, sc.seed)?;
    let mut driver = Driver {
        sc,
        req: Requests::new(params.lanes),
        ids: HashMap::new(),
        dev: HashMap::new(),
        next_event: 0,
        seen: 0,
        waiting: None,
        verdicts: HashMap::new(),
    };
    // The last call of `next` (None) reads the last event's answers.
    let run = cosim.run_phases(&params, &mut rt, &csrs, port, |rt, run| driver.next(rt, &run.answers))?;
    cosim.finish()?;
    let mut outcome = model;
    let mut differences = vec![];
    // The MLU's verdicts; the findings of a free (the runtime's) and of a
    // device_free (the allocator model's: the canary unit is not in this
    // top) stay the model's.
    for r in outcome.results.iter_mut().filter(|r| r.op != "free" && r.op != "device_free") {
        let event = r.event;
        let Some(&(bits, op)) = driver.verdicts.get(&event) else {
            if run.mismatch.is_some() {
                continue;
            }
            bail!("scenario {}: event {event}: the Verilog gave no verdict", sc.name);
        };
        let fault = FaultCode::from_bits(bits).ok_or_else(|| anyhow!("event {event}: the Verilog answered fault code {bits}"))?;
        if (fault.name(), op.name()) != (r.fault, r.op) {
            differences.push(format!("event {event}: Verilog {} by {}, model {} by {}", fault.name(), op.name(), r.fault, r.op));
            (r.fault, r.op) = (fault.name(), op.name());
        }
    }
    Ok(VerilogCheck { outcome, top: top.name().to_string(), differences, mismatch: run.mismatch, counters: run.counters })
}

/// What the answers still to come belong to.
#[derive(Clone, Copy, Debug)]
enum Waiting {
    /// COMPILER mode: the LOADMETA of an access; MEMCHECK.G follows.
    LoadMeta { event: usize, ptr: u64, width: u32 },
    /// The last request of an event (MEMCHECK.G, MEMCHECK.S).
    Verdict { event: usize, op: Op },
}

/// Scalar requests (lane 0 active) with ids counting up from 0 modulo 2^16
/// (the width of `req_id`).
pub struct Requests {
    lanes: usize,
    next_id: u32,
}

impl Requests {
    /// For a unit of `lanes` lanes.
    pub fn new(lanes: usize) -> Self {
        Requests { lanes, next_id: 0 }
    }

    /// The next request: `ptr` in lane 0, the only active one.
    pub fn make(&mut self, op: Op, ptr: u64, width: u32, loc: u64, sbase: u64, ssize: u64) -> UnitRequest {
        let mut ptrs = vec![0; self.lanes];
        ptrs[0] = ptr;
        let id = self.next_id;
        self.next_id = (id + 1) & 0xFFFF;
        UnitRequest { id, op, mask: 1, ptrs, width, loc, sbase, ssize }
    }

    /// The runtime's requests to the MLU since the last call, as a phase.
    fn host_ops(&mut self, rt: &mut Runtime) -> Phase {
        let mut phase = Phase::default();
        for op in rt.take_host_ops() {
            match op {
                HostOp::Root(r) => phase.csrs.push(Csr::Root(r)),
                HostOp::Invalidate(loc) => phase.requests.push(self.make(Op::Invalidate, 0, 1, loc, 0, 0)),
                HostOp::Flush => phase.requests.push(self.make(Op::Flush, 0, 1, 0, 0, 0)),
            }
        }
        phase
    }
}

/// Turns the scenario's events into phases of requests, one access at a
/// time, and collects each event's verdict from the RTL's answers.
struct Driver<'s> {
    sc: &'s Scenario,
    req: Requests,
    /// Allocation name -> runtime allocation id.
    ids: HashMap<&'s str, usize>,
    /// Device-heap allocation name -> its tagged pointer.
    dev: HashMap<&'s str, u64>,
    next_event: usize,
    /// Answers already read.
    seen: usize,
    waiting: Option<Waiting>,
    /// Event -> the first fault among its responses (0: none) and the op
    /// that answered it.
    verdicts: HashMap<usize, (u8, Op)>,
}

impl<'s> Driver<'s> {
    /// Read the answers that came since the last call; returns the last one.
    fn take_answers(&mut self, answers: &[UnitAnswer]) -> Result<Option<UnitAnswer>> {
        let new = &answers[self.seen.min(answers.len())..];
        self.seen = answers.len();
        let last = new.last().copied();
        match self.waiting.take() {
            Some(Waiting::Verdict { event, op }) => {
                let a = last.ok_or_else(|| anyhow!("event {event}: the unit gave no answer"))?;
                self.verdicts.insert(event, (a.fault, op));
            }
            w => self.waiting = w,
        }
        Ok(last)
    }

    /// The next phase (None: the scenario is done).
    fn next(&mut self, rt: &mut Runtime, answers: &[UnitAnswer]) -> Result<Option<Phase>> {
        let waiting = self.waiting;
        let last = self.take_answers(answers)?;
        if let Some(Waiting::LoadMeta { event, ptr, width }) = waiting {
            self.waiting = None;
            let a = last.ok_or_else(|| anyhow!("event {event}: the unit gave no answer to LOADMETA"))?;
            if a.fault != 0 {
                self.verdicts.insert(event, (a.fault, Op::LoadMeta));
            } else {
                self.waiting = Some(Waiting::Verdict { event, op: Op::MemcheckG });
                let r = self.req.make(Op::MemcheckG, ptr, width, a.loc, 0, 0);
                return Ok(Some(Phase { requests: vec![r], ..Phase::default() }));
            }
        }
        let sc = self.sc;
        while self.next_event < sc.events.len() {
            let i = self.next_event;
            self.next_event += 1;
            let ev = &sc.events[i];
            let err = |m: String| anyhow!("scenario {}: event {i} ({}): {m}", sc.name, ev.op());
            let alloc = |ids: &HashMap<&str, usize>, name: &str| ids.get(name).copied().ok_or_else(|| err(format!("unknown allocation {name}")));
            // A node of a live or freed allocation (a retired one has none).
            let node = |rt: &Runtime, ids: &HashMap<&str, usize>, name: &str| -> Result<u64> {
                let a = &rt.allocations()[alloc(ids, name)?];
                if a.state == AllocState::Retired {
                    return Err(err(format!("allocation {name} has no node any more")));
                }
                Ok(a.location)
            };
            let resolve = |ids: &HashMap<&str, usize>, dev: &HashMap<&str, u64>, p: &PtrSpec| -> Result<(u64, u64)> {
                match p {
                    PtrSpec::Alloc { name, offset, untagged } => {
                        let mut base = match dev.get(name.as_str()) {
                            Some(&q) => q,
                            None => rt.allocations()[alloc(ids, name)?].ptr,
                        };
                        if *untagged {
                            base = sim::pointer::untag(base);
                        }
                        Ok((base.wrapping_add(*offset as u64), base))
                    }
                    PtrSpec::Raw(p) => Ok((*p, *p)),
                }
            };
            let mut phase = Phase::default();
            match ev {
                ScenarioEvent::Malloc { name, size, base } => {
                    rt.malloc(*size, *base).map_err(|e| err(format!("malloc refused: {e}")))?;
                    self.ids.insert(name.as_str(), rt.allocations().len() - 1);
                    phase = self.req.host_ops(rt);
                }
                ScenarioEvent::Free { ptr, .. } => {
                    let (p, _) = resolve(&self.ids, &self.dev, ptr)?;
                    // A rejected free (DOUBLE_FREE, INVALID_FREE) is the
                    // runtime's finding and asks nothing of the MLU.
                    let _ = rt.free(p);
                    phase = self.req.host_ops(rt);
                }
                ScenarioEvent::Access { ptr, width, .. } => {
                    let (p, root) = resolve(&self.ids, &self.dev, ptr)?;
                    let w = *width as u32;
                    let r = match sc.config.mode {
                        Mode::Compiler => {
                            self.waiting = Some(Waiting::LoadMeta { event: i, ptr: p, width: w });
                            self.req.make(Op::LoadMeta, root, 1, 0, 0, 0)
                        }
                        Mode::Hwonly => {
                            self.waiting = Some(Waiting::Verdict { event: i, op: Op::MemcheckG });
                            self.req.make(Op::MemcheckG, p, w, 0, 0, 0)
                        }
                    };
                    phase.requests.push(r);
                }
                ScenarioEvent::SharedAccess { addr, width, base, size, .. } => {
                    let narrow = |v: u64, f: &str| if v >> 32 == 0 { Ok(v) } else { Err(err(format!("{f} {v:#x} is not a 32-bit shared address"))) };
                    let (a, b, s) = (narrow(*addr, "address")?, narrow(*base, "base")?, narrow(*size, "size")?);
                    self.waiting = Some(Waiting::Verdict { event: i, op: Op::MemcheckS });
                    let r = self.req.make(Op::MemcheckS, a, *width as u32, 0, b, s);
                    phase.requests.push(r);
                }
                ScenarioEvent::CorruptLink { name, link, to } => {
                    let loc = node(rt, &self.ids, name)?;
                    let value = match to {
                        LinkTarget::Node(n) => node(rt, &self.ids, n)?,
                        LinkTarget::Addr(v) => *v,
                    };
                    rt.corrupt_link(loc, *link as usize, value);
                }
                ScenarioEvent::Poison { name } => {
                    let loc = node(rt, &self.ids, name)?;
                    rt.poison_node(loc);
                }
                ScenarioEvent::Flush => {
                    rt.flush_mlb();
                    phase = self.req.host_ops(rt);
                }
                ScenarioEvent::DeviceMalloc { name, size } => {
                    let p = rt.device_malloc(*size, 0).map_err(|e| err(format!("device_malloc refused: {e}")))?;
                    self.dev.insert(name.as_str(), p);
                    phase = self.req.host_ops(rt);
                }
                ScenarioEvent::DeviceFree { ptr, .. } => {
                    let (p, _) = resolve(&self.ids, &self.dev, ptr)?;
                    // A refused free is the allocator's finding and asks
                    // nothing of the MLU; an accepted one INVALIDATEs.
                    let _ = rt.device_free(p);
                    phase = self.req.host_ops(rt);
                }
            }
            if !phase.csrs.is_empty() || !phase.requests.is_empty() {
                return Ok(Some(phase));
            }
        }
        Ok(None)
    }
}

/// What [`replay_trace`] observed.
pub struct TraceRun {
    /// The top the trace ran on.
    pub top: String,
    /// The whole trace ran (else it stopped at the request limit).
    pub whole: bool,
    /// The RTL's run: requests, responses, answers, counters, and the
    /// first cycle it differed from its golden twin.
    pub run: crate::unit_driver::UnitRun,
}

/// One MLU request of a trace's operator: LOADMETA of an argument's root
/// pointer (`fault`: the golden runtime's answer, which gave `loc`), or
/// MEMCHECK.G of an access with the location its warp's LOADMETA gave
/// (COMPILER mode; 0 in HWONLY).
#[derive(Clone, Copy, Debug)]
pub struct TraceOp {
    pub op: Op,
    pub ptr: u64,
    pub width: u32,
    pub loc: u64,
    pub fault: Option<sim::fault::FaultCode>,
}

/// A recorded workload (`sim::expand`) item by item on a runtime:
/// allocations and frees through it at the trace's own bases, and each
/// operator's per-warp requests interleaved round-robin, one instruction per
/// warp in turn (ALU and the loads/stores themselves do not reach the MLU).
/// A LOADMETA is answered by the runtime's golden MLU as it is produced.
pub struct TraceWalk<'w> {
    workload: &'w sim::expand::Workload,
    mode: Mode,
    pos: usize,
    /// Trace block id -> runtime allocation id.
    ids: HashMap<u64, usize>,
}

impl<'w> TraceWalk<'w> {
    pub fn new(workload: &'w sim::expand::Workload, mode: Mode) -> Self {
        TraceWalk { workload, mode, pos: 0, ids: HashMap::new() }
    }

    /// Every item taken.
    pub fn done(&self) -> bool {
        self.pos >= self.workload.items.len()
    }

    /// The next item: None at the end; an allocation or a free changes `rt`
    /// and gives no request; an operator gives its requests.
    pub fn next(&mut self, rt: &mut Runtime) -> Result<Option<Vec<TraceOp>>> {
        use sim::expand::{Instr, Item};
        let Some(item) = self.workload.items.get(self.pos) else { return Ok(None) };
        self.pos += 1;
        let file = &self.workload.file;
        let mut ops = vec![];
        match item {
            Item::Alloc { id, base, size, line } => {
                rt.malloc(*size, Some(*base)).map_err(|e| anyhow!("{file}:{line}: malloc of block {id} refused: {e}"))?;
                self.ids.insert(*id, rt.allocations().len() - 1);
            }
            Item::Free { id, line } => {
                let a = self.ids.get(id).ok_or_else(|| anyhow!("{file}:{line}: free of unknown block {id}"))?;
                rt.free(rt.allocations()[*a].ptr).map_err(|e| anyhow!("{file}:{line}: free of block {id}: {e:?}"))?;
            }
            Item::Kernel { kernel, line } => {
                let ptrs: Vec<u64> = kernel
                    .args
                    .iter()
                    .map(|a| self.ids.get(&a.id).map(|&i| rt.allocations()[i].ptr))
                    .collect::<Option<_>>()
                    .ok_or_else(|| anyhow!("{file}:{line}: operator {} touches an unknown block", kernel.op))?;
                let mut locs = vec![vec![NO_META; kernel.args.len()]; kernel.warps.len()];
                let longest = kernel.warps.iter().map(|w| w.len()).max().unwrap_or(0);
                for i in 0..longest {
                    for (w, stream) in kernel.warps.iter().enumerate() {
                        match stream.get(i) {
                            Some(Instr::LoadMeta { arg }) if self.mode == Mode::Compiler => {
                                let root = ptrs[*arg as usize].wrapping_add(kernel.args[*arg as usize].offset);
                                let r = rt.loadmeta(root);
                                locs[w][*arg as usize] = *r.as_ref().unwrap_or(&NO_META);
                                ops.push(TraceOp { op: Op::LoadMeta, ptr: root, width: 1, loc: 0, fault: r.err().map(|f| f.code) });
                            }
                            Some(Instr::MemCheck { arg, off, width }) => {
                                let p = ptrs[*arg as usize].wrapping_add(*off);
                                let loc = if self.mode == Mode::Compiler { locs[w][*arg as usize] } else { 0 };
                                ops.push(TraceOp { op: Op::MemcheckG, ptr: p, width: *width as u32, loc, fault: None });
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        Ok(Some(ops))
    }
}

/// Replay a recorded workload on the unit of `cfg` (its entries,
/// replacement, structure, mode) through [`TraceWalk`]: each operator's
/// requests streamed into the unit in one phase, allocations and frees (and
/// the INVALIDATEs and ROOT they ask for) in between. A MEMCHECK.G carries
/// the location the golden runtime's LOADMETA of its argument gave (the
/// unit's own LOADMETA answer, in flight beside it, is compared with the
/// model's). Stops after the operator that takes the requests past `limit`.
pub fn replay_trace(cfg: &MluConfig, workload: &sim::expand::Workload, limit: u64) -> Result<TraceRun> {
    let (top, params) = unit_top(cfg)?;
    let mut rt = Runtime::new(RuntimeConfig { mlu: MluConfig { unit: None, ..cfg.clone() }, seed: 1, ..Default::default() })?;
    let csrs = [Csr::Mode(cfg.mode), Csr::StepLimit(cfg.step_limit), Csr::Root(rt.root())];
    let mut cosim = UnitCosim::start(&top, &top.verilog, "", params.lanes, 1)?;
    let mut req = Requests::new(params.lanes);
    let mut walk = TraceWalk::new(workload, cfg.mode);
    let mut issued = 0u64;
    let run = cosim.run_phases(&params, &mut rt, &csrs, port(1), |rt, _| {
        while issued < limit {
            let Some(ops) = walk.next(rt)? else { break };
            let mut phase = req.host_ops(rt);
            phase.requests.extend(ops.iter().map(|o| req.make(o.op, o.ptr, o.width, o.loc, 0, 0)));
            issued += ops.len() as u64;
            if !phase.csrs.is_empty() || !phase.requests.is_empty() {
                return Ok(Some(phase));
            }
        }
        Ok(None)
    })?;
    cosim.finish()?;
    Ok(TraceRun { top: top.name().to_string(), whole: walk.done(), run })
}
