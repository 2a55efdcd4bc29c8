//! hw::memcheck::Memcheck against sim::memcheck (memcheck_g_decide,
//! memcheck_s): random vectors plus the edges: addresses and sizes near 2^56,
//! base + size above 2^56, every width 0..=31 (1-16 are the real ones), the
//! first/last byte and one past, tag 0, FREED, location 0 and NO_META.
use hw::memcheck::Memcheck;
use rust_hdl::prelude::*;
use sim::fault::FaultCode;
use sim::memcheck::{memcheck_g_decide, memcheck_s};
use sim::node::Meta;
use sim::pointer::{tag, tagged, untag, ADDR_MASK, NO_META, TAG_FREED};

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn code(r: Result<u64, FaultCode>) -> FaultCode {
    r.err().unwrap_or(FaultCode::None)
}

/// Drive one MEMCHECK.G vector (`meta` None = metadata not there yet) and
/// compare with the model.
fn check_g(uut: &mut Memcheck, p: u64, w: u32, loc: u64, meta: Option<Meta>) {
    let m = meta.unwrap_or(Meta { base: 0, size: 0, tag: 0 });
    uut.g_ptr.next = bits(p);
    uut.g_width.next = bits(w as u64);
    uut.g_loc.next = bits(loc);
    uut.g_meta_valid.next = meta.is_some();
    uut.g_meta_base.next = bits(m.base);
    uut.g_meta_size.next = bits(m.size);
    uut.g_meta_tag.next = bits(m.tag as u64);
    assert!(simulate(uut, 20));
    let ctx = format!("p={p:#x} w={w} loc={loc:#x} meta={meta:?}");
    let need = tag(p) != 0 && loc != 0 && loc != NO_META;
    assert_eq!(uut.g_need_meta.val(), need, "{ctx}: need_meta");
    assert_eq!(uut.g_done.val(), !need || meta.is_some(), "{ctx}: done");
    assert_eq!(uut.g_addr.val().to_u64(), untag(p), "{ctx}: addr");
    let expect = match meta {
        // The model answers MEM_ERROR without metadata; the block is not done
        // then and reports NONE (the MLU top owns MEM_ERROR).
        None if need => FaultCode::None,
        _ => code(memcheck_g_decide(p, w, loc, meta)),
    };
    assert_eq!(uut.g_fault.val().to_u64(), expect.bits() as u64, "{ctx}: fault (model {expect})");
}

fn check_s(uut: &mut Memcheck, a: u32, w: u32, base: u32, size: u32) {
    uut.s_addr.next = bits(a as u64);
    uut.s_width.next = bits(w as u64);
    uut.s_base.next = bits(base as u64);
    uut.s_size.next = bits(size as u64);
    assert!(simulate(uut, 20));
    let expect = code(memcheck_s(a as u64, w, base as u64, size as u64));
    let ctx = format!("a={a:#x} w={w} base={base:#x} size={size:#x}");
    assert_eq!(uut.s_ok.val(), expect == FaultCode::None, "{ctx}: ok");
    assert_eq!(uut.s_fault.val().to_u64(), expect.bits() as u64, "{ctx}: fault");
}

fn new_uut() -> Memcheck {
    let mut uut = Memcheck::default();
    uut.connect_all();
    uut
}

#[test]
fn memcheck_g_edges() {
    let mut uut = new_uut();
    let top = ADDR_MASK; // 2^56 - 1
    let metas = [
        Meta { base: 0x7f00_0000_0000, size: 2400, tag: 5 },
        Meta { base: top - 15, size: 16, tag: 5 },         // ends exactly at 2^56
        Meta { base: top - 7, size: 1 << 40, tag: 5 },     // base + size > 2^56
        Meta { base: 0, size: ADDR_MASK, tag: 5 },          // size near 2^56
        Meta { base: 1, size: ADDR_MASK, tag: 5 },          // base + size = 2^56
        Meta { base: 0x1000, size: 0, tag: 5 },             // empty
        Meta { base: 0x1000, size: 1, tag: 5 },
        Meta { base: 0x7f00_0000_0000, size: 2400, tag: TAG_FREED },
        Meta { base: 0x7f00_0000_0000, size: 2400, tag: 6 },
    ];
    let loc = 0x0000_1000_0000_0040;
    let mut n = 0;
    for m in metas {
        let end = m.base as u128 + m.size as u128;
        let mut addrs = vec![m.base, m.base.wrapping_sub(1), m.base.wrapping_add(1), top, 0, top - 16];
        for k in 0..=17u128 {
            if let Some(a) = end.checked_sub(k) {
                addrs.push((a as u64) & ADDR_MASK);
            }
        }
        addrs.push(((end + 1) as u64) & ADDR_MASK);
        for a in addrs {
            for w in 0..32 {
                for t in [0u8, 5, 6, TAG_FREED] {
                    let p = tagged(t, a);
                    check_g(&mut uut, p, w, loc, Some(m));
                    n += 1;
                }
            }
            for l in [0, NO_META, loc] {
                check_g(&mut uut, tagged(5, a), 4, l, Some(m));
                check_g(&mut uut, tagged(5, a), 4, l, None);
                check_g(&mut uut, tagged(0, a), 4, l, None);
            }
        }
    }
    assert!(n > 10_000);
    // Spot values known without the model.
    let m = Meta { base: 0x7f00_0000_0000, size: 2400, tag: 5 };
    check_g(&mut uut, tagged(5, m.base + 2396), 4, loc, Some(m));
    assert_eq!(uut.g_fault.val().to_u64(), FaultCode::None.bits() as u64);
    check_g(&mut uut, tagged(5, m.base + 2397), 4, loc, Some(m));
    assert_eq!(uut.g_fault.val().to_u64(), FaultCode::OutOfBounds.bits() as u64, "straddles the end");
    check_g(&mut uut, tagged(0xFF, m.base), 4, NO_META, Some(m));
    assert_eq!(uut.g_fault.val().to_u64(), FaultCode::NoMeta.bits() as u64, "NO_META before the tag checks");
}

#[test]
fn memcheck_g_random() {
    let mut uut = new_uut();
    let mut s = 42;
    for _ in 0..40_000 {
        let mut r = || splitmix(&mut s);
        let x = r();
        let base = match x % 4 {
            0 => r() & ADDR_MASK,
            1 => ADDR_MASK - (r() % 4096),
            _ => 0x7f00_0000_0000 + (r() % (1 << 30)),
        };
        let size = match (x >> 2) % 4 {
            0 => r() & ADDR_MASK,
            1 => ADDR_MASK - (r() % 64),
            2 => r() % 64,
            _ => r() % (1 << 24),
        };
        let mtag = match (x >> 4) % 4 {
            0 => TAG_FREED,
            1 => r() as u8,
            _ => 0x5a,
        };
        let a = match (x >> 6) % 4 {
            0 => r() & ADDR_MASK,
            1 => base.wrapping_add(size).wrapping_sub(r() % 20) & ADDR_MASK,
            2 => base.wrapping_sub(r() % 4) & ADDR_MASK,
            _ => base.wrapping_add(r() % size.max(1)) & ADDR_MASK,
        };
        let ptag = match (x >> 8) % 5 {
            0 => 0,
            1 => r() as u8,
            _ => 0x5a,
        };
        let w = if (x >> 11) % 4 == 0 { (r() % 32) as u32 } else { [1, 2, 4, 8, 16][(r() % 5) as usize] };
        let loc = match (x >> 13) % 8 {
            0 => 0,
            1 => NO_META,
            2 => r(),
            _ => 0x0000_1000_0000_0000 + 32 * (r() % 1000),
        };
        let meta = ((x >> 16) % 8 != 0).then_some(Meta { base, size, tag: mtag });
        check_g(&mut uut, tagged(ptag, a), w, loc, meta);
    }
}

#[test]
fn memcheck_s_edges_and_random() {
    let mut uut = new_uut();
    let max = u32::MAX;
    for (base, size) in [(0, 4096), (0, max), (max - 15, 16), (max - 3, 100), (0x100, 0), (0x100, 1), (1, max)] {
        let end = base as u64 + size as u64;
        let mut addrs = vec![base, base.wrapping_sub(1), base.wrapping_add(1), 0, max];
        for k in 0..=17u64 {
            if let Some(a) = end.checked_sub(k) {
                addrs.push(a as u32);
            }
        }
        for a in addrs {
            for w in 0..32 {
                check_s(&mut uut, a, w, base, size);
            }
        }
    }
    // The spec's example: offset 4096 of a 4096-byte window.
    check_s(&mut uut, 4096, 4, 0, 4096);
    assert_eq!(uut.s_fault.val().to_u64(), FaultCode::SharedOob.bits() as u64);
    let mut s = 9;
    for _ in 0..20_000 {
        let mut r = || splitmix(&mut s);
        let base = if r() % 2 == 0 { r() as u32 } else { (r() % 65536) as u32 };
        let size = if r() % 2 == 0 { r() as u32 } else { (r() % 65536) as u32 };
        let a = if r() % 2 == 0 { r() as u32 } else { base.wrapping_add(size).wrapping_sub((r() % 20) as u32) };
        check_s(&mut uut, a, (r() % 17) as u32, base, size);
    }
}
