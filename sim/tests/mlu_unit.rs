//! sim::mlu_unit (the MLU as an SM unit, cycle by cycle) against the
//! transaction-level model sim::mlu::Mlu, which answers every operation
//! without timing: each response of the unit, whatever the port's latency,
//! order and back-pressure, equals the transaction model's answer lane by
//! lane. And the timing properties the unit exists for: one request per
//! cycle on hits, K misses overlapped, merged misses, no duplicate fill, and
//! no stale entry after an INVALIDATE that races a walk.
use sim::canary::alloc_unit::rtl_heap_config;
use sim::canary::heap::{CheckMode, HeapConfig};
use sim::config::{Mode, MluConfig, Structure};
use sim::device_heap::DEFAULT_DIRECTORY_BASE;
use sim::fault::{FaultCode, Op};
use sim::memory::MetaMemory;
use sim::meta_port::{PortParams, PortSim};
use sim::mlu::Mlu;
use sim::mlu_unit::{MluUnit, UnitIn, UnitParams, UnitRequest, UnitResponse};
use sim::pointer::{tagged, untag, NO_META, TAG_FREED};
use sim::runtime::{Runtime, RuntimeConfig, SplitMix64};
use std::collections::{BTreeMap, VecDeque};

/// A heap of `n` allocations in a runtime (its memory holds the structure).
fn heap(structure: Structure, n: usize, seed: u64) -> (Runtime, Vec<u64>) {
    let cfg = RuntimeConfig { mlu: MluConfig { structure, ..MluConfig::default() }, seed, ..RuntimeConfig::default() };
    let mut rt = Runtime::new(cfg).unwrap();
    let mut rng = SplitMix64(seed);
    let ptrs = (0..n).map(|_| rt.malloc(16 + rng.next_u64() % 4000, None).unwrap()).collect();
    (rt, ptrs)
}

fn params(structure: Structure, walkers: usize, lanes: usize) -> UnitParams {
    UnitParams { cfg: MluConfig { structure, ..MluConfig::default() }, walkers, lanes, ..UnitParams::default() }
}

/// Drives a unit: presents queued requests in order, runs the port, and
/// records each response with its cycle.
struct Rig {
    unit: MluUnit,
    port: PortSim,
    queue: VecDeque<UnitRequest>,
    /// id -> (cycle presented first, cycle accepted).
    sent: BTreeMap<u32, (u64, u64)>,
    /// (cycle, response).
    got: Vec<(u64, UnitResponse)>,
}

impl Rig {
    fn new(p: &UnitParams, port: PortParams, root: u64) -> Rig {
        let mut unit = MluUnit::new(p).unwrap();
        unit.set_root(root);
        Rig { unit, port: PortSim::new(port), queue: VecDeque::new(), sent: BTreeMap::new(), got: vec![] }
    }

    /// One cycle; `mem` is what the port reads.
    fn step(&mut self, mem: &impl MetaMemory) {
        let c = self.unit.cycle();
        let out = self.unit.outputs();
        let (ready, resp) = self.port.cycle(mem, out.mem_req.as_ref());
        if let Some(r) = self.queue.front() {
            self.sent.entry(r.id).or_insert((c, 0));
        }
        let o = self.unit.tick(UnitIn { req: self.queue.front(), mem_req_ready: ready, mem_resp: resp }).unwrap();
        assert_eq!(o, out, "outputs() and tick() agree");
        if o.req_ready && self.queue.front().is_some() {
            let r = self.queue.pop_front().unwrap();
            self.sent.get_mut(&r.id).unwrap().1 = c;
        }
        if let Some(r) = o.resp {
            self.got.push((c, r));
        }
        // The MLB never holds a location twice.
        let mlb = self.unit.mlb();
        for e in mlb.entries().iter().filter(|e| e.valid) {
            assert_eq!(mlb.location_matches(e.location).count_ones(), 1, "cycle {c}: location {:#x} twice in the MLB", e.location);
        }
    }

    /// Run until every queued request is answered.
    fn drain(&mut self, mem: &impl MetaMemory, max_cycles: u64) {
        let start = self.unit.cycle();
        while !(self.queue.is_empty() && self.unit.is_idle()) {
            assert!(self.unit.cycle() - start < max_cycles, "not drained after {max_cycles} cycles");
            self.step(mem);
        }
    }
}

fn lanes_req(id: u32, op: Op, lanes: usize, mask: u32, ptrs: impl Fn(usize) -> u64, width: u32, loc: u64) -> UnitRequest {
    UnitRequest { id, op, mask, ptrs: (0..lanes).map(ptrs).collect(), width, loc, sbase: 0, ssize: 0 }
}

fn loadmeta(id: u32, lanes: usize, p: u64) -> UnitRequest {
    lanes_req(id, Op::LoadMeta, lanes, 1, |i| if i == 0 { p } else { 0 }, 0, 0)
}

/// The transaction model's answer to `r`, lane by lane: (pass mask, lowest
/// faulting lane and its fault, LOADMETA location).
fn expected(mlu: &mut Mlu, mem: &impl MetaMemory, r: &UnitRequest) -> (u32, Option<(u8, FaultCode)>, u64) {
    let (mut pass, mut fault, mut loc) = (0u32, None, 0u64);
    match r.op {
        Op::LoadMeta => match mlu.loadmeta(mem, r.ptrs[0]) {
            Ok(l) => {
                pass = 1;
                loc = l;
            }
            Err(f) => fault = Some((0, f.code)),
        },
        Op::MemcheckG | Op::MemcheckS => {
            for (i, &p) in r.ptrs.iter().enumerate().filter(|(i, _)| r.mask >> i & 1 == 1) {
                let v = if r.op == Op::MemcheckG { mlu.memcheck_g(mem, p, r.width, r.loc) } else { mlu.memcheck_s(p, r.width, r.sbase, r.ssize) };
                match v {
                    Ok(_) => pass |= 1 << i,
                    Err(f) => {
                        fault.get_or_insert((i as u8, f.code));
                    }
                }
            }
        }
        Op::Invalidate | Op::Flush => {}
    }
    (pass, fault, loc)
}

fn check_response(mlu: &mut Mlu, mem: &impl MetaMemory, req: &UnitRequest, got: &UnitResponse) {
    let (pass, fault, loc) = expected(mlu, mem, req);
    let ctx = format!("request {req:?}");
    assert_eq!(got.op, req.op, "{ctx}");
    assert_eq!(got.pass, pass, "{ctx}: pass mask");
    assert_eq!(got.fault, fault.map_or(FaultCode::None, |f| f.1), "{ctx}: fault");
    assert_eq!(got.lane, fault.map_or(0, |f| f.0), "{ctx}: faulting lane");
    if req.op == Op::LoadMeta && fault.is_none() {
        assert_eq!(got.loc, loc, "{ctx}: location");
    }
    assert_eq!(got.addrs, req.ptrs.iter().map(|&p| untag(p)).collect::<Vec<_>>(), "{ctx}: untagged addresses");
}

/// Warm MLB: a warp-wide MEMCHECK.G stream that hits is taken one per cycle
/// and every response comes at the fixed latency.
#[test]
fn hits_are_answered_one_per_cycle_at_the_fixed_latency() {
    for (mlb_latency, check_latency) in [(1, 1), (2, 1), (2, 2)] {
        let (rt, ptrs) = heap(Structure::Bst, 6, 3);
        let p = UnitParams { mlb_latency, check_latency, ..params(Structure::Bst, 4, 32) };
        let mut rig = Rig::new(&p, PortParams::default(), rt.root());
        let mut locs = vec![];
        for (i, &ptr) in ptrs.iter().enumerate() {
            rig.queue.push_back(loadmeta(i as u32, 32, ptr));
        }
        rig.drain(rt.memory(), 10_000);
        rig.got.sort_by_key(|(_, r)| r.id);
        for (_, r) in &rig.got {
            locs.push(r.loc);
        }
        let n = 2000u32;
        for k in 0..n {
            let a = (k as usize) % ptrs.len();
            rig.queue.push_back(lanes_req(1000 + k, Op::MemcheckG, 32, 0xFFFF_FFFF, |i| ptrs[a] + 4 * i as u64, 4, locs[a]));
        }
        rig.got.clear();
        let start = rig.unit.cycle();
        let misses = rig.unit.counters().misses;
        rig.drain(rt.memory(), 10_000);
        let cycles = rig.unit.cycle() - start;
        assert_eq!(rig.got.len(), n as usize);
        assert_eq!(cycles, n as u64 + p.hit_latency() as u64, "m={mlb_latency} c={check_latency}: {n} hits in {cycles} cycles");
        for (c, r) in &rig.got {
            let (presented, accepted) = rig.sent[&r.id];
            assert_eq!(presented, accepted, "never held up");
            assert_eq!(*c - accepted, p.hit_latency() as u64, "latency of a hit");
            assert_eq!(r.fault, FaultCode::None);
        }
        assert_eq!(rig.unit.counters().misses, misses, "no miss once warm");
        eprintln!("m={mlb_latency} c={check_latency}: {n} warp-wide hits in {cycles} cycles ({:.3} per cycle)", n as f64 / cycles as f64);
    }
}

/// K cold LOADMETAs to different allocations take about one walk, not K.
#[test]
fn k_misses_to_different_blocks_overlap() {
    let (rt, ptrs) = heap(Structure::Bst, 64, 5);
    let mut time = BTreeMap::new();
    for k in [1, 2, 4, 8] {
        let mut rig = Rig::new(&params(Structure::Bst, k, 32), PortParams { min_latency: 30, max_latency: 30, ..Default::default() }, rt.root());
        for i in 0..k {
            rig.queue.push_back(loadmeta(i as u32, 32, ptrs[i * 7]));
        }
        rig.drain(rt.memory(), 100_000);
        assert_eq!(rig.got.len(), k);
        assert_eq!(rig.unit.counters().walks, k as u64);
        time.insert(k, rig.unit.cycle());
    }
    // One walk of about 6 nodes at 32 cycles each; K walks in parallel take
    // at most a few cycles more each (port arbitration, staggered starts).
    eprintln!("cycles for K cold misses with K walkers: {time:?}");
    for k in [2, 4, 8] {
        assert!(time[&k] < time[&1] * 3 / 2, "{k} misses took {} cycles, one took {}", time[&k], time[&1]);
    }
    // With one walker, K misses are serial.
    let mut rig = Rig::new(&params(Structure::Bst, 1, 32), PortParams { min_latency: 30, max_latency: 30, ..Default::default() }, rt.root());
    for i in 0..4 {
        rig.queue.push_back(loadmeta(i as u32, 32, ptrs[i * 7]));
    }
    rig.drain(rt.memory(), 100_000);
    assert!(rig.unit.cycle() > time[&1] * 3, "one walker: 4 misses in {} cycles", rig.unit.cycle());
}

/// A second miss to a block whose walk is in flight waits for that walk.
#[test]
fn a_second_miss_merges_onto_the_walk_in_flight() {
    let (rt, ptrs) = heap(Structure::List, 20, 7);
    let mut mlu = Mlu::new(&MluConfig { structure: Structure::List, ..Default::default() }).unwrap();
    mlu.set_root(rt.root());
    let mut rig = Rig::new(&params(Structure::List, 4, 32), PortParams { min_latency: 25, max_latency: 25, ..Default::default() }, rt.root());
    for i in 0..6 {
        rig.queue.push_back(loadmeta(i, 32, ptrs[3]));
    }
    rig.drain(rt.memory(), 100_000);
    let c = rig.unit.counters();
    assert_eq!((c.walks, c.misses, c.merged), (1, 6, 5), "{c:?}");
    for (_, r) in &rig.got {
        check_response(&mut mlu, rt.memory(), &loadmeta(r.id, 32, ptrs[3]), r);
    }
}

/// Two walks that find the same node (different addresses of one
/// allocation) fill it once.
#[test]
fn two_walks_of_one_block_fill_once() {
    let (rt, ptrs) = heap(Structure::Bst, 20, 9);
    let mut rig = Rig::new(&params(Structure::Bst, 4, 32), PortParams { min_latency: 25, max_latency: 25, ..Default::default() }, rt.root());
    rig.queue.push_back(loadmeta(0, 32, ptrs[5]));
    rig.queue.push_back(loadmeta(1, 32, ptrs[5] + 8));
    rig.drain(rt.memory(), 100_000);
    let c = rig.unit.counters();
    assert_eq!((c.walks, c.fills, c.fills_present), (2, 1, 1), "{c:?}");
    assert_eq!(rig.got[0].1.loc, rig.got[1].1.loc);
}

/// free() writes FREED into the node, then issues INVALIDATE; a location
/// fetch of that node already in flight read the live tag. The entry it
/// would fill must not survive: the next MEMCHECK.G faults USE_AFTER_FREE.
#[test]
fn an_invalidate_racing_a_fetch_leaves_no_stale_entry() {
    let (mut rt, ptrs) = heap(Structure::Bst, 8, 11);
    let loc = rt.node_of(ptrs[2]).unwrap();
    let mut rig = Rig::new(&params(Structure::Bst, 4, 32), PortParams { min_latency: 40, max_latency: 40, ..Default::default() }, rt.root());
    let check = |id| lanes_req(id, Op::MemcheckG, 32, 1, |i| ptrs[2] + i as u64, 1, loc);
    rig.queue.push_back(check(0));
    for _ in 0..10 {
        rig.step(rt.memory()); // the fetch is out
    }
    rt.free(ptrs[2]).unwrap();
    rig.queue.push_back(lanes_req(1, Op::Invalidate, 32, 0, |_| 0, 0, loc));
    rig.queue.push_back(check(2));
    rig.drain(rt.memory(), 10_000);
    let by_id: BTreeMap<u32, &UnitResponse> = rig.got.iter().map(|(_, r)| (r.id, r)).collect();
    assert_eq!(by_id[&0].fault, FaultCode::None, "ordered before the free");
    assert_eq!(by_id[&2].fault, FaultCode::UseAfterFree, "after the INVALIDATE");
    assert!(rig.unit.counters().fills_cancelled >= 1);
    for e in rig.unit.mlb().entries().iter().filter(|e| e.valid && e.location == loc) {
        assert_eq!(e.tag, TAG_FREED, "a stale entry survived the INVALIDATE");
    }
    // Again with a FLUSH racing a range walk.
    rig.queue.push_back(loadmeta(3, 32, ptrs[4]));
    for _ in 0..10 {
        rig.step(rt.memory());
    }
    rig.queue.push_back(lanes_req(4, Op::Flush, 32, 0, |_| 0, 0, 0));
    rig.drain(rt.memory(), 10_000);
    assert!(!rig.unit.mlb().entries().iter().any(|e| e.valid), "a walk in flight filled after the FLUSH");
}

/// Random requests, random port latency (1..80), responses out of order,
/// port back-pressure, INVALIDATE and FLUSH mixed in: every response equals
/// the transaction model's answer; every request is answered once.
#[test]
fn random_streams_match_the_transaction_model() {
    for (seed, structure, walkers, lanes, entries) in
        [(1, Structure::Bst, 4, 32, 8), (2, Structure::List, 2, 32, 4), (3, Structure::Bst, 1, 1, 2), (4, Structure::Bst, 8, 32, 16), (5, Structure::List, 4, 1, 1)]
    {
        let (rt, ptrs) = heap(structure, 40, seed);
        let locs: Vec<u64> = ptrs.iter().map(|&q| rt.node_of(q).unwrap()).collect();
        let allocs: Vec<(u64, u64)> = rt.allocations().iter().map(|a| (a.ptr, a.size)).collect();
        random_stream(&rt, &allocs, &locs, (seed, structure, walkers, lanes, entries));
    }
}

/// The same with the device heap attached (sim::device_heap): host
/// allocations and heap chunks, live and freed, side by side; lookups of
/// heap addresses read the directory instead of walking.
#[test]
fn device_heap_streams_match_the_transaction_model() {
    for (seed, structure, walkers, lanes, entries) in [(11, Structure::Bst, 4, 32, 8), (12, Structure::List, 2, 1, 2), (13, Structure::Bst, 1, 32, 1)] {
        let cfg = RuntimeConfig { mlu: MluConfig { structure, ..MluConfig::default() }, seed, ..RuntimeConfig::default() };
        let mut rt = Runtime::new(cfg).unwrap();
        let heap = HeapConfig { tag_seed: Some(seed as u16), ..rtl_heap_config(CheckMode::Free, 0) };
        rt.attach_device_heap(heap, DEFAULT_DIRECTORY_BASE).unwrap();
        let mut rng = SplitMix64(seed);
        let mut allocs = Vec::new();
        for _ in 0..8 {
            allocs.push((rt.malloc(16 + rng.below(2000), None).unwrap(), 0));
        }
        let mut dev = Vec::new();
        for _ in 0..24 {
            let size = 1 + rng.below(200);
            if let Ok(p) = rt.device_malloc(size, rng.below(8)) {
                dev.push((p, size));
            }
        }
        for &(p, _) in dev.iter().step_by(3) {
            rt.device_free(p).unwrap();
        }
        for a in allocs.iter_mut() {
            a.1 = rt.allocations().iter().find(|x| x.ptr == a.0).unwrap().size;
        }
        let d = rt.device_heap().unwrap();
        let mut locs: Vec<u64> = allocs.iter().map(|&(q, _)| rt.node_of(q).unwrap()).collect();
        locs.extend(dev.iter().map(|&(q, _)| d.location(untag(q) - 8)));
        allocs.extend(dev);
        random_stream(&rt, &allocs, &locs, (seed, structure, walkers, lanes, entries));
    }
}

/// 3000 random requests on the allocations `allocs` (pointer, size; their
/// locations `locs`) through the unit under a port with random latency,
/// order and back-pressure, each response checked against the transaction
/// model.
fn random_stream(rt: &Runtime, allocs: &[(u64, u64)], locs: &[u64], (seed, structure, walkers, lanes, entries): (u64, Structure, usize, usize, usize)) {
    let mem = rt.meta_memory();
    let cfg = MluConfig { structure, entries, ..MluConfig::default() };
    let p = UnitParams { cfg: cfg.clone(), walkers, lanes, mlb_latency: 1 + (seed as usize % 2), ..UnitParams::default() };
    let port = PortParams { min_latency: 1, max_latency: 80, ready_percent: 70, shuffle: true, seed, ..Default::default() };
    let mut rig = Rig::new(&p, port, rt.root());
    rig.unit.set_heap_window(rt.mlu().csrs().heap);
    let mut mlu = Mlu::new(&cfg).unwrap();
    mlu.set_root(rt.root());
    mlu.set_heap_window(rt.mlu().csrs().heap);
    let mut rng = SplitMix64(seed * 77);
    let mut reqs = BTreeMap::new();
    let n = 3000u32;
    for id in 0..n {
        let k = rng.next_u64() as usize % allocs.len();
        let (ptr, size) = allocs[k];
        let x = rng.next_u64();
        let lane_ptr = |i: usize| -> u64 {
            let h = x.rotate_left(i as u32 * 7) % 64;
            match h {
                0 => 0x1000 + i as u64,                                     // untagged
                1 => tagged(0x55, untag(ptr)),                               // wrong tag (likely)
                2 => ptr + size,                                             // one past the end
                3 => ptr.wrapping_sub(1 + i as u64 % 8),                     // just before
                _ => ptr + (h * 13 + i as u64) % size,                       // inside
            }
        };
        let op = match x % 100 {
            0..=14 => Op::LoadMeta,
            15..=89 => Op::MemcheckG,
            90..=95 => Op::MemcheckS,
            96..=98 => Op::Invalidate,
            _ => Op::Flush,
        };
        let loc = match (x >> 20) % 20 {
            0 => 0,
            1 => NO_META,
            2 => locs[(k + 1) % locs.len()],
            _ => locs[k],
        };
        let mask = if lanes == 1 { 1 } else { (x >> 24) as u32 | 1 };
        let mut r = lanes_req(id, op, lanes, mask, lane_ptr, [1, 2, 4, 8, 16][(x >> 40) as usize % 5], loc);
        if op == Op::LoadMeta {
            r = loadmeta(id, lanes, lane_ptr(0));
        }
        if op == Op::MemcheckS {
            r.ptrs = (0..lanes).map(|i| (x >> 8) % 0x1000 + 4 * i as u64).collect();
            r.sbase = 0x100;
            r.ssize = 0xC00;
        }
        rig.queue.push_back(r.clone());
        reqs.insert(id, r);
    }
    rig.drain(&mem, 1_000_000);
    assert_eq!(rig.got.len(), n as usize, "every request answered");
    let mut seen = std::collections::BTreeSet::new();
    for (_, r) in &rig.got {
        assert!(seen.insert(r.id), "request {} answered twice", r.id);
        check_response(&mut mlu, &mem, &reqs[&r.id], r);
    }
    let c = rig.unit.counters();
    let out_of_order = rig.got.windows(2).filter(|w| w[1].1.id < w[0].1.id).count();
    eprintln!("seed {seed} {structure:?} K={walkers} L={lanes} N={entries}: {} cycles, {c:?}, {out_of_order} responses overtook", rig.unit.cycle());
    assert!(c.merged > 0 && c.walks > 0 && out_of_order > 0 && c.stalls > 0, "the run exercised merges, walks, reordering and back-pressure: {c:?}");
}

/// Read errors end walks in MEM_ERROR; the unit keeps going.
#[test]
fn read_errors_fault_mem_error() {
    let (rt, ptrs) = heap(Structure::Bst, 16, 13);
    let port = PortParams { min_latency: 5, max_latency: 30, errors_per_million: 1_000_000, ..Default::default() };
    let mut rig = Rig::new(&params(Structure::Bst, 4, 32), port, rt.root());
    let loc = rt.node_of(ptrs[1]).unwrap();
    rig.queue.push_back(loadmeta(0, 32, ptrs[0]));
    rig.queue.push_back(lanes_req(1, Op::MemcheckG, 32, 0b101, |i| ptrs[1] + i as u64, 1, loc));
    rig.drain(rt.memory(), 10_000);
    for (_, r) in &rig.got {
        assert_eq!(r.fault, FaultCode::MemError, "{r:?}");
    }
    assert_eq!(rig.got.iter().find(|(_, r)| r.id == 1).unwrap().1.lane, 0);
}

#[test]
fn impossible_parameters_are_errors_naming_the_field() {
    // The unit's shape is checked by MluConfig::validate (field `cfg`, the
    // message naming the config field); the rest by UnitParams itself.
    for (p, field, says) in [
        (UnitParams { walkers: 3, ..UnitParams::default() }, "cfg", "field `unit.walkers`: 3 walkers"),
        (UnitParams { lanes: 16, ..UnitParams::default() }, "cfg", "field `unit.lanes`: 16 lanes"),
        (UnitParams { mlb_latency: 3, ..UnitParams::default() }, "cfg", "field `unit.mlb_latency`: 3"),
        (UnitParams { miss_slots: 2, ..UnitParams::default() }, "miss_slots", "2"),
        (UnitParams { cfg: MluConfig { mode: Mode::Hwonly, ..MluConfig::default() }, ..UnitParams::default() }, "cfg", "field `unit.lanes`: mode hwonly"),
        (UnitParams { cfg: MluConfig { entries: 12, ..MluConfig::default() }, ..UnitParams::default() }, "cfg", "field `entries`: 12"),
    ] {
        let e = MluUnit::new(&p).unwrap_err();
        assert_eq!(e.field, field, "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
}

/// `unit.heap_path` off (the synthesis report's `_noheap` point): the heap
/// CSRs are written, but a device-heap pointer is walked like any other
/// address. Its chunk is in no list or tree, so LOADMETA of it answers
/// NO_META, with the same responses, cycles and counters as a unit with the
/// path whose window was never set; with the path and the window set, the
/// same LOADMETA finds the chunk's directory node in one read.
#[test]
fn without_the_heap_path_a_heap_pointer_is_walked_like_any_other() {
    let mut rt = Runtime::new(RuntimeConfig { seed: 5, ..RuntimeConfig::default() }).unwrap();
    rt.attach_device_heap(HeapConfig { tag_seed: Some(5), ..rtl_heap_config(CheckMode::Free, 0) }, DEFAULT_DIRECTORY_BASE).unwrap();
    let host: Vec<u64> = (0..6).map(|i| rt.malloc(64 + 100 * i, None).unwrap()).collect();
    let chunk = rt.device_malloc(40, 3).unwrap();
    let chunk_loc = rt.device_heap().unwrap().location(untag(chunk) - 8);
    let window = rt.mlu().csrs().heap;
    assert!(window.holds(untag(chunk)));
    let mem = rt.meta_memory();
    let run = |heap_path: bool, set_window: bool| {
        let p = UnitParams { heap_path, ..params(Structure::Bst, 4, 1) };
        let mut rig = Rig::new(&p, PortParams { min_latency: 3, max_latency: 3, ..Default::default() }, rt.root());
        if set_window {
            rig.unit.set_heap_window(window);
        }
        assert_eq!(rig.unit.heap_window().mask, if set_window { window.mask } else { 0 }, "the CSRs read back as written");
        rig.queue.push_back(loadmeta(0, 1, chunk));
        rig.queue.push_back(loadmeta(1, 1, host[2]));
        rig.drain(&mem, 10_000);
        rig.got.sort_by_key(|(_, r)| r.id);
        (rig.got, *rig.unit.counters())
    };
    let (with, with_c) = run(true, true);
    assert_eq!((with[0].1.fault, with[0].1.loc), (FaultCode::None, chunk_loc), "the heap path finds the chunk");
    let (without, without_c) = run(false, true);
    assert_eq!((without[0].1.fault, without[0].1.loc), (FaultCode::None, NO_META), "without the path the chunk is not found");
    assert_eq!(without[1].1.loc, rt.node_of(host[2]).unwrap(), "host allocations are found as before");
    assert!(without_c.nodes > with_c.nodes, "a walk instead of one directory read: {without_c:?} against {with_c:?}");
    let (unset, unset_c) = run(true, false);
    assert_eq!((without, without_c), (unset, unset_c), "no heap path = no window");
}
