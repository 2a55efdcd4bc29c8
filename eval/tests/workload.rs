//! Joining a trace's iteration-2 launches with their ncu rows: the four
//! published workloads, and the errors that name the file, line and launch.
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

fn traces() -> PathBuf {
    match std::env::var_os("MLUGEN_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces"),
    }
}

#[test]
fn the_four_workloads_join_launch_for_launch() {
    // (workload, kernels in iteration 2, GPU busy in iteration 2 in ms) from
    // traces/README.md; busy time is kernels plus copies.
    for (w, n, busy_ms) in [("resnet50_infer", 239, 4.92), ("resnet50_train", 717, 9.66), ("gpt2_train", 440, 16.82), ("bert_infer", 154, 6.38)] {
        let wl = eval::workload::load(&traces().join(format!("{w}.jsonl.gz")), None).unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!((wl.name.as_str(), wl.sm_count, wl.kernels.len()), (w, 132, n));
        let busy = (wl.measured_kernel_ns() + wl.copy_ns) as f64 / 1e6;
        assert!((busy - busy_ms).abs() < 0.1, "{w}: {busy} ms");
        for k in &wl.kernels {
            assert_eq!(k.launch.ctas() as f64, k.counters.ctas_launched);
            assert!(k.footprint_bytes >= 0.0 && k.operator < wl.operators.len());
        }
        // Each operator's live set holds every allocation it touches.
        for op in &wl.operators {
            for t in &op.touches {
                assert!(op.live.iter().any(|l| l.0 == t.id && l.1 == t.block_base), "{w}: {}", op.op);
            }
        }
    }
}

#[test]
fn function_names_compare_without_templates_namespaces_or_mangling() {
    use eval::workload::function_name as f;
    let some = |s: &str| Some(s.to_string());
    assert_eq!(f("void at::native::vectorized_gather_kernel<16, long>(char*, long)"), some("vectorized_gather_kernel"));
    assert_eq!(f("void at::vectorized_gather_kernel<16, long>(char *, long)"), some("vectorized_gather_kernel"));
    assert_eq!(f("sm80_xmma_gemm_f32f32_tn_n"), some("sm80_xmma_gemm_f32f32_tn_n"));
    assert_eq!(f("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<T>(int)"), some("multi_tensor_apply_kernel"));
    assert_eq!(f("void at::<unnamed>::multi_tensor_apply_kernel<T>(int)"), some("multi_tensor_apply_kernel"));
    assert_eq!(f("_ZN17cutlass__5x_cudnn6KernelI"), None);
}

struct Dir(PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn gz(path: &Path, text: &str) {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    std::fs::write(path, e.finish().unwrap()).unwrap();
}

/// A trace with one iteration-2 launch of `name` and `ctas` CTAs, and an ncu
/// file with `rows` rows of `ncu_name` with 4 CTAs; the load error, if any.
fn join(tag: &str, version: u32, name: &str, ctas: u32, ncu_name: &str, rows: usize) -> Result<eval::workload::Workload, String> {
    let d = Dir(std::env::temp_dir().join(format!("mlugen-join-{}-{tag}", std::process::id())));
    std::fs::create_dir_all(d.0.join("ncu")).unwrap();
    let gpu = if version == 1 {
        String::new()
    } else {
        format!(r#", "gpu": [{{"kind": "kernel", "name": "{name}", "ns": 3000, "grid": [{ctas}, 1, 1], "block": [128, 1, 1], "regs": 32, "smem": 0, "corr": 1}}]"#)
    };
    let iter = if version == 1 { "" } else { "{\"t\": \"iter\", \"n\": 2}\n" };
    gz(
        &d.0.join("w.jsonl.gz"),
        &format!(
            "{{\"format\": \"gpuarmor-trace\", \"version\": {version}, \"workload\": \"w\", \"sm_count\": 132}}\n\
             {{\"t\": \"alloc\", \"id\": 0, \"base\": 4096, \"size\": 4096}}\n{iter}\
             {{\"t\": \"kernel\", \"op\": \"add\", \"acc\": [[0, 0, 4096, \"rw\"]]{gpu}}}\n"
        ),
    );
    let cols = "\"Kernel Name\",\"gpu__time_duration.sum\",\"sm__cycles_elapsed.max\",\"smsp__inst_executed.sum\",\"l1tex__t_sector_hit_rate.pct\",\"lts__t_sector_hit_rate.pct\",\"sm__warps_active.avg.pct_of_peak_sustained_active\",\"sm__ctas_launched.sum\",\"smsp__inst_executed_op_local_ld.sum\",\"smsp__inst_executed_op_local_st.sum\",\"smsp__inst_executed_op_global_ld.sum\",\"smsp__inst_executed_op_generic_ld.sum\",\"smsp__inst_executed_op_ldgsts.sum\",\"smsp__inst_executed_op_generic_atom.sum\",\"smsp__inst_executed_op_global_st.sum\",\"smsp__inst_executed_op_global_red.sum\",\"smsp__inst_executed_op_generic_st.sum\",\"smsp__inst_executed_op_tma_ld.sum\",\"smsp__inst_executed_op_tma_st.sum\",\"smsp__inst_executed_op_shared_ld.sum\",\"smsp__inst_executed_op_shared_st.sum\",\"launch__occupancy_limit_blocks\",\"launch__occupancy_limit_registers\",\"launch__occupancy_limit_shared_mem\",\"launch__occupancy_limit_warps\",\"launch__occupancy_limit_barriers\"";
    let mut csv = format!("==PROF== x\n{cols}\n{}\n", vec!["\"\""; 26].join(","));
    for _ in 0..rows {
        csv += &format!("\"{ncu_name}\",\"3000\",\"6000\",\"1000\",\"10\",\"50\",\"40\",\"4\",\"0\",\"0\",\"100\",\"0\",\"0\",\"0\",\"50\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"32\",\"16\",\"32\",\"16\",\"32\"\n");
    }
    gz(&d.0.join("ncu/w.csv.gz"), &csv);
    eval::workload::load(&d.0.join("w.jsonl.gz"), None).map_err(|e| {
        format!("{e:#}").replace(&d.0.display().to_string(), "D")
    })
}

#[test]
fn a_matching_pair_joins() {
    let w = join("ok", 2, "void ns::k<1>(int)", 4, "void k<1>(int)", 1).unwrap();
    // The one launch moves its operator's 4096-byte "rw" range in and out.
    assert_eq!((w.kernels.len(), w.kernels[0].counters.inst, w.kernels[0].footprint_bytes), (1, 1000.0, 8192.0));
}

#[test]
fn mismatches_name_the_files_lines_and_launch() {
    let e = join("name", 2, "void ns::k<1>(int)", 4, "void other<1>(int)", 1).unwrap_err();
    assert_eq!(e, "launch 0 of iteration 2: D/w.jsonl.gz:4 launches `k` but D/ncu/w.csv.gz:4 profiles `other`");
    let e = join("ctas", 2, "k", 8, "k", 1).unwrap_err();
    assert_eq!(e, "launch 0 of iteration 2: D/w.jsonl.gz:4 has 8 CTAs but D/ncu/w.csv.gz:4 launched 4");
    let e = join("count", 2, "k", 4, "k", 2).unwrap_err();
    assert_eq!(e, "D/w.jsonl.gz has 1 kernel launches in iteration 2 but D/ncu/w.csv.gz has 2 rows: the files do not belong together");
    let e = join("v1", 1, "k", 4, "k", 1).unwrap_err();
    assert!(e.starts_with("D/w.jsonl.gz: a version-1 trace has no GPU launches; the SM model needs version 2"), "{e}");
}
