//! `--shard I/N` and `mlugen merge` (docs/scale-out.md): the shards of a
//! cosimulation, merged, equal the unsharded run seed for seed and count for
//! count; a missing or repeated shard is refused. Also: `sweep`'s progress
//! and `--quiet`.
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mlugen(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_mlugen")).current_dir(env!("CARGO_MANIFEST_DIR")).args(args).output().expect("run mlugen");
    out
}

fn ok(args: &[&str]) -> Output {
    let out = mlugen(args);
    assert!(out.status.success(), "mlugen {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mlugen-shard-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn cosim_shards_merged_equal_the_unsharded_run() {
    let d = scratch("cosim");
    let base = ["cosim", "--top", "mlb", "--entries", "8", "--transactions", "3000", "--seed", "11", "--seeds", "5"];
    let run = |extra: &[&str], out: &Path| -> Output {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(extra);
        a.extend(["--json", s(out)]);
        ok(&a)
    };
    let all = d.join("all.json");
    let o = run(&[], &all);
    // Progress goes to stderr as plain lines when stderr is not a terminal.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("mlugen cosim: building mlb8_plru under Verilator") && err.contains("cycles (") && !err.contains('\r'), "{err}");
    let a = read(&all);
    assert_eq!(a["runs"].as_array().unwrap().len(), 5);
    assert_eq!(a["compared"].as_u64(), Some(5 * 3000), "exactly --transactions per seed");
    assert_eq!(a["mismatches"].as_u64(), Some(0));
    let p0 = d.join("p0.json");
    let p1 = d.join("p1.json");
    run(&["--shard", "0/2", "--quiet"], &p0);
    run(&["--shard", "1/2", "--quiet"], &p1);
    let seeds = |p: &Path| read(p)["runs"].as_array().unwrap().iter().map(|r| r["seed"].as_u64().unwrap()).collect::<Vec<_>>();
    assert_eq!(seeds(&p0), vec![11, 13, 15]);
    assert_eq!(seeds(&p1), vec![12, 14]);
    let m = d.join("merged.json");
    ok(&["merge", s(&p1), s(&p0), "--json", s(&m)]);
    let m = read(&m);
    assert_eq!(a["runs"], m["runs"], "seed for seed, count for count");
    assert_eq!(a["counts"], m["counts"]);
    assert_eq!(a["compared"], m["compared"]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn mlu_cosim_compares_exactly_the_requests_asked_for() {
    // Before, an access's LOADMETA + MEMCHECK.G pair could take the count one past.
    for (n, seed) in [(1000u64, "1"), (4321, "7"), (32769, "3")] {
        let d = scratch(&format!("mlu{n}"));
        let f = d.join("r.json");
        let nn = n.to_string();
        ok(&["cosim", "--top", "mlu", "--transactions", &nn, "--seed", seed, "--quiet", "--json", s(&f)]);
        let r = read(&f);
        assert_eq!(r["compared"].as_u64(), Some(n));
        assert_eq!(r["counts"]["requests"].as_u64(), Some(n));
        assert_eq!(r["mismatches"].as_u64(), Some(0));
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn quiet_sweep_prints_nothing_on_stderr() {
    let o = ok(&["sweep", "--trace", "traces/bert_infer.jsonl.gz", "--entries", "8", "--structure", "bst", "--mode", "compiler", "--quiet"]);
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = ok(&["sweep", "--trace", "traces/bert_infer.jsonl.gz", "--entries", "8", "--structure", "bst", "--mode", "compiler"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains('\r') && err.contains("mlugen sweep: 1/1 points"), "one line per step, no carriage returns: {err}");
}
