//! `InBounds<W>`: the whole-access bounds test `base <= a && a + w <= base +
//! size` on W-bit operands, exact for every value (nothing wraps, so `base +
//! size` may exceed 2^W). The golden model is `sim::memcheck::in_bounds`.
//! Used by every MEMCHECK lane ([`crate::memcheck::Memcheck`], W = 56 and
//! 32) and by the walker's node compare (W = 64, w = 1: `base <= a < base +
//! size`).
//!
//! Why not `a - base <= size && w <= size - (a - base)`: that is three
//! carry chains in series (subtract, subtract, compare), the longest path of
//! the MLU unit's lane checks. Here two chains run side by side: `ge = a >=
//! base`, and the sign of `base + size - a - w`, which is bit W+1 of
//! `T = base + size + !a + !w + 2 = base + size - a - w + 2^(W+1)` (W+2 bits
//! hold T). T is summed in W bits by two carry-save levels, `(base, size,
//! !a) -> (s1, c1)` and `(s1, c1 << 1, !w) -> (s2, c2)`, whose dropped top
//! carries are `c1[W-1]` and `c2[W-1]`, and the last `s2 + (c2 << 1) + 2`
//! carries out of W bits exactly when `s2 >= !r` with `r = (c2 << 1) | 1`.
//! So `T >= 2^(W+1)` is the majority of those three bits: one comparator
//! (one carry chain) after two full-adder rows. Checked exhaustively at
//! W = 5 (every a, base, size, w) and against the model at W = 56 in
//! testbench/tests/memcheck.rs.
//!
//! # Ports (combinational)
//! - `a`, `base`, `size`, `w` (W bits): the access `[a, a + w)` and the
//!   allocation `[base, base + size)`.
//! - `ge`: `a >= base`. `ok`: the access lies inside the allocation.
//! - `carry1`, `carry2`, `carry3`: the three carries above, so that `ok =
//!   ge & majority(carry1, carry2, carry3)`. A pipeline that registers
//!   the test (the MLU unit's lane checks) registers these and ends the
//!   test after its register, one majority gate later.
//! - `carry3` in halves, for such a pipeline: `c3_hi_gt`, `c3_hi_eq` (the
//!   comparator's upper W/2 bits compare greater, equal) and `c3_lo_ge` (the
//!   lower W/2 bits compare greater or equal), so `carry3 = c3_hi_gt |
//!   (c3_hi_eq & c3_lo_ge)`: each half is one level of the comparator's
//!   prefix tree shorter (the whole compare behind the two full-adder rows
//!   was the 8-entry MLU unit's longest path).
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct InBounds<const W: usize> {
    pub a: Signal<In, Bits<W>>,
    pub base: Signal<In, Bits<W>>,
    pub size: Signal<In, Bits<W>>,
    pub w: Signal<In, Bits<W>>,
    pub ge: Signal<Out, Bit>,
    pub ok: Signal<Out, Bit>,
    s1: Signal<Local, Bits<W>>,
    c1: Signal<Local, Bits<W>>,
    c1s: Signal<Local, Bits<W>>,
    s2: Signal<Local, Bits<W>>,
    c2: Signal<Local, Bits<W>>,
    not_r: Signal<Local, Bits<W>>,
    pub carry1: Signal<Out, Bit>,
    pub carry2: Signal<Out, Bit>,
    pub carry3: Signal<Out, Bit>,
    pub c3_hi_gt: Signal<Out, Bit>,
    pub c3_hi_eq: Signal<Out, Bit>,
    pub c3_lo_ge: Signal<Out, Bit>,
    one: Constant<Bits<W>>,
    lo_half: Constant<Bits<W>>,
    hi_half: Constant<Bits<W>>,
    top: Constant<Bits<W>>,
    zero: Constant<Bits<W>>,
}

impl<const W: usize> Default for InBounds<W> {
    fn default() -> Self {
        assert!((6..=64).contains(&W), "InBounds<{W}>: 6 <= W <= 64");
        Self {
            a: Default::default(),
            base: Default::default(),
            size: Default::default(),
            w: Default::default(),
            ge: Default::default(),
            ok: Default::default(),
            s1: Default::default(),
            c1: Default::default(),
            c1s: Default::default(),
            s2: Default::default(),
            c2: Default::default(),
            not_r: Default::default(),
            carry1: Default::default(),
            carry2: Default::default(),
            carry3: Default::default(),
            c3_hi_gt: Default::default(),
            c3_hi_eq: Default::default(),
            c3_lo_ge: Default::default(),
            one: Constant::new(1_u64.into()),
            lo_half: Constant::new(((1_u64 << (W / 2)) - 1).into()),
            hi_half: Constant::new(((u64::MAX >> (64 - W)) & !((1_u64 << (W / 2)) - 1)).into()),
            top: Constant::new((1_u64 << (W - 1)).into()),
            zero: Constant::new(0_u64.into()),
        }
    }
}

impl<const W: usize> Logic for InBounds<W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.ge.next = self.a.val() >= self.base.val();
        // (base, size, !a) -> (s1, c1).
        self.s1.next = self.base.val() ^ self.size.val() ^ !self.a.val();
        self.c1.next = (self.base.val() & self.size.val()) | (self.base.val() & !self.a.val()) | (self.size.val() & !self.a.val());
        self.c1s.next = self.c1.val() << 1_u64;
        // (s1, c1 << 1, !w) -> (s2, c2).
        self.s2.next = self.s1.val() ^ self.c1s.val() ^ !self.w.val();
        self.c2.next = (self.s1.val() & self.c1s.val()) | (self.s1.val() & !self.w.val()) | (self.c1s.val() & !self.w.val());
        self.not_r.next = !((self.c2.val() << 1_u64) | self.one.val());
        // The three carries out of W bits; T >= 2^(W+1) when two are set.
        self.carry1.next = (self.c1.val() & self.top.val()) != self.zero.val();
        self.carry2.next = (self.c2.val() & self.top.val()) != self.zero.val();
        self.carry3.next = self.s2.val() >= self.not_r.val();
        self.c3_hi_gt.next = (self.s2.val() & self.hi_half.val()) > (self.not_r.val() & self.hi_half.val());
        self.c3_hi_eq.next = (self.s2.val() & self.hi_half.val()) == (self.not_r.val() & self.hi_half.val());
        self.c3_lo_ge.next = (self.s2.val() & self.lo_half.val()) >= (self.not_r.val() & self.lo_half.val());
        self.ok.next = self.ge.val()
            & ((self.carry1.val() & self.carry2.val()) | (self.carry1.val() & self.carry3.val()) | (self.carry2.val() & self.carry3.val()));
    }
}
