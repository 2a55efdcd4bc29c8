//! The scenario corpus (testbench/scenarios/*.json) on the golden model:
//! every verdict against the `expect` written by hand from the spec, plus the
//! exact output of the spec's own example and the parser's error messages.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sim::scenario::{PtrSpec, Scenario, ScenarioError, ScenarioEvent};

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testbench/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// compute-sanitizer's wording (docs/design.md "Fault reports"), computed
/// from the access's own offset, width and the allocation's size.
fn distance(offset: i128, size: i128) -> String {
    if offset < 0 {
        format!("{} bytes before", -offset)
    } else {
        format!("{} bytes after", offset.max(size) - size + 1)
    }
}

#[test]
fn every_corpus_verdict_matches_its_expect() {
    let files = corpus();
    assert!(files.len() >= 40, "corpus has {} files", files.len());
    let mut seen = BTreeSet::new();
    let mut checked = 0;
    for f in &files {
        let name = f.display().to_string();
        let sc = Scenario::from_file(f).unwrap_or_else(|e| panic!("{e}"));
        assert!(!sc.name.is_empty() && sc.description.is_some(), "{name}: name and description");
        let out = sc.run().unwrap_or_else(|e| panic!("{name}: {e}"));
        // One result per access event, in event order, and frees only when rejected.
        let accesses: Vec<usize> = sc
            .events
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, ScenarioEvent::Access { .. } | ScenarioEvent::SharedAccess { .. }))
            .map(|(i, _)| i)
            .collect();
        let with_result: Vec<usize> = out
            .results
            .iter()
            .filter(|r| !matches!(r.op, "free" | "device_free"))
            .map(|r| r.event)
            .collect();
        assert_eq!(with_result, accesses, "{name}: one result per access");
        let mut mallocs = std::collections::HashMap::new();
        for (i, ev) in sc.events.iter().enumerate() {
            if let ScenarioEvent::Malloc { name: n, size, .. } | ScenarioEvent::DeviceMalloc { name: n, size } = ev {
                mallocs.insert(n.clone(), *size);
            }
            let Some(want) = ev.expect() else {
                assert!(
                    !matches!(
                        ev,
                        ScenarioEvent::Access { .. }
                            | ScenarioEvent::SharedAccess { .. }
                            | ScenarioEvent::Free { .. }
                            | ScenarioEvent::DeviceFree { .. }
                    ),
                    "{name}: event {i} ({}) has no expect",
                    ev.op()
                );
                continue;
            };
            let got = out.verdict(&sc, i).expect("a verdict");
            assert_eq!(got, want.name(), "{name}: event {i} ({})", ev.op());
            seen.insert(want.name());
            checked += 1;
            let r = out.results.iter().find(|r| r.event == i);
            // The report's facts, derived from the event itself.
            match (ev, r) {
                (ScenarioEvent::Access { ptr, .. }, Some(r)) => {
                    assert_eq!(r.addr, r.ptr & ((1 << 56) - 1), "{name}: event {i} addr");
                    if let PtrSpec::Raw(p) = ptr {
                        assert_eq!(r.ptr, *p, "{name}: event {i} ptr");
                    }
                    if let (PtrSpec::Alloc { name: a, offset, .. }, "OUT_OF_BOUNDS") = (ptr, r.fault) {
                        if sc.config.mode == sim::config::Mode::Compiler {
                            let size = mallocs[a];
                            assert_eq!(r.alloc.map(|x| x.1), Some(size), "{name}: event {i} alloc size");
                            assert_eq!(r.distance.as_deref(), Some(distance(*offset as i128, size as i128).as_str()));
                        }
                    }
                    if matches!(r.fault, "USE_AFTER_FREE" | "TAG_MISMATCH" | "OUT_OF_BOUNDS") {
                        assert!(r.alloc.is_some(), "{name}: event {i}: {} reports the allocation", r.fault);
                    } else {
                        assert!(r.alloc.is_none() && r.distance.is_none(), "{name}: event {i}");
                    }
                }
                (ScenarioEvent::SharedAccess { addr, base, size, .. }, Some(r)) => {
                    assert_eq!((r.addr, r.op), (*addr, "MEMCHECK.S"), "{name}: event {i}");
                    if r.fault == "SHARED_OOB" {
                        assert_eq!(r.alloc, Some((*base, *size)));
                        let off = *addr as i128 - *base as i128;
                        assert_eq!(r.distance.as_deref(), Some(distance(off, *size as i128).as_str()));
                    }
                }
                _ => {}
            }
        }
        assert!(out.mismatches(&sc).is_empty(), "{name}");
    }
    // Every fault code, both runtime findings and the allocator's canary
    // finding occur in the corpus.
    for code in [
        "NONE",
        "OUT_OF_BOUNDS",
        "USE_AFTER_FREE",
        "TAG_MISMATCH",
        "NO_META",
        "SHARED_OOB",
        "TRAVERSAL_LIMIT",
        "MEM_ERROR",
        "DOUBLE_FREE",
        "INVALID_FREE",
        "CANARY_OVERFLOW",
    ] {
        assert!(seen.contains(code), "no corpus event expects {code}");
    }
    assert!(checked > 200, "{checked} verdicts");
}

/// splitmix64 (Steele, Lea, Flood 2014), written out here from the published
/// algorithm so the expected tags do not come from the model.
fn splitmix_tags(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed;
    let mut out = Vec::new();
    while out.len() < n {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let t = (z ^ (z >> 31)) >> 56;
        if t != 0 && t != 0xff {
            out.push(t);
        }
    }
    out
}

const SPEC_EXAMPLE: &str = r#"{
  "name": "off-by-one read",
  "mode": "compiler",
  "structure": "bst",
  "mlb_entries": 8,
  "seed": 1,
  "events": [
    {"op": "malloc", "name": "a", "size": 2400},
    {"op": "malloc", "name": "b", "size": 24, "base": "0x7f71b9e00a00"},
    {"op": "access", "ptr": "a", "offset": 2400, "width": 4, "kind": "load"},
    {"op": "free", "name": "a"},
    {"op": "access", "ptr": "a", "offset": 0, "width": 4, "kind": "store"},
    {"op": "access", "addr": "0x0", "width": 8, "kind": "store"},
    {"op": "shared_access", "offset": 4096, "width": 4, "size": 4096, "kind": "load"}
  ]
}"#;

#[test]
fn spec_example_output_is_exact() {
    let sc = Scenario::from_json_str(SPEC_EXAMPLE).unwrap();
    let out = sc.run().unwrap();
    // a: first fit at the heap start 0x7f00_0000_0000, first tag of seed 1.
    let ta = splitmix_tags(1, 1)[0];
    let pa = |off: u64| format!("{:#x}", (ta << 56) | (0x7f00_0000_0000 + off));
    // Counters by hand (docs/design.md): bst of [a, b] has b at the root
    // (element n/2) and a as its left child, so each LOADMETA miss of a visits
    // b (base, size|tag, left link: 3 reads) then a (2 reads). Event 2 misses
    // and fills; MEMCHECK.G hits by location. The free INVALIDATEs a, so
    // event 4 misses again. Event 5 is tag 0 (no lookup); event 6 is MEMCHECK.S.
    let want = serde_json::json!({
        "results": [
            {"event": 2, "fault": "OUT_OF_BOUNDS", "addr": "0x7f0000000960",
             "alloc": {"base": "0x7f0000000000", "size": 2400}, "distance": "1 bytes after",
             "op": "MEMCHECK.G", "ptr": pa(2400)},
            {"event": 4, "fault": "USE_AFTER_FREE", "addr": "0x7f0000000000",
             "alloc": {"base": "0x7f0000000000", "size": 2400},
             "op": "MEMCHECK.G", "ptr": pa(0)},
            {"event": 5, "fault": "NONE", "addr": "0x0", "op": "MEMCHECK.G", "ptr": "0x0"},
            {"event": 6, "fault": "SHARED_OOB", "addr": "0x1000",
             "alloc": {"base": "0x0", "size": 4096}, "distance": "1 bytes after",
             "op": "MEMCHECK.S", "ptr": "0x1000"}
        ],
        "counters": {
            "loadmeta": 3, "memcheck_g": 3, "memcheck_s": 1,
            "range_lookups": 2, "range_hits": 0, "range_misses": 2,
            "loc_lookups": 2, "loc_hits": 2, "loc_misses": 0,
            "steps": 4, "meta_reads": 10, "faults": 3, "invalidates": 1, "flushes": 0
        }
    });
    assert_eq!(out.to_json(), want);
    // The printed text keeps the spec's field order.
    let text = out.to_json_pretty();
    let order = ["\"event\"", "\"fault\"", "\"addr\"", "\"alloc\"", "\"distance\"", "\"op\"", "\"ptr\""];
    let first = &text[..text.find('}').unwrap() + 100];
    let pos: Vec<usize> = order.iter().map(|k| first.find(k).unwrap()).collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{first}");
}

fn parse_err(text: &str) -> String {
    match Scenario::from_json_str(text) {
        Err(ScenarioError { .. }) => Scenario::from_json_str(text).unwrap_err().to_string(),
        Ok(_) => panic!("parsed: {text}"),
    }
}

fn with_events(events: &str) -> String {
    format!(r#"{{"mode": "compiler", "structure": "list", "events": [{events}]}}"#)
}

#[test]
fn malformed_scenarios_name_event_and_field() {
    let m = r#"{"op": "malloc", "name": "a", "size": 64}"#;
    let m2 = r#"{"op": "malloc", "name": "b", "size": 64}"#;
    let cases = [
        (with_events(&format!(r#"{m}, {m2}, {{"op": "flush"}}, {{"op": "access", "ptr": "a", "offset": 0, "kind": "load"}}"#)), r#"event 3 (access): missing field "width""#),
        (with_events(r#"{"op": "malloc", "name": "a", "size": 0}"#), "event 0 (malloc): size must be > 0"),
        (with_events(r#"{"op": "mallco", "name": "a", "size": 5}"#), r#"event 0 (mallco): unknown op "mallco""#),
        (with_events(&format!(r#"{m}, {{"op": "access", "ptr": "c", "offset": 0, "width": 4, "kind": "load"}}"#)), r#"event 1 (access): unknown allocation "c""#),
        (with_events(&format!(r#"{m}, {{"op": "free", "name": "c"}}"#)), r#"event 1 (free): unknown allocation "c""#),
        (r#"{"mode": "compiler", "structure": "bst", "mlb_entries": 12, "events": []}"#.into(), "mlb_entries: 12 is not one of 0, 1, 2, 4, 8, 16, 32"),
        (r#"{"mode": "compiled", "structure": "bst", "events": []}"#.into(), r#"mode: "compiled" is not one of compiler, hwonly"#),
        (r#"{"mode": "compiler", "structure": "tree", "events": []}"#.into(), r#"structure: "tree" is not one of list, bst, sol"#),
        (r#"{"mode": "compiler", "structure": "bst"}"#.into(), r#"events: missing field "events""#),
        (r#"{"mode": "compiler", "structure": "bst", "mlb_entires": 8, "events": []}"#.into(), r#"unknown field "mlb_entires""#),
        (r#"{"mode": "compiler", "structure": "bst", "step_limit": 70000, "events": []}"#.into(), "step_limit: 70000 does not fit"),
        (with_events(&format!(r#"{m}, {{"op": "access", "ptr": "a", "offset": 0, "width": 3, "kind": "load"}}"#)), "event 1 (access): width must be one of 1, 2, 4, 8, 16 bytes, got 3"),
        (with_events(&format!(r#"{m}, {{"op": "access", "ptr": "a", "offset": 0, "width": 4, "kind": "read"}}"#)), r#"event 1 (access): kind must be "load" or "store""#),
        (with_events(&format!(r#"{m}, {{"op": "access", "ptr": "a", "width": 4, "kind": "load"}}"#)), r#"event 1 (access): missing field "offset""#),
        (with_events(&format!(r#"{m}, {{"op": "access", "ptr": "a", "offset": "12", "width": 4, "kind": "load"}}"#)), r#"event 1 (access): field "offset" must be an integer"#),
        (with_events(r#"{"op": "access", "addr": "0xZZ", "width": 4, "kind": "load"}"#), r#"event 0 (access): field "addr" "0xZZ" is not a 64-bit hexadecimal number"#),
        (with_events(r#"{"op": "access", "width": 4, "kind": "load"}"#), r#"event 0 (access): missing field "ptr" (with "offset") or "addr""#),
        (with_events(&format!(r#"{m}, {{"op": "access", "ptr": "a", "offset": 0, "width": 4, "kind": "load", "expect": "OOB"}}"#)), r#"event 1 (access): expect "OOB" is not one of"#),
        (with_events(&format!(r#"{m}, {{"op": "free", "name": "a", "expect": "OUT_OF_BOUNDS"}}"#)), r#"event 1 (free): expect "OUT_OF_BOUNDS" is not one of NONE, DOUBLE_FREE, INVALID_FREE"#),
        (with_events(&format!(r#"{m}, {{"op": "access", "ptr": "a", "offset": 0, "width": 1, "kind": "load", "expect": "DOUBLE_FREE"}}"#)), r#"event 1 (access): expect "DOUBLE_FREE" is not one of NONE,"#),
        (with_events(&format!(r#"{m}, {m}"#)), r#"event 1 (malloc): allocation name "a" is already used by event 0"#),
        (with_events(&format!(r#"{m}, {{"op": "corrupt_link", "name": "a", "link": 2, "to": "a"}}"#)), "event 1 (corrupt_link): link must be 0 (next/left) or 1 (right), got 2"),
        (with_events(r#"{"op": "shared_access", "offset": -4, "width": 4, "size": 64, "kind": "load"}"#), "event 0 (shared_access): base 0x0 + offset -4 is outside the address space"),
        (with_events(r#"{"op": "shared_access", "offset": 0, "width": 4, "base": "0x100000000", "size": 64, "kind": "load"}"#), "event 0 (shared_access): shared-memory addresses are 32-bit"),
        (with_events(r#"{"size": 4}"#), r#"event 0 (?): missing field "op""#),
        (with_events("17"), "event 0 (?): an event must be a JSON object"),
        ("{\"mode\": \"compiler\", ".into(), "invalid JSON"),
    ];
    for (text, want) in &cases {
        let e = parse_err(text);
        assert!(e.contains(want), "got {e:?}, want {want:?}");
    }
}

#[test]
fn runtime_refusals_are_errors_naming_the_event() {
    let text = with_events(
        r#"{"op": "malloc", "name": "a", "size": 4096, "base": "0x7f0000000000"},
           {"op": "malloc", "name": "b", "size": 64, "base": "0x7f0000000800"}"#,
    );
    let e = Scenario::from_json_str(&text).unwrap().run().unwrap_err().to_string();
    assert!(e.starts_with("event 1 (malloc): malloc refused:") && e.contains("overlaps"), "{e}");
    let e = Scenario::from_file("/nonexistent/s.json").unwrap_err().to_string();
    assert!(e.starts_with("/nonexistent/s.json: cannot read"), "{e}");
}

#[test]
fn addresses_accept_numbers_and_hex_strings() {
    let text = with_events(
        r#"{"op": "malloc", "name": "a", "size": "0x100", "base": 139637976727552},
           {"op": "access", "ptr": "a", "offset": "-0x1", "width": 1, "kind": "load"},
           {"op": "access", "addr": 0, "width": 1, "kind": "load"}"#,
    );
    let sc = Scenario::from_json_str(&text).unwrap();
    assert_eq!(sc.events[0], ScenarioEvent::Malloc { name: "a".into(), size: 256, base: Some(0x7f00_0000_0000) });
    assert!(matches!(&sc.events[1], ScenarioEvent::Access { ptr: PtrSpec::Alloc { offset: -1, .. }, .. }));
    let out = sc.run().unwrap();
    assert_eq!(out.results[0].fault, "OUT_OF_BOUNDS");
    assert_eq!(out.results[0].distance.as_deref(), Some("1 bytes before"));
    assert_eq!(out.results[0].addr, 0x7eff_ffff_ffff);
}

/// Mutated corpus files (a character deleted, duplicated or replaced, a
/// number changed) must parse and run to Ok or to an error, never panic.
#[test]
fn mutated_scenarios_never_panic() {
    let texts: Vec<String> = corpus().iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let bytes = b"0123456789-x\"{}[],: fa";
    let (mut ok, mut err) = (0, 0);
    for i in 0..3000 {
        let t = &texts[i % texts.len()];
        let mut b = t.clone().into_bytes();
        for _ in 0..1 + rnd(3) {
            let p = rnd(b.len());
            match rnd(3) {
                0 => {
                    b.remove(p);
                }
                1 => b.insert(p, b[p]),
                _ => b[p] = bytes[rnd(bytes.len())],
            }
        }
        let Ok(s) = String::from_utf8(b) else { continue };
        let r = std::panic::catch_unwind(|| Scenario::from_json_str(&s).and_then(|sc| sc.run().map(|o| o.to_json())));
        match r {
            Ok(Ok(_)) => ok += 1,
            Ok(Err(e)) => {
                assert!(!e.to_string().is_empty());
                err += 1
            }
            Err(_) => panic!("panicked on:\n{s}"),
        }
    }
    assert!(ok > 100 && err > 100, "{ok} ran, {err} rejected");
}
