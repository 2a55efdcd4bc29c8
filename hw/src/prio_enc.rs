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
//! - `lower_any[k]` out (k < N-1, the tree's internal nodes in heap order,
//!   below): some request lies under node k's lower (left) child. A user
//!   that selects the lowest request's data through a tree of its own
//!   steers each node with it (the MLB's result selection).
//! - `path[k]`  out (k < N-1): node k is on the root-to-leaf path of the
//!   lowest request (all 0 when none is set); where it is, the path goes
//!   to the lower child when `lower_any[k]`. That is a tree PLRU's touch
//!   of `index` without decoding `index` (the MLB's touches of its
//!   `crate::plru::TreePlru`).
//!
//! Structure: a binary tree over the requests (heap order, leaves N-1..),
//! so every output is log2(N) levels deep rather than the N-deep chain an
//! `if` ladder gives (which ABC does not rebalance: it was on the MLB's
//! critical path, docs/synth.md). Per node: `any` = OR of the children,
//! `multi` = both children have a request or either child has two, `idx` =
//! the left child's index if it has a request, else the right child's (the
//! leaves' indices are gated by their request, so no request gives 0). Top
//! down, `blocked` = some request lies left of the node; `onehot[i] =
//! req[i] && !blocked[leaf i]`, and `path[k] = any[k] && !blocked[k]`.
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
    pub lower_any: Vec<Signal<Out, Bit>>,
    pub path: Vec<Signal<Out, Bit>>,
    /// `way[i]` = i as an IW-bit constant: sized literals keep the Verilog
    /// free of 32-bit-literal width mismatches.
    way: [Constant<Bits<IW>>; N],
    zero_iw: Constant<Bits<IW>>,
    // The tree (2N-1 nodes each, heap order: node k's children are 2k+1 and
    // 2k+2, leaf i is node N-1+i).
    any_t: Vec<Signal<Local, Bit>>,
    multi_t: Vec<Signal<Local, Bit>>,
    idx_t: Vec<Signal<Local, Bits<IW>>>,
    blocked: Vec<Signal<Local, Bit>>,
}

/// The index width an N-entry encoder needs: `max(1, clog2(N))`.
pub const fn index_width(n: usize) -> usize {
    if n <= 2 {
        1
    } else {
        clog2(n)
    }
}

fn nodes<T: Synth>(n: usize) -> Vec<Signal<Local, T>> {
    (0..2 * n - 1).map(|_| Signal::default()).collect()
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
            lower_any: (0..N - 1).map(|_| Signal::default()).collect(),
            path: (0..N - 1).map(|_| Signal::default()).collect(),
            way: std::array::from_fn(|i| Constant::new(bits::<IW>(i as u64))),
            zero_iw: Constant::new(Bits::default()),
            any_t: nodes(N),
            multi_t: nodes(N),
            idx_t: nodes(N),
            blocked: nodes(N),
        }
    }
}

pub(crate) fn array_init<T, const K: usize>(f: impl Fn() -> T) -> [T; K] {
    std::array::from_fn(|_| f())
}

impl<const N: usize, const IW: usize> Logic for PrioEnc<N, IW> {
    #[hdl_gen]
    fn update(&mut self) {
        // Leaves (`leaf0` is a one-value loop naming N-1 for the Verilog
        // emitter, which only knows loop variables).
        for leaf0 in (N - 1)..N {
            for i in 0..N {
                self.any_t[leaf0 + i].next = self.req[i].val();
                self.multi_t[leaf0 + i].next = false;
                self.idx_t[leaf0 + i].next = self.zero_iw.val();
                if self.req[i].val() {
                    self.idx_t[leaf0 + i].next = self.way[i].val();
                }
            }
        }
        // Internal nodes, bottom up (`top` names N-2).
        for top in N.saturating_sub(2)..N.saturating_sub(1) {
            for j in 0..(N - 1) {
                self.any_t[top - j].next = self.any_t[2 * (top - j) + 1].val() || self.any_t[2 * (top - j) + 2].val();
                self.multi_t[top - j].next = self.multi_t[2 * (top - j) + 1].val()
                    || self.multi_t[2 * (top - j) + 2].val()
                    || (self.any_t[2 * (top - j) + 1].val() && self.any_t[2 * (top - j) + 2].val());
                self.idx_t[top - j].next = self.idx_t[2 * (top - j) + 2].val();
                if self.any_t[2 * (top - j) + 1].val() {
                    self.idx_t[top - j].next = self.idx_t[2 * (top - j) + 1].val();
                }
            }
        }
        // Top down: a request left of the node blocks it.
        self.blocked[0].next = false;
        for k in 0..(N - 1) {
            self.blocked[2 * k + 1].next = self.blocked[k].val();
            self.blocked[2 * k + 2].next = self.blocked[k].val() || self.any_t[2 * k + 1].val();
        }
        for leaf0 in (N - 1)..N {
            for i in 0..N {
                self.onehot[i].next = self.req[i].val() && !self.blocked[leaf0 + i].val();
            }
        }
        for k in 0..(N - 1) {
            self.lower_any[k].next = self.any_t[2 * k + 1].val();
            self.path[k].next = self.any_t[k].val() && !self.blocked[k].val();
        }
        self.any.next = self.any_t[0].val();
        self.multi.next = self.multi_t[0].val();
        self.index.next = self.idx_t[0].val();
    }
}
