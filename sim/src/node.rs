//! The 32-byte metadata node (spec section 2): the in-memory format that the
//! runtime writes and the hardware traverser reads.
//!
//! | offset | word |
//! | --- | --- |
//! | +0  | base (untagged) |
//! | +8  | size (bits 55..0) and tag (bits 63..56) |
//! | +16 | link0: list `next` / bst `left` (0 = none) |
//! | +24 | link1: bst `right` (0 in a list) |
use crate::pointer::{ADDR_MASK, TAG_SHIFT};
use serde::{Deserialize, Serialize};

/// Offset of the base word.
pub const BASE: u64 = 0;
/// Offset of the size|tag word.
pub const SIZE_TAG: u64 = 8;
/// Offset of link0 (list next, bst left).
pub const LINK0: u64 = 16;
/// Offset of link1 (bst right).
pub const LINK1: u64 = 24;
/// Size and alignment of a node.
pub const NODE_BYTES: u64 = 32;

/// The size|tag word: size in bits 55..0, tag in bits 63..56. One word so that
/// a free (tag := FREED) is one atomic store. Size bits above 55 are dropped.
#[inline]
pub fn pack_size_tag(size: u64, tag: u8) -> u64 {
    ((tag as u64) << TAG_SHIFT) | (size & ADDR_MASK)
}

/// Inverse of [`pack_size_tag`]: `(size, tag)`.
#[inline]
pub fn unpack_size_tag(w: u64) -> (u64, u8) {
    (w & ADDR_MASK, (w >> TAG_SHIFT) as u8)
}

/// The 16 bytes of metadata of one allocation, as held in a node and in an
/// MLB entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Meta {
    /// Untagged start address (56 bits).
    pub base: u64,
    /// Size in bytes (56 bits); `base + size` may exceed 2^56.
    pub size: u64,
    /// The allocation's tag, or `TAG_FREED`.
    pub tag: u8,
}

impl Meta {
    /// The range test of the traverser and the MLB range search:
    /// `base <= a < base + size`, written `a - base < size` so it cannot
    /// overflow.
    #[inline]
    pub fn contains(&self, a: u64) -> bool {
        a >= self.base && a - self.base < self.size
    }

    /// Metadata from the node's first two words.
    #[inline]
    pub fn from_words(base: u64, size_tag: u64) -> Meta {
        let (size, tag) = unpack_size_tag(size_tag);
        Meta { base, size, tag }
    }
}
