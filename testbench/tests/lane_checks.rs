//! hw::lane_checks::LaneChecks (rust-hdl simulation) against its golden
//! twin sim::memcheck::check_lanes: random warp-wide MEMCHECK.G and .S
//! instructions (lanes inside, at and past the edges of the allocation,
//! untagged, wrongly tagged; metadata live, FREED or missing with each
//! lookup fault; location operands 0, NO_META and real; HWONLY), 32 lanes
//! and 1, every output compared.
use hw::lane_checks::LaneChecks;
use rust_hdl::prelude::*;
use sim::fault::FaultCode;
use sim::memcheck::check_lanes;
use sim::node::Meta;
use sim::pointer::{tagged, ADDR_MASK, NO_META, TAG_FREED};
use sim::runtime::SplitMix64;

fn run<const L: usize, const LW: usize>(seed: u64, n: usize) -> [u64; 8] {
    let mut u = LaneChecks::<L, LW>::default();
    u.connect_all();
    let mut rng = SplitMix64(seed);
    let mut seen = [0u64; 8];
    for k in 0..n {
        let x = rng.next_u64();
        let base = (rng.next_u64() % (1 << 40)) & !0xF;
        let size = 1 + rng.next_u64() % 4096;
        let tag = 1 + (x % 254) as u8;
        let meta = Meta { base, size, tag: if x % 11 == 0 { TAG_FREED } else { tag } };
        let shared = x % 7 == 0;
        let hwonly = x % 5 == 0;
        let width = [1u32, 2, 4, 8, 16][(x >> 8) as usize % 5];
        let loc = match (x >> 12) % 10 {
            0 => 0,
            1 => NO_META,
            _ => 0x4000_0000_0000 + ((x >> 16) & 0xFFFF) * 32,
        };
        let meta_valid = (x >> 20) % 6 != 0;
        let meta_fault = [FaultCode::NoMeta, FaultCode::TraversalLimit, FaultCode::MemError][(x >> 24) as usize % 3];
        let (sbase, ssize) = ((x >> 28) % 0x100, 0x100 + (x >> 36) % 0x400);
        // Mostly all lanes active with few faults, so the lowest faulting
        // lane is spread over the warp.
        let mask = if L == 1 { 1 } else if (x >> 40) % 4 == 0 { rng.next_u64() as u32 } else { u32::MAX };
        let ptrs: Vec<u64> = (0..L)
            .map(|_| {
                let y = rng.next_u64();
                let p = match y % 40 {
                    0 => tagged(0, base + y % size),
                    1 => tagged(tag ^ 1, base),
                    2 => tagged(tag, base + size),
                    3 => tagged(tag, base + size - (y >> 8) % 17),
                    4 => tagged(tag, base.wrapping_sub(1 + (y >> 8) % 4)),
                    _ => tagged(tag, base + (y >> 8) % size.saturating_sub(16).max(1)),
                };
                if shared { sbase + (y >> 20) % (ssize + 64) } else { p }
            })
            .collect();
        let lookup = if meta_valid { Ok(meta) } else { Err(meta_fault) };
        let (pass, first) = check_lanes(shared, if L == 32 { mask } else { mask & 1 }, &ptrs, width, (!hwonly).then_some(loc), Some(lookup), sbase, ssize);
        u.shared.next = shared;
        u.hwonly.next = hwonly;
        for i in 0..L {
            u.mask[i].next = mask >> i & 1 == 1;
            u.ptr[i].next = ptrs[i].into();
        }
        for w in &mut u.width {
            w.next = (width as u64).into();
        }
        u.loc_meta.next = loc != 0 && loc != NO_META;
        u.meta_valid.next = meta_valid;
        // Every active lane reads its own copy of the metadata; an inactive
        // lane's copy is junk (the MLU unit loads a group's copy only when
        // one of its lanes is active), which must not matter.
        for i in 0..L {
            let active = mask >> i & 1 == 1;
            let junk = rng.next_u64();
            u.meta_base[i].next = (if active { meta.base } else { junk & ADDR_MASK }).into();
            u.meta_size[i].next = (if active { meta.size } else { junk.rotate_left(17) & ADDR_MASK }).into();
            u.meta_tag[i].next = (if active { meta.tag as u64 } else { junk >> 56 }).into();
        }
        u.meta_fault.next = (meta_fault.bits() as u64).into();
        for i in 0..L {
            u.sbase[i].next = sbase.into();
            u.ssize[i].next = ssize.into();
        }
        assert!(simulate(&mut u, 100), "lane checks did not settle");
        let ctx = format!("instruction {k}: shared {shared} hwonly {hwonly} w {width} loc {loc:#x} meta {meta:?} valid {meta_valid} ({meta_fault:?}) mask {mask:#x} ptrs {ptrs:x?}");
        for i in 0..L {
            assert_eq!(u.pass[i].val(), pass >> i & 1 == 1, "{ctx}: lane {i} pass");
        }
        assert_eq!(u.any_fault.val(), first.is_some(), "{ctx}: any_fault");
        let (lane, fault) = first.unwrap_or((0, FaultCode::None));
        assert_eq!(u.fault.val().to_u64(), fault.bits() as u64, "{ctx}: fault");
        assert_eq!(u.lane.val().to_u64(), lane as u64, "{ctx}: lane");
        seen[fault.bits() as usize] += 1;
    }
    seen
}

#[test]
fn lane_checks_match_the_model_32_lanes() {
    let seen = run::<32, 5>(1, 20_000);
    eprintln!("32 lanes, instructions per reported fault code (NONE..MEM_ERROR): {seen:?}");
    assert!(seen.iter().enumerate().all(|(c, &n)| c == FaultCode::None.bits() as usize || n > 50), "{seen:?}");
}

#[test]
fn lane_checks_match_the_model_1_lane() {
    let seen = run::<1, 1>(2, 20_000);
    eprintln!("1 lane: {seen:?}");
    assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
}
