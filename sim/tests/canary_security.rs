//! Canary security: SipHash-2-4 against the published vectors, canary
//! independence, check-on-free, slack, and the background checker's bound.
use sim::runtime::SplitMix64;
use sim::canary::heap::{CheckMode, Heap, HeapConfig, Overflow};
use sim::canary::siphash::{siphash24, CanaryKey};

const K0: u64 = 0x0706_0504_0302_0100;
const K1: u64 = 0x0f0e_0d0c_0b0a_0908;

#[test]
fn siphash_matches_published_vectors() {
    // Aumasson & Bernstein's reference vectors: key 00..0f, message 00..(n-1).
    let msg: Vec<u8> = (0u8..64).collect();
    assert_eq!(siphash24(K0, K1, &msg[..0]), 0x726f_db47_dd0e_0e31);
    assert_eq!(siphash24(K0, K1, &msg[..1]), 0x74f8_39c5_93dc_67fd);
    assert_eq!(siphash24(K0, K1, &msg[..8]), 0x93f5_f579_9a93_2462);
    assert_eq!(siphash24(K0, K1, &msg[..15]), 0xa129_ca61_49be_45e5);
}

#[test]
fn adjacent_canaries_are_uncorrelated() {
    let key = CanaryKey { k0: 0x1234_5678_9abc_def0, k1: 0x0fed_cba9_8765_4321 };
    let n = 20_000u64;
    let base = 0x1000_0000u64;
    let stride = 32; // adjacent chunks of the smallest class
    let mut dist = 0u64;
    let mut ones = [0u64; 64];
    let c0 = key.canary(base);
    let c1 = key.canary(base + stride);
    // Simple relations an attacker might guess from one known pair.
    let (dx, da, dr) = (c0 ^ c1, c1.wrapping_sub(c0), c1.rotate_left(1) ^ c0);
    let mut relation_holds = 0;
    for i in 1..n {
        let a = key.canary(base + i * stride);
        let b = key.canary(base + (i + 1) * stride);
        dist += (a ^ b).count_ones() as u64;
        for (bit, o) in ones.iter_mut().enumerate() {
            *o += (a >> bit) & 1;
        }
        if a ^ b == dx || b.wrapping_sub(a) == da || b.rotate_left(1) ^ a == dr {
            relation_holds += 1;
        }
    }
    let mean = dist as f64 / (n - 1) as f64;
    // Independent 64-bit words differ in 32 +- 0.03 bits on average here.
    assert!((31.7..32.3).contains(&mean), "mean Hamming distance {mean}");
    for (bit, &o) in ones.iter().enumerate() {
        let f = o as f64 / (n - 1) as f64;
        assert!((0.47..0.53).contains(&f), "bit {bit} set with frequency {f}");
    }
    assert_eq!(relation_holds, 0, "a simple relation between adjacent canaries held");
    // The same address under another key gives an unrelated canary.
    let other = CanaryKey { k0: key.k0 ^ 1, k1: key.k1 };
    let d: u32 = (0..1000).map(|i| (key.canary(base + i * 8) ^ other.canary(base + i * 8)).count_ones()).sum();
    assert!((30_000..34_000).contains(&d), "key flip changed {d} bits over 1000 canaries");
}

fn heap(check: CheckMode, slack: u64) -> Heap {
    Heap::new(HeapConfig { check, slack, pages: 32, region_pages: 4, ..HeapConfig::default() }).unwrap()
}

#[test]
fn check_on_free_reports_front_and_rear_overflow() {
    let mut h = heap(CheckMode::Free, 0);
    let a = h.malloc(40, 0).unwrap();
    let b = h.malloc(40, 0).unwrap();
    let c = h.malloc(40, 0).unwrap();
    let d = h.malloc(40, 0).unwrap();
    // In bounds: no report.
    h.write(a.ptr, &[0xaa; 40]).unwrap();
    // One byte past the end of b hits b's rear canary.
    h.write(b.ptr + 40, &[0]).unwrap();
    // One byte before c hits c's front canary.
    h.write(c.ptr - 1, &[0xff]).unwrap();
    let fa = h.free(a.ptr).unwrap();
    assert_eq!(fa.overflow, None);
    let fb = h.free(b.ptr).unwrap();
    assert_eq!(fb.overflow, Some(Overflow { chunk: b.chunk, ptr: b.ptr, front: false, rear: true }));
    let fc = h.free(c.ptr).unwrap();
    assert_eq!(fc.overflow, Some(Overflow { chunk: c.chunk, ptr: c.ptr, front: true, rear: false }));
    // Writing the whole rear canary with a guessed value (the front canary of
    // a neighbour the attacker read) is still caught.
    let d_rear = d.ptr + 40;
    let mut leaked = [0u8; 8];
    leaked.copy_from_slice(&h.config().key.canary(a.chunk).to_le_bytes());
    h.write(d_rear, &leaked).unwrap();
    assert!(h.free(d.ptr).unwrap().overflow.unwrap().rear);
    h.check_invariants().unwrap();
    assert_eq!(h.live(), 0);
}

#[test]
fn overflow_within_slack_is_tolerated() {
    let mut h = heap(CheckMode::Free, 16);
    let a = h.malloc(40, 1).unwrap();
    h.write(a.ptr + 40, &[0x55; 16]).unwrap(); // exactly the slack
    assert_eq!(h.free(a.ptr).unwrap().overflow, None);
    let b = h.malloc(40, 1).unwrap();
    h.write(b.ptr + 40, &[0x55; 17]).unwrap(); // one byte beyond the slack
    assert!(h.free(b.ptr).unwrap().overflow.unwrap().rear);
    // Without slack the first overflow would have been reported.
    let mut h0 = heap(CheckMode::Free, 0);
    let c = h0.malloc(40, 1).unwrap();
    h0.write(c.ptr + 40, &[0x55; 1]).unwrap();
    assert!(h0.free(c.ptr).unwrap().overflow.is_some());
}

#[test]
fn checker_list_is_compressed() {
    let h = heap(CheckMode::Always, 0);
    // 32 pages * 4096 B / 32 B smallest class = 4096 indices = 12 bits.
    assert_eq!(h.checker().index_bits(), 12);
    let big = Heap::new(HeapConfig { check: CheckMode::Always, pages: 1 << 16, ..HeapConfig::default() });
    // 2^16 * 4096 / 32 = 2^23 indices: 23 bits vs a 64-bit pointer.
    assert_eq!(big.unwrap().checker().index_bits(), 23);
}

#[test]
fn checker_detects_overflow_within_bound() {
    let mut rng = SplitMix64(7);
    for trial in 0..40 {
        let rate = [0.25, 0.5, 1.0, 2.0][trial % 4];
        let mut h = Heap::new(HeapConfig { check: CheckMode::Always, checker_rate: rate, pages: 64, region_pages: 8, ..HeapConfig::default() }).unwrap();
        let mut ptrs = Vec::new();
        for i in 0..(50 + rng.below(150)) {
            ptrs.push(h.malloc(8 + rng.below(200), i % 5).unwrap().ptr);
        }
        // Churn so the list order is not the allocation order.
        for _ in 0..30 {
            let i = rng.below(ptrs.len() as u64) as usize;
            h.free(ptrs.swap_remove(i)).unwrap();
            h.checker_tick();
        }
        h.check_invariants().unwrap();
        let live = h.live_chunks();
        let bound = h.checker().latency_bound(h.live());
        assert_eq!(bound, (h.live() as f64 / rate).ceil() as u64);
        // Run a random number of cycles, then overflow a random live chunk.
        for _ in 0..rng.below(3 * bound) {
            assert!(h.checker_tick().0.is_empty(), "false positive");
        }
        let (_, victim, size, _) = live[rng.below(live.len() as u64) as usize];
        let front = rng.below(2) == 0;
        let key = h.config().key;
        // Flip the canary byte actually stored there (complement: never equal).
        let (addr, stored) = if front {
            (victim - 1, (key.canary(victim - 8) >> 56) as u8)
        } else {
            (victim + size, key.canary(victim + size) as u8)
        };
        h.write(addr, &[!stored]).unwrap();
        let mut t = 0;
        let found = loop {
            t += 1;
            let (f, _) = h.checker_tick();
            if let Some(o) = f.into_iter().next() {
                break o;
            }
            assert!(t <= bound, "trial {trial}: not detected within the bound of {bound} cycles");
        };
        assert_eq!(found.ptr, victim);
        assert_eq!((found.front, found.rear), (front, !front));
        assert!(t <= bound);
    }
}
