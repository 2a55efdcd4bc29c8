//! Verilator cosimulation of the committed `canary_alloc` top
//! (verilog_out/canary_alloc.v: always-on checking, slack 0) against the
//! golden model: the random workload of 8 requesters (malloc/free, bad
//! requests, overflow stores), every response and every background check
//! compared, zero mismatches; plus a mutant of the Verilog (the page hash's
//! k_mp term dropped) that the same comparison must catch. The unit built
//! with tags (the registration with the MLU) likewise, its directory port
//! compared with the model's every quiet cycle, and two mutants of the
//! directory (a wrong size class, a chunk off by one granule) caught.
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

/// The unit built with tags (hw::canary::tag_table: the registration with
/// the MLU), its Verilog under Verilator against the tagged golden heap:
/// results, stale frees, and the directory port every quiet cycle.
fn tagged_top(p: &CanaryParams) -> Top {
    Top::from(hw::generate::canary_alloc("canary_alloc_tagged", p).unwrap())
}

fn tagged_params() -> CanaryParams {
    CanaryParams { check: sim::canary::heap::CheckMode::Free, slack: 8, tag_seed: Some(0xACE1), ..CanaryParams::default() }
}

#[test]
fn tagged_verilog_matches_model_with_the_directory() {
    let p = tagged_params();
    let top = tagged_top(&p);
    let mut dut = CanaryVerilator::new(&top, &p, KEY, 4, 2, 31).unwrap();
    let st = run_workload(&mut dut, &p, KEY, 4, 31, 200_000).unwrap();
    eprintln!("tagged: {st:?}");
    assert!(st.mallocs_ok > 2000 && st.frees_ok > 1500 && st.codes[6] > 50, "{st:?}");
    assert!(st.dir_compares > 5000 && st.dir_hits > 2000, "{st:?}");
}

/// A mutant of the directory must be caught by the same comparison: the
/// chunk of a granule taken under the wrong size class (the 64-byte class's
/// mask is the 128-byte class's), or the chunk index off by one granule.
#[test]
fn tagged_directory_mutants_are_caught() {
    let p = tagged_params();
    let top = tagged_top(&p);
    let sites = [
        ("localparam  first_mask_1 = 7'b1111110;", "localparam  first_mask_1 = 7'b1111100;", "wrong class"),
        ("dir_chunk = dir_first;", "dir_chunk = dir_first + 7'h1;", "off by one chunk"),
    ];
    for (from, to, what) in sites {
        assert_eq!(top.verilog.matches(from).count(), 1, "mutation site `{from}` in:\n{}", top.verilog.lines().filter(|l| l.contains("first_mask") || l.contains("dir_chunk =")).collect::<Vec<_>>().join("\n"));
        let mut m = top.clone();
        m.verilog = m.verilog.replace(from, to);
        let mut dut = CanaryVerilator::new(&m, &p, KEY, 4, 2, 32).unwrap();
        let err = run_workload(&mut dut, &p, KEY, 4, 32, 200_000).expect_err("the mutant must mismatch");
        assert!(err.contains("directory"), "{what}: {err}");
        eprintln!("{what}: {err}");
    }
}
