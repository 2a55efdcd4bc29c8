//! Tag generations (spec section 1, docs/design.md "Runtime"): a new
//! allocation never gets a tag that one of the last `tag_history` (default 8)
//! allocations covering any of its bytes held, so a dangling pointer into
//! reused memory is a TAG_MISMATCH (and a free through it a DOUBLE_FREE) for
//! that many reuses. Expected tags come from splitmix64 and the rule as
//! written, checked against a naive per-address model, not from the
//! runtime's segment map.
use sim::config::{Mode, MluConfig, Structure};
use sim::fault::{Fault, FaultCode};
use sim::pointer::{tag, untag};
use sim::runtime::{AllocState, FreeFinding, Runtime, RuntimeConfig, SplitMix64, DEFAULT_HEAP_BASE, TAG_HISTORY_MAX};
use sim::scenario::Scenario;

const MODES: [Mode; 2] = [Mode::Compiler, Mode::Hwonly];

fn rt(structure: Structure, mode: Mode, seed: u64, tag_history: usize) -> Runtime {
    Runtime::new(RuntimeConfig {
        mlu: MluConfig { structure, mode, ..MluConfig::default() },
        seed,
        tag_history,
        ..RuntimeConfig::default()
    })
    .unwrap()
}

fn code<T>(r: Result<T, Fault>) -> FaultCode {
    r.err().map_or(FaultCode::None, |f| f.code)
}

/// The live tags of splitmix64(seed), in order: top byte, 0 and 0xFF skipped.
fn draws(seed: u64) -> impl Iterator<Item = u8> {
    let mut g = SplitMix64(seed);
    std::iter::repeat_with(move || (g.next_u64() >> 56) as u8).filter(|&t| t != 0 && t != 0xFF)
}

/// malloc(size) then free, `n` times: first fit puts every generation at the
/// heap's start. Returns the tagged pointers (the last one still live).
fn generations(r: &mut Runtime, n: usize, size: u64) -> Vec<u64> {
    let mut ptrs: Vec<u64> = Vec::new();
    for g in 0..n {
        if let Some(&p) = ptrs.last() {
            r.free(p).unwrap();
        }
        let p = r.malloc(size, None).unwrap();
        assert_eq!(untag(p), DEFAULT_HEAP_BASE, "generation {g} reuses the same base");
        ptrs.push(p);
    }
    ptrs
}

/// The user's report: seed 604, one base, three generations. With the old
/// rule (`tag_history` 0: only the retired FREED node's tag is excluded) the
/// tags are 0x3e, 0x21, 0x3e, the first generation's dangling pointer passes
/// and a free through it frees the live third allocation.
#[test]
fn seed_604_three_generations() {
    let d: Vec<u8> = draws(604).take(4).collect();
    assert_eq!(&d[..3], &[0x3e, 0x21, 0x3e], "splitmix64(604)'s first live tags");
    for structure in [Structure::List, Structure::Bst, Structure::Sol] {
        for mode in MODES {
            // Old rule: the bug.
            let mut r = rt(structure, mode, 604, 0);
            let p = generations(&mut r, 3, 512);
            assert_eq!(p.iter().map(|&p| tag(p)).collect::<Vec<_>>(), [0x3e, 0x21, 0x3e]);
            assert_eq!(code(r.access(p[0] + 16, 4, None)), FaultCode::None, "old rule: silent pass");
            assert_eq!(r.free(p[0]), Ok(()), "old rule: the stale free frees the live allocation");
            assert_eq!(r.allocations()[2].state, AllocState::Freed);
            // Default rule: the third generation skips 0x3e (a's) as well as
            // 0x21 (b's) and takes the next draw that is neither.
            let mut r = rt(structure, mode, 604, 8);
            let p = generations(&mut r, 3, 512);
            let want_c = draws(604).skip(2).find(|t| ![0x3e, 0x21].contains(t)).unwrap();
            assert_eq!(p.iter().map(|&p| tag(p)).collect::<Vec<_>>(), [0x3e, 0x21, want_c]);
            for (g, &old) in p[..2].iter().enumerate() {
                assert_eq!(code(r.access(old + 16, 4, None)), FaultCode::TagMismatch, "{structure:?} {mode:?} gen {g}");
                assert_eq!(r.free(old), Err(FreeFinding::DoubleFree));
            }
            assert_eq!(code(r.access(p[2] + 16, 4, None)), FaultCode::None);
            assert_eq!(r.allocations()[2].state, AllocState::Live, "the stale frees left c alone");
            assert_eq!(r.free(p[2]), Ok(()));
            r.check_invariants().unwrap();
        }
    }
}

/// 50 seeds, list/bst x compiler/hwonly: three generations, then nine (the
/// first plus 8 reuses). Every earlier generation's dangling pointer is a
/// TAG_MISMATCH and a free through it a DOUBLE_FREE, at every generation.
/// With the old rule some seed breaks this (so the test can fail).
#[test]
fn fifty_seeds_every_generation_within_the_history_is_tag_mismatch() {
    let mut checked = 0;
    for seed in 0..50u64 {
        for structure in [Structure::List, Structure::Bst] {
            for mode in MODES {
                let size = 64 + (seed * 37) % 2000;
                // Three generations.
                let mut r = rt(structure, mode, seed, 8);
                let p = generations(&mut r, 3, size);
                assert!(tag(p[0]) != tag(p[1]) && tag(p[0]) != tag(p[2]) && tag(p[1]) != tag(p[2]), "seed {seed}");
                assert_eq!(code(r.access(p[0], 4, None)), FaultCode::TagMismatch, "seed {seed}");
                assert!(matches!(r.free(p[0]), Err(FreeFinding::DoubleFree | FreeFinding::InvalidFree)));
                assert_eq!(code(r.access(p[2] + size - 4, 4, None)), FaultCode::None);
                // Nine generations: at generation k every j < k (k - j <= 8 reuses back).
                let mut r = rt(structure, mode, seed, 8);
                let mut ptrs: Vec<u64> = Vec::new();
                for k in 0..9 {
                    if let Some(&last) = ptrs.last() {
                        r.free(last).unwrap();
                    }
                    let p = r.malloc(size, None).unwrap();
                    assert_eq!(untag(p), DEFAULT_HEAP_BASE);
                    for (j, &old) in ptrs.iter().enumerate() {
                        assert_ne!(tag(old), tag(p), "seed {seed}: generation {k} got generation {j}'s tag");
                        assert_eq!(code(r.access(old + 8, 8, None)), FaultCode::TagMismatch, "seed {seed} gen {j} at {k}");
                        assert_eq!(r.free(old), Err(FreeFinding::DoubleFree), "seed {seed} gen {j} at {k}");
                        checked += 1;
                    }
                    assert_eq!(code(r.access(p, 8, None)), FaultCode::None);
                    ptrs.push(p);
                }
                r.check_invariants().unwrap();
            }
        }
    }
    assert_eq!(checked, 50 * 4 * 36);
    // The old rule (tag_history 0) lets a tag come back within 8 generations
    // for some of these seeds.
    let collisions = (0..50u64)
        .filter(|&seed| {
            let mut r = rt(Structure::Bst, Mode::Hwonly, seed, 0);
            let t: Vec<u8> = generations(&mut r, 9, 512).iter().map(|&p| tag(p)).collect();
            (0..9).any(|k| (0..k).any(|j| t[j] == t[k]))
        })
        .count();
    assert!(collisions > 0, "no seed in 0..50 repeats a tag within 9 generations under the old rule");
}

/// A naive model of the rule: per `unit`-byte unit from the heap base, the
/// ids of every allocation that covered it, in order. [`Naive::malloc`]
/// computes the tag the rule gives (the first splitmix64 draw outside the
/// forbidden set, with the fallback as docs/design.md words it), mallocs
/// through the runtime and compares.
struct Naive {
    unit: u64,
    h: usize,
    tags: SplitMix64,
    cover: Vec<Vec<usize>>,
}

impl Naive {
    fn new(seed: u64, h: usize, unit: u64, units: usize) -> Naive {
        Naive { unit, h, tags: SplitMix64(seed), cover: vec![Vec::new(); units] }
    }

    /// malloc units [u0, u0 + n): returns the pointer and the history depth
    /// `d` the rule used (None: nothing forbidden).
    fn malloc(&mut self, r: &mut Runtime, u0: usize, n: usize) -> (u64, Option<usize>) {
        let (base, end) = (DEFAULT_HEAP_BASE + u0 as u64 * self.unit, DEFAULT_HEAP_BASE + (u0 + n) as u64 * self.unit);
        let allocs = r.allocations();
        let mut depth = [usize::MAX; 256];
        for u in u0..u0 + n {
            for (i, &id) in self.cover[u].iter().rev().take(self.h).enumerate() {
                let t = allocs[id].tag as usize;
                depth[t] = depth[t].min(i + 1);
            }
        }
        let mut retired = [false; 256];
        for a in allocs.iter().filter(|a| a.state == AllocState::Freed && a.base < end && a.base + a.size > base) {
            retired[a.tag as usize] = true;
        }
        let forb = |d: usize, t: usize| retired[t] || depth[t] <= d;
        let count = |d: usize| (1..255).filter(|&t| forb(d, t)).count();
        let d = (0..=self.h).rev().find(|&d| count(d) < 254);
        let want = loop {
            let t = (self.tags.next_u64() >> 56) as usize;
            if t != 0 && t != 0xFF && !d.is_some_and(|d| forb(d, t)) {
                break t as u8;
            }
        };
        let p = r.malloc(end - base, Some(base)).unwrap();
        assert_eq!(tag(p), want, "h {}: malloc [{base:#x}, {end:#x})", self.h);
        let id = r.allocations().len() - 1;
        // Dangling pointers of the last h generations of every unit.
        for u in u0..u0 + n {
            if d == Some(self.h) {
                for &old in self.cover[u].iter().rev().take(self.h) {
                    let a = &r.allocations()[old];
                    let q = a.ptr - a.base + DEFAULT_HEAP_BASE + u as u64 * self.unit;
                    assert_eq!(code(r.access(q, 4, None)), FaultCode::TagMismatch, "h {} unit {u}", self.h);
                }
            }
            self.cover[u].push(id);
        }
        (p, d)
    }
}

/// Random caller-given ranges (partial overlaps, gaps) and random frees in a
/// 64-unit window: every tag as the naive model says, every dangling
/// pointer of the last H generations a TAG_MISMATCH, segments merged.
#[test]
fn random_ranges_match_the_naive_model() {
    const UNITS: usize = 64;
    for seed in 0..50u64 {
        for h in [0, 1, 3, 8] {
            let mut r = rt(Structure::Bst, MODES[seed as usize % 2], seed, h);
            let mut m = Naive::new(seed, h, 256, UNITS);
            let mut rng = SplitMix64(seed ^ 0x5eed);
            let mut live: Vec<u64> = Vec::new();
            for _ in 0..150 {
                if !live.is_empty() && rng.next_u64() % 3 == 0 {
                    let i = (rng.next_u64() % live.len() as u64) as usize;
                    r.free(live.swap_remove(i)).unwrap();
                    continue;
                }
                let u0 = (rng.next_u64() % UNITS as u64) as usize;
                let n = 1 + (rng.next_u64() as usize) % (UNITS - u0).min(1 + UNITS / 4);
                let (base, end) = (DEFAULT_HEAP_BASE + u0 as u64 * 256, DEFAULT_HEAP_BASE + (u0 + n) as u64 * 256);
                if live.iter().any(|&p| r.live_allocation_at(p).is_some_and(|a| a.base < end && a.base + a.size > base)) {
                    continue;
                }
                let (p, d) = m.malloc(&mut r, u0, n);
                assert_eq!(d, Some(h), "seed {seed}: a 64-unit window never saturates");
                live.push(p);
            }
            r.check_invariants().unwrap();
            // Merged: at most one segment per unit.
            assert!(r.tag_history().segments() <= UNITS, "{} segments", r.tag_history().segments());
        }
    }
}

/// A huge allocation over many freed ones whose histories together hold all
/// 254 live tags: the rule falls back to fewer recent entries (down to the
/// retired tags alone, then none) instead of looping forever; the tag is the
/// one the naive model gives.
#[test]
fn saturated_history_falls_back_without_hanging() {
    // (h, units, generations): which fallback depth each case reaches is
    // printed and checked to be below h.
    let mut depths = Vec::new();
    for (h, units, gens) in [(64usize, 3000usize, 6usize), (8, 150, 8), (8, 40, 8), (1, 3000, 1), (0, 3000, 1)] {
        let mut r = rt(Structure::Sol, Mode::Hwonly, 11, h);
        let mut m = Naive::new(11, h, 16, units);
        let mut last = Vec::new();
        for g in 0..gens {
            last.clear();
            for u in 0..units {
                let (p, d) = m.malloc(&mut r, u, 1);
                assert!(d.is_some());
                if g + 1 < gens {
                    r.free(p).unwrap();
                }
                last.push(p);
            }
        }
        for &p in &last {
            r.free(p).unwrap();
        }
        let t0 = std::time::Instant::now();
        let (big, d) = m.malloc(&mut r, 0, units);
        assert!(t0.elapsed().as_secs() < 5);
        assert!(tag(big) != 0 && tag(big) != 0xFF);
        assert_eq!(code(r.access(big + 16 * (units as u64 - 1), 16, None)), FaultCode::None);
        r.check_invariants().unwrap();
        println!("h {h}, {units} units x {gens} generations: fallback depth {d:?}");
        depths.push((h, d));
    }
    // Coverage: full saturation (nothing forbidden) and an intermediate depth.
    assert!(depths.iter().any(|&(_, d)| d.is_none()), "{depths:?}");
    assert!(depths.iter().any(|&(h, d)| d.is_some_and(|d| d >= 1 && d < h)), "{depths:?}");
}

#[test]
fn history_segments_split_push_and_merge() {
    let mut r = rt(Structure::List, Mode::Compiler, 3, 2);
    let b = DEFAULT_HEAP_BASE;
    let a = r.malloc(1024, Some(b)).unwrap();
    assert_eq!(r.tag_history().at(b + 1023), &[tag(a)]);
    assert_eq!(r.tag_history().at(b + 1024), &[] as &[u8]);
    r.free(a).unwrap();
    let c = r.malloc(512, Some(b + 256)).unwrap();
    // [b, b+256) a; [b+256, b+768) c, a; [b+768, b+1024) a.
    assert_eq!(r.tag_history().segments(), 3);
    assert_eq!(r.tag_history().at(b + 300), &[tag(c), tag(a)]);
    assert_eq!(r.tag_history().at(b + 800), &[tag(a)]);
    r.free(c).unwrap();
    // Two more generations over the whole range: the depth-2 histories
    // become equal everywhere and the three segments merge into one.
    let d = r.malloc(1024, Some(b)).unwrap();
    assert_ne!(tag(d), tag(a));
    assert_ne!(tag(d), tag(c));
    r.free(d).unwrap();
    let e = r.malloc(1024, Some(b)).unwrap();
    assert_eq!(r.tag_history().segments(), 1);
    assert_eq!(r.tag_history().at(b), &[tag(e), tag(d)]);
    // tag_history 0 keeps no history at all.
    let mut r0 = rt(Structure::List, Mode::Compiler, 3, 0);
    r0.malloc(64, None).unwrap();
    assert_eq!(r0.tag_history().segments(), 0);
}

#[test]
fn tag_history_is_validated() {
    let with = |h: usize| Runtime::new(RuntimeConfig { tag_history: h, ..RuntimeConfig::default() });
    assert_eq!(RuntimeConfig::default().tag_history, 8);
    for h in [0, 1, 8, TAG_HISTORY_MAX] {
        with(h).unwrap();
    }
    for h in [TAG_HISTORY_MAX + 1, 1000] {
        let e = with(h).err().unwrap();
        assert_eq!(e.field.as_deref(), Some("tag_history"));
        assert!(e.to_string().contains("0..=64"), "{e}");
    }
    // Serde form: a missing field is the default, a wrong type or an unknown
    // field is an error.
    let c: RuntimeConfig = serde_json::from_str(r#"{"seed": 5}"#).unwrap();
    assert_eq!((c.seed, c.tag_history), (5, 8));
    let c: RuntimeConfig = serde_json::from_str(r#"{"tag_history": 3}"#).unwrap();
    assert_eq!(c.tag_history, 3);
    assert!(serde_json::from_str::<RuntimeConfig>(r#"{"tag_history": -1}"#).is_err());
    assert!(serde_json::from_str::<RuntimeConfig>(r#"{"tag_histroy": 3}"#).is_err());
    // Scenarios: optional top-level field with the same range.
    let sc = |extra: &str| format!(r#"{{"mode": "compiler", "structure": "list", {extra} "events": []}}"#);
    assert_eq!(Scenario::from_json_str(&sc("")).unwrap().tag_history, 8);
    assert_eq!(Scenario::from_json_str(&sc(r#""tag_history": 0,"#)).unwrap().tag_history, 0);
    assert_eq!(Scenario::from_json_str(&sc(r#""tag_history": 64,"#)).unwrap().tag_history, 64);
    let e = Scenario::from_json_str(&sc(r#""tag_history": 65,"#)).unwrap_err().to_string();
    assert_eq!(e, "tag_history: 65 generations is out of range (0..=64)");
    let e = Scenario::from_json_str(&sc(r#""tag_history": "eight","#)).unwrap_err().to_string();
    assert!(e.starts_with("tag_history: "), "{e}");
}

/// The corpus files reproduce the report: run with `tag_history` 0 (the old
/// rule), exactly their dangling-pointer verdicts change.
#[test]
fn corpus_seed_604_files_fail_under_the_old_rule() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testbench/scenarios");
    let mut n = 0;
    for st in ["list", "bst"] {
        for m in ["compiler", "hwonly"] {
            let f = dir.join(format!("dangling-pointer-three-generations-seed-604-{st}-{m}.json"));
            let mut sc = Scenario::from_file(&f).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(sc.seed, 604);
            assert!(sc.run().unwrap().mismatches(&sc).is_empty(), "{}", f.display());
            sc.tag_history = 0;
            let bad = sc.run().unwrap().mismatches(&sc);
            assert!(!bad.is_empty(), "{}", f.display());
            assert!(bad[0].contains("expected TAG_MISMATCH, got NONE"), "{bad:?}");
            n += 1;
        }
    }
    assert_eq!(n, 4);
}

/// Cost on a churning heap (not a check; `--ignored --nocapture` prints it).
#[test]
#[ignore]
fn bench_random_heap() {
    for h in [0usize, 8, 64] {
        let mut r = rt(Structure::Sol, Mode::Compiler, 1, h);
        let mut g = SplitMix64(5);
        let mut live: Vec<u64> = Vec::new();
        let t0 = std::time::Instant::now();
        let n = 300_000;
        for _ in 0..n {
            if live.len() > 500 || (!live.is_empty() && g.next_u64() % 2 == 0) {
                let i = (g.next_u64() % live.len() as u64) as usize;
                r.free(live.swap_remove(i)).unwrap();
            }
            let size = 1 + g.next_u64() % 20_000;
            live.push(r.malloc(size, None).unwrap());
        }
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        println!("tag_history {h}: {n} mallocs in {ms:.0} ms, {} segments", r.tag_history().segments());
    }
}
