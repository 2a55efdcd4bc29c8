//! `mlugen check --engine verilator` (spec section 10): every scenario of the
//! corpus (testbench/scenarios/) through the Verilog of the MLU as an SM
//! unit (verif::unit_program: the committed unit, or one generated
//! with one lane) prints the same JSON as `--engine model`; the model-only configurations
//! (no MLB, the sol table) and the device-heap scenarios (whose lookup path
//! the RTL does not have yet) are refused with an error naming why, exit 1.
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
        // The device heap's lookup path is in the model only so far: its
        // scenarios are refused by name (and only they: see below).
        let device_heap = f.file_name().is_some_and(|n| n.to_string_lossy().starts_with("device-heap-"));
        if err.contains("model-only reference points") || (device_heap && err.contains("no RTL for the device heap")) {
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
    let device_heap = files.iter().filter(|f| f.file_name().is_some_and(|n| n.to_string_lossy().starts_with("device-heap-"))).count();
    assert!(same >= 60 && refused <= 4 + device_heap && faults >= 60, "{same} same, {refused} refused, {faults} faults");
}
