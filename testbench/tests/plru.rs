//! hw::plru::{TreePlru, RoundRobin} against the golden model sim::plru, one
//! clock edge at a time: exhaustive over states x touches for N <= 8 (all
//! three touch ports, alone and combined), random for 16 and 32.
use hw::plru::{RoundRobin, TreePlru};
use rust_hdl::prelude::*;
use sim::plru::{ReplacementPolicy, RoundRobin as ModelRr, TreePlru as ModelPlru};

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One rising and falling edge, settling after each.
fn tick<B: Block>(uut: &mut B, clock: impl Fn(&mut B, bool)) {
    clock(uut, true);
    assert!(simulate(uut, 50));
    clock(uut, false);
    assert!(simulate(uut, 50));
}

/// A touch on each of the ports a, b, c (None = not valid).
type Touches = [Option<usize>; 3];

/// Drive touches a and b as tree paths (`tree_paths`: the mask, and the
/// bits pointing away from the way), with junk set bits off the path (the
/// MLB drives them from its encoders' `lower_any`, which mean nothing
/// there), and touch c as a way.
fn drive<const N: usize, const IW: usize>(uut: &mut TreePlru<N, IW>, t: Touches, junk: u64) {
    let paths = hw::plru::tree_paths(N);
    let full = (1u64 << (N - 1)) - 1;
    let word = |touch: Option<usize>| match touch {
        Some(w) => (paths[w].0, (!paths[w].1 & paths[w].0) | (junk & full & !paths[w].0)),
        None => (0, junk & full),
    };
    let ((am, aset), (bm, bset)) = (word(t[0]), word(t[1]));
    uut.touch_a_mask.next = bits(am);
    uut.touch_a_set.next = bits(aset);
    uut.touch_b_mask.next = bits(bm);
    uut.touch_b_set.next = bits(bset);
    uut.touch_c_valid.next = t[2].is_some();
    uut.touch_c_way.next = bits(t[2].unwrap_or(0) as u64);
}

fn plru_step<const N: usize, const IW: usize>(uut: &mut TreePlru<N, IW>, state: u64, t: Touches, clear: bool) {
    uut.bits.q.next = bits(state);
    uut.pend_a_mask[0].q.next = bits(0);
    uut.pend_b_mask[0].q.next = bits(0);
    uut.pend_c_valid.q.next = false;
    uut.clear.next = clear;
    drive(uut, t, state.rotate_left(3) ^ 0x5a5a);
    assert!(simulate(uut, 50));
    let model = ModelPlru::with_bits(N, state);
    assert_eq!(uut.state.val().to_u64(), state, "N={N}: preset state");
    assert_eq!(uut.victim.val().index(), model.victim(), "N={N} state={state:#b}: victim");
    tick(uut, |u, c| u.clock.next = c.into());
    let mut model = model;
    if clear {
        model.reset();
    } else {
        for w in t.into_iter().flatten() {
            model.touch(w);
        }
    }
    assert_eq!(uut.state.val().to_u64(), model.bits(), "N={N} state={state:#b} touches={t:?} clear={clear}");
}

fn exhaustive<const N: usize, const IW: usize>(all_triples: bool) {
    let mut uut: TreePlru<N, IW> = TreePlru::default();
    uut.connect_all();
    let states = 1u64 << (N - 1);
    let mut s = 7;
    for state in 0..states {
        plru_step(&mut uut, state, [None; 3], false);
        plru_step(&mut uut, state, [Some(N - 1), None, Some(0)], true);
        for w in 0..N {
            plru_step(&mut uut, state, [Some(w), None, None], false);
            plru_step(&mut uut, state, [None, Some(w), None], false);
            plru_step(&mut uut, state, [None, None, Some(w)], false);
            if all_triples {
                for x in 0..N {
                    for y in 0..N {
                        plru_step(&mut uut, state, [Some(w), Some(x), Some(y)], false);
                    }
                }
            } else {
                let r = splitmix(&mut s);
                plru_step(&mut uut, state, [Some(w), Some(r as usize % N), Some((r >> 8) as usize % N)], false);
                plru_step(&mut uut, state, [Some(w), Some((r >> 16) as usize % N), None], false);
            }
        }
    }
}

#[test]
fn tree_plru_exhaustive_up_to_8() {
    exhaustive::<1, 1>(true);
    exhaustive::<2, 1>(true);
    exhaustive::<4, 2>(true);
    exhaustive::<8, 3>(false);
}

/// One PLRU step: preset state, touches, clear (`plru_step`, `given_step`).
type Step<const N: usize, const IW: usize> = fn(&mut TreePlru<N, IW>, u64, Touches, bool);

/// `steps` random states, touches (each port valid half the time) and
/// clears (1 in 16).
fn random_steps<const N: usize, const IW: usize>(uut: &mut TreePlru<N, IW>, s: &mut u64, steps: usize, step: Step<N, IW>) {
    let mask = (1u64 << (N - 1)) - 1;
    for _ in 0..steps {
        let r = splitmix(s);
        let t = |k: u32| ((r >> (40 + k)) & 1 == 1).then_some(((r >> (8 * k)) as usize) % N);
        step(uut, splitmix(s) & mask, [t(0), t(1), t(2)], r >> 60 == 0);
    }
}

fn random<const N: usize, const IW: usize>(seed: u64, steps: usize) {
    let mut uut: TreePlru<N, IW> = TreePlru::default();
    uut.connect_all();
    let mut s = seed;
    random_steps(&mut uut, &mut s, steps, plru_step::<N, IW>);
}

#[test]
fn tree_plru_random_16_and_32() {
    random::<16, 4>(11, 1500);
    random::<32, 5>(12, 1500);
}

/// `TreePlru::with_given_ab`: touches a and b already a cycle old, so they
/// are in this cycle's `state` and `victim`; touch c as in `plru_step`.
fn given_step<const N: usize, const IW: usize>(uut: &mut TreePlru<N, IW>, state: u64, t: Touches, clear: bool) {
    uut.bits.q.next = bits(state);
    uut.pend_c_valid.q.next = false;
    uut.clear.next = clear;
    drive(uut, t, !state);
    assert!(simulate(uut, 50));
    let mut model = ModelPlru::with_bits(N, state);
    for w in t[..2].iter().flatten() {
        model.touch(*w);
    }
    assert_eq!(uut.state.val().to_u64(), model.bits(), "N={N} state={state:#b} given={t:?}: state");
    assert_eq!(uut.victim.val().index(), model.victim(), "N={N} state={state:#b} given={t:?}: victim");
    tick(uut, |u, c| u.clock.next = c.into());
    // The next cycle gives no touch of its own.
    drive(uut, [None, None, None], state);
    assert!(simulate(uut, 50));
    if clear {
        model.reset();
    } else if let Some(w) = t[2] {
        model.touch(w);
    }
    assert_eq!(uut.state.val().to_u64(), model.bits(), "N={N} state={state:#b} touches={t:?} clear={clear}: after the edge");
}

fn given<const N: usize, const IW: usize>(seed: u64, steps: usize) {
    let mut uut: TreePlru<N, IW> = TreePlru::with_given_ab();
    uut.connect_all();
    let mut s = seed;
    let states = 1u64 << (N - 1);
    if N <= 8 {
        for state in 0..states {
            given_step(&mut uut, state, [None; 3], false);
            given_step(&mut uut, state, [Some(0), Some(N - 1), Some(N / 2)], true);
            for w in 0..N {
                for x in 0..N {
                    let r = splitmix(&mut s);
                    given_step(&mut uut, state, [Some(w), Some(x), (r & 1 == 1).then_some((r >> 8) as usize % N)], false);
                }
                given_step(&mut uut, state, [Some(w), None, None], false);
                given_step(&mut uut, state, [None, Some(w), None], false);
            }
        }
    }
    random_steps(&mut uut, &mut s, steps, given_step::<N, IW>);
}

#[test]
fn tree_plru_given_touches_exhaustive_up_to_8_random_16_and_32() {
    given::<1, 1>(21, 10);
    given::<2, 1>(22, 10);
    given::<4, 2>(23, 100);
    given::<8, 3>(24, 100);
    given::<16, 4>(25, 1500);
    given::<32, 5>(26, 1500);
}

/// The paths agree with the model's victim walk: touching every way but w
/// (in order) makes w the victim.
#[test]
fn tree_paths_match_model() {
    for n in [1usize, 2, 4, 8, 16, 32] {
        let paths = hw::plru::tree_paths(n);
        for (w, (mask, to)) in paths.iter().enumerate() {
            assert_eq!(mask.count_ones() as usize, n.trailing_zeros() as usize, "N={n} way {w}: path length");
            let model = ModelPlru::with_bits(n, *to);
            assert_eq!(model.victim(), w, "N={n}: path bits of way {w} select it");
        }
    }
}

fn rr_run<const N: usize, const IW: usize>(seed: u64, steps: usize) {
    let mut uut: RoundRobin<N, IW> = RoundRobin::default();
    uut.connect_all();
    let mut model = ModelRr::new(N);
    let mut s = seed;
    for step in 0..steps {
        let r = splitmix(&mut s);
        let (advance, clear) = (r & 1 == 1, (r >> 1).is_multiple_of(16));
        if step.is_multiple_of(97) {
            // Preset the pointer anywhere.
            let p = (r >> 8) as usize % N;
            uut.ptr.q.next = bits(p as u64);
            model = ModelRr::with_ptr(N, p);
        }
        uut.advance.next = advance;
        uut.clear.next = clear;
        assert!(simulate(&mut uut, 50));
        assert_eq!(uut.victim.val().index(), model.victim(), "RR N={N} step {step}: victim");
        assert_eq!(uut.state.val().to_u64(), model.state_bits(), "RR N={N} step {step}: state");
        tick(&mut uut, |u, c| u.clock.next = c.into());
        if clear {
            model.reset();
        } else if advance {
            model.on_fill_replacing_valid();
        }
        assert_eq!(uut.victim.val().index(), model.victim(), "RR N={N} step {step} after the edge");
    }
}

#[test]
fn round_robin_all_sizes() {
    rr_run::<1, 1>(1, 200);
    rr_run::<2, 1>(2, 200);
    rr_run::<4, 2>(3, 300);
    rr_run::<8, 3>(4, 400);
    rr_run::<16, 4>(5, 600);
    rr_run::<32, 5>(6, 1000);
}
