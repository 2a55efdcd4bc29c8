//! Formal: the emitted `memcheck` (verilog_out/memcheck.v) equals the
//! independent widened-arithmetic reference formal/memcheck_ref.v on every
//! output for all 2^300-odd input combinations (Yosys `miter -equiv` +
//! `sat -prove`), and each textual mutant of the emitted Verilog is caught.
use testbench::formal::{emitted, formal_file, mutate, yosys, Outcome, Run};

const SCRIPT: &str = "read_verilog memcheck.v
read_verilog memcheck_ref.v
proc
opt_clean
miter -equiv -flatten -make_assert memcheck memcheck_ref miter
hierarchy -top miter
sat -verify -prove-asserts -show-ports miter
";

fn check(name: &str, dut: &str) -> Run {
    let reference = formal_file("memcheck_ref.v").unwrap();
    yosys(name, &[("memcheck.v", dut), ("memcheck_ref.v", &reference)], SCRIPT).unwrap()
}

#[test]
fn memcheck_equals_reference_for_all_inputs() {
    let run = check("memcheck", &emitted("memcheck").unwrap());
    eprintln!("memcheck == memcheck_ref: {:?} in {:.1} s", run.outcome, run.seconds);
    assert_eq!(run.outcome, Outcome::Proved, "{}", run.log);
}

/// Each mutant is one plausible slip in the emitted Verilog; the proof must
/// find a counterexample for every one.
#[test]
fn memcheck_mutants_are_caught() {
    let original = emitted("memcheck").unwrap();
    let mutants = [
        // Bounds: only the first byte checked (the width not connected).
        ("g: width ignored", "g_bounds_w = g_w;", "g_bounds_w = 56'h0;"),
        // Bounds: the address off by one.
        ("g: address + 1", "g_bounds_a = g_a;", "g_bounds_a = g_a + 56'h1;"),
        // Bounds: a carry out of the carry-save sum taken from the wrong bit.
        ("g: carry bit 54", "localparam  top = 56'h80000000000000;", "localparam  top = 56'h40000000000000;"),
        // Fault order: tag mismatch tested before FREED.
        ("g: FREED compare against tag 0", "if (g_meta_tag == tag_freed)", "if (g_meta_tag == tag_zero)"),
        // A dropped term: NO_META location not recognised.
        ("g: NO_META location term dropped", " || (g_loc == loc_no_meta)", ""),
        // The lane-check split: the bounds test also decides for a NO_META
        // location (a mismatch on g_bchk that g_fault alone would hide).
        ("g: bchk set with NO_META", "g_pre_comb = f_nometa;", "g_pre_comb = f_nometa;\n                g_bchk_comb = 1'b1;"),
        // Shared memory: one byte past the window accepted.
        ("s: size + 1", "s_bounds_size = s_size;", "s_bounds_size = s_size + 32'h1;"),
        ("s: carry bit 30", "localparam  top = 32'h80000000;", "localparam  top = 32'h40000000;"),
    ];
    for (what, from, to) in mutants {
        let m = mutate(&original, from, to).unwrap();
        assert_ne!(m, original);
        let run = check("memcheck-mutant", &m);
        eprintln!("mutant {what}: {:?} in {:.1} s", run.outcome, run.seconds);
        assert_eq!(run.outcome, Outcome::Failed, "mutant {what} was not caught:\n{}", run.log);
    }
}
