//! SmPipelineAllocDriver: kernels with in-kernel MALLOC/FREE through the RTL
//! SM pipeline with the canary allocator unit
//! (`hw::sm_pipeline_alloc::SmPipelineAlloc`) in rust-hdl simulation, clock
//! driven by hand, checked every cycle against the golden heap model.
//!
//! The testbench is the instruction memory (fetch port), the warps' register
//! file (register port and the allocator write back `awb_*`) and the heap
//! memory behind the unit's canary port ([`HeapMem`]). The golden model is
//! `sim::canary::heap::Heap` ([`ModelReplay`]), fed in the RTL's grant order
//! with the requester the contract gives (warp w -> requester w mod 8), not
//! the one the RTL used, so a wrong mapping shows up as a mismatch.
//!
//! Checked every cycle: each grant is of a request some warp posted at that
//! requester, with the operand the register file held (size, or the pointer
//! with a same-cycle write back forwarded); each response equals the model's
//! (code, pointer or chunk, size, overflow flags) and is written back to the
//! posting warp's register; each background check equals the model's; a
//! warp does not issue while it waits for the unit (except in the response
//! cycle).
//!
//! The device heap (`AllocPipeConfig::heap_dir` set, a tagged unit): the
//! driver writes the MLU's heap window CSRs, kernels also run LOADMETA and
//! MEMCHECK.G on the heap pointers in registers ([`AOp::LoadMeta`],
//! [`AOp::MemCheck`]), and each kernel records the MLU's faults (cycle,
//! warp, fault) for comparison with `sim::sm_pipeline`. A register pointer
//! is read when the slot is filled (the testbench is the instruction
//! memory), with a same-cycle write back forwarded; the driver checks that
//! the register still holds it when the instruction issues (the kernel's
//! rule: an instruction between a MALLOC and the first use of its pointer).
//! Node reads outside the directory window are answered from an empty
//! runtime's memory, as the model's are.
use verif::canary_driver::{Check, Event, HeapMem, ModelReplay, ReplayStats, Resp};
use hw::canary::alloc_unit::{CanaryParams, HEAP_BYTES};
use hw::mlu::{CSR_HEAP_BASE, CSR_HEAP_DIR, CSR_HEAP_MASK};
use hw::sm_pipeline::{K_ALU, K_END, K_FREE, K_LOAD, K_LOADMETA, K_MALLOC, K_MEMCHECK, K_STORE, REQUESTERS};
use hw::sm_pipeline_alloc::SmPipelineAlloc;
use rust_hdl::prelude::*;
use sim::runtime::{Runtime, RuntimeConfig, SplitMix64};
use sim::canary::siphash::CanaryKey;
use sim::config::{Mode, MluConfig};
use sim::fault::FaultCode;
use std::collections::{HashMap, VecDeque};

/// One instruction of a test kernel (a warp's stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AOp {
    Alu(u32),
    Load(u64),
    Store(u64),
    /// Allocate `size` bytes; the pointer (0 on an error) goes to register `dst`.
    Malloc { size: u64, dst: u16 },
    /// Free the pointer in register `src`.
    Free { src: u16 },
    /// LOADMETA of the pointer in register `src`; the location goes to
    /// register `dst` (dropped in HWONLY mode).
    LoadMeta { src: u16, dst: u16 },
    /// MEMCHECK.G of register `reg` + `off`, `width` bytes, location operand
    /// in register `loc`.
    MemCheck { reg: u16, loc: u16, off: u64, width: u8 },
}

/// One MALLOC/FREE as the RTL ran it (cycles from the kernel's cycle 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpRecord {
    pub warp: usize,
    pub free: bool,
    pub arg: u64,
    pub issue: u64,
    pub grant: u64,
    /// The cycle the response took effect (its write back).
    pub resp: u64,
    pub code: u64,
    pub ptr: u64,
}

/// A kernel's run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelOut {
    pub cycles: u64,
    /// The driver cycle of the kernel's cycle 0 (cycle 0 is the reset cycle,
    /// so the unit's own cycle count there is `start - 1`).
    pub start: u64,
    /// MALLOC/FREE in response order.
    pub ops: Vec<OpRecord>,
    /// MLU responses with a fault: (kernel cycle, warp, fault), as
    /// `sim::sm_pipeline::KernelRun::fault_log`.
    pub faults: Vec<(u64, usize, FaultCode)>,
}

#[derive(Clone, Copy, Debug)]
struct Posted {
    warp: usize,
    free: bool,
    arg: u64,
    reg: u16,
    issue: u64,
    grant: Option<u64>,
}

/// Pipeline timing and allocator set-up of a driver.
#[derive(Clone, Debug)]
pub struct AllocPipeConfig {
    pub mlu: MluConfig,
    pub data_latency: u64,
    pub max_outstanding: u64,
    pub canary: CanaryParams,
    pub key: CanaryKey,
    /// Checker rate CSR (rate/256 checks per cycle, always mode).
    pub rate: u8,
    /// Canary memory latency (cycles, >= 1).
    pub heap_latency: u64,
    /// The device heap registered with the MLU: its directory's base (the
    /// unit must be tagged), the window the heap's 4 KiB. None: not
    /// registered (the heap CSRs stay 0).
    pub heap_dir: Option<u64>,
}

pub struct SmPipelineAllocDriver<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize>
{
    pub uut: Box<SmPipelineAlloc<W, WW, N, IW, Q, QW>>,
    mem: HeapMem,
    /// The MLU's memory outside the directory (an empty runtime's, as the
    /// model's pipeline reads it), and its mode (HWONLY drops LOADMETA).
    rt: Runtime,
    mode: Mode,
    pub model: ModelReplay,
    /// The warps' registers, (warp, register) -> value; unset reads 0.
    pub regs: HashMap<(usize, u16), u64>,
    /// If set, every register is this value at each kernel start
    /// (`sim::sm_pipeline` starts each kernel with NO_META registers).
    pub reg_init: Option<u64>,
    pub cycle: u64,
}

/// An instruction's slot fields (kind, count, ptr, width, arg), its
/// register pointer read through `reg`.
fn slot(op: &AOp, reg: impl Fn(u16) -> u64) -> (u64, u64, u64, u64, u64) {
    match *op {
        AOp::Alu(n) => (K_ALU, n as u64, 0, 0, 0),
        AOp::Load(p) => (K_LOAD, 0, p, 0, 0),
        AOp::Store(p) => (K_STORE, 0, p, 0, 0),
        AOp::Malloc { size, dst } => (K_MALLOC, 0, size, 0, dst as u64),
        AOp::Free { src } => (K_FREE, 0, 0, 0, src as u64),
        AOp::LoadMeta { src, dst } => (K_LOADMETA, 0, reg(src), 0, dst as u64),
        AOp::MemCheck { reg: r, loc, off, width } => (K_MEMCHECK, 0, reg(r).wrapping_add(off), width as u64, loc as u64),
    }
}

impl<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize>
    SmPipelineAllocDriver<W, WW, N, IW, Q, QW>
{
    /// A reset pipeline with the key loaded. `mutate` may change the block
    /// before it is connected (mutant tests).
    pub fn new(cfg: &AllocPipeConfig, mutate: impl FnOnce(&mut SmPipelineAlloc<W, WW, N, IW, Q, QW>)) -> Result<Self, String> {
        if cfg.mlu.entries != N {
            return Err(format!("MLU entries {} but the pipeline is built with {N}", cfg.mlu.entries));
        }
        if cfg.max_outstanding == 0 || cfg.max_outstanding as usize > Q || cfg.data_latency == 0 {
            return Err(format!("max_outstanding {} (1..={Q}) / data_latency {} (>= 1)", cfg.max_outstanding, cfg.data_latency));
        }
        cfg.mlu.validate(sim::config::Target::Hardware).map_err(|e| format!("MLU configuration: {e}"))?;
        let params = sim::sm_pipeline::UnitMlu::params(&cfg.mlu);
        let mut uut = Box::new(SmPipelineAlloc::<W, WW, N, IW, Q, QW>::new(&params, &cfg.canary)?);
        mutate(&mut uut);
        uut.connect_all();
        let model = ModelReplay::new(&cfg.canary, cfg.key, cfg.rate)?;
        let rt = Runtime::new(RuntimeConfig { mlu: cfg.mlu.clone(), ..RuntimeConfig::default() }).map_err(|e| format!("MLU configuration: {e}"))?;
        let mem = HeapMem::new(cfg.canary.base, cfg.heap_latency);
        let mut d = SmPipelineAllocDriver { uut, mem, rt, mode: cfg.mlu.mode, model, regs: HashMap::new(), reg_init: None, cycle: 0 };
        let p = &mut d.uut.pipe;
        p.data_latency.next = cfg.data_latency.into();
        p.meta_latency.next = 1u64.into();
        p.max_outstanding.next = cfg.max_outstanding.into();
        d.uut.unit.rate.next = (cfg.rate as u64).into();
        d.uut.unit.key_we.next = true;
        d.uut.unit.key_k0.next = cfg.key.k0.into();
        d.uut.unit.key_k1.next = cfg.key.k1.into();
        d.uut.reset.next = true;
        d.cycle(None)?;
        d.uut.reset.next = false;
        d.uut.unit.key_we.next = false;
        if let Some(dir) = cfg.heap_dir {
            if cfg.canary.tag_seed.is_none() {
                return Err("heap_dir: the device heap registered with the MLU needs a tagged unit (tag_seed)".into());
            }
            for (a, v) in [(CSR_HEAP_BASE, cfg.canary.base), (CSR_HEAP_MASK, HEAP_BYTES - 1), (CSR_HEAP_DIR, dir)] {
                d.uut.csr_we.next = true;
                d.uut.csr_addr.next = a.into();
                d.uut.csr_data.next = v.into();
                d.settle();
                d.clock_idle()?;
            }
            d.uut.csr_we.next = false;
        }
        Ok(d)
    }

    fn settle(&mut self) {
        assert!(simulate(&mut *self.uut, 500), "SM pipeline with allocator did not settle (combinational loop?)");
    }

    /// Drives the fetch port; returns the slot's pointer (a register
    /// pointer as read now, with `fwd`'s write back of this cycle).
    fn drive_fetch(&mut self, valid: bool, warp: usize, op: Option<&AOp>, fwd: &[(usize, u16, u64)]) -> u64 {
        let reg = |r: u16| fwd.iter().rev().find(|f| (f.0, f.1) == (warp, r)).map_or_else(|| self.reg(warp, r), |f| f.2);
        let (kind, count, ptr, width, arg) = op.map(|o| slot(o, reg)).unwrap_or((K_END, 0, 0, 0, 0));
        let p = &mut self.uut.pipe;
        p.fetch_valid.next = valid;
        p.fetch_warp.next = (warp as u64).into();
        p.fetch_kind.next = kind.into();
        p.fetch_count.next = count.into();
        p.fetch_ptr.next = ptr.into();
        p.fetch_width.next = width.into();
        p.fetch_arg.next = arg.into();
        ptr
    }

    fn reg(&self, w: usize, r: u16) -> u64 {
        self.regs.get(&(w, r)).copied().unwrap_or(self.reg_init.unwrap_or(0))
    }

    /// One clock cycle; with a kernel context, also its fetch, registers
    /// and checks. Returns whether `kdone` was high.
    fn cycle(&mut self, mut k: Option<&mut Kctx>) -> Result<bool, String> {
        let c = self.cycle;
        let rd = self.mem.response(c);
        self.uut.unit.mem_rvalid.next = rd.is_some();
        self.uut.unit.mem_rdata.next = rd.unwrap_or(0).into();
        self.drive_fetch(false, 0, None, &[]);
        self.settle();
        // Fetch and register reads are answered in the cycle (combinational).
        let mut consumed = None;
        if let Some(k) = k.as_deref_mut() {
            let p = &self.uut.pipe;
            let (rw, ra) = (p.rf_warp.val().to_u64() as usize, p.rf_arg.val().to_u64() as u16);
            // This cycle's register write backs (LOADMETA's, MALLOC's),
            // forwarded to a register pointer read by the fetch.
            let mut fwd = Vec::new();
            if p.wb_valid.val() {
                fwd.push((p.wb_warp.val().to_u64() as usize, p.wb_arg.val().to_u64() as u16, p.wb_loc.val().to_u64()));
            }
            if p.awb_valid.val() && !p.awb_free.val() {
                fwd.push((p.awb_warp.val().to_u64() as usize, p.awb_arg.val().to_u64() as u16, p.awb_ptr.val().to_u64()));
            }
            if p.fetch_req.val() {
                let w = p.fetch_req_warp.val().to_u64() as usize;
                // The slot held streams[w][pc]; refill with the next one.
                let op = k.streams[w].get(k.pc[w]).copied();
                consumed = Some((w, op, k.fetched[w]));
                k.pc[w] += 1;
                let next = k.streams[w].get(k.pc[w]).copied();
                k.fetched[w] = self.drive_fetch(true, w, next.as_ref(), &fwd);
            }
            // Settle again only if an input changed (rust-hdl settles are
            // most of the simulation time).
            let v = self.reg(rw, ra);
            if consumed.is_some() || self.uut.pipe.rf_loc.val().to_u64() != v {
                self.uut.pipe.rf_loc.next = v.into();
                self.settle();
            }
            // Node reads outside the directory: the runtime's memory.
            let p = &self.uut.pipe;
            if p.meta_node_req.val() {
                let a = p.meta_node_addr.val().to_u64() << 5;
                let words: Vec<Option<u64>> = {
                    let mem = self.rt.meta_memory();
                    (0..4).map(|i| sim::memory::MetaMemory::read_word(&mem, a + 8 * i).ok()).collect()
                };
                let word = |i: usize| words[i].unwrap_or(0).into();
                let u = &mut self.uut;
                (u.meta_base.next, u.meta_size_tag.next, u.meta_link0.next, u.meta_link1.next) = (word(0), word(1), word(2), word(3));
                u.meta_error.next = words.iter().any(Option::is_none);
                self.settle();
            }
        }
        let p = &self.uut.pipe;
        let u = &self.uut.unit;
        let done = p.kdone.val();
        let wb = p.wb_valid.val().then(|| (p.wb_warp.val().to_u64() as usize, p.wb_arg.val().to_u64() as u16, p.wb_loc.val().to_u64()));
        let mlu = &p.mlu;
        let fault = (p.run.val() && mlu.resp_valid.val() && mlu.resp_fault.val().to_u64() != 0)
            .then(|| (mlu.resp_id.val().to_u64() as usize, FaultCode::from_bits(mlu.resp_fault.val().to_u64() as u8)));
        let grant = (0..REQUESTERS).filter(|&i| u.req_grant[i].val()).collect::<Vec<_>>();
        let grant_op = grant.first().map(|&i| (i, u.req_free[i].val(), u.req_arg[i].val().to_u64()));
        let resp = u.resp_valid.val().then(|| Resp {
            id: u.resp_id.val().index(),
            free: u.resp_free.val(),
            code: u.resp_code.val().to_u64(),
            ptr: u.resp_ptr.val().to_u64(),
            size: u.resp_size.val().to_u64(),
            front: u.resp_front.val(),
            rear: u.resp_rear.val(),
        });
        let awb = p.awb_valid.val().then(|| {
            (
                p.awb_warp.val().to_u64() as usize,
                p.awb_arg.val().to_u64() as u16,
                p.awb_free.val(),
                p.awb_code.val().to_u64(),
                p.awb_ptr.val().to_u64(),
                p.awb_front.val(),
                p.awb_rear.val(),
            )
        });
        let check = u.chk_done.val().then(|| Check { chunk: u.chk_chunk.val().to_u64(), front: u.chk_front.val(), rear: u.chk_rear.val() });
        let memreq = u.mem_valid.val().then(|| (u.mem_we.val(), u.mem_addr.val().to_u64(), u.mem_wdata.val().to_u64()));
        let kcycles = p.kcycles.val().to_u64();
        if grant.len() > 1 {
            return Err(format!("cycle {c}: grants {grant:?} in one cycle"));
        }
        if let Some((we, addr, wdata)) = memreq {
            self.mem.request(c, we, addr, wdata)?;
        }
        // Response (before a grant in the same cycle: the unit serves one
        // request at a time).
        if let Some(r) = &resp {
            self.model.apply(&Event::Resp(r.clone())).map_err(|e| format!("cycle {c}: {e}"))?;
            let Some(k) = k.as_deref_mut() else {
                return Err(format!("cycle {c}: allocator response {r:?} outside a kernel"));
            };
            let Some(op) = k.granted.take() else {
                return Err(format!("cycle {c}: response {r:?} without a granted request"));
            };
            if let Some(a) = &k.answered {
                return Err(format!("cycle {c}: response {r:?} while {a:?} is not yet written back"));
            }
            k.answered = Some((op, r.clone()));
        }
        // The write back: in the response's cycle, or with the device heap
        // in the cycle of its last INVALIDATE (`hw::sm_pipeline`).
        if let Some(awb) = awb {
            let Some((op, r)) = k.as_deref_mut().and_then(|k| k.answered.take()) else {
                return Err(format!("cycle {c}: write back {awb:?} without a response"));
            };
            let want = (op.warp, op.reg, op.free, r.code, r.ptr, r.front, r.rear);
            if awb != want {
                return Err(format!("cycle {c}: write back {awb:?}, expected {want:?} (warp, register, free, code, ptr, front, rear)"));
            }
            if !op.free {
                self.regs.insert((op.warp, op.reg), r.ptr);
            }
            let k = k.as_deref_mut().expect("answered in a kernel");
            k.waiting[op.warp] = false;
            k.out.ops.push(OpRecord {
                warp: op.warp,
                free: op.free,
                arg: op.arg,
                issue: op.issue,
                grant: op.grant.expect("granted"),
                resp: c - k.start,
                code: r.code,
                ptr: r.ptr,
            });
        }
        if let Some(ch) = &check {
            self.model.apply(&Event::Check(ch.clone())).map_err(|e| format!("cycle {c}: {e}"))?;
        }
        if let Some((w, a, loc)) = wb {
            self.regs.insert((w, a), loc);
        }
        if let Some(k) = k {
            if let Some((w, code)) = fault {
                let code = code.ok_or_else(|| format!("cycle {c}: MLU fault code out of range"))?;
                k.out.faults.push((c - k.start, w, code));
            }
            if let Some((w, op, fetched)) = consumed {
                if k.waiting[w] {
                    return Err(format!("cycle {c}: warp {w} issued while waiting for the allocator"));
                }
                if let Some(o @ (AOp::LoadMeta { .. } | AOp::MemCheck { .. })) = op {
                    let now = slot(&o, |r| self.reg(w, r)).2;
                    if now != fetched {
                        return Err(format!(
                            "cycle {c}: warp {w}'s {o:?} issues with its register at {now:#x}, filled at {fetched:#x}: the kernel uses a pointer its warp is still writing"
                        ));
                    }
                }
                match op {
                    None => return Err(format!("cycle {c}: fetch past the END of warp {w}'s stream")),
                    Some(AOp::Malloc { size, dst }) => k.post(w, false, size, dst, c),
                    Some(AOp::Free { src }) => {
                        // The register as written at this edge (the RTL forwards it).
                        let v = self.reg(w, src);
                        k.post(w, true, v, src, c)
                    }
                    _ => {}
                }
            }
            if let Some((i, free, arg)) = grant_op {
                let Some(op) = k.posted[i].pop_front() else {
                    return Err(format!("cycle {c}: grant to requester {i}, where no warp posted (warp w posts at w mod {REQUESTERS})"));
                };
                if (free, arg) != (op.free, op.arg) {
                    return Err(format!(
                        "cycle {c}: requester {i} presents (free {free}, {arg:#x}), warp {} posted (free {}, {:#x})",
                        op.warp, op.free, op.arg
                    ));
                }
                if k.granted.is_some() {
                    return Err(format!("cycle {c}: grant while a request is unanswered"));
                }
                // The model takes the contract's requester (w mod 8).
                self.model.apply(&Event::Grant { id: op.warp % REQUESTERS, free, arg }).map_err(|e| format!("cycle {c}: {e}"))?;
                k.granted = Some(Posted { grant: Some(c - k.start), ..op });
            }
            if done {
                if kcycles != c - k.start {
                    return Err(format!("cycle {c}: kcycles {kcycles}, {} cycles with run high", c - k.start));
                }
                k.out.cycles = kcycles;
            }
        } else if grant_op.is_some() {
            return Err(format!("cycle {c}: allocator grant outside a kernel"));
        }
        self.edge();
        Ok(done)
    }

    /// Runs one kernel (`streams[w]` is warp w's program; warps beyond it
    /// are not launched); Err names the cycle and the first mismatch.
    pub fn run_kernel(&mut self, streams: &[Vec<AOp>]) -> Result<KernelOut, String> {
        if streams.len() > W {
            return Err(format!("kernel has {} warps, the pipeline {W}", streams.len()));
        }
        // HWONLY code has no LOADMETA (as the model's pipeline).
        let hwonly = self.mode == Mode::Hwonly;
        let streams: Vec<Vec<AOp>> =
            streams.iter().map(|s| s.iter().copied().filter(|o| !(hwonly && matches!(o, AOp::LoadMeta { .. }))).collect()).collect();
        let mut k = Kctx::new(&streams, W);
        if self.reg_init.is_some() {
            self.regs.clear();
        }
        // Fill every slot (run low).
        for w in 0..W {
            let first = k.streams[w].first().copied();
            k.fetched[w] = self.drive_fetch(true, w, first.as_ref(), &[]);
            self.settle();
            self.clock_idle()?;
        }
        self.uut.pipe.run.next = true;
        k.start = self.cycle;
        k.out.start = k.start;
        loop {
            if self.cycle(Some(&mut k))? {
                break;
            }
            if self.cycle - k.start > 2_000_000 {
                return Err("kernel never finished".into());
            }
        }
        self.uut.pipe.run.next = false;
        for w in 0..W {
            if k.pc[w] != k.streams[w].len() {
                return Err(format!("warp {w} done at {} of {} instructions", k.pc[w], k.streams[w].len()));
            }
        }
        if k.granted.is_some() || k.answered.is_some() || k.posted.iter().any(|q| !q.is_empty()) {
            return Err("kernel done with an allocator request unanswered".into());
        }
        Ok(k.out)
    }

    /// One fill cycle (run low): the slot write at the edge, the unit's
    /// background activity checked.
    fn clock_idle(&mut self) -> Result<(), String> {
        // `cycle` drives fetch low before settling; keep the fill's fetch.
        let c = self.cycle;
        let rd = self.mem.response(c);
        self.uut.unit.mem_rvalid.next = rd.is_some();
        self.uut.unit.mem_rdata.next = rd.unwrap_or(0).into();
        self.settle();
        let u = &self.uut.unit;
        if u.mem_valid.val() {
            let (we, a, d) = (u.mem_we.val(), u.mem_addr.val().to_u64(), u.mem_wdata.val().to_u64());
            self.mem.request(c, we, a, d)?;
        }
        if u.chk_done.val() {
            let ch = Check { chunk: u.chk_chunk.val().to_u64(), front: u.chk_front.val(), rear: u.chk_rear.val() };
            self.model.apply(&Event::Check(ch)).map_err(|e| format!("cycle {c}: {e}"))?;
        }
        if u.resp_valid.val() || (0..REQUESTERS).any(|i| u.req_grant[i].val()) {
            return Err(format!("cycle {c}: allocator activity between kernels"));
        }
        self.edge();
        Ok(())
    }

    /// The rising edge, then clock low (settled with the next cycle's inputs).
    fn edge(&mut self) {
        self.uut.clock.next = true.into();
        self.settle();
        self.uut.clock.next = false.into();
        self.cycle += 1;
    }

    /// What the golden model saw.
    pub fn stats(&self) -> &ReplayStats {
        &self.model.stats
    }
}

struct Kctx {
    streams: Vec<Vec<AOp>>,
    /// Index of the instruction in warp w's slot (= instructions consumed).
    pc: Vec<usize>,
    /// The pointer warp w's slot was filled with (a register pointer as
    /// read at the fill).
    fetched: Vec<u64>,
    waiting: Vec<bool>,
    /// Per requester (by the contract's mapping), requests posted and not granted.
    posted: Vec<VecDeque<Posted>>,
    granted: Option<Posted>,
    /// The response given and not yet written back (held for its
    /// INVALIDATEs).
    answered: Option<(Posted, Resp)>,
    start: u64,
    out: KernelOut,
}

impl Kctx {
    fn new(streams: &[Vec<AOp>], w: usize) -> Self {
        let streams: Vec<Vec<AOp>> = (0..w).map(|i| streams.get(i).cloned().unwrap_or_default()).collect();
        Kctx {
            pc: vec![0; w],
            fetched: vec![0; w],
            waiting: vec![false; w],
            posted: vec![VecDeque::new(); REQUESTERS],
            granted: None,
            answered: None,
            start: 0,
            out: KernelOut::default(),
            streams,
        }
    }
    fn post(&mut self, warp: usize, free: bool, arg: u64, reg: u16, c: u64) {
        self.waiting[warp] = true;
        let issue = c - self.start;
        self.posted[warp % REQUESTERS].push_back(Posted { warp, free, arg, reg, issue, grant: None });
    }
}

/// Registers 8.. of every warp hold these wild pointers (set them with
/// [`wild_registers`]): below the heap, its end, a random value, the heap
/// base (a front canary), a chunk slot that may never have been given out,
/// a misaligned pointer.
pub const WILD_REG0: u16 = 8;

pub fn wild_registers(rng: &mut SplitMix64, base: u64) -> Vec<u64> {
    vec![base.wrapping_sub(8), base + HEAP_BYTES, rng.next_u64(), base, base + 8 + 32 * rng.below(128), base + 8 + 32 * rng.below(128) + 4]
}

/// A random kernel of `warps` warps, `len` instructions each: ALU, loads and
/// stores at addresses in a 64 KiB window, and MALLOC/FREE of registers
/// 0..4 with zero, oversize (up to 2^64 - 1) and fitting sizes, double
/// frees (a register freed again), frees of a failed MALLOC's 0 and wild
/// frees of registers 8.. (see [`wild_registers`]). `max_size` is the
/// largest size that fits (256 minus the canaries and slack).
pub fn random_kernel(rng: &mut SplitMix64, warps: usize, len: usize, max_size: u64, alloc_permille: u64) -> Vec<Vec<AOp>> {
    (0..warps)
        .map(|_| {
            let mut v = Vec::new();
            let mut held: Vec<u16> = Vec::new();
            let mut freed: Vec<u16> = Vec::new();
            while v.len() < len {
                if rng.below(1000) < alloc_permille {
                    let free_regs: Vec<u16> = (0..4).filter(|r| !held.contains(r)).collect();
                    let malloc = !free_regs.is_empty() && (held.is_empty() || rng.below(2) == 0);
                    if malloc {
                        let dst = free_regs[rng.below(free_regs.len() as u64) as usize];
                        let size = match rng.below(16) {
                            0 => 0,
                            1 => max_size + 1 + rng.below(200),
                            2 => u64::MAX - rng.below(4),
                            3 => max_size,
                            _ => [1, 8, 15, 16, 17, 40, 48, 49, 100, 112, 113, 200][rng.below(12) as usize].min(max_size),
                        };
                        held.push(dst);
                        freed.retain(|&r| r != dst);
                        v.push(AOp::Malloc { size, dst });
                    } else {
                        let src = match rng.below(8) {
                            0 | 1 if !freed.is_empty() => freed[rng.below(freed.len() as u64) as usize],
                            2 => WILD_REG0 + rng.below(6) as u16,
                            _ if !held.is_empty() => {
                                let r = held.swap_remove(rng.below(held.len() as u64) as usize);
                                freed.push(r);
                                r
                            }
                            _ => WILD_REG0 + rng.below(6) as u16,
                        };
                        v.push(AOp::Free { src });
                    }
                } else {
                    let a = 0x2000_0000 + 8 * rng.below(8192);
                    v.push(match rng.below(4) {
                        0 | 1 => AOp::Alu(1 + rng.below(4) as u32),
                        2 => AOp::Load(a),
                        _ => AOp::Store(a),
                    });
                }
            }
            // Free what is held, so that kernels leave the heap as they found it.
            for r in held {
                v.push(AOp::Free { src: r });
            }
            v
        })
        .collect()
}

/// Registers of [`random_heap_kernel`]: pointers in 0..4, their locations
/// in 4..8.
pub const LOC_REG0: u16 = 4;

/// A random device-heap kernel of `warps` warps, about `len` instructions
/// each: MALLOCs of sizes 1..=`max_size` (`max_size` = 256 minus the
/// canaries and slack), every size class alike, into registers 0..4 (each followed
/// by an ALU, so its pointer is not used by the instruction fetched with
/// it), the LOADMETA of each new pointer (location in register + 4), and
/// MEMCHECK.Gs of widths 1, 4 and 8 through live pointers in bounds, at the
/// last bytes, one past the end, straddling the end and before the start,
/// through dangling pointers (use after free, a stale tag once the chunk is
/// reused) and through a failed MALLOC's 0; FREEs, double frees, ALU,
/// loads and stores. What is held at the end is freed.
pub fn random_heap_kernel(rng: &mut SplitMix64, warps: usize, len: usize, max_size: u64) -> Vec<Vec<AOp>> {
    (0..warps)
        .map(|_| {
            let mut v = Vec::new();
            // Per pointer register: Some(size) while held, and whether it
            // was ever written (a dangling pointer after its free).
            let mut held: [Option<u64>; 4] = [None; 4];
            let mut written = [false; 4];
            let mut last_size = [0u64; 4];
            while v.len() < len {
                let free_regs: Vec<u16> = (0..4).filter(|&r| held[r as usize].is_none()).collect();
                let live: Vec<u16> = (0..4).filter(|&r| held[r as usize].is_some()).collect();
                match rng.below(10) {
                    0 | 1 if !free_regs.is_empty() => {
                        let r = free_regs[rng.below(free_regs.len() as u64) as usize];
                        // A size class first (32..256 B with the canaries
                        // and slack), then a size in it, its largest a quarter
                        // of the time: every class and its slots get used.
                        let over = 256 - max_size;
                        let class = 32u64 << rng.below(4);
                        let lo = (class / 2).saturating_sub(over).max(1);
                        let hi = (class - over).max(lo);
                        let size = if rng.below(4) == 0 { hi } else { lo + rng.below(hi - lo + 1) };
                        v.push(AOp::Malloc { size, dst: r });
                        v.push(AOp::Alu(1));
                        v.push(AOp::LoadMeta { src: r, dst: r + LOC_REG0 });
                        held[r as usize] = Some(size);
                        written[r as usize] = true;
                        last_size[r as usize] = size;
                    }
                    2..=5 if !live.is_empty() || written.iter().any(|&w| w) => {
                        // Mostly live pointers; a dangling one a quarter of the time.
                        let dangling: Vec<u16> = (0..4).filter(|&r| held[r as usize].is_none() && written[r as usize]).collect();
                        let r = if live.is_empty() || (!dangling.is_empty() && rng.below(4) == 0) {
                            dangling[rng.below(dangling.len() as u64) as usize]
                        } else {
                            live[rng.below(live.len() as u64) as usize]
                        };
                        let size = last_size[r as usize];
                        let width = [1u8, 4, 8][rng.below(3) as usize];
                        let w = width as u64;
                        let off = match rng.below(8) {
                            0 => size.saturating_sub(w),
                            1 => size,
                            2 => size.saturating_sub(w) + 1,
                            3 => u64::MAX - rng.below(8),
                            _ => rng.below(size.max(1)),
                        };
                        v.push(AOp::MemCheck { reg: r, loc: r + LOC_REG0, off, width });
                    }
                    6 if !live.is_empty() || written.iter().any(|&w| w) => {
                        // Free a live pointer, or (1 in 4) a dangling one again.
                        let dangling: Vec<u16> = (0..4).filter(|&r| held[r as usize].is_none() && written[r as usize]).collect();
                        let r = if live.is_empty() || (!dangling.is_empty() && rng.below(4) == 0) {
                            dangling[rng.below(dangling.len() as u64) as usize]
                        } else {
                            live[rng.below(live.len() as u64) as usize]
                        };
                        v.push(AOp::Free { src: r });
                        held[r as usize] = None;
                    }
                    7 => v.push(AOp::Load(0x2000_0000 + 8 * rng.below(8192))),
                    8 => v.push(AOp::Store(0x2000_0000 + 8 * rng.below(8192))),
                    _ => v.push(AOp::Alu(1 + rng.below(4) as u32)),
                }
            }
            for r in 0..4u16 {
                if held[r as usize].is_some() {
                    v.push(AOp::Free { src: r });
                }
            }
            v
        })
        .collect()
}
