//! The trace reader against the four published traces (their README's table)
//! and against small broken traces written at test time.
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;
use sim::trace::{self, Access, Event, Rw, TraceReader};

/// The project's copy of the traces, `traces/` (override: `MLUGEN_TRACES`).
fn traces_dir() -> PathBuf {
    match std::env::var_os("MLUGEN_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces"),
    }
}

#[test]
fn summaries_reproduce_the_readme_table() {
    // (file, operators, allocations, max live allocations, GPU launches,
    // kernels in iteration 2) from traces/README.md.
    let table = [
        ("resnet50_infer.jsonl.gz", 348, 631, 328, 492, 239),
        ("resnet50_train.jsonl.gz", 981, 1864, 703, 1615, 717),
        ("gpt2_train.jsonl.gz", 840, 1366, 384, 1118, 440),
        ("bert_infer.jsonl.gz", 306, 612, 213, 308, 154),
    ];
    for (file, kernels, allocs, max_live, launches, iter2) in table {
        let s = trace::summarize(traces_dir().join(file)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.kernels, kernels, "{file} kernels");
        assert_eq!(s.allocations, allocs, "{file} allocations");
        assert_eq!(s.max_live_allocations, max_live, "{file} max live");
        assert_eq!(s.working_set_histogram.values().sum::<u64>(), kernels, "{file} histogram total");
        assert!(s.frees <= s.allocations);
        assert_eq!(s.live_at_end, s.allocations - s.frees);
        assert_eq!(s.workload.as_deref(), Some(file.trim_end_matches(".jsonl.gz")));
        assert_eq!(s.version, 2, "{file}");
        assert_eq!(s.gpu_launches, launches, "{file} GPU launches");
        assert_eq!(s.kernel_launches_per_iteration.get(&2), Some(&iter2), "{file} kernels in iteration 2");
        assert_eq!(s.kernel_launches_per_iteration.keys().copied().collect::<Vec<_>>(), [1, 2], "{file} iterations");
    }
}

#[test]
fn per_operator_working_sets_match_the_readme() {
    // README: inference operators touch at most 6 blocks; the largest
    // training `_foreach_*` operator touches 322.
    for f in ["resnet50_infer.jsonl.gz", "bert_infer.jsonl.gz"] {
        let s = trace::summarize(traces_dir().join(f)).unwrap();
        assert_eq!(s.max_blocks_per_kernel, 6, "{f}");
    }
    let s = trace::summarize(traces_dir().join("resnet50_train.jsonl.gz")).unwrap();
    assert_eq!(s.max_blocks_per_kernel, 322);
    // Training has operators touching 76+ blocks (optimizer `_foreach_*`).
    let g = trace::summarize(traces_dir().join("gpt2_train.jsonl.gz")).unwrap();
    assert!(g.working_set_histogram.range(76..).next().is_some());
    assert!(g.max_blocks_per_kernel <= 322);
}

/// A unique scratch file under the system temp dir, removed on drop.
struct Scratch(PathBuf);
impl Scratch {
    fn new(tag: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("mlugen-trace-test-{}-{tag}.jsonl.gz", std::process::id()));
        Scratch(p)
    }
    fn gz(tag: &str, text: &str) -> Scratch {
        let s = Scratch::new(tag);
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(text.as_bytes()).unwrap();
        std::fs::write(&s.0, e.finish().unwrap()).unwrap();
        s
    }
}
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const HEADER: &str = r#"{"format": "gpuarmor-trace", "version": 1, "workload": "t"}"#;

/// Reads a trace written from `lines` to the end; the first error, as text.
fn first_error(tag: &str, lines: &[&str]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    let s = Scratch::gz(tag, &text);
    match TraceReader::open(&s.0) {
        Err(e) => e.to_string(),
        Ok(r) => {
            for ev in r {
                if let Err(e) = ev {
                    return e.to_string();
                }
            }
            panic!("trace {tag} read without error")
        }
    }
}

#[test]
fn events_are_typed() {
    let text = [
        HEADER,
        r#"{"t": "seg_alloc", "base": 4096, "size": 8192}"#,
        r#"{"t": "alloc", "id": 0, "base": 4096, "size": 512}"#,
        r#"{"t": "kernel", "op": "add", "acc": [[0, 16, 32, "rw"], [null, 0, 4, "r"]]}"#,
        r#"{"t": "free", "id": 0}"#,
        r#"{"t": "seg_free", "base": 4096, "size": 8192}"#,
    ]
    .join("\n");
    let s = Scratch::gz("typed", &text);
    let r = TraceReader::open(&s.0).unwrap();
    assert_eq!(r.header().workload.as_deref(), Some("t"));
    let evs: Vec<Event> = r.map(|e| e.unwrap()).collect();
    assert_eq!(
        evs,
        vec![
            Event::SegAlloc { base: 4096, size: 8192 },
            Event::Alloc { id: 0, base: 4096, size: 512 },
            Event::Kernel {
                op: "add".into(),
                acc: vec![
                    Access { id: Some(0), offset: 16, length: 32, rw: Rw::RW },
                    Access { id: None, offset: 0, length: 4, rw: Rw::R },
                ],
                gpu: vec![],
            },
            Event::Free { id: 0 },
            Event::SegFree { base: 4096, size: 8192 },
        ]
    );
}

const HEADER_V2: &str = r#"{"format": "gpuarmor-trace", "version": 2, "workload": "t", "sm_count": 132}"#;

#[test]
fn version_2_events_carry_iterations_and_gpu_work() {
    let text = [
        HEADER_V2,
        r#"{"t": "alloc", "id": 0, "base": 4096, "size": 512}"#,
        r#"{"t": "iter", "n": 1}"#,
        concat!(
            r#"{"t": "kernel", "op": "add", "acc": [[0, 0, 512, "rw"]], "gpu": ["#,
            r#"{"kind": "kernel", "name": "k", "ns": 1500, "grid": [4, 2, 1], "block": [128, 1, 1], "regs": 32, "smem": 1024, "corr": 7}, "#,
            r#"{"kind": "memset", "name": "Memset", "ns": 900, "bytes": 512}]}"#
        ),
        r#"{"t": "kernel", "op": "view", "acc": [], "gpu": []}"#,
    ]
    .join("\n");
    let s = Scratch::gz("typed-v2", &text);
    let r = TraceReader::open(&s.0).unwrap();
    assert_eq!((r.header().version, r.header().sm_count), (2, Some(132)));
    let evs: Vec<Event> = r.map(|e| e.unwrap()).collect();
    let launch = trace::Launch {
        name: "k".into(),
        ns: 1500,
        grid: [4, 2, 1],
        block: [128, 1, 1],
        regs: 32,
        smem: 1024,
        corr: 7,
    };
    assert_eq!((launch.ctas(), launch.threads_per_cta()), (8, 128));
    assert_eq!(
        evs[1..],
        [
            Event::Iter { n: 1 },
            Event::Kernel {
                op: "add".into(),
                acc: vec![Access { id: Some(0), offset: 0, length: 512, rw: Rw::RW }],
                gpu: vec![
                    trace::GpuWork::Kernel(launch),
                    trace::GpuWork::Copy { kind: trace::CopyKind::Memset, name: "Memset".into(), ns: 900, bytes: 512 },
                ],
            },
            Event::Kernel { op: "view".into(), acc: vec![], gpu: vec![] },
        ]
    );
}

#[test]
fn version_rules_are_errors_with_file_and_line() {
    let v2 = |line: &str| first_error("v2", &[HEADER_V2, r#"{"t": "alloc", "id": 0, "base": 4096, "size": 64}"#, line]);
    let e = v2(r#"{"t": "kernel", "op": "a", "acc": []}"#);
    assert!(e.ends_with(":3: kernel: missing field \"gpu\""), "{e}");
    let e = v2(r#"{"t": "kernel", "op": "a", "acc": [], "gpu": [{"kind": "kernel", "name": "k", "ns": 1, "grid": [0, 1, 1], "block": [1, 1, 1], "regs": 1, "smem": 0, "corr": 1}]}"#);
    assert!(e.contains(":3: kernel: gpu[0]: field \"grid\" must be three positive integers"), "{e}");
    let e = v2(r#"{"t": "kernel", "op": "a", "acc": [], "gpu": [{"kind": "graph", "name": "g"}]}"#);
    assert!(e.contains(":3: kernel: gpu[0]: field \"kind\" must be"), "{e}");
    let e = v2(r#"{"t": "kernel", "op": "a", "acc": [], "gpu": [{"kind": "memcpy", "name": "m", "ns": 5}]}"#);
    assert!(e.contains(":3: kernel: gpu[0]: missing field \"bytes\""), "{e}");
    let e = first_error("v1-iter", &[HEADER, r#"{"t": "iter", "n": 1}"#]);
    assert!(e.contains(":2: unknown event type \"t\": \"iter\"") && e.contains("version 2"), "{e}");
    let e = first_error("v1-gpu", &[HEADER, r#"{"t": "kernel", "op": "a", "acc": [], "gpu": []}"#]);
    assert!(e.contains(":2: kernel: field \"gpu\" is not part of version 1"), "{e}");
    let e = first_error("v3", &[r#"{"format": "gpuarmor-trace", "version": 3}"#]);
    assert!(e.contains(":1: header: unsupported version 3"), "{e}");
}

#[test]
fn truncated_gzip_is_an_error_with_file_and_line() {
    let src = std::fs::read(traces_dir().join("bert_infer.jsonl.gz")).unwrap();
    let s = Scratch::new("truncated");
    std::fs::write(&s.0, &src[..src.len() / 2]).unwrap();
    let r = TraceReader::open(&s.0).unwrap();
    let mut last = None;
    let mut n = 0;
    for ev in r {
        match ev {
            Ok(_) => n += 1,
            Err(e) => {
                last = Some(e);
                break;
            }
        }
    }
    let e = last.expect("a truncated file must not read cleanly");
    assert!(n > 10, "the intact first half is read ({n} events)");
    let msg = e.to_string();
    assert!(msg.contains("truncated gzip"), "{msg}");
    assert!(msg.starts_with(&s.0.display().to_string()), "{msg}");
    assert!(e.line > n as u64, "{msg}");
}

#[test]
fn corrupt_line_names_file_and_line() {
    let msg = first_error(
        "corrupt",
        &[HEADER, r#"{"t": "alloc", "id": 0, "base": 4096, "size": 512}"#, r#"{"t": "free", "id": 0"#],
    );
    assert!(msg.contains(":3: bad JSON"), "{msg}");
    assert!(msg.contains("mlugen-trace-test-"), "{msg}");
}

#[test]
fn malformed_events_say_what_is_wrong() {
    let alloc = r#"{"t": "alloc", "id": 0, "base": 4096, "size": 512}"#;
    let cases: &[(&str, &[&str], &str)] = &[
        ("unknown-t", &[HEADER, r#"{"t": "malloc", "id": 0}"#], r#":2: unknown event type "t": "malloc""#),
        ("no-t", &[HEADER, r#"{"id": 0}"#], r#":2: missing field "t""#),
        ("missing", &[HEADER, r#"{"t": "alloc", "id": 0, "base": 4096}"#], r#":2: alloc: missing field "size""#),
        (
            "type",
            &[HEADER, r#"{"t": "alloc", "id": 0, "base": "0x1000", "size": 5}"#],
            r#":2: alloc: field "base" must be a non-negative integer"#,
        ),
        ("unknown-free", &[HEADER, alloc, r#"{"t": "free", "id": 7}"#], ":3: free: unknown id 7"),
        (
            "double-free",
            &[HEADER, alloc, r#"{"t": "free", "id": 0}"#, r#"{"t": "free", "id": 0}"#],
            ":4: free: unknown id 0",
        ),
        ("double-alloc", &[HEADER, alloc, alloc], ":3: alloc: id 0 is already live"),
        (
            "acc-dead",
            &[HEADER, alloc, r#"{"t": "kernel", "op": "x", "acc": [[1, 0, 4, "r"]]}"#],
            ":3: kernel: acc[0]: unknown id 1",
        ),
        (
            "acc-rw",
            &[HEADER, alloc, r#"{"t": "kernel", "op": "x", "acc": [[0, 0, 4, "x"]]}"#],
            r#":3: kernel: acc[0]: rw must be "r", "w" or "rw""#,
        ),
        (
            "acc-shape",
            &[HEADER, alloc, r#"{"t": "kernel", "op": "x", "acc": [[0, 0, 4]]}"#],
            ":3: kernel: acc[0]: expected [id, offset, length, rw]",
        ),
        ("empty-line", &[HEADER, "", alloc], ":2: empty line"),
        ("version", &[r#"{"format": "gpuarmor-trace", "version": 0}"#], ":1: header: unsupported version 0"),
        ("format", &[r#"{"format": "other", "version": 1}"#], r#":1: header: field "format" must be"#),
        ("no-version", &[r#"{"format": "gpuarmor-trace"}"#], r#":1: header: missing field "version""#),
    ];
    for (tag, lines, want) in cases {
        let msg = first_error(tag, lines);
        assert!(msg.contains(want), "{tag}: got {msg:?}, want {want:?}");
    }
}

#[test]
fn not_gzip_and_missing_files_are_errors() {
    let s = Scratch::new("plain");
    std::fs::write(&s.0, format!("{HEADER}\n")).unwrap();
    let e = TraceReader::open(&s.0).err().expect("plain text is not gzip");
    assert_eq!(e.line, 1, "{e}");
    let e = TraceReader::open("/nonexistent/x.jsonl.gz").err().expect("missing file");
    assert!(e.to_string().contains("cannot open"), "{e}");
    let empty = Scratch::gz("empty", "");
    let e = TraceReader::open(&empty.0).err().expect("empty trace");
    assert!(e.to_string().contains("no header"), "{e}");
}

/// Mutated trace text (characters deleted, duplicated or replaced) is read
/// to the end or to an error naming a line, never a panic.
#[test]
fn mutated_traces_never_panic() {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(traces_dir().join("bert_infer.jsonl.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let head: String = text.lines().take(120).map(|l| format!("{l}\n")).collect();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rnd = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let bytes = b"0123456789-\"{}[],: tnul";
    let (mut clean, mut errors) = (0, 0);
    for _ in 0..1500 {
        let mut b = head.clone().into_bytes();
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
        let r = std::panic::catch_unwind(|| match TraceReader::new(std::io::Cursor::new(b.clone()), "m") {
            Err(e) => Err(e),
            Ok(r) => r.collect::<Result<Vec<_>, _>>().map(|_| ()),
        });
        match r {
            Ok(Ok(())) => clean += 1,
            Ok(Err(e)) => {
                assert!(e.line >= 1 && e.to_string().starts_with("m:"), "{e}");
                errors += 1;
            }
            Err(_) => panic!("panicked on:\n{}", String::from_utf8_lossy(&b)),
        }
    }
    assert!(clean > 50 && errors > 500, "{clean} clean, {errors} errors");
}
