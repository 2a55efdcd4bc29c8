//! The device heap registered with the MLU (spec section 8): the canary
//! allocator's heap ([`Heap`], tagged) and its directory, as the runtime
//! attaches them to the MLU's heap window (`sim::mlu` "Heap window").
//!
//! The directory is a window of 32-byte nodes, one per 32-byte granule of
//! the heap: the node of the granule at heap address `h` sits at
//! `dir + (h - base)`. The MLU's window is the heap rounded up to a power
//! of two, and the heap's base and the directory are aligned to that size
//! (`sim::mlu::HeapWindow`); addresses of the window past the heap's end
//! have no chunk. It is not stored: each read is answered from the
//! allocator's page table and tag/size table ([`Heap::directory`]), as the
//! hardware's allocator answers the MLU's reads of that window. The node of
//! a granule inside a chunk holds the chunk's metadata:
//! - +0: the chunk's base (the untagged pointer malloc returned);
//! - +8: requested size | tag (FREED after free);
//! - +16: the chunk's location, the node of its first granule (0 = no chunk:
//!   the MLU reports NO_META);
//! - +24: 0.
//!
//! So a heap lookup is one node read, and the location an MLB entry keeps is
//! unique per chunk, as a structure node's is: INVALIDATE after free names it.
use crate::canary::heap::{Alloc, AllocError, Freed, FreeError, Heap, HeapConfig};
use crate::memory::MemError;
use crate::mlu::HeapWindow;
use crate::node::{pack_size_tag, BASE, LINK0, NODE_BYTES, SIZE_TAG};
use crate::pointer::ADDR_MASK;

/// Where the directory window starts by default (above the runtime's node
/// pool, below its cudaMalloc heap).
pub const DEFAULT_DIRECTORY_BASE: u64 = 0x0000_2000_0000_0000;

/// The byte a store through a pointer that passed its check (or an untagged
/// one) writes into the heap: the scenario's stand-in for the program's data.
pub const STORE_FILL: u8 = 0xA5;

#[derive(Clone, Debug)]
pub struct DeviceHeap {
    heap: Heap,
    window: HeapWindow,
}

impl DeviceHeap {
    /// A tagged heap of `cfg` (its `tag_seed` must be set) with its directory
    /// at `dir`. Errors name the field.
    pub fn new(cfg: HeapConfig, dir: u64) -> Result<DeviceHeap, String> {
        if cfg.tag_seed.is_none() {
            return Err("tag_seed: a heap registered with the MLU hands out tagged pointers; give a seed".into());
        }
        let heap = Heap::new(cfg)?;
        let (base, end) = (heap.config().base, heap.end());
        // The window: the heap rounded up to a power of two.
        let bytes = (end - base).next_power_of_two().max(NODE_BYTES);
        if base.checked_add(bytes).is_none_or(|e| e > ADDR_MASK + 1) {
            return Err(format!("base: the heap [{base:#x}, {end:#x}) must lie below 2^56"));
        }
        if !base.is_multiple_of(bytes) {
            return Err(format!("base: {base:#x} must be aligned to the MLU's heap window, the heap's size rounded up to a power of two ({bytes:#x})"));
        }
        if !dir.is_multiple_of(bytes) || dir.checked_add(bytes).is_none_or(|e| e > ADDR_MASK + 1) {
            return Err(format!("directory: {dir:#x} must be aligned to {bytes:#x} (the heap's window) with the window below 2^56"));
        }
        if dir < base + bytes && base < dir + bytes {
            return Err(format!("directory: [{dir:#x}, +{bytes:#x}) overlaps the heap's window [{base:#x}, +{bytes:#x})"));
        }
        Ok(DeviceHeap { heap, window: HeapWindow { base, mask: bytes - 1, dir } })
    }

    pub fn heap(&self) -> &Heap {
        &self.heap
    }
    /// The MLU CSRs that point the heap path at this heap.
    pub fn window(&self) -> HeapWindow {
        self.window
    }
    /// Whether `[a, end)` meets the heap or its directory.
    pub fn overlaps(&self, a: u64, end: u128) -> bool {
        let w = self.window;
        let meets = |lo: u64, hi: u64| (a as u128) < hi as u128 && end > lo as u128;
        meets(w.base, w.base + w.mask + 1) || meets(w.dir, w.dir + w.mask + 1)
    }

    /// The location (directory node) of the chunk at `chunk`.
    pub fn location(&self, chunk: u64) -> u64 {
        self.window.node_of(chunk)
    }

    /// A read of the MLU's memory port: `Some` inside the directory window,
    /// `None` elsewhere (the memory image answers).
    pub fn read_word(&self, addr: u64) -> Option<Result<u64, MemError>> {
        directory_word(&self.heap, self.window, addr)
    }

    /// malloc from requester `mp`, and the locations the MLU must
    /// INVALIDATE before the chunk is used ([`malloc_invalidations`]).
    pub fn malloc(&mut self, size: u64, mp: u64) -> Result<(Alloc, Vec<u64>), AllocError> {
        let a = self.heap.malloc(size, mp)?;
        let stale = malloc_invalidations(&self.heap, self.window, a.chunk);
        Ok((a, stale))
    }

    /// free; on success the caller INVALIDATEs [`DeviceHeap::location`] of
    /// the chunk.
    pub fn free(&mut self, ptr: u64) -> Result<Freed, FreeError> {
        self.heap.free(ptr)
    }

    /// A store of `width` bytes at untagged `a` that the MLU let through:
    /// the bytes inside the heap are written with [`STORE_FILL`] (so a store
    /// over a canary is found at free); outside the heap nothing happens.
    pub fn store(&mut self, a: u64, width: u32) {
        let w = self.window;
        let lo = a.max(w.base);
        let hi = (a as u128 + width as u128).min(self.heap.end() as u128) as u64;
        if lo < hi {
            self.heap.write(lo, &vec![STORE_FILL; (hi - lo) as usize]).expect("clipped to the heap");
        }
    }
}

/// A word of the directory window `w` of `heap` as the MLU's memory port
/// reads it (module doc: +0 base, +8 size | tag, +16 the chunk's location,
/// +24 0; a granule without a chunk reads 0): `Some` inside the window,
/// `None` elsewhere. The allocator answers these reads from its tables, in
/// the model ([`DeviceHeap`]) and in the SM pipelines (the canary unit's
/// directory port, `sim::sm_pipeline`).
pub fn directory_word(heap: &Heap, w: HeapWindow, addr: u64) -> Option<Result<u64, MemError>> {
    if !w.in_directory(addr) {
        return None;
    }
    if !addr.is_multiple_of(8) {
        return Some(Err(MemError::Unaligned { addr }));
    }
    let off = addr - w.dir;
    let Some(e) = heap.directory(w.base + off) else { return Some(Ok(0)) };
    Some(Ok(match off % NODE_BYTES {
        BASE => e.base,
        SIZE_TAG => pack_size_tag(e.size, e.tag),
        LINK0 => w.node_of(e.chunk),
        _ => 0,
    }))
}

/// The locations the MLU must INVALIDATE after `heap` (`malloc` applied)
/// gave out `chunk`, before the chunk is used: an MLB may hold a FREED entry
/// of the memory the chunk reuses (a dangling access filled it), whose range
/// would shadow the new chunk's. A chunk in a page that kept its class
/// reuses only its own location; a page claimed for a class (it was empty)
/// may hold FREED chunks of another class at any granule, so every granule
/// of the page is invalidated (page size / 32 locations, in address order).
pub fn malloc_invalidations(heap: &Heap, w: HeapWindow, chunk: u64) -> Vec<u64> {
    let cfg = heap.config();
    let page = (chunk - cfg.base) / cfg.page_size;
    if heap.page_table()[page as usize].used == 1 {
        let start = cfg.base + page * cfg.page_size;
        (start..start + cfg.page_size).step_by(NODE_BYTES as usize).map(|g| w.node_of(g)).collect()
    } else {
        vec![w.node_of(chunk)]
    }
}
