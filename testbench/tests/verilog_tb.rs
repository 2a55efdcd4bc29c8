//! The standalone Verilog testbenches of verilog_out/tb/ (hw::tb, vectors
//! from verif/src/vectors.rs), run as a user without Rust runs them:
//! Icarus (-g2005) through the top's filelist, from the repository root and
//! from verilog_out/tb. Every top prints `PASS <n> vectors` for all the
//! lines of its vector file and exits 0; one flipped expected bit, or a
//! malformed line, prints `FAIL` with the cycle and port and exits non-zero;
//! and the vectors are what `mlugen vectors` records now.
use hw::generate::committed_tops;
use std::path::{Path, PathBuf};
use std::process::Command;
use testbench::lint::verilog_out;

fn root() -> PathBuf {
    verilog_out().parent().expect("verilog_out/ is in the workspace").to_path_buf()
}

/// A directory of this process and test (tests run in parallel).
fn scratch(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mlugen-tb-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compile `top`'s testbench as the README says; returns the simulation.
fn compile(top: &str, dir: &Path) -> PathBuf {
    let sim = dir.join(format!("{top}.sim"));
    let out = Command::new("iverilog")
        .current_dir(root())
        .args(["-g2005", "-o"])
        .arg(&sim)
        .args(["-f", &format!("verilog_out/{top}.f"), &format!("verilog_out/tb/{top}_tb.v")])
        .output()
        .expect("iverilog runs (scripts/setup.sh installs it)");
    assert!(out.status.success(), "iverilog {top}: {}", String::from_utf8_lossy(&out.stderr));
    sim
}

/// Run a compiled testbench from `cwd`; (exit code, stdout).
fn run(sim: &Path, cwd: &Path, args: &[String]) -> (i32, String) {
    let out = Command::new("vvp").current_dir(cwd).arg("-n").arg(sim).args(args).output().expect("vvp runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn vectors_in(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).count()
}

#[test]
fn every_testbench_passes_from_the_root_and_from_tb() {
    let dir = scratch("pass");
    for t in committed_tops() {
        let top = t.name();
        let vec = std::fs::read_to_string(verilog_out().join(hw::tb::vec_file(&top))).unwrap();
        let n = vectors_in(&vec);
        let sim = compile(&top, &dir);
        for cwd in [root(), verilog_out().join("tb")] {
            let (code, out) = run(&sim, &cwd, &[]);
            assert!(code == 0 && out.contains(&format!("PASS {n} vectors")), "{top} from {}: exit {code}\n{out}", cwd.display());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One expected output digit flipped in a cycle where it is compared: FAIL
/// names that cycle and port, exit 1. A line with a missing field: FAIL.
#[test]
fn a_flipped_expected_bit_or_a_malformed_line_fails() {
    let dir = scratch("fail");
    for top in ["mlb8_plru", "mlu8_bst_k4_l32_p2_c2", "memcheck"] {
        let text = std::fs::read_to_string(verilog_out().join(hw::tb::vec_file(top))).unwrap();
        let outputs: Vec<&str> = text.lines().find_map(|l| l.strip_prefix("#   outputs: ")).unwrap().split_whitespace().collect();
        let inputs = text.lines().find_map(|l| l.strip_prefix("#   inputs:  ")).unwrap().split_whitespace().count();
        // The 40th vector's first compared output.
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let idx = lines.iter().enumerate().filter(|(_, l)| !l.starts_with('#')).nth(40).unwrap().0;
        let mut fields: Vec<String> = lines[idx].split_whitespace().map(str::to_string).collect();
        let k = (inputs..fields.len()).find(|&k| fields[k] != "x").expect("a compared output in vector 40");
        let f = &mut fields[k];
        let last = f.pop().unwrap();
        f.push(if last == '0' { '1' } else { '0' });
        lines[idx] = fields.join(" ");
        let bad = dir.join(format!("{top}_flipped.vec"));
        std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
        let sim = compile(top, &dir);
        let (code, out) = run(&sim, &root(), &[format!("+vec={}", bad.display())]);
        let port = outputs[k - inputs];
        assert!(code != 0 && out.contains(&format!("FAIL cycle 40 ")) && out.contains(&format!("port {port}:")), "{top}: exit {code}\n{out}");
        assert!(!out.contains("PASS"), "{top}: {out}");

        fields.pop();
        lines[idx] = fields.join(" ");
        std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
        let (code, out) = run(&sim, &root(), &[format!("+vec={}", bad.display())]);
        assert!(code != 0 && out.contains("FAIL vector file line"), "{top}: exit {code}\n{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The committed vectors are what `mlugen vectors` records now (an MLB,
/// MEMCHECK and the MLU unit: the golden models alone).
#[test]
fn committed_vectors_are_current() {
    for top in ["mlb8_plru", "mlb8_plru_p2", "memcheck", "mlu8_bst_k4_l32_p2_c2"] {
        let t = verif::verilator::Top::load(&verilog_out(), top).unwrap();
        let v = verif::vectors::record(&t).unwrap_or_else(|e| panic!("{top}: {e:#}"));
        let committed = std::fs::read_to_string(verilog_out().join(hw::tb::vec_file(top))).unwrap();
        assert!(v.text() == committed, "verilog_out/{} is stale: run `mlugen vectors --all` and commit it", hw::tb::vec_file(top));
    }
}
