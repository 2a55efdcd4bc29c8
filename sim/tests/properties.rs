//! The model against the brute-force oracle (sim::oracle) over random
//! malloc/free/access programs: the same verdict (fault code, and the address
//! on a pass) for every access and the same finding for every free, for every
//! structure, both modes, MLB sizes 0, 1, 2, 8, 16 and both replacement
//! policies, with the runtime invariants checked after every step.
//!
//! Accesses aim at in-bounds bytes, both edges, just outside, dangling
//! pointers, wild addresses, neighbours (overflow from one allocation into the
//! next) and tag-0 / wrong-tag pointers, so that every verdict kind occurs
//! (asserted by `every_verdict_kind_occurs`).
use proptest::prelude::*;
use sim::config::{Mode, MluConfig, Replacement, Structure};
use sim::fault::FaultCode;
use sim::oracle::Oracle;
use sim::pointer::{tag, tagged, untag};
use sim::runtime::{FreeFinding, Runtime, RuntimeConfig, DEFAULT_HEAP_BASE};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
struct Case {
    structure: Structure,
    mode: Mode,
    entries: usize,
    replacement: Replacement,
    seed: u64,
    /// Raw op words, interpreted against the state when they run.
    ops: Vec<(u8, u64, u64)>,
}

fn case(len: usize) -> impl Strategy<Value = Case> {
    (
        prop::sample::select(vec![Structure::List, Structure::Bst, Structure::Sol]),
        prop::sample::select(vec![Mode::Compiler, Mode::Hwonly]),
        prop::sample::select(vec![0usize, 1, 2, 8, 16]),
        prop::sample::select(vec![Replacement::Plru, Replacement::RoundRobin]),
        any::<u64>(),
        prop::collection::vec((any::<u8>(), any::<u64>(), any::<u64>()), len),
    )
        .prop_map(|(structure, mode, entries, replacement, seed, ops)| Case { structure, mode, entries, replacement, seed, ops })
}

/// Verdict counts by kind, filled in by `run`.
#[derive(Default, Debug)]
struct Tally {
    access: BTreeMap<&'static str, u64>,
    ops: u64,
}

const WIDTHS: [u32; 5] = [1, 2, 4, 8, 16];

fn run(c: &Case, tally: &mut Tally) -> Result<(), String> {
    let mlu = MluConfig { entries: c.entries, structure: c.structure, mode: c.mode, replacement: c.replacement, step_limit: 4096, unit: None };
    let mut rt = Runtime::new(RuntimeConfig { mlu, seed: c.seed, ..RuntimeConfig::default() }).map_err(|e| e.to_string())?;
    let mut or = Oracle::new();
    // (ptr, size) of every allocation made, in order.
    let mut made: Vec<(u64, u64)> = Vec::new();
    for (step, &(kind, x, y)) in c.ops.iter().enumerate() {
        tally.ops += 1;
        let ctx = |what: &str| {
            format!("step {step}: {what} ({:?} {:?} mlb {} {:?} seed {})", c.structure, c.mode, c.entries, c.replacement, c.seed)
        };
        let pick = |v: u64| made[(v % made.len() as u64) as usize];
        match kind % 16 {
            // malloc at an allocator-chosen base
            0..=2 => {
                let size = match x % 4 {
                    0 => 1 + y % 64,
                    1 => 512 * (1 + y % 4),
                    _ => 1 + y % 3000,
                };
                let p = rt.malloc(size, None).map_err(|e| ctx(&format!("malloc: {e}")))?;
                if Some(untag(p)) != or.first_fit(DEFAULT_HEAP_BASE, size) {
                    return Err(ctx(&format!("malloc({size}) at {:#x}, first fit is {:x?}", untag(p), or.first_fit(DEFAULT_HEAP_BASE, size))));
                }
                or.malloc(p, size).map_err(|e| ctx(&e))?;
                made.push((p, size));
            }
            // malloc at a given base, sometimes overlapping
            3 => {
                let size = 1 + y % 2000;
                let base = DEFAULT_HEAP_BASE + (x % 64) * 256 + (y >> 40) % 3;
                let want_err = or.overlaps_live(base, size);
                match rt.malloc(size, Some(base)) {
                    Ok(p) => {
                        if want_err {
                            return Err(ctx("overlapping malloc accepted"));
                        }
                        if untag(p) != base {
                            return Err(ctx("given base not used"));
                        }
                        or.malloc(p, size).map_err(|e| ctx(&e))?;
                        made.push((p, size));
                    }
                    Err(e) if !want_err => return Err(ctx(&format!("malloc refused: {e}"))),
                    Err(_) => {}
                }
            }
            // free: a made pointer (live or not), or an interior / untagged one
            4 | 5 if !made.is_empty() => {
                let (p, _) = pick(x);
                let q = match y % 8 {
                    0 => p + 1 + y % 7,
                    1 => untag(p),
                    _ => p,
                };
                let got = rt.free(q);
                let want = or.free(q);
                if got != want {
                    return Err(ctx(&format!("free {q:#x}: model {got:?}, oracle {want:?}")));
                }
                *tally.access.entry(match got {
                    Ok(()) => "FREE_OK",
                    Err(FreeFinding::DoubleFree) => "DOUBLE_FREE",
                    Err(FreeFinding::InvalidFree) => "INVALID_FREE",
                }).or_default() += 1;
            }
            6 if y % 8 == 0 => rt.flush_mlb(),
            // accesses
            _ if !made.is_empty() => {
                let (p, size) = pick(x);
                let w = WIDTHS[(y % 5) as usize];
                let s = size as i64;
                let r = (y >> 8) as i64;
                let mut root = Some(p);
                let ptr = match (y >> 3) % 10 {
                    0 | 1 => p.wrapping_add((r % s) as u64),                   // inside (may straddle)
                    2 => p.wrapping_add((s - w as i64 + r % 3 - 1) as u64),     // end edge
                    3 => p.wrapping_sub(1 + (r % 16) as u64),                   // just before
                    4 => p.wrapping_add((s + r % 16) as u64),                   // just after
                    5 => {
                        // into the next allocation by address, from p
                        let next = made.iter().filter(|(q, _)| untag(*q) >= untag(p) + size).min_by_key(|(q, _)| untag(*q));
                        match next {
                            Some((q, qs)) => p.wrapping_add(untag(*q) - untag(p) + (r as u64 % qs)),
                            None => p.wrapping_add(size + 4096),
                        }
                    }
                    6 => {
                        // wild: random address, some allocation's tag
                        root = None;
                        tagged(tag(p), DEFAULT_HEAP_BASE + (r as u64 % 0x4_0000))
                    }
                    7 => tagged(0, untag(p) + (r % s) as u64),                   // tag 0
                    8 => tagged(tag(p) ^ (1 + (r as u8 % 0x7F)), untag(p) + (r % s) as u64), // wrong tag
                    _ => {
                        root = if r % 3 == 0 { Some(untag(p)) } else { None };   // untagged root / own root
                        p.wrapping_add((r % s) as u64)
                    }
                };
                let got = rt.access(ptr, w, root).map_err(|f| f.code);
                let want = or.access(c.mode, ptr, w, root);
                if got != want {
                    return Err(ctx(&format!("access {ptr:#x} w{w} root {root:x?}: model {got:x?}, oracle {want:x?}")));
                }
                *tally.access.entry(got.err().unwrap_or(FaultCode::None).name()).or_default() += 1;
            }
            _ => {}
        }
        rt.check_invariants().map_err(|e| ctx(&format!("invariant: {e}")))?;
        let k = rt.counters();
        if k.range_hits + k.range_misses != k.range_lookups || k.loc_hits + k.loc_misses != k.loc_lookups {
            return Err(ctx("counters do not add up"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, max_shrink_iters: 2000, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn model_matches_oracle(c in case(400)) {
        let mut t = Tally::default();
        if let Err(e) = run(&c, &mut t) {
            prop_assert!(false, "{}", e);
        }
    }
}

#[test]
fn every_verdict_kind_occurs() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRunner};
    for mode in [Mode::Compiler, Mode::Hwonly] {
        let mut runner = TestRunner::new_with_rng(Config::default(), proptest::test_runner::TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha));
        let mut tally = Tally::default();
        for _ in 0..40 {
            let mut c = case(400).new_tree(&mut runner).unwrap().current();
            c.mode = mode;
            run(&c, &mut tally).unwrap();
        }
        for k in ["NONE", "OUT_OF_BOUNDS", "USE_AFTER_FREE", "TAG_MISMATCH", "NO_META", "FREE_OK", "DOUBLE_FREE", "INVALID_FREE"] {
            assert!(tally.access.get(k).copied().unwrap_or(0) >= 20, "{mode:?}: {k} too rare: {:?}", tally.access);
        }
        eprintln!("{mode:?}: {} ops, {:?}", tally.ops, tally.access);
    }
}
