//! The Metadata Lookaside Buffer (spec section 5, docs/design.md "MLB");
//! mirrors the RTL's `mlb` block (hw/src/mlb.rs).
//!
//! N fully associative entries {valid, location, base, size, tag}, N in
//! {1, 2, 4, 8, 16, 32}; N = 0 (models only) is "no MLB": every search misses
//! and fills are dropped.
//! - Range search: `valid && base <= a && a - base < size`.
//! - Location search: `valid && location[55:5] == loc[55:5]` (the MLB stores
//!   location bits 55..5 only, as the RTL does).
//! - At most one entry matches either search (the runtime keeps nodes disjoint
//!   and fills only after a miss); if that were ever violated the lowest index
//!   wins. [`Mlb::range_matches`] exposes the match vector for asserting
//!   one-hot.
//! - Victim on fill: the lowest-index invalid entry, else the policy's victim.
//!   The policy is touched on every hit and every fill (see [`crate::plru`]).
//!
//! Two interfaces: transaction-level methods (`search_*` are pure; `touch`,
//! `fill`, `invalidate`, `flush`, `reset` write) used by the MLU model, and
//! [`Mlb::cycle`], one clock cycle of the hardware block with its same-cycle
//! rules, for cycle-by-cycle comparison with the RTL.
use crate::config::Replacement;
use crate::node::Meta;
use crate::plru::{Policy, ReplacementPolicy};
use crate::pointer::ADDR_MASK;

/// The location bits an MLB entry stores and compares: 55..5.
pub const LOC_MASK: u64 = ADDR_MASK & !31;
/// The search key of an invalid way: bit 0 set, so no masked location equals it.
const NO_KEY: u64 = 1;

/// One MLB entry (172 bits of state in hardware).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MlbEntry {
    pub valid: bool,
    /// Node address, bits 55..5 only (lower and upper bits stored as 0).
    pub location: u64,
    pub base: u64,
    pub size: u64,
    pub tag: u8,
}

impl MlbEntry {
    #[inline]
    pub fn meta(&self) -> Meta {
        Meta { base: self.base, size: self.size, tag: self.tag }
    }
    #[inline]
    fn range_match(&self, a: u64) -> bool {
        self.valid && a >= self.base && a - self.base < self.size
    }
    #[inline]
    fn loc_match(&self, loc: u64) -> bool {
        self.valid && (self.location ^ loc) & LOC_MASK == 0
    }
}

/// What the MLB is asked to do in one clock cycle. Lookups and writes may all
/// be present in the same cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MlbCycleInputs {
    /// Range search for this untagged address.
    pub range_lookup: Option<u64>,
    /// Location search for this location.
    pub loc_lookup: Option<u64>,
    /// Drop every entry and reset the replacement state.
    pub flush: bool,
    /// Drop the entry with this location.
    pub invalidate: Option<u64>,
    /// Write (location, metadata) into the victim way.
    pub fill: Option<(u64, Meta)>,
}

/// What the MLB answers in that cycle (all from the state before the cycle's
/// writes) and which writes took effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MlbCycleOutputs {
    /// Way and entry of a range hit.
    pub range_hit: Option<(usize, MlbEntry)>,
    /// Way and entry of a location hit.
    pub loc_hit: Option<(usize, MlbEntry)>,
    /// The way the fill wrote, or None if there was no fill or it was dropped.
    pub fill_way: Option<usize>,
    /// A valid entry already held the fill's location (it wrote nothing).
    pub fill_present: bool,
    /// The way the invalidate cleared, if it matched.
    pub invalidated_way: Option<usize>,
}

/// The MLB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mlb {
    entries: Vec<MlbEntry>,
    /// Search key per way: the stored location if valid, else [`NO_KEY`]. A
    /// shadow of `entries` kept so the location search is one tight scan.
    keys: Vec<u64>,
    /// None for N = 0.
    policy: Option<Policy>,
    replacement: Replacement,
}

impl Mlb {
    /// An empty MLB. Panics unless `entries` is 0 or a power of two <= 32 (the
    /// configuration is validated before: see [`crate::config::MluConfig::validate`]).
    pub fn new(entries: usize, replacement: Replacement) -> Mlb {
        assert!(
            entries == 0 || (entries.is_power_of_two() && entries <= 32),
            "MLB entries must be 0, 1, 2, 4, 8, 16 or 32, got {entries}"
        );
        Mlb {
            entries: vec![MlbEntry::default(); entries],
            keys: vec![NO_KEY; entries],
            policy: if entries == 0 { None } else { Some(Policy::new(replacement, entries)) },
            replacement,
        }
    }

    /// Number of entries N.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn replacement(&self) -> Replacement {
        self.replacement
    }

    /// All entries, index = way.
    pub fn entries(&self) -> &[MlbEntry] {
        &self.entries
    }

    /// The replacement policy's state register (PLRU bits or RR pointer); 0
    /// without an MLB.
    pub fn policy_bits(&self) -> u64 {
        self.policy.as_ref().map_or(0, |p| p.state_bits())
    }

    /// The replacement policy (None for N = 0).
    pub fn policy(&self) -> Option<&Policy> {
        self.policy.as_ref()
    }

    /// Range search (pure): the lowest way whose range holds `a`.
    #[inline]
    pub fn search_range(&self, a: u64) -> Option<usize> {
        self.entries.iter().position(|e| e.range_match(a))
    }

    /// Location search (pure): the lowest way holding `loc` (bits 55..5).
    #[inline]
    pub fn search_location(&self, loc: u64) -> Option<usize> {
        let k = loc & LOC_MASK;
        self.keys.iter().position(|&x| x == k)
    }

    fn sync_keys(&mut self) {
        for (k, e) in self.keys.iter_mut().zip(&self.entries) {
            *k = if e.valid { e.location } else { NO_KEY };
        }
    }

    /// Range match vector (bit i = way i matches); one-hot or zero in a
    /// correct system.
    pub fn range_matches(&self, a: u64) -> u64 {
        self.entries.iter().enumerate().fold(0, |m, (i, e)| m | ((e.range_match(a) as u64) << i))
    }

    /// Location match vector (bit i = way i matches).
    pub fn location_matches(&self, loc: u64) -> u64 {
        self.entries.iter().enumerate().fold(0, |m, (i, e)| m | ((e.loc_match(loc) as u64) << i))
    }

    /// The entry at `way`.
    #[inline]
    pub fn entry(&self, way: usize) -> &MlbEntry {
        &self.entries[way]
    }

    /// A hit on `way`: update the replacement state.
    #[inline]
    pub fn touch(&mut self, way: usize) {
        if let Some(p) = &mut self.policy {
            p.touch(way);
        }
    }

    /// The way the next fill would write: the lowest invalid entry, else the
    /// policy's victim. None without an MLB.
    pub fn victim(&self) -> Option<usize> {
        let p = self.policy.as_ref()?;
        Some(self.entries.iter().position(|e| !e.valid).unwrap_or_else(|| p.victim()))
    }

    /// Fill after a miss: write `(location, meta)` into the victim way and
    /// touch it; returns the way (None without an MLB: the fill is dropped).
    /// Panics if `location` is already present: the MLU fills only after a
    /// miss of the same operation, so a duplicate is a model bug.
    pub fn fill(&mut self, location: u64, meta: Meta) -> Option<usize> {
        let way = self.victim()?;
        assert!(
            self.search_location(location).is_none(),
            "MLB fill of location {location:#x} which is already present"
        );
        let replaced_valid = self.entries[way].valid;
        self.entries[way] = MlbEntry { valid: true, location: location & LOC_MASK, base: meta.base, size: meta.size, tag: meta.tag };
        self.keys[way] = location & LOC_MASK;
        if let Some(p) = &mut self.policy {
            p.on_fill(way, replaced_valid);
        }
        Some(way)
    }

    /// Drop the entry holding `location` (every matching entry); returns the
    /// lowest way cleared. The replacement state is not changed.
    pub fn invalidate(&mut self, location: u64) -> Option<usize> {
        let mut first = None;
        for (i, e) in self.entries.iter_mut().enumerate() {
            if e.loc_match(location) {
                e.valid = false;
                self.keys[i] = NO_KEY;
                first.get_or_insert(i);
            }
        }
        first
    }

    /// Drop every entry and reset the replacement state.
    pub fn flush(&mut self) {
        for e in &mut self.entries {
            e.valid = false;
        }
        self.sync_keys();
        if let Some(p) = &mut self.policy {
            p.reset();
        }
    }

    /// Hardware reset: the same as a flush (entries' other fields are don't-care).
    pub fn reset(&mut self) {
        for e in &mut self.entries {
            *e = MlbEntry::default();
        }
        self.sync_keys();
        if let Some(p) = &mut self.policy {
            p.reset();
        }
    }

    /// One clock cycle of the hardware MLB (docs/design.md "Same-cycle rules"):
    /// 1. Both lookups and the victim choice see the state *before* the cycle.
    /// 2. At the edge, per entry, flush > invalidate > fill: a flush clears
    ///    everything, resets the policy and drops the cycle's fill and touches;
    ///    an invalidate clears the entry whose location matches; the fill
    ///    writes the victim way unless it is dropped, which happens when the
    ///    invalidate names the filled location or clears the victim way, or
    ///    when a valid entry already holds its location.
    /// 3. Policy updates in order: range hit, location hit, fill (so the fill,
    ///    if any, is most recently used, then the location hit).
    ///
    /// A fill of a location a valid entry already holds writes nothing (two
    /// walks of the unit can find the same node): the MLB never holds a
    /// location twice, whatever the fill sequence.
    pub fn cycle(&mut self, inp: MlbCycleInputs) -> MlbCycleOutputs {
        let mut out = MlbCycleOutputs {
            range_hit: inp.range_lookup.and_then(|a| self.search_range(a)).map(|w| (w, self.entries[w])),
            loc_hit: inp.loc_lookup.and_then(|l| self.search_location(l)).map(|w| (w, self.entries[w])),
            fill_present: inp.fill.is_some_and(|(loc, _)| self.location_matches(loc) != 0),
            ..MlbCycleOutputs::default()
        };
        if self.policy.is_none() {
            return out;
        }
        if inp.flush {
            self.flush();
            return out;
        }
        let victim = self.victim().expect("MLB with entries has a victim");
        let replaced_valid = self.entries[victim].valid;
        let inv_mask = inp.invalidate.map_or(0, |l| self.location_matches(l));
        out.invalidated_way = (inv_mask != 0).then(|| inv_mask.trailing_zeros() as usize);
        let fill = inp.fill.filter(|(loc, _)| {
            let same_loc = inp.invalidate.is_some_and(|l| (l ^ loc) & LOC_MASK == 0);
            !same_loc && inv_mask & (1 << victim) == 0 && !out.fill_present
        });
        for (i, e) in self.entries.iter_mut().enumerate() {
            if inv_mask & (1 << i) != 0 {
                e.valid = false;
            }
        }
        let policy = self.policy.as_mut().expect("checked above");
        if let Some((w, _)) = out.range_hit {
            policy.touch(w);
        }
        if let Some((w, _)) = out.loc_hit {
            policy.touch(w);
        }
        if let Some((loc, meta)) = fill {
            self.entries[victim] =
                MlbEntry { valid: true, location: loc & LOC_MASK, base: meta.base, size: meta.size, tag: meta.tag };
            policy.on_fill(victim, replaced_valid);
            out.fill_way = Some(victim);
        }
        self.sync_keys();
        out
    }
}
