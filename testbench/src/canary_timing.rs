//! The canary unit's cycle-level golden model (`sim::canary::alloc_unit`) against a
//! simulator of the RTL ([`CanaryDut`]), in lockstep: the same random
//! workload drives both, and every cycle's grant, response (with its
//! result) and background-check report must be equal, so the grant and
//! response cycle of every operation are the RTL's.
use verif::canary_driver::{CanaryDut, Check, Resp, StepOut, Workload};
use hw::canary::alloc_unit::{
    CanaryParams, REQUESTERS, RES_DOUBLE_FREE, RES_EXHAUSTED, RES_NOT_A_CHUNK, RES_OK, RES_OUTSIDE_HEAP,
    RES_TOO_LARGE, RES_ZERO_SIZE,
};
use sim::canary::heap::{AllocError, FreeError};
use sim::canary::siphash::CanaryKey;
use sim::canary::alloc_unit::{CanaryUnit, Outcome, Request, Response, UnitStep, UnitTiming};

/// The model's response as the RTL's port values.
pub fn resp_of(r: &Response) -> Resp {
    let err = |code| Resp { id: r.id, free: false, code, ptr: 0, size: 0, front: false, rear: false };
    match &r.outcome {
        Outcome::Malloc(Ok(a)) => Resp { ptr: a.ptr, ..err(RES_OK) },
        Outcome::Malloc(Err(e)) => err(match e {
            AllocError::ZeroSize => RES_ZERO_SIZE,
            AllocError::TooLarge { .. } => RES_TOO_LARGE,
            AllocError::Exhausted { .. } => RES_EXHAUSTED,
        }),
        Outcome::Free(Ok(f)) => {
            let (front, rear) = f.overflow.as_ref().map(|o| (o.front, o.rear)).unwrap_or((false, false));
            Resp { id: r.id, free: true, code: RES_OK, ptr: f.chunk, size: f.size, front, rear }
        }
        Outcome::Free(Err(e)) => Resp {
            free: true,
            ..err(match e {
                FreeError::OutsideHeap { .. } => RES_OUTSIDE_HEAP,
                FreeError::NotAChunk { .. } => RES_NOT_A_CHUNK,
                FreeError::DoubleFree { .. } => RES_DOUBLE_FREE,
            })
        },
    }
}

/// The model's cycle as the RTL's observations.
pub fn step_out_of(s: &UnitStep) -> StepOut {
    StepOut {
        grant: s.grant,
        resp: s.resp.as_ref().map(resp_of),
        check: s.check.as_ref().map(|c| Check { chunk: c.chunk, front: c.front, rear: c.rear }),
        // (The directory is compared by the result replay, verif::canary_driver.)
        dir: Default::default(),
    }
}

/// What a lockstep run compared.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockstepStats {
    pub cycles: u64,
    pub grants: u64,
    pub responses: u64,
    pub mallocs_ok: u64,
    pub frees_ok: u64,
    pub checks: u64,
    pub stores: u64,
    /// Grant-to-response cycles of successful mallocs / frees (sums).
    pub malloc_cycles: u64,
    pub free_cycles: u64,
}

impl LockstepStats {
    pub fn mean_cycles(&self) -> (f64, f64) {
        (self.malloc_cycles as f64 / self.mallocs_ok.max(1) as f64, self.free_cycles as f64 / self.frees_ok.max(1) as f64)
    }
}

/// The RTL's response with the fields it leaves undefined cleared (the size
/// is defined for successful frees only), as `ModelReplay` compares.
fn normalized(r: &Resp) -> Resp {
    let mut r = r.clone();
    if !(r.free && r.code == RES_OK) {
        r.size = 0;
    }
    r
}

/// Run `cycles` cycles of the random workload (seed) on `dut` and on the
/// model with `timing` side by side; Err names the first cycle whose grant,
/// response or check differs.
#[allow(clippy::too_many_arguments)]
pub fn run_lockstep(
    dut: &mut dyn CanaryDut,
    params: &CanaryParams,
    key: CanaryKey,
    rate: u8,
    timing: UnitTiming,
    seed: u64,
    cycles: u64,
) -> Result<LockstepStats, String> {
    let mut unit = CanaryUnit::new(params.heap_config(key, rate), REQUESTERS, rate, timing)?;
    let mut wl = Workload::new(params, seed);
    let mut st = LockstepStats { cycles, ..Default::default() };
    for c in 0..cycles {
        let reqs = wl.requests();
        let got = dut.step(&reqs)?;
        let mreqs: Vec<Option<Request>> = reqs.iter().map(|r| r.map(|(free, arg)| Request { free, arg })).collect();
        let ms = unit.step(&mreqs);
        let want = step_out_of(&ms);
        let what = |x: &str| format!("cycle {c}: {x}: RTL {got:?}, model {want:?}");
        if got.grant != want.grant {
            return Err(what("grant"));
        }
        if got.resp.as_ref().map(normalized) != want.resp {
            return Err(what("response"));
        }
        if got.check != want.check {
            return Err(what("background check"));
        }
        if let Some(r) = &got.resp {
            st.responses += 1;
            wl.responded(r);
            let m = ms.resp.as_ref().expect("compared equal");
            if r.code == RES_OK {
                if r.free {
                    st.frees_ok += 1;
                    st.free_cycles += c - m.granted;
                } else {
                    st.mallocs_ok += 1;
                    st.malloc_cycles += c - m.granted;
                }
            }
        }
        st.checks += got.check.is_some() as u64;
        if let Some(g) = got.grant {
            st.grants += 1;
            wl.granted(g);
        }
        if got.resp.is_some() || got.check.is_some() {
            if let Some((addr, bytes)) = wl.store() {
                dut.store(addr, &bytes);
                unit.write(addr, &bytes)?;
                st.stores += 1;
            }
        }
    }
    Ok(st)
}
