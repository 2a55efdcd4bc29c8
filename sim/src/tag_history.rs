//! [`TagHistory`]: the per-address tag history the runtime's tag rule
//! draws on (spec section 1; the rule itself is `runtime`'s). Software
//! only: it stands for what GPUArmor's host runtime must remember.
use crate::runtime::TAG_HISTORY_MAX;
use std::collections::BTreeMap;

/// One segment of [`TagHistory`]: `[start, end)` (start is the map key) and
/// the tags of the last allocations that covered it, most recent first.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seg {
    end: u64,
    tags: Vec<u8>,
}

/// The exact per-address tag history behind the tag rule (spec section 1):
/// disjoint address segments, each with the tags of the last `depth`
/// allocations that covered all of it (an allocation covers a segment
/// entirely or not at all: segments are split at every allocation's ends).
/// Addresses outside every segment were never allocated. Adjacent segments
/// with equal histories are merged, so the map stays as small as the
/// allocation pattern allows; a malloc costs O(log n + segments touched).
#[derive(Clone, Debug, Default)]
pub struct TagHistory {
    depth: usize,
    segs: BTreeMap<u64, Seg>,
}

impl TagHistory {
    /// An empty history keeping the last `depth` tags per address (0: none;
    /// at most [`TAG_HISTORY_MAX`], larger values are clamped).
    pub fn new(depth: usize) -> TagHistory {
        TagHistory { depth: depth.min(TAG_HISTORY_MAX), segs: BTreeMap::new() }
    }

    /// How many segments the history holds (for tests and reports).
    pub fn segments(&self) -> usize {
        self.segs.len()
    }

    /// The history of the segment holding address `a`, most recent first
    /// (empty if `a` was never allocated or the depth is 0).
    pub fn at(&self, a: u64) -> &[u8] {
        match self.segs.range(..=a).next_back() {
            Some((_, s)) if s.end > a => &s.tags,
            _ => &[],
        }
    }

    /// For every tag, the smallest position (1 = most recent) at which it
    /// occurs in the history of a segment overlapping `[base, end)`; 0 where
    /// it does not occur.
    pub fn min_depths(&self, base: u64, end: u64) -> [u8; 256] {
        let mut d = [0u8; 256];
        for (_, s) in self.segs.range(..end).rev().take_while(|(_, s)| s.end > base) {
            for (i, &t) in s.tags.iter().enumerate() {
                let pos = (i + 1) as u8;
                if d[t as usize] == 0 || d[t as usize] > pos {
                    d[t as usize] = pos;
                }
            }
        }
        d
    }

    /// Split the segment holding `at` (if any, and if `at` is inside it) so
    /// that a segment starts at `at`.
    fn split(&mut self, at: u64) {
        let Some((&start, s)) = self.segs.range_mut(..at).next_back() else { return };
        if s.end <= at || start == at {
            return;
        }
        let right = Seg { end: s.end, tags: s.tags.clone() };
        s.end = at;
        self.segs.insert(at, right);
    }

    /// Record an allocation of `[base, end)` with `tag`: push it onto the
    /// history of every segment it covers (creating segments where none
    /// was), keep the last `depth`, merge equal neighbours.
    pub fn record(&mut self, base: u64, end: u64, tag: u8) {
        if self.depth == 0 || end <= base {
            return;
        }
        self.split(base);
        self.split(end);
        let mut gaps = Vec::new();
        let mut cur = base;
        for (&start, s) in self.segs.range_mut(base..end) {
            if start > cur {
                gaps.push((cur, start));
            }
            s.tags.insert(0, tag);
            s.tags.truncate(self.depth);
            cur = s.end;
        }
        if cur < end {
            gaps.push((cur, end));
        }
        for (s, e) in gaps {
            self.segs.insert(s, Seg { end: e, tags: vec![tag] });
        }
        // Merge from the segment ending at `base` (if adjacent) up to the
        // one starting at `end`.
        let first = match self.segs.range(..base).next_back() {
            Some((&k, s)) if s.end == base => k,
            _ => base,
        };
        let keys: Vec<u64> = self.segs.range(first..=end).map(|(&k, _)| k).collect();
        let mut keep = keys[0];
        for &k in &keys[1..] {
            let (ke, kt) = {
                let a = &self.segs[&keep];
                (a.end, a.tags == self.segs[&k].tags)
            };
            if ke == k && kt {
                let e = self.segs.remove(&k).expect("listed").end;
                self.segs.get_mut(&keep).expect("kept").end = e;
            } else {
                keep = k;
            }
        }
    }
}
