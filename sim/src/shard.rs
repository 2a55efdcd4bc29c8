//! `--shard I/N`: one of N independent jobs of a run (`mlugen cosim`;
//! the trace sweep no longer needs it). Item k of the run's canonical order (a
//! cosimulation seed) belongs to shard k mod N: the shards are disjoint,
//! cover the run, and do not depend on threads or machines. `mlugen merge`
//! joins their outputs into what the unsharded run writes.
use serde::{Deserialize, Serialize};

/// Shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

/// The most shards a run may be split into.
pub const MAX_SHARDS: u64 = 100_000;

impl Shard {
    /// `I/N` with 0 <= I < N <= [`MAX_SHARDS`].
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s.split_once('/').ok_or_else(|| format!("shard {s:?}: expected I/N, e.g. 0/4"))?;
        let index: u64 = i.trim().parse().map_err(|_| format!("shard {s:?}: I is not a number"))?;
        let count: u64 = n.trim().parse().map_err(|_| format!("shard {s:?}: N is not a number"))?;
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(format!("shard {s:?}: need 0 <= I < N <= {MAX_SHARDS}"));
        }
        Ok(Shard { index, count })
    }

    /// Whether item `k` of the canonical order is in this shard.
    pub fn holds(&self, k: u64) -> bool {
        k % self.count == self.index
    }

    /// Checks that `shards` (each with the name of its file) are exactly
    /// 0..N of one split, each once; None stands for an unsharded run (0/1).
    pub fn check_cover<'a>(shards: impl IntoIterator<Item = (&'a str, Option<Shard>)>) -> Result<(), String> {
        let mut seen: Vec<Option<&str>> = Vec::new();
        let mut first: Option<(&str, u64)> = None;
        for (name, sh) in shards {
            let sh = sh.unwrap_or(Shard { index: 0, count: 1 });
            let (first_name, count) = *first.get_or_insert((name, sh.count));
            if sh.count != count {
                return Err(format!("{name}: shard {}/{} of a run split {} ways, {first_name} {count} ways", sh.index, sh.count, sh.count));
            }
            seen.resize(count as usize, None);
            if let Some(other) = seen[sh.index as usize] {
                return Err(format!("{name}: shard {}/{count} is also in {other}", sh.index));
            }
            seen[sh.index as usize] = Some(name);
        }
        let count = first.ok_or("nothing to merge")?.1;
        if let Some(i) = seen.iter().position(|s| s.is_none()) {
            return Err(format!("shard {i}/{count} is missing"));
        }
        Ok(())
    }
}
