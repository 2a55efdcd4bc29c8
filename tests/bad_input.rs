//! The bad-input corpus (tests/bad_input/cases.tsv): every line must fail
//! with exit 1, its text on stderr, nothing on stdout and no panic. Also the
//! two ways stdout can fail: a closed pipe ends quietly (exit 0, nothing on
//! stderr), a full disk is an error naming stdout (exit 1).
use std::path::Path;
use std::process::{Command, Stdio};

fn mlugen() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mlugen"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

#[test]
fn every_corpus_case_fails_with_its_message() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input");
    let text = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
    let mut n = 0;
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (args, want) = line.split_once('\t').unwrap_or_else(|| panic!("cases.tsv:{}: no tab", i + 1));
        let args: Vec<&str> = args.split(' ').collect();
        let out = mlugen().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        n += 1;
        if out.status.code() != Some(1) || !err.contains(want) || err.contains("panicked") || !out.stdout.is_empty() {
            bad.push(format!(
                "cases.tsv:{}: mlugen {}\n  exit {:?}, want 1; stderr must contain {want:?}\n  stderr: {}\n  stdout: {}",
                i + 1,
                args.join(" "),
                out.status.code(),
                err.trim(),
                String::from_utf8_lossy(&out.stdout).trim()
            ));
        }
    }
    assert!(n >= 30, "the corpus has {n} cases");
    assert!(bad.is_empty(), "{} of {n} cases wrong:\n{}", bad.len(), bad.join("\n"));
}

const SCENARIO: &str = "testbench/scenarios/double-free-bst-compiler.json";

#[test]
fn a_closed_stdout_ends_quietly() {
    // The read end is closed before mlugen starts: its first write gets EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = mlugen().args(["trace", "traces/bert_infer.jsonl.gz"]).stdout(writer).stderr(Stdio::piped()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "nothing on stderr: {err}");
}

#[test]
fn a_full_stdout_is_an_error() {
    if !Path::new("/dev/full").exists() {
        panic!("/dev/full is needed (Linux)");
    }
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = mlugen().args(["check", "--scenario", SCENARIO]).stdout(full).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("writing to stdout: No space left on device"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
