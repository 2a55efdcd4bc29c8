//! Verilator cosimulation of the committed `canary_alloc` top
//! (verilog_out/canary_alloc.v: always-on checking, slack 0) against the
//! golden model: the random workload of 8 requesters (malloc/free, bad
//! requests, overflow stores), every response and every background check
//! compared, zero mismatches; plus a mutant of the Verilog (the page hash's
//! k_mp term dropped) that the same comparison must catch.
use hw::canary::alloc_unit::CanaryParams;
use sim::canary::siphash::CanaryKey;
use verif::canary_driver::{run_workload, CanaryVerilator};
use verif::verilator::{verilog_out_dir, Top};

const KEY: CanaryKey = CanaryKey { k0: 0x243f_6a88_85a3_08d3, k1: 0x1319_8a2e_0370_7344 };

#[test]
fn canary_alloc_verilog_matches_model() {
    let top = Top::load(&verilog_out_dir().expect("the workspace has verilog_out/"), "canary_alloc").unwrap();
    let p = CanaryParams::default();
    // The two runs are independent: side by side.
    sim::parallel::map(&[(11, 2, 1), (12, 6, 4)], |&(seed, rate, latency)| {
        let t = std::time::Instant::now();
        let mut dut = CanaryVerilator::new(&top, &p, KEY, rate, latency, seed).unwrap();
        let st = run_workload(&mut dut, &p, KEY, rate, seed, 400_000).unwrap();
        let (m, f) = st.mean_rtl_cycles();
        eprintln!("seed {seed} rate {rate}/256 latency {latency}: {st:?} in {:.1} s; mean RTL cycles malloc {m:.2} free {f:.2}", t.elapsed().as_secs_f64());
        assert!(st.mallocs_ok > 1000 && st.frees_ok > 800 && st.checks > 500, "{st:?}");
        assert!(st.free_overflows > 50 && st.check_overflows > 50, "{st:?}");
        assert!(st.codes.iter().all(|&n| n > 0), "every result code occurs: {st:?}");
    });
}

#[test]
fn hash_mutant_is_caught() {
    let mut top = Top::load(&verilog_out_dir().expect("the workspace has verilog_out/"), "canary_alloc").unwrap();
    let p = CanaryParams::default();
    // Requester 1's k_mp term (1 * 17497 mod 16 = 9) off by one.
    let want = (17497u64 & 15) as u8;
    let line = format!("localparam  req_hash_1 = 4'h{want:x};");
    assert!(top.verilog.contains(&line), "the hash table constant is where expected");
    top.verilog = top.verilog.replace(&line, &format!("localparam  req_hash_1 = 4'h{:x};", (want + 1) % 16));
    let mut dut = CanaryVerilator::new(&top, &p, KEY, 2, 1, 5).unwrap();
    let err = run_workload(&mut dut, &p, KEY, 2, 5, 100_000).expect_err("the mutant must mismatch");
    assert!(err.contains("malloc") && err.contains("from 1"), "first mismatch is requester 1's malloc: {err}");
}
