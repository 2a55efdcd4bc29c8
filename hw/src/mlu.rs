//! `Mlu<N, IW>`: the Metadata Loading Unit top (spec section 4,
//! docs/design.md): the MLB (`hw::mlb`), the traverser (`hw::traverser`), the
//! MEMCHECK datapath (`hw::memcheck`), the CSRs and the counters around one
//! blocking FSM. The golden model is `sim::mlu::Mlu` (transaction level): each
//! request here is one of its method calls, with the same results and the
//! same counter updates.
//!
//! # Ports (one clock, rising edge; all inputs sampled at the edge)
//! - `reset`: synchronous. Returns the FSM and the traverser to idle, clears
//!   the MLB's valid bits and replacement state and every counter, and puts
//!   the CSRs at their reset values. Registers have no reset of their own in
//!   rust-hdl: hold `reset` for one cycle after power-up. A metadata read
//!   still outstanding when `reset` is given must not be answered afterwards
//!   (reset the memory side with the MLU).
//! - Request: `req_valid`, `req_ready`, `req_op` (3: LOADMETA=0, MEMCHECK_G=1,
//!   MEMCHECK_S=2, INVALIDATE=3, FLUSH=4; 5..7 are answered NONE and do
//!   nothing), `req_ptr` (64: the pointer p of LOADMETA/MEMCHECK.G, the shared
//!   address of MEMCHECK.S in bits 31..0), `req_width` (5: bytes, 1/2/4/8/16),
//!   `req_loc` (64: the location operand of MEMCHECK.G and INVALIDATE),
//!   `req_sbase`, `req_ssize` (32: MEMCHECK.S's compile-time window). A
//!   request is taken at an edge where `req_valid && req_ready`; `req_ready`
//!   is high exactly when the MLU is idle (blocking: one operation in flight),
//!   which includes the cycle in which the previous response is presented.
//! - Response: `resp_valid` is a one-cycle pulse per request and there is no
//!   `resp_ready`: the requester must take the response in that cycle
//!   (always-accept). With it: `resp_op`, `resp_fault` (3, docs/design.md
//!   encoding), `resp_loc` (64: LOADMETA's location: 0 for a tag-0 pointer,
//!   NO_META when no node holds the address, NO_META too when LOADMETA
//!   faults), `resp_addr` (56: the untagged address of MEMCHECK.G, the shared
//!   address of MEMCHECK.S), and for MEMCHECK.G faults that know the
//!   allocation (USE_AFTER_FREE, TAG_MISMATCH, OUT_OF_BOUNDS) its `resp_base`
//!   and `resp_size` (56).
//! - CSR write port: `csr_we`, `csr_addr` (2), `csr_data` (64). Addresses:
//!   0 MODE (bit 0: COMPILER=0, HWONLY=1), 1 STRUCTURE (bit 0: LIST=0, BST=1;
//!   ignored unless both structures are built), 2 ROOT (64), 3 STEP_LIMIT (16).
//!   Writes take effect at the edge, also while an operation is in flight;
//!   the traverser latches root, step limit and structure when it starts, the
//!   mode is looked at when a request is taken. Reset values: the generation
//!   parameters' mode, structure and step limit, root 0. The CSR values are
//!   outputs (`csr_mode`, `csr_structure`, `csr_root`, `csr_step_limit`).
//! - Counters (32 bits, wrapping, the set of `sim::mlu::Counters`):
//!   `cnt_loadmeta`, `cnt_memcheck_g`, `cnt_memcheck_s` (requests taken),
//!   `cnt_range_lookups/hits/misses`, `cnt_loc_lookups/hits/misses`,
//!   `cnt_steps` (nodes visited), `cnt_meta_reads` (8-byte words requested,
//!   also those answered with an error), `cnt_faults`, `cnt_invalidates`,
//!   `cnt_flushes`.
//! - Observability: `mlb_multi` (the MLB's one-hot assertion, must stay 0),
//!   `mlb_repl_state` (PLRU bits / round-robin pointer), `mlb_hit_way` (the
//!   hit way, in the cycle after a search), `mlb_victim` and `mlb_fill_ok`
//!   (the way a fill in this cycle writes, and whether it is taken),
//!   `trav_busy`, `trav_steps` (nodes visited by the last walk), and
//!   `check_pass` (the MEMCHECK decision made in this cycle passes).
//! - Metadata memory port: as `hw::traverser::Traverser`'s (8-byte reads, one
//!   outstanding, any latency >= 1, always-accepted responses). The
//!   traverser drives it during a walk; the MLU itself drives it for the
//!   16-byte fetch of a MEMCHECK.G location miss (words `loc+0`, `loc+8`,
//!   with loc taken by bits 55..5).
//!
//! # Latencies
//! Cycles from the edge that takes a request (cycle 0) to the cycle in which
//! `resp_valid` is high, with `mem_req_ready` always high, memory latency L,
//! and R metadata words read by the walk:
//! - tag-0 LOADMETA, INVALIDATE, FLUSH: 1.
//! - MEMCHECK.S, tag-0 MEMCHECK.G, MEMCHECK.G with location 0/NO_META: 2.
//! - LOADMETA MLB hit: 2. MEMCHECK.G MLB hit (location, or range in HWONLY): 3.
//! - MEMCHECK.G location miss: 5 + 2L (two reads of L + 1 cycles, then the check).
//! - LOADMETA range miss: 3 + R(L + 1); HWONLY MEMCHECK.G range miss: 4 + R(L + 1).
//!
//! # Same-cycle and ordering rules
//! The MLU is blocking, so the MLB sees at most one of search / fill /
//! invalidate / flush per operation and never two operations' commands in one
//! cycle: a FLUSH or INVALIDATE requested while a traversal is in flight
//! waits (`req_ready` low) until that operation has filled the MLB and
//! answered, and then acts on the filled state, exactly as the model's
//! sequential calls. The fill of a traversal or fetch happens at the edge
//! that ends the walk, before its response is presented.
//!
//! Known difference from the model: the MLB and the check keep base and size
//! in 56 bits, so a node whose base word has bits 63..56 set (the runtime
//! never writes one) is checked with those bits dropped.
//!
//! Length: this file is over 800 lines because a rust-hdl block is one
//! `#[hdl_gen] fn update`, emitted as one Verilog always block, and rust-hdl
//! 0.46 cannot call a helper from it; the sub-blocks that can stand alone
//! are their own files (`mlb.rs`, `traverser.rs`, `memcheck.rs`).
use crate::memcheck::Memcheck;
use crate::mlb::Mlb;
use crate::state_reg::StateReg;
use crate::traverser::{Structures, Traverser, RES_FOUND, RES_LIMIT, RES_NOT_FOUND};
use rust_hdl::prelude::*;
use sim::config::{Mode, MluConfig, Replacement, Structure};
use sim::fault::{FaultCode, Op};
use sim::mlb::LOC_MASK;
use sim::pointer::NO_META;

/// CSR addresses of the write port.
pub const CSR_MODE: u64 = 0;
pub const CSR_STRUCTURE: u64 = 1;
pub const CSR_ROOT: u64 = 2;
pub const CSR_STEP_LIMIT: u64 = 3;

/// Generation parameters of an MLU (besides the entry count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MluParams {
    pub structures: Structures,
    pub replacement: Replacement,
    /// Reset value of the MODE CSR.
    pub mode: Mode,
    /// Reset value of the STRUCTURE CSR when both are built.
    pub structure: Structure,
    /// Reset value of the STEP_LIMIT CSR.
    pub step_limit: u16,
}

impl MluParams {
    /// The parameters for one structure with the model's defaults (compiler
    /// mode, tree PLRU, step limit 4096).
    pub fn new(structures: Structures) -> Self {
        let d = MluConfig::default();
        let structure = match structures {
            Structures::List => Structure::List,
            Structures::Bst | Structures::Both => Structure::Bst,
        };
        MluParams { structures, replacement: d.replacement, mode: d.mode, structure, step_limit: d.step_limit as u16 }
    }

    /// From a model configuration (its structure must be list or bst; sol is
    /// not built in hardware).
    pub fn from_config(cfg: &MluConfig) -> anyhow::Result<Self> {
        let structures = match cfg.structure {
            Structure::List => Structures::List,
            Structure::Bst => Structures::Bst,
            Structure::Sol => anyhow::bail!("structure \"sol\" is a model-only reference point and has no RTL"),
        };
        anyhow::ensure!(cfg.step_limit <= 0xFFFF, "step_limit {} does not fit the 16-bit CSR", cfg.step_limit);
        Ok(MluParams {
            structures,
            replacement: cfg.replacement,
            mode: cfg.mode,
            structure: cfg.structure,
            step_limit: cfg.step_limit as u16,
        })
    }
}

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum MluState {
    Idle,
    /// MLB range search result (LOADMETA, HWONLY MEMCHECK.G).
    RangeWait,
    /// MLB location search result (COMPILER MEMCHECK.G).
    LocWait,
    /// The traverser walks; it drives the memory port.
    Traverse,
    /// Location-miss fetch of base (+0) and size|tag (+8).
    FetchBaseReq,
    FetchBaseWait,
    FetchSizeReq,
    FetchSizeWait,
    /// MEMCHECK.G / MEMCHECK.S decision from the latched operands and metadata.
    Check,
}

/// `{8'b0, loc[55:5], 5'b0}`: a 51-bit MLB location back to a 64-bit
/// address. A block of its own because rust-hdl can only widen by a masked
/// cast, which Verilator flags (WIDTH); this emits an exact concatenation.
#[derive(LogicBlock, Default)]
pub struct LocWiden {
    pub loc51: Signal<In, Bits<51>>,
    pub loc64: Signal<Out, Bits<64>>,
}

impl Logic for LocWiden {
    fn update(&mut self) {
        self.loc64.next = bit_cast::<64, 51>(self.loc51.val()) << 5_u64;
    }
    fn connect(&mut self) {
        self.loc64.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(*) loc64 = {8'h00, loc51, 5'h00};".into())
    }
}

#[derive(LogicBlock)]
pub struct Mlu<const N: usize, const IW: usize> {
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
    // Response.
    pub resp_valid: Signal<Out, Bit>,
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
    // Observability (for testbenches, waveforms and assertions).
    pub mlb_multi: Signal<Out, Bit>,
    pub mlb_repl_state: Signal<Out, Bits<N>>,
    pub mlb_hit_way: Signal<Out, Bits<IW>>,
    pub mlb_victim: Signal<Out, Bits<IW>>,
    pub mlb_fill_ok: Signal<Out, Bit>,
    pub trav_busy: Signal<Out, Bit>,
    pub trav_steps: Signal<Out, Bits<16>>,
    pub check_pass: Signal<Out, Bit>,
    // Blocks.
    pub mlb: Mlb<N, IW>,
    pub traverser: Traverser,
    memcheck: Memcheck,
    rs_widen: LocWiden,
    // FSM and latched operands.
    state: StateReg<MluState>,
    op_r: DFF<Bits<3>>,
    ptr_r: DFF<Bits<64>>,
    width_r: DFF<Bits<5>>,
    loc_r: DFF<Bits<64>>,
    sbase_r: DFF<Bits<32>>,
    ssize_r: DFF<Bits<32>>,
    // Metadata for the check (from an MLB hit, a walk or the fetch).
    mbase_r: DFF<Bits<56>>,
    msize_r: DFF<Bits<56>>,
    mtag_r: DFF<Bits<8>>,
    // Response registers.
    resp_valid_r: DFF<Bit>,
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
    // Combinational: counter increments and the response being set.
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
    req_tag0: Signal<Local, Bit>,
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

/// The committed configurations (index width = log2(N)).
pub type Mlu8 = Mlu<8, 3>;
pub type Mlu16 = Mlu<16, 4>;

/// The four default tops (tree PLRU, compiler mode, step limit 4096).
pub fn mlu8_bst() -> Mlu8 {
    Mlu8::new(MluParams::new(Structures::Bst))
}
pub fn mlu8_list() -> Mlu8 {
    Mlu8::new(MluParams::new(Structures::List))
}
pub fn mlu16_bst() -> Mlu16 {
    Mlu16::new(MluParams::new(Structures::Bst))
}
pub fn mlu16_list() -> Mlu16 {
    Mlu16::new(MluParams::new(Structures::List))
}

impl<const N: usize, const IW: usize> Mlu<N, IW> {
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
            resp_valid: Default::default(),
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
            mbase_r: Default::default(),
            msize_r: Default::default(),
            mtag_r: Default::default(),
            resp_valid_r: Default::default(),
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
            req_tag0: Default::default(),
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

impl<const N: usize, const IW: usize> Logic for Mlu<N, IW> {
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
            mbase_r,
            msize_r,
            mtag_r,
            resp_valid_r,
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

        // ---- Defaults (every combinational signal, so no latches) ----
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
        self.own_req_valid.next = false;
        self.fetch_loc.next = self.loc_r.q.val() & self.loc_mask.val();
        self.own_req_addr.next = self.fetch_loc.val();
        self.req_tag0.next = self.req_ptr.val().get_bits::<8>(56) == self.zero8.val();

        // MLB commands: none unless a state below issues one.
        self.mlb.reset.next = self.reset.val();
        self.mlb.rs_valid.next = false;
        self.mlb.rs_addr.next = self.req_ptr.val().get_bits::<56>(0);
        self.mlb.ls_valid.next = false;
        self.mlb.ls_loc.next = self.req_loc.val().get_bits::<51>(5);
        self.mlb.fill_valid.next = false;
        self.mlb.fill_loc.next = self.traverser.location.val().get_bits::<51>(5);
        self.mlb.fill_base.next = self.traverser.base.val();
        self.mlb.fill_size.next = self.traverser.size.val();
        self.mlb.fill_tag.next = self.traverser.tag.val();
        self.mlb.inv_valid.next = false;
        self.mlb.inv_loc.next = self.req_loc.val().get_bits::<51>(5);
        self.mlb.flush.next = false;
        self.rs_widen.loc51.next = self.mlb.rs_loc.val();

        // Traverser: operands from the latched request and the CSRs.
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

        // The check, from the latched operands and metadata registers; while
        // idle, from the request, so that `g_need_meta` tells whether a
        // MEMCHECK.G needs the MLB at all.
        self.memcheck.g_ptr.next = self.ptr_r.q.val();
        self.memcheck.g_width.next = self.width_r.q.val();
        self.memcheck.g_loc.next = self.loc_r.q.val();
        self.memcheck.g_meta_valid.next = true;
        if self.state.q.val() == MluState::Idle {
            self.memcheck.g_ptr.next = self.req_ptr.val();
            self.memcheck.g_loc.next = self.req_loc.val();
            self.memcheck.g_meta_valid.next = false;
        }
        self.memcheck.g_meta_base.next = self.mbase_r.q.val();
        self.memcheck.g_meta_size.next = self.msize_r.q.val();
        self.memcheck.g_meta_tag.next = self.mtag_r.q.val();
        self.memcheck.s_addr.next = self.ptr_r.q.val().get_bits::<32>(0);
        self.memcheck.s_width.next = self.width_r.q.val();
        self.memcheck.s_base.next = self.sbase_r.q.val();
        self.memcheck.s_size.next = self.ssize_r.q.val();

        // Outputs from registers. The traverser is never busy while the MLU
        // is idle; the interlock keeps that an invariant of the handshake.
        self.req_ready.next = (self.state.q.val() == MluState::Idle) & !self.traverser.busy.val();
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

        // ---- The operation FSM ----
        match self.state.q.val() {
            MluState::Idle => {
                if self.req_valid.val() & !self.traverser.busy.val() {
                    self.op_r.d.next = self.req_op.val();
                    self.ptr_r.d.next = self.req_ptr.val();
                    self.width_r.d.next = self.req_width.val();
                    self.loc_r.d.next = self.req_loc.val();
                    self.sbase_r.d.next = self.req_sbase.val();
                    self.ssize_r.d.next = self.req_ssize.val();
                    self.resp_op_r.d.next = self.req_op.val();
                    // Unknown ops (5..7): answered NONE, no effect.
                    self.r_set.next = true;
                    self.r_loc.next = self.zero64.val();
                    if self.req_op.val() == self.op_loadmeta.val() {
                        self.i_loadmeta.next = true;
                        if self.req_tag0.val() {
                            // Tag 0: location 0, the MLB is not touched.
                            self.r_loc.next = self.zero64.val();
                        } else {
                            self.r_set.next = false;
                            self.i_range_lookups.next = true;
                            self.mlb.rs_valid.next = true;
                            self.state.d.next = MluState::RangeWait;
                        }
                    }
                    if self.req_op.val() == self.op_memcheck_g.val() {
                        self.i_memcheck_g.next = true;
                        self.r_set.next = false;
                        if self.req_tag0.val() {
                            // Tag 0 passes; the check block decides it.
                            self.state.d.next = MluState::Check;
                        } else if self.mode_r.q.val() {
                            // HWONLY: the range path on untag(p).
                            self.i_range_lookups.next = true;
                            self.mlb.rs_valid.next = true;
                            self.state.d.next = MluState::RangeWait;
                        } else if !self.memcheck.g_need_meta.val() {
                            // Location 0 / NO_META: the check faults NO_META.
                            self.state.d.next = MluState::Check;
                        } else {
                            self.i_loc_lookups.next = true;
                            self.mlb.ls_valid.next = true;
                            self.state.d.next = MluState::LocWait;
                        }
                    }
                    if self.req_op.val() == self.op_memcheck_s.val() {
                        self.i_memcheck_s.next = true;
                        self.r_set.next = false;
                        self.state.d.next = MluState::Check;
                    }
                    if self.req_op.val() == self.op_invalidate.val() {
                        self.i_invalidates.next = true;
                        self.mlb.inv_valid.next = true;
                    }
                    if self.req_op.val() == self.op_flush.val() {
                        self.i_flushes.next = true;
                        self.mlb.flush.next = true;
                    }
                }
            }
            MluState::RangeWait => {
                if self.mlb.rs_hit.val() {
                    self.i_range_hits.next = true;
                    self.mbase_r.d.next = self.mlb.rs_base.val();
                    self.msize_r.d.next = self.mlb.rs_size.val();
                    self.mtag_r.d.next = self.mlb.rs_tag.val();
                    self.loc_r.d.next = self.rs_widen.loc64.val();
                    if self.op_r.q.val() == self.op_loadmeta.val() {
                        self.r_set.next = true;
                        self.r_loc.next = self.rs_widen.loc64.val();
                        self.state.d.next = MluState::Idle;
                    } else {
                        self.state.d.next = MluState::Check;
                    }
                } else {
                    self.i_range_misses.next = true;
                    self.traverser.start.next = true;
                    self.state.d.next = MluState::Traverse;
                }
            }
            MluState::Traverse => {
                if self.traverser.done.val() {
                    if self.traverser.result.val() == self.t_found.val() {
                        self.mlb.fill_valid.next = true;
                        self.mbase_r.d.next = self.traverser.base.val();
                        self.msize_r.d.next = self.traverser.size.val();
                        self.mtag_r.d.next = self.traverser.tag.val();
                        self.loc_r.d.next = self.traverser.location.val();
                        if self.op_r.q.val() == self.op_loadmeta.val() {
                            self.r_set.next = true;
                            self.r_loc.next = self.traverser.location.val();
                            self.state.d.next = MluState::Idle;
                        } else {
                            self.state.d.next = MluState::Check;
                        }
                    } else if self.traverser.result.val() == self.t_not_found.val() {
                        if self.op_r.q.val() == self.op_loadmeta.val() {
                            self.r_set.next = true;
                            self.r_loc.next = self.no_meta.val();
                            self.state.d.next = MluState::Idle;
                        } else {
                            // HWONLY: no node holds the address: the check
                            // faults NO_META on location NO_META.
                            self.loc_r.d.next = self.no_meta.val();
                            self.state.d.next = MluState::Check;
                        }
                    } else if self.traverser.result.val() == self.t_limit.val() {
                        self.r_set.next = true;
                        self.r_fault.next = self.f_limit.val();
                        self.state.d.next = MluState::Idle;
                    } else {
                        self.r_set.next = true;
                        self.r_fault.next = self.f_mem_error.val();
                        self.state.d.next = MluState::Idle;
                    }
                }
            }
            MluState::LocWait => {
                if self.mlb.ls_hit.val() {
                    self.i_loc_hits.next = true;
                    self.mbase_r.d.next = self.mlb.ls_base.val();
                    self.msize_r.d.next = self.mlb.ls_size.val();
                    self.mtag_r.d.next = self.mlb.ls_tag.val();
                    self.state.d.next = MluState::Check;
                } else {
                    self.i_loc_misses.next = true;
                    self.state.d.next = MluState::FetchBaseReq;
                }
            }
            MluState::FetchBaseReq => {
                self.own_req_valid.next = true;
                self.own_req_addr.next = self.fetch_loc.val();
                if self.mem_req_ready.val() {
                    self.state.d.next = MluState::FetchBaseWait;
                }
            }
            MluState::FetchBaseWait => {
                if self.mem_resp_valid.val() {
                    self.mbase_r.d.next = self.mem_resp_data.val().get_bits::<56>(0);
                    if self.mem_resp_error.val() {
                        self.r_set.next = true;
                        self.r_fault.next = self.f_mem_error.val();
                        self.state.d.next = MluState::Idle;
                    } else {
                        self.state.d.next = MluState::FetchSizeReq;
                    }
                }
            }
            MluState::FetchSizeReq => {
                self.own_req_valid.next = true;
                self.own_req_addr.next = self.fetch_loc.val() + 8_u64;
                if self.mem_req_ready.val() {
                    self.state.d.next = MluState::FetchSizeWait;
                }
            }
            MluState::FetchSizeWait => {
                if self.mem_resp_valid.val() {
                    self.msize_r.d.next = self.mem_resp_data.val().get_bits::<56>(0);
                    self.mtag_r.d.next = self.mem_resp_data.val().get_bits::<8>(56);
                    if self.mem_resp_error.val() {
                        self.r_set.next = true;
                        self.r_fault.next = self.f_mem_error.val();
                        self.state.d.next = MluState::Idle;
                    } else {
                        self.mlb.fill_valid.next = true;
                        self.mlb.fill_loc.next = self.loc_r.q.val().get_bits::<51>(5);
                        self.mlb.fill_base.next = self.mbase_r.q.val();
                        self.mlb.fill_size.next = self.mem_resp_data.val().get_bits::<56>(0);
                        self.mlb.fill_tag.next = self.mem_resp_data.val().get_bits::<8>(56);
                        self.state.d.next = MluState::Check;
                    }
                }
            }
            MluState::Check => {
                self.r_set.next = true;
                self.r_loc.next = self.loc_r.q.val();
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
                self.state.d.next = MluState::Idle;
            }
            _ => {
                self.state.d.next = MluState::Idle;
            }
        }

        // ---- Metadata memory port: the traverser's during a walk ----
        if self.state.q.val() == MluState::Traverse {
            self.mem_req_valid.next = self.traverser.mem_req_valid.val();
            self.mem_req_addr.next = self.traverser.mem_req_addr.val();
        } else {
            self.mem_req_valid.next = self.own_req_valid.val();
            self.mem_req_addr.next = self.own_req_addr.val();
        }
        self.mem_take.next = self.mem_req_valid.val() & self.mem_req_ready.val();

        // ---- Response registers ----
        if self.r_set.val() {
            self.resp_valid_r.d.next = true;
            self.resp_fault_r.d.next = self.r_fault.val();
            self.resp_loc_r.d.next = self.r_loc.val();
            // untag(p) of the latched pointer (of the request while idle).
            self.resp_addr_r.d.next = self.memcheck.g_addr.val();
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
        // One step per node visited = per base-word request the traverser
        // gets taken.
        if (self.state.q.val() == MluState::Traverse) & self.traverser.visit.val() {
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

        // ---- Synchronous reset (the MLB and traverser take `reset` too) ----
        if self.reset.val() {
            self.state.d.next = MluState::Idle;
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
