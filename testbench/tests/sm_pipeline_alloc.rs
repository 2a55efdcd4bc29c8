//! The RTL SM pipeline with the canary allocator unit
//! (`hw::sm_pipeline_alloc`, rust-hdl simulation): random kernels of several
//! warps mixing MALLOC/FREE (zero and oversize sizes, double and wild frees)
//! with ALU instructions, loads and stores, every grant, response, write back
//! and background check compared with the golden heap model
//! (`sim::canary::heap::Heap`, fed in the RTL's grant order with warp w's
//! requester w mod 8); directed kernels for values known independently of
//! the model (the first pointer, the blocking rule); a mutant with the
//! warp-to-requester mapping off by one. The device heap registered with
//! the MLU: random kernels that malloc, LOADMETA, MEMCHECK.G (in bounds,
//! past the end, before the start, after free, stale after reuse) and free,
//! against `sim::sm_pipeline` with both unit models, fault by fault and
//! cycle by cycle; two directory mutants (a wrong size class, a chunk index
//! off by one) caught.
use hw::canary::alloc_unit::{CanaryParams, REQUESTERS, RES_DOUBLE_FREE, RES_EXHAUSTED, RES_NOT_A_CHUNK, RES_OK, RES_OUTSIDE_HEAP};
use hw::sm_pipeline_alloc::SmPipelineAlloc;
use rust_hdl::prelude::*;
use sim::runtime::SplitMix64;
use sim::canary::heap::CheckMode;
use sim::canary::siphash::CanaryKey;
use sim::config::MluConfig;
use sim::canary::alloc_unit::{CanaryUnit, UnitTiming};
use sim::expand::{Instr, Kernel};
use sim::sm_pipeline::{run_kernel_alloc, MluTiming, PipelineConfig};
use sim::pointer::NO_META;
use std::time::Instant;
use testbench::sm_pipeline_alloc_driver::{random_kernel, wild_registers, AOp, AllocPipeConfig, KernelOut, SmPipelineAllocDriver, WILD_REG0};

const KEY: CanaryKey = CanaryKey { k0: 0x0706_0504_0302_0100, k1: 0x0f0e_0d0c_0b0a_0908 };

type Drv4 = SmPipelineAllocDriver<4, 2, 8, 3, 16, 4>;
type Drv8 = SmPipelineAllocDriver<8, 3, 8, 3, 16, 4>;

fn cfg(check: CheckMode, slack: u64, rate: u8, heap_latency: u64, data_latency: u64) -> AllocPipeConfig {
    AllocPipeConfig {
        mlu: MluConfig { entries: 8, ..MluConfig::default() },
        data_latency,
        max_outstanding: 4,
        canary: CanaryParams { check, slack, ..CanaryParams::default() },
        key: KEY,
        rate,
        heap_latency,
        heap_dir: None,
    }
}

/// `kernels` random kernels of `len` instructions per warp; returns the
/// kernel cycles.
fn random_run<const W: usize, const WW: usize>(
    d: &mut SmPipelineAllocDriver<W, WW, 8, 3, 16, 4>,
    c: &AllocPipeConfig,
    seed: u64,
    kernels: usize,
    len: usize,
) -> Result<Vec<u64>, String> {
    let mut rng = SplitMix64(seed);
    for w in 0..W {
        for (j, v) in wild_registers(&mut rng, c.canary.base).into_iter().enumerate() {
            d.regs.insert((w, WILD_REG0 + j as u16), v);
        }
    }
    let max = 256 - c.canary.overhead();
    let mut cycles = Vec::new();
    for _ in 0..kernels {
        let k = random_kernel(&mut rng, W, len, max, 250);
        cycles.push(d.run_kernel(&k)?.cycles);
    }
    Ok(cycles)
}

#[test]
fn random_kernels_always_mode_match_heap_model() {
    for (seed, heap_latency, data_latency, rate) in [(1, 1, 4, 4), (2, 3, 9, 6)] {
        let t = Instant::now();
        let c = cfg(CheckMode::Always, 0, rate, heap_latency, data_latency);
        let mut d = Drv4::new(&c, |_| {}).unwrap();
        let cycles = random_run(&mut d, &c, seed, 8, 40).unwrap();
        let st = d.stats().clone();
        eprintln!("4 warps seed {seed}: kernel cycles {cycles:?}, {} sim cycles in {:.1?}: {st:?}", d.cycle, t.elapsed());
        assert!(st.mallocs_ok > 60 && st.frees_ok > 50 && st.checks > 10, "{st:?}");
        // Zero, oversize, outside, not-a-chunk, double free all occur.
        for code in [1, 2, RES_OUTSIDE_HEAP, RES_NOT_A_CHUNK, RES_DOUBLE_FREE] {
            assert!(st.codes[code as usize] > 0, "result code {code} never occurred: {st:?}");
        }
    }
}

#[test]
fn random_kernels_8_warps_free_mode_with_slack_match_heap_model() {
    let t = Instant::now();
    let c = cfg(CheckMode::Free, 16, 0, 2, 5);
    let mut d = Drv8::new(&c, |_| {}).unwrap();
    let cycles = random_run(&mut d, &c, 3, 5, 30).unwrap();
    let st = d.stats().clone();
    eprintln!("8 warps free/slack 16: kernel cycles {cycles:?}, {} sim cycles in {:.1?}: {st:?}", d.cycle, t.elapsed());
    assert!(st.mallocs_ok > 60 && st.frees_ok > 50 && st.checks == 0, "{st:?}");
    for code in [1, 2, RES_OUTSIDE_HEAP, RES_NOT_A_CHUNK, RES_DOUBLE_FREE] {
        assert!(st.codes[code as usize] > 0, "result code {code} never occurred: {st:?}");
    }
}

/// A test kernel as the model's instructions (no arguments: loads and
/// stores time the same whatever their address).
fn model_kernel(streams: &[Vec<AOp>]) -> Kernel {
    let warps = streams
        .iter()
        .map(|s| {
            s.iter()
                .map(|o| match *o {
                    AOp::Alu(n) => Instr::Alu(n),
                    AOp::Load(p) => Instr::Load { arg: 0, off: p },
                    AOp::Store(p) => Instr::Store { arg: 0, off: p },
                    AOp::Malloc { size, dst } => Instr::Malloc { size, dst: dst as u32 },
                    AOp::Free { src } => Instr::Free { src: src as u32 },
                    AOp::LoadMeta { src, dst } => Instr::LoadMetaReg { src: src as u32, dst: dst as u32 },
                    AOp::MemCheck { reg, loc, off, width } => {
                        Instr::MemCheckReg { reg: reg as u32, loc: loc as u32, off, width }
                    }
                })
                .collect()
        })
        .collect();
    Kernel { op: "alloc_test".into(), args: vec![], warps, working_set: 0, full_steps: 0 }
}

/// The model pipeline's timing for a driver configuration (node reads take
/// one cycle, as the driver's `meta_latency`).
fn model_pipe(c: &AllocPipeConfig) -> PipelineConfig {
    PipelineConfig { mem_latency: c.data_latency, meta_latency: 1, max_outstanding: c.max_outstanding as usize, ..PipelineConfig::default() }
}

/// Clocks the model's canary unit idle up to the RTL kernel's start (the
/// RTL's unit also runs in the reset, fill and done cycles between
/// kernels); Err if the model's previous kernel ran past it (a mismatch).
fn catch_up(unit: &mut CanaryUnit, out: &KernelOut) -> Result<(), String> {
    if unit.cycle() >= out.start {
        return Err(format!("the model's unit at cycle {} is past the RTL kernel start {}", unit.cycle(), out.start - 1));
    }
    while unit.cycle() < out.start - 1 {
        unit.step(&[None; REQUESTERS]);
    }
    Ok(())
}

/// The RTL kernel's successful mallocs, successful frees and errors.
fn outcomes(out: &KernelOut) -> (u64, u64, u64) {
    let ok = |free: bool| out.ops.iter().filter(|o| o.free == free && o.code == RES_OK).count() as u64;
    (ok(false), ok(true), out.ops.iter().filter(|o| o.code != RES_OK).count() as u64)
}

/// Random kernels through the RTL and through `sim::sm_pipeline::run_kernel_alloc`
/// with the unit model `sim::canary::alloc_unit` (`siphash` = its SipHash
/// latency; the RTL's is 9): per-kernel cycles and allocator outcome counts,
/// the model's unit clocked up to each RTL kernel start ([`catch_up`]).
/// Returns (RTL, model) kernel cycles.
fn cycle_compare<const W: usize, const WW: usize>(c: &AllocPipeConfig, seed: u64, kernels: usize, len: usize, siphash: u64) -> (Vec<u64>, Vec<u64>) {
    let mut d = SmPipelineAllocDriver::<W, WW, 8, 3, 16, 4>::new(c, |_| {}).unwrap();
    d.reg_init = Some(NO_META);
    let timing = UnitTiming { siphash_latency: siphash, mem_latency: c.heap_latency };
    let mut unit = CanaryUnit::new(c.canary.heap_config(c.key, c.rate), REQUESTERS, c.rate, timing).unwrap();
    let p = model_pipe(c);
    let mut rng = SplitMix64(seed);
    let (mut rtl, mut model) = (Vec::new(), Vec::new());
    for _ in 0..kernels {
        let k = random_kernel(&mut rng, W, len, 256 - c.canary.overhead(), 250);
        let out = d.run_kernel(&k).unwrap();
        if let Err(e) = catch_up(&mut unit, &out) {
            eprintln!("{e}");
            rtl.push(out.cycles);
            model.push(u64::MAX);
            break;
        }
        let m = run_kernel_alloc(&p, MluTiming::Unit, &model_kernel(&k), &[0], None, Some(&mut unit), None);
        if siphash == 9 {
            assert_eq!(outcomes(&out), (m.mallocs, m.frees, m.alloc_errors), "mallocs, frees, errors");
        }
        rtl.push(out.cycles);
        model.push(m.cycles);
    }
    (rtl, model)
}

#[test]
fn kernel_cycles_equal_the_pipeline_model() {
    let t = Instant::now();
    let runs = [
        ("4 warps always", cycle_compare::<4, 2>(&cfg(CheckMode::Always, 0, 4, 1, 4), 21, 5, 30, 9)),
        ("4 warps off", cycle_compare::<4, 2>(&cfg(CheckMode::Off, 0, 0, 1, 7), 22, 4, 30, 9)),
        ("8 warps free slack 16", cycle_compare::<8, 3>(&cfg(CheckMode::Free, 16, 0, 3, 5), 23, 3, 24, 9)),
    ];
    for (what, (rtl, model)) in &runs {
        eprintln!("{what}: RTL kernel cycles {rtl:?}, model {model:?}");
        assert_eq!(rtl, model, "{what}: kernel cycles");
    }
    eprintln!("in {:.1?}", t.elapsed());
}

/// The comparison can fail: the model with a 10-cycle SipHash (the RTL's
/// core takes 9) gives other kernel cycles.
#[test]
fn kernel_cycle_check_catches_a_wrong_unit_timing() {
    let (rtl, model) = cycle_compare::<4, 2>(&cfg(CheckMode::Free, 0, 0, 1, 4), 24, 2, 30, 10);
    assert_ne!(rtl, model);
}

/// Values known without the model: requester 0's 100-byte chunks (class
/// 128 with the canaries) are in page (128 * k_s + 0 * k_mp) mod 16 = 0,
/// slots 0 and 1, so the pointers are base + 8 and base + 136; a free
/// returns the chunk, a second free while the page is in use is a double
/// free, a free of the failed MALLOC's 0 is outside the heap. The warp blocks: each of its
/// MALLOC/FREE issues in the response cycle of the one before, while warp 1's
/// ALU instructions go on.
#[test]
fn directed_pointer_and_blocking_rule() {
    let c = cfg(CheckMode::Free, 0, 0, 1, 4);
    let base = c.canary.base;
    let mut d = Drv4::new(&c, |_| {}).unwrap();
    let k = vec![
        vec![
            AOp::Malloc { size: 100, dst: 0 },
            AOp::Malloc { size: 100, dst: 2 },
            AOp::Free { src: 0 },
            AOp::Free { src: 0 },
            AOp::Malloc { size: 0, dst: 1 },
            AOp::Free { src: 1 },
            AOp::Free { src: 2 },
        ],
        vec![AOp::Alu(60)],
    ];
    let out = d.run_kernel(&k).unwrap();
    let got: Vec<(bool, u64, u64)> = out.ops.iter().map(|o| (o.free, o.code, o.ptr)).collect();
    assert_eq!(
        got,
        vec![
            (false, RES_OK, base + 8),
            (false, RES_OK, base + 128 + 8),
            (true, RES_OK, base),
            (true, RES_DOUBLE_FREE, 0),
            (false, 1, 0),
            (true, RES_OUTSIDE_HEAP, 0),
            (true, RES_OK, base + 128),
        ]
    );
    assert_eq!(d.regs[&(0, 0)], base + 8, "MALLOC wrote its register");
    assert_eq!(out.ops[0].issue, 0, "warp 0 issues first");
    for w in out.ops.windows(2) {
        assert_eq!(w[1].issue, w[0].resp, "the next MALLOC/FREE issues in the response cycle");
    }
    for o in &out.ops {
        assert_eq!(o.grant, o.issue, "the idle unit grants in the issue cycle");
        assert!(o.resp > o.grant, "{o:?}");
    }
    // A successful malloc with two canaries takes ~25 cycles (docs/canary.md),
    // so warp 1's 60 ALU instructions end long before warp 0.
    assert!(out.cycles == out.ops[6].resp + 1, "the kernel ends the cycle after the last response: {out:?}");
    assert!(out.cycles > 60 + 25, "{out:?}");
}

/// Requests from 4 warps in one kernel start: granted in round robin from
/// requester 0 (the unit's rule), one at a time, each response before the
/// next grant; a full heap answers EXHAUSTED and recovers after frees.
#[test]
fn same_cycle_requests_and_exhaustion() {
    let c = cfg(CheckMode::Off, 0, 0, 1, 4);
    let mut d = Drv4::new(&c, |_| {}).unwrap();
    // 4 warps x 5 pages of 256 B > the 16-page heap.
    let k: Vec<Vec<AOp>> = (0..4).map(|_| (0..5).map(|i| AOp::Malloc { size: 256, dst: i }).collect()).collect();
    let out = d.run_kernel(&k).unwrap();
    let first: Vec<usize> = out.ops.iter().take(4).map(|o| o.warp).collect();
    assert_eq!(first, vec![0, 1, 2, 3], "round robin from requester 0");
    for w in out.ops.windows(2) {
        assert!(w[1].grant >= w[0].resp, "one request at a time: {w:?}");
    }
    let ok = out.ops.iter().filter(|o| o.code == RES_OK).count();
    let exhausted = out.ops.iter().filter(|o| o.code == RES_EXHAUSTED).count();
    assert_eq!((ok, exhausted), (16, 4), "16 pages, then EXHAUSTED");
    let k: Vec<Vec<AOp>> = (0..4).map(|_| (0..5).map(|i| AOp::Free { src: i }).chain([AOp::Malloc { size: 256, dst: 7 }]).collect()).collect();
    let out = d.run_kernel(&k).unwrap();
    let codes: Vec<u64> = out.ops.iter().filter(|o| !o.free).map(|o| o.code).collect();
    assert_eq!(codes, vec![RES_OK; 4], "the heap recovers: {out:?}");
}

/// The mutant: warp 1 posts at requester 2 instead of 1. The comparison
/// (model fed with the contract's requester) must catch it.
#[test]
fn requester_mapping_mutant_is_caught() {
    let c = cfg(CheckMode::Always, 0, 4, 1, 4);
    let mut d = Drv4::new(&c, |u: &mut SmPipelineAlloc<4, 2, 8, 3, 16, 4>| u.pipe.req_of[1] = Constant::new(bits::<3>(2))).unwrap();
    let err = random_run(&mut d, &c, 1, 4, 40).expect_err("the mutant must mismatch");
    eprintln!("mutant: {err}");
    assert!(err.contains("requester 2"), "{err}");
}

/// The device heap registered with the MLU (`hw::sm_pipeline_alloc` "The
/// device heap"): a tagged unit, the directory at the model's default.
fn heap_cfg(check: CheckMode, mode: sim::config::Mode, data_latency: u64) -> AllocPipeConfig {
    let mut c = cfg(check, 0, 4, 1, data_latency);
    c.canary.tag_seed = Some(0xACE1);
    c.heap_dir = Some(sim::device_heap::DEFAULT_DIRECTORY_BASE);
    c.mlu.mode = mode;
    c
}

/// What one device-heap comparison saw.
#[derive(Debug, Default)]
struct HeapCompare {
    kernels: usize,
    faults: [u64; 8],
    mallocs: u64,
    frees: u64,
    errors: u64,
    meta_reads: u64,
}

/// Random device-heap kernels through the RTL pipeline (the MLU's heap path
/// reading the canary unit's directory, the pipeline's shoot-downs) and
/// through `sim::sm_pipeline::run_kernel_alloc` with both unit models; per
/// kernel: cycles, every MLU fault (cycle, warp, fault), allocator outcomes,
/// and at the end the RTL's node-read counter. Err names the first
/// difference.
fn heap_compare<const W: usize, const WW: usize>(
    c: &AllocPipeConfig,
    seed: u64,
    kernels: usize,
    len: usize,
    mutate: impl FnOnce(&mut SmPipelineAlloc<W, WW, 8, 3, 16, 4>),
) -> Result<HeapCompare, String> {
    use sim::runtime::{Runtime, RuntimeConfig};
    use sim::sm_pipeline::UnitMlu;
    use hw::canary::alloc_unit::HEAP_BYTES;
    let mut d = SmPipelineAllocDriver::<W, WW, 8, 3, 16, 4>::new(c, mutate)?;
    d.reg_init = Some(NO_META);
    let mut rt = Runtime::new(RuntimeConfig { mlu: c.mlu.clone(), ..RuntimeConfig::default() }).unwrap();
    let mut umlu = UnitMlu::new(&c.mlu, 1).unwrap();
    umlu.sync(&mut rt).unwrap();
    let dir = c.heap_dir.expect("a heap configuration");
    umlu.set_heap_window(sim::mlu::HeapWindow { base: c.canary.base, mask: HEAP_BYTES - 1, dir });
    let timing = UnitTiming { siphash_latency: 9, mem_latency: c.heap_latency };
    let mut unit = CanaryUnit::new(c.canary.heap_config(c.key, c.rate), REQUESTERS, c.rate, timing).unwrap();
    let p = model_pipe(c);
    let mut rng = SplitMix64(seed);
    let mut st = HeapCompare::default();
    for i in 0..kernels {
        let k = testbench::sm_pipeline_alloc_driver::random_heap_kernel(&mut rng, W, len, 256 - c.canary.overhead());
        let out = d.run_kernel(&k).map_err(|e| format!("kernel {i}: RTL: {e}"))?;
        catch_up(&mut unit, &out).map_err(|e| format!("kernel {i}: {e}"))?;
        let m = run_kernel_alloc(&p, MluTiming::Unit, &model_kernel(&k), &[0], Some(&mut rt), Some(&mut unit), Some(&mut umlu));
        if out.faults != m.fault_log {
            let n = out.faults.iter().zip(&m.fault_log).take_while(|(a, b)| a == b).count();
            return Err(format!(
                "kernel {i}: MLU fault {n} differs: RTL {:?}, model {:?} (RTL {} faults, model {})",
                out.faults.get(n),
                m.fault_log.get(n),
                out.faults.len(),
                m.fault_log.len()
            ));
        }
        if out.cycles != m.cycles {
            return Err(format!("kernel {i}: RTL {} cycles, model {}", out.cycles, m.cycles));
        }
        if outcomes(&out) != (m.mallocs, m.frees, m.alloc_errors) {
            return Err(format!("kernel {i}: RTL mallocs/frees/errors {:?}, model {:?}", outcomes(&out), (m.mallocs, m.frees, m.alloc_errors)));
        }
        st.kernels += 1;
        st.mallocs += m.mallocs;
        st.frees += m.frees;
        st.errors += m.alloc_errors;
        st.meta_reads += m.meta_reads;
        for f in &m.fault_log {
            st.faults[f.2 as usize] += 1;
        }
    }
    let rtl_reads = d.uut.pipe.cnt_meta_reads.val().to_u64();
    if rtl_reads != st.meta_reads & 0xFFFF_FFFF {
        return Err(format!("node reads: RTL {rtl_reads}, model {}", st.meta_reads));
    }
    Ok(st)
}

#[test]
fn heap_kernels_match_the_pipeline_model() {
    use sim::config::Mode;
    use sim::fault::FaultCode;
    let t = Instant::now();
    for (what, c, seed, kernels, len) in [
        ("4 warps compiler free", heap_cfg(CheckMode::Free, Mode::Compiler, 4), 31, 6, 40),
        ("4 warps hwonly always", heap_cfg(CheckMode::Always, Mode::Hwonly, 6), 32, 4, 40),
    ] {
        let st = heap_compare::<4, 2>(&c, seed, kernels, len, |_| {}).unwrap_or_else(|e| panic!("{what}: {e}"));
        eprintln!("{what}: {st:?}");
        // Every device-heap bug the kernels make was seen at its access.
        for f in [FaultCode::OutOfBounds, FaultCode::UseAfterFree] {
            assert!(st.faults[f as usize] > 0, "{what}: no {f:?}: {st:?}");
        }
        assert!(st.mallocs > 20 && st.frees > 15 && st.meta_reads > 20, "{what}: {st:?}");
    }
    let st = heap_compare::<8, 3>(&heap_cfg(CheckMode::Off, Mode::Compiler, 5), 33, 3, 30, |_| {}).unwrap();
    eprintln!("8 warps compiler off: {st:?} in {:.1?}", t.elapsed());
    assert!(st.faults[FaultCode::TagMismatch as usize] > 0, "a stale pointer after reuse: {st:?}");
}

/// Directory mutants in the canary unit's tag table, as the pipeline's heap
/// lookups read them: the 64-byte class's first-granule mask set to the
/// 128-byte class's (a wrong size class), and not applied (the second
/// granule of a 64-byte chunk read as a chunk of its own: an off-by-one
/// chunk index). Both must show as a difference from the model. HWONLY
/// code, whose MEMCHECKs look up the accessed address (COMPILER code's
/// fetch the chunk's first node by location, which the second mutant
/// leaves right).
#[test]
fn heap_lookup_mutants_are_caught() {
    use sim::config::Mode;
    for (what, mask) in [("wrong size class", 0b111_1100u64), ("chunk index off by one", 0b111_1111)] {
        let c = heap_cfg(CheckMode::Always, Mode::Hwonly, 6);
        let r = heap_compare::<4, 2>(&c, 32, 4, 40, |u| u.unit.tags[0].first_mask[1] = Constant::new(mask.into()));
        eprintln!("{what}: {r:?}");
        assert!(r.is_err(), "{what}: the mutant went unnoticed");
    }
}

