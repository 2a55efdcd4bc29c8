//! Formal: the emitted tree pseudo-LRU (the `plru_0` submodule of each
//! verilog_out/mlb<N>_plru.v) for every one of its 2^N states
//! (formal/plru_props.v, `sat -seq 2 -prove-skip 1` from a free state):
//! the victim is the independent tree walk of the state (so a valid way),
//! the next state is the independent touch model, and after a touch of way w
//! the victim is never w. Each mutant of the emitted constants is caught.
use testbench::formal::{emitted, formal_file, mutate, yosys, Outcome, Run};

fn script(n: usize, extra_define: &str) -> String {
    let iw = n.trailing_zeros();
    format!(
        "read_verilog -formal dut.v
read_verilog -formal -DPLRU=mlb{n}_plru_plru_0 -DN={n} -DIW={iw} {extra_define} plru_props.v
prep -top plru_props
flatten
# free initial state: every state is checked, not only those reachable from reset
setattr -unset init
opt_clean
sat -seq 2 -prove-skip 1 -prove-asserts -verify plru_props
"
    )
}

fn check(n: usize, dut: &str, extra_define: &str) -> Run {
    let props = formal_file("plru_props.v").unwrap();
    yosys(&format!("plru{n}"), &[("dut.v", dut), ("plru_props.v", &props)], &script(n, extra_define)).unwrap()
}

#[test]
fn plru_victim_walk_touch_and_never_the_touched_way_for_every_state() {
    for n in [2, 4, 8, 16, 32] {
        let run = check(n, &emitted(&format!("mlb{n}_plru")).unwrap(), "");
        eprintln!("plru N={n}: {:?} in {:.1} s", run.outcome, run.seconds);
        assert_eq!(run.outcome, Outcome::Proved, "N={n}\n{}", run.log);
    }
}

/// The premise of the proofs above: with the init value removed the first
/// cycle's state is free (a proof that it is 0 must fail).
#[test]
fn plru_proof_starts_from_a_free_state() {
    let props = formal_file("plru_props.v").unwrap();
    let s = script(8, "").replace("sat -seq 2 -prove-skip 1 -prove-asserts -verify plru_props", "sat -seq 1 -prove state 0 plru_props");
    let run = yosys("plru-free", &[("dut.v", &emitted("mlb8_plru").unwrap()), ("plru_props.v", &props)], &s).unwrap();
    assert_eq!(run.outcome, Outcome::Failed, "{}", run.log);
}

#[test]
fn plru_mutants_are_caught() {
    // Way 5 of 8: path nodes 0, 2, 5 (mask 0x25); bits pointing to it 0x21;
    // its touch sets 0x04 (hw::plru::tree_paths).
    let original = emitted("mlb8_plru").unwrap();
    let mutants = [
        ("victim decode: a flipped path bit", "localparam  path_to_5 = 8'h21;", "localparam  path_to_5 = 8'h20;", ""),
        ("touch: one flipped bit (the root then points toward way 5's half)", "localparam  path_away_5 = 8'h4;", "localparam  path_away_5 = 8'h5;", ""),
        // Checked with the never-the-touched-way property alone.
        ("touch points toward the way", "localparam  path_away_5 = 8'h4;", "localparam  path_away_5 = 8'h21;", "-DONLY_NOT_TOUCHED"),
    ];
    // The targets are in the PLRU module (the MLB top has its own copy of
    // the path constants, for its one-hot victim).
    let (top, plru) = original.split_at(original.find("module mlb8_plru_plru_0(").expect("the PLRU module"));
    for (what, from, to, define) in mutants {
        let m = format!("{top}{}", mutate(plru, from, to).unwrap());
        assert_ne!(m, original);
        let run = check(8, &m, define);
        eprintln!("mutant {what}: {:?} in {:.1} s", run.outcome, run.seconds);
        assert_eq!(run.outcome, Outcome::Failed, "mutant {what} was not caught:\n{}", run.log);
    }
}
