//! The ScatterAlloc-style heap (RTL blocks `heap`, `page_table`, and the
//! region counters), with encrypted canaries at both chunk ends.
//!
//! Chunk layout when canaries are on (check mode `free` or `always`):
//! `[front canary 8 B][user bytes n][slack][rear canary 8 B][unused to class size]`;
//! the pointer handed out is chunk start + 8. With check mode `off` (the
//! baseline allocator) the chunk is just the user bytes and the pointer is the
//! chunk start. The per-chunk requested size lives in a size table (one entry
//! per chunk slot in hardware), which free and the checker read to find the
//! rear canary.
//!
//! Cycle cost model (one memory/RAM port, documented in docs/canary.md):
//! malloc = 1 (hash) + 1 per region counter read + 1 per page_table read
//! plus 1 per bitfield word read + 1 bitfield write (+1 page_table write when an
//! empty page is claimed) + 2 canary writes when canaries are on (the keyed
//! hash runs in parallel with the probe). free = 1 page_table read + 1
//! bitfield read + 1 bitfield write (+1 page_table write when the page empties)
//! plus 2 canary reads when checking on free. The checker list insert/remove is a
//! separate RAM and costs no port cycles.
//!
//! # Tags and the directory (registration with the MLU, spec section 8)
//! With `tag_seed` set, malloc hands out a tagged pointer (tag in bits
//! 63..56, spec section 1) and the heap answers the MLU's metadata reads for
//! its chunks from a *directory* instead of a list or tree: every page
//! serves one class, so the chunk holding an address, and its base, follow
//! from the address, the heap base, the page size and the page's class;
//! per chunk only the tag and the requested size are stored (the size table
//! gains a tag byte). [`Heap::directory`] is that lookup; `sim::runtime`
//! serves it to the MLU as 32-byte nodes (`sim::mlu` "heap window").
//! - Tags come from a 16-bit Galois LFSR (x^16 + x^14 + x^13 + x^11 + 1),
//!   stepped once per malloc: its low byte, folded to one of the 253 live
//!   tags (1..=254: not 0, not FREED) other than the last tag of the same
//!   chunk ([`tag_of`]), so a stale pointer into a reused chunk is a
//!   deterministic TAG_MISMATCH for one reuse, then a 1/253 chance. (The
//!   host runtime remembers 8 generations per address; a per-chunk byte is
//!   what the allocator's size table can hold.)
//! - free retags the chunk FREED (the record keeps its size); a freed chunk's
//!   page remembers its last class after it is released, so a dangling pointer
//!   into an emptied page still finds the FREED record.
//! - A free whose pointer's tag is not the chunk's current one is refused as
//!   a double free: that pointer's allocation was freed already, and the
//!   chunk now belongs to another.
use super::checker::Checker;
use super::hash::page_hash;
use super::siphash::CanaryKey;
use crate::node::NODE_BYTES;
use crate::pointer::{tag, untag, ADDR_MASK, TAG_FREED, TAG_SHIFT};
use std::collections::HashMap;

pub const CANARY_BYTES: u64 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckMode {
    /// Baseline: no canaries.
    Off,
    /// Canaries written at malloc, verified at free.
    Free,
    /// As `Free`, plus the background checker.
    Always,
}

impl CheckMode {
    pub fn canaries(self) -> bool {
        self != CheckMode::Off
    }
    pub fn name(self) -> &'static str {
        match self {
            CheckMode::Off => "off",
            CheckMode::Free => "free",
            CheckMode::Always => "always",
        }
    }
}

#[derive(Clone, Debug)]
pub struct HeapConfig {
    pub base: u64,
    /// Page size in bytes (power of two).
    pub page_size: u64,
    pub pages: u32,
    /// Pages per region (super-block) for the full-page counters.
    pub region_pages: u32,
    /// Chunk sizes of the size classes, ascending, each a multiple of 8.
    pub classes: Vec<u64>,
    /// Over-provisioning slack between the user bytes and the rear canary.
    pub slack: u64,
    pub k_s: u64,
    pub k_mp: u64,
    pub key: CanaryKey,
    pub check: CheckMode,
    /// Background checker rate R (chunks per cycle), used in `Always` mode.
    pub checker_rate: f64,
    /// Registration with the MLU (see "Tags and the directory" in the module
    /// doc): `None` hands out untagged pointers (the allocator on its own, as
    /// the RTL unit is today); `Some(seed)` tags every pointer, the seed (not
    /// 0) starting the tag LFSR.
    pub tag_seed: Option<u16>,
}

impl Default for HeapConfig {
    fn default() -> Self {
        HeapConfig {
            base: 0x1000_0000,
            page_size: 4096,
            pages: 256,
            region_pages: 16,
            classes: vec![32, 64, 128, 256, 512, 1024, 2048, 4096],
            slack: 0,
            k_s: super::hash::DEFAULT_K_S,
            k_mp: super::hash::DEFAULT_K_MP,
            key: CanaryKey { k0: 0x0706_0504_0302_0100, k1: 0x0f0e_0d0c_0b0a_0908 },
            check: CheckMode::Free,
            checker_rate: 0.125,
            tag_seed: None,
        }
    }
}

impl HeapConfig {
    /// Reject impossible parameters with the field named.
    pub fn validate(&self) -> Result<(), String> {
        if !self.page_size.is_power_of_two() || self.page_size < 64 {
            return Err(format!("page_size: {} is not a power of two >= 64", self.page_size));
        }
        if self.pages == 0 {
            return Err("pages: must be at least 1".into());
        }
        if self.region_pages == 0 || self.region_pages > self.pages {
            return Err(format!(
                "region_pages: {} pages per region does not fit a heap of {} pages (pages must be at least region_pages, which must be at least 1)",
                self.region_pages, self.pages
            ));
        }
        if self.classes.is_empty() {
            return Err("classes: at least one size class is needed".into());
        }
        for (i, &c) in self.classes.iter().enumerate() {
            if c == 0 || c % 8 != 0 || c > self.page_size {
                return Err(format!("classes[{i}]: {c} must be a non-zero multiple of 8 and <= page_size {}", self.page_size));
            }
            if i > 0 && c <= self.classes[i - 1] {
                return Err(format!("classes[{i}]: {c} is not larger than classes[{}]", i - 1));
            }
        }
        if self.check.canaries() && self.classes[self.classes.len() - 1] <= 2 * CANARY_BYTES + self.slack {
            return Err(format!("slack: {} leaves no user bytes in the largest class", self.slack));
        }
        if self.base % 8 != 0 || self.base.checked_add(self.pages as u64 * self.page_size).is_none() {
            return Err(format!("base: {:#x} must be 8-aligned and the heap must fit below 2^64", self.base));
        }
        if self.tag_seed == Some(0) {
            return Err("tag_seed: 0 would stop the tag LFSR (give 1..=65535)".into());
        }
        if self.tag_seed.is_some() && (self.base % NODE_BYTES != 0 || self.classes[0] % NODE_BYTES != 0) {
            return Err(format!(
                "base: a tagged heap's base ({:#x}) and smallest class ({}) must be multiples of {NODE_BYTES}, the directory's granule",
                self.base, self.classes[0]
            ));
        }
        if !(self.checker_rate > 0.0 && self.checker_rate <= 64.0) {
            return Err(format!("checker_rate: {} must be in (0, 64]", self.checker_rate));
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocError {
    ZeroSize,
    /// Larger than the largest class can hold (with canaries and slack).
    TooLarge { size: u64, max: u64 },
    /// No page of the class has a free chunk and no page is empty.
    Exhausted { size: u64 },
}

impl std::fmt::Display for AllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllocError::ZeroSize => write!(f, "a request of 0 bytes (malloc(0))"),
            AllocError::TooLarge { size, max } => {
                write!(f, "{size} bytes is larger than the largest size class holds ({max} bytes with canaries and slack)")
            }
            AllocError::Exhausted { size } => write!(f, "no free chunk for {size} bytes (heap exhausted)"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FreeError {
    /// Not inside the heap at all.
    OutsideHeap { ptr: u64 },
    /// Inside the heap but not a pointer to a chunk slot of an in-use page:
    /// the heap never gave it out (in its current state).
    NotAChunk { ptr: u64 },
    /// A chunk slot of the page's class whose usage bit is clear.
    DoubleFree { ptr: u64 },
}

/// An overflow found by a canary check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overflow {
    pub chunk: u64,
    pub ptr: u64,
    pub front: bool,
    pub rear: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alloc {
    pub ptr: u64,
    pub chunk: u64,
    pub class: usize,
    pub cycles: u64,
    /// page_table reads in the probe.
    pub probes: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Freed {
    pub chunk: u64,
    pub size: u64,
    /// Free still releases the chunk; the overflow is reported to software.
    pub overflow: Option<Overflow>,
    pub cycles: u64,
}

/// The tag an LFSR low byte `b` gives a chunk whose last tag was `prev`
/// ([`Heap`]'s tag rule, module doc).
pub fn tag_of(b: u8, prev: Option<u8>) -> u8 {
    let t = if b >= 253 { b - 253 } else { b } + 1;
    match prev {
        Some(p) if t >= p => t + 1,
        _ => t,
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageEntry {
    pub class: Option<usize>,
    pub used: u32,
}

/// A chunk's entry in the tag/size table, live or freed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkRecord {
    /// The requested size.
    pub size: u64,
    /// The tag of the chunk's last allocation.
    pub tag: u8,
    pub freed: bool,
}

/// What the directory answers for an address: the chunk holding it and the
/// chunk's metadata as an MLB entry holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub chunk: u64,
    /// The pointer malloc returned, untagged (chunk + 8 with canaries).
    pub base: u64,
    pub size: u64,
    /// The live tag, or FREED.
    pub tag: u8,
}

#[derive(Clone, Debug)]
pub struct Heap {
    cfg: HeapConfig,
    page_table: Vec<PageEntry>,
    /// Per page, the class it served last (kept after the page is released).
    last_class: Vec<Option<usize>>,
    bitfields: Vec<Vec<u64>>,
    region_full: Vec<u32>,
    mem: Vec<u8>,
    sizes: HashMap<u64, u64>,
    /// Tag/size table by chunk address (tagged heaps only).
    records: HashMap<u64, ChunkRecord>,
    lfsr: u16,
    checker: Checker,
}

impl Heap {
    pub fn new(cfg: HeapConfig) -> Result<Heap, String> {
        cfg.validate()?;
        let pages = cfg.pages as usize;
        let max_words = (cfg.page_size / cfg.classes[0]).div_ceil(64) as usize;
        let regions = cfg.pages.div_ceil(cfg.region_pages) as usize;
        let bytes = cfg.pages as u64 * cfg.page_size;
        let checker = Checker::new(bytes / cfg.classes[0], cfg.checker_rate);
        Ok(Heap {
            page_table: vec![PageEntry { class: None, used: 0 }; pages],
            last_class: vec![None; pages],
            records: HashMap::new(),
            lfsr: cfg.tag_seed.unwrap_or(0),
            bitfields: vec![vec![0; max_words]; pages],
            region_full: vec![0; regions],
            mem: vec![0; bytes as usize],
            sizes: HashMap::new(),
            checker,
            cfg,
        })
    }

    pub fn config(&self) -> &HeapConfig {
        &self.cfg
    }
    pub fn checker(&self) -> &Checker {
        &self.checker
    }
    pub fn page_table(&self) -> &[PageEntry] {
        &self.page_table
    }
    /// Full pages per region (the region counters).
    pub fn region_full(&self) -> &[u32] {
        &self.region_full
    }
    pub fn live(&self) -> usize {
        self.sizes.len()
    }
    pub fn end(&self) -> u64 {
        self.cfg.base + self.mem.len() as u64
    }
    fn overhead(&self) -> u64 {
        if self.cfg.check.canaries() {
            2 * CANARY_BYTES + self.cfg.slack
        } else {
            0
        }
    }
    fn ptr_offset(&self) -> u64 {
        if self.cfg.check.canaries() {
            CANARY_BYTES
        } else {
            0
        }
    }
    /// Largest request that fits the largest class.
    pub fn max_request(&self) -> u64 {
        self.cfg.classes[self.cfg.classes.len() - 1] - self.overhead()
    }
    pub fn chunks_per_page(&self, class: usize) -> u32 {
        (self.cfg.page_size / self.cfg.classes[class]) as u32
    }
    fn region_len(&self, r: usize) -> u32 {
        let start = r as u32 * self.cfg.region_pages;
        self.cfg.region_pages.min(self.cfg.pages - start)
    }
    /// The checker's live-list index of a chunk.
    pub fn chunk_index(&self, chunk: u64) -> u32 {
        ((chunk - self.cfg.base) / self.cfg.classes[0]) as u32
    }
    fn rear_addr(&self, chunk: u64, size: u64) -> u64 {
        chunk + CANARY_BYTES + size + self.cfg.slack
    }
    fn write_u64(&mut self, addr: u64, v: u64) {
        let o = (addr - self.cfg.base) as usize;
        self.mem[o..o + 8].copy_from_slice(&v.to_le_bytes());
    }
    fn read_u64(&self, addr: u64) -> u64 {
        let o = (addr - self.cfg.base) as usize;
        u64::from_le_bytes(self.mem[o..o + 8].try_into().expect("8 bytes"))
    }

    /// A program's store into the heap (in-bounds or not: this is how tests
    /// and benchmarks inject overflows). Errors only outside the heap.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), String> {
        let end = addr.checked_add(bytes.len() as u64).ok_or("address overflow")?;
        if addr < self.cfg.base || end > self.end() {
            return Err(format!("write of {} bytes at {addr:#x} is outside the heap", bytes.len()));
        }
        let o = (addr - self.cfg.base) as usize;
        self.mem[o..o + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    /// Size class for a request of `size` bytes.
    pub fn class_for(&self, size: u64) -> Result<usize, AllocError> {
        if size == 0 {
            return Err(AllocError::ZeroSize);
        }
        let need = size.checked_add(self.overhead()).unwrap_or(u64::MAX);
        self.cfg
            .classes
            .iter()
            .position(|&c| c >= need)
            .ok_or(AllocError::TooLarge { size, max: self.max_request() })
    }

    /// malloc of `size` bytes from requester `mp`.
    pub fn malloc(&mut self, size: u64, mp: u64) -> Result<Alloc, AllocError> {
        let class = self.class_for(size)?;
        let pages = self.cfg.pages as u64;
        let rp = self.cfg.region_pages as u64;
        let start = page_hash(self.cfg.classes[class], mp, self.cfg.k_s, self.cfg.k_mp, pages);
        let cpp = self.chunks_per_page(class);
        let mut cycles = 1; // hash
        let mut probes = 0;
        let mut p = start;
        let mut visited = 0;
        while visited < pages {
            let r = (p / rp) as usize;
            if p == start || p % rp == 0 {
                cycles += 1; // region counter read
                if self.region_full[r] == self.region_len(r) {
                    let next = ((r as u64 + 1) * rp).min(pages);
                    visited += next - p;
                    p = next % pages;
                    continue;
                }
            }
            cycles += 1; // page_table read
            probes += 1;
            let e = &self.page_table[p as usize];
            let claim = match e.class {
                Some(c) if c == class && e.used < cpp => false,
                None => true,
                _ => {
                    p = (p + 1) % pages;
                    visited += 1;
                    continue;
                }
            };
            let slot = if claim {
                cycles += 1; // page_table write
                self.page_table[p as usize].class = Some(class);
                self.last_class[p as usize] = Some(class);
                0
            } else {
                let words = &self.bitfields[p as usize];
                let mut found = None;
                for w in 0..(cpp as usize).div_ceil(64) {
                    cycles += 1; // bitfield word read
                    let valid = if (w + 1) * 64 <= cpp as usize { u64::MAX } else { (1u64 << (cpp as usize % 64)) - 1 };
                    let free = !words[w] & valid;
                    if free != 0 {
                        found = Some(w as u32 * 64 + free.trailing_zeros());
                        break;
                    }
                }
                found.expect("used < chunks per page implies a clear bit")
            };
            cycles += 1; // bitfield write
            self.bitfields[p as usize][(slot / 64) as usize] |= 1 << (slot % 64);
            let e = &mut self.page_table[p as usize];
            e.used += 1;
            if e.used == cpp {
                self.region_full[r] += 1;
            }
            let chunk = self.cfg.base + p * self.cfg.page_size + slot as u64 * self.cfg.classes[class];
            self.sizes.insert(chunk, size);
            if self.cfg.check.canaries() {
                cycles += 2; // front and rear canary writes
                let key = self.cfg.key;
                self.write_u64(chunk, key.canary(chunk));
                let rear = self.rear_addr(chunk, size);
                self.write_u64(rear, key.canary(rear));
            }
            if self.cfg.check == CheckMode::Always {
                let idx = self.chunk_index(chunk);
                self.checker.insert(idx);
            }
            let mut ptr = chunk + self.ptr_offset();
            if self.cfg.tag_seed.is_some() {
                let t = self.next_tag(self.records.get(&chunk).map(|r| r.tag));
                self.records.insert(chunk, ChunkRecord { size, tag: t, freed: false });
                ptr |= (t as u64) << TAG_SHIFT;
            }
            return Ok(Alloc { ptr, chunk, class, cycles, probes });
        }
        Err(AllocError::Exhausted { size })
    }

    /// Where `ptr` would be a chunk of the heap: (page, slot, chunk address),
    /// or the error free would give (free's decode, without changing state).
    pub fn locate(&self, ptr: u64) -> Result<(usize, u32, u64), FreeError> {
        let off = self.ptr_offset();
        if ptr < self.cfg.base + off || ptr >= self.end() {
            return Err(FreeError::OutsideHeap { ptr });
        }
        let chunk = ptr - off;
        let page = ((chunk - self.cfg.base) / self.cfg.page_size) as usize;
        let Some(class) = self.page_table[page].class else {
            return Err(FreeError::NotAChunk { ptr });
        };
        let in_page = chunk - self.cfg.base - page as u64 * self.cfg.page_size;
        let cs = self.cfg.classes[class];
        if in_page % cs != 0 || in_page / cs >= self.chunks_per_page(class) as u64 {
            return Err(FreeError::NotAChunk { ptr });
        }
        let slot = (in_page / cs) as u32;
        if self.bitfields[page][(slot / 64) as usize] & (1 << (slot % 64)) == 0 {
            return Err(FreeError::DoubleFree { ptr });
        }
        Ok((page, slot, chunk))
    }

    /// Verify both canaries of a live chunk.
    fn verify(&self, chunk: u64) -> Option<Overflow> {
        let size = self.sizes[&chunk];
        let key = self.cfg.key;
        let rear = self.rear_addr(chunk, size);
        let front_bad = self.read_u64(chunk) != key.canary(chunk);
        let rear_bad = self.read_u64(rear) != key.canary(rear);
        (front_bad || rear_bad).then_some(Overflow { chunk, ptr: chunk + CANARY_BYTES, front: front_bad, rear: rear_bad })
    }

    /// The next tag: the LFSR stepped once, its low byte b folded to
    /// 1..=253 (`b mod 253 + 1`), then moved up by one at or above `prev`
    /// (the chunk's last tag), so the tag is one of the 253 live tags
    /// (1..=254, not 0, not FREED) other than `prev`, drawn in one step: the
    /// canary RTL's `TagTable` forms it combinationally.
    fn next_tag(&mut self, prev: Option<u8>) -> u8 {
        let lsb = self.lfsr & 1;
        self.lfsr >>= 1;
        if lsb != 0 {
            self.lfsr ^= 0xB400;
        }
        tag_of(self.lfsr as u8, prev)
    }

    /// The tag/size record of the chunk at `chunk` (tagged heaps).
    pub fn record(&self, chunk: u64) -> Option<ChunkRecord> {
        self.records.get(&chunk).copied()
    }

    /// The directory lookup of the MLU's heap path: the chunk that holds
    /// address `a` (tag ignored) under its page's class (the class it served
    /// last, if the page is released), and its record. `None` when `a` is
    /// outside the heap, in a page that never served a class, past the page's
    /// last chunk, or in a chunk never allocated in that class.
    pub fn directory(&self, a: u64) -> Option<DirEntry> {
        let a = a & ADDR_MASK;
        if a < self.cfg.base || a >= self.end() {
            return None;
        }
        let page = ((a - self.cfg.base) / self.cfg.page_size) as usize;
        let class = self.last_class[page]?;
        let cs = self.cfg.classes[class];
        let page_start = self.cfg.base + page as u64 * self.cfg.page_size;
        let slot = (a - page_start) / cs;
        if slot >= self.chunks_per_page(class) as u64 {
            return None;
        }
        let chunk = page_start + slot * cs;
        let r = self.records.get(&chunk)?;
        Some(DirEntry {
            chunk,
            base: chunk + self.ptr_offset(),
            size: r.size,
            tag: if r.freed { TAG_FREED } else { r.tag },
        })
    }

    /// free's decode without changing state: [`Heap::locate`] of the
    /// untagged pointer (tagged heaps), then the stale pointer check (the
    /// pointer's tag is not the chunk's current one: DOUBLE_FREE).
    pub fn decode_free(&self, ptr: u64) -> Result<(usize, u32, u64), FreeError> {
        let tagged = self.cfg.tag_seed.is_some();
        let (page, slot, chunk) = self.locate(if tagged { untag(ptr) } else { ptr })?;
        if tagged && self.records.get(&chunk).map(|r| r.tag) != Some(tag(ptr)) {
            return Err(FreeError::DoubleFree { ptr });
        }
        Ok((page, slot, chunk))
    }

    pub fn free(&mut self, ptr: u64) -> Result<Freed, FreeError> {
        let (page, slot, chunk) = self.decode_free(ptr)?;
        let mut cycles = 3; // page_table read, bitfield read, bitfield write
        let overflow = if self.cfg.check.canaries() {
            cycles += 2; // canary reads
            self.verify(chunk)
        } else {
            None
        };
        let size = self.sizes.remove(&chunk).expect("set bit implies a size entry");
        if let Some(r) = self.records.get_mut(&chunk) {
            r.freed = true;
        }
        let class = self.page_table[page].class.expect("in-use page");
        let cpp = self.chunks_per_page(class);
        self.bitfields[page][(slot / 64) as usize] &= !(1 << (slot % 64));
        let r = page / self.cfg.region_pages as usize;
        let e = &mut self.page_table[page];
        if e.used == cpp {
            self.region_full[r] -= 1;
        }
        e.used -= 1;
        if e.used == 0 {
            cycles += 1; // page_table write: release the page
            e.class = None;
        }
        if self.cfg.check == CheckMode::Always {
            let idx = self.chunk_index(chunk);
            self.checker.remove(idx);
        }
        Ok(Freed { chunk, size, overflow, cycles })
    }

    /// One cycle of the background checker (mode `always`): the overflows it
    /// finds this cycle and the number of chunks it checked (each check is 2
    /// canary reads on the port).
    pub fn checker_tick(&mut self) -> (Vec<Overflow>, usize) {
        if self.cfg.check != CheckMode::Always {
            return (Vec::new(), 0);
        }
        let idxs = self.checker.tick();
        self.check_indices(&idxs)
    }

    /// Run `n` checks now (the benchmark's stolen port cycles).
    pub fn checker_run(&mut self, n: usize) -> (Vec<Overflow>, usize) {
        if self.cfg.check != CheckMode::Always {
            return (Vec::new(), 0);
        }
        let idxs = self.checker.take(n);
        self.check_indices(&idxs)
    }

    fn check_indices(&self, idxs: &[u32]) -> (Vec<Overflow>, usize) {
        let found = idxs
            .iter()
            .filter_map(|&i| self.verify(self.cfg.base + i as u64 * self.cfg.classes[0]))
            .collect();
        (found, idxs.len())
    }

    /// Live chunks: (chunk address, pointer, requested size, class size).
    pub fn live_chunks(&self) -> Vec<(u64, u64, u64, u64)> {
        let mut v: Vec<_> = self
            .sizes
            .iter()
            .map(|(&c, &s)| {
                let page = ((c - self.cfg.base) / self.cfg.page_size) as usize;
                let cs = self.cfg.classes[self.page_table[page].class.expect("live chunk's page in use")];
                (c, c + self.ptr_offset(), s, cs)
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// Pages currently serving a class.
    pub fn pages_in_use(&self) -> usize {
        self.page_table.iter().filter(|e| e.class.is_some()).count()
    }

    /// Every structural invariant the hardware must keep; Err names the first
    /// broken one.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut full = vec![0u32; self.region_full.len()];
        let mut bits = 0usize;
        for (p, e) in self.page_table.iter().enumerate() {
            let pop: u32 = self.bitfields[p].iter().map(|w| w.count_ones()).sum();
            if pop != e.used {
                return Err(format!("page {p}: used {} but {pop} bits set", e.used));
            }
            match e.class {
                None if e.used != 0 => return Err(format!("page {p}: free page with used chunks")),
                Some(_) if e.used == 0 => return Err(format!("page {p}: empty page not released")),
                Some(c) => {
                    let cpp = self.chunks_per_page(c);
                    for slot in 0..self.bitfields[p].len() as u32 * 64 {
                        let set = self.bitfields[p][(slot / 64) as usize] & (1 << (slot % 64)) != 0;
                        if set && slot >= cpp {
                            return Err(format!("page {p}: bit {slot} beyond {cpp} chunks"));
                        }
                        let chunk = self.cfg.base + p as u64 * self.cfg.page_size + slot as u64 * self.cfg.classes[c];
                        if set != (slot < cpp && self.sizes.contains_key(&chunk)) {
                            return Err(format!("page {p} slot {slot}: bit and size table disagree"));
                        }
                        if set && self.cfg.check == CheckMode::Always && !self.checker.contains(self.chunk_index(chunk)) {
                            return Err(format!("chunk {chunk:#x} live but not in the checker list"));
                        }
                    }
                    if e.used == cpp {
                        full[p / self.cfg.region_pages as usize] += 1;
                    }
                }
                None => {}
            }
            bits += e.used as usize;
        }
        if full != self.region_full {
            return Err(format!("region full counts {:?}, expected {full:?}", self.region_full));
        }
        if self.cfg.tag_seed.is_some() {
            for (&chunk, &size) in &self.sizes {
                match self.records.get(&chunk) {
                    Some(r) if !r.freed && r.size == size && r.tag != 0 && r.tag != TAG_FREED => {}
                    r => return Err(format!("live chunk {chunk:#x} of {size} bytes has tag record {r:?}")),
                }
            }
            if let Some((c, _)) = self.records.iter().find(|(c, r)| !r.freed && !self.sizes.contains_key(c)) {
                return Err(format!("chunk {c:#x} is free but its record is live"));
            }
        }
        if bits != self.sizes.len() {
            return Err(format!("{bits} bits set but {} size entries", self.sizes.len()));
        }
        if self.cfg.check == CheckMode::Always && self.checker.len() != bits {
            return Err(format!("checker list has {} entries, {bits} live", self.checker.len()));
        }
        Ok(())
    }
}
