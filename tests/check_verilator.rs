//! `mlugen check --engine verilator` (spec section 10): every scenario of the
//! corpus (testbench/scenarios/) through the Verilog of the MLU as an SM
//! unit (verif::unit_program: the committed unit, or one generated
//! with one lane) prints the same JSON as `--engine model`; the model-only configurations
//! (no MLB, the sol table) are refused with an error naming why, exit 1.
//! The device-heap scenarios run through the unit's heap window, the
//! directory nodes answered by the port from the golden allocator.
use std::process::Command;

fn check(file: &std::path::Path, engine: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mlugen"))
        .args(["check", "--engine", engine, "--scenario"])
        .arg(file)
        .output()
        .expect("run mlugen")
}

#[test]
fn verilator_engine_gives_the_model_engine_verdicts_on_the_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testbench/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    files.sort();
    // The scenarios are independent runs of the CLI: on every core.
    // Each gives None (the Verilator engine refuses a model-only scenario)
    // or Some(fault verdicts).
    let verdicts = sim::parallel::map(&files, |f| {
        let m = check(f, "model");
        assert!(m.status.success(), "{}: model engine failed: {}", f.display(), String::from_utf8_lossy(&m.stderr));
        let v = check(f, "verilator");
        let err = String::from_utf8_lossy(&v.stderr);
        if err.contains("model-only reference points") {
            assert_eq!(v.status.code(), Some(1), "{}", f.display());
            return None;
        }
        assert!(v.status.success(), "{}: verilator engine failed: {err}", f.display());
        assert_eq!(String::from_utf8_lossy(&v.stdout), String::from_utf8_lossy(&m.stdout), "{}: the engines' JSON differ", f.display());
        let out = String::from_utf8_lossy(&v.stdout);
        Some(out.matches("\"fault\": \"").count() - out.matches("\"fault\": \"NONE\"").count())
    });
    let same = verdicts.iter().flatten().count();
    let refused = verdicts.len() - same;
    let faults: usize = verdicts.iter().flatten().sum();
    println!("{same} scenarios: same JSON from both engines ({faults} fault verdicts); {refused} model-only refused");
    assert!(same >= 72 && refused <= 4 && faults >= 60, "{same} same, {refused} refused, {faults} faults");
}
