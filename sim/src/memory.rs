//! Metadata memory: what the MLU's metadata read port sees (spec section 6).
//!
//! [`MemoryImage`] is a sparse image of 8-byte words. Reading a word that was
//! never written, a poisoned word or an unaligned address is an error: the
//! hardware's memory port answers with its `error` response and the
//! traverser ends in `MEM_ERROR`. The [`MetaMemory`] trait lets the traverser
//! and the MLU model run over other memories (a testbench's, a trace's).
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// A cheap hasher for word addresses (the default SipHash dominated
/// traversal time). Keys are addresses, not attacker-chosen.
#[derive(Clone, Copy, Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x ^ (x >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // Fold the well-mixed high half down: the table indexes by low bits.
        self.0 ^ (self.0 >> 32)
    }
}

type WordBuild = BuildHasherDefault<WordHasher>;

/// Why a metadata word read failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemError {
    /// Nothing was ever written at this word.
    Unmapped { addr: u64 },
    /// The word was poisoned (a test hook standing for an ECC or a page fault).
    Poisoned { addr: u64 },
    /// The address is not 8-byte aligned.
    Unaligned { addr: u64 },
}

impl MemError {
    /// The address whose read failed.
    pub fn addr(&self) -> u64 {
        match *self {
            MemError::Unmapped { addr } | MemError::Poisoned { addr } | MemError::Unaligned { addr } => addr,
        }
    }
}

impl fmt::Display for MemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemError::Unmapped { addr } => write!(f, "metadata read of unmapped word {addr:#x}"),
            MemError::Poisoned { addr } => write!(f, "metadata read of poisoned word {addr:#x}"),
            MemError::Unaligned { addr } => write!(f, "unaligned metadata read at {addr:#x}"),
        }
    }
}

impl std::error::Error for MemError {}

/// A memory the traverser can read 8-byte words from.
pub trait MetaMemory {
    /// The word at `addr` (8-byte aligned) or the port's error response.
    fn read_word(&self, addr: u64) -> Result<u64, MemError>;

    /// The speed-of-light (`sol`) structure's table: the location of the node
    /// whose range holds `a`, found at no cost. Only the runtime's memory view
    /// provides it; the hypothetical sol structure has no in-memory format.
    /// The default (no table) finds nothing.
    fn sol_lookup(&self, _a: u64) -> Option<u64> {
        None
    }
}

/// Sparse word-addressed memory image.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryImage {
    words: HashMap<u64, u64, WordBuild>,
    poisoned: HashSet<u64, WordBuild>,
}

impl MemoryImage {
    pub fn new() -> Self {
        Self::default()
    }

    /// Write the word at `addr`. Panics if `addr` is unaligned (a model bug,
    /// never user input: the runtime only writes node words).
    pub fn write_word(&mut self, addr: u64, value: u64) {
        assert!(addr.is_multiple_of(8), "unaligned metadata write at {addr:#x}");
        self.words.insert(addr, value);
    }

    /// Forget the word at `addr` (reads of it fail as unmapped again).
    pub fn remove_word(&mut self, addr: u64) {
        self.words.remove(&(addr & !7));
    }

    /// Reads of the word containing `addr` answer with an error from now on.
    pub fn poison(&mut self, addr: u64) {
        self.poisoned.insert(addr & !7);
    }

    /// Undo [`MemoryImage::poison`].
    pub fn unpoison(&mut self, addr: u64) {
        self.poisoned.remove(&(addr & !7));
    }

    /// Whether the word at `addr` was ever written (poisoned or not).
    pub fn is_mapped(&self, addr: u64) -> bool {
        self.words.contains_key(&(addr & !7))
    }

    /// Number of words written.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The word at `addr`.
    pub fn read_word(&self, addr: u64) -> Result<u64, MemError> {
        if !addr.is_multiple_of(8) {
            return Err(MemError::Unaligned { addr });
        }
        if !self.poisoned.is_empty() && self.poisoned.contains(&addr) {
            return Err(MemError::Poisoned { addr });
        }
        self.words.get(&addr).copied().ok_or(MemError::Unmapped { addr })
    }
}

impl MetaMemory for MemoryImage {
    fn read_word(&self, addr: u64) -> Result<u64, MemError> {
        MemoryImage::read_word(self, addr)
    }
}
