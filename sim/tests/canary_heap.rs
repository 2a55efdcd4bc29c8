//! Canary allocator heap: random malloc/free from many requesters against a
//! simple oracle, bad input, exhaustion, and the heap invariants after every
//! operation.
use proptest::prelude::*;
use sim::canary::heap::{AllocError, CheckMode, FreeError, Heap, HeapConfig};
use std::collections::BTreeMap;

fn small(check: CheckMode) -> HeapConfig {
    HeapConfig { check, pages: 16, region_pages: 4, ..HeapConfig::default() }
}

#[test]
fn bad_requests_are_defined_errors() {
    let mut h = Heap::new(small(CheckMode::Free)).unwrap();
    assert_eq!(h.malloc(0, 0), Err(AllocError::ZeroSize));
    // Largest class 4096 minus two 8-byte canaries.
    assert_eq!(h.max_request(), 4080);
    assert_eq!(h.malloc(4081, 0), Err(AllocError::TooLarge { size: 4081, max: 4080 }));
    assert_eq!(h.malloc(u64::MAX, 0), Err(AllocError::TooLarge { size: u64::MAX, max: 4080 }));
    let a = h.malloc(100, 3).unwrap();
    let b = h.malloc(100, 3).unwrap();
    assert!(h.free(a.ptr).unwrap().overflow.is_none());
    assert_eq!(h.free(a.ptr), Err(FreeError::DoubleFree { ptr: a.ptr }));
    assert_eq!(h.free(b.ptr + 1), Err(FreeError::NotAChunk { ptr: b.ptr + 1 }));
    assert_eq!(h.free(0), Err(FreeError::OutsideHeap { ptr: 0 }));
    assert_eq!(h.free(h.end()), Err(FreeError::OutsideHeap { ptr: h.end() }));
    // A page nobody uses: never given out.
    let far = h.config().base + 8 * h.config().page_size + 8;
    assert!(h.page_table()[8].class.is_none());
    assert_eq!(h.free(far), Err(FreeError::NotAChunk { ptr: far }));
    h.check_invariants().unwrap();
    assert_eq!(h.live(), 1);
}

#[test]
fn impossible_configs_are_rejected_by_field() {
    let cases: Vec<(HeapConfig, &str)> = vec![
        (HeapConfig { page_size: 1000, ..small(CheckMode::Off) }, "page_size"),
        (HeapConfig { pages: 0, ..small(CheckMode::Off) }, "pages"),
        (HeapConfig { region_pages: 17, ..small(CheckMode::Off) }, "region_pages"),
        (HeapConfig { classes: vec![64, 32], ..small(CheckMode::Off) }, "classes[1]"),
        (HeapConfig { classes: vec![12], ..small(CheckMode::Off) }, "classes[0]"),
        (HeapConfig { classes: vec![8192], ..small(CheckMode::Off) }, "classes[0]"),
        (HeapConfig { slack: 4096, ..small(CheckMode::Free) }, "slack"),
        (HeapConfig { checker_rate: 0.0, ..small(CheckMode::Always) }, "checker_rate"),
    ];
    for (cfg, field) in cases {
        let e = Heap::new(cfg).unwrap_err();
        assert!(e.starts_with(field), "{e} should name {field}");
    }
}

#[test]
fn exhaustion_is_reported_and_recoverable() {
    let mut h = Heap::new(HeapConfig { pages: 8, region_pages: 2, ..small(CheckMode::Always) }).unwrap();
    let mut ptrs = Vec::new();
    // 8 pages of 4096-byte chunks: exactly 8 allocations of 4000 bytes.
    for i in 0..8 {
        ptrs.push(h.malloc(4000, i).unwrap().ptr);
        h.check_invariants().unwrap();
    }
    assert_eq!(h.malloc(4000, 0), Err(AllocError::Exhausted { size: 4000 }));
    assert_eq!(h.malloc(10, 5), Err(AllocError::Exhausted { size: 10 }));
    h.check_invariants().unwrap();
    h.free(ptrs[3]).unwrap();
    // The released page can now serve another class.
    let a = h.malloc(10, 5).unwrap();
    assert_eq!((a.chunk - h.config().base) / 4096, 3);
    h.check_invariants().unwrap();
}

#[test]
fn full_regions_are_skipped() {
    // Fill region 0 (pages 0..4) with whole-page chunks, then a request that
    // hashes into region 0 must skip it with one region-counter read.
    let mut h = Heap::new(HeapConfig { k_s: 0, k_mp: 0, ..small(CheckMode::Off) }).unwrap();
    for _ in 0..4 {
        h.malloc(4096, 0).unwrap();
    }
    let a = h.malloc(4096, 0).unwrap();
    assert_eq!((a.chunk - h.config().base) / 4096, 4);
    // hash + region 0 read (skip) + region 1 read + page read + table write + bit write.
    assert_eq!(a.probes, 1);
    assert_eq!(a.cycles, 6);
    h.check_invariants().unwrap();
}

#[derive(Clone, Debug)]
enum Op {
    Malloc { size: u64, mp: u64 },
    Free { pick: usize },
    DoubleFree { pick: usize },
    Wild { off: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u64..2200, 0u64..32).prop_map(|(size, mp)| Op::Malloc { size, mp }),
        3 => any::<usize>().prop_map(|pick| Op::Free { pick }),
        1 => any::<usize>().prop_map(|pick| Op::DoubleFree { pick }),
        1 => (0u64..(16 * 4096 + 64)).prop_map(|off| Op::Wild { off }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn random_malloc_free_matches_oracle(
        check in prop_oneof![Just(CheckMode::Off), Just(CheckMode::Free), Just(CheckMode::Always)],
        ops in prop::collection::vec(op(), 1..300),
    ) {
        let mut h = Heap::new(small(check)).unwrap();
        let off = if check == CheckMode::Off { 0 } else { 8 };
        let over = if check == CheckMode::Off { 0 } else { 16 };
        // Oracle: live pointer -> (chunk start, class bytes, requested size).
        let mut live: BTreeMap<u64, (u64, u64, u64)> = BTreeMap::new();
        let mut freed: Vec<(u64, u64)> = Vec::new(); // (ptr, class bytes)
        for op in ops {
            match op {
                Op::Malloc { size, mp } => match h.malloc(size, mp) {
                    Ok(a) => {
                        let cs = h.config().classes[a.class];
                        prop_assert_eq!(a.ptr, a.chunk + off);
                        // Smallest class that fits.
                        prop_assert!(cs >= size + over);
                        prop_assert!(a.class == 0 || h.config().classes[a.class - 1] < size + over);
                        prop_assert!(a.chunk >= h.config().base && a.chunk + cs <= h.end());
                        // No overlap with any live chunk.
                        for (_, &(c, ccs, _)) in &live {
                            prop_assert!(a.chunk + cs <= c || c + ccs <= a.chunk, "overlap");
                        }
                        live.insert(a.ptr, (a.chunk, cs, size));
                    }
                    Err(AllocError::Exhausted { .. }) => {
                        // Only when no page is free and no page of the class has room.
                        prop_assert!(h.page_table().iter().all(|e| e.class.is_some()));
                    }
                    Err(e) => prop_assert!(false, "unexpected {:?}", e),
                },
                Op::Free { pick } if !live.is_empty() => {
                    let p = *live.keys().nth(pick % live.len()).unwrap();
                    let (c, cs, size) = live.remove(&p).unwrap();
                    let f = h.free(p).unwrap();
                    prop_assert_eq!((f.chunk, f.size, f.overflow), (c, size, None));
                    freed.push((p, cs));
                }
                Op::DoubleFree { pick } if !freed.is_empty() => {
                    let (p, cs) = freed[pick % freed.len()];
                    if live.contains_key(&p) {
                        continue; // reallocated since: a legal free, tested above
                    }
                    let r = h.free(p);
                    let page = (p - off - h.config().base) / 4096;
                    // While a live chunk of the same class shares the page, the
                    // page still serves that class: it must be a double free.
                    let shares = live.values().any(|&(c, ccs, _)| (c - h.config().base) / 4096 == page && ccs == cs);
                    if shares {
                        prop_assert_eq!(r, Err(FreeError::DoubleFree { ptr: p }));
                    } else {
                        prop_assert!(matches!(r, Err(FreeError::DoubleFree { .. }) | Err(FreeError::NotAChunk { .. })), "{:?}", r);
                    }
                }
                Op::Wild { off: o } => {
                    let p = h.config().base + o;
                    if live.contains_key(&p) {
                        continue;
                    }
                    prop_assert!(h.free(p).is_err(), "free of {:#x} never given out succeeded", p);
                }
                _ => {}
            }
            h.check_invariants().map_err(TestCaseError::fail)?;
            prop_assert_eq!(h.live(), live.len());
            let model: Vec<u64> = h.live_chunks().iter().map(|l| l.1).collect();
            let oracle: Vec<u64> = live.keys().copied().collect();
            prop_assert_eq!(model, oracle);
        }
    }
}
