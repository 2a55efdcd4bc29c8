//! The MLU as an SM unit as Verilog under Verilator (verif::unit_driver)
//! against the golden model, every output every cycle (1,000,000 requests
//! on each committed unit top, 90-105 s each on a busy 2-core machine); the unit's
//! throughput and miss overlap measured from the Verilog's own outputs; and
//! five Verilog mutants (a missed merge, INVALIDATE no longer cancelling a
//! walk in flight, a wrong lane mask, an uncounted node visit, an MLB fill
//! lookahead that forgets the fill before it), each caught, all five in one
//! Verilator build where a plusarg switches each on.
use hw::generate::tops_for_config;
use sim::config::{MluConfig, Structure, UnitShape};
use sim::fault::Op;
use sim::meta_port::PortParams;
use sim::mlu_unit::{UnitParams, UnitRequest};
use sim::pointer::untag;
use sim::runtime::Runtime;
use std::collections::BTreeSet;
use verif::unit_driver::{UnitCosim, UnitMismatch, UnitRun};
use verif::unit_stimulus::{heap, with_device_heap, RandomRequests, Stream};
use verif::verilator::Top;

/// The parameters of one unit: model side and top, and whether the top is
/// a committed one (whose Verilator build the million-request runs share).
struct Unit {
    params: UnitParams,
    top: Top,
    committed: bool,
}

/// The unit a configuration describes: its model parameters and its top
/// (the one `mlugen generate --unit` builds for it).
fn unit(entries: usize, structure: Structure, walkers: usize, lanes: usize, mlb_latency: usize, check_latency: usize) -> Unit {
    unit_of(MluConfig { entries, structure, unit: Some(UnitShape { walkers, lanes, mlb_latency, check_latency, heap_path: true }), ..MluConfig::default() })
}

fn unit_of(cfg: MluConfig) -> Unit {
    let params = UnitParams::from_config(&cfg).expect("unit is set");
    let spec = tops_for_config(&cfg).unwrap().pop().expect("the unit is the last top");
    let top = Top::committed_or_generated(&spec.name(), || Ok(spec.clone())).unwrap();
    let committed = hw::generate::committed_tops().iter().any(|t| t.name() == spec.name());
    Unit { params, top, committed }
}

/// The Verilator run of `u`. A committed top is built as every RTL build
/// is (C++ at -O2), so its build is shared with its million-request run;
/// the others run a few ten thousand requests, and their C++ is built at
/// -O0, which g++ compiles several times faster (as the mutants' build).
fn start(u: &Unit, seed: u64) -> UnitCosim {
    let cxx_opt = if u.committed { None } else { Some("-O0") };
    UnitCosim::start_with_cxx_opt(&u.top, &u.top.verilog, "", u.params.lanes, seed, cxx_opt, &[]).unwrap()
}

fn check(u: &Unit, run: &UnitRun, what: &str) {
    eprintln!("{} {what}: {} requests, {} responses, {} cycles, {:?}", u.top.name(), run.requests, run.responses, run.cycles, run.counters);
    if let Some(m) = &run.mismatch {
        panic!("{} {what}: {m}", u.top.name());
    }
    assert_eq!(run.responses, run.requests, "{} {what}: every request is answered once", u.top.name());
}

/// Random requests (LOADMETA, warp-wide MEMCHECK.G/S, INVALIDATE and FLUSH
/// racing walks) with random port latency, reordering, errors and
/// back-pressure.
fn random(u: &Unit, stream: Stream, seed: u64, n: u64) {
    let mut cs = start(u, seed);
    let t0 = std::time::Instant::now();
    let run = cs.run_random(&u.params, stream, seed, n).unwrap();
    cs.finish().unwrap();
    eprintln!("{}: {:.1} s", u.top.name(), t0.elapsed().as_secs_f64());
    check(u, &run, "random");
    let c = run.counters;
    assert_eq!(run.requests, n);
    assert!(c.merged > 0 && c.walks > 0 && c.hits > 0 && c.stalls > 0 && c.fills_cancelled > 0, "{c:?}");
}

#[test]
fn unit_verilog_matches_the_model_bst_8_entries_4_walkers_32_lanes() {
    random(&unit(8, Structure::Bst, 4, 32, 1, 1), Stream::Cold, 11, 20_000);
}

#[test]
fn unit_verilog_matches_the_model_list_4_entries_2_walkers_1_lane_two_stage_mlb() {
    random(&unit(4, Structure::List, 2, 1, 2, 1), Stream::Cold, 12, 20_000);
}

/// Two lane-check stages (the lowest faulting lane picked a cycle after the
/// lanes compare), 32 lanes and 1, one and two MLB search stages; the first
/// run is the committed 8-entry top on the stream the mutants below use.
///
/// Test order: libtest starts the tests in name order, so the long runs
/// (`unit_verilog_matches_*`) come before the mutants (`unit_verilog_mutant_*`),
/// which fill the end of the run on both cores.
#[test]
fn unit_verilog_matches_the_model_two_check_stages() {
    let runs = [((8, Structure::Bst, 4, 32, 2, 2), 13, 20_000), ((8, Structure::Bst, 4, 32, 1, 2), 15, 10_000), ((4, Structure::List, 2, 1, 2, 2), 14, 10_000)];
    // Three independent units: on every core.
    sim::parallel::map(&runs, |&((n, s, k, l, m, c), seed, requests)| random(&unit(n, s, k, l, m, c), Stream::Cold, seed, requests));
}

/// The stream that found a slot already done (waiting to replay) being
/// given the result of its walker's next walk (model and RTL both; cycle
/// 29,525 of this run before the fix).
#[test]
fn unit_verilog_matches_the_model_hot_stream_4_entries_2_walkers() {
    random(&unit(4, Structure::Bst, 2, 1, 1, 1), Stream::Hot, 3, 40_000);
}

/// Every committed unit top, 1,000,000 requests of the hot stream.
/// The device heap's window set (sim::device_heap): host allocations and
/// heap chunks, live and freed, side by side; heap lookups read one
/// directory node through the port, and their fills meet present entries
/// (an address in a chunk's canary finds a chunk the MLB holds).
#[test]
fn unit_verilog_matches_the_model_with_the_device_heap() {
    let u = unit(8, Structure::Bst, 4, 32, 2, 2);
    let run = device_heap_run(&u, 41, 100_000, "device heap");
    let c = run.counters;
    assert!(c.walks > 0 && c.fills_present > 0 && c.merged > 0, "{c:?}");
}

/// `n` random requests over host allocations and device-heap chunks (20
/// and 40), the heap window's CSRs written, under a port with random
/// latency, order, back-pressure and errors; checked every cycle.
fn device_heap_run(u: &Unit, seed: u64, n: u64, what: &str) -> UnitRun {
    let (rt, allocs) = with_device_heap(&u.params.cfg, 20, 40, seed).unwrap();
    let mut cs = start(u, seed);
    let port = PortParams { min_latency: 1, max_latency: 60, ready_percent: 80, errors_per_million: 2000, shuffle: true, seed };
    let run = cs.run(&u.params, &rt, RandomRequests::over(allocs, u.params.lanes, seed * 31), n, port).unwrap();
    cs.finish().unwrap();
    check(u, &run, what);
    run
}

/// The unit built without the heap window's lookup path (`_noheap`, the
/// synthesis report's point for the path's cost), the window CSRs written:
/// heap addresses are walked like any other, in the RTL as in the model
/// (sim::mlu_unit's `heap_path`).
#[test]
fn unit_verilog_without_the_heap_path_matches_the_model_with_the_device_heap() {
    let cfg = MluConfig { unit: Some(UnitShape { heap_path: false, ..MluConfig::default().unit_shape() }), ..MluConfig::default() };
    let u = unit_of(cfg);
    assert!(u.top.name().ends_with("_noheap") && !u.committed, "{}", u.top.name());
    let run = device_heap_run(&u, 43, 20_000, "device heap, no heap path");
    let c = run.counters;
    assert!(c.walks > 0 && c.merged > 0, "{c:?}");
}

#[test]
fn unit_verilog_matches_the_model_one_million_requests_mlu8_bst_k4_l32_p2_c2() {
    random(&unit(8, Structure::Bst, 4, 32, 2, 2), Stream::Hot, 21, 1_000_000);
}

#[test]
fn unit_verilog_matches_the_model_one_million_requests_mlu16_bst_k4_l32_p2_c2() {
    random(&unit(16, Structure::Bst, 4, 32, 2, 2), Stream::Hot, 22, 1_000_000);
}

/// Random requests with every lookup a hit once each of `rt`'s allocations
/// has been touched: no INVALIDATE or FLUSH, MEMCHECK.G only with a live
/// allocation's location, LOADMETA only of a pointer inside its allocation
/// (or untagged). Lanes still fault (bounds, stale tags) against the metadata.
fn hits(rt: &Runtime, lanes: usize, seed: u64) -> impl Iterator<Item = UnitRequest> {
    let allocs: Vec<(u64, u64, u64, u64)> = rt.allocations().iter().map(|a| (a.ptr >> 56, a.base, a.size, a.location)).collect();
    let inside = move |p: u64| p >> 56 == 0 || allocs.iter().any(|&(t, b, s, _)| t == p >> 56 && (b..b + s).contains(&untag(p)));
    let locs: Vec<u64> = rt.allocations().iter().map(|a| a.location).collect();
    RandomRequests::new(rt, lanes, seed).filter(move |r| match r.op {
        Op::MemcheckS => true,
        Op::MemcheckG => locs.contains(&r.loc),
        Op::LoadMeta => inside(r.ptrs[0]),
        _ => false,
    })
}

/// One request taken per cycle on an all-hit stream (MLB hits of LOADMETA
/// and warp-wide MEMCHECK.G, tag-0 lanes and MEMCHECK.S in any mix),
/// measured from the Verilog's `req_valid && req_ready`.
#[test]
fn unit_verilog_takes_one_request_per_cycle_on_hits() {
    let u = unit(8, Structure::Bst, 4, 32, 2, 2);
    // A heap of 6 allocations: every one fits in the 8-entry MLB.
    let rt = heap(&u.params.cfg, 6, 21).unwrap();
    let port = PortParams { min_latency: 20, max_latency: 20, ready_percent: 100, errors_per_million: 0, shuffle: false, seed: 21 };
    let mut cs = start(&u, 21);
    let n = 20_000;
    let run = cs.run(&u.params, &rt, hits(&rt, 32, 22), n, port).unwrap();
    cs.finish().unwrap();
    check(&u, &run, "hits");
    // The second half of the stream, well after the MLB is warm.
    let t = &run.taken_at[n as usize / 2..];
    let rate = t.len() as f64 / (t[t.len() - 1] - t[0] + 1) as f64;
    eprintln!("{}: {:.4} requests per cycle over the last {} requests ({} walks in all)", u.top.name(), rate, t.len(), run.counters.walks);
    // Each allocation is walked at most once by range (LOADMETA) and once by
    // location (MEMCHECK.G): no lookup misses once both are in the MLB.
    assert!(run.counters.walks <= 12, "{:?}", run.counters);
    assert!(rate > 0.999, "{rate} requests per cycle");
}

/// The cycles from the first request taken to the last response.
fn span(run: &UnitRun) -> u64 {
    run.answered_at.last().unwrap().1 - run.taken_at[0] + 1
}

/// K LOADMETA misses to K different allocations take about one walk's
/// time, not K walks: the walkers overlap their node reads.
#[test]
fn unit_verilog_overlaps_misses_to_different_blocks() {
    let u = unit(8, Structure::Bst, 4, 32, 2, 2);
    let rt = heap(&u.params.cfg, 40, 31).unwrap();
    let port = PortParams { min_latency: 100, max_latency: 100, ready_percent: 100, errors_per_million: 0, shuffle: false, seed: 31 };
    let mut cs = start(&u, 31);
    let load = |i: usize, id: u32| {
        let a = &rt.allocations()[i];
        UnitRequest { id, op: Op::LoadMeta, mask: 1, ptrs: vec![a.ptr; 32], width: 1, loc: a.location, sbase: 0, ssize: 0 }
    };
    // Four allocations at different depths of the tree.
    let picks = [0, 13, 26, 39];
    let mut alone = vec![];
    for (k, &i) in picks.iter().enumerate() {
        let run = cs.run(&u.params, &rt, std::iter::once(load(i, k as u32)), 1, port).unwrap();
        check(&u, &run, "one miss");
        alone.push((span(&run), run.counters.nodes));
    }
    let run = cs.run(&u.params, &rt, picks.iter().enumerate().map(|(k, &i)| load(i, k as u32)), 4, port).unwrap();
    cs.finish().unwrap();
    check(&u, &run, "four misses");
    let together = span(&run);
    let longest = alone.iter().map(|a| a.0).max().unwrap();
    let sum: u64 = alone.iter().map(|a| a.0).sum();
    eprintln!("{}: misses alone (cycles, nodes): {alone:?}; the four together: {together} cycles", u.top.name());
    assert_eq!(run.counters.walks, 4);
    assert!(together <= longest + 8, "four misses take {together} cycles, the longest alone {longest}");
    assert!(together * 2 < sum, "four misses take {together} cycles, one after another would be {sum}");
}

/// One mutation: the assignment `from` (`lhs = rhs;`, occurring `count`
/// times: the emitted names are the mutation sites, so if the emission
/// changes this fails rather than testing nothing) becomes `to` (same lhs).
struct Edit {
    from: String,
    to: String,
    count: usize,
}

fn edit(from: impl Into<String>, to: impl Into<String>, count: usize) -> Edit {
    Edit { from: from.into(), to: to.into(), count }
}

/// The mutants of mlu8_bst_k4_l32_p2_c2, by name (the plusarg that turns
/// each on in the switched build).
fn mutants() -> Vec<(&'static str, Vec<Edit>)> {
    vec![
        // Walker 1's walk never takes a merged miss: a second walk of its key.
        ("mutant_merge", vec![edit("mergeable_1 = walkers_1_in_flight & ~walkers_1_cancelled;", "mergeable_1 = 1'b0;", 1)]),
        // INVALIDATE/FLUSH no longer cancel the walks in flight: they fill
        // what they read before the free.
        ("mutant_cancel", (0..4).map(|k| edit(format!("walkers_{k}_cancel = maintenance;"), format!("walkers_{k}_cancel = 1'b0;"), 1)).collect()),
        // Lane 3 checked whether or not it is active (an inactive lane
        // reports no pass and no fault).
        ("mutant_mask", vec![edit("checks_mask_3 = p_mask_67_q;", "checks_mask_3 = 1'b1;", 1)]),
        // Walker 3's node visits are left out of cnt_nodes (spec section 6's
        // counters are compared whenever the unit is idle).
        ("mutant_count", vec![edit("visits_4 = visits_3 + one4;", "visits_4 = visits_3;", 1)]),
        // The MLB's registered fill matches (hw::mlb "Fill lookahead") miss
        // the entry the fill of the cycle before wrote: two walkers that
        // found the same node and fill in consecutive cycles put it in the
        // MLB twice.
        ("mutant_lookahead", (0..8).map(|i| edit(format!("fill_match_{i} = fn_q_0_q;"), format!("fill_match_{i} = 1'b0;"), 1)).collect()),
        // The heap lookup reads the directory node of a neighbouring granule (an
        // off-by-one chunk index), in every walker.
        (
            "mutant_heap_node",
            vec![edit("heap_node = heap_dir | (a_r_q & heap_mask);", "heap_node = heap_dir | ((a_r_q & heap_mask) ^ 64'h20);", 4)],
        ),
        // The heap window is never matched: heap addresses walk the structure.
        (
            "mutant_heap_window",
            vec![edit(
                "c_heap_d_comb = heap_path & p_key_range_1_q & (heap_mask_r_q != zero64) & ((p_key_1_q & ~heap_mask_r_q) == heap_base_r_q);",
                "c_heap_d_comb = 1'b0;",
                1,
            )],
        ),
    ]
}

/// `text` with every mutant in, each behind its own switch: the site's
/// assignment takes the mutated value only when the harness was started
/// with `+<name>` (`$test$plusargs`, read once at time 0 into a register
/// declared in the site's module). One build serves every mutant: a build
/// is most of a mutant's time.
fn switched(text: &str) -> String {
    let mut text = text.to_string();
    for (name, edits) in mutants() {
        let mut headers = BTreeSet::new();
        for e in &edits {
            assert_eq!(text.matches(&e.from).count(), e.count, "mutation site `{}` in the Verilog", e.from);
            for (at, _) in text.match_indices(&e.from) {
                let module = text[..at].rfind("\nmodule ").expect("the site is inside a module");
                headers.insert(module + text[module..].find(");\n").expect("the module's header ends") + 3);
            }
        }
        for &at in headers.iter().rev() {
            text.insert_str(at, &format!("    reg {name};\n    initial {name} = $test$plusargs(\"{name}\");\n"));
        }
        for e in &edits {
            let (lhs, rhs) = e.from.strip_suffix(';').and_then(|a| a.split_once(" = ")).expect("`lhs = rhs;`");
            let (lhs_to, rhs_to) = e.to.strip_suffix(';').and_then(|a| a.split_once(" = ")).expect("`lhs = rhs;`");
            assert_eq!(lhs, lhs_to, "a mutant keeps the assignment's target");
            text = text.replace(&e.from, &format!("{lhs} = {name} ? ({rhs_to}) : ({rhs});"));
        }
    }
    text
}

/// The switched build of mlu8_bst_k4_l32_p2_c2's Verilog run with the
/// switches `on` on the random stream of
/// `unit_verilog_matches_the_model_two_check_stages` (which the unmutated
/// Verilog passes), or with `device` on the device-heap stream of
/// `unit_verilog_matches_the_model_with_the_device_heap`.
fn run_switched(on: &[&str], device: bool) -> UnitRun {
    let u = unit(8, Structure::Bst, 4, 32, 2, 2);
    let seed = 13;
    let (rt, allocs) = if device {
        with_device_heap(&u.params.cfg, 20, 40, seed).unwrap()
    } else {
        let rt = heap(&u.params.cfg, 40, seed).unwrap();
        let allocs = rt.allocations().iter().map(|a| (a.ptr, a.size, a.location)).collect();
        (rt, allocs)
    };
    let port = PortParams { min_latency: 1, max_latency: 120, ready_percent: 70, errors_per_million: 2000, shuffle: true, seed };
    // At most 20,000 requests: the C++ at -O0 (about 17 s to build and run
    // here, against 41 s at the RTL builds' -O2).
    let mut cs = UnitCosim::start_with_cxx_opt(&u.top, &switched(&u.top.verilog), "-mutants", 32, seed, Some("-O0"), on).unwrap();
    let run = cs.run(&u.params, &rt, RandomRequests::over(allocs, 32, seed * 31), 20_000, port).unwrap();
    cs.finish().unwrap();
    run
}

/// The mutant `name` on its own: the mismatch it must give.
fn mutant(name: &str) -> UnitMismatch {
    let run = run_switched(&[name], name.starts_with("mutant_heap"));
    let m = run.mismatch.unwrap_or_else(|| panic!("mutant {name} passed {} requests", run.requests));
    eprintln!("{name}: caught at {m}");
    m
}

/// With every switch off the switched build is the design: it passes, so
/// each mismatch below is its mutant's.
#[test]
fn unit_verilog_mutant_build_with_every_mutant_off_matches_the_model() {
    for device in [false, true] {
        let run = run_switched(&[], device);
        if let Some(m) = &run.mismatch {
            panic!("the switched build, every mutant off (device heap: {device}): {m}");
        }
        assert_eq!(run.requests, 20_000);
    }
}

#[test]
fn unit_verilog_mutant_missed_merge_is_caught() {
    let m = mutant("mutant_merge");
    assert!(m.ports.iter().any(|p| p.0.starts_with("mem_req") || p.0 == "req_ready" || p.0 == "resp_valid"), "{m}");
}

#[test]
fn unit_verilog_mutant_invalidate_lost_during_a_walk_is_caught() {
    mutant("mutant_cancel");
}

#[test]
fn unit_verilog_mutant_wrong_lane_mask_is_caught() {
    let m = mutant("mutant_mask");
    assert!(m.ports.iter().any(|p| p.0 == "resp_pass_3" || p.0 == "resp_fault" || p.0 == "resp_lane"), "{m}");
}

#[test]
fn unit_verilog_mutant_uncounted_node_is_caught() {
    let m = mutant("mutant_count");
    assert!(m.ports.iter().any(|p| p.0 == "cnt_nodes"), "{m}");
}

#[test]
fn unit_verilog_mutant_fill_lookahead_forgetting_the_previous_fill_is_caught() {
    mutant("mutant_lookahead");
}

#[test]
fn unit_verilog_mutant_heap_lookup_off_by_one_granule_is_caught() {
    let m = mutant("mutant_heap_node");
    assert!(m.ports.iter().any(|p| p.0.starts_with("mem_req")), "the directory read's address: {m}");
}

#[test]
fn unit_verilog_mutant_heap_window_ignored_is_caught() {
    mutant("mutant_heap_window");
}
