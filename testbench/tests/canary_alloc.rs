//! hw::canary::alloc_unit::AllocUnit in rust-hdl simulation: random
//! malloc/free from 8 requesters (with bad requests and overflow stores)
//! replayed against the golden model (sim::canary::heap), result for result
//! and check for check, in all three check modes; and directed tests against
//! independently known values (canary placement, slack, exhaustion, the
//! round-robin rule, the checker's detection-latency bound).
use hw::canary::alloc_unit::{CanaryParams, REQUESTERS, RES_DOUBLE_FREE, RES_EXHAUSTED, RES_OK, RES_ZERO_SIZE};
use sim::canary::heap::CheckMode;
use sim::canary::siphash::CanaryKey;
use verif::canary_driver::{run_rust_hdl, CanaryDut, CanarySim, Check, Resp};

const KEY: CanaryKey = CanaryKey { k0: 0x0706_0504_0302_0100, k1: 0x0f0e_0d0c_0b0a_0908 };
const IDLE: [Option<(bool, u64)>; REQUESTERS] = [None; REQUESTERS];

fn params(check: CheckMode, slack: u64) -> CanaryParams {
    CanaryParams { check, slack, ..CanaryParams::default() }
}

#[test]
fn random_always_mode_matches_model() {
    // Two seeds, memory latency 1 and 3, checker rate 2/256 and 8/256.
    for (seed, lat, rate) in [(1, 1, 2), (2, 3, 8)] {
        let st = run_rust_hdl(&params(CheckMode::Always, 0), KEY, rate, seed, 25_000, lat).unwrap();
        eprintln!("always seed {seed}: {st:?}");
        assert!(st.mallocs_ok > 100 && st.frees_ok > 60, "{st:?}");
        assert!(st.free_overflows > 5 && st.check_overflows > 5 && st.checks > 100, "{st:?}");
        // Every error kind except (maybe) exhaustion occurs.
        assert!(st.codes[1..].iter().enumerate().all(|(i, &n)| n > 0 || i + 1 == RES_EXHAUSTED as usize), "{st:?}");
    }
}

#[test]
fn random_free_mode_with_slack_matches_model() {
    let st = run_rust_hdl(&params(CheckMode::Free, 16), KEY, 8, 3, 25_000, 2).unwrap();
    eprintln!("free slack 16: {st:?}");
    assert!(st.mallocs_ok > 300 && st.free_overflows > 5 && st.checks == 0, "{st:?}");
    assert!(st.codes[RES_EXHAUSTED as usize] > 0, "the workload should exhaust the 4 KiB heap: {st:?}");
}

#[test]
fn random_off_mode_matches_model() {
    let p = CanaryParams { check: CheckMode::Off, k_s: 1, k_mp: 3, ..CanaryParams::default() };
    let st = run_rust_hdl(&p, KEY, 8, 4, 15_000, 1).unwrap();
    eprintln!("off: {st:?}");
    assert!(st.mallocs_ok > 300 && st.free_overflows == 0 && st.stores == 0, "{st:?}");
}

#[test]
fn random_tagged_modes_match_model_with_the_directory() {
    // The registration with the MLU (hw::canary::tag_table): tagged
    // pointers, stale frees refused, and the directory port compared with
    // Heap::directory for a granule in every quiet cycle.
    for (check, slack, seed, lat) in [(CheckMode::Free, 8, 11, 2), (CheckMode::Off, 0, 12, 1), (CheckMode::Always, 0, 13, 1)] {
        let p = CanaryParams { check, slack, tag_seed: Some(0xACE1), ..CanaryParams::default() };
        let st = run_rust_hdl(&p, KEY, 8, seed, 20_000, lat).unwrap();
        eprintln!("tagged {check:?}: {st:?}");
        // (Always mode: the background checker takes most of the unit's time.)
        assert!(st.mallocs_ok > 60 && st.frees_ok > 40, "{st:?}");
        assert!(st.codes[RES_DOUBLE_FREE as usize] > 2, "stale and double frees: {st:?}");
        assert!(st.dir_compares > 500 && st.dir_hits > 200 && st.dir_hits < st.dir_compares, "{st:?}");
    }
}

/// Present one request from requester `id` and run until its response.
fn op(sim: &mut CanarySim, id: usize, free: bool, arg: u64) -> Resp {
    let mut reqs = IDLE;
    reqs[id] = Some((free, arg));
    for _ in 0..200 {
        let out = sim.step(&reqs).unwrap();
        if out.grant.is_some() {
            reqs = IDLE;
        }
        if let Some(r) = out.resp {
            return r;
        }
    }
    panic!("no response to {} {arg:#x}", if free { "free" } else { "malloc" });
}

#[test]
fn canaries_slack_and_overflow_reports() {
    let p = params(CheckMode::Free, 8);
    let mut sim = CanarySim::new(&p, KEY, 8, 1).unwrap();
    let a = op(&mut sim, 0, false, 100);
    assert_eq!(a.code, RES_OK);
    let chunk = a.ptr - 8;
    // 100 + 16 + 8 = 124 -> class 128: chunk 128-aligned inside the heap.
    assert_eq!((chunk - p.base) % 128, 0);
    // Within the slack (bytes 100..108 after the pointer): tolerated.
    sim.store(a.ptr + 100, &[0xAA; 8]);
    let f = op(&mut sim, 0, true, a.ptr);
    assert_eq!((f.code, f.ptr, f.size, f.front, f.rear), (RES_OK, chunk, 100, false, false));
    // One byte past the slack: the rear canary at chunk + 8 + 100 + 8.
    let b = op(&mut sim, 1, false, 100);
    sim.store(b.ptr + 108, &[0x55]);
    let f = op(&mut sim, 1, true, b.ptr);
    assert_eq!((f.code, f.front, f.rear), (RES_OK, false, true));
    // One byte before the pointer: the front canary. (A second chunk of the
    // class keeps the page in use, so the second free is a double free, not
    // a free of a released page.)
    let c = op(&mut sim, 2, false, 20);
    let d = op(&mut sim, 2, false, 20);
    assert_eq!(d.ptr, c.ptr + 64, "same requester and class: next slot of the page");
    sim.store(c.ptr - 1, &[0x55]);
    let f = op(&mut sim, 2, true, c.ptr);
    assert_eq!((f.code, f.front, f.rear), (RES_OK, true, false));
    // The chunk was freed anyway: freeing it again is a double free.
    assert_eq!(op(&mut sim, 2, true, c.ptr).code, RES_DOUBLE_FREE);
    assert_eq!(op(&mut sim, 3, false, 0).code, RES_ZERO_SIZE);
}

#[test]
fn exhaustion_and_recovery() {
    let p = params(CheckMode::Free, 0);
    let mut sim = CanarySim::new(&p, KEY, 8, 1).unwrap();
    // 240 + 16 = 256: one chunk per page, 16 pages.
    let mut ptrs: Vec<u64> = (0..16).map(|i| op(&mut sim, i % REQUESTERS, false, 240)).map(|r| { assert_eq!(r.code, RES_OK); r.ptr }).collect();
    ptrs.sort_unstable();
    ptrs.dedup();
    assert_eq!(ptrs.len(), 16);
    assert_eq!(op(&mut sim, 5, false, 1).code, RES_EXHAUSTED);
    let f = op(&mut sim, 5, true, ptrs[7]);
    assert_eq!(f.code, RES_OK);
    let r = op(&mut sim, 6, false, 16);
    assert_eq!((r.code, r.ptr), (RES_OK, ptrs[7]), "the only free page is reused");
}

#[test]
fn round_robin_same_cycle_rule() {
    let p = params(CheckMode::Free, 0);
    let mut sim = CanarySim::new(&p, KEY, 8, 1).unwrap();
    // All requesters ask at once: granted 0, 1, ..., 7 (one at a time).
    let mut reqs = [Some((false, 16)); REQUESTERS];
    let mut order = Vec::new();
    for _ in 0..2000 {
        let out = sim.step(&reqs).unwrap();
        if let Some(g) = out.grant {
            order.push(g);
            reqs[g] = None;
        }
    }
    assert_eq!(order, (0..REQUESTERS).collect::<Vec<_>>());
    // Now only 1, 3 and 6 ask (the last grant was 7): 1, 3, 6 in order;
    // then 2 and 5 ask with the last grant 6: 2 first (wrapping), then 5.
    for (ask, want) in [(vec![6, 1, 3], vec![1, 3, 6]), (vec![5, 2], vec![2, 5])] {
        let mut reqs = IDLE;
        for &i in &ask {
            reqs[i] = Some((false, 16));
        }
        let mut order = Vec::new();
        for _ in 0..1000 {
            let out = sim.step(&reqs).unwrap();
            if let Some(g) = out.grant {
                order.push(g);
                reqs[g] = None;
            }
        }
        assert_eq!(order, want);
    }
}

#[test]
fn checker_detects_within_bound() {
    // Rate 8/256: R = 1/32 check per cycle; bound ceil(L / R) from the model,
    // plus one check's duration (the check in flight when the store lands).
    let rate = 8u8;
    let p = params(CheckMode::Always, 0);
    let mut rng = sim::runtime::SplitMix64(99);
    let mut worst = 0f64;
    for trial in 0..6 {
        let mut sim = CanarySim::new(&p, KEY, rate, 1).unwrap();
        let n = 4 + trial * 5;
        let mut live = Vec::new();
        for i in 0..n {
            let size = [8, 40, 100][rng.below(3) as usize];
            let r = op(&mut sim, i % REQUESTERS, false, size);
            if r.code == RES_OK {
                live.push((r.ptr, size));
            }
        }
        let n = live.len();
        // Let the checker run clean for a while (no false reports).
        for _ in 0..rng.below(3000) + 100 {
            let out = sim.step(&IDLE).unwrap();
            assert!(out.check.map(|c| !c.front && !c.rear).unwrap_or(true), "false report");
        }
        let (ptr, size) = live[rng.below(n as u64) as usize];
        assert!(n >= 4);
        let rear = rng.below(2) == 0;
        sim.store(if rear { ptr + size } else { ptr - 8 }, &[0xEE]);
        let bound = sim::canary::checker::Checker::new(128, rate as f64 / 256.0).latency_bound(n) + 30;
        let mut found = None;
        for t in 0..bound + 200 {
            if let Some(Check { chunk, front, rear: r }) = sim.step(&IDLE).unwrap().check {
                if front || r {
                    assert_eq!((chunk, front, r), (ptr - 8, !rear, rear));
                    found = Some(t);
                    break;
                }
            }
        }
        let t = found.expect("overflow never reported");
        assert!(t <= bound, "trial {trial}: {n} live, detected after {t} cycles > bound {bound}");
        worst = worst.max(t as f64 / bound as f64);
    }
    eprintln!("worst detection / bound = {worst:.2}");
}
