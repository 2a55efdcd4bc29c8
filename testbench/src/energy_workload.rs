//! Closed-loop workloads of the MLU and the canary allocator unit, recorded
//! on their Verilog ([`Recorder`]) with the memory each one talks to, as
//! gate-level stimuli for `mlugen synth`'s energy runs (the outputs recorded
//! too, so the replay is checked cycle by cycle against the RTL).
//!
//! Every workload starts from reset (warm-up, not measured) and measures a
//! window of whole operations issued back to back: from the cycle the first
//! measured operation is taken to the cycle the operation after the last one
//! is taken (so each operation's share is one issue period), growing until
//! it is at least `min_cycles` long. Each response is checked against the
//! golden model while recording (an RTL that does not do the operation is an
//! error, not a figure).
//!
//! MLU (metadata memory: [`MemPort`] over the runtime's image, latency 1,
//! always ready; compiler mode; the top's structure):
//! - `loadmeta_hit`: LOADMETA of random in-bounds pointers into the N
//!   allocations the warm-up loaded into the MLB (range-search hits);
//! - `memcheck_hit`: MEMCHECK.G (8 bytes, in bounds) with each one's
//!   location: location-search hits, check passes;
//! - `loadmeta_miss`: LOADMETA of allocations never looked up (MLB misses),
//!   each walking the structure to its node; the targets are the ones whose
//!   walk visits the most common number of nodes (the model counts them), so
//!   the walk depth is stated (`nodes_per_op`) and equal for every miss in a
//!   BST; the miss energy includes the walk and the fill;
//! - `idle`: no request, MLB full.
//!
//! Canary unit (heap memory: [`HeapMem`], latency 1; check mode of the
//! committed top, always; requester 0):
//! - `malloc`: malloc(40) back to back (class 64, canaries written);
//! - `free`: free of the chunks the warm-up allocated (both canaries read
//!   and checked, bit cleared, live-list removal);
//! - `check`: background checks back to back (rate 255/256), 16 live chunks;
//! - `idle`: no request, checker rate 0, 16 live chunks.
//!
//! The checker rate is 0 in the malloc, free and idle windows so no
//! background check falls in them; the check window has no requests.
use crate::canary_driver::{Check, Event, HeapMem, ModelReplay, Resp};
use crate::memport::{Latency, MemPort, Rng};
use crate::mlu_driver::Request as MluReq;
use crate::recorder::Recorder;
use crate::verilator::Top;
use anyhow::{anyhow, bail, ensure, Context, Result};
use hw::canary::alloc_unit::{CanaryParams, REQUESTERS, RES_OK};
use sim::canary::keyed::CanaryKey;
use sim::config::MluConfig;
use sim::fault::Op;
use sim::memory::MemoryImage;
use sim::runtime::{Runtime, RuntimeConfig};
use sim::meta_port::PortParams;
use sim::mlu_unit::{UnitParams, UnitRequest};
use std::collections::VecDeque;
use synth::activity::Stimulus;

/// Memory latency (cycles) of every recorded workload.
pub const MEMORY_LATENCY: u32 = 1;

/// A named recorded workload, as `synth::sweep::run_with` takes them.
pub type Workload = (String, Stimulus);

// ---------------------------------------------------------------- MLU --


#[derive(Clone, Copy, Debug)]
pub(crate) struct MluDone {
    pub taken_at: usize,
    pub resp_at: usize,
    pub fault: u8,
    pub loc: u64,
}

pub(crate) struct MluRec<'a> {
    pub r: Recorder,
    pub port: MemPort<'a>,
}

impl<'a> MluRec<'a> {
    /// One cycle: the memory's outputs, the request (None: req_valid low,
    /// operands kept), then the edge. Returns (request taken, response).
    pub(crate) fn cycle(&mut self, req: Option<MluReq>) -> Result<(bool, Option<(u8, u64)>)> {
        let o = self.port.outputs();
        self.r.set("mem_req_ready", o.req_ready as u128)?;
        self.r.set("mem_resp_valid", o.resp_valid as u128)?;
        self.r.set("mem_resp_data", o.resp_data as u128)?;
        self.r.set("mem_resp_error", o.resp_error as u128)?;
        self.r.set("req_valid", req.is_some() as u128)?;
        if let Some(q) = req {
            self.r.set("req_op", q.op as u128)?;
            self.r.set("req_ptr", q.ptr as u128)?;
            self.r.set("req_width", q.width as u128)?;
            self.r.set("req_loc", q.loc as u128)?;
            self.r.set("req_sbase", q.sbase as u128)?;
            self.r.set("req_ssize", q.ssize as u128)?;
        }
        self.r.step()?;
        let c = self.r.cycles() - 1;
        if self.r.get("mlb_multi")? != 0 {
            bail!("cycle {c}: the MLB's one-hot assertion (mlb_multi) fired");
        }
        let taken = req.is_some() && self.r.get("req_ready")? != 0;
        let resp = if self.r.get("resp_valid")? != 0 { Some((self.r.get("resp_fault")? as u8, self.r.get("resp_loc")? as u64)) } else { None };
        self.port.edge(self.r.get("mem_req_valid")? != 0, self.r.get("mem_req_addr")? as u64);
        Ok((taken, resp))
    }

    pub(crate) fn reset(&mut self) -> Result<()> {
        self.r.set("reset", 1)?;
        self.cycle(None)?;
        self.r.set("reset", 0)?;
        self.port.reset();
        Ok(())
    }

    pub(crate) fn csr(&mut self, addr: u64, data: u64) -> Result<()> {
        self.r.set("csr_we", 1)?;
        self.r.set("csr_addr", addr as u128)?;
        self.r.set("csr_data", data as u128)?;
        self.cycle(None)?;
        self.r.set("csr_we", 0)
    }

    /// Issue `reqs` back to back (each presented from the cycle after the
    /// previous one was taken). With `min_cycles`, stop at the first
    /// response that ends a window of at least that many cycles from the
    /// first take; else run them all and wait for the last response.
    pub(crate) fn run(&mut self, reqs: &[MluReq], min_cycles: Option<usize>) -> Result<Vec<MluDone>> {
        let mut k = 0;
        let mut pending: VecDeque<usize> = VecDeque::new();
        let mut done = Vec::new();
        let start = self.r.cycles();
        loop {
            let c = self.r.cycles();
            let cur = reqs.get(k).copied();
            if cur.is_none() && pending.is_empty() {
                return Ok(done);
            }
            let (taken, resp) = self.cycle(cur)?;
            if let Some((fault, loc)) = resp {
                let taken_at = pending.pop_front().ok_or_else(|| anyhow!("cycle {c}: a response with no request in flight"))?;
                done.push(MluDone { taken_at, resp_at: c, fault, loc });
                if min_cycles.is_some_and(|m| c - done[0].taken_at >= m) && taken {
                    return Ok(done);
                }
            }
            if taken {
                pending.push_back(c);
                k += 1;
            }
            ensure!(c - start < 1_000_000, "cycle {c}: the MLU stopped answering");
        }
    }
}

fn lm(ptr: u64) -> MluReq {
    MluReq { op: Op::LoadMeta.bits(), ptr, width: 8, ..Default::default() }
}

/// The recorded MLU workloads (`loadmeta_hit`, `memcheck_hit`,
/// `loadmeta_miss`, `idle`) of `top` built for `cfg` (entries, structure),
/// each window at least `min_cycles` long.
pub fn mlu_workloads(top: &Top, cfg: &MluConfig, min_cycles: usize) -> Result<Vec<Workload>> {
    use hw::mlu::CSR_ROOT;
    let n = cfg.entries;
    // Enough allocations for the miss targets beyond the N loaded ones: 6
    // BST levels below the loaded ones for a 16-entry MLU.
    let allocations = 4 * n + 64;
    let mut rt = Runtime::new(RuntimeConfig { mlu: cfg.clone(), ..RuntimeConfig::default() }).map_err(|e| anyhow!("runtime: {e}"))?;
    let mut rng = Rng(0x5eed_e1e7);
    for _ in 0..allocations {
        let size = 256 + 64 * rng.range(0, 60);
        rt.malloc(size, None).map_err(|e| anyhow!("runtime malloc: {e:?}"))?;
    }
    let allocs = rt.allocations().to_vec();
    let img: MemoryImage = rt.memory().clone();
    let (warm, rest) = allocs.split_at(n);
    // Nodes a walk to each remaining allocation visits (model, empty MLB).
    let steps = |p: u64| -> Result<u64> {
        let mut m = rt.clone();
        m.flush_mlb();
        let s0 = m.counters().steps;
        m.loadmeta(p).map_err(|f| anyhow!("model LOADMETA {p:#x} faulted: {f:?}"))?;
        Ok(m.counters().steps - s0)
    };
    let mut depth: Vec<(u64, u64)> = rest.iter().map(|a| Ok((steps(a.ptr)?, a.ptr))).collect::<Result<_>>()?;
    let mut hist = std::collections::BTreeMap::new();
    for (d, _) in &depth {
        *hist.entry(*d).or_insert(0u64) += 1;
    }
    let mode = hist.iter().max_by_key(|(d, c)| (**c, **d)).map(|(d, _)| *d).context("no miss targets")?;
    // The mode first, then the nearest depths (a list has one node per depth).
    depth.sort_by_key(|(d, p)| (d.abs_diff(mode), *d, *p));
    let mut out = Vec::new();
    for w in ["loadmeta_hit", "memcheck_hit", "loadmeta_miss", "idle"] {
        let mut r = MluRec { r: Recorder::start(top, 1)?, port: MemPort::new(&img, Latency::Fixed(MEMORY_LATENCY), 1) };
        r.reset()?;
        r.csr(CSR_ROOT, rt.root())?;
        let wdone = r.run(&warm.iter().map(|a| lm(a.ptr)).collect::<Vec<_>>(), None)?;
        for (d, a) in wdone.iter().zip(warm) {
            ensure!(d.fault == 0 && d.loc == a.location, "warm-up LOADMETA {:#x}: RTL fault {} location {:#x}, model location {:#x}", a.ptr, d.fault, d.loc, a.location);
        }
        for _ in 0..2 {
            r.cycle(None)?;
        }
        let (op, reqs): (&str, Vec<MluReq>) = match w {
            "loadmeta_hit" => (
                "LOADMETA, MLB range-search hit",
                (0..min_cycles + 8).map(|_| {
                    let a = &warm[rng.range(0, n as u64 - 1) as usize];
                    lm(a.ptr + rng.range(0, a.size - 1))
                }).collect(),
            ),
            "memcheck_hit" => (
                "MEMCHECK.G (8 B, in bounds), MLB location-search hit",
                (0..min_cycles + 8).map(|_| {
                    let a = &warm[rng.range(0, n as u64 - 1) as usize];
                    MluReq { op: Op::MemcheckG.bits(), ptr: a.ptr + 8 * rng.range(0, a.size / 8 - 1), width: 8, loc: a.location, ..Default::default() }
                }).collect(),
            ),
            "loadmeta_miss" => ("LOADMETA, MLB miss: walk, fill, response", depth.iter().map(|(_, p)| lm(*p)).collect()),
            _ => ("idle cycle (MLB full)", vec![]),
        };
        let t0 = r.r.cycles();
        let (warmup, end, ops, done) = if reqs.is_empty() {
            // One cycle more, so the counters after the window are recorded.
            for _ in 0..=min_cycles {
                r.cycle(None)?;
            }
            (t0, t0 + min_cycles, min_cycles as f64, vec![])
        } else {
            let done = r.run(&reqs, Some(min_cycles))?;
            let last = done.last().context("no operation completed")?;
            (done[0].taken_at, last.resp_at, done.len() as f64, done)
        };
        // Every answer as the model gives it (faults and locations).
        for (d, q) in done.iter().zip(&reqs) {
            ensure!(d.fault == 0, "{w}: request at cycle {}: RTL fault {}, model none", d.taken_at, d.fault);
            if q.op == Op::LoadMeta.bits() {
                let loc = rt.clone().loadmeta(q.ptr).map_err(|f| anyhow!("model LOADMETA {:#x} faulted: {f:?}", q.ptr))?;
                ensure!(d.loc == loc, "{w}: LOADMETA {:#x} at cycle {}: RTL location {:#x}, model {loc:#x}", q.ptr, d.taken_at, d.loc);
            }
        }
        let at = |c: usize, p: &str| r.r.output_at(c, p);
        let delta = |p: &str| -> Result<u64> { Ok((at(end, p)? - at(warmup, p)?) as u64) };
        let k = done.len() as u64;
        match w {
            "loadmeta_hit" => ensure!(delta("cnt_range_hits")? == k && delta("cnt_range_misses")? == 0, "{w}: the MLB counted {} hits and {} misses in {k} lookups", delta("cnt_range_hits")?, delta("cnt_range_misses")?),
            "memcheck_hit" => ensure!(delta("cnt_loc_hits")? == k && delta("cnt_faults")? == 0, "{w}: {} location hits and {} faults in {k} checks", delta("cnt_loc_hits")?, delta("cnt_faults")?),
            "loadmeta_miss" => ensure!(delta("cnt_range_misses")? == k, "{w}: {} misses in {k} lookups", delta("cnt_range_misses")?),
            _ => ensure!(delta("cnt_meta_reads")? == 0, "{w}: metadata reads while idle"),
        }
        let mut st = r.r.stimulus(end, warmup, 1, op, ops)?;
        st.facts.push(("memory_latency".into(), MEMORY_LATENCY as f64));
        st.facts.push(("cycles_per_op".into(), (end - warmup) as f64 / ops));
        if w == "loadmeta_miss" {
            st.facts.push(("nodes_per_op".into(), delta("cnt_steps")? as f64 / ops));
            st.facts.push(("meta_reads_per_op".into(), delta("cnt_meta_reads")? as f64 / ops));
            let ds: Vec<u64> = depth.iter().take(done.len()).map(|d| d.0).collect();
            st.facts.push(("nodes_min".into(), *ds.iter().min().unwrap_or(&0) as f64));
            st.facts.push(("nodes_max".into(), *ds.iter().max().unwrap_or(&0) as f64));
            st.facts.push(("allocations".into(), allocations as f64));
        }
        r.r.finish()?;
        out.push((w.to_string(), st));
    }
    Ok(out)
}

// ----------------------------------------------------------- MLU unit --

/// The recorded workloads of an MLU unit top (hw::mlu_unit, built for `p`),
/// each window at least `min_cycles` long, over a heap of N + `min_cycles` +
/// 64 allocations of 256 to 4,096 bytes whose first N the warm-up loads into
/// the MLB (LOADMETA each); the metadata port answers every read after
/// [`MEMORY_LATENCY`] cycles, always ready, no errors:
/// - `loadmeta_hit`: LOADMETA of a random pointer into a loaded allocation,
///   one per cycle (range-search hits);
/// - `memcheck_hit`: warp-wide MEMCHECK.G, every lane active, 8 bytes per
///   lane, the lanes consecutive 8-byte words of one loaded allocation (as a
///   coalesced warp access), with its location: location-search hits, every
///   lane passes; one per cycle;
/// - `loadmeta_miss`: LOADMETA of allocations never looked up, back to back,
///   each an MLB miss that walks the structure (K walks in flight), fills
///   and answers; `nodes_per_op` is the nodes the walks visited in the
///   window per operation (the model's count);
/// - `idle`: no request, MLB full.
///
/// The stimuli are made by the model and checked against the RTL
/// (unit_driver::record_workload); each window's counters must show the
/// operation it names (hits only, misses only, no fault, no read when idle).
pub fn unit_workloads(top: &Top, p: &UnitParams, min_cycles: usize) -> Result<Vec<Workload>> {
    let n = p.cfg.entries;
    let allocations = n + min_cycles + 64;
    let mut rt = Runtime::new(RuntimeConfig { mlu: p.cfg.clone(), ..RuntimeConfig::default() }).map_err(|e| anyhow!("runtime: {e}"))?;
    let mut rng = Rng(0x5eed_e1e7);
    for _ in 0..allocations {
        let size = 256 + 64 * rng.range(0, 60);
        rt.malloc(size, None).map_err(|e| anyhow!("runtime malloc: {e:?}"))?;
    }
    let allocs = rt.allocations().to_vec();
    let (warm, rest) = allocs.split_at(n);
    let port = PortParams { min_latency: MEMORY_LATENCY, max_latency: MEMORY_LATENCY, ready_percent: 100, errors_per_million: 0, shuffle: false, seed: 1 };
    let lanes = p.lanes;
    let mut id = 0u32;
    let mut req = |op: Op, mask: u32, ptrs: Vec<u64>, loc: u64| {
        id = (id + 1) & 0xFFFF;
        UnitRequest { id, op, mask, ptrs, width: 8, loc, sbase: 0, ssize: 0 }
    };
    let lane0 = |ptr: u64| (0..lanes).map(|k| if k == 0 { ptr } else { 0 }).collect::<Vec<u64>>();
    let all_lanes = if lanes == 32 { u32::MAX } else { (1u32 << lanes) - 1 };
    let warm_reqs: Vec<UnitRequest> = warm.iter().map(|a| req(Op::LoadMeta, 1, lane0(a.ptr), 0)).collect();
    // Enough operations for a window of `min_cycles` at one per cycle.
    let hits = min_cycles + 16;
    let mut out = Vec::new();
    for w in ["loadmeta_hit", "memcheck_hit", "loadmeta_miss", "idle"] {
        let (op, measured): (String, Option<Vec<UnitRequest>>) = match w {
            "loadmeta_hit" => (
                "LOADMETA, MLB range-search hit".into(),
                Some((0..hits).map(|_| {
                    let a = &warm[rng.range(0, n as u64 - 1) as usize];
                    req(Op::LoadMeta, 1, lane0(a.ptr + rng.range(0, a.size - 1)), 0)
                }).collect()),
            ),
            "memcheck_hit" => (
                format!("MEMCHECK.G, {lanes} lane(s) of 8 B in bounds, MLB location-search hit"),
                Some((0..hits).map(|_| {
                    let a = &warm[rng.range(0, n as u64 - 1) as usize];
                    let words = a.size / 8;
                    let first = rng.range(0, words - 1);
                    let ptrs = (0..lanes as u64).map(|k| a.ptr + 8 * ((first + k) % words)).collect();
                    req(Op::MemcheckG, all_lanes, ptrs, a.location)
                }).collect()),
            ),
            "loadmeta_miss" => (
                format!("LOADMETA, MLB miss: walk, fill, response ({} walkers)", p.walkers),
                Some(rest.iter().map(|a| req(Op::LoadMeta, 1, lane0(a.ptr + rng.range(0, a.size - 1)), 0)).collect()),
            ),
            _ => ("idle cycle (MLB full)".into(), None),
        };
        let r = crate::unit_driver::record_workload(top, p, &rt, port, warm_reqs.clone(), measured, min_cycles, &op).with_context(|| format!("workload {w}"))?;
        let (b, a) = (r.before, r.after);
        let d = |f: fn(&sim::mlu_unit::UnitCounters) -> u64| f(&a) - f(&b);
        let (lookups, hits_, misses, faults, nodes, reads) = (d(|c| c.lookups), d(|c| c.hits), d(|c| c.misses), d(|c| c.faults), d(|c| c.nodes), d(|c| c.reads));
        match w {
            "loadmeta_hit" | "memcheck_hit" => ensure!(lookups > 0 && hits_ == lookups && misses == 0 && faults == 0, "{w}: the window counts {lookups} lookups, {hits_} hits, {misses} misses, {faults} faults"),
            "loadmeta_miss" => ensure!(misses > 0 && hits_ == 0 && faults == 0 && nodes > 0, "{w}: the window counts {misses} misses, {hits_} hits, {faults} faults, {nodes} nodes"),
            _ => ensure!(reads == 0 && lookups == 0, "{w}: {reads} metadata reads and {lookups} lookups while idle"),
        }
        let mut st = r.stimulus;
        let ops = r.ops as f64;
        st.facts.push(("memory_latency".into(), MEMORY_LATENCY as f64));
        st.facts.push(("cycles_per_op".into(), 1.0 / st.ops_per_cycle));
        st.facts.push(("lanes".into(), lanes as f64));
        st.facts.push(("walkers".into(), p.walkers as f64));
        if w == "loadmeta_miss" {
            st.facts.push(("nodes_per_op".into(), nodes as f64 / ops));
            st.facts.push(("meta_reads_per_op".into(), reads as f64 / ops));
            st.facts.push(("allocations".into(), allocations as f64));
        }
        out.push((w.to_string(), st));
    }
    Ok(out)
}

// ------------------------------------------------------------- canary --

/// The secret key the canary workloads load (any key does).
pub const CANARY_KEY: CanaryKey = CanaryKey { k0: 0x243f_6a88_85a3_08d3, k1: 0x1319_8a2e_0370_7344 };

#[derive(Default)]
pub(crate) struct CanaryOut {
    pub grant: Option<usize>,
    pub resp: Option<Resp>,
    pub check: Option<Check>,
}

/// The canary unit on its recorder, with its heap memory and the model
/// every grant, response and check is applied to (an error on any
/// difference).
pub(crate) struct CanaryRec {
    pub r: Recorder,
    pub mem: HeapMem,
    pub model: ModelReplay,
}

impl CanaryRec {
    /// Start `top`'s recorder with its heap memory (latency
    /// [`MEMORY_LATENCY`]) and the model; one cycle of reset that also loads
    /// [`CANARY_KEY`]; checker rate 0.
    pub(crate) fn start(top: &Top, params: &CanaryParams) -> Result<CanaryRec> {
        let mut r = CanaryRec {
            r: Recorder::start(top, 1)?,
            mem: HeapMem::new(params.base, MEMORY_LATENCY as u64),
            model: ModelReplay::new(params, CANARY_KEY, 0).map_err(|e| anyhow!(e))?,
        };
        r.r.set("reset", 1)?;
        r.r.set("key_we", 1)?;
        r.r.set("key_k0", CANARY_KEY.k0 as u128)?;
        r.r.set("key_k1", CANARY_KEY.k1 as u128)?;
        r.r.set("rate", 0)?;
        r.step(&[None; REQUESTERS])?;
        r.r.set("reset", 0)?;
        r.r.set("key_we", 0)?;
        Ok(r)
    }

    pub(crate) fn step(&mut self, reqs: &[Option<(bool, u64)>; REQUESTERS]) -> Result<CanaryOut> {
        let c = self.r.cycles();
        for (i, q) in reqs.iter().enumerate() {
            self.r.set(&format!("req_valid_{i}"), q.is_some() as u128)?;
            if let Some((free, arg)) = q {
                self.r.set(&format!("req_free_{i}"), *free as u128)?;
                self.r.set(&format!("req_arg_{i}"), *arg as u128)?;
            }
        }
        let rd = self.mem.response(c as u64);
        self.r.set("mem_rvalid", rd.is_some() as u128)?;
        if let Some(d) = rd {
            self.r.set("mem_rdata", d as u128)?;
        }
        self.r.step()?;
        let g = |s: &Self, n: &str| s.r.get(n).map(|v| v as u64);
        let mut o = CanaryOut::default();
        for i in 0..REQUESTERS {
            if g(self, &format!("req_grant_{i}"))? != 0 {
                ensure!(o.grant.is_none(), "cycle {c}: two grants in one cycle");
                o.grant = Some(i);
            }
        }
        if g(self, "mem_valid")? != 0 {
            self.mem.request(c as u64, g(self, "mem_we")? != 0, g(self, "mem_addr")?, g(self, "mem_wdata")?).map_err(|e| anyhow!(e))?;
        }
        if g(self, "resp_valid")? != 0 {
            let r = Resp {
                id: g(self, "resp_id")? as usize,
                free: g(self, "resp_free")? != 0,
                code: g(self, "resp_code")?,
                ptr: g(self, "resp_ptr")?,
                size: g(self, "resp_size")?,
                front: g(self, "resp_front")? != 0,
                rear: g(self, "resp_rear")? != 0,
            };
            self.model.apply(&Event::Resp(r.clone())).map_err(|e| anyhow!("cycle {c}: {e}"))?;
            o.resp = Some(r);
        }
        if g(self, "chk_done")? != 0 {
            let k = Check { chunk: g(self, "chk_chunk")?, front: g(self, "chk_front")? != 0, rear: g(self, "chk_rear")? != 0 };
            self.model.apply(&Event::Check(k.clone())).map_err(|e| anyhow!("cycle {c}: {e}"))?;
            o.check = Some(k);
        }
        if let Some(i) = o.grant {
            let (free, arg) = reqs[i].ok_or_else(|| anyhow!("cycle {c}: grant to requester {i} without a request"))?;
            self.model.apply(&Event::Grant { id: i, free, arg }).map_err(|e| anyhow!("cycle {c}: {e}"))?;
        }
        Ok(o)
    }

    /// Requester 0 issues `ops` back to back: each presented until granted,
    /// the next from the cycle after the previous response. With
    /// `min_cycles`, stops at the grant that closes a window of at least
    /// that many cycles (not counted); returns the grant cycles and the
    /// responses of the ops granted before.
    pub(crate) fn run(&mut self, ops: &[(bool, u64)], min_cycles: Option<usize>) -> Result<(Vec<usize>, Vec<Resp>)> {
        let (mut grants, mut resps) = (Vec::new(), Vec::new());
        let mut k = 0;
        let mut waiting = false;
        let start = self.r.cycles();
        loop {
            let c = self.r.cycles();
            if !waiting && k == ops.len() {
                return Ok((grants, resps));
            }
            let mut reqs = [None; REQUESTERS];
            if !waiting {
                reqs[0] = Some(ops[k]);
            }
            let o = self.step(&reqs)?;
            if let Some(r) = o.resp {
                ensure!(r.code == RES_OK, "cycle {c}: {} answered with code {}", if r.free { "free" } else { "malloc" }, r.code);
                resps.push(r);
                waiting = false;
            }
            if o.grant.is_some() {
                grants.push(c);
                if min_cycles.is_some_and(|m| c - grants[0] >= m) {
                    return Ok((grants, resps));
                }
                waiting = true;
                k += 1;
            }
            ensure!(c - start < 1_000_000, "cycle {c}: the canary unit stopped answering");
        }
    }
}

/// The recorded canary-unit workloads (`malloc`, `free`, `check`, `idle`)
/// of `top` (generated with `params`), windows of at least `min_cycles`.
pub fn canary_workloads(top: &Top, params: &CanaryParams, min_cycles: usize) -> Result<Vec<Workload>> {
    let mut out = Vec::new();
    for w in ["malloc", "free", "check", "idle"] {
        let mut r = CanaryRec::start(top, params)?;
        // Frees take ~30 cycles: enough chunks for the window (the heap holds 64).
        let live = match w {
            "malloc" => 0,
            "free" => (min_cycles / 20 + 4).min(60),
            _ => 16,
        };
        let (_, resps) = r.run(&vec![(false, 40); live], None)?;
        for _ in 0..2 {
            r.step(&[None; REQUESTERS])?;
        }
        let (op, warmup, end, ops) = match w {
            "malloc" => {
                let (g, _) = r.run(&vec![(false, 40); 60], Some(min_cycles))?;
                ensure!(g.len() >= 2, "malloc: fewer than two grants (heap too small for the window?)");
                ("malloc(40): probe, claim, both canaries written, live-list insert", g[0], *g.last().unwrap(), g.len() - 1)
            }
            "free" => {
                let ops: Vec<(bool, u64)> = resps.iter().map(|x| (true, x.ptr)).collect();
                let (g, fr) = r.run(&ops, Some(min_cycles))?;
                ensure!(g.len() >= 2, "free: fewer than two grants");
                ensure!(fr.iter().all(|x| !x.front && !x.rear), "free: an overflow reported on an untouched chunk");
                ("free (check-on-free: both canaries read and checked), live-list removal", g[0], *g.last().unwrap(), g.len() - 1)
            }
            "check" => {
                r.r.set("rate", 255)?;
                let mut done = Vec::new();
                let start = r.r.cycles();
                while done.len() < 2 || done.last().unwrap() - done[0] < min_cycles {
                    let o = r.step(&[None; REQUESTERS])?;
                    if let Some(k) = o.check {
                        ensure!(!k.front && !k.rear, "check: an overflow reported on an untouched chunk {:#x}", k.chunk);
                        done.push(r.r.cycles() - 1);
                    }
                    ensure!(r.r.cycles() - start < 1_000_000, "the checker does not run");
                }
                ("background check of one live chunk (both canaries)", done[0] + 1, *done.last().unwrap() + 1, done.len() - 1)
            }
            _ => {
                let t0 = r.r.cycles();
                for _ in 0..min_cycles {
                    r.step(&[None; REQUESTERS])?;
                }
                ("idle cycle (16 live chunks, checker rate 0)", t0, t0 + min_cycles, min_cycles)
            }
        };
        let mut st = r.r.stimulus(end, warmup, 1, op, ops as f64)?;
        st.facts.push(("memory_latency".into(), MEMORY_LATENCY as f64));
        st.facts.push(("cycles_per_op".into(), (end - warmup) as f64 / ops as f64));
        st.facts.push(("live_chunks".into(), live as f64));
        r.r.finish()?;
        out.push((w.to_string(), st));
    }
    Ok(out)
}

/// The canary parameters the committed top was generated with, from its
/// manifest; an error names the parameter that is not this unit's.
pub fn canary_params(top: &Top) -> Result<CanaryParams> {
    let d = CanaryParams::default();
    let p = &top.manifest.parameters;
    let s = |k: &str| p.get(k).map(|v| v.to_string().trim_matches('"').to_string());
    let want = [
        ("base", format!("{:#x}", d.base)),
        ("check", "always".to_string()),
        ("slack", d.slack.to_string()),
        ("k_s", d.k_s.to_string()),
        ("k_mp", d.k_mp.to_string()),
    ];
    for (k, v) in want {
        if s(k).as_deref() != Some(v.as_str()) {
            bail!("{}: parameter {k} is {:?}; the energy workloads are built for the default unit ({k} = {v})", top.name(), s(k));
        }
    }
    Ok(d)
}
