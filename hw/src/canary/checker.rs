//! `Checker`: the always-on background checker's live-chunk list and sweep
//! cursor (golden model: `sim::canary::checker::Checker`, same list order,
//! same cursor, same removal moves, so the RTL checks chunks in exactly the
//! model's order). The canary reads of a check are done by the allocator unit
//! (`alloc_unit.rs`), which asks this block for the next entry.
//!
//! The list is compressed: an entry is a chunk index from the heap base in
//! units of the smallest class ([`IDX_BITS`] bits) instead of a pointer.
//! Storage: `list` RAM (position -> index) and `pos` RAM (index -> position),
//! the model's Vec and HashMap; `len` and `cursor` registers.
//!
//! Rate: the checker earns `rate / 256` checks per cycle (an 8-bit
//! accumulator; its carry adds one to `pending`, saturating at 255). With
//! the list empty `pending` is cleared (the model drops its credit too).
//! `due` = a check is pending and the list is not empty.
//!
//! # Ports (sampled at the rising edge of `clock`)
//! - `reset` (synchronous): empty list, cursor 0, no credit.
//! - `op` with `idx`, accepted while `busy` is low: [`OP_INSERT`] appends
//!   `idx` (1 cycle); [`OP_REMOVE`] removes live entry `idx` with the model's
//!   moves (5-6 cycles); [`OP_TAKE`] returns the entry under the cursor in
//!   `out_idx` and advances the cursor, wrapping (2 cycles; takes one
//!   pending check). `done` pulses in the cycle after an operation completes.
//!   Removing an index that is not in the list is not allowed (the unit only
//!   removes chunks it frees).
use rust_hdl::prelude::*;
use crate::state_reg::StateReg;

/// Bits of a live-list entry: 128 chunk indices (4 KiB heap / 32 B).
pub const IDX_BITS: usize = 7;
pub const OP_NONE: u64 = 0;
pub const OP_INSERT: u64 = 1;
pub const OP_REMOVE: u64 = 2;
pub const OP_TAKE: u64 = 3;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum CheckerState {
    Idle,
    /// pos[idx] is being read.
    RemPos,
    /// list[from] is being read; move it to `to`.
    RemMove1,
    /// Present list[len-1] for the second move.
    RemRead2,
    RemMove2,
    RemFin,
    TakeRead,
}

#[derive(LogicBlock)]
pub struct Checker {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub op: Signal<In, Bits<2>>,
    pub idx: Signal<In, Bits<7>>,
    pub rate: Signal<In, Bits<8>>,
    pub busy: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub out_idx: Signal<Out, Bits<7>>,
    pub due: Signal<Out, Bit>,
    list: RAM<Bits<7>, 7>,
    pos: RAM<Bits<8>, 7>,
    state: StateReg<CheckerState>,
    len_r: DFF<Bits<8>>,
    cur_r: DFF<Bits<8>>,
    from_r: DFF<Bits<8>>,
    to_r: DFF<Bits<8>>,
    two_r: DFF<Bit>,
    out_r: DFF<Bits<7>>,
    done_r: DFF<Bit>,
    acc_r: DFF<Bits<8>>,
    pending_r: DFF<Bits<8>>,
    sum8: Signal<Local, Bits<8>>,
    carry: Signal<Local, Bit>,
    j8: Signal<Local, Bits<8>>,
    e7: Signal<Local, Bits<7>>,
    last8: Signal<Local, Bits<8>>,
    curm1: Signal<Local, Bits<8>>,
    start8: Signal<Local, Bits<8>>,
    took: Signal<Local, Bit>,
    op_ins: Constant<Bits<2>>,
    op_rem: Constant<Bits<2>>,
    op_take: Constant<Bits<2>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    max8: Constant<Bits<8>>,
}

impl Default for Checker {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            op: Default::default(),
            idx: Default::default(),
            rate: Default::default(),
            busy: Default::default(),
            done: Default::default(),
            out_idx: Default::default(),
            due: Default::default(),
            list: Default::default(),
            pos: Default::default(),
            state: Default::default(),
            len_r: Default::default(),
            cur_r: Default::default(),
            from_r: Default::default(),
            to_r: Default::default(),
            two_r: Default::default(),
            out_r: Default::default(),
            done_r: Default::default(),
            acc_r: Default::default(),
            pending_r: Default::default(),
            sum8: Default::default(),
            carry: Default::default(),
            j8: Default::default(),
            e7: Default::default(),
            last8: Default::default(),
            curm1: Default::default(),
            start8: Default::default(),
            took: Default::default(),
            op_ins: Constant::new(OP_INSERT.into()),
            op_rem: Constant::new(OP_REMOVE.into()),
            op_take: Constant::new(OP_TAKE.into()),
            zero8: Constant::new(0_u64.into()),
            one8: Constant::new(1_u64.into()),
            max8: Constant::new(255_u64.into()),
        }
    }
}

impl Logic for Checker {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, len_r, cur_r, from_r, to_r, two_r, out_r, done_r, acc_r, pending_r);
        self.state.clock.next = self.clock.val();
        self.state.d.next = self.state.q.val();
        self.list.read_clock.next = self.clock.val();
        self.list.write_clock.next = self.clock.val();
        self.pos.read_clock.next = self.clock.val();
        self.pos.write_clock.next = self.clock.val();
        self.list.write_enable.next = false;
        self.pos.write_enable.next = false;
        self.list.write_address.next = self.idx.val();
        self.list.write_data.next = self.idx.val();
        self.pos.write_address.next = self.idx.val();
        self.pos.write_data.next = self.len_r.q.val();
        self.list.read_address.next = self.from_r.q.val().get_bits::<7>(0);
        self.pos.read_address.next = self.idx.val();
        self.done_r.d.next = false;
        self.busy.next = self.state.q.val() != CheckerState::Idle;
        self.done.next = self.done_r.q.val();
        self.out_idx.next = self.out_r.q.val();
        self.due.next = (self.pending_r.q.val() != self.zero8.val()) & (self.len_r.q.val() != self.zero8.val());
        self.j8.next = self.pos.read_data.val();
        self.e7.next = self.list.read_data.val();
        self.last8.next = self.len_r.q.val() - self.one8.val();
        self.curm1.next = self.cur_r.q.val() - self.one8.val();
        // The model's take: a cursor at or past the end wraps to 0 first.
        self.start8.next = self.cur_r.q.val();
        if self.cur_r.q.val() >= self.len_r.q.val() {
            self.start8.next = self.zero8.val();
        }
        self.took.next = false;
        match self.state.q.val() {
            CheckerState::Idle => {
                if self.op.val() == self.op_ins.val() {
                    self.list.write_enable.next = true;
                    self.list.write_address.next = self.len_r.q.val().get_bits::<7>(0);
                    self.pos.write_enable.next = true;
                    self.pos.write_data.next = self.len_r.q.val();
                    self.len_r.d.next = self.len_r.q.val() + self.one8.val();
                    self.done_r.d.next = true;
                } else if self.op.val() == self.op_rem.val() {
                    self.state.d.next = CheckerState::RemPos;
                } else if self.op.val() == self.op_take.val() {
                    self.list.read_address.next = self.start8.val().get_bits::<7>(0);
                    self.cur_r.d.next = self.start8.val() + self.one8.val();
                    self.took.next = true;
                    self.state.d.next = CheckerState::TakeRead;
                }
            }
            CheckerState::RemPos => {
                // j = pos[idx]. Unvisited hole (j >= cursor): fill from the
                // last entry. Visited hole: fill from the last visited entry
                // (cursor - 1), then that slot from the last entry.
                self.to_r.d.next = self.j8.val();
                if self.j8.val() >= self.cur_r.q.val() {
                    self.from_r.d.next = self.last8.val();
                    self.list.read_address.next = self.last8.val().get_bits::<7>(0);
                    self.two_r.d.next = false;
                } else {
                    self.from_r.d.next = self.curm1.val();
                    self.list.read_address.next = self.curm1.val().get_bits::<7>(0);
                    self.two_r.d.next = true;
                }
                self.state.d.next = CheckerState::RemMove1;
            }
            CheckerState::RemMove1 => {
                if self.from_r.q.val() != self.to_r.q.val() {
                    self.list.write_enable.next = true;
                    self.list.write_address.next = self.to_r.q.val().get_bits::<7>(0);
                    self.list.write_data.next = self.e7.val();
                    self.pos.write_enable.next = true;
                    self.pos.write_address.next = self.e7.val();
                    self.pos.write_data.next = self.to_r.q.val();
                }
                if self.two_r.q.val() {
                    self.state.d.next = CheckerState::RemRead2;
                } else {
                    self.state.d.next = CheckerState::RemFin;
                }
            }
            CheckerState::RemRead2 => {
                // Second move: last -> cursor - 1 (read after the first write).
                self.list.read_address.next = self.last8.val().get_bits::<7>(0);
                self.to_r.d.next = self.curm1.val();
                self.from_r.d.next = self.last8.val();
                self.state.d.next = CheckerState::RemMove2;
            }
            CheckerState::RemMove2 => {
                if self.from_r.q.val() != self.to_r.q.val() {
                    self.list.write_enable.next = true;
                    self.list.write_address.next = self.to_r.q.val().get_bits::<7>(0);
                    self.list.write_data.next = self.e7.val();
                    self.pos.write_enable.next = true;
                    self.pos.write_address.next = self.e7.val();
                    self.pos.write_data.next = self.to_r.q.val();
                }
                self.cur_r.d.next = self.curm1.val();
                self.state.d.next = CheckerState::RemFin;
            }
            CheckerState::RemFin => {
                // Pop, then keep the cursor within the list.
                self.len_r.d.next = self.last8.val();
                if self.cur_r.q.val() > self.last8.val() {
                    self.cur_r.d.next = self.last8.val();
                }
                self.done_r.d.next = true;
                self.state.d.next = CheckerState::Idle;
            }
            CheckerState::TakeRead => {
                self.out_r.d.next = self.e7.val();
                self.done_r.d.next = true;
                self.state.d.next = CheckerState::Idle;
            }
            _ => {
                self.state.d.next = CheckerState::Idle;
            }
        }
        // Credit: rate/256 checks per cycle.
        // The carry out of acc + rate, without widening: the sum wrapped.
        self.sum8.next = self.acc_r.q.val() + self.rate.val();
        self.carry.next = self.sum8.val() < self.acc_r.q.val();
        self.acc_r.d.next = self.sum8.val();
        if self.carry.val() & !self.took.val() & (self.pending_r.q.val() != self.max8.val()) {
            self.pending_r.d.next = self.pending_r.q.val() + self.one8.val();
        }
        if !self.carry.val() & self.took.val() & (self.pending_r.q.val() != self.zero8.val()) {
            self.pending_r.d.next = self.pending_r.q.val() - self.one8.val();
        }
        if self.len_r.q.val() == self.zero8.val() {
            self.pending_r.d.next = self.zero8.val();
        }
        if self.reset.val() {
            self.state.d.next = CheckerState::Idle;
            self.len_r.d.next = self.zero8.val();
            self.cur_r.d.next = self.zero8.val();
            self.acc_r.d.next = self.zero8.val();
            self.pending_r.d.next = self.zero8.val();
            self.done_r.d.next = false;
        }
    }
}
