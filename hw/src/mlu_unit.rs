//! `MluUnit<N, IW, L, LW>`: the MLU as an SM unit (spec section 6,
//! docs/design.md "The MLU as an SM unit"): pipelined, non-blocking,
//! warp-wide. The golden model is `sim::mlu_unit::MluUnit`, cycle for cycle;
//! read its module doc first (stages, miss slots, merging, replay,
//! INVALIDATE/FLUSH ordering, back-pressure). Blocks: the MLB
//! ([`Mlb`], hit latency m), K [`Walker`]s, the lane checks
//! ([`LaneChecks`]), with one or two check stages (c; at 2 the lanes'
//! faults are registered and the lowest faulting lane picked in stage D).
//! A walk's fill reaches the MLB through a fill register (`fq_*`, the
//! model's `fill_q`), a cycle after the walk ends. Counters (spec section
//! 6): `cnt_*` below, equal to the model's `UnitCounters` once the unit has
//! been idle for two cycles.
//!
//! # Ports (one clock, rising edge; inputs sampled at the edge)
//! - `reset`: synchronous; empties the pipeline, slots, walkers and MLB;
//!   CSRs to their reset values. Hold one cycle after power-up.
//! - Request: `req_valid`, `req_ready` (from registers; taken when both are
//!   high), `req_id` (16), `req_op` (3, sim::fault::Op), `req_mask[i]`,
//!   `req_ptr[i]` (64) per lane, `req_width` (5), `req_loc` (64),
//!   `req_sbase`, `req_ssize` (32).
//! - Response (registered, no ready: the SM takes one per cycle):
//!   `resp_valid`, `resp_id`, `resp_op`, `resp_pass[i]`, `resp_fault` (3),
//!   `resp_lane` (LW), `resp_loc` (64: LOADMETA's location, NO_META when
//!   none or on a fault), `resp_meta_valid` with `resp_base`, `resp_size`
//!   (56), `resp_tag` (8), `resp_addr[i]` (56: the untagged lane address).
//! - Metadata port: `mem_req_valid`, `mem_req_ready`, `mem_req_id` (3: the
//!   walker), `mem_req_node` (51: address bits 55..5 of the 32-byte node);
//!   `mem_resp_valid`, `mem_resp_id`, `mem_resp_error`, `mem_resp_base`,
//!   `mem_resp_size_tag`, `mem_resp_link0`, `mem_resp_link1` (64 each), any
//!   order, any latency of at least one cycle, always taken.
//! - CSR write port: `csr_we`, `csr_addr` (3: 0 MODE, 1 STRUCTURE, 2 ROOT,
//!   3 STEP_LIMIT, 4 HEAP_BASE, 5 HEAP_MASK, 6 HEAP_DIR: the device heap's
//!   window, an aligned power-of-two region, reset 0 = off), `csr_data` (64). Write only while the unit is
//!   idle.
//! - Counters (32, wrapping, cleared by reset; registered): `cnt_lookups`
//!   (MLB searches), `cnt_hits`, `cnt_misses` (searches that missed, each
//!   taking a miss slot), `cnt_merged` (misses that joined a walk in flight
//!   or a waiting group of their block), `cnt_nodes` (nodes visited by the
//!   walkers), `cnt_faults` (responses with a fault). An event is registered
//!   in the cycle the RTL decides it (for hits and misses at m = 2 a cycle
//!   after the model's) and counted in the next (`hw::counter::EventCounter`,
//!   a 12-bit and a 20-bit part), so `cnt_*` lag the model's
//!   counts: compare them once the unit has been idle for two cycles
//!   (`UnitOut::idle_counters`).
//!
//! Length: this file is over 800 lines because a rust-hdl block is one
//! `#[hdl_gen] fn update`, emitted as one Verilog always block, and rust-hdl
//! 0.46 cannot call a helper from it; the sub-blocks that can stand alone
//! are their own files (`mlb.rs`, `walker.rs`, `lane_checks.rs`, `in_bounds.rs`).
use crate::canary::widen::Widen;
use crate::counter::EventCounter;
use crate::lane_checks::LaneChecks;
use crate::mlb::Mlb;
use crate::mlu::{
    LocWiden, CSR_HEAP_BASE, CSR_HEAP_DIR, CSR_HEAP_MASK, CSR_MODE, CSR_ROOT, CSR_STEP_LIMIT, CSR_STRUCTURE, RES_FOUND, RES_LIMIT,
    RES_MEM_ERROR, RES_NOT_FOUND,
};
use crate::prio_enc::{array_init, index_width};
use crate::walker::Walker;
use rust_hdl::prelude::*;
use sim::config::{Mode, Structure};
use sim::mlu_unit::UnitParams;
use sim::fault::{FaultCode, Op};
use sim::mlb::LOC_MASK;
use sim::pointer::{ADDR_MASK, NO_META};

/// Lanes read by one copy of the metadata registers (`m_*`). At 8 a
/// register bit drove some 100 gate inputs through two buffer levels
/// (about 135 ps in ASAP7), the unit's response-fault path; at 4 one level
/// is left, for 4 more copies of 184 bits at 32 lanes.
const LANES_PER_COPY: usize = 4;

/// R, the miss slots of every generated unit: the model's.
pub use sim::mlu_unit::MISS_SLOTS;

fn regs<T: Synth>(n: usize) -> Vec<DFF<T>> {
    (0..n).map(|_| DFF::default()).collect()
}

fn sigs<T: Synth>(n: usize) -> Vec<Signal<Local, T>> {
    (0..n).map(|_| Signal::default()).collect()
}

fn c3(v: u64) -> Constant<Bits<3>> {
    Constant::new(v.into())
}

#[derive(LogicBlock)]
pub struct MluUnit<const N: usize, const IW: usize, const L: usize, const LW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_id: Signal<In, Bits<16>>,
    pub req_op: Signal<In, Bits<3>>,
    pub req_mask: [Signal<In, Bit>; L],
    pub req_ptr: [Signal<In, Bits<64>>; L],
    pub req_width: Signal<In, Bits<5>>,
    pub req_loc: Signal<In, Bits<64>>,
    pub req_sbase: Signal<In, Bits<32>>,
    pub req_ssize: Signal<In, Bits<32>>,
    pub resp_valid: Signal<Out, Bit>,
    pub resp_id: Signal<Out, Bits<16>>,
    pub resp_op: Signal<Out, Bits<3>>,
    pub resp_pass: [Signal<Out, Bit>; L],
    pub resp_fault: Signal<Out, Bits<3>>,
    pub resp_lane: Signal<Out, Bits<LW>>,
    pub resp_loc: Signal<Out, Bits<64>>,
    pub resp_meta_valid: Signal<Out, Bit>,
    pub resp_base: Signal<Out, Bits<56>>,
    pub resp_size: Signal<Out, Bits<56>>,
    pub resp_tag: Signal<Out, Bits<8>>,
    pub resp_addr: [Signal<Out, Bits<56>>; L],
    pub mem_req_valid: Signal<Out, Bit>,
    pub mem_req_ready: Signal<In, Bit>,
    pub mem_req_id: Signal<Out, Bits<3>>,
    pub mem_req_node: Signal<Out, Bits<51>>,
    pub mem_resp_valid: Signal<In, Bit>,
    pub mem_resp_id: Signal<In, Bits<3>>,
    pub mem_resp_error: Signal<In, Bit>,
    pub mem_resp_base: Signal<In, Bits<64>>,
    pub mem_resp_size_tag: Signal<In, Bits<64>>,
    pub mem_resp_link0: Signal<In, Bits<64>>,
    pub mem_resp_link1: Signal<In, Bits<64>>,
    pub csr_we: Signal<In, Bit>,
    pub csr_addr: Signal<In, Bits<3>>,
    pub csr_data: Signal<In, Bits<64>>,
    pub cnt_lookups: Signal<Out, Bits<32>>,
    pub cnt_hits: Signal<Out, Bits<32>>,
    pub cnt_misses: Signal<Out, Bits<32>>,
    pub cnt_merged: Signal<Out, Bits<32>>,
    pub cnt_nodes: Signal<Out, Bits<32>>,
    pub cnt_faults: Signal<Out, Bits<32>>,
    // Blocks.
    pub mlb: Mlb<N, IW>,
    pub walkers: Vec<Walker>,
    checks: LaneChecks<L, LW>,
    loc_out: LocWiden,
    sbase_w: Widen<56, 32>,
    ssize_w: Widen<56, 32>,
    // Counters (EventCounter: the event is registered and counted the cycle
    // after, in a 12-bit and a 20-bit part, so no decision path runs on into a
    // 32-bit increment). `visits[k]`: nodes visited this cycle by walkers
    // below k.
    ctr_lookups: EventCounter,
    ctr_hits: EventCounter,
    ctr_misses: EventCounter,
    ctr_merged: EventCounter,
    ctr_nodes: EventCounter,
    ctr_faults: EventCounter,
    visits: Vec<Signal<Local, Bits<4>>>,
    zero4: Constant<Bits<4>>,
    one4: Constant<Bits<4>>,
    // CSRs.
    mode_r: DFF<Bit>,
    structure_r: DFF<Bit>,
    root_r: DFF<Bits<64>>,
    limit_r: DFF<Bits<16>>,
    // The device heap's window (sim::mlu "Heap window"), read by the walkers.
    heap_base_r: DFF<Bits<64>>,
    heap_mask_r: DFF<Bits<64>>,
    heap_dir_r: DFF<Bits<64>>,
    mode_reset: Constant<Bit>,
    structure_reset: Constant<Bit>,
    limit_reset: Constant<Bits<16>>,
    // Pipeline stages A (0) .. C (m): per field, one register per stage
    // (lane fields: stage * L + lane).
    p_valid: Vec<DFF<Bit>>,
    p_replay: Vec<DFF<Bit>>,
    p_id: Vec<DFF<Bits<16>>>,
    p_op: Vec<DFF<Bits<3>>>,
    p_mask: Vec<DFF<Bit>>,
    p_ptr: Vec<DFF<Bits<64>>>,
    p_width: Vec<DFF<Bits<5>>>,
    p_loc: Vec<DFF<Bits<64>>>,
    p_sbase: Vec<DFF<Bits<32>>>,
    p_ssize: Vec<DFF<Bits<32>>>,
    p_key_valid: Vec<DFF<Bit>>,
    p_key_range: Vec<DFF<Bit>>,
    p_key: Vec<DFF<Bits<64>>>,
    /// Stage A's key again, as the MLB's range search key (`a_rkey`, loaded
    /// with a range key) and location search key (`a_lkey`, with a
    /// location), each holding otherwise: one key register drove both
    /// searches' compares in every entry (some 100 gate inputs per bit),
    /// and its buffer tree, five deep, was the 16-entry unit's longest path.
    a_rkey: DFF<Bits<56>>,
    /// The range key again, inverted (`a_rkey_n`, loaded with `a_rkey`):
    /// the upper half of the MLB's entries compares against it
    /// (`Mlb::rs_addr_entry`), so each register bit drives half the
    /// compares. A plain copy would not survive synthesis: Yosys merges
    /// flip-flops with the same input and enable into one.
    a_rkey_n: DFF<Bits<56>>,
    a_lkey: DFF<Bits<51>>,
    /// The check stage's location operand names metadata (neither 0 nor
    /// NO_META), registered from the stage before: the lane checks' one
    /// use of it (`LaneChecks::loc_meta`).
    c_loc_meta: DFF<Bit>,
    /// The check stage's key is a range key in the device heap's window,
    /// registered from the stage before (as `c_loc_meta`): the window's
    /// compare is made once per request on a pipeline register, and a miss
    /// slot keeps the result (`s_heap`), so a walker is handed one bit
    /// instead of comparing the key it is offered behind the slot select.
    c_heap: DFF<Bit>,
    /// The heap window's lookup path is built (`UnitParams::heap_path`).
    /// Without it `c_heap` is 0 and synthesis removes the window's
    /// compare, its CSRs and the walkers' directory step.
    heap_path: Constant<Bit>,
    p_res: Vec<DFF<Bits<2>>>,
    p_res_loc: Vec<DFF<Bits<51>>>,
    p_res_base: Vec<DFF<Bits<56>>>,
    p_res_size: Vec<DFF<Bits<56>>>,
    p_res_tag: Vec<DFF<Bits<8>>>,
    // Miss slots (lane fields: slot * L + lane).
    s_valid: Vec<DFF<Bit>>,
    s_id: Vec<DFF<Bits<16>>>,
    s_op: Vec<DFF<Bits<3>>>,
    s_mask: Vec<DFF<Bit>>,
    s_ptr: Vec<DFF<Bits<64>>>,
    s_width: Vec<DFF<Bits<5>>>,
    s_loc: Vec<DFF<Bits<64>>>,
    s_sbase: Vec<DFF<Bits<32>>>,
    s_ssize: Vec<DFF<Bits<32>>>,
    s_key_range: Vec<DFF<Bit>>,
    s_key: Vec<DFF<Bits<64>>>,
    s_assigned: Vec<DFF<Bit>>,
    s_walker: Vec<DFF<Bits<3>>>,
    s_done: Vec<DFF<Bit>>,
    /// `s_same[s * R + t]`: slots s and t hold the same key (range flag and
    /// key), written when either is filled, so the group that a walker
    /// takes is known without comparing 64-bit keys after the pick.
    s_same: Vec<DFF<Bit>>,
    /// The slot's key is in the heap window (`c_heap` when it was written).
    s_heap: Vec<DFF<Bit>>,
    s_res: Vec<DFF<Bits<2>>>,
    s_res_loc: Vec<DFF<Bits<51>>>,
    s_res_base: Vec<DFF<Bits<56>>>,
    s_res_size: Vec<DFF<Bits<56>>>,
    s_res_tag: Vec<DFF<Bits<8>>>,
    // Response registers.
    r_valid: DFF<Bit>,
    r_id: DFF<Bits<16>>,
    r_op: DFF<Bits<3>>,
    r_pass: [DFF<Bit>; L],
    r_fault: DFF<Bits<3>>,
    r_lane: DFF<Bits<LW>>,
    r_loc: DFF<Bits<64>>,
    r_meta_valid: DFF<Bit>,
    r_base: DFF<Bits<56>>,
    r_size: DFF<Bits<56>>,
    r_tag: DFF<Bits<8>>,
    r_addr: [DFF<Bits<56>>; L],
    // Stage D, the second check stage (c = 2 only; empty at c = 1): what the
    // response needs beside the lane checks' own stage register.
    d_valid: Vec<DFF<Bit>>,
    d_id: Vec<DFF<Bits<16>>>,
    d_op: Vec<DFF<Bits<3>>>,
    d_key_valid: Vec<DFF<Bit>>,
    d_found: Vec<DFF<Bit>>,
    d_res: Vec<DFF<Bits<2>>>,
    d_loc: Vec<DFF<Bits<51>>>,
    d_base: Vec<DFF<Bits<56>>>,
    d_size: Vec<DFF<Bits<56>>>,
    d_tag: Vec<DFF<Bits<8>>>,
    d_sbase: Vec<DFF<Bits<32>>>,
    d_ssize: Vec<DFF<Bits<32>>>,
    d_addr: Vec<DFF<Bits<56>>>,
    // The response's inputs: stage C's (c = 1) or stage D's (c = 2).
    k_valid: Signal<Local, Bit>,
    k_id: Signal<Local, Bits<16>>,
    k_op: Signal<Local, Bits<3>>,
    k_key_valid: Signal<Local, Bit>,
    k_found: Signal<Local, Bit>,
    k_res: Signal<Local, Bits<2>>,
    k_loc: Signal<Local, Bits<64>>,
    k_base: Signal<Local, Bits<56>>,
    k_size: Signal<Local, Bits<56>>,
    k_tag: Signal<Local, Bits<8>>,
    k_sbase: Signal<Local, Bits<56>>,
    k_ssize: Signal<Local, Bits<56>>,
    k_addr: [Signal<Local, Bits<56>>; L],
    // Combinational terms. Prefix chains (`*_pre[k]`: some earlier index
    // qualifies) make each "lowest index" pick log-free but loop-free.
    in_key_valid: Signal<Local, Bit>,
    in_key_range: Signal<Local, Bit>,
    in_key: Signal<Local, Bits<64>>,
    in_tagged: Vec<Signal<Local, Bit>>,
    a_search: Signal<Local, Bit>,
    maintenance: Signal<Local, Bit>,
    // The fill register (sim::mlu_unit fill_q): a walk's result on its
    // way to the MLB, written there a cycle later.
    fq_valid: DFF<Bit>,
    fq_loc: DFF<Bits<51>>,
    fq_base: DFF<Bits<56>>,
    fq_size: DFF<Bits<56>>,
    fq_tag: DFF<Bits<8>>,
    wants_fill: Vec<Signal<Local, Bit>>,
    fill_pre: Vec<Signal<Local, Bit>>,
    fill_grant: Vec<Signal<Local, Bit>>,
    taken: Vec<Signal<Local, Bit>>,
    port_pre: Vec<Signal<Local, Bit>>,
    port_grant: Vec<Signal<Local, Bit>>,
    mergeable: Vec<Signal<Local, Bit>>,
    free1_pre: Vec<Signal<Local, Bit>>,
    free1: Vec<Signal<Local, Bit>>,
    free2_pre: Vec<Signal<Local, Bit>>,
    free2: Vec<Signal<Local, Bit>>,
    replay_pre: Vec<Signal<Local, Bit>>,
    replay_pick: Vec<Signal<Local, Bit>>,
    any_replay: Signal<Local, Bit>,
    /// The replay pick (the lowest slot that is valid and done), computed
    /// a cycle early from the slots' next state and registered: it selects
    /// some 2,200 stage-A register inputs, and the buffer chain synthesis
    /// builds for that fan-out no longer follows the pick's priority logic.
    /// `replay_next_pre`: a lower slot will be valid and done.
    replay_q: Vec<DFF<Bit>>,
    replay_next_pre: Vec<Signal<Local, Bit>>,
    /// The unassigned slots (valid, no walker yet), the lowest of them and
    /// whether there is one, registered the same way from the slots' next
    /// state (`unas_next`, `unas_next_pre`): the priority chain over the
    /// slots' valid bits ahead of `assign_now` was the 8-entry unit's
    /// longest path into the walkers' state and the slots' walker index.
    unas_q: Vec<DFF<Bit>>,
    unas_pick_q: Vec<DFF<Bit>>,
    unas_any_q: DFF<Bit>,
    unas_next: Vec<Signal<Local, Bit>>,
    unas_next_pre: Vec<Signal<Local, Bit>>,
    unas: Vec<Signal<Local, Bit>>,
    unas_pick: Vec<Signal<Local, Bit>>,
    // Per slot, its walker's result and whether that walker is taken now,
    // selected by the slot's walker index (a register), so the late `taken`
    // is the one enable of the slot's result registers.
    sw_take: Vec<Signal<Local, Bit>>,
    sw_res: Vec<Signal<Local, Bits<2>>>,
    sw_loc: Vec<Signal<Local, Bits<51>>>,
    sw_base: Vec<Signal<Local, Bits<56>>>,
    sw_size: Vec<Signal<Local, Bits<56>>>,
    sw_tag: Vec<Signal<Local, Bits<8>>>,
    assign_now: Signal<Local, Bit>,
    u_key_range: Signal<Local, Bit>,
    u_heap: Signal<Local, Bit>,
    u_key: Signal<Local, Bits<64>>,
    /// The first node each slot's walk reads (the root for a range key, the
    /// key for a location), the unassigned group's, and stage C's: the
    /// walkers' `start_node`, selected per slot before the pick.
    slot_node: Vec<Signal<Local, Bits<51>>>,
    u_node: Signal<Local, Bits<51>>,
    c_node: Signal<Local, Bits<51>>,
    slot_free_pre: Vec<Signal<Local, Bit>>,
    slot_free_pick: Vec<Signal<Local, Bit>>,
    free_count: Vec<Signal<Local, Bits<6>>>,
    miss_count: Vec<Signal<Local, Bits<6>>>,
    c_valid: Signal<Local, Bit>,
    c_hit: Signal<Local, Bit>,
    c_answered: Signal<Local, Bit>,
    c_miss: Signal<Local, Bit>,
    c_found: Signal<Local, Bit>,
    c_res: Signal<Local, Bits<2>>,
    c_res_loc: Signal<Local, Bits<51>>,
    c_base: Signal<Local, Bits<56>>,
    c_size: Signal<Local, Bits<56>>,
    c_tag: Signal<Local, Bits<8>>,
    // Copies of stage C's metadata (c_base, c_size, c_tag), shared
    // window (p_sbase, p_ssize) and access width (p_width) for the lane
    // checks, one per group of up
    // to LANES_PER_COPY lanes (LaneChecks module doc: the fan-out of one
    // register to 32 lanes was the longest path). They load
    // from the MLB's next data and stage C-1's p_res as the request enters
    // stage C, only when one of the group's lanes is active (a group with
    // none reads nothing), so synthesis cannot merge them into one register.
    m_base: Vec<DFF<Bits<56>>>,
    m_size: Vec<DFF<Bits<56>>>,
    m_tag: Vec<DFF<Bits<8>>>,
    m_sbase: Vec<DFF<Bits<32>>>,
    m_ssize: Vec<DFF<Bits<32>>>,
    m_width: Vec<DFF<Bits<5>>>,
    m_load: Vec<Signal<Local, Bit>>,
    merge_w: Vec<Signal<Local, Bit>>,
    merge_pre: Vec<Signal<Local, Bit>>,
    merge_any: Signal<Local, Bit>,
    key_eq: Vec<Signal<Local, Bit>>,
    /// Stage C's key compares, made a cycle early and registered: in stage
    /// B each slot's and walker's key as it will be in stage C (the key
    /// written at the edge, else the one held) is compared with stage B's,
    /// which moves on to C. `ceq_slot[s]` is `key_eq[s]`; `ceq_walker[k]`:
    /// walker k serves stage C's key. (The 64-bit compares and the fan-out
    /// of stage C's key to them were on the unit's longest paths.)
    ceq_slot: Vec<DFF<Bit>>,
    ceq_walker: Vec<DFF<Bit>>,
    /// Stage B's key against slot s's now, stage C's, and the waiting
    /// group's (`u_key`); whether idle walkers load a key (`offer`).
    beq_slot: Vec<Signal<Local, Bit>>,
    beq_c: Signal<Local, Bit>,
    beq_u: Signal<Local, Bit>,
    w_offer: Signal<Local, Bit>,
    /// Slot s holds the key of the lowest unassigned slot (`unas_pick`).
    in_group: Vec<Signal<Local, Bit>>,
    join_some: Signal<Local, Bit>,
    join_assigned: Signal<Local, Bit>,
    join_group: Signal<Local, Bit>,
    alloc_any: Signal<Local, Bit>,
    c_walker: Signal<Local, Bits<3>>,
    /// One-hot: the idle walker a new walk from stage C would take (the
    /// second idle one when the waiting group takes the first), so a
    /// walker's start is not decided through c_walker's encode and compare.
    c_new_w: Vec<Signal<Local, Bit>>,
    widx: Vec<Constant<Bits<3>>>,
    op_loadmeta: Constant<Bits<3>>,
    op_g: Constant<Bits<3>>,
    op_s: Constant<Bits<3>>,
    op_inv: Constant<Bits<3>>,
    op_flush: Constant<Bits<3>>,
    res_found: Constant<Bits<2>>,
    res_not_found: Constant<Bits<2>>,
    res_limit: Constant<Bits<2>>,
    res_mem_error: Constant<Bits<2>>,
    f_none: Constant<Bits<3>>,
    f_nometa: Constant<Bits<3>>,
    f_limit: Constant<Bits<3>>,
    f_mem: Constant<Bits<3>>,
    addr_mask: Constant<Bits<64>>,
    loc_mask: Constant<Bits<64>>,
    no_meta: Constant<Bits<64>>,
    zero64: Constant<Bits<64>>,
    // Typed constants: a bare integer literal is emitted as a 64-bit one.
    zero6: Constant<Bits<6>>,
    one6: Constant<Bits<6>>,
    zero8: Constant<Bits<8>>,
    zero51: Constant<Bits<51>>,
    zero56: Constant<Bits<56>>,
    zero_lane: Constant<Bits<LW>>,
    csr_a_mode: Constant<Bits<3>>,
    csr_a_structure: Constant<Bits<3>>,
    csr_a_root: Constant<Bits<3>>,
    csr_a_limit: Constant<Bits<3>>,
    csr_a_heap_base: Constant<Bits<3>>,
    csr_a_heap_mask: Constant<Bits<3>>,
    csr_a_heap_dir: Constant<Bits<3>>,
}

impl<const N: usize, const IW: usize, const L: usize, const LW: usize> MluUnit<N, IW, L, LW> {
    /// The unit its golden twin's parameters `b` describe (validated at the
    /// edge: `sim::config::MluConfig::validate`; the asserts catch a caller
    /// that skipped it).
    pub fn new(b: &UnitParams) -> Self {
        assert!(IW == index_width(N) && LW == index_width(L) && (L == 1 || L == 32), "MluUnit<{N}, {IW}, {L}, {LW}>");
        assert!(b.cfg.entries == N && b.lanes == L, "MluUnit<{N}, {IW}, {L}, {LW}> built for {} entries, {} lanes", b.cfg.entries, b.lanes);
        assert!(
            [1, 2, 4, 8].contains(&b.walkers)
                && (1..=2).contains(&b.mlb_latency)
                && (1..=2).contains(&b.check_latency)
                && b.miss_slots >= b.mlb_latency + 2
                && b.miss_slots <= 31
                && b.cfg.structure != Structure::Sol
        );
        let (k, m1, r, d) = (b.walkers, b.mlb_latency + 1, b.miss_slots, b.check_latency - 1);
        Self {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_ready: Default::default(),
            req_id: Default::default(),
            req_op: Default::default(),
            req_mask: array_init(Default::default),
            req_ptr: array_init(Default::default),
            req_width: Default::default(),
            req_loc: Default::default(),
            req_sbase: Default::default(),
            req_ssize: Default::default(),
            resp_valid: Default::default(),
            resp_id: Default::default(),
            resp_op: Default::default(),
            resp_pass: array_init(Default::default),
            resp_fault: Default::default(),
            resp_lane: Default::default(),
            resp_loc: Default::default(),
            resp_meta_valid: Default::default(),
            resp_base: Default::default(),
            resp_size: Default::default(),
            resp_tag: Default::default(),
            resp_addr: array_init(Default::default),
            mem_req_valid: Default::default(),
            mem_req_ready: Default::default(),
            mem_req_id: Default::default(),
            mem_req_node: Default::default(),
            mem_resp_valid: Default::default(),
            mem_resp_id: Default::default(),
            mem_resp_error: Default::default(),
            mem_resp_base: Default::default(),
            mem_resp_size_tag: Default::default(),
            mem_resp_link0: Default::default(),
            mem_resp_link1: Default::default(),
            csr_we: Default::default(),
            csr_addr: Default::default(),
            csr_data: Default::default(),
            cnt_lookups: Default::default(),
            cnt_hits: Default::default(),
            cnt_misses: Default::default(),
            cnt_merged: Default::default(),
            cnt_nodes: Default::default(),
            cnt_faults: Default::default(),
            ctr_lookups: Default::default(),
            ctr_hits: Default::default(),
            ctr_misses: Default::default(),
            ctr_merged: Default::default(),
            ctr_nodes: Default::default(),
            ctr_faults: Default::default(),
            visits: sigs(k + 1),
            zero4: Constant::new(0u64.into()),
            one4: Constant::new(1u64.into()),
            mlb: Mlb::new(b.cfg.replacement, b.mlb_latency).with_fill_lookahead(k).with_entry_keys(),
            walkers: (0..k).map(|_| Walker::new(b.cfg.structure)).collect(),
            checks: LaneChecks::new(b.check_latency),
            loc_out: Default::default(),
            sbase_w: Default::default(),
            ssize_w: Default::default(),
            mode_r: Default::default(),
            structure_r: Default::default(),
            root_r: Default::default(),
            limit_r: Default::default(),
            heap_base_r: Default::default(),
            heap_mask_r: Default::default(),
            heap_dir_r: Default::default(),
            mode_reset: Constant::new(b.cfg.mode == Mode::Hwonly),
            structure_reset: Constant::new(b.cfg.structure != Structure::List),
            limit_reset: Constant::new((b.cfg.step_limit as u64).into()),
            p_valid: regs(m1),
            p_replay: regs(m1),
            p_id: regs(m1),
            p_op: regs(m1),
            p_mask: regs(m1 * L),
            p_ptr: regs(m1 * L),
            p_width: regs(m1),
            p_loc: regs(m1),
            p_sbase: regs(m1),
            p_ssize: regs(m1),
            p_key_valid: regs(m1),
            p_key_range: regs(m1),
            p_key: regs(m1),
            a_rkey: Default::default(),
            a_rkey_n: Default::default(),
            a_lkey: Default::default(),
            c_loc_meta: Default::default(),
            c_heap: Default::default(),
            heap_path: Constant::new(b.heap_path),
            p_res: regs(m1),
            p_res_loc: regs(m1),
            p_res_base: regs(m1),
            p_res_size: regs(m1),
            p_res_tag: regs(m1),
            s_valid: regs(r),
            s_id: regs(r),
            s_op: regs(r),
            s_mask: regs(r * L),
            s_ptr: regs(r * L),
            s_width: regs(r),
            s_loc: regs(r),
            s_sbase: regs(r),
            s_ssize: regs(r),
            s_key_range: regs(r),
            s_key: regs(r),
            s_assigned: regs(r),
            s_walker: regs(r),
            s_done: regs(r),
            s_same: regs(r * r),
            s_heap: regs(r),
            s_res: regs(r),
            s_res_loc: regs(r),
            s_res_base: regs(r),
            s_res_size: regs(r),
            s_res_tag: regs(r),
            r_valid: Default::default(),
            r_id: Default::default(),
            r_op: Default::default(),
            r_pass: array_init(Default::default),
            r_fault: Default::default(),
            r_lane: Default::default(),
            r_loc: Default::default(),
            r_meta_valid: Default::default(),
            r_base: Default::default(),
            r_size: Default::default(),
            r_tag: Default::default(),
            r_addr: array_init(Default::default),
            d_valid: regs(d),
            d_id: regs(d),
            d_op: regs(d),
            d_key_valid: regs(d),
            d_found: regs(d),
            d_res: regs(d),
            d_loc: regs(d),
            d_base: regs(d),
            d_size: regs(d),
            d_tag: regs(d),
            d_sbase: regs(d),
            d_ssize: regs(d),
            d_addr: regs(d * L),
            k_valid: Default::default(),
            k_id: Default::default(),
            k_op: Default::default(),
            k_key_valid: Default::default(),
            k_found: Default::default(),
            k_res: Default::default(),
            k_loc: Default::default(),
            k_base: Default::default(),
            k_size: Default::default(),
            k_tag: Default::default(),
            k_sbase: Default::default(),
            k_ssize: Default::default(),
            k_addr: array_init(Default::default),
            in_key_valid: Default::default(),
            in_key_range: Default::default(),
            in_key: Default::default(),
            in_tagged: sigs(L + 1),
            a_search: Default::default(),
            maintenance: Default::default(),
            fq_valid: Default::default(),
            fq_loc: Default::default(),
            fq_base: Default::default(),
            fq_size: Default::default(),
            fq_tag: Default::default(),
            wants_fill: sigs(k),
            fill_pre: sigs(k + 1),
            fill_grant: sigs(k),
            taken: sigs(k),
            port_pre: sigs(k + 1),
            port_grant: sigs(k),
            mergeable: sigs(k),
            free1_pre: sigs(k + 1),
            free1: sigs(k),
            free2_pre: sigs(k + 1),
            free2: sigs(k),
            replay_pre: sigs(r + 1),
            replay_pick: sigs(r),
            any_replay: Default::default(),
            replay_q: regs(r),
            replay_next_pre: sigs(r),
            unas_q: regs(r),
            unas_pick_q: regs(r),
            unas_any_q: Default::default(),
            unas_next: sigs(r),
            unas_next_pre: sigs(r + 1),
            unas: sigs(r),
            unas_pick: sigs(r),
            sw_take: sigs(r),
            sw_res: sigs(r),
            sw_loc: sigs(r),
            sw_base: sigs(r),
            sw_size: sigs(r),
            sw_tag: sigs(r),
            assign_now: Default::default(),
            u_key_range: Default::default(),
            u_heap: Default::default(),
            u_key: Default::default(),
            slot_node: sigs(r),
            u_node: Default::default(),
            c_node: Default::default(),
            slot_free_pre: sigs(r),
            slot_free_pick: sigs(r),
            free_count: sigs(r + 1),
            miss_count: sigs(m1 + 1),
            c_valid: Default::default(),
            c_hit: Default::default(),
            c_answered: Default::default(),
            c_miss: Default::default(),
            c_found: Default::default(),
            c_res: Default::default(),
            c_res_loc: Default::default(),
            c_base: Default::default(),
            c_size: Default::default(),
            c_tag: Default::default(),
            m_base: regs(L.div_ceil(LANES_PER_COPY)),
            m_size: regs(L.div_ceil(LANES_PER_COPY)),
            m_tag: regs(L.div_ceil(LANES_PER_COPY)),
            m_sbase: regs(L.div_ceil(LANES_PER_COPY)),
            m_ssize: regs(L.div_ceil(LANES_PER_COPY)),
            m_width: regs(L.div_ceil(LANES_PER_COPY)),
            m_load: sigs(L.div_ceil(LANES_PER_COPY)),
            merge_w: sigs(k),
            merge_pre: sigs(k + 1),
            merge_any: Default::default(),
            key_eq: sigs(r),
            ceq_slot: regs(r),
            ceq_walker: regs(k),
            beq_slot: sigs(r),
            beq_c: Default::default(),
            beq_u: Default::default(),
            w_offer: Default::default(),
            in_group: sigs(r),
            join_some: Default::default(),
            join_assigned: Default::default(),
            join_group: Default::default(),
            alloc_any: Default::default(),
            c_walker: Default::default(),
            c_new_w: sigs(k),
            widx: (0..k).map(|i| c3(i as u64)).collect(),
            op_loadmeta: c3(Op::LoadMeta.bits() as u64),
            op_g: c3(Op::MemcheckG.bits() as u64),
            op_s: c3(Op::MemcheckS.bits() as u64),
            op_inv: c3(Op::Invalidate.bits() as u64),
            op_flush: c3(Op::Flush.bits() as u64),
            res_found: Constant::new(RES_FOUND.into()),
            res_not_found: Constant::new(RES_NOT_FOUND.into()),
            res_limit: Constant::new(RES_LIMIT.into()),
            res_mem_error: Constant::new(RES_MEM_ERROR.into()),
            f_none: c3(FaultCode::None.bits() as u64),
            f_nometa: c3(FaultCode::NoMeta.bits() as u64),
            f_limit: c3(FaultCode::TraversalLimit.bits() as u64),
            f_mem: c3(FaultCode::MemError.bits() as u64),
            addr_mask: Constant::new(ADDR_MASK.into()),
            loc_mask: Constant::new(LOC_MASK.into()),
            no_meta: Constant::new(NO_META.into()),
            zero64: Constant::new(0_u64.into()),
            zero6: Constant::new(0_u64.into()),
            one6: Constant::new(1_u64.into()),
            zero8: Constant::new(0_u64.into()),
            zero51: Constant::new(0_u64.into()),
            zero56: Constant::new(0_u64.into()),
            zero_lane: Constant::new(0_u64.into()),
            csr_a_mode: Constant::new(CSR_MODE.into()),
            csr_a_structure: Constant::new(CSR_STRUCTURE.into()),
            csr_a_root: Constant::new(CSR_ROOT.into()),
            csr_a_limit: Constant::new(CSR_STEP_LIMIT.into()),
            csr_a_heap_base: Constant::new(CSR_HEAP_BASE.into()),
            csr_a_heap_mask: Constant::new(CSR_HEAP_MASK.into()),
            csr_a_heap_dir: Constant::new(CSR_HEAP_DIR.into()),
        }
    }
}

impl<const N: usize, const IW: usize, const L: usize, const LW: usize> Logic for MluUnit<N, IW, L, LW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, mode_r, structure_r, root_r, limit_r, heap_base_r, heap_mask_r, heap_dir_r, r_valid, r_id, r_op, r_fault, r_lane, r_loc, r_meta_valid, r_base,
            r_size, r_tag, fq_valid, fq_loc, fq_base, fq_size, fq_tag, unas_any_q, a_rkey, a_rkey_n, a_lkey, c_loc_meta, c_heap
        );
        self.mlb.clock.next = self.clock.val();
        for i in 0..L {
            self.r_pass[i].clock.next = self.clock.val();
            self.r_pass[i].d.next = self.r_pass[i].q.val();
            self.r_addr[i].clock.next = self.clock.val();
            self.r_addr[i].d.next = self.r_addr[i].q.val();
        }
        // Every stage and slot register holds unless written below.
        for j in 0..self.p_valid.len() {
            self.p_valid[j].clock.next = self.clock.val();
            self.p_replay[j].clock.next = self.clock.val();
            self.p_id[j].clock.next = self.clock.val();
            self.p_op[j].clock.next = self.clock.val();
            self.p_width[j].clock.next = self.clock.val();
            self.p_loc[j].clock.next = self.clock.val();
            self.p_sbase[j].clock.next = self.clock.val();
            self.p_ssize[j].clock.next = self.clock.val();
            self.p_key_valid[j].clock.next = self.clock.val();
            self.p_key_range[j].clock.next = self.clock.val();
            self.p_key[j].clock.next = self.clock.val();
            self.p_res[j].clock.next = self.clock.val();
            self.p_res_loc[j].clock.next = self.clock.val();
            self.p_res_base[j].clock.next = self.clock.val();
            self.p_res_size[j].clock.next = self.clock.val();
            self.p_res_tag[j].clock.next = self.clock.val();
        }
        for x in 0..self.p_ptr.len() {
            self.p_ptr[x].clock.next = self.clock.val();
            self.p_mask[x].clock.next = self.clock.val();
        }
        for s in 0..self.s_valid.len() {
            self.s_valid[s].clock.next = self.clock.val();
            self.s_id[s].clock.next = self.clock.val();
            self.s_op[s].clock.next = self.clock.val();
            self.s_width[s].clock.next = self.clock.val();
            self.s_loc[s].clock.next = self.clock.val();
            self.s_sbase[s].clock.next = self.clock.val();
            self.s_ssize[s].clock.next = self.clock.val();
            self.s_key_range[s].clock.next = self.clock.val();
            self.s_key[s].clock.next = self.clock.val();
            self.s_assigned[s].clock.next = self.clock.val();
            self.s_walker[s].clock.next = self.clock.val();
            self.s_done[s].clock.next = self.clock.val();
            self.s_res[s].clock.next = self.clock.val();
            self.s_res_loc[s].clock.next = self.clock.val();
            self.s_res_base[s].clock.next = self.clock.val();
            self.s_res_size[s].clock.next = self.clock.val();
            self.s_res_tag[s].clock.next = self.clock.val();
            self.s_valid[s].d.next = self.s_valid[s].q.val();
            self.s_id[s].d.next = self.s_id[s].q.val();
            self.s_op[s].d.next = self.s_op[s].q.val();
            self.s_width[s].d.next = self.s_width[s].q.val();
            self.s_loc[s].d.next = self.s_loc[s].q.val();
            self.s_sbase[s].d.next = self.s_sbase[s].q.val();
            self.s_ssize[s].d.next = self.s_ssize[s].q.val();
            self.s_key_range[s].d.next = self.s_key_range[s].q.val();
            self.s_heap[s].clock.next = self.clock.val();
            self.s_heap[s].d.next = self.s_heap[s].q.val();
            self.s_key[s].d.next = self.s_key[s].q.val();
            self.s_assigned[s].d.next = self.s_assigned[s].q.val();
            self.s_walker[s].d.next = self.s_walker[s].q.val();
            self.s_done[s].d.next = self.s_done[s].q.val();
            self.s_res[s].d.next = self.s_res[s].q.val();
            self.s_res_loc[s].d.next = self.s_res_loc[s].q.val();
            self.s_res_base[s].d.next = self.s_res_base[s].q.val();
            self.s_res_size[s].d.next = self.s_res_size[s].q.val();
            self.s_res_tag[s].d.next = self.s_res_tag[s].q.val();
        }
        for s in 0..self.ceq_slot.len() {
            self.ceq_slot[s].clock.next = self.clock.val();
            self.replay_q[s].clock.next = self.clock.val();
            self.unas_q[s].clock.next = self.clock.val();
            self.unas_pick_q[s].clock.next = self.clock.val();
        }
        for k in 0..self.ceq_walker.len() {
            self.ceq_walker[k].clock.next = self.clock.val();
        }
        for x in 0..self.s_same.len() {
            self.s_same[x].clock.next = self.clock.val();
            self.s_same[x].d.next = self.s_same[x].q.val();
        }
        for x in 0..self.s_ptr.len() {
            self.s_ptr[x].clock.next = self.clock.val();
            self.s_mask[x].clock.next = self.clock.val();
            self.s_ptr[x].d.next = self.s_ptr[x].q.val();
            self.s_mask[x].d.next = self.s_mask[x].q.val();
        }

        // CSR writes.
        if self.csr_we.val() {
            if self.csr_addr.val() == self.csr_a_mode.val() {
                self.mode_r.d.next = self.csr_data.val().get_bit(0);
            }
            if self.csr_addr.val() == self.csr_a_structure.val() {
                self.structure_r.d.next = self.csr_data.val().get_bit(0);
            }
            if self.csr_addr.val() == self.csr_a_root.val() {
                self.root_r.d.next = self.csr_data.val();
            }
            if self.csr_addr.val() == self.csr_a_limit.val() {
                self.limit_r.d.next = self.csr_data.val().get_bits::<16>(0);
            }
            if self.csr_addr.val() == self.csr_a_heap_base.val() {
                self.heap_base_r.d.next = self.csr_data.val();
            }
            if self.csr_addr.val() == self.csr_a_heap_mask.val() {
                self.heap_mask_r.d.next = self.csr_data.val();
            }
            if self.csr_addr.val() == self.csr_a_heap_dir.val() {
                self.heap_dir_r.d.next = self.csr_data.val();
            }
        }

        // One-value loops name the lane count, the last stage (C), the
        // stage count, the slot count and the walker count for the Verilog
        // emitter (a const generic or a length in an index is not substituted).
        for l in L..(L + 1) {
            for c in (self.p_valid.len() - 1)..self.p_valid.len() {
                for m1 in self.p_valid.len()..(self.p_valid.len() + 1) {
                    for rr in self.s_valid.len()..(self.s_valid.len() + 1) {
                        for kk in self.walkers.len()..(self.walkers.len() + 1) {
                            // The new request's key (sim::mlu_unit lookup_of).
                            self.in_tagged[0].next = false;
                            for i in 0..L {
                                self.in_tagged[i + 1].next =
                                    self.in_tagged[i].val() | (self.req_mask[i].val() & (self.req_ptr[i].val().get_bits::<8>(56) != self.zero8.val()));
                            }
                            self.in_key_valid.next = false;
                            self.in_key_range.next = true;
                            self.in_key.next = self.req_ptr[0].val() & self.addr_mask.val();
                            if self.req_op.val() == self.op_loadmeta.val() {
                                self.in_key_valid.next = self.req_ptr[0].val().get_bits::<8>(56) != self.zero8.val();
                            }
                            if self.req_op.val() == self.op_g.val() {
                                if self.mode_r.q.val() {
                                    self.in_key_valid.next = self.req_mask[0].val() & (self.req_ptr[0].val().get_bits::<8>(56) != self.zero8.val());
                                } else {
                                    self.in_key_range.next = false;
                                    self.in_key.next = self.req_loc.val() & self.loc_mask.val();
                                    self.in_key_valid.next =
                                        self.in_tagged[l].val() & (self.req_loc.val() != self.zero64.val()) & (self.req_loc.val() != self.no_meta.val());
                                }
                            }

                            // Stage A: the MLB search, INVALIDATE or FLUSH.
                            self.a_search.next = self.p_valid[0].q.val() & !self.p_replay[0].q.val() & self.p_key_valid[0].q.val();
                            self.maintenance.next = self.p_valid[0].q.val()
                                & !self.p_replay[0].q.val()
                                & ((self.p_op[0].q.val() == self.op_inv.val()) | (self.p_op[0].q.val() == self.op_flush.val()));
                            self.mlb.reset.next = self.reset.val();
                            self.mlb.rs_valid.next = self.a_search.val() & self.p_key_range[0].q.val();
                            self.mlb.rs_addr.next = self.a_rkey.q.val();
                            for i in 0..(N / 2) {
                                self.mlb.rs_addr_entry[i].next = self.a_rkey.q.val();
                            }
                            for i in (N / 2)..N {
                                self.mlb.rs_addr_entry[i].next = !self.a_rkey_n.q.val();
                            }
                            self.mlb.ls_valid.next = self.a_search.val() & !self.p_key_range[0].q.val();
                            self.mlb.ls_loc.next = self.a_lkey.q.val();
                            self.mlb.inv_valid.next =
                                self.p_valid[0].q.val() & !self.p_replay[0].q.val() & (self.p_op[0].q.val() == self.op_inv.val());
                            self.mlb.inv_loc.next = self.p_loc[0].q.val().get_bits::<51>(5);
                            self.mlb.flush.next = self.p_valid[0].q.val() & !self.p_replay[0].q.val() & (self.p_op[0].q.val() == self.op_flush.val());

                            // Walks that ended: the lowest with a fill to write moves it to the
                            // fill register; the others without one are released now. An
                            // INVALIDATE or FLUSH drops the fill entering or leaving the
                            // register (the walkers' `cancel` keeps the others from filling).
                            self.fill_pre[0].next = false;
                            self.port_pre[0].next = false;
                            self.free1_pre[0].next = false;
                            self.free2_pre[0].next = false;
                            for k in 0..self.walkers.len() {
                                self.wants_fill[k].next = self.walkers[k].done.val()
                                    & (self.walkers[k].result.val() == self.res_found.val())
                                    & !self.walkers[k].cancelled.val();
                                self.fill_grant[k].next = self.wants_fill[k].val() & !self.fill_pre[k].val();
                                self.fill_pre[k + 1].next = self.fill_pre[k].val() | self.wants_fill[k].val();
                                self.taken[k].next = self.walkers[k].done.val() & (!self.wants_fill[k].val() | self.fill_grant[k].val());
                                // The port: the lowest walker asking.
                                self.port_grant[k].next = self.walkers[k].req_valid.val() & !self.port_pre[k].val();
                                self.port_pre[k + 1].next = self.port_pre[k].val() | self.walkers[k].req_valid.val();
                                self.mergeable[k].next = self.walkers[k].in_flight.val() & !self.walkers[k].cancelled.val();
                                // The first and second idle walkers.
                                self.free1[k].next = !self.walkers[k].busy.val() & !self.free1_pre[k].val();
                                self.free1_pre[k + 1].next = self.free1_pre[k].val() | !self.walkers[k].busy.val();
                                self.free2[k].next = !self.walkers[k].busy.val() & self.free1_pre[k].val() & !self.free2_pre[k].val();
                                self.free2_pre[k + 1].next = self.free2_pre[k].val() | (!self.walkers[k].busy.val() & self.free1_pre[k].val());
                            }
                            // The fill register takes a fill exactly when some walker wants one
                            // (its data hold otherwise).
                            self.fq_valid.d.next = self.fill_pre[kk].val() & !self.maintenance.val() & !self.reset.val();
                            self.mlb.fill_valid.next = self.fq_valid.q.val() & !self.maintenance.val();
                            self.mlb.fill_loc.next = self.fq_loc.q.val();
                            self.mlb.fill_base.next = self.fq_base.q.val();
                            self.mlb.fill_size.next = self.fq_size.q.val();
                            self.mlb.fill_tag.next = self.fq_tag.q.val();
                            self.mem_req_valid.next = self.port_pre[kk].val();
                            self.mem_req_id.next = self.widx[0].val();
                            self.mem_req_node.next = self.walkers[0].req_node.val();
                            // The fill register's data: the lowest walker that wants a fill
                            // (walkers from the highest down, the last taken wins), so each
                            // data bit's select is `wants_fill`, not the grant behind the
                            // prefix chain (the grant's fan-out to 171 data bits was a path
                            // of the 16-entry unit).
                            for k in 0..self.walkers.len() {
                                if self.wants_fill[kk - 1 - k].val() {
                                    self.fq_loc.d.next = self.walkers[kk - 1 - k].location.val();
                                    self.fq_base.d.next = self.walkers[kk - 1 - k].base.val();
                                    self.fq_size.d.next = self.walkers[kk - 1 - k].size.val();
                                    self.fq_tag.d.next = self.walkers[kk - 1 - k].tag.val();
                                }
                            }
                            for k in 0..self.walkers.len() {
                                if self.port_grant[k].val() {
                                    self.mem_req_id.next = self.widx[k].val();
                                    self.mem_req_node.next = self.walkers[k].req_node.val();
                                }
                            }
                            // The MLB's fill lookahead: the walkers' locations, and the one
                            // the fill register takes (fill_grant is one-hot and is what
                            // sets fq_valid).
                            for k in 0..self.walkers.len() {
                                self.mlb.fill_next_loc[k].next = self.walkers[k].location.val();
                                self.mlb.fill_next_sel[k].next = self.fill_grant[k].val();
                            }

                            // Slots: the one that re-enters (lowest with a result), the lowest
                            // free one, the lowest unassigned one; free slots counted.
                            self.replay_pre[0].next = false;
                            self.slot_free_pre[0].next = false;
                            for s in 1..self.s_valid.len() {
                                self.slot_free_pre[s].next = self.slot_free_pre[s - 1].val() | !self.s_valid[s - 1].q.val();
                            }
                            self.free_count[0].next = self.zero6.val();
                            for s in 0..self.s_valid.len() {
                                self.replay_pick[s].next = self.replay_q[s].q.val();
                                self.replay_pre[s + 1].next = self.replay_pre[s].val() | self.replay_q[s].q.val();
                                self.unas[s].next = self.unas_q[s].q.val();
                                self.unas_pick[s].next = self.unas_pick_q[s].q.val();
                                self.slot_free_pick[s].next = !self.s_valid[s].q.val() & !self.slot_free_pre[s].val();
                                self.free_count[s + 1].next = self.free_count[s].val();
                                if !self.s_valid[s].q.val() {
                                    self.free_count[s + 1].next = self.free_count[s].val() + self.one6.val();
                                }
                            }
                            self.any_replay.next = self.replay_pre[rr].val();
                            self.miss_count[0].next = self.zero6.val();
                            for j in 0..self.p_valid.len() {
                                self.miss_count[j + 1].next = self.miss_count[j].val();
                                if self.p_valid[j].q.val() & !self.p_replay[j].q.val() & self.p_key_valid[j].q.val() {
                                    self.miss_count[j + 1].next = self.miss_count[j].val() + self.one6.val();
                                }
                            }
                            self.req_ready.next = !self.any_replay.val() & (self.free_count[rr].val() > self.miss_count[m1].val());

                            // The oldest unassigned slot group gets the first idle walker.
                            self.assign_now.next = self.unas_any_q.q.val() & self.free1_pre[kk].val();
                            self.u_key_range.next = self.s_key_range[0].q.val();
                            self.u_heap.next = self.s_heap[0].q.val();
                            self.u_key.next = self.s_key[0].q.val();
                            self.u_node.next = self.zero51.val();
                            for s in 0..self.s_valid.len() {
                                self.slot_node[s].next = self.s_key[s].q.val().get_bits::<51>(5);
                                if self.s_key_range[s].q.val() {
                                    self.slot_node[s].next = self.root_r.q.val().get_bits::<51>(5);
                                }
                                if self.unas_pick[s].val() {
                                    self.u_key_range.next = self.s_key_range[s].q.val();
                                    self.u_heap.next = self.s_heap[s].q.val();
                                    self.u_key.next = self.s_key[s].q.val();
                                    self.u_node.next = self.slot_node[s].val();
                                }
                            }
                            self.c_node.next = self.p_key[c].q.val().get_bits::<51>(5);
                            if self.p_key_range[c].q.val() {
                                self.c_node.next = self.root_r.q.val().get_bits::<51>(5);
                            }

                            // Stage C.
                            self.c_valid.next = self.p_valid[c].q.val();
                            // One search per request, so at most one MLB port hits.
                            self.c_hit.next = self.mlb.rs_hit.val() | self.mlb.ls_hit.val();
                            self.c_answered.next = self.c_valid.val()
                                & (self.p_replay[c].q.val() | !self.p_key_valid[c].q.val() | self.c_hit.val());
                            self.c_miss.next = self.c_valid.val() & !self.c_answered.val();
                            // Its metadata: the MLB's (hit) or the walk's (replay). Each
                            // source is 0 unless it holds the answer (the MLB's data unless
                            // its port hit, the p_res fields unless a replay), so they are
                            // ORed: a select would be one register bit fanned out to some
                            // 170 multiplexers. c_res_loc is read for LOADMETA only, whose
                            // search is a range search. A new request's p_res is FOUND.
                            self.c_res.next = self.p_res[c].q.val();
                            self.c_res_loc.next = self.mlb.rs_loc.val() | self.p_res_loc[c].q.val();
                            self.c_base.next = self.mlb.rs_base.val() | self.mlb.ls_base.val() | self.p_res_base[c].q.val();
                            self.c_size.next = self.mlb.rs_size.val() | self.mlb.ls_size.val() | self.p_res_size[c].q.val();
                            self.c_tag.next = self.mlb.rs_tag.val() | self.mlb.ls_tag.val() | self.p_res_tag[c].q.val();
                            self.c_found.next = self.p_key_valid[c].q.val() & (self.c_res.val() == self.res_found.val());
                            // The lane checks.
                            self.checks.clock.next = self.clock.val();
                            self.checks.shared.next = self.p_op[c].q.val() == self.op_s.val();
                            self.checks.hwonly.next = self.mode_r.q.val();
                            for i in 0..L {
                                self.checks.mask[i].next = self.p_mask[c * l + i].q.val();
                                self.checks.ptr[i].next = self.p_ptr[c * l + i].q.val();
                            }
                            self.checks.loc_meta.next = self.c_loc_meta.q.val();
                            self.checks.meta_valid.next = self.c_found.val();
                            for g in 0..self.m_base.len() {
                                self.m_base[g].clock.next = self.clock.val();
                                self.m_size[g].clock.next = self.clock.val();
                                self.m_tag[g].clock.next = self.clock.val();
                                self.m_base[g].d.next = self.m_base[g].q.val();
                                self.m_size[g].d.next = self.m_size[g].q.val();
                                self.m_tag[g].d.next = self.m_tag[g].q.val();
                                self.m_sbase[g].clock.next = self.clock.val();
                                self.m_ssize[g].clock.next = self.clock.val();
                                self.m_sbase[g].d.next = self.m_sbase[g].q.val();
                                self.m_ssize[g].d.next = self.m_ssize[g].q.val();
                                self.m_width[g].clock.next = self.clock.val();
                                self.m_width[g].d.next = self.m_width[g].q.val();
                                self.m_load[g].next = false;
                            }
                            // q: lanes per group.
                            for q in (L / self.m_base.len())..(L / self.m_base.len() + 1) {
                                for i in 0..L {
                                    if self.p_valid[c - 1].q.val() & self.p_mask[(c - 1) * l + i].q.val() {
                                        self.m_load[i / q].next = true;
                                    }
                                    self.checks.meta_base[i].next = self.m_base[i / q].q.val();
                                    self.checks.meta_size[i].next = self.m_size[i / q].q.val();
                                    self.checks.meta_tag[i].next = self.m_tag[i / q].q.val();
                                    self.checks.sbase[i].next = self.m_sbase[i / q].q.val();
                                    self.checks.ssize[i].next = self.m_ssize[i / q].q.val();
                                    self.checks.width[i].next = self.m_width[i / q].q.val();
                                }
                            }
                            for g in 0..self.m_base.len() {
                                if self.m_load[g].val() {
                                    self.m_base[g].d.next = self.mlb.nx_base.val() | self.p_res_base[c - 1].q.val();
                                    self.m_size[g].d.next = self.mlb.nx_size.val() | self.p_res_size[c - 1].q.val();
                                    self.m_tag[g].d.next = self.mlb.nx_tag.val() | self.p_res_tag[c - 1].q.val();
                                    self.m_sbase[g].d.next = self.p_sbase[c - 1].q.val();
                                    self.m_ssize[g].d.next = self.p_ssize[c - 1].q.val();
                                    self.m_width[g].d.next = self.p_width[c - 1].q.val();
                                }
                            }
                            self.checks.meta_fault.next = self.f_mem.val();
                            if self.c_res.val() == self.res_not_found.val() {
                                self.checks.meta_fault.next = self.f_nometa.val();
                            }
                            if self.c_res.val() == self.res_limit.val() {
                                self.checks.meta_fault.next = self.f_limit.val();
                            }
                            self.sbase_w.a.next = self.p_sbase[c].q.val();
                            self.ssize_w.a.next = self.p_ssize[c].q.val();
                            self.loc_out.loc51.next = self.c_res_loc.val();

                            // The response's inputs: stage C's, or at c = 2 stage D's (the
                            // lane checks register their lanes' faults alongside).
                            self.k_valid.next = self.c_answered.val();
                            self.k_id.next = self.p_id[c].q.val();
                            self.k_op.next = self.p_op[c].q.val();
                            self.k_key_valid.next = self.p_key_valid[c].q.val();
                            self.k_found.next = self.c_found.val();
                            self.k_res.next = self.c_res.val();
                            self.k_loc.next = self.loc_out.loc64.val();
                            self.k_base.next = self.c_base.val();
                            self.k_size.next = self.c_size.val();
                            self.k_tag.next = self.c_tag.val();
                            self.k_sbase.next = self.sbase_w.y.val();
                            self.k_ssize.next = self.ssize_w.y.val();
                            for i in 0..L {
                                self.k_addr[i].next = self.p_ptr[c * l + i].q.val().get_bits::<56>(0);
                            }
                            for j in 0..self.d_valid.len() {
                                self.d_valid[j].clock.next = self.clock.val();
                                self.d_id[j].clock.next = self.clock.val();
                                self.d_op[j].clock.next = self.clock.val();
                                self.d_key_valid[j].clock.next = self.clock.val();
                                self.d_found[j].clock.next = self.clock.val();
                                self.d_res[j].clock.next = self.clock.val();
                                self.d_loc[j].clock.next = self.clock.val();
                                self.d_base[j].clock.next = self.clock.val();
                                self.d_size[j].clock.next = self.clock.val();
                                self.d_tag[j].clock.next = self.clock.val();
                                self.d_sbase[j].clock.next = self.clock.val();
                                self.d_ssize[j].clock.next = self.clock.val();
                                self.d_valid[j].d.next = self.c_answered.val() & !self.reset.val();
                                self.d_id[j].d.next = self.p_id[c].q.val();
                                self.d_op[j].d.next = self.p_op[c].q.val();
                                self.d_key_valid[j].d.next = self.p_key_valid[c].q.val();
                                self.d_found[j].d.next = self.c_found.val();
                                self.d_res[j].d.next = self.c_res.val();
                                self.d_loc[j].d.next = self.c_res_loc.val();
                                self.d_base[j].d.next = self.c_base.val();
                                self.d_size[j].d.next = self.c_size.val();
                                self.d_tag[j].d.next = self.c_tag.val();
                                self.d_sbase[j].d.next = self.p_sbase[c].q.val();
                                self.d_ssize[j].d.next = self.p_ssize[c].q.val();
                                self.k_valid.next = self.d_valid[j].q.val();
                                self.k_id.next = self.d_id[j].q.val();
                                self.k_op.next = self.d_op[j].q.val();
                                self.k_key_valid.next = self.d_key_valid[j].q.val();
                                self.k_found.next = self.d_found[j].q.val();
                                self.k_res.next = self.d_res[j].q.val();
                                // Registered narrow, widened after the register (no
                                // register bit is a constant).
                                self.loc_out.loc51.next = self.d_loc[j].q.val();
                                self.k_base.next = self.d_base[j].q.val();
                                self.k_size.next = self.d_size[j].q.val();
                                self.k_tag.next = self.d_tag[j].q.val();
                                self.sbase_w.a.next = self.d_sbase[j].q.val();
                                self.ssize_w.a.next = self.d_ssize[j].q.val();
                                for i in 0..L {
                                    self.d_addr[j * l + i].clock.next = self.clock.val();
                                    self.d_addr[j * l + i].d.next = self.p_ptr[c * l + i].q.val().get_bits::<56>(0);
                                    self.k_addr[i].next = self.d_addr[j * l + i].q.val();
                                }
                            }

                            // The response register.
                            self.r_valid.d.next = self.k_valid.val() & !self.reset.val();
                            if self.k_valid.val() {
                                self.r_id.d.next = self.k_id.val();
                                self.r_op.d.next = self.k_op.val();
                                self.r_fault.d.next = self.f_none.val();
                                self.r_lane.d.next = self.zero_lane.val();
                                self.r_loc.d.next = self.zero64.val();
                                self.r_meta_valid.d.next = false;
                                self.r_base.d.next = self.k_base.val();
                                self.r_size.d.next = self.k_size.val();
                                self.r_tag.d.next = self.k_tag.val();
                                for i in 0..L {
                                    self.r_pass[i].d.next = false;
                                    self.r_addr[i].d.next = self.k_addr[i].val();
                                }
                                if self.k_op.val() == self.op_loadmeta.val() {
                                    if self.k_key_valid.val() {
                                        self.r_loc.d.next = self.no_meta.val();
                                        if self.k_found.val() {
                                            self.r_loc.d.next = self.k_loc.val();
                                        }
                                        if self.k_res.val() == self.res_limit.val() {
                                            self.r_fault.d.next = self.f_limit.val();
                                        }
                                        if self.k_res.val() == self.res_mem_error.val() {
                                            self.r_fault.d.next = self.f_mem.val();
                                        }
                                    }
                                    self.r_pass[0].d.next = !(self.k_res.val() == self.res_limit.val()) & !(self.k_res.val() == self.res_mem_error.val())
                                        | !self.k_key_valid.val();
                                }
                                if (self.k_op.val() == self.op_g.val()) | (self.k_op.val() == self.op_s.val()) {
                                    for i in 0..L {
                                        self.r_pass[i].d.next = self.checks.pass[i].val();
                                    }
                                    self.r_fault.d.next = self.checks.fault.val();
                                    self.r_lane.d.next = self.checks.lane.val();
                                    self.r_meta_valid.d.next = self.k_found.val();
                                }
                                if self.k_op.val() == self.op_s.val() {
                                    self.r_meta_valid.d.next = true;
                                    self.r_base.d.next = self.k_sbase.val();
                                    self.r_size.d.next = self.k_ssize.val();
                                    self.r_tag.d.next = self.zero8.val();
                                }
                            }

                            // A miss: merge onto a walk of its key in flight, or join the
                            // unassigned slots of its key, or take an idle walker, or wait.
                            self.merge_pre[0].next = false;
                            for k in 0..self.walkers.len() {
                                self.merge_w[k].next = self.mergeable[k].val() & self.ceq_walker[k].q.val() & !self.merge_pre[k].val();
                                self.merge_pre[k + 1].next = self.merge_pre[k].val() | self.merge_w[k].val();
                            }
                            self.merge_any.next = self.merge_pre[kk].val();
                            // (The group assigned this cycle is no longer unassigned. Its key
                            // is compared slot by slot, beside the others, not after the
                            // multiplexer that picks it: that was a critical path.)
                            self.join_some.next = false;
                            self.join_assigned.next = false;
                            for s in 0..self.s_valid.len() {
                                self.key_eq[s].next = self.ceq_slot[s].q.val();
                                if self.unas[s].val() & self.key_eq[s].val() {
                                    self.join_some.next = true;
                                }
                                if self.unas_pick[s].val() & self.key_eq[s].val() {
                                    self.join_assigned.next = true;
                                }
                            }
                            self.join_group.next = self.join_some.val() & !(self.assign_now.val() & self.join_assigned.val());
                            self.alloc_any.next = self.free2_pre[kk].val();
                            if !self.assign_now.val() {
                                self.alloc_any.next = self.free1_pre[kk].val();
                            }
                            self.c_walker.next = self.widx[0].val();
                            for k in 0..self.walkers.len() {
                                self.c_new_w[k].next = (self.free2[k].val() & self.assign_now.val()) | (self.free1[k].val() & !self.assign_now.val());
                                if self.c_new_w[k].val() {
                                    self.c_walker.next = self.widx[k].val();
                                }
                            }
                            for k in 0..self.walkers.len() {
                                if self.merge_w[k].val() {
                                    self.c_walker.next = self.widx[k].val();
                                }
                            }

                            // Walkers: port, responses, cancel, taken, starts.
                            self.w_offer.next =
                                self.unas_any_q.q.val() | (self.p_valid[c].q.val() & self.p_key_valid[c].q.val() & !self.p_replay[c].q.val());
                            for k in 0..self.walkers.len() {
                                self.walkers[k].clock.next = self.clock.val();
                                self.walkers[k].reset.next = self.reset.val();
                                self.walkers[k].root.next = self.root_r.q.val();
                                self.walkers[k].limit.next = self.limit_r.q.val();
                                self.walkers[k].structure.next = self.structure_r.q.val();
                                self.walkers[k].heap_mask.next = self.heap_mask_r.q.val();
                                self.walkers[k].heap_dir.next = self.heap_dir_r.q.val();
                                self.walkers[k].grant.next = self.port_grant[k].val() & self.mem_req_ready.val();
                                self.walkers[k].resp_valid.next = self.mem_resp_valid.val() & (self.mem_resp_id.val() == self.widx[k].val());
                                self.walkers[k].resp_error.next = self.mem_resp_error.val();
                                self.walkers[k].resp_base.next = self.mem_resp_base.val();
                                self.walkers[k].resp_size_tag.next = self.mem_resp_size_tag.val();
                                self.walkers[k].resp_link0.next = self.mem_resp_link0.val();
                                self.walkers[k].resp_link1.next = self.mem_resp_link1.val();
                                self.walkers[k].taken.next = self.taken[k].val();
                                self.walkers[k].cancel.next = self.maintenance.val();
                                // The key offered to walker k: the unassigned group's if k is
                                // the first idle walker and a group waits, else stage C's. The
                                // select is made from registers, apart from the late decision
                                // whether k starts (hw/src/walker.rs loads the key while idle).
                                self.walkers[k].start.next = false;
                                // A start is possible only with a group waiting or a search in
                                // stage C (energy: an idle walker's key registers hold otherwise).
                                self.walkers[k].offer.next = self.w_offer.val();
                                self.walkers[k].start_range.next = self.p_key_range[c].q.val();
                                self.walkers[k].start_heap.next = self.c_heap.q.val();
                                self.walkers[k].start_a.next = self.p_key[c].q.val();
                                self.walkers[k].start_node.next = self.c_node.val();
                                if self.assign_now.val() & self.free1[k].val() {
                                    self.walkers[k].start.next = true;
                                    self.walkers[k].start_range.next = self.u_key_range.val();
                                    self.walkers[k].start_heap.next = self.u_heap.val();
                                    self.walkers[k].start_a.next = self.u_key.val();
                                    self.walkers[k].start_node.next = self.u_node.val();
                                }
                                if self.c_miss.val() & !self.merge_any.val() & !self.join_group.val() & self.c_new_w[k].val() {
                                    self.walkers[k].start.next = true;
                                }
                            }

                            // Slots: results of released walks, the unassigned group assigned,
                            // the replayed slot freed, stage C's miss written.
                            for s in 0..self.s_valid.len() {
                                self.sw_take[s].next = false;
                                self.sw_res[s].next = self.walkers[0].result.val();
                                self.sw_loc[s].next = self.walkers[0].location.val();
                                self.sw_base[s].next = self.walkers[0].base.val();
                                self.sw_size[s].next = self.walkers[0].size.val();
                                self.sw_tag[s].next = self.walkers[0].tag.val();
                                for k in 0..self.walkers.len() {
                                    if self.s_walker[s].q.val() == self.widx[k].val() {
                                        self.sw_take[s].next = self.taken[k].val();
                                        self.sw_res[s].next = self.walkers[k].result.val();
                                        self.sw_loc[s].next = self.walkers[k].location.val();
                                        self.sw_base[s].next = self.walkers[k].base.val();
                                        self.sw_size[s].next = self.walkers[k].size.val();
                                        self.sw_tag[s].next = self.walkers[k].tag.val();
                                    }
                                }
                                // Only a slot still waiting: one already done keeps its walker
                                // index while it waits to replay, and that walker may have ended
                                // another walk since.
                                if self.s_valid[s].q.val() & self.s_assigned[s].q.val() & !self.s_done[s].q.val() & self.sw_take[s].val() {
                                    self.s_done[s].d.next = true;
                                    self.s_res[s].d.next = self.sw_res[s].val();
                                    self.s_res_loc[s].d.next = self.sw_loc[s].val();
                                    self.s_res_base[s].d.next = self.sw_base[s].val();
                                    self.s_res_size[s].d.next = self.sw_size[s].val();
                                    self.s_res_tag[s].d.next = self.sw_tag[s].val();
                                }
                                // The group of the lowest unassigned slot: that slot and every
                                // unassigned slot whose key s_same says equals it.
                                self.in_group[s].next = self.unas_pick[s].val();
                                for t in 0..self.s_valid.len() {
                                    if (t != s) & self.unas_pick[t].val() & self.s_same[s * rr + t].q.val() {
                                        self.in_group[s].next = true;
                                    }
                                }
                                for k in 0..self.walkers.len() {
                                    if self.assign_now.val() & self.free1[k].val() & self.unas[s].val() & self.in_group[s].val() {
                                        self.s_assigned[s].d.next = true;
                                        self.s_walker[s].d.next = self.widx[k].val();
                                    }
                                }
                                if self.replay_pick[s].val() {
                                    self.s_valid[s].d.next = false;
                                }
                                if self.c_miss.val() & self.slot_free_pick[s].val() {
                                    self.s_valid[s].d.next = true;
                                    self.s_id[s].d.next = self.p_id[c].q.val();
                                    self.s_op[s].d.next = self.p_op[c].q.val();
                                    self.s_width[s].d.next = self.p_width[c].q.val();
                                    self.s_loc[s].d.next = self.p_loc[c].q.val();
                                    self.s_sbase[s].d.next = self.p_sbase[c].q.val();
                                    self.s_ssize[s].d.next = self.p_ssize[c].q.val();
                                    self.s_key_range[s].d.next = self.p_key_range[c].q.val();
                                    self.s_heap[s].d.next = self.c_heap.q.val();
                                    self.s_key[s].d.next = self.p_key[c].q.val();
                                    self.s_assigned[s].d.next = self.merge_any.val() | (!self.join_group.val() & self.alloc_any.val());
                                    self.s_walker[s].d.next = self.c_walker.val();
                                    self.s_done[s].d.next = false;
                                    // key_eq[t]: slot t's key against this one's.
                                    for t in 0..self.s_valid.len() {
                                        self.s_same[s * rr + t].d.next = self.key_eq[t].val();
                                        self.s_same[t * rr + s].d.next = self.key_eq[t].val();
                                    }
                                    for i in 0..L {
                                        self.s_mask[s * l + i].d.next = self.p_mask[c * l + i].q.val();
                                        self.s_ptr[s * l + i].d.next = self.p_ptr[c * l + i].q.val();
                                    }
                                }
                                if self.reset.val() {
                                    self.s_valid[s].d.next = false;
                                }
                            }

                            // Next cycle's replay pick, from the slots' next state (replay_q).
                            self.replay_next_pre[0].next = false;
                            for s in 1..self.s_valid.len() {
                                self.replay_next_pre[s].next = self.replay_next_pre[s - 1].val()
                                    | (self.s_valid[s - 1].d.val() & self.s_done[s - 1].d.val());
                            }
                            for s in 0..self.s_valid.len() {
                                self.replay_q[s].d.next =
                                    self.s_valid[s].d.val() & self.s_done[s].d.val() & !self.replay_next_pre[s].val();
                            }
                            // Next cycle's unassigned slots and their lowest (unas_*_q).
                            self.unas_next_pre[0].next = false;
                            for s in 0..self.s_valid.len() {
                                self.unas_next[s].next = self.s_valid[s].d.val() & !self.s_assigned[s].d.val();
                                self.unas_next_pre[s + 1].next = self.unas_next_pre[s].val() | self.unas_next[s].val();
                                self.unas_q[s].d.next = self.unas_next[s].val();
                                self.unas_pick_q[s].d.next = self.unas_next[s].val() & !self.unas_next_pre[s].val();
                            }
                            self.unas_any_q.d.next = self.unas_next_pre[rr].val();

                            // Stage C's key compares for the next cycle (ceq_*): stage B's key
                            // against each key as the edge leaves it. A slot written now takes
                            // stage C's key; an idle walker offered a key loads the waiting
                            // group's (if it is the first idle one and a group is assigned) or
                            // stage C's (hw/src/walker.rs), else keeps its own.
                            self.beq_c.next = (self.p_key_range[c].q.val() == self.p_key_range[c - 1].q.val())
                                & (self.p_key[c].q.val() == self.p_key[c - 1].q.val());
                            self.beq_u.next = false;
                            for s in 0..self.s_valid.len() {
                                self.beq_slot[s].next = (self.s_key_range[s].q.val() == self.p_key_range[c - 1].q.val())
                                    & (self.s_key[s].q.val() == self.p_key[c - 1].q.val());
                                if self.unas_pick[s].val() & self.beq_slot[s].val() {
                                    self.beq_u.next = true;
                                }
                                self.ceq_slot[s].d.next = self.beq_slot[s].val();
                                if self.c_miss.val() & self.slot_free_pick[s].val() {
                                    self.ceq_slot[s].d.next = self.beq_c.val();
                                }
                            }
                            for k in 0..self.walkers.len() {
                                self.ceq_walker[k].d.next = (self.walkers[k].key_range.val() == self.p_key_range[c - 1].q.val())
                                    & (self.walkers[k].key.val() == self.p_key[c - 1].q.val());
                                if !self.walkers[k].busy.val() & self.w_offer.val() {
                                    self.ceq_walker[k].d.next = self.beq_c.val();
                                    if self.assign_now.val() & self.free1[k].val() {
                                        self.ceq_walker[k].d.next = self.beq_u.val();
                                    }
                                }
                            }

                            // Shift the pipeline; stage A takes a replay before a new request.
                            for j in 1..self.p_valid.len() {
                                self.p_valid[j].d.next = self.p_valid[j - 1].q.val();
                                self.p_replay[j].d.next = self.p_replay[j - 1].q.val();
                                self.p_id[j].d.next = self.p_id[j - 1].q.val();
                                self.p_op[j].d.next = self.p_op[j - 1].q.val();
                                self.p_width[j].d.next = self.p_width[j - 1].q.val();
                                self.p_loc[j].d.next = self.p_loc[j - 1].q.val();
                                self.p_sbase[j].d.next = self.p_sbase[j - 1].q.val();
                                self.p_ssize[j].d.next = self.p_ssize[j - 1].q.val();
                                self.p_key_valid[j].d.next = self.p_key_valid[j - 1].q.val();
                                self.p_key_range[j].d.next = self.p_key_range[j - 1].q.val();
                                self.p_key[j].d.next = self.p_key[j - 1].q.val();
                                self.p_res[j].d.next = self.p_res[j - 1].q.val();
                                self.p_res_loc[j].d.next = self.p_res_loc[j - 1].q.val();
                                self.p_res_base[j].d.next = self.p_res_base[j - 1].q.val();
                                self.p_res_size[j].d.next = self.p_res_size[j - 1].q.val();
                                self.p_res_tag[j].d.next = self.p_res_tag[j - 1].q.val();
                                for i in 0..L {
                                    self.p_mask[j * l + i].d.next = self.p_mask[(j - 1) * l + i].q.val();
                                    self.p_ptr[j * l + i].d.next = self.p_ptr[(j - 1) * l + i].q.val();
                                }
                                if self.reset.val() {
                                    self.p_valid[j].d.next = false;
                                }
                            }
                            self.p_valid[0].d.next = self.req_valid.val() & self.req_ready.val();
                            self.p_replay[0].d.next = false;
                            self.p_id[0].d.next = self.req_id.val();
                            self.p_op[0].d.next = self.req_op.val();
                            self.p_width[0].d.next = self.req_width.val();
                            self.p_loc[0].d.next = self.req_loc.val();
                            self.p_sbase[0].d.next = self.req_sbase.val();
                            self.p_ssize[0].d.next = self.req_ssize.val();
                            self.p_key_valid[0].d.next = self.in_key_valid.val();
                            self.p_key_range[0].d.next = self.in_key_range.val();
                            self.p_key[0].d.next = self.in_key.val();
                            self.p_res[0].d.next = self.res_found.val();
                            self.p_res_loc[0].d.next = self.zero51.val();
                            self.p_res_base[0].d.next = self.zero56.val();
                            self.p_res_size[0].d.next = self.zero56.val();
                            self.p_res_tag[0].d.next = self.zero8.val();
                            for i in 0..L {
                                self.p_mask[i].d.next = self.req_mask[i].val();
                                self.p_ptr[i].d.next = self.req_ptr[i].val();
                            }
                            for s in 0..self.s_valid.len() {
                                if self.replay_pick[s].val() {
                                    self.p_valid[0].d.next = true;
                                    self.p_replay[0].d.next = true;
                                    self.p_id[0].d.next = self.s_id[s].q.val();
                                    self.p_op[0].d.next = self.s_op[s].q.val();
                                    self.p_width[0].d.next = self.s_width[s].q.val();
                                    self.p_loc[0].d.next = self.s_loc[s].q.val();
                                    self.p_sbase[0].d.next = self.s_sbase[s].q.val();
                                    self.p_ssize[0].d.next = self.s_ssize[s].q.val();
                                    self.p_key_valid[0].d.next = true;
                                    self.p_key_range[0].d.next = self.s_key_range[s].q.val();
                                    self.p_key[0].d.next = self.s_key[s].q.val();
                                    self.p_res[0].d.next = self.s_res[s].q.val();
                                    self.p_res_loc[0].d.next = self.s_res_loc[s].q.val();
                                    self.p_res_base[0].d.next = self.s_res_base[s].q.val();
                                    self.p_res_size[0].d.next = self.s_res_size[s].q.val();
                                    self.p_res_tag[0].d.next = self.s_res_tag[s].q.val();
                                    for i in 0..L {
                                        self.p_mask[i].d.next = self.s_mask[s * l + i].q.val();
                                        self.p_ptr[i].d.next = self.s_ptr[s * l + i].q.val();
                                    }
                                }
                            }
                            // Whether the check stage's key is in the heap window, a cycle early
                            // (the window is written only while the unit is idle).
                            self.c_heap.d.next = self.heap_path.val()
                                & self.p_key_range[c - 1].q.val()
                                & (self.heap_mask_r.q.val() != self.zero64.val())
                                & ((self.p_key[c - 1].q.val() & !self.heap_mask_r.q.val()) == self.heap_base_r.q.val());
                            // Whether the check stage's location names metadata, a cycle early.
                            self.c_loc_meta.d.next =
                                (self.p_loc[c - 1].q.val() != self.zero64.val()) & (self.p_loc[c - 1].q.val() != self.no_meta.val());
                            // The MLB's search keys (`a_rkey` and its inverse, `a_lkey`): stage A's key, kept
                            // by the one search it is for (they hold otherwise: dff_setup!).
                            if self.p_key_range[0].d.val() {
                                self.a_rkey.d.next = self.p_key[0].d.val().get_bits::<56>(0);
                                self.a_rkey_n.d.next = !self.p_key[0].d.val().get_bits::<56>(0);
                            } else {
                                self.a_lkey.d.next = self.p_key[0].d.val().get_bits::<51>(5);
                            }
                            // Counters (spec section 6): this cycle's events (EventCounter
                            // registers them and counts them the cycle after).
                            self.ctr_lookups.amount.next = self.zero4.val();
                            self.ctr_hits.amount.next = self.zero4.val();
                            self.ctr_misses.amount.next = self.zero4.val();
                            self.ctr_merged.amount.next = self.zero4.val();
                            self.ctr_nodes.amount.next = self.zero4.val();
                            self.ctr_faults.amount.next = self.zero4.val();
                            if self.a_search.val() {
                                self.ctr_lookups.amount.next = self.one4.val();
                            }
                            if self.c_valid.val() & !self.p_replay[c].q.val() & self.p_key_valid[c].q.val() & self.c_hit.val() {
                                self.ctr_hits.amount.next = self.one4.val();
                            }
                            if self.c_miss.val() {
                                self.ctr_misses.amount.next = self.one4.val();
                            }
                            if self.c_miss.val() & (self.merge_any.val() | self.join_group.val()) {
                                self.ctr_merged.amount.next = self.one4.val();
                            }
                            self.visits[0].next = self.zero4.val();
                            for k in 0..self.walkers.len() {
                                self.visits[k + 1].next = self.visits[k].val();
                                if self.walkers[k].visit.val() {
                                    self.visits[k + 1].next = self.visits[k].val() + self.one4.val();
                                }
                            }
                            self.ctr_nodes.amount.next = self.visits[kk].val();
                            if self.r_valid.q.val() & (self.r_fault.q.val() != self.f_none.val()) {
                                self.ctr_faults.amount.next = self.one4.val();
                            }
                            if self.reset.val() {
                                self.p_valid[0].d.next = false;
                                self.mode_r.d.next = self.mode_reset.val();
                                self.structure_r.d.next = self.structure_reset.val();
                                self.root_r.d.next = self.zero64.val();
                                self.limit_r.d.next = self.limit_reset.val();
                                self.heap_base_r.d.next = self.zero64.val();
                                self.heap_mask_r.d.next = self.zero64.val();
                                self.heap_dir_r.d.next = self.zero64.val();
                            }
                        }
                    }
                }
            }
        }

        // Outputs from registers.
        self.ctr_lookups.clear.next = self.reset.val();
        self.ctr_hits.clear.next = self.reset.val();
        self.ctr_misses.clear.next = self.reset.val();
        self.ctr_merged.clear.next = self.reset.val();
        self.ctr_nodes.clear.next = self.reset.val();
        self.ctr_faults.clear.next = self.reset.val();
        self.ctr_lookups.clock.next = self.clock.val();
        self.ctr_hits.clock.next = self.clock.val();
        self.ctr_misses.clock.next = self.clock.val();
        self.ctr_merged.clock.next = self.clock.val();
        self.ctr_nodes.clock.next = self.clock.val();
        self.ctr_faults.clock.next = self.clock.val();
        self.cnt_lookups.next = self.ctr_lookups.count.val();
        self.cnt_hits.next = self.ctr_hits.count.val();
        self.cnt_misses.next = self.ctr_misses.count.val();
        self.cnt_merged.next = self.ctr_merged.count.val();
        self.cnt_nodes.next = self.ctr_nodes.count.val();
        self.cnt_faults.next = self.ctr_faults.count.val();
        self.resp_valid.next = self.r_valid.q.val();
        self.resp_id.next = self.r_id.q.val();
        self.resp_op.next = self.r_op.q.val();
        self.resp_fault.next = self.r_fault.q.val();
        self.resp_lane.next = self.r_lane.q.val();
        self.resp_loc.next = self.r_loc.q.val();
        self.resp_meta_valid.next = self.r_meta_valid.q.val();
        self.resp_base.next = self.r_base.q.val();
        self.resp_size.next = self.r_size.q.val();
        self.resp_tag.next = self.r_tag.q.val();
        for i in 0..L {
            self.resp_pass[i].next = self.r_pass[i].q.val();
            self.resp_addr[i].next = self.r_addr[i].q.val();
        }
    }
}
