//! The RTL MLU unit (hw::mlu_unit::MluUnit, rust-hdl simulation, clock
//! driven by hand) against its golden twin sim::mlu_unit::MluUnit, every
//! output compared every cycle: `req_ready`, the response (id, op, pass
//! mask, fault, lane, location, metadata, untagged addresses) and the
//! metadata port request. Random request streams (LOADMETA, warp-wide and
//! scalar MEMCHECK.G/S, INVALIDATE, FLUSH) against a runtime-built heap, the
//! port with random latency, reordering and back-pressure.
use hw::mlu_unit::MluUnit as Rtl;
use rust_hdl::prelude::*;
use sim::config::{MluConfig, Structure};
use sim::meta_port::{PortParams, PortSim};
use sim::mlu_unit::{MluUnit, UnitIn, UnitParams, UnitRequest};
use verif::unit_stimulus::{heap, RandomRequests};
use std::collections::VecDeque;

fn settle<const N: usize, const IW: usize, const L: usize, const LW: usize>(u: &mut Rtl<N, IW, L, LW>) {
    assert!(simulate(u, 500), "unit did not settle");
}

fn clock<const N: usize, const IW: usize, const L: usize, const LW: usize>(u: &mut Rtl<N, IW, L, LW>) {
    u.clock.next = true.into();
    settle(u);
    u.clock.next = false.into();
    settle(u);
}

/// The metadata port: latency 1..60, ready 70% of cycles, reordering.
fn port(seed: u64) -> PortParams {
    PortParams { min_latency: 1, max_latency: 60, ready_percent: 70, shuffle: true, seed, ..Default::default() }
}

/// `n` requests of verif::unit_driver::RandomRequests on a heap of 40
/// allocations, the port `port`.
fn run<const N: usize, const IW: usize, const L: usize, const LW: usize>(
    structure: Structure,
    walkers: usize,
    (mlb_latency, check_latency): (usize, usize),
    seed: u64,
    n: u32,
    port: PortParams,
) {
    let cfg = MluConfig { entries: N, structure, ..MluConfig::default() };
    let rt = heap(&cfg, 40, seed).unwrap();
    let p = UnitParams { cfg, walkers, lanes: L, mlb_latency, check_latency, heap_path: true, miss_slots: 8 };
    let mut model = MluUnit::new(&p).unwrap();
    model.set_root(rt.root());
    let mut u = Box::new(Rtl::<N, IW, L, LW>::new(&p));
    u.connect_all();
    u.reset.next = true;
    settle(&mut u);
    clock(&mut u);
    u.reset.next = false;
    u.csr_we.next = true;
    u.csr_addr.next = 2_u64.into();
    u.csr_data.next = rt.root().into();
    settle(&mut u);
    clock(&mut u);
    u.csr_we.next = false;
    let mut port = PortSim::new(port);
    let mut queue: VecDeque<UnitRequest> = RandomRequests::new(&rt, L, seed * 31).take(n as usize).collect();
    let mut answered = 0u32;
    for cyc in 0..2_000_000u64 {
        if queue.is_empty() && model.is_idle() {
            break;
        }
        // Inputs that do not depend on this cycle's outputs.
        let req = queue.front();
        u.req_valid.next = req.is_some();
        if let Some(r) = req {
            u.req_id.next = (r.id as u64).into();
            u.req_op.next = (r.op.bits() as u64).into();
            for i in 0..L {
                u.req_mask[i].next = r.mask >> i & 1 == 1;
                u.req_ptr[i].next = r.ptrs[i].into();
            }
            u.req_width.next = (r.width as u64).into();
            u.req_loc.next = r.loc.into();
            u.req_sbase.next = r.sbase.into();
            u.req_ssize.next = r.ssize.into();
        }
        let out = model.outputs();
        let (ready, resp) = port.cycle(rt.memory(), out.mem_req.as_ref());
        u.mem_req_ready.next = ready;
        u.mem_resp_valid.next = resp.is_some();
        if let Some(r) = &resp {
            let d = r.data.unwrap_or([0; 4]);
            u.mem_resp_id.next = (r.id as u64).into();
            u.mem_resp_error.next = r.data.is_none();
            u.mem_resp_base.next = d[0].into();
            u.mem_resp_size_tag.next = d[1].into();
            u.mem_resp_link0.next = d[2].into();
            u.mem_resp_link1.next = d[3].into();
        }
        settle(&mut u);
        let ctx = format!("N={N} L={L} K={walkers} m={mlb_latency} c={check_latency} {structure:?} cycle {cyc}");
        assert_eq!(u.req_ready.val(), out.req_ready, "{ctx}: req_ready");
        assert_eq!(u.mem_req_valid.val(), out.mem_req.is_some(), "{ctx}: mem_req_valid");
        if let Some(m) = out.mem_req {
            assert_eq!(u.mem_req_id.val().to_u64(), m.id as u64, "{ctx}: mem_req_id");
            assert_eq!(u.mem_req_node.val().to_u64(), m.addr >> 5, "{ctx}: mem_req_node");
        }
        assert_eq!(u.resp_valid.val(), out.resp.is_some(), "{ctx}: resp_valid ({:?})", out.resp);
        if let Some(r) = &out.resp {
            let ctx = format!("{ctx}: response to {} ({:?})", r.id, r.op);
            assert_eq!(u.resp_id.val().to_u64(), r.id as u64, "{ctx}: id");
            assert_eq!(u.resp_op.val().to_u64(), r.op.bits() as u64, "{ctx}: op");
            for i in 0..L {
                assert_eq!(u.resp_pass[i].val(), r.pass >> i & 1 == 1, "{ctx}: pass[{i}]");
                assert_eq!(u.resp_addr[i].val().to_u64(), r.addrs[i], "{ctx}: addr[{i}]");
            }
            assert_eq!(u.resp_fault.val().to_u64(), r.fault.bits() as u64, "{ctx}: fault");
            assert_eq!(u.resp_lane.val().to_u64(), r.lane as u64, "{ctx}: lane");
            assert_eq!(u.resp_loc.val().to_u64(), r.loc, "{ctx}: loc");
            assert_eq!(u.resp_meta_valid.val(), r.meta.is_some(), "{ctx}: meta_valid");
            if let Some(m) = r.meta {
                assert_eq!((u.resp_base.val().to_u64(), u.resp_size.val().to_u64(), u.resp_tag.val().to_u64()), (m.base, m.size, m.tag as u64), "{ctx}: meta");
            }
            answered += 1;
        }
        clock(&mut u);
        let taken = out.req_ready && req.is_some();
        model.tick(UnitIn { req, mem_req_ready: ready, mem_resp: resp }).unwrap();
        if taken {
            queue.pop_front();
        }
    }
    assert!(queue.is_empty() && model.is_idle(), "not drained");
    let c = model.counters();
    eprintln!("N={N} L={L} K={walkers} m={mlb_latency} c={check_latency} {structure:?}: {answered} responses, {} cycles, {c:?}", model.cycle());
    assert_eq!(answered, n);
    assert!(c.merged > 0 && c.walks > 0 && c.hits > 0 && c.stalls > 0, "{c:?}");
}

#[test]
fn unit_matches_the_model_32_lanes_bst() {
    run::<8, 3, 32, 5>(Structure::Bst, 4, (1, 1), 1, 1500, port(1));
}

#[test]
fn unit_matches_the_model_1_lane_list_two_stage_mlb() {
    run::<4, 2, 1, 1>(Structure::List, 2, (2, 1), 2, 1500, port(2));
}

#[test]
fn unit_matches_the_model_one_walker() {
    run::<2, 1, 1, 1>(Structure::Bst, 1, (1, 1), 3, 1000, port(3));
}

#[test]
fn unit_matches_the_model_two_check_stages() {
    run::<8, 3, 32, 5>(Structure::Bst, 4, (2, 2), 4, 1500, port(4));
    run::<4, 2, 1, 1>(Structure::List, 2, (1, 2), 5, 1000, port(5));
}

