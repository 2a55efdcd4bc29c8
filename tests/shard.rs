//! `--shard I/N` and `mlugen merge` (docs/scale-out.md): the shards
//! of a sweep or a cosimulation, merged, equal the unsharded run point for
//! point and count for count; a missing, repeated or foreign shard is refused.
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
fn sweep_shards_merged_equal_the_unsharded_sweep() {
    let d = scratch("sweep");
    let grid = ["--trace", "traces/resnet50_infer.jsonl.gz", "traces/bert_infer.jsonl.gz", "--entries", "0,2,8", "--structure", "bst,list", "--mode", "compiler,hwonly", "--quiet"];
    let run = |extra: &[&str], out: &Path| {
        let mut a: Vec<&str> = vec!["sweep"];
        a.extend(grid);
        a.extend(extra);
        a.extend(["--json", s(out)]);
        ok(&a);
    };
    let all = d.join("all.json");
    run(&[], &all);
    // Three shards (so that the split is uneven), one run with another thread count.
    let parts: Vec<PathBuf> = (0..3).map(|i| d.join(format!("part{i}.json"))).collect();
    for (i, p) in parts.iter().enumerate() {
        run(&["--shard", &format!("{i}/3"), "--threads", if i == 1 { "1" } else { "2" }], p);
    }
    let n: Vec<usize> = parts.iter().map(|p| read(p)["points"].as_array().unwrap().len()).collect();
    assert_eq!(n.iter().sum::<usize>(), 24, "2 traces x 3 sizes x 2 structures x 2 modes: {n:?}");
    assert!(n.iter().all(|&k| k == 8), "points are dealt round robin: {n:?}");
    let merged = d.join("merged.json");
    // Any order of the files.
    ok(&["merge", s(&parts[2]), s(&parts[0]), s(&parts[1]), "--json", s(&merged)]);
    let (a, m) = (read(&all), read(&merged));
    assert_eq!(a["points"], m["points"], "point for point");
    assert_eq!(a["traces"], m["traces"]);
    assert_eq!(a["grid"], m["grid"]);
    assert!(m.get("shard").is_none());

    // Refusals: a missing shard, a repeated one, one of another sweep.
    let err = |args: &[&str]| {
        let out = mlugen(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let out = s(&merged);
    assert!(err(&["merge", s(&parts[0]), s(&parts[1]), "--json", out]).contains("shard 2/3 is missing"));
    assert!(err(&["merge", s(&parts[0]), s(&parts[0]), s(&parts[1]), "--json", out]).contains("shard 0/3 is also in"));
    let other = d.join("other.json");
    let mut a: Vec<&str> = vec!["sweep"];
    a.extend(grid);
    a.extend(["--seed", "2", "--shard", "2/3", "--json", s(&other)]);
    ok(&a);
    assert!(err(&["merge", s(&parts[0]), s(&parts[1]), s(&other), "--json", out]).contains("different sweep parameters"));
    let _ = std::fs::remove_dir_all(&d);
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
        ok(&["cosim", "--top", "mlu", "--transactions", &nn, "--seed", seed, "--rust-hdl-requests", "0", "--quiet", "--json", s(&f)]);
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
    assert!(!err.contains('\r') && err.contains("mlugen sweep: 2/2 runs"), "one line per step, no carriage returns: {err}");
}
