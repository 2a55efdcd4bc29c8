//! Drivers for the canary allocator unit (`hw::canary::alloc_unit`): an
//! event log that any simulator of the RTL produces ([`Event`]), its replay
//! against the golden model (`sim::canary::heap::Heap`, [`ModelReplay`]), the
//! rust-hdl simulation driver ([`CanarySim`], with the memory the canaries
//! live in) and a random workload of several requesters ([`Workload`]).
//!
//! Ordering: the unit serves one request at a time, so a grant's response
//! comes before the next grant, and the model applies operations in grant
//! order. Program stores into the heap (overflow injection) are made only in
//! a cycle in which the unit reports a response or a check (it is then
//! idle, and the next operation's memory reads come at least two cycles
//! later), so the model, applying the log in order, sees the memory the RTL
//! saw.
use hw::canary::alloc_unit::{
    AllocUnit, CanaryParams, HEAP_BYTES, REQUESTERS, RES_DOUBLE_FREE, RES_EXHAUSTED, RES_NOT_A_CHUNK, RES_OK,
    RES_OUTSIDE_HEAP, RES_TOO_LARGE, RES_ZERO_SIZE,
};
use rust_hdl::prelude::*;
use sim::runtime::SplitMix64;
use sim::canary::heap::{AllocError, FreeError, Heap};
use sim::canary::siphash::CanaryKey;
use sim::pointer::untag;
use crate::harness::{portvec_cpp, CycleSim};
use crate::verilator::{build, BuildSpec, Layout, PortSlot, Top};
use std::collections::{BTreeMap, VecDeque};

/// What the unit did, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Grant { id: usize, free: bool, arg: u64 },
    Resp(Resp),
    Check(Check),
    /// A program store into the heap (not through the unit).
    Store { addr: u64, bytes: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resp {
    pub id: usize,
    pub free: bool,
    pub code: u64,
    /// malloc: pointer; free: chunk.
    pub ptr: u64,
    /// free: requested size.
    pub size: u64,
    pub front: bool,
    pub rear: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub chunk: u64,
    pub front: bool,
    pub rear: bool,
}

/// Counts of what a replay saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayStats {
    pub mallocs_ok: u64,
    pub frees_ok: u64,
    /// Result codes seen, by code.
    pub codes: [u64; 7],
    pub free_overflows: u64,
    pub checks: u64,
    pub check_overflows: u64,
    pub stores: u64,
    /// RTL cycles from grant to response, summed over successful mallocs
    /// and frees (measured by [`run_workload`]).
    pub rtl_malloc_cycles: u64,
    pub rtl_free_cycles: u64,
    /// Directory samples compared with the model, and how many found a chunk.
    pub dir_compares: u64,
    pub dir_hits: u64,
}

impl ReplayStats {
    /// Mean RTL cycles (grant to response) of a successful malloc and free.
    pub fn mean_rtl_cycles(&self) -> (f64, f64) {
        (self.rtl_malloc_cycles as f64 / self.mallocs_ok.max(1) as f64, self.rtl_free_cycles as f64 / self.frees_ok.max(1) as f64)
    }
}

/// The golden model fed with the RTL's event log.
pub struct ModelReplay {
    pub heap: Heap,
    pending: Option<(usize, bool, u64)>,
    pub stats: ReplayStats,
    pub events: u64,
}

impl ModelReplay {
    pub fn new(params: &CanaryParams, key: CanaryKey, rate: u8) -> Result<Self, String> {
        Ok(ModelReplay {
            heap: Heap::new(params.heap_config(key, rate))?,
            pending: None,
            stats: ReplayStats::default(),
            events: 0,
        })
    }

    /// Apply one event; Err describes the first mismatch.
    pub fn apply(&mut self, ev: &Event) -> Result<(), String> {
        self.events += 1;
        let n = self.events;
        match ev {
            Event::Grant { id, free, arg } => {
                if let Some(p) = self.pending {
                    return Err(format!("event {n}: grant to {id} while {p:?} has no response"));
                }
                self.pending = Some((*id, *free, *arg));
            }
            Event::Resp(r) => {
                let Some((id, free, arg)) = self.pending.take() else {
                    return Err(format!("event {n}: response {r:?} without a grant"));
                };
                let want = if free {
                    match self.heap.free(arg) {
                        Ok(f) => {
                            let (front, rear) = f.overflow.map(|o| (o.front, o.rear)).unwrap_or((false, false));
                            Resp { id, free, code: RES_OK, ptr: f.chunk, size: f.size, front, rear }
                        }
                        Err(e) => {
                            let code = match e {
                                FreeError::OutsideHeap { .. } => RES_OUTSIDE_HEAP,
                                FreeError::NotAChunk { .. } => RES_NOT_A_CHUNK,
                                FreeError::DoubleFree { .. } => RES_DOUBLE_FREE,
                            };
                            Resp { id, free, code, ptr: 0, size: 0, front: false, rear: false }
                        }
                    }
                } else {
                    match self.heap.malloc(arg, id as u64) {
                        Ok(a) => Resp { id, free, code: RES_OK, ptr: a.ptr, size: 0, front: false, rear: false },
                        Err(e) => {
                            let code = match e {
                                AllocError::ZeroSize => RES_ZERO_SIZE,
                                AllocError::TooLarge { .. } => RES_TOO_LARGE,
                                AllocError::Exhausted { .. } => RES_EXHAUSTED,
                            };
                            Resp { id, free, code, ptr: 0, size: 0, front: false, rear: false }
                        }
                    }
                };
                // The size field is defined for successful frees only.
                let mut got = r.clone();
                if !(free && r.code == RES_OK) {
                    got.size = 0;
                }
                if got != want {
                    return Err(format!(
                        "event {n}: {} {arg:#x} from {id}: RTL {got:?}, model {want:?}",
                        if free { "free" } else { "malloc" }
                    ));
                }
                self.stats.codes[r.code.min(6) as usize] += 1;
                if r.code == RES_OK {
                    if free {
                        self.stats.frees_ok += 1;
                        self.stats.free_overflows += (r.front || r.rear) as u64;
                    } else {
                        self.stats.mallocs_ok += 1;
                    }
                }
                self.heap.check_invariants().map_err(|e| format!("event {n}: model invariant: {e}"))?;
            }
            Event::Check(c) => {
                let ck = self.heap.checker();
                if ck.is_empty() {
                    return Err(format!("event {n}: RTL check of {:#x} with the model's list empty", c.chunk));
                }
                let at = if ck.cursor() >= ck.len() { 0 } else { ck.cursor() };
                let cfg = self.heap.config();
                let want_chunk = cfg.base + ck.entries()[at] as u64 * cfg.classes[0];
                let (found, _) = self.heap.checker_run(1);
                let (front, rear) = found.first().map(|o| (o.front, o.rear)).unwrap_or((false, false));
                let want = Check { chunk: want_chunk, front, rear };
                if *c != want {
                    return Err(format!("event {n}: background check: RTL {c:?}, model {want:?}"));
                }
                self.stats.checks += 1;
                self.stats.check_overflows += (front || rear) as u64;
            }
            Event::Store { addr, bytes } => {
                self.heap.write(*addr, bytes)?;
                self.stats.stores += 1;
            }
        }
        Ok(())
    }
}

/// A simulator of the unit: the rust-hdl model ([`CanarySim`]) or the
/// emitted Verilog under Verilator ([`CanaryVerilator`]).
pub trait CanaryDut {
    /// One clock cycle with requester i presenting `reqs[i]` = (free, arg).
    fn step(&mut self, reqs: &[Option<(bool, u64)>; REQUESTERS]) -> Result<StepOut, String>;
    /// A program store into the heap memory (the caller logs it).
    fn store(&mut self, addr: u64, bytes: &[u8]);
}

/// The heap memory the unit's canary port reads and writes (reads answered
/// after `latency` cycles, in order).
pub struct HeapMem {
    mem: Vec<u8>,
    base: u64,
    reads: VecDeque<(u64, u64)>,
    latency: u64,
}

impl HeapMem {
    pub fn new(base: u64, latency: u64) -> Self {
        HeapMem { mem: vec![0; HEAP_BYTES as usize + 8], base, reads: VecDeque::new(), latency: latency.max(1) }
    }
    pub fn store(&mut self, addr: u64, bytes: &[u8]) {
        let o = (addr - self.base) as usize;
        self.mem[o..o + bytes.len()].copy_from_slice(bytes);
    }
    /// The read response to present in `cycle`, if one is due.
    pub fn response(&mut self, cycle: u64) -> Option<u64> {
        let &(due, addr) = self.reads.front()?;
        if due > cycle {
            return None;
        }
        self.reads.pop_front();
        let o = (addr - self.base) as usize;
        Some(u64::from_le_bytes(self.mem[o..o + 8].try_into().expect("8 bytes")))
    }
    /// A request seen in `cycle`.
    pub fn request(&mut self, cycle: u64, we: bool, addr: u64, wdata: u64) -> Result<(), String> {
        if addr < self.base || addr + 8 > self.base + HEAP_BYTES {
            return Err(format!("cycle {cycle}: memory access at {addr:#x} outside the heap"));
        }
        if we {
            self.store(addr, &wdata.to_le_bytes());
        } else {
            self.reads.push_back((cycle + self.latency, addr));
        }
        Ok(())
    }
}

/// One cycle's observations.
#[derive(Clone, Debug, Default)]
pub struct StepOut {
    pub grant: Option<usize>,
    pub resp: Option<Resp>,
    pub check: Option<Check>,
    /// The directory port this cycle (`dir_g` = [`dir_granule`]).
    pub dir: DirSample,
}

/// What the unit's directory port answered for granule `g`: a chunk (its
/// first granule), its requested size and tag (FREED after free), or none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirSample {
    pub g: u64,
    pub hit: bool,
    pub chunk_g: u64,
    pub size: u64,
    pub tag: u64,
}

/// The granule the drivers look up in cycle `cycle`: every granule in turn,
/// in a stride that is odd, so all 128 come round every 128 cycles.
pub fn dir_granule(cycle: u64) -> u64 {
    (cycle * 53 + 7) % 128
}

impl DirSample {
    /// The golden heap's answer for granule `g` (sim::canary::heap::Heap::directory).
    pub fn model(heap: &Heap, g: u64) -> DirSample {
        let base = heap.config().base;
        match heap.directory(base + 32 * g) {
            Some(d) => DirSample { g, hit: true, chunk_g: (d.chunk - base) / 32, size: d.size, tag: d.tag as u64 },
            None => DirSample { g, ..DirSample::default() },
        }
    }
}

/// The unit in rust-hdl simulation, driven by hand, with its heap memory.
pub struct CanarySim {
    pub uut: Box<AllocUnit>,
    mem: HeapMem,
    pub cycle: u64,
}

impl CanarySim {
    pub fn new(params: &CanaryParams, key: CanaryKey, rate: u8, latency: u64) -> Result<Self, String> {
        let mut uut = Box::new(AllocUnit::new(params)?);
        uut.connect_all();
        let mut s = CanarySim { uut, mem: HeapMem::new(params.base, latency), cycle: 0 };
        s.uut.reset.next = true;
        s.uut.key_we.next = true;
        s.uut.key_k0.next = key.k0.into();
        s.uut.key_k1.next = key.k1.into();
        s.uut.rate.next = (rate as u64).into();
        s.step(&[None; REQUESTERS])?;
        s.uut.reset.next = false;
        s.uut.key_we.next = false;
        Ok(s)
    }

    fn settle(&mut self) {
        assert!(simulate(&mut *self.uut, 200), "AllocUnit did not settle");
    }
}

impl CanaryDut for CanarySim {
    fn store(&mut self, addr: u64, bytes: &[u8]) {
        self.mem.store(addr, bytes);
    }

    fn step(&mut self, reqs: &[Option<(bool, u64)>; REQUESTERS]) -> Result<StepOut, String> {
        for (i, r) in reqs.iter().enumerate() {
            self.uut.req_valid[i].next = r.is_some();
            self.uut.req_free[i].next = r.map(|r| r.0).unwrap_or(false);
            self.uut.req_arg[i].next = r.map(|r| r.1).unwrap_or(0).into();
        }
        let rd = self.mem.response(self.cycle);
        self.uut.mem_rvalid.next = rd.is_some();
        self.uut.mem_rdata.next = rd.unwrap_or(0).into();
        let g = dir_granule(self.cycle);
        self.uut.dir_g.next = g.into();
        self.settle();
        let mut out = StepOut::default();
        out.dir = DirSample {
            g,
            hit: self.uut.dir_hit.val(),
            chunk_g: self.uut.dir_chunk.val().to_u64(),
            size: self.uut.dir_size.val().to_u64(),
            tag: self.uut.dir_tag.val().to_u64(),
        };
        for i in 0..REQUESTERS {
            if self.uut.req_grant[i].val() {
                if out.grant.is_some() {
                    return Err(format!("cycle {}: two grants in one cycle", self.cycle));
                }
                out.grant = Some(i);
            }
        }
        if self.uut.mem_valid.val() {
            self.mem.request(self.cycle, self.uut.mem_we.val(), self.uut.mem_addr.val().to_u64(), self.uut.mem_wdata.val().to_u64())?;
        }
        if self.uut.resp_valid.val() {
            out.resp = Some(Resp {
                id: self.uut.resp_id.val().index(),
                free: self.uut.resp_free.val(),
                code: self.uut.resp_code.val().to_u64(),
                ptr: self.uut.resp_ptr.val().to_u64(),
                size: self.uut.resp_size.val().to_u64(),
                front: self.uut.resp_front.val(),
                rear: self.uut.resp_rear.val(),
            });
        }
        if self.uut.chk_done.val() {
            out.check = Some(Check {
                chunk: self.uut.chk_chunk.val().to_u64(),
                front: self.uut.chk_front.val(),
                rear: self.uut.chk_rear.val(),
            });
        }
        self.uut.clock.next = Clock { clk: true };
        self.settle();
        self.uut.clock.next = Clock { clk: false };
        self.settle();
        self.cycle += 1;
        Ok(out)
    }
}

/// The emitted Verilog under Verilator (the project's per-cycle port-vector
/// harness, one record per cycle so that the memory and the requesters can
/// react), with its heap memory.
pub struct CanaryVerilator {
    sim: CycleSim,
    mem: HeapMem,
    ins: BTreeMap<String, PortSlot>,
    outs: BTreeMap<String, PortSlot>,
    rec: Vec<u8>,
    out: Vec<u8>,
    reset: bool,
    key: CanaryKey,
    rate: u8,
    pub cycle: u64,
}

/// Verilator's C++ name of a port: `$` (rust-hdl's array separator) is
/// escaped as `__024`.
fn cpp_port(name: &str) -> String {
    name.replace('$', "__024")
}

impl CanaryVerilator {
    /// Build (or reuse the cached build of) `top` and start it.
    pub fn new(top: &Top, params: &CanaryParams, key: CanaryKey, rate: u8, latency: u64, seed: u64) -> Result<Self, String> {
        let e = |e: anyhow::Error| format!("{e:#}");
        let mut layout = Layout::from_manifest(&top.manifest).map_err(e)?;
        for p in layout.inputs.iter_mut().chain(layout.outputs.iter_mut()) {
            p.name = cpp_port(&p.name);
        }
        let cpp = portvec_cpp(&layout).map_err(e)?;
        let built = build(&BuildSpec { name: top.name().to_string(), top_module: top.name().to_string(), verilog: &top.verilog, cpp, trace: false }).map_err(e)?;
        let ins = layout.inputs.iter().map(|p| (p.name.clone(), p.clone())).collect();
        let outs = layout.outputs.iter().map(|p| (p.name.clone(), p.clone())).collect();
        let rec = vec![0; layout.in_bytes];
        let sim = CycleSim::start(layout, &built, seed).map_err(e)?;
        let mut s = CanaryVerilator { sim, mem: HeapMem::new(params.base, latency), ins, outs, rec, out: Vec::new(), reset: true, key, rate, cycle: 0 };
        s.step(&[None; REQUESTERS])?;
        s.reset = false;
        Ok(s)
    }

    fn put(&mut self, name: &str, v: u64) {
        let p = &self.ins[&cpp_port(name)];
        p.put(&mut self.rec, v);
    }
    fn get(&self, name: &str) -> u64 {
        self.outs[&cpp_port(name)].get(&self.out)
    }
}

impl CanaryDut for CanaryVerilator {
    fn store(&mut self, addr: u64, bytes: &[u8]) {
        self.mem.store(addr, bytes);
    }

    fn step(&mut self, reqs: &[Option<(bool, u64)>; REQUESTERS]) -> Result<StepOut, String> {
        self.rec.iter_mut().for_each(|b| *b = 0);
        self.put("reset", self.reset as u64);
        self.put("key_we", self.reset as u64);
        self.put("key_k0", self.key.k0);
        self.put("key_k1", self.key.k1);
        self.put("rate", self.rate as u64);
        for (i, r) in reqs.iter().enumerate() {
            self.put(&format!("req_valid_{i}"), r.is_some() as u64);
            self.put(&format!("req_free_{i}"), r.map(|r| r.0 as u64).unwrap_or(0));
            self.put(&format!("req_arg_{i}"), r.map(|r| r.1).unwrap_or(0));
        }
        let rd = self.mem.response(self.cycle);
        self.put("mem_rvalid", rd.is_some() as u64);
        self.put("mem_rdata", rd.unwrap_or(0));
        let g = dir_granule(self.cycle);
        self.put("dir_g", g);
        let rec = std::mem::take(&mut self.rec);
        let mut out = std::mem::take(&mut self.out);
        self.sim.run(&rec, &mut out).map_err(|e| format!("cycle {}: Verilator harness: {e:#}", self.cycle))?;
        self.rec = rec;
        self.out = out;
        let mut o = StepOut::default();
        o.dir = DirSample {
            g,
            hit: self.get("dir_hit") != 0,
            chunk_g: self.get("dir_chunk"),
            size: self.get("dir_size"),
            tag: self.get("dir_tag"),
        };
        for i in 0..REQUESTERS {
            if self.get(&format!("req_grant_{i}")) != 0 {
                if o.grant.is_some() {
                    return Err(format!("cycle {}: two grants in one cycle", self.cycle));
                }
                o.grant = Some(i);
            }
        }
        if self.get("mem_valid") != 0 {
            self.mem.request(self.cycle, self.get("mem_we") != 0, self.get("mem_addr"), self.get("mem_wdata"))?;
        }
        if self.get("resp_valid") != 0 {
            o.resp = Some(Resp {
                id: self.get("resp_id") as usize,
                free: self.get("resp_free") != 0,
                code: self.get("resp_code"),
                ptr: self.get("resp_ptr"),
                size: self.get("resp_size"),
                front: self.get("resp_front") != 0,
                rear: self.get("resp_rear") != 0,
            });
        }
        if self.get("chk_done") != 0 {
            o.check = Some(Check { chunk: self.get("chk_chunk"), front: self.get("chk_front") != 0, rear: self.get("chk_rear") != 0 });
        }
        self.cycle += 1;
        Ok(o)
    }
}

/// Random requesters: each holds up to a few chunks, mallocs and frees them,
/// and now and then makes a bad request (zero, oversize, double free, wild
/// or misaligned pointer) or a program store past a chunk's end, before its
/// start, or within the slack.
pub struct Workload {
    rng: SplitMix64,
    pub params: CanaryParams,
    /// Per requester: the op presented (until granted).
    pub pending: [Option<(bool, u64)>; REQUESTERS],
    /// Per requester: waiting for the response of a granted op.
    waiting: [bool; REQUESTERS],
    /// Per requester: live chunks (pointer, size) and freed pointers.
    owned: Vec<Vec<(u64, u64)>>,
    freed: Vec<Vec<u64>>,
    last_malloc: [Option<u64>; REQUESTERS],
    /// Chance (per mille) that an idle requester issues a request in a cycle.
    pub issue_permille: u64,
    /// Chance (per mille) of a program store in a quiet cycle.
    pub store_permille: u64,
}

impl Workload {
    pub fn new(params: &CanaryParams, seed: u64) -> Self {
        Workload {
            rng: SplitMix64(seed),
            params: params.clone(),
            pending: [None; REQUESTERS],
            waiting: [false; REQUESTERS],
            owned: vec![Vec::new(); REQUESTERS],
            freed: vec![Vec::new(); REQUESTERS],
            last_malloc: [None; REQUESTERS],
            issue_permille: 300,
            store_permille: 150,
        }
    }

    fn pick_size(&mut self) -> u64 {
        let max = 256 - self.params.overhead();
        match self.rng.below(40) {
            0 => 0,
            1 => max + 1 + self.rng.below(100),
            2 => u64::MAX - self.rng.below(4),
            3 => max,
            _ => {
                let sizes = [1, 8, 15, 16, 17, 40, 48, 49, 100, 112, 113, 200];
                sizes[self.rng.below(sizes.len() as u64) as usize].min(max)
            }
        }
    }

    fn pick_op(&mut self, i: usize) -> (bool, u64) {
        let held = self.owned[i].len();
        if held < 2 || (held < 5 && self.rng.below(2) == 0) {
            let s = self.pick_size();
            self.last_malloc[i] = Some(s);
            return (false, s);
        }
        self.last_malloc[i] = None;
        let base = self.params.base;
        match self.rng.below(20) {
            0 if !self.freed[i].is_empty() => {
                let f = &self.freed[i];
                (true, f[self.rng.below(f.len() as u64) as usize])
            }
            1 => {
                let wild = [base.wrapping_sub(8), base + HEAP_BYTES, self.rng.next_u64(), base, base + 8 + 32 * self.rng.below(128)];
                (true, wild[self.rng.below(wild.len() as u64) as usize])
            }
            2 => {
                let (p, _) = self.owned[i][self.rng.below(held as u64) as usize];
                (true, p + 8)
            }
            _ => {
                let j = self.rng.below(held as u64) as usize;
                let (p, _) = self.owned[i].swap_remove(j);
                self.freed[i].push(p);
                if self.freed[i].len() > 8 {
                    self.freed[i].remove(0);
                }
                (true, p)
            }
        }
    }

    /// Requests to present this cycle (new ones are drawn for idle requesters).
    pub fn requests(&mut self) -> [Option<(bool, u64)>; REQUESTERS] {
        for i in 0..REQUESTERS {
            if self.pending[i].is_none() && !self.waiting[i] && self.rng.below(1000) < self.issue_permille {
                self.pending[i] = Some(self.pick_op(i));
            }
        }
        self.pending
    }

    pub fn granted(&mut self, i: usize) {
        self.pending[i] = None;
        self.waiting[i] = true;
    }

    pub fn responded(&mut self, r: &Resp) {
        self.waiting[r.id] = false;
        if !r.free && r.code == RES_OK {
            let size = self.last_malloc[r.id].expect("malloc response for a malloc");
            self.owned[r.id].push((r.ptr, size));
        }
    }

    /// A program store to make now (quiet cycle), if any: past the rear
    /// (by 1..8 bytes after the slack), just before the front, or within
    /// the slack.
    pub fn store(&mut self) -> Option<(u64, Vec<u8>)> {
        if !self.params.check.canaries() || self.rng.below(1000) >= self.store_permille {
            return None;
        }
        let holders: Vec<usize> = (0..REQUESTERS).filter(|&i| !self.owned[i].is_empty()).collect();
        if holders.is_empty() {
            return None;
        }
        let i = holders[self.rng.below(holders.len() as u64) as usize];
        let (p, size) = self.owned[i][self.rng.below(self.owned[i].len() as u64) as usize];
        // (A tagged build's pointer: the store goes to its address.)
        let p = untag(p);
        let byte = vec![(self.rng.next_u64() | 1) as u8];
        let slack = self.params.slack;
        Some(match self.rng.below(3) {
            0 => (p + size + slack + self.rng.below(8), byte),
            1 => (p - 1 - self.rng.below(8), byte),
            _ if slack > 0 => (p + size + self.rng.below(slack), byte),
            _ => (p + size - 1, byte),
        })
    }
}

/// Run `cycles` cycles of the random workload on `dut` and replay the log
/// against the golden model as it is produced; Err names the cycle and the
/// first mismatch.
pub fn run_workload(dut: &mut dyn CanaryDut, params: &CanaryParams, key: CanaryKey, rate: u8, seed: u64, cycles: u64) -> Result<ReplayStats, String> {
    let mut model = ModelReplay::new(params, key, rate)?;
    let mut wl = Workload::new(params, seed);
    let mut granted_at = 0;
    for c in 0..cycles {
        let reqs = wl.requests();
        let out = dut.step(&reqs)?;
        if let Some(r) = &out.resp {
            model.apply(&Event::Resp(r.clone())).map_err(|e| format!("cycle {c}: {e}"))?;
            wl.responded(r);
            if r.code == RES_OK {
                if r.free {
                    model.stats.rtl_free_cycles += c - granted_at;
                } else {
                    model.stats.rtl_malloc_cycles += c - granted_at;
                }
            }
        }
        if let Some(ch) = &out.check {
            model.apply(&Event::Check(ch.clone())).map_err(|e| format!("cycle {c}: {e}"))?;
        }
        // The directory, whenever no operation is between grant and
        // response (a malloc's record is written before its response).
        if model.pending.is_none() {
            let mut got = out.dir;
            if !got.hit {
                got = DirSample { g: got.g, ..DirSample::default() };
            }
            let want = DirSample::model(&model.heap, got.g);
            if got != want {
                return Err(format!("cycle {c}: directory of granule {}: RTL {got:?}, model {want:?}", got.g));
            }
            model.stats.dir_compares += 1;
            model.stats.dir_hits += want.hit as u64;
        }
        if let Some(g) = out.grant {
            granted_at = c;
            let (free, arg) = reqs[g].ok_or(format!("cycle {c}: grant to requester {g} without a request"))?;
            model.apply(&Event::Grant { id: g, free, arg }).map_err(|e| format!("cycle {c}: {e}"))?;
            wl.granted(g);
        }
        if out.resp.is_some() || out.check.is_some() {
            if let Some((addr, bytes)) = wl.store() {
                dut.store(addr, &bytes);
                model.apply(&Event::Store { addr, bytes })?;
            }
        }
    }
    Ok(model.stats)
}

/// [`run_workload`] on the rust-hdl model.
pub fn run_rust_hdl(params: &CanaryParams, key: CanaryKey, rate: u8, seed: u64, cycles: u64, latency: u64) -> Result<ReplayStats, String> {
    let mut sim = CanarySim::new(params, key, rate, latency)?;
    run_workload(&mut sim, params, key, rate, seed, cycles)
}
