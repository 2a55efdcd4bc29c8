//! `SipHash`: the keyed primitive behind `canary_key` (golden model:
//! `sim::canary::siphash::siphash24`), SipHash-2-4 of one 8-byte message (a
//! canary's address), iterative: one SipRound per cycle.
//!
//! For an 8-byte message SipHash-2-4 runs 8 SipRounds: 2 for the message
//! block m, 2 for the final block `8 << 56` (length byte, no tail bytes) and 4
//! for finalization. The XORs between the phases are folded into the input of
//! rounds 2 (v0 ^= m, v3 ^= last) and 4 (v0 ^= last, v2 ^= 0xff).
//!
//! # Ports (sampled at the rising edge of `clock`)
//! - `reset`: synchronous; drops `busy` and `done`.
//! - `start` (pulse) with `k0`, `k1` (the key register, k0 = key bytes 0..8
//!   little endian) and `msg` (the 64-bit message, i.e. the 8 bytes LE).
//!   Accepted while `busy` is low (also in the `done` cycle); key and message
//!   are only read in the `start` cycle.
//! - `busy`: high for the 8 round cycles after an accepted `start`.
//! - `done`: one-cycle pulse 9 cycles after the `start` cycle, with `tag`
//!   (held until the next `done`).
use rust_hdl::prelude::*;

/// SipHash's initialization constants ("somepseudorandomlygeneratedbytes").
pub const SIP_C: [u64; 4] = [0x736f_6d65_7073_6575, 0x646f_7261_6e64_6f6d, 0x6c79_6765_6e65_7261, 0x7465_6462_7974_6573];
/// Cycles from the `start` cycle to the `done` cycle.
pub const SIPHASH_LATENCY: u64 = 9;

#[derive(LogicBlock)]
pub struct SipHash {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub start: Signal<In, Bit>,
    pub k0: Signal<In, Bits<64>>,
    pub k1: Signal<In, Bits<64>>,
    pub msg: Signal<In, Bits<64>>,
    pub busy: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub tag: Signal<Out, Bits<64>>,
    v0: DFF<Bits<64>>,
    v1: DFF<Bits<64>>,
    v2: DFF<Bits<64>>,
    v3: DFF<Bits<64>>,
    m_r: DFF<Bits<64>>,
    round: DFF<Bits<3>>,
    busy_r: DFF<Bit>,
    done_r: DFF<Bit>,
    tag_r: DFF<Bits<64>>,
    // One SipRound, step by step (rust-hdl has no `let` in hdl_gen).
    p0: Signal<Local, Bits<64>>,
    p2: Signal<Local, Bits<64>>,
    p3: Signal<Local, Bits<64>>,
    a0: Signal<Local, Bits<64>>,
    b1: Signal<Local, Bits<64>>,
    c0: Signal<Local, Bits<64>>,
    a2: Signal<Local, Bits<64>>,
    b3: Signal<Local, Bits<64>>,
    d0: Signal<Local, Bits<64>>,
    e3: Signal<Local, Bits<64>>,
    d2: Signal<Local, Bits<64>>,
    e1: Signal<Local, Bits<64>>,
    f2: Signal<Local, Bits<64>>,
    c: [Constant<Bits<64>>; 4],
    last: Constant<Bits<64>>,
    ff: Constant<Bits<64>>,
    r2: Constant<Bits<3>>,
    r4: Constant<Bits<3>>,
    r7: Constant<Bits<3>>,
    zero3: Constant<Bits<3>>,
    one3: Constant<Bits<3>>,
}

impl Default for SipHash {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            k0: Default::default(),
            k1: Default::default(),
            msg: Default::default(),
            busy: Default::default(),
            done: Default::default(),
            tag: Default::default(),
            v0: Default::default(),
            v1: Default::default(),
            v2: Default::default(),
            v3: Default::default(),
            m_r: Default::default(),
            round: Default::default(),
            busy_r: Default::default(),
            done_r: Default::default(),
            tag_r: Default::default(),
            p0: Default::default(),
            p2: Default::default(),
            p3: Default::default(),
            a0: Default::default(),
            b1: Default::default(),
            c0: Default::default(),
            a2: Default::default(),
            b3: Default::default(),
            d0: Default::default(),
            e3: Default::default(),
            d2: Default::default(),
            e1: Default::default(),
            f2: Default::default(),
            c: std::array::from_fn(|i| Constant::new(SIP_C[i].into())),
            // Final block of an 8-byte message: the length byte 8 in bits 63..56.
            last: Constant::new((8_u64 << 56).into()),
            ff: Constant::new(0xff_u64.into()),
            r2: Constant::new(2_u64.into()),
            r4: Constant::new(4_u64.into()),
            r7: Constant::new(7_u64.into()),
            zero3: Constant::new(0_u64.into()),
            one3: Constant::new(1_u64.into()),
        }
    }
}

impl Logic for SipHash {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, v0, v1, v2, v3, m_r, round, busy_r, done_r, tag_r);
        self.done_r.d.next = false;
        self.busy.next = self.busy_r.q.val();
        self.done.next = self.done_r.q.val();
        self.tag.next = self.tag_r.q.val();
        // Phase XORs folded into the round input.
        self.p0.next = self.v0.q.val();
        self.p2.next = self.v2.q.val();
        self.p3.next = self.v3.q.val();
        if self.round.q.val() == self.r2.val() {
            self.p0.next = self.v0.q.val() ^ self.m_r.q.val();
            self.p3.next = self.v3.q.val() ^ self.last.val();
        }
        if self.round.q.val() == self.r4.val() {
            self.p0.next = self.v0.q.val() ^ self.last.val();
            self.p2.next = self.v2.q.val() ^ self.ff.val();
        }
        // SipRound: rotations as shift pairs.
        self.a0.next = self.p0.val() + self.v1.q.val();
        self.b1.next = ((self.v1.q.val() << 13_u64) | (self.v1.q.val() >> 51_u64)) ^ self.a0.val();
        self.c0.next = (self.a0.val() << 32_u64) | (self.a0.val() >> 32_u64);
        self.a2.next = self.p2.val() + self.p3.val();
        self.b3.next = ((self.p3.val() << 16_u64) | (self.p3.val() >> 48_u64)) ^ self.a2.val();
        self.d0.next = self.c0.val() + self.b3.val();
        self.e3.next = ((self.b3.val() << 21_u64) | (self.b3.val() >> 43_u64)) ^ self.d0.val();
        self.d2.next = self.a2.val() + self.b1.val();
        self.e1.next = ((self.b1.val() << 17_u64) | (self.b1.val() >> 47_u64)) ^ self.d2.val();
        self.f2.next = (self.d2.val() << 32_u64) | (self.d2.val() >> 32_u64);
        if self.busy_r.q.val() {
            self.v0.d.next = self.d0.val();
            self.v1.d.next = self.e1.val();
            self.v2.d.next = self.f2.val();
            self.v3.d.next = self.e3.val();
            self.round.d.next = self.round.q.val() + self.one3.val();
            if self.round.q.val() == self.r7.val() {
                self.busy_r.d.next = false;
                self.done_r.d.next = true;
                self.tag_r.d.next = self.d0.val() ^ self.e1.val() ^ self.f2.val() ^ self.e3.val();
            }
        } else if self.start.val() {
            self.v0.d.next = self.k0.val() ^ self.c[0].val();
            self.v1.d.next = self.k1.val() ^ self.c[1].val();
            self.v2.d.next = self.k0.val() ^ self.c[2].val();
            self.v3.d.next = self.k1.val() ^ self.c[3].val() ^ self.msg.val();
            self.m_r.d.next = self.msg.val();
            self.round.d.next = self.zero3.val();
            self.busy_r.d.next = true;
        }
        if self.reset.val() {
            self.busy_r.d.next = false;
            self.done_r.d.next = false;
        }
    }
}
