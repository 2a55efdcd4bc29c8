//! SmPipelineDriver: replays an expanded trace (`sim::expand::Workload`)
//! through the RTL SM pipeline (`hw::sm_pipeline::SmPipeline`) in rust-hdl
//! simulation, clock driven by hand, the way `sim::sm_pipeline::run_workload`
//! replays it through the cycle model: the allocs and frees go through a
//! host [`Runtime`] of its own (same configuration and seed as the model's,
//! so the same tags and nodes), whose host operations are mirrored into the
//! RTL MLU unit between kernels (INVALIDATE and FLUSH through the host port,
//! ROOT as a CSR write: `Runtime::take_host_ops`, as the model's
//! `UnitMlu::sync`); every kernel's per-warp streams are fed through the
//! fetch port, the warps' registers (LOADMETA locations) are kept here
//! behind the register port, and node reads are answered with the runtime's
//! words at request time.
//!
//! Every cycle it checks the MLB one-hot assertion and the fetch protocol.
use hw::mlu::CSR_ROOT;
use hw::sm_pipeline::{SmPipeline, K_ALU, K_END, K_LOAD, K_LOADMETA, K_MEMCHECK, K_STORE};
use rust_hdl::prelude::*;
use sim::config::{Mode, MluConfig};
use sim::expand::{Instr, Item, Kernel, Workload};
use sim::fault::Op;
use sim::sm_pipeline::{PipelineConfig, UnitMlu};
use sim::pointer::NO_META;
use sim::runtime::{HostOp, Runtime, RuntimeConfig};
use std::collections::HashMap;

/// One slot instruction as the fetch port carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    kind: u64,
    count: u64,
    ptr: u64,
    width: u64,
    arg: u64,
}

const END: Slot = Slot { kind: K_END, count: 0, ptr: 0, width: 0, arg: 0 };

/// What the RTL measured over a workload (the fields of
/// `sim::sm_pipeline::WorkloadRun` that the RTL has).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RtlRun {
    pub cycles: u64,
    pub kernel_cycles: Vec<u64>,
    pub issued: u64,
    pub loads: u64,
    pub stores: u64,
    pub mlu_ops: u64,
    /// Node reads on the metadata port, and MLU responses with a fault.
    pub meta_reads: u64,
    pub faults: u64,
    /// Clock cycles simulated in all (kernels, host operations, fills).
    pub sim_cycles: u64,
}

pub struct SmPipelineDriver<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize>
{
    pub uut: SmPipeline<W, WW, N, IW, Q, QW>,
    pub rt: Runtime,
    mode: Mode,
    pub cycle: u64,
}

impl<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize>
    SmPipelineDriver<W, WW, N, IW, Q, QW>
{
    /// A pipeline for `mlu` (its entry count must be N), reset, with the
    /// timing of `p` (`hit_under_miss` and `host_locations` are not built).
    pub fn new(mlu: &MluConfig, p: &PipelineConfig, seed: u64) -> anyhow::Result<Self> {
        anyhow::ensure!(mlu.entries == N, "MLU entries {} but the pipeline is built with {N}", mlu.entries);
        anyhow::ensure!(!p.hit_under_miss && !p.host_locations, "the RTL pipeline builds neither extension");
        anyhow::ensure!(p.max_outstanding <= Q, "max_outstanding {} > the memory's {Q} slots", p.max_outstanding);
        anyhow::ensure!(p.mem_latency < 1 << 31 && p.meta_latency < 1 << 31, "latencies must fit 31 bits");
        let params = UnitMlu::params(mlu);
        mlu.validate(sim::config::Target::Hardware).map_err(|e| anyhow::anyhow!("MLU configuration: {e}"))?;
        let rt = Runtime::new(RuntimeConfig { mlu: mlu.clone(), seed, ..RuntimeConfig::default() })
            .map_err(|e| anyhow::anyhow!("MLU configuration: {e}"))?;
        let mut uut = SmPipeline::<W, WW, N, IW, Q, QW>::new(&params);
        uut.connect_all();
        let mut d = SmPipelineDriver { uut, rt, mode: mlu.mode, cycle: 0 };
        d.uut.data_latency.next = p.mem_latency.into();
        d.uut.meta_latency.next = p.meta_latency.into();
        d.uut.max_outstanding.next = (p.max_outstanding as u64).into();
        d.uut.reset.next = true;
        d.clock();
        d.uut.reset.next = false;
        d.settle();
        Ok(d)
    }

    fn settle(&mut self) {
        assert!(simulate(&mut self.uut, 500), "SM pipeline did not settle (combinational loop?)");
    }

    /// Settle, then the clock edge that ends the current cycle.
    fn clock(&mut self) {
        self.settle();
        let mlb = &self.uut.mlu.mlb;
        assert!(!mlb.rs_multi.val() && !mlb.ls_multi.val(), "MLB one-hot assertion failed (cycle {})", self.cycle);
        self.uut.clock.next = true.into();
        self.settle();
        self.uut.clock.next = false.into();
        self.settle();
        self.cycle += 1;
    }

    fn drive_fetch(&mut self, valid: bool, warp: usize, s: Slot) {
        let u = &mut self.uut;
        u.fetch_valid.next = valid;
        u.fetch_warp.next = (warp as u64).into();
        u.fetch_kind.next = s.kind.into();
        u.fetch_count.next = s.count.into();
        u.fetch_ptr.next = s.ptr.into();
        u.fetch_width.next = s.width.into();
        u.fetch_arg.next = s.arg.into();
    }

    /// One host MLU request (run low); waits for its response.
    fn host(&mut self, op: Op, ptr: u64, loc: u64) -> u64 {
        self.uut.host_req_valid.next = true;
        self.uut.host_req_op.next = (op as u64).into();
        self.uut.host_req_ptr.next = ptr.into();
        self.uut.host_req_loc.next = loc.into();
        self.settle();
        assert!(self.uut.mlu_req_ready.val(), "MLU busy between kernels");
        self.clock();
        self.uut.host_req_valid.next = false;
        for _ in 0..100 {
            self.settle();
            if self.uut.mlu_resp_valid.val() {
                let fault = self.uut.mlu_resp_fault.val().to_u64();
                self.clock();
                return fault;
            }
            assert!(!self.uut.meta_node_req.val(), "host operation read metadata");
            self.clock();
        }
        panic!("host {op:?} got no response");
    }

    fn csr(&mut self, addr: u64, data: u64) {
        self.uut.csr_we.next = true;
        self.uut.csr_addr.next = addr.into();
        self.uut.csr_data.next = data.into();
        self.clock();
        self.uut.csr_we.next = false;
    }

    /// The runtime's host operations since the last call, in order.
    fn sync(&mut self) {
        for op in self.rt.take_host_ops() {
            match op {
                HostOp::Invalidate(loc) => {
                    assert_eq!(self.host(Op::Invalidate, 0, loc), 0, "INVALIDATE faulted")
                }
                HostOp::Flush => assert_eq!(self.host(Op::Flush, 0, 0), 0, "FLUSH faulted"),
                HostOp::Root(r) => self.csr(CSR_ROOT, r),
            }
        }
    }

    /// A warp's stream as slots: what the pipeline executes in this mode
    /// (HWONLY drops LOADMETA, as `sim::sm_pipeline`), then END.
    fn slots(&self, k: &Kernel, ptrs: &[u64], w: usize) -> Vec<Slot> {
        let mut v = Vec::new();
        for i in &k.warps[w] {
            v.push(match *i {
                Instr::Alu(n) => Slot { kind: K_ALU, count: n as u64, ..END },
                Instr::LoadMeta { arg } => {
                    if self.mode == Mode::Hwonly {
                        continue;
                    }
                    let a = arg as usize;
                    Slot { kind: K_LOADMETA, ptr: ptrs[a].wrapping_add(k.args[a].offset), arg: arg as u64, ..END }
                }
                Instr::MemCheck { arg, off, width } => Slot {
                    kind: K_MEMCHECK,
                    ptr: ptrs[arg as usize].wrapping_add(off),
                    width: width as u64,
                    arg: arg as u64,
                    ..END
                },
                Instr::Load { arg, off } => Slot { kind: K_LOAD, ptr: ptrs[arg as usize].wrapping_add(off), ..END },
                Instr::Store { arg, off } => Slot { kind: K_STORE, ptr: ptrs[arg as usize].wrapping_add(off), ..END },
                // The canary allocator's instructions and the device heap's
                // register pointers run on the pipeline with the unit
                // (sm_pipeline_alloc), not this MLU-only one.
                Instr::Malloc { .. }
                | Instr::Free { .. }
                | Instr::LoadReg { .. }
                | Instr::StoreReg { .. }
                | Instr::LoadMetaReg { .. }
                | Instr::MemCheckReg { .. } => panic!("MALLOC/FREE streams need the pipeline with the canary unit"),
            });
        }
        v.push(END);
        v
    }

    /// Runs one kernel; returns its cycles (`kcycles` at `kdone`).
    pub fn run_kernel(&mut self, k: &Kernel, ptrs: &[u64]) -> u64 {
        assert!(k.warps.len() <= W, "kernel has {} warps, the pipeline {W}", k.warps.len());
        assert!(k.args.len() <= 0xFFFF, "too many arguments for the 16-bit register index");
        let streams: Vec<Vec<Slot>> = (0..W)
            .map(|w| if w < k.warps.len() { self.slots(k, ptrs, w) } else { vec![END] })
            .collect();
        let mut pc = vec![0usize; W];
        // Fill every slot (run low).
        for (w, s) in streams.iter().enumerate() {
            self.drive_fetch(true, w, s[0]);
            self.clock();
            pc[w] = 1;
        }
        self.drive_fetch(false, 0, END);
        // The warps' registers: the location each LOADMETA returned.
        let nargs = k.args.len();
        let mut regs = vec![NO_META; W * nargs.max(1)];
        self.uut.run.next = true;
        let mem = self.rt.memory().clone();
        let start = self.cycle;
        loop {
            self.drive_fetch(false, 0, END);
            self.settle();
            let u = &self.uut;
            let done = u.kdone.val();
            let fetch = u.fetch_req.val().then(|| u.fetch_req_warp.val().to_u64() as usize);
            let (rw, ra) = (u.rf_warp.val().to_u64() as usize, u.rf_arg.val().to_u64() as usize);
            let wb = u.wb_valid.val().then(|| {
                (u.wb_warp.val().to_u64() as usize, u.wb_arg.val().to_u64() as usize, u.wb_loc.val().to_u64())
            });
            let meta = u.meta_node_req.val().then(|| u.meta_node_addr.val().to_u64() << 5);
            if let Some(w) = fetch {
                let s = *streams[w].get(pc[w]).expect("fetch past the END of a stream");
                pc[w] += 1;
                self.drive_fetch(true, w, s);
            }
            self.uut.rf_loc.next = if rw < W && ra < nargs { regs[rw * nargs + ra] } else { NO_META }.into();
            if let Some(a) = meta {
                let words: Vec<Option<u64>> = (0..4).map(|k| mem.read_word(a + 8 * k).ok()).collect();
                let w = |k: usize| words[k].unwrap_or(0).into();
                (self.uut.meta_base.next, self.uut.meta_size_tag.next) = (w(0), w(1));
                (self.uut.meta_link0.next, self.uut.meta_link1.next) = (w(2), w(3));
                self.uut.meta_error.next = words.iter().any(Option::is_none);
            }
            if let Some((w, a, loc)) = wb {
                regs[w * nargs + a] = loc;
            }
            if done {
                let kc = self.uut.kcycles.val().to_u64();
                assert_eq!(kc, self.cycle - start, "kcycles counts the cycles with run high");
                for (w, s) in streams.iter().enumerate() {
                    assert_eq!(pc[w], s.len(), "warp {w} done before its stream ended");
                }
                self.clock();
                self.uut.run.next = false;
                self.drive_fetch(false, 0, END);
                return kc;
            }
            self.clock();
            assert!(self.cycle - start < 50_000_000, "kernel never finished");
        }
    }

    /// Replays a workload (as `sim::sm_pipeline::run_workload` with a runtime).
    pub fn run_workload(&mut self, wl: &Workload) -> anyhow::Result<RtlRun> {
        let mut ptr_of: HashMap<u64, u64> = HashMap::new();
        let mut out = RtlRun::default();
        for item in &wl.items {
            match item {
                Item::Alloc { id, base, size, line } => {
                    let p = self
                        .rt
                        .malloc(*size, Some(*base))
                        .map_err(|e| anyhow::anyhow!("{}:{line}: alloc id {id}: {e}", wl.file))?;
                    self.sync();
                    ptr_of.insert(*id, p);
                }
                Item::Free { id, line } => {
                    let p = ptr_of
                        .remove(id)
                        .ok_or_else(|| anyhow::anyhow!("{}:{line}: free of unknown id {id}", wl.file))?;
                    self.rt.free(p).map_err(|e| anyhow::anyhow!("{}:{line}: free id {id}: {e:?}", wl.file))?;
                    self.sync();
                }
                Item::Kernel { kernel, line } => {
                    let mut ptrs = Vec::new();
                    for a in &kernel.args {
                        ptrs.push(
                            *ptr_of
                                .get(&a.id)
                                .ok_or_else(|| anyhow::anyhow!("{}:{line}: kernel uses unknown id {}", wl.file, a.id))?,
                        );
                    }
                    let c = self.run_kernel(kernel, &ptrs);
                    out.cycles += c;
                    out.kernel_cycles.push(c);
                }
            }
        }
        self.settle();
        let u = &self.uut;
        out.issued = u.cnt_issued.val().to_u64();
        out.loads = u.cnt_loads.val().to_u64();
        out.stores = u.cnt_stores.val().to_u64();
        out.mlu_ops = u.cnt_mlu_ops.val().to_u64();
        assert_eq!(u.cnt_cycles.val().to_u64(), out.cycles & 0xFFFF_FFFF, "cnt_cycles");
        out.meta_reads = u.cnt_meta_reads.val().to_u64();
        out.faults = u.cnt_mlu_faults.val().to_u64();
        out.sim_cycles = self.cycle;
        Ok(out)
    }
}
