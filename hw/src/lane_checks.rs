//! `LaneChecks<L, LW>`: the lane checks of a warp-wide MEMCHECK (spec
//! section 6): L lanes checked in parallel against one piece of metadata,
//! each in the fault order of spec section 4, and the lowest faulting lane.
//! Combinational. The golden model is `sim::memcheck::check_lanes`.
//!
//! Each lane is a [`Memcheck`] (the scalar datapath), so a lane decides
//! exactly as the scalar MLU does. The lowest faulting lane and its fault
//! come out of one selection tree, log2 L multiplexers deep: each node
//! keeps its lower half's (lane, fault) if that half has a fault, else its
//! upper half's. (A priority encoder's one-hot word followed by an AND-OR
//! of the faults was twice as deep, and was the unit's response-fault path.)
//!
//! `stages` (1 or 2, [`LaneChecks::new`]): at 2 each lane's fault is
//! registered and the lowest faulting lane is picked in the next cycle, so
//! the outputs answer the inputs of the cycle before (one lane compare and
//! one reduction per cycle instead of both). At 1 it is combinational and
//! `clock` is unused. A lane's fault is registered in two parts
//! ([`Memcheck`]'s `g_pre`/`g_bchk`/`g_ok`): the fault were the access in
//! bounds (3 bits), and `bfail`, the bounds test decides and fails; the
//! fault is `pre | code(bfail)` after the register, with code 1
//! (OUT_OF_BOUNDS) or 5 (SHARED_OOB). MEMCHECK.G's bounds test, the last to
//! settle, is registered in its parts (`g_ge` and the three carries, the
//! third in halves: `Memcheck`'s `g_c3_*`) with whether it decides, and
//! `bfail` is made after the register (one majority gate, in the stage that
//! has the slack); so is MEMCHECK.S's 32-bit test (`s_ge` and its carries;
//! registered whole, with the lane's mask and `shared` before it, it was
//! the 8-entry unit's longest path). The parts load every cycle: a load
//! enable (whether the test decides) put the 64-bit location compares
//! behind it on their path, and only the registered decision reads them.
//! Which test decides is registered per lane (`st_gchk`, `st_schk`), so
//! that no one `shared` register fans out to every lane's fault (through
//! two buffers, it was the 8-entry unit's longest path).
//!
//! # Ports (combinational unless `stages` is 2)
//! - `clock`: the stage register's clock (stages 2).
//! - `shared`: MEMCHECK.S (else MEMCHECK.G). `hwonly`: MEMCHECK.G has no
//!   location operand (HWONLY mode: `loc_meta` is ignored).
//! - `mask[i]`: lane i is active; `ptr[i]` (64): its pointer (MEMCHECK.S:
//!   bits 31..0 are the shared-window address).
//! - `width[i]` (5): lane i's access bytes, the same for every lane of an
//!   instruction, per lane for the same reason as the metadata (below);
//!   `loc_meta`: MEMCHECK.G's location operand names metadata (it is
//!   neither 0 nor NO_META), all a lane needs of it. A one-bit port so the
//!   user can compute it a stage early: the two 64-bit compares behind it,
//!   before every lane's fault order, were the MLU unit's longest path.
//! - `meta_valid` with `meta_base[i]`, `meta_size[i]` (56), `meta_tag[i]`
//!   (8): the metadata, when the lookup found it; else `meta_fault` (3): the
//!   lookup's fault (NO_META, TRAVERSAL_LIMIT or MEM_ERROR), given to every
//!   tagged lane that needs metadata. The metadata is one allocation's, but
//!   each lane has its own port, so the user can drive groups of lanes from
//!   copies of its metadata register: one register bit driving 32 lanes'
//!   compares (some 100 gate inputs) was the MLU unit's longest path,
//!   through a buffer tree three deep. Only active lanes read theirs.
//! - `sbase[i]`, `ssize[i]` (32): MEMCHECK.S's compile-time window, per lane
//!   for the same reason as the metadata.
//! - `pass[i]`: lane i is active and passed. `any_fault`, `fault` (3),
//!   `lane` (LW): the lowest faulting active lane and its fault (NONE and 0
//!   when none faults).
use crate::memcheck::Memcheck;
use crate::prio_enc::{array_init, index_width};
use rust_hdl::prelude::*;
use sim::fault::FaultCode;

#[derive(LogicBlock)]
pub struct LaneChecks<const L: usize, const LW: usize> {
    pub clock: Signal<In, Clock>,
    pub shared: Signal<In, Bit>,
    pub hwonly: Signal<In, Bit>,
    pub mask: [Signal<In, Bit>; L],
    pub ptr: [Signal<In, Bits<64>>; L],
    pub width: [Signal<In, Bits<5>>; L],
    pub loc_meta: Signal<In, Bit>,
    pub meta_valid: Signal<In, Bit>,
    pub meta_base: [Signal<In, Bits<56>>; L],
    pub meta_size: [Signal<In, Bits<56>>; L],
    pub meta_tag: [Signal<In, Bits<8>>; L],
    pub meta_fault: Signal<In, Bits<3>>,
    pub sbase: [Signal<In, Bits<32>>; L],
    pub ssize: [Signal<In, Bits<32>>; L],
    pub pass: [Signal<Out, Bit>; L],
    pub any_fault: Signal<Out, Bit>,
    pub fault: Signal<Out, Bits<3>>,
    pub lane: Signal<Out, Bits<LW>>,
    lanes: Vec<Memcheck>,
    // Each lane's fault this cycle in two parts (module doc), and the parts
    // and mask the reduction sees (these, or the stage registers' at stages
    // 2), and the lane's fault from them.
    lane_pre_now: [Signal<Local, Bits<3>>; L],
    lane_bfail_now: [Signal<Local, Bit>; L],
    lane_gchk_now: [Signal<Local, Bit>; L],
    lane_pre: [Signal<Local, Bits<3>>; L],
    lane_bfail: [Signal<Local, Bit>; L],
    lane_mask: [Signal<Local, Bit>; L],
    lane_fault: [Signal<Local, Bits<3>>; L],
    // The lane's failed bounds test, if any, is MEMCHECK.S's (its code is
    // SHARED_OOB, else OUT_OF_BOUNDS).
    lane_bs: [Signal<Local, Bit>; L],
    st_pre: Vec<DFF<Bits<3>>>,
    /// MEMCHECK.S bounds test's parts; MEMCHECK.G lane's bounds test
    /// decides, and its parts (module doc).
    st_sge: Vec<DFF<Bit>>,
    st_sc1: Vec<DFF<Bit>>,
    st_sc2: Vec<DFF<Bit>>,
    st_sc3h: Vec<DFF<Bit>>,
    st_sc3e: Vec<DFF<Bit>>,
    st_sc3l: Vec<DFF<Bit>>,
    st_gchk: Vec<DFF<Bit>>,
    /// MEMCHECK.S lane's bounds test decides (the lane is active), per lane
    /// (module doc).
    st_schk: Vec<DFF<Bit>>,
    st_ge: Vec<DFF<Bit>>,
    st_c1: Vec<DFF<Bit>>,
    st_c2: Vec<DFF<Bit>>,
    st_c3h: Vec<DFF<Bit>>,
    st_c3e: Vec<DFF<Bit>>,
    st_c3l: Vec<DFF<Bit>>,
    // (Stages 2 only, else empty) the third carry after the register
    // (`c3h | (c3e & c3l)`), G and S.
    lane_c3: Vec<Signal<Local, Bit>>,
    lane_sc3: Vec<Signal<Local, Bit>>,
    st_mask: Vec<DFF<Bit>>,
    // The selection tree (heap order, 2L-1 nodes, leaves L-1..; node n's
    // children 2n+1, the lower lanes, and 2n+2): some lane below faults, and
    // the lowest such lane's fault and index (NONE and 0 when none does).
    sel_any: Vec<Signal<Local, Bit>>,
    sel_fault: Vec<Signal<Local, Bits<3>>>,
    sel_lane: Vec<Signal<Local, Bits<LW>>>,
    lane_index: Vec<Constant<Bits<LW>>>,
    any_loc: Constant<Bits<64>>,
    zero_loc: Constant<Bits<64>>,
    f_none: Constant<Bits<3>>,
    f_oob: Constant<Bits<3>>,
    f_shared: Constant<Bits<3>>,
}

impl<const L: usize, const LW: usize> Default for LaneChecks<L, LW> {
    /// Combinational (one stage).
    fn default() -> Self {
        Self::new(1)
    }
}

impl<const L: usize, const LW: usize> LaneChecks<L, LW> {
    pub fn new(stages: usize) -> Self {
        assert!(L.is_power_of_two() && L <= 32 && LW == index_width(L), "LaneChecks<{L}, {LW}>: L a power of two <= 32, LW = max(1, clog2(L))");
        assert!((1..=2).contains(&stages), "LaneChecks: stages {stages} (1 or 2)");
        Self {
            clock: Default::default(),
            shared: Default::default(),
            hwonly: Default::default(),
            mask: array_init(Default::default),
            ptr: array_init(Default::default),
            width: array_init(Default::default),
            loc_meta: Default::default(),
            meta_valid: Default::default(),
            meta_base: array_init(Default::default),
            meta_size: array_init(Default::default),
            meta_tag: array_init(Default::default),
            meta_fault: Default::default(),
            sbase: array_init(Default::default),
            ssize: array_init(Default::default),
            pass: array_init(Default::default),
            any_fault: Default::default(),
            fault: Default::default(),
            lane: Default::default(),
            lanes: (0..L).map(|_| Memcheck::default()).collect(),
            lane_pre_now: array_init(Default::default),
            lane_bfail_now: array_init(Default::default),
            lane_gchk_now: array_init(Default::default),
            lane_pre: array_init(Default::default),
            lane_bfail: array_init(Default::default),
            lane_mask: array_init(Default::default),
            lane_fault: array_init(Default::default),
            lane_bs: array_init(Default::default),
            st_pre: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_sge: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_sc1: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_sc2: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_sc3h: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_sc3e: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_sc3l: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_gchk: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_schk: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_ge: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_c1: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_c2: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_c3h: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_c3e: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            st_c3l: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            lane_c3: (0..L * (stages - 1)).map(|_| Signal::default()).collect(),
            lane_sc3: (0..L * (stages - 1)).map(|_| Signal::default()).collect(),
            st_mask: (0..L * (stages - 1)).map(|_| DFF::default()).collect(),
            sel_any: (0..2 * L - 1).map(|_| Signal::default()).collect(),
            sel_fault: (0..2 * L - 1).map(|_| Signal::default()).collect(),
            sel_lane: (0..2 * L - 1).map(|_| Signal::default()).collect(),
            lane_index: (0..L).map(|i| Constant::new((i as u64).into())).collect(),
            // A location that names metadata (any other than 0 and NO_META):
            // each lane's `Memcheck` sees it or 0, so its compares of the
            // location fold to `loc_meta`. HWONLY has no location operand:
            // a tagged lane always needs the metadata.
            any_loc: Constant::new(32_u64.into()),
            zero_loc: Constant::new(0_u64.into()),
            f_none: Constant::new((FaultCode::None.bits() as u64).into()),
            f_oob: Constant::new((FaultCode::OutOfBounds.bits() as u64).into()),
            f_shared: Constant::new((FaultCode::SharedOob.bits() as u64).into()),
        }
    }
}

impl<const L: usize, const LW: usize> Logic for LaneChecks<L, LW> {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..L {
            self.lanes[i].g_ptr.next = self.ptr[i].val();
            self.lanes[i].g_width.next = self.width[i].val();
            self.lanes[i].g_loc.next = self.zero_loc.val();
            if self.loc_meta.val() || self.hwonly.val() {
                self.lanes[i].g_loc.next = self.any_loc.val();
            }
            self.lanes[i].g_meta_valid.next = self.meta_valid.val();
            self.lanes[i].g_meta_base.next = self.meta_base[i].val();
            self.lanes[i].g_meta_size.next = self.meta_size[i].val();
            self.lanes[i].g_meta_tag.next = self.meta_tag[i].val();
            self.lanes[i].s_addr.next = self.ptr[i].val().get_bits::<32>(0);
            self.lanes[i].s_width.next = self.width[i].val();
            self.lanes[i].s_base.next = self.sbase[i].val();
            self.lanes[i].s_size.next = self.ssize[i].val();
            self.lane_pre_now[i].next = self.f_none.val();
            self.lane_bfail_now[i].next = false;
            self.lane_gchk_now[i].next = false;
            if self.mask[i].val() {
                if self.shared.val() {
                    self.lane_bfail_now[i].next = !self.lanes[i].s_ok.val();
                } else if self.lanes[i].g_need_meta.val() & !self.meta_valid.val() {
                    self.lane_pre_now[i].next = self.meta_fault.val();
                } else {
                    self.lane_pre_now[i].next = self.lanes[i].g_pre.val();
                    self.lane_bfail_now[i].next = self.lanes[i].g_bchk.val() & !self.lanes[i].g_ok.val();
                    self.lane_gchk_now[i].next = self.lanes[i].g_bchk.val();
                }
            }
            self.lane_pre[i].next = self.lane_pre_now[i].val();
            self.lane_bfail[i].next = self.lane_bfail_now[i].val();
            self.lane_mask[i].next = self.mask[i].val();
            self.lane_bs[i].next = self.shared.val();
        }
        // The stage register (stages 2 only; empty otherwise).
        for i in 0..self.st_pre.len() {
            self.st_pre[i].clock.next = self.clock.val();
            self.st_sge[i].clock.next = self.clock.val();
            self.st_sc1[i].clock.next = self.clock.val();
            self.st_sc2[i].clock.next = self.clock.val();
            self.st_sc3h[i].clock.next = self.clock.val();
            self.st_sc3e[i].clock.next = self.clock.val();
            self.st_sc3l[i].clock.next = self.clock.val();
            self.st_gchk[i].clock.next = self.clock.val();
            self.st_schk[i].clock.next = self.clock.val();
            self.st_ge[i].clock.next = self.clock.val();
            self.st_c1[i].clock.next = self.clock.val();
            self.st_c2[i].clock.next = self.clock.val();
            self.st_c3h[i].clock.next = self.clock.val();
            self.st_c3e[i].clock.next = self.clock.val();
            self.st_c3l[i].clock.next = self.clock.val();
            self.st_mask[i].clock.next = self.clock.val();
            self.st_pre[i].d.next = self.lane_pre_now[i].val();
            self.st_sge[i].d.next = self.lanes[i].s_ge.val();
            self.st_sc1[i].d.next = self.lanes[i].s_c1.val();
            self.st_sc2[i].d.next = self.lanes[i].s_c2.val();
            self.st_sc3h[i].d.next = self.lanes[i].s_c3_hi_gt.val();
            self.st_sc3e[i].d.next = self.lanes[i].s_c3_hi_eq.val();
            self.st_sc3l[i].d.next = self.lanes[i].s_c3_lo_ge.val();
            self.st_gchk[i].d.next = self.lane_gchk_now[i].val();
            self.st_schk[i].d.next = self.mask[i].val() & self.shared.val();
            self.st_ge[i].d.next = self.lanes[i].g_ge.val();
            self.st_c1[i].d.next = self.lanes[i].g_c1.val();
            self.st_c2[i].d.next = self.lanes[i].g_c2.val();
            self.st_c3h[i].d.next = self.lanes[i].g_c3_hi_gt.val();
            self.st_c3e[i].d.next = self.lanes[i].g_c3_hi_eq.val();
            self.st_c3l[i].d.next = self.lanes[i].g_c3_lo_ge.val();
            self.st_mask[i].d.next = self.mask[i].val();
            self.lane_pre[i].next = self.st_pre[i].q.val();
            self.lane_sc3[i].next = self.st_sc3h[i].q.val() | (self.st_sc3e[i].q.val() & self.st_sc3l[i].q.val());
            self.lane_c3[i].next = self.st_c3h[i].q.val() | (self.st_c3e[i].q.val() & self.st_c3l[i].q.val());
            self.lane_bfail[i].next = (self.st_schk[i].q.val()
                & !(self.st_sge[i].q.val()
                    & ((self.st_sc1[i].q.val() & self.st_sc2[i].q.val())
                        | (self.st_sc1[i].q.val() & self.lane_sc3[i].val())
                        | (self.st_sc2[i].q.val() & self.lane_sc3[i].val()))))
                | (self.st_gchk[i].q.val()
                    & !(self.st_ge[i].q.val()
                        & ((self.st_c1[i].q.val() & self.st_c2[i].q.val())
                            | (self.st_c1[i].q.val() & self.lane_c3[i].val())
                            | (self.st_c2[i].q.val() & self.lane_c3[i].val()))));
            self.lane_mask[i].next = self.st_mask[i].q.val();
            self.lane_bs[i].next = self.st_schk[i].q.val();
        }
        for i in 0..L {
            // A failed bounds test's code, ORed into a `pre` of NONE.
            self.lane_fault[i].next = self.lane_pre[i].val();
            if self.lane_bfail[i].val() {
                self.lane_fault[i].next = self.lane_pre[i].val() | self.f_oob.val();
                if self.lane_bs[i].val() {
                    self.lane_fault[i].next = self.lane_pre[i].val() | self.f_shared.val();
                }
            }
            self.pass[i].next = self.lane_mask[i].val() & (self.lane_fault[i].val() == self.f_none.val());
        }
        // The selection tree: leaves, then the nodes from the last up.
        for leaf0 in (L - 1)..L {
            for i in 0..L {
                self.sel_any[leaf0 + i].next = self.lane_fault[i].val() != self.f_none.val();
                self.sel_fault[leaf0 + i].next = self.lane_fault[i].val();
                self.sel_lane[leaf0 + i].next = self.lane_index[0].val();
                if self.lane_fault[i].val() != self.f_none.val() {
                    self.sel_lane[leaf0 + i].next = self.lane_index[i].val();
                }
            }
        }
        for top in L.saturating_sub(2)..L.saturating_sub(1) {
            for j in 0..(L - 1) {
                self.sel_any[top - j].next = self.sel_any[2 * (top - j) + 1].val() | self.sel_any[2 * (top - j) + 2].val();
                self.sel_fault[top - j].next = self.sel_fault[2 * (top - j) + 2].val();
                self.sel_lane[top - j].next = self.sel_lane[2 * (top - j) + 2].val();
                if self.sel_any[2 * (top - j) + 1].val() {
                    self.sel_fault[top - j].next = self.sel_fault[2 * (top - j) + 1].val();
                    self.sel_lane[top - j].next = self.sel_lane[2 * (top - j) + 1].val();
                }
            }
        }
        self.any_fault.next = self.sel_any[0].val();
        self.fault.next = self.sel_fault[0].val();
        self.lane.next = self.sel_lane[0].val();
    }
}
