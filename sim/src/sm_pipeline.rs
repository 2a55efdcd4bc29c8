//! The simple SM memory pipeline of spec section 7, cycle level: W warps
//! issue from the per-warp streams of [`crate::expand`], an MLU (the golden
//! model's [`Mlu`](crate::mlu::Mlu), inside a [`Runtime`]) sits in front of
//! the load/store unit and shares its memory port. The RTL pipeline in `hw/`
//! is meant to follow the same timing rules, which are:
//!
//! - Issue: one instruction per cycle for the whole SM. The scheduler is a
//!   loose round robin: each cycle it looks at the warps starting after the
//!   one that issued last and issues the first whose next instruction can
//!   issue this cycle. A warp is in order and has one instruction in flight.
//! - ALU: an `Alu(n)` is n instructions of one cycle each.
//! - Memory port: one request per cycle; a data request is answered after
//!   `mem_latency` cycles (a fixed-latency memory; no caches), a metadata
//!   read after `meta_latency` (default: the same; a smaller value models
//!   metadata nodes that stay in the L1/L2). The MLU's metadata reads have
//!   priority for the port over the load/store unit.
//! - Load/store unit: a load or store issues when the port is free this cycle
//!   and fewer than `max_outstanding` data requests are in flight (a request
//!   is in flight until its answer). A load blocks its warp until its data
//!   returns (no scoreboarding); a store frees the warp the next cycle.
//! - MLU ([`MluTiming::Ideal`]): blocking, one operation at a time. A LOADMETA or
//!   MEMCHECK issues only when the MLU is idle and blocks its warp until the
//!   operation ends. An operation that needs no memory (MLB hit, tag 0, a
//!   check that fails before the fetch) takes 1 cycle; one with k metadata
//!   reads takes `1 + k * meta_latency`: the MLB lookup, then the reads one
//!   after the other (a traversal's reads depend on each other; the two-word
//!   location-miss fetch is issued the same way by the single-read MLU). Read
//!   j of an operation issued at cycle t takes the port at `t + 1 + j * L`.
//! - k, the hit/miss outcome and every counter are the model's: the pipeline
//!   calls [`Runtime::loadmeta`]/[`Runtime::memcheck_g`] when the operation
//!   issues (so the MLU sees operations in issue order) and takes k from the
//!   `meta_reads` counter.
//! - A kernel ends when every warp has finished and every request has been
//!   answered; kernels run back to back (a launch boundary is a barrier) and
//!   the runtime's mallocs and frees between them take no pipeline cycles.
//!
//! The unchecked baseline runs the same streams with LOADMETA and MEMCHECK
//! removed ([`Checks::None`]); HWONLY code removes LOADMETA only.
//!
//! # Canary allocator unit (MALLOC/FREE, [`run_kernel_alloc`])
//! - The unit is [`CanaryUnit`] (sim::canary::alloc_unit, whose timing equals the
//!   RTL `hw::canary::alloc_unit` cycle for cycle). It has its own memory
//!   port for its canaries (as the RTL unit): MALLOC/FREE never take the SM
//!   memory port, and loads, stores and metadata reads never wait for it.
//!   The unit is clocked every cycle of the kernel (also while no warp uses
//!   it: background checks go on); kernel cycle c is unit cycle u0 + c, u0
//!   = the unit's cycle when the kernel starts (kernels back to back on the
//!   unit's clock: the next kernel's u0 is this one's u0 + its cycles).
//! - Warp w is requester r = w mod R (R = the unit's requesters, 8 in the
//!   RTL). `Malloc { size, dst }` / `Free { src }` issue in cycle t (taking
//!   the issue slot) when requester r has no request unanswered, or its
//!   response comes in cycle t. The request is presented to the unit in
//!   cycle t already (the unit may grant it in t) and held until granted;
//!   FREE's pointer is register `src` as of cycle t (with a response in t
//!   written first).
//! - The warp waits until the response and may issue again in the response
//!   cycle. The response writes back in its cycle: MALLOC's pointer to
//!   register `dst` (0 on an error); FREE writes nothing (its overflow and
//!   errors are counted). A kernel ends no earlier than response cycle + 1
//!   of its last unit operation (and not while a warp waits).
//! - Within a cycle: the unit's response (registered), then the issue
//!   scan, then the unit's arbitration (a due background check first, else
//!   a grant) and clock edge.
//! - `LoadReg`/`StoreReg` are `Load`/`Store` in timing; `StoreReg` also
//!   writes its bytes into the unit's heap at register + off (untagged).
//!
//! # The MLU as an SM unit ([`MluTiming::Unit`])
//! The MLU-operation rule above is replaced by the unit's own cycle model
//! ([`UnitMlu`]: `sim::mlu_unit::MluUnit` with one lane, its walkers and
//! stages from the configuration's `unit` shape), everything else unchanged:
//! - A LOADMETA or MEMCHECK.G issues in cycle t when the unit's `req_ready`
//!   is high in t (it is a registered output); the request (id = the warp,
//!   MEMCHECK's location read from its register in t) is presented in t.
//!   Other warps' MLU operations keep issuing while it waits: the unit is
//!   pipelined and non-blocking.
//! - The warp waits for the response with its id and may issue again in the
//!   response cycle; a LOADMETA's location is written back in that cycle
//!   before the issue scan (a MEMCHECK issued in that cycle reads it).
//! - The unit's metadata read (one 32-byte node) takes the memory port in
//!   the cycle it is presented, before the load/store unit; it is answered
//!   `meta_latency` cycles later from the runtime's memory.
//! - Within a cycle: the unit's outputs, the issue scan, the unit's clock
//!   edge. The unit is clocked every kernel cycle in which it is busy; it is
//!   idle between kernels, where the runtime's INVALIDATEs, FLUSHes and ROOT
//!   writes reach it in order ([`UnitMlu::sync`]); they take no kernel
//!   cycles.
//! - Faults and metadata reads are the unit's (a response with a fault
//!   counts one); the runtime's own MLU is not used for kernel operations.
//!
//! # The device heap (both units, the heap window set: [`UnitMlu::set_heap_window`])
//! The canary unit's heap is registered with the unit MLU (spec section 8,
//! `sim::device_heap`): MALLOC returns a tagged pointer, and the MLU's heap
//! path reads one directory node per lookup. What the pipeline adds:
//! - Directory: the unit MLU's node reads in the directory window are
//!   answered from the canary unit's tables ([`directory_word`]) as they
//!   stand in the read's cycle, before the unit's clock edge. While an
//!   allocator operation is granted and not yet answered (grant cycle
//!   excluded, response cycle excluded) such a read is not taken (the
//!   port's ready is low; the walker retries): the tables are mid-update.
//! - Shoot-down: a successful MALLOC's or FREE's response is held, and the
//!   pipeline sends the MLU the INVALIDATEs the device heap needs
//!   ([`malloc_invalidations`]: the chunk's location, or its page's 8 when
//!   the malloc claimed an empty page; FREE: the chunk's location), one per
//!   cycle from the cycle after the response, each when `req_ready` is
//!   high, with id [`SHOOTDOWN_ID`], taking the MLU's request port from the
//!   warps in that cycle. The response takes effect (write back, the warp
//!   wakes, its requester is free) in the cycle of the last one. So no
//!   warp sees a pointer before the MLB has dropped the chunk's stale entry,
//!   and the INVALIDATE cancels any walk in flight that read the old node.
//! - While a response is held (from its cycle to the delivery's, both
//!   included) the allocator sees no requests: at most one is held.
//! - `LoadMetaReg` / `MemCheckReg` take their pointer from a register (the
//!   RTL's testbench reads it when it fills the slot: a kernel puts an
//!   instruction between a MALLOC and the first use of its pointer).
//!
//! The RTL pipeline (`hw::sm_pipeline`) agrees with this timing cycle for
//! cycle (testbench/tests/sm_pipeline.rs). [`run_kernel`] and
//! [`run_workload`] use [`MluTiming::Ideal`], the rule above.
//!
//! Length: this file is over 800 lines because it is the cycle model of
//! `hw/src/sm_pipeline.rs`, one cycle loop (`run_kernel_alloc`) kept whole so
//! that it reads side by side with the RTL's `update`.
use std::collections::{HashMap, VecDeque};
use std::fmt;

use serde::Serialize;

use crate::canary::alloc_unit::{CanaryUnit, Outcome as UnitOutcome, Request as UnitRequest, Response as UnitResponse, UnitStep};
use crate::canary::heap::Heap;
use crate::device_heap::{directory_word, malloc_invalidations};
use crate::config::{Mode, MluConfig};
use crate::expand::{Instr, Item, Kernel, Workload};
use crate::fault::{Fault, FaultCode, Op};
use crate::memory::{MemError, MetaMemory};
use crate::meta_port::{PortParams, PortSim};
use crate::mlu::{Counters, HeapWindow};
use crate::mlu_unit::{MluUnit, UnitCounters, UnitIn, UnitParams, UnitRequest as MluRequest};
use crate::pointer::{tag, untag, NO_META};
use crate::runtime::{HostOp, Runtime, RuntimeConfig};

/// Pipeline timing parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PipelineConfig {
    /// Cycles from a memory request to its answer (>= 1).
    pub mem_latency: u64,
    /// Cycles from a metadata read to its answer (>= 1).
    pub meta_latency: u64,
    /// Data requests of the load/store unit in flight at most (>= 1).
    pub max_outstanding: usize,
    /// Extension (not in the paper): the host runtime, which knows every
    /// argument's node, passes each pointer argument's metadata location
    /// with the launch, so compiler-mode kernels run no LOADMETA; the first
    /// MEMCHECK of a block fetches its two metadata words by location instead
    /// of walking the structure. COMPILER mode only.
    pub host_locations: bool,
    /// Extension (not in the paper): hit-under-miss MLU. While the traverser
    /// (or a location fetch) waits for memory, MLB hits of other warps are
    /// answered (1 cycle each, one per cycle); an operation that misses, or
    /// that hits the entry being filled, waits for the walk to finish.
    pub hit_under_miss: bool,
}

impl Default for PipelineConfig {
    /// 400 cycles for data and metadata (an H100/H200-class DRAM round trip,
    /// no cache), 64 requests in flight.
    fn default() -> Self {
        PipelineConfig {
            mem_latency: 400,
            meta_latency: 400,
            max_outstanding: 64,
            host_locations: false,
            hit_under_miss: false,
        }
    }
}

impl PipelineConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.mem_latency == 0 || self.mem_latency > 1_000_000 {
            return Err(format!("mem-latency: must be 1..=1000000 cycles, got {}", self.mem_latency));
        }
        if self.meta_latency == 0 || self.meta_latency > 1_000_000 {
            return Err(format!("meta-latency: must be 1..=1000000 cycles, got {}", self.meta_latency));
        }
        if self.max_outstanding == 0 {
            return Err("max-outstanding: must be at least 1".into());
        }
        Ok(())
    }
}

/// Which checks the streams execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checks {
    /// The unchecked baseline: LOADMETA and MEMCHECK removed.
    None,
    /// Compiler pass: LOADMETA per root pointer, MEMCHECK per access.
    Compiler,
    /// HWONLY: MEMCHECK per access only.
    Hwonly,
}

/// How long an MLU operation holds its warp and the MLU, and when its
/// metadata reads take the memory port (L = `meta_latency`, k reads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MluTiming {
    /// The module rule: 1 cycle without memory, `1 + k * L` with k reads,
    /// read j at `t + 1 + j * L`.
    #[default]
    Ideal,
    /// The MLU as an SM unit ([`UnitMlu`]: `sim::mlu_unit::MluUnit`, one
    /// lane, clocked every kernel cycle): see the module doc, "The MLU as
    /// an SM unit". The RTL pipeline (`hw::sm_pipeline`) agrees with it
    /// cycle for cycle. Not defined with `hit_under_miss` or
    /// `host_locations`.
    Unit,
}

impl MluTiming {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            MluTiming::Ideal => "ideal",
            MluTiming::Unit => "unit",
        }
    }
    pub fn from_name(name: &str) -> Option<MluTiming> {
        match name {
            "ideal" => Some(MluTiming::Ideal),
            "unit" => Some(MluTiming::Unit),
            _ => None,
        }
    }
}

/// The MLU as an SM unit behind the pipeline ([`MluTiming::Unit`]): the
/// unit's cycle model, its metadata port (fixed latency `meta_latency`,
/// always ready, no errors but those of the memory), and what each warp's
/// operation in flight writes back. It keeps its MLB across kernels; the
/// runtime's host operations reach it through [`UnitMlu::sync`].
#[derive(Clone, Debug)]
pub struct UnitMlu {
    unit: MluUnit,
    port: PortSim,
    /// Per warp: the register a LOADMETA in flight writes (None: a MEMCHECK).
    wb: Vec<Option<usize>>,
}

impl UnitMlu {
    /// The unit the SM pipelines use for `cfg`: its `unit` shape (walkers,
    /// MLB and check stages; the defaults without one) with one lane.
    pub fn params(cfg: &MluConfig) -> UnitParams {
        let mut p = UnitParams::from_config(cfg).unwrap_or(UnitParams { cfg: cfg.clone(), ..UnitParams::default() });
        p.lanes = 1;
        p.cfg.unit = None;
        p
    }

    pub fn new(cfg: &MluConfig, meta_latency: u64) -> Result<UnitMlu, String> {
        let lat =
            u32::try_from(meta_latency).map_err(|_| format!("meta_latency {meta_latency} does not fit 32 bits"))?;
        let unit = MluUnit::new(&Self::params(cfg)).map_err(|e| e.to_string())?;
        let port =
            PortSim::new(PortParams { min_latency: lat.max(1), max_latency: lat.max(1), ..PortParams::default() });
        Ok(UnitMlu { unit, port, wb: Vec::new() })
    }

    pub fn unit(&self) -> &MluUnit {
        &self.unit
    }

    /// Points the unit's heap path at the canary unit's heap (the HEAP_*
    /// CSRs; module doc, "The device heap"). Between kernels only.
    pub fn set_heap_window(&mut self, w: HeapWindow) {
        self.unit.set_heap_window(w);
    }

    /// Replays the runtime's host operations since the last call (between
    /// kernels, the unit idle): each INVALIDATE and FLUSH as a request run
    /// to its response, each ROOT as a CSR write.
    pub fn sync(&mut self, rt: &mut Runtime) -> Result<(), String> {
        for op in rt.take_host_ops() {
            let (op, loc) = match op {
                HostOp::Root(r) => {
                    self.unit.set_root(r);
                    continue;
                }
                HostOp::Invalidate(loc) => (Op::Invalidate, loc),
                HostOp::Flush => (Op::Flush, 0),
            };
            let req = MluRequest { id: 0, op, mask: 1, ptrs: vec![0], width: 1, loc, sbase: 0, ssize: 0 };
            if !self.unit.outputs().req_ready {
                return Err(format!("{op:?}: the unit is not ready between kernels"));
            }
            let mut inp = UnitIn { req: Some(&req), mem_req_ready: true, mem_resp: None };
            for _ in 0..64 {
                if self.unit.tick(inp)?.resp.is_some() {
                    break;
                }
                inp.req = None;
            }
            if !self.unit.is_idle() {
                return Err(format!("{op:?}: the unit is not idle after its response"));
            }
        }
        Ok(())
    }
}

/// One kernel's run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelRun {
    pub cycles: u64,
    /// Instructions issued (an `Alu(n)` counts n).
    pub issued: u64,
    pub loads: u64,
    pub stores: u64,
    pub mlu_ops: u64,
    /// Metadata reads put on the memory port.
    pub meta_reads: u64,
    pub faults: u64,
    /// The first fault of the kernel, if any (bug-free traces have none).
    pub first_fault: Option<Fault>,
    /// [`MluTiming::Unit`]: every response with a fault, as (kernel cycle of
    /// the response, warp, fault).
    pub fault_log: Vec<(u64, usize, FaultCode)>,
    /// Canary allocator unit (MALLOC/FREE): successful mallocs and frees,
    /// unsuccessful requests, frees that found an overwritten canary,
    /// background checks during the kernel and the ones that found one.
    pub mallocs: u64,
    pub frees: u64,
    pub alloc_errors: u64,
    pub free_overflows: u64,
    pub unit_checks: u64,
    pub check_overflows: u64,
}

/// Runs one kernel. `ptrs[i]` is the tagged base pointer of argument i's
/// block. With `rt` = None the streams run unchecked; otherwise the checks
/// follow the runtime MLU's mode.
pub fn run_kernel(cfg: &PipelineConfig, k: &Kernel, ptrs: &[u64], rt: Option<&mut Runtime>) -> KernelRun {
    run_kernel_with(cfg, MluTiming::Ideal, k, ptrs, rt)
}

/// [`run_kernel`] with the MLU operation timing chosen.
pub fn run_kernel_with(
    cfg: &PipelineConfig,
    timing: MluTiming,
    k: &Kernel,
    ptrs: &[u64],
    rt: Option<&mut Runtime>,
) -> KernelRun {
    run_kernel_alloc(cfg, timing, k, ptrs, rt, None, None)
}

/// [`run_kernel_with`] with the canary allocator unit behind MALLOC/FREE
/// (module doc, "Canary allocator unit"). The unit keeps its state (heap,
/// checker, cycle) across kernels: kernels run back to back on its clock.
/// Panics if the kernel has MALLOC/FREE and `unit` is None, or if `umlu`
/// is given without [`MluTiming::Unit`] or missing with it (caller bugs).
pub fn run_kernel_alloc(
    cfg: &PipelineConfig,
    timing: MluTiming,
    k: &Kernel,
    ptrs: &[u64],
    mut rt: Option<&mut Runtime>,
    mut unit: Option<&mut CanaryUnit>,
    umlu: Option<&mut UnitMlu>,
) -> KernelRun {
    assert!(umlu.is_none() || timing == MluTiming::Unit, "a UnitMlu is for MluTiming::Unit");
    assert!(
        !(timing == MluTiming::Unit && (cfg.hit_under_miss || cfg.host_locations)),
        "MluTiming::Unit builds neither hit_under_miss nor host_locations"
    );
    let checks = match &rt {
        None => Checks::None,
        Some(r) => match r.mode() {
            Mode::Compiler => Checks::Compiler,
            Mode::Hwonly => Checks::Hwonly,
        },
    };
    let mut umlu = if checks == Checks::None { None } else { umlu };
    assert!(timing != MluTiming::Unit || checks == Checks::None || umlu.is_some(), "MluTiming::Unit needs its UnitMlu");
    let lat = cfg.mem_latency;
    let mlat = cfg.meta_latency;
    let n = k.warps.len();
    let nargs = k.args.len();
    let mut run = KernelRun::default();
    if n == 0 {
        return run;
    }
    let mut pc = vec![0usize; n];
    let mut alu_left = vec![0u32; n];
    let mut ready = vec![0u64; n];
    let mut finished = vec![false; n];
    // Warp registers: LOADMETA's locations (one per argument) and MALLOC's
    // pointers share them.
    let mut nregs = nargs;
    for i in k.warps.iter().flatten() {
        let (a, b) = match *i {
            Instr::Malloc { dst: r, .. } | Instr::Free { src: r } | Instr::LoadReg { reg: r, .. } | Instr::StoreReg { reg: r, .. } => (r, r),
            Instr::LoadMetaReg { src, dst } => (src, dst),
            Instr::MemCheckReg { reg, loc, .. } => (reg, loc),
            _ => continue,
        };
        nregs = nregs.max(a.max(b) as usize + 1);
    }
    let has_alloc = k.warps.iter().flatten().any(|i| matches!(i, Instr::Malloc { .. } | Instr::Free { .. }));
    assert!(!has_alloc || unit.is_some(), "a kernel with MALLOC/FREE needs the canary allocator unit");
    let reg_mlu = k.warps.iter().flatten().any(|i| matches!(i, Instr::LoadMetaReg { .. } | Instr::MemCheckReg { .. }));
    assert!(!reg_mlu || checks == Checks::None || umlu.is_some(), "register-pointer LOADMETA/MEMCHECK need MluTiming::Unit");
    // The device heap registered with the unit MLU (its window set): the
    // directory is the canary unit's, and its mallocs and frees shoot down
    // the MLB (module doc, "The device heap").
    let heap_w = match (&umlu, &unit) {
        (Some(m), Some(_)) => Some(m.unit.heap_window()).filter(|w| w.mask != 0),
        _ => None,
    };
    let mut locs = vec![NO_META; n * nregs];
    if let Some(m) = umlu.as_deref_mut() {
        assert!(m.unit.is_idle(), "the unit MLU is idle between kernels");
        m.wb = vec![None; n];
    }
    if checks == Checks::Compiler && cfg.host_locations {
        let r = rt.as_deref().expect("checks need a runtime");
        for (a, arg) in k.args.iter().enumerate() {
            let p = ptrs[a].wrapping_add(arg.offset);
            let loc = if tag(p) == 0 { 0 } else { r.node_of(p).unwrap_or(NO_META) };
            for w in 0..n {
                locs[w * nregs + a] = loc;
            }
        }
    }
    // Hit-under-miss: when the walker is free, and the MLB way its fill went to.
    let mut walker_free = 0u64;
    let mut walk_way: Option<usize> = None;
    let mut alive = n;
    // Answer times of the data requests in flight (fixed latency: FIFO order).
    let mut inflight: VecDeque<u64> = VecDeque::new();
    // Future cycles in which an MLU metadata read holds the port (increasing).
    let mut claims: VecDeque<u64> = VecDeque::new();
    let mut mlu_free = 0u64;
    let mut end = 0u64;
    let mut now = 0u64;
    let mut rr = n - 1;
    // The unit: its cycle at the kernel's cycle 0, per requester the request
    // presented and not yet granted, and the (warp, register) of the request
    // not yet answered.
    let u0 = unit.as_ref().map_or(0, |u| u.cycle());
    let nreq = unit.as_ref().map_or(1, |u| u.requesters());
    let mut posted: Vec<Option<UnitRequest>> = vec![None; nreq];
    let mut owner: Vec<Option<(usize, usize)>> = vec![None; nreq];
    let mut unit_end = 0u64;
    // An allocator operation granted and not yet answered (the directory
    // may be mid-update: node reads in its window wait), and a response held
    // for its INVALIDATEs (locations still to send).
    let mut op_granted = false;
    let mut held: Option<(UnitResponse, VecDeque<u64>)> = None;
    let no_requests: Vec<Option<UnitRequest>> = vec![None; nreq];
    let enabled = |i: &Instr| match i {
        Instr::LoadMeta { .. } | Instr::LoadMetaReg { .. } => checks == Checks::Compiler && !cfg.host_locations,
        Instr::MemCheck { .. } | Instr::MemCheckReg { .. } => checks != Checks::None,
        _ => true,
    };
    while alive > 0 {
        if let Some(u) = unit.as_deref_mut() {
            // Idle cycles skipped since the last processed one (no request
            // is outstanding then, see below).
            while u.cycle() < u0 + now {
                let o = u.step(&posted);
                debug_assert!(o.grant.is_none() && o.resp.is_none());
                count_check(&mut run, &o);
            }
            // Warps that are done finish before this cycle's unit step, so
            // the unit is clocked for the kernel's cycles only.
            for w in 0..n {
                if finished[w] || ready[w] > now {
                    continue;
                }
                let s = &k.warps[w];
                while pc[w] < s.len() && !enabled(&s[pc[w]]) {
                    pc[w] += 1;
                }
                if pc[w] >= s.len() {
                    finished[w] = true;
                    alive -= 1;
                    end = end.max(ready[w]);
                }
            }
            if alive == 0 {
                break;
            }
        }
        // The unit MLU's outputs (registered).
        let uout = umlu.as_deref().map(|m| m.unit.outputs());
        let mut ureq: Option<MluRequest> = None;
        // Allocator requests are hidden from the unit while a response is
        // held (so at most one is), from the cycle it comes.
        let mut hide_requests = held.is_some();
        if let Some((r, left)) = held.as_mut() {
            // The held response's next INVALIDATE takes the MLU's request
            // port when the unit is ready; with the last, the response is
            // delivered (its warp may issue in this cycle).
            if uout.as_ref().is_some_and(|o| o.req_ready) {
                let loc = left.pop_front().expect("a held response has INVALIDATEs left");
                ureq = Some(MluRequest { id: SHOOTDOWN_ID, op: Op::Invalidate, mask: 1, ptrs: vec![0], width: 1, loc, sbase: 0, ssize: 0 });
                if left.is_empty() {
                    let r = r.clone();
                    held = None;
                    deliver(&r, now, &mut owner, &mut ready, &mut locs, nregs, &mut run, &mut unit_end);
                }
            }
        }
        if let Some(u) = unit.as_deref_mut() {
            // The response (registered) comes first: its warp may issue again
            // in this cycle, its requester take a new request. With the heap
            // registered, a successful one is held for its INVALIDATEs.
            let o = u.begin_cycle();
            count_check(&mut run, &o);
            if let Some(r) = o.resp {
                op_granted = false;
                let shoot = heap_w.and_then(|w| match &r.outcome {
                    UnitOutcome::Malloc(Ok(a)) => Some(malloc_invalidations(u.heap(), w, a.chunk)),
                    UnitOutcome::Free(Ok(f)) => Some(vec![w.node_of(f.chunk)]),
                    _ => None,
                });
                match shoot {
                    Some(v) => {
                        held = Some((r, v.into()));
                        hide_requests = true;
                    }
                    None => deliver(&r, now, &mut owner, &mut ready, &mut locs, nregs, &mut run, &mut unit_end),
                }
            }
        }
        // The unit MLU's response wakes its warp (which may issue in this
        // cycle, with a LOADMETA's location written first); an INVALIDATE's
        // is no warp's. Its metadata read takes the port before the
        // load/store unit.
        let uresp = uout.as_ref().and_then(|o| o.resp.as_ref());
        debug_assert!(uresp.is_none_or(|r| r.id != SHOOTDOWN_ID || r.fault == FaultCode::None), "an INVALIDATE faulted");
        if let (Some(m), Some(r)) = (umlu.as_deref_mut(), uresp.filter(|r| r.id != SHOOTDOWN_ID)) {
            let w = r.id as usize;
            ready[w] = now;
            if let Some(reg) = m.wb[w].take() {
                locs[w * nregs + reg] = r.loc;
            }
            if r.fault != FaultCode::None {
                run.faults += 1;
                run.fault_log.push((now, w, r.fault));
                run.first_fault.get_or_insert(Fault {
                    code: r.fault,
                    op: r.op,
                    ptr: r.addrs[0],
                    alloc: r.meta,
                    distance: None,
                });
            }
        }
        while inflight.front().is_some_and(|&t| t <= now) {
            inflight.pop_front();
        }
        while claims.front().is_some_and(|&t| t < now) {
            claims.pop_front();
        }
        let port_free = claims.front() != Some(&now) && uout.as_ref().is_none_or(|o| o.mem_req.is_none());
        let mut issued = false;
        for i in 1..=n {
            let w = (rr + i) % n;
            if finished[w] || ready[w] > now {
                continue;
            }
            let s = &k.warps[w];
            while pc[w] < s.len() && !enabled(&s[pc[w]]) {
                pc[w] += 1;
            }
            if pc[w] >= s.len() {
                finished[w] = true;
                alive -= 1;
                end = end.max(ready[w]);
                continue;
            }
            match s[pc[w]] {
                Instr::Alu(c) => {
                    if alu_left[w] == 0 {
                        alu_left[w] = c;
                    }
                    alu_left[w] -= 1;
                    if alu_left[w] == 0 {
                        pc[w] += 1;
                    }
                    ready[w] = now + 1;
                }
                Instr::LoadMeta { .. } | Instr::MemCheck { .. } | Instr::LoadMetaReg { .. } | Instr::MemCheckReg { .. }
                    if umlu.is_some() =>
                {
                    if ureq.is_some() || !uout.as_ref().is_some_and(|o| o.req_ready) {
                        continue;
                    }
                    let reg = |r: u32| locs[w * nregs + r as usize];
                    // (op, pointer, width, location operand's register, register written)
                    let (op, p, width, lr, wb) = match s[pc[w]] {
                        Instr::LoadMeta { arg } => {
                            let a = arg as usize;
                            (Op::LoadMeta, ptrs[a].wrapping_add(k.args[a].offset), 1, a, Some(a))
                        }
                        Instr::MemCheck { arg, off, width } => {
                            (Op::MemcheckG, ptrs[arg as usize].wrapping_add(off), width as u32, arg as usize, None)
                        }
                        Instr::LoadMetaReg { src, dst } => (Op::LoadMeta, reg(src), 1, dst as usize, Some(dst as usize)),
                        Instr::MemCheckReg { reg: r, loc, off, width } => {
                            (Op::MemcheckG, reg(r).wrapping_add(off), width as u32, loc as usize, None)
                        }
                        _ => unreachable!(),
                    };
                    let loc = locs[w * nregs + lr];
                    ureq =
                        Some(MluRequest { id: w as u32, op, mask: 1, ptrs: vec![p], width, loc, sbase: 0, ssize: 0 });
                    umlu.as_deref_mut().expect("checked above").wb[w] = wb;
                    ready[w] = u64::MAX;
                    run.mlu_ops += 1;
                    pc[w] += 1;
                }
                Instr::LoadMetaReg { .. } | Instr::MemCheckReg { .. } => unreachable!("asserted: needs the unit MLU"),
                Instr::LoadMeta { arg } | Instr::MemCheck { arg, .. } => {
                    if mlu_free > now {
                        continue;
                    }
                    let rt = rt.as_deref_mut().expect("checks need a runtime");
                    let slot = w * nregs + arg as usize;
                    let base = ptrs[arg as usize];
                    if cfg.hit_under_miss && walker_free > now {
                        // The walker is busy: only a hit on another entry may go.
                        let mlb = rt.mlu().mlb();
                        let way = match s[pc[w]] {
                            Instr::LoadMeta { .. } => {
                                let p = base.wrapping_add(k.args[arg as usize].offset);
                                if tag(p) == 0 { Some(usize::MAX) } else { mlb.search_range(untag(p)) }
                            }
                            Instr::MemCheck { off, .. } => {
                                let p = base.wrapping_add(off);
                                let loc = locs[slot];
                                if tag(p) == 0 || (checks == Checks::Compiler && (loc == 0 || loc == NO_META)) {
                                    Some(usize::MAX)
                                } else if checks == Checks::Compiler {
                                    mlb.search_location(loc)
                                } else {
                                    mlb.search_range(untag(p))
                                }
                            }
                            _ => unreachable!(),
                        };
                        if way.is_none() || way == walk_way {
                            continue;
                        }
                    }
                    let before = *rt.counters();
                    match s[pc[w]] {
                        Instr::LoadMeta { .. } => {
                            let off = k.args[arg as usize].offset;
                            locs[slot] = rt.loadmeta(base.wrapping_add(off)).unwrap_or_else(|f| {
                                run.first_fault.get_or_insert(f);
                                NO_META
                            });
                        }
                        Instr::MemCheck { off, width, .. } => {
                            if let Err(f) = rt.memcheck_g(base.wrapping_add(off), width as u32, locs[slot]) {
                                run.first_fault.get_or_insert(f);
                            }
                        }
                        _ => unreachable!(),
                    }
                    let after = rt.counters();
                    let reads = after.meta_reads - before.meta_reads;
                    run.faults += after.faults - before.faults;
                    run.meta_reads += reads;
                    run.mlu_ops += 1;
                    let (first, stride, dur) = (1, mlat, 1 + reads * mlat);
                    for j in 0..reads {
                        claims.push_back(now + first + j * stride);
                    }
                    ready[w] = now + dur;
                    if cfg.hit_under_miss {
                        // The lookup port is busy for this cycle only; a walk
                        // holds the walker.
                        mlu_free = now + 1;
                        if reads > 0 {
                            walker_free = ready[w];
                            let mlb = rt.mlu().mlb();
                            walk_way = match s[pc[w]] {
                                Instr::LoadMeta { .. } => {
                                    mlb.search_range(untag(base.wrapping_add(k.args[arg as usize].offset)))
                                }
                                Instr::MemCheck { .. } if checks == Checks::Compiler => {
                                    mlb.search_location(locs[slot])
                                }
                                Instr::MemCheck { off, .. } => mlb.search_range(untag(base.wrapping_add(off))),
                                _ => None,
                            };
                        }
                    } else {
                        mlu_free = ready[w];
                    }
                    pc[w] += 1;
                }
                Instr::Malloc { .. } | Instr::Free { .. } => {
                    let r = w % nreq;
                    if owner[r].is_some() {
                        continue;
                    }
                    let (req, reg) = match s[pc[w]] {
                        Instr::Malloc { size, dst } => (UnitRequest { free: false, arg: size }, dst as usize),
                        Instr::Free { src } => (UnitRequest { free: true, arg: locs[w * nregs + src as usize] }, src as usize),
                        _ => unreachable!(),
                    };
                    posted[r] = Some(req);
                    owner[r] = Some((w, reg));
                    ready[w] = u64::MAX;
                    pc[w] += 1;
                }
                Instr::Load { .. } | Instr::Store { .. } | Instr::LoadReg { .. } | Instr::StoreReg { .. } => {
                    if !port_free || inflight.len() >= cfg.max_outstanding {
                        continue;
                    }
                    inflight.push_back(now + lat);
                    if let (Instr::StoreReg { reg, off, width }, Some(u)) = (s[pc[w]], unit.as_deref_mut()) {
                        let a = untag(locs[w * nregs + reg as usize]).wrapping_add(off);
                        // Only the bytes inside the heap are written (a store
                        // elsewhere is outside the unit's memory).
                        let _ = u.write(a, &vec![0x5a; width as usize]);
                    }
                    if matches!(s[pc[w]], Instr::Load { .. } | Instr::LoadReg { .. }) {
                        run.loads += 1;
                        ready[w] = now + lat;
                    } else {
                        run.stores += 1;
                        ready[w] = now + 1;
                    }
                    pc[w] += 1;
                }
            }
            run.issued += 1;
            issued = true;
            rr = w;
            break;
        }
        if let (Some(m), Some(o)) = (umlu.as_deref_mut(), uout.as_ref()) {
            // Node reads see the allocator's directory before its clock edge;
            // one in the directory window waits while an operation is
            // granted and not answered (its tables are mid-update).
            let dir = heap_w.zip(unit.as_deref().map(CanaryUnit::heap));
            let held_back =
                op_granted && dir.is_some_and(|(w, _)| o.mem_req.as_ref().is_some_and(|q| w.in_directory(q.addr)));
            let mem = DirectoryView { mem: rt.as_deref().expect("checks need a runtime").meta_memory(), dir };
            let req = if held_back { None } else { o.mem_req.as_ref() };
            let (taken, resp) = m.port.cycle(&mem, req);
            let taken = taken && !held_back;
            run.meta_reads += (taken && o.mem_req.is_some()) as u64;
            let inp = UnitIn { req: ureq.as_ref(), mem_req_ready: taken, mem_resp: resp };
            if let Err(e) = m.unit.tick(inp) {
                panic!("the unit MLU's metadata port broke its protocol: {e}");
            }
        }
        if let Some(u) = unit.as_deref_mut() {
            if let Some(r) = u.end_cycle(if hide_requests { &no_requests } else { &posted }) {
                posted[r] = None;
                op_granted = true;
            }
        }
        if issued {
            now += 1;
            continue;
        }
        // Nothing could issue: jump to the next cycle at which something changes.
        let mut next = u64::MAX;
        for w in 0..n {
            if !finished[w] && ready[w] > now {
                next = next.min(ready[w]);
            }
        }
        if mlu_free > now {
            next = next.min(mlu_free);
        }
        if walker_free > now {
            next = next.min(walker_free);
        }
        if let Some(&t) = inflight.front() {
            next = next.min(t);
        }
        if claims.front() == Some(&now) {
            next = next.min(now + 1);
        }
        if umlu.as_ref().is_some_and(|m| !m.unit.is_idle() || m.port.outstanding() > 0) {
            // The unit MLU is busy: it is clocked cycle by cycle.
            next = now + 1;
        }
        if owner.iter().any(|o| o.is_some()) {
            // A request is outstanding: the unit answers in its own time.
            next = now + 1;
        }
        now = if next == u64::MAX || next <= now { now + 1 } else { next };
    }
    end = end.max(mlu_free).max(walker_free).max(unit_end);
    if let Some(&t) = inflight.back() {
        end = end.max(t);
    }
    run.cycles = end;
    if let Some(m) = umlu {
        // The device heap's last INVALIDATEs may still be in the unit's
        // pipeline (their responses wake no warp; no walk is in flight: every
        // warp had its answer). The RTL's unit finishes them in the cycles
        // before the next kernel, which cannot see them.
        for _ in 0..64 {
            if m.unit.is_idle() {
                break;
            }
            let o = m.unit.outputs();
            assert!(o.mem_req.is_none() && m.port.outstanding() == 0, "a node read after the kernel's end");
            let inp = UnitIn { req: None, mem_req_ready: true, mem_resp: None };
            m.unit.tick(inp).expect("no metadata port traffic");
        }
    }
    if let Some(u) = unit.as_deref_mut() {
        while u.cycle() < u0 + end {
            let o = u.step(&posted);
            count_check(&mut run, &o);
        }
    }
    run
}

/// The id of the INVALIDATEs the pipeline sends for the device heap (no
/// warp's: responses with it wake nobody).
pub const SHOOTDOWN_ID: u32 = 0xFFFF;

/// An allocator response takes effect: its warp wakes, MALLOC's pointer (0
/// on an error) is written to its register, the outcome counted.
#[allow(clippy::too_many_arguments)] // the cycle loop's state, passed as it is
fn deliver(
    r: &UnitResponse,
    now: u64,
    owner: &mut [Option<(usize, usize)>],
    ready: &mut [u64],
    locs: &mut [u64],
    nregs: usize,
    run: &mut KernelRun,
    unit_end: &mut u64,
) {
    let (w, reg) = owner[r.id].take().expect("a response to an outstanding request");
    ready[w] = now;
    // A kernel ends no earlier than its last response + 1.
    *unit_end = (*unit_end).max(now + 1);
    match &r.outcome {
        UnitOutcome::Malloc(Ok(a)) => {
            run.mallocs += 1;
            locs[w * nregs + reg] = a.ptr;
        }
        UnitOutcome::Malloc(Err(_)) => {
            run.alloc_errors += 1;
            locs[w * nregs + reg] = 0;
        }
        UnitOutcome::Free(Ok(f)) => {
            run.frees += 1;
            run.free_overflows += f.overflow.is_some() as u64;
        }
        UnitOutcome::Free(Err(_)) => run.alloc_errors += 1,
    }
}

/// The unit MLU's memory: the canary unit's directory in its window, the
/// runtime's memory elsewhere.
struct DirectoryView<'a, M: MetaMemory> {
    mem: M,
    dir: Option<(HeapWindow, &'a Heap)>,
}

impl<M: MetaMemory> MetaMemory for DirectoryView<'_, M> {
    fn read_word(&self, addr: u64) -> Result<u64, MemError> {
        match self.dir.and_then(|(w, h)| directory_word(h, w, addr)) {
            Some(r) => r,
            None => self.mem.read_word(addr),
        }
    }
    fn sol_lookup(&self, a: u64) -> Option<u64> {
        self.mem.sol_lookup(a)
    }
}

fn count_check(run: &mut KernelRun, o: &UnitStep) {
    if let Some(c) = &o.check {
        run.unit_checks += 1;
        run.check_overflows += (c.front || c.rear) as u64;
    }
}

/// A workload's run through the pipeline.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WorkloadRun {
    pub cycles: u64,
    pub kernels: u64,
    pub issued: u64,
    pub loads: u64,
    pub stores: u64,
    pub mlu_ops: u64,
    pub meta_reads: u64,
    pub faults: u64,
    /// The MLU's counters at the end (zero for the unchecked run and for
    /// [`MluTiming::Unit`], whose counters are `unit`).
    #[serde(skip)]
    pub counters: Counters,
    /// [`MluTiming::Unit`]: the unit's counters at the end.
    #[serde(skip)]
    pub unit: Option<UnitCounters>,
    /// Cycles of every kernel, in trace order.
    #[serde(skip)]
    pub kernel_cycles: Vec<u64>,
    /// The first fault, as text (bug-free traces have none).
    pub first_fault: Option<String>,
}

/// A replay that cannot continue: the runtime refused the trace's malloc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayError {
    pub file: String,
    pub line: u64,
    pub message: String,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for ReplayError {}

/// Replays a workload: allocs and frees through a [`Runtime`] configured
/// with `mlu` (trace bases used as given; a free INVALIDATEs), every kernel
/// through [`run_kernel`]. `mlu` = None runs the unchecked baseline (blocks
/// get their untagged bases; no MLU).
pub fn run_workload(
    wl: &Workload,
    cfg: &PipelineConfig,
    mlu: Option<&MluConfig>,
    seed: u64,
) -> Result<WorkloadRun, ReplayError> {
    run_workload_with(wl, cfg, MluTiming::Ideal, mlu, seed)
}

/// [`run_workload`] with the MLU operation timing chosen.
pub fn run_workload_with(
    wl: &Workload,
    cfg: &PipelineConfig,
    timing: MluTiming,
    mlu: Option<&MluConfig>,
    seed: u64,
) -> Result<WorkloadRun, ReplayError> {
    let err = |line: u64, message: String| ReplayError { file: wl.file.clone(), line, message };
    let mut rt = match mlu {
        Some(m) => Some(
            Runtime::new(RuntimeConfig { mlu: m.clone(), seed, ..RuntimeConfig::default() })
                .map_err(|e| err(0, format!("MLU configuration: {e}")))?,
        ),
        None => None,
    };
    let mut umlu = match (timing, mlu) {
        (MluTiming::Unit, Some(m)) => {
            Some(UnitMlu::new(m, cfg.meta_latency).map_err(|e| err(0, format!("unit MLU: {e}")))?)
        }
        _ => None,
    };
    let mut ptr_of: HashMap<u64, u64> = HashMap::new();
    let mut out = WorkloadRun::default();
    let mut ptrs = Vec::new();
    for item in &wl.items {
        match item {
            Item::Alloc { id, base, size, line } => {
                let p = match rt.as_mut() {
                    Some(r) => r.malloc(*size, Some(*base)).map_err(|e| err(*line, format!("alloc id {id}: {e}")))?,
                    None => *base,
                };
                ptr_of.insert(*id, p);
            }
            Item::Free { id, line } => {
                let p = ptr_of.remove(id).ok_or_else(|| err(*line, format!("free of unknown id {id}")))?;
                if let Some(r) = rt.as_mut() {
                    r.free(p).map_err(|e| err(*line, format!("free id {id}: {e}")))?;
                }
            }
            Item::Kernel { kernel, line } => {
                ptrs.clear();
                for a in &kernel.args {
                    ptrs.push(*ptr_of.get(&a.id).ok_or_else(|| err(*line, format!("kernel uses unknown id {}", a.id)))?);
                }
                if let (Some(m), Some(r)) = (umlu.as_mut(), rt.as_mut()) {
                    m.sync(r).map_err(|e| err(*line, format!("unit MLU: {e}")))?;
                }
                let r = run_kernel_alloc(cfg, timing, kernel, &ptrs, rt.as_mut(), None, umlu.as_mut());
                out.cycles += r.cycles;
                out.kernels += 1;
                out.issued += r.issued;
                out.loads += r.loads;
                out.stores += r.stores;
                out.mlu_ops += r.mlu_ops;
                out.meta_reads += r.meta_reads;
                out.faults += r.faults;
                out.kernel_cycles.push(r.cycles);
                if out.first_fault.is_none() {
                    if let Some(f) = r.first_fault {
                        out.first_fault = Some(format!("line {line} ({}): {f:?}", kernel.op));
                    }
                }
            }
        }
    }
    if let Some(r) = rt.as_ref() {
        out.counters = *r.counters();
    }
    out.unit = umlu.map(|m| *m.unit.counters());
    Ok(out)
}
