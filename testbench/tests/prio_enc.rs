//! hw::prio_enc::PrioEnc against independently computed values: exhaustive
//! for N <= 8, random vectors (plus all one-hot and two-hot ones) for 16, 32.
use hw::prio_enc::PrioEnc;
use rust_hdl::prelude::*;

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn check<const N: usize, const IW: usize>(vectors: impl Iterator<Item = u64>) -> usize {
    let mut uut: PrioEnc<N, IW> = PrioEnc::default();
    uut.connect_all();
    let mut count = 0;
    for v in vectors {
        for i in 0..N {
            uut.req[i].next = (v >> i) & 1 == 1;
        }
        assert!(simulate(&mut uut, 20), "PrioEnc<{N}> did not settle");
        let any = v != 0;
        let lowest = if any { v.trailing_zeros() as usize } else { 0 };
        assert_eq!(uut.any.val(), any, "N={N} req={v:#x}: any");
        assert_eq!(uut.index.val().index(), lowest, "N={N} req={v:#x}: index");
        assert_eq!(uut.multi.val(), v.count_ones() > 1, "N={N} req={v:#x}: multi");
        for i in 0..N {
            assert_eq!(uut.onehot[i].val(), any && i == lowest, "N={N} req={v:#x}: onehot[{i}]");
        }
        // Internal node k (heap order) covers the leaves [lo, hi) below it.
        for k in 0..N - 1 {
            let (mut lo, mut hi) = (k, k + 1);
            while lo < N - 1 {
                (lo, hi) = (2 * lo + 1, 2 * hi + 1);
            }
            let (lo, hi) = (lo - (N - 1), hi - (N - 1));
            let mid = (lo + hi) / 2;
            let under = |a: usize, b: usize| (a..b).any(|i| (v >> i) & 1 == 1);
            assert_eq!(uut.lower_any[k].val(), under(lo, mid), "N={N} req={v:#x}: lower_any[{k}]");
            assert_eq!(uut.path[k].val(), any && (lo..hi).contains(&lowest), "N={N} req={v:#x}: path[{k}]");
        }
        count += 1;
    }
    count
}

#[test]
fn exhaustive_up_to_8() {
    assert_eq!(check::<1, 1>(0..2), 2);
    assert_eq!(check::<2, 1>(0..4), 4);
    assert_eq!(check::<4, 2>(0..16), 16);
    assert_eq!(check::<8, 3>(0..256), 256);
}

fn vectors(n: usize, seed: u64) -> Vec<u64> {
    let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let mut v = vec![0, mask];
    for i in 0..n {
        v.push(1 << i);
        for j in i + 1..n {
            v.push((1 << i) | (1 << j));
        }
    }
    let mut s = seed;
    for _ in 0..500 {
        let r = splitmix(&mut s);
        // Sparse vectors too: the interesting cases have few bits set.
        v.push(r & splitmix(&mut s) & splitmix(&mut s) & mask);
        v.push(r & mask);
    }
    v
}

#[test]
fn random_16_and_32() {
    check::<16, 4>(vectors(16, 1).into_iter());
    check::<32, 5>(vectors(32, 2).into_iter());
}

#[test]
#[should_panic(expected = "IW must be")]
fn wrong_index_width_is_rejected() {
    let _ = PrioEnc::<8, 4>::default();
}
