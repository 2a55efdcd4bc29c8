//! The hit-under-miss MLU (hw::mlu_hum::MluHum, rust-hdl simulation, clock
//! driven by hand) against the golden model sim::mlu::Mlu.
//!
//! Several virtual warps issue requests (each warp waits for its previous
//! response; a compiler-mode access is LOADMETA, then MEMCHECK.G with the
//! location it returned), so that hits arrive while a walk is in flight.
//! Responses come out of order and are matched by `resp_id`. The model is
//! called for each response *in response order* (the documented
//! linearization order of hw::mlu_hum): every response's fault, location,
//! address and allocation, the metadata words each walk read, the MLB
//! replacement state at every response and all counters at the end must be
//! the model's. A response that overtook an earlier request must be one the
//! model answers without memory and without an MLB miss, at the blocking
//! MLU's hit latency. Plus the directed cases: a hit on the entry being
//! filled (waits, then hits without a second walk), a hit on the walk's
//! victim (answered before the fill), a FLUSH and an INVALIDATE during a
//! miss (wait, then act on the filled state), and the documented latencies.
use hw::mlu::{MluParams, CSR_MODE, CSR_ROOT, CSR_STEP_LIMIT};
use hw::mlu_hum::MluHum;
use rust_hdl::prelude::*;
use sim::config::{Mode, MluConfig, Structure};
use sim::fault::{Fault, FaultCode, Op};
use sim::memcheck::WIDTHS;
use sim::memory::MemoryImage;
use sim::pointer::{tagged, untag, NO_META};
use sim::runtime::{AllocState, Runtime, RuntimeConfig};
use std::collections::{HashMap, VecDeque};
use testbench::memport::{Latency, MemPort, Rng};
use testbench::mlu_driver::RtlCounters;

/// One warp's operation.
#[derive(Clone, Copy, Debug)]
enum WOp {
    /// Compiler: LOADMETA then MEMCHECK.G with its location; HWONLY: MEMCHECK.G.
    Access { p: u64, w: u32 },
    LoadMeta { p: u64 },
    MemcheckG { p: u64, w: u32, loc: u64 },
    MemcheckS { a: u64, w: u32, base: u32, size: u32 },
    /// INVALIDATE in the RTL and the model.
    Invalidate { loc: u64 },
    /// INVALIDATE in the RTL only (the runtime already did it in the model).
    InvalidateRtl { loc: u64 },
    Flush,
}

struct Outstanding {
    warp: usize,
    op: WOp,
    seq: u64,
    accepted: u64,
}

/// One response, in response order.
#[derive(Clone, Debug)]
struct Answer {
    warp: usize,
    op: u8,
    fault: u8,
    loc: u64,
    latency: u64,
    overtook: bool,
    reads: usize,
}

struct Bench<const N: usize, const IW: usize> {
    rt: Runtime,
    uut: MluHum<N, IW>,
    cycle: u64,
    rng: Rng,
    latency: Latency,
    ready: u64,
    ctx: String,
    seen: [u64; 8],
    overtakes: u64,
    responses: u64,
    seq: u64,
}

fn op_bits(o: Op) -> u8 {
    o.bits()
}

impl<const N: usize, const IW: usize> Bench<N, IW> {
    fn new(structure: Structure, mode: Mode, seed: u64, latency: Latency, ready: u64) -> Self {
        let mlu = MluConfig { entries: N, structure, mode, ..MluConfig::default() };
        let mut rt = Runtime::new(RuntimeConfig { mlu: mlu.clone(), seed, ..RuntimeConfig::default() }).unwrap();
        rt.mlu_mut().set_read_log(true);
        let mut uut = MluHum::<N, IW>::new(MluParams::from_config(&mlu).unwrap());
        uut.connect_all();
        let ctx = format!("HUM N={N} {structure:?} {mode:?} seed={seed} {latency:?} ready={ready}%");
        let mut b = Bench {
            rt,
            uut,
            cycle: 0,
            rng: Rng(seed ^ 0x4a11),
            latency,
            ready,
            ctx,
            seen: [0; 8],
            overtakes: 0,
            responses: 0,
            seq: 0,
        };
        b.uut.reset.next = true;
        b.uut.req_valid.next = false;
        b.uut.csr_we.next = false;
        b.idle_cycle();
        b.uut.reset.next = false;
        b.settle();
        b
    }

    fn settle(&mut self) {
        assert!(simulate(&mut self.uut, 500), "MLU did not settle");
    }

    fn clock(&mut self) {
        self.uut.clock.next = true.into();
        self.settle();
        self.uut.clock.next = false.into();
        self.settle();
        self.cycle += 1;
    }

    /// A cycle with no memory traffic allowed.
    fn idle_cycle(&mut self) {
        self.uut.mem_req_ready.next = false;
        self.uut.mem_resp_valid.next = false;
        self.settle();
        assert!(!self.uut.mem_req_valid.val() || self.uut.reset.val(), "{}: read with no memory", self.ctx);
        self.clock();
    }

    fn csr_write(&mut self, addr: u64, data: u64) {
        self.uut.csr_we.next = true;
        self.uut.csr_addr.next = addr.into();
        self.uut.csr_data.next = data.into();
        self.idle_cycle();
        self.uut.csr_we.next = false;
        self.settle();
    }

    fn sync_root(&mut self) {
        let root = self.rt.root();
        if self.uut.csr_root.val().to_u64() != root {
            self.csr_write(CSR_ROOT, root);
        }
    }

    fn request(&self, op: WOp, mode: Mode) -> (u8, u64, u32, u64, u32, u32) {
        match op {
            WOp::Access { p, w } => match mode {
                Mode::Compiler => (op_bits(Op::LoadMeta), p, 0, 0, 0, 0),
                Mode::Hwonly => (op_bits(Op::MemcheckG), p, w, 0, 0, 0),
            },
            WOp::LoadMeta { p } => (op_bits(Op::LoadMeta), p, 0, 0, 0, 0),
            WOp::MemcheckG { p, w, loc } => (op_bits(Op::MemcheckG), p, w, loc, 0, 0),
            WOp::MemcheckS { a, w, base, size } => (op_bits(Op::MemcheckS), a, w, 0, base, size),
            WOp::Invalidate { loc } | WOp::InvalidateRtl { loc } => (op_bits(Op::Invalidate), 0, 0, loc, 0, 0),
            WOp::Flush => (op_bits(Op::Flush), 0, 0, 0, 0, 0),
        }
    }

    /// Runs the warps' operations to completion: each warp issues its next
    /// operation when the previous one has been answered; the request port
    /// is offered round-robin and a presented request is held until taken.
    /// Returns the responses in response order.
    fn run(&mut self, warps: Vec<Vec<WOp>>) -> Vec<Answer> {
        let mode = self.rt.mode();
        let img: MemoryImage = self.rt.memory().clone();
        let mut port = MemPort::new(&img, self.latency, self.rng.next_u64());
        port.ready_percent = self.ready;
        let mut queues: Vec<VecDeque<WOp>> = warps.into_iter().map(VecDeque::from).collect();
        let nw = queues.len();
        let mut busy = vec![false; nw];
        let mut out: HashMap<u8, Outstanding> = HashMap::new();
        let mut presented: Option<(u8, Outstanding)> = None;
        let mut next_id: u8 = 0;
        let mut rr = nw - 1;
        let mut rtl_reads: Vec<u64> = Vec::new();
        let mut answers = Vec::new();
        let start = self.cycle;
        loop {
            if presented.is_none() {
                for i in 1..=nw {
                    let w = (rr + i) % nw;
                    if busy[w] {
                        continue;
                    }
                    if let Some(op) = queues[w].pop_front() {
                        busy[w] = true;
                        rr = w;
                        let id = next_id;
                        next_id = next_id.wrapping_add(1);
                        assert!(!out.contains_key(&id));
                        presented = Some((id, Outstanding { warp: w, op, seq: 0, accepted: 0 }));
                        break;
                    }
                }
            }
            if presented.is_none() && out.is_empty() && queues.iter().all(|q| q.is_empty()) {
                break;
            }
            match &presented {
                Some((id, o)) => {
                    let (op, ptr, w, loc, sb, ss) = self.request(o.op, mode);
                    self.uut.req_valid.next = true;
                    self.uut.req_op.next = (op as u64).into();
                    self.uut.req_ptr.next = ptr.into();
                    self.uut.req_width.next = (w as u64).into();
                    self.uut.req_loc.next = loc.into();
                    self.uut.req_sbase.next = (sb as u64).into();
                    self.uut.req_ssize.next = (ss as u64).into();
                    self.uut.req_id.next = (*id as u64).into();
                }
                None => self.uut.req_valid.next = false,
            }
            let o = port.outputs();
            self.uut.mem_req_ready.next = o.req_ready;
            self.uut.mem_resp_valid.next = o.resp_valid;
            self.uut.mem_resp_data.next = o.resp_data.into();
            self.uut.mem_resp_error.next = o.resp_error;
            self.settle();
            assert!(!self.uut.mlb_multi.val(), "{}: MLB one-hot assertion (cycle {})", self.ctx, self.cycle);
            if self.uut.resp_valid.val() {
                let id = self.uut.resp_id.val().to_u64() as u8;
                let o = out.remove(&id).unwrap_or_else(|| panic!("{}: response for id {id}, not outstanding", self.ctx));
                let a = self.answer(&o, &out, &mut rtl_reads, &mut queues);
                busy[a.warp] = false;
                answers.push(a);
            }
            if self.uut.req_ready.val() {
                if let Some((id, mut o)) = presented.take() {
                    o.seq = self.seq;
                    self.seq += 1;
                    o.accepted = self.cycle;
                    out.insert(id, o);
                }
            }
            port.edge(self.uut.mem_req_valid.val(), self.uut.mem_req_addr.val().to_u64());
            rtl_reads.append(&mut port.reads);
            self.clock();
            assert!(self.cycle - start < 2_000_000, "{}: batch does not finish", self.ctx);
        }
        assert!(rtl_reads.is_empty() && port.idle(), "{}: reads no response accounted for: {rtl_reads:x?}", self.ctx);
        self.uut.req_valid.next = false;
        self.settle();
        answers
    }

    /// Checks one response against the model (called in response order).
    fn answer(
        &mut self,
        o: &Outstanding,
        others: &HashMap<u8, Outstanding>,
        rtl_reads: &mut Vec<u64>,
        queues: &mut [VecDeque<WOp>],
    ) -> Answer {
        let u = &self.uut;
        let (fault, loc, addr, base, size, rop) = (
            u.resp_fault.val().to_u64() as u8,
            u.resp_loc.val().to_u64(),
            u.resp_addr.val().to_u64(),
            u.resp_base.val().to_u64(),
            u.resp_size.val().to_u64(),
            u.resp_op.val().to_u64() as u8,
        );
        let latency = self.cycle - o.accepted;
        let overtook = others.values().any(|x| x.seq < o.seq);
        let before = *self.rt.counters();
        let mode = self.rt.mode();
        let ctx = format!("{} {:?} (warp {})", self.ctx, o.op, o.warp);
        let check = |model: &Result<u64, Fault>, is_loadmeta: bool| match model {
            Ok(v) => {
                assert_eq!(fault, 0, "{ctx}: fault (model passed)");
                if is_loadmeta {
                    assert_eq!(loc, *v, "{ctx}: location");
                } else {
                    assert_eq!(addr, *v, "{ctx}: address");
                }
            }
            Err(f) => {
                assert_eq!(fault, f.code.bits(), "{ctx}: fault (model {:?})", f.code);
                if is_loadmeta {
                    assert_eq!(loc, NO_META, "{ctx}: a faulting LOADMETA answers NO_META");
                }
                if let Some(m) = f.alloc {
                    assert_eq!((base, size), (m.base, m.size), "{ctx}: fault's allocation");
                }
            }
        };
        // The expected hit latency (blocking MLU) if this needs no memory.
        let (want_op, hit_latency) = match (o.op, mode) {
            (WOp::Access { p, .. }, Mode::Compiler) | (WOp::LoadMeta { p }, _) => {
                let m = self.rt.loadmeta(p);
                check(&m, true);
                // An access goes on with MEMCHECK.G on the location.
                if let (WOp::Access { w, .. }, Ok(l)) = (o.op, m) {
                    queues[o.warp].push_front(WOp::MemcheckG { p, w, loc: l });
                }
                (Op::LoadMeta, if untag(p) == p { 1 } else { 2 })
            }
            (WOp::Access { p, w }, Mode::Hwonly) => {
                check(&self.rt.memcheck_g(p, w, 0), false);
                (Op::MemcheckG, if untag(p) == p { 2 } else { 3 })
            }
            (WOp::MemcheckG { p, w, loc }, _) => {
                check(&self.rt.memcheck_g(p, w, loc), false);
                let no_meta = mode == Mode::Compiler && (loc == 0 || loc == NO_META);
                (Op::MemcheckG, if untag(p) == p || no_meta { 2 } else { 3 })
            }
            (WOp::MemcheckS { a, w, base: b, size: s }, _) => {
                match self.rt.memcheck_s(a, w, b as u64, s as u64) {
                    Ok(x) => assert_eq!((fault, addr), (0, x), "{ctx}: MEMCHECK.S"),
                    Err(f) => assert_eq!(fault, f.code.bits(), "{ctx}: MEMCHECK.S"),
                }
                (Op::MemcheckS, 2)
            }
            (WOp::Invalidate { loc }, _) => {
                self.rt.mlu_mut().invalidate(loc);
                assert_eq!(fault, 0, "{ctx}");
                (Op::Invalidate, 1)
            }
            (WOp::InvalidateRtl { .. }, _) => {
                assert_eq!(fault, 0, "{ctx}");
                (Op::Invalidate, 1)
            }
            (WOp::Flush, _) => {
                self.rt.flush_mlb();
                assert_eq!(fault, 0, "{ctx}");
                (Op::Flush, 1)
            }
        };
        assert_eq!(rop, op_bits(want_op), "{ctx}: response op");
        let model_reads = self.rt.mlu_mut().take_reads();
        if !model_reads.is_empty() {
            assert_eq!(*rtl_reads, model_reads, "{ctx}: metadata reads");
            rtl_reads.clear();
        }
        let want = self.rt.mlu().mlb().policy_bits();
        assert_eq!(self.uut.mlb_repl_state.val().to_u64(), want, "{ctx}: replacement state");
        if overtook {
            // Answered while an earlier request was in flight: only what
            // needs no memory and hits, at full speed.
            let after = self.rt.counters();
            assert_eq!(after.meta_reads, before.meta_reads, "{ctx}: an overtaking response read memory");
            assert_eq!((after.range_misses, after.loc_misses), (before.range_misses, before.loc_misses), "{ctx}: an overtaking response missed");
            assert_eq!(latency, hit_latency, "{ctx}: latency of a hit under a miss");
            self.overtakes += 1;
        }
        self.seen[fault as usize] += 1;
        self.responses += 1;
        Answer { warp: o.warp, op: rop, fault, loc, latency, overtook, reads: model_reads.len() }
    }

    fn check_counters(&self) {
        let u = &self.uut;
        let got = RtlCounters {
            loadmeta: u.cnt_loadmeta.val().to_u64(),
            memcheck_g: u.cnt_memcheck_g.val().to_u64(),
            memcheck_s: u.cnt_memcheck_s.val().to_u64(),
            range_lookups: u.cnt_range_lookups.val().to_u64(),
            range_hits: u.cnt_range_hits.val().to_u64(),
            range_misses: u.cnt_range_misses.val().to_u64(),
            loc_lookups: u.cnt_loc_lookups.val().to_u64(),
            loc_hits: u.cnt_loc_hits.val().to_u64(),
            loc_misses: u.cnt_loc_misses.val().to_u64(),
            steps: u.cnt_steps.val().to_u64(),
            meta_reads: u.cnt_meta_reads.val().to_u64(),
            faults: u.cnt_faults.val().to_u64(),
            invalidates: u.cnt_invalidates.val().to_u64(),
            flushes: u.cnt_flushes.val().to_u64(),
        };
        assert_eq!(got, RtlCounters::from_model(self.rt.counters()), "{}: counters", self.ctx);
    }

    fn malloc(&mut self, size: u64) {
        let before: Vec<AllocState> = self.rt.allocations().iter().map(|a| a.state).collect();
        if self.rt.malloc(size, None).is_err() {
            return;
        }
        let retired: Vec<WOp> = self.rt.allocations()[..before.len()]
            .iter()
            .zip(&before)
            .filter(|(a, &b)| a.state == AllocState::Retired && b != AllocState::Retired)
            .map(|(a, _)| WOp::InvalidateRtl { loc: a.location })
            .collect();
        if !retired.is_empty() {
            self.run(vec![retired]);
        }
        self.sync_root();
    }

    fn free(&mut self, p: u64) {
        let loc = self.rt.allocations().iter().find(|a| a.ptr == p && a.state == AllocState::Live).map(|a| a.location);
        if self.rt.free(p).is_ok() {
            self.run(vec![vec![WOp::InvalidateRtl { loc: loc.unwrap() }]]);
        }
    }

    fn random_ptr(&mut self) -> u64 {
        let allocs = self.rt.allocations();
        if allocs.is_empty() || self.rng.range(0, 11) == 0 {
            let tag = [0u8, 1, 0x42, 0xFF][self.rng.range(0, 3) as usize];
            return tagged(tag, 0x7f00_0000_0000 + self.rng.range(0, 1 << 20));
        }
        let live: Vec<&sim::runtime::Allocation> = allocs.iter().filter(|a| a.state == AllocState::Live).collect();
        let a = if !live.is_empty() && self.rng.range(0, 5) != 0 {
            live[self.rng.range(0, live.len() as u64 - 1) as usize]
        } else {
            &allocs[self.rng.range(0, allocs.len() as u64 - 1) as usize]
        };
        let (ptr, size) = (a.ptr, a.size);
        let off = match self.rng.range(0, 9) {
            0 => 0,
            1 => size - 1,
            2 => size,
            3 => (self.rng.range(1, 64) as i64).wrapping_neg() as u64,
            _ => self.rng.range(0, size - 1),
        };
        ptr.wrapping_add(off)
    }

    fn random_op(&mut self) -> WOp {
        let w = WIDTHS[self.rng.range(0, 4) as usize];
        match self.rng.range(0, 99) {
            0..=64 => WOp::Access { p: self.random_ptr(), w },
            65..=72 => WOp::LoadMeta { p: self.random_ptr() },
            73..=84 => {
                let p = self.random_ptr();
                let al = self.rt.allocations();
                let loc = match self.rng.range(0, 4) {
                    0 => 0,
                    1 => NO_META,
                    2 if !al.is_empty() => al[self.rng.range(0, al.len() as u64 - 1) as usize].location + self.rng.range(0, 31),
                    _ if !al.is_empty() => al[self.rng.range(0, al.len() as u64 - 1) as usize].location,
                    _ => 0x1000_0000_0000,
                };
                WOp::MemcheckG { p, w, loc }
            }
            85..=92 => {
                let base = self.rng.range(0, 1 << 16) as u32;
                let size = self.rng.range(0, 1 << 16) as u32;
                let a = (base as u64 + size as u64).wrapping_sub(self.rng.range(0, 40)).wrapping_add(self.rng.range(0, 40))
                    & 0xFFFF_FFFF;
                WOp::MemcheckS { a, w, base, size }
            }
            93..=95 => WOp::Flush,
            _ => {
                let al = self.rt.allocations();
                if al.is_empty() {
                    WOp::Flush
                } else {
                    WOp::Invalidate { loc: al[self.rng.range(0, al.len() as u64 - 1) as usize].location }
                }
            }
        }
    }

    /// Between batches: mallocs, frees and step-limit changes (the host
    /// changes metadata only while no request is in flight).
    fn host_step(&mut self) {
        let live = self.rt.allocations().iter().filter(|a| a.state == AllocState::Live).count();
        match self.rng.range(0, 9) {
            0..=3 if live < 50 => {
                let size = [1, 8, 100, 512, 2400, 4096, 10_000][self.rng.range(0, 6) as usize];
                self.malloc(size);
            }
            4..=5 => {
                let al = self.rt.allocations();
                if !al.is_empty() {
                    let p = al[self.rng.range(0, al.len() as u64 - 1) as usize].ptr;
                    self.free(p);
                }
            }
            6 => {
                let limit = [3u32, 9, 4096, 4096][self.rng.range(0, 3) as usize];
                self.rt.mlu_mut().set_step_limit(limit);
                self.csr_write(CSR_STEP_LIMIT, limit as u64);
            }
            _ => {}
        }
    }
}

/// Random programs: batches of 2..6 warps with 1..4 operations each,
/// interleaved with host mallocs/frees.
fn program<const N: usize, const IW: usize>(structure: Structure, mode: Mode, seed: u64, batches: usize, latency: Latency, ready: u64) {
    let mut b = Bench::<N, IW>::new(structure, mode, seed, latency, ready);
    for _ in 0..12 {
        let size = [100, 512, 2400][b.rng.range(0, 2) as usize];
        b.malloc(size);
    }
    for _ in 0..batches {
        b.host_step();
        let nw = b.rng.range(2, 6) as usize;
        let mut warps: Vec<Vec<WOp>> = Vec::new();
        for _ in 0..nw {
            let k = b.rng.range(1, 4);
            warps.push((0..k).map(|_| b.random_op()).collect());
        }
        b.run(warps);
    }
    b.check_counters();
    let c = *b.rt.counters();
    eprintln!("{}: {} cycles, {} responses, {} answered under a miss, {c:?}", b.ctx, b.cycle, b.responses, b.overtakes);
    for f in [FaultCode::None, FaultCode::OutOfBounds, FaultCode::UseAfterFree, FaultCode::TagMismatch, FaultCode::NoMeta, FaultCode::SharedOob] {
        assert!(b.seen[f.bits() as usize] > 0, "{}: no {f:?} response: {:?}", b.ctx, b.seen);
    }
    assert!(c.range_hits > 0 && c.range_misses > 0 && c.steps > 0, "{}: {c:?}", b.ctx);
    if mode == Mode::Compiler {
        assert!(c.loc_hits > 0 && c.loc_misses > 0, "{}: {c:?}", b.ctx);
    }
    // Hit-under-miss really happened, and often.
    assert!(b.overtakes * 20 >= b.responses, "{}: only {} of {} responses under a miss", b.ctx, b.overtakes, b.responses);
}

#[test]
fn hum_random_programs_match_the_model() {
    program::<8, 3>(Structure::Bst, Mode::Compiler, 600, 220, Latency::Random(2, 12), 100);
    program::<8, 3>(Structure::Bst, Mode::Hwonly, 601, 220, Latency::Random(1, 8), 70);
    program::<8, 3>(Structure::List, Mode::Compiler, 602, 120, Latency::Random(1, 6), 90);
    program::<16, 4>(Structure::Bst, Mode::Compiler, 603, 180, Latency::Random(2, 10), 100);
}

fn filled_bench(mode: Mode) -> Bench<8, 3> {
    let mut b = Bench::<8, 3>::new(Structure::Bst, mode, 11, Latency::Fixed(4), 100);
    for i in 0..12 {
        b.malloc(100 + 64 * i);
    }
    b
}

/// A second request for the block being walked waits (it is not in the MLB
/// until the fill), is searched again after the fill and hits: one walk, not
/// two. A hit on another block, presented between them, is answered during
/// the walk at the hit latency.
#[test]
fn hit_on_the_entry_being_filled_waits_then_hits() {
    let mut b = filled_bench(Mode::Compiler);
    let (p, q) = (b.rt.allocations()[3].ptr, b.rt.allocations()[9].ptr);
    b.run(vec![vec![WOp::LoadMeta { p: q }]]); // q in the MLB
    let misses = b.rt.counters().range_misses;
    let a = b.run(vec![vec![WOp::LoadMeta { p }], vec![WOp::LoadMeta { p: q }], vec![WOp::LoadMeta { p }]]);
    let order: Vec<usize> = a.iter().map(|x| x.warp).collect();
    assert_eq!(order, vec![1, 0, 2], "q's hit overtakes the walk; the second p waits: {a:?}");
    assert!(a[0].overtook && a[0].latency == 2);
    assert!(a[1].reads >= 2, "p walked");
    assert_eq!((a[2].reads, a[2].loc), (0, a[1].loc), "the second p hits the filled entry");
    assert_eq!(b.rt.counters().range_misses, misses + 1, "one walk");
    b.check_counters();
}

/// With the MLB full, a hit on the entry the walk would replace (the
/// replacement state's victim when the walk starts) is answered before the
/// fill; its touch moves the victim, and the fill then replaces another way,
/// exactly as the model does in response order.
#[test]
fn hit_on_the_walks_victim_is_answered_and_moves_the_victim() {
    let mut b = filled_bench(Mode::Compiler);
    let ptrs: Vec<u64> = b.rt.allocations().iter().map(|a| a.ptr).collect();
    let first: Vec<Vec<WOp>> = ptrs[..8].iter().map(|&p| vec![WOp::LoadMeta { p }]).collect();
    for w in first {
        b.run(vec![w]);
    }
    let victim = b.rt.mlu().mlb().victim().unwrap();
    let vp = ptrs[..8].iter().copied().find(|&p| b.rt.mlu().mlb().search_range(untag(p)) == Some(victim)).unwrap();
    let a = b.run(vec![vec![WOp::LoadMeta { p: ptrs[10] }], vec![WOp::LoadMeta { p: vp }]]);
    assert_eq!(a.iter().map(|x| x.warp).collect::<Vec<_>>(), vec![1, 0]);
    assert!(a[0].overtook && a[0].reads == 0);
    // vp is still in the MLB (another way was replaced).
    assert!(b.rt.mlu().mlb().search_range(untag(vp)).is_some());
    let before = b.rt.counters().range_misses;
    b.run(vec![vec![WOp::LoadMeta { p: vp }]]);
    assert_eq!(b.rt.counters().range_misses, before);
    b.check_counters();
}

/// A FLUSH presented during a miss is held until the walk has filled the MLB
/// and answered, then empties it (filled entry included); an INVALIDATE of
/// the location being filled, presented during the walk, removes it after the
/// fill. Requests behind them wait too.
#[test]
fn flush_and_invalidate_during_a_miss() {
    for mode in [Mode::Compiler, Mode::Hwonly] {
        let mut b = filled_bench(mode);
        let (p, q) = (b.rt.allocations()[2].ptr, b.rt.allocations()[7].ptr);
        b.run(vec![vec![WOp::LoadMeta { p: q }]]);
        let a = b.run(vec![vec![WOp::Access { p, w: 4 }], vec![WOp::Flush], vec![WOp::LoadMeta { p: q }]]);
        let ops: Vec<u8> = a.iter().map(|x| x.op).collect();
        let first = if mode == Mode::Compiler { Op::LoadMeta } else { Op::MemcheckG };
        assert_eq!(&ops[..3], &[op_bits(first), op_bits(Op::Flush), op_bits(Op::LoadMeta)], "{mode:?}: {a:?}");
        assert!(a[2].reads > 0, "{mode:?}: q was flushed with the filled entry: it walks again");
        assert!(a.iter().all(|x| !x.overtook), "{mode:?}: nothing overtakes a FLUSH");

        let loc_p = b.rt.node_of(p).unwrap();
        b.run(vec![vec![WOp::Flush]]);
        let a = b.run(vec![vec![WOp::LoadMeta { p }], vec![WOp::Invalidate { loc: loc_p }]]);
        assert_eq!(a.iter().map(|x| x.op).collect::<Vec<_>>(), vec![op_bits(Op::LoadMeta), op_bits(Op::Invalidate)]);
        assert!(b.rt.mlu().mlb().search_location(loc_p).is_none());
        let misses = b.rt.counters().loc_misses;
        b.run(vec![vec![WOp::MemcheckG { p, w: 8, loc: loc_p }]]);
        if mode == Mode::Compiler {
            assert_eq!(b.rt.counters().loc_misses, misses + 1, "the invalidated fill is gone");
        }
        b.check_counters();
    }
}

/// The documented latencies of hw::mlu_hum (fixed memory latency L, ready
/// always high, nothing else in flight).
#[test]
fn hum_documented_latencies() {
    for l in [1u32, 4] {
        let mut b = Bench::<8, 3>::new(Structure::List, Mode::Compiler, 7, Latency::Fixed(l), 100);
        let l = l as u64;
        for size in [100, 200, 300] {
            b.malloc(size);
        }
        let p = b.rt.allocations()[0].ptr;
        let one = |b: &mut Bench<8, 3>, op: WOp| b.run(vec![vec![op]]).pop().unwrap();
        let miss = one(&mut b, WOp::LoadMeta { p });
        assert_eq!(miss.reads, 8);
        assert_eq!(miss.latency, 4 + 8 * (l + 1), "LOADMETA miss");
        assert_eq!(one(&mut b, WOp::LoadMeta { p }).latency, 2, "LOADMETA hit");
        assert_eq!(one(&mut b, WOp::MemcheckG { p, w: 4, loc: miss.loc }).latency, 3, "MEMCHECK.G hit");
        one(&mut b, WOp::Invalidate { loc: miss.loc });
        let g_miss = one(&mut b, WOp::MemcheckG { p, w: 4, loc: miss.loc });
        assert_eq!((g_miss.latency, g_miss.fault), (6 + 2 * l, 0), "MEMCHECK.G location miss");
        assert_eq!(one(&mut b, WOp::LoadMeta { p: untag(p) }).latency, 1, "tag-0 LOADMETA");
        assert_eq!(one(&mut b, WOp::MemcheckS { a: 10, w: 4, base: 0, size: 12 }).latency, 2, "MEMCHECK.S");
        assert_eq!(one(&mut b, WOp::Flush).latency, 1, "FLUSH");
        b.rt.mlu_mut().set_mode(Mode::Hwonly);
        b.csr_write(CSR_MODE, 1);
        let hm = one(&mut b, WOp::MemcheckG { p, w: 4, loc: 0 });
        assert_eq!(hm.latency, 5 + hm.reads as u64 * (l + 1), "HWONLY miss");
        assert_eq!(one(&mut b, WOp::MemcheckG { p, w: 4, loc: 0 }).latency, 3, "HWONLY hit");
        b.check_counters();
    }
}
