//! `SmPipelineAlloc<W, WW, N, IW, Q, QW>`: the RTL SM pipeline
//! ([`SmPipeline`]) with the canary allocator unit ([`AllocUnit`]) behind its
//! MALLOC/FREE instructions: the twin of `sim::sm_pipeline` with the
//! unit. The pipeline's requester side (slot kinds, issue and wait rules,
//! write back) is documented in `hw::sm_pipeline`; this block wires it to
//! the unit and, when the unit's heap is registered with the MLU, joins the
//! two (`sim::sm_pipeline` "The device heap").
//!
//! # Wiring
//! - `pipe.alloc_req_*[r]` -> `unit.req_*[r]`, `unit.req_grant[r]` ->
//!   `pipe.alloc_req_grant[r]`: a request issued in cycle t can be granted
//!   in t (the unit's arbiter takes only when its FSM is idle, from
//!   registers, so there is no combinational loop through the scheduler).
//! - `unit.resp_*` -> `pipe.alloc_resp_*`: the response wakes the warp and
//!   writes back in its cycle (or, with the heap registered, in the cycle
//!   of its last INVALIDATE: `hw::sm_pipeline` "Device heap shoot-down").
//! - One clock; `reset` resets both (the heap empties: run it before the
//!   first kernel only, or the warps' pointers go stale).
//!
//! # The device heap (a unit built with `CanaryParams::tag_seed`)
//! The MLU's heap window is its HEAP_BASE / HEAP_MASK / HEAP_DIR CSRs; this
//! block keeps copies of them from the CSR port (`heap_*_r`), so the window
//! is set in one place. With HEAP_MASK != 0 (the heap's 4 KiB window: the
//! heap base and the directory aligned to it):
//! - Directory: an MLU node read in [HEAP_DIR, HEAP_DIR + HEAP_MASK] is
//!   answered from the unit's directory port in its cycle, not by the
//!   testbench: `dir_g` = the node's granule (node address bits 11..5), and
//!   the node {base: chunk + the front canary's 8 bytes (0 in mode off),
//!   size | tag << 56, link0: the chunk's location HEAP_DIR | chunk
//!   offset, link1: 0}, or all 0 when `dir_hit` is low (the MLU reports
//!   NO_META).
//! - Such a read is held (`pipe.meta_hold`) while an allocator operation is
//!   granted and not answered (`op_busy_r`; not in its grant or response
//!   cycle): the unit's tables change mid-operation.
//! - Shoot-down: a response with RES_OK asks `pipe` for INVALIDATEs of the
//!   chunk's location (free, and a malloc in a page that kept its class) or
//!   of its page's 8 granules (`resp_new_page`: a malloc that claimed an
//!   empty page): `pipe.alloc_resp_inv_n` / `alloc_resp_inv_loc`. The chunk
//!   is the response pointer without its tag and its offset in the granule
//!   (the canary offset is below 32).
//!
//! # Ports
//! `clock`, `reset`; the CSR port `csr_we`, `csr_addr`, `csr_data` (to the
//! MLU, as `SmPipeline`'s, copied here); the testbench's metadata answer
//! `meta_base`, `meta_size_tag`, `meta_link0`, `meta_link1`, `meta_error`
//! for node reads outside the directory (`pipe.meta_node_req` /
//! `meta_node_addr` name the read). The pipeline's other ports are `pipe`'s
//! and the unit's key register (`key_we`, `key_k0`, `key_k1`), checker rate
//! (`rate`), canary memory port (`mem_*`: the unit's own port to the heap,
//! not the SM memory port) and checker report (`chk_*`) are `unit`'s, driven
//! and read through those fields: like `SmPipeline`, this block is for
//! simulation against the model, not emitted (a top would pass those ports
//! through unchanged).
use crate::canary::alloc_unit::{AllocUnit, CanaryParams, PAGE_SIZE, REQUESTERS, RES_OK};
use crate::mlu::{CSR_HEAP_BASE, CSR_HEAP_DIR, CSR_HEAP_MASK};
use crate::sm_pipeline::SmPipeline;
use rust_hdl::prelude::*;
use sim::mlu_unit::UnitParams;

/// Bytes of a directory node (and of a heap granule).
const NODE: u64 = 32;

#[derive(LogicBlock)]
pub struct SmPipelineAlloc<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize>
{
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub csr_we: Signal<In, Bit>,
    pub csr_addr: Signal<In, Bits<3>>,
    pub csr_data: Signal<In, Bits<64>>,
    pub meta_base: Signal<In, Bits<64>>,
    pub meta_size_tag: Signal<In, Bits<64>>,
    pub meta_link0: Signal<In, Bits<64>>,
    pub meta_link1: Signal<In, Bits<64>>,
    pub meta_error: Signal<In, Bit>,
    pub pipe: SmPipeline<W, WW, N, IW, Q, QW>,
    pub unit: AllocUnit,
    heap_base_r: DFF<Bits<64>>,
    heap_mask_r: DFF<Bits<64>>,
    heap_dir_r: DFF<Bits<64>>,
    op_busy_r: DFF<Bit>,
    node_a: Signal<Local, Bits<64>>,
    in_dir: Signal<Local, Bit>,
    chunk_off: Signal<Local, Bits<64>>,
    resp_off: Signal<Local, Bits<64>>,
    any_grant: Signal<Local, Bit>,
    csr_base: Constant<Bits<3>>,
    csr_mask: Constant<Bits<3>>,
    csr_dir: Constant<Bits<3>>,
    res_ok: Constant<Bits<3>>,
    ptr_off: Constant<Bits<64>>,
    granule_mask: Constant<Bits<64>>,
    page_mask: Constant<Bits<64>>,
    page_nodes: Constant<Bits<4>>,
    one4: Constant<Bits<4>>,
    zero4: Constant<Bits<4>>,
    zero64: Constant<Bits<64>>,
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
        let c64 = |v: u64| Constant::new(bits::<64>(v));
        let c3 = |v: u64| Constant::new(bits::<3>(v));
        let c4 = |v: u64| Constant::new(bits::<4>(v));
        Ok(Self {
            clock: Default::default(),
            reset: Default::default(),
            csr_we: Default::default(),
            csr_addr: Default::default(),
            csr_data: Default::default(),
            meta_base: Default::default(),
            meta_size_tag: Default::default(),
            meta_link0: Default::default(),
            meta_link1: Default::default(),
            meta_error: Default::default(),
            pipe: SmPipeline::new(p),
            unit: AllocUnit::new(c)?,
            heap_base_r: Default::default(),
            heap_mask_r: Default::default(),
            heap_dir_r: Default::default(),
            op_busy_r: Default::default(),
            node_a: Default::default(),
            in_dir: Default::default(),
            chunk_off: Default::default(),
            resp_off: Default::default(),
            any_grant: Default::default(),
            csr_base: c3(CSR_HEAP_BASE),
            csr_mask: c3(CSR_HEAP_MASK),
            csr_dir: c3(CSR_HEAP_DIR),
            res_ok: c3(RES_OK),
            ptr_off: c64(if c.check.canaries() { sim::canary::heap::CANARY_BYTES } else { 0 }),
            granule_mask: c64(!(NODE - 1)),
            page_mask: c64(!(PAGE_SIZE - 1)),
            page_nodes: c4(PAGE_SIZE / NODE),
            one4: c4(1),
            zero4: c4(0),
            zero64: c64(0),
        })
    }
}

impl<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize> Logic
    for SmPipelineAlloc<W, WW, N, IW, Q, QW>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, heap_base_r, heap_mask_r, heap_dir_r, op_busy_r);
        self.pipe.clock.next = self.clock.val();
        self.unit.clock.next = self.clock.val();
        self.pipe.reset.next = self.reset.val();
        self.unit.reset.next = self.reset.val();
        self.any_grant.next = false;
        for r in 0..REQUESTERS {
            self.unit.req_valid[r].next = self.pipe.alloc_req_valid[r].val();
            self.unit.req_free[r].next = self.pipe.alloc_req_free[r].val();
            self.unit.req_arg[r].next = self.pipe.alloc_req_arg[r].val();
            self.pipe.alloc_req_grant[r].next = self.unit.req_grant[r].val();
            if self.unit.req_grant[r].val() {
                self.any_grant.next = true;
            }
        }
        self.pipe.alloc_resp_valid.next = self.unit.resp_valid.val();
        self.pipe.alloc_resp_id.next = self.unit.resp_id.val();
        self.pipe.alloc_resp_free.next = self.unit.resp_free.val();
        self.pipe.alloc_resp_code.next = self.unit.resp_code.val();
        self.pipe.alloc_resp_ptr.next = self.unit.resp_ptr.val();
        self.pipe.alloc_resp_front.next = self.unit.resp_front.val();
        self.pipe.alloc_resp_rear.next = self.unit.resp_rear.val();

        // The MLU's CSRs, and this block's copy of the heap window.
        self.pipe.csr_we.next = self.csr_we.val();
        self.pipe.csr_addr.next = self.csr_addr.val();
        self.pipe.csr_data.next = self.csr_data.val();
        if self.csr_we.val() & (self.csr_addr.val() == self.csr_base.val()) {
            self.heap_base_r.d.next = self.csr_data.val();
        }
        if self.csr_we.val() & (self.csr_addr.val() == self.csr_mask.val()) {
            self.heap_mask_r.d.next = self.csr_data.val();
        }
        if self.csr_we.val() & (self.csr_addr.val() == self.csr_dir.val()) {
            self.heap_dir_r.d.next = self.csr_data.val();
        }

        // Shoot-down: the INVALIDATEs a successful response needs.
        self.resp_off.next = self.unit.resp_ptr.val() & self.heap_mask_r.q.val();
        self.pipe.alloc_resp_inv_n.next = self.zero4.val();
        self.pipe.alloc_resp_inv_loc.next = self.heap_dir_r.q.val() | (self.resp_off.val() & self.granule_mask.val());
        if (self.heap_mask_r.q.val() != self.zero64.val()) & (self.unit.resp_code.val() == self.res_ok.val()) {
            self.pipe.alloc_resp_inv_n.next = self.one4.val();
            if !self.unit.resp_free.val() & self.unit.resp_new_page.val() {
                self.pipe.alloc_resp_inv_n.next = self.page_nodes.val();
                self.pipe.alloc_resp_inv_loc.next = self.heap_dir_r.q.val() | (self.resp_off.val() & self.page_mask.val());
            }
        }

        // Node reads: the directory window from the unit's directory port,
        // the rest from the testbench.
        self.node_a.next = bit_cast::<64, 51>(self.pipe.meta_node_addr.val()) << 5_u64;
        self.in_dir.next = (self.heap_mask_r.q.val() != self.zero64.val())
            & ((self.node_a.val() & !self.heap_mask_r.q.val()) == self.heap_dir_r.q.val());
        self.unit.dir_g.next = self.pipe.meta_node_addr.val().get_bits::<7>(0);
        self.chunk_off.next = bit_cast::<64, 7>(self.unit.dir_chunk.val()) << 5_u64;
        self.pipe.meta_base.next = self.meta_base.val();
        self.pipe.meta_size_tag.next = self.meta_size_tag.val();
        self.pipe.meta_link0.next = self.meta_link0.val();
        self.pipe.meta_link1.next = self.meta_link1.val();
        self.pipe.meta_error.next = self.meta_error.val();
        if self.in_dir.val() {
            self.pipe.meta_base.next = self.zero64.val();
            self.pipe.meta_size_tag.next = self.zero64.val();
            self.pipe.meta_link0.next = self.zero64.val();
            self.pipe.meta_link1.next = self.zero64.val();
            self.pipe.meta_error.next = false;
            if self.unit.dir_hit.val() {
                self.pipe.meta_base.next = (self.heap_base_r.q.val() | self.chunk_off.val()) + self.ptr_off.val();
                self.pipe.meta_size_tag.next =
                    (bit_cast::<64, 8>(self.unit.dir_tag.val()) << 56_u64) | bit_cast::<64, 9>(self.unit.dir_size.val());
                self.pipe.meta_link0.next = self.heap_dir_r.q.val() | self.chunk_off.val();
            }
        }
        // An operation is in flight from the cycle after its grant to the
        // one before its response (a response and a grant may share a cycle).
        self.op_busy_r.d.next = self.any_grant.val() | (self.op_busy_r.q.val() & !self.unit.resp_valid.val());
        self.pipe.meta_hold.next = self.in_dir.val() & self.op_busy_r.q.val() & !self.unit.resp_valid.val();
        if self.reset.val() {
            self.heap_base_r.d.next = self.zero64.val();
            self.heap_mask_r.d.next = self.zero64.val();
            self.heap_dir_r.d.next = self.zero64.val();
            self.op_busy_r.d.next = false;
        }
    }
}
