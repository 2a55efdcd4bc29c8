//! `TagTable`: the canary allocator unit's registration with the MLU (spec
//! section 8, docs/canary.md "Registration with the MLU"): the tag LFSR, the
//! per-chunk tag/size records and the pages' last classes, and the
//! *directory* port the MLU's heap lookup reads. Golden model: the tag
//! rule, `records` and `last_class` of `sim::canary::heap::Heap` with
//! `tag_seed` set, and `Heap::directory`.
//!
//! Geometry: the unit's (hw::canary::alloc_unit): 16 pages of 8 granules
//! of 32 bytes; a record per granule that can start a chunk (128), indexed
//! by the chunk's granule `(chunk - base) / 32`.
//!
//! # Ports (one clock, rising edge; outputs combinational from the registers
//! and the index input named with them)
//! - `reset`: synchronous (and needed after power-up, where the LFSR is 0);
//!   the LFSR back to `seed`, every record and last
//!   class cleared (a record's tag 0 = never allocated).
//! - `claim` with `claim_g` (7: the chunk's granule), `claim_page` (4),
//!   `claim_code` (3: the class code, 1..=4), `claim_size` (9): a malloc
//!   takes the chunk at this edge. The LFSR steps; the record becomes
//!   {`new_tag`, size, live}; the page's last class becomes `claim_code`.
//!   `new_tag` (8) is the tag of a claim of `claim_g` in this cycle: the
//!   stepped LFSR's low byte b, `b mod 253 + 1`, plus one at or above the
//!   record's last tag (`sim::canary::heap::tag_of`): never 0, FREED or the
//!   chunk's last tag.
//! - `retire` with `retire_g`: a free commits; the record is FREED (its tag
//!   and size kept). A claim and a retire never meet in one cycle (the unit
//!   serves one request at a time).
//! - `free_g` -> `free_tag` (8): the record's live tag, for free's stale
//!   pointer check (a record never allocated reads 0, which no pointer
//!   from malloc carries).
//! - Directory: `dir_g` (7: the granule of the looked-up address) ->
//!   `dir_hit` (the page has served a class and the chunk holding the
//!   granule under that class has a record), `dir_chunk` (7: that chunk's
//!   granule), `dir_size` (9), `dir_tag` (8: the live tag, or FREED).
use super::alloc_unit::{CLASSES, HEAP_BYTES, PAGES};
use rust_hdl::prelude::*;

/// The directory's granule: a node (and a record slot) per 32 bytes.
const GRANULE: u64 = 32;
/// Granules (record slots) of the unit's 4 KiB heap.
pub const GRANULES: usize = (HEAP_BYTES / GRANULE) as usize;

#[derive(LogicBlock)]
pub struct TagTable {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub claim: Signal<In, Bit>,
    pub claim_g: Signal<In, Bits<7>>,
    pub claim_page: Signal<In, Bits<4>>,
    pub claim_code: Signal<In, Bits<3>>,
    pub claim_size: Signal<In, Bits<9>>,
    pub new_tag: Signal<Out, Bits<8>>,
    pub retire: Signal<In, Bit>,
    pub retire_g: Signal<In, Bits<7>>,
    pub free_g: Signal<In, Bits<7>>,
    pub free_tag: Signal<Out, Bits<8>>,
    pub dir_g: Signal<In, Bits<7>>,
    pub dir_hit: Signal<Out, Bit>,
    pub dir_chunk: Signal<Out, Bits<7>>,
    pub dir_size: Signal<Out, Bits<9>>,
    pub dir_tag: Signal<Out, Bits<8>>,
    lfsr: DFF<Bits<16>>,
    /// Per granule: the last tag (0 = never allocated), freed, size.
    rec_tag: Vec<DFF<Bits<8>>>,
    rec_freed: Vec<DFF<Bit>>,
    rec_size: Vec<DFF<Bits<9>>>,
    /// Per page: the class code it served last (0 = never), kept when the
    /// unit releases the page.
    last_code: Vec<DFF<Bits<3>>>,
    seed: Constant<Bits<16>>,
    taps: Constant<Bits<16>>,
    lfsr_next: Signal<Local, Bits<16>>,
    fold: Signal<Local, Bits<8>>,
    prev: Signal<Local, Bits<8>>,
    dir_page_code: Signal<Local, Bits<3>>,
    dir_first: Signal<Local, Bits<7>>,
    gidx: Vec<Constant<Bits<7>>>,
    pidx: Vec<Constant<Bits<4>>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    c253: Constant<Bits<8>>,
    freed8: Constant<Bits<8>>,
    zero3: Constant<Bits<3>>,
    code: Vec<Constant<Bits<3>>>,
    /// Per class code 1..=4 (index 0..=3): the granule mask of a chunk's
    /// first granule (class 32: !0, 64: !1, 128: !3, 256: !7). `pub` so
    /// that a test can build a directory mutant (a wrong class's mask).
    pub first_mask: Vec<Constant<Bits<7>>>,
}

impl TagTable {
    /// `seed`: the LFSR's reset value (not 0).
    pub fn new(seed: u16) -> Self {
        assert_ne!(seed, 0, "a zero seed stops the LFSR");
        TagTable {
            clock: Default::default(),
            reset: Default::default(),
            claim: Default::default(),
            claim_g: Default::default(),
            claim_page: Default::default(),
            claim_code: Default::default(),
            claim_size: Default::default(),
            new_tag: Default::default(),
            retire: Default::default(),
            retire_g: Default::default(),
            free_g: Default::default(),
            free_tag: Default::default(),
            dir_g: Default::default(),
            dir_hit: Default::default(),
            dir_chunk: Default::default(),
            dir_size: Default::default(),
            dir_tag: Default::default(),
            lfsr: Default::default(),
            rec_tag: (0..GRANULES).map(|_| Default::default()).collect(),
            rec_freed: (0..GRANULES).map(|_| Default::default()).collect(),
            rec_size: (0..GRANULES).map(|_| Default::default()).collect(),
            last_code: (0..PAGES).map(|_| Default::default()).collect(),
            seed: Constant::new((seed as u64).into()),
            taps: Constant::new(0xB400_u64.into()),
            lfsr_next: Default::default(),
            fold: Default::default(),
            prev: Default::default(),
            dir_page_code: Default::default(),
            dir_first: Default::default(),
            gidx: (0..GRANULES).map(|g| Constant::new((g as u64).into())).collect(),
            pidx: (0..PAGES).map(|p| Constant::new((p as u64).into())).collect(),
            zero8: Constant::new(0_u64.into()),
            one8: Constant::new(1_u64.into()),
            c253: Constant::new(253_u64.into()),
            freed8: Constant::new(0xFF_u64.into()),
            zero3: Constant::new(0_u64.into()),
            code: (1..=4).map(|c| Constant::new((c as u64).into())).collect(),
            first_mask: CLASSES
                .iter()
                .map(|&c| Constant::new(((GRANULES as u64 - 1) & !(c / GRANULE - 1)).into()))
                .collect(),
        }
    }
}

impl Logic for TagTable {
    #[hdl_gen]
    fn update(&mut self) {
        self.lfsr.clock.next = self.clock.val();
        self.lfsr.d.next = self.lfsr.q.val();
        for g in 0..self.rec_tag.len() {
            self.rec_tag[g].clock.next = self.clock.val();
            self.rec_tag[g].d.next = self.rec_tag[g].q.val();
            self.rec_freed[g].clock.next = self.clock.val();
            self.rec_freed[g].d.next = self.rec_freed[g].q.val();
            self.rec_size[g].clock.next = self.clock.val();
            self.rec_size[g].d.next = self.rec_size[g].q.val();
        }
        for p in 0..self.last_code.len() {
            self.last_code[p].clock.next = self.clock.val();
            self.last_code[p].d.next = self.last_code[p].q.val();
        }
        // The tag of a claim this cycle (Galois step, x^16+x^14+x^13+x^11+1).
        self.lfsr_next.next = self.lfsr.q.val() >> 1_u64;
        if self.lfsr.q.val().get_bit(0) {
            self.lfsr_next.next = (self.lfsr.q.val() >> 1_u64) ^ self.taps.val();
        }
        self.fold.next = self.lfsr_next.val().get_bits::<8>(0) + self.one8.val();
        if self.lfsr_next.val().get_bits::<8>(0) >= self.c253.val() {
            self.fold.next = self.lfsr_next.val().get_bits::<8>(0) - self.c253.val() + self.one8.val();
        }
        self.prev.next = self.zero8.val();
        self.free_tag.next = self.zero8.val();
        for g in 0..self.rec_tag.len() {
            if self.claim_g.val() == self.gidx[g].val() {
                self.prev.next = self.rec_tag[g].q.val();
            }
            if self.free_g.val() == self.gidx[g].val() {
                self.free_tag.next = self.rec_tag[g].q.val();
            }
        }
        self.new_tag.next = self.fold.val();
        if (self.prev.val() != self.zero8.val()) & (self.fold.val() >= self.prev.val()) {
            self.new_tag.next = self.fold.val() + self.one8.val();
        }
        // Directory: the page's last class, the chunk's first granule, its record.
        self.dir_page_code.next = self.zero3.val();
        for p in 0..self.last_code.len() {
            if self.dir_g.val().get_bits::<4>(3) == self.pidx[p].val() {
                self.dir_page_code.next = self.last_code[p].q.val();
            }
        }
        self.dir_first.next = self.dir_g.val();
        for c in 0..self.code.len() {
            if self.dir_page_code.val() == self.code[c].val() {
                self.dir_first.next = self.dir_g.val() & self.first_mask[c].val();
            }
        }
        self.dir_chunk.next = self.dir_first.val();
        self.dir_hit.next = false;
        self.dir_size.next = self.rec_size[0].q.val();
        self.dir_tag.next = self.zero8.val();
        for g in 0..self.rec_tag.len() {
            if self.dir_first.val() == self.gidx[g].val() {
                self.dir_hit.next = (self.dir_page_code.val() != self.zero3.val()) & (self.rec_tag[g].q.val() != self.zero8.val());
                self.dir_size.next = self.rec_size[g].q.val();
                self.dir_tag.next = self.rec_tag[g].q.val();
                if self.rec_freed[g].q.val() {
                    self.dir_tag.next = self.freed8.val();
                }
            }
        }
        // Claim and retire.
        if self.claim.val() {
            self.lfsr.d.next = self.lfsr_next.val();
        }
        for g in 0..self.rec_tag.len() {
            if self.claim.val() & (self.claim_g.val() == self.gidx[g].val()) {
                self.rec_tag[g].d.next = self.new_tag.val();
                self.rec_freed[g].d.next = false;
                self.rec_size[g].d.next = self.claim_size.val();
            }
            if self.retire.val() & (self.retire_g.val() == self.gidx[g].val()) {
                self.rec_freed[g].d.next = true;
            }
        }
        for p in 0..self.last_code.len() {
            if self.claim.val() & (self.claim_page.val() == self.pidx[p].val()) {
                self.last_code[p].d.next = self.claim_code.val();
            }
        }
        if self.reset.val() {
            self.lfsr.d.next = self.seed.val();
            for g in 0..self.rec_tag.len() {
                self.rec_tag[g].d.next = self.zero8.val();
                self.rec_freed[g].d.next = false;
            }
            for p in 0..self.last_code.len() {
                self.last_code[p].d.next = self.zero3.val();
            }
        }
    }
}
