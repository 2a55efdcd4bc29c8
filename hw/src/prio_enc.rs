//! `PrioEnc<N, IW>`: lowest-index priority encoder over N request bits.
//!
//! Purely combinational. The requests are an array of single-bit inputs
//! rather than one `Bits<N>` word because the blocks that feed it (the MLB's
//! per-entry comparators) produce one bit per entry, and rust-hdl cannot pack
//! bits into a word in one pass (see docs/design.md, "RTL conventions").
//!
//! Ports (all combinational, no clock):
//! - `req[i]`    in : request i.
//! - `any`       out: some request is set.
//! - `index`     out: the lowest i with `req[i]` set; 0 when none is.
//! - `onehot[i]` out: `any && index == i` (exactly one bit when `any`).
//! - `multi`     out: more than one request is set. For the MLB this is the
//!   one-hot assertion: it must never be 1 in legal operation.
//!
//! `IW` is the index width, `max(1, clog2(N))`: rust-hdl cannot evaluate
//! `clog2(N)` in a type in generic code, so the caller passes it (the
//! constructor checks it).
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct PrioEnc<const N: usize, const IW: usize> {
    pub req: [Signal<In, Bit>; N],
    pub any: Signal<Out, Bit>,
    pub index: Signal<Out, Bits<IW>>,
    pub onehot: [Signal<Out, Bit>; N],
    pub multi: Signal<Out, Bit>,
    /// `way[i]` = i as an IW-bit constant: sized literals keep the Verilog
    /// free of 32-bit-literal width mismatches.
    way: [Constant<Bits<IW>>; N],
    any_l: Signal<Local, Bit>,
    index_l: Signal<Local, Bits<IW>>,
}

/// The index width an N-entry encoder needs: `max(1, clog2(N))`.
pub const fn index_width(n: usize) -> usize {
    if n <= 2 {
        1
    } else {
        clog2(n)
    }
}

impl<const N: usize, const IW: usize> Default for PrioEnc<N, IW> {
    fn default() -> Self {
        assert!(N >= 1 && IW == index_width(N), "PrioEnc<{N}, {IW}>: IW must be max(1, clog2(N))");
        Self {
            req: array_init(Signal::default),
            any: Signal::default(),
            index: Signal::default(),
            onehot: array_init(Signal::default),
            multi: Signal::default(),
            way: std::array::from_fn(|i| Constant::new(bits::<IW>(i as u64))),
            any_l: Signal::default(),
            index_l: Signal::default(),
        }
    }
}

pub(crate) fn array_init<T, const K: usize>(f: impl Fn() -> T) -> [T; K] {
    std::array::from_fn(|_| f())
}

impl<const N: usize, const IW: usize> Logic for PrioEnc<N, IW> {
    #[hdl_gen]
    fn update(&mut self) {
        self.any_l.next = false;
        self.index_l.next = self.way[0].val();
        // Walk from the highest index down so that the lowest set request is
        // the last assignment and wins (`last` is a one-value loop that names
        // N-1 for the Verilog emitter, which only knows loop variables).
        for last in (N - 1)..N {
            for j in 0..N {
                if self.req[last - j].val() {
                    self.any_l.next = true;
                    self.index_l.next = self.way[last - j].val();
                }
            }
        }
        self.any.next = self.any_l.val();
        self.index.next = self.index_l.val();
        self.multi.next = false;
        for i in 0..N {
            self.onehot[i].next = self.any_l.val() && (self.index_l.val() == self.way[i].val());
            if self.req[i].val() && (self.index_l.val() != self.way[i].val()) {
                self.multi.next = true;
            }
        }
    }
}
