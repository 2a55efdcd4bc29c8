//! Formal: the emitted MLB's RANGE match vector (`rs_match_i`, the terms
//! `valid && base <= a && a - base < size` of its range search) is one-hot
//! or zero, and `rs_multi` stays 0, in every cycle of every input sequence
//! in which each fill's range is disjoint from the ranges of the valid
//! entries it does not overwrite. Two steps:
//! 1. k-induction (`sat -tempinduct`, unbounded) from reset: under that fill
//!    assumption the valid entries' ranges stay pairwise disjoint (mlb2_plru
//!    in the suite, 2.4 s; mlb4_plru and a round-robin mlb4_rr with
//!    `--ignored`, about 270 s each);
//! 2. for every state and input (registers free, one step): pairwise
//!    disjoint valid ranges make the range match vector one-hot or zero and
//!    the encoder's multi flag (registered into `rs_multi`) 0 (mlb2_plru in
//!    the suite, about 2-16 s; mlb4_plru with `--ignored`: it did not finish
//!    within 10 minutes here).
//!
//! The assumption is the metadata's property, not the MLB's: the runtime
//! never has two overlapping allocations with nodes at once, FREED nodes are
//! INVALIDATEd on free and retired nodes before reuse (docs/design.md
//! "Runtime"), so every valid entry is a copy of a current node and a fill
//! brings in another current node. The fill protocol alone (fill only after
//! a range miss of an address inside the filled range) does **not** keep the
//! vector one-hot: `fill_on_a_miss_alone_can_overlap` shows a two-hit search
//! reachable within a few cycles. Disjointness is written with the
//! hardware's own compare (`base <= x && x - base < size`): two ranges are
//! disjoint when neither holds the other's base.
//!
//! The range compare reads each entry's stored `bxs = base ^ size`
//! (hw/src/mlb.rs), so the invariant `bxs == base ^ size` of every entry is
//! part of both steps: step 1 proves it (with the disjointness), step 2
//! assumes it of the free state.
use hw::generate::{TopKind, TopSpec};
use sim::config::Replacement;
use testbench::formal::{emitted, inject, mutate, yosys, Outcome, Run};

/// Whether `x` lies in `[base, base + size)`, written as the hardware's
/// own range compare (so a range may end past 2^56 and size 0 holds nothing).
fn inside(x: &str, base: &str, size: &str) -> String {
    format!("(({base} <= {x}) && (({x} - {base}) < {size}))")
}

/// The ranges `[ba, ba + sa)` and `[bb, bb + sb)` do not meet: two
/// intervals of a line meet exactly when one holds the other's first byte.
fn disjoint(ba: &str, sa: &str, bb: &str, sb: &str) -> String {
    format!("(!{} && !{})", inside(bb, ba, sa), inside(ba, bb, sb))
}

/// The property code injected into the top for `contract`.
fn props(n: usize, contract: Contract) -> String {
    let iw = if n <= 2 { 1 } else { n.trailing_zeros() as usize };
    let mut c = String::from("    // formal (injected by testbench/tests/formal_mlb_range.rs)\n");
    if contract == Contract::FillOnMissOnly {
        c += "    reg f_prev_rs_valid = 1'b0;
    reg [55:0] f_prev_rs_addr = 56'h0;
    reg f_prev_fill = 1'b0;
    always @(posedge clock) begin
        f_prev_rs_valid <= rs_valid;
        f_prev_rs_addr <= rs_addr;
        f_prev_fill <= fill_valid;
    end
";
    }
    c += "    always @(*) begin\n";
    let pairs: Vec<(usize, usize)> = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect();
    let entry_disjoint = |i: usize, j: usize| {
        format!("(!(valid_{i}_q && valid_{j}_q) || {})", disjoint(&format!("base_{i}_q"), &format!("size_{i}_q"), &format!("base_{j}_q"), &format!("size_{j}_q")))
    };
    match contract {
        Contract::Disjoint => {
            // The metadata contract: a fill is disjoint from every valid
            // entry but the way it overwrites.
            for i in 0..n {
                let d = disjoint("fill_base", "fill_size", &format!("base_{i}_q"), &format!("size_{i}_q"));
                c += &format!("        if (fill_valid && valid_{i}_q && (victim_l != {iw}'d{i})) assume({d});\n");
            }
            for &(i, j) in &pairs {
                c += &format!("        assert({});\n", entry_disjoint(i, j));
            }
            for i in 0..n {
                c += &format!("        assert(bxs_{i}_q == (base_{i}_q ^ size_{i}_q));\n");
            }
        }
        Contract::FillOnMissOnly => {
            // Only the fill protocol: a fill follows a range search one
            // cycle earlier that missed (registered rs_hit now 0) of an
            // address inside the filled range, and no fill in that cycle.
            c += "        if (fill_valid) assume(f_prev_rs_valid && !rs_hit && !f_prev_fill && (fill_base <= f_prev_rs_addr) && ((f_prev_rs_addr - fill_base) < fill_size));\n";
            for &(i, j) in &pairs {
                c += &format!("        assert(!(rs_match_{i} && rs_match_{j}));\n");
            }
            c += "        assert(!rs_multi);\n";
        }
        Contract::Lemma => {
            for &(i, j) in &pairs {
                c += &format!("        assume({});\n", entry_disjoint(i, j));
            }
            for i in 0..n {
                c += &format!("        assume(bxs_{i}_q == (base_{i}_q ^ size_{i}_q));\n");
            }
            for &(i, j) in &pairs {
                c += &format!("        assert(!(rs_match_{i} && rs_match_{j}));\n");
            }
            c += "        assert(!rs_pe_multi);\n";
        }
    }
    c += "    end";
    c
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Contract {
    /// Induction: the fill assumption; asserts the disjointness invariant.
    Disjoint,
    /// Only the fill protocol; asserts one-hot (expected to fail).
    FillOnMissOnly,
    /// The combinational lemma: assumes the invariant in the (free)
    /// current state; asserts one-hot.
    Lemma,
}

fn verilog(top: &str) -> String {
    if top == "mlb4_rr" {
        let kind = TopKind::Mlb { entries: 4, replacement: Replacement::RoundRobin, hit_latency: 1 };
        return TopSpec::new(kind).build().unwrap().verilog;
    }
    emitted(top).unwrap()
}

fn dut(top: &str, n: usize, contract: Contract) -> String {
    inject(&verilog(top), top, &props(n, contract)).unwrap()
}

fn run(name: &str, top: &str, text: &str, sat: &str) -> Run {
    let script = format!("read_verilog -formal dut.v\nprep -top {top}\nflatten\nopt_clean\n{sat} {top}\n");
    yosys(name, &[("dut.v", text)], &script).unwrap()
}

/// One step from a free state (the registers' init values removed, so every
/// state is checked, not only reachable ones).
const LEMMA: &str = "setattr -unset init\nsat -seq 1 -prove-asserts -set-assumes -verify";

const INDUCTION: &str = "sat -tempinduct -prove-asserts -set-assumes -set-init-zero -maxsteps 4 -verify";

/// Step 1, by k-induction from reset: under the fill assumption the valid
/// entries' ranges stay pairwise disjoint.
#[test]
fn mlb_valid_ranges_stay_disjoint_under_the_fill_assumption() {
    prove_disjoint(&[("mlb2_plru", 2)]);
}

/// Both steps on four entries (the induction about 4.5 minutes per top on
/// a loaded 2-core machine; the lemma more than 10 minutes): `-- --ignored`.
#[test]
#[ignore = "about 4.5 minutes per top; run with --ignored"]
fn mlb4_valid_ranges_stay_disjoint_under_the_fill_assumption() {
    prove_lemma(&[("mlb4_plru", 4)]);
    prove_disjoint(&[("mlb4_plru", 4), ("mlb4_rr", 4)]);
}

fn prove_disjoint(tops: &[(&str, usize)]) {
    for &(top, n) in tops {
        let r = run(top, top, &dut(top, n, Contract::Disjoint), INDUCTION);
        eprintln!("{top}: valid ranges pairwise disjoint by induction: {:?} in {:.1} s", r.outcome, r.seconds);
        assert_eq!(r.outcome, Outcome::Proved, "{top}\n{}", r.log);
    }
}

/// Step 2, for every state and input (combinational, the registers free):
/// pairwise disjoint valid ranges make the range match vector one-hot or
/// zero and the encoder's multi flag (registered into `rs_multi`) 0.
#[test]
fn mlb_range_match_is_one_hot_when_valid_ranges_are_disjoint() {
    prove_lemma(&[("mlb2_plru", 2)]);
}

fn prove_lemma(tops: &[(&str, usize)]) {
    for &(top, n) in tops {
        let r = run(top, top, &dut(top, n, Contract::Lemma), LEMMA);
        eprintln!("{top}: disjoint ranges => range match one-hot: {:?} in {:.1} s", r.outcome, r.seconds);
        assert_eq!(r.outcome, Outcome::Proved, "{top}\n{}", r.log);
    }
}

/// The assumption is not vacuous: with it, both entries of mlb2 can hold
/// ranges (filled two cycles apart) while a range search hits, so the proof
/// covers full MLBs.
#[test]
fn mlb_range_contract_allows_a_full_mlb_and_hits() {
    let n = 2;
    let depth = 2 * n + 2;
    let sets: String = (0..n).map(|i| format!(" -set-at {depth} valid_{i}_q 1")).collect();
    let sat = format!("sat -seq {depth} -set-assumes -set-init-zero{sets} -set-at {depth} rs_hit 1");
    let r = run("mlb2-range-cover", "mlb2_plru", &dut("mlb2_plru", n, Contract::Disjoint), &sat);
    eprintln!("mlb2 both entries valid and a range hit at cycle {depth}: {:?} in {:.1} s", r.outcome, r.seconds);
    assert_eq!(r.outcome, Outcome::Reachable, "{}", r.log);
}

/// Fill-on-a-miss alone does not keep the vector one-hot: a fill of a range
/// that contains the missed address may still overlap another entry.
#[test]
fn fill_on_a_miss_alone_can_overlap() {
    let r = run("mlb2-range-miss-only", "mlb2_plru", &dut("mlb2_plru", 2, Contract::FillOnMissOnly), "sat -seq 6 -prove-asserts -set-assumes -set-init-zero -verify");
    eprintln!("mlb2 with fill-on-miss only: {:?} in {:.1} s", r.outcome, r.seconds);
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.log);
}

/// Mutants, each caught with a counterexample: in the range compare of
/// mlb4_plru (the lemma, every state), and in the fill of mlb2_plru (the
/// invariant, bounded from reset, 10 cycles).
#[test]
fn mlb_range_mutants_are_caught() {
    let lemma = dut("mlb4_plru", 4, Contract::Lemma);
    let induction = dut("mlb2_plru", 2, Contract::Disjoint);
    let bmc = "sat -seq 10 -prove-asserts -set-assumes -set-init-zero -verify";
    let comb = LEMMA;
    let mutants = [
        // Entry 1 also matches the byte just past its end (the next range's base).
        ("range compare off by one", &lemma, comb, "(cs_s_1 >= cs_nr_1)", "(cs_s_1 > cs_nr_1)"),
        // mlb2: every fill also writes way 0 (one range in two entries).
        ("fill write-enable ignores the victim", &induction, bmc, "write_en_0 = fill_base_ok && victim_oh_0 && ~inv_match_0;", "write_en_0 = fill_base_ok && ~inv_match_0;"),
        // Entry 2 matches below its base (the lower-bound term dropped).
        ("lower bound dropped", &lemma, comb, "rs_match_2 = rs_valid && valid_2_q && (base_2_q <= rs_key_2) && ", "rs_match_2 = rs_valid && valid_2_q && "),
    ];
    for (what, original, sat, from, to) in mutants {
        let m = mutate(original, from, to).unwrap();
        assert_ne!(&m, original);
        let top = if original == &induction { "mlb2_plru" } else { "mlb4_plru" };
        let r = run("mlb-range-mutant", top, &m, sat);
        eprintln!("mutant {what}: {:?} in {:.1} s", r.outcome, r.seconds);
        assert_eq!(r.outcome, Outcome::Failed, "mutant {what} was not caught:\n{}", r.log);
    }
}
