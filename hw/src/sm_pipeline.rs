//! `SmPipeline<W, WW, N, IW, Q, QW>`: the simple SM memory pipeline of spec
//! section 7 in RTL, the twin of `sim::sm_pipeline` (same names, same timing
//! rules, with the MLU as an SM unit: `sim::sm_pipeline::MluTiming::Unit`). W
//! warps, each with a one-instruction slot filled by the testbench; the
//! round-robin [`WarpSched`]; one-cycle ALU instructions; a load/store unit
//! with an outstanding-request bound; the MLU unit ([`MluUnit`], one lane,
//! instantiated unchanged: pipelined, non-blocking, K walkers) sharing the
//! one memory port, with priority for its node reads; the fixed-latency
//! [`MemModel`]; counters.
//! For validation against the cycle model, not for synthesis (the memory is a
//! behavioural delay line).
//!
//! # Timing rules (as `sim::sm_pipeline`)
//! - One instruction issues per cycle, from the first warp after the last
//!   issuer whose slot instruction can issue now (ALU: always; LOADMETA /
//!   MEMCHECK.G: the unit's `req_ready`, a registered output; LOAD / STORE:
//!   the unit drives no metadata read this cycle and fewer than
//!   `max_outstanding` data requests are in flight, one answered this cycle
//!   not counted).
//! - A warp has one instruction in flight: an ALU instruction or a store
//!   frees it for the next cycle; a load blocks it until its answer (it may
//!   issue in the answer's cycle); an MLU operation blocks it until the
//!   unit's response with its id (= the warp; it may issue in the response
//!   cycle). Other warps' MLU operations issue meanwhile.
//! - A kernel is done in the first cycle in which every slot is END, no warp
//!   waits and no data request is in flight (one answered this cycle
//!   excluded); `kcycles` is then the kernel's cycle count (cycle 0 = the
//!   first cycle with `run` high).
//!
//! # Ports (one clock, rising edge; `reset` synchronous, one cycle after
//! power-up; it resets the MLU, the memory and the counters)
//! - Configuration: `data_latency`, `meta_latency` (32, >= 1),
//!   `max_outstanding` (8, 1..=Q). Hold them while `run` is high.
//! - `run`: high for a whole kernel, from its first cycle until the cycle
//!   after `kdone` is seen; low between kernels. While low nothing issues, the
//!   round-robin pointer returns to W-1 and `kcycles` to 0, and the MLU's
//!   request port is the host's (below).
//! - Fetch (the instruction supply; the testbench is the instruction memory):
//!   slot w holds warp w's next instruction: `kind` (3: [`K_END`] no more
//!   instructions or warp not launched, [`K_ALU`], [`K_LOADMETA`],
//!   [`K_MEMCHECK`], [`K_LOAD`], [`K_STORE`]), `count` (16: an ALU
//!   instruction's repeat n >= 1; it issues n times), `ptr` (64: the tagged
//!   pointer of LOADMETA / MEMCHECK.G / the access), `width` (5: MEMCHECK's
//!   bytes), `arg` (16: the register that LOADMETA writes and MEMCHECK reads,
//!   the kernel argument index). `fetch_valid` with `fetch_warp` and those
//!   fields writes a slot at the edge. Before a kernel (run low) the
//!   testbench fills every slot (END for warps not launched). While run is
//!   high the pipeline asks with `fetch_req` / `fetch_req_warp` in the cycle
//!   a slot's instruction is consumed (issued, the last repeat of an ALU),
//!   and the testbench must answer in that same cycle (combinationally, like
//!   an instruction memory that never misses); the fetch fields feed only the
//!   slot registers. An unanswered request leaves the slot END.
//! - Register port (the warps' registers live with the testbench): the
//!   location a LOADMETA returns is written back on `wb_valid`, `wb_warp`,
//!   `wb_arg`, `wb_loc` (the response cycle); a MEMCHECK.G reads its location
//!   operand combinationally through `rf_warp`, `rf_arg` -> `rf_loc` in its
//!   issue cycle. A write back of the same register in that cycle is
//!   forwarded inside the pipeline.
//! - Metadata nodes: the memory model shows each node read it takes on
//!   `meta_node_req` / `meta_node_addr` (address bits 55..5); the testbench
//!   drives `meta_base`, `meta_size_tag`, `meta_link0`, `meta_link1` (and
//!   `meta_error`) with the runtime's node there in the same cycle.
//! - Host MLU port (run low: INVALIDATE after a free, FLUSH): `host_req_valid`,
//!   `host_req_op`, `host_req_ptr`, `host_req_loc` (id 0); the unit's
//!   `mlu_req_ready`, `mlu_resp_valid`, `mlu_resp_fault`, `mlu_resp_loc` are
//!   outputs. CSR writes (`csr_we`, `csr_addr`, `csr_data`) go to the unit
//!   while it is idle (ROOT after the runtime relinks).
//! - Status and counters (32, wrapping; cleared by reset): `kdone`,
//!   `kcycles`; `cnt_cycles` (kernel cycles summed), `cnt_issued` (an ALU
//!   instruction of repeat n counts n), `cnt_loads`, `cnt_stores`,
//!   `cnt_mlu_ops`, `cnt_meta_reads` (node reads on the port),
//!   `cnt_mlu_faults` (responses with a fault while `run` is high);
//!   `cnt_alloc_ops` (MALLOCs and FREEs issued).
//!
//! # Canary allocator instructions ([`K_MALLOC`], [`K_FREE`])
//! This block holds the requester side only; the unit
//! (`hw::canary::alloc_unit::AllocUnit`) is outside, wired by
//! `hw::sm_pipeline_alloc::SmPipelineAlloc`. Without a unit (inputs low) no
//! MALLOC/FREE may be fetched, and the pipeline is the MLU-only one above.
//! - Slots: K_MALLOC's size is the `ptr` field (64 bits, so zero and
//!   oversize requests reach the unit as given), its destination register
//!   `arg`; K_FREE's pointer is register `arg`, read through the register
//!   port (`rf_loc`) in the issue cycle, with a same-cycle write back of
//!   that register (LOADMETA's or a MALLOC's) forwarded.
//! - Warp w posts to requester `req_of[w]` = w mod 8. A MALLOC/FREE can
//!   issue when that requester has no request unanswered (or its response
//!   is in this cycle); W <= 8 makes that always true for a warp that is not
//!   waiting. The issue cycle presents the request on `alloc_req_valid[r]`,
//!   `alloc_req_free[r]`, `alloc_req_arg[r]` (combinationally, so the unit
//!   may grant it in that cycle); it is held until `alloc_req_grant[r]`.
//! - The warp waits until the unit's response (`alloc_resp_valid` with
//!   `alloc_resp_id` = r) and may issue again in the response cycle.
//! - Write back, in the response cycle: `awb_valid`, `awb_warp`, `awb_arg`
//!   (the instruction's register), `awb_free`, `awb_code` (the unit's
//!   `RES_*`), `awb_ptr` (MALLOC: the pointer, 0 on an error, to be written
//!   to register `awb_arg`; FREE: the chunk), `awb_front`/`awb_rear` (FREE:
//!   overflow found). A separate port from LOADMETA's `wb_*`: both can
//!   write in one cycle (for different warps).
//! - The unit has its own port to the heap memory for its canaries: they
//!   never take the SM memory port, so MALLOC/FREE do not delay loads,
//!   stores or metadata reads. A kernel is not done while a warp waits for
//!   the unit, nor in the cycle of an allocator response (so a kernel whose
//!   last event is a response at cycle t has `kcycles` = t + 1, where an MLU
//!   response or a load answer may come in the done cycle: the model's
//!   rule). The unit's background checks go on between kernels.
//! - The timing rule is `sim::sm_pipeline`'s "Canary allocator unit" with the
//!   unit model `sim::canary::alloc_unit` (testbench/tests/sm_pipeline_alloc.rs
//!   compares kernel cycles).
//!
//! # Device heap shoot-down (`sim::sm_pipeline` "The device heap")
//! With the canary unit's heap registered with the MLU, a chunk's malloc
//! or free must reach the MLB before any warp uses its result: the MLB may
//! hold the chunk's live entry (free) or a FREED entry of the memory it
//! reuses (malloc). The block outside (`SmPipelineAlloc`) says how many
//! INVALIDATEs a response needs; this block sends them:
//! - `alloc_resp_inv_n` (4: 0 = none) and `alloc_resp_inv_loc` (64: the first
//!   location; the i-th is + 32 i), valid with `alloc_resp_valid`. A response
//!   with `alloc_resp_inv_n` > 0 is held in `sd_*`; from the next cycle the
//!   held INVALIDATEs go to the MLU's request port, one in each cycle with
//!   `req_ready` high, id [`SHOOTDOWN_ID`] (no warp's), and no warp's
//!   LOADMETA/MEMCHECK issues while one is left. The response takes effect
//!   (write back, wake, requester free, `awb_*`) in the cycle its last
//!   INVALIDATE is presented, as if the unit had answered then.
//! - From a held response's cycle to its delivery's, `alloc_req_valid` is
//!   low (the requests stay posted): the unit answers nothing meanwhile.
//! - `meta_hold`: the memory refuses the MLU's node read in this cycle (its
//!   `mem_req_ready` low, no read taken or counted); the block outside
//!   holds reads of the directory while the allocator updates it.
//!
//! Verilog (checked by hand with the unit, 4 warps, 8 entries): the emitted
//! top passes `verilator --lint-only -Wall` except for UNOPTFLAT (the
//! scheduler's and the memory model's combinational paths run through this
//! block's single always block) and UNUSEDSIGNAL (the unit's response
//! fields a one-lane pipeline does not read: op, pass mask, lane, metadata,
//! addresses), so it is not yet a committed top of `verilog_out/`.
//!
//! Length: this file is over 800 lines because a rust-hdl block is one
//! `#[hdl_gen] fn update`, emitted as one Verilog always block, and rust-hdl
//! 0.46 cannot call a helper from it; the sub-blocks that can stand alone
//! are their own files (`mlu_unit.rs`, `mem_model.rs`).
use crate::mem_model::MemModel;
use crate::mlu_unit::MluUnit;
use sim::mlu_unit::UnitParams;
use crate::warp_sched::WarpSched;
use rust_hdl::prelude::*;
use sim::fault::Op;
pub use sim::sm_pipeline::SHOOTDOWN_ID;

/// Slot instruction kinds (the `kind` field).
pub const K_END: u64 = 0;
pub const K_ALU: u64 = 1;
pub const K_LOADMETA: u64 = 2;
pub const K_MEMCHECK: u64 = 3;
pub const K_LOAD: u64 = 4;
pub const K_STORE: u64 = 5;
pub const K_MALLOC: u64 = 6;
pub const K_FREE: u64 = 7;
/// Allocator requesters (`hw::canary::alloc_unit::REQUESTERS`).
pub const REQUESTERS: usize = crate::canary::alloc_unit::REQUESTERS;

#[derive(LogicBlock)]
pub struct SmPipeline<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize>
{
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub run: Signal<In, Bit>,
    pub data_latency: Signal<In, Bits<32>>,
    pub meta_latency: Signal<In, Bits<32>>,
    pub max_outstanding: Signal<In, Bits<8>>,
    // Fetch.
    pub fetch_req: Signal<Out, Bit>,
    pub fetch_req_warp: Signal<Out, Bits<WW>>,
    pub fetch_valid: Signal<In, Bit>,
    pub fetch_warp: Signal<In, Bits<WW>>,
    pub fetch_kind: Signal<In, Bits<3>>,
    pub fetch_count: Signal<In, Bits<16>>,
    pub fetch_ptr: Signal<In, Bits<64>>,
    pub fetch_width: Signal<In, Bits<5>>,
    pub fetch_arg: Signal<In, Bits<16>>,
    // Registers.
    pub rf_warp: Signal<Out, Bits<WW>>,
    pub rf_arg: Signal<Out, Bits<16>>,
    pub rf_loc: Signal<In, Bits<64>>,
    pub wb_valid: Signal<Out, Bit>,
    pub wb_warp: Signal<Out, Bits<WW>>,
    pub wb_arg: Signal<Out, Bits<16>>,
    pub wb_loc: Signal<Out, Bits<64>>,
    // Metadata nodes.
    pub meta_node_req: Signal<Out, Bit>,
    pub meta_node_addr: Signal<Out, Bits<51>>,
    pub meta_base: Signal<In, Bits<64>>,
    pub meta_size_tag: Signal<In, Bits<64>>,
    pub meta_link0: Signal<In, Bits<64>>,
    pub meta_link1: Signal<In, Bits<64>>,
    pub meta_error: Signal<In, Bit>,
    // Host MLU port and CSRs.
    pub host_req_valid: Signal<In, Bit>,
    pub host_req_op: Signal<In, Bits<3>>,
    pub host_req_ptr: Signal<In, Bits<64>>,
    pub host_req_loc: Signal<In, Bits<64>>,
    pub mlu_req_ready: Signal<Out, Bit>,
    pub mlu_resp_valid: Signal<Out, Bit>,
    pub mlu_resp_fault: Signal<Out, Bits<3>>,
    pub mlu_resp_loc: Signal<Out, Bits<64>>,
    pub csr_we: Signal<In, Bit>,
    pub csr_addr: Signal<In, Bits<3>>,
    pub csr_data: Signal<In, Bits<64>>,
    // Status and counters.
    pub kdone: Signal<Out, Bit>,
    pub kcycles: Signal<Out, Bits<32>>,
    pub cnt_cycles: Signal<Out, Bits<32>>,
    pub cnt_issued: Signal<Out, Bits<32>>,
    pub cnt_loads: Signal<Out, Bits<32>>,
    pub cnt_stores: Signal<Out, Bits<32>>,
    pub cnt_mlu_ops: Signal<Out, Bits<32>>,
    pub cnt_meta_reads: Signal<Out, Bits<32>>,
    pub cnt_mlu_faults: Signal<Out, Bits<32>>,
    // Canary allocator requester side (see the module doc).
    pub alloc_req_valid: [Signal<Out, Bit>; REQUESTERS],
    pub alloc_req_free: [Signal<Out, Bit>; REQUESTERS],
    pub alloc_req_arg: [Signal<Out, Bits<64>>; REQUESTERS],
    pub alloc_req_grant: [Signal<In, Bit>; REQUESTERS],
    pub alloc_resp_valid: Signal<In, Bit>,
    pub alloc_resp_id: Signal<In, Bits<3>>,
    pub alloc_resp_free: Signal<In, Bit>,
    pub alloc_resp_code: Signal<In, Bits<3>>,
    pub alloc_resp_ptr: Signal<In, Bits<64>>,
    pub alloc_resp_front: Signal<In, Bit>,
    pub alloc_resp_rear: Signal<In, Bit>,
    pub alloc_resp_inv_n: Signal<In, Bits<4>>,
    pub alloc_resp_inv_loc: Signal<In, Bits<64>>,
    pub meta_hold: Signal<In, Bit>,
    pub awb_valid: Signal<Out, Bit>,
    pub awb_warp: Signal<Out, Bits<WW>>,
    pub awb_arg: Signal<Out, Bits<16>>,
    pub awb_free: Signal<Out, Bit>,
    pub awb_code: Signal<Out, Bits<3>>,
    pub awb_ptr: Signal<Out, Bits<64>>,
    pub awb_front: Signal<Out, Bit>,
    pub awb_rear: Signal<Out, Bit>,
    pub cnt_alloc_ops: Signal<Out, Bits<32>>,
    // Blocks.
    pub mlu: MluUnit<N, IW, 1, 1>,
    pub mem: MemModel<Q, QW, WW>,
    pub sched: WarpSched<W, WW>,
    // Warp slots and wait flags.
    kind: [DFF<Bits<3>>; W],
    count: [DFF<Bits<16>>; W],
    ptr: [DFF<Bits<64>>; W],
    width: [DFF<Bits<5>>; W],
    arg: [DFF<Bits<16>>; W],
    wait_mlu: [DFF<Bit>; W],
    wait_load: [DFF<Bit>; W],
    wait_alloc: [DFF<Bit>; W],
    // Per requester: the request posted and not yet granted (`rq_pend`),
    // posted and not yet answered (`rq_busy`), its operands, its warp and
    // the register it writes back or reads.
    rq_pend: [DFF<Bit>; REQUESTERS],
    rq_busy: [DFF<Bit>; REQUESTERS],
    rq_free: [DFF<Bit>; REQUESTERS],
    rq_arg: [DFF<Bits<64>>; REQUESTERS],
    rq_warp: [DFF<Bits<WW>>; REQUESTERS],
    rq_reg: [DFF<Bits<16>>; REQUESTERS],
    // Per warp, its MLU operation in flight: a LOADMETA (writes back) and
    // its register.
    pend_lm: [DFF<Bit>; W],
    pend_arg: [DFF<Bits<16>>; W],
    // The response held for its INVALIDATEs: how many are left, the next
    // location, and the response's fields.
    sd_n: DFF<Bits<4>>,
    sd_loc: DFF<Bits<64>>,
    sd_id: DFF<Bits<3>>,
    sd_free: DFF<Bit>,
    sd_code: DFF<Bits<3>>,
    sd_ptr: DFF<Bits<64>>,
    sd_front: DFF<Bit>,
    sd_rear: DFF<Bit>,
    last: DFF<Bits<WW>>,
    kcycles_r: DFF<Bits<32>>,
    c_cycles: DFF<Bits<32>>,
    c_issued: DFF<Bits<32>>,
    c_loads: DFF<Bits<32>>,
    c_stores: DFF<Bits<32>>,
    c_mlu_ops: DFF<Bits<32>>,
    c_alloc_ops: DFF<Bits<32>>,
    c_meta_reads: DFF<Bits<32>>,
    c_mlu_faults: DFF<Bits<32>>,
    // Combinational.
    waiting: [Signal<Local, Bit>; W],
    mlu_resp_for: [Signal<Local, Bit>; W],
    port_free: Signal<Local, Bit>,
    inflight_ok: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    consumed: Signal<Local, Bit>,
    sel_kind: Signal<Local, Bits<3>>,
    sel_count: Signal<Local, Bits<16>>,
    sel_ptr: Signal<Local, Bits<64>>,
    sel_width: Signal<Local, Bits<5>>,
    sel_arg: Signal<Local, Bits<16>>,
    sel_mlu: Signal<Local, Bit>,
    sel_mem: Signal<Local, Bit>,
    sel_alloc: Signal<Local, Bit>,
    sel_req: Signal<Local, Bits<3>>,
    operand: Signal<Local, Bits<64>>,
    // The allocator response in effect this cycle (the unit's, or the held
    // one with its last INVALIDATE), and whether an INVALIDATE goes now.
    ar_valid: Signal<Local, Bit>,
    ar_id: Signal<Local, Bits<3>>,
    ar_free: Signal<Local, Bit>,
    ar_code: Signal<Local, Bits<3>>,
    ar_ptr: Signal<Local, Bits<64>>,
    ar_front: Signal<Local, Bit>,
    ar_rear: Signal<Local, Bit>,
    sd_busy: Signal<Local, Bit>,
    sd_go: Signal<Local, Bit>,
    hide_req: Signal<Local, Bit>,
    aresp_warp: Signal<Local, Bits<WW>>,
    aresp_reg: Signal<Local, Bits<16>>,
    rq_answered: [Signal<Local, Bit>; REQUESTERS],
    rq_new: [Signal<Local, Bit>; REQUESTERS],
    all_end: Signal<Local, Bit>,
    data_idle: Signal<Local, Bit>,
    done: Signal<Local, Bit>,
    // Constants.
    way: [Constant<Bits<WW>>; W],
    wid: [Constant<Bits<16>>; W],
    last_warp: Constant<Bits<WW>>,
    k_end: Constant<Bits<3>>,
    k_alu: Constant<Bits<3>>,
    k_loadmeta: Constant<Bits<3>>,
    k_memcheck: Constant<Bits<3>>,
    k_load: Constant<Bits<3>>,
    k_store: Constant<Bits<3>>,
    k_malloc: Constant<Bits<3>>,
    k_free: Constant<Bits<3>>,
    /// The allocator requester each warp posts to: w mod 8 (`pub` so that a
    /// test can build a mutant with a wrong mapping).
    pub req_of: [Constant<Bits<3>>; W],
    rid: [Constant<Bits<3>>; REQUESTERS],
    op_loadmeta: Constant<Bits<3>>,
    op_memcheck_g: Constant<Bits<3>>,
    op_invalidate: Constant<Bits<3>>,
    shoot_id: Constant<Bits<16>>,
    zero4: Constant<Bits<4>>,
    one4: Constant<Bits<4>>,
    node_step: Constant<Bits<64>>,
    one16: Constant<Bits<16>>,
    one32: Constant<Bits<32>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero32: Constant<Bits<32>>,
    zero32s: Constant<Bits<32>>,
    zero3: Constant<Bits<3>>,
    zero16: Constant<Bits<16>>,
}

/// The configurations the tests use: 4 or 8 warps, an 8-entry MLU, up to
/// 16 data requests in flight.
pub type SmPipeline4x8 = SmPipeline<4, 2, 8, 3, 16, 4>;
pub type SmPipeline8x8 = SmPipeline<8, 3, 8, 3, 16, 4>;

impl<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize>
    SmPipeline<W, WW, N, IW, Q, QW>
{
    pub fn new(b: &UnitParams) -> Self {
        let c3 = |v: u64| Constant::new(bits::<3>(v));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            run: Default::default(),
            data_latency: Default::default(),
            meta_latency: Default::default(),
            max_outstanding: Default::default(),
            fetch_req: Default::default(),
            fetch_req_warp: Default::default(),
            fetch_valid: Default::default(),
            fetch_warp: Default::default(),
            fetch_kind: Default::default(),
            fetch_count: Default::default(),
            fetch_ptr: Default::default(),
            fetch_width: Default::default(),
            fetch_arg: Default::default(),
            rf_warp: Default::default(),
            rf_arg: Default::default(),
            rf_loc: Default::default(),
            wb_valid: Default::default(),
            wb_warp: Default::default(),
            wb_arg: Default::default(),
            wb_loc: Default::default(),
            meta_node_req: Default::default(),
            meta_node_addr: Default::default(),
            meta_base: Default::default(),
            meta_size_tag: Default::default(),
            meta_link0: Default::default(),
            meta_link1: Default::default(),
            meta_error: Default::default(),
            host_req_valid: Default::default(),
            host_req_op: Default::default(),
            host_req_ptr: Default::default(),
            host_req_loc: Default::default(),
            mlu_req_ready: Default::default(),
            mlu_resp_valid: Default::default(),
            mlu_resp_fault: Default::default(),
            mlu_resp_loc: Default::default(),
            csr_we: Default::default(),
            csr_addr: Default::default(),
            csr_data: Default::default(),
            kdone: Default::default(),
            kcycles: Default::default(),
            cnt_cycles: Default::default(),
            cnt_issued: Default::default(),
            cnt_loads: Default::default(),
            cnt_stores: Default::default(),
            cnt_mlu_ops: Default::default(),
            cnt_meta_reads: Default::default(),
            cnt_mlu_faults: Default::default(),
            alloc_req_valid: std::array::from_fn(|_| Default::default()),
            alloc_req_free: std::array::from_fn(|_| Default::default()),
            alloc_req_arg: std::array::from_fn(|_| Default::default()),
            alloc_req_grant: std::array::from_fn(|_| Default::default()),
            alloc_resp_valid: Default::default(),
            alloc_resp_id: Default::default(),
            alloc_resp_free: Default::default(),
            alloc_resp_code: Default::default(),
            alloc_resp_ptr: Default::default(),
            alloc_resp_front: Default::default(),
            alloc_resp_rear: Default::default(),
            alloc_resp_inv_n: Default::default(),
            alloc_resp_inv_loc: Default::default(),
            meta_hold: Default::default(),
            awb_valid: Default::default(),
            awb_warp: Default::default(),
            awb_arg: Default::default(),
            awb_free: Default::default(),
            awb_code: Default::default(),
            awb_ptr: Default::default(),
            awb_front: Default::default(),
            awb_rear: Default::default(),
            cnt_alloc_ops: Default::default(),
            mlu: MluUnit::new(b),
            mem: Default::default(),
            sched: Default::default(),
            kind: std::array::from_fn(|_| Default::default()),
            count: std::array::from_fn(|_| Default::default()),
            ptr: std::array::from_fn(|_| Default::default()),
            width: std::array::from_fn(|_| Default::default()),
            arg: std::array::from_fn(|_| Default::default()),
            wait_mlu: std::array::from_fn(|_| Default::default()),
            wait_load: std::array::from_fn(|_| Default::default()),
            wait_alloc: std::array::from_fn(|_| Default::default()),
            rq_pend: std::array::from_fn(|_| Default::default()),
            rq_busy: std::array::from_fn(|_| Default::default()),
            rq_free: std::array::from_fn(|_| Default::default()),
            rq_arg: std::array::from_fn(|_| Default::default()),
            rq_warp: std::array::from_fn(|_| Default::default()),
            rq_reg: std::array::from_fn(|_| Default::default()),
            pend_lm: std::array::from_fn(|_| Default::default()),
            pend_arg: std::array::from_fn(|_| Default::default()),
            sd_n: Default::default(),
            sd_loc: Default::default(),
            sd_id: Default::default(),
            sd_free: Default::default(),
            sd_code: Default::default(),
            sd_ptr: Default::default(),
            sd_front: Default::default(),
            sd_rear: Default::default(),
            last: Default::default(),
            kcycles_r: Default::default(),
            c_cycles: Default::default(),
            c_issued: Default::default(),
            c_loads: Default::default(),
            c_stores: Default::default(),
            c_mlu_ops: Default::default(),
            c_alloc_ops: Default::default(),
            c_meta_reads: Default::default(),
            c_mlu_faults: Default::default(),
            waiting: std::array::from_fn(|_| Default::default()),
            mlu_resp_for: std::array::from_fn(|_| Default::default()),
            port_free: Default::default(),
            inflight_ok: Default::default(),
            issue: Default::default(),
            consumed: Default::default(),
            sel_kind: Default::default(),
            sel_count: Default::default(),
            sel_ptr: Default::default(),
            sel_width: Default::default(),
            sel_arg: Default::default(),
            sel_mlu: Default::default(),
            sel_mem: Default::default(),
            sel_alloc: Default::default(),
            sel_req: Default::default(),
            operand: Default::default(),
            ar_valid: Default::default(),
            ar_id: Default::default(),
            ar_free: Default::default(),
            ar_code: Default::default(),
            ar_ptr: Default::default(),
            ar_front: Default::default(),
            ar_rear: Default::default(),
            sd_busy: Default::default(),
            sd_go: Default::default(),
            hide_req: Default::default(),
            aresp_warp: Default::default(),
            aresp_reg: Default::default(),
            rq_answered: std::array::from_fn(|_| Default::default()),
            rq_new: std::array::from_fn(|_| Default::default()),
            all_end: Default::default(),
            data_idle: Default::default(),
            done: Default::default(),
            way: std::array::from_fn(|i| Constant::new(bits::<WW>(i as u64))),
            wid: std::array::from_fn(|i| Constant::new(bits::<16>(i as u64))),
            last_warp: Constant::new(bits::<WW>((W - 1) as u64)),
            k_end: c3(K_END),
            k_alu: c3(K_ALU),
            k_loadmeta: c3(K_LOADMETA),
            k_memcheck: c3(K_MEMCHECK),
            k_load: c3(K_LOAD),
            k_store: c3(K_STORE),
            k_malloc: c3(K_MALLOC),
            k_free: c3(K_FREE),
            req_of: std::array::from_fn(|w| c3((w % REQUESTERS) as u64)),
            rid: std::array::from_fn(|r| c3(r as u64)),
            op_loadmeta: c3(0),
            op_memcheck_g: c3(1),
            op_invalidate: c3(Op::Invalidate.bits() as u64),
            shoot_id: Constant::new(bits::<16>(SHOOTDOWN_ID as u64)),
            zero4: Constant::new(bits::<4>(0)),
            one4: Constant::new(bits::<4>(1)),
            node_step: Constant::new(bits::<64>(32)),
            one16: Constant::new(bits::<16>(1)),
            one32: Constant::new(bits::<32>(1)),
            zero8: Constant::new(bits::<8>(0)),
            one8: Constant::new(bits::<8>(1)),
            zero32: Constant::new(bits::<32>(0)),
            zero32s: Constant::new(bits::<32>(0)),
            zero3: Constant::new(bits::<3>(0)),
            zero16: Constant::new(bits::<16>(0)),
        }
    }
}

impl<const W: usize, const WW: usize, const N: usize, const IW: usize, const Q: usize, const QW: usize> Logic
    for SmPipeline<W, WW, N, IW, Q, QW>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            sd_n,
            sd_loc,
            sd_id,
            sd_free,
            sd_code,
            sd_ptr,
            sd_front,
            sd_rear,
            last,
            kcycles_r,
            c_cycles,
            c_issued,
            c_loads,
            c_stores,
            c_mlu_ops,
            c_alloc_ops,
            c_meta_reads,
            c_mlu_faults
        );
        for w in 0..W {
            self.kind[w].clock.next = self.clock.val();
            self.count[w].clock.next = self.clock.val();
            self.ptr[w].clock.next = self.clock.val();
            self.width[w].clock.next = self.clock.val();
            self.arg[w].clock.next = self.clock.val();
            self.wait_mlu[w].clock.next = self.clock.val();
            self.wait_load[w].clock.next = self.clock.val();
            self.kind[w].d.next = self.kind[w].q.val();
            self.count[w].d.next = self.count[w].q.val();
            self.ptr[w].d.next = self.ptr[w].q.val();
            self.width[w].d.next = self.width[w].q.val();
            self.arg[w].d.next = self.arg[w].q.val();
            self.wait_mlu[w].d.next = self.wait_mlu[w].q.val();
            self.wait_load[w].d.next = self.wait_load[w].q.val();
            self.wait_alloc[w].clock.next = self.clock.val();
            self.wait_alloc[w].d.next = self.wait_alloc[w].q.val();
            self.pend_lm[w].clock.next = self.clock.val();
            self.pend_arg[w].clock.next = self.clock.val();
            self.pend_lm[w].d.next = self.pend_lm[w].q.val();
            self.pend_arg[w].d.next = self.pend_arg[w].q.val();
        }
        for r in 0..REQUESTERS {
            self.rq_pend[r].clock.next = self.clock.val();
            self.rq_busy[r].clock.next = self.clock.val();
            self.rq_free[r].clock.next = self.clock.val();
            self.rq_arg[r].clock.next = self.clock.val();
            self.rq_warp[r].clock.next = self.clock.val();
            self.rq_reg[r].clock.next = self.clock.val();
            self.rq_pend[r].d.next = self.rq_pend[r].q.val();
            self.rq_busy[r].d.next = self.rq_busy[r].q.val();
            self.rq_free[r].d.next = self.rq_free[r].q.val();
            self.rq_arg[r].d.next = self.rq_arg[r].q.val();
            self.rq_warp[r].d.next = self.rq_warp[r].q.val();
            self.rq_reg[r].d.next = self.rq_reg[r].q.val();
        }
        self.mlu.clock.next = self.clock.val();
        self.mem.clock.next = self.clock.val();
        self.mlu.reset.next = self.reset.val();
        self.mem.reset.next = self.reset.val();
        self.mem.data_latency.next = self.data_latency.val();
        self.mem.meta_latency.next = self.meta_latency.val();

        // The MLU's response (registered) is for the waiting warp whose
        // number is its id (host operations run while no warp waits).
        for w in 0..W {
            self.mlu_resp_for[w].next =
                self.mlu.resp_valid.val() & self.wait_mlu[w].q.val() & (self.mlu.resp_id.val() == self.wid[w].val());
        }
        // The port is the MLU's whenever it drives a read (priority); the
        // memory takes every request.
        self.port_free.next = !self.mlu.mem_req_valid.val();
        self.inflight_ok.next = (self.mem.data_count.val() < self.max_outstanding.val()) | self.mem.data_resp.val();
        // Device heap shoot-down (module doc): the held response's next
        // INVALIDATE goes when the MLU is ready; with the last, the response
        // takes effect. Otherwise the unit's response does, unless it is
        // held now.
        self.sd_busy.next = self.sd_n.q.val() != self.zero4.val();
        self.sd_go.next = self.sd_busy.val() & self.mlu.req_ready.val();
        self.hide_req.next =
            self.sd_busy.val() | (self.alloc_resp_valid.val() & (self.alloc_resp_inv_n.val() != self.zero4.val()));
        if self.sd_busy.val() {
            self.ar_valid.next = self.sd_go.val() & (self.sd_n.q.val() == self.one4.val());
            self.ar_id.next = self.sd_id.q.val();
            self.ar_free.next = self.sd_free.q.val();
            self.ar_code.next = self.sd_code.q.val();
            self.ar_ptr.next = self.sd_ptr.q.val();
            self.ar_front.next = self.sd_front.q.val();
            self.ar_rear.next = self.sd_rear.q.val();
        } else {
            self.ar_valid.next = self.alloc_resp_valid.val() & (self.alloc_resp_inv_n.val() == self.zero4.val());
            self.ar_id.next = self.alloc_resp_id.val();
            self.ar_free.next = self.alloc_resp_free.val();
            self.ar_code.next = self.alloc_resp_code.val();
            self.ar_ptr.next = self.alloc_resp_ptr.val();
            self.ar_front.next = self.alloc_resp_front.val();
            self.ar_rear.next = self.alloc_resp_rear.val();
        }
        if self.sd_go.val() {
            self.sd_n.d.next = self.sd_n.q.val() - self.one4.val();
            self.sd_loc.d.next = self.sd_loc.q.val() + self.node_step.val();
        }
        if self.alloc_resp_valid.val() & (self.alloc_resp_inv_n.val() != self.zero4.val()) {
            self.sd_n.d.next = self.alloc_resp_inv_n.val();
            self.sd_loc.d.next = self.alloc_resp_inv_loc.val();
            self.sd_id.d.next = self.alloc_resp_id.val();
            self.sd_free.d.next = self.alloc_resp_free.val();
            self.sd_code.d.next = self.alloc_resp_code.val();
            self.sd_ptr.d.next = self.alloc_resp_ptr.val();
            self.sd_front.d.next = self.alloc_resp_front.val();
            self.sd_rear.d.next = self.alloc_resp_rear.val();
        }
        // The allocator's response: its requester's warp and register.
        self.aresp_warp.next = self.rq_warp[0].q.val();
        self.aresp_reg.next = self.rq_reg[0].q.val();
        for r in 0..REQUESTERS {
            self.rq_answered[r].next = self.ar_valid.val() & (self.ar_id.val() == self.rid[r].val());
            if self.ar_id.val() == self.rid[r].val() {
                self.aresp_warp.next = self.rq_warp[r].q.val();
                self.aresp_reg.next = self.rq_reg[r].q.val();
            }
        }

        // Which warps can issue.
        self.all_end.next = true;
        for w in 0..W {
            self.waiting[w].next = (self.wait_mlu[w].q.val() & !self.mlu_resp_for[w].val())
                | (self.wait_load[w].q.val()
                    & !(self.mem.data_resp.val()
                        & self.mem.data_resp_load.val()
                        & (self.mem.data_resp_warp.val() == self.way[w].val())))
                | (self.wait_alloc[w].q.val() & !(self.ar_valid.val() & (self.aresp_warp.val() == self.way[w].val())));
            self.sched.can[w].next = false;
            if self.run.val() & !self.waiting[w].val() {
                if self.kind[w].q.val() == self.k_alu.val() {
                    self.sched.can[w].next = true;
                }
                if (self.kind[w].q.val() == self.k_loadmeta.val()) | (self.kind[w].q.val() == self.k_memcheck.val()) {
                    self.sched.can[w].next = self.mlu.req_ready.val() & !self.sd_busy.val();
                }
                if (self.kind[w].q.val() == self.k_load.val()) | (self.kind[w].q.val() == self.k_store.val()) {
                    self.sched.can[w].next = self.port_free.val() & self.inflight_ok.val();
                }
                if (self.kind[w].q.val() == self.k_malloc.val()) | (self.kind[w].q.val() == self.k_free.val()) {
                    for r in 0..REQUESTERS {
                        if self.req_of[w].val() == self.rid[r].val() {
                            self.sched.can[w].next = !self.rq_busy[r].q.val() | self.rq_answered[r].val();
                        }
                    }
                }
            }
            if (self.kind[w].q.val() != self.k_end.val()) | self.waiting[w].val() {
                self.all_end.next = false;
            }
        }
        self.sched.last.next = self.last.q.val();
        self.issue.next = self.sched.valid.val();

        // The picked warp's slot.
        self.sel_kind.next = self.kind[0].q.val();
        self.sel_count.next = self.count[0].q.val();
        self.sel_ptr.next = self.ptr[0].q.val();
        self.sel_width.next = self.width[0].q.val();
        self.sel_arg.next = self.arg[0].q.val();
        self.sel_req.next = self.req_of[0].val();
        for w in 0..W {
            if self.sched.pick.val() == self.way[w].val() {
                self.sel_req.next = self.req_of[w].val();
                self.sel_kind.next = self.kind[w].q.val();
                self.sel_count.next = self.count[w].q.val();
                self.sel_ptr.next = self.ptr[w].q.val();
                self.sel_width.next = self.width[w].q.val();
                self.sel_arg.next = self.arg[w].q.val();
            }
        }
        self.sel_mlu.next = (self.sel_kind.val() == self.k_loadmeta.val()) | (self.sel_kind.val() == self.k_memcheck.val());
        self.sel_mem.next = (self.sel_kind.val() == self.k_load.val()) | (self.sel_kind.val() == self.k_store.val());
        self.sel_alloc.next = (self.sel_kind.val() == self.k_malloc.val()) | (self.sel_kind.val() == self.k_free.val());
        self.consumed.next =
            self.issue.val() & ((self.sel_kind.val() != self.k_alu.val()) | (self.sel_count.val() == self.one16.val()));
        self.fetch_req.next = self.consumed.val();
        self.fetch_req_warp.next = self.sched.pick.val();

        // Registers: write back LOADMETA results, read MEMCHECK locations.
        self.wb_valid.next = false;
        self.wb_warp.next = self.way[0].val();
        self.wb_arg.next = self.pend_arg[0].q.val();
        for w in 0..W {
            if self.mlu_resp_for[w].val() {
                self.wb_valid.next = self.pend_lm[w].q.val();
                self.wb_warp.next = self.way[w].val();
                self.wb_arg.next = self.pend_arg[w].q.val();
            }
        }
        self.wb_loc.next = self.mlu.resp_loc.val();
        self.rf_warp.next = self.sched.pick.val();
        self.rf_arg.next = self.sel_arg.val();
        // The register operand (MEMCHECK's location, FREE's pointer), with a
        // write back of that register in this cycle forwarded.
        self.operand.next = self.rf_loc.val();
        if self.wb_valid.val()
            & (self.wb_warp.val() == self.sched.pick.val())
            & (self.wb_arg.val() == self.sel_arg.val())
        {
            self.operand.next = self.mlu.resp_loc.val();
        }
        if self.ar_valid.val()
            & !self.ar_free.val()
            & (self.aresp_warp.val() == self.sched.pick.val())
            & (self.aresp_reg.val() == self.sel_arg.val())
        {
            self.operand.next = self.ar_ptr.val();
        }
        // Allocator write back: every response, to its warp's register.
        self.awb_valid.next = self.ar_valid.val();
        self.awb_warp.next = self.aresp_warp.val();
        self.awb_arg.next = self.aresp_reg.val();
        self.awb_free.next = self.ar_free.val();
        self.awb_code.next = self.ar_code.val();
        self.awb_ptr.next = self.ar_ptr.val();
        self.awb_front.next = self.ar_front.val();
        self.awb_rear.next = self.ar_rear.val();
        // Allocator requests: the posted one, or the one issued this cycle
        // (the unit may grant it in this cycle).
        for r in 0..REQUESTERS {
            self.rq_new[r].next = self.issue.val() & self.sel_alloc.val() & (self.sel_req.val() == self.rid[r].val());
            self.alloc_req_valid[r].next = (self.rq_pend[r].q.val() | self.rq_new[r].val()) & !self.hide_req.val();
            self.alloc_req_free[r].next = self.rq_free[r].q.val();
            self.alloc_req_arg[r].next = self.rq_arg[r].q.val();
            if self.rq_new[r].val() {
                self.alloc_req_free[r].next = self.sel_kind.val() == self.k_free.val();
                if self.sel_kind.val() == self.k_free.val() {
                    self.alloc_req_arg[r].next = self.operand.val();
                } else {
                    self.alloc_req_arg[r].next = self.sel_ptr.val();
                }
            }
        }

        // The MLU: the picked warp's operation (id = the warp) while running,
        // else the host's (id 0).
        self.mlu.req_mask[0].next = true;
        self.mlu.req_sbase.next = self.zero32.val();
        self.mlu.req_ssize.next = self.zero32s.val();
        self.mlu.req_width.next = self.sel_width.val();
        self.mlu.csr_we.next = self.csr_we.val();
        self.mlu.csr_addr.next = self.csr_addr.val();
        self.mlu.csr_data.next = self.csr_data.val();
        if self.run.val() {
            self.mlu.req_valid.next = self.issue.val() & self.sel_mlu.val();
            self.mlu.req_id.next = self.zero16.val();
            for w in 0..W {
                if self.sched.pick.val() == self.way[w].val() {
                    self.mlu.req_id.next = self.wid[w].val();
                }
            }
            if self.sel_kind.val() == self.k_memcheck.val() {
                self.mlu.req_op.next = self.op_memcheck_g.val();
            } else {
                self.mlu.req_op.next = self.op_loadmeta.val();
            }
            self.mlu.req_ptr[0].next = self.sel_ptr.val();
            self.mlu.req_loc.next = self.operand.val();
            if self.sd_go.val() {
                self.mlu.req_valid.next = true;
                self.mlu.req_id.next = self.shoot_id.val();
                self.mlu.req_op.next = self.op_invalidate.val();
                self.mlu.req_loc.next = self.sd_loc.q.val();
            }
        } else {
            self.mlu.req_valid.next = self.host_req_valid.val();
            self.mlu.req_id.next = self.zero16.val();
            self.mlu.req_op.next = self.host_req_op.val();
            self.mlu.req_ptr[0].next = self.host_req_ptr.val();
            self.mlu.req_loc.next = self.host_req_loc.val();
        }
        self.mlu_req_ready.next = self.mlu.req_ready.val();
        self.mlu_resp_valid.next = self.mlu.resp_valid.val();
        self.mlu_resp_fault.next = self.mlu.resp_fault.val();
        self.mlu_resp_loc.next = self.mlu.resp_loc.val();
        // The memory port: the MLU's node reads always go; the load/store
        // unit's request only when the port is free (the scheduler checked).
        self.mlu.mem_req_ready.next = !self.meta_hold.val();
        self.mem.meta_req.next = self.mlu.mem_req_valid.val() & !self.meta_hold.val();
        self.mem.meta_id.next = self.mlu.mem_req_id.val();
        self.mem.meta_node.next = self.mlu.mem_req_node.val();
        self.meta_node_req.next = self.mem.meta_node_req.val();
        self.meta_node_addr.next = self.mem.meta_node_addr.val();
        self.mem.meta_base.next = self.meta_base.val();
        self.mem.meta_size_tag.next = self.meta_size_tag.val();
        self.mem.meta_link0.next = self.meta_link0.val();
        self.mem.meta_link1.next = self.meta_link1.val();
        self.mem.meta_error.next = self.meta_error.val();
        self.mlu.mem_resp_valid.next = self.mem.meta_resp.val();
        self.mlu.mem_resp_id.next = self.mem.meta_resp_id.val();
        self.mlu.mem_resp_error.next = self.mem.meta_resp_error.val();
        self.mlu.mem_resp_base.next = self.mem.meta_resp_base.val();
        self.mlu.mem_resp_size_tag.next = self.mem.meta_resp_size_tag.val();
        self.mlu.mem_resp_link0.next = self.mem.meta_resp_link0.val();
        self.mlu.mem_resp_link1.next = self.mem.meta_resp_link1.val();
        self.mem.data_req.next = self.issue.val() & self.sel_mem.val();
        self.mem.data_warp.next = self.sched.pick.val();
        self.mem.data_load.next = self.sel_kind.val() == self.k_load.val();

        // Slot and wait updates: responses clear, the issue sets, the fetch
        // refills (an unanswered fetch leaves END).
        for r in 0..REQUESTERS {
            self.rq_pend[r].d.next = (self.rq_pend[r].q.val() | self.rq_new[r].val()) & !self.alloc_req_grant[r].val();
            if self.rq_answered[r].val() {
                self.rq_busy[r].d.next = false;
            }
            if self.rq_new[r].val() {
                self.rq_busy[r].d.next = true;
                self.rq_free[r].d.next = self.alloc_req_free[r].val();
                self.rq_arg[r].d.next = self.alloc_req_arg[r].val();
                self.rq_warp[r].d.next = self.sched.pick.val();
                self.rq_reg[r].d.next = self.sel_arg.val();
            }
        }
        for w in 0..W {
            if self.mlu_resp_for[w].val() {
                self.wait_mlu[w].d.next = false;
            }
            if self.mem.data_resp.val()
                & self.mem.data_resp_load.val()
                & (self.mem.data_resp_warp.val() == self.way[w].val())
            {
                self.wait_load[w].d.next = false;
            }
            if self.ar_valid.val() & (self.aresp_warp.val() == self.way[w].val()) {
                self.wait_alloc[w].d.next = false;
            }
            if self.issue.val() & (self.sched.pick.val() == self.way[w].val()) {
                if self.sel_kind.val() == self.k_alu.val() {
                    self.count[w].d.next = self.count[w].q.val() - self.one16.val();
                }
                if self.sel_mlu.val() {
                    self.wait_mlu[w].d.next = true;
                    self.pend_lm[w].d.next = self.sel_kind.val() == self.k_loadmeta.val();
                    self.pend_arg[w].d.next = self.sel_arg.val();
                }
                if self.sel_kind.val() == self.k_load.val() {
                    self.wait_load[w].d.next = true;
                }
                if self.sel_alloc.val() {
                    self.wait_alloc[w].d.next = true;
                }
                if self.consumed.val() {
                    self.kind[w].d.next = self.k_end.val();
                }
            }
            if self.fetch_valid.val() & (self.fetch_warp.val() == self.way[w].val()) {
                self.kind[w].d.next = self.fetch_kind.val();
                self.count[w].d.next = self.fetch_count.val();
                self.ptr[w].d.next = self.fetch_ptr.val();
                self.width[w].d.next = self.fetch_width.val();
                self.arg[w].d.next = self.fetch_arg.val();
            }
        }

        // Kernel end and counters.
        self.data_idle.next = (self.mem.data_count.val() == self.zero8.val())
            | ((self.mem.data_count.val() == self.one8.val()) & self.mem.data_resp.val());
        // Not in an allocator response's cycle (`sim::sm_pipeline`'s rule: a
        // kernel ends no earlier than the last response + 1), unlike an MLU
        // response or a load's answer, which may come in the done cycle.
        self.done.next = self.run.val() & self.all_end.val() & self.data_idle.val() & !self.ar_valid.val();
        self.kdone.next = self.done.val();
        self.kcycles.next = self.kcycles_r.q.val();
        if self.run.val() {
            if self.issue.val() {
                self.last.d.next = self.sched.pick.val();
            }
            if !self.done.val() {
                self.kcycles_r.d.next = self.kcycles_r.q.val() + self.one32.val();
                self.c_cycles.d.next = self.c_cycles.q.val() + self.one32.val();
            }
        } else {
            self.last.d.next = self.last_warp.val();
            self.kcycles_r.d.next = self.zero32.val();
        }
        if self.issue.val() {
            self.c_issued.d.next = self.c_issued.q.val() + self.one32.val();
            if self.sel_mlu.val() {
                self.c_mlu_ops.d.next = self.c_mlu_ops.q.val() + self.one32.val();
            }
            if self.sel_kind.val() == self.k_load.val() {
                self.c_loads.d.next = self.c_loads.q.val() + self.one32.val();
            }
            if self.sel_kind.val() == self.k_store.val() {
                self.c_stores.d.next = self.c_stores.q.val() + self.one32.val();
            }
            if self.sel_alloc.val() {
                self.c_alloc_ops.d.next = self.c_alloc_ops.q.val() + self.one32.val();
            }
        }
        self.cnt_cycles.next = self.c_cycles.q.val();
        self.cnt_issued.next = self.c_issued.q.val();
        self.cnt_loads.next = self.c_loads.q.val();
        self.cnt_stores.next = self.c_stores.q.val();
        self.cnt_mlu_ops.next = self.c_mlu_ops.q.val();
        self.cnt_alloc_ops.next = self.c_alloc_ops.q.val();
        if self.mlu.mem_req_valid.val() & !self.meta_hold.val() {
            self.c_meta_reads.d.next = self.c_meta_reads.q.val() + self.one32.val();
        }
        if self.run.val() & self.mlu.resp_valid.val() & (self.mlu.resp_fault.val() != self.zero3.val()) {
            self.c_mlu_faults.d.next = self.c_mlu_faults.q.val() + self.one32.val();
        }
        self.cnt_meta_reads.next = self.c_meta_reads.q.val();
        self.cnt_mlu_faults.next = self.c_mlu_faults.q.val();
        if self.reset.val() {
            self.c_meta_reads.d.next = self.zero32.val();
            self.c_mlu_faults.d.next = self.zero32.val();
            self.last.d.next = self.last_warp.val();
            self.kcycles_r.d.next = self.zero32.val();
            self.c_cycles.d.next = self.zero32.val();
            self.c_issued.d.next = self.zero32.val();
            self.c_loads.d.next = self.zero32.val();
            self.c_stores.d.next = self.zero32.val();
            self.c_mlu_ops.d.next = self.zero32.val();
            self.c_alloc_ops.d.next = self.zero32.val();
            for w in 0..W {
                self.kind[w].d.next = self.k_end.val();
                self.wait_mlu[w].d.next = false;
                self.wait_load[w].d.next = false;
                self.wait_alloc[w].d.next = false;
            }
            for r in 0..REQUESTERS {
                self.rq_pend[r].d.next = false;
                self.rq_busy[r].d.next = false;
            }
            self.sd_n.d.next = self.zero4.val();
        }
    }
}
