//! The generator option `hit_under_miss` through the built `mlugen` binary:
//! the flag and the config field emit the committed hit-under-miss top
//! byte for byte, the default stays the blocking MLU, and bad values exit 1
//! naming the file and the field (never a panic).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mlugen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mlugen")).args(args).output().expect("run mlugen")
}

fn scratch(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("mlugen-cli-hum-{}-{tag}", std::process::id()))
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fails(args: &[&str]) -> String {
    let out = mlugen(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "mlugen {args:?}: {err}");
    assert!(!err.contains("panicked"), "mlugen {args:?} panicked: {err}");
    err
}

#[test]
fn generate_hit_under_miss_from_flag_and_config() {
    let committed = std::fs::read_to_string(repo().join("verilog_out/mlu8_bst_hum.v")).unwrap();
    // The flag.
    let out = scratch("flag");
    let o = mlugen(&["generate", "--hit-under-miss", "--entries", "8", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(out.join("mlu8_bst_hum.v")).unwrap(), committed);
    assert!(!out.join("mlu8_bst.v").exists(), "the option replaces the blocking MLU");
    // The config field.
    let cfg = scratch("cfg.json");
    std::fs::write(&cfg, r#"{"entries": 8, "structure": "bst", "hit_under_miss": true}"#).unwrap();
    let out2 = scratch("cfg");
    let o = mlugen(&["generate", "--config", cfg.to_str().unwrap(), "--out", out2.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(out2.join("mlu8_bst_hum.v")).unwrap(), committed);
    let manifest = std::fs::read_to_string(out2.join("mlu8_bst_hum.json")).unwrap();
    assert!(manifest.contains("\"hit_under_miss\": true") && manifest.contains("\"req_id\""), "{manifest}");
    // Default: off.
    let out3 = scratch("default");
    let o = mlugen(&["generate", "--entries", "8", "--out", out3.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(out3.join("mlu8_bst.v").exists() && !out3.join("mlu8_bst_hum.v").exists());
    for d in [out, out2, out3] {
        std::fs::remove_dir_all(d).ok();
    }
    std::fs::remove_file(cfg).ok();
}

#[test]
fn hit_under_miss_bad_input_names_file_and_field() {
    let cfg = scratch("bad.json");
    std::fs::write(&cfg, "{\"entries\": 8,\n \"hit_under_miss\": \"yes\"}").unwrap();
    let p = cfg.to_str().unwrap();
    for cmd in [vec!["generate", "--config", p, "--out", "/nonexistent-mlugen"], vec!["sweep", "--trace", "traces/bert_infer.jsonl.gz", "--config", p]] {
        let err = fails(&cmd);
        assert!(err.contains(p) && err.contains("hit_under_miss") && err.contains("line 2"), "{cmd:?}: {err}");
    }
    let err = fails(&["generate", "--all", "--hit-under-miss"]);
    assert!(err.contains("--hit-under-miss"), "{err}");
    std::fs::remove_file(cfg).ok();
}
