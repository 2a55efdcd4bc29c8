//! `Memcheck`: the combinational MEMCHECK.G and MEMCHECK.S decisions (spec
//! section 4, docs/design.md "MEMCHECK.G"). The golden model is
//! `sim::memcheck` (`memcheck_g_decide`, `check_meta`, `memcheck_s`).
//! MEM_ERROR and the traversal faults are the MLU top's business.
//!
//! The whole-access bounds test `base <= a && a + w <= base + size` is an
//! [`InBounds`] in the operands' own width (56 bits for MEMCHECK.G, 32 for
//! MEMCHECK.S): exact for every operand value, so `base + size` may exceed
//! 2^56, and two carry chains deep side by side rather than three in series.
//!
//! Ports (all combinational):
//! MEMCHECK.G
//! - `g_ptr` (64): the tagged pointer p; `g_width` (5): access bytes, 1, 2, 4,
//!   8 or 16 (any value is computed exactly, as in the model);
//!   `g_loc` (64): the location operand.
//! - `g_meta_valid`, `g_meta_base`, `g_meta_size` (56), `g_meta_tag` (8): the
//!   metadata of `g_loc` (from an MLB location hit or the memory fetch).
//! - `g_need_meta`: tag(p) != 0 and the location is neither 0 nor NO_META, so
//!   the decision needs the metadata (the MLU looks it up only then).
//! - `g_done`: the decision is final (`!g_need_meta || g_meta_valid`).
//! - `g_fault` (3): the fault code (docs/design.md encoding) in the design's
//!   order: tag 0 passes; location 0/NO_META: NO_META; metadata tag FREED:
//!   USE_AFTER_FREE; tag mismatch: TAG_MISMATCH; bounds: OUT_OF_BOUNDS. It is
//!   NONE while `g_done` is 0.
//! - `g_fault` split for a pipeline that registers the bounds test's late
//!   result apart from the rest (the MLU unit's lane checks): `g_pre` (3),
//!   the fault with the bounds test passed (NONE, NO_META, USE_AFTER_FREE or
//!   TAG_MISMATCH); `g_bchk`, the bounds test decides (metadata valid, tag
//!   neither FREED nor mismatched: `g_pre` is NONE); `g_ok`, the access is
//!   in bounds. `g_fault` = `g_pre`, or OUT_OF_BOUNDS when `g_bchk` and
//!   not `g_ok`: as OUT_OF_BOUNDS is 1 and NONE 0, `g_pre | (g_bchk & !g_ok)`.
//! - `g_ok` in parts, for a pipeline that registers them rather than
//!   `g_ok` (the lane checks at two stages: the bounds compare is the last
//!   to settle): `g_ge`, `a >= base`, and the three carries `g_c1`, `g_c2`,
//!   `g_c3` of [`InBounds`], the last in its halves (`g_c3_hi_gt`,
//!   `g_c3_hi_eq`, `g_c3_lo_ge`: `g_c3 = g_c3_hi_gt | (g_c3_hi_eq &
//!   g_c3_lo_ge)`); `g_ok = g_ge & majority(g_c1, g_c2, g_c3)`.
//! - `g_addr` (56): untag(p), the address passed on when there is no fault.
//!
//! MEMCHECK.S (shared memory): 32-bit addresses, as shared-memory windows are
//! (docs/design.md "RTL conventions").
//! - `s_addr`, `s_base`, `s_size` (32), `s_width` (5).
//! - `s_ok`: in bounds; `s_fault` (3): NONE or SHARED_OOB.
//! - `s_ok` in parts, as `g_ok`'s (the lane checks at two stages register
//!   these): `s_ge`, `s_c1`, `s_c2`, and `s_c3` in halves (`s_c3_hi_gt`,
//!   `s_c3_hi_eq`, `s_c3_lo_ge`); `s_ok = s_ge & majority(s_c1, s_c2, s_c3)`.
use crate::in_bounds::InBounds;
use rust_hdl::prelude::*;
use sim::fault::FaultCode;

#[derive(LogicBlock)]
pub struct Memcheck {
    pub g_ptr: Signal<In, Bits<64>>,
    pub g_width: Signal<In, Bits<5>>,
    pub g_loc: Signal<In, Bits<64>>,
    pub g_meta_valid: Signal<In, Bit>,
    pub g_meta_base: Signal<In, Bits<56>>,
    pub g_meta_size: Signal<In, Bits<56>>,
    pub g_meta_tag: Signal<In, Bits<8>>,
    pub g_need_meta: Signal<Out, Bit>,
    pub g_done: Signal<Out, Bit>,
    pub g_fault: Signal<Out, Bits<3>>,
    pub g_addr: Signal<Out, Bits<56>>,
    pub g_pre: Signal<Out, Bits<3>>,
    pub g_bchk: Signal<Out, Bit>,
    pub g_ok: Signal<Out, Bit>,
    pub g_ge: Signal<Out, Bit>,
    pub g_c1: Signal<Out, Bit>,
    pub g_c2: Signal<Out, Bit>,
    pub g_c3_hi_gt: Signal<Out, Bit>,
    pub g_c3_hi_eq: Signal<Out, Bit>,
    pub g_c3_lo_ge: Signal<Out, Bit>,
    pub s_addr: Signal<In, Bits<32>>,
    pub s_width: Signal<In, Bits<5>>,
    pub s_base: Signal<In, Bits<32>>,
    pub s_size: Signal<In, Bits<32>>,
    pub s_ok: Signal<Out, Bit>,
    pub s_fault: Signal<Out, Bits<3>>,
    pub s_ge: Signal<Out, Bit>,
    pub s_c1: Signal<Out, Bit>,
    pub s_c2: Signal<Out, Bit>,
    pub s_c3_hi_gt: Signal<Out, Bit>,
    pub s_c3_hi_eq: Signal<Out, Bit>,
    pub s_c3_lo_ge: Signal<Out, Bit>,
    // Fault codes.
    f_none: Constant<Bits<3>>,
    f_oob: Constant<Bits<3>>,
    f_uaf: Constant<Bits<3>>,
    f_tag: Constant<Bits<3>>,
    f_nometa: Constant<Bits<3>>,
    f_shared: Constant<Bits<3>>,
    tag_zero: Constant<Bits<8>>,
    tag_freed: Constant<Bits<8>>,
    loc_zero: Constant<Bits<64>>,
    loc_no_meta: Constant<Bits<64>>,
    // Width zero-extension by decode: `w5[k]` = k, `w56[k]`/`w32[k]` = k.
    w5: [Constant<Bits<5>>; 32],
    w56: [Constant<Bits<56>>; 32],
    w32: [Constant<Bits<32>>; 32],
    zero_56: Constant<Bits<56>>,
    zero_32: Constant<Bits<32>>,
    g_a: Signal<Local, Bits<56>>,
    g_tag: Signal<Local, Bits<8>>,
    g_w: Signal<Local, Bits<56>>,
    g_bounds: InBounds<56>,
    s_w: Signal<Local, Bits<32>>,
    s_bounds: InBounds<32>,
}

impl Default for Memcheck {
    fn default() -> Self {
        let code = |f: FaultCode| Constant::new(bits::<3>(f.bits() as u64));
        Self {
            g_ptr: Default::default(),
            g_width: Default::default(),
            g_loc: Default::default(),
            g_meta_valid: Default::default(),
            g_meta_base: Default::default(),
            g_meta_size: Default::default(),
            g_meta_tag: Default::default(),
            g_need_meta: Default::default(),
            g_done: Default::default(),
            g_fault: Default::default(),
            g_addr: Default::default(),
            g_pre: Default::default(),
            g_bchk: Default::default(),
            g_ok: Default::default(),
            g_ge: Default::default(),
            g_c1: Default::default(),
            g_c2: Default::default(),
            g_c3_hi_gt: Default::default(),
            g_c3_hi_eq: Default::default(),
            g_c3_lo_ge: Default::default(),
            s_addr: Default::default(),
            s_width: Default::default(),
            s_base: Default::default(),
            s_size: Default::default(),
            s_ok: Default::default(),
            s_fault: Default::default(),
            s_ge: Default::default(),
            s_c1: Default::default(),
            s_c2: Default::default(),
            s_c3_hi_gt: Default::default(),
            s_c3_hi_eq: Default::default(),
            s_c3_lo_ge: Default::default(),
            f_none: code(FaultCode::None),
            f_oob: code(FaultCode::OutOfBounds),
            f_uaf: code(FaultCode::UseAfterFree),
            f_tag: code(FaultCode::TagMismatch),
            f_nometa: code(FaultCode::NoMeta),
            f_shared: code(FaultCode::SharedOob),
            tag_zero: Constant::new(bits::<8>(sim::pointer::TAG_UNCHECKED as u64)),
            tag_freed: Constant::new(bits::<8>(sim::pointer::TAG_FREED as u64)),
            loc_zero: Constant::new(Bits::default()),
            loc_no_meta: Constant::new(bits::<64>(sim::pointer::NO_META)),
            w5: std::array::from_fn(|k| Constant::new(bits::<5>(k as u64))),
            w56: std::array::from_fn(|k| Constant::new(bits::<56>(k as u64))),
            w32: std::array::from_fn(|k| Constant::new(bits::<32>(k as u64))),
            zero_56: Constant::new(Bits::default()),
            zero_32: Constant::new(Bits::default()),
            g_a: Default::default(),
            g_tag: Default::default(),
            g_w: Default::default(),
            g_bounds: Default::default(),
            s_w: Default::default(),
            s_bounds: Default::default(),
        }
    }
}

impl Logic for Memcheck {
    #[hdl_gen]
    fn update(&mut self) {
        // MEMCHECK.G
        self.g_a.next = self.g_ptr.val().get_bits::<56>(0);
        self.g_tag.next = self.g_ptr.val().get_bits::<8>(56);
        self.g_w.next = self.zero_56.val();
        self.s_w.next = self.zero_32.val();
        for k in 0..32 {
            if self.g_width.val() == self.w5[k].val() {
                self.g_w.next = self.w56[k].val();
            }
            if self.s_width.val() == self.w5[k].val() {
                self.s_w.next = self.w32[k].val();
            }
        }
        self.g_bounds.a.next = self.g_a.val();
        self.g_bounds.base.next = self.g_meta_base.val();
        self.g_bounds.size.next = self.g_meta_size.val();
        self.g_bounds.w.next = self.g_w.val();
        self.g_addr.next = self.g_a.val();
        self.g_need_meta.next = false;
        self.g_done.next = true;
        self.g_pre.next = self.f_none.val();
        self.g_bchk.next = false;
        if self.g_tag.val() != self.tag_zero.val() {
            if (self.g_loc.val() == self.loc_zero.val()) || (self.g_loc.val() == self.loc_no_meta.val()) {
                self.g_pre.next = self.f_nometa.val();
            } else {
                self.g_need_meta.next = true;
                self.g_done.next = self.g_meta_valid.val();
                if self.g_meta_valid.val() {
                    if self.g_meta_tag.val() == self.tag_freed.val() {
                        self.g_pre.next = self.f_uaf.val();
                    } else if self.g_meta_tag.val() != self.g_tag.val() {
                        self.g_pre.next = self.f_tag.val();
                    } else {
                        self.g_bchk.next = true;
                    }
                }
            }
        }
        self.g_ok.next = self.g_bounds.ok.val();
        self.g_ge.next = self.g_bounds.ge.val();
        self.g_c1.next = self.g_bounds.carry1.val();
        self.g_c2.next = self.g_bounds.carry2.val();
        self.g_c3_hi_gt.next = self.g_bounds.c3_hi_gt.val();
        self.g_c3_hi_eq.next = self.g_bounds.c3_hi_eq.val();
        self.g_c3_lo_ge.next = self.g_bounds.c3_lo_ge.val();
        self.g_fault.next = self.g_pre.val();
        if self.g_bchk.val() & !self.g_ok.val() {
            self.g_fault.next = self.f_oob.val();
        }
        // MEMCHECK.S
        self.s_bounds.a.next = self.s_addr.val();
        self.s_bounds.base.next = self.s_base.val();
        self.s_bounds.size.next = self.s_size.val();
        self.s_bounds.w.next = self.s_w.val();
        self.s_ok.next = self.s_bounds.ok.val();
        self.s_ge.next = self.s_bounds.ge.val();
        self.s_c1.next = self.s_bounds.carry1.val();
        self.s_c2.next = self.s_bounds.carry2.val();
        self.s_c3_hi_gt.next = self.s_bounds.c3_hi_gt.val();
        self.s_c3_hi_eq.next = self.s_bounds.c3_hi_eq.val();
        self.s_c3_lo_ge.next = self.s_bounds.c3_lo_ge.val();
        self.s_fault.next = self.f_none.val();
        if !self.s_ok.val() {
            self.s_fault.next = self.f_shared.val();
        }
    }
}
