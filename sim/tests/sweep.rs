//! The sweep: point bookkeeping against the pipeline run directly, outputs
//! (CSV, SVG), and a malformed trace failing with its file and line.
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;
use sim::config::{Mode, MluConfig, Structure};
use sim::expand;
use sim::pipeline::run_workload;
use sim::sweep::{self, SweepConfig};

fn traces_dir() -> PathBuf {
    match std::env::var_os("MLUGEN_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces"),
    }
}

fn small(traces: Vec<PathBuf>) -> SweepConfig {
    let mut c = SweepConfig::full(traces);
    c.entries = vec![0, 8];
    c.structures = vec![Structure::Bst, Structure::Sol];
    c.threads = 2;
    c
}

#[test]
fn points_are_the_pipeline_runs() {
    let path = traces_dir().join("bert_infer.jsonl.gz");
    let cfg = small(vec![path.clone()]);
    let r = sweep::run(&cfg, &|_, _| {}).unwrap();
    assert_eq!(r.points.len(), 2 * 2 * 2);
    let wl = expand::load(&path, &cfg.expand).unwrap();
    let base = run_workload(&wl, &cfg.pipeline, None, 1).unwrap();
    assert_eq!(r.traces[0].cycles_unchecked, base.cycles);
    for p in &r.points {
        let m = MluConfig {
            entries: p.entries,
            structure: Structure::from_name(&p.structure).unwrap(),
            mode: Mode::from_name(&p.mode).unwrap(),
            ..MluConfig::default()
        };
        let run = run_workload(&wl, &cfg.pipeline, Some(&m), 1).unwrap();
        assert_eq!((p.cycles_checked, p.cycles_unchecked), (run.cycles, base.cycles));
        assert_eq!(p.slowdown, run.cycles as f64 / base.cycles as f64);
        let c = run.counters;
        assert_eq!(p.mlb_hits, c.range_hits + c.loc_hits);
        assert_eq!(p.mlb_lookups, c.range_lookups + c.loc_lookups);
        assert_eq!((p.meta_reads, p.steps, p.faults), (c.meta_reads, c.steps, 0));
        if p.entries == 0 {
            assert_eq!(p.hit_rate, 0.0);
        }
    }
    // Order: structure, mode, entries as given.
    let keys: Vec<_> = r.points.iter().map(|p| (p.structure.as_str(), p.mode.as_str(), p.entries)).collect();
    assert_eq!(keys[0], ("bst", "compiler", 0));
    assert_eq!(keys[1], ("bst", "compiler", 8));
    assert_eq!(keys[7], ("sol", "hwonly", 8));
    let csv = sweep::to_csv(&r.points);
    assert_eq!(csv.lines().count(), 1 + r.points.len());
    assert_eq!(csv.lines().next().unwrap(), sweep::CSV_HEADER);
    let svg = sim::svg::workload_plot("bert_infer", &r.points);
    // Two panels x four lines (bst/sol x compiler/hwonly).
    assert_eq!(svg.matches("<polyline").count(), 8);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
}

#[test]
fn malformed_trace_fails_with_file_and_line() {
    let dir = std::env::temp_dir().join(format!("mlugen-sweep-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.jsonl.gz");
    let mut gz = GzEncoder::new(std::fs::File::create(&f).unwrap(), Compression::fast());
    writeln!(gz, r#"{{"format":"gpuarmor-trace","version":1,"workload":"bad"}}"#).unwrap();
    writeln!(gz, r#"{{"t":"alloc","id":0,"base":4096,"size":512}}"#).unwrap();
    writeln!(gz, r#"{{"t":"kernel","op":"x","acc":[[1,0,8,"r"]]}}"#).unwrap();
    gz.finish().unwrap();
    let e = sweep::run(&small(vec![f.clone()]), &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains(&format!("{}:3:", f.display())) && e.contains("unknown id 1"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_parameters_are_errors_naming_them() {
    let path = traces_dir().join("bert_infer.jsonl.gz");
    let mut c = small(vec![path.clone()]);
    c.entries = vec![12];
    let e = sweep::run(&c, &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("entries 12"), "{e}");
    let mut c = small(vec![path]);
    c.pipeline.mem_latency = 0;
    let e = sweep::run(&c, &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("mem-latency"), "{e}");
}

#[test]
fn rtl_timing_points_are_the_rtl_timed_pipeline_runs() {
    use sim::pipeline::{run_workload_with, MluTiming};
    let path = traces_dir().join("bert_infer.jsonl.gz");
    let mut cfg = small(vec![path.clone()]);
    cfg.entries = vec![8];
    cfg.structures = vec![Structure::Bst];
    cfg.modes = vec![Mode::Compiler];
    cfg.timing = MluTiming::Rtl;
    let r = sweep::run(&cfg, &|_, _| {}).unwrap();
    assert_eq!(r.params.mlu_timing, "rtl");
    let wl = expand::load(&path, &cfg.expand).unwrap();
    let m = MluConfig { entries: 8, structure: Structure::Bst, mode: Mode::Compiler, ..MluConfig::default() };
    let rtl = run_workload_with(&wl, &cfg.pipeline, MluTiming::Rtl, Some(&m), 1).unwrap();
    let ideal = run_workload(&wl, &cfg.pipeline, Some(&m), 1).unwrap();
    assert_eq!(r.points[0].cycles_checked, rtl.cycles);
    assert_ne!(rtl.cycles, ideal.cycles, "the two timings differ on a real trace");

    // The RTL timing is the blocking MLU's: combining it with hit-under-miss is refused.
    cfg.pipeline.hit_under_miss = true;
    let err = sweep::run(&cfg, &|_, _| {}).unwrap_err().to_string();
    assert!(err.contains("hit_under_miss"), "{err}");
}
