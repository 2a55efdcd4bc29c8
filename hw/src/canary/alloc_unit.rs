//! `AllocUnit`: the canary allocator unit (spec section 8) for a
//! small fixed heap geometry, result for result equal to the golden model
//! `sim::canary::heap::Heap` configured by [`CanaryParams::heap_config`].
//!
//! Geometry (fixed; the model is configured to match): 16 pages of 256 B
//! (a 4 KiB heap), classes 32/64/128/256 B (8/4/2/1 chunks per page, one
//! 8-bit usage bitfield word per page), 4 regions of 4 pages, 8 requesters.
//! Construction parameters: heap `base`, hash multipliers `k_s`/`k_mp`,
//! over-provisioning `slack`, check mode (off/free/always).
//!
//! Blocks (the model's names; the tag table only in a tagged build): `page_table` (per page: class code 0 = free or
//! class + 1, used count), usage `bitfields`, `region_full` counters, the
//! size table (RAM, one entry per 32-byte chunk slot), `hash` (constant
//! tables: the low 4 bits of S*k_s and mp*k_mp, which is the model's
//! wrapping hash mod 16), the [`Arbiter`], `canary_key` ([`SipHash`] and the
//! key register) and the always-on [`Checker`].
//!
//! # Operation (one request at a time)
//! malloc(size) from requester mp: class = smallest with chunk size >= size
//! plus overhead (16 + slack with canaries); start page = hash; the probe walks
//! pages upward (wrapping), one page per cycle: at the first page and at each
//! region boundary a full region is skipped in one cycle; the first page of
//! the class with a free chunk (lowest free slot) or an empty page (slot 0)
//! is claimed; a full sweep is `EXHAUSTED`. With canaries, SipHash(key,
//! chunk) is written at the chunk, SipHash(key, rear) at rear = chunk + 8 +
//! size + slack, and the pointer is chunk + 8.
//! free(ptr): `OUTSIDE_HEAP`, `NOT_A_CHUNK`, `DOUBLE_FREE` as the model; else
//! both canaries are read and recomputed (front/rear overflow reported with
//! the chunk in the response), the bit cleared, counts updated, an emptied
//! page released. Free with a bad canary still frees (as the model).
//! Always mode: a due background check (see checker.rs) takes priority over
//! requests in an idle cycle; it reads the chunk under the checker's cursor
//! and reports on `chk_*`.
//!
//! # Ports (sampled at the rising edge of `clock`)
//! - `reset`: synchronous; empties the heap, the checker, the arbiter.
//! - `key_we` with `key_k0`/`key_k1`: load the secret key register.
//! - `rate`: checker rate CSR, rate/256 checks per cycle (always mode).
//! - Requester i: `req_valid[i]`, `req_free[i]` (0 malloc, 1 free),
//!   `req_arg[i]` (size or pointer), held until `req_grant[i]` (a one-cycle
//!   pulse, combinational: the request is taken in that cycle). Same-cycle
//!   requests: round robin (arbiter.rs).
//! - Response (one per grant, before the next grant): `resp_valid` pulse
//!   with `resp_id`, `resp_free`, `resp_code` (RES_*), `resp_ptr` (malloc:
//!   pointer; free: chunk address), `resp_size` (free: the requested size),
//!   `resp_front`/`resp_rear` (free: that canary was overwritten),
//!   `resp_new_page` (with a successful malloc's response only: the chunk's
//!   page was empty and this malloc claimed it for its class, so the MLB
//!   may hold FREED entries of another class anywhere in the page; it is
//!   the probe's flag, kept until the next malloc's probe).
//! - Checker report: `chk_done` pulse per background check with `chk_chunk`
//!   and `chk_front`/`chk_rear` (overflow found if either is set).
//! - Directory (the registration with the MLU, docs/canary.md): `dir_g`
//!   (7: a granule of the heap) -> `dir_hit`, `dir_chunk`, `dir_size`,
//!   `dir_tag`, combinational, from [`TagTable`] when the unit is built
//!   with a tag seed (`CanaryParams::tag_seed`), else 0. A tagged unit's
//!   malloc returns the pointer with its tag in bits 63..56; free decodes
//!   the pointer without its tag and refuses one whose tag is not the
//!   chunk's current tag as `DOUBLE_FREE` (in `FDec`, with the other
//!   double free); free's commit retags the chunk FREED.
//! - Memory port (canaries): `mem_valid` with `mem_we`, `mem_addr` (byte
//!   address of an 8-byte little-endian word; rear canaries may be
//!   unaligned), `mem_wdata`. Always accepted (no ready). Each read gets one
//!   `mem_rvalid` with `mem_rdata`, at least one cycle later.
//!
//! Length: this file is over 800 lines because a rust-hdl block is one
//! `#[hdl_gen] fn update`, emitted as one Verilog always block, and rust-hdl
//! 0.46 cannot call a helper from it; the sub-blocks that can stand alone
//! are their own files (`siphash.rs` and the other files of `hw/src/canary/`).
use super::arbiter::Arbiter;
use super::checker::{Checker, OP_INSERT, OP_NONE, OP_REMOVE, OP_TAKE};
use super::siphash::SipHash;
use super::tag_table::TagTable;
use super::widen::Widen;
use crate::state_reg::StateReg;
use rust_hdl::prelude::*;
use sim::canary::heap::{CheckMode, HeapConfig};
use sim::canary::siphash::CanaryKey;

pub const PAGES: usize = 16;
pub const PAGE_SIZE: u64 = 256;
pub const REGION_PAGES: usize = 4;
pub const CLASSES: [u64; 4] = [32, 64, 128, 256];
pub const REQUESTERS: usize = 8;
pub const HEAP_BYTES: u64 = PAGES as u64 * PAGE_SIZE;

pub const RES_OK: u64 = 0;
pub const RES_ZERO_SIZE: u64 = 1;
pub const RES_TOO_LARGE: u64 = 2;
pub const RES_EXHAUSTED: u64 = 3;
pub const RES_OUTSIDE_HEAP: u64 = 4;
pub const RES_NOT_A_CHUNK: u64 = 5;
pub const RES_DOUBLE_FREE: u64 = 6;

/// Construction parameters of an [`AllocUnit`].
#[derive(Clone, Debug, PartialEq)]
pub struct CanaryParams {
    pub base: u64,
    pub k_s: u64,
    pub k_mp: u64,
    pub slack: u64,
    pub check: CheckMode,
    /// Tag the heap's pointers and answer the MLU's directory (the
    /// `TagTable`), the LFSR starting at this seed (not 0); None: untagged
    /// pointers, the `dir_*` outputs 0 (the unit on its own).
    pub tag_seed: Option<u16>,
}

impl Default for CanaryParams {
    fn default() -> Self {
        CanaryParams {
            base: 0x1000_0000,
            k_s: sim::canary::hash::DEFAULT_K_S,
            k_mp: sim::canary::hash::DEFAULT_K_MP,
            slack: 0,
            check: CheckMode::Always,
            tag_seed: None,
        }
    }
}

impl CanaryParams {
    /// The golden-model configuration this unit implements (key and checker
    /// rate are run-time registers of the unit: pass their values).
    pub fn heap_config(&self, key: CanaryKey, rate: u8) -> HeapConfig {
        HeapConfig {
            base: self.base,
            page_size: PAGE_SIZE,
            pages: PAGES as u32,
            region_pages: REGION_PAGES as u32,
            classes: CLASSES.to_vec(),
            slack: self.slack,
            k_s: self.k_s,
            k_mp: self.k_mp,
            key,
            check: self.check,
            checker_rate: rate.max(1) as f64 / 256.0,
            tag_seed: self.tag_seed,
        }
    }
    /// Bytes of canaries and slack per chunk.
    pub fn overhead(&self) -> u64 {
        if self.check.canaries() {
            16 + self.slack
        } else {
            0
        }
    }
    pub fn validate(&self) -> Result<(), String> {
        if !self.base.is_multiple_of(8) || self.base.checked_add(HEAP_BYTES).is_none() {
            return Err(format!("base: {:#x} must be 8-aligned with the 4 KiB heap below 2^64", self.base));
        }
        if self.tag_seed == Some(0) {
            return Err("tag_seed: 0 would stop the tag LFSR (give 1..=65535)".into());
        }
        if self.check.canaries() && self.slack + 16 >= CLASSES[3] {
            return Err(format!("slack: {} leaves no user bytes in the largest class", self.slack));
        }
        Ok(())
    }
}

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum AllocState {
    Idle,
    /// malloc: class select and hash.
    MDec,
    /// malloc: one page (or one full region) per cycle.
    Probe,
    /// malloc: set the bit, counts, size table; start the front canary.
    Claim,
    MFront,
    MRear,
    MIns,
    /// free: locate the pointer; read the size table.
    FDec,
    /// free or check: size table data; start the front canary read + hash.
    FSize,
    FFront,
    FRear,
    FCommit,
    FRem,
    /// background check: wait for the checker's entry.
    CTake,
    CReport,
}

#[derive(LogicBlock)]
pub struct AllocUnit {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub key_we: Signal<In, Bit>,
    pub key_k0: Signal<In, Bits<64>>,
    pub key_k1: Signal<In, Bits<64>>,
    pub rate: Signal<In, Bits<8>>,
    pub req_valid: [Signal<In, Bit>; REQUESTERS],
    pub req_free: [Signal<In, Bit>; REQUESTERS],
    pub req_arg: [Signal<In, Bits<64>>; REQUESTERS],
    pub req_grant: [Signal<Out, Bit>; REQUESTERS],
    pub resp_valid: Signal<Out, Bit>,
    pub resp_id: Signal<Out, Bits<3>>,
    pub resp_free: Signal<Out, Bit>,
    pub resp_code: Signal<Out, Bits<3>>,
    pub resp_ptr: Signal<Out, Bits<64>>,
    pub resp_size: Signal<Out, Bits<9>>,
    pub resp_front: Signal<Out, Bit>,
    pub resp_rear: Signal<Out, Bit>,
    pub resp_new_page: Signal<Out, Bit>,
    pub chk_done: Signal<Out, Bit>,
    pub chk_chunk: Signal<Out, Bits<64>>,
    pub chk_front: Signal<Out, Bit>,
    pub chk_rear: Signal<Out, Bit>,
    pub mem_valid: Signal<Out, Bit>,
    pub mem_we: Signal<Out, Bit>,
    pub mem_addr: Signal<Out, Bits<64>>,
    pub mem_wdata: Signal<Out, Bits<64>>,
    pub mem_rvalid: Signal<In, Bit>,
    pub mem_rdata: Signal<In, Bits<64>>,
    pub dir_g: Signal<In, Bits<7>>,
    pub dir_hit: Signal<Out, Bit>,
    pub dir_chunk: Signal<Out, Bits<7>>,
    pub dir_size: Signal<Out, Bits<9>>,
    pub dir_tag: Signal<Out, Bits<8>>,
    /// The registration with the MLU, built with a tag seed (0 or 1 of it).
    pub tags: Vec<TagTable>,
    /// Free's pointer as an address: the tag byte cleared when tagged.
    arg_mask: Constant<Bits<64>>,
    arg_addr: Signal<Local, Bits<64>>,
    /// Free's pointer carries a tag other than its chunk's (tagged only).
    f_stale: Signal<Local, Bit>,
    arb: Arbiter<REQUESTERS, 3>,
    sip: SipHash,
    chk: Checker,
    sizes: RAM<Bits<9>, 7>,
    w_rel: Widen<64, 12>,
    w_size: Widen<64, 9>,
    w_p12: Widen<12, 4>,
    w_pm5: Widen<5, 4>,
    w_idx12: Widen<12, 7>,
    w_tag: Widen<64, 8>,
    zero9: Constant<Bits<9>>,
    state: StateReg<AllocState>,
    pt_class: [DFF<Bits<3>>; PAGES],
    pt_used: [DFF<Bits<4>>; PAGES],
    bitfield: [DFF<Bits<8>>; PAGES],
    region_full: [DFF<Bits<3>>; 4],
    key0_r: DFF<Bits<64>>,
    key1_r: DFF<Bits<64>>,
    id_r: DFF<Bits<3>>,
    free_r: DFF<Bit>,
    arg_r: DFF<Bits<64>>,
    cls_r: DFF<Bits<2>>,
    p_r: DFF<Bits<4>>,
    vis_r: DFF<Bits<5>>,
    first_r: DFF<Bit>,
    slot_r: DFF<Bits<3>>,
    new_r: DFF<Bit>,
    rel_r: DFF<Bits<12>>,
    size_r: DFF<Bits<9>>,
    rdata_r: DFF<Bits<64>>,
    got_r: DFF<Bit>,
    hd_r: DFF<Bit>,
    front_bad_r: DFF<Bit>,
    rear_bad_r: DFF<Bit>,
    chk_r: DFF<Bit>,
    resp_valid_r: DFF<Bit>,
    resp_id_r: DFF<Bits<3>>,
    resp_free_r: DFF<Bit>,
    resp_code_r: DFF<Bits<3>>,
    resp_ptr_r: DFF<Bits<64>>,
    resp_size_r: DFF<Bits<9>>,
    resp_front_r: DFF<Bit>,
    resp_rear_r: DFF<Bit>,
    chk_done_r: DFF<Bit>,
    chk_chunk_r: DFF<Bits<64>>,
    chk_front_r: DFF<Bit>,
    chk_rear_r: DFF<Bit>,
    // Combinational (each gets a default first).
    sel_arg: Signal<Local, Bits<64>>,
    sel_free: Signal<Local, Bit>,
    check_first: Signal<Local, Bit>,
    cls_l: Signal<Local, Bits<2>>,
    h_c: Signal<Local, Bits<4>>,
    h_m: Signal<Local, Bits<4>>,
    want_code: Signal<Local, Bits<3>>,
    want_cpp: Signal<Local, Bits<4>>,
    want_mask: Signal<Local, Bits<8>>,
    want_shift: Signal<Local, Bits<4>>,
    pg_class: Signal<Local, Bits<3>>,
    pg_used: Signal<Local, Bits<4>>,
    pg_bits: Signal<Local, Bits<8>>,
    rfull: Signal<Local, Bit>,
    at_rs: Signal<Local, Bit>,
    free_bits: Signal<Local, Bits<8>>,
    slot_l: Signal<Local, Bits<3>>,
    slot_l12: Signal<Local, Bits<12>>,
    rel_claim: Signal<Local, Bits<12>>,
    slot_mask: Signal<Local, Bits<8>>,
    chunk: Signal<Local, Bits<64>>,
    rear: Signal<Local, Bits<64>>,
    idx: Signal<Local, Bits<7>>,
    outside: Signal<Local, Bit>,
    frel64: Signal<Local, Bits<64>>,
    frel: Signal<Local, Bits<12>>,
    fpage: Signal<Local, Bits<4>>,
    finpage: Signal<Local, Bits<8>>,
    f_class: Signal<Local, Bits<3>>,
    f_bits: Signal<Local, Bits<8>>,
    f_mis: Signal<Local, Bit>,
    f_bad: Signal<Local, Bit>,
    f_cpp8: Signal<Local, Bits<8>>,
    f_shifted: Signal<Local, Bits<8>>,
    f_slot: Signal<Local, Bits<3>>,
    f_cls: Signal<Local, Bits<2>>,
    f_set: Signal<Local, Bit>,
    // Constants.
    mode_always: Constant<Bit>,
    canaries: Constant<Bit>,
    base: Constant<Bits<64>>,
    off: Constant<Bits<64>>,
    lo: Constant<Bits<64>>,
    hi_rel: Constant<Bits<64>>,
    slack8: Constant<Bits<64>>,
    usable: [Constant<Bits<64>>; 4],
    cls_hash: [Constant<Bits<4>>; 4],
    req_hash: [Constant<Bits<4>>; REQUESTERS],
    cls_code: [Constant<Bits<3>>; 4],
    cls_cpp: [Constant<Bits<4>>; 4],
    cls_mask: [Constant<Bits<8>>; 4],
    cls_cpp8: [Constant<Bits<8>>; 4],
    cls_amask: [Constant<Bits<8>>; 4],
    cls_shift: [Constant<Bits<4>>; 4],
    cls_id: [Constant<Bits<2>>; 4],
    req_id: [Constant<Bits<3>>; REQUESTERS],
    page_id: [Constant<Bits<4>>; PAGES],
    region_id: [Constant<Bits<4>>; 4],
    slot_bit: [Constant<Bits<8>>; 8],
    slot_id: [Constant<Bits<3>>; 8],
    slot_id12: [Constant<Bits<12>>; 8],
    zero64: Constant<Bits<64>>,
    zero3: Constant<Bits<3>>,
    zero4: Constant<Bits<4>>,
    zero8: Constant<Bits<8>>,
    one3: Constant<Bits<3>>,
    one4: Constant<Bits<4>>,
    one8: Constant<Bits<8>>,
    three4: Constant<Bits<4>>,
    four3: Constant<Bits<3>>,
    four5: Constant<Bits<5>>,
    one5: Constant<Bits<5>>,
    sixteen5: Constant<Bits<5>>,
    zero5: Constant<Bits<5>>,
    op_none: Constant<Bits<2>>,
    op_ins: Constant<Bits<2>>,
    op_rem: Constant<Bits<2>>,
    op_take: Constant<Bits<2>>,
    res_ok: Constant<Bits<3>>,
    res_zero: Constant<Bits<3>>,
    res_large: Constant<Bits<3>>,
    res_exh: Constant<Bits<3>>,
    res_out: Constant<Bits<3>>,
    res_nac: Constant<Bits<3>>,
    res_dbl: Constant<Bits<3>>,
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(bits::<N>(v))
}

impl AllocUnit {
    pub fn new(p: &CanaryParams) -> Result<Self, String> {
        p.validate()?;
        let ov = p.overhead();
        let off = if p.check.canaries() { 8 } else { 0 };
        Ok(Self {
            clock: Default::default(),
            reset: Default::default(),
            key_we: Default::default(),
            key_k0: Default::default(),
            key_k1: Default::default(),
            rate: Default::default(),
            req_valid: std::array::from_fn(|_| Default::default()),
            req_free: std::array::from_fn(|_| Default::default()),
            req_arg: std::array::from_fn(|_| Default::default()),
            req_grant: std::array::from_fn(|_| Default::default()),
            resp_valid: Default::default(),
            resp_id: Default::default(),
            resp_free: Default::default(),
            resp_code: Default::default(),
            resp_ptr: Default::default(),
            resp_size: Default::default(),
            resp_front: Default::default(),
            resp_rear: Default::default(),
            resp_new_page: Default::default(),
            chk_done: Default::default(),
            chk_chunk: Default::default(),
            chk_front: Default::default(),
            chk_rear: Default::default(),
            mem_valid: Default::default(),
            mem_we: Default::default(),
            mem_addr: Default::default(),
            mem_wdata: Default::default(),
            mem_rvalid: Default::default(),
            mem_rdata: Default::default(),
            arb: Default::default(),
            sip: Default::default(),
            chk: Default::default(),
            sizes: Default::default(),
            w_rel: Default::default(),
            w_size: Default::default(),
            w_p12: Default::default(),
            w_pm5: Default::default(),
            w_idx12: Default::default(),
            w_tag: Default::default(),
            state: Default::default(),
            pt_class: std::array::from_fn(|_| Default::default()),
            pt_used: std::array::from_fn(|_| Default::default()),
            bitfield: std::array::from_fn(|_| Default::default()),
            region_full: std::array::from_fn(|_| Default::default()),
            key0_r: Default::default(),
            key1_r: Default::default(),
            id_r: Default::default(),
            free_r: Default::default(),
            arg_r: Default::default(),
            cls_r: Default::default(),
            p_r: Default::default(),
            vis_r: Default::default(),
            first_r: Default::default(),
            slot_r: Default::default(),
            new_r: Default::default(),
            rel_r: Default::default(),
            size_r: Default::default(),
            rdata_r: Default::default(),
            got_r: Default::default(),
            hd_r: Default::default(),
            front_bad_r: Default::default(),
            rear_bad_r: Default::default(),
            chk_r: Default::default(),
            resp_valid_r: Default::default(),
            resp_id_r: Default::default(),
            resp_free_r: Default::default(),
            resp_code_r: Default::default(),
            resp_ptr_r: Default::default(),
            resp_size_r: Default::default(),
            resp_front_r: Default::default(),
            resp_rear_r: Default::default(),
            chk_done_r: Default::default(),
            chk_chunk_r: Default::default(),
            chk_front_r: Default::default(),
            chk_rear_r: Default::default(),
            sel_arg: Default::default(),
            sel_free: Default::default(),
            check_first: Default::default(),
            cls_l: Default::default(),
            h_c: Default::default(),
            h_m: Default::default(),
            want_code: Default::default(),
            want_cpp: Default::default(),
            want_mask: Default::default(),
            want_shift: Default::default(),
            pg_class: Default::default(),
            pg_used: Default::default(),
            pg_bits: Default::default(),
            rfull: Default::default(),
            at_rs: Default::default(),
            free_bits: Default::default(),
            slot_l: Default::default(),
            slot_l12: Default::default(),
            rel_claim: Default::default(),
            slot_mask: Default::default(),
            chunk: Default::default(),
            rear: Default::default(),
            idx: Default::default(),
            outside: Default::default(),
            frel64: Default::default(),
            frel: Default::default(),
            fpage: Default::default(),
            finpage: Default::default(),
            f_class: Default::default(),
            f_bits: Default::default(),
            f_mis: Default::default(),
            f_bad: Default::default(),
            f_cpp8: Default::default(),
            f_shifted: Default::default(),
            f_slot: Default::default(),
            f_cls: Default::default(),
            f_set: Default::default(),
            dir_g: Default::default(),
            dir_hit: Default::default(),
            dir_chunk: Default::default(),
            dir_size: Default::default(),
            dir_tag: Default::default(),
            tags: p.tag_seed.map(TagTable::new).into_iter().collect(),
            arg_mask: k(if p.tag_seed.is_some() { (1 << 56) - 1 } else { u64::MAX }),
            arg_addr: Default::default(),
            f_stale: Default::default(),
            mode_always: Constant::new(p.check == CheckMode::Always),
            canaries: Constant::new(p.check.canaries()),
            base: k(p.base),
            off: k(off),
            lo: k(p.base + off),
            hi_rel: k(HEAP_BYTES - off),
            slack8: k(p.slack + 8),
            usable: std::array::from_fn(|c| k(CLASSES[c] - ov)),
            // The model's hash mod 16 is the low 4 bits of the wrapping sum.
            cls_hash: std::array::from_fn(|c| k(CLASSES[c].wrapping_mul(p.k_s) & 15)),
            req_hash: std::array::from_fn(|i| k((i as u64).wrapping_mul(p.k_mp) & 15)),
            cls_code: std::array::from_fn(|c| k(c as u64 + 1)),
            cls_cpp: std::array::from_fn(|c| k(PAGE_SIZE / CLASSES[c])),
            cls_cpp8: std::array::from_fn(|c| k(PAGE_SIZE / CLASSES[c])),
            cls_mask: std::array::from_fn(|c| k((1u64 << (PAGE_SIZE / CLASSES[c])) - 1)),
            cls_amask: std::array::from_fn(|c| k((CLASSES[c] - 1) & 0xff)),
            cls_shift: std::array::from_fn(|c| k(CLASSES[c].trailing_zeros() as u64)),
            cls_id: std::array::from_fn(|c| k(c as u64)),
            req_id: std::array::from_fn(|i| k(i as u64)),
            page_id: std::array::from_fn(|i| k(i as u64)),
            region_id: std::array::from_fn(|i| k(i as u64)),
            slot_bit: std::array::from_fn(|i| k(1u64 << i)),
            slot_id: std::array::from_fn(|i| k(i as u64)),
            slot_id12: std::array::from_fn(|i| k(i as u64)),
            zero64: k(0),
            zero9: k(0),
            zero3: k(0),
            zero4: k(0),
            zero8: k(0),
            one3: k(1),
            one4: k(1),
            one8: k(1),
            three4: k(3),
            four3: k(4),
            four5: k(4),
            one5: k(1),
            sixteen5: k(16),
            zero5: k(0),
            op_none: k(OP_NONE),
            op_ins: k(OP_INSERT),
            op_rem: k(OP_REMOVE),
            op_take: k(OP_TAKE),
            res_ok: k(RES_OK),
            res_zero: k(RES_ZERO_SIZE),
            res_large: k(RES_TOO_LARGE),
            res_exh: k(RES_EXHAUSTED),
            res_out: k(RES_OUTSIDE_HEAP),
            res_nac: k(RES_NOT_A_CHUNK),
            res_dbl: k(RES_DOUBLE_FREE),
        })
    }
}

impl Logic for AllocUnit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, key0_r, key1_r, id_r, free_r, arg_r, cls_r, p_r, vis_r, first_r, slot_r, new_r, rel_r,
            size_r, rdata_r, got_r, hd_r, front_bad_r, rear_bad_r, chk_r, resp_valid_r, resp_id_r, resp_free_r,
            resp_code_r, resp_ptr_r, resp_size_r, resp_front_r, resp_rear_r, chk_done_r, chk_chunk_r, chk_front_r,
            chk_rear_r
        );
        self.state.clock.next = self.clock.val();
        self.state.d.next = self.state.q.val();
        self.arb.clock.next = self.clock.val();
        self.sip.clock.next = self.clock.val();
        self.chk.clock.next = self.clock.val();
        self.sizes.read_clock.next = self.clock.val();
        self.sizes.write_clock.next = self.clock.val();
        for i in 0..PAGES {
            self.pt_class[i].clock.next = self.clock.val();
            self.pt_used[i].clock.next = self.clock.val();
            self.bitfield[i].clock.next = self.clock.val();
            self.pt_class[i].d.next = self.pt_class[i].q.val();
            self.pt_used[i].d.next = self.pt_used[i].q.val();
            self.bitfield[i].d.next = self.bitfield[i].q.val();
        }
        for r in 0..4 {
            self.region_full[r].clock.next = self.clock.val();
            self.region_full[r].d.next = self.region_full[r].q.val();
        }
        // Pulses and sub-block defaults.
        self.resp_valid_r.d.next = false;
        self.chk_done_r.d.next = false;
        self.resp_id_r.d.next = self.id_r.q.val();
        self.resp_free_r.d.next = self.free_r.q.val();
        self.arb.reset.next = self.reset.val();
        self.sip.reset.next = self.reset.val();
        self.chk.reset.next = self.reset.val();
        self.chk.rate.next = self.rate.val();
        self.chk.op.next = self.op_none.val();
        self.sip.start.next = false;
        self.sip.k0.next = self.key0_r.q.val();
        self.sip.k1.next = self.key1_r.q.val();
        if self.key_we.val() {
            self.key0_r.d.next = self.key_k0.val();
            self.key1_r.d.next = self.key_k1.val();
        }
        // Outputs from registers.
        self.resp_valid.next = self.resp_valid_r.q.val();
        self.resp_id.next = self.resp_id_r.q.val();
        self.resp_free.next = self.resp_free_r.q.val();
        self.resp_code.next = self.resp_code_r.q.val();
        self.resp_ptr.next = self.resp_ptr_r.q.val();
        self.resp_size.next = self.resp_size_r.q.val();
        self.resp_front.next = self.resp_front_r.q.val();
        self.resp_rear.next = self.resp_rear_r.q.val();
        self.resp_new_page.next = self.new_r.q.val();
        self.chk_done.next = self.chk_done_r.q.val();
        self.chk_chunk.next = self.chk_chunk_r.q.val();
        self.chk_front.next = self.chk_front_r.q.val();
        self.chk_rear.next = self.chk_rear_r.q.val();
        // Arbiter: requests are taken only in an idle cycle without a due check.
        self.check_first.next = self.mode_always.val() & self.chk.due.val();
        // (from registers and sub-block outputs only: no combinational loop
        // through the arbiter; the sub-blocks are idle whenever we are.)
        self.arb.take.next = (self.state.q.val() == AllocState::Idle)
            & !(self.mode_always.val() & self.chk.due.val())
            & !self.chk.busy.val()
            & !self.sip.busy.val();
        self.sel_arg.next = self.req_arg[0].val();
        self.sel_free.next = false;
        for i in 0..REQUESTERS {
            self.arb.req[i].next = self.req_valid[i].val();
            self.req_grant[i].next = self.arb.grant[i].val();
            if self.arb.index.val() == self.req_id[i].val() {
                self.sel_arg.next = self.req_arg[i].val();
                self.sel_free.next = self.req_free[i].val();
            }
        }
        // The chunk being worked on and its rear canary address.
        self.w_rel.a.next = self.rel_r.q.val();
        self.w_size.a.next = self.size_r.q.val();
        self.w_p12.a.next = self.p_r.q.val();
        self.w_pm5.a.next = self.p_r.q.val() & self.three4.val();
        self.w_idx12.a.next = self.chk.out_idx.val();
        self.chunk.next = self.base.val() + self.w_rel.y.val();
        self.rear.next = self.chunk.val() + self.slack8.val() + self.w_size.y.val();
        self.idx.next = self.rel_r.q.val().get_bits::<7>(5);
        self.sip.msg.next = self.chunk.val();
        self.mem_valid.next = false;
        self.mem_we.next = false;
        self.mem_addr.next = self.chunk.val();
        self.mem_wdata.next = self.sip.tag.val();
        self.chk.idx.next = self.idx.val();
        self.sizes.write_enable.next = false;
        self.sizes.write_address.next = self.idx.val();
        self.sizes.write_data.next = self.arg_r.q.val().get_bits::<9>(0);
        self.sizes.read_address.next = self.idx.val();
        // malloc decode: smallest class that holds size + overhead; hash.
        self.cls_l.next = self.cls_id[3].val();
        for hi in 3..4 {
            for j in 0..4 {
                if self.arg_r.q.val() <= self.usable[hi - j].val() {
                    self.cls_l.next = self.cls_id[hi - j].val();
                }
            }
        }
        self.h_c.next = self.zero4.val();
        for c in 0..4 {
            if self.cls_l.val() == self.cls_id[c].val() {
                self.h_c.next = self.cls_hash[c].val();
            }
        }
        self.h_m.next = self.zero4.val();
        for i in 0..REQUESTERS {
            if self.id_r.q.val() == self.req_id[i].val() {
                self.h_m.next = self.req_hash[i].val();
            }
        }
        // The class being allocated or freed.
        self.want_code.next = self.cls_code[0].val();
        self.want_cpp.next = self.cls_cpp[0].val();
        self.want_mask.next = self.cls_mask[0].val();
        self.want_shift.next = self.cls_shift[0].val();
        for c in 0..4 {
            if self.cls_r.q.val() == self.cls_id[c].val() {
                self.want_code.next = self.cls_code[c].val();
                self.want_cpp.next = self.cls_cpp[c].val();
                self.want_mask.next = self.cls_mask[c].val();
                self.want_shift.next = self.cls_shift[c].val();
            }
        }
        // page_table, bitfield and region counter of page p_r.
        self.pg_class.next = self.zero3.val();
        self.pg_used.next = self.zero4.val();
        self.pg_bits.next = self.zero8.val();
        for i in 0..PAGES {
            if self.p_r.q.val() == self.page_id[i].val() {
                self.pg_class.next = self.pt_class[i].q.val();
                self.pg_used.next = self.pt_used[i].q.val();
                self.pg_bits.next = self.bitfield[i].q.val();
            }
        }
        self.rfull.next = false;
        for r in 0..4 {
            if ((self.p_r.q.val() >> 2_u64) == self.region_id[r].val()) & (self.region_full[r].q.val() == self.four3.val()) {
                self.rfull.next = true;
            }
        }
        self.at_rs.next = self.first_r.q.val() | ((self.p_r.q.val() & self.three4.val()) == self.zero4.val());
        // Lowest free slot of the page (walk down so the lowest wins).
        self.free_bits.next = !self.pg_bits.val() & self.want_mask.val();
        self.slot_l.next = self.slot_id[0].val();
        self.slot_l12.next = self.slot_id12[0].val();
        for hi in 7..8 {
            for j in 0..8 {
                if (self.free_bits.val() & self.slot_bit[hi - j].val()) != self.zero8.val() {
                    self.slot_l.next = self.slot_id[hi - j].val();
                    self.slot_l12.next = self.slot_id12[hi - j].val();
                }
            }
        }
        self.rel_claim.next = (self.w_p12.y.val() << 8_u64) | (self.slot_l12.val() << self.want_shift.val());
        if self.pg_class.val() == self.zero3.val() {
            self.rel_claim.next = self.w_p12.y.val() << 8_u64;
        }
        self.slot_mask.next = self.one8.val() << self.slot_r.q.val();
        // free decode of arg_r.
        // frel64 = chunk - base; outside when below base + off or at/after the end.
        self.arg_addr.next = self.arg_r.q.val() & self.arg_mask.val();
        self.frel64.next = self.arg_addr.val() - self.lo.val();
        self.outside.next = (self.arg_addr.val() < self.lo.val()) | (self.frel64.val() >= self.hi_rel.val());
        self.frel.next = self.frel64.val().get_bits::<12>(0);
        self.fpage.next = self.frel.val().get_bits::<4>(8);
        self.finpage.next = self.frel.val().get_bits::<8>(0);
        self.f_class.next = self.zero3.val();
        self.f_bits.next = self.zero8.val();
        for i in 0..PAGES {
            if self.fpage.val() == self.page_id[i].val() {
                self.f_class.next = self.pt_class[i].q.val();
                self.f_bits.next = self.bitfield[i].q.val();
            }
        }
        self.f_mis.next = false;
        self.f_cpp8.next = self.cls_cpp8[0].val();
        self.f_shifted.next = self.finpage.val();
        self.f_cls.next = self.cls_id[0].val();
        for c in 0..4 {
            if self.f_class.val() == self.cls_code[c].val() {
                self.f_mis.next = (self.finpage.val() & self.cls_amask[c].val()) != self.zero8.val();
                self.f_cpp8.next = self.cls_cpp8[c].val();
                self.f_shifted.next = self.finpage.val() >> self.cls_shift[c].val();
                self.f_cls.next = self.cls_id[c].val();
            }
        }
        self.f_slot.next = self.f_shifted.val().get_bits::<3>(0);
        // Misaligned, or (as the model) a slot index past the page's chunks.
        self.f_bad.next = self.f_mis.val() | (self.f_shifted.val() >= self.f_cpp8.val());
        self.f_set.next = (self.f_bits.val() & (self.one8.val() << self.f_slot.val())) != self.zero8.val();

        // The tag table (tagged builds): claims in Claim, retires in a free's
        // FCommit, free's stale check on the decoded chunk, the directory.
        self.f_stale.next = false;
        self.dir_hit.next = false;
        self.dir_chunk.next = self.dir_g.val();
        self.dir_size.next = self.zero9.val();
        self.w_tag.a.next = self.zero8.val();
        self.dir_tag.next = self.zero8.val();
        for t in 0..self.tags.len() {
            self.tags[t].clock.next = self.clock.val();
            self.tags[t].reset.next = self.reset.val();
            self.tags[t].claim.next = self.state.q.val() == AllocState::Claim;
            self.tags[t].claim_g.next = self.idx.val();
            self.tags[t].claim_page.next = self.p_r.q.val();
            self.tags[t].claim_code.next = self.want_code.val();
            self.tags[t].claim_size.next = self.arg_r.q.val().get_bits::<9>(0);
            self.tags[t].retire.next = self.state.q.val() == AllocState::FCommit;
            self.tags[t].retire_g.next = self.idx.val();
            self.tags[t].free_g.next = self.frel.val().get_bits::<7>(5);
            self.f_stale.next = self.arg_r.q.val().get_bits::<8>(56) != self.tags[t].free_tag.val();
            self.tags[t].dir_g.next = self.dir_g.val();
            self.dir_hit.next = self.tags[t].dir_hit.val();
            self.dir_chunk.next = self.tags[t].dir_chunk.val();
            self.dir_size.next = self.tags[t].dir_size.val();
            self.dir_tag.next = self.tags[t].dir_tag.val();
            self.w_tag.a.next = self.tags[t].new_tag.val();
        }
        match self.state.q.val() {
            AllocState::Idle => {
                if self.check_first.val() {
                    self.chk.op.next = self.op_take.val();
                    self.chk_r.d.next = true;
                    self.state.d.next = AllocState::CTake;
                } else if self.arb.any.val() {
                    self.id_r.d.next = self.arb.index.val();
                    self.free_r.d.next = self.sel_free.val();
                    self.arg_r.d.next = self.sel_arg.val();
                    self.chk_r.d.next = false;
                    if self.sel_free.val() {
                        self.state.d.next = AllocState::FDec;
                    } else {
                        self.state.d.next = AllocState::MDec;
                    }
                }
            }
            AllocState::MDec => {
                self.resp_ptr_r.d.next = self.zero64.val();
                self.resp_front_r.d.next = false;
                self.resp_rear_r.d.next = false;
                if self.arg_r.q.val() == self.zero64.val() {
                    self.resp_code_r.d.next = self.res_zero.val();
                    self.resp_valid_r.d.next = true;
                    self.state.d.next = AllocState::Idle;
                } else if self.arg_r.q.val() > self.usable[3].val() {
                    self.resp_code_r.d.next = self.res_large.val();
                    self.resp_valid_r.d.next = true;
                    self.state.d.next = AllocState::Idle;
                } else {
                    self.cls_r.d.next = self.cls_l.val();
                    self.p_r.d.next = self.h_c.val() + self.h_m.val();
                    self.vis_r.d.next = self.zero5.val();
                    self.first_r.d.next = true;
                    self.state.d.next = AllocState::Probe;
                }
            }
            AllocState::Probe => {
                self.first_r.d.next = false;
                if self.vis_r.q.val() >= self.sixteen5.val() {
                    self.resp_code_r.d.next = self.res_exh.val();
                    self.resp_valid_r.d.next = true;
                    self.state.d.next = AllocState::Idle;
                } else if self.at_rs.val() & self.rfull.val() {
                    // Skip the rest of a full region in one cycle.
                    self.p_r.d.next = (self.p_r.q.val() | self.three4.val()) + self.one4.val();
                    self.vis_r.d.next = self.vis_r.q.val() + self.four5.val() - self.w_pm5.y.val();
                } else if (self.pg_class.val() == self.zero3.val())
                    | ((self.pg_class.val() == self.want_code.val()) & (self.pg_used.val() < self.want_cpp.val()))
                {
                    self.new_r.d.next = self.pg_class.val() == self.zero3.val();
                    self.rel_r.d.next = self.rel_claim.val();
                    self.slot_r.d.next = self.slot_l.val();
                    if self.pg_class.val() == self.zero3.val() {
                        self.slot_r.d.next = self.zero3.val();
                    }
                    self.state.d.next = AllocState::Claim;
                } else {
                    self.p_r.d.next = self.p_r.q.val() + self.one4.val();
                    self.vis_r.d.next = self.vis_r.q.val() + self.one5.val();
                }
            }
            AllocState::Claim => {
                for i in 0..PAGES {
                    if self.p_r.q.val() == self.page_id[i].val() {
                        self.bitfield[i].d.next = self.bitfield[i].q.val() | self.slot_mask.val();
                        self.pt_used[i].d.next = self.pt_used[i].q.val() + self.one4.val();
                        if self.new_r.q.val() {
                            self.pt_class[i].d.next = self.want_code.val();
                        }
                    }
                }
                for r in 0..4 {
                    if ((self.p_r.q.val() >> 2_u64) == self.region_id[r].val())
                        & ((self.pg_used.val() + self.one4.val()) == self.want_cpp.val())
                    {
                        self.region_full[r].d.next = self.region_full[r].q.val() + self.one3.val();
                    }
                }
                self.sizes.write_enable.next = true;
                self.resp_code_r.d.next = self.res_ok.val();
                // (The tag is 0 in an untagged build.)
                self.resp_ptr_r.d.next = (self.chunk.val() + self.off.val()) | (self.w_tag.y.val() << 56_u64);
                self.resp_front_r.d.next = false;
                self.resp_rear_r.d.next = false;
                if self.canaries.val() {
                    self.size_r.d.next = self.arg_r.q.val().get_bits::<9>(0);
                    self.sip.start.next = true;
                    self.state.d.next = AllocState::MFront;
                } else {
                    self.resp_valid_r.d.next = true;
                    self.state.d.next = AllocState::Idle;
                }
            }
            AllocState::MFront => {
                if self.sip.done.val() {
                    self.mem_valid.next = true;
                    self.mem_we.next = true;
                    self.sip.start.next = true;
                    self.sip.msg.next = self.rear.val();
                    self.state.d.next = AllocState::MRear;
                }
            }
            AllocState::MRear => {
                if self.sip.done.val() {
                    self.mem_valid.next = true;
                    self.mem_we.next = true;
                    self.mem_addr.next = self.rear.val();
                    if self.mode_always.val() {
                        self.chk.op.next = self.op_ins.val();
                        self.state.d.next = AllocState::MIns;
                    } else {
                        self.resp_valid_r.d.next = true;
                        self.state.d.next = AllocState::Idle;
                    }
                }
            }
            AllocState::MIns => {
                if self.chk.done.val() {
                    self.resp_valid_r.d.next = true;
                    self.state.d.next = AllocState::Idle;
                }
            }
            AllocState::FDec => {
                self.resp_ptr_r.d.next = self.zero64.val();
                self.resp_front_r.d.next = false;
                self.resp_rear_r.d.next = false;
                if self.outside.val() {
                    self.resp_code_r.d.next = self.res_out.val();
                    self.resp_valid_r.d.next = true;
                    self.state.d.next = AllocState::Idle;
                } else if (self.f_class.val() == self.zero3.val()) | self.f_bad.val() {
                    self.resp_code_r.d.next = self.res_nac.val();
                    self.resp_valid_r.d.next = true;
                    self.state.d.next = AllocState::Idle;
                } else if !self.f_set.val() | self.f_stale.val() {
                    self.resp_code_r.d.next = self.res_dbl.val();
                    self.resp_valid_r.d.next = true;
                    self.state.d.next = AllocState::Idle;
                } else {
                    self.p_r.d.next = self.fpage.val();
                    self.slot_r.d.next = self.f_slot.val();
                    self.cls_r.d.next = self.f_cls.val();
                    self.rel_r.d.next = self.frel.val();
                    self.sizes.read_address.next = self.frel.val().get_bits::<7>(5);
                    self.state.d.next = AllocState::FSize;
                }
            }
            AllocState::FSize => {
                self.size_r.d.next = self.sizes.read_data.val();
                self.got_r.d.next = false;
                self.hd_r.d.next = false;
                self.front_bad_r.d.next = false;
                self.rear_bad_r.d.next = false;
                if self.canaries.val() {
                    self.sip.start.next = true;
                    self.mem_valid.next = true;
                    self.state.d.next = AllocState::FFront;
                } else {
                    self.state.d.next = AllocState::FCommit;
                }
            }
            AllocState::FFront => {
                if self.mem_rvalid.val() {
                    self.rdata_r.d.next = self.mem_rdata.val();
                    self.got_r.d.next = true;
                }
                if self.sip.done.val() {
                    self.hd_r.d.next = true;
                }
                if self.got_r.q.val() & self.hd_r.q.val() {
                    self.front_bad_r.d.next = self.rdata_r.q.val() != self.sip.tag.val();
                    self.got_r.d.next = false;
                    self.hd_r.d.next = false;
                    self.sip.start.next = true;
                    self.sip.msg.next = self.rear.val();
                    self.mem_valid.next = true;
                    self.mem_addr.next = self.rear.val();
                    self.state.d.next = AllocState::FRear;
                }
            }
            AllocState::FRear => {
                if self.mem_rvalid.val() {
                    self.rdata_r.d.next = self.mem_rdata.val();
                    self.got_r.d.next = true;
                }
                if self.sip.done.val() {
                    self.hd_r.d.next = true;
                }
                if self.got_r.q.val() & self.hd_r.q.val() {
                    self.rear_bad_r.d.next = self.rdata_r.q.val() != self.sip.tag.val();
                    if self.chk_r.q.val() {
                        self.state.d.next = AllocState::CReport;
                    } else {
                        self.state.d.next = AllocState::FCommit;
                    }
                }
            }
            AllocState::FCommit => {
                for i in 0..PAGES {
                    if self.p_r.q.val() == self.page_id[i].val() {
                        self.bitfield[i].d.next = self.bitfield[i].q.val() & !self.slot_mask.val();
                        self.pt_used[i].d.next = self.pt_used[i].q.val() - self.one4.val();
                        if self.pt_used[i].q.val() == self.one4.val() {
                            self.pt_class[i].d.next = self.zero3.val();
                        }
                    }
                }
                for r in 0..4 {
                    if ((self.p_r.q.val() >> 2_u64) == self.region_id[r].val()) & (self.pg_used.val() == self.want_cpp.val()) {
                        self.region_full[r].d.next = self.region_full[r].q.val() - self.one3.val();
                    }
                }
                self.resp_code_r.d.next = self.res_ok.val();
                self.resp_ptr_r.d.next = self.chunk.val();
                self.resp_size_r.d.next = self.size_r.q.val();
                self.resp_front_r.d.next = self.front_bad_r.q.val();
                self.resp_rear_r.d.next = self.rear_bad_r.q.val();
                if self.mode_always.val() {
                    self.chk.op.next = self.op_rem.val();
                    self.state.d.next = AllocState::FRem;
                } else {
                    self.resp_valid_r.d.next = true;
                    self.state.d.next = AllocState::Idle;
                }
            }
            AllocState::FRem => {
                if self.chk.done.val() {
                    self.resp_valid_r.d.next = true;
                    self.state.d.next = AllocState::Idle;
                }
            }
            AllocState::CTake => {
                if self.chk.done.val() {
                    self.rel_r.d.next = self.w_idx12.y.val() << 5_u64;
                    self.sizes.read_address.next = self.chk.out_idx.val();
                    self.state.d.next = AllocState::FSize;
                }
            }
            AllocState::CReport => {
                self.chk_done_r.d.next = true;
                self.chk_chunk_r.d.next = self.chunk.val();
                self.chk_front_r.d.next = self.front_bad_r.q.val();
                self.chk_rear_r.d.next = self.rear_bad_r.q.val();
                self.chk_r.d.next = false;
                self.state.d.next = AllocState::Idle;
            }
            _ => {
                self.state.d.next = AllocState::Idle;
            }
        }
        if self.reset.val() {
            self.state.d.next = AllocState::Idle;
            self.resp_valid_r.d.next = false;
            self.chk_done_r.d.next = false;
            for i in 0..PAGES {
                self.pt_class[i].d.next = self.zero3.val();
                self.pt_used[i].d.next = self.zero4.val();
                self.bitfield[i].d.next = self.zero8.val();
            }
            for r in 0..4 {
                self.region_full[r].d.next = self.zero3.val();
            }
        }
    }
}
