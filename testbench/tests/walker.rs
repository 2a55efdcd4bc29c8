//! The RTL walker (hw::walker::Walker, rust-hdl simulation, clock driven by
//! hand) against its golden twin sim::walker::Walker, cycle by cycle: the
//! read it asks for, busy / in-flight / done, the result and the node's
//! metadata, the key and the cancel flag, on lists and BSTs built by the
//! runtime, with random port latency and back-pressure, random starts
//! (range walks and location fetches), releases, cancels, step limits,
//! error responses and an unreadable node; and with the device heap's
//! window set, heap lookups (one directory read) among the walks.
use hw::mlu::{RES_FOUND, RES_LIMIT, RES_MEM_ERROR, RES_NOT_FOUND};
use hw::walker::Walker as Rtl;
use rust_hdl::prelude::*;
use sim::canary::alloc_unit::rtl_heap_config;
use sim::canary::heap::{CheckMode, HeapConfig};
use sim::config::{MluConfig, Structure};
use sim::device_heap::DEFAULT_DIRECTORY_BASE;
use sim::meta_port::{PortParams, PortSim};
use sim::mlb::LOC_MASK;
use sim::pointer::ADDR_MASK;
use sim::runtime::{Runtime, RuntimeConfig, SplitMix64};
use sim::walker::{WalkCsrs, WalkKey, WalkResult, Walker, WalkerState};

fn settle(u: &mut Rtl) {
    assert!(simulate(u, 200), "walker did not settle");
}

fn clock(u: &mut Rtl) {
    u.clock.next = true.into();
    settle(u);
    u.clock.next = false.into();
    settle(u);
}

fn result_code(r: WalkResult) -> u64 {
    match r {
        WalkResult::Found { .. } => RES_FOUND,
        WalkResult::NotFound => RES_NOT_FOUND,
        WalkResult::StepLimit => RES_LIMIT,
        WalkResult::MemError => RES_MEM_ERROR,
    }
}

/// Compare the RTL's outputs with the model's state (both at the start of a
/// cycle, after settling).
fn compare(u: &Rtl, m: &Walker, csrs: &WalkCsrs, ctx: &str) {
    let req = m.request(0, csrs);
    assert_eq!(u.req_valid.val(), req.is_some(), "{ctx}: req_valid");
    if let Some(r) = req {
        assert_eq!(u.req_node.val().to_u64(), r.addr >> 5, "{ctx}: req_node");
    }
    assert_eq!(u.busy.val(), !m.is_idle(), "{ctx}: busy");
    assert_eq!(u.in_flight.val(), m.in_flight(), "{ctx}: in_flight");
    assert_eq!(u.visit.val(), matches!(m.state, WalkerState::Decide { .. }), "{ctx}: visit");
    if let WalkerState::Done(r) = m.state {
        assert!(u.done.val(), "{ctx}: done");
        assert_eq!(u.result.val().to_u64(), result_code(r), "{ctx}: result ({r:?})");
        if let WalkResult::Found { location, meta } = r {
            assert_eq!(u.location.val().to_u64(), location >> 5, "{ctx}: location");
            assert_eq!(u.base.val().to_u64(), meta.base, "{ctx}: base");
            assert_eq!(u.size.val().to_u64(), meta.size, "{ctx}: size");
            assert_eq!(u.tag.val().to_u64(), meta.tag as u64, "{ctx}: tag");
        }
    } else {
        assert!(!u.done.val(), "{ctx}: done");
    }
    if !m.is_idle() {
        assert_eq!(u.cancelled.val(), m.cancelled, "{ctx}: cancelled");
        let (range, key) = match m.key {
            WalkKey::Range(a) => (true, a),
            WalkKey::Location(l) => (false, l),
        };
        assert_eq!(u.key_range.val(), range, "{ctx}: key_range");
        assert_eq!(u.key.val().to_u64(), key, "{ctx}: key");
    }
}

/// `allocs` allocations; one read in 200 answered with an error, and the
/// node of allocation `poisoned` (if any) unreadable.
/// With `device`, a device heap (sim::device_heap) is attached, half of
/// its chunks freed, and a third of the range keys fall in its window.
fn run(structure: Structure, seed: u64, cycles: u64, allocs: usize, poisoned: Option<usize>, device: bool) -> [u64; 4] {
    let cfg = RuntimeConfig { mlu: MluConfig { structure, ..MluConfig::default() }, seed, ..RuntimeConfig::default() };
    let mut rt = Runtime::new(cfg).unwrap();
    let mut rng = SplitMix64(seed);
    let mut chunks = Vec::new();
    if device {
        let heap = HeapConfig { tag_seed: Some(seed as u16 | 1), ..rtl_heap_config(CheckMode::Free, 0) };
        rt.attach_device_heap(heap, DEFAULT_DIRECTORY_BASE).unwrap();
        for i in 0..30 {
            if let Ok(p) = rt.device_malloc(1 + rng.below(230), rng.below(8)) {
                chunks.push(p);
                if i % 2 == 0 {
                    rt.device_free(p).unwrap();
                }
            }
        }
    }
    let window = rt.mlu().csrs().heap;
    let ptrs: Vec<u64> = (0..allocs).map(|_| rt.malloc(16 + rng.next_u64() % 5000, None).unwrap()).collect();
    if let Some(k) = poisoned {
        let loc = rt.node_of(ptrs[k]).unwrap();
        rt.poison_node(loc);
    }
    let mut u = Rtl::new(structure);
    u.connect_all();
    u.reset.next = true;
    settle(&mut u);
    clock(&mut u);
    u.reset.next = false;
    settle(&mut u);
    let mut m = Walker::default();
    let port = PortParams { min_latency: 1, max_latency: 25, ready_percent: 60, shuffle: true, errors_per_million: 5000, seed };
    let mut port = PortSim::new(port);
    let mut csrs = WalkCsrs { structure, root: rt.root(), step_limit: 4096, heap: window };
    let mem = rt.meta_memory();
    let mut ends = [0u64; 4];
    for c in 0..cycles {
        let ctx = format!("{structure:?} seed {seed} cycle {c}");
        compare(&u, &m, &csrs, &ctx);
        let req = m.request(0, &csrs);
        let (ready, resp) = port.cycle(&mem, req.as_ref());
        let granted = ready && req.is_some();
        let x = rng.next_u64();
        let was_idle = m.is_idle();
        let done = matches!(m.state, WalkerState::Done(_));
        if let WalkerState::Done(r) = m.state {
            if done && x % 2 == 0 {
                ends[result_code(r) as usize] += 1;
            }
        }
        let taken = done && x % 2 == 0;
        let cancel = x % 50 == 1;
        let start = was_idle && x % 3 != 0;
        // A start's key and CSRs: mostly range walks for live or
        // neighbouring addresses, some location fetches, some tiny limits.
        let k = (x >> 8) as usize % ptrs.len();
        let range = (x >> 20) % 4 != 0;
        let a = match (x >> 24) % 8 {
            0 => x >> 30,                            // anywhere
            1 => (ptrs[k] & ADDR_MASK).wrapping_sub(1), // just below
            2 | 3 if device => ((chunks[k % chunks.len()] & ADDR_MASK) + (x >> 40) % 300).wrapping_sub(20), // around a chunk
            4 if device => window.base + (x >> 40) % (window.mask + 1), // anywhere in the heap's window
            _ => ptrs[k] + (x >> 40) % 64,
        };
        let loc = rt.node_of(ptrs[k]).unwrap() | ((x >> 4) & 0x1F) | (0xAB << 56);
        if start {
            csrs.step_limit = if (x >> 50) % 8 == 0 { (x >> 53) as u32 % 4 } else { 4096 };
        }
        // The RTL's inputs.
        u.start.next = start;
        // `offer` is high with every start and at random otherwise (an idle
        // walker loads its key only when offered).
        u.offer.next = start || (x >> 61) % 2 == 0;
        u.start_range.next = range;
        u.start_a.next = if range { (a | (0x5A << 56)).into() } else { loc.into() };
        u.start_node.next = ((if range { csrs.root } else { loc } >> 5) & ((1 << 51) - 1)).into();
        u.root.next = csrs.root.into();
        u.limit.next = (csrs.step_limit as u64).into();
        u.structure.next = structure == Structure::Bst;
        // The unit's classification of the key (hw::mlu_unit `c_heap`).
        u.start_heap.next = range && window.holds(a & ADDR_MASK);
        u.heap_mask.next = window.mask.into();
        u.heap_dir.next = window.dir.into();
        u.grant.next = granted;
        u.resp_valid.next = resp.is_some();
        let d = resp.and_then(|r| r.data).unwrap_or([0; 4]);
        u.resp_error.next = resp.is_some_and(|r| r.data.is_none());
        u.resp_base.next = d[0].into();
        u.resp_size_tag.next = d[1].into();
        u.resp_link0.next = d[2].into();
        u.resp_link1.next = d[3].into();
        u.taken.next = taken;
        u.cancel.next = cancel;
        settle(&mut u);
        clock(&mut u);
        // The model, in the unit's order: advance, take the result, cancel, start.
        m.next(granted, resp.as_ref(), &csrs);
        if taken {
            m = Walker::default();
        }
        if cancel && !was_idle && !taken {
            m.cancelled = true;
        }
        if start {
            let key = if range { WalkKey::Range(a & ADDR_MASK) } else { WalkKey::Location(loc & LOC_MASK) };
            m.start(key, &csrs);
        }
    }
    ends
}

#[test]
fn walker_matches_the_model_on_bsts() {
    let ends = run(Structure::Bst, 1, 30_000, 200, Some(121), false);
    eprintln!("bst walks ended found/not found/limit/mem error: {ends:?}");
    assert!(ends.iter().all(|&n| n > 0), "every result reached: {ends:?}");
}

#[test]
fn walker_matches_the_model_on_lists() {
    // (Every walk that misses crosses every node of a list: no poisoned one.)
    let ends = run(Structure::List, 2, 30_000, 40, None, false);
    eprintln!("list walks ended found/not found/limit/mem error: {ends:?}");
    assert!(ends.iter().all(|&n| n > 0), "every result reached: {ends:?}");
}

#[test]
fn walker_matches_the_model_with_the_device_heap() {
    for (structure, seed) in [(Structure::Bst, 3), (Structure::List, 4)] {
        let ends = run(structure, seed, 20_000, 40, None, true);
        eprintln!("{structure:?} with the device heap: walks ended found/not found/limit/mem error: {ends:?}");
        assert!(ends.iter().all(|&n| n > 0), "every result reached: {ends:?}");
    }
}
