//! Traverser: the MLU's FSM that walks the metadata structure (linked list or
//! balanced BST of 32-byte nodes) over the metadata memory port, following
//! docs/design.md "Traverser" exactly, so that its sequence of read addresses
//! equals `sim::traverser::walk`'s `reads`.
//!
//! Node addresses (the root and every link followed) are taken by bits
//! 55..5 (`sim::mlb::LOC_MASK`), like MLB locations; a link whose bits 55..5
//! are 0 ends the walk.
//!
//! Per node visited (one *step*): read `+0` (base), then `+8` (size|tag);
//! found if `base <= a && a - base < size` (tag not considered); otherwise read
//! one link: list `+16`; bst `+16` (left) when `a < base`, `+24` (right) when
//! `a >= base + size`. A link of 0, or a root of 0, ends the walk: not found.
//! Before visiting a node, if `limit` nodes have already been visited the walk
//! ends with TRAVERSAL_LIMIT (limit 0 faults on the first node). An error
//! response ends it with MEM_ERROR.
//!
//! # Ports
//! Control (all sampled at the rising edge of `clock`):
//! - `reset`: synchronous; returns the FSM to idle and drops `done`. A read
//!   still outstanding at reset must not be answered afterwards (the MLU top
//!   resets its memory side together with the traverser).
//! - `start` (pulse) with `a` (the address; only bits 55..0 are used, so a tagged pointer may be given), `root`
//!   (head/root node address; 0 = empty structure), `limit` (step limit) and
//!   `structure` (CSR: 0 = LIST, 1 = BST; ignored when only one structure is
//!   built). Accepted only while `busy` is low; operands are latched.
//! - `busy`: high from the cycle after an accepted `start` until the cycle in
//!   which `done` is high (exclusive).
//! - `done`: a one-cycle pulse with `result` (RES_FOUND / RES_NOT_FOUND /
//!   RES_LIMIT / RES_MEM_ERROR), `steps` (nodes visited), and for RES_FOUND
//!   `location` (node address), `base`, `size`, `tag`. Result outputs hold
//!   their value until the next `done`. `busy` is low in the `done` cycle, so
//!   a new `start` may be given in that same cycle.
//! - `visit`: high in each cycle in which a node's base-word request is taken
//!   (one pulse per step; the MLU's step counter counts them).
//!
//! Metadata memory port (8-byte word reads, one outstanding at a time):
//! - request: `mem_req_valid`, `mem_req_addr` (byte address, multiple of 8);
//!   a request is taken at a rising edge where `mem_req_valid && mem_req_ready`.
//!   `mem_req_valid`/`mem_req_addr` are driven from registers only (no
//!   combinational path from any input), and stay stable until taken.
//! - response: `mem_resp_valid` with `mem_resp_data` (the little-endian word)
//!   and `mem_resp_error`; any latency of at least one cycle after the
//!   request was taken. The traverser always accepts a response (no
//!   resp_ready): the memory must give exactly one response per request taken,
//!   and none otherwise.
//!
//! # Timing
//! With `mem_req_ready` always high and a fixed latency of L cycles, each read
//! costs L + 1 cycles (one request cycle, then the response L cycles later)
//! and the walk's `done` comes `1 + R * (L + 1)` cycles after the `start`
//! cycle, where R is the number of words read (2 or 3 per step).
use rust_hdl::prelude::*;
use crate::state_reg::StateReg;
use sim::mlb::LOC_MASK;

/// Which structures a traverser (and MLU) is generated for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Structures {
    List,
    Bst,
    /// Both walks built; the `structure` CSR input selects one.
    Both,
}

impl Structures {
    pub fn name(self) -> &'static str {
        match self {
            Structures::List => "list",
            Structures::Bst => "bst",
            Structures::Both => "both",
        }
    }
}

/// `result` encodings (2 bits).
pub const RES_FOUND: u64 = 0;
pub const RES_NOT_FOUND: u64 = 1;
pub const RES_LIMIT: u64 = 2;
pub const RES_MEM_ERROR: u64 = 3;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum TraverserState {
    Idle,
    /// Request the base word (+0) of `node`.
    ReqBase,
    WaitBase,
    /// Request the size|tag word (+8).
    ReqSize,
    WaitSize,
    /// Request the link word chosen in WaitSize (`link_addr`).
    ReqLink,
    WaitLink,
}

#[derive(LogicBlock)]
pub struct Traverser {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub start: Signal<In, Bit>,
    pub a: Signal<In, Bits<64>>,
    pub root: Signal<In, Bits<64>>,
    pub limit: Signal<In, Bits<16>>,
    pub structure: Signal<In, Bit>,
    pub busy: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub result: Signal<Out, Bits<2>>,
    pub steps: Signal<Out, Bits<16>>,
    pub location: Signal<Out, Bits<64>>,
    pub base: Signal<Out, Bits<56>>,
    pub size: Signal<Out, Bits<56>>,
    pub tag: Signal<Out, Bits<8>>,
    pub visit: Signal<Out, Bit>,
    pub mem_req_valid: Signal<Out, Bit>,
    pub mem_req_ready: Signal<In, Bit>,
    pub mem_req_addr: Signal<Out, Bits<64>>,
    pub mem_resp_valid: Signal<In, Bit>,
    pub mem_resp_data: Signal<In, Bits<64>>,
    pub mem_resp_error: Signal<In, Bit>,
    state: StateReg<TraverserState>,
    addr_r: DFF<Bits<64>>,
    limit_r: DFF<Bits<16>>,
    bst_r: DFF<Bit>,
    node_r: DFF<Bits<64>>,
    base_r: DFF<Bits<64>>,
    link_addr_r: DFF<Bits<64>>,
    steps_r: DFF<Bits<16>>,
    done_r: DFF<Bit>,
    result_r: DFF<Bits<2>>,
    size_r: DFF<Bits<56>>,
    tag_r: DFF<Bits<8>>,
    // Combinational helpers (every one gets a default at the top of update).
    is_bst: Signal<Local, Bit>,
    a_ge_base: Signal<Local, Bit>,
    offset: Signal<Local, Bits<64>>,
    resp_size: Signal<Local, Bits<64>>,
    root_m: Signal<Local, Bits<64>>,
    link_m: Signal<Local, Bits<64>>,
    loc_mask: Constant<Bits<64>>,
    has_list: Constant<Bit>,
    has_bst: Constant<Bit>,
    mask56: Constant<Bits<64>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    res_found: Constant<Bits<2>>,
    res_not_found: Constant<Bits<2>>,
    res_limit: Constant<Bits<2>>,
    res_mem_error: Constant<Bits<2>>,
}

impl Traverser {
    pub fn new(structures: Structures) -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            a: Default::default(),
            root: Default::default(),
            limit: Default::default(),
            structure: Default::default(),
            busy: Default::default(),
            done: Default::default(),
            result: Default::default(),
            steps: Default::default(),
            location: Default::default(),
            base: Default::default(),
            size: Default::default(),
            tag: Default::default(),
            visit: Default::default(),
            mem_req_valid: Default::default(),
            mem_req_ready: Default::default(),
            mem_req_addr: Default::default(),
            mem_resp_valid: Default::default(),
            mem_resp_data: Default::default(),
            mem_resp_error: Default::default(),
            state: Default::default(),
            addr_r: Default::default(),
            limit_r: Default::default(),
            bst_r: Default::default(),
            node_r: Default::default(),
            base_r: Default::default(),
            link_addr_r: Default::default(),
            steps_r: Default::default(),
            done_r: Default::default(),
            result_r: Default::default(),
            size_r: Default::default(),
            tag_r: Default::default(),
            is_bst: Default::default(),
            a_ge_base: Default::default(),
            offset: Default::default(),
            resp_size: Default::default(),
            root_m: Default::default(),
            link_m: Default::default(),
            loc_mask: Constant::new(LOC_MASK.into()),
            has_list: Constant::new(structures != Structures::Bst),
            has_bst: Constant::new(structures != Structures::List),
            mask56: Constant::new(0x00FF_FFFF_FFFF_FFFF_u64.into()),
            one16: Constant::new(1.into()),
            zero16: Constant::new(0.into()),
            res_found: Constant::new(RES_FOUND.into()),
            res_not_found: Constant::new(RES_NOT_FOUND.into()),
            res_limit: Constant::new(RES_LIMIT.into()),
            res_mem_error: Constant::new(RES_MEM_ERROR.into()),
        }
    }
}

impl Logic for Traverser {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            addr_r,
            limit_r,
            bst_r,
            node_r,
            base_r,
            link_addr_r,
            steps_r,
            done_r,
            result_r,
            size_r,
            tag_r
        );
        // Defaults: done is a pulse; outputs come straight from registers.
        self.done_r.d.next = false;
        self.is_bst.next = self.has_bst.val() & (!self.has_list.val() | self.structure.val());
        // Range test pieces from registers only: a >= base and a - base.
        self.a_ge_base.next = self.addr_r.q.val() >= self.base_r.q.val();
        self.offset.next = self.addr_r.q.val() - self.base_r.q.val();
        self.resp_size.next = self.mem_resp_data.val() & self.mask56.val();
        // Node addresses (root, links) are taken by bits 55..5, as MLB locations.
        self.root_m.next = self.root.val() & self.loc_mask.val();
        self.link_m.next = self.mem_resp_data.val() & self.loc_mask.val();
        self.busy.next = self.state.q.val() != TraverserState::Idle;
        self.done.next = self.done_r.q.val();
        self.result.next = self.result_r.q.val();
        self.steps.next = self.steps_r.q.val();
        self.location.next = self.node_r.q.val();
        self.base.next = self.base_r.q.val().get_bits::<56>(0);
        self.size.next = self.size_r.q.val();
        self.tag.next = self.tag_r.q.val();
        self.mem_req_valid.next = false;
        self.mem_req_addr.next = self.node_r.q.val();
        // A node is visited when its base-word request is taken.
        self.visit.next = (self.state.q.val() == TraverserState::ReqBase) & self.mem_req_ready.val();
        match self.state.q.val() {
            TraverserState::Idle => {
                if self.start.val() {
                    self.addr_r.d.next = self.a.val() & self.mask56.val();
                    self.limit_r.d.next = self.limit.val();
                    self.bst_r.d.next = self.is_bst.val();
                    self.node_r.d.next = self.root_m.val();
                    self.steps_r.d.next = self.zero16.val();
                    if self.root_m.val() == 0_u64 {
                        self.done_r.d.next = true;
                        self.result_r.d.next = self.res_not_found.val();
                    } else if self.limit.val() == self.zero16.val() {
                        self.done_r.d.next = true;
                        self.result_r.d.next = self.res_limit.val();
                    } else {
                        self.steps_r.d.next = self.one16.val();
                        self.state.d.next = TraverserState::ReqBase;
                    }
                }
            }
            TraverserState::ReqBase => {
                self.mem_req_valid.next = true;
                self.mem_req_addr.next = self.node_r.q.val();
                if self.mem_req_ready.val() {
                    self.state.d.next = TraverserState::WaitBase;
                }
            }
            TraverserState::WaitBase => {
                if self.mem_resp_valid.val() {
                    if self.mem_resp_error.val() {
                        self.done_r.d.next = true;
                        self.result_r.d.next = self.res_mem_error.val();
                        self.state.d.next = TraverserState::Idle;
                    } else {
                        self.base_r.d.next = self.mem_resp_data.val();
                        self.state.d.next = TraverserState::ReqSize;
                    }
                }
            }
            TraverserState::ReqSize => {
                self.mem_req_valid.next = true;
                self.mem_req_addr.next = self.node_r.q.val() + 8_u64;
                if self.mem_req_ready.val() {
                    self.state.d.next = TraverserState::WaitSize;
                }
            }
            TraverserState::WaitSize => {
                if self.mem_resp_valid.val() {
                    self.size_r.d.next = self.mem_resp_data.val().get_bits::<56>(0);
                    self.tag_r.d.next = self.mem_resp_data.val().get_bits::<8>(56);
                    if self.mem_resp_error.val() {
                        self.done_r.d.next = true;
                        self.result_r.d.next = self.res_mem_error.val();
                        self.state.d.next = TraverserState::Idle;
                    } else if self.a_ge_base.val() & (self.offset.val() < self.resp_size.val()) {
                        self.done_r.d.next = true;
                        self.result_r.d.next = self.res_found.val();
                        self.state.d.next = TraverserState::Idle;
                    } else {
                        // list: next (+16); bst: left (+16) if a < base, else right (+24).
                        if self.bst_r.q.val() & self.a_ge_base.val() {
                            self.link_addr_r.d.next = self.node_r.q.val() + 24_u64;
                        } else {
                            self.link_addr_r.d.next = self.node_r.q.val() + 16_u64;
                        }
                        self.state.d.next = TraverserState::ReqLink;
                    }
                }
            }
            TraverserState::ReqLink => {
                self.mem_req_valid.next = true;
                self.mem_req_addr.next = self.link_addr_r.q.val();
                if self.mem_req_ready.val() {
                    self.state.d.next = TraverserState::WaitLink;
                }
            }
            TraverserState::WaitLink => {
                if self.mem_resp_valid.val() {
                    if self.mem_resp_error.val() {
                        self.done_r.d.next = true;
                        self.result_r.d.next = self.res_mem_error.val();
                        self.state.d.next = TraverserState::Idle;
                    } else if self.link_m.val() == 0_u64 {
                        self.done_r.d.next = true;
                        self.result_r.d.next = self.res_not_found.val();
                        self.state.d.next = TraverserState::Idle;
                    } else if self.steps_r.q.val() == self.limit_r.q.val() {
                        self.done_r.d.next = true;
                        self.result_r.d.next = self.res_limit.val();
                        self.state.d.next = TraverserState::Idle;
                    } else {
                        self.node_r.d.next = self.link_m.val();
                        self.steps_r.d.next = self.steps_r.q.val() + self.one16.val();
                        self.state.d.next = TraverserState::ReqBase;
                    }
                }
            }
            _ => {
                self.state.d.next = TraverserState::Idle;
            }
        }
        if self.reset.val() {
            self.state.d.next = TraverserState::Idle;
            self.done_r.d.next = false;
        }
    }
}
