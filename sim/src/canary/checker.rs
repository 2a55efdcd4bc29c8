//! The always-on background checker (RTL block `checker`).
//!
//! It keeps the live-chunk list compressed: an entry is the chunk's index from
//! the heap base in units of the smallest size class, ceil(log2(heap bytes /
//! smallest class)) bits, instead of a 64-bit pointer. Every cycle it earns
//! `rate` (R) checks; a check re-reads both canaries of the entry under the
//! cursor (the heap does the reads, see `Heap::checker_tick`).
//!
//! Sweep order and the latency bound: the cursor walks positions 0..len and
//! wraps. New entries are appended (ahead of the cursor). A removal behind
//! the cursor moves the last visited entry into the hole and the last entry
//! into that visited slot, then steps the cursor back one, so no unvisited
//! entry ever lands behind the cursor. Hence every entry live for a whole
//! window of ceil(L_max / R) cycles (L_max = most live entries in the window)
//! is checked within it: the detection-latency bound.
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct Checker {
    list: Vec<u32>,
    pos: HashMap<u32, usize>,
    cursor: usize,
    rate: f64,
    credit: f64,
    index_bits: u32,
}

impl Checker {
    /// `index_space`: number of distinct chunk indices (heap bytes / smallest
    /// class). `rate`: checks per cycle, 0 < R <= 64.
    pub fn new(index_space: u64, rate: f64) -> Checker {
        let index_bits = 64 - (index_space.max(2) - 1).leading_zeros();
        Checker { list: Vec::new(), pos: HashMap::new(), cursor: 0, rate, credit: 0.0, index_bits }
    }

    /// Bits per live-list entry (vs 64 for a pointer).
    pub fn index_bits(&self) -> u32 {
        self.index_bits
    }
    pub fn rate(&self) -> f64 {
        self.rate
    }
    pub fn len(&self) -> usize {
        self.list.len()
    }
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    pub fn contains(&self, idx: u32) -> bool {
        self.pos.contains_key(&idx)
    }
    /// The list as stored (for invariant checks).
    pub fn entries(&self) -> &[u32] {
        &self.list
    }
    /// Position of `idx` in the list.
    pub fn position(&self, idx: u32) -> Option<usize> {
        self.pos.get(&idx).copied()
    }
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Guaranteed detection latency in cycles with `live` chunks live.
    pub fn latency_bound(&self, live: usize) -> u64 {
        (live as f64 / self.rate).ceil() as u64
    }

    pub fn insert(&mut self, idx: u32) {
        debug_assert!(!self.pos.contains_key(&idx));
        self.pos.insert(idx, self.list.len());
        self.list.push(idx);
    }

    pub fn remove(&mut self, idx: u32) {
        let Some(j) = self.pos.remove(&idx) else { return };
        let last = self.list.len() - 1;
        if j >= self.cursor {
            // Unvisited hole: fill it with the (unvisited) last entry.
            self.move_entry(last, j);
        } else {
            // Visited hole: fill with the last visited entry, then that slot
            // with the last entry (unvisited) and step the cursor back over it.
            let v = self.cursor - 1;
            self.move_entry(v, j);
            self.move_entry(last, v);
            self.cursor -= 1;
        }
        self.list.pop();
        if self.cursor > self.list.len() {
            self.cursor = self.list.len();
        }
    }

    fn move_entry(&mut self, from: usize, to: usize) {
        if from != to {
            let e = self.list[from];
            self.list[to] = e;
            self.pos.insert(e, to);
        }
    }

    /// Advance one cycle: the indices to check this cycle (at most one pass
    /// over the list).
    pub fn tick(&mut self) -> Vec<u32> {
        self.credit += self.rate;
        let n = (self.credit.floor() as usize).min(self.list.len());
        self.credit -= self.credit.floor();
        self.take(n)
    }

    /// The next `n` entries under the cursor (wrapping), advancing it.
    pub fn take(&mut self, n: usize) -> Vec<u32> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n.min(self.list.len()) {
            if self.cursor >= self.list.len() {
                self.cursor = 0;
            }
            out.push(self.list[self.cursor]);
            self.cursor += 1;
        }
        out
    }
}
