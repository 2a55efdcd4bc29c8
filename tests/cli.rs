//! The built `mlugen` binary on good and bad input: bad input must exit
//! non-zero with a message naming the file and the event and field (or the
//! line), and never panic.
use std::path::PathBuf;
use std::process::{Command, Output};

fn mlugen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mlugen")).args(args).output().expect("run mlugen")
}

/// A scratch file under the system temp dir, removed on drop.
struct Scratch(PathBuf);
impl Scratch {
    fn new(tag: &str, bytes: &[u8]) -> Scratch {
        let p = std::env::temp_dir().join(format!("mlugen-cli-test-{}-{tag}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        Scratch(p)
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs `mlugen ARGS` expecting failure; returns stderr.
fn fails(args: &[&str]) -> String {
    let out = mlugen(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "mlugen {args:?} succeeded; stdout: {}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(out.status.code(), Some(1), "mlugen {args:?}: {err}");
    assert!(!err.contains("panicked"), "mlugen {args:?} panicked: {err}");
    assert!(out.stdout.is_empty(), "mlugen {args:?} printed to stdout on error");
    err
}

fn scenario(events: &str, top: &str) -> String {
    format!(r#"{{"name": "t", "mode": "compiler", "structure": "bst"{top}, "events": [{events}]}}"#)
}

const MALLOC_A: &str = r#"{"op": "malloc", "name": "a", "size": 64}"#;

#[test]
fn bad_scenarios_exit_nonzero_naming_event_and_field() {
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "missing-field",
            scenario(&format!(r#"{MALLOC_A}, {{"op": "access", "ptr": "a", "offset": 0, "kind": "load"}}"#), ""),
            r#"event 1 (access): missing field "width""#,
        ),
        ("unknown-op", scenario(r#"{"op": "mallco", "name": "a", "size": 64}"#, ""), r#"event 0 (mallco): unknown op "mallco""#),
        (
            "unknown-alloc",
            scenario(&format!(r#"{MALLOC_A}, {{"op": "access", "ptr": "c", "offset": 0, "width": 4, "kind": "load"}}"#), ""),
            r#"event 1 (access): unknown allocation "c""#,
        ),
        ("size-0", scenario(r#"{"op": "malloc", "name": "a", "size": 0}"#, ""), "event 0 (malloc): size must be > 0"),
        ("mlb-12", scenario("", r#", "mlb_entries": 12"#), "mlb_entries: 12 is not one of 0, 1, 2, 4, 8, 16, 32"),
        ("invalid-json", r#"{"mode": "compiler", "events": [ {"op": "#.to_string(), "invalid JSON: EOF while parsing"),
        (
            "overlap",
            scenario(
                r#"{"op": "malloc", "name": "a", "size": 4096, "base": "0x7f0000000000"},
                   {"op": "malloc", "name": "b", "size": 64, "base": "0x7f0000000100"}"#,
                "",
            ),
            r#"event 1 (malloc): malloc refused"#,
        ),
    ];
    for (tag, text, want) in &cases {
        let f = Scratch::new(&format!("{tag}.json"), text.as_bytes());
        let err = fails(&["check", "--scenario", f.path()]);
        assert!(err.contains(f.path()), "{tag}: error does not name the file: {err}");
        assert!(err.contains(want), "{tag}: got {err:?}, want {want:?}");
    }
    let err = fails(&["check", "--scenario", "/nonexistent/s.json"]);
    assert!(err.contains("/nonexistent/s.json: cannot read"), "{err}");
}

#[test]
fn check_prints_the_results_json() {
    let text = scenario(
        &format!(r#"{MALLOC_A}, {{"op": "access", "ptr": "a", "offset": 64, "width": 4, "kind": "load", "expect": "OUT_OF_BOUNDS"}}"#),
        "",
    );
    let f = Scratch::new("ok.json", text.as_bytes());
    let out = mlugen(&["check", "--scenario", f.path(), "--verify"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    let r = &v["results"][0];
    assert_eq!(r["event"], 1);
    assert_eq!(r["fault"], "OUT_OF_BOUNDS");
    assert_eq!(r["addr"], "0x7f0000000040");
    assert_eq!(r["alloc"]["size"], 64);
    assert_eq!(r["distance"], "1 bytes after");
    assert_eq!(v["counters"]["faults"], 1);

    // --verify fails when a verdict differs from `expect`, and says which.
    let wrong = text.replace("\"OUT_OF_BOUNDS\"", "\"NONE\"");
    let g = Scratch::new("wrong.json", wrong.as_bytes());
    let out = mlugen(&["check", "--scenario", g.path(), "--verify"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("event 1 (access): expected NONE, got OUT_OF_BOUNDS"), "{err}");
    assert!(!out.stdout.is_empty(), "the results are still printed");
}

#[test]
fn only_engines_that_exist_are_offered() {
    let f = Scratch::new("engine.json", scenario(MALLOC_A, "").as_bytes());
    for e in ["rtl", "fpga"] {
        let err = fails(&["check", "--scenario", f.path(), "--engine", e]);
        assert!(err.contains(&format!("invalid value '{e}' for '--engine")) && err.contains("[possible values: model, verilator]"), "{err}");
    }
}

fn gz(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

const HEADER: &str = r#"{"format": "gpuarmor-trace", "version": 2, "workload": "t", "sm_count": 132}"#;

/// `trace` and `sweep` read through one validator: a trace the sweep would
/// refuse is refused by `trace` too, with the same message.
#[test]
fn trace_and_sweep_reject_the_same_traces() {
    let alloc = |base: &str, size: &str| format!(r#"{{"t": "alloc", "id": 0, "base": {base}, "size": {size}}}"#);
    let cases = [
        ("size0", alloc("4096", "0"), ":2:"),
        ("size2p63", alloc("4096", "9223372036854775808"), ":2:"),
        ("base2p56", alloc("72057594037927936", "64"), ":2:"),
        (
            "overlap",
            format!("{}\n{}", alloc("4096", "64"), r#"{"t": "alloc", "id": 1, "base": 4100, "size": 64}"#),
            ":3:",
        ),
        (
            "past-end",
            format!("{}\n{}", alloc("4096", "64"), r#"{"t": "kernel", "op": "k", "acc": [[0, 60, 8, "r"]], "gpu": []}"#),
            ":3:",
        ),
        (
            "overflow",
            format!("{}\n{}", alloc("4096", "64"), r#"{"t": "kernel", "op": "k", "acc": [[0, 18446744073709551615, 2, "r"]], "gpu": []}"#),
            ":3:",
        ),
    ];
    for (tag, body, line) in cases {
        let f = Scratch::new(&format!("v-{tag}.jsonl.gz"), &gz(&format!("{HEADER}\n{body}\n")));
        let t = fails(&["trace", f.path()]);
        let s = fails(&["sweep", "--trace", f.path(), "--entries", "8", "--structure", "bst", "--mode", "compiler", "--quiet"]);
        let at = format!("{}{line}", f.path());
        assert!(t.contains(&at), "{tag}: trace: {t}");
        assert_eq!(t, s, "{tag}: trace and sweep give the same error");
    }
}

#[test]
fn bad_traces_exit_nonzero_naming_file_and_line() {
    let corrupt = Scratch::new(
        "corrupt.jsonl.gz",
        &gz(&format!("{HEADER}\n{{\"t\": \"alloc\", \"id\": 0, \"base\": 4096, \"size\": 64}}\n{{\"t\": \"free\", \"id\"\n")),
    );
    let err = fails(&["trace", corrupt.path()]);
    assert!(err.contains(&format!("{}:3: bad JSON", corrupt.path())), "{err}");

    let full = gz(&format!(
        "{HEADER}\n{}",
        (0..2000).map(|i| format!("{{\"t\": \"alloc\", \"id\": {i}, \"base\": {}, \"size\": 512}}\n", 4096 + 512 * i)).collect::<String>()
    ));
    let truncated = Scratch::new("truncated.jsonl.gz", &full[..full.len() / 2]);
    let err = fails(&["trace", truncated.path()]);
    assert!(err.contains(truncated.path()) && err.contains("truncated gzip"), "{err}");

    let unknown = Scratch::new("unknown.jsonl.gz", &gz(&format!("{HEADER}\n{{\"t\": \"free\", \"id\": 3}}\n")));
    let err = fails(&["trace", unknown.path()]);
    assert!(err.contains(&format!("{}:2: free: unknown id 3", unknown.path())), "{err}");
}

#[test]
fn trace_prints_summaries() {
    let t = Scratch::new(
        "ok.jsonl.gz",
        &gz(&format!(
            "{HEADER}\n{{\"t\": \"alloc\", \"id\": 0, \"base\": 4096, \"size\": 64}}\n\
             {{\"t\": \"alloc\", \"id\": 1, \"base\": 8192, \"size\": 64}}\n\
             {{\"t\": \"kernel\", \"op\": \"add\", \"acc\": [[0, 0, 64, \"r\"], [1, 0, 64, \"w\"], [0, 0, 8, \"r\"]], \"gpu\": []}}\n\
             {{\"t\": \"free\", \"id\": 0}}\n"
        )),
    );
    let out = mlugen(&["trace", t.path(), t.path()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["traces"].as_array().unwrap().len(), 2);
    let s = &v["traces"][0];
    assert_eq!((s["kernels"].as_u64(), s["allocations"].as_u64(), s["frees"].as_u64()), (Some(1), Some(2), Some(1)));
    assert_eq!(s["max_live_allocations"], 2);
    assert_eq!(s["max_blocks_per_kernel"], 2);
    assert_eq!(s["working_set_histogram"]["2"], 1);
    assert_eq!(s["workload"], "t");
}

#[test]
fn every_subcommand_rejects_bad_input_naming_the_field_or_file() {
    // A malformed trace stops a sweep at its file and line, before any point runs.
    let bad = Scratch::new("sweep-bad.jsonl.gz", &gz(&format!("{HEADER}\n{{\"t\": \"free\", \"id\": 3}}\n")));
    let err = fails(&["sweep", "--trace", bad.path(), "--entries", "8", "--structure", "bst", "--mode", "compiler"]);
    assert!(err.contains(&format!("{}:2: free: unknown id 3", bad.path())), "{err}");

    // An impossible MLB size, from each place a size can come from.
    let twelve = Scratch::new("twelve.json", br#"{"entries": 12}"#);
    let out_dir = std::env::temp_dir().join(format!("mlugen-cli-test-{}-gen", std::process::id()));
    let out_dir = out_dir.to_str().unwrap();
    for (args, names) in [
        (vec!["generate", "--entries", "12", "--out", out_dir], "--entries"),
        (vec!["generate", "--config", twelve.path(), "--out", out_dir], twelve.path()),
        (vec!["sweep", "--trace", bad.path(), "--entries", "12"], "entries 12"),
        (vec!["cosim", "--top", "mlu", "--entries", "12"], "--entries"),
    ] {
        let err = fails(&args);
        assert!(err.contains(names) && err.contains("12 MLB entries is not supported"), "{args:?}: {err}");
    }
    assert!(!std::path::Path::new(out_dir).join("mlu8_bst_k4_l32_p2_c2.v").exists(), "nothing is generated on a bad config");

    let err = fails(&["alloc-bench", "--threads", "0"]);
    assert!(err.contains("'--threads <THREADS>': 0 is not in 1..=4096"), "{err}");
    let err = fails(&["synth", "--entries", "8", "--lib", "/nonexistent/cells.lib"]);
    assert!(err.contains("/nonexistent/cells.lib is missing or unreadable"), "{err}");
    let err = fails(&["wave", "--out", "/nonexistent/dir/w.vcd"]);
    assert!(err.contains("cannot create /nonexistent/dir/w.vcd"), "{err}");
}

/// A configuration whose RTL differs from the default top's (the mode and
/// step-limit CSRs' reset values) gets its own top name and never
/// overwrites the default top.
#[test]
fn generate_names_non_default_csr_resets_apart() {
    let dir = std::env::temp_dir().join(format!("mlugen-cli-test-{}-names", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    for (cfg, top) in [
        (r#"{"mode": "hwonly"}"#, "mlu8_bst_hwonly_k4_l1_p2_c2"),
        (r#"{"step_limit": 1024}"#, "mlu8_bst_sl1024_k4_l32_p2_c2"),
        (r#"{"mode": "hwonly", "step_limit": 100, "entries": 4, "structure": "list"}"#, "mlu4_list_hwonly_sl100_k4_l1_p2_c2"),
    ] {
        let f = Scratch::new("names.json", cfg.as_bytes());
        let out = mlugen(&["generate", "--config", f.path(), "--out", d, "--quiet"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v = std::fs::read_to_string(dir.join(format!("{top}.v"))).unwrap_or_else(|e| panic!("{top}.v: {e}"));
        assert!(v.contains(&format!("module {top}(")), "{top}.v holds module {top}");
    }
    assert!(!dir.join("mlu8_bst_k4_l32_p2_c2.v").exists(), "the default top's name was not used");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `mlugen generate ARGS` into `dir`, emptied first; it must succeed.
fn generate_into(dir: &std::path::Path, args: &[&str]) {
    let _ = std::fs::remove_dir_all(dir);
    let mut a = vec!["generate", "--out", dir.to_str().unwrap(), "--quiet"];
    a.extend(args.iter().copied());
    let out = mlugen(&a);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// `generate` with the unit's flags, or the config field `unit`, builds the
/// MLU as an SM unit under a name that says its shape, beside its MLB at the
/// unit's search latency; the manifest gives the parameters.
#[test]
fn generate_builds_the_mlu_unit_from_flags_or_config() {
    let dir = std::env::temp_dir().join(format!("mlugen-cli-test-{}-unit", std::process::id()));
    let f = Scratch::new("unit.json", br#"{"entries": 4, "structure": "list", "unit": {"walkers": 2, "lanes": 1}}"#);
    for args in [
        vec!["--entries", "4", "--structure", "list", "--walkers", "2", "--lanes", "1", "--mlb-latency", "2", "--check-latency", "1"],
        vec!["--config", f.path(), "--mlb-latency", "2"],
    ] {
        generate_into(&dir, &args);
        let v = std::fs::read_to_string(dir.join("mlu4_list_k2_l1_p2.v")).expect("the unit top");
        assert!(v.contains("module mlu4_list_k2_l1_p2(") && v.contains("req_ptr_0") && !v.contains("req_ptr_1"), "one lane");
        let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("mlu4_list_k2_l1_p2.json")).unwrap()).unwrap();
        assert_eq!((m["parameters"]["walkers"].as_u64(), m["parameters"]["lanes"].as_u64(), m["parameters"]["mlb_latency"].as_u64()), (Some(2), Some(1), Some(2)));
        assert!(dir.join("mlb4_plru_p2.v").exists(), "the unit's MLB, two-stage");
    }
    // Without the heap window's lookup path: its own name, `heap_path:
    // false` in the manifest and in the Verilog's constant, by flag or file.
    let g = Scratch::new("noheap.json", br#"{"unit": {"walkers": 4, "lanes": 32, "mlb_latency": 2, "check_latency": 2, "heap_path": false}}"#);
    for args in [vec!["--no-heap-path"], vec!["--config", g.path()]] {
        generate_into(&dir, &args);
        let v = std::fs::read_to_string(dir.join("mlu8_bst_k4_l32_p2_c2_noheap.v")).expect("the unit top without the heap path");
        assert!(v.contains("localparam  heap_path = 1'b0;"), "{args:?}");
        let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("mlu8_bst_k4_l32_p2_c2_noheap.json")).unwrap()).unwrap();
        assert_eq!(m["parameters"]["heap_path"].as_bool(), Some(false), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `generate` into a directory that already holds other tops keeps them in
/// the FuseSoC core: generating the default MLU into verilog_out/ (as
/// scripts/run.sh does) must not drop the committed tops from mlugen.core.
#[test]
fn generate_keeps_the_directory_tops_in_the_core() {
    let dir = std::env::temp_dir().join(format!("mlugen-cli-test-{}-core", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A top generated earlier: its filelist and its Verilog.
    std::fs::write(dir.join("aaa_other.f"), "aaa_other.v\n").unwrap();
    std::fs::write(dir.join("aaa_other.v"), "module aaa_other(); endmodule\n").unwrap();
    // A filelist without its Verilog is not a top.
    std::fs::write(dir.join("zzz_orphan.f"), "zzz_orphan.v\n").unwrap();
    let out = mlugen(&["generate", "--out", dir.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let core = std::fs::read_to_string(dir.join("mlugen.core")).unwrap();
    // Each top's target opens a line of the `targets:` section.
    let target = |t: &str| core.find(&format!("\n  lint_{t}:\n"));
    for t in ["aaa_other", "mlu8_bst_k4_l32_p2_c2"] {
        assert!(target(t).is_some(), "mlugen.core has target lint_{t}:\n{core}");
    }
    assert!(!core.contains("zzz_orphan"), "a filelist without Verilog is not listed");
    // Sorted by name: the earlier top comes first.
    assert!(target("aaa_other") < target("mlu8_bst_k4_l32_p2_c2"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn alloc_bench_pipeline_workload_options() {
    for (args, want) in [
        (vec!["--workload", "pipeline", "--size", "300"], "--size: must be 1..=240"),
        (vec!["--workload", "pipeline", "--rate", "0.3"], "--rate: checker rate 0.3"),
        (vec!["--workload", "pipeline", "--warps", "0"], "--warps: must be 1..=64"),
        (vec!["--workload", "pipeline", "--iters", "0"], "--iters: must be 1..=10000"),
        (vec!["--workload", "pipeline", "--mem-latency", "0"], "--mem-latency: must be 1..=100000"),
        (vec!["--canary-latency", "0"], "'--canary-latency <CANARY_LATENCY>': 0 is not in 1..=100000"),
    ] {
        let mut a = vec!["alloc-bench"];
        a.extend(args.iter().copied());
        let err = fails(&a);
        assert!(err.contains(want), "{a:?}: {err}");
    }
    let out = mlugen(&["alloc-bench", "--workload", "pipeline", "--alu", "0,5000", "--iters", "1", "--mem-latency", "10", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let (o0, o1) = (rows[0]["overhead_free_percent"].as_f64().unwrap(), rows[1]["overhead_free_percent"].as_f64().unwrap());
    assert!(o0 > o1 && o1 > 0.0, "more compute per allocation, less overhead: {o0} {o1}");
}

/// `mlugen sweep --json` carries the fields the evaluation documents, measured on a
/// real trace; a version-1 trace is refused with what it lacks; a missing
/// ncu file is named.
#[test]
fn sweep_json_has_the_baseline_and_the_points() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let trace = root.join("traces/bert_infer.jsonl.gz");
    let json = Scratch::new("sweep.json", b"");
    let out = mlugen(&["sweep", "--trace", trace.to_str().unwrap(), "--entries", "0,8", "--structure", "bst", "--mode", "compiler", "--quiet", "--json", json.path()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap()).unwrap();
    let b = &v["baseline"][0];
    assert_eq!(b["kernels"], 154);
    for k in ["median_abs_error", "p90_abs_error", "iteration_error"] {
        assert!(b[k].as_f64().is_some_and(|x| x.is_finite()), "baseline.{k}: {b}");
    }
    let pts = v["points"].as_array().unwrap();
    assert_eq!(pts.len(), 2);
    for p in pts {
        assert_eq!((p["workload"].as_str(), p["structure"].as_str(), p["mode"].as_str(), p["walkers"].as_u64()), (Some("bert_infer"), Some("bst"), Some("compiler"), Some(4)));
        for k in ["slowdown", "mlb_hit_rate", "misses_per_sm_kernel", "meta_l1_hit_rate", "meta_l2_hit_rate"] {
            assert!(p[k].as_f64().is_some_and(|x| x.is_finite() && x >= 0.0), "{k}: {p}");
        }
    }
    // No MLB: no hits; 8 entries: hits, and fewer misses.
    assert_eq!((pts[0]["entries"].as_u64(), pts[0]["mlb_hit_rate"].as_f64()), (Some(0), Some(0.0)));
    assert!(pts[1]["mlb_hit_rate"].as_f64().unwrap() > 0.5);
    assert!(pts[1]["misses_per_sm_kernel"].as_f64() < pts[0]["misses_per_sm_kernel"].as_f64());

    // Locations from the host: no LOADMETA, so fewer lookups, and over a
    // list without an MLB no walk of the list at all (only single-node
    // fetches), far below the LOADMETA run's slowdown.
    let sweep = |extra: &[&str]| {
        let json = Scratch::new("sweep-host.json", b"");
        let mut args = vec!["sweep", "--trace", trace.to_str().unwrap(), "--entries", "0", "--structure", "list", "--mode", "compiler", "--quiet", "--json", json.path()];
        args.extend_from_slice(extra);
        let out = mlugen(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap()).unwrap();
        v["points"][0].clone()
    };
    let (plain, host) = (sweep(&[]), sweep(&["--host-locations"]));
    assert_eq!((plain["host_locations"].as_bool(), host["host_locations"].as_bool()), (Some(false), Some(true)));
    let lookups = |p: &serde_json::Value| p["counters"]["lookups"].as_u64().unwrap();
    let nodes_per_walk = |p: &serde_json::Value| p["counters"]["nodes"].as_f64().unwrap() / p["counters"]["walks"].as_f64().unwrap();
    assert!(lookups(&host) < lookups(&plain), "{host} against {plain}");
    assert_eq!(nodes_per_walk(&host), 1.0, "{host}");
    assert!(host["slowdown"].as_f64() < plain["slowdown"].as_f64(), "{host} against {plain}");
    let err = fails(&["sweep", "--trace", trace.to_str().unwrap(), "--host-locations", "--report", "/tmp/r.md"]);
    assert!(err.contains("--host-locations with --report"), "{err}");

    let v1 = Scratch::new("v1.jsonl.gz", &gz(r#"{"format": "gpuarmor-trace", "version": 1, "workload": "t"}
"#));
    let err = fails(&["sweep", "--trace", v1.path(), "--entries", "8"]);
    assert!(err.contains(&format!("{}: a version-1 trace has no GPU launches", v1.path())), "{err}");
    let v2 = Scratch::new("v2.jsonl.gz", &gz(&format!("{HEADER}\n")));
    let err = fails(&["sweep", "--trace", v2.path(), "--entries", "8", "--ncu-dir", "/nonexistent"]);
    assert!(err.contains("/nonexistent/t.csv.gz: cannot open"), "{err}");
    let err = fails(&["sweep", "--trace", v2.path(), "--walkers", "3"]);
    assert!(err.contains("--walkers 3: 3 walkers is not supported"), "{err}");
}

/// `mlugen wave` on a one-lane unit (4 entries, a list of 3 allocations,
/// 2-cycle reads): the LOADMETA walks the whole list (the lookup targets
/// the first allocation, the list's tail), the second LOADMETA and the
/// MEMCHECK.G hit at the fixed latency, 1 + 2 MLB search + 2 check stages
/// = 5 cycles from the cycle they are taken; the VCD has the unit's ports.
#[test]
fn wave_writes_the_units_vcd_and_latencies() {
    let vcd = Scratch::new("wave.vcd", b"");
    let out = mlugen(&["wave", "--out", vcd.path(), "--entries", "4", "--structure", "list", "--allocations", "3", "--latency", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["top"], "mlu4_list_k4_l1_p2_c2");
    assert_eq!(j["nodes_read"], 3);
    assert_eq!(j["loadmeta_hit"]["cycles"], 5);
    assert_eq!(j["memcheck_g_hit"]["cycles"], 5);
    // The miss: 3 nodes of at least the read latency each on top.
    assert!(j["loadmeta_miss"]["cycles"].as_u64().unwrap() >= 5 + 3 * 2, "{j}");
    assert_eq!(j["loadmeta_miss"]["location"], j["loadmeta_hit"]["location"]);
    let text = std::fs::read_to_string(vcd.path()).unwrap();
    assert!(text.contains(" mem_req_valid ") && text.contains(" resp_valid "), "the VCD names the unit's ports");
}
