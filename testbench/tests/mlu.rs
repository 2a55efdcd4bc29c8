//! The RTL MLU top (hw::mlu::Mlu, rust-hdl simulation, clock driven by hand)
//! against the golden model sim::mlu::Mlu, transaction by transaction, on
//! random programs run through the golden model's runtime (malloc/free/access
//! mixes, wild pointers, stale locations, shared checks, flushes), with the
//! runtime's memory image as the RTL's metadata memory: every response's
//! fault code, location, address and allocation, the replacement state after
//! every operation, and all counters at the end. Both structures, both modes,
//! 8 and 16 entries. Plus the documented latencies and the ordering cases
//! (flush requested during a traversal, invalidate right behind the fill of
//! the same location).
use hw::mlu::{Mlu, MluParams, CSR_MODE, CSR_ROOT, CSR_STEP_LIMIT, CSR_STRUCTURE};
use hw::traverser::Structures;
use sim::config::{Mode, MluConfig, Replacement, Structure};
use sim::fault::{Fault, FaultCode, Op};
use sim::memcheck::WIDTHS;
use sim::memory::MemoryImage;
use sim::pointer::{tagged, untag, NO_META};
use sim::runtime::{AllocState, Runtime, RuntimeConfig};
use testbench::memport::{Latency, MemPort, Rng};
use testbench::mlu_driver::{MluDriver, Request, Response, RtlCounters};

fn op(o: Op) -> u8 {
    o.bits()
}

fn req(o: Op, ptr: u64, width: u32, loc: u64) -> Request {
    Request { op: op(o), ptr, width: width as u8, loc, sbase: 0, ssize: 0 }
}

/// The response must be what the model returned.
fn check_g(ctx: &str, rtl: &Response, model: &Result<u64, Fault>) {
    match model {
        Ok(a) => {
            assert_eq!(rtl.fault, 0, "{ctx}: fault (model passed) {rtl:?}");
            assert_eq!(rtl.addr, *a, "{ctx}: address");
        }
        Err(f) => {
            assert_eq!(rtl.fault, f.code.bits(), "{ctx}: fault (model {:?}) {rtl:?}", f.code);
            if let Some(m) = f.alloc {
                assert_eq!((rtl.base, rtl.size), (m.base, m.size), "{ctx}: fault's allocation");
            }
        }
    }
}

fn check_loadmeta(ctx: &str, rtl: &Response, model: &Result<u64, Fault>) {
    match model {
        Ok(loc) => {
            assert_eq!(rtl.fault, 0, "{ctx}: LOADMETA fault (model ok {loc:#x}) {rtl:?}");
            assert_eq!(rtl.loc, *loc, "{ctx}: LOADMETA location");
        }
        Err(f) => {
            assert_eq!(rtl.fault, f.code.bits(), "{ctx}: LOADMETA fault (model {:?})", f.code);
            assert_eq!(rtl.loc, NO_META, "{ctx}: a faulting LOADMETA answers NO_META");
        }
    }
}

struct Bench<const N: usize, const IW: usize> {
    rt: Runtime,
    drv: MluDriver<N, IW>,
    rng: Rng,
    latency: Latency,
    ready: u64,
    ctx: String,
    /// RTL responses by fault code.
    seen: [u64; 8],
}

impl<const N: usize, const IW: usize> Bench<N, IW> {
    fn new(structure: Structure, mode: Mode, seed: u64, latency: Latency, ready: u64) -> Self {
        Self::with_replacement(structure, mode, Replacement::Plru, seed, latency, ready)
    }

    fn with_replacement(structure: Structure, mode: Mode, replacement: Replacement, seed: u64, latency: Latency, ready: u64) -> Self {
        let mlu = MluConfig { entries: N, structure, mode, replacement, ..MluConfig::default() };
        let rt = Runtime::new(RuntimeConfig { mlu: mlu.clone(), seed, ..RuntimeConfig::default() }).unwrap();
        let mut rt = rt;
        rt.mlu_mut().set_read_log(true);
        let drv = MluDriver::new(Mlu::<N, IW>::new(MluParams::from_config(&mlu).unwrap()), None);
        let ctx = format!("N={N} {structure:?} {mode:?} {replacement:?} seed={seed} {latency:?} ready={ready}%");
        Bench { rt, drv, rng: Rng(seed ^ 0x5eed), latency, ready, ctx, seen: [0; 8] }
    }

    fn port<'a>(&mut self, img: &'a MemoryImage) -> MemPort<'a> {
        let mut p = MemPort::new(img, self.latency, self.rng.next_u64());
        p.ready_percent = self.ready;
        p
    }

    fn rtl(&mut self, r: Request) -> Response {
        let img = self.rt.memory().clone();
        let mut p = self.port(&img);
        let resp = self.drv.transact(&mut p, r);
        assert_eq!(resp.op, r.op, "{}: response op", self.ctx);
        self.seen[resp.fault as usize] += 1;
        // Read by read, the same metadata words as the model requested for
        // this operation (call the model first).
        let want = self.rt.mlu_mut().take_reads();
        assert_eq!(resp.reads, want, "{}: metadata reads of {r:?}", self.ctx);
        resp
    }

    /// After every operation: the replacement state equals the model's.
    fn check_state(&self, what: &str) {
        let want = self.rt.mlu().mlb().policy_bits();
        let got = self.drv.uut.mlb_repl_state.val().to_u64();
        assert_eq!(got, want, "{}: replacement state after {what}", self.ctx);
    }

    fn sync_root(&mut self) {
        let root = self.rt.root();
        if self.drv.uut.csr_root.val().to_u64() != root {
            self.drv.csr_write(CSR_ROOT, root);
        }
    }

    fn loadmeta(&mut self, p: u64) -> Result<u64, Fault> {
        let model = self.rt.loadmeta(p);
        let r = self.rtl(req(Op::LoadMeta, p, 0, 0));
        check_loadmeta(&format!("{} LOADMETA {p:#x}", self.ctx), &r, &model);
        self.check_state("LOADMETA");
        model
    }

    fn memcheck_g(&mut self, p: u64, w: u32, loc: u64) {
        let model = self.rt.memcheck_g(p, w, loc);
        let r = self.rtl(req(Op::MemcheckG, p, w, loc));
        check_g(&format!("{} MEMCHECK.G p={p:#x} w={w} loc={loc:#x}", self.ctx), &r, &model);
        self.check_state("MEMCHECK.G");
    }

    fn access(&mut self, p: u64, w: u32) {
        match self.rt.mode() {
            Mode::Compiler => {
                if let Ok(loc) = self.loadmeta(p) {
                    self.memcheck_g(p, w, loc);
                }
            }
            Mode::Hwonly => self.memcheck_g(p, w, 0),
        }
    }

    fn invalidate(&mut self, loc: u64) {
        let r = self.rtl(req(Op::Invalidate, 0, 0, loc));
        assert_eq!(r.fault, 0);
        self.check_state("INVALIDATE");
    }

    fn malloc(&mut self, size: u64) {
        let before: Vec<AllocState> = self.rt.allocations().iter().map(|a| a.state).collect();
        if self.rt.malloc(size, None).is_err() {
            return;
        }
        // Mirror the runtime's INVALIDATEs of retired nodes, then the root.
        let retired: Vec<u64> = self.rt.allocations()[..before.len()]
            .iter()
            .zip(&before)
            .filter(|(a, &b)| a.state == AllocState::Retired && b != AllocState::Retired)
            .map(|(a, _)| a.location)
            .collect();
        for loc in retired {
            self.invalidate(loc);
        }
        self.sync_root();
    }

    fn free(&mut self, p: u64) {
        let loc = self.rt.allocations().iter().find(|a| a.ptr == p && a.state == AllocState::Live).map(|a| a.location);
        if self.rt.free(p).is_ok() {
            self.invalidate(loc.expect("a successful free had a live allocation"));
        }
    }

    fn random_ptr(&mut self) -> u64 {
        let allocs = self.rt.allocations();
        if allocs.is_empty() || self.rng.range(0, 9) == 0 {
            // A wild pointer: random tag (0 included), random address.
            let tag = [0u8, 1, 0x42, 0xFF][self.rng.range(0, 3) as usize];
            return tagged(tag, 0x7f00_0000_0000 + self.rng.range(0, 1 << 20));
        }
        // Mostly live allocations (hits), sometimes freed or retired ones
        // (dangling pointers).
        let live: Vec<&sim::runtime::Allocation> = allocs.iter().filter(|a| a.state == AllocState::Live).collect();
        let a = if !live.is_empty() && self.rng.range(0, 4) != 0 {
            live[self.rng.range(0, live.len() as u64 - 1) as usize]
        } else {
            &allocs[self.rng.range(0, allocs.len() as u64 - 1) as usize]
        };
        let (ptr, size) = (a.ptr, a.size);
        let off = match self.rng.range(0, 9) {
            0 => 0,
            1 => size - 1,
            2 => size,                              // one past the end
            3 => (self.rng.range(1, 64) as i64).wrapping_neg() as u64, // before the base
            _ => self.rng.range(0, size - 1),
        };
        ptr.wrapping_add(off)
    }

    /// One random operation.
    fn step(&mut self) {
        let live = self.rt.allocations().iter().filter(|a| a.state == AllocState::Live).count();
        match self.rng.range(0, 99) {
            0..=9 if live < 60 => {
                let size = [1, 8, 100, 512, 2400, 4096, 10_000][self.rng.range(0, 6) as usize];
                self.malloc(size);
            }
            15..=22 => {
                if let Some(p) = {
                    let al = self.rt.allocations();
                    (!al.is_empty()).then(|| al[self.rng.range(0, al.len() as u64 - 1) as usize].ptr)
                } {
                    self.free(p);
                }
            }
            23..=74 => {
                let p = self.random_ptr();
                let w = WIDTHS[self.rng.range(0, 4) as usize];
                self.access(p, w);
            }
            75..=80 => {
                let p = self.random_ptr();
                let _ = self.loadmeta(p);
            }
            81..=88 => {
                // MEMCHECK.G with a location that may be stale, wrong,
                // misaligned, 0 or NO_META.
                let p = self.random_ptr();
                let w = WIDTHS[self.rng.range(0, 4) as usize];
                let al = self.rt.allocations();
                let loc = match self.rng.range(0, 4) {
                    0 => 0,
                    1 => NO_META,
                    2 if !al.is_empty() => al[self.rng.range(0, al.len() as u64 - 1) as usize].location + self.rng.range(0, 31),
                    _ if !al.is_empty() => al[self.rng.range(0, al.len() as u64 - 1) as usize].location,
                    _ => 0x1000_0000_0000,
                };
                self.memcheck_g(p, w, loc);
            }
            89..=93 => {
                let base = self.rng.range(0, 1 << 16) as u32;
                let size = self.rng.range(0, 1 << 16) as u32;
                let a = (base as u64 + size as u64).wrapping_sub(self.rng.range(0, 40)).wrapping_add(self.rng.range(0, 40))
                    & 0xFFFF_FFFF;
                let w = WIDTHS[self.rng.range(0, 4) as usize];
                let model = self.rt.memcheck_s(a, w, base as u64, size as u64);
                let r = self.rtl(Request { op: op(Op::MemcheckS), ptr: a, width: w as u8, loc: 0, sbase: base, ssize: size });
                match model {
                    Ok(x) => assert_eq!((r.fault, r.addr), (0, x), "{}: MEMCHECK.S", self.ctx),
                    Err(f) => assert_eq!(r.fault, f.code.bits(), "{}: MEMCHECK.S", self.ctx),
                }
                self.check_state("MEMCHECK.S");
            }
            94..=95 => {
                self.rt.flush_mlb();
                let r = self.rtl(req(Op::Flush, 0, 0, 0));
                assert_eq!(r.fault, 0);
                self.check_state("FLUSH");
            }
            96..=97 => {
                let al = self.rt.allocations();
                if !al.is_empty() {
                    let loc = al[self.rng.range(0, al.len() as u64 - 1) as usize].location;
                    self.rt.mlu_mut().invalidate(loc);
                    self.invalidate(loc);
                }
            }
            _ => {
                // Change the step limit now and then (small limits make long
                // lists fault TRAVERSAL_LIMIT).
                let limit = [3u32, 9, 4096, 4096][self.rng.range(0, 3) as usize];
                self.rt.mlu_mut().set_step_limit(limit);
                self.drv.csr_write(CSR_STEP_LIMIT, limit as u64);
            }
        }
    }

    fn check_counters(&self) {
        let want = RtlCounters::from_model(self.rt.counters());
        assert_eq!(self.drv.counters(), want, "{}: counters", self.ctx);
    }
}

fn program<const N: usize, const IW: usize>(structure: Structure, mode: Mode, seed: u64, ops: usize, latency: Latency, ready: u64) {
    program_with::<N, IW>(structure, mode, Replacement::Plru, seed, ops, latency, ready)
}

fn program_with<const N: usize, const IW: usize>(
    structure: Structure,
    mode: Mode,
    replacement: Replacement,
    seed: u64,
    ops: usize,
    latency: Latency,
    ready: u64,
) {
    let mut b = Bench::<N, IW>::with_replacement(structure, mode, replacement, seed, latency, ready);
    for _ in 0..ops {
        b.step();
    }
    b.check_counters();
    // Every fault code but SHARED_OOB's neighbours came up (MEMCHECK.S faults too).
    for f in [FaultCode::None, FaultCode::OutOfBounds, FaultCode::UseAfterFree, FaultCode::TagMismatch, FaultCode::NoMeta, FaultCode::SharedOob] {
        assert!(b.seen[f.bits() as usize] > 0, "{}: no {f:?} response in the program: {:?}", b.ctx, b.seen);
    }
    let c = b.rt.counters();
    eprintln!("{}: {} cycles, {c:?}", b.ctx, b.drv.cycle);
    // The program exercised the paths it is meant to.
    assert!(c.range_hits > 0 && c.range_misses > 0 && c.faults > 0 && c.steps > 0, "{}: {c:?}", b.ctx);
    if mode == Mode::Compiler {
        assert!(c.loc_hits > 0 && c.loc_misses > 0, "{}: {c:?}", b.ctx);
    }
}

#[test]
fn random_programs_8_entries_match_the_model() {
    for (i, s) in [Structure::Bst, Structure::List].into_iter().enumerate() {
        for (j, m) in [Mode::Compiler, Mode::Hwonly].into_iter().enumerate() {
            let seed = 100 + (2 * i + j) as u64;
            let (lat, ready) = if j == 0 { (Latency::Random(1, 5), 100) } else { (Latency::Random(1, 3), 70) };
            // List walks are long (every miss visits half the list): fewer ops.
            let ops = if s == Structure::List { 700 } else { 1200 };
            program::<8, 3>(s, m, seed, ops, lat, ready);
        }
    }
}

#[test]
fn random_programs_16_entries_match_the_model() {
    for (i, s) in [Structure::Bst, Structure::List].into_iter().enumerate() {
        for (j, m) in [Mode::Compiler, Mode::Hwonly].into_iter().enumerate() {
            let seed = 200 + (2 * i + j) as u64;
            let ops = if s == Structure::List { 700 } else { 1200 };
            program::<16, 4>(s, m, seed, ops, Latency::Random(1, 4), 90);
        }
    }
}

/// Latencies as documented on hw::mlu (ready always high, fixed latency L).
#[test]
fn documented_latencies() {
    for l in [1u32, 4] {
        let mut b = Bench::<8, 3>::new(Structure::List, Mode::Compiler, 7, Latency::Fixed(l), 100);
        let l = l as u64;
        for size in [100, 200, 300] {
            b.malloc(size);
        }
        let p = b.rt.allocations()[0].ptr; // the tail of the list: 3 steps
        let img = b.rt.memory().clone();
        let mut port = b.port(&img);
        let miss = b.drv.transact(&mut port, req(Op::LoadMeta, p, 0, 0));
        let r = miss.reads.len() as u64;
        assert_eq!(r, 3 * 3 - 1, "three visits, the last without a link read");
        assert_eq!(miss.cycles, 3 + r * (l + 1), "LOADMETA miss");
        let hit = b.drv.transact(&mut port, req(Op::LoadMeta, p, 0, 0));
        assert_eq!((hit.cycles, hit.loc), (2, miss.loc), "LOADMETA hit");
        let g_hit = b.drv.transact(&mut port, req(Op::MemcheckG, p, 4, miss.loc));
        assert_eq!((g_hit.cycles, g_hit.fault), (3, 0), "MEMCHECK.G location hit");
        b.drv.transact(&mut port, req(Op::Invalidate, 0, 0, miss.loc));
        let g_miss = b.drv.transact(&mut port, req(Op::MemcheckG, p, 4, miss.loc));
        assert_eq!((g_miss.cycles, g_miss.fault), (5 + 2 * l, 0), "MEMCHECK.G location miss");
        assert_eq!(g_miss.reads, vec![miss.loc, miss.loc + 8]);
        let t0 = b.drv.transact(&mut port, req(Op::LoadMeta, untag(p), 0, 0));
        assert_eq!((t0.cycles, t0.loc), (1, 0), "tag-0 LOADMETA");
        let s = b.drv.transact(&mut port, Request { op: op(Op::MemcheckS), ptr: 10, width: 4, loc: 0, sbase: 0, ssize: 12 });
        assert_eq!((s.cycles, s.fault), (2, FaultCode::SharedOob.bits()), "MEMCHECK.S");
        let f = b.drv.transact(&mut port, req(Op::Flush, 0, 0, 0));
        assert_eq!(f.cycles, 1, "FLUSH");
        // HWONLY MEMCHECK.G: range miss then hit.
        b.drv.csr_write(CSR_MODE, 1);
        let hm = b.drv.transact(&mut port, req(Op::MemcheckG, p, 4, 0));
        assert_eq!((hm.cycles, hm.fault), (4 + hm.reads.len() as u64 * (l + 1), 0), "HWONLY miss");
        let hh = b.drv.transact(&mut port, req(Op::MemcheckG, p, 4, 0));
        assert_eq!((hh.cycles, hh.fault), (3, 0), "HWONLY hit");
    }
}

/// A FLUSH presented while a LOADMETA traversal is in flight waits for it
/// (blocking MLU) and then empties the MLB, including the entry just filled;
/// an INVALIDATE right behind the fill of the same location drops it. Both
/// match the model's sequential order.
#[test]
fn flush_during_traversal_and_invalidate_behind_fill() {
    for structure in [Structure::List, Structure::Bst] {
        let mut b = Bench::<8, 3>::new(structure, Mode::Compiler, 9, Latency::Fixed(3), 100);
        for i in 0..12 {
            b.malloc(100 + 64 * i);
        }
        let p = b.rt.allocations()[2].ptr;
        let img = b.rt.memory().clone();

        // FLUSH behind a traversal.
        let model_loc = b.rt.loadmeta(p).unwrap();
        let model_reads = b.rt.mlu_mut().take_reads();
        b.rt.flush_mlb();
        let mut port = b.port(&img);
        let (lm, fl) = b.drv.transact_then(&mut port, req(Op::LoadMeta, p, 0, 0), Some(req(Op::Flush, 0, 0, 0)));
        let fl = fl.unwrap();
        assert!(lm.reads.len() >= 2, "the LOADMETA traversed");
        assert_eq!(lm.reads, model_reads);
        assert_eq!((lm.fault, lm.loc), (0, model_loc));
        assert_eq!((fl.op, fl.fault), (op(Op::Flush), 0));
        assert!(fl.reads.is_empty());
        b.check_state("FLUSH behind LOADMETA");
        // The flush emptied the MLB: the same LOADMETA misses again.
        let _ = b.loadmeta(p);
        assert_eq!(b.rt.counters().range_misses, 2);

        // INVALIDATE of the location being filled, presented during the walk.
        let q = b.rt.allocations()[7].ptr;
        let loc_q = b.rt.node_of(q).unwrap();
        let model = b.rt.loadmeta(q);
        let model_reads = b.rt.mlu_mut().take_reads();
        b.rt.mlu_mut().invalidate(loc_q);
        let mut port = b.port(&img);
        let (lm, inv) = b.drv.transact_then(&mut port, req(Op::LoadMeta, q, 0, 0), Some(req(Op::Invalidate, 0, 0, loc_q)));
        check_loadmeta("LOADMETA before INVALIDATE", &lm, &model);
        assert_eq!(lm.reads, model_reads);
        assert_eq!(inv.unwrap().fault, 0);
        b.check_state("INVALIDATE behind LOADMETA");
        // Gone from the MLB: the MEMCHECK.G location search misses and fetches.
        let misses = b.rt.counters().loc_misses;
        b.memcheck_g(q, 8, loc_q);
        assert_eq!(b.rt.counters().loc_misses, misses + 1);
        // A CSR write during a traversal takes effect for the next walk only.
        b.check_counters();
    }
}

/// Reset clears the MLB, the counters and the CSRs; a traversal in flight is
/// abandoned.
#[test]
fn reset_clears_mlb_counters_and_csrs() {
    let mut b = Bench::<16, 4>::new(Structure::Bst, Mode::Compiler, 5, Latency::Fixed(1), 100);
    for i in 0..10 {
        b.malloc(64 + i);
    }
    for k in 0..10 {
        let p = b.rt.allocations()[k].ptr;
        b.access(p, 4);
    }
    b.drv.csr_write(CSR_STEP_LIMIT, 3);
    b.drv.csr_write(CSR_STRUCTURE, 0);
    assert_ne!(b.drv.counters(), RtlCounters::default());
    b.drv.reset();
    b.rt.mlu_mut().reset();
    let root = b.rt.root();
    b.rt.mlu_mut().set_root(root);
    assert_eq!(b.drv.counters(), RtlCounters::default());
    assert_eq!(b.drv.uut.csr_root.val().to_u64(), 0);
    assert_eq!(b.drv.uut.csr_step_limit.val().to_u64(), 4096);
    assert!(b.drv.uut.csr_structure.val(), "bst-built MLU resets to BST");
    assert_eq!(b.drv.uut.mlb_repl_state.val().to_u64(), 0);
    b.sync_root();
    // Everything misses again, as in the reset model.
    for k in 0..10 {
        let p = b.rt.allocations()[k].ptr;
        b.access(p, 4);
    }
    b.check_counters();
    assert_eq!(b.rt.counters().range_misses, 10);
}

/// Structures::Both: the STRUCTURE CSR selects the walk.
#[test]
fn both_structures_built_csr_selects() {
    for structure in [Structure::List, Structure::Bst] {
        let mlu = MluConfig { entries: 8, structure, ..MluConfig::default() };
        let mut rt = Runtime::new(RuntimeConfig { mlu, seed: 3, ..RuntimeConfig::default() }).unwrap();
        let mut params = MluParams::new(Structures::Both);
        params.structure = Structure::Bst;
        let mut drv = MluDriver::new(Mlu::<8, 3>::new(params), None);
        for i in 0..20 {
            rt.malloc(100 + i, None).unwrap();
        }
        drv.csr_write(CSR_ROOT, rt.root());
        drv.csr_write(CSR_STRUCTURE, structure.bits().unwrap() as u64);
        let img = rt.memory().clone();
        for k in 0..20 {
            let p = rt.allocations()[(k * 7) % 20].ptr;
            let model = rt.loadmeta(p);
            let mut port = MemPort::new(&img, Latency::Random(1, 3), k as u64);
            let r = drv.transact(&mut port, req(Op::LoadMeta, p, 0, 0));
            check_loadmeta(&format!("both/{structure:?}"), &r, &model);
        }
        assert_eq!(drv.counters(), RtlCounters::from_model(rt.counters()));
    }
}

/// The VCD the driver writes (what `mlugen wave` uses): a LOADMETA miss shows
/// the traverser's states and every word address of the walk on the memory
/// port, at distinct timestamps.
#[test]
fn vcd_of_a_loadmeta_miss() {
    let mlu = MluConfig { entries: 8, structure: Structure::Bst, ..MluConfig::default() };
    let mut rt = Runtime::new(RuntimeConfig { mlu: mlu.clone(), ..RuntimeConfig::default() }).unwrap();
    for i in 0..6 {
        rt.malloc(256 + 64 * i, None).unwrap();
    }
    let path = std::env::temp_dir().join(format!("mlugen-d-{}.vcd", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let mut drv = MluDriver::new(
        Mlu::<8, 3>::new(MluParams::from_config(&mlu).unwrap()),
        Some(Box::new(std::io::BufWriter::new(file))),
    );
    drv.csr_write(CSR_ROOT, rt.root());
    let img = rt.memory().clone();
    let mut port = MemPort::new(&img, Latency::Fixed(3), 1);
    let p = rt.allocations()[0].ptr;
    let r = drv.transact(&mut port, req(Op::LoadMeta, p, 0, 0));
    assert_eq!(r.loc, rt.loadmeta(p).unwrap());
    drv.finish().unwrap();
    drop(drv);
    let vcd = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).ok();
    for var in ["clock", "req_valid", "resp_valid", "mem_req_addr", "mem_resp_data", "cnt_steps"] {
        assert!(vcd.contains(&format!(" {var} $end")), "VCD declares {var}");
    }
    for state in ["sTraverse", "sReqBase", "sWaitSize", "sReqLink", "sWaitLink"] {
        assert!(vcd.contains(state), "VCD shows state {state}");
    }
    for a in &r.reads {
        assert!(vcd.contains(&format!("b{a:064b} ")), "VCD shows the read of {a:#x}");
    }
    let stamps: Vec<u64> = vcd.lines().filter_map(|l| l.strip_prefix('#')).map(|t| t.parse().unwrap()).collect();
    assert!(stamps.len() as u64 >= 2 * r.cycles && stamps.windows(2).all(|w| w[0] < w[1]));
}

/// Round-robin replacement (not among the committed tops, but generated on
/// request): the same comparison, pointer state included.
#[test]
fn random_programs_round_robin_match_the_model() {
    program_with::<8, 3>(Structure::Bst, Mode::Compiler, Replacement::RoundRobin, 300, 800, Latency::Random(1, 3), 100);
    program_with::<4, 2>(Structure::List, Mode::Hwonly, Replacement::RoundRobin, 301, 500, Latency::Fixed(1), 100);
}

/// Corrupted structures: a poisoned node (MEM_ERROR on every walk or fetch
/// that reads it) and a cycle (TRAVERSAL_LIMIT) in the middle of a random
/// program, through the runtime's test hooks; the RTL must fault exactly as
/// the model does and count the same.
#[test]
fn corrupted_structures_fault_like_the_model() {
    for (k, structure) in [Structure::List, Structure::Bst].into_iter().enumerate() {
        for mode in [Mode::Compiler, Mode::Hwonly] {
            let mut b = Bench::<8, 3>::new(structure, mode, 400 + k as u64, Latency::Random(1, 3), 100);
            b.rt.mlu_mut().set_step_limit(64);
            b.drv.csr_write(CSR_STEP_LIMIT, 64);
            for _ in 0..30 {
                b.malloc(300);
            }
            for i in 0..300 {
                if i == 100 {
                    // Poison a live node.
                    let al: Vec<_> = b.rt.allocations().iter().filter(|a| a.state == AllocState::Live).map(|a| a.location).collect();
                    let loc = al[b.rng.range(0, al.len() as u64 - 1) as usize];
                    b.rt.poison_node(loc);
                }
                if i == 250 {
                    // Poison the head/root: every walk from now on errors.
                    let root = b.rt.root();
                    b.rt.poison_node(root);
                }
                if i == 200 {
                    // A cycle: the first node's link0 points at the root.
                    let loc = b.rt.allocations()[0].location;
                    let root = b.rt.root();
                    b.rt.corrupt_link(loc, 0, root);
                    b.rt.corrupt_link(loc, 1, root);
                }
                // No mallocs/frees after the corruption starts (the runtime
                // would repair or trip over it); accesses and MLB ops only.
                if i < 100 {
                    b.step();
                } else {
                    let p = b.random_ptr();
                    match b.rng.range(0, 9) {
                        0 => {
                            b.rt.flush_mlb();
                            b.rtl(req(Op::Flush, 0, 0, 0));
                        }
                        _ => b.access(p, 4),
                    }
                }
            }
            b.check_counters();
            let c = b.rt.counters();
            assert!(c.faults > 0 && c.steps > 0, "{}", b.ctx);
            let (limit, mem) = (FaultCode::TraversalLimit.bits() as usize, FaultCode::MemError.bits() as usize);
            assert!(b.seen[limit] > 0 && b.seen[mem] > 0, "{}: faults seen {:?}", b.ctx, b.seen);
        }
    }
}

/// The configurations that are generated on request but not committed (both
/// structures with the STRUCTURE CSR, round-robin, 1 and 32 entries, HWONLY
/// reset mode) emit Verilog that passes the same lint, Yosys and iverilog
/// checks as the committed tops.
#[test]
fn uncommitted_mlu_configurations_lint() {
    use hw::generate::{TopKind, TopSpec};
    use testbench::lint::{iverilog_parse, verilator_lint, yosys_check};
    let dir = std::env::temp_dir().join(format!("mlugen-d-lint-{}", std::process::id()));
    for (entries, structures, replacement, mode) in [
        (8, Structures::Both, Replacement::Plru, Mode::Compiler),
        (16, Structures::Bst, Replacement::RoundRobin, Mode::Hwonly),
        (1, Structures::List, Replacement::Plru, Mode::Compiler),
        (32, Structures::Both, Replacement::RoundRobin, Mode::Compiler),
    ] {
        let top = TopSpec::new(TopKind::Mlu { entries, structures, replacement, mode, step_limit: 100 });
        let g = top.build().unwrap();
        let (v, _) = g.write(&dir).unwrap();
        verilator_lint(&v, g.name()).unwrap();
        iverilog_parse(&v, g.name()).unwrap();
        yosys_check(&g.verilog, &g.manifest).unwrap();
    }
    std::fs::remove_dir_all(&dir).ok();
}
