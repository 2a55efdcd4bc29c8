//! The keyed primitive behind canary_key: SipHash-2-4 (Aumasson & Bernstein,
//! 2012), 128-bit key, 64-bit tag. A canary is SipHash-2-4 of the canary's own
//! address (8 bytes, little endian) under the secret key register, so reading
//! one canary tells nothing about another without the key.

/// The secret key register (two 64-bit halves, k0 = bytes 0..8 LE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CanaryKey {
    pub k0: u64,
    pub k1: u64,
}

impl CanaryKey {
    /// Canary stored at `addr` (front canary at the chunk start, rear canary
    /// after the user bytes and slack).
    pub fn canary(&self, addr: u64) -> u64 {
        siphash24(self.k0, self.k1, &addr.to_le_bytes())
    }
}

#[inline]
fn sipround(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13);
    v[1] ^= v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16);
    v[3] ^= v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21);
    v[3] ^= v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17);
    v[1] ^= v[2];
    v[2] = v[2].rotate_left(32);
}

/// SipHash-2-4 of `msg` under key (k0, k1).
pub fn siphash24(k0: u64, k1: u64, msg: &[u8]) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    let mut blocks = msg.chunks_exact(8);
    for b in &mut blocks {
        let m = u64::from_le_bytes(b.try_into().expect("8-byte block"));
        v[3] ^= m;
        sipround(&mut v);
        sipround(&mut v);
        v[0] ^= m;
    }
    let mut last = (msg.len() as u64) << 56;
    for (i, &byte) in blocks.remainder().iter().enumerate() {
        last |= (byte as u64) << (8 * i);
    }
    v[3] ^= last;
    sipround(&mut v);
    sipround(&mut v);
    v[0] ^= last;
    v[2] ^= 0xff;
    for _ in 0..4 {
        sipround(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}
