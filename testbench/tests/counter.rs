//! hw::counter::EventCounter against a `u32` with `wrapping_add` (what the
//! golden model's counters are), one clock edge at a time: random events
//! from reset, then from presets just below the low part's carry and the
//! 32-bit wrap, with bursts of 15 (the largest event), carries as close together
//! as they come, and a clear late in each run.
use hw::counter::EventCounter;
use rust_hdl::prelude::*;
use sim::runtime::SplitMix64;

/// The reference: events of cycles up to t-2 are in `count` at t.
struct Reference {
    count: u32,
    pending: u32,
}

fn tick(uut: &mut EventCounter) {
    uut.clock.next = true.into();
    assert!(simulate(uut, 50));
    uut.clock.next = false.into();
    assert!(simulate(uut, 50));
}

/// Runs `events` (None = a clear) from the counter's present state, whose
/// count is `start`, checking `count` in every cycle; returns how many
/// cycles the low part carried out.
fn run(uut: &mut EventCounter, start: u32, events: &[Option<u64>]) -> usize {
    let mut r = Reference { count: start, pending: 0 };
    let mut carries = 0;
    for (t, e) in events.iter().enumerate() {
        uut.clear.next = e.is_none();
        uut.amount.next = e.unwrap_or(0).into();
        assert!(simulate(uut, 50));
        assert_eq!(uut.count.val().to_u64() as u32, r.count, "cycle {t} (start {start:#x})");
        let lo_before = r.count & 0xFFF;
        tick(uut);
        match e {
            None => r = Reference { count: 0, pending: 0 },
            Some(e) => {
                r.count = r.count.wrapping_add(r.pending);
                r.pending = *e as u32;
            }
        }
        carries += usize::from((r.count & 0xFFF) < lo_before && e.is_some());
    }
    carries
}

fn preset(uut: &mut EventCounter, count: u32) {
    uut.lo.q.next = (count as u64 & 0xFFF).into();
    uut.hi.q.next = (count as u64 >> 12).into();
    uut.hi_p1.q.next = (((count >> 12) as u64 + 1) & 0xF_FFFF).into();
    uut.amount_r.q.next = 0_u64.into();
    assert!(simulate(uut, 50));
}

#[test]
fn counts_like_a_wrapping_u32_across_both_carries() {
    let mut uut = EventCounter::default();
    uut.connect_all();
    let mut rng = SplitMix64(42);
    // From a clear: random events, some clears.
    let mut events = vec![None, None];
    for _ in 0..5_000 {
        let r = rng.next_u64();
        events.push(if r % 997 == 0 { None } else { Some(r % 16) });
    }
    run(&mut uut, 0, &[None, None]);
    run(&mut uut, 0, &events[2..]);
    // Just below the low part's carry, and just below 2^32: bursts of 15
    // (the largest event) and of 1, so carries come as close together as
    // they can, and a clear right after a carry.
    let mut total = 0;
    for start in [0x0000_0FF0_u32, 0x1234_5FFE, 0xFFFF_EFF0, 0xFFFF_FFF1, 0x7FFF_FFFF] {
        for burst in [15_u64, 1, 7] {
            preset(&mut uut, start);
            let mut ev: Vec<Option<u64>> = (0..9000).map(|i| Some(if i % 40 < 30 { burst } else { rng.next_u64() % 16 })).collect();
            ev[8000] = None;
            let carries = run(&mut uut, start, &ev);
            assert!(carries >= 1, "start {start:#x} burst {burst}: no carry");
            total += carries;
        }
    }
    // The low part carries every few hundred cycles.
    assert!(total > 15 * 10, "{total} carries");
}
