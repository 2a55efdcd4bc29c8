//! `Mlb<N, IW>`: the Metadata Lookaside Buffer, N fully associative entries
//! {valid, location, base, size, tag} (spec section 5, docs/design.md "MLB"),
//! with a search pipeline of one or two stages (`hit_latency`, a generation
//! parameter). The golden model is `sim::mlb::Mlb`; `Mlb::cycle` there is
//! this block's cycle-by-cycle reference at either latency.
//!
//! Storage: one register array per field (rust-hdl cannot cast fields of an
//! array of structs): valid 1 bit, location bits 55..5 (51 bits), base 56,
//! size 56, tag 8. Every storage flip-flop holds its value unless its entry is
//! written (`d = we ? new : q`), so synthesis can map enable flops or gate the
//! clock per entry.
//!
//! Ports (one clock, rising edge; all inputs sampled at the edge):
//! - `reset`: synchronous reset. Clears every valid bit, the replacement state
//!   and the hit of the cycle's searches; drops the cycle's fill. Registers
//!   have no reset of their own in rust-hdl, so this input must be held for
//!   one cycle after power-up.
//! - Range search: `rs_valid`, `rs_addr` (56-bit untagged address). Matches
//!   `valid && base <= a && a - base < size` (no overflow).
//! - Location search: `ls_valid`, `ls_loc`. Every location port of the MLB
//!   carries location bits 55..5 only (51 bits, `location >> 5`): that is all
//!   an entry stores and compares (the caller slices, which is free).
//! - Search results, registered, `hit_latency` cycles after the request
//!   (pipelined: a new request every cycle on each port): `*_hit`, `*_way`,
//!   and the entry's `rs_loc` (range port only: the location port already
//!   knows it), `*_base`, `*_size`, `*_tag`: the hit entry's while `*_hit`
//!   is 1, and 0 otherwise (`*_way` is meaningful only with a hit; the
//!   registers load on a request and in the cycle after a hit, and hold
//!   otherwise, so their clock can be gated), so the two ports' data can be
//!   ORed
//!   together without a select (the MLU unit does: a select driven by one
//!   register bit fans out to some 170 multiplexers, and the buffer chain
//!   synthesis builds for it was the unit's critical path). `*_multi` (registered like `*_hit`) is the one-hot
//!   assertion: more than one entry matched; it must stay 0 (a testbench
//!   checks it every cycle). If it were violated the lowest index wins.
//! - `nx_base`, `nx_size` (56), `nx_tag` (8) (comb.): `rs_* | ls_*` as they
//!   will be after this cycle's edge (the data registers' inputs, ORed). A
//!   user that keeps copies of the search result (the MLU unit, one per
//!   group of lanes) loads them from these.
//! - Fill: `fill_valid`, `fill_loc` (51), `fill_base`, `fill_size` (56),
//!   `fill_tag` (8). Writes the victim: the lowest invalid entry, else the
//!   policy's (tree PLRU or round-robin). A fill of a location a valid entry
//!   already holds writes nothing (`fill_present`, comb.): with several
//!   walkers filling, two walks may find the same node, and the MLB never
//!   holds a location twice, whatever the fill sequence (proved formally).
//! - `inv_valid`, `inv_loc`: invalidate every entry whose location matches.
//! - `flush`: clear every valid bit and the replacement state.
//! - `victim` (comb.): the way a fill in this cycle writes; `fill_ok` (comb.):
//!   the fill in this cycle is taken. `repl_state` (from registers): the PLRU bits
//!   (bit N-1 = 0) or the round-robin pointer, for comparison with the model.
//!   These three are not delayed by the search pipeline.
//!
//! Same-cycle rules (docs/design.md), identical to `sim::mlb::Mlb::cycle`:
//! both searches and the victim see the state before the cycle's writes; at
//! the edge flush > invalidate > fill; the fill is dropped when the invalidate
//! names the filled location or clears the victim way, or when the location
//! is already held; a flush (or reset)
//! drops the fill and the cycle's touches; the replacement state is touched by
//! the range hit, then the location hit, then the fill.
//!
//! Pipeline. Stage 1 (cycle t): both searches compare every entry against
//! the state at the start of cycle t. The priority encoders pick the lowest
//! match, the output stage selects the hit entry's data through a selection
//! tree into the output registers, and the replacement state is
//! touched so that the victim of a fill in cycle t+1 is the model's, at
//! either latency. At hit latency 1 all of it happens in cycle t. At hit
//! latency 2 (for clocks a one-cycle search cannot make: the MLU unit in
//! ASAP7 at 2 GHz, docs/synth.md) only the compares do: each port's match
//! bits are registered at the end of t (the `s1_*` registers, which exist
//! only then), and the encoders and the selection work on them in t+1, so
//! the results of a search in cycle t are on the outputs in cycle t+2:
//! exactly `Mlb::cycle`'s answer for cycle t, one cycle later. The tree
//! PLRU then takes its range and location touches from those encoders, a
//! cycle old as its own touch registers would hold them, and as the
//! lowest match's tree path rather than its index (`PrioEnc::path`,
//! `TreePlru::with_given_ab`), so its state is the model's in every cycle.
//! (Registering the encoders' outputs instead left their trees behind the
//! 56-bit range compares in stage 1: the longest paths of both units.)
//!
//! A fill in cycle t that replaces an entry a search of cycle t hit writes
//! that entry before the output stage reads it in t+1. At hit latency 2 the
//! stage-1 registers also keep which ways the fill wrote (`s1_written`), and
//! such a search reports a miss (hit 0, data 0) rather than
//! the new entry's data under the old hit: with K walkers the MLU fills while
//! it searches, and a miss there only costs a walk, where the new entry's
//! data would check a request against the wrong allocation. `Mlb::cycle`
//! answers with the old entry (at hit latency 1 the data are read in t);
//! the testbenches expect the miss.

//! Fill lookahead (`Mlb::with_fill_lookahead(k)`, the MLU unit's build,
//! k = its walkers): a user whose fill comes from a register knows the
//! next cycle's fill a cycle early, as one of k candidate locations
//! (`fill_next_loc[j]`, registers: the walkers' results) picked by a
//! one-hot `fill_next_sel[j]` (late: the walkers' fill arbitration). The
//! MLB compares every candidate with the entries (k x N compares, from
//! registers, in parallel with the pick), selects with `fill_next_sel`,
//! corrects for this cycle's writes (an entry this fill writes matches
//! when the two fills' locations are equal; an entry invalidated or
//! flushed does not) and registers the matches. They are registered in
//! parts, so the victim logic ends in a register of its own: per entry,
//! the match were the entry not written (`fm_q`) and whether this fill
//! wrote it (`fw_q`, the write enable), and whether the two fills'
//! locations are equal (`fn_q`); the match is `fw_q ? fn_q : fm_q`
//! (registered whole, the tree PLRU's touch -> victim -> write enable ->
//! match was the 16-entry unit's longest path). `fill_held` is
//! then an OR of N such bits rather than N 51-bit compares behind the
//! fill register's fan-out: that was the 16-entry unit's critical path
//! (fill register -> location compares -> entry write enables), and one
//! compare behind the pick's multiplexer was no better. Same results,
//! provided that whenever `fill_valid` is high in cycle t+1, exactly one
//! `fill_next_sel[j]` was high in cycle t and its `fill_next_loc[j]` is
//! the `fill_loc` of t+1.

//! Entry keys (`Mlb::with_entry_keys`, the MLU unit's build): entry i
//! compares `rs_addr_entry[i]` instead of `rs_addr`, so a user can drive
//! groups of entries from copies of its key register. One register fanned
//! out to the range compares of all 16 entries (each key bit into some 64
//! gate inputs) through a buffer tree six deep, one of the 16-entry unit's
//! longest paths. The results are the same as long as every copy equals
//! `rs_addr` whenever `rs_valid` is high.

//! Range compare: `base <= a && a - base < size` evaluated with one carry
//! chain instead of a subtract followed by a compare: with nb = !base,
//! ns = !size, the carry-save pair s = a ^ nb ^ ns, c = maj(a, nb, ns) gives
//! a - base - size + 2^57 = s + 2c + 2, whose bit 57 is
//! `carry(s + (c << 1) + 2) && c[55]`, and `carry(s + r + 1) == (s >= !r)`
//! for r = (c << 1) | 1. So `a - base < size` is `!((s >= !r) && c[55])`
//! (checked exhaustively at 6 bits and against the model in the tests).
//! The entry also stores `bxs = base ^ size` (= nb ^ ns), written with it,
//! so the search computes s = a ^ bxs and c = bxs ? a : nb, one gate level
//! each, in parallel, rather than two XOR levels: the range search into
//! the priority encoder was the MLU unit's longest path. (Storing
//! `base + size` instead, for a plain `a < end`, put a 57-bit adder on the
//! fill path, which ABC mapped as a carry chain of 636 ps on its own.)
//!
//! Length: this file is over 800 lines because a rust-hdl block is one
//! `#[hdl_gen] fn update`, emitted as one Verilog always block, and rust-hdl
//! 0.46 cannot call a helper from it; the sub-blocks that can stand alone
//! are their own files (`plru.rs`, `prio_enc.rs`).
use crate::plru::{tree_paths, RoundRobin, TreePlru};
use crate::prio_enc::{array_init, index_width, PrioEnc};
use rust_hdl::prelude::*;
use sim::config::Replacement;

#[derive(LogicBlock)]
pub struct Mlb<const N: usize, const IW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub rs_valid: Signal<In, Bit>,
    pub rs_addr: Signal<In, Bits<56>>,
    pub ls_valid: Signal<In, Bit>,
    pub ls_loc: Signal<In, Bits<51>>,
    pub fill_valid: Signal<In, Bit>,
    pub fill_loc: Signal<In, Bits<51>>,
    pub fill_base: Signal<In, Bits<56>>,
    pub fill_size: Signal<In, Bits<56>>,
    pub fill_tag: Signal<In, Bits<8>>,
    pub inv_valid: Signal<In, Bit>,
    pub inv_loc: Signal<In, Bits<51>>,
    pub flush: Signal<In, Bit>,
    /// Fill lookahead builds only (k elements, else empty): the candidates
    /// for the next cycle's `fill_loc`, and the one-hot pick among them
    /// (module doc, "Fill lookahead").
    pub fill_next_loc: Vec<Signal<In, Bits<51>>>,
    pub fill_next_sel: Vec<Signal<In, Bit>>,
    /// Entry-key builds only (N elements, else empty): the range search key
    /// per entry, which entry i compares instead of `rs_addr` (module doc,
    /// "Entry keys"). Each must equal `rs_addr` whenever `rs_valid` is high.
    pub rs_addr_entry: Vec<Signal<In, Bits<56>>>,
    pub rs_hit: Signal<Out, Bit>,
    pub rs_way: Signal<Out, Bits<IW>>,
    pub rs_loc: Signal<Out, Bits<51>>,
    pub rs_base: Signal<Out, Bits<56>>,
    pub rs_size: Signal<Out, Bits<56>>,
    pub rs_tag: Signal<Out, Bits<8>>,
    pub rs_multi: Signal<Out, Bit>,
    pub ls_hit: Signal<Out, Bit>,
    pub ls_way: Signal<Out, Bits<IW>>,
    pub ls_base: Signal<Out, Bits<56>>,
    pub ls_size: Signal<Out, Bits<56>>,
    pub ls_tag: Signal<Out, Bits<8>>,
    pub ls_multi: Signal<Out, Bit>,
    pub nx_base: Signal<Out, Bits<56>>,
    pub nx_size: Signal<Out, Bits<56>>,
    pub nx_tag: Signal<Out, Bits<8>>,
    pub victim: Signal<Out, Bits<IW>>,
    pub fill_ok: Signal<Out, Bit>,
    pub fill_present: Signal<Out, Bit>,
    pub repl_state: Signal<Out, Bits<N>>,
    // Entry storage, one array per field (index = way).
    pub valid: [DFF<Bit>; N],
    pub loc: [DFF<Bits<51>>; N],
    pub base: [DFF<Bits<56>>; N],
    pub size: [DFF<Bits<56>>; N],
    pub tag: [DFF<Bits<8>>; N],
    /// `base ^ size`, written with `base` and `size` (module doc).
    pub bxs: [DFF<Bits<56>>; N],
    // Priority encoders: range matches, location matches, free entries.
    rs_pe: PrioEnc<N, IW>,
    ls_pe: PrioEnc<N, IW>,
    free_pe: PrioEnc<N, IW>,
    // Exactly one of these holds one block (the configured policy); the other
    // is empty and emits no Verilog.
    plru: Vec<TreePlru<N, IW>>,
    rr: Vec<RoundRobin<N, IW>>,
    // Stage-1 registers, hit latency 2 only (empty at latency 1, emitting
    // nothing): the search of the previous cycle (request seen, each
    // entry's match with reset applied), the entries its cycle's fill
    // wrote, and whether its cycle cleared the MLB (its touches are then
    // dropped).
    s1_rs_valid: Vec<DFF<Bit>>,
    s1_rs_match: Vec<DFF<Bit>>,
    s1_ls_valid: Vec<DFF<Bit>>,
    s1_ls_match: Vec<DFF<Bit>>,
    s1_written: Vec<DFF<Bit>>,
    s1_clear: Vec<DFF<Bit>>,
    // Each entry's match this cycle, and the encoders' requests: the
    // matches (latency 1) or the registered matches (latency 2).
    rs_match: [Signal<Local, Bit>; N],
    ls_match: [Signal<Local, Bit>; N],
    rs_req: [Signal<Local, Bit>; N],
    ls_req: [Signal<Local, Bit>; N],
    // Fill lookahead builds only (N, else empty): entry i, unless this
    // cycle's fill writes it, holds `fill_next_loc` after this cycle's edge;
    // this cycle's fill writes entry i; (one element) the next fill's
    // location is this fill's. Next cycle's `fill_match[i]` is
    // `fw_q[i] ? fn_q : fm_q[i]` (module doc).
    fm_q: Vec<DFF<Bit>>,
    fw_q: Vec<DFF<Bit>>,
    fn_q: Vec<DFF<Bit>>,
    // (N, else empty) the picked candidate matches entry i as it is now.
    fm_cand: Vec<Signal<Local, Bit>>,
    // (one element, else empty) the picked candidate equals `fill_loc`.
    next_is_fill: Vec<Signal<Local, Bit>>,
    // The search the output stage reports this cycle: this cycle's (latency
    // 1) or the stage-1 registers' (latency 2); `take[i]`: entry i matched
    // and its data may be reported (not under reset, not written by the
    // search's cycle's fill).
    out_rs_valid: Signal<Local, Bit>,
    out_rs_hit: Signal<Local, Bit>,
    out_rs_multi: Signal<Local, Bit>,
    out_rs_way: Signal<Local, Bits<IW>>,
    out_rs_take: [Signal<Local, Bit>; N],
    out_ls_valid: Signal<Local, Bit>,
    out_ls_hit: Signal<Local, Bit>,
    out_ls_multi: Signal<Local, Bit>,
    out_ls_way: Signal<Local, Bits<IW>>,
    out_ls_take: [Signal<Local, Bit>; N],
    // Carry-save range compare terms per entry (module doc).
    // The range key entry i compares: `rs_addr`, or its own `rs_addr_entry`.
    rs_key: [Signal<Local, Bits<56>>; N],
    cs_s: [Signal<Local, Bits<56>>; N],
    cs_c: [Signal<Local, Bits<56>>; N],
    cs_nr: [Signal<Local, Bits<56>>; N],
    one_56: Constant<Bits<56>>,
    top_56: Constant<Bits<56>>,
    // Output registers.
    rs_hit_r: DFF<Bit>,
    rs_multi_r: DFF<Bit>,
    rs_way_r: DFF<Bits<IW>>,
    rs_loc_r: DFF<Bits<51>>,
    rs_base_r: DFF<Bits<56>>,
    rs_size_r: DFF<Bits<56>>,
    rs_tag_r: DFF<Bits<8>>,
    ls_hit_r: DFF<Bit>,
    ls_multi_r: DFF<Bit>,
    ls_way_r: DFF<Bits<IW>>,
    ls_base_r: DFF<Bits<56>>,
    ls_size_r: DFF<Bits<56>>,
    ls_tag_r: DFF<Bits<8>>,
    // Result selection trees (2N-1 nodes each, heap order, the encoders'
    // shape: each node is steered by its encoder's `lower_any`).
    rs_sel_loc: Vec<Signal<Local, Bits<51>>>,
    rs_sel_base: Vec<Signal<Local, Bits<56>>>,
    rs_sel_size: Vec<Signal<Local, Bits<56>>>,
    rs_sel_tag: Vec<Signal<Local, Bits<8>>>,
    ls_sel_base: Vec<Signal<Local, Bits<56>>>,
    ls_sel_size: Vec<Signal<Local, Bits<56>>>,
    ls_sel_tag: Vec<Signal<Local, Bits<8>>>,
    // Constants.
    // Per-policy constants: only the configured policy's are built, so the
    // emitted Verilog has no unused localparams (Verilator UNUSEDPARAM).
    way: Vec<Constant<Bits<IW>>>,
    zero_iw: Constant<Bits<IW>>,
    zero_51: Constant<Bits<51>>,
    zero_56: Constant<Bits<56>>,
    zero_8: Constant<Bits<8>>,
    zero_n: Constant<Bits<N>>,
    // Combinational per-entry and global terms.
    inv_match: [Signal<Local, Bit>; N],
    // A valid entry already holds the fill's location.
    fill_match: [Signal<Local, Bit>; N],
    fill_held: Signal<Local, Bit>,
    write_en: [Signal<Local, Bit>; N],
    // The victim as a one-hot vector straight from the state registers (the
    // tree paths of crate::plru, or the round-robin pointer), so the write
    // enables need no index decode (the fill path is the critical one once
    // the searches are split).
    victim_oh: [Signal<Local, Bit>; N],
    // Tree PLRU only (N words, else empty): the hits' touches as packed tree
    // paths (`ta_*` range, `tb_*` location; the last word is the touch), and
    // `node_bit[n]` = 1 << n (N-1).
    ta_mask: Vec<Signal<Local, Bits<N>>>,
    ta_set: Vec<Signal<Local, Bits<N>>>,
    tb_mask: Vec<Signal<Local, Bits<N>>>,
    tb_set: Vec<Signal<Local, Bits<N>>>,
    node_bit: Vec<Constant<Bits<N>>>,
    pol_oh: [Signal<Local, Bit>; N],
    path_mask: Vec<Constant<Bits<N>>>,
    path_to: Vec<Constant<Bits<N>>>,
    fill_base_ok: Signal<Local, Bit>,
    victim_l: Signal<Local, Bits<IW>>,
    inv_victim: Signal<Local, Bit>,
    fill_ok_l: Signal<Local, Bit>,
    clear: Signal<Local, Bit>,
}

/// The MLB sizes the generator builds (index width = max(1, clog2(N))).
pub type Mlb1 = Mlb<1, 1>;
pub type Mlb2 = Mlb<2, 1>;
pub type Mlb4 = Mlb<4, 2>;
pub type Mlb8 = Mlb<8, 3>;
pub type Mlb16 = Mlb<16, 4>;
pub type Mlb32 = Mlb<32, 5>;

impl<const N: usize, const IW: usize> Mlb<N, IW> {
    /// An N-entry MLB with the given replacement policy and hit latency (1
    /// or 2 cycles; the generator validates both before it gets here).
    pub fn new(replacement: Replacement, hit_latency: usize) -> Self {
        assert!(
            N.is_power_of_two() && N <= 32 && IW == index_width(N),
            "Mlb<{N}, {IW}>: N must be 1, 2, 4, 8, 16 or 32 and IW = max(1, clog2(N))"
        );
        assert!(hit_latency == 1 || hit_latency == 2, "Mlb: hit latency {hit_latency} (1 or 2)");
        let s1 = |n: usize| if hit_latency == 2 { n } else { 0 };
        let (plru, rr) = match replacement {
            // At hit latency 2 the range and location touches come from the
            // stage-2 encoders, a cycle old (module doc).
            Replacement::Plru if hit_latency == 2 => (vec![TreePlru::with_given_ab()], vec![]),
            Replacement::Plru => (vec![TreePlru::default()], vec![]),
            Replacement::RoundRobin => (vec![], vec![RoundRobin::default()]),
        };
        let is_plru = replacement == Replacement::Plru;
        let per_policy = |on: bool| if on { N } else { 0 };
        Self {
            clock: Default::default(),
            reset: Default::default(),
            rs_valid: Default::default(),
            rs_addr: Default::default(),
            ls_valid: Default::default(),
            ls_loc: Default::default(),
            fill_valid: Default::default(),
            fill_loc: Default::default(),
            fill_base: Default::default(),
            fill_size: Default::default(),
            fill_tag: Default::default(),
            inv_valid: Default::default(),
            inv_loc: Default::default(),
            flush: Default::default(),
            fill_next_loc: vec![],
            fill_next_sel: vec![],
            rs_addr_entry: vec![],
            rs_hit: Default::default(),
            rs_way: Default::default(),
            rs_loc: Default::default(),
            rs_base: Default::default(),
            rs_size: Default::default(),
            rs_tag: Default::default(),
            rs_multi: Default::default(),
            ls_hit: Default::default(),
            ls_way: Default::default(),
            ls_base: Default::default(),
            ls_size: Default::default(),
            ls_tag: Default::default(),
            ls_multi: Default::default(),
            nx_base: Default::default(),
            nx_size: Default::default(),
            nx_tag: Default::default(),
            victim: Default::default(),
            fill_ok: Default::default(),
            fill_present: Default::default(),
            repl_state: Default::default(),
            valid: array_init(Default::default),
            loc: array_init(Default::default),
            base: array_init(Default::default),
            size: array_init(Default::default),
            tag: array_init(Default::default),
            bxs: array_init(Default::default),
            rs_pe: Default::default(),
            ls_pe: Default::default(),
            free_pe: Default::default(),
            plru,
            rr,
            s1_rs_valid: regs(s1(1)),
            s1_rs_match: regs(s1(N)),
            s1_ls_valid: regs(s1(1)),
            s1_ls_match: regs(s1(N)),
            s1_written: regs(s1(N)),
            s1_clear: regs(if is_plru { s1(1) } else { 0 }),
            rs_match: array_init(Default::default),
            ls_match: array_init(Default::default),
            rs_req: array_init(Default::default),
            ls_req: array_init(Default::default),
            fm_q: vec![],
            fw_q: vec![],
            fn_q: vec![],
            fm_cand: vec![],
            next_is_fill: vec![],
            out_rs_valid: Default::default(),
            out_rs_hit: Default::default(),
            out_rs_multi: Default::default(),
            out_rs_way: Default::default(),
            out_rs_take: array_init(Default::default),
            out_ls_valid: Default::default(),
            out_ls_hit: Default::default(),
            out_ls_multi: Default::default(),
            out_ls_way: Default::default(),
            out_ls_take: array_init(Default::default),
            rs_key: array_init(Default::default),
            cs_s: array_init(Default::default),
            cs_c: array_init(Default::default),
            cs_nr: array_init(Default::default),
            one_56: Constant::new(bits::<56>(1)),
            top_56: Constant::new(bits::<56>(1 << 55)),
            rs_hit_r: Default::default(),
            rs_multi_r: Default::default(),
            rs_way_r: Default::default(),
            rs_loc_r: Default::default(),
            rs_base_r: Default::default(),
            rs_size_r: Default::default(),
            rs_tag_r: Default::default(),
            ls_hit_r: Default::default(),
            ls_multi_r: Default::default(),
            ls_way_r: Default::default(),
            ls_base_r: Default::default(),
            ls_size_r: Default::default(),
            ls_tag_r: Default::default(),
            rs_sel_loc: tree(N),
            rs_sel_base: tree(N),
            rs_sel_size: tree(N),
            rs_sel_tag: tree(N),
            ls_sel_base: tree(N),
            ls_sel_size: tree(N),
            ls_sel_tag: tree(N),
            way: (0..per_policy(!is_plru)).map(|i| Constant::new(bits::<IW>(i as u64))).collect(),
            zero_iw: Constant::new(Bits::default()),
            zero_51: Constant::new(Bits::default()),
            zero_56: Constant::new(Bits::default()),
            zero_8: Constant::new(Bits::default()),
            zero_n: Constant::new(Bits::default()),
            inv_match: array_init(Default::default),
            fill_match: array_init(Default::default),
            fill_held: Default::default(),
            write_en: array_init(Default::default),
            victim_oh: array_init(Default::default),
            ta_mask: (0..per_policy(is_plru)).map(|_| Signal::default()).collect(),
            ta_set: (0..per_policy(is_plru)).map(|_| Signal::default()).collect(),
            tb_mask: (0..per_policy(is_plru)).map(|_| Signal::default()).collect(),
            tb_set: (0..per_policy(is_plru)).map(|_| Signal::default()).collect(),
            node_bit: (0..per_policy(is_plru).saturating_sub(1)).map(|n| Constant::new(bits::<N>(1 << n))).collect(),
            pol_oh: array_init(Default::default),
            path_mask: (0..per_policy(is_plru)).map(|i| Constant::new(bits::<N>(tree_paths(N)[i].0))).collect(),
            path_to: (0..per_policy(is_plru)).map(|i| Constant::new(bits::<N>(tree_paths(N)[i].1))).collect(),
            fill_base_ok: Default::default(),
            victim_l: Default::default(),
            inv_victim: Default::default(),
            fill_ok_l: Default::default(),
            clear: Default::default(),
        }
    }

    /// The same MLB with the fill lookahead over `candidates` (>= 1)
    /// locations (module doc, whose contract the user must keep).
    pub fn with_fill_lookahead(mut self, candidates: usize) -> Self {
        assert!(candidates >= 1, "Mlb::with_fill_lookahead: no candidate");
        self.fill_next_loc = (0..candidates).map(|_| Signal::default()).collect();
        self.fill_next_sel = (0..candidates).map(|_| Signal::default()).collect();
        self.fm_q = regs(N);
        self.fw_q = regs(N);
        self.fn_q = regs(1);
        self.fm_cand = (0..N).map(|_| Signal::default()).collect();
        self.next_is_fill = vec![Signal::default()];
        self
    }

    /// The same MLB with a range key port per entry (`rs_addr_entry`,
    /// module doc "Entry keys"), for a user that keeps copies of the key.
    pub fn with_entry_keys(mut self) -> Self {
        self.rs_addr_entry = (0..N).map(|_| Signal::default()).collect();
        self
    }

    /// The configured hit latency (1 or 2 cycles).
    pub fn hit_latency(&self) -> usize {
        1 + self.s1_rs_valid.len()
    }

    /// The configured replacement policy.
    pub fn replacement(&self) -> Replacement {
        if self.plru.is_empty() {
            Replacement::RoundRobin
        } else {
            Replacement::Plru
        }
    }
}

/// `n` registers (0 for a stage that is not built).
fn regs<T: Synth>(n: usize) -> Vec<DFF<T>> {
    (0..n).map(|_| DFF::default()).collect()
}

/// The 2N-1 nodes of one tree (heap order).
fn tree<T: Synth>(n: usize) -> Vec<Signal<Local, T>> {
    (0..2 * n - 1).map(|_| Signal::default()).collect()
}

impl<const N: usize, const IW: usize> Default for Mlb<N, IW> {
    fn default() -> Self {
        Self::new(Replacement::Plru, 1)
    }
}

impl<const N: usize, const IW: usize> Logic for Mlb<N, IW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, rs_hit_r, rs_multi_r, rs_way_r, rs_loc_r, rs_base_r, rs_size_r, rs_tag_r, ls_hit_r, ls_multi_r, ls_way_r, ls_base_r, ls_size_r, ls_tag_r
        );
        self.clear.next = self.flush.val() || self.reset.val();
        // Searches, invalidate matches and free entries, all on the state at
        // the start of the cycle.
        for i in 0..N {
            self.valid[i].clock.next = self.clock.val();
            self.loc[i].clock.next = self.clock.val();
            self.base[i].clock.next = self.clock.val();
            self.size[i].clock.next = self.clock.val();
            self.tag[i].clock.next = self.clock.val();
            self.bxs[i].clock.next = self.clock.val();
            self.rs_key[i].next = self.rs_addr.val();
        }
        for i in 0..self.rs_addr_entry.len() {
            self.rs_key[i].next = self.rs_addr_entry[i].val();
        }
        for i in 0..N {
            // Carry-save form of `a - base < size` (module doc).
            self.cs_s[i].next = self.rs_key[i].val() ^ self.bxs[i].q.val();
            self.cs_c[i].next = (self.rs_key[i].val() & self.bxs[i].q.val()) | (!self.base[i].q.val() & !self.bxs[i].q.val());
            self.cs_nr[i].next = !((self.cs_c[i].val() << 1_u64) | self.one_56.val());
            self.rs_match[i].next = self.rs_valid.val()
                && self.valid[i].q.val()
                && (self.base[i].q.val() <= self.rs_key[i].val())
                && !((self.cs_s[i].val() >= self.cs_nr[i].val())
                    && ((self.cs_c[i].val() & self.top_56.val()) != self.zero_56.val()));
            self.ls_match[i].next = self.ls_valid.val()
                && self.valid[i].q.val()
                && (self.loc[i].q.val() == self.ls_loc.val());
            // (At hit latency 2 the registered matches instead, below.)
            self.rs_req[i].next = self.rs_match[i].val();
            self.ls_req[i].next = self.ls_match[i].val();
            self.inv_match[i].next = self.inv_valid.val()
                && self.valid[i].q.val()
                && (self.loc[i].q.val() == self.inv_loc.val());
            self.fill_match[i].next = self.valid[i].q.val() && (self.loc[i].q.val() == self.fill_loc.val());
            self.free_pe.req[i].next = !self.valid[i].q.val();
        }
        // The encoders' requests: at hit latency 2 the registered matches.
        for i in 0..self.s1_rs_match.len() {
            self.rs_req[i].next = self.s1_rs_match[i].q.val();
            self.ls_req[i].next = self.s1_ls_match[i].q.val();
        }
        for i in 0..N {
            self.rs_pe.req[i].next = self.rs_req[i].val();
            self.ls_pe.req[i].next = self.ls_req[i].val();
        }
        // Fill lookahead: the matches come from registers instead (module
        // doc); the compares above are then unused and synthesized away.
        for z in 0..self.fn_q.len() {
            for i in 0..self.fm_q.len() {
                self.fill_match[i].next = self.fm_q[i].q.val();
                if self.fw_q[i].q.val() {
                    self.fill_match[i].next = self.fn_q[z].q.val();
                }
            }
        }
        self.fill_held.next = false;
        for i in 0..N {
            if self.fill_match[i].val() {
                self.fill_held.next = true;
            }
        }
        self.fill_present.next = self.fill_valid.val() && self.fill_held.val();
        // Victim: the lowest invalid entry, else the policy's choice.
        self.victim_l.next = self.zero_iw.val();
        self.repl_state.next = self.zero_n.val();
        for k in 0..self.plru.len() {
            self.victim_l.next = self.plru[k].victim.val();
            self.repl_state.next = self.plru[k].state.val();
        }
        for k in 0..self.rr.len() {
            self.victim_l.next = self.rr[k].victim.val();
            self.repl_state.next = self.rr[k].state.val();
        }
        if self.free_pe.any.val() {
            self.victim_l.next = self.free_pe.index.val();
        }
        // The fill is dropped by a flush/reset, by an invalidate of the same
        // location, and by an invalidate that clears the victim way.
        for i in 0..N {
            self.pol_oh[i].next = false;
            for k in 0..self.plru.len() {
                self.pol_oh[i].next =
                    ((self.plru[k].state.val() ^ self.path_to[i].val()) & self.path_mask[i].val()) == self.zero_n.val();
            }
            for k in 0..self.rr.len() {
                self.pol_oh[i].next = self.rr[k].victim.val() == self.way[i].val();
            }
            self.victim_oh[i].next = self.pol_oh[i].val();
            if self.free_pe.any.val() {
                self.victim_oh[i].next = self.free_pe.onehot[i].val();
            }
        }
        self.fill_base_ok.next = self.fill_valid.val()
            && !self.clear.val()
            && !self.fill_held.val()
            && !(self.inv_valid.val() && (self.inv_loc.val() == self.fill_loc.val()));
        self.inv_victim.next = false;
        for i in 0..N {
            if self.inv_match[i].val() && self.victim_oh[i].val() {
                self.inv_victim.next = true;
            }
        }
        self.fill_ok_l.next = self.fill_base_ok.val() && !self.inv_victim.val();
        self.victim.next = self.victim_l.val();
        self.fill_ok.next = self.fill_ok_l.val();
        // The tree PLRU's touches by the range and location hits: each
        // encoder's `path` and `lower_any` bits packed into words, node by
        // node (word n+1 is word n with node n's bit; synthesis leaves
        // wires: rust-hdl cannot assemble a word from bits otherwise).
        for n in 0..self.ta_mask.len() {
            self.ta_mask[n].next = self.zero_n.val();
            self.ta_set[n].next = self.zero_n.val();
            self.tb_mask[n].next = self.zero_n.val();
            self.tb_set[n].next = self.zero_n.val();
        }
        for n in 0..self.node_bit.len() {
            self.ta_mask[n + 1].next = self.ta_mask[n].val();
            self.ta_set[n + 1].next = self.ta_set[n].val();
            self.tb_mask[n + 1].next = self.tb_mask[n].val();
            self.tb_set[n + 1].next = self.tb_set[n].val();
            if self.rs_pe.path[n].val() {
                self.ta_mask[n + 1].next = self.ta_mask[n].val() | self.node_bit[n].val();
            }
            if self.rs_pe.lower_any[n].val() {
                self.ta_set[n + 1].next = self.ta_set[n].val() | self.node_bit[n].val();
            }
            if self.ls_pe.path[n].val() {
                self.tb_mask[n + 1].next = self.tb_mask[n].val() | self.node_bit[n].val();
            }
            if self.ls_pe.lower_any[n].val() {
                self.tb_set[n + 1].next = self.tb_set[n].val() | self.node_bit[n].val();
            }
        }
        // Replacement updates: range hit, location hit, fill (a clear wins).
        for k in 0..self.plru.len() {
            self.plru[k].clock.next = self.clock.val();
            self.plru[k].clear.next = self.clear.val();
            // The range and location hits' tree paths, packed (above); at hit
            // latency 2 the encoders report the previous cycle's searches,
            // whose touches a clear in that cycle dropped.
            for last in (N - 1)..N {
                self.plru[k].touch_a_mask.next = self.ta_mask[last].val();
                self.plru[k].touch_a_set.next = self.ta_set[last].val();
                self.plru[k].touch_b_mask.next = self.tb_mask[last].val();
                self.plru[k].touch_b_set.next = self.tb_set[last].val();
            }
            for j in 0..self.s1_clear.len() {
                if self.s1_clear[j].q.val() {
                    self.plru[k].touch_a_mask.next = self.zero_n.val();
                    self.plru[k].touch_b_mask.next = self.zero_n.val();
                }
            }
            self.plru[k].touch_c_valid.next = self.fill_ok_l.val();
            self.plru[k].touch_c_way.next = self.victim_l.val();
        }
        for k in 0..self.rr.len() {
            self.rr[k].clock.next = self.clock.val();
            self.rr[k].clear.next = self.clear.val();
            // Only a fill that replaces a valid entry advances the pointer.
            self.rr[k].advance.next = self.fill_ok_l.val() && !self.free_pe.any.val();
        }
        // Entry writes: flush > invalidate > fill. Storage holds unless written.
        for i in 0..N {
            // = fill_ok && victim == i (victim_oh is one-hot, so inv_victim
            // is inv_match[i] here), without the OR over all entries.
            self.write_en[i].next = self.fill_base_ok.val() && self.victim_oh[i].val() && !self.inv_match[i].val();
            self.valid[i].d.next = self.valid[i].q.val();
            self.loc[i].d.next = self.loc[i].q.val();
            self.base[i].d.next = self.base[i].q.val();
            self.size[i].d.next = self.size[i].q.val();
            self.tag[i].d.next = self.tag[i].q.val();
            self.bxs[i].d.next = self.bxs[i].q.val();
            if self.write_en[i].val() {
                self.valid[i].d.next = true;
                self.loc[i].d.next = self.fill_loc.val();
                self.base[i].d.next = self.fill_base.val();
                self.size[i].d.next = self.fill_size.val();
                self.tag[i].d.next = self.fill_tag.val();
                self.bxs[i].d.next = self.fill_base.val() ^ self.fill_size.val();
            }
            if self.inv_match[i].val() || self.clear.val() {
                self.valid[i].d.next = false;
            }
        }
        // Fill lookahead: entry i after the edge, against the next fill's
        // location: written (by this fill), emptied, or as it is.
        // (The candidates' compares need only registers; the pick comes late.)
        for z in 0..self.next_is_fill.len() {
            self.next_is_fill[z].next = false;
            for i in 0..self.fm_cand.len() {
                self.fm_cand[i].next = false;
            }
            for k in 0..self.fill_next_loc.len() {
                if self.fill_next_sel[k].val() && (self.fill_next_loc[k].val() == self.fill_loc.val()) {
                    self.next_is_fill[z].next = true;
                }
                for i in 0..self.fm_cand.len() {
                    if self.fill_next_sel[k].val() && (self.loc[i].q.val() == self.fill_next_loc[k].val()) {
                        self.fm_cand[i].next = true;
                    }
                }
            }
            self.fn_q[z].clock.next = self.clock.val();
            self.fn_q[z].d.next = self.next_is_fill[z].val();
            for i in 0..self.fm_q.len() {
                self.fm_q[i].clock.next = self.clock.val();
                self.fw_q[i].clock.next = self.clock.val();
                // (A written entry is neither invalidated nor cleared.)
                self.fm_q[i].d.next = self.valid[i].q.val() && self.fm_cand[i].val() && !self.inv_match[i].val() && !self.clear.val();
                self.fw_q[i].d.next = self.write_en[i].val();
            }
        }
        // The search the output stage reports: this cycle's (reset
        // suppresses its hit)...
        self.out_rs_valid.next = self.rs_valid.val();
        self.out_rs_hit.next = self.rs_pe.any.val() && !self.reset.val();
        self.out_rs_multi.next = self.rs_pe.multi.val() && !self.reset.val();
        self.out_rs_way.next = self.rs_pe.index.val();
        self.out_ls_valid.next = self.ls_valid.val();
        self.out_ls_hit.next = self.ls_pe.any.val() && !self.reset.val();
        self.out_ls_multi.next = self.ls_pe.multi.val() && !self.reset.val();
        self.out_ls_way.next = self.ls_pe.index.val();
        for i in 0..N {
            // (Reset suppresses the data with the hit.)
            self.out_rs_take[i].next = self.rs_match[i].val() && !self.reset.val();
            self.out_ls_take[i].next = self.ls_match[i].val() && !self.reset.val();
        }
        // ...or, at hit latency 2, the previous cycle's: its matches were
        // registered, and the encoders work on them now.
        for k in 0..self.s1_rs_valid.len() {
            self.s1_rs_valid[k].clock.next = self.clock.val();
            self.s1_ls_valid[k].clock.next = self.clock.val();
            self.s1_rs_valid[k].d.next = self.rs_valid.val();
            self.s1_ls_valid[k].d.next = self.ls_valid.val();
            self.out_rs_valid.next = self.s1_rs_valid[k].q.val();
            self.out_rs_hit.next = self.rs_pe.any.val();
            self.out_rs_multi.next = self.rs_pe.multi.val();
            self.out_ls_valid.next = self.s1_ls_valid[k].q.val();
            self.out_ls_hit.next = self.ls_pe.any.val();
            self.out_ls_multi.next = self.ls_pe.multi.val();
        }
        for j in 0..self.s1_clear.len() {
            self.s1_clear[j].clock.next = self.clock.val();
            self.s1_clear[j].d.next = self.clear.val();
        }
        for i in 0..self.s1_rs_match.len() {
            self.s1_rs_match[i].clock.next = self.clock.val();
            self.s1_ls_match[i].clock.next = self.clock.val();
            self.s1_rs_match[i].d.next = self.rs_match[i].val() && !self.reset.val();
            self.s1_ls_match[i].d.next = self.ls_match[i].val() && !self.reset.val();
            // The fill of the search's cycle replaced the entry it hit:
            // a miss, with no data.
            self.s1_written[i].clock.next = self.clock.val();
            self.s1_written[i].d.next = self.write_en[i].val();
            self.out_rs_take[i].next = self.s1_rs_match[i].q.val() && !self.s1_written[i].q.val();
            self.out_ls_take[i].next = self.s1_ls_match[i].q.val() && !self.s1_written[i].q.val();
            if self.s1_written[i].q.val() && self.rs_pe.onehot[i].val() {
                self.out_rs_hit.next = false;
            }
            if self.s1_written[i].q.val() && self.ls_pe.onehot[i].val() {
                self.out_ls_hit.next = false;
            }
        }
        // Output stage: registered results.
        self.rs_hit_r.d.next = self.out_rs_hit.val();
        self.rs_multi_r.d.next = self.out_rs_multi.val();
        self.ls_hit_r.d.next = self.out_ls_hit.val();
        self.ls_multi_r.d.next = self.out_ls_multi.val();
        // Result data: a selection tree, log2(N) multiplexers deep (the
        // lane checks' shape). Each node takes its lower child's data when
        // some entry of that subtree matches (the encoder's `lower_any`),
        // else its upper child's, so the
        // root is the lowest match's; a leaf is its entry's data when the
        // entry may be taken (`out_*_take`), else 0, so no match, or a
        // lowest match suppressed by reset or by its cycle's fill, gives 0.
        // The selects are ORs of the match bits (at hit latency 2 from
        // registers) and settle early, where a one-hot select from the
        // encoder waits for its second pass. Each tree is heap-ordered:
        // node k's children are 2k+1 (the lower entries) and 2k+2, leaves
        // N-1.. are the entries.
        for leaf0 in (N - 1)..N {
            for i in 0..N {
                self.rs_sel_loc[leaf0 + i].next = self.zero_51.val();
                self.rs_sel_base[leaf0 + i].next = self.zero_56.val();
                self.rs_sel_size[leaf0 + i].next = self.zero_56.val();
                self.rs_sel_tag[leaf0 + i].next = self.zero_8.val();
                if self.out_rs_take[i].val() {
                    self.rs_sel_loc[leaf0 + i].next = self.loc[i].q.val();
                    self.rs_sel_base[leaf0 + i].next = self.base[i].q.val();
                    self.rs_sel_size[leaf0 + i].next = self.size[i].q.val();
                    self.rs_sel_tag[leaf0 + i].next = self.tag[i].q.val();
                }
                self.ls_sel_base[leaf0 + i].next = self.zero_56.val();
                self.ls_sel_size[leaf0 + i].next = self.zero_56.val();
                self.ls_sel_tag[leaf0 + i].next = self.zero_8.val();
                if self.out_ls_take[i].val() {
                    self.ls_sel_base[leaf0 + i].next = self.base[i].q.val();
                    self.ls_sel_size[leaf0 + i].next = self.size[i].q.val();
                    self.ls_sel_tag[leaf0 + i].next = self.tag[i].q.val();
                }
            }
        }
        // Internal nodes from the last one down to the root (children first;
        // `top` is a one-value loop naming N-2 for the Verilog emitter).
        for top in N.saturating_sub(2)..N.saturating_sub(1) {
            for j in 0..(N - 1) {
                self.rs_sel_loc[top - j].next = self.rs_sel_loc[2 * (top - j) + 2].val();
                self.rs_sel_base[top - j].next = self.rs_sel_base[2 * (top - j) + 2].val();
                self.rs_sel_size[top - j].next = self.rs_sel_size[2 * (top - j) + 2].val();
                self.rs_sel_tag[top - j].next = self.rs_sel_tag[2 * (top - j) + 2].val();
                if self.rs_pe.lower_any[top - j].val() {
                    self.rs_sel_loc[top - j].next = self.rs_sel_loc[2 * (top - j) + 1].val();
                    self.rs_sel_base[top - j].next = self.rs_sel_base[2 * (top - j) + 1].val();
                    self.rs_sel_size[top - j].next = self.rs_sel_size[2 * (top - j) + 1].val();
                    self.rs_sel_tag[top - j].next = self.rs_sel_tag[2 * (top - j) + 1].val();
                }
                self.ls_sel_base[top - j].next = self.ls_sel_base[2 * (top - j) + 2].val();
                self.ls_sel_size[top - j].next = self.ls_sel_size[2 * (top - j) + 2].val();
                self.ls_sel_tag[top - j].next = self.ls_sel_tag[2 * (top - j) + 2].val();
                if self.ls_pe.lower_any[top - j].val() {
                    self.ls_sel_base[top - j].next = self.ls_sel_base[2 * (top - j) + 1].val();
                    self.ls_sel_size[top - j].next = self.ls_sel_size[2 * (top - j) + 1].val();
                    self.ls_sel_tag[top - j].next = self.ls_sel_tag[2 * (top - j) + 1].val();
                }
            }
        }
        // Data registers load on a reported request, and in the cycle after a
        // hit (to clear it); they hold otherwise (dff_setup! made them hold),
        // so synthesis gates their clock. The selection tree gives 0 unless an
        // entry is taken, so the data are 0 whenever `*_hit` is 0 and a
        // user may OR the two ports' results together with no select.
        if self.out_rs_valid.val() || self.rs_hit_r.q.val() {
            self.rs_way_r.d.next = self.out_rs_way.val();
            self.rs_loc_r.d.next = self.rs_sel_loc[0].val();
            self.rs_base_r.d.next = self.rs_sel_base[0].val();
            self.rs_size_r.d.next = self.rs_sel_size[0].val();
            self.rs_tag_r.d.next = self.rs_sel_tag[0].val();
        }
        if self.out_ls_valid.val() || self.ls_hit_r.q.val() {
            self.ls_way_r.d.next = self.out_ls_way.val();
            self.ls_base_r.d.next = self.ls_sel_base[0].val();
            self.ls_size_r.d.next = self.ls_sel_size[0].val();
            self.ls_tag_r.d.next = self.ls_sel_tag[0].val();
        }
        // The trees' outputs are what the data registers take when they load;
        // when they hold they hold 0 (the last load was the cycle after the
        // last hit, or a miss), and the trees give 0 (no entry selected). So
        // these are the registers' next values without their hold
        // multiplexer, which stays private to them (an observed multiplexer
        // output is not turned into an enable flop).
        self.nx_base.next = self.rs_sel_base[0].val() | self.ls_sel_base[0].val();
        self.nx_size.next = self.rs_sel_size[0].val() | self.ls_sel_size[0].val();
        self.nx_tag.next = self.rs_sel_tag[0].val() | self.ls_sel_tag[0].val();
        self.rs_hit.next = self.rs_hit_r.q.val();
        self.rs_multi.next = self.rs_multi_r.q.val();
        self.rs_way.next = self.rs_way_r.q.val();
        self.rs_loc.next = self.rs_loc_r.q.val();
        self.rs_base.next = self.rs_base_r.q.val();
        self.rs_size.next = self.rs_size_r.q.val();
        self.rs_tag.next = self.rs_tag_r.q.val();
        self.ls_hit.next = self.ls_hit_r.q.val();
        self.ls_multi.next = self.ls_multi_r.q.val();
        self.ls_way.next = self.ls_way_r.q.val();
        self.ls_base.next = self.ls_base_r.q.val();
        self.ls_size.next = self.ls_size_r.q.val();
        self.ls_tag.next = self.ls_tag_r.q.val();
    }
}
