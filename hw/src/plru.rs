//! Replacement state for the MLB: `TreePlru<N, IW>` (tree pseudo-LRU, the
//! default) and `RoundRobin<N, IW>`. Conventions exactly as docs/design.md
//! ("MLB"); the golden model is `sim::plru`.
//!
//! Tree PLRU: N-1 bits in heap order (node 0 = root, children of node i are
//! 2i+1 = left and 2i+2 = right, leaves are ways 0..N-1 left to right). The
//! victim walk goes left on 0, right on 1; touch(w) sets every node on w's
//! path to point away from w. All reset to 0.
//!
//! The per-way paths are constants computed when the block is built (a mask
//! of the nodes on the path and the bit values that point *to* the way), so
//! the Verilog is word-level: `victim = w` iff `((s ^ to[w]) & mask[w]) == 0`,
//! `touch(w): s = (s & ~mask[w]) | (~to[w] & mask[w])`.
use crate::prio_enc::index_width;
use rust_hdl::prelude::*;

/// Per-way path constants of an N-way tree: (mask, bits pointing to the way).
/// Bit k of each word is heap node k; bit N-1 is never part of a path.
pub fn tree_paths(n: usize) -> Vec<(u64, u64)> {
    (0..n)
        .map(|w| {
            let (mut mask, mut to) = (0u64, 0u64);
            let mut node = (n - 1) + w; // the leaf's heap index
            while node > 0 {
                let parent = (node - 1) / 2;
                mask |= 1 << parent;
                if node == 2 * parent + 2 {
                    to |= 1 << parent; // way is right of `parent`: victim goes right on 1
                }
                node = parent;
            }
            (mask, to)
        })
        .collect()
}

/// Tree pseudo-LRU state for N ways (N a power of two, 1..=32).
///
/// Ports (one clock domain, `clock` rising edge):
/// - `clear`: synchronous reset/flush: state := 0 at the edge (wins over touches).
/// - Touches a, b, c, applied in that order (the MLB wires range hit, then
///   location hit, then fill). They take effect in the next cycle's `state`
///   and `victim` (see below).
///   - `touch_a_mask`, `touch_a_set` (and b's): a touch given as its tree
///     path: the nodes on the touched way's path (bit k = heap node k; 0: no
///     touch) and the values that point away from the way there, so the
///     touch is `s = (s & !mask) | (set & mask)` (`tree_paths`: mask, and
///     `mask & !to`; bits of `set` off the path are ignored). The MLB takes
///     both from its priority encoders' `path` and `lower_any`, with no way
///     index decoded (below).
///   - `touch_c_valid`, `touch_c_way`: a touch given as a way (the fill's
///     victim).
/// - `victim` (comb. from registers): the victim of the state at the start
///   of the cycle, i.e. what a fill in this cycle replaces (the fill's
///   victim sees the state before the cycle's touches, as in `sim::mlb::Mlb::cycle`).
/// - `state` (comb. from registers): the state at the start of the cycle, the
///   N-1 tree bits in bits 0..N-2; bit N-1 is always 0 (it exists so that
///   N = 1, which has no tree bits, needs no 0-bit signal).
///
/// Deferred touches: the touches are registered as they are (`pend_*`) and
/// applied to `bits` one cycle later (c decoded then), and `state` is `bits`
/// with the pending touches applied. So `state` and `victim` are exactly the
/// state after every touch so far, but a touch arriving late in its cycle
/// (the MLB's search result) ends in a register, as the MLB's own
/// `rs_way`/`ls_way` do, and not in the touch logic: the search to
/// replacement state path was the MLU unit's longest.
///
/// Given touches ([`TreePlru::with_given_ab`]): touches a and b are not
/// registered here but arrive already a cycle old, from the user's own
/// registers (the two-stage MLB's stage-2 encoders over its registered
/// matches), and are applied to this cycle's `state` and `victim` exactly
/// as a registered touch is. The user drops a touch whose cycle had a
/// `clear`, as the registers here do. (As a way index they were the
/// 16-entry MLU unit's longest path: registered matches, encoder index,
/// decode, touch, victim, fill.)
#[derive(LogicBlock)]
pub struct TreePlru<const N: usize, const IW: usize> {
    pub clock: Signal<In, Clock>,
    pub clear: Signal<In, Bit>,
    pub touch_a_mask: Signal<In, Bits<N>>,
    pub touch_a_set: Signal<In, Bits<N>>,
    pub touch_b_mask: Signal<In, Bits<N>>,
    pub touch_b_set: Signal<In, Bits<N>>,
    pub touch_c_valid: Signal<In, Bit>,
    pub touch_c_way: Signal<In, Bits<IW>>,
    pub victim: Signal<Out, Bits<IW>>,
    pub state: Signal<Out, Bits<N>>,
    /// The state register, before the pending touches, and the touches of
    /// the cycle before (public so that tests can preset them; a and b are
    /// empty with given touches).
    pub bits: DFF<Bits<N>>,
    pub pend_a_mask: Vec<DFF<Bits<N>>>,
    pub pend_a_set: Vec<DFF<Bits<N>>>,
    pub pend_b_mask: Vec<DFF<Bits<N>>>,
    pub pend_b_set: Vec<DFF<Bits<N>>>,
    pub pend_c_valid: DFF<Bit>,
    pub pend_c_way: DFF<Bits<IW>>,
    way: [Constant<Bits<IW>>; N],
    path_mask: [Constant<Bits<N>>; N],
    path_to: [Constant<Bits<N>>; N],
    path_away: [Constant<Bits<N>>; N],
    zero: Constant<Bits<N>>,
    // The touches applied this cycle (a and b: the registers' or the given
    // ones; c decoded), and the state after each.
    mask_a: Signal<Local, Bits<N>>,
    set_a: Signal<Local, Bits<N>>,
    mask_b: Signal<Local, Bits<N>>,
    set_b: Signal<Local, Bits<N>>,
    mask_c: Signal<Local, Bits<N>>,
    set_c: Signal<Local, Bits<N>>,
    after_a: Signal<Local, Bits<N>>,
    after_b: Signal<Local, Bits<N>>,
    after_c: Signal<Local, Bits<N>>,
}

impl<const N: usize, const IW: usize> Default for TreePlru<N, IW> {
    fn default() -> Self {
        assert!(
            N.is_power_of_two() && N <= 32 && IW == index_width(N),
            "TreePlru<{N}, {IW}>: N must be a power of two <= 32 and IW = max(1, clog2(N))"
        );
        let paths = tree_paths(N);
        Self {
            clock: Signal::default(),
            clear: Signal::default(),
            touch_a_mask: Signal::default(),
            touch_a_set: Signal::default(),
            touch_b_mask: Signal::default(),
            touch_b_set: Signal::default(),
            touch_c_valid: Signal::default(),
            touch_c_way: Signal::default(),
            victim: Signal::default(),
            state: Signal::default(),
            bits: DFF::default(),
            pend_a_mask: vec![DFF::default()],
            pend_a_set: vec![DFF::default()],
            pend_b_mask: vec![DFF::default()],
            pend_b_set: vec![DFF::default()],
            pend_c_valid: DFF::default(),
            pend_c_way: DFF::default(),
            way: std::array::from_fn(|i| Constant::new(bits::<IW>(i as u64))),
            path_mask: std::array::from_fn(|i| Constant::new(bits::<N>(paths[i].0))),
            path_to: std::array::from_fn(|i| Constant::new(bits::<N>(paths[i].1))),
            path_away: std::array::from_fn(|i| Constant::new(bits::<N>(!paths[i].1 & paths[i].0))),
            zero: Constant::new(Bits::default()),
            mask_a: Signal::default(),
            set_a: Signal::default(),
            mask_b: Signal::default(),
            set_b: Signal::default(),
            mask_c: Signal::default(),
            set_c: Signal::default(),
            after_a: Signal::default(),
            after_b: Signal::default(),
            after_c: Signal::default(),
        }
    }
}

impl<const N: usize, const IW: usize> TreePlru<N, IW> {
    /// The same state with touches a and b given a cycle old (struct doc).
    pub fn with_given_ab() -> Self {
        Self { pend_a_mask: vec![], pend_a_set: vec![], pend_b_mask: vec![], pend_b_set: vec![], ..Self::default() }
    }
}

impl<const N: usize, const IW: usize> Logic for TreePlru<N, IW> {
    #[hdl_gen]
    fn update(&mut self) {
        self.bits.clock.next = self.clock.val();
        // Touches a and b: given (already a cycle old), or registered here.
        self.mask_a.next = self.touch_a_mask.val();
        self.set_a.next = self.touch_a_set.val();
        self.mask_b.next = self.touch_b_mask.val();
        self.set_b.next = self.touch_b_set.val();
        for k in 0..self.pend_a_mask.len() {
            self.pend_a_mask[k].clock.next = self.clock.val();
            self.pend_a_set[k].clock.next = self.clock.val();
            self.pend_b_mask[k].clock.next = self.clock.val();
            self.pend_b_set[k].clock.next = self.clock.val();
            self.pend_a_mask[k].d.next = self.touch_a_mask.val();
            self.pend_a_set[k].d.next = self.touch_a_set.val();
            self.pend_b_mask[k].d.next = self.touch_b_mask.val();
            self.pend_b_set[k].d.next = self.touch_b_set.val();
            if self.clear.val() {
                self.pend_a_mask[k].d.next = self.zero.val();
                self.pend_b_mask[k].d.next = self.zero.val();
            }
            self.mask_a.next = self.pend_a_mask[k].q.val();
            self.set_a.next = self.pend_a_set[k].q.val();
            self.mask_b.next = self.pend_b_mask[k].q.val();
            self.set_b.next = self.pend_b_set[k].q.val();
        }
        self.pend_c_valid.clock.next = self.clock.val();
        self.pend_c_way.clock.next = self.clock.val();
        self.mask_c.next = self.zero.val();
        self.set_c.next = self.zero.val();
        for w in 0..N {
            if self.pend_c_valid.q.val() && (self.pend_c_way.q.val() == self.way[w].val()) {
                self.mask_c.next = self.path_mask[w].val();
                self.set_c.next = self.path_away[w].val();
            }
        }
        // (A set bit off the mask is ignored: a user may drive `set` from a
        // tree whose bits off the path mean nothing.)
        self.after_a.next = (self.bits.q.val() & !self.mask_a.val()) | (self.set_a.val() & self.mask_a.val());
        self.after_b.next = (self.after_a.val() & !self.mask_b.val()) | (self.set_b.val() & self.mask_b.val());
        self.after_c.next = (self.after_b.val() & !self.mask_c.val()) | self.set_c.val();
        // Exactly one way's path matches any state.
        self.victim.next = self.way[0].val();
        for w in 0..N {
            if ((self.after_c.val() ^ self.path_to[w].val()) & self.path_mask[w].val()) == self.zero.val() {
                self.victim.next = self.way[w].val();
            }
        }
        self.bits.d.next = self.after_c.val();
        self.pend_c_valid.d.next = self.touch_c_valid.val();
        self.pend_c_way.d.next = self.touch_c_way.val();
        if self.clear.val() {
            self.bits.d.next = self.zero.val();
            // The ways may keep their values: a touch without valid is none.
            self.pend_c_valid.d.next = false;
        }
        self.state.next = self.after_c.val();
    }
}

/// Round-robin replacement for N ways (N a power of two, 1..=32).
///
/// Ports (`clock` rising edge):
/// - `clear`: synchronous reset/flush: pointer := 0 (wins over `advance`).
/// - `advance`: a fill replaced the valid entry at `victim`: pointer += 1 mod N.
/// - `victim` (registered): the pointer, the way the next replacing fill takes.
/// - `state` (registered): the pointer zero-extended to N bits (the MLB's
///   `repl_state` port is N bits wide for either policy).
#[derive(LogicBlock)]
pub struct RoundRobin<const N: usize, const IW: usize> {
    pub clock: Signal<In, Clock>,
    pub clear: Signal<In, Bit>,
    pub advance: Signal<In, Bit>,
    pub victim: Signal<Out, Bits<IW>>,
    pub state: Signal<Out, Bits<N>>,
    /// The pointer register (public so that tests can preset it).
    pub ptr: DFF<Bits<IW>>,
    last: Constant<Bits<IW>>,
    one: Constant<Bits<IW>>,
    zero: Constant<Bits<IW>>,
    way: [Constant<Bits<IW>>; N],
    way_n: [Constant<Bits<N>>; N],
    zero_n: Constant<Bits<N>>,
}

impl<const N: usize, const IW: usize> Default for RoundRobin<N, IW> {
    fn default() -> Self {
        assert!(
            N.is_power_of_two() && N <= 32 && IW == index_width(N),
            "RoundRobin<{N}, {IW}>: N must be a power of two <= 32 and IW = max(1, clog2(N))"
        );
        Self {
            clock: Signal::default(),
            clear: Signal::default(),
            advance: Signal::default(),
            victim: Signal::default(),
            state: Signal::default(),
            ptr: DFF::default(),
            last: Constant::new(bits::<IW>(N as u64 - 1)),
            one: Constant::new(bits::<IW>(1)),
            zero: Constant::new(Bits::default()),
            way: std::array::from_fn(|i| Constant::new(bits::<IW>(i as u64))),
            way_n: std::array::from_fn(|i| Constant::new(bits::<N>(i as u64))),
            zero_n: Constant::new(Bits::default()),
        }
    }
}

impl<const N: usize, const IW: usize> Logic for RoundRobin<N, IW> {
    #[hdl_gen]
    fn update(&mut self) {
        self.ptr.clock.next = self.clock.val();
        self.ptr.d.next = self.ptr.q.val();
        if self.advance.val() {
            // Explicit wrap: N = 1 has a 1-bit pointer that must stay 0.
            if self.ptr.q.val() == self.last.val() {
                self.ptr.d.next = self.zero.val();
            } else {
                self.ptr.d.next = self.ptr.q.val() + self.one.val();
            }
        }
        if self.clear.val() {
            self.ptr.d.next = self.zero.val();
        }
        self.victim.next = self.ptr.q.val();
        // Zero-extend by decoding (a widening cast would emit a width mismatch).
        self.state.next = self.zero_n.val();
        for w in 0..N {
            if self.ptr.q.val() == self.way[w].val() {
                self.state.next = self.way_n[w].val();
            }
        }
    }
}
