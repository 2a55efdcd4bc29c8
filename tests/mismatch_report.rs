//! What `mlugen cosim` prints when the Verilog differs from the model
//!: readable text (inputs, expected and actual outputs, the
//! preceding commands), not Rust `Debug` structs, no "(0 clock cycles)", and
//! exit 1. The designs are one-operator mutants of committed tops given with
//! `--verilog`.
use std::path::Path;
use std::process::Command;

fn mutant(top: &str, from: &str, to: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("verilog_out").join(format!("{top}.v"))).unwrap();
    assert!(text.contains(from), "mutation site {from} not in {top}.v");
    let p = std::env::temp_dir().join(format!("mlugen-mismatch-{}-{top}.v", std::process::id()));
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
    p
}

fn cosim(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_mlugen")).current_dir(env!("CARGO_MANIFEST_DIR")).args(args).output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn no_debug_output(text: &str) {
    for debug in ["Expect {", "MlbOut {", "Stim {", "Some(", "None", "Cmd::", "Timing {", "Req(", "[0,", "(0 clock cycles)"] {
        assert!(!text.contains(debug), "the report shows `{debug}`:\n{text}");
    }
}

#[test]
fn mlb_mismatch_report_is_text() {
    let v = mutant("mlb8_plru", "(cs_s_3 >= cs_nr_3)", "(cs_s_3 > cs_nr_3)");
    let (code, out, err) = cosim(&["cosim", "--top", "mlb", "--entries", "8", "--verilog", v.to_str().unwrap(), "--transactions", "300000", "--seed", "41", "--quiet"]);
    let _ = std::fs::remove_file(&v);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("differs from the golden model at cycle") && !err.contains("panicked"), "{err}");
    assert!(out.contains("MLB mismatch at cycle") && out.contains("model expects: range search") && out.contains("Verilog gave:  range search"), "{out}");
    assert!(out.contains("mismatches: 1") && out.contains("coverage (stimulus drawn") && out.contains("range searches ("), "{out}");
    no_debug_output(&out);
}

#[test]
fn mlu_mismatch_report_is_text() {
    // The MLU as an SM unit with lane 3's active bit stuck at 1.
    let v = mutant("mlu8_bst_k4_l32_p2_c2", "checks_mask_3 = p_mask_67_q;", "checks_mask_3 = 1'b1;");
    let (code, out, err) = cosim(&["cosim", "--top", "mlu", "--verilog", v.to_str().unwrap(), "--transactions", "20000", "--seed", "43", "--quiet"]);
    let _ = std::fs::remove_file(&v);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("differs from the golden model at cycle"), "{err}");
    assert!(out.contains("MLU unit mismatch at cycle") && out.contains("resp_pass_3: Verilog 0x1, golden model 0x0"), "{out}");
    assert!(out.contains("requests taken before it (oldest first)") && out.contains("MEMCHECK.G"), "{out}");
    assert!(out.contains("mismatches: 1") && !out.contains("clock cycles"), "no cycle count after a mismatch: {out}");
    no_debug_output(&out);
}
