//! Formal: the emitted traverser (the `traverser` submodule of
//! verilog_out/mlu8_{list,bst}.v) ends every walk within
//! BOUND = 1 + 3 * limit * (LAT + RWAIT + 1) cycles of its start, against a
//! memory that may return anything (cyclic lists, wrongly ordered trees,
//! nodes changing under the walk, errors) but answers each request within
//! LAT cycles and takes it within RWAIT cycles (formal/traverser_bound.v).
//! A bounded model check from the post-reset state (`sat -seq`, depth
//! BOUND + 3, so the longest walk started in the first cycles is covered
//! end to end); the bound is shown tight (BOUND - 1 fails) and a mutant of
//! the step-limit test is caught.
//!
//! The MLU around the traverser adds a fixed number of cycles per operation
//! (docs/design.md "Latencies": a HWONLY miss answers 4 + R(L + 1) cycles
//! after the request), and has no other loop, so its response bound is this
//! bound plus 3.
use testbench::formal::{emitted, formal_file, mutate, yosys, Outcome, Run};

struct Cfg {
    top: &'static str,
    limit: u32,
    lat: u32,
    rwait: u32,
}

impl Cfg {
    fn bound(&self) -> u32 {
        1 + 3 * self.limit * (self.lat + self.rwait + 1)
    }
}

fn check(name: &str, c: &Cfg, dut: &str, bound: u32) -> Run {
    let props = formal_file("traverser_bound.v").unwrap();
    let script = format!(
        "read_verilog -formal dut.v
read_verilog -formal -DTRAVERSER={top}_traverser -DMAX_LIMIT={limit} -DLAT={lat} -DRWAIT={rwait} -DBOUND={bound} traverser_bound.v
prep -top traverser_bound
flatten
opt_clean
sat -seq {depth} -prove-asserts -set-assumes -set-init-zero -verify traverser_bound
",
        top = c.top,
        limit = c.limit,
        lat = c.lat,
        rwait = c.rwait,
        depth = c.bound() + 3
    );
    yosys(name, &[("dut.v", dut), ("traverser_bound.v", &props)], &script).unwrap()
}

const CFGS: [Cfg; 2] = [
    Cfg { top: "mlu8_bst", limit: 2, lat: 2, rwait: 1 },
    Cfg { top: "mlu8_list", limit: 3, lat: 1, rwait: 0 },
];

#[test]
fn traverser_ends_every_walk_within_the_bound() {
    for c in &CFGS {
        let dut = emitted(c.top).unwrap();
        let r = check(c.top, c, &dut, c.bound());
        eprintln!(
            "{} traverser, limit <= {}, latency <= {}, ready wait <= {}: done within {} cycles: {:?} in {:.1} s",
            c.top, c.limit, c.lat, c.rwait, c.bound(), r.outcome, r.seconds
        );
        assert_eq!(r.outcome, Outcome::Proved, "{}\n{}", c.top, r.log);
        // Tight: some walk (the longest) needs every one of those cycles,
        // which also shows the environment assumptions admit real walks.
        let r = check(c.top, c, &dut, c.bound() - 1);
        eprintln!("{}: bound {} fails as it must: {:?} in {:.1} s", c.top, c.bound() - 1, r.outcome, r.seconds);
        assert_eq!(r.outcome, Outcome::Failed, "{}: bound - 1 did not fail\n{}", c.top, r.log);
    }
}

#[test]
fn traverser_mutant_is_caught() {
    // The step-limit test never fires: a cyclic list walks forever.
    let c = &CFGS[0];
    let original = emitted(c.top).unwrap();
    let m = mutate(&original, "else if (steps_r_q == limit_r_q) begin", "else if (steps_r_q > limit_r_q) begin").unwrap();
    assert_ne!(m, original);
    let r = check("traverser-mutant", c, &m, c.bound());
    eprintln!("mutant step limit never reached: {:?} in {:.1} s", r.outcome, r.seconds);
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.log);
}
