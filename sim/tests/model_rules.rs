//! One test per rule of docs/design.md (and the spec's section 4), on the
//! golden model. Expected values are worked out by hand from the rules, not
//! taken from the model.
//!
//! Length: this file is over 800 lines because it holds one test per rule,
//! in the rules' order, so that a rule and its test are found together.
use sim::config::{ConfigError, Mode, MluConfig, Replacement, Structure, Target};
use sim::fault::{Fault, FaultCode, Op};
use sim::memcheck::{distance, in_bounds, memcheck_g_decide, memcheck_s};
use sim::memory::MemoryImage;
use sim::mlu::{Counters, Mlu};
use sim::node::{pack_size_tag, Meta, NODE_BYTES};
use sim::pointer::{tag, tagged, untag, ADDR_MASK, NO_META, TAG_FREED};
use sim::runtime::{AllocState, FreeFinding, Runtime, RuntimeConfig, RuntimeError, SplitMix64};
use sim::runtime::{DEFAULT_HEAP_BASE as H, DEFAULT_NODE_POOL_BASE as POOL};
use sim::traverser::{walk, WalkOutcome};

fn cfg(structure: Structure, mode: Mode, entries: usize) -> MluConfig {
    MluConfig { entries, structure, mode, replacement: Replacement::Plru, step_limit: 4096, unit: None }
}

fn rt_seed(structure: Structure, mode: Mode, entries: usize, seed: u64) -> Runtime {
    Runtime::new(RuntimeConfig { mlu: cfg(structure, mode, entries), seed, ..RuntimeConfig::default() }).unwrap()
}

fn rt(structure: Structure, mode: Mode) -> Runtime {
    rt_seed(structure, mode, 8, 1)
}

fn code<T>(r: Result<T, Fault>) -> FaultCode {
    r.err().map_or(FaultCode::None, |f| f.code)
}

const STRUCTS: [Structure; 3] = [Structure::List, Structure::Bst, Structure::Sol];
const MODES: [Mode; 2] = [Mode::Compiler, Mode::Hwonly];

#[test]
fn pointer_split() {
    let p = 0xAB12_3456_789A_BCDE;
    assert_eq!(tag(p), 0xAB);
    assert_eq!(untag(p), 0x0012_3456_789A_BCDE);
    assert_eq!(tagged(0xAB, 0x0012_3456_789A_BCDE), p);
    assert_eq!(tagged(1, u64::MAX), 0x01FF_FFFF_FFFF_FFFF);
    // NO_META is odd and above every 56-bit address: no node can have it.
    assert_eq!(NO_META & 1, 1);
    assert_eq!(NO_META & !ADDR_MASK, 0xFF00_0000_0000_0000);
}

#[test]
fn size_tag_word() {
    assert_eq!(pack_size_tag(2400, 0x5A), 0x5A00_0000_0000_0960);
    assert_eq!(sim::node::unpack_size_tag(0xFF00_0000_0000_0010), (16, 0xFF));
}

#[test]
fn encodings() {
    let names = ["NONE", "OUT_OF_BOUNDS", "USE_AFTER_FREE", "TAG_MISMATCH", "NO_META", "SHARED_OOB", "TRAVERSAL_LIMIT", "MEM_ERROR"];
    for (i, n) in names.iter().enumerate() {
        let c = FaultCode::from_bits(i as u8).unwrap();
        assert_eq!(c.name(), *n);
        assert_eq!(c.bits(), i as u8);
        assert_eq!(FaultCode::from_name(n), Some(c));
    }
    assert_eq!(FaultCode::from_bits(8), None);
    let ops = ["LOADMETA", "MEMCHECK.G", "MEMCHECK.S", "INVALIDATE", "FLUSH"];
    for (i, n) in ops.iter().enumerate() {
        let o = Op::from_bits(i as u8).unwrap();
        assert_eq!((o.name(), o.bits()), (*n, i as u8));
    }
    assert_eq!(Op::from_bits(5), None);
    assert_eq!((Mode::Compiler.bits(), Mode::Hwonly.bits()), (0, 1));
    assert_eq!((Structure::List.bits(), Structure::Bst.bits(), Structure::Sol.bits()), (Some(0), Some(1), None));
}

#[test]
fn splitmix64_reference_value() {
    // Published first outputs of splitmix64 seeded with 0.
    let mut r = SplitMix64(0);
    assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
    assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
}

#[test]
fn tags_come_from_seeded_splitmix64_top_byte() {
    let mut r = rt_seed(Structure::Bst, Mode::Compiler, 8, 42);
    let mut g = SplitMix64(42);
    for _ in 0..50 {
        let want = loop {
            let t = (g.next_u64() >> 56) as u8;
            if t != 0 && t != 0xFF {
                break t;
            }
        };
        assert_eq!(tag(r.malloc(64, None).unwrap()), want);
    }
}

#[test]
fn base_allocator_first_fit_512() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(2400, None).unwrap();
    let b = r.malloc(1, None).unwrap();
    let c = r.malloc(512, None).unwrap();
    assert_eq!(untag(a), H);
    assert_eq!(untag(b), H + 2560);
    assert_eq!(untag(c), H + 3072);
    r.free(b).unwrap();
    // A freed range is reusable: first fit puts a 100-byte block there.
    let d = r.malloc(100, None).unwrap();
    assert_eq!(untag(d), H + 2560);
    // Too big for the gap: goes after c.
    r.free(d).unwrap();
    let e = r.malloc(600, None).unwrap();
    assert_eq!(untag(e), H + 3584);
    // A given base is used as is, any alignment.
    let f = r.malloc(24, Some(0x7f71_b9e0_0a03)).unwrap();
    assert_eq!(untag(f), 0x7f71_b9e0_0a03);
    r.check_invariants().unwrap();
}

#[test]
fn malloc_rejects_bad_requests() {
    let mut r = rt(Structure::List, Mode::Compiler);
    let a = r.malloc(1000, None).unwrap();
    assert_eq!(r.malloc(0, None), Err(RuntimeError::ZeroSize));
    assert_eq!(r.malloc(1 << 56, None), Err(RuntimeError::SizeTooLarge { size: 1 << 56 }));
    assert_eq!(r.malloc(8, Some(1 << 56)), Err(RuntimeError::BaseOutOfRange { base: 1 << 56 }));
    assert_eq!(
        r.malloc(8, Some(untag(a) + 999)),
        Err(RuntimeError::Overlap { base: untag(a) + 999, size: 8, other_base: untag(a), other_size: 1000 })
    );
    assert!(matches!(r.malloc(16, Some(untag(a) - 8)), Err(RuntimeError::Overlap { .. })));
    // Adjacent is fine.
    r.malloc(8, Some(untag(a) + 1000)).unwrap();
    r.malloc(8, Some(untag(a) - 8)).unwrap();
    assert_eq!(r.malloc(64, Some(POOL + 40)), Err(RuntimeError::OverlapsNodePool { base: POOL + 40, size: 64 }));
    assert_eq!(r.malloc(64, Some(POOL - 32)), Err(RuntimeError::OverlapsNodePool { base: POOL - 32, size: 64 }));
    assert!(matches!(r.malloc(ADDR_MASK, None), Err(RuntimeError::OutOfMemory { .. })));
    // Refused mallocs change nothing.
    assert_eq!(r.allocations().len(), 3);
    r.check_invariants().unwrap();
    let msg = RuntimeError::Overlap { base: 0x10, size: 8, other_base: 0x8, other_size: 16 }.to_string();
    assert!(msg.contains("0x10") && msg.contains("0x8"), "{msg}");
}

#[test]
fn tag_zero_passes_unchecked_even_with_no_meta() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(64, None).unwrap();
    let wild = tagged(0, untag(a) + 100_000);
    for loc in [0, NO_META, 0x1234] {
        assert_eq!(r.memcheck_g(wild, 16, loc), Ok(untag(wild)));
    }
    assert_eq!(r.loadmeta(tagged(0, untag(a))), Ok(0));
    // The MLB is not touched by tag-0 operations.
    let c = r.counters();
    assert_eq!((c.range_lookups, c.loc_lookups, c.meta_reads, c.faults), (0, 0, 0, 0));
    assert_eq!((c.loadmeta, c.memcheck_g), (1, 3));
    for m in MODES {
        let mut r = rt(Structure::List, m);
        assert_eq!(r.access(tagged(0, 0), 8, None), Ok(0));
        assert_eq!(r.access(tagged(0, 0xdead), 1, Some(tagged(7, 5))), Ok(0xdead));
    }
}

#[test]
fn tagged_pointer_with_location_0_or_no_meta_is_no_meta() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(64, None).unwrap();
    for loc in [0, NO_META] {
        let f = r.memcheck_g(a, 4, loc).unwrap_err();
        assert_eq!((f.code, f.op, f.ptr, f.alloc, f.distance), (FaultCode::NoMeta, Op::MemcheckG, a, None, None));
    }
    // Wild tagged pointer: LOADMETA finds nothing -> NO_META location -> NO_META fault.
    let wild = tagged(tag(a), 0x10);
    assert_eq!(r.loadmeta(wild), Ok(NO_META));
    assert_eq!(code(r.access(wild, 4, None)), FaultCode::NoMeta);
    // Tag-0 root, tagged pointer: location 0 -> NO_META.
    assert_eq!(code(r.access(a, 4, Some(untag(a)))), FaultCode::NoMeta);
    assert_eq!(r.counters().loc_lookups, 0);
}

#[test]
fn fault_order_freed_before_tag_before_bounds() {
    for s in STRUCTS {
        for m in MODES {
            let mut r = rt(s, m);
            let a = r.malloc(256, None).unwrap();
            let other_tag = if tag(a) == 1 { 2 } else { 1 };
            // Live: wrong tag and out of bounds at once -> TAG_MISMATCH.
            assert_eq!(code(r.access(tagged(other_tag, untag(a) + 250), 16, Some(tagged(other_tag, untag(a))))), FaultCode::TagMismatch);
            // Live, right tag, out of bounds -> OUT_OF_BOUNDS (compiler: root in range).
            assert_eq!(code(r.access(a + 250, 16, Some(a))), FaultCode::OutOfBounds);
            r.free(a).unwrap();
            // FREED with a mismatching tag and out of bounds -> USE_AFTER_FREE.
            for p in [a, tagged(other_tag, untag(a)), tagged(other_tag, untag(a) + 250)] {
                let f = r.access(p, 16, Some(tagged(tag(p), untag(a)))).unwrap_err();
                assert_eq!(f.code, FaultCode::UseAfterFree, "{s:?} {m:?}");
                assert_eq!(f.alloc, Some(Meta { base: untag(a), size: 256, tag: TAG_FREED }));
                assert_eq!(f.distance, None);
            }
            r.check_invariants().unwrap();
        }
    }
}

#[test]
fn decide_function_order() {
    let live = Meta { base: 0x1000, size: 0x100, tag: 9 };
    let freed = Meta { tag: TAG_FREED, ..live };
    let p = tagged(9, 0x1000);
    assert_eq!(memcheck_g_decide(tagged(0, 5), 4, NO_META, None), Ok(5));
    assert_eq!(memcheck_g_decide(p, 4, 0, Some(live)), Err(FaultCode::NoMeta));
    assert_eq!(memcheck_g_decide(p, 4, NO_META, Some(live)), Err(FaultCode::NoMeta));
    assert_eq!(memcheck_g_decide(p, 4, 0x20, None), Err(FaultCode::MemError));
    assert_eq!(memcheck_g_decide(tagged(3, 0x5000), 4, 0x20, Some(freed)), Err(FaultCode::UseAfterFree));
    assert_eq!(memcheck_g_decide(tagged(3, 0x5000), 4, 0x20, Some(live)), Err(FaultCode::TagMismatch));
    assert_eq!(memcheck_g_decide(p + 0xFD, 4, 0x20, Some(live)), Err(FaultCode::OutOfBounds));
    assert_eq!(memcheck_g_decide(p + 0xFC, 4, 0x20, Some(live)), Ok(0x10FC));
}

#[test]
fn whole_access_bounds_every_width() {
    for s in STRUCTS {
        for m in MODES {
            let mut r = rt(s, m);
            let size = 100u64;
            let a = r.malloc(size, None).unwrap();
            let neighbour_free_gap = 512 - size; // next allocation starts at +512
            assert!(neighbour_free_gap > 16);
            for w in [1u32, 2, 4, 8, 16] {
                for off in -20i64..(size as i64 + 20) {
                    let p = a.wrapping_add(off as u64);
                    let inside = off >= 0 && off + w as i64 <= size as i64;
                    let got = r.access(p, w, Some(a));
                    let want = if inside {
                        FaultCode::None
                    } else if m == Mode::Hwonly && (off < 0 || off >= size as i64) {
                        FaultCode::NoMeta // its own address is in no allocation
                    } else {
                        FaultCode::OutOfBounds
                    };
                    assert_eq!(code(got.clone()), want, "{s:?} {m:?} w={w} off={off}");
                    if inside {
                        assert_eq!(got.unwrap(), untag(a) + off as u64);
                    }
                }
            }
            // The last byte: width 1 passes, width 2 does not.
            assert_eq!(code(r.access(a + size - 1, 1, Some(a))), FaultCode::None);
            assert_eq!(code(r.access(a + size - 1, 2, Some(a))), FaultCode::OutOfBounds);
        }
    }
}

#[test]
fn sixteen_byte_access_ending_exactly_at_the_end_passes() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(64, None).unwrap();
    assert_eq!(r.access(a + 48, 16, Some(a)), Ok(untag(a) + 48));
    assert_eq!(code(r.access(a + 49, 16, Some(a))), FaultCode::OutOfBounds);
}

#[test]
fn distances_as_compute_sanitizer_words_them() {
    assert_eq!(distance(0x1000 + 2400, 0x1000, 2400), "1 bytes after");
    assert_eq!(distance(0x1000 + 2398, 0x1000, 2400), "1 bytes after"); // straddles the end
    assert_eq!(distance(0x1000 + 2409, 0x1000, 2400), "10 bytes after");
    assert_eq!(distance(0x1000 - 3, 0x1000, 2400), "3 bytes before");
    // base + size above 2^56 without overflow.
    assert_eq!(distance(ADDR_MASK, 1 << 55, ADDR_MASK), "1 bytes after");

    let mut r = rt(Structure::List, Mode::Compiler);
    let a = r.malloc(2400, None).unwrap();
    let f = r.access(a + 2400, 4, Some(a)).unwrap_err();
    assert_eq!(f.code, FaultCode::OutOfBounds);
    assert_eq!(f.op, Op::MemcheckG);
    assert_eq!(f.ptr, a + 2400);
    assert_eq!(f.alloc, Some(Meta { base: untag(a), size: 2400, tag: tag(a) }));
    assert_eq!(f.distance.as_deref(), Some("1 bytes after"));
    let f = r.access(a.wrapping_sub(16), 4, Some(a)).unwrap_err();
    assert_eq!(f.distance.as_deref(), Some("16 bytes before"));
    // TAG_MISMATCH carries the allocation but no distance.
    let f = r.access(tagged(tag(a) ^ 1, untag(a)), 4, None).unwrap_err();
    assert_eq!((f.code, f.alloc.map(|m| m.size), f.distance), (FaultCode::TagMismatch, Some(2400), None));
}

#[test]
fn memcheck_s_shared_oob() {
    assert_eq!(memcheck_s(4092, 4, 0, 4096), Ok(4092));
    assert_eq!(memcheck_s(4093, 4, 0, 4096), Err(FaultCode::SharedOob));
    assert_eq!(memcheck_s(4096, 1, 0, 4096), Err(FaultCode::SharedOob));
    assert_eq!(memcheck_s(99, 1, 100, 10), Err(FaultCode::SharedOob));
    assert_eq!(memcheck_s(u64::MAX, 16, 0, u64::MAX), Err(FaultCode::SharedOob));
    assert_eq!(memcheck_s(u64::MAX - 16, 16, 0, u64::MAX), Ok(u64::MAX - 16));
    let mut m = Mlu::new(&MluConfig::default()).unwrap();
    let f = m.memcheck_s(4096, 4, 0, 4096).unwrap_err();
    assert_eq!((f.code, f.op, f.ptr), (FaultCode::SharedOob, Op::MemcheckS, 4096));
    assert_eq!(f.alloc, Some(Meta { base: 0, size: 4096, tag: 0 }));
    assert_eq!(f.distance.as_deref(), Some("1 bytes after"));
    assert_eq!((m.counters().memcheck_s, m.counters().faults), (1, 1));
}

#[test]
fn freed_allocation_is_use_after_free() {
    for s in STRUCTS {
        for m in MODES {
            for entries in [0, 1, 8] {
                let mut r = rt_seed(s, m, entries, 3);
                let a = r.malloc(128, None).unwrap();
                let _b = r.malloc(128, None).unwrap();
                assert_eq!(code(r.access(a + 8, 8, None)), FaultCode::None);
                r.free(a).unwrap();
                assert_eq!(code(r.access(a + 8, 8, None)), FaultCode::UseAfterFree, "{s:?} {m:?} {entries}");
                r.check_invariants().unwrap();
            }
        }
    }
}

#[test]
fn dangling_pointer_into_reused_range_is_always_tag_mismatch() {
    // Over many seeds: the retire-tag rule makes the 1/254 collision impossible.
    for seed in 0..600 {
        let s = STRUCTS[seed as usize % 3];
        let m = MODES[(seed as usize / 3) % 2];
        let mut r = rt_seed(s, m, 8, seed);
        let a = r.malloc(512, None).unwrap();
        assert_eq!(code(r.access(a, 8, None)), FaultCode::None);
        r.free(a).unwrap();
        let b = r.malloc(512, None).unwrap();
        assert_eq!(untag(b), untag(a), "first fit reuses the range");
        assert_ne!(tag(b), tag(a));
        assert_eq!(r.allocations()[0].state, AllocState::Retired);
        assert_eq!(code(r.access(a + 16, 8, None)), FaultCode::TagMismatch, "seed {seed}");
        assert_eq!(code(r.access(b + 16, 8, None)), FaultCode::None);
        r.check_invariants().unwrap();
    }
}

/// Two adjacent allocations with given bases, tags equal or not by seed.
fn neighbours(m: Mode, want_equal: bool) -> (Runtime, u64, u64) {
    for seed in 0..100_000 {
        let mut r = rt_seed(Structure::Bst, m, 8, seed);
        let a = r.malloc(512, Some(0x7f00_0000_1000)).unwrap();
        let b = r.malloc(512, Some(0x7f00_0000_1200)).unwrap();
        if (tag(a) == tag(b)) == want_equal {
            return (r, a, b);
        }
    }
    panic!("no seed found");
}

#[test]
fn hwonly_catches_neighbour_overflow_only_when_tags_differ() {
    let (mut r, a, _b) = neighbours(Mode::Hwonly, false);
    let f = r.access(a + 512, 4, None).unwrap_err();
    assert_eq!(f.code, FaultCode::TagMismatch);
    assert_eq!(f.alloc.unwrap().base, 0x7f00_0000_1200);
    let (mut r, a, _b) = neighbours(Mode::Hwonly, true);
    assert_eq!(r.access(a + 512, 4, None), Ok(0x7f00_0000_1200), "same tag: silent, as with memory tagging");
    // The compiler pass catches it either way (root = a).
    for eq in [false, true] {
        let (mut r, a, _b) = neighbours(Mode::Compiler, eq);
        assert_eq!(code(r.access(a + 512, 4, Some(a))), FaultCode::OutOfBounds);
    }
    // HWONLY ignores the location operand entirely.
    let (mut r, a, _b) = neighbours(Mode::Hwonly, false);
    assert_eq!(r.memcheck_g(a + 8, 8, NO_META), Ok(0x7f00_0000_1008));
    assert_eq!(r.memcheck_g(a + 8, 8, 0xdead_beef), Ok(0x7f00_0000_1008));
}

#[test]
fn top_of_the_address_space_without_overflow() {
    for s in STRUCTS {
        for m in MODES {
            let mut r = rt(s, m);
            let top = 1u64 << 56;
            let a = r.malloc(64, Some(top - 64)).unwrap();
            assert_eq!(r.access(a + 63, 1, None), Ok(top - 1));
            assert_eq!(r.access(a + 48, 16, None), Ok(top - 16));
            assert_eq!(code(r.access(a + 56, 16, Some(a))), FaultCode::OutOfBounds);
            // p + 64 wraps the 56-bit address into the tag: TAG_MISMATCH (compiler),
            // or for hwonly: address 0 is in no allocation.
            let wrapped = a + 64;
            assert_eq!(tag(wrapped), tag(a).wrapping_add(1));
            let want = if m == Mode::Compiler { FaultCode::TagMismatch } else { FaultCode::NoMeta };
            assert_eq!(code(r.access(wrapped, 1, Some(a))), want, "{s:?} {m:?}");
            // A huge allocation: base + size > 2^56.
            let mut r = rt(s, m);
            let big = r.malloc(ADDR_MASK, Some(1 << 55)).unwrap();
            assert_eq!(r.access(tagged(tag(big), top - 16), 16, None), Ok(top - 16));
            assert_eq!(r.access(big, 16, None), Ok(1 << 55));
            assert_eq!(code(r.access(big.wrapping_sub(1), 16, Some(big))), if m == Mode::Compiler { FaultCode::OutOfBounds } else { FaultCode::NoMeta });
            r.check_invariants().unwrap();
        }
    }
    assert!(in_bounds(ADDR_MASK, 16, 1 << 55, ADDR_MASK));
    assert!(!in_bounds(u64::MAX, 16, u64::MAX, 15));
    assert!(in_bounds(u64::MAX - 15, 16, u64::MAX - 15, 16));
}

#[test]
fn step_limit_on_a_cyclic_list_is_traversal_limit() {
    for limit in [0u32, 1, 10, 4096, 65535] {
        let mut c = cfg(Structure::List, Mode::Compiler, 8);
        c.step_limit = limit;
        let mut r = Runtime::new(RuntimeConfig { mlu: c, ..RuntimeConfig::default() }).unwrap();
        let a = r.malloc(64, None).unwrap();
        let _b = r.malloc(64, None).unwrap();
        let _c = r.malloc(64, None).unwrap();
        // List order: c, b, a. Close the cycle: a.next = head.
        let head = r.root();
        r.corrupt_link(r.allocations()[0].location, 0, head);
        assert!(r.check_invariants().is_err());
        let wild = tagged(tag(a), 0x100);
        let f = r.loadmeta(wild).unwrap_err();
        assert_eq!((f.code, f.op, f.ptr), (FaultCode::TraversalLimit, Op::LoadMeta, wild));
        let cn = *r.counters();
        assert_eq!(cn.steps, limit as u64);
        assert_eq!(cn.meta_reads, 3 * limit as u64);
        assert_eq!(cn.faults, 1);
        // Addresses that are on the cycle are still found within the limit.
        if limit >= 3 {
            assert_eq!(code(r.access(a, 4, None)), FaultCode::None);
        }
        assert_eq!(code(r.access(wild, 4, None)), FaultCode::TraversalLimit);
    }
    // HWONLY as well; the fault is reported as MEMCHECK.G.
    let mut r = rt(Structure::Bst, Mode::Hwonly);
    let a = r.malloc(64, None).unwrap();
    let loc = r.allocations()[0].location;
    r.corrupt_link(loc, 1, loc); // right child = itself
    let f = r.access(tagged(tag(a), untag(a) + 1000), 4, None).unwrap_err();
    assert_eq!((f.code, f.op), (FaultCode::TraversalLimit, Op::MemcheckG));
    assert_eq!(r.counters().steps, 4096);
}

#[test]
fn poisoned_node_is_mem_error() {
    for s in [Structure::List, Structure::Bst] {
        for m in MODES {
            let mut r = rt(s, m);
            let a = r.malloc(64, None).unwrap();
            let b = r.malloc(64, None).unwrap();
            r.poison_node(r.allocations()[1].location);
            let f = r.access(a, 4, None).unwrap_err();
            assert_eq!(f.code, FaultCode::MemError, "{s:?} {m:?}");
            assert_eq!(f.op, if m == Mode::Compiler { Op::LoadMeta } else { Op::MemcheckG });
            assert_eq!(code(r.access(b, 4, None)), FaultCode::MemError);
        }
    }
    // Location-miss fetch error: compiler mode, location known, MLB flushed.
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(64, None).unwrap();
    let loc = r.loadmeta(a).unwrap();
    r.flush_mlb();
    r.poison_node(loc);
    let f = r.memcheck_g(a, 4, loc).unwrap_err();
    assert_eq!((f.code, f.op), (FaultCode::MemError, Op::MemcheckG));
    // A location where no node is: unmapped word -> MEM_ERROR.
    assert_eq!(code(r.memcheck_g(a, 4, 0x40)), FaultCode::MemError);
}

#[test]
fn double_free_and_invalid_free() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(64, None).unwrap();
    assert_eq!(r.free(a + 8), Err(FreeFinding::InvalidFree));
    assert_eq!(r.free(untag(a)), Err(FreeFinding::InvalidFree));
    assert_eq!(r.free(0x1234), Err(FreeFinding::InvalidFree));
    assert_eq!(r.free(a), Ok(()));
    assert_eq!(r.free(a), Err(FreeFinding::DoubleFree));
    // Still a double free once the range is reused by another allocation.
    let b = r.malloc(64, None).unwrap();
    assert_eq!(untag(b), untag(a));
    assert_eq!(r.free(a), Err(FreeFinding::DoubleFree));
    assert_eq!(r.free(b), Ok(()));
    assert_eq!((FreeFinding::DoubleFree.name(), FreeFinding::InvalidFree.name()), ("DOUBLE_FREE", "INVALID_FREE"));
    // A free rewrites only the size|tag word.
    let loc = r.allocations()[1].location;
    assert_eq!(r.memory().read_word(loc + 8), Ok(pack_size_tag(64, TAG_FREED)));
    assert_eq!(r.memory().read_word(loc), Ok(untag(b)));
    r.check_invariants().unwrap();
}

#[test]
fn free_invalidates_the_mlb_entry() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(64, None).unwrap();
    assert_eq!(code(r.access(a, 4, None)), FaultCode::None);
    let loc = r.allocations()[0].location;
    assert!(r.mlu().mlb().search_location(loc).is_some());
    r.free(a).unwrap();
    assert!(r.mlu().mlb().search_location(loc).is_none());
    assert_eq!(r.counters().invalidates, 1);
    // A stale location (obtained before the free) still sees FREED via a fetch.
    assert_eq!(code(r.memcheck_g(a, 4, loc)), FaultCode::UseAfterFree);
}

#[test]
fn stale_location_of_a_retired_node_is_mem_error() {
    let mut r = rt(Structure::List, Mode::Compiler);
    let a = r.malloc(64, None).unwrap();
    let loc = r.loadmeta(a).unwrap();
    r.free(a).unwrap();
    let _keep = r.malloc(4096, Some(0x7f00_1000_0000)).unwrap(); // takes a fresh slot
    let b = r.malloc(64, Some(untag(a))).unwrap(); // retires a; reuses a's slot
    assert_eq!(r.allocations()[2].location, loc);
    assert_eq!(code(r.memcheck_g(a, 4, loc)), FaultCode::TagMismatch);
    assert_eq!(code(r.memcheck_g(b, 4, loc)), FaultCode::None);
    r.check_invariants().unwrap();
}

#[test]
fn location_operand_is_taken_by_bits_55_to_5() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(64, None).unwrap();
    let loc = r.loadmeta(a).unwrap();
    assert_eq!(loc % NODE_BYTES, 0);
    for alias in [loc + 1, loc + 31, loc | (0x12 << 56)] {
        assert_eq!(r.memcheck_g(a, 4, alias), Ok(untag(a)));
    }
    r.flush_mlb();
    assert_eq!(r.memcheck_g(a, 4, loc + 17), Ok(untag(a)), "miss path fetches from the aligned node");
    r.check_invariants().unwrap();
}

#[test]
fn traverser_reads_word_by_word_bst_and_list() {
    // Three nodes by hand: bases 0x1000, 0x2000, 0x3000 (size 0x100).
    let (n1, n2, n3) = (0x100, 0x120, 0x140);
    let mut mem = MemoryImage::new();
    let node = |mem: &mut MemoryImage, at: u64, base: u64, l0: u64, l1: u64| {
        mem.write_word(at, base);
        mem.write_word(at + 8, pack_size_tag(0x100, 5));
        mem.write_word(at + 16, l0);
        mem.write_word(at + 24, l1);
    };
    // bst: n2 root, n1 left, n3 right.
    node(&mut mem, n1, 0x1000, 0, 0);
    node(&mut mem, n2, 0x2000, n1, n3);
    node(&mut mem, n3, 0x3000, 0, 0);
    let w = walk(&mem, n2, Structure::Bst, 0x30FF, 100);
    assert_eq!(w.outcome, WalkOutcome::Found { location: n3, meta: Meta { base: 0x3000, size: 0x100, tag: 5 } });
    assert_eq!((w.steps, w.reads), (2, vec![n2, n2 + 8, n2 + 24, n3, n3 + 8]));
    let w = walk(&mem, n2, Structure::Bst, 0x1100, 100);
    assert_eq!(w.outcome, WalkOutcome::NotFound);
    assert_eq!((w.steps, w.reads), (2, vec![n2, n2 + 8, n2 + 16, n1, n1 + 8, n1 + 24]));
    let w = walk(&mem, n2, Structure::Bst, 0x2050, 1);
    assert_eq!((w.outcome, w.steps, w.reads.len()), (WalkOutcome::Found { location: n2, meta: Meta { base: 0x2000, size: 0x100, tag: 5 } }, 1, 2));
    assert_eq!(walk(&mem, n2, Structure::Bst, 0x1000, 1).outcome, WalkOutcome::StepLimit);
    assert_eq!(walk(&mem, n2, Structure::Bst, 0x2000, 0), sim::traverser::Walk { outcome: WalkOutcome::StepLimit, steps: 0, reads: vec![] });
    assert_eq!(walk(&mem, 0, Structure::Bst, 0x2000, 0), sim::traverser::Walk { outcome: WalkOutcome::NotFound, steps: 0, reads: vec![] });
    // list: n2 -> n1 (link0 of n2 is n1), n1 -> end.
    let w = walk(&mem, n2, Structure::List, 0x1010, 100);
    assert_eq!(w.reads, vec![n2, n2 + 8, n2 + 16, n1, n1 + 8]);
    let w = walk(&mem, n2, Structure::List, 0x3010, 100);
    assert_eq!((w.outcome, w.reads), (WalkOutcome::NotFound, vec![n2, n2 + 8, n2 + 16, n1, n1 + 8, n1 + 16]));
    // Memory error part way.
    mem.poison(n1 + 8);
    let w = walk(&mem, n2, Structure::List, 0x3010, 100);
    assert_eq!((w.outcome, w.steps, w.reads.len()), (WalkOutcome::MemError { addr: n1 + 8 }, 2, 5));
    // A link with low bits set is followed by its bits 55..5.
    mem.unpoison(n1 + 8);
    mem.write_word(n2 + 16, n1 | 0x1F);
    assert_eq!(walk(&mem, n2, Structure::List, 0x1010, 100).reads, vec![n2, n2 + 8, n2 + 16, n1, n1 + 8]);
}

#[test]
fn bst_is_balanced_and_ordered_after_every_malloc() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let mut ptrs = vec![];
    for i in 0..100u64 {
        // Given bases in a scrambled order.
        let base = 0x7e00_0000_0000 + ((i * 37) % 100) * 0x1000;
        ptrs.push(r.malloc(0x800, Some(base)).unwrap());
        r.check_invariants().unwrap();
    }
    // Every lookup of a 100-node balanced tree takes at most 7 steps.
    r.flush_mlb();
    let mut r0 = r.clone();
    for p in &ptrs {
        let before = r0.counters().steps;
        assert_eq!(code(r0.access(*p + 0x7FF, 1, None)), FaultCode::None);
        assert!(r0.counters().steps - before <= 7);
        r0.flush_mlb();
    }
    // Free half, then retire them by mallocs over them.
    for p in ptrs.iter().step_by(2) {
        r.free(*p).unwrap();
    }
    r.check_invariants().unwrap();
    for p in ptrs.iter().step_by(2) {
        r.malloc(0x10, Some(untag(*p) + 0x10)).unwrap();
        r.check_invariants().unwrap();
    }
}

#[test]
fn list_insertion_at_head_and_unlink_on_retire() {
    let mut r = rt(Structure::List, Mode::Compiler);
    let a = r.malloc(64, None).unwrap();
    let b = r.malloc(64, None).unwrap();
    let c = r.malloc(64, None).unwrap();
    let loc = |r: &Runtime, i: usize| r.allocations()[i].location;
    assert_eq!(r.root(), loc(&r, 2));
    assert_eq!(r.memory().read_word(loc(&r, 2) + 16), Ok(loc(&r, 1)));
    assert_eq!(r.memory().read_word(loc(&r, 1) + 16), Ok(loc(&r, 0)));
    assert_eq!(r.memory().read_word(loc(&r, 0) + 16), Ok(0));
    // Retire the middle one (b).
    r.free(b).unwrap();
    let d = r.malloc(64, Some(untag(b))).unwrap();
    assert_eq!(r.root(), loc(&r, 3));
    r.check_invariants().unwrap();
    for p in [a, c, d] {
        assert_eq!(code(r.access(p, 8, None)), FaultCode::None);
    }
    // Retire the tail (a) and the old head (c).
    r.free(a).unwrap();
    r.free(c).unwrap();
    r.malloc(512, Some(untag(a))).unwrap(); // retires a (the tail)
    r.check_invariants().unwrap();
    r.malloc(1024, Some(untag(c))).unwrap(); // retires c
    r.check_invariants().unwrap();
    assert_eq!(r.allocations().iter().filter(|x| x.state == AllocState::Retired).count(), 3);
}

#[test]
fn counters_for_a_hand_computed_bst_program() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(512, None).unwrap();
    let b = r.malloc(512, None).unwrap();
    let c = r.malloc(512, None).unwrap();
    // Balanced: b is the root, a left, c right.
    assert_eq!(r.root(), r.allocations()[1].location);
    r.access(a, 4, None).unwrap(); // LM miss: b(2 reads)+left(1), a(2): 2 steps 5 reads; MC loc hit
    r.access(a + 8, 4, Some(a)).unwrap(); // LM hit, MC hit
    r.access(c, 4, None).unwrap(); // LM miss: b, right, c: 2 steps 5 reads; MC hit
    r.access(b, 4, None).unwrap(); // LM miss: b found: 1 step 2 reads; MC hit
    let wild = tagged(tag(a), H + 5000);
    assert_eq!(code(r.access(wild, 4, None)), FaultCode::NoMeta); // LM miss: b, right, c, right=0: 2 steps 6 reads
    let want = Counters {
        loadmeta: 5,
        memcheck_g: 5,
        range_lookups: 5,
        range_hits: 1,
        range_misses: 4,
        loc_lookups: 4,
        loc_hits: 4,
        steps: 7,
        meta_reads: 18,
        faults: 1,
        ..Counters::default()
    };
    assert_eq!(*r.counters(), want);
    r.free(a).unwrap();
    assert_eq!(code(r.access(a, 4, None)), FaultCode::UseAfterFree); // LM miss 2 steps 5 reads, MC hit
    let c2 = *r.counters();
    assert_eq!((c2.invalidates, c2.steps, c2.meta_reads, c2.faults, c2.loc_hits), (1, 9, 23, 2, 5));
}

#[test]
fn counters_for_a_hand_computed_list_program_without_mlb() {
    let mut r = rt_seed(Structure::List, Mode::Compiler, 0, 1);
    let a = r.malloc(512, None).unwrap();
    let _b = r.malloc(512, None).unwrap();
    let c = r.malloc(512, None).unwrap();
    // List: c -> b -> a.
    r.access(a, 4, None).unwrap(); // LM: c(3), b(3), a(2): 3 steps 8 reads; MC loc miss: 2 reads
    r.access(c, 4, None).unwrap(); // LM: c(2): 1 step 2 reads; MC miss 2 reads
    let want = Counters {
        loadmeta: 2,
        memcheck_g: 2,
        range_lookups: 2,
        range_misses: 2,
        loc_lookups: 2,
        loc_misses: 2,
        steps: 4,
        meta_reads: 14,
        ..Counters::default()
    };
    assert_eq!(*r.counters(), want);
    assert!(r.mlu().mlb().entries().is_empty());
}

#[test]
fn counters_hwonly_and_sol() {
    let mut r = rt(Structure::Sol, Mode::Hwonly);
    let a = r.malloc(512, None).unwrap();
    r.access(a, 4, None).unwrap(); // range miss: sol 1 step 1 read
    r.access(a + 4, 4, None).unwrap(); // range hit
    assert_eq!(code(r.access(tagged(tag(a), 0x10), 4, None)), FaultCode::NoMeta); // miss: 1 step, 0 reads
    let want = Counters {
        memcheck_g: 3,
        range_lookups: 3,
        range_hits: 1,
        range_misses: 2,
        steps: 2,
        meta_reads: 1,
        faults: 1,
        ..Counters::default()
    };
    assert_eq!(*r.counters(), want);
}

#[test]
fn config_validation_names_field_and_allowed_values() {
    let mut c = MluConfig::default();
    assert_eq!((c.entries, c.structure, c.replacement, c.mode, c.step_limit), (8, Structure::Bst, Replacement::Plru, Mode::Compiler, 4096));
    c.validate(Target::Model).unwrap();
    c.validate(Target::Hardware).unwrap();
    c.entries = 12;
    let e = c.validate(Target::Model).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("entries"));
    assert!(e.to_string().contains("0, 1, 2, 4, 8, 16, 32"), "{e}");
    assert!(Mlu::new(&c).is_err());
    assert!(Runtime::new(RuntimeConfig { mlu: c.clone(), ..RuntimeConfig::default() }).is_err());
    c.entries = 0;
    c.validate(Target::Model).unwrap();
    let e = c.validate(Target::Hardware).unwrap_err();
    assert!(e.to_string().contains("1, 2, 4, 8, 16, 32") && !e.to_string().contains("0, 1"), "{e}");
    c.entries = 8;
    c.structure = Structure::Sol;
    c.validate(Target::Model).unwrap();
    assert_eq!(c.validate(Target::Hardware).unwrap_err().field.as_deref(), Some("structure"));
    c.structure = Structure::List;
    c.step_limit = 65536;
    assert_eq!(c.validate(Target::Model).unwrap_err().field.as_deref(), Some("step_limit"));
    c.step_limit = 65535;
    c.validate(Target::Hardware).unwrap();
}

#[test]
fn config_json_parsing_and_file_errors() {
    let c = MluConfig::from_json_str(r#"{"entries": 16, "structure": "list", "replacement": "round_robin", "mode": "hwonly", "step_limit": 7}"#).unwrap();
    assert_eq!(c, MluConfig { entries: 16, structure: Structure::List, replacement: Replacement::RoundRobin, mode: Mode::Hwonly, step_limit: 7, unit: None });
    assert_eq!(MluConfig::from_json_str("{}").unwrap(), MluConfig::default());
    let e = MluConfig::from_json_str(r#"{"entires": 8}"#).unwrap_err();
    assert!(e.to_string().contains("entires"), "{e}");
    let e = MluConfig::from_json_str(r#"{"structure": "tree"}"#).unwrap_err();
    assert!(e.to_string().contains("tree"), "{e}");
    let dir = std::env::temp_dir().join(format!("mlugen-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.json");
    std::fs::write(&f, "{\n  \"entries\": 8,\n  \"mode\": 3\n}").unwrap();
    let e: ConfigError = MluConfig::from_json_file(&f).unwrap_err();
    let s = e.to_string();
    assert!(s.contains("bad.json") && s.contains("line 3"), "{s}");
    let e = MluConfig::from_json_file(dir.join("missing.json")).unwrap_err();
    assert!(e.to_string().contains("missing.json"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn runtime_config_errors() {
    let bad = |f: fn(&mut RuntimeConfig)| {
        let mut c = RuntimeConfig::default();
        f(&mut c);
        Runtime::new(c).unwrap_err().field.unwrap()
    };
    assert_eq!(bad(|c| c.node_pool_base = 0x1001), "node_pool_base");
    assert_eq!(bad(|c| c.node_pool_base = 0), "node_pool_base");
    assert_eq!(bad(|c| c.heap_base = 1 << 56), "heap_base");
}

#[test]
fn mlb_size_zero_always_misses() {
    let mut r = rt_seed(Structure::Bst, Mode::Compiler, 0, 9);
    let a = r.malloc(64, None).unwrap();
    for _ in 0..3 {
        r.access(a, 4, None).unwrap();
    }
    let c = r.counters();
    assert_eq!((c.range_hits, c.range_misses, c.loc_hits, c.loc_misses), (0, 3, 0, 3));
}

#[test]
fn check_invariants_detects_corruption() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let _a = r.malloc(64, None).unwrap();
    let _b = r.malloc(64, None).unwrap();
    let _c = r.malloc(64, None).unwrap();
    r.check_invariants().unwrap();
    let root = r.root();
    let mut r2 = r.clone();
    r2.corrupt_link(root, 0, 0);
    assert!(r2.check_invariants().is_err());
    let mut r3 = r.clone();
    r3.poison_node(r.allocations()[0].location);
    assert!(r3.check_invariants().is_err());
}

#[test]
fn base_allocator_skips_the_node_pool() {
    let mut r = Runtime::new(RuntimeConfig { heap_base: POOL - 1024, ..RuntimeConfig::default() }).unwrap();
    assert_eq!(untag(r.malloc(512, None).unwrap()), POOL - 1024);
    assert_eq!(untag(r.malloc(1024, None).unwrap()), POOL + sim::runtime::NODE_POOL_BYTES);
    assert_eq!(untag(r.malloc(512, None).unwrap()), POOL - 512);
    r.check_invariants().unwrap();
}

#[test]
fn a_retired_poisoned_slot_is_fresh_when_reused() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(64, None).unwrap();
    let loc = r.allocations()[0].location;
    r.free(a).unwrap();
    r.poison_node(loc);
    let b = r.malloc(64, None).unwrap(); // retires a, reuses its slot
    assert_eq!(r.allocations()[1].location, loc);
    assert_eq!(r.access(b, 8, None), Ok(untag(b)));
    r.check_invariants().unwrap();
}

#[test]
fn in_bounds_equals_the_wide_formula_on_edge_values() {
    let edges: Vec<u64> = [0u64, 1, 2, 15, 16, 17, 1 << 55, ADDR_MASK - 16, ADDR_MASK, 1 << 56, u64::MAX - 16, u64::MAX - 1, u64::MAX]
        .iter()
        .flat_map(|&v| [v, v.wrapping_add(1), v.wrapping_sub(1)])
        .collect();
    for &a in &edges {
        for &base in &edges {
            for &size in &edges {
                for w in [0u32, 1, 2, 4, 8, 16] {
                    let wide = a as u128 >= base as u128 && a as u128 + w as u128 <= base as u128 + size as u128;
                    assert_eq!(in_bounds(a, w, base, size), wide, "a={a:#x} w={w} base={base:#x} size={size:#x}");
                }
            }
        }
    }
}

#[test]
fn mlu_read_log_lists_every_metadata_read_in_order() {
    let mut r = rt(Structure::Bst, Mode::Compiler);
    let a = r.malloc(512, None).unwrap();
    let _b = r.malloc(512, None).unwrap();
    let la = r.allocations()[0].location;
    let lb = r.allocations()[1].location;
    // Two nodes sorted [a, b]: root is b, a its left child.
    assert_eq!(r.root(), lb);
    r.mlu_mut().set_read_log(true);
    r.access(a, 4, None).unwrap();
    assert_eq!(r.mlu_mut().take_reads(), vec![lb, lb + 8, lb + 16, la, la + 8]);
    r.access(a, 4, None).unwrap(); // all hits
    assert_eq!(r.mlu_mut().take_reads(), Vec::<u64>::new());
    r.flush_mlb();
    r.memcheck_g(a, 4, la).unwrap(); // location-miss fetch
    assert_eq!(r.mlu_mut().take_reads(), vec![la, la + 8]);
    assert_eq!(r.counters().meta_reads, 7);
    r.mlu_mut().set_read_log(false);
    r.flush_mlb();
    r.access(a, 4, None).unwrap();
    assert!(r.mlu_mut().take_reads().is_empty());
}
