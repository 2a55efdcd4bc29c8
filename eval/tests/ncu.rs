//! The Nsight Compute reader against the four published files (their
//! README's launch counts) and against broken files written at test time.
use std::io::Cursor;
use std::path::{Path, PathBuf};

use eval::ncu;

fn traces() -> PathBuf {
    match std::env::var_os("MLUGEN_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces"),
    }
}

#[test]
fn the_four_files_have_one_row_per_iteration_2_launch() {
    // (workload, kernels in iteration 2) from traces/README.md.
    for (w, n) in [("resnet50_infer", 239), ("resnet50_train", 717), ("gpt2_train", 440), ("bert_infer", 154)] {
        let rows = ncu::read(traces().join(format!("ncu/{w}.csv.gz"))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rows.len(), n, "{w}");
        for r in &rows {
            assert!(r.inst >= r.global() + r.shared + r.tma, "{w}:{}: instruction mix exceeds the total", r.line);
            assert!((0.0..=1.0).contains(&r.l1_hit) && (0.0..=1.0).contains(&r.l2_hit), "{w}:{}", r.line);
            assert!(r.ctas_per_sm >= 1 && r.duration_ns > 0.0 && r.sm_cycles_max > 0.0, "{w}:{}", r.line);
        }
        // Header lines, a header row and a units row come first.
        assert_eq!(rows[0].line, 6, "{w}");
    }
}

/// A minimal file with the columns the reader needs (`cols`) and `rows`.
fn file(cols: &[&str], rows: &[&[&str]]) -> String {
    let q = |v: &[&str]| v.iter().map(|x| format!("\"{x}\"")).collect::<Vec<_>>().join(",");
    let mut s = String::from("==PROF== Connected\n");
    s += &(q(cols) + "\n");
    s += &(q(&vec![""; cols.len()]) + "\n");
    for r in rows {
        s += &(q(r) + "\n");
    }
    s
}

const COLS: [&str; 27] = [
    "ID",
    "Kernel Name",
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.max",
    "smsp__inst_executed.sum",
    "l1tex__t_sector_hit_rate.pct",
    "lts__t_sector_hit_rate.pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__ctas_launched.sum",
    "smsp__inst_executed_op_local_ld.sum",
    "smsp__inst_executed_op_local_st.sum",
    "smsp__inst_executed_op_global_ld.sum",
    "smsp__inst_executed_op_generic_ld.sum",
    "smsp__inst_executed_op_ldgsts.sum",
    "smsp__inst_executed_op_generic_atom.sum",
    "smsp__inst_executed_op_global_st.sum",
    "smsp__inst_executed_op_global_red.sum",
    "smsp__inst_executed_op_generic_st.sum",
    "smsp__inst_executed_op_tma_ld.sum",
    "smsp__inst_executed_op_tma_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "launch__occupancy_limit_blocks",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_barriers",
];

const ROW: [&str; 27] = [
    "0", "void k<1>(int)", "4,192", "8,294", "362,496", "2.53", "54.89", "48.00", "1,024", "1", "2", "100", "10", "5", "1", "50",
    "3", "2", "4", "1", "7", "6", "32", "10", "32", "12", "32",
];

#[test]
fn a_row_reads_into_counters() {
    let rows = ncu::read_from(Cursor::new(file(&COLS, &[&ROW])), "t.csv").unwrap();
    let r = &rows[0];
    assert_eq!((r.line, r.kernel_name.as_str()), (4, "void k<1>(int)"));
    assert_eq!((r.duration_ns, r.sm_cycles_max, r.inst), (4192.0, 8294.0, 362496.0));
    assert_eq!((r.global_ld, r.global_st, r.tma, r.shared), (116.0, 55.0, 5.0, 13.0));
    assert_eq!((r.local_ld, r.local_st, r.ctas_launched, r.ctas_per_sm), (1.0, 2.0, 1024.0, 10));
    assert!((r.l1_hit - 0.0253).abs() < 1e-12 && (r.l2_hit - 0.5489).abs() < 1e-12);
}

#[test]
fn malformed_files_name_the_file_line_and_column() {
    let e = ncu::read_from(Cursor::new(file(&COLS[..26], &[&ROW[..26]])), "t.csv").unwrap_err().to_string();
    assert_eq!(e, "t.csv:2: header row has no column \"launch__occupancy_limit_barriers\"");
    let mut bad = ROW;
    bad[4] = "n/a";
    let e = ncu::read_from(Cursor::new(file(&COLS, &[&ROW, &bad])), "t.csv").unwrap_err().to_string();
    assert_eq!(e, "t.csv:5: column \"smsp__inst_executed.sum\": expected a non-negative number, got \"n/a\"");
    let e = ncu::read_from(Cursor::new(file(&COLS, &[&ROW[..20]])), "t.csv").unwrap_err().to_string();
    assert_eq!(e, "t.csv:4: row has 20 fields, the header 27");
    let mut zero = ROW;
    zero[23] = "0";
    let e = ncu::read_from(Cursor::new(file(&COLS, &[&zero])), "t.csv").unwrap_err().to_string();
    assert_eq!(e, "t.csv:4: occupancy limits allow no CTA on an SM");
    let e = ncu::read_from(Cursor::new("\"ID\",\"x\"\n"), "t.csv").unwrap_err().to_string();
    assert!(e.starts_with("t.csv:1: header row has no \"Kernel Name\" column"), "{e}");
    let e = ncu::read_from(Cursor::new("==PROF== only\n"), "t.csv").unwrap_err().to_string();
    assert_eq!(e, "t.csv: no header row (empty file?)");
    let e = ncu::read_from(Cursor::new(file(&COLS, &[]) + "\"open\n"), "t.csv").unwrap_err().to_string();
    assert_eq!(e, "t.csv:4: unterminated quoted field");
    let e = ncu::read("/nonexistent/x.csv.gz").unwrap_err().to_string();
    assert!(e.starts_with("/nonexistent/x.csv.gz: cannot open"), "{e}");
}
