//! The canary unit's cycle-level model (`sim::canary::alloc_unit`) against the
//! emitted Verilog under Verilator, in lockstep on the random workload of 8
//! requesters (malloc/free, bad requests, overflow stores): the grant,
//! response and background-check cycle of every operation, and its result,
//! are the RTL's (zero mismatches), in all three check modes and at memory
//! latencies below and above the SipHash latency; a model constant off by
//! one is caught.
use hw::canary::alloc_unit::CanaryParams;
use sim::canary::heap::CheckMode;
use sim::canary::siphash::CanaryKey;
use sim::canary::alloc_unit::UnitTiming;
use verif::canary_driver::CanaryVerilator;
use testbench::canary_timing::run_lockstep;
use verif::verilator::{verilog_out_dir, Top};

const KEY: CanaryKey = CanaryKey { k0: 0x243f_6a88_85a3_08d3, k1: 0x1319_8a2e_0370_7344 };

fn top(p: &CanaryParams) -> Top {
    if *p == CanaryParams::default() {
        return Top::load(&verilog_out_dir().expect("the workspace has verilog_out/"), "canary_alloc").unwrap();
    }
    let tags = if p.tag_seed.is_some() { "_tagged" } else { "" };
    let name = format!("canary_alloc_{}_s{}{tags}", p.check.name(), p.slack);
    Top::from(hw::generate::canary_alloc(&name, p).unwrap())
}

#[test]
fn model_cycles_equal_rtl_cycles_for_every_operation() {
    let always = CanaryParams::default();
    let free = CanaryParams { check: CheckMode::Free, slack: 16, ..CanaryParams::default() };
    let off = CanaryParams { check: CheckMode::Off, ..CanaryParams::default() };
    // Tagged (registered with the MLU): a stale free is refused at free's decode.
    let tagged = CanaryParams { check: CheckMode::Free, slack: 8, tag_seed: Some(0x1D0F), ..CanaryParams::default() };
    // The runs are independent: on every core.
    let runs = [
        (&always, 21, 6, 1, 100_000),
        (&always, 22, 2, 12, 100_000),
        (&free, 23, 4, 1, 50_000),
        (&off, 24, 4, 3, 50_000),
        (&tagged, 25, 4, 2, 50_000),
    ];
    sim::parallel::map(&runs, |&(p, seed, rate, latency, cycles)| {
        let t = top(p);
        let mut dut = CanaryVerilator::new(&t, p, KEY, rate, latency, seed).unwrap();
        let timing = UnitTiming { mem_latency: latency, ..UnitTiming::default() };
        let st = run_lockstep(&mut dut, p, KEY, rate, timing, seed, cycles).unwrap();
        let (m, f) = st.mean_cycles();
        eprintln!("{} latency {latency} rate {rate}/256: {st:?}; mean malloc {m:.2} free {f:.2} cycles", p.check.name());
        assert!(st.mallocs_ok > 300 && st.frees_ok > 250 && st.responses > 1000, "{st:?}");
        if p.check == CheckMode::Always {
            assert!(st.checks > 100, "{st:?}");
        }
        if p.check.canaries() {
            assert!(st.stores > 50, "{st:?}");
        }
    });
}

#[test]
fn a_wrong_model_constant_is_caught() {
    let p = CanaryParams::default();
    let t = top(&p);
    for (timing, latency) in [
        (UnitTiming { siphash_latency: 10, mem_latency: 1 }, 1),
        (UnitTiming { siphash_latency: 8, mem_latency: 1 }, 1),
        (UnitTiming { siphash_latency: 9, mem_latency: 1 }, 12),
    ] {
        let mut dut = CanaryVerilator::new(&t, &p, KEY, 4, latency, 5).unwrap();
        let err = run_lockstep(&mut dut, &p, KEY, 4, timing, 5, 20_000).expect_err("the wrong constant must mismatch");
        assert!(err.contains("cycle") && (err.contains("response") || err.contains("grant") || err.contains("check")), "{err}");
        eprintln!("{timing:?} against RTL latency {latency}: {err}");
    }
}
