//! `Walker`: one walker of the MLU as an SM unit (spec section 6,
//! docs/design.md "The MLU as an SM unit"). The golden model is
//! `sim::walker::Walker`, state for state and cycle for cycle; the unit has
//! K of these.
//!
//! A walker reads whole 32-byte nodes (one port request returns base,
//! size|tag, link0 and link1), at most one read outstanding, for one key:
//! - range (`start_range` = 1): the node whose range holds `start_a`, from
//!   `root`; list: follow link0; bst: `a < base` link0, `a >= base + size`
//!   link1, else found. A link of 0 ends it (not found); before reading a
//!   node after `limit` nodes it ends in RES_LIMIT (limit 0: at once); an
//!   error response in RES_MEM_ERROR. A root of 0 is an empty structure.
//! - location (`start_range` = 0): the node at `start_a`: one read.
//! - heap (a range key with `start_heap`: the key lies in the device heap's
//!   window, an aligned power-of-two region, sim::mlu "Heap window"): one
//!   read of the directory node `heap_dir | (a & heap_mask)` (bits 55..5),
//!   whatever the root and the limit; found at the node's link0 (the
//!   chunk's location), not found if it is 0. The unit classifies the key
//!   (the window's equality compare) once per request, on a pipeline
//!   register, and keeps the bit with a miss slot, so the walker is handed
//!   one bit; the node's address is formed in a state of its own
//!   (`HeapNode`, one cycle) into `node_r`, so the port's request path is
//!   unchanged. (Timing, ASAP7, 8 entries: a window of magnitude compares
//!   and adders put 64-bit carry chains on these paths, 873-919 ps; the
//!   equality compare made here, behind the unit's slot select, 531 ps;
//!   the target is 500 ps.)
//!
//! Node addresses are 51-bit locations (address bits 55..5), as the MLB
//! stores them; the port address is `{node, 5'b0}`.
//!
//! # Ports (one clock, rising edge; inputs sampled at the edge)
//! - `reset`: synchronous; back to idle. A read outstanding at reset must
//!   not be answered afterwards (the unit resets the port with it).
//! - `start` with `start_range`, `start_heap` (a range key in the heap
//!   window; ignored for a location key), `start_a` (range: the address, bits 55..0
//!   used, so a tagged pointer may be given; location: the node address,
//!   bits 55..5 used), `start_node` (51: the first node to read, `root`'s
//!   for a range walk and `start_a`'s for a location fetch; the unit makes
//!   this select per miss slot, before it picks the slot, so the pick does
//!   not run on into a 51-bit select), `root` (a node address, bits 55..5:
//!   only its zero test is used here), `heap_mask`, `heap_dir`
//!   (64 each: the window CSRs), `limit` (16), `structure` (0 list,
//!   1 bst; ignored unless both are built): taken only while idle (`busy`
//!   low); latched (the key registers follow them in every idle cycle in
//!   which `offer` is high). `offer`: a start may come this cycle (the unit
//!   raises it from registers, early; `start` implies `offer`).
//! - `req_valid`, `req_node`: the read this walker wants (from registers).
//!   `grant`: the unit's port arbiter passed it to the port this cycle.
//! - `resp_valid` (this walker's response, routed by id by the unit) with
//!   `resp_error` and the sector's words `resp_base`, `resp_size_tag`,
//!   `resp_link0`, `resp_link1`: registered, together with the key compare
//!   made on them as they arrive (`base <= a < base + size`, and each
//!   link's zero test), and decided the next cycle (`visit` is high in
//!   that cycle: one node visited).
//! - `in_flight`: reading (a merge candidate unless `cancelled`); `busy`:
//!   not idle; `done`: finished, holding `result` (RES_*), and for
//!   RES_FOUND `location`, `base`, `size`, `tag`, until `taken`.
//! - `taken`: the unit took the result; idle at the edge.
//! - `cancel`: an INVALIDATE or FLUSH met this walk (no fill, no merges):
//!   sets `cancelled` until the next start.
//! - `key_range`, `key`: the key being served (range: `a`, bits 55..0;
//!   location: the node address, bits 55..5), for the unit's merge match.
//!
//! # Timing
//! Started in cycle t, the first read is asked for in t+1; a read granted in
//! cycle g with its response in cycle r >= g+1 is compared in r+1, and the
//! next read is asked for in r+2 (or `done` in r+2). A walk of n nodes at
//! port latency L with the port free takes n (L + 2) + 1 cycles to `done`.
use crate::in_bounds::InBounds;
use crate::state_reg::StateReg;
use crate::mlu::{RES_FOUND, RES_LIMIT, RES_MEM_ERROR, RES_NOT_FOUND};
use rust_hdl::prelude::*;
use sim::config::Structure;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum WalkerState {
    Idle,
    /// A heap lookup: the directory node's address is formed into `node_r`.
    HeapNode,
    /// Ask the port for node `node_r`.
    Issue,
    /// The read of `node_r` is outstanding.
    Wait,
    /// The sector arrived last cycle: compare it.
    Decide,
    /// Finished: `result_r` and the node registers hold the result.
    Done,
}

#[derive(LogicBlock)]
pub struct Walker {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub start: Signal<In, Bit>,
    pub offer: Signal<In, Bit>,
    pub start_range: Signal<In, Bit>,
    pub start_heap: Signal<In, Bit>,
    pub start_a: Signal<In, Bits<64>>,
    pub start_node: Signal<In, Bits<51>>,
    pub root: Signal<In, Bits<64>>,
    pub limit: Signal<In, Bits<16>>,
    pub structure: Signal<In, Bit>,
    pub heap_mask: Signal<In, Bits<64>>,
    pub heap_dir: Signal<In, Bits<64>>,
    pub grant: Signal<In, Bit>,
    pub resp_valid: Signal<In, Bit>,
    pub resp_error: Signal<In, Bit>,
    pub resp_base: Signal<In, Bits<64>>,
    pub resp_size_tag: Signal<In, Bits<64>>,
    pub resp_link0: Signal<In, Bits<64>>,
    pub resp_link1: Signal<In, Bits<64>>,
    pub taken: Signal<In, Bit>,
    pub cancel: Signal<In, Bit>,
    pub req_valid: Signal<Out, Bit>,
    pub req_node: Signal<Out, Bits<51>>,
    pub busy: Signal<Out, Bit>,
    pub in_flight: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub visit: Signal<Out, Bit>,
    pub result: Signal<Out, Bits<2>>,
    pub location: Signal<Out, Bits<51>>,
    pub base: Signal<Out, Bits<56>>,
    pub size: Signal<Out, Bits<56>>,
    pub tag: Signal<Out, Bits<8>>,
    pub cancelled: Signal<Out, Bit>,
    pub key_range: Signal<Out, Bit>,
    pub key: Signal<Out, Bits<64>>,
    state: StateReg<WalkerState>,
    range_r: DFF<Bit>,
    /// The walk is a heap lookup (a range key in the heap window).
    heap_r: DFF<Bit>,
    /// The key: range `a & ADDR_MASK`, location `loc & LOC_MASK`.
    a_r: DFF<Bits<64>>,
    bst_r: DFF<Bit>,
    // The step limit as a count-down (the model counts `steps` up and
    // compares `steps >= limit` after each node): `left_r` = limit - nodes
    // read before this one, and `last_r` = (`left_r` == 1), this node is the
    // last the limit allows. Decide tests one bit, not an increment and a
    // 16-bit compare.
    left_r: DFF<Bits<16>>,
    last_r: DFF<Bit>,
    node_r: DFF<Bits<51>>,
    cancelled_r: DFF<Bit>,
    /// `busy`, `done` and `in_flight` as flip-flops of their own, loaded
    /// from the next state: they start the unit's longest paths (the
    /// first-idle-walker chain into the miss slots' pick, the fill into the
    /// MLB's write enables, the merge match), which a decode of the 3-bit
    /// state lengthened (ASAP7: 504 ps at 8 entries, 517 ps at 16, against
    /// 500).
    busy_r: DFF<Bit>,
    done_r: DFF<Bit>,
    in_flight_r: DFF<Bit>,
    result_r: DFF<Bits<2>>,
    // The sector of the node read last (what Decide compares, and the
    // result's metadata).
    base_r: DFF<Bits<64>>,
    size_r: DFF<Bits<64>>,
    tag_r: DFF<Bits<8>>,
    // Links as node addresses (bits 55..5 of the words read).
    link0_r: DFF<Bits<51>>,
    link1_r: DFF<Bits<51>>,
    // Decide's terms, computed as the sector arrives and registered with it:
    // `ge_r` (`a >= base`), `ok_r` (`base <= a < base + size`), and whether
    // each link is 0.
    ge_r: DFF<Bit>,
    ok_r: DFF<Bit>,
    link0_zero_r: DFF<Bit>,
    link1_zero_r: DFF<Bit>,
    // `base <= a < base + size`: the whole-access test with w = 1.
    node_cmp: InBounds<64>,
    found: Signal<Local, Bit>,
    link: Signal<Local, Bits<51>>,
    link_zero: Signal<Local, Bit>,
    is_bst: Signal<Local, Bit>,
    root_m: Signal<Local, Bits<64>>,
    /// A range key in the heap window (`start_range & start_heap`).
    start_in_heap: Signal<Local, Bit>,
    start_a56: Signal<Local, Bits<64>>,
    /// The directory node of the key register's granule (its location is
    /// bits 55..5).
    heap_node: Signal<Local, Bits<64>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    two16: Constant<Bits<16>>,
    zero64: Constant<Bits<64>>,
    one64: Constant<Bits<64>>,
    addr_mask: Constant<Bits<64>>,
    loc_mask: Constant<Bits<64>>,
    has_list: Constant<Bit>,
    has_bst: Constant<Bit>,
    res_found: Constant<Bits<2>>,
    res_not_found: Constant<Bits<2>>,
    res_limit: Constant<Bits<2>>,
    res_mem_error: Constant<Bits<2>>,
}

impl Walker {
    /// A walker of one structure (`Sol` has no walker: built as a bst).
    pub fn new(structure: Structure) -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            offer: Default::default(),
            start_range: Default::default(),
            start_heap: Default::default(),
            start_a: Default::default(),
            start_node: Default::default(),
            root: Default::default(),
            limit: Default::default(),
            structure: Default::default(),
            heap_mask: Default::default(),
            heap_dir: Default::default(),
            grant: Default::default(),
            resp_valid: Default::default(),
            resp_error: Default::default(),
            resp_base: Default::default(),
            resp_size_tag: Default::default(),
            resp_link0: Default::default(),
            resp_link1: Default::default(),
            taken: Default::default(),
            cancel: Default::default(),
            req_valid: Default::default(),
            req_node: Default::default(),
            busy: Default::default(),
            in_flight: Default::default(),
            done: Default::default(),
            visit: Default::default(),
            result: Default::default(),
            location: Default::default(),
            base: Default::default(),
            size: Default::default(),
            tag: Default::default(),
            cancelled: Default::default(),
            key_range: Default::default(),
            key: Default::default(),
            state: Default::default(),
            range_r: Default::default(),
            heap_r: Default::default(),
            a_r: Default::default(),
            bst_r: Default::default(),
            left_r: Default::default(),
            last_r: Default::default(),
            node_r: Default::default(),
            cancelled_r: Default::default(),
            busy_r: Default::default(),
            done_r: Default::default(),
            in_flight_r: Default::default(),
            result_r: Default::default(),
            base_r: Default::default(),
            size_r: Default::default(),
            tag_r: Default::default(),
            link0_r: Default::default(),
            link1_r: Default::default(),
            ge_r: Default::default(),
            ok_r: Default::default(),
            link0_zero_r: Default::default(),
            link1_zero_r: Default::default(),
            node_cmp: Default::default(),
            found: Default::default(),
            link: Default::default(),
            link_zero: Default::default(),
            is_bst: Default::default(),
            root_m: Default::default(),
            start_in_heap: Default::default(),
            start_a56: Default::default(),
            heap_node: Default::default(),
            zero16: Constant::new(0_u64.into()),
            one16: Constant::new(1_u64.into()),
            two16: Constant::new(2_u64.into()),
            zero64: Constant::new(0_u64.into()),
            one64: Constant::new(1_u64.into()),
            addr_mask: Constant::new(sim::pointer::ADDR_MASK.into()),
            loc_mask: Constant::new(sim::mlb::LOC_MASK.into()),
            has_list: Constant::new(structure == Structure::List),
            has_bst: Constant::new(structure != Structure::List),
            res_found: Constant::new(RES_FOUND.into()),
            res_not_found: Constant::new(RES_NOT_FOUND.into()),
            res_limit: Constant::new(RES_LIMIT.into()),
            res_mem_error: Constant::new(RES_MEM_ERROR.into()),
        }
    }
}

impl Logic for Walker {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, range_r, heap_r, a_r, bst_r, left_r, last_r, node_r, cancelled_r, result_r, base_r, size_r, tag_r,
            link0_r, link1_r, ge_r, ok_r, link0_zero_r, link1_zero_r, busy_r, done_r, in_flight_r
        );
        self.is_bst.next = self.has_bst.val() & (!self.has_list.val() | self.structure.val());
        // `base <= a < base + size` (64-bit base word: a base above 2^56 is
        // never <= a), two carry chains side by side (InBounds), on the
        // port's words as they arrive: registered with the sector (`ge_r`,
        // `ok_r`), so Decide starts from one bit and not from two 64-bit
        // carry chains.
        self.node_cmp.a.next = self.a_r.q.val();
        self.node_cmp.base.next = self.resp_base.val();
        self.node_cmp.size.next = self.resp_size_tag.val() & self.addr_mask.val();
        self.node_cmp.w.next = self.one64.val();
        self.found.next = !self.range_r.q.val() | self.ok_r.q.val();
        self.root_m.next = self.root.val() & self.loc_mask.val();
        self.start_a56.next = self.start_a.val() & self.addr_mask.val();
        self.start_in_heap.next = self.start_range.val() & self.start_heap.val();
        self.heap_node.next = self.heap_dir.val() | (self.a_r.q.val() & self.heap_mask.val());
        self.link.next = self.link0_r.q.val();
        self.link_zero.next = self.link0_zero_r.q.val();
        if self.bst_r.q.val() & self.ge_r.q.val() {
            self.link.next = self.link1_r.q.val();
            self.link_zero.next = self.link1_zero_r.q.val();
        }
        // Outputs from registers.
        self.req_valid.next = self.state.q.val() == WalkerState::Issue;
        self.req_node.next = self.node_r.q.val();
        self.busy.next = self.busy_r.q.val();
        self.in_flight.next = self.in_flight_r.q.val();
        self.done.next = self.done_r.q.val();
        self.visit.next = self.state.q.val() == WalkerState::Decide;
        self.result.next = self.result_r.q.val();
        self.location.next = self.node_r.q.val();
        self.base.next = self.base_r.q.val().get_bits::<56>(0);
        self.size.next = self.size_r.q.val().get_bits::<56>(0);
        self.tag.next = self.tag_r.q.val();
        self.cancelled.next = self.cancelled_r.q.val();
        self.key_range.next = self.range_r.q.val();
        self.key.next = self.a_r.q.val();
        if self.cancel.val() & (self.state.q.val() != WalkerState::Idle) {
            self.cancelled_r.d.next = true;
        }
        match self.state.q.val() {
            WalkerState::Idle => {
                // The key and first node are loaded in every idle cycle with
                // `offer` (an idle walker's registers are not looked at), so
                // `start`, the unit's late miss decision, drives the state
                // alone and not the select of some 130 register bits. Without
                // `offer` they hold: no toggling while nothing could start.
                self.cancelled_r.d.next = false;
                if self.offer.val() {
                    self.range_r.d.next = self.start_range.val();
                    self.heap_r.d.next = self.start_in_heap.val();
                    self.bst_r.d.next = self.is_bst.val();
                    self.left_r.d.next = self.limit.val();
                    self.last_r.d.next = self.limit.val() == self.one16.val();
                    self.node_r.d.next = self.start_node.val();
                    if self.start_range.val() {
                        self.a_r.d.next = self.start_a56.val();
                        self.result_r.d.next = self.res_found.val();
                        if self.start_in_heap.val() {
                            self.result_r.d.next = self.res_found.val();
                        } else if self.root_m.val() == self.zero64.val() {
                            self.result_r.d.next = self.res_not_found.val();
                        } else if self.limit.val() == self.zero16.val() {
                            self.result_r.d.next = self.res_limit.val();
                        }
                    } else {
                        self.a_r.d.next = self.start_a.val() & self.loc_mask.val();
                    }
                }
                if self.start.val() {
                    self.state.d.next = WalkerState::Issue;
                    if self.start_in_heap.val() {
                        self.state.d.next = WalkerState::HeapNode;
                    }
                    if self.start_range.val()
                        & !self.start_in_heap.val()
                        & ((self.root_m.val() == self.zero64.val()) | (self.limit.val() == self.zero16.val()))
                    {
                        self.state.d.next = WalkerState::Done;
                    }
                }
            }
            WalkerState::HeapNode => {
                self.node_r.d.next = self.heap_node.val().get_bits::<51>(5);
                self.state.d.next = WalkerState::Issue;
            }
            WalkerState::Issue => {
                if self.grant.val() {
                    self.state.d.next = WalkerState::Wait;
                }
            }
            WalkerState::Wait => {
                if self.resp_valid.val() {
                    self.result_r.d.next = self.res_found.val();
                    if self.resp_error.val() {
                        self.result_r.d.next = self.res_mem_error.val();
                    }
                    self.base_r.d.next = self.resp_base.val();
                    self.size_r.d.next = self.resp_size_tag.val() & self.addr_mask.val();
                    self.tag_r.d.next = self.resp_size_tag.val().get_bits::<8>(56);
                    self.link0_r.d.next = self.resp_link0.val().get_bits::<51>(5);
                    self.link1_r.d.next = self.resp_link1.val().get_bits::<51>(5);
                    self.ge_r.d.next = self.node_cmp.ge.val();
                    self.ok_r.d.next = self.node_cmp.ok.val();
                    self.link0_zero_r.d.next = (self.resp_link0.val() & self.loc_mask.val()) == self.zero64.val();
                    self.link1_zero_r.d.next = (self.resp_link1.val() & self.loc_mask.val()) == self.zero64.val();
                    self.state.d.next = WalkerState::Decide;
                }
            }
            WalkerState::Decide => {
                self.left_r.d.next = self.left_r.q.val() - self.one16.val();
                self.last_r.d.next = self.left_r.q.val() == self.two16.val();
                self.state.d.next = WalkerState::Done;
                if self.heap_r.q.val() {
                    // One directory node: its link0 is the chunk's location.
                    if self.result_r.q.val() == self.res_found.val() {
                        self.node_r.d.next = self.link0_r.q.val();
                        if self.link0_zero_r.q.val() {
                            self.result_r.d.next = self.res_not_found.val();
                        }
                    }
                } else if (self.result_r.q.val() == self.res_found.val()) & !self.found.val() {
                    if self.link_zero.val() {
                        self.result_r.d.next = self.res_not_found.val();
                    } else if self.last_r.q.val() {
                        self.result_r.d.next = self.res_limit.val();
                    } else {
                        self.node_r.d.next = self.link.val();
                        self.state.d.next = WalkerState::Issue;
                    }
                }
            }
            WalkerState::Done => {
                if self.taken.val() {
                    self.state.d.next = WalkerState::Idle;
                }
            }
            _ => {
                self.state.d.next = WalkerState::Idle;
            }
        }
        if self.reset.val() {
            self.state.d.next = WalkerState::Idle;
            self.cancelled_r.d.next = false;
        }
        self.busy_r.d.next = self.state.d.val() != WalkerState::Idle;
        self.done_r.d.next = self.state.d.val() == WalkerState::Done;
        self.in_flight_r.d.next = (self.state.d.val() == WalkerState::HeapNode)
            | (self.state.d.val() == WalkerState::Issue)
            | (self.state.d.val() == WalkerState::Wait)
            | (self.state.d.val() == WalkerState::Decide);
    }
}
