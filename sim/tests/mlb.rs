//! The MLB model: victim choice, no duplicates, invalidate/flush/reset, the
//! pure searches, and the same-cycle rules of `Mlb::cycle` (docs/design.md
//! "MLB" and "Golden model decisions").
use sim::config::Replacement;
use sim::mlb::{Mlb, MlbCycleInputs, MlbEntry, LOC_MASK};
use sim::node::Meta;
use sim::plru::{ReplacementPolicy, TreePlru};

fn meta(i: u64) -> Meta {
    Meta { base: 0x10_0000 + i * 0x1000, size: 0x800, tag: (i % 250 + 1) as u8 }
}
fn loc(i: u64) -> u64 {
    0x1000_0000_0000 + i * 32
}

fn full(n: usize, rep: Replacement) -> Mlb {
    let mut m = Mlb::new(n, rep);
    for i in 0..n as u64 {
        assert_eq!(m.fill(loc(i), meta(i)), Some(i as usize), "invalid entries fill lowest first");
    }
    m
}

#[test]
fn fills_use_invalid_entries_lowest_first_regardless_of_policy() {
    for rep in [Replacement::Plru, Replacement::RoundRobin] {
        let mut m = full(8, rep);
        assert!(m.entries().iter().all(|e| e.valid));
        assert_eq!(m.invalidate(loc(5)), Some(5));
        assert_eq!(m.invalidate(loc(2)), Some(2));
        assert_eq!(m.invalidate(loc(2)), None);
        assert_eq!(m.victim(), Some(2));
        assert_eq!(m.fill(loc(100), meta(100)), Some(2));
        assert_eq!(m.fill(loc(101), meta(101)), Some(5));
        // Round robin: fills into invalid entries did not move the pointer.
        if rep == Replacement::RoundRobin {
            assert_eq!(m.policy_bits(), 0);
            assert_eq!(m.fill(loc(102), meta(102)), Some(0));
            assert_eq!(m.fill(loc(103), meta(103)), Some(1));
            assert_eq!(m.policy_bits(), 2);
        }
    }
}

#[test]
fn full_mlb_replaces_the_plru_victim_hand_computed() {
    let mut m = full(4, Replacement::Plru);
    // Fills touched 0,1,2,3 -> bits 000, victim 0.
    assert_eq!((m.policy_bits(), m.victim()), (0, Some(0)));
    assert_eq!(m.fill(loc(10), meta(10)), Some(0)); // touch 0 -> 011
    let hit = m.search_location(loc(1)).unwrap();
    assert_eq!(hit, 1);
    m.touch(hit); // root -> 1, node1 -> way 0, node2 stays 0 (way 2): 001
    assert_eq!((m.policy_bits(), m.victim()), (0b001, Some(2)));
    assert_eq!(m.fill(loc(11), meta(11)), Some(2));
    assert!(m.search_location(loc(2)).is_none(), "evicted");
    assert_eq!(m.search_location(loc(11)), Some(2));
}

#[test]
fn searches_are_pure_and_exact() {
    let m = full(8, Replacement::Plru);
    let before = m.clone();
    for i in 0..8u64 {
        let mt = meta(i);
        assert_eq!(m.search_range(mt.base), Some(i as usize));
        assert_eq!(m.search_range(mt.base + mt.size - 1), Some(i as usize));
        assert_eq!(m.search_range(mt.base + mt.size), None);
        assert_eq!(m.search_range(mt.base - 1), None);
        assert_eq!(m.search_location(loc(i)), Some(i as usize));
        assert_eq!(m.range_matches(mt.base + 5), 1 << i);
        assert_eq!(m.location_matches(loc(i)), 1 << i);
        // Only bits 55..5 of a location are compared.
        assert_eq!(m.search_location(loc(i) + 7), Some(i as usize));
        assert_eq!(m.search_location(loc(i) | 0xAB << 56), Some(i as usize));
    }
    assert_eq!(m.search_location(loc(8)), None);
    assert_eq!(m, before, "searches changed the MLB");
    assert_eq!(m.entry(3).location, loc(3) & LOC_MASK);
}

#[test]
fn range_search_needs_no_overflow_at_the_top() {
    let mut m = Mlb::new(2, Replacement::Plru);
    m.fill(loc(0), Meta { base: (1 << 56) - 16, size: (1 << 56) - 1, tag: 3 });
    assert_eq!(m.search_range((1 << 56) - 1), Some(0));
    assert_eq!(m.search_range((1 << 56) - 17), None);
}

#[test]
#[should_panic(expected = "already present")]
fn duplicate_fill_is_refused() {
    let mut m = full(4, Replacement::Plru);
    m.invalidate(loc(0));
    m.fill(loc(1), meta(1));
}

#[test]
fn invalidate_keeps_policy_flush_and_reset_clear_it() {
    let mut m = full(8, Replacement::Plru);
    m.touch(3);
    let bits = m.policy_bits();
    assert_ne!(bits, 0);
    m.invalidate(loc(4));
    assert_eq!(m.policy_bits(), bits);
    m.flush();
    assert!(m.entries().iter().all(|e| !e.valid));
    assert_eq!((m.policy_bits(), m.victim()), (0, Some(0)));
    for i in 0..8 {
        assert_eq!(m.search_location(loc(i)), None);
    }
    let mut m = full(8, Replacement::RoundRobin);
    m.invalidate(loc(0));
    m.fill(loc(50), meta(50));
    m.fill(loc(51), meta(51));
    m.reset();
    assert_eq!(m, Mlb::new(8, Replacement::RoundRobin));
}

#[test]
fn zero_entries_is_no_mlb() {
    let mut m = Mlb::new(0, Replacement::Plru);
    assert_eq!(m.fill(loc(1), meta(1)), None);
    assert_eq!(m.search_range(meta(1).base), None);
    assert_eq!(m.search_location(loc(1)), None);
    assert_eq!(m.victim(), None);
    m.touch(0);
    m.flush();
    let out = m.cycle(MlbCycleInputs { range_lookup: Some(meta(1).base), fill: Some((loc(1), meta(1))), ..Default::default() });
    assert_eq!(out.range_hit, None);
    assert_eq!(out.fill_way, None);
}

/// A reference MLB written plainly for the random comparison below.
#[derive(Clone)]
struct RefMlb {
    e: Vec<Option<(u64, Meta)>>,
    plru: TreePlru,
}

impl RefMlb {
    fn fill(&mut self, l: u64, m: Meta) -> usize {
        let w = self.e.iter().position(|x| x.is_none()).unwrap_or(self.plru.victim());
        self.e[w] = Some((l, m));
        self.plru.touch(w);
        w
    }
}

#[test]
fn random_operations_never_duplicate_and_match_a_plain_reference() {
    for n in [1usize, 2, 4, 8, 16, 32] {
        let mut m = Mlb::new(n, Replacement::Plru);
        let mut r = RefMlb { e: vec![None; n], plru: TreePlru::new(n) };
        let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ n as u64;
        for step in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x >> 20) % (3 * n as u64 + 2); // working set a bit larger than N
            match x % 10 {
                0 => {
                    let w = m.invalidate(loc(i));
                    let rw = r.e.iter().position(|e| e.is_some_and(|(l, _)| l == loc(i)));
                    if let Some(k) = rw {
                        r.e[k] = None;
                    }
                    assert_eq!(w, rw);
                }
                1 if step % 97 == 0 => {
                    m.flush();
                    r.e.iter_mut().for_each(|e| *e = None);
                    r.plru.reset();
                }
                _ => {
                    // An access: location search, fill on a miss.
                    match m.search_location(loc(i)) {
                        Some(w) => {
                            assert_eq!(m.search_range(meta(i).base + 1), Some(w));
                            m.touch(w);
                            r.plru.touch(w);
                        }
                        None => {
                            assert_eq!(m.search_range(meta(i).base + 1), None);
                            assert_eq!(m.fill(loc(i), meta(i)), Some(r.fill(loc(i), meta(i))));
                        }
                    }
                }
            }
            let mut seen = std::collections::HashSet::new();
            for (w, e) in m.entries().iter().enumerate() {
                let want = r.e[w].map(|(l, mt)| MlbEntry { valid: true, location: l, base: mt.base, size: mt.size, tag: mt.tag });
                assert_eq!(e.valid.then_some(*e), want, "n={n} step={step} way={w}");
                assert!(!e.valid || seen.insert(e.location), "duplicate location");
            }
            assert_eq!(m.policy_bits(), r.plru.bits());
        }
    }
}

fn two_way_mlb_with(a: u64, b: u64) -> Mlb {
    let mut m = Mlb::new(4, Replacement::Plru);
    m.fill(loc(a), meta(a));
    m.fill(loc(b), meta(b));
    m
}

#[test]
fn cycle_lookups_see_the_state_before_the_writes() {
    let mut m = two_way_mlb_with(0, 1);
    let out = m.cycle(MlbCycleInputs {
        range_lookup: Some(meta(7).base),
        loc_lookup: Some(loc(7)),
        fill: Some((loc(7), meta(7))),
        ..Default::default()
    });
    assert_eq!((out.range_hit, out.loc_hit, out.fill_way), (None, None, Some(2)));
    let out = m.cycle(MlbCycleInputs { loc_lookup: Some(loc(7)), ..Default::default() });
    assert_eq!(out.loc_hit.map(|(w, e)| (w, e.meta())), Some((2, meta(7))));
    // An invalidate and a lookup of the same location: the lookup still hits.
    let out = m.cycle(MlbCycleInputs { loc_lookup: Some(loc(0)), range_lookup: Some(meta(0).base), invalidate: Some(loc(0)), ..Default::default() });
    assert_eq!((out.loc_hit.map(|h| h.0), out.range_hit.map(|h| h.0), out.invalidated_way), (Some(0), Some(0), Some(0)));
    assert_eq!(m.search_location(loc(0)), None);
}

#[test]
fn cycle_flush_wins_over_everything() {
    let mut m = two_way_mlb_with(0, 1);
    let out = m.cycle(MlbCycleInputs {
        loc_lookup: Some(loc(1)),
        flush: true,
        invalidate: Some(loc(0)),
        fill: Some((loc(5), meta(5))),
        ..Default::default()
    });
    assert_eq!(out.loc_hit.map(|h| h.0), Some(1), "lookups answer from the old state");
    assert_eq!(out.fill_way, None);
    assert!(m.entries().iter().all(|e| !e.valid));
    assert_eq!(m.policy_bits(), 0);
}

#[test]
fn cycle_invalidate_of_the_filled_location_drops_the_fill() {
    let mut m = two_way_mlb_with(0, 1);
    let before = m.policy_bits();
    let out = m.cycle(MlbCycleInputs { invalidate: Some(loc(5)), fill: Some((loc(5), meta(5))), ..Default::default() });
    assert_eq!((out.fill_way, out.invalidated_way), (None, None));
    assert_eq!(m.search_location(loc(5)), None);
    assert_eq!(m.policy_bits(), before, "a dropped fill does not touch");
}

#[test]
fn cycle_invalidate_of_the_victim_way_drops_the_fill_other_ways_do_not() {
    let mut m = full(4, Replacement::Plru); // victim way 0
    assert_eq!(m.victim(), Some(0));
    let out = m.cycle(MlbCycleInputs { invalidate: Some(loc(0)), fill: Some((loc(9), meta(9))), ..Default::default() });
    assert_eq!((out.invalidated_way, out.fill_way), (Some(0), None));
    assert!(!m.entry(0).valid);
    assert_eq!(m.search_location(loc(9)), None);
    let mut m = full(4, Replacement::Plru);
    let out = m.cycle(MlbCycleInputs { invalidate: Some(loc(3)), fill: Some((loc(9), meta(9))), ..Default::default() });
    assert_eq!((out.invalidated_way, out.fill_way), (Some(3), Some(0)), "victim chosen from the old state");
    assert!(!m.entry(3).valid);
    assert_eq!(m.search_location(loc(9)), Some(0));
}

#[test]
fn cycle_policy_order_range_then_location_then_fill() {
    let mut m = full(8, Replacement::Plru);
    let pre = m.policy_bits();
    let out = m.cycle(MlbCycleInputs { range_lookup: Some(meta(2).base), loc_lookup: Some(loc(6)), ..Default::default() });
    assert_eq!((out.range_hit.map(|h| h.0), out.loc_hit.map(|h| h.0)), (Some(2), Some(6)));
    let mut want = TreePlru::with_bits(8, pre);
    want.touch(2);
    want.touch(6);
    assert_eq!(m.policy_bits(), want.bits());
    // The other order would differ here: both ways share the root.
    let mut other = TreePlru::with_bits(8, pre);
    other.touch(6);
    other.touch(2);
    assert_ne!(other.bits(), want.bits());
    // Hit and fill in one cycle: the fill is touched last.
    let victim = m.victim().unwrap();
    let pre = m.policy_bits();
    let out = m.cycle(MlbCycleInputs { loc_lookup: Some(loc(1)), fill: Some((loc(40), meta(40))), ..Default::default() });
    assert_eq!(out.fill_way, Some(victim));
    let mut want = TreePlru::with_bits(8, pre);
    want.touch(1);
    want.touch(victim);
    assert_eq!(m.policy_bits(), want.bits());
}

#[test]
fn cycle_round_robin_advances_only_on_valid_replacement() {
    let mut m = Mlb::new(4, Replacement::RoundRobin);
    for i in 0..4 {
        let out = m.cycle(MlbCycleInputs { fill: Some((loc(i), meta(i))), ..Default::default() });
        assert_eq!(out.fill_way, Some(i as usize));
        assert_eq!(m.policy_bits(), 0);
    }
    let out = m.cycle(MlbCycleInputs { loc_lookup: Some(loc(2)), fill: Some((loc(9), meta(9))), ..Default::default() });
    assert_eq!(out.fill_way, Some(0));
    assert_eq!(m.policy_bits(), 1);
}

#[test]
fn cycle_with_one_op_equals_the_transaction_methods() {
    for rep in [Replacement::Plru, Replacement::RoundRobin] {
        let mut a = Mlb::new(8, rep);
        let mut b = Mlb::new(8, rep);
        let mut x = 12345u64;
        for _ in 0..5000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let i = (x >> 35) % 20;
            match (x >> 60) % 4 {
                0 => {
                    a.cycle(MlbCycleInputs { invalidate: Some(loc(i)), ..Default::default() });
                    b.invalidate(loc(i));
                }
                1 if i == 0 => {
                    a.cycle(MlbCycleInputs { flush: true, ..Default::default() });
                    b.flush();
                }
                _ => {
                    let out = a.cycle(MlbCycleInputs { loc_lookup: Some(loc(i)), ..Default::default() });
                    match b.search_location(loc(i)) {
                        Some(w) => {
                            assert_eq!(out.loc_hit.map(|h| h.0), Some(w));
                            b.touch(w);
                        }
                        None => {
                            assert_eq!(out.loc_hit, None);
                            let o2 = a.cycle(MlbCycleInputs { fill: Some((loc(i), meta(i))), ..Default::default() });
                            assert_eq!(o2.fill_way, b.fill(loc(i), meta(i)));
                        }
                    }
                }
            }
            assert_eq!(a, b);
        }
    }
}
