//! The MLB cycle cosimulation: random per-cycle stimulus generated in Rust,
//! the same cycles through the golden model ([`sim::mlb::Mlb::cycle`]) and
//! through a simulator of the emitted Verilog, every output compared every
//! cycle.
//!
//! Timing (hw/src/mlb.rs's port documentation): the harness samples the
//! outputs with the cycle's inputs applied, before the rising edge. So in the
//! sample of cycle t
//! - `victim`, `fill_ok` (combinational) answer cycle t's inputs on the state
//!   before cycle t's edge;
//! - `repl_state` is the replacement register after t-1's edge (the state
//!   before cycle t);
//! - `*_hit`, `*_way`, `rs_loc`, `*_base`, `*_size`, `*_tag`, `*_multi`
//!   (registered) answer the searches of cycle t-1; the data fields are only
//!   compared on a hit (they are documented as meaningful only then).
//!
//! Cycle 0 is always a reset (the design's state is random before it) and its
//! sample is not compared.
use crate::verilator::{Dir, Layout, PortSlot};
use anyhow::Result;
use sim::config::Replacement;
use sim::mlb::{Mlb, MlbCycleInputs, MlbEntry, LOC_MASK};
use sim::node::Meta;
use sim::pointer::ADDR_MASK;
use sim::runtime::SplitMix64;
use std::fmt;

const LOC_BITS: usize = 51;
const LOC51: u64 = (1u64 << LOC_BITS) - 1;

/// The MLB's ports in a record (widths checked against the manifest).
#[derive(Clone, Debug)]
pub struct MlbPorts {
    pub entries: usize,
    reset: PortSlot,
    rs_valid: PortSlot,
    rs_addr: PortSlot,
    ls_valid: PortSlot,
    ls_loc: PortSlot,
    fill_valid: PortSlot,
    fill_loc: PortSlot,
    fill_base: PortSlot,
    fill_size: PortSlot,
    fill_tag: PortSlot,
    inv_valid: PortSlot,
    inv_loc: PortSlot,
    flush: PortSlot,
    rs_hit: PortSlot,
    rs_way: PortSlot,
    rs_loc: PortSlot,
    rs_base: PortSlot,
    rs_size: PortSlot,
    rs_tag: PortSlot,
    rs_multi: PortSlot,
    ls_hit: PortSlot,
    ls_way: PortSlot,
    ls_base: PortSlot,
    ls_size: PortSlot,
    ls_tag: PortSlot,
    ls_multi: PortSlot,
    victim: PortSlot,
    fill_ok: PortSlot,
    fill_present: PortSlot,
    repl_state: PortSlot,
}

/// max(1, clog2(n)): the MLB's way-index width.
pub fn index_width(n: usize) -> usize {
    (n.next_power_of_two().trailing_zeros() as usize).max(1)
}

impl MlbPorts {
    /// The ports of an `entries`-entry MLB in `layout`.
    pub fn new(layout: &Layout, entries: usize) -> Result<MlbPorts> {
        let iw = index_width(entries);
        let i = |n: &str, w: usize| layout.port_of_width(n, Dir::In, w);
        let o = |n: &str, w: usize| layout.port_of_width(n, Dir::Out, w);
        Ok(MlbPorts {
            entries,
            reset: i("reset", 1)?,
            rs_valid: i("rs_valid", 1)?,
            rs_addr: i("rs_addr", 56)?,
            ls_valid: i("ls_valid", 1)?,
            ls_loc: i("ls_loc", LOC_BITS)?,
            fill_valid: i("fill_valid", 1)?,
            fill_loc: i("fill_loc", LOC_BITS)?,
            fill_base: i("fill_base", 56)?,
            fill_size: i("fill_size", 56)?,
            fill_tag: i("fill_tag", 8)?,
            inv_valid: i("inv_valid", 1)?,
            inv_loc: i("inv_loc", LOC_BITS)?,
            flush: i("flush", 1)?,
            rs_hit: o("rs_hit", 1)?,
            rs_way: o("rs_way", iw)?,
            rs_loc: o("rs_loc", LOC_BITS)?,
            rs_base: o("rs_base", 56)?,
            rs_size: o("rs_size", 56)?,
            rs_tag: o("rs_tag", 8)?,
            rs_multi: o("rs_multi", 1)?,
            ls_hit: o("ls_hit", 1)?,
            ls_way: o("ls_way", iw)?,
            ls_base: o("ls_base", 56)?,
            ls_size: o("ls_size", 56)?,
            ls_tag: o("ls_tag", 8)?,
            ls_multi: o("ls_multi", 1)?,
            victim: o("victim", iw)?,
            fill_ok: o("fill_ok", 1)?,
            fill_present: o("fill_present", 1)?,
            repl_state: o("repl_state", entries)?,
        })
    }
}

/// One cycle's inputs as raw port values (a port's data is driven even when
/// its valid bit is low: the design must ignore it). Locations are the 51-bit
/// port values (location bits 55..5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MlbStim {
    pub reset: bool,
    pub rs_valid: bool,
    pub rs_addr: u64,
    pub ls_valid: bool,
    pub ls_loc: u64,
    pub fill_valid: bool,
    pub fill_loc: u64,
    pub fill_base: u64,
    pub fill_size: u64,
    pub fill_tag: u8,
    pub inv_valid: bool,
    pub inv_loc: u64,
    pub flush: bool,
}

impl MlbStim {
    /// The golden model's view of the cycle (reset is handled separately).
    pub fn model_inputs(&self) -> MlbCycleInputs {
        MlbCycleInputs {
            range_lookup: self.rs_valid.then_some(self.rs_addr),
            loc_lookup: self.ls_valid.then_some(self.ls_loc << 5),
            flush: self.flush,
            invalidate: self.inv_valid.then_some(self.inv_loc << 5),
            fill: self
                .fill_valid
                .then_some((self.fill_loc << 5, Meta { base: self.fill_base, size: self.fill_size, tag: self.fill_tag })),
        }
    }

    /// Write the cycle into an input record.
    pub fn encode(&self, p: &MlbPorts, rec: &mut [u8]) {
        p.reset.put(rec, self.reset as u64);
        p.rs_valid.put(rec, self.rs_valid as u64);
        p.rs_addr.put(rec, self.rs_addr);
        p.ls_valid.put(rec, self.ls_valid as u64);
        p.ls_loc.put(rec, self.ls_loc);
        p.fill_valid.put(rec, self.fill_valid as u64);
        p.fill_loc.put(rec, self.fill_loc);
        p.fill_base.put(rec, self.fill_base);
        p.fill_size.put(rec, self.fill_size);
        p.fill_tag.put(rec, self.fill_tag as u64);
        p.inv_valid.put(rec, self.inv_valid as u64);
        p.inv_loc.put(rec, self.inv_loc);
        p.flush.put(rec, self.flush as u64);
    }
}

impl fmt::Display for MlbStim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = vec![];
        if self.reset {
            parts.push("reset".to_string());
        }
        if self.flush {
            parts.push("flush".to_string());
        }
        if self.rs_valid {
            parts.push(format!("range_search(a={:#x})", self.rs_addr));
        }
        if self.ls_valid {
            parts.push(format!("loc_search(loc={:#x})", self.ls_loc << 5));
        }
        if self.fill_valid {
            parts.push(format!(
                "fill(loc={:#x}, base={:#x}, size={:#x}, tag={:#x})",
                self.fill_loc << 5,
                self.fill_base,
                self.fill_size,
                self.fill_tag
            ));
        }
        if self.inv_valid {
            parts.push(format!("invalidate(loc={:#x})", self.inv_loc << 5));
        }
        if parts.is_empty() {
            parts.push("idle".to_string());
        }
        f.write_str(&parts.join(" "))
    }
}

/// A registered search result the model predicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchExpect {
    pub hit: Option<(usize, MlbEntry)>,
    pub multi: bool,
}

/// What the sample of one cycle must show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MlbExpect {
    /// False for cycle 0 (nothing is compared).
    pub check: bool,
    pub victim: usize,
    pub fill_ok: bool,
    /// The fill's location was already held (combinational, like fill_ok).
    pub fill_present: bool,
    pub repl_state: u64,
    /// The searches of the previous cycle.
    pub rs: SearchExpect,
    pub ls: SearchExpect,
}

/// Outputs decoded from a record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MlbOut {
    pub rs_hit: bool,
    pub rs_way: u64,
    pub rs_loc: u64,
    pub rs_base: u64,
    pub rs_size: u64,
    pub rs_tag: u64,
    pub rs_multi: bool,
    pub ls_hit: bool,
    pub ls_way: u64,
    pub ls_base: u64,
    pub ls_size: u64,
    pub ls_tag: u64,
    pub ls_multi: bool,
    pub victim: u64,
    pub fill_ok: bool,
    pub fill_present: bool,
    pub repl_state: u64,
}

impl MlbOut {
    pub fn decode(p: &MlbPorts, rec: &[u8]) -> MlbOut {
        MlbOut {
            rs_hit: p.rs_hit.get(rec) != 0,
            rs_way: p.rs_way.get(rec),
            rs_loc: p.rs_loc.get(rec),
            rs_base: p.rs_base.get(rec),
            rs_size: p.rs_size.get(rec),
            rs_tag: p.rs_tag.get(rec),
            rs_multi: p.rs_multi.get(rec) != 0,
            ls_hit: p.ls_hit.get(rec) != 0,
            ls_way: p.ls_way.get(rec),
            ls_base: p.ls_base.get(rec),
            ls_size: p.ls_size.get(rec),
            ls_tag: p.ls_tag.get(rec),
            ls_multi: p.ls_multi.get(rec) != 0,
            victim: p.victim.get(rec),
            fill_ok: p.fill_ok.get(rec) != 0,
            fill_present: p.fill_present.get(rec) != 0,
            repl_state: p.repl_state.get(rec),
        }
    }
}

/// The first difference between a sample and the model's expectation:
/// `(output, expected, got)`.
pub fn compare(e: &MlbExpect, o: &MlbOut) -> Option<(&'static str, String, String)> {
    if !e.check {
        return None;
    }
    fn d(name: &'static str, want: u64, got: u64) -> Option<(&'static str, String, String)> {
        (want != got).then(|| (name, format!("{want:#x}"), format!("{got:#x}")))
    }
    let hit = |s: &SearchExpect| s.hit.is_some() as u64;
    // Registered search results first: they answer the previous cycle, so a
    // wrong hit is reported as such rather than as the replacement state it
    // then touched.
    d("rs_hit", hit(&e.rs), o.rs_hit as u64)
        .or_else(|| d("rs_multi", e.rs.multi as u64, o.rs_multi as u64))
        .or_else(|| d("ls_hit", hit(&e.ls), o.ls_hit as u64))
        .or_else(|| d("ls_multi", e.ls.multi as u64, o.ls_multi as u64))
        .or_else(|| {
            let (w, en) = e.rs.hit?;
            d("rs_way", w as u64, o.rs_way)
                .or_else(|| d("rs_loc", en.location >> 5, o.rs_loc))
                .or_else(|| d("rs_base", en.base, o.rs_base))
                .or_else(|| d("rs_size", en.size, o.rs_size))
                .or_else(|| d("rs_tag", en.tag as u64, o.rs_tag))
        })
        .or_else(|| {
            let (w, en) = e.ls.hit?;
            d("ls_way", w as u64, o.ls_way)
                .or_else(|| d("ls_base", en.base, o.ls_base))
                .or_else(|| d("ls_size", en.size, o.ls_size))
                .or_else(|| d("ls_tag", en.tag as u64, o.ls_tag))
        })
        .or_else(|| d("victim", e.victim as u64, o.victim))
        .or_else(|| d("fill_ok", e.fill_ok as u64, o.fill_ok as u64))
        .or_else(|| d("fill_present", e.fill_present as u64, o.fill_present as u64))
        .or_else(|| d("repl_state", e.repl_state, o.repl_state))
}

/// Event counts of a run (to show the stimulus reached the interesting cases).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MlbStats {
    pub cycles: u64,
    pub range_searches: u64,
    pub range_hits: u64,
    pub loc_searches: u64,
    pub loc_hits: u64,
    pub fills: u64,
    pub fills_taken: u64,
    /// Fills into a full MLB (the replacement policy chose the way).
    pub evictions: u64,
    pub fills_dropped_by_invalidate: u64,
    /// Fills of a location already held (dropped: never a duplicate).
    pub fills_present: u64,
    pub invalidates_matched: u64,
    pub both_hits_same_cycle: u64,
    pub multi_matches: u64,
    pub flushes: u64,
    pub resets: u64,
}

/// Random MLB stimulus and the golden model run alongside it: each call to
/// [`MlbBench::next`] draws one cycle, steps the model and returns what the
/// Verilog's sample of that cycle must show.
pub struct MlbBench {
    model: Mlb,
    rng: SplitMix64,
    /// Candidate nodes: (51-bit location, metadata), disjoint ranges.
    universe: Vec<(u64, Meta)>,
    cycle: u64,
    prev: (SearchExpect, SearchExpect),
    pub stats: MlbStats,
}

impl MlbBench {
    pub fn new(entries: usize, replacement: Replacement, seed: u64) -> MlbBench {
        let mut rng = SplitMix64(seed ^ 0x6d6c_625f_636f_7369);
        let k = (3 * entries).max(6);
        let mut universe = Vec::with_capacity(k);
        let mut base = rng.next_u64() % (1 << 40);
        let mut slots = std::collections::HashSet::new();
        for i in 0..k {
            let size = match rng.next_u64() % 20 {
                0..=5 => 1 + rng.next_u64() % 16,
                6..=13 => 17 + rng.next_u64() % 4096,
                14..=18 => 1 + rng.next_u64() % (1 << 24),
                _ => (1 << 40) + rng.next_u64() % (1 << 44),
            };
            let (b, s) = if i == k - 1 {
                // A node whose end lies beyond 2^56 (a caller-given base): the
                // range compare must not wrap.
                ((1u64 << 56) - 4096, 8192)
            } else {
                (base, size)
            };
            base = b + s + if rng.next_u64() % 2 == 0 { 0 } else { rng.next_u64() % 4096 };
            let loc = loop {
                let l = (0x1000_0000_0000u64 >> 5) + rng.next_u64() % (1 << 20);
                if slots.insert(l) {
                    break l;
                }
            };
            let tag = 1 + (rng.next_u64() % 255) as u8;
            universe.push((loc, Meta { base: b, size: s, tag }));
        }
        MlbBench { model: Mlb::new(entries, replacement), rng, universe, cycle: 0, prev: Default::default(), stats: MlbStats::default() }
    }

    pub fn model(&self) -> &Mlb {
        &self.model
    }

    fn pct(&mut self, p: u64) -> bool {
        self.rng.next_u64() % 1000 < p
    }

    fn draw(&mut self) -> MlbStim {
        let mut s = MlbStim { reset: self.cycle == 0 || self.rng.next_u64() % 50_000 == 0, ..Default::default() };
        // Data on every port, valid or not.
        s.rs_addr = self.rng.next_u64() & ADDR_MASK;
        s.ls_loc = self.rng.next_u64() & LOC51;
        s.fill_loc = self.rng.next_u64() & LOC51;
        s.fill_base = self.rng.next_u64() & ADDR_MASK;
        s.fill_size = self.rng.next_u64() & ADDR_MASK;
        s.fill_tag = self.rng.next_u64() as u8;
        s.inv_loc = self.rng.next_u64() & LOC51;
        s.flush = self.rng.next_u64() % 3000 == 0;
        let n = self.universe.len() as u64;
        if self.pct(700) {
            s.rs_valid = true;
            let (_, m) = self.universe[(self.rng.next_u64() % n) as usize];
            let r = self.rng.next_u64();
            s.rs_addr = match r % 10 {
                0 => m.base,
                1 => m.base.wrapping_add(m.size - 1) & ADDR_MASK,
                2 => m.base.wrapping_add(m.size) & ADDR_MASK,
                3 => m.base.wrapping_sub(1) & ADDR_MASK,
                4 => s.rs_addr,
                _ => m.base.wrapping_add((r >> 8) % m.size) & ADDR_MASK,
            };
        }
        if self.pct(500) {
            s.ls_valid = true;
            if !self.pct(100) {
                s.ls_loc = self.universe[(self.rng.next_u64() % n) as usize].0;
            }
        }
        if self.pct(150) {
            let (loc, m) = self.universe[(self.rng.next_u64() % n) as usize];
            let present = self.model.search_location(loc << 5).is_some();
            // The MLU fills only after a miss; a few duplicate and wild fills
            // still exercise the lowest-index rule and the multi outputs.
            if !present || self.pct(10) {
                s.fill_valid = true;
                s.fill_loc = loc;
                s.fill_base = m.base;
                s.fill_size = m.size;
                s.fill_tag = if self.pct(100) { 0xFF } else { m.tag };
            } else if self.pct(100) {
                s.fill_valid = true;
                s.fill_size = 1 + self.rng.next_u64() % (1 << 20);
            }
        }
        if self.pct(120) {
            s.inv_valid = true;
            let r = self.rng.next_u64() % 10;
            if r < 3 && s.fill_valid {
                s.inv_loc = s.fill_loc;
            } else if r < 6 {
                if let Some(v) = self.model.victim() {
                    s.inv_loc = self.model.entry(v).location >> 5;
                }
            } else if r < 9 {
                s.inv_loc = self.universe[(self.rng.next_u64() % n) as usize].0;
            }
        }
        s
    }

    /// Draw the next cycle; returns its inputs and the expectation for its
    /// sample.
    pub fn next(&mut self) -> (MlbStim, MlbExpect) {
        let s = self.draw();
        (s, self.step(&s))
    }

    /// Step the model through `s` (given by the caller or by [`Self::next`]).
    pub fn step(&mut self, s: &MlbStim) -> MlbExpect {
        let mut e = MlbExpect {
            check: self.cycle > 0,
            victim: self.model.victim().unwrap_or(0),
            repl_state: self.model.policy_bits(),
            rs: self.prev.0,
            ls: self.prev.1,
            fill_ok: false,
            fill_present: s.model_inputs().fill.is_some_and(|(l, _)| self.model.location_matches(l) != 0),
        };
        let st = &mut self.stats;
        st.cycles += 1;
        if s.reset {
            st.resets += 1;
            self.model.reset();
            self.prev = Default::default();
        } else {
            let inp = s.model_inputs();
            let rs_multi = inp.range_lookup.is_some_and(|a| self.model.range_matches(a).count_ones() > 1);
            let ls_multi = inp.loc_lookup.is_some_and(|l| self.model.location_matches(l).count_ones() > 1);
            let full = self.model.entries().iter().all(|e| e.valid);
            let out = self.model.cycle(inp);
            e.fill_ok = out.fill_way.is_some();
            st.range_searches += s.rs_valid as u64;
            st.range_hits += out.range_hit.is_some() as u64;
            st.loc_searches += s.ls_valid as u64;
            st.loc_hits += out.loc_hit.is_some() as u64;
            st.fills += s.fill_valid as u64;
            st.fills_taken += e.fill_ok as u64;
            st.evictions += (e.fill_ok && full) as u64;
            st.fills_dropped_by_invalidate += (s.fill_valid && !s.flush && !e.fill_ok && !e.fill_present) as u64;
            st.fills_present += e.fill_present as u64;
            st.invalidates_matched += out.invalidated_way.is_some() as u64;
            st.both_hits_same_cycle += (out.range_hit.is_some() && out.loc_hit.is_some()) as u64;
            st.multi_matches += (rs_multi || ls_multi) as u64;
            st.flushes += s.flush as u64;
            self.prev = (SearchExpect { hit: out.range_hit, multi: rs_multi }, SearchExpect { hit: out.loc_hit, multi: ls_multi });
        }
        self.cycle += 1;
        e
    }
}

/// A cycle where the Verilog and the model differ.
#[derive(Clone, Debug)]
pub struct MlbMismatch {
    /// Cycle of the sample.
    pub cycle: u64,
    pub output: &'static str,
    pub expected: String,
    pub got: String,
    /// Inputs of this cycle and of the one before (registered outputs answer it).
    pub stim: MlbStim,
    pub prev_stim: Option<MlbStim>,
    pub sample: MlbOut,
    pub expect: MlbExpect,
}

impl fmt::Display for MlbMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "MLB mismatch at cycle {}: output `{}` expected {} (model), got {} (Verilog)", self.cycle, self.output, self.expected, self.got)?;
        if let Some(p) = &self.prev_stim {
            writeln!(f, "  inputs of cycle {} (registered outputs answer these): {p}", self.cycle - 1)?;
        }
        writeln!(f, "  inputs of cycle {}: {}", self.cycle, self.stim)?;
        writeln!(f, "  model expects: {}", self.expect)?;
        write!(f, "  Verilog gave:  {}", self.sample)
    }
}

impl fmt::Display for SearchExpect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.hit {
            None => write!(f, "miss")?,
            Some((way, e)) => write!(f, "hit way {way} (loc {:#x} base {:#x} size {:#x} tag {:#04x})", e.location, e.base, e.size, e.tag)?,
        }
        if self.multi {
            write!(f, ", multi")?;
        }
        Ok(())
    }
}

impl fmt::Display for MlbExpect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "range search {}; location search {}; victim way {}, fill_ok {}, replacement state {:#x}",
            self.rs, self.ls, self.victim, self.fill_ok as u8, self.repl_state
        )
    }
}

impl fmt::Display for MlbOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hit = |f: &mut fmt::Formatter<'_>, hit: bool, way: u64, loc: Option<u64>, base: u64, size: u64, tag: u64, multi: bool| {
            if hit {
                write!(f, "hit way {way} (")?;
                if let Some(l) = loc {
                    write!(f, "loc {:#x} ", loc_addr(l))?;
                }
                write!(f, "base {base:#x} size {size:#x} tag {tag:#04x})")?;
            } else {
                write!(f, "miss")?;
            }
            if multi {
                write!(f, ", multi")?;
            }
            Ok(())
        };
        write!(f, "range search ")?;
        hit(f, self.rs_hit, self.rs_way, Some(self.rs_loc), self.rs_base, self.rs_size, self.rs_tag, self.rs_multi)?;
        write!(f, "; location search ")?;
        hit(f, self.ls_hit, self.ls_way, None, self.ls_base, self.ls_size, self.ls_tag, self.ls_multi)?;
        write!(f, "; victim way {}, fill_ok {}, replacement state {:#x}", self.victim, self.fill_ok as u8, self.repl_state)
    }
}

impl fmt::Display for MlbStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} range searches ({} hits), {} location searches ({} hits), {} fills ({} taken, {} evictions, {} dropped by a same-cycle invalidate, {} of a held location), {} invalidates matched, {} cycles with both hits, {} multi-matches, {} flushes, {} resets",
            self.range_searches,
            self.range_hits,
            self.loc_searches,
            self.loc_hits,
            self.fills,
            self.fills_taken,
            self.evictions,
            self.fills_dropped_by_invalidate,
            self.fills_present,
            self.invalidates_matched,
            self.both_hits_same_cycle,
            self.multi_matches,
            self.flushes,
            self.resets
        )
    }
}

/// Location bits an entry stores, as a full address (for reports).
pub fn loc_addr(loc51: u64) -> u64 {
    (loc51 << 5) & LOC_MASK
}
