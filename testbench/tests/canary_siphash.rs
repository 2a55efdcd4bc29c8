//! hw::canary::siphash::SipHash against sim's SipHash-2-4
//! (`sim::canary::siphash::siphash24`, itself checked against the reference
//! vectors): the reference key and message 00..07, random keys and messages,
//! back-to-back starts (start in the done cycle), reset mid-hash, and the
//! documented latency.
use hw::canary::siphash::{SipHash, SIPHASH_LATENCY};
use rust_hdl::prelude::*;
use sim::canary::siphash::siphash24;

fn tick(uut: &mut SipHash) {
    uut.clock.next = Clock { clk: true };
    assert!(simulate(uut, 50), "SipHash did not settle");
    uut.clock.next = Clock { clk: false };
    assert!(simulate(uut, 50), "SipHash did not settle");
}

fn start(uut: &mut SipHash, k0: u64, k1: u64, msg: u64) {
    uut.start.next = true;
    uut.k0.next = k0.into();
    uut.k1.next = k1.into();
    uut.msg.next = msg.into();
    assert!(simulate(uut, 50));
}

/// Start a hash and return (tag, cycles from the start cycle to done).
fn hash(uut: &mut SipHash, k0: u64, k1: u64, msg: u64) -> (u64, u64) {
    start(uut, k0, k1, msg);
    tick(uut);
    uut.start.next = false;
    // Inputs change after the start cycle: the core must have latched them.
    uut.k0.next = (!k0).into();
    uut.msg.next = (!msg).into();
    assert!(simulate(uut, 50));
    let mut n = 1;
    while !uut.done.val() {
        assert!(uut.busy.val(), "busy must stay high until done");
        tick(uut);
        n += 1;
        assert!(n < 100, "no done");
    }
    assert!(!uut.busy.val(), "busy low in the done cycle");
    (uut.tag.val().to_u64(), n)
}

fn new_uut() -> SipHash {
    let mut uut = SipHash::default();
    uut.connect_all();
    uut.reset.next = false;
    uut.start.next = false;
    assert!(simulate(&mut uut, 50));
    uut
}

#[test]
fn reference_vector_and_latency() {
    let mut uut = new_uut();
    let k0 = 0x0706_0504_0302_0100;
    let k1 = 0x0f0e_0d0c_0b0a_0908;
    let msg = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
    let (tag, cycles) = hash(&mut uut, k0, k1, msg);
    // SipHash-2-4 paper, appendix A: vector for the 8-byte message 00..07.
    assert_eq!(tag.to_le_bytes(), [0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93]);
    assert_eq!(tag, siphash24(k0, k1, &msg.to_le_bytes()));
    assert_eq!(cycles, SIPHASH_LATENCY);
}

#[test]
fn random_keys_and_messages_match_model() {
    let mut uut = new_uut();
    let mut s = sim::runtime::SplitMix64(0xC0FFEE);
    for i in 0..300 {
        let (k0, k1, msg) = (s.next_u64(), s.next_u64(), s.next_u64());
        let (tag, cycles) = hash(&mut uut, k0, k1, msg);
        assert_eq!(tag, siphash24(k0, k1, &msg.to_le_bytes()), "vector {i}: k0={k0:#x} k1={k1:#x} msg={msg:#x}");
        assert_eq!(cycles, SIPHASH_LATENCY);
    }
}

#[test]
fn start_in_done_cycle_and_reset() {
    let mut uut = new_uut();
    let (k0, k1) = (0x1234, 0x5678);
    let (t1, _) = hash(&mut uut, k0, k1, 1);
    assert_eq!(t1, siphash24(k0, k1, &1u64.to_le_bytes()));
    // We are in the done cycle: a new start is accepted right away.
    let (t2, n) = hash(&mut uut, k0, k1, 2);
    assert_eq!((t2, n), (siphash24(k0, k1, &2u64.to_le_bytes()), SIPHASH_LATENCY));
    // Reset mid-hash: busy drops, no done; the next hash is clean.
    start(&mut uut, k0, k1, 3);
    tick(&mut uut);
    uut.start.next = false;
    tick(&mut uut);
    tick(&mut uut);
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    assert!(!uut.busy.val() && !uut.done.val());
    for _ in 0..12 {
        tick(&mut uut);
        assert!(!uut.done.val(), "done after reset");
    }
    let (t4, _) = hash(&mut uut, k0, k1, 4);
    assert_eq!(t4, siphash24(k0, k1, &4u64.to_le_bytes()));
}
