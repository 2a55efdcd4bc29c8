//! `EventCounter`: a 32-bit wrapping event counter that adds 0..15 a cycle,
//! exact in every cycle, with no 32-bit carry chain in any one cycle.
//!
//! Why split: a plain `count + event` was the unit's longest path in ASAP7
//! (ABC maps the increment as a ripple of OR3 cells: 636 ps from the event
//! register, against a 500 ps clock). Here the count is a 12-bit low part
//! and a 20-bit high part. The low part adds the event; when that carries
//! out, the high part takes `hi_p1`, a register that holds `hi + 1`
//! computed the cycle before. So no path is longer than a 12-bit add plus a
//! 20-bit select, or a 20-bit increment between registers. (At 16/16 the
//! low add and the select still took 519 ps.)
//!
//! `hi_p1` is stale for the one cycle after the high part changes (it still
//! holds the old `hi + 1`). That cycle cannot carry out again: after a
//! carry the low part holds at most 14, and adding at most 15 cannot reach
//! 2^12. So `count` is exact in every cycle.
//!
//! # Ports (one clock, rising edge)
//! - `amount` (0..15): this cycle's events. It is registered and counted in
//!   the next cycle, so `count` in cycle t is the sum of the events of cycles
//!   0..t-2 (mod 2^32).
//! - `clear`: synchronous; `count` is 0 two cycles on, and the event of the
//!   clearing cycle is dropped.
//! - `count`: from registers.
//!
//! The golden model is a `u32` with `wrapping_add` (`sim::mlu_unit`
//! `UnitCounters`); testbench/tests/counter.rs compares the two across both
//! carries.
use crate::canary::widen::Widen;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct EventCounter {
    pub clock: Signal<In, Clock>,
    pub clear: Signal<In, Bit>,
    pub amount: Signal<In, Bits<4>>,
    pub count: Signal<Out, Bits<32>>,
    /// The registered event. Public, like the parts below, so a test can
    /// preset the counter near a carry.
    pub amount_r: DFF<Bits<4>>,
    /// The count's low (11..0) and high (31..12) parts, and `hi + 1` as of
    /// last cycle.
    pub lo: DFF<Bits<12>>,
    pub hi: DFF<Bits<20>>,
    pub hi_p1: DFF<Bits<20>>,
    /// `lo + amount_r` with its carry out in bit 12.
    sum: Signal<Local, Bits<13>>,
    // Zero extensions (`{0, x}`: a `bit_cast` is emitted as a mask that
    // Verilator flags as a width mismatch).
    lo_w: Widen<13, 12>,
    amount_w: Widen<13, 4>,
    count_lo: Widen<32, 12>,
    count_hi: Widen<32, 20>,
    zero4: Constant<Bits<4>>,
    zero12: Constant<Bits<12>>,
    zero20: Constant<Bits<20>>,
    one20: Constant<Bits<20>>,
}

impl Default for EventCounter {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            clear: Default::default(),
            amount: Default::default(),
            count: Default::default(),
            amount_r: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            hi_p1: Default::default(),
            sum: Default::default(),
            lo_w: Default::default(),
            amount_w: Default::default(),
            count_lo: Default::default(),
            count_hi: Default::default(),
            zero4: Constant::new(0_u64.into()),
            zero12: Constant::new(0_u64.into()),
            zero20: Constant::new(0_u64.into()),
            one20: Constant::new(1_u64.into()),
        }
    }
}

impl Logic for EventCounter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, amount_r, lo, hi, hi_p1);
        self.amount_r.d.next = self.amount.val();
        self.lo_w.a.next = self.lo.q.val();
        self.amount_w.a.next = self.amount_r.q.val();
        self.sum.next = self.lo_w.y.val() + self.amount_w.y.val();
        self.lo.d.next = self.sum.val().get_bits::<12>(0);
        if self.sum.val().get_bit(12) {
            self.hi.d.next = self.hi_p1.q.val();
        }
        self.hi_p1.d.next = self.hi.q.val() + self.one20.val();
        if self.clear.val() {
            self.amount_r.d.next = self.zero4.val();
            self.lo.d.next = self.zero12.val();
            self.hi.d.next = self.zero20.val();
            self.hi_p1.d.next = self.one20.val();
        }
        self.count_lo.a.next = self.lo.q.val();
        self.count_hi.a.next = self.hi.q.val();
        self.count.next = (self.count_hi.y.val() << 12_u64) | self.count_lo.y.val();
    }
}
