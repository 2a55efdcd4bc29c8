//! MALLOC/FREE in the SM pipeline model (sim::sm_pipeline "Canary allocator
//! unit"): hand-derived cycles from the unit's rule, requester sharing,
//! overflow through a register store, background checks while warps compute.
use sim::canary::heap::CheckMode;
use sim::canary::alloc_unit::{rtl_heap_config, CanaryUnit, UnitTiming, RTL_REQUESTERS};
use sim::expand::{Arg, Instr, Kernel};
use sim::sm_pipeline::{run_kernel_alloc, MluTiming, PipelineConfig};
use sim::trace::Rw;

fn kernel(warps: Vec<Vec<Instr>>) -> Kernel {
    Kernel { op: "k".into(), args: vec![Arg { id: 0, offset: 0, length: 128, rw: Rw::R }], warps, working_set: 1, full_steps: 1 }
}

fn unit(check: CheckMode, rate: u8) -> CanaryUnit {
    CanaryUnit::new(rtl_heap_config(check, 0), RTL_REQUESTERS, rate, UnitTiming::default()).unwrap()
}

const CFG: PipelineConfig =
    PipelineConfig { mem_latency: 10, meta_latency: 10, max_outstanding: 4, host_locations: false, hit_under_miss: false };

fn run(k: &Kernel, u: &mut CanaryUnit) -> sim::sm_pipeline::KernelRun {
    run_kernel_alloc(&CFG, MluTiming::Ideal, k, &[0], None, Some(u), None)
}

#[test]
fn malloc_then_free_takes_the_units_cycles() {
    // 100 B + 16 canary bytes: class 128, requester 0 hashes to page 0 (128 *
    // 38183 = 0 mod 16), empty: P = 1. Issued and granted at 0, Claim at 3,
    // response at 3 + 2*9 + 1 = 22 (mode free). FREE issues and is granted at
    // 22: FSize 24, canaries in hand at 34 and 44, response at 46; ends 47.
    let k = kernel(vec![vec![Instr::Malloc { size: 100, dst: 0 }, Instr::Free { src: 0 }]]);
    let mut u = unit(CheckMode::Free, 1);
    let r = run(&k, &mut u);
    assert_eq!((r.cycles, r.mallocs, r.frees, r.alloc_errors, r.issued), (47, 1, 1, 0, 2));
    assert_eq!(u.cycle(), 47, "the unit is clocked for the kernel's cycles");
    // Mode off: response at Claim + 1 = 4; free: FSize 6, FCommit 7, response 8.
    let mut u = unit(CheckMode::Off, 1);
    assert_eq!(run(&k, &mut u).cycles, 9);
    // An ALU after the free: issues in the response cycle 46, ends at 47.
    let k2 = kernel(vec![vec![Instr::Malloc { size: 100, dst: 0 }, Instr::Free { src: 0 }, Instr::Alu(1)]]);
    let mut u = unit(CheckMode::Free, 1);
    assert_eq!(run(&k2, &mut u).cycles, 47);
}

#[test]
fn warps_sharing_a_requester_wait_for_each_other() {
    let one = vec![Instr::Malloc { size: 40, dst: 0 }];
    let mut u = unit(CheckMode::Free, 1);
    let r8 = run(&kernel(vec![one.clone(); 8]), &mut u);
    let mut u = unit(CheckMode::Free, 1);
    let r9 = run(&kernel(vec![one.clone(); 9]), &mut u);
    assert_eq!((r8.mallocs, r9.mallocs), (8, 9));
    // One op at a time in the unit: 8 mallocs cost 8 x 21 or more cycles.
    assert!(r8.cycles >= 8 * 21, "{}", r8.cycles);
    assert!(r9.cycles > r8.cycles);
    // Exhaustion and a free of 0 are counted as errors, never a panic.
    let mut u = unit(CheckMode::Free, 1);
    let big = vec![Instr::Malloc { size: 240, dst: 0 }, Instr::Malloc { size: 300, dst: 1 }, Instr::Free { src: 1 }];
    let r = run(&kernel(vec![big]), &mut u);
    assert_eq!((r.mallocs, r.alloc_errors), (1, 2));
}

#[test]
fn store_past_the_chunk_is_found_at_free_and_by_the_checker() {
    let body = |off| vec![Instr::Malloc { size: 100, dst: 0 }, Instr::StoreReg { reg: 0, off, width: 1 }, Instr::Free { src: 0 }];
    let mut u = unit(CheckMode::Free, 1);
    let inb = run(&kernel(vec![body(99)]), &mut u);
    let mut u = unit(CheckMode::Free, 1);
    let over = run(&kernel(vec![body(100)]), &mut u);
    assert_eq!((inb.free_overflows, over.free_overflows), (0, 1));
    // Always-on: a warp computing after its overflow lets the checker find it.
    let mut u = unit(CheckMode::Always, 8);
    let k = kernel(vec![vec![Instr::Malloc { size: 100, dst: 0 }, Instr::StoreReg { reg: 0, off: 100, width: 1 }, Instr::Alu(2000), Instr::Free { src: 0 }]]);
    let r = run(&k, &mut u);
    assert!(r.unit_checks > 10 && r.check_overflows > 10 && r.free_overflows == 1, "{r:?}");
}

/// The device heap registered with the unit MLU (module doc, "The device
/// heap"): a tagged canary unit, its directory at `DEFAULT_DIRECTORY_BASE`,
/// compiler mode.
fn heap_run(k: &Kernel, u: &mut CanaryUnit) -> sim::sm_pipeline::KernelRun {
    use sim::config::MluConfig;
    use sim::runtime::{Runtime, RuntimeConfig};
    let mlu = MluConfig::default();
    let mut rt = Runtime::new(RuntimeConfig { mlu: mlu.clone(), ..RuntimeConfig::default() }).unwrap();
    let mut m = sim::sm_pipeline::UnitMlu::new(&mlu, CFG.meta_latency).unwrap();
    m.sync(&mut rt).unwrap();
    let c = u.heap().config();
    let bytes = (c.page_size * c.pages as u64).next_power_of_two();
    m.set_heap_window(sim::mlu::HeapWindow { base: c.base, mask: bytes - 1, dir: sim::device_heap::DEFAULT_DIRECTORY_BASE });
    run_kernel_alloc(&CFG, MluTiming::Unit, k, &[0], Some(&mut rt), Some(u), Some(&mut m))
}

fn tagged_unit() -> CanaryUnit {
    let mut cfg = rtl_heap_config(CheckMode::Free, 0);
    cfg.tag_seed = Some(0xACE1);
    CanaryUnit::new(cfg, RTL_REQUESTERS, 1, UnitTiming::default()).unwrap()
}

#[test]
fn heap_chunks_fault_at_the_access_through_the_pipeline() {
    use sim::fault::FaultCode::{OutOfBounds, TagMismatch, UseAfterFree};
    let chk = |off: u64, width: u8| Instr::MemCheckReg { reg: 0, loc: 4, off, width };
    // malloc(40), its LOADMETA (an ALU between: the register is written at
    // the response), the last 4 bytes, one past the end, one before the
    // start, then free and a dangling check; a second malloc of the same
    // size reuses the chunk (the page's lowest free slot) under a new tag,
    // so the old pointer is stale there.
    let body = vec![
        Instr::Malloc { size: 40, dst: 0 },
        Instr::Alu(1),
        Instr::LoadMetaReg { src: 0, dst: 4 },
        chk(36, 4),
        chk(37, 4),
        chk(u64::MAX, 1),
        Instr::Free { src: 0 },
        chk(0, 4),
        Instr::Malloc { size: 40, dst: 1 },
        Instr::Alu(1),
        chk(0, 4),
        Instr::LoadMetaReg { src: 1, dst: 5 },
        Instr::MemCheckReg { reg: 1, loc: 5, off: 39, width: 1 },
        Instr::Free { src: 1 },
    ];
    let mut u = tagged_unit();
    let r = heap_run(&kernel(vec![body]), &mut u);
    let codes: Vec<_> = r.fault_log.iter().map(|f| f.2).collect();
    assert_eq!(codes, [OutOfBounds, OutOfBounds, UseAfterFree, TagMismatch], "{r:?}");
    assert_eq!((r.mallocs, r.frees, r.alloc_errors, r.mlu_ops), (2, 2, 0, 8));
    // Every fault at the MEMCHECK's fixed latency or a walk later: in order.
    assert!(r.fault_log.windows(2).all(|w| w[0].0 < w[1].0));
    // Each malloc or free shoots down the MLB first: the first malloc claims
    // an empty page (8 INVALIDATEs), the rest one each. Without the heap
    // window nothing is held: the same kernel runs shorter.
    let mut u2 = tagged_unit();
    let plain = run_kernel_alloc(&CFG, MluTiming::Ideal, &kernel(vec![vec![Instr::Malloc { size: 40, dst: 0 }, Instr::Free { src: 0 }]]), &[0], None, Some(&mut u2), None);
    assert!(plain.cycles < r.cycles);
}
