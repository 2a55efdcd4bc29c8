//! End-to-end synthesis flow tests (Yosys, ABC and OpenSTA really run).
use std::path::PathBuf;
use synth::flow::{self, Activity, Design};
use synth::liberty::{self, LibSpec};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn work(name: &str) -> PathBuf {
    let d = liberty::repo_root().join("target/synth-tests").join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn fixture_nangate45_end_to_end() {
    let w = work("fixture");
    let lib = liberty::prepare(&LibSpec::Nangate45, &w.join("lib")).unwrap();
    let d = Design { verilog: vec![fixture("range4.v")], top: "range4".into(), clock: "clock".into() };
    let (m, _) = flow::map(&d, &lib, 2000.0, &w.join("flat"), true).unwrap();
    eprintln!("{m:?}");
    let (t, p) = flow::sta(&d, &lib, &m, 2000.0, &Activity::default(), "").unwrap();
    eprintln!("{t:?} {p:?}");
}

#[test]
fn fixture_asap7_end_to_end() {
    let w = work("fixture7");
    let lib = liberty::prepare(&LibSpec::Asap7, &liberty::repo_root().join("build/pdk/asap7")).unwrap();
    let d = Design { verilog: vec![fixture("range4.v")], top: "range4".into(), clock: "clock".into() };
    let (m, _) = flow::map(&d, &lib, 500.0, &w.join("flat"), true).unwrap();
    eprintln!("{m:?}");
    let (t, p) = flow::sta(&d, &lib, &m, 500.0, &Activity::default(), "").unwrap();
    eprintln!("{t:?} {p:?}");
}
