//! Formal: the emitted MLB (verilog_out/mlb<N>_<policy>.v) never holds two
//! valid entries with the same location, so its location match vector is
//! one-hot or zero and `ls_multi` stays 0, for every input sequence: any
//! fills in any order (K walkers filling, two of them the same node), with
//! any searches, invalidates, flushes and resets. The MLB drops a fill of a
//! location it already holds (`fill_present`). Proved by k-induction (`sat -tempinduct`,
//! unbounded) on the committed mlb2_plru and mlb4_plru and on a round-robin
//! mlb4_rr emitted by the same generator (hw::generate; verilog_out/ holds
//! round-robin only at 8 and 16). The committed mlb8_plru and mlb8_rr take
//! about two minutes each: `cargo test --release -p testbench --test
//! formal_mlb -- --ignored`.
//!
//! The blocking MLU's old fill contract (fill only after a location miss of
//! the same location, no two fills in a row) is kept as an optional
//! assumption, to show that under it the MLB still fills every entry (the
//! proofs without it are not vacuous either: the cover test reaches a full
//! MLB). The property is injected into the emitted top module (so it sees its
//! entry registers `valid_i_q`, `loc_i_q` and its match terms `ls_match_i`).
//!
//! The MLB as the MLU unit builds it, with the fill lookahead (hw::mlb
//! "Fill lookahead": the matches of the next fill registered a cycle
//! early, from k candidate locations), is proved the same way under the
//! lookahead's contract (the next fill is the candidate picked in the cycle
//! before), together with the invariant that its registered matches are
//! the entries' matches of the fill; a mutant that forgets the fill of the
//! cycle before (two walkers filling one node back to back) is caught.
//!
//! Not covered here: the *range* match vector is one-hot only if the valid
//! entries' ranges are disjoint, which is a property of the metadata (the
//! runtime never creates overlapping allocations), not of the MLB.
use hw::generate::{TopKind, TopSpec};
use sim::config::Replacement;
use testbench::formal::{emitted, inject, mutate, yosys, Outcome, Run};

fn props(n: usize, with_contract: bool) -> String {
    let mut c = String::from(
        "    // formal (injected by testbench/tests/formal_mlb.rs)
    reg f_prev_ls_valid = 1'b0;
    reg [50:0] f_prev_ls_loc = 51'h0;
    reg f_prev_fill = 1'b0;
    always @(posedge clock) begin
        f_prev_ls_valid <= ls_valid;
        f_prev_ls_loc <= ls_loc;
        f_prev_fill <= fill_valid;
    end
    always @(*) begin
",
    );
    if with_contract {
        c += "        if (fill_valid) assume(f_prev_ls_valid && (f_prev_ls_loc == fill_loc) && !ls_hit && !f_prev_fill);\n";
    }
    for i in 0..n {
        for j in i + 1..n {
            c += &format!("        assert(!(valid_{i}_q && valid_{j}_q && (loc_{i}_q == loc_{j}_q)));\n");
            c += &format!("        assert(!(ls_match_{i} && ls_match_{j}));\n");
        }
    }
    c += "        assert(!ls_multi);\n    end";
    c
}

/// The emitted Verilog of `top`: committed in verilog_out/, or (mlb4_rr)
/// generated now by hw::generate.
fn verilog(top: &str) -> String {
    if top == "mlb4_rr" {
        let kind = TopKind::Mlb { entries: 4, replacement: Replacement::RoundRobin, hit_latency: 1 };
        return TopSpec::new(kind).build().unwrap().verilog;
    }
    emitted(top).unwrap()
}

fn dut(top: &str, n: usize, with_contract: bool) -> String {
    inject(&verilog(top), top, &props(n, with_contract)).unwrap()
}

fn run(name: &str, top: &str, text: &str, sat: &str) -> Run {
    let script = format!("read_verilog -formal dut.v\nprep -top {top}\nflatten\nopt_clean\n{sat} {top}\n");
    yosys(name, &[("dut.v", text)], &script).unwrap()
}

const INDUCTION: &str = "sat -tempinduct -prove-asserts -set-assumes -set-init-zero -maxsteps 4 -verify";

fn prove_no_duplicates(tops: &[(&str, usize)]) {
    for &(top, n) in tops {
        let r = run(top, top, &dut(top, n, false), INDUCTION);
        eprintln!("{top}: no duplicate / location one-hot by induction: {:?} in {:.1} s", r.outcome, r.seconds);
        assert_eq!(r.outcome, Outcome::Proved, "{top}\n{}", r.log);
    }
}

#[test]
fn mlb_never_holds_duplicate_locations_whatever_fills() {
    prove_no_duplicates(&[("mlb2_plru", 2), ("mlb4_plru", 4), ("mlb4_rr", 4)]);
}

#[test]
#[ignore = "about two minutes per top; run with --ignored"]
fn mlb8_never_holds_duplicate_locations_whatever_fills() {
    prove_no_duplicates(&[("mlb8_plru", 8), ("mlb8_rr", 8)]);
}

/// The contract is not vacuous: under it the MLB can fill every entry (each
/// fill two cycles after the previous), so the proof covers full MLBs and
/// replacement by the policy.
#[test]
fn mlb_contract_allows_filling_every_entry() {
    let n = 4;
    let depth = 2 * n + 1;
    let sets: String = (0..n).map(|i| format!(" -set-at {depth} valid_{i}_q 1")).collect();
    let sat = format!("sat -seq {depth} -set-assumes -set-init-zero{sets}");
    let r = run("mlb4-cover", "mlb4_plru", &dut("mlb4_plru", n, true), &sat);
    eprintln!("mlb4 all {n} entries valid at cycle {depth}: {:?} in {:.1} s", r.outcome, r.seconds);
    assert_eq!(r.outcome, Outcome::Reachable, "{}", r.log);
}

/// Without its fill-present check the MLB can be made to hold a duplicate
/// (two fills of one location): the proof rests on that check.
#[test]
fn mlb_without_the_fill_present_check_can_duplicate() {
    let original = dut("mlb2_plru", 2, false);
    let m = mutate(&original, FILL_PRESENT_TERM, "").unwrap();
    let r = run("mlb2-nocheck", "mlb2_plru", &m, "sat -seq 4 -prove-asserts -set-init-zero -verify");
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.log);
}

/// The fill-present term of `fill_base_ok` in the emitted text.
const FILL_PRESENT_TERM: &str = " && ~fill_held";

/// Mutants of the emitted mlb4_plru; each gives a real counterexample trace
/// from reset (bounded check, 10 cycles: enough to fill all four entries).
#[test]
fn mlb_mutants_are_caught() {
    let original = dut("mlb4_plru", 4, false);
    let mutants = [
        // A fill into way 1 or 3 writes both (a write-enable decode slip).
        ("fill write-enable decodes one index bit", "write_en_1 = fill_base_ok && victim_oh_1 && ~inv_match_1;", "write_en_1 = fill_base_ok && (victim_oh_1 || victim_oh_3) && ~inv_match_1;"),
        // The one-hot flag raised by any single hit (the assertion output itself).
        ("multi flag driven by any hit", "out_ls_multi = ls_pe_multi && ~reset;", "out_ls_multi = ls_pe_any && ~reset;"),
        // The location compare drops bit 50: two locations 2^55 bytes apart alias.
        ("location compare drops a bit", "ls_match_1 = ls_valid && valid_1_q && (loc_1_q == ls_loc);", "ls_match_1 = ls_valid && valid_1_q && (loc_1_q[49:0] == ls_loc[49:0]);"),
    ];
    for (what, from, to) in mutants {
        let m = mutate(&original, from, to).unwrap();
        assert_ne!(m, original);
        let r = run("mlb4-mutant", "mlb4_plru", &m, "sat -seq 10 -prove-asserts -set-init-zero -verify");
        eprintln!("mutant {what}: {:?} in {:.1} s", r.outcome, r.seconds);
        assert_eq!(r.outcome, Outcome::Failed, "mutant {what} was not caught:\n{}", r.log);
    }
}

/// mlb4_plru as the MLU unit builds it: fill lookahead over 2 candidates.
fn lookahead_dut() -> String {
    let mut uut = hw::mlb::Mlb::<4, 2>::new(Replacement::Plru, 1).with_fill_lookahead(2);
    let g = hw::generate::emit("mlb4_plru_la2", "hw::mlb::Mlb<4, 2>", &mut uut, Default::default(), &hw::interface::mlb(1)).expect("Mlb<4, 2> emits");
    let mut c = String::from(
        "    // formal (injected by testbench/tests/formal_mlb.rs): the lookahead contract
    reg f_sel_0 = 1'b0;
    reg f_sel_1 = 1'b0;
    reg [50:0] f_loc_0 = 51'h0;
    reg [50:0] f_loc_1 = 51'h0;
    always @(posedge clock) begin
        f_sel_0 <= fill_next_sel_0;
        f_sel_1 <= fill_next_sel_1;
        f_loc_0 <= fill_next_loc_0;
        f_loc_1 <= fill_next_loc_1;
    end
    always @(*) begin
        assume(!(fill_next_sel_0 && fill_next_sel_1));
        if (fill_valid) assume((f_sel_0 && (fill_loc == f_loc_0)) || (f_sel_1 && (fill_loc == f_loc_1)));
",
    );
    for i in 0..4 {
        c += &format!("        if (fill_valid) assert(fill_match_{i} == (valid_{i}_q && (loc_{i}_q == fill_loc)));\n");
        for j in i + 1..4 {
            c += &format!("        assert(!(valid_{i}_q && valid_{j}_q && (loc_{i}_q == loc_{j}_q)));\n");
        }
    }
    c += "        assert(!ls_multi);\n    end";
    inject(&g.verilog, "mlb4_plru_la2", &c).unwrap()
}

#[test]
fn mlb_with_fill_lookahead_never_holds_duplicate_locations() {
    let r = run("mlb4-la2", "mlb4_plru_la2", &lookahead_dut(), INDUCTION);
    eprintln!("mlb4_plru with fill lookahead (2 candidates): no duplicate by induction: {:?} in {:.1} s", r.outcome, r.seconds);
    assert_eq!(r.outcome, Outcome::Proved, "{}", r.log);
}

/// The lookahead forgetting the fill of the cycle before (an entry just
/// written with the next fill's location does not match it) duplicates.
#[test]
fn mlb_lookahead_mutant_forgetting_the_previous_fill_is_caught() {
    let original = lookahead_dut();
    let m = (0..4).fold(original.clone(), |t, i| mutate(&t, &format!("fill_match_{i} = fn_q_0_q;"), &format!("fill_match_{i} = 1'b0;")).unwrap());
    assert_ne!(m, original);
    let r = run("mlb4-la2-mutant", "mlb4_plru_la2", &m, "sat -seq 6 -prove-asserts -set-assumes -set-init-zero -verify");
    eprintln!("lookahead mutant: {:?} in {:.1} s", r.outcome, r.seconds);
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.log);
}
