//! `Arbiter`: round-robin arbiter of the canary allocator unit's R requesters
//! (golden model: the round-robin grant of `sim::canary::bench`).
//!
//! Same-cycle rule: among the requests valid in a cycle in which `take` is
//! high, the grant goes to the first requester after the last one granted,
//! in index order, wrapping (after reset: requester 0 first). So a requester
//! that keeps its request up waits for at most R - 1 other grants.
//!
//! # Ports
//! - `req[i]` in: requester i has a request pending.
//! - `take` in: the unit accepts a request this cycle (it is idle).
//! - `any` out: some request is pending; `index` out: the requester that
//!   would be (and, with `take`, is) granted; `grant[i]` out: `take && any &&
//!   index == i` (combinational).
//! - `reset` in (synchronous): the next grant search starts at requester 0.
//!
//! `IW` = clog2(R) (R a power of two >= 2).
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct Arbiter<const R: usize, const IW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub req: [Signal<In, Bit>; R],
    pub take: Signal<In, Bit>,
    pub any: Signal<Out, Bit>,
    pub index: Signal<Out, Bits<IW>>,
    pub grant: [Signal<Out, Bit>; R],
    /// The first requester the next grant search considers (last granted + 1).
    nxt: DFF<Bits<IW>>,
    any_l: Signal<Local, Bit>,
    index_l: Signal<Local, Bits<IW>>,
    way: [Constant<Bits<IW>>; R],
    one: Constant<Bits<IW>>,
    zero: Constant<Bits<IW>>,
}

impl<const R: usize, const IW: usize> Default for Arbiter<R, IW> {
    fn default() -> Self {
        assert!(R >= 2 && R.is_power_of_two() && 1 << IW == R, "Arbiter<{R}, {IW}>: R must be 2^IW >= 2");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            req: std::array::from_fn(|_| Default::default()),
            take: Default::default(),
            any: Default::default(),
            index: Default::default(),
            grant: std::array::from_fn(|_| Default::default()),
            nxt: Default::default(),
            any_l: Default::default(),
            index_l: Default::default(),
            way: std::array::from_fn(|i| Constant::new(bits::<IW>(i as u64))),
            one: Constant::new(bits::<IW>(1)),
            zero: Constant::new(bits::<IW>(0)),
        }
    }
}

impl<const R: usize, const IW: usize> Logic for Arbiter<R, IW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, nxt);
        // Two passes from the highest index down, so the lowest index of the
        // winning pass is assigned last: first any requester, then (winning)
        // requesters at or after `nxt`.
        self.any_l.next = false;
        self.index_l.next = self.way[0].val();
        for hi in (R - 1)..R {
            for j in 0..R {
                if self.req[hi - j].val() {
                    self.any_l.next = true;
                    self.index_l.next = self.way[hi - j].val();
                }
            }
            // (R - 1 >= nxt always holds: no comparison for it.)
            if self.req[hi].val() {
                self.index_l.next = self.way[hi].val();
            }
            for j in 1..R {
                if self.req[hi - j].val() && (self.way[hi - j].val() >= self.nxt.q.val()) {
                    self.index_l.next = self.way[hi - j].val();
                }
            }
        }
        self.any.next = self.any_l.val();
        self.index.next = self.index_l.val();
        for i in 0..R {
            self.grant[i].next = self.take.val() && self.any_l.val() && (self.index_l.val() == self.way[i].val());
        }
        if self.take.val() && self.any_l.val() {
            self.nxt.d.next = self.index_l.val() + self.one.val();
        }
        if self.reset.val() {
            self.nxt.d.next = self.zero.val();
        }
    }
}
