//! The sweep: point bookkeeping against the pipeline run directly, outputs
//! (CSV, the SVG plots), and a malformed trace failing with its file and line.
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
    // The plot of real points: one marker per point and panel (circles for
    // compiler, triangles for HWONLY) plus one per legend entry; panel (b)
    // has no point at 0 entries.
    let svg = sim::plot::workload_svg("bert_infer", &r.points, &sim::plot::caption(&cfg)).unwrap();
    let (per_mode_a, per_mode_b, legend) = (2 * 2, 2, 2);
    assert_eq!(svg.matches("<circle").count(), per_mode_a + per_mode_b + legend, "{svg}");
    assert_eq!(svg.matches("<polygon").count(), per_mode_a + per_mode_b + legend, "{svg}");
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
fn unit_timing_points_are_the_unit_timed_pipeline_runs() {
    use sim::pipeline::{run_workload_with, MluTiming};
    let path = traces_dir().join("bert_infer.jsonl.gz");
    let mut cfg = small(vec![path.clone()]);
    cfg.entries = vec![8];
    cfg.structures = vec![Structure::Bst];
    cfg.modes = vec![Mode::Compiler];
    cfg.timing = MluTiming::Unit;
    let r = sweep::run(&cfg, &|_, _| {}).unwrap();
    assert_eq!(r.params.mlu_timing, "unit");
    let wl = expand::load(&path, &cfg.expand).unwrap();
    let m = MluConfig { entries: 8, structure: Structure::Bst, mode: Mode::Compiler, ..MluConfig::default() };
    let unit = run_workload_with(&wl, &cfg.pipeline, MluTiming::Unit, Some(&m), 1).unwrap();
    let ideal = run_workload(&wl, &cfg.pipeline, Some(&m), 1).unwrap();
    assert_eq!(r.points[0].cycles_checked, unit.cycles);
    assert_ne!(unit.cycles, ideal.cycles, "the two timings differ on a real trace");
    assert_eq!(unit.faults, 0, "a bug-free trace: {:?}", unit.first_fault);
    let c = unit.unit.expect("the unit's counters");
    assert!(c.misses > 0 && c.hits > 0 && c.reads == unit.meta_reads, "{c:?}");

    // The unit builds no hit-under-miss extension (it serves hits under misses itself).
    cfg.pipeline.hit_under_miss = true;
    let err = sweep::run(&cfg, &|_, _| {}).unwrap_err().to_string();
    assert!(err.contains("hit_under_miss"), "{err}");
}

/// A point with the fields the plot reads; the rest zero.
fn pt(workload: &str, entries: usize, structure: &str, mode: &str, slowdown: f64, hit_rate: f64) -> sweep::Point {
    sweep::Point {
        workload: workload.into(),
        entries,
        structure: structure.into(),
        mode: mode.into(),
        cycles_checked: 0,
        cycles_unchecked: 0,
        slowdown,
        mlb_lookups: if entries == 0 { 0 } else { 1000 },
        mlb_hits: 0,
        hit_rate,
        range_lookups: 0,
        range_hits: 0,
        loc_lookups: 0,
        loc_hits: 0,
        meta_reads: 0,
        steps: 0,
        loadmeta: 0,
        memcheck: 0,
        faults: 0,
        overhead_share_ws_gt8: 0.0,
    }
}

/// The text of every <text> element of an SVG, trimmed, in order.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let body = &t[t.find('>').expect("<text ...>") + 1..];
            let end = body.find("</text>").expect("</text>");
            body[..end].trim().replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        })
        .collect()
}

/// "1", "10", "100", ... or "0.1", "0.01": 10^k written out.
fn pow10_text(k: i32) -> String {
    if k >= 0 {
        format!("1{}", "0".repeat(k as usize))
    } else {
        format!("0.{}1", "0".repeat((-k - 1) as usize))
    }
}

/// A synthetic sweep of one workload: slowdowns over several decades, hit
/// rates 92.8..99.6% (miss rates 0.4..7.2%), HWONLY lines for list and sol only,
/// list and bst compiler miss rates identical.
fn synthetic() -> Vec<sweep::Point> {
    let entries = [0usize, 1, 2, 4, 8, 16, 32];
    let mut v = Vec::new();
    for (s, mode, base) in [("list", "compiler", 900.0), ("list", "hwonly", 8000.0), ("bst", "compiler", 150.0), ("sol", "compiler", 60.0), ("sol", "hwonly", 30.0)] {
        for (i, e) in entries.iter().enumerate() {
            let slowdown = if *e == 0 { base } else { 1.3 + base / 10.0 / (i as f64) };
            let hwonly = if mode == "hwonly" { 0.002 } else { 0.0 };
            let hit = if *e == 0 {
                0.0
            } else if s == "sol" {
                0.95 + 0.006 * i as f64 - hwonly
            } else {
                0.93 + 0.011 * i as f64 - hwonly
            };
            v.push(pt("wl", *e, s, mode, slowdown, hit));
        }
    }
    // Another workload's points are not drawn.
    v.push(pt("other", 1, "list", "compiler", 123456.0, 0.5));
    v
}

#[test]
fn plot_has_titles_decades_legend_and_caption() {
    let points = synthetic();
    let mut cfg = SweepConfig::full(vec![]);
    cfg.pipeline.meta_latency = 30;
    cfg.expand.cap = 99;
    cfg.seed = 7;
    let caption = sim::plot::caption(&cfg);
    let svg = sim::plot::workload_svg("wl", &points, &caption).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{svg}");
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    let texts = svg_texts(&svg);
    let has = |t: &str| texts.iter().any(|x| x == t);
    let has_part = |t: &str| texts.iter().any(|x| x.contains(t));

    // Axis titles with their units, panel titles.
    for t in [
        "MLB entries (0 = no MLB)",
        "slowdown (checked / unchecked cycles)",
        "MLB miss rate (misses / lookups)",
        "(a) slowdown against the unchecked run",
        "(b) MLB miss rate (1 - hit rate)",
    ] {
        assert!(has_part(t), "{t:?} missing in {texts:?}");
    }

    // A label at every decade from below the least to above the greatest
    // slowdown of this workload, and none beyond.
    let wl: Vec<&sweep::Point> = points.iter().filter(|p| p.workload == "wl").collect();
    let smin = wl.iter().map(|p| p.slowdown).fold(f64::INFINITY, f64::min);
    let smax = wl.iter().map(|p| p.slowdown).fold(0.0, f64::max);
    let (lo, hi) = (smin.log10().floor() as i32, smax.log10().ceil() as i32);
    assert_eq!((lo, hi), (0, 4));
    for k in lo..=hi {
        assert!(has(&format!("{}x", pow10_text(k))), "slowdown decade 10^{k} unlabelled: {texts:?}");
    }
    assert!(!has(&format!("{}x", pow10_text(hi + 1))) && !has(&format!("{}x", pow10_text(lo - 1))));
    // The same for the miss rate (1 - hit rate) over entries >= 1, in percent.
    let miss: Vec<f64> = wl.iter().filter(|p| p.entries >= 1).map(|p| 1.0 - p.hit_rate).collect();
    let mmin = miss.iter().cloned().fold(f64::INFINITY, f64::min);
    let mmax = miss.iter().cloned().fold(0.0, f64::max);
    let (lo, hi) = (mmin.log10().floor() as i32, mmax.log10().ceil() as i32);
    assert_eq!((lo, hi), (-3, -1));
    for k in lo..=hi {
        assert!(has(&format!("{}%", pow10_text(k + 2))), "miss-rate decade 10^{k} unlabelled: {texts:?}");
    }
    // No miss-rate point at 0 entries: its 100% miss (hit rate 0) would
    // have stretched the axis to 100%; and the miss panel's x axis starts
    // at 1 (the label "0" only in panel (a), "1" in both).
    assert!(!has("100%"), "{texts:?}");
    assert_eq!(texts.iter().filter(|t| *t == "0").count(), 1, "{texts:?}");
    assert_eq!(texts.iter().filter(|t| *t == "32").count(), 2, "{texts:?}");
    // Markers: compiler = circles, HWONLY = triangles; 7 in panel (a), 6
    // in (b), 1 in the legend per line.
    assert_eq!(svg.matches("<circle").count(), 3 * (7 + 6 + 1));
    assert_eq!(svg.matches("<polygon").count(), 2 * (7 + 6 + 1));

    // The legend: every structure x mode present, nothing else.
    for t in ["list, compiler", "list, hwonly", "bst, compiler", "sol, compiler", "sol, hwonly"] {
        assert!(has(t), "legend {t:?} missing: {texts:?}");
    }
    assert!(!has("bst, hwonly"));
    // list and bst compiler have equal miss rates: said under panel (b).
    assert!(has("MLB entries; lines coincide: list = bst (compiler)"), "{texts:?}");

    // The caption: the parameters, one <text> per line.
    for part in ["32 warps", "memory latency 400 cycles", "metadata latency 30 cycles", "64 data requests in flight"] {
        assert!(caption.contains(part), "{caption}");
    }
    for part in ["128-byte warp accesses", "4 ALU instructions per access", "at most 99 warp accesses", "132 SMs"] {
        assert!(caption.contains(part), "{caption}");
    }
    for part in ["MLB replacement plru", "MLU timing ideal", "extensions: none", "tag seed 7"] {
        assert!(caption.contains(part), "{caption}");
    }
    assert_eq!(caption.lines().count(), 3);
    for line in caption.lines() {
        assert!(has(line), "caption line {line:?} missing: {texts:?}");
    }
    // The other workload's slowdown (123456x) is not on the axis.
    assert!(!has("100000x") && !has("1000000x"));
}

#[test]
fn plot_of_a_narrow_range_and_of_no_workload() {
    // All slowdowns within one decade: that decade's ends and 2x, 5x; the
    // miss rates (0.5%) too.
    let points: Vec<_> = [0usize, 1, 8].iter().map(|e| pt("w", *e, "bst", "hwonly", 1.05 + 0.01 * *e as f64, 0.995)).collect();
    let svg = sim::plot::workload_svg("w", &points, "caption line").unwrap();
    let texts = svg_texts(&svg);
    for t in ["1x", "2x", "5x", "10x", "bst, hwonly", "caption line", "0.1%", "0.2%", "0.5%", "1%"] {
        assert!(texts.iter().any(|x| x == t), "{t:?} missing: {texts:?}");
    }
    assert!(sim::plot::workload_svg("nope", &points, "").is_err());
    // Only 0 entries swept: panel (b) says why it is empty.
    let svg = sim::plot::workload_svg("w", &points[..1], "").unwrap();
    assert!(svg.contains("no MLB size &gt;= 1") || svg.contains("no MLB size >= 1"), "{svg}");
}
