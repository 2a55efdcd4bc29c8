//! Tagged 64-bit pointers (spec section 1, docs/design.md "Pointers").
//!
//! Bits 63..56 hold the 8-bit tag, bits 55..0 the virtual address. The
//! hardware's MEMCHECK and LOADMETA datapaths split pointers with exactly
//! these constants.

/// Position of the tag's least significant bit.
pub const TAG_SHIFT: u32 = 56;
/// Width of the virtual address carried by a pointer.
pub const ADDR_BITS: u32 = 56;
/// `2^56 - 1`: the address part of a pointer.
pub const ADDR_MASK: u64 = (1u64 << ADDR_BITS) - 1;
/// Tag 0: an untagged pointer, never checked.
pub const TAG_UNCHECKED: u8 = 0;
/// Tag 0xFF: written into a node when its allocation is freed; never handed out.
pub const TAG_FREED: u8 = 0xFF;
/// The location LOADMETA returns when no node holds the address: odd and
/// above 2^56, so no 32-byte-aligned node in the 56-bit space can have it.
pub const NO_META: u64 = u64::MAX;

/// The tag of a pointer (bits 63..56).
#[inline]
pub fn tag(p: u64) -> u8 {
    (p >> TAG_SHIFT) as u8
}

/// The address of a pointer with its tag removed (bits 55..0).
#[inline]
pub fn untag(p: u64) -> u64 {
    p & ADDR_MASK
}

/// A pointer with tag `tag` and address `addr` (bits of `addr` above 55 are
/// dropped).
#[inline]
pub fn tagged(tag: u8, addr: u64) -> u64 {
    ((tag as u64) << TAG_SHIFT) | (addr & ADDR_MASK)
}
