//! Fault injection in the Verilator cosimulation of the MLU as an SM unit
//! (verif::unit_driver, every output every cycle against the golden
//! twin sim::mlu_unit::MluUnit on the same faults). For every fault the
//! result is defined by the model, and each test checks that the Verilog
//! gives it, that every request is answered (nothing hangs), and that the
//! fault was really reached:
//!
//! - very long read latencies (200..1200 cycles) with the port ready 80% of
//!   cycles: responses over 10,000 cycles late, still exact;
//! - transient metadata-memory errors (6% of reads): MEM_ERROR, no fill;
//! - the metadata changing while walks read it: allocations freed while
//!   requests for them are in flight (the walk answers from the node as it
//!   read it: a pass if it read it before the free, USE_AFTER_FREE after;
//!   both sides are reached), and links rewritten mid-walk (to another
//!   node, to itself, to 0, into the middle of a node, to unmapped memory),
//!   which then stay for the rest of the run;
//! - a cyclic list walked to the largest step limit: TRAVERSAL_LIMIT after
//!   the limit's node visits.
//!
//! The top of each configuration is verif::unit_program::unit_top's:
//! the committed mlu8_bst_k4_l32_p2_c2 / mlu16_bst_k4_l32_p2_c2 for a bst
//! in COMPILER mode, one-lane units generated for the rest.
use sim::config::{MluConfig, Mode, Structure};
use sim::fault::{FaultCode, Op};
use sim::meta_port::PortParams;
use sim::mlu_unit::{UnitParams, UnitRequest};
use sim::runtime::{Runtime, SplitMix64};
use sim::scenario::Scenario;
use verif::unit_driver::{Csr, Mutation, Phase, UnitCosim, UnitRun};
use verif::unit_stimulus::{heap, RandomRequests};
use verif::unit_program::{check_scenario, unit_top};

fn config(entries: usize, structure: Structure, mode: Mode) -> MluConfig {
    MluConfig { entries, structure, mode, ..MluConfig::default() }
}

/// Run `phases` (from `next`) on the unit of `cfg` over `rt`, the step
/// limit `limit`, the port `port`; panics on a mismatch or an unanswered
/// request.
fn run(cfg: &MluConfig, rt: &mut Runtime, limit: u32, port: PortParams, next: impl FnMut(&mut Runtime, &UnitRun) -> anyhow::Result<Option<Phase>>) -> (UnitRun, UnitParams) {
    let (top, params) = unit_top(cfg).unwrap();
    let mut cs = UnitCosim::start(&top, &top.verilog, "", params.lanes, port.seed).unwrap();
    let csrs = [Csr::Mode(cfg.mode), Csr::StepLimit(limit), Csr::Root(rt.root())];
    let t = std::time::Instant::now();
    let run = cs.run_phases(&params, rt, &csrs, port, next).unwrap();
    cs.finish().unwrap();
    if let Some(m) = &run.mismatch {
        panic!("{} {}: {m}", top.name(), cfg.mode.name());
    }
    assert_eq!(run.responses, run.requests, "{}: every request is answered", top.name());
    println!("{} {}: {} requests, {} cycles, {:.1} s, {:?}", top.name(), cfg.mode.name(), run.requests, run.cycles, t.elapsed().as_secs_f64(), run.counters);
    (run, params)
}

/// `n` random requests (verif::unit_driver::RandomRequests) in one phase.
fn random_phase(rt: &Runtime, lanes: usize, seed: u64, n: usize) -> impl FnMut(&mut Runtime, &UnitRun) -> anyhow::Result<Option<Phase>> {
    let mut reqs: Option<Vec<UnitRequest>> = Some(RandomRequests::new(rt, lanes, seed).take(n).collect());
    move |_, _| Ok(reqs.take().map(|requests| Phase { requests, ..Phase::default() }))
}

/// Each answer's latency: request k of the run was taken at `taken_at[k]`
/// with id k mod 2^16 (RandomRequests' ids), answered at its id's cycle.
fn longest_latency(run: &UnitRun) -> u64 {
    assert!(run.requests <= 1 << 16, "ids repeat");
    let mut taken = vec![0; run.taken_at.len()];
    taken.copy_from_slice(&run.taken_at);
    run.answered_at.iter().map(|&(id, at)| at - taken[id as usize]).max().unwrap_or(0)
}

fn count(run: &UnitRun, f: FaultCode) -> usize {
    run.answers.iter().filter(|a| a.fault == f.bits()).count()
}

#[test]
fn long_latencies_and_ready_held_low() {
    for (structure, seed) in [(Structure::Bst, 81), (Structure::List, 82)] {
        for mode in [Mode::Compiler, Mode::Hwonly] {
            let cfg = config(8, structure, mode);
            let mut rt = heap(&cfg, 40, seed).unwrap();
            let port = PortParams { min_latency: 200, max_latency: 1200, ready_percent: 80, errors_per_million: 0, shuffle: true, seed };
            let lanes = unit_top(&cfg).unwrap().1.lanes;
            let phases = random_phase(&rt, lanes, seed, 1500);
            let (r, _) = run(&cfg, &mut rt, 4096, port, phases);
            let longest = longest_latency(&r);
            println!("  longest response {longest} cycles");
            assert!(longest > 10_000, "the longest response took only {longest} cycles");
            assert!(r.counters.walks > 100, "{:?}", r.counters);
        }
    }
}

#[test]
fn transient_metadata_memory_errors() {
    for (entries, structure, seed) in [(8, Structure::Bst, 83), (16, Structure::List, 84)] {
        for mode in [Mode::Compiler, Mode::Hwonly] {
            let cfg = config(entries, structure, mode);
            let mut rt = heap(&cfg, 40, seed).unwrap();
            let port = PortParams { min_latency: 1, max_latency: 40, ready_percent: 90, errors_per_million: 60_000, shuffle: true, seed };
            let lanes = unit_top(&cfg).unwrap().1.lanes;
            let phases = random_phase(&rt, lanes, seed, 30_000);
            let (r, _) = run(&cfg, &mut rt, 4096, port, phases);
            let errors = count(&r, FaultCode::MemError);
            println!("  {errors} MEM_ERROR answers");
            assert!(errors > 100, "{errors} MEM_ERROR answers");
            assert_eq!(r.requests, 30_000);
        }
    }
}

/// A free in flight: the allocation (its location and range) and the
/// cycle of the run at which its node became FREED.
struct InFlightFree {
    loc: u64,
    range: (u64, u64),
    at: u64,
}

#[test]
fn frees_and_link_rewrites_while_a_walk_reads_the_structure() {
    let (mut uaf, mut pass, mut frees, mut links) = (0, 0, 0, 0);
    for (entries, structure, seed) in [(8, Structure::Bst, 85), (8, Structure::List, 86), (16, Structure::Bst, 87)] {
        for mode in [Mode::Compiler, Mode::Hwonly] {
            let cfg = config(entries, structure, mode);
            let mut rt = heap(&cfg, 40, seed).unwrap();
            let lanes = unit_top(&cfg).unwrap().1.lanes;
            let port = PortParams { min_latency: 5, max_latency: 60, ready_percent: 90, errors_per_million: 0, shuffle: true, seed };
            let mut stream = RandomRequests::new(&rt, lanes, seed);
            let mut rng = SplitMix64(seed);
            let mut sent: Vec<UnitRequest> = vec![];
            let mut freed: Vec<InFlightFree> = vec![];
            // Phases of 40 requests, each with a free of a live allocation
            // and a link rewrite at random cycles while they run; a free's
            // INVALIDATE (and a new ROOT) go first in the next phase.
            let phases = |rt: &mut Runtime, run: &UnitRun| -> anyhow::Result<Option<Phase>> {
                if sent.len() >= 5_000 {
                    return Ok(None);
                }
                let mut phase = Phase::default();
                for op in rt.take_host_ops() {
                    match op {
                        sim::runtime::HostOp::Root(r) => phase.csrs.push(Csr::Root(r)),
                        sim::runtime::HostOp::Invalidate(loc) => {
                            let mut r = stream.next().unwrap();
                            (r.op, r.loc) = (Op::Invalidate, loc);
                            phase.requests.push(r);
                        }
                        sim::runtime::HostOp::Flush => {}
                    }
                }
                let live: Vec<_> = rt.allocations().iter().filter(|a| a.state == sim::runtime::AllocState::Live).map(|a| (a.ptr, a.base, a.size, a.location)).collect();
                phase.requests.extend(stream.by_ref().take(40));
                if live.len() > 4 {
                    let (ptr, base, size, loc) = live[(rng.next_u64() % live.len() as u64) as usize];
                    let at = 1 + rng.next_u64() % 60;
                    phase.mutations.push((at, Mutation::Free { ptr }));
                    freed.push(InFlightFree { loc, range: (base, base + size), at: run.cycles + at });
                    frees += 1;
                    let (_, _, _, victim) = live[(rng.next_u64() % live.len() as u64) as usize];
                    let (_, _, _, other) = live[(rng.next_u64() % live.len() as u64) as usize];
                    let value = match rng.next_u64() % 5 {
                        0 => other,
                        1 => victim,
                        2 => 0,
                        3 => other + 8,
                        _ => 0x7ff0_0000_0000,
                    };
                    phase.mutations.push((1 + rng.next_u64() % 60, Mutation::Link { loc: victim, link: (rng.next_u64() % 2) as usize, value }));
                    links += 1;
                }
                sent.extend(phase.requests.iter().cloned());
                Ok(Some(phase))
            };
            let (r, _) = run(&cfg, &mut rt, 128, port, phases);
            // Requests for a freed allocation taken before its free and
            // answered after it: both outcomes of the race.
            let answer: std::collections::HashMap<u32, (u64, u8)> = r.answered_at.iter().zip(&r.answers).map(|(&(id, at), a)| (id, (at, a.fault))).collect();
            for (k, q) in sent.iter().enumerate() {
                let Some(&taken) = r.taken_at.get(k) else { continue };
                let Some(&(at, fault)) = answer.get(&q.id) else { continue };
                let targets = |f: &InFlightFree| match (q.op, mode) {
                    (Op::MemcheckG, Mode::Compiler) => q.loc == f.loc && q.mask & 1 == 1 && sim::pointer::tag(q.ptrs[0]) != 0,
                    (Op::MemcheckG, Mode::Hwonly) => sim::pointer::tag(q.ptrs[0]) != 0 && (f.range.0..f.range.1).contains(&sim::pointer::untag(q.ptrs[0])),
                    _ => false,
                };
                if freed.iter().any(|f| targets(f) && taken < f.at && at > f.at) {
                    if fault == FaultCode::UseAfterFree.bits() {
                        uaf += 1;
                    } else if fault == FaultCode::None.bits() {
                        pass += 1;
                    }
                }
            }
            assert!(r.requests >= 5_000, "{}", r.requests);
        }
    }
    println!("{frees} frees and {links} link rewrites mid-run; requests in flight across a free: {uaf} USE_AFTER_FREE, {pass} passes");
    assert!(frees > 100 && links > 100, "{frees} frees, {links} link rewrites");
    // Both sides of the race were reached.
    assert!(uaf > 0 && pass > 0, "mid-walk frees: {uaf} USE_AFTER_FREE, {pass} passes");
}

/// A 12-node list whose last node links back to the head: a wild pointer's
/// lookup walks the cycle until the step limit, at the largest limit
/// (65535) in both modes and at 4096 (the scenario check's port, 1..30
/// cycles a read).
#[test]
fn cyclic_list_is_cut_at_the_step_limit() {
    let mut events: Vec<String> = (0..12).map(|i| format!(r#"{{"op": "malloc", "name": "a{i}", "size": 256}}"#)).collect();
    // New nodes go to the head: a11 -> a10 -> .. -> a0; a0 -> a11.
    events.push(r#"{"op": "corrupt_link", "name": "a0", "link": 0, "to": "a11"}"#.into());
    events.push(r#"{"op": "flush"}"#.into());
    events.push(r#"{"op": "access", "addr": "0x2a007f0100000000", "width": 4, "kind": "load", "expect": "TRAVERSAL_LIMIT"}"#.into());
    events.push(r#"{"op": "access", "ptr": "a5", "offset": 0, "width": 4, "kind": "load", "expect": "NONE"}"#.into());
    for (limit, mode) in [(65535u32, "compiler"), (65535, "hwonly"), (4096, "hwonly")] {
        let json = format!(
            r#"{{"name": "cyclic list, limit {limit}", "mode": "{mode}", "structure": "list", "mlb_entries": 8, "step_limit": {limit}, "events": [{}]}}"#,
            events.join(",")
        );
        let sc = Scenario::from_json_str(&json).unwrap();
        let t = std::time::Instant::now();
        let v = check_scenario(&sc).unwrap();
        if let Some(m) = &v.mismatch {
            panic!("{}: {m}", sc.name);
        }
        assert!(v.differences.is_empty(), "{:?}", v.differences);
        let faults: Vec<&str> = v.outcome.results.iter().map(|r| r.fault).collect();
        println!("{} {mode} on {}: {faults:?} ({:.1} s)", sc.name, v.top, t.elapsed().as_secs_f64());
        assert_eq!(faults, ["TRAVERSAL_LIMIT", "NONE"]);
        // The wild lookup visited exactly `limit` nodes (the unit's node
        // counter, compared with the model's every idle cycle).
        assert!(v.counters.nodes >= limit as u64 && v.counters.nodes <= limit as u64 + 40, "{} nodes", v.counters.nodes);
    }
}
