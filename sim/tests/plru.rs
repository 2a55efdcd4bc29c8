//! Replacement policies against independent references: tree PLRU against a
//! recursively built tree whose node numbers are assigned by a breadth-first
//! walk (so the heap layout of docs/design.md is checked too, not assumed),
//! exhaustively over every state and every touch, and over every access
//! sequence of bounded length; round robin against a plain counter.
use sim::plru::{Policy, ReplacementPolicy, RoundRobin, TreePlru};
use sim::config::Replacement;
use std::collections::VecDeque;

/// Reference tree: inner nodes carry their breadth-first number.
enum T {
    Leaf(usize),
    Inner { id: usize, lo: usize, mid: usize, l: Box<T>, r: Box<T> },
}

fn build(lo: usize, hi: usize) -> T {
    if hi - lo == 1 {
        return T::Leaf(lo);
    }
    let mid = (lo + hi) / 2;
    T::Inner { id: usize::MAX, lo, mid, l: Box::new(build(lo, mid)), r: Box::new(build(mid, hi)) }
}

fn reference(n: usize) -> T {
    let mut t = build(0, n);
    // Breadth-first numbering: root 0, then level by level, left to right.
    let mut q: VecDeque<&mut T> = VecDeque::new();
    q.push_back(&mut t);
    let mut next = 0;
    while let Some(node) = q.pop_front() {
        if let T::Inner { id, l, r, .. } = node {
            *id = next;
            next += 1;
            q.push_back(l);
            q.push_back(r);
        }
    }
    assert_eq!(next, n - 1);
    t
}

fn ref_victim(t: &T, bits: u64) -> usize {
    match t {
        T::Leaf(w) => *w,
        T::Inner { id, l, r, .. } => {
            if bits >> id & 1 == 0 {
                ref_victim(l, bits)
            } else {
                ref_victim(r, bits)
            }
        }
    }
}

/// Point every node on the path away from `w`.
fn ref_touch(t: &T, bits: u64, w: usize) -> u64 {
    match t {
        T::Leaf(_) => bits,
        T::Inner { id, lo, mid, l, r } => {
            assert!(w >= *lo);
            if w < *mid {
                ref_touch(l, bits | 1 << id, w)
            } else {
                ref_touch(r, bits & !(1 << id), w)
            }
        }
    }
}

#[test]
fn tree_plru_every_state_and_touch() {
    for n in [2usize, 4, 8, 16] {
        let t = reference(n);
        for state in 0..1u64 << (n - 1) {
            let p = TreePlru::with_bits(n, state);
            assert_eq!(p.victim(), ref_victim(&t, state), "n={n} state={state:b}");
            for w in 0..n {
                let mut q = p.clone();
                q.touch(w);
                assert_eq!(q.bits(), ref_touch(&t, state, w), "n={n} state={state:b} touch {w}");
                assert_ne!(q.victim(), w, "the most recently touched way is never the victim");
                let mut f = p.clone();
                f.on_fill(w, true);
                assert_eq!(f.bits(), q.bits(), "a fill touches like a hit");
            }
        }
    }
}

#[test]
fn tree_plru_32_sampled_states() {
    let t = reference(32);
    let mut x = 0x1234_5678_9abc_def0u64;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let state = x & 0x7FFF_FFFF;
        let p = TreePlru::with_bits(32, state);
        assert_eq!(p.victim(), ref_victim(&t, state));
        let w = (x >> 40) as usize % 32;
        let mut q = p.clone();
        q.touch(w);
        assert_eq!(q.bits(), ref_touch(&t, state, w));
    }
}

fn all_sequences(n: usize, len: usize, f: &mut impl FnMut(&[usize])) {
    let mut seq = vec![0; len];
    loop {
        f(&seq);
        let mut i = 0;
        loop {
            if i == len {
                return;
            }
            seq[i] += 1;
            if seq[i] < n {
                break;
            }
            seq[i] = 0;
            i += 1;
        }
    }
}

#[test]
fn tree_plru_every_sequence_from_reset() {
    for (n, max_len) in [(2usize, 10usize), (4, 7), (8, 5)] {
        let t = reference(n);
        for len in 1..=max_len {
            all_sequences(n, len, &mut |seq| {
                let mut p = TreePlru::new(n);
                let mut bits = 0u64;
                assert_eq!(p.victim(), 0);
                for &w in seq {
                    p.touch(w);
                    bits = ref_touch(&t, bits, w);
                    assert_eq!(p.bits(), bits, "n={n} seq={seq:?}");
                    assert_eq!(p.victim(), ref_victim(&t, bits));
                }
                p.reset();
                assert_eq!((p.bits(), p.victim()), (0, 0));
            });
        }
    }
}

#[test]
fn tree_plru_two_ways_is_true_lru() {
    all_sequences(2, 12, &mut |seq| {
        let mut p = TreePlru::new(2);
        for &w in seq {
            p.touch(w);
            assert_eq!(p.victim(), 1 - w);
        }
    });
}

#[test]
fn tree_plru_hand_computed_four_way() {
    // Heap order for N=4: node 0 = root, node 1 = ways 0/1, node 2 = ways 2/3.
    let mut p = TreePlru::new(4);
    p.touch(0); // root -> right (1), node1 -> way 1 (1)
    assert_eq!((p.bits(), p.victim()), (0b011, 2));
    p.touch(2); // root -> left (0), node2 -> way 3 (1)
    assert_eq!((p.bits(), p.victim()), (0b110, 1));
    p.touch(1); // root -> 1, node1 -> way 0 (0)
    assert_eq!((p.bits(), p.victim()), (0b101, 3));
    p.touch(3); // root -> 0, node2 -> way 2 (0)
    assert_eq!((p.bits(), p.victim()), (0b000, 0));
    let single = TreePlru::new(1);
    assert_eq!((single.bits(), single.victim()), (0, 0));
}

#[test]
fn round_robin_is_a_counter_of_valid_replacements() {
    for n in [1usize, 2, 4, 8, 16, 32] {
        for start in 0..n {
            let mut r = RoundRobin::with_ptr(n, start);
            let mut counter = start;
            let mut x = (n * 31 + start) as u64 | 1;
            for _ in 0..200 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let way = (x >> 33) as usize % n;
                match (x >> 60) % 3 {
                    0 => r.touch(way),
                    1 => r.on_fill(way, false),
                    _ => {
                        assert_eq!(r.victim(), counter);
                        r.on_fill(counter, true);
                        counter = (counter + 1) % n;
                    }
                }
                assert_eq!((r.victim(), r.state_bits()), (counter, counter as u64));
            }
            r.reset();
            assert_eq!(r.victim(), 0);
        }
    }
}

#[test]
fn policy_enum_dispatches() {
    let mut p = Policy::new(Replacement::Plru, 8);
    let mut q = TreePlru::new(8);
    let mut r = Policy::new(Replacement::RoundRobin, 8);
    for w in [3, 5, 0, 7] {
        p.touch(w);
        q.touch(w);
        r.on_fill(w, true);
    }
    assert_eq!((p.victim(), p.state_bits()), (q.victim(), q.bits()));
    assert_eq!(r.victim(), 4);
}

/// Round-robin events: a hit on a way, a fill into an invalid way, a fill
/// replacing the (valid) victim.
#[derive(Clone, Copy, Debug)]
enum RrEvent {
    Hit(usize),
    FillInvalid(usize),
    FillVictim,
}

fn rr_events(n: usize) -> Vec<RrEvent> {
    (0..n).map(RrEvent::Hit).chain((0..n).map(RrEvent::FillInvalid)).chain([RrEvent::FillVictim]).collect()
}

#[test]
fn round_robin_every_state_and_event_and_every_short_sequence() {
    for n in [2usize, 4, 8] {
        let events = rr_events(n);
        for ptr in 0..n {
            for &ev in &events {
                let mut r = RoundRobin::with_ptr(n, ptr);
                let want = match ev {
                    RrEvent::Hit(w) => {
                        r.touch(w);
                        ptr
                    }
                    RrEvent::FillInvalid(w) => {
                        r.on_fill(w, false);
                        ptr
                    }
                    RrEvent::FillVictim => {
                        let v = r.victim();
                        assert_eq!(v, ptr);
                        r.on_fill(v, true);
                        (ptr + 1) % n
                    }
                };
                assert_eq!(r.ptr(), want, "n={n} ptr={ptr} {ev:?}");
            }
        }
        let len = if n == 8 { 3 } else { 4 };
        all_sequences(events.len(), len, &mut |seq| {
            let mut r = RoundRobin::new(n);
            let mut replaced = 0;
            for &i in seq {
                match events[i] {
                    RrEvent::Hit(w) => r.touch(w),
                    RrEvent::FillInvalid(w) => r.on_fill(w, false),
                    RrEvent::FillVictim => {
                        let v = r.victim();
                        r.on_fill(v, true);
                        replaced += 1;
                    }
                }
                assert_eq!(r.victim(), replaced % n);
            }
        });
    }
}
