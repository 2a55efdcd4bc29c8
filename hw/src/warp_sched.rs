//! `WarpSched<W, WW>`: the SM pipeline's loose round-robin warp scheduler
//! (`sim::sm_pipeline`'s issue rule): of the warps whose next instruction can
//! issue this cycle, pick the first after the one that issued last, wrapping
//! around. Purely combinational; the pipeline keeps `last` in a register.
//!
//! Ports:
//! - `can[w]` in: warp w's next instruction can issue this cycle.
//! - `last`   in: the warp that issued last (WW bits; W-1 before the first
//!   issue of a kernel, so that warp 0 is looked at first).
//! - `valid`  out: some warp can issue.
//! - `pick`   out: the first w after `last` (cyclically) with `can[w]`; 0 when
//!   none can.
//!
//! The search is two lowest-index priority encoders: the lowest candidate
//! above `last` if there is one, else the lowest candidate overall, which is
//! the rotation `last+1, ..., W-1, 0, ..., last` for any W.
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct WarpSched<const W: usize, const WW: usize> {
    pub can: [Signal<In, Bit>; W],
    pub last: Signal<In, Bits<WW>>,
    pub valid: Signal<Out, Bit>,
    pub pick: Signal<Out, Bits<WW>>,
    /// `way[w]` = w as a WW-bit constant (sized literals for the Verilog).
    way: [Constant<Bits<WW>>; W],
    any_l: Signal<Local, Bit>,
    pick_l: Signal<Local, Bits<WW>>,
}

impl<const W: usize, const WW: usize> Default for WarpSched<W, WW> {
    fn default() -> Self {
        assert!(
            W >= 2 && W <= (1 << WW) && WW == crate::prio_enc::index_width(W),
            "WarpSched<{W}, {WW}>: need W >= 2 and WW = clog2(W)"
        );
        Self {
            can: std::array::from_fn(|_| Signal::default()),
            last: Signal::default(),
            valid: Signal::default(),
            pick: Signal::default(),
            way: std::array::from_fn(|i| Constant::new(bits::<WW>(i as u64))),
            any_l: Signal::default(),
            pick_l: Signal::default(),
        }
    }
}

impl<const W: usize, const WW: usize> Logic for WarpSched<W, WW> {
    #[hdl_gen]
    fn update(&mut self) {
        self.any_l.next = false;
        self.pick_l.next = self.way[0].val();
        // Highest index first so that the lowest candidate is the last
        // assignment (`top` is a one-value loop naming W-1 for the emitter).
        for top in (W - 1)..W {
            for j in 0..W {
                if self.can[top - j].val() {
                    self.any_l.next = true;
                    self.pick_l.next = self.way[top - j].val();
                }
            }
        }
        // A candidate above `last` overrides: the lowest of those wins
        // (warp 0 is never above `last`, so it is not compared).
        for top in (W - 1)..W {
            for j in 0..(W - 1) {
                if self.can[top - j].val() & (self.way[top - j].val() > self.last.val()) {
                    self.pick_l.next = self.way[top - j].val();
                }
            }
        }
        self.valid.next = self.any_l.val();
        self.pick.next = self.pick_l.val();
    }
}
