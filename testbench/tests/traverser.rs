//! The RTL traverser (hw::traverser::Traverser, rust-hdl simulation, clock
//! driven by hand) against the golden model `sim::traverser::walk`: outcome,
//! steps and the exact sequence of word addresses read, on lists and balanced
//! BSTs of 1 to 1000 nodes built in a `sim::memory::MemoryImage` following the
//! node layout, with memory latencies 1..20 (fixed and random per request)
//! and a `ready` that drops at random; plus a cyclic list (TRAVERSAL_LIMIT),
//! poisoned words (MEM_ERROR), limit 0, empty structures and tagged links.
use hw::traverser::{Structures, Traverser, RES_FOUND, RES_LIMIT, RES_MEM_ERROR, RES_NOT_FOUND};
use rust_hdl::prelude::*;
use sim::config::Structure;
use sim::memory::MemoryImage;
use sim::node::{pack_size_tag, BASE, LINK0, LINK1, SIZE_TAG};
use sim::traverser::{walk, Walk, WalkOutcome};
use testbench::memport::{Latency, MemPort, Rng};

/// What the RTL reported for one walk.
#[derive(Debug)]
struct RtlWalk {
    result: u64,
    steps: u64,
    location: u64,
    base: u64,
    size: u64,
    tag: u64,
    reads: Vec<u64>,
    /// Cycles from the start cycle to the done cycle.
    cycles: u64,
}

fn settle(u: &mut Traverser) {
    assert!(simulate(u, 200), "traverser did not settle");
}

fn clock(u: &mut Traverser) {
    u.clock.next = true.into();
    settle(u);
    u.clock.next = false.into();
    settle(u);
}

fn new_traverser(s: Structures) -> Traverser {
    let mut u = Traverser::new(s);
    u.connect_all();
    u.reset.next = true;
    settle(&mut u);
    clock(&mut u);
    u.reset.next = false;
    settle(&mut u);
    u
}

/// One walk on the RTL, the memory driven by `port`. Bounded: a hang fails.
fn rtl_walk(u: &mut Traverser, port: &mut MemPort, a: u64, root: u64, limit: u16, bst: bool) -> RtlWalk {
    assert!(!u.busy.val(), "traverser busy before start");
    let max_cycles = 200_000;
    for cyc in 0..max_cycles {
        let o = port.outputs();
        u.mem_req_ready.next = o.req_ready;
        u.mem_resp_valid.next = o.resp_valid;
        u.mem_resp_data.next = o.resp_data.into();
        u.mem_resp_error.next = o.resp_error;
        u.start.next = cyc == 0;
        // Operands only matter in the start cycle: scramble them afterwards.
        u.a.next = if cyc == 0 { a.into() } else { (!a).into() };
        u.root.next = if cyc == 0 { root.into() } else { 0x1234_5678_9abc_def0u64.into() };
        u.limit.next = if cyc == 0 { (limit as u64).into() } else { 1u64.into() };
        u.structure.next = if cyc == 0 { bst } else { !bst };
        settle(u);
        if cyc > 0 && u.done.val() {
            assert!(!u.busy.val(), "busy in the done cycle");
            assert!(port.idle(), "done with a read outstanding");
            let w = RtlWalk {
                result: u.result.val().to_u64(),
                steps: u.steps.val().to_u64(),
                location: u.location.val().to_u64(),
                base: u.base.val().to_u64(),
                size: u.size.val().to_u64(),
                tag: u.tag.val().to_u64(),
                reads: std::mem::take(&mut port.reads),
                cycles: cyc,
            };
            u.start.next = false;
            settle(u);
            return w;
        }
        if cyc > 0 {
            assert!(u.busy.val(), "not busy during a walk (cycle {cyc})");
        }
        let (v, addr) = (u.mem_req_valid.val(), u.mem_req_addr.val().to_u64());
        port.edge(v, addr);
        clock(u);
    }
    panic!("walk did not finish in {max_cycles} cycles");
}

fn compare(ctx: &str, rtl: &RtlWalk, model: &Walk) {
    assert_eq!(rtl.reads, model.reads, "{ctx}: read sequence");
    assert_eq!(rtl.steps, model.steps as u64, "{ctx}: steps");
    match model.outcome {
        WalkOutcome::Found { location, meta } => {
            assert_eq!(rtl.result, RES_FOUND, "{ctx}: outcome (model found {location:#x})");
            assert_eq!(rtl.location, location, "{ctx}: location");
            assert_eq!(rtl.base, meta.base, "{ctx}: base");
            assert_eq!(rtl.size, meta.size, "{ctx}: size");
            assert_eq!(rtl.tag, meta.tag as u64, "{ctx}: tag");
        }
        WalkOutcome::NotFound => assert_eq!(rtl.result, RES_NOT_FOUND, "{ctx}: outcome (model not found)"),
        WalkOutcome::StepLimit => assert_eq!(rtl.result, RES_LIMIT, "{ctx}: outcome (model step limit)"),
        WalkOutcome::MemError { .. } => assert_eq!(rtl.result, RES_MEM_ERROR, "{ctx}: outcome (model mem error)"),
    }
}

/// n allocations (base, size, tag) in ascending, disjoint ranges with gaps,
/// and their node locations (shuffled slots in the node pool).
struct Allocs {
    nodes: Vec<(u64, u64, u64, u8)>, // (location, base, size, tag), sorted by base
}

fn make_allocs(rng: &mut Rng, n: usize) -> Allocs {
    let mut base = 0x7f00_0000_0000u64 + rng.range(0, 4096);
    let mut slots: Vec<u64> = (0..n as u64).map(|i| 0x1000_0000_0000 + 32 * i).collect();
    for i in (1..slots.len()).rev() {
        let j = rng.range(0, i as u64) as usize;
        slots.swap(i, j);
    }
    let mut nodes = Vec::new();
    for &loc in &slots {
        let size = rng.range(1, 5000);
        let tag = rng.range(1, 255) as u8; // 255 = FREED: found like any node
        nodes.push((loc, base, size, tag));
        base += size + rng.range(0, 3000);
    }
    Allocs { nodes }
}

fn write_node(img: &mut MemoryImage, loc: u64, base: u64, size: u64, tag: u8, l0: u64, l1: u64) {
    img.write_word(loc + BASE, base);
    img.write_word(loc + SIZE_TAG, pack_size_tag(size, tag));
    img.write_word(loc + LINK0, l0);
    img.write_word(loc + LINK1, l1);
}

/// A list in random order (head = first node of a shuffled order). Returns the head.
fn build_list(img: &mut MemoryImage, rng: &mut Rng, al: &Allocs) -> u64 {
    let mut order: Vec<usize> = (0..al.nodes.len()).collect();
    for i in (1..order.len()).rev() {
        let j = rng.range(0, i as u64) as usize;
        order.swap(i, j);
    }
    for (k, &i) in order.iter().enumerate() {
        let (loc, base, size, tag) = al.nodes[i];
        let next = order.get(k + 1).map(|&j| al.nodes[j].0).unwrap_or(0);
        write_node(img, loc, base, size, tag, next, 0);
    }
    al.nodes[order[0]].0
}

/// A perfectly balanced BST (middle element as root, as the runtime builds it).
fn build_bst(img: &mut MemoryImage, al: &Allocs, lo: usize, hi: usize) -> u64 {
    if lo >= hi {
        return 0;
    }
    let mid = lo + (hi - lo) / 2;
    let left = build_bst(img, al, lo, mid);
    let right = build_bst(img, al, mid + 1, hi);
    let (loc, base, size, tag) = al.nodes[mid];
    write_node(img, loc, base, size, tag, left, right);
    loc
}

/// Addresses to look up: hits at the start, end and middle of random nodes,
/// misses in gaps, below the lowest and above the highest node.
fn lookups(rng: &mut Rng, al: &Allocs, count: usize) -> Vec<u64> {
    let mut v = Vec::new();
    let first = al.nodes[0];
    let last = *al.nodes.last().unwrap();
    v.push(first.1.wrapping_sub(1)); // below everything
    v.push(last.1 + last.2); // one past the end of the last
    while v.len() < count {
        let (_, base, size, _) = al.nodes[rng.range(0, al.nodes.len() as u64 - 1) as usize];
        let a = match rng.range(0, 4) {
            0 => base,
            1 => base + size - 1,
            2 => base + rng.range(0, size - 1),
            3 => base + size, // gap or the next node's base
            _ => base.wrapping_sub(rng.range(1, 100)),
        };
        v.push(a);
    }
    v
}

fn latency_for(i: usize) -> (Latency, u64) {
    match i % 4 {
        0 => (Latency::Fixed(1), 100),
        1 => (Latency::Random(1, 20), 100),
        2 => (Latency::Fixed(20), 100),
        _ => (Latency::Random(1, 6), 60),
    }
}

#[test]
fn lists_and_bsts_of_1_to_1000_nodes_match_the_model() {
    let mut rng = Rng(0x7261_7665_7273_6572);
    let mut both = new_traverser(Structures::Both);
    let mut walks = 0;
    for &(n, count) in &[(1usize, 6usize), (2, 8), (3, 8), (7, 10), (16, 12), (100, 10), (1000, 4)] {
        let al = make_allocs(&mut rng, n);
        for structure in [Structure::List, Structure::Bst] {
            let mut img = MemoryImage::new();
            let root = match structure {
                Structure::List => build_list(&mut img, &mut rng, &al),
                _ => build_bst(&mut img, &al, 0, n),
            };
            // Long list walks at 20 cycles a read are slow in rust-hdl: fewer of them.
            let count = if structure == Structure::List && n == 1000 { 2 } else { count };
            for (i, a) in lookups(&mut rng, &al, count).into_iter().enumerate() {
                let (lat, ready) = latency_for(i + walks);
                let mut port = MemPort::new(&img, lat, rng.next_u64());
                port.ready_percent = ready;
                let limit = 4096;
                let model = walk(&img, root, structure, a, limit);
                let rtl = rtl_walk(&mut both, &mut port, a, root, limit as u16, structure == Structure::Bst);
                let ctx = format!("{structure:?} n={n} a={a:#x} {lat:?} ready={ready}%");
                compare(&ctx, &rtl, &model);
                if let Latency::Fixed(l) = lat {
                    if ready == 100 {
                        // Documented timing: 1 + R * (L + 1) cycles.
                        let r = model.reads.len() as u64;
                        assert_eq!(rtl.cycles, 1 + r * (l as u64 + 1), "{ctx}: cycles");
                    }
                }
                walks += 1;
            }
            // Depth of the balanced tree bounds the bst walk: ceil(log2(n+1)).
            if structure == Structure::Bst {
                let depth = (usize::BITS - n.leading_zeros()) as u32;
                let a = al.nodes[n - 1].1;
                assert!(walk(&img, root, structure, a, 4096).steps <= depth);
            }
        }
    }
    assert!(walks > 100);
}

#[test]
fn single_structure_traversers_ignore_the_structure_input() {
    let mut rng = Rng(99);
    let al = make_allocs(&mut rng, 30);
    for (s, structure) in [(Structures::List, Structure::List), (Structures::Bst, Structure::Bst)] {
        let mut u = new_traverser(s);
        let mut img = MemoryImage::new();
        let root = if structure == Structure::List { build_list(&mut img, &mut rng, &al) } else { build_bst(&mut img, &al, 0, 30) };
        for a in lookups(&mut rng, &al, 12) {
            for csr in [false, true] {
                let mut port = MemPort::new(&img, Latency::Random(1, 3), 5);
                let rtl = rtl_walk(&mut u, &mut port, a, root, 4096, csr);
                compare(&format!("{s:?} csr={csr} a={a:#x}"), &rtl, &walk(&img, root, structure, a, 4096));
            }
        }
    }
}

#[test]
fn cyclic_list_ends_in_traversal_limit() {
    let mut rng = Rng(3);
    let al = make_allocs(&mut rng, 5);
    let mut img = MemoryImage::new();
    let head = build_list(&mut img, &mut rng, &al);
    // Close the cycle: the last node's next points back at the head.
    let mut last = head;
    while img.read_word(last + LINK0).unwrap() != 0 {
        last = img.read_word(last + LINK0).unwrap();
    }
    img.write_word(last + LINK0, head);
    let mut u = new_traverser(Structures::Both);
    let miss = 0x10; // below every node: never found
    for limit in [0u16, 1, 4, 5, 6, 37, 300] {
        let mut port = MemPort::new(&img, Latency::Random(1, 4), limit as u64);
        let model = walk(&img, head, Structure::List, miss, limit as u32);
        assert_eq!(model.outcome, WalkOutcome::StepLimit);
        assert_eq!(model.steps, limit as u32);
        let rtl = rtl_walk(&mut u, &mut port, miss, head, limit, false);
        compare(&format!("cycle limit={limit}"), &rtl, &model);
    }
    // The same on a bst whose right link points back at the root.
    let mut img = MemoryImage::new();
    let root = build_bst(&mut img, &al, 0, 5);
    let mut n = root;
    while img.read_word(n + LINK1).unwrap() != 0 {
        n = img.read_word(n + LINK1).unwrap();
    }
    img.write_word(n + LINK1, root);
    let above = al.nodes[4].1 + al.nodes[4].2 + 10;
    let mut port = MemPort::new(&img, Latency::Fixed(2), 1);
    let model = walk(&img, root, Structure::Bst, above, 50);
    assert_eq!(model.outcome, WalkOutcome::StepLimit);
    compare("bst cycle", &rtl_walk(&mut u, &mut port, above, root, 50, true), &model);
}

#[test]
fn memory_errors_end_the_walk_with_mem_error() {
    let mut rng = Rng(11);
    let al = make_allocs(&mut rng, 20);
    let mut u = new_traverser(Structures::Both);
    for structure in [Structure::List, Structure::Bst] {
        let mut img = MemoryImage::new();
        let root = if structure == Structure::List { build_list(&mut img, &mut rng, &al) } else { build_bst(&mut img, &al, 0, 20) };
        let target = al.nodes[13].1 + 1;
        let clean = walk(&img, root, structure, target, 4096);
        assert!(matches!(clean.outcome, WalkOutcome::Found { .. }));
        // Poison each word the clean walk reads, one at a time: base, size
        // and link reads all end in MEM_ERROR after exactly that read.
        for (k, &addr) in clean.reads.iter().enumerate() {
            let mut bad = img.clone();
            bad.poison(addr);
            let model = walk(&bad, root, structure, target, 4096);
            assert_eq!(model.outcome, WalkOutcome::MemError { addr });
            assert_eq!(model.reads.len(), k + 1);
            let mut port = MemPort::new(&bad, Latency::Random(1, 5), k as u64);
            let rtl = rtl_walk(&mut u, &mut port, target, root, 4096, structure == Structure::Bst);
            compare(&format!("{structure:?} poisoned read {k} at {addr:#x}"), &rtl, &model);
        }
        // A link to a word that was never written (unmapped) is an error too.
        let mut bad = img.clone();
        bad.write_word(al.nodes[0].0 + LINK0, 0x1000_dead_0000);
        let a = al.nodes[0].1.wrapping_sub(1);
        let model = walk(&bad, root, structure, a, 4096);
        let mut port = MemPort::new(&bad, Latency::Fixed(1), 2);
        compare(&format!("{structure:?} unmapped link"), &rtl_walk(&mut u, &mut port, a, root, 4096, structure == Structure::Bst), &model);
    }
}

#[test]
fn empty_structure_limit_zero_and_tagged_links() {
    let mut rng = Rng(17);
    let al = make_allocs(&mut rng, 8);
    let mut u = new_traverser(Structures::Both);
    let empty = MemoryImage::new();
    for bst in [false, true] {
        let s = if bst { Structure::Bst } else { Structure::List };
        // Root 0 (and a root whose bits 55..5 are 0): not found, 0 steps, 0 reads.
        for root in [0u64, 0xFF00_0000_0000_001F] {
            for limit in [0u16, 7] {
                let mut port = MemPort::new(&empty, Latency::Fixed(1), 0);
                let model = walk(&empty, root, s, 0x7f00_0000_0000, limit as u32);
                let rtl = rtl_walk(&mut u, &mut port, 0x7f00_0000_0000, root, limit, bst);
                assert_eq!(rtl.cycles, 1, "empty walk takes one cycle");
                compare(&format!("empty root={root:#x} limit={limit}"), &rtl, &model);
            }
        }
        // Links and root carrying junk in bits 63..56 and 4..0 are taken by bits 55..5.
        let mut img = MemoryImage::new();
        let root = if bst { build_bst(&mut img, &al, 0, 8) } else { build_list(&mut img, &mut rng, &al) };
        for &(loc, ..) in &al.nodes {
            for off in [LINK0, LINK1] {
                let l = img.read_word(loc + off).unwrap();
                if l != 0 {
                    img.write_word(loc + off, l | 0xAB00_0000_0000_0017);
                }
            }
        }
        let junk_root = root | 0x5500_0000_0000_0009;
        for a in lookups(&mut rng, &al, 10) {
            let model = walk(&img, junk_root, s, a, 4096);
            let mut port = MemPort::new(&img, Latency::Random(1, 3), a);
            // A tagged address: only bits 55..0 are looked up.
            let rtl = rtl_walk(&mut u, &mut port, a | 0x4200_0000_0000_0000, junk_root, 4096, bst);
            compare(&format!("junk links bst={bst} a={a:#x}"), &rtl, &model);
        }
        // Limit 0 on a non-empty structure faults before any read.
        let model = walk(&img, root, s, al.nodes[0].1, 0);
        assert_eq!((model.outcome, model.reads.len()), (WalkOutcome::StepLimit, 0));
        let mut port = MemPort::new(&img, Latency::Fixed(3), 0);
        compare("limit 0", &rtl_walk(&mut u, &mut port, al.nodes[0].1, root, 0, bst), &model);
    }
}

#[test]
fn reset_aborts_a_walk() {
    let mut rng = Rng(23);
    let al = make_allocs(&mut rng, 50);
    let mut img = MemoryImage::new();
    let head = build_list(&mut img, &mut rng, &al);
    let mut u = new_traverser(Structures::List);
    let mut port = MemPort::new(&img, Latency::Fixed(2), 0);
    u.start.next = true;
    u.a.next = 0x10u64.into();
    u.root.next = head.into();
    u.limit.next = 4096u64.into();
    for _ in 0..40 {
        let o = port.outputs();
        u.mem_req_ready.next = o.req_ready;
        u.mem_resp_valid.next = o.resp_valid;
        u.mem_resp_data.next = o.resp_data.into();
        u.mem_resp_error.next = o.resp_error;
        settle(&mut u);
        port.edge(u.mem_req_valid.val(), u.mem_req_addr.val().to_u64());
        clock(&mut u);
        u.start.next = false;
    }
    assert!(u.busy.val());
    u.reset.next = true;
    settle(&mut u);
    clock(&mut u);
    u.reset.next = false;
    settle(&mut u);
    assert!(!u.busy.val() && !u.done.val() && !u.mem_req_valid.val());
    // And it walks normally afterwards.
    let a = al.nodes[7].1;
    let mut port = MemPort::new(&img, Latency::Fixed(1), 0);
    compare("after reset", &rtl_walk(&mut u, &mut port, a, head, 4096, false), &walk(&img, head, Structure::List, a, 4096));
}
