//! Formal: a walker of the MLU as an SM unit (the `walkers_0` submodule of
//! the emitted unit: verilog_out/mlu8_bst_k4_l32_p2_c2.v, and a list unit
//! generated now) ends every walk within
//! BOUND = 1 + limit * (LAT + RWAIT + 2) cycles of its start, against a
//! metadata port that may return anything (cyclic lists, wrongly ordered
//! trees, nodes changing under the walk, errors) but answers each granted
//! read within LAT cycles and grants each read within RWAIT cycles
//! (formal/walker_bound.v). A bounded model check from the post-reset state
//! (`sat -seq`, depth BOUND + 3, so the longest walk started in the first
//! cycles is covered end to end); the bound is shown tight (BOUND - 1
//! fails) and a mutant of the step-limit test is caught.
//!
//! The unit around its walkers adds a fixed number of cycles to a walk's
//! requests (the replay through stages A..C) and waits for a free walker,
//! so with a fair port each miss is answered within a bound built from
//! this one.
use hw::generate::{TopKind, TopSpec};
use sim::config::{MluConfig, Structure};
use sim::mlu_unit::{UnitParams, MISS_SLOTS};
use testbench::formal::{emitted, formal_file, mutate, yosys, Outcome, Run};

struct Cfg {
    /// The unit top whose `walkers_0` is checked.
    top: String,
    limit: u32,
    lat: u32,
    rwait: u32,
}

impl Cfg {
    fn bound(&self) -> u32 {
        1 + self.limit * (self.lat + self.rwait + 2)
    }
    fn walker(&self) -> String {
        format!("{}_walkers_0", self.top)
    }
}

/// The text of `top`'s first walker and the submodules declared after it,
/// up to the next walker: the DUT the proof reads.
fn walker_text(c: &Cfg, unit: &str) -> String {
    let from = unit.find(&format!("module {}(", c.walker())).expect("the unit has walkers_0");
    let to = unit.find(&format!("module {}_walkers_1(", c.top)).unwrap_or(unit.len());
    unit[from..to].to_string()
}

fn check(name: &str, c: &Cfg, dut: &str, bound: u32) -> Run {
    let props = formal_file("walker_bound.v").unwrap();
    let script = format!(
        "read_verilog -formal dut.v
read_verilog -formal -DWALKER={walker} -DMAX_LIMIT={limit} -DLAT={lat} -DRWAIT={rwait} -DBOUND={bound} walker_bound.v
prep -top walker_bound
flatten
opt_clean
sat -seq {depth} -prove-asserts -set-assumes -set-init-zero -verify walker_bound
",
        walker = c.walker(),
        limit = c.limit,
        lat = c.lat,
        rwait = c.rwait,
        depth = bound + 3
    );
    yosys(name, &[("dut.v", dut), ("walker_bound.v", &props)], &script).unwrap()
}

/// The committed 8-entry bst unit, and a 4-entry list unit with 2 walkers
/// and one lane (generated here: no list unit is committed).
fn units() -> Vec<(Cfg, String)> {
    let list = TopSpec::new(TopKind::MluUnit(UnitParams {
        cfg: MluConfig { entries: 4, structure: Structure::List, ..MluConfig::default() },
        walkers: 2,
        lanes: 1,
        mlb_latency: 2,
        check_latency: 2,
        heap_path: true,
        miss_slots: MISS_SLOTS,
    }));
    let list_text = list.build().expect("the list unit generates").verilog;
    vec![
        (Cfg { top: "mlu8_bst_k4_l32_p2_c2".into(), limit: 2, lat: 2, rwait: 1 }, emitted("mlu8_bst_k4_l32_p2_c2").unwrap()),
        (Cfg { top: list.name(), limit: 3, lat: 1, rwait: 0 }, list_text),
    ]
}

#[test]
fn walker_ends_every_walk_within_the_bound() {
    for (c, unit) in units() {
        let dut = walker_text(&c, &unit);
        let r = check(&c.walker(), &c, &dut, c.bound());
        eprintln!(
            "{}, limit <= {}, latency <= {}, grant wait <= {}: done within {} cycles: {:?} in {:.1} s",
            c.walker(),
            c.limit,
            c.lat,
            c.rwait,
            c.bound(),
            r.outcome,
            r.seconds
        );
        assert_eq!(r.outcome, Outcome::Proved, "{}\n{}", c.walker(), r.log);
        // Tight: some walk (the longest) needs every one of those cycles,
        // which also shows the environment assumptions admit real walks.
        let r = check(&c.walker(), &c, &dut, c.bound() - 1);
        eprintln!("{}: bound {} fails as it must: {:?} in {:.1} s", c.walker(), c.bound() - 1, r.outcome, r.seconds);
        assert_eq!(r.outcome, Outcome::Failed, "{}: bound - 1 did not fail\n{}", c.walker(), r.log);
    }
}

#[test]
fn walker_mutant_is_caught() {
    // The step-limit test never fires: a cyclic list walks forever.
    let (c, unit) = units().swap_remove(0);
    let original = walker_text(&c, &unit);
    let m = mutate(&original, "else if (last_r_q) begin", "else if (1'b0) begin").unwrap();
    let r = check("walker-mutant", &c, &m, c.bound());
    eprintln!("mutant step limit never reached: {:?} in {:.1} s", r.outcome, r.seconds);
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.log);
}
