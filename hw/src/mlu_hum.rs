//! `MluHum<N, IW>`: the MLU top with **hit-under-miss** (the generator option
//! `hit_under_miss`, an extension beyond the paper: eval/README.md "Beyond
//! the paper"). Everything `hw::mlu::Mlu` does, plus: while the traverser
//! walks (or the location-miss fetch waits for memory), a second, *side*
//! lookup path takes further requests and answers those that need no memory
//! (MLB hits, tag-0 pointers, MEMCHECK.G with location 0/NO_META,
//! MEMCHECK.S, unknown ops) at the blocking MLU's hit latencies. A request
//! that misses in the MLB, or an INVALIDATE/FLUSH, is *held* by the side
//! path and handed to the main FSM when the walk has finished (the held miss
//! then searches the MLB again, so a second request for the block being
//! filled hits instead of walking twice). One walk at a time; one held
//! request at a time.
//!
//! A separate block (not a flag inside `Mlu`) because rust-hdl emits every
//! field and branch of a block: an option inside `Mlu` would change the
//! default tops' Verilog even when off. Same blocks (`Mlb`, `Traverser`,
//! `Memcheck`), same CSRs, counters and encodings as `Mlu`.
//!
//! # Ports
//! Those of `hw::mlu::Mlu` (see there), with these differences:
//! - `req_id` (8, in): a tag chosen by the requester, returned with the
//!   response as `resp_id` (8, out). Responses can come out of request order
//!   (a hit answered while an earlier miss walks), so the requester matches
//!   them by id.
//! - `req_ready` is high when the main FSM is idle and the side path is
//!   empty, and also while the main FSM walks or fetches and the side path is
//!   empty.
//! - `hum_busy` (out): the side path holds a request (observability).
//!
//! # Ordering (what the golden model is compared with)
//! The responses, in the order they come out, are exactly the results of the
//! golden model `sim::mlu::Mlu` called sequentially in that order (results,
//! metadata reads, MLB replacement state and counters): the unit is
//! linearizable with the response as the linearization point. This holds
//! because (1) the side path searches the MLB only while a walk is in flight
//! and never in the cycle of a fill: a finished walk waits (`TravDone`,
//! `FetchDone`) until the side path has answered what it took, and takes no
//! new request meanwhile; (2) the side path only ever answers requests that
//! need no memory, and hands everything else to the main FSM after the walk;
//! (3) INVALIDATE and FLUSH are performed by the main FSM only, never
//! while a walk is in flight (a FLUSH taken during a miss waits and then
//! empties the MLB, filled entry included).
//!
//! Difference from the trace-driven pipeline model (`sim::pipeline`, flag
//! `--hit-under-miss`), which calls the model at *issue*, so that the walking
//! operation's fill is already in the model's MLB while the walk is in
//! flight: there a hit on the entry the walk will replace waits; here the
//! victim is still in the MLB until the fill and such a hit is answered (and
//! the victim is chosen at the fill, after the hits' replacement-state
//! updates). The side path is not pipelined: one request at a time, at the
//! blocking MLU's hit latency (2 or 3 cycles), where the pipeline model
//! answers one hit per cycle.
//!
//! # Latencies
//! As `hw::mlu::Mlu` for everything that needs no memory (tag-0 LOADMETA,
//! INVALIDATE, FLUSH: 1; MEMCHECK.S, tag-0 or location 0/NO_META
//! MEMCHECK.G: 2; LOADMETA hit: 2; MEMCHECK.G hit: 3), on either path. A
//! walk or fetch takes one cycle more than in `Mlu` (the `*Done` stage),
//! plus up to 2 while the side path finishes: LOADMETA miss 4 + R(L + 1),
//! HWONLY MEMCHECK.G miss 5 + R(L + 1), MEMCHECK.G location miss 6 + 2L.
use crate::memcheck::Memcheck;
use crate::mlb::Mlb;
use crate::mlu::{LocWiden, MluParams, CSR_MODE, CSR_ROOT, CSR_STEP_LIMIT, CSR_STRUCTURE};
use crate::state_reg::StateReg;
use crate::traverser::{Traverser, RES_FOUND, RES_LIMIT, RES_NOT_FOUND};
use rust_hdl::prelude::*;
use sim::config::{Mode, Structure};
use sim::fault::{FaultCode, Op};
use sim::mlb::LOC_MASK;
use sim::pointer::NO_META;

/// The main FSM (as `hw::mlu::MluState`, plus the two `*Done` stages).
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum HumState {
    Idle,
    RangeWait,
    LocWait,
    Traverse,
    /// The walk has ended; waits for the side path, then fills / answers.
    TravDone,
    FetchBaseReq,
    FetchBaseWait,
    FetchSizeReq,
    FetchSizeWait,
    /// The fetch has ended; waits for the side path, then fills / answers.
    FetchDone,
    Check,
}

/// The side lookup path, active while the main FSM walks or fetches.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum SideState {
    Idle,
    /// MLB range search result (LOADMETA, HWONLY MEMCHECK.G).
    RangeWait,
    /// MLB location search result (COMPILER MEMCHECK.G).
    LocWait,
    /// MEMCHECK decision from the side path's operands.
    Check,
    /// A miss, INVALIDATE or FLUSH, waiting for the main FSM.
    Hold,
}

#[derive(LogicBlock)]
pub struct MluHum<const N: usize, const IW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Request.
    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_op: Signal<In, Bits<3>>,
    pub req_ptr: Signal<In, Bits<64>>,
    pub req_width: Signal<In, Bits<5>>,
    pub req_loc: Signal<In, Bits<64>>,
    pub req_sbase: Signal<In, Bits<32>>,
    pub req_ssize: Signal<In, Bits<32>>,
    pub req_id: Signal<In, Bits<8>>,
    // Response.
    pub resp_valid: Signal<Out, Bit>,
    pub resp_id: Signal<Out, Bits<8>>,
    pub resp_op: Signal<Out, Bits<3>>,
    pub resp_fault: Signal<Out, Bits<3>>,
    pub resp_loc: Signal<Out, Bits<64>>,
    pub resp_addr: Signal<Out, Bits<56>>,
    pub resp_base: Signal<Out, Bits<56>>,
    pub resp_size: Signal<Out, Bits<56>>,
    // CSRs.
    pub csr_we: Signal<In, Bit>,
    pub csr_addr: Signal<In, Bits<2>>,
    pub csr_data: Signal<In, Bits<64>>,
    pub csr_mode: Signal<Out, Bit>,
    pub csr_structure: Signal<Out, Bit>,
    pub csr_root: Signal<Out, Bits<64>>,
    pub csr_step_limit: Signal<Out, Bits<16>>,
    // Counters.
    pub cnt_loadmeta: Signal<Out, Bits<32>>,
    pub cnt_memcheck_g: Signal<Out, Bits<32>>,
    pub cnt_memcheck_s: Signal<Out, Bits<32>>,
    pub cnt_range_lookups: Signal<Out, Bits<32>>,
    pub cnt_range_hits: Signal<Out, Bits<32>>,
    pub cnt_range_misses: Signal<Out, Bits<32>>,
    pub cnt_loc_lookups: Signal<Out, Bits<32>>,
    pub cnt_loc_hits: Signal<Out, Bits<32>>,
    pub cnt_loc_misses: Signal<Out, Bits<32>>,
    pub cnt_steps: Signal<Out, Bits<32>>,
    pub cnt_meta_reads: Signal<Out, Bits<32>>,
    pub cnt_faults: Signal<Out, Bits<32>>,
    pub cnt_invalidates: Signal<Out, Bits<32>>,
    pub cnt_flushes: Signal<Out, Bits<32>>,
    // Metadata memory port.
    pub mem_req_valid: Signal<Out, Bit>,
    pub mem_req_ready: Signal<In, Bit>,
    pub mem_req_addr: Signal<Out, Bits<64>>,
    pub mem_resp_valid: Signal<In, Bit>,
    pub mem_resp_data: Signal<In, Bits<64>>,
    pub mem_resp_error: Signal<In, Bit>,
    // Observability.
    pub mlb_multi: Signal<Out, Bit>,
    pub mlb_repl_state: Signal<Out, Bits<N>>,
    pub mlb_hit_way: Signal<Out, Bits<IW>>,
    pub mlb_victim: Signal<Out, Bits<IW>>,
    pub mlb_fill_ok: Signal<Out, Bit>,
    pub trav_busy: Signal<Out, Bit>,
    pub trav_steps: Signal<Out, Bits<16>>,
    pub check_pass: Signal<Out, Bit>,
    pub hum_busy: Signal<Out, Bit>,
    // Blocks.
    pub mlb: Mlb<N, IW>,
    pub traverser: Traverser,
    memcheck: Memcheck,
    rs_widen: LocWiden,
    // Main FSM and its latched operands.
    state: StateReg<HumState>,
    op_r: DFF<Bits<3>>,
    ptr_r: DFF<Bits<64>>,
    width_r: DFF<Bits<5>>,
    loc_r: DFF<Bits<64>>,
    sbase_r: DFF<Bits<32>>,
    ssize_r: DFF<Bits<32>>,
    id_r: DFF<Bits<8>>,
    mbase_r: DFF<Bits<56>>,
    msize_r: DFF<Bits<56>>,
    mtag_r: DFF<Bits<8>>,
    /// The fetch ended with a memory error.
    ferr_r: DFF<Bit>,
    // Side path and its latched operands (the "one more request register").
    hstate: StateReg<SideState>,
    hop_r: DFF<Bits<3>>,
    hptr_r: DFF<Bits<64>>,
    hwidth_r: DFF<Bits<5>>,
    hloc_r: DFF<Bits<64>>,
    hsbase_r: DFF<Bits<32>>,
    hssize_r: DFF<Bits<32>>,
    hid_r: DFF<Bits<8>>,
    hmbase_r: DFF<Bits<56>>,
    hmsize_r: DFF<Bits<56>>,
    hmtag_r: DFF<Bits<8>>,
    // Response registers.
    resp_valid_r: DFF<Bit>,
    resp_id_r: DFF<Bits<8>>,
    resp_op_r: DFF<Bits<3>>,
    resp_fault_r: DFF<Bits<3>>,
    resp_loc_r: DFF<Bits<64>>,
    resp_addr_r: DFF<Bits<56>>,
    resp_base_r: DFF<Bits<56>>,
    resp_size_r: DFF<Bits<56>>,
    // CSRs.
    mode_r: DFF<Bit>,
    structure_r: DFF<Bit>,
    root_r: DFF<Bits<64>>,
    limit_r: DFF<Bits<16>>,
    // Counters.
    c_loadmeta: DFF<Bits<32>>,
    c_memcheck_g: DFF<Bits<32>>,
    c_memcheck_s: DFF<Bits<32>>,
    c_range_lookups: DFF<Bits<32>>,
    c_range_hits: DFF<Bits<32>>,
    c_range_misses: DFF<Bits<32>>,
    c_loc_lookups: DFF<Bits<32>>,
    c_loc_hits: DFF<Bits<32>>,
    c_loc_misses: DFF<Bits<32>>,
    c_steps: DFF<Bits<32>>,
    c_meta_reads: DFF<Bits<32>>,
    c_faults: DFF<Bits<32>>,
    c_invalidates: DFF<Bits<32>>,
    c_flushes: DFF<Bits<32>>,
    // Combinational.
    i_loadmeta: Signal<Local, Bit>,
    i_memcheck_g: Signal<Local, Bit>,
    i_memcheck_s: Signal<Local, Bit>,
    i_range_lookups: Signal<Local, Bit>,
    i_range_hits: Signal<Local, Bit>,
    i_range_misses: Signal<Local, Bit>,
    i_loc_lookups: Signal<Local, Bit>,
    i_loc_hits: Signal<Local, Bit>,
    i_loc_misses: Signal<Local, Bit>,
    i_invalidates: Signal<Local, Bit>,
    i_flushes: Signal<Local, Bit>,
    r_set: Signal<Local, Bit>,
    r_fault: Signal<Local, Bits<3>>,
    r_loc: Signal<Local, Bits<64>>,
    r_base: Signal<Local, Bits<56>>,
    r_size: Signal<Local, Bits<56>>,
    r_op: Signal<Local, Bits<3>>,
    r_id: Signal<Local, Bits<8>>,
    r_addr: Signal<Local, Bits<56>>,
    // The main FSM's request source: the held request, else the port.
    in_valid: Signal<Local, Bit>,
    in_new: Signal<Local, Bit>,
    in_op: Signal<Local, Bits<3>>,
    in_ptr: Signal<Local, Bits<64>>,
    in_width: Signal<Local, Bits<5>>,
    in_loc: Signal<Local, Bits<64>>,
    in_sbase: Signal<Local, Bits<32>>,
    in_ssize: Signal<Local, Bits<32>>,
    in_id: Signal<Local, Bits<8>>,
    in_tag0: Signal<Local, Bit>,
    main_walking: Signal<Local, Bit>,
    side_quiet: Signal<Local, Bit>,
    side_take: Signal<Local, Bit>,
    own_req_valid: Signal<Local, Bit>,
    own_req_addr: Signal<Local, Bits<64>>,
    fetch_loc: Signal<Local, Bits<64>>,
    mem_take: Signal<Local, Bit>,
    // Constants.
    op_loadmeta: Constant<Bits<3>>,
    op_memcheck_g: Constant<Bits<3>>,
    op_memcheck_s: Constant<Bits<3>>,
    op_invalidate: Constant<Bits<3>>,
    op_flush: Constant<Bits<3>>,
    f_none: Constant<Bits<3>>,
    f_limit: Constant<Bits<3>>,
    f_mem_error: Constant<Bits<3>>,
    t_found: Constant<Bits<2>>,
    t_not_found: Constant<Bits<2>>,
    t_limit: Constant<Bits<2>>,
    csr_a_mode: Constant<Bits<2>>,
    csr_a_structure: Constant<Bits<2>>,
    csr_a_root: Constant<Bits<2>>,
    csr_a_limit: Constant<Bits<2>>,
    reset_mode: Constant<Bit>,
    reset_structure: Constant<Bit>,
    reset_limit: Constant<Bits<16>>,
    zero8: Constant<Bits<8>>,
    zero32: Constant<Bits<32>>,
    zero56: Constant<Bits<56>>,
    zero64: Constant<Bits<64>>,
    one32: Constant<Bits<32>>,
    no_meta: Constant<Bits<64>>,
    loc_mask: Constant<Bits<64>>,
}

pub type MluHum8 = MluHum<8, 3>;
pub type MluHum16 = MluHum<16, 4>;

impl<const N: usize, const IW: usize> MluHum<N, IW> {
    pub fn new(p: MluParams) -> Self {
        let c3 = |v: u8| Constant::new(bits::<3>(v as u64));
        let c2 = |v: u64| Constant::new(bits::<2>(v));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_ready: Default::default(),
            req_op: Default::default(),
            req_ptr: Default::default(),
            req_width: Default::default(),
            req_loc: Default::default(),
            req_sbase: Default::default(),
            req_ssize: Default::default(),
            req_id: Default::default(),
            resp_valid: Default::default(),
            resp_id: Default::default(),
            resp_op: Default::default(),
            resp_fault: Default::default(),
            resp_loc: Default::default(),
            resp_addr: Default::default(),
            resp_base: Default::default(),
            resp_size: Default::default(),
            csr_we: Default::default(),
            csr_addr: Default::default(),
            csr_data: Default::default(),
            csr_mode: Default::default(),
            csr_structure: Default::default(),
            csr_root: Default::default(),
            csr_step_limit: Default::default(),
            cnt_loadmeta: Default::default(),
            cnt_memcheck_g: Default::default(),
            cnt_memcheck_s: Default::default(),
            cnt_range_lookups: Default::default(),
            cnt_range_hits: Default::default(),
            cnt_range_misses: Default::default(),
            cnt_loc_lookups: Default::default(),
            cnt_loc_hits: Default::default(),
            cnt_loc_misses: Default::default(),
            cnt_steps: Default::default(),
            cnt_meta_reads: Default::default(),
            cnt_faults: Default::default(),
            cnt_invalidates: Default::default(),
            cnt_flushes: Default::default(),
            mem_req_valid: Default::default(),
            mem_req_ready: Default::default(),
            mem_req_addr: Default::default(),
            mem_resp_valid: Default::default(),
            mem_resp_data: Default::default(),
            mem_resp_error: Default::default(),
            mlb_multi: Default::default(),
            mlb_repl_state: Default::default(),
            mlb_hit_way: Default::default(),
            mlb_victim: Default::default(),
            mlb_fill_ok: Default::default(),
            trav_busy: Default::default(),
            trav_steps: Default::default(),
            check_pass: Default::default(),
            hum_busy: Default::default(),
            mlb: Mlb::new(p.replacement, 1),
            traverser: Traverser::new(p.structures),
            memcheck: Default::default(),
            rs_widen: Default::default(),
            state: Default::default(),
            op_r: Default::default(),
            ptr_r: Default::default(),
            width_r: Default::default(),
            loc_r: Default::default(),
            sbase_r: Default::default(),
            ssize_r: Default::default(),
            id_r: Default::default(),
            mbase_r: Default::default(),
            msize_r: Default::default(),
            mtag_r: Default::default(),
            ferr_r: Default::default(),
            hstate: Default::default(),
            hop_r: Default::default(),
            hptr_r: Default::default(),
            hwidth_r: Default::default(),
            hloc_r: Default::default(),
            hsbase_r: Default::default(),
            hssize_r: Default::default(),
            hid_r: Default::default(),
            hmbase_r: Default::default(),
            hmsize_r: Default::default(),
            hmtag_r: Default::default(),
            resp_valid_r: Default::default(),
            resp_id_r: Default::default(),
            resp_op_r: Default::default(),
            resp_fault_r: Default::default(),
            resp_loc_r: Default::default(),
            resp_addr_r: Default::default(),
            resp_base_r: Default::default(),
            resp_size_r: Default::default(),
            mode_r: Default::default(),
            structure_r: Default::default(),
            root_r: Default::default(),
            limit_r: Default::default(),
            c_loadmeta: Default::default(),
            c_memcheck_g: Default::default(),
            c_memcheck_s: Default::default(),
            c_range_lookups: Default::default(),
            c_range_hits: Default::default(),
            c_range_misses: Default::default(),
            c_loc_lookups: Default::default(),
            c_loc_hits: Default::default(),
            c_loc_misses: Default::default(),
            c_steps: Default::default(),
            c_meta_reads: Default::default(),
            c_faults: Default::default(),
            c_invalidates: Default::default(),
            c_flushes: Default::default(),
            i_loadmeta: Default::default(),
            i_memcheck_g: Default::default(),
            i_memcheck_s: Default::default(),
            i_range_lookups: Default::default(),
            i_range_hits: Default::default(),
            i_range_misses: Default::default(),
            i_loc_lookups: Default::default(),
            i_loc_hits: Default::default(),
            i_loc_misses: Default::default(),
            i_invalidates: Default::default(),
            i_flushes: Default::default(),
            r_set: Default::default(),
            r_fault: Default::default(),
            r_loc: Default::default(),
            r_base: Default::default(),
            r_size: Default::default(),
            r_op: Default::default(),
            r_id: Default::default(),
            r_addr: Default::default(),
            in_valid: Default::default(),
            in_new: Default::default(),
            in_op: Default::default(),
            in_ptr: Default::default(),
            in_width: Default::default(),
            in_loc: Default::default(),
            in_sbase: Default::default(),
            in_ssize: Default::default(),
            in_id: Default::default(),
            in_tag0: Default::default(),
            main_walking: Default::default(),
            side_quiet: Default::default(),
            side_take: Default::default(),
            own_req_valid: Default::default(),
            own_req_addr: Default::default(),
            fetch_loc: Default::default(),
            mem_take: Default::default(),
            op_loadmeta: c3(Op::LoadMeta.bits()),
            op_memcheck_g: c3(Op::MemcheckG.bits()),
            op_memcheck_s: c3(Op::MemcheckS.bits()),
            op_invalidate: c3(Op::Invalidate.bits()),
            op_flush: c3(Op::Flush.bits()),
            f_none: c3(FaultCode::None.bits()),
            f_limit: c3(FaultCode::TraversalLimit.bits()),
            f_mem_error: c3(FaultCode::MemError.bits()),
            t_found: c2(RES_FOUND),
            t_not_found: c2(RES_NOT_FOUND),
            t_limit: c2(RES_LIMIT),
            csr_a_mode: c2(CSR_MODE),
            csr_a_structure: c2(CSR_STRUCTURE),
            csr_a_root: c2(CSR_ROOT),
            csr_a_limit: c2(CSR_STEP_LIMIT),
            reset_mode: Constant::new(p.mode == Mode::Hwonly),
            reset_structure: Constant::new(p.structure == Structure::Bst),
            reset_limit: Constant::new(bits::<16>(p.step_limit as u64)),
            zero8: Constant::new(Bits::default()),
            zero32: Constant::new(Bits::default()),
            zero56: Constant::new(Bits::default()),
            zero64: Constant::new(Bits::default()),
            one32: Constant::new(bits::<32>(1)),
            no_meta: Constant::new(bits::<64>(NO_META)),
            loc_mask: Constant::new(bits::<64>(LOC_MASK)),
        }
    }
}

// The side path's Idle arm is one `if`; hdl_gen has no match guards.
#[allow(clippy::collapsible_match)]
impl<const N: usize, const IW: usize> Logic for MluHum<N, IW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            op_r,
            ptr_r,
            width_r,
            loc_r,
            sbase_r,
            ssize_r,
            id_r,
            mbase_r,
            msize_r,
            mtag_r,
            ferr_r,
            hstate,
            hop_r,
            hptr_r,
            hwidth_r,
            hloc_r,
            hsbase_r,
            hssize_r,
            hid_r,
            hmbase_r,
            hmsize_r,
            hmtag_r,
            resp_valid_r,
            resp_id_r,
            resp_op_r,
            resp_fault_r,
            resp_loc_r,
            resp_addr_r,
            resp_base_r,
            resp_size_r,
            mode_r,
            structure_r,
            root_r,
            limit_r,
            c_loadmeta,
            c_memcheck_g,
            c_memcheck_s,
            c_range_lookups,
            c_range_hits,
            c_range_misses,
            c_loc_lookups,
            c_loc_hits,
            c_loc_misses,
            c_steps,
            c_meta_reads,
            c_faults,
            c_invalidates,
            c_flushes
        );
        self.mlb.clock.next = self.clock.val();
        self.traverser.clock.next = self.clock.val();

        // ---- Defaults ----
        self.resp_valid_r.d.next = false;
        self.i_loadmeta.next = false;
        self.i_memcheck_g.next = false;
        self.i_memcheck_s.next = false;
        self.i_range_lookups.next = false;
        self.i_range_hits.next = false;
        self.i_range_misses.next = false;
        self.i_loc_lookups.next = false;
        self.i_loc_hits.next = false;
        self.i_loc_misses.next = false;
        self.i_invalidates.next = false;
        self.i_flushes.next = false;
        self.r_set.next = false;
        self.r_fault.next = self.f_none.val();
        self.r_loc.next = self.no_meta.val();
        self.r_base.next = self.zero56.val();
        self.r_size.next = self.zero56.val();
        // A response is the main FSM's unless a branch below says otherwise.
        self.r_op.next = self.op_r.q.val();
        self.r_id.next = self.id_r.q.val();
        self.r_addr.next = self.ptr_r.q.val().get_bits::<56>(0);
        self.own_req_valid.next = false;
        self.fetch_loc.next = self.loc_r.q.val() & self.loc_mask.val();
        self.own_req_addr.next = self.fetch_loc.val();

        self.main_walking.next = (self.state.q.val() == HumState::Traverse)
            | (self.state.q.val() == HumState::FetchBaseReq)
            | (self.state.q.val() == HumState::FetchBaseWait)
            | (self.state.q.val() == HumState::FetchSizeReq)
            | (self.state.q.val() == HumState::FetchSizeWait);
        // The side path has nothing to answer (it may hold a request).
        self.side_quiet.next = (self.hstate.q.val() == SideState::Idle) | (self.hstate.q.val() == SideState::Hold);

        // Request source of the main FSM: the held request first.
        self.in_valid.next = self.req_valid.val();
        self.in_new.next = true;
        self.in_op.next = self.req_op.val();
        self.in_ptr.next = self.req_ptr.val();
        self.in_width.next = self.req_width.val();
        self.in_loc.next = self.req_loc.val();
        self.in_sbase.next = self.req_sbase.val();
        self.in_ssize.next = self.req_ssize.val();
        self.in_id.next = self.req_id.val();
        if self.hstate.q.val() == SideState::Hold {
            self.in_valid.next = true;
            self.in_new.next = false;
            self.in_op.next = self.hop_r.q.val();
            self.in_ptr.next = self.hptr_r.q.val();
            self.in_width.next = self.hwidth_r.q.val();
            self.in_loc.next = self.hloc_r.q.val();
            self.in_sbase.next = self.hsbase_r.q.val();
            self.in_ssize.next = self.hssize_r.q.val();
            self.in_id.next = self.hid_r.q.val();
        }
        self.in_tag0.next = self.in_ptr.val().get_bits::<8>(56) == self.zero8.val();
        // The side path takes a port request while a walk or fetch is in flight.
        self.side_take.next =
            self.req_valid.val() & self.main_walking.val() & (self.hstate.q.val() == SideState::Idle);

        // MLB commands: none unless a state below issues one. Searches use
        // the request source (port or held request).
        self.mlb.reset.next = self.reset.val();
        self.mlb.rs_valid.next = false;
        self.mlb.rs_addr.next = self.in_ptr.val().get_bits::<56>(0);
        self.mlb.ls_valid.next = false;
        self.mlb.ls_loc.next = self.in_loc.val().get_bits::<51>(5);
        self.mlb.fill_valid.next = false;
        self.mlb.fill_loc.next = self.traverser.location.val().get_bits::<51>(5);
        self.mlb.fill_base.next = self.traverser.base.val();
        self.mlb.fill_size.next = self.traverser.size.val();
        self.mlb.fill_tag.next = self.traverser.tag.val();
        self.mlb.inv_valid.next = false;
        self.mlb.inv_loc.next = self.in_loc.val().get_bits::<51>(5);
        self.mlb.flush.next = false;
        self.rs_widen.loc51.next = self.mlb.rs_loc.val();

        // Traverser: operands from the main FSM's latched request and the CSRs.
        self.traverser.reset.next = self.reset.val();
        self.traverser.start.next = false;
        self.traverser.a.next = self.ptr_r.q.val();
        self.traverser.root.next = self.root_r.q.val();
        self.traverser.limit.next = self.limit_r.q.val();
        self.traverser.structure.next = self.structure_r.q.val();
        self.traverser.mem_req_ready.next = self.mem_req_ready.val();
        self.traverser.mem_resp_valid.next = self.mem_resp_valid.val();
        self.traverser.mem_resp_data.next = self.mem_resp_data.val();
        self.traverser.mem_resp_error.next = self.mem_resp_error.val();

        // One MEMCHECK datapath, shared: the side path's operands in its
        // Check state; the request source's while a request may be taken (for
        // `g_need_meta`); otherwise the main FSM's. The two Check states are
        // never active in the same cycle.
        self.memcheck.g_ptr.next = self.ptr_r.q.val();
        self.memcheck.g_width.next = self.width_r.q.val();
        self.memcheck.g_loc.next = self.loc_r.q.val();
        self.memcheck.g_meta_valid.next = true;
        self.memcheck.g_meta_base.next = self.mbase_r.q.val();
        self.memcheck.g_meta_size.next = self.msize_r.q.val();
        self.memcheck.g_meta_tag.next = self.mtag_r.q.val();
        self.memcheck.s_addr.next = self.ptr_r.q.val().get_bits::<32>(0);
        self.memcheck.s_width.next = self.width_r.q.val();
        self.memcheck.s_base.next = self.sbase_r.q.val();
        self.memcheck.s_size.next = self.ssize_r.q.val();
        // (From flop outputs and ports only, not from the locals above, so
        // that Verilator sees no combinational loop through the check.)
        if (self.state.q.val() == HumState::Idle)
            | (self.state.q.val() == HumState::Traverse)
            | (self.state.q.val() == HumState::FetchBaseReq)
            | (self.state.q.val() == HumState::FetchBaseWait)
            | (self.state.q.val() == HumState::FetchSizeReq)
            | (self.state.q.val() == HumState::FetchSizeWait)
        {
            self.memcheck.g_ptr.next = self.req_ptr.val();
            self.memcheck.g_loc.next = self.req_loc.val();
            if self.hstate.q.val() == SideState::Hold {
                self.memcheck.g_ptr.next = self.hptr_r.q.val();
                self.memcheck.g_loc.next = self.hloc_r.q.val();
            }
            self.memcheck.g_meta_valid.next = false;
        }
        if self.hstate.q.val() == SideState::Check {
            self.memcheck.g_ptr.next = self.hptr_r.q.val();
            self.memcheck.g_width.next = self.hwidth_r.q.val();
            self.memcheck.g_loc.next = self.hloc_r.q.val();
            self.memcheck.g_meta_valid.next = true;
            self.memcheck.g_meta_base.next = self.hmbase_r.q.val();
            self.memcheck.g_meta_size.next = self.hmsize_r.q.val();
            self.memcheck.g_meta_tag.next = self.hmtag_r.q.val();
            self.memcheck.s_addr.next = self.hptr_r.q.val().get_bits::<32>(0);
            self.memcheck.s_width.next = self.hwidth_r.q.val();
            self.memcheck.s_base.next = self.hsbase_r.q.val();
            self.memcheck.s_size.next = self.hssize_r.q.val();
        }

        // Outputs.
        self.req_ready.next = ((self.state.q.val() == HumState::Idle)
            & (self.hstate.q.val() == SideState::Idle)
            & !self.traverser.busy.val())
            | (self.main_walking.val() & (self.hstate.q.val() == SideState::Idle));
        self.hum_busy.next = self.hstate.q.val() != SideState::Idle;
        self.mlb_multi.next = self.mlb.rs_multi.val() | self.mlb.ls_multi.val();
        self.mlb_repl_state.next = self.mlb.repl_state.val();
        self.mlb_hit_way.next = self.mlb.ls_way.val();
        if self.mlb.rs_hit.val() {
            self.mlb_hit_way.next = self.mlb.rs_way.val();
        }
        self.mlb_victim.next = self.mlb.victim.val();
        self.mlb_fill_ok.next = self.mlb.fill_ok.val();
        self.trav_busy.next = self.traverser.busy.val();
        self.trav_steps.next = self.traverser.steps.val();
        self.check_pass.next = false;
        self.resp_valid.next = self.resp_valid_r.q.val();
        self.resp_id.next = self.resp_id_r.q.val();
        self.resp_op.next = self.resp_op_r.q.val();
        self.resp_fault.next = self.resp_fault_r.q.val();
        self.resp_loc.next = self.resp_loc_r.q.val();
        self.resp_addr.next = self.resp_addr_r.q.val();
        self.resp_base.next = self.resp_base_r.q.val();
        self.resp_size.next = self.resp_size_r.q.val();
        self.csr_mode.next = self.mode_r.q.val();
        self.csr_structure.next = self.structure_r.q.val();
        self.csr_root.next = self.root_r.q.val();
        self.csr_step_limit.next = self.limit_r.q.val();
        self.cnt_loadmeta.next = self.c_loadmeta.q.val();
        self.cnt_memcheck_g.next = self.c_memcheck_g.q.val();
        self.cnt_memcheck_s.next = self.c_memcheck_s.q.val();
        self.cnt_range_lookups.next = self.c_range_lookups.q.val();
        self.cnt_range_hits.next = self.c_range_hits.q.val();
        self.cnt_range_misses.next = self.c_range_misses.q.val();
        self.cnt_loc_lookups.next = self.c_loc_lookups.q.val();
        self.cnt_loc_hits.next = self.c_loc_hits.q.val();
        self.cnt_loc_misses.next = self.c_loc_misses.q.val();
        self.cnt_steps.next = self.c_steps.q.val();
        self.cnt_meta_reads.next = self.c_meta_reads.q.val();
        self.cnt_faults.next = self.c_faults.q.val();
        self.cnt_invalidates.next = self.c_invalidates.q.val();
        self.cnt_flushes.next = self.c_flushes.q.val();

        // ---- The main FSM (as hw::mlu::Mlu, request from `in_*`) ----
        match self.state.q.val() {
            HumState::Idle => {
                if self.in_valid.val() & !self.traverser.busy.val() {
                    if self.hstate.q.val() == SideState::Hold {
                        self.hstate.d.next = SideState::Idle;
                    }
                    self.op_r.d.next = self.in_op.val();
                    self.ptr_r.d.next = self.in_ptr.val();
                    self.width_r.d.next = self.in_width.val();
                    self.loc_r.d.next = self.in_loc.val();
                    self.sbase_r.d.next = self.in_sbase.val();
                    self.ssize_r.d.next = self.in_ssize.val();
                    self.id_r.d.next = self.in_id.val();
                    self.r_op.next = self.in_op.val();
                    self.r_id.next = self.in_id.val();
                    self.r_addr.next = self.in_ptr.val().get_bits::<56>(0);
                    // Unknown ops (5..7): answered NONE, no effect.
                    self.r_set.next = true;
                    self.r_loc.next = self.zero64.val();
                    if self.in_op.val() == self.op_loadmeta.val() {
                        // A held request was counted when the side path took it.
                        self.i_loadmeta.next = self.in_new.val();
                        if !self.in_tag0.val() {
                            self.r_set.next = false;
                            self.i_range_lookups.next = true;
                            self.mlb.rs_valid.next = true;
                            self.state.d.next = HumState::RangeWait;
                        }
                    }
                    if self.in_op.val() == self.op_memcheck_g.val() {
                        self.i_memcheck_g.next = self.in_new.val();
                        self.r_set.next = false;
                        if self.in_tag0.val() {
                            self.state.d.next = HumState::Check;
                        } else if self.mode_r.q.val() {
                            self.i_range_lookups.next = true;
                            self.mlb.rs_valid.next = true;
                            self.state.d.next = HumState::RangeWait;
                        } else if !self.memcheck.g_need_meta.val() {
                            self.state.d.next = HumState::Check;
                        } else {
                            self.i_loc_lookups.next = true;
                            self.mlb.ls_valid.next = true;
                            self.state.d.next = HumState::LocWait;
                        }
                    }
                    if self.in_op.val() == self.op_memcheck_s.val() {
                        self.i_memcheck_s.next = self.in_new.val();
                        self.r_set.next = false;
                        self.state.d.next = HumState::Check;
                    }
                    if self.in_op.val() == self.op_invalidate.val() {
                        self.i_invalidates.next = true;
                        self.mlb.inv_valid.next = true;
                    }
                    if self.in_op.val() == self.op_flush.val() {
                        self.i_flushes.next = true;
                        self.mlb.flush.next = true;
                    }
                }
            }
            HumState::RangeWait => {
                if self.mlb.rs_hit.val() {
                    self.i_range_hits.next = true;
                    self.mbase_r.d.next = self.mlb.rs_base.val();
                    self.msize_r.d.next = self.mlb.rs_size.val();
                    self.mtag_r.d.next = self.mlb.rs_tag.val();
                    self.loc_r.d.next = self.rs_widen.loc64.val();
                    if self.op_r.q.val() == self.op_loadmeta.val() {
                        self.r_set.next = true;
                        self.r_loc.next = self.rs_widen.loc64.val();
                        self.state.d.next = HumState::Idle;
                    } else {
                        self.state.d.next = HumState::Check;
                    }
                } else {
                    self.i_range_misses.next = true;
                    self.traverser.start.next = true;
                    self.state.d.next = HumState::Traverse;
                }
            }
            HumState::Traverse => {
                if self.traverser.done.val() {
                    self.state.d.next = HumState::TravDone;
                }
            }
            HumState::TravDone => {
                // The traverser's result outputs hold until its next walk.
                if self.side_quiet.val() {
                    if self.traverser.result.val() == self.t_found.val() {
                        self.mlb.fill_valid.next = true;
                        self.mbase_r.d.next = self.traverser.base.val();
                        self.msize_r.d.next = self.traverser.size.val();
                        self.mtag_r.d.next = self.traverser.tag.val();
                        self.loc_r.d.next = self.traverser.location.val();
                        if self.op_r.q.val() == self.op_loadmeta.val() {
                            self.r_set.next = true;
                            self.r_loc.next = self.traverser.location.val();
                            self.state.d.next = HumState::Idle;
                        } else {
                            self.state.d.next = HumState::Check;
                        }
                    } else if self.traverser.result.val() == self.t_not_found.val() {
                        if self.op_r.q.val() == self.op_loadmeta.val() {
                            self.r_set.next = true;
                            self.r_loc.next = self.no_meta.val();
                            self.state.d.next = HumState::Idle;
                        } else {
                            self.loc_r.d.next = self.no_meta.val();
                            self.state.d.next = HumState::Check;
                        }
                    } else if self.traverser.result.val() == self.t_limit.val() {
                        self.r_set.next = true;
                        self.r_fault.next = self.f_limit.val();
                        self.state.d.next = HumState::Idle;
                    } else {
                        self.r_set.next = true;
                        self.r_fault.next = self.f_mem_error.val();
                        self.state.d.next = HumState::Idle;
                    }
                }
            }
            HumState::LocWait => {
                if self.mlb.ls_hit.val() {
                    self.i_loc_hits.next = true;
                    self.mbase_r.d.next = self.mlb.ls_base.val();
                    self.msize_r.d.next = self.mlb.ls_size.val();
                    self.mtag_r.d.next = self.mlb.ls_tag.val();
                    self.state.d.next = HumState::Check;
                } else {
                    self.i_loc_misses.next = true;
                    self.state.d.next = HumState::FetchBaseReq;
                }
            }
            HumState::FetchBaseReq => {
                self.own_req_valid.next = true;
                self.own_req_addr.next = self.fetch_loc.val();
                if self.mem_req_ready.val() {
                    self.state.d.next = HumState::FetchBaseWait;
                }
            }
            HumState::FetchBaseWait => {
                if self.mem_resp_valid.val() {
                    self.mbase_r.d.next = self.mem_resp_data.val().get_bits::<56>(0);
                    if self.mem_resp_error.val() {
                        self.ferr_r.d.next = true;
                        self.state.d.next = HumState::FetchDone;
                    } else {
                        self.state.d.next = HumState::FetchSizeReq;
                    }
                }
            }
            HumState::FetchSizeReq => {
                self.own_req_valid.next = true;
                self.own_req_addr.next = self.fetch_loc.val() + 8_u64;
                if self.mem_req_ready.val() {
                    self.state.d.next = HumState::FetchSizeWait;
                }
            }
            HumState::FetchSizeWait => {
                if self.mem_resp_valid.val() {
                    self.msize_r.d.next = self.mem_resp_data.val().get_bits::<56>(0);
                    self.mtag_r.d.next = self.mem_resp_data.val().get_bits::<8>(56);
                    self.ferr_r.d.next = self.mem_resp_error.val();
                    self.state.d.next = HumState::FetchDone;
                }
            }
            HumState::FetchDone => {
                if self.side_quiet.val() {
                    if self.ferr_r.q.val() {
                        self.r_set.next = true;
                        self.r_fault.next = self.f_mem_error.val();
                        self.state.d.next = HumState::Idle;
                    } else {
                        self.mlb.fill_valid.next = true;
                        self.mlb.fill_loc.next = self.loc_r.q.val().get_bits::<51>(5);
                        self.mlb.fill_base.next = self.mbase_r.q.val();
                        self.mlb.fill_size.next = self.msize_r.q.val();
                        self.mlb.fill_tag.next = self.mtag_r.q.val();
                        self.state.d.next = HumState::Check;
                    }
                }
            }
            HumState::Check => {
                self.r_set.next = true;
                self.r_loc.next = self.loc_r.q.val();
                self.r_addr.next = self.memcheck.g_addr.val();
                if self.op_r.q.val() == self.op_memcheck_s.val() {
                    self.r_fault.next = self.memcheck.s_fault.val();
                    self.check_pass.next = self.memcheck.s_ok.val();
                } else {
                    self.check_pass.next =
                        self.memcheck.g_done.val() & (self.memcheck.g_fault.val() == self.f_none.val());
                    self.r_fault.next = self.memcheck.g_fault.val();
                    self.r_base.next = self.mbase_r.q.val();
                    self.r_size.next = self.msize_r.q.val();
                }
                self.state.d.next = HumState::Idle;
            }
            _ => {
                self.state.d.next = HumState::Idle;
            }
        }

        // ---- The side path (only while the main FSM walks or fetches) ----
        match self.hstate.q.val() {
            SideState::Idle => {
                if self.side_take.val() {
                    self.hop_r.d.next = self.req_op.val();
                    self.hptr_r.d.next = self.req_ptr.val();
                    self.hwidth_r.d.next = self.req_width.val();
                    self.hloc_r.d.next = self.req_loc.val();
                    self.hsbase_r.d.next = self.req_sbase.val();
                    self.hssize_r.d.next = self.req_ssize.val();
                    self.hid_r.d.next = self.req_id.val();
                    if self.req_op.val() == self.op_loadmeta.val() {
                        self.i_loadmeta.next = true;
                        if self.in_tag0.val() {
                            self.r_set.next = true;
                            self.r_loc.next = self.zero64.val();
                            self.r_op.next = self.req_op.val();
                            self.r_id.next = self.req_id.val();
                            self.r_addr.next = self.req_ptr.val().get_bits::<56>(0);
                        } else {
                            self.mlb.rs_valid.next = true;
                            self.hstate.d.next = SideState::RangeWait;
                        }
                    } else if self.req_op.val() == self.op_memcheck_g.val() {
                        self.i_memcheck_g.next = true;
                        if self.in_tag0.val() {
                            self.hstate.d.next = SideState::Check;
                        } else if self.mode_r.q.val() {
                            self.mlb.rs_valid.next = true;
                            self.hstate.d.next = SideState::RangeWait;
                        } else if !self.memcheck.g_need_meta.val() {
                            self.hstate.d.next = SideState::Check;
                        } else {
                            self.mlb.ls_valid.next = true;
                            self.hstate.d.next = SideState::LocWait;
                        }
                    } else if self.req_op.val() == self.op_memcheck_s.val() {
                        self.i_memcheck_s.next = true;
                        self.hstate.d.next = SideState::Check;
                    } else if (self.req_op.val() == self.op_invalidate.val())
                        | (self.req_op.val() == self.op_flush.val())
                    {
                        // MLB writes wait for the walk (the main FSM does them).
                        self.hstate.d.next = SideState::Hold;
                    } else {
                        // Unknown ops (5..7): answered NONE, no effect.
                        self.r_set.next = true;
                        self.r_loc.next = self.zero64.val();
                        self.r_op.next = self.req_op.val();
                        self.r_id.next = self.req_id.val();
                        self.r_addr.next = self.req_ptr.val().get_bits::<56>(0);
                    }
                }
            }
            SideState::RangeWait => {
                if self.mlb.rs_hit.val() {
                    // Counted only when answered here: a miss is searched
                    // (and counted) again by the main FSM.
                    self.i_range_lookups.next = true;
                    self.i_range_hits.next = true;
                    self.hmbase_r.d.next = self.mlb.rs_base.val();
                    self.hmsize_r.d.next = self.mlb.rs_size.val();
                    self.hmtag_r.d.next = self.mlb.rs_tag.val();
                    self.hloc_r.d.next = self.rs_widen.loc64.val();
                    if self.hop_r.q.val() == self.op_loadmeta.val() {
                        self.r_set.next = true;
                        self.r_loc.next = self.rs_widen.loc64.val();
                        self.r_op.next = self.hop_r.q.val();
                        self.r_id.next = self.hid_r.q.val();
                        self.r_addr.next = self.hptr_r.q.val().get_bits::<56>(0);
                        self.hstate.d.next = SideState::Idle;
                    } else {
                        self.hstate.d.next = SideState::Check;
                    }
                } else {
                    self.hstate.d.next = SideState::Hold;
                }
            }
            SideState::LocWait => {
                if self.mlb.ls_hit.val() {
                    self.i_loc_lookups.next = true;
                    self.i_loc_hits.next = true;
                    self.hmbase_r.d.next = self.mlb.ls_base.val();
                    self.hmsize_r.d.next = self.mlb.ls_size.val();
                    self.hmtag_r.d.next = self.mlb.ls_tag.val();
                    self.hstate.d.next = SideState::Check;
                } else {
                    self.hstate.d.next = SideState::Hold;
                }
            }
            SideState::Check => {
                self.r_set.next = true;
                self.r_loc.next = self.hloc_r.q.val();
                self.r_op.next = self.hop_r.q.val();
                self.r_id.next = self.hid_r.q.val();
                self.r_addr.next = self.memcheck.g_addr.val();
                if self.hop_r.q.val() == self.op_memcheck_s.val() {
                    self.r_fault.next = self.memcheck.s_fault.val();
                    self.check_pass.next = self.memcheck.s_ok.val();
                } else {
                    self.check_pass.next =
                        self.memcheck.g_done.val() & (self.memcheck.g_fault.val() == self.f_none.val());
                    self.r_fault.next = self.memcheck.g_fault.val();
                    self.r_base.next = self.hmbase_r.q.val();
                    self.r_size.next = self.hmsize_r.q.val();
                }
                self.hstate.d.next = SideState::Idle;
            }
            _ => {}
        }

        // ---- Metadata memory port: the traverser's during a walk ----
        if self.state.q.val() == HumState::Traverse {
            self.mem_req_valid.next = self.traverser.mem_req_valid.val();
            self.mem_req_addr.next = self.traverser.mem_req_addr.val();
        } else {
            self.mem_req_valid.next = self.own_req_valid.val();
            self.mem_req_addr.next = self.own_req_addr.val();
        }
        self.mem_take.next = self.mem_req_valid.val() & self.mem_req_ready.val();

        // ---- Response registers (at most one path answers per cycle) ----
        if self.r_set.val() {
            self.resp_valid_r.d.next = true;
            self.resp_id_r.d.next = self.r_id.val();
            self.resp_op_r.d.next = self.r_op.val();
            self.resp_fault_r.d.next = self.r_fault.val();
            self.resp_loc_r.d.next = self.r_loc.val();
            self.resp_addr_r.d.next = self.r_addr.val();
            self.resp_base_r.d.next = self.r_base.val();
            self.resp_size_r.d.next = self.r_size.val();
        }

        // ---- CSR writes ----
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
        }

        // ---- Counters ----
        if self.i_loadmeta.val() {
            self.c_loadmeta.d.next = self.c_loadmeta.q.val() + self.one32.val();
        }
        if self.i_memcheck_g.val() {
            self.c_memcheck_g.d.next = self.c_memcheck_g.q.val() + self.one32.val();
        }
        if self.i_memcheck_s.val() {
            self.c_memcheck_s.d.next = self.c_memcheck_s.q.val() + self.one32.val();
        }
        if self.i_range_lookups.val() {
            self.c_range_lookups.d.next = self.c_range_lookups.q.val() + self.one32.val();
        }
        if self.i_range_hits.val() {
            self.c_range_hits.d.next = self.c_range_hits.q.val() + self.one32.val();
        }
        if self.i_range_misses.val() {
            self.c_range_misses.d.next = self.c_range_misses.q.val() + self.one32.val();
        }
        if self.i_loc_lookups.val() {
            self.c_loc_lookups.d.next = self.c_loc_lookups.q.val() + self.one32.val();
        }
        if self.i_loc_hits.val() {
            self.c_loc_hits.d.next = self.c_loc_hits.q.val() + self.one32.val();
        }
        if self.i_loc_misses.val() {
            self.c_loc_misses.d.next = self.c_loc_misses.q.val() + self.one32.val();
        }
        if (self.state.q.val() == HumState::Traverse) & self.traverser.visit.val() {
            self.c_steps.d.next = self.c_steps.q.val() + self.one32.val();
        }
        if self.mem_take.val() {
            self.c_meta_reads.d.next = self.c_meta_reads.q.val() + self.one32.val();
        }
        if self.r_set.val() & (self.r_fault.val() != self.f_none.val()) {
            self.c_faults.d.next = self.c_faults.q.val() + self.one32.val();
        }
        if self.i_invalidates.val() {
            self.c_invalidates.d.next = self.c_invalidates.q.val() + self.one32.val();
        }
        if self.i_flushes.val() {
            self.c_flushes.d.next = self.c_flushes.q.val() + self.one32.val();
        }

        // ---- Synchronous reset ----
        if self.reset.val() {
            self.state.d.next = HumState::Idle;
            self.hstate.d.next = SideState::Idle;
            self.resp_valid_r.d.next = false;
            self.mode_r.d.next = self.reset_mode.val();
            self.structure_r.d.next = self.reset_structure.val();
            self.root_r.d.next = self.zero64.val();
            self.limit_r.d.next = self.reset_limit.val();
            self.c_loadmeta.d.next = self.zero32.val();
            self.c_memcheck_g.d.next = self.zero32.val();
            self.c_memcheck_s.d.next = self.zero32.val();
            self.c_range_lookups.d.next = self.zero32.val();
            self.c_range_hits.d.next = self.zero32.val();
            self.c_range_misses.d.next = self.zero32.val();
            self.c_loc_lookups.d.next = self.zero32.val();
            self.c_loc_hits.d.next = self.zero32.val();
            self.c_loc_misses.d.next = self.zero32.val();
            self.c_steps.d.next = self.zero32.val();
            self.c_meta_reads.d.next = self.zero32.val();
            self.c_faults.d.next = self.zero32.val();
            self.c_invalidates.d.next = self.zero32.val();
            self.c_flushes.d.next = self.zero32.val();
        }
    }
}
