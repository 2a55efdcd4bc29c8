//! Formal checks of the emitted Verilog with Debian Yosys's `sat` (the
//! solver CI installs; see docs/verification.md for what each proof states).
//! Used by testbench/tests/formal_*.rs.
//!
//! A check is a Yosys script run over files written to a scratch directory
//! (the emitted Verilog from verilog_out/, possibly mutated or with property
//! code injected, plus the property wrappers in formal/). Yosys's log decides
//! the outcome; anything that is neither a clear proof nor a clear
//! counterexample (a parse error, a missing tool) is an error, never a pass.
use crate::lint::{verilog_out, workspace_root};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// What one `sat` command concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `sat -prove...`: no counterexample (bounded proofs: within the bound).
    Proved,
    /// `sat -prove...`: a counterexample was found, or induction did not close.
    Failed,
    /// `sat` without `-prove`: the constraints are satisfiable (a cover was reached).
    Reachable,
    /// `sat` without `-prove`: the constraints are unsatisfiable.
    Unreachable,
}

/// One Yosys run: its outcome, wall time and log.
#[derive(Debug)]
pub struct Run {
    pub outcome: Outcome,
    pub seconds: f64,
    pub log: String,
}

static RUNS: AtomicUsize = AtomicUsize::new(0);

fn scratch(name: &str) -> Result<PathBuf, String> {
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    let d = workspace_root().join("target").join("formal").join(format!("{name}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    Ok(d)
}

/// Runs `script` (one `sat` command last) in a fresh scratch directory
/// holding `files` (name, text). Scripts refer to the files by name.
pub fn yosys(name: &str, files: &[(&str, &str)], script: &str) -> Result<Run, String> {
    let dir = scratch(name)?;
    for (f, text) in files {
        std::fs::write(dir.join(f), text).map_err(|e| format!("cannot write {f}: {e}"))?;
    }
    std::fs::write(dir.join("check.ys"), script).map_err(|e| format!("cannot write check.ys: {e}"))?;
    let t = Instant::now();
    let out = Command::new("yosys")
        .args(["-q", "-l", "check.log", "check.ys"])
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("cannot run yosys: {e} (is it installed and on PATH?)"))?;
    let seconds = t.elapsed().as_secs_f64();
    let log = std::fs::read_to_string(dir.join("check.log")).unwrap_or_default();
    let outcome = classify(&log, out.status.success());
    match outcome {
        Some(outcome) => {
            let _ = std::fs::remove_dir_all(&dir);
            Ok(Run { outcome, seconds, log })
        }
        None => Err(format!(
            "{name}: yosys gave no proof result ({}); files kept in {}\n--- log tail ---\n{}\n--- stderr ---\n{}",
            out.status,
            dir.display(),
            tail(&log, 40),
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// The outcome from Yosys 0.23's messages, or None if the log shows none
/// (or an error other than a failed `-verify`).
fn classify(log: &str, exit_ok: bool) -> Option<Outcome> {
    let other_error = log
        .lines()
        .any(|l| l.starts_with("ERROR:") && !l.contains("proof did fail") && !l.contains("proof finished with failure"));
    if other_error {
        return None;
    }
    let failed = log.contains("SAT proof finished - model found: FAIL!")
        || log.contains("Reached maximum number of time steps -> proof failed.")
        || log.contains("SAT temporal induction proof finished - model found for base case: FAIL!");
    let proved = log.contains("SAT proof finished - no model found: SUCCESS!")
        || log.contains("Induction step proven: SUCCESS!");
    match (failed, proved, exit_ok) {
        (true, false, _) => Some(Outcome::Failed),
        (false, true, true) => Some(Outcome::Proved),
        (false, false, true) if log.contains("SAT solving finished - model found") => Some(Outcome::Reachable),
        (false, false, true) if log.contains("SAT solving finished - no model found") => Some(Outcome::Unreachable),
        _ => None,
    }
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The committed emitted Verilog of `top` (verilog_out/<top>.v).
pub fn emitted(top: &str) -> Result<String, String> {
    let p = verilog_out().join(format!("{top}.v"));
    std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

/// A property file from formal/.
pub fn formal_file(name: &str) -> Result<String, String> {
    let p = workspace_root().join("formal").join(name);
    std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

/// A textual mutant: `text` with the single occurrence of `from` replaced by
/// `to`. Zero or several occurrences are an error, so a mutant can never
/// silently be the original design.
pub fn mutate(text: &str, from: &str, to: &str) -> Result<String, String> {
    let n = text.matches(from).count();
    if n != 1 {
        return Err(format!("mutation target {from:?} occurs {n} times (want exactly 1)"));
    }
    let out = text.replacen(from, to, 1);
    if out == text {
        return Err(format!("mutation {from:?} -> {to:?} changed nothing"));
    }
    Ok(out)
}

/// `text` with `code` inserted at the end of module `module` (before its
/// `endmodule`), so the code sees the module's internal signals.
pub fn inject(text: &str, module: &str, code: &str) -> Result<String, String> {
    let header = format!("module {module}(");
    if text.matches(&header).count() != 1 {
        return Err(format!("module {module} not found exactly once"));
    }
    let start = text.find(&header).expect("counted above");
    let end = start + text[start..].find("endmodule").ok_or_else(|| format!("module {module} has no endmodule"))?;
    Ok(format!("{}{code}\n{}", &text[..end], &text[end..]))
}
