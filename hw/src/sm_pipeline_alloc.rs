//! `SmPipelineAlloc<W, WW, N, IW, Q, QW>`: the RTL SM pipeline
//! ([`SmPipeline`]) with the canary allocator unit ([`AllocUnit`]) behind its
//! MALLOC/FREE instructions: the twin of `sim::sm_pipeline` with the
//! unit. The pipeline's requester side (slot kinds, issue and wait rules,
//! write back) is documented in `hw::sm_pipeline`; this block only wires it
//! to the unit and keeps the MLU-only pipeline unchanged.
//!
//! # Wiring (combinational, no registers of its own)
//! - `pipe.alloc_req_*[r]` -> `unit.req_*[r]`, `unit.req_grant[r]` ->
//!   `pipe.alloc_req_grant[r]`: a request issued in cycle t can be granted
//!   in t (the unit's arbiter takes only when its FSM is idle, from
//!   registers, so there is no combinational loop through the scheduler).
//! - `unit.resp_*` -> `pipe.alloc_resp_*`: the response wakes the warp and
//!   writes back in its cycle.
//! - One clock; `reset` resets both (the heap empties: run it before the
//!   first kernel only, or the warps' pointers go stale).
//!
//! # Ports
//! `clock` and `reset` only. The pipeline's other ports are `pipe`'s and the
//! unit's key register (`key_we`, `key_k0`, `key_k1`), checker rate
//! (`rate`), canary memory port (`mem_*`: the unit's own port to the heap,
//! not the SM memory port) and checker report (`chk_*`) are `unit`'s, driven
//! and read through those fields: like `SmPipeline`, this block is for
//! simulation against the model, not emitted (a top would pass those ports
//! through unchanged).
use crate::canary::alloc_unit::{AllocUnit, CanaryParams, REQUESTERS};
use sim::mlu_unit::UnitParams;
use crate::sm_pipeline::SmPipeline;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct SmPipelineAlloc<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize>
{
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub pipe: SmPipeline<W, WW, N, IW, Q, QW>,
    pub unit: AllocUnit,
}

/// The configurations the tests use: 4 or 8 warps, an 8-entry MLU.
pub type SmPipelineAlloc4x8 = SmPipelineAlloc<4, 2, 8, 3, 16, 4>;
pub type SmPipelineAlloc8x8 = SmPipelineAlloc<8, 3, 8, 3, 16, 4>;

impl<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize>
    SmPipelineAlloc<W, WW, N, IW, Q, QW>
{
    /// A pipeline with MLU unit `p` and allocator `c` (Err: `c` is invalid,
    /// the message names the field).
    pub fn new(p: &UnitParams, c: &CanaryParams) -> Result<Self, String> {
        Ok(Self {
            clock: Default::default(),
            reset: Default::default(),
            pipe: SmPipeline::new(p),
            unit: AllocUnit::new(c)?,
        })
    }
}

impl<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize> Logic
    for SmPipelineAlloc<W, WW, N, IW, Q, QW>
{
    #[hdl_gen]
    fn update(&mut self) {
        self.pipe.clock.next = self.clock.val();
        self.unit.clock.next = self.clock.val();
        self.pipe.reset.next = self.reset.val();
        self.unit.reset.next = self.reset.val();
        for r in 0..REQUESTERS {
            self.unit.req_valid[r].next = self.pipe.alloc_req_valid[r].val();
            self.unit.req_free[r].next = self.pipe.alloc_req_free[r].val();
            self.unit.req_arg[r].next = self.pipe.alloc_req_arg[r].val();
            self.pipe.alloc_req_grant[r].next = self.unit.req_grant[r].val();
        }
        self.pipe.alloc_resp_valid.next = self.unit.resp_valid.val();
        self.pipe.alloc_resp_id.next = self.unit.resp_id.val();
        self.pipe.alloc_resp_free.next = self.unit.resp_free.val();
        self.pipe.alloc_resp_code.next = self.unit.resp_code.val();
        self.pipe.alloc_resp_ptr.next = self.unit.resp_ptr.val();
        self.pipe.alloc_resp_front.next = self.unit.resp_front.val();
        self.pipe.alloc_resp_rear.next = self.unit.resp_rear.val();
    }
}
