//! hw::in_bounds::InBounds against sim::memcheck::in_bounds: every a, base
//! and size at W = 6 with widths 0, 1, 2, 7, 31, 32 and 63 (the carry-save
//! identity of the block's doc, including `base + size` and `a + w` past
//! 2^W), and random and edge vectors at W = 64 (the walker's width).
use hw::in_bounds::InBounds;
use rust_hdl::prelude::*;
use sim::memcheck::in_bounds;

fn eval<const W: usize>(uut: &mut InBounds<W>, a: u64, base: u64, size: u64, w: u64) -> (bool, bool) {
    uut.a.next = a.into();
    uut.base.next = base.into();
    uut.size.next = size.into();
    uut.w.next = w.into();
    assert!(simulate(uut, 20));
    (uut.ge.val(), uut.ok.val())
}

/// The reference with a 64-bit width (`sim::memcheck::in_bounds` takes it as u32).
fn reference(a: u64, base: u64, size: u64, w: u64) -> bool {
    base <= a && a as u128 + w as u128 <= base as u128 + size as u128
}

#[test]
fn every_operand_at_six_bits() {
    let mut uut = InBounds::<6>::default();
    uut.connect_all();
    let mut inside = 0;
    for w in [0_u64, 1, 2, 7, 31, 32, 63] {
        for a in 0..64 {
            for base in 0..64 {
                for size in 0..64 {
                    let (ge, ok) = eval(&mut uut, a, base, size, w);
                    let expect = reference(a, base, size, w);
                    assert_eq!(ge, a >= base, "a={a} base={base}");
                    assert_eq!(ok, expect, "a={a} w={w} base={base} size={size}");
                    if w < 32 {
                        assert_eq!(expect, in_bounds(a, w as u32, base, size), "model at a={a} w={w} base={base} size={size}");
                    }
                    inside += expect as u32;
                }
            }
        }
    }
    // Both answers are exercised in quantity (not a constant output).
    assert!(inside > 100_000 && inside < 7 * 262_144 - 100_000, "{inside}");
}

#[test]
fn random_and_edge_operands_at_sixty_four_bits() {
    let mut uut = InBounds::<64>::default();
    uut.connect_all();
    let mut s = 0x1234_5678_u64;
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let edges = [0_u64, 1, 2, 31, 1 << 55, (1 << 56) - 1, 1 << 56, u64::MAX - 31, u64::MAX - 1, u64::MAX];
    let (mut inside, mut n) = (0, 0);
    for _ in 0..20_000 {
        let pick = |r: u64, x: u64| if r % 4 == 0 { edges[(x % edges.len() as u64) as usize] } else { x };
        let (r, base) = (next(), next());
        let base = pick(r, base);
        // An address near the allocation half the time, so both answers occur.
        let size = pick(next(), next() >> (next() % 64));
        let a = if next() % 2 == 0 { base.wrapping_add(next() % (size.saturating_add(64))).wrapping_sub(32) } else { pick(next(), next()) };
        let w = next() % 33;
        let (ge, ok) = eval(&mut uut, a, base, size, w);
        assert_eq!(ge, a >= base, "a={a:#x} base={base:#x}");
        let expect = reference(a, base, size, w);
        assert_eq!(ok, expect, "a={a:#x} w={w} base={base:#x} size={size:#x}");
        assert_eq!(expect, in_bounds(a, w as u32, base, size), "model at a={a:#x} w={w} base={base:#x} size={size:#x}");
        inside += expect as u32;
        n += 1;
    }
    assert!(inside > n / 10 && inside < n * 9 / 10, "{inside} of {n} inside");
}
