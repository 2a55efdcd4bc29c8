//! Input stimuli of the MLB for the energy measurements. Port names and
//! meanings are those of `hw::mlb::Mlb` (hw/src/mlb.rs): `reset`,
//! `rs_valid`/`rs_addr` (range search), `ls_valid`/`ls_loc` (location
//! search), `fill_*`, `inv_*`, `flush`.
//!
//! Every workload starts the same way (not measured): one reset cycle, N
//! fills that make every entry valid with distinct metadata, one idle
//! cycle. Then `cycles` measured cycles:
//! - `range_hit`: a range search every cycle, each hitting a random entry
//!   at a random offset (the LOADMETA path).
//! - `loc_hit`: a location search every cycle, each hitting a random entry
//!   (the MEMCHECK.G path).
//! - `miss_fill`: pairs of cycles: a range search that misses (a new
//!   allocation's address), then the fill of that allocation's metadata
//!   (replacing the PLRU victim). One miss = 2 cycles, so 0.5 ops/cycle.
//! - `idle`: no request (clocking and leakage only), per cycle.
use crate::activity::Stimulus;

/// A tiny deterministic generator (64-bit LCG, upper bits): stimuli must be
/// reproducible run to run.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 16
    }
}

#[derive(Clone, Copy, Debug)]
struct Alloc {
    loc: u64,
    base: u64,
    size: u64,
    tag: u64,
}

fn alloc(i: u64, r: &mut Lcg) -> Alloc {
    // Node pool and heap as in the runtime model (docs/design.md): 32-byte
    // nodes from 0x1000_0000_0000, 512-byte-aligned bases from
    // 0x7f00_0000_0000, sizes 256 B..64 KiB.
    Alloc {
        loc: 0x0000_1000_0000_0000 + 32 * i,
        base: 0x7f00_0000_0000 + i * 0x2_0000,
        size: 256 + r.next() % 0xFF00,
        tag: 1 + r.next() % 254,
    }
}

/// A location as the port takes it: 51-bit ports carry bits 55..5 (the
/// stored bits, docs/design.md), 64-bit ports the whole location.
fn loc_port(loc: u64, width: usize) -> u128 {
    if width == 51 {
        ((loc >> 5) & ((1 << 51) - 1)) as u128
    } else {
        loc as u128
    }
}

fn fill(a: &Alloc, lw: usize) -> Vec<(String, u128)> {
    vec![
        ("fill_valid".into(), 1),
        ("fill_loc".into(), loc_port(a.loc, lw)),
        ("fill_base".into(), a.base as u128),
        ("fill_size".into(), a.size as u128),
        ("fill_tag".into(), a.tag as u128),
    ]
}

pub const WORKLOADS: [&str; 4] = ["range_hit", "loc_hit", "miss_fill", "idle"];

/// The stimulus of workload `kind` for an N-entry MLB.
pub fn mlb(kind: &str, entries: usize, cycles: usize, loc_width: usize) -> Stimulus {
    let mut r = Lcg(0x5eed_0000 + entries as u64);
    let mut st = Stimulus::default();
    st.cycles.push(vec![("reset".into(), 1)]);
    st.cycles.push(vec![("reset".into(), 0)]);
    let live: Vec<Alloc> = (0..entries as u64).map(|i| alloc(i, &mut r)).collect();
    for a in &live {
        st.cycles.push(fill(a, loc_width));
    }
    st.cycles.push(vec![("fill_valid".into(), 0)]);
    st.warmup = st.cycles.len();
    let pick = |r: &mut Lcg| live[(r.next() % entries as u64) as usize];
    match kind {
        "range_hit" => {
            st.op = "range-search hit (LOADMETA)".into();
            st.ops_per_cycle = 1.0;
            for _ in 0..cycles {
                let a = pick(&mut r);
                let addr = a.base + r.next() % a.size;
                st.cycles.push(vec![("rs_valid".into(), 1), ("rs_addr".into(), addr as u128)]);
            }
        }
        "loc_hit" => {
            st.op = "location-search hit (MEMCHECK.G)".into();
            st.ops_per_cycle = 1.0;
            for _ in 0..cycles {
                let a = pick(&mut r);
                st.cycles.push(vec![("ls_valid".into(), 1), ("ls_loc".into(), loc_port(a.loc, loc_width))]);
            }
        }
        "miss_fill" => {
            st.op = "range-search miss + fill".into();
            st.ops_per_cycle = 0.5;
            let mut next = entries as u64;
            for _ in 0..cycles / 2 {
                // A fresh allocation above every earlier one: never in the MLB.
                let a = alloc(next, &mut r);
                next += 1;
                let addr = a.base + r.next() % a.size;
                st.cycles.push(vec![("fill_valid".into(), 0), ("rs_valid".into(), 1), ("rs_addr".into(), addr as u128)]);
                let mut f = fill(&a, loc_width);
                f.push(("rs_valid".into(), 0));
                st.cycles.push(f);
            }
        }
        _ => {
            st.op = "idle cycle".into();
            st.ops_per_cycle = 1.0;
            for _ in 0..cycles {
                st.cycles.push(vec![]);
            }
        }
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stimuli_have_the_documented_shape() {
        let s = mlb("range_hit", 8, 10, 51);
        assert_eq!(s.warmup, 2 + 8 + 1);
        assert_eq!(s.cycles.len(), s.warmup + 10);
        let m = mlb("miss_fill", 8, 10, 51);
        assert_eq!(m.cycles.len(), m.warmup + 10);
        assert_eq!(m.ops_per_cycle, 0.5);
        // Every measured hit address lies inside a filled allocation.
        let fills: Vec<(u128, u128)> = s.cycles[2..10]
            .iter()
            .map(|c| (c.iter().find(|x| x.0 == "fill_base").unwrap().1, c.iter().find(|x| x.0 == "fill_size").unwrap().1))
            .collect();
        for c in &s.cycles[s.warmup..] {
            let a = c.iter().find(|x| x.0 == "rs_addr").unwrap().1;
            assert!(fills.iter().any(|(b, z)| *b <= a && a < b + z));
        }
    }
}
