//! Cosimulation of the MLU as an SM unit: `hw::mlu_unit::MluUnit` as
//! emitted Verilog, under Verilator through the generic cycle harness
//! (`portvec.cpp`), against its golden twin `sim::mlu_unit::MluUnit`, every
//! output compared every cycle.
//!
//! The model is cycle-accurate, so the driver runs it ahead of the RTL: for a
//! batch of cycles it computes each cycle's inputs (the request at the head
//! of the stream; the metadata port's answer, from [`PortSim`], to the
//! model's own port request) and the outputs the RTL must give, sends the
//! inputs to Verilator and compares. The inputs after a mismatch assumed the
//! model's outputs, so the first mismatch ends the run and is reported with
//! its cycle, port, expected and actual value.
//!
//! Cycle 0 resets the unit, cycle 1 writes the ROOT CSR, and the stream
//! starts at cycle 2 (the model's cycle 0). Throughput and latency are
//! measured from the RTL's own outputs ([`UnitRun::taken_at`],
//! [`UnitRun::answered_at`]), not from the model.
use crate::harness::{portvec_cpp, CycleSim};
use crate::verilator::{build_with_cxx_opt, BuildSpec, Built, Layout, PortSlot, Top};
use anyhow::{anyhow, Result};
use hw::mlu::{CSR_HEAP_BASE, CSR_HEAP_DIR, CSR_HEAP_MASK, CSR_MODE, CSR_ROOT, CSR_STEP_LIMIT, CSR_STRUCTURE};
use sim::mlu::HeapWindow;
use sim::config::{Mode, Structure};
use sim::fault::Op;
use sim::meta_port::{PortParams, PortSim};
use sim::mlu_unit::{MluUnit, UnitCounters, UnitIn, UnitOut, UnitParams, UnitRequest};
use sim::walker::MemResp;
use sim::runtime::Runtime;
use crate::unit_stimulus::{heap, RandomRequests};
use synth::activity::Stimulus;
use std::iter::Peekable;

/// Cycles per batch sent to Verilator.
const BATCH: usize = 2048;

/// The unit's ports in the harness records.
struct UnitPorts {
    /// Bytes of one cycle's input record.
    in_bytes: usize,
    reset: PortSlot,
    req_valid: PortSlot,
    req_id: PortSlot,
    req_op: PortSlot,
    req_mask: Vec<PortSlot>,
    req_ptr: Vec<PortSlot>,
    req_width: PortSlot,
    req_loc: PortSlot,
    req_sbase: PortSlot,
    req_ssize: PortSlot,
    mem_req_ready: PortSlot,
    mem_resp_valid: PortSlot,
    mem_resp_id: PortSlot,
    mem_resp_error: PortSlot,
    /// base, size_tag, link0, link1: the node's four words.
    mem_resp_words: [PortSlot; 4],
    csr_we: PortSlot,
    csr_addr: PortSlot,
    csr_data: PortSlot,
    req_ready: PortSlot,
    mem_req_valid: PortSlot,
    mem_req_id: PortSlot,
    mem_req_node: PortSlot,
    resp_valid: PortSlot,
    resp_id: PortSlot,
    resp_op: PortSlot,
    resp_pass: Vec<PortSlot>,
    resp_addr: Vec<PortSlot>,
    resp_fault: PortSlot,
    resp_lane: PortSlot,
    resp_loc: PortSlot,
    resp_meta_valid: PortSlot,
    resp_base: PortSlot,
    resp_size: PortSlot,
    resp_tag: PortSlot,
    /// cnt_lookups, cnt_hits, cnt_misses, cnt_merged, cnt_nodes, cnt_faults.
    cnt: [PortSlot; 6],
}

impl UnitPorts {
    fn new(l: &Layout, lanes: usize) -> Result<UnitPorts> {
        let i = |n: &str| l.input(n);
        let o = |n: &str| l.output(n);
        let each = |f: &dyn Fn(&str) -> Result<PortSlot>, n: &str| (0..lanes).map(|k| f(&format!("{n}_{k}"))).collect::<Result<Vec<_>>>();
        Ok(UnitPorts {
            in_bytes: l.in_bytes,
            reset: i("reset")?,
            req_valid: i("req_valid")?,
            req_id: i("req_id")?,
            req_op: i("req_op")?,
            req_mask: each(&i, "req_mask")?,
            req_ptr: each(&i, "req_ptr")?,
            req_width: i("req_width")?,
            req_loc: i("req_loc")?,
            req_sbase: i("req_sbase")?,
            req_ssize: i("req_ssize")?,
            mem_req_ready: i("mem_req_ready")?,
            mem_resp_valid: i("mem_resp_valid")?,
            mem_resp_id: i("mem_resp_id")?,
            mem_resp_error: i("mem_resp_error")?,
            mem_resp_words: [i("mem_resp_base")?, i("mem_resp_size_tag")?, i("mem_resp_link0")?, i("mem_resp_link1")?],
            csr_we: i("csr_we")?,
            csr_addr: i("csr_addr")?,
            csr_data: i("csr_data")?,
            req_ready: o("req_ready")?,
            mem_req_valid: o("mem_req_valid")?,
            mem_req_id: o("mem_req_id")?,
            mem_req_node: o("mem_req_node")?,
            resp_valid: o("resp_valid")?,
            resp_id: o("resp_id")?,
            resp_op: o("resp_op")?,
            resp_pass: each(&o, "resp_pass")?,
            resp_addr: each(&o, "resp_addr")?,
            resp_fault: o("resp_fault")?,
            resp_lane: o("resp_lane")?,
            resp_loc: o("resp_loc")?,
            resp_meta_valid: o("resp_meta_valid")?,
            resp_base: o("resp_base")?,
            resp_size: o("resp_size")?,
            resp_tag: o("resp_tag")?,
            cnt: [o("cnt_lookups")?, o("cnt_hits")?, o("cnt_misses")?, o("cnt_merged")?, o("cnt_nodes")?, o("cnt_faults")?],
        })
    }

    /// One cycle's input record.
    fn encode(&self, rec: &mut [u8], req: Option<&UnitRequest>, ready: bool, resp: Option<&MemResp>) {
        rec.fill(0);
        if let Some(r) = req {
            self.req_valid.put(rec, 1);
            self.req_id.put(rec, r.id as u64);
            self.req_op.put(rec, r.op.bits() as u64);
            for (k, (m, p)) in self.req_mask.iter().zip(&self.req_ptr).enumerate() {
                m.put(rec, (r.mask >> k & 1) as u64);
                p.put(rec, r.ptrs[k]);
            }
            self.req_width.put(rec, r.width as u64);
            self.req_loc.put(rec, r.loc);
            self.req_sbase.put(rec, r.sbase);
            self.req_ssize.put(rec, r.ssize);
        }
        self.mem_req_ready.put(rec, ready as u64);
        if let Some(m) = resp {
            self.mem_resp_valid.put(rec, 1);
            self.mem_resp_id.put(rec, m.id as u64);
            self.mem_resp_error.put(rec, m.data.is_none() as u64);
            for (p, w) in self.mem_resp_words.iter().zip(m.data.unwrap_or([0; 4])) {
                p.put(rec, w);
            }
        }
    }

    /// The outputs of `rec` that differ from the model's `e`, as
    /// (port, expected, actual).
    fn compare(&self, e: &UnitOut, rec: &[u8]) -> Vec<(String, u64, u64)> {
        self.expected(e).into_iter().filter_map(|(want, p)| (p.get(rec) != want).then(|| (p.name.clone(), want, p.get(rec)))).collect()
    }

    /// Every output the model defines in a cycle whose outputs are `e`, as
    /// (value, port): the valid bits always, a request's or a
    /// response's fields while it is valid, the metadata while meta_valid,
    /// the counters in a cycle that starts idle. Every cycle of every run
    /// goes through here, so no names are built (a port's is its slot's).
    fn expected(&self, e: &UnitOut) -> Vec<(u64, &PortSlot)> {
        let mut checks: Vec<(u64, &PortSlot)> = vec![
            (e.req_ready as u64, &self.req_ready),
            (e.mem_req.is_some() as u64, &self.mem_req_valid),
            (e.resp.is_some() as u64, &self.resp_valid),
        ];
        if let Some(c) = &e.idle_counters {
            let v = [c.lookups, c.hits, c.misses, c.merged, c.nodes, c.faults];
            for (p, x) in self.cnt.iter().zip(v) {
                checks.push((x & 0xFFFF_FFFF, p));
            }
        }
        if let Some(m) = &e.mem_req {
            checks.push((m.id as u64, &self.mem_req_id));
            checks.push((m.addr >> 5, &self.mem_req_node));
        }
        if let Some(r) = &e.resp {
            checks.push((r.id as u64, &self.resp_id));
            checks.push((r.op.bits() as u64, &self.resp_op));
            for (k, (p, a)) in self.resp_pass.iter().zip(&self.resp_addr).enumerate() {
                checks.push(((r.pass >> k & 1) as u64, p));
                checks.push((r.addrs[k], a));
            }
            checks.push((r.fault.bits() as u64, &self.resp_fault));
            checks.push((r.lane as u64, &self.resp_lane));
            checks.push((r.loc, &self.resp_loc));
            checks.push((r.meta.is_some() as u64, &self.resp_meta_valid));
            if let Some(m) = r.meta {
                checks.push((m.base, &self.resp_base));
                checks.push((m.size, &self.resp_size));
                checks.push((m.tag as u64, &self.resp_tag));
            }
        }
        checks
    }
}

/// One cycle's inputs as the driver computes them.
struct CycleIn {
    req: Option<UnitRequest>,
    mem_req_ready: bool,
    mem_resp: Option<MemResp>,
}

/// The model run ahead of the RTL: a request stream, the metadata port
/// answering the model's own reads, the model itself. The stream can be
/// replaced between phases (a warm-up, then the measured requests).
struct ModelAhead<'a> {
    model: MluUnit,
    port: PortSim,
    stream: Peekable<Box<dyn Iterator<Item = UnitRequest> + 'a>>,
}

impl<'a> ModelAhead<'a> {
    fn new(p: &UnitParams, rt: &Runtime, stream: impl Iterator<Item = UnitRequest> + 'a, port: PortParams) -> Result<Self> {
        let mut model = MluUnit::new(p).map_err(|e| anyhow!("unit parameters: {e}"))?;
        model.set_root(rt.root());
        let stream: Box<dyn Iterator<Item = UnitRequest> + 'a> = Box::new(stream);
        Ok(ModelAhead { model, port: PortSim::new(port), stream: stream.peekable() })
    }

    /// Present `stream` from the next cycle on (the rest of the old one is dropped).
    fn set_stream(&mut self, stream: impl Iterator<Item = UnitRequest> + 'a) {
        let stream: Box<dyn Iterator<Item = UnitRequest> + 'a> = Box::new(stream);
        self.stream = stream.peekable();
    }

    /// The next cycle's inputs and the outputs the RTL must give in it;
    /// None once the stream is taken and the model is idle.
    fn next(&mut self, rt: &Runtime) -> Result<Option<(CycleIn, UnitOut)>> {
        if self.stream.peek().is_none() && self.model.is_idle() {
            return Ok(None);
        }
        self.cycle(rt).map(Some)
    }

    /// One cycle, whether or not anything is left to do.
    fn cycle(&mut self, rt: &Runtime) -> Result<(CycleIn, UnitOut)> {
        let o = self.model.outputs();
        // The runtime's memory as the MLU reads it: the image and the device
        // heap's directory.
        let (ready, resp) = self.port.cycle(&rt.meta_memory(), o.mem_req.as_ref());
        let req = self.stream.peek().cloned();
        self.model.tick(UnitIn { req: req.as_ref(), mem_req_ready: ready, mem_resp: resp }).map_err(|e| anyhow!("model: {e}"))?;
        if o.req_ready && req.is_some() {
            self.stream.next();
        }
        Ok((CycleIn { req, mem_req_ready: ready, mem_resp: resp }, o))
    }
}

/// The harness cycles before the stream: reset, then the ROOT CSR write.
fn preamble(ports: &UnitPorts, ib: usize, root: u64) -> Vec<u8> {
    let mut recs = reset_record(ports, ib);
    recs.extend(csr_records(ports, ib, &[Csr::Root(root)]));
    recs
}

/// One reset cycle's input record.
fn reset_record(ports: &UnitPorts, ib: usize) -> Vec<u8> {
    let mut rec = vec![0u8; ib];
    ports.reset.put(&mut rec, 1);
    rec
}

/// One input record per CSR write, in order.
fn csr_records(ports: &UnitPorts, ib: usize, csrs: &[Csr]) -> Vec<u8> {
    let mut recs = vec![0u8; csrs.len() * ib];
    for (c, rec) in csrs.iter().zip(recs.chunks_mut(ib)) {
        let (addr, data) = c.addr_data();
        ports.csr_we.put(rec, 1);
        ports.csr_addr.put(rec, addr);
        ports.csr_data.put(rec, data);
    }
    recs
}

/// The vectors of the standalone Verilog testbench of a unit top: `n`
/// random requests ([`RandomRequests`] on a heap of 12 allocations, seed
/// 7, so hits and misses mix) through the model with the port at latency
/// 1..20, reordering, 70% ready and 0.5% errors. The expected outputs are the model's, every
/// output it defines, every cycle after the preamble (reset, ROOT).
pub fn record_vectors(top: &Top, p: &UnitParams, n: u64) -> Result<crate::vectors::Vectors> {
    let layout = Layout::from_manifest(&top.manifest)?;
    let ports = UnitPorts::new(&layout, p.lanes)?;
    let rt = heap(&p.cfg, 12, 7)?;
    let port = PortParams { min_latency: 1, max_latency: 20, ready_percent: 70, errors_per_million: 5000, shuffle: true, seed: 7 };
    let mut ahead = ModelAhead::new(p, &rt, RandomRequests::new(&rt, p.lanes, 7 * 31).take(n as usize), port)?;
    let mut v = crate::vectors::Vectors::new(
        &top.manifest,
        &[
            &format!("MLU unit, {} entries, {} walkers, {} lanes, MLB search latency {}, {} lane-check stage(s): {n} random requests (verif::unit_stimulus::RandomRequests, seed 7) with the metadata port answering from a heap of 12 allocations (latency 1..20, reordered, 70% ready, 0.5% errors).", p.cfg.entries, p.walkers, p.lanes, p.mlb_latency, p.check_latency),
            "Expected outputs: the golden model sim::mlu_unit::MluUnit, cycle for cycle: the valid bits always, a response's or a read's fields while valid; x in the two preamble cycles (reset, ROOT CSR write) and where the model defines no value.",
        ],
    );
    let ib = layout.in_bytes;
    let values = |rec: &[u8]| layout.inputs.iter().map(|p| p.get(rec) as u128).collect::<Vec<_>>();
    let pre = preamble(&ports, ib, rt.root());
    for rec in pre.chunks(ib) {
        v.rows.push((values(rec), vec![None; v.outputs.len()]));
    }
    let mut rec = vec![0u8; ib];
    while let Some((i, o)) = ahead.next(&rt)? {
        ports.encode(&mut rec, i.req.as_ref(), i.mem_req_ready, i.mem_resp.as_ref());
        let mut out = vec![None; v.outputs.len()];
        for (want, slot) in ports.expected(&o) {
            let name = &slot.name;
            let k = v.outputs.iter().position(|q| &q.0 == name).ok_or_else(|| anyhow!("{}: no output `{name}`", top.name()))?;
            out[k] = Some(want as u128);
        }
        v.rows.push((values(&rec), out));
    }
    Ok(v)
}

/// The cycles of a recording: each one's input record, the model's outputs
/// (None in the preamble) and the model's counters before it.
struct Tape {
    recs: Vec<Vec<u8>>,
    model_out: Vec<Option<UnitOut>>,
    before: Vec<UnitCounters>,
}

impl Tape {
    /// One cycle of the model run ahead, appended; `always`: even when the
    /// stream is taken and the model idle (else returns false then).
    fn step(&mut self, ahead: &mut ModelAhead, rt: &Runtime, ports: &UnitPorts, always: bool) -> Result<bool> {
        let pre = *ahead.model.counters();
        let (i, o) = match if always { Some(ahead.cycle(rt)?) } else { ahead.next(rt)? } {
            Some(x) => x,
            None => return Ok(false),
        };
        let mut rec = vec![0u8; ports.in_bytes];
        ports.encode(&mut rec, i.req.as_ref(), i.mem_req_ready, i.mem_resp.as_ref());
        self.recs.push(rec);
        self.model_out.push(Some(o));
        self.before.push(pre);
        Ok(true)
    }
}

/// A workload of a unit top recorded for the gate-level energy runs
/// (synth::activity), and the model's counters at the two ends of its
/// measured window.
pub struct UnitWorkload {
    pub stimulus: Stimulus,
    pub before: UnitCounters,
    pub after: UnitCounters,
    /// Operations in the window.
    pub ops: usize,
}

/// Record one workload of `top` (built for `p`): the preamble (reset,
/// ROOT), `warm` run until the unit is idle, two idle cycles, then the
/// measured part, either
/// - `measured` None: `min_cycles` cycles without a request (one operation
///   per cycle), or
/// - `measured` requests presented back to back: the window runs from the
///   cycle the first is taken to the cycle the m-th is taken, m the first
///   that makes the window at least `min_cycles` long, so each operation's
///   share is its issue period (the requests after m keep the unit as busy
///   as in the window; there must be at least one).
///
/// The inputs are the model's run ahead (the metadata port `port` answering
/// from `rt`'s memory), so the stimulus is open loop; the Verilog is run on
/// it (verif::recorder), and every output the model defines is compared
/// with the RTL's from the preamble on: a difference is an error naming the
/// cycle and the port, not a figure.
pub fn record_workload(
    top: &Top,
    p: &UnitParams,
    rt: &Runtime,
    port: PortParams,
    warm: Vec<UnitRequest>,
    measured: Option<Vec<UnitRequest>>,
    min_cycles: usize,
    op: &str,
) -> Result<UnitWorkload> {
    let layout = Layout::from_manifest(&top.manifest)?;
    let ports = UnitPorts::new(&layout, p.lanes)?;
    let ib = layout.in_bytes;
    let pre = preamble(&ports, ib, rt.root());
    let mut tape = Tape { recs: pre.chunks(ib).map(|c| c.to_vec()).collect(), model_out: vec![None; 2], before: vec![UnitCounters::default(); 2] };
    let mut ahead = ModelAhead::new(p, rt, warm.into_iter(), port)?;
    while tape.step(&mut ahead, rt, &ports, false)? {}
    for _ in 0..2 {
        tape.step(&mut ahead, rt, &ports, true)?;
    }
    let first = tape.recs.len();
    let (warmup, end, ops) = match measured {
        None => {
            for _ in 0..min_cycles {
                tape.step(&mut ahead, rt, &ports, true)?;
            }
            (first, first + min_cycles, min_cycles)
        }
        Some(reqs) => {
            let n = reqs.len();
            ahead.set_stream(reqs.into_iter());
            let mut taken: Vec<usize> = Vec::new();
            let mut window = None;
            while window.is_none() {
                let c = tape.recs.len();
                if !tape.step(&mut ahead, rt, &ports, false)? {
                    break;
                }
                if ports.req_valid.get(&tape.recs[c]) == 1 && tape.model_out[c].as_ref().is_some_and(|o| o.req_ready) {
                    taken.push(c);
                    if c - taken[0] >= min_cycles {
                        window = Some((taken[0], c, taken.len() - 1));
                    }
                }
            }
            window.ok_or_else(|| anyhow!("{}: the {n} requests were taken in fewer than {min_cycles} cycles (give more)", top.name()))?
        }
    };
    // The counters after the window's last cycle.
    tape.step(&mut ahead, rt, &ports, true)?;
    let Tape { recs, model_out, before } = tape;
    // The inputs as changes per cycle, then the RTL's outputs on them.
    let cycles = crate::recorder::changes(&layout.inputs, &recs[..end]);
    let st = Stimulus { warmup, op: op.to_string(), ops_per_cycle: ops as f64 / (end - warmup) as f64, cycles, ..Default::default() };
    let st = crate::recorder::record_open_loop(top, &st, 2)?;
    for c in 2..end {
        let Some(o) = &model_out[c] else { continue };
        for (want, slot) in ports.expected(o) {
            let name = &slot.name;
            let got = st.expect[c].iter().find(|(n, _)| n == name).map(|x| x.1);
            if got != Some(want as u128) {
                return Err(anyhow!("{}: recording cycle {c}: {name} is {got:x?}, the model gives {want:#x}", top.name()));
            }
        }
    }
    Ok(UnitWorkload { stimulus: st, before: before[warmup], after: before[end], ops })
}

/// The first cycle in which the RTL and the model disagree.
#[derive(Clone, Debug)]
pub struct UnitMismatch {
    /// Cycle, counted from the end of the reset and CSR writes (the
    /// model's cycle; CSR writes between phases are not counted).
    pub cycle: u64,
    /// Every output that differs: (port, model's value, RTL's value).
    pub ports: Vec<(String, u64, u64)>,
    /// The model's outputs in that cycle, as text.
    pub model: String,
    /// The last requests taken before it (at most 8, oldest first), as text.
    pub before: Vec<String>,
}

impl std::fmt::Display for UnitMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "MLU unit mismatch at cycle {}:", self.cycle)?;
        for (port, want, got) in &self.ports {
            writeln!(f, "  {port}: Verilog {got:#x}, golden model {want:#x}")?;
        }
        writeln!(f, "  golden model's outputs: {}", self.model)?;
        write!(f, "  requests taken before it (oldest first):")?;
        if self.before.is_empty() {
            write!(f, " none")?;
        }
        for r in &self.before {
            write!(f, "\n    {r}")?;
        }
        Ok(())
    }
}

/// A request as one line: `cycle 12: #7 MEMCHECK.G mask 0x1 lane0 0x...`.
fn request_text(cycle: u64, r: &UnitRequest) -> String {
    let mut t = format!("cycle {cycle}: #{} {} mask {:#x} lane0 {:#x}", r.id, r.op.name(), r.mask, r.ptrs.first().copied().unwrap_or(0));
    match r.op {
        Op::MemcheckG => t += &format!(" width {} loc {:#x}", r.width, r.loc),
        Op::MemcheckS => t += &format!(" width {} window {:#x}+{:#x}", r.width, r.sbase, r.ssize),
        Op::Invalidate => t += &format!(" loc {:#x}", r.loc),
        _ => {}
    }
    t
}

/// A cycle's outputs as text (no Rust `Debug`).
fn outputs_text(e: &UnitOut) -> String {
    let mut t = format!("req_ready {}", e.req_ready as u8);
    match &e.resp {
        Some(r) => {
            t += &format!("; response #{} {} fault {} lane {} pass {:#x} loc {:#x}", r.id, r.op.name(), r.fault.name(), r.lane, r.pass, r.loc);
            if let Some(m) = r.meta {
                t += &format!(" (allocation {:#x}, {} bytes, tag {:#x})", m.base, m.size, m.tag);
            }
        }
        None => t += "; no response",
    }
    match &e.mem_req {
        Some(m) => t += &format!("; metadata read by walker {} of node {:#x}", m.id, m.addr),
        None => t += "; no metadata read",
    }
    t
}

/// What a run observed.
#[derive(Clone, Debug, Default)]
pub struct UnitRun {
    /// Stream cycles simulated.
    pub cycles: u64,
    /// Requests taken and responses compared.
    pub requests: u64,
    pub responses: u64,
    /// The RTL's own observations: the cycle each request was taken
    /// (`req_valid && req_ready`), and each response's (`resp_id`, cycle).
    pub taken_at: Vec<u64>,
    pub answered_at: Vec<(u32, u64)>,
    /// Each response as the RTL gave it, in order.
    pub answers: Vec<UnitAnswer>,
    pub counters: UnitCounters,
    pub mismatch: Option<UnitMismatch>,
}

/// One response as the RTL gave it: `resp_id`, `resp_fault` (the code's
/// bits) and `resp_loc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitAnswer {
    pub id: u32,
    pub fault: u8,
    pub loc: u64,
}

/// A CSR write, to the RTL's write port and to the model alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Csr {
    Mode(Mode),
    Structure(Structure),
    Root(u64),
    StepLimit(u32),
    /// The device heap's window, one register each.
    HeapBase(u64),
    HeapMask(u64),
    HeapDir(u64),
}

impl Csr {
    /// The three writes that set the heap window `w`.
    pub fn heap_window(w: HeapWindow) -> [Csr; 3] {
        [Csr::HeapBase(w.base), Csr::HeapMask(w.mask), Csr::HeapDir(w.dir)]
    }

    /// `csr_addr` and `csr_data` (hw::mlu_unit's CSR port).
    fn addr_data(self) -> (u64, u64) {
        match self {
            Csr::Mode(m) => (CSR_MODE, m.bits() as u64),
            Csr::Structure(s) => (CSR_STRUCTURE, (s == Structure::Bst) as u64),
            Csr::Root(r) => (CSR_ROOT, r),
            Csr::StepLimit(l) => (CSR_STEP_LIMIT, l as u64),
            Csr::HeapBase(v) => (CSR_HEAP_BASE, v),
            Csr::HeapMask(v) => (CSR_HEAP_MASK, v),
            Csr::HeapDir(v) => (CSR_HEAP_DIR, v),
        }
    }

    fn apply(self, model: &mut MluUnit) {
        match self {
            Csr::Mode(m) => model.set_mode(m),
            Csr::Structure(s) => model.set_structure(s),
            Csr::Root(r) => model.set_root(r),
            Csr::StepLimit(l) => model.set_step_limit(l),
            Csr::HeapBase(v) => model.set_heap_window(HeapWindow { base: v, ..model.heap_window() }),
            Csr::HeapMask(v) => model.set_heap_window(HeapWindow { mask: v, ..model.heap_window() }),
            Csr::HeapDir(v) => model.set_heap_window(HeapWindow { dir: v, ..model.heap_window() }),
        }
    }
}

/// One phase of [`UnitCosim::run_phases`]: CSR writes, then requests, and
/// changes to the metadata memory while they run (`mutations`: each at a
/// cycle counted from the phase's first, before that cycle's port read).
#[derive(Clone, Debug, Default)]
pub struct Phase {
    pub csrs: Vec<Csr>,
    pub requests: Vec<UnitRequest>,
    pub mutations: Vec<(u64, Mutation)>,
}

/// A change to the runtime while the unit works: what a free or a stray
/// write does to the metadata a walk may be reading. The runtime's own
/// requests (a free's INVALIDATE) wait for the next phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// `Runtime::free` of this pointer (its node becomes FREED).
    Free { ptr: u64 },
    /// `Runtime::corrupt_link`: link `link` of the node at `loc` := `value`.
    Link { loc: u64, link: usize, value: u64 },
}

impl Mutation {
    fn apply(self, rt: &mut Runtime) {
        match self {
            Mutation::Free { ptr } => {
                // A rejected free changes nothing.
                let _ = rt.free(ptr);
            }
            Mutation::Link { loc, link, value } => rt.corrupt_link(loc, link, value),
        }
    }
}

/// A built, started unit harness.
pub struct UnitCosim {
    sim: CycleSim,
    ports: UnitPorts,
    lanes: usize,
    /// The Verilator build this harness runs.
    pub built: Built,
    /// Told the responses compared so far after every batch.
    pub progress: Option<crate::cosim::ProgressHook>,
}

impl UnitCosim {
    /// Build (or reuse the cached build of) `top`'s harness with `verilog`
    /// (the top's own text, or a mutant of it; `variant` names the build).
    pub fn start(top: &Top, verilog: &str, variant: &str, lanes: usize, seed: u64) -> Result<UnitCosim> {
        Self::start_with_cxx_opt(top, verilog, variant, lanes, seed, None, &[])
    }

    /// [`UnitCosim::start`] with the harness's C++ built at `cxx_opt`
    /// ([`crate::verilator::build_with_cxx_opt`]): a mutant that runs a few
    /// thousand requests spends most of its time in g++, which compiles
    /// this unit's C++ several times faster at -O0 than at -O2. `plusargs`
    /// go to the harness's command line ([`CycleSim::start_with_plusargs`]).
    pub fn start_with_cxx_opt(top: &Top, verilog: &str, variant: &str, lanes: usize, seed: u64, cxx_opt: Option<&str>, plusargs: &[&str]) -> Result<UnitCosim> {
        Self::start_build(top, verilog, variant, lanes, seed, cxx_opt, plusargs, false)
    }

    /// [`UnitCosim::start`] on a trace build of `top`'s own Verilog,
    /// writing a VCD of every signal of every cycle from reset on to `vcd`.
    pub fn start_with_vcd(top: &Top, lanes: usize, seed: u64, vcd: &std::path::Path) -> Result<UnitCosim> {
        let mut cs = Self::start_build(top, &top.verilog, "-trace", lanes, seed, None, &[], true)?;
        cs.sim.start_vcd(vcd)?;
        Ok(cs)
    }

    #[allow(clippy::too_many_arguments)]
    fn start_build(top: &Top, verilog: &str, variant: &str, lanes: usize, seed: u64, cxx_opt: Option<&str>, plusargs: &[&str], trace: bool) -> Result<UnitCosim> {
        let mut layout = Layout::from_manifest(&top.manifest)?;
        let ports = UnitPorts::new(&layout, lanes)?;
        for p in layout.inputs.iter_mut().chain(layout.outputs.iter_mut()) {
            // Verilator's C++ name of rust-hdl's `$` array separator.
            p.name = p.name.replace('$', "__024");
        }
        let cpp = portvec_cpp(&layout)?;
        let name = format!("{}{variant}", top.name());
        let built = build_with_cxx_opt(&BuildSpec { name, top_module: top.name().to_string(), verilog, cpp, trace }, cxx_opt)?;
        Ok(UnitCosim { sim: CycleSim::start_with_plusargs(layout, &built, seed, plusargs)?, ports, lanes, built, progress: None })
    }

    /// Reset the unit, point it at `rt`'s root, and run `requests` (the
    /// first `limit` of them) through it and through a fresh model of `p`,
    /// with the metadata port `port` answering from `rt`'s memory, until the
    /// stream is taken and the model is idle, plus two idle cycles (or the
    /// first mismatch).
    pub fn run(&mut self, p: &UnitParams, rt: &Runtime, requests: impl Iterator<Item = UnitRequest>, limit: u64, port: PortParams) -> Result<UnitRun> {
        self.check_lanes(p)?;
        let mut ahead = ModelAhead::new(p, rt, requests.take(limit as usize), port)?;
        let mut csrs = vec![Csr::Root(rt.root())];
        if rt.device_heap().is_some() {
            csrs.extend(Csr::heap_window(rt.mlu().csrs().heap));
        }
        self.reset_and_write(&csrs, &mut ahead.model)?;
        let mut run = UnitRun::default();
        self.drive(&mut ahead, &mut rt.clone(), &mut run, &[])?;
        run.counters = *ahead.model.counters();
        Ok(run)
    }

    /// A program in phases, for a runtime that changes between requests (a
    /// scenario's mallocs, frees and damaged nodes): reset, then the CSR
    /// writes `csrs`, then phase after phase from `next` until it gives
    /// None. `next` sees the runtime (to change it; the unit is idle then)
    /// and the run so far (the RTL's answers, when it took and answered
    /// each request; a phase starts at `run.cycles`); a phase's CSR writes (ROOT after the
    /// structure changed) go to the RTL and the model before its requests,
    /// and each phase runs as [`UnitCosim::run`] runs its stream, ending with
    /// two idle cycles. The model and the RTL keep their state (MLB,
    /// counters) from phase to phase. Stops at the first mismatch.
    pub fn run_phases(&mut self, p: &UnitParams, rt: &mut Runtime, csrs: &[Csr], port: PortParams, mut next: impl FnMut(&mut Runtime, &UnitRun) -> Result<Option<Phase>>) -> Result<UnitRun> {
        self.check_lanes(p)?;
        let mut ahead = ModelAhead::new(p, rt, std::iter::empty(), port)?;
        self.reset_and_write(csrs, &mut ahead.model)?;
        let mut run = UnitRun::default();
        while run.mismatch.is_none() {
            let Some(phase) = next(rt, &run)? else { break };
            self.write(&phase.csrs, &mut ahead.model)?;
            ahead.set_stream(phase.requests.into_iter());
            self.drive(&mut ahead, rt, &mut run, &phase.mutations)?;
        }
        run.counters = *ahead.model.counters();
        Ok(run)
    }

    fn check_lanes(&self, p: &UnitParams) -> Result<()> {
        if p.lanes != self.lanes {
            return Err(anyhow!("the harness was started for {} lanes, the parameters give {}", self.lanes, p.lanes));
        }
        Ok(())
    }

    /// A reset cycle, then [`UnitCosim::write`].
    fn reset_and_write(&mut self, csrs: &[Csr], model: &mut MluUnit) -> Result<()> {
        self.sim.run(&reset_record(&self.ports, self.sim.layout.in_bytes), &mut vec![])?;
        self.write(csrs, model)
    }

    /// One cycle per CSR write on the RTL (its outputs not compared: the
    /// unit is idle), and the same writes to the model, which takes no
    /// cycle for them.
    fn write(&mut self, csrs: &[Csr], model: &mut MluUnit) -> Result<()> {
        if csrs.is_empty() {
            return Ok(());
        }
        for c in csrs {
            c.apply(model);
        }
        self.sim.run(&csr_records(&self.ports, self.sim.layout.in_bytes, csrs), &mut vec![])
    }

    /// Run the RTL beside `ahead` until its stream is taken and the model
    /// is idle, plus two idle cycles (the second's outputs include the
    /// counters: UnitOut::idle_counters), or to the first mismatch; what
    /// the RTL did is added to `run`. `mutations` change `rt` at their
    /// cycles (counted from this call's first).
    fn drive(&mut self, ahead: &mut ModelAhead, rt: &mut Runtime, run: &mut UnitRun, mutations: &[(u64, Mutation)]) -> Result<()> {
        let (ib, ob) = (self.sim.layout.in_bytes, self.sim.layout.out_bytes);
        let (mut recs, mut out) = (vec![], vec![]);
        let mut expected: Vec<UnitOut> = Vec::with_capacity(BATCH);
        let mut presented: Vec<Option<UnitRequest>> = Vec::with_capacity(BATCH);
        let mut before: std::collections::VecDeque<String> = Default::default();
        let mut idle_tail = 0;
        // Model cycles of this call so far (the model runs a batch ahead).
        let mut t = 0u64;
        loop {
            recs.clear();
            expected.clear();
            presented.clear();
            while expected.len() < BATCH {
                for (_, m) in mutations.iter().filter(|(at, _)| *at == t) {
                    m.apply(rt);
                }
                t += 1;
                let next = match ahead.next(rt)? {
                    None if idle_tail < 2 => {
                        idle_tail += 1;
                        Some(ahead.cycle(rt)?)
                    }
                    x => x,
                };
                let Some((i, o)) = next else { break };
                let at = recs.len();
                recs.resize(at + ib, 0);
                self.ports.encode(&mut recs[at..], i.req.as_ref(), i.mem_req_ready, i.mem_resp.as_ref());
                presented.push(i.req.filter(|_| o.req_ready));
                expected.push(o);
            }
            if expected.is_empty() {
                break;
            }
            self.sim.run(&recs, &mut out)?;
            for (k, e) in expected.iter().enumerate() {
                let (i, o) = (&recs[k * ib..(k + 1) * ib], &out[k * ob..(k + 1) * ob]);
                let cycle = run.cycles;
                let ports = self.ports.compare(e, o);
                if !ports.is_empty() {
                    run.mismatch = Some(UnitMismatch { cycle, ports, model: outputs_text(e), before: before.drain(..).collect() });
                    break;
                }
                if let Some(r) = &presented[k] {
                    if before.len() == 8 {
                        before.pop_front();
                    }
                    before.push_back(request_text(cycle, r));
                }
                if self.ports.req_valid.get(i) == 1 && self.ports.req_ready.get(o) == 1 {
                    run.taken_at.push(cycle);
                    run.requests += 1;
                }
                if self.ports.resp_valid.get(o) == 1 {
                    let id = self.ports.resp_id.get(o) as u32;
                    run.answered_at.push((id, cycle));
                    run.answers.push(UnitAnswer { id, fault: self.ports.resp_fault.get(o) as u8, loc: self.ports.resp_loc.get(o) });
                    run.responses += 1;
                }
                run.cycles += 1;
            }
            if let Some(h) = &self.progress {
                (h.0)(crate::cosim::Progress::Compared(run.responses));
            }
            if run.mismatch.is_some() {
                break;
            }
        }
        Ok(())
    }

    /// Stop the harness.
    pub fn finish(self) -> Result<()> {
        self.sim.finish()
    }
}
