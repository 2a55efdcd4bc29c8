//! A brute-force reference for the whole model: a plain list of allocations
//! {base, size, tag, freed, retired}, no MLB, no structure, no memory. The
//! property tests check the [`crate::runtime::Runtime`] against it verdict
//! by verdict. It takes the runtime's base and tag choices as inputs and
//! checks the rules those choices must obey.
use crate::config::Mode;
use crate::fault::FaultCode;
use crate::pointer::{tag, untag, TAG_FREED};
use crate::runtime::FreeFinding;

/// One allocation as the oracle sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OracleAlloc {
    pub ptr: u64,
    pub base: u64,
    pub size: u64,
    pub tag: u8,
    pub freed: bool,
    /// Its metadata is gone: a later allocation overlapped it after its free.
    pub retired: bool,
}

impl OracleAlloc {
    fn holds(&self, a: u64) -> bool {
        a >= self.base && ((a - self.base) as u128) < self.size as u128
    }
    fn overlaps(&self, base: u64, size: u64) -> bool {
        (self.base as u128) < base as u128 + size as u128 && (base as u128) < self.base as u128 + self.size as u128
    }
}

/// The reference.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Oracle {
    pub allocs: Vec<OracleAlloc>,
}

impl Oracle {
    pub fn new() -> Self {
        Self::default()
    }

    /// Record a malloc the runtime performed (`ptr` = the tagged base pointer
    /// it returned). Checks the runtime's choices: tag in 1..=254, no overlap
    /// with a live allocation, and a tag different from every FREED
    /// allocation this one retires.
    pub fn malloc(&mut self, ptr: u64, size: u64) -> Result<(), String> {
        let (base, t) = (untag(ptr), tag(ptr));
        if t == 0 || t == TAG_FREED {
            return Err(format!("malloc handed out reserved tag {t:#x}"));
        }
        for a in self.allocs.iter_mut().filter(|a| !a.retired && a.overlaps(base, size)) {
            if !a.freed {
                return Err(format!("malloc at {base:#x}+{size} overlaps live allocation at {:#x}", a.base));
            }
            if a.tag == t {
                return Err(format!("malloc at {base:#x} reuses tag {t:#x} of the freed allocation it retires"));
            }
            a.retired = true;
        }
        self.allocs.push(OracleAlloc { ptr, base, size, tag: t, freed: false, retired: false });
        Ok(())
    }

    /// Whether `[base, base + size)` overlaps a live allocation (such a malloc
    /// must be refused).
    pub fn overlaps_live(&self, base: u64, size: u64) -> bool {
        self.allocs.iter().any(|a| !a.freed && a.overlaps(base, size))
    }

    /// The base a first-fit allocator must choose: the lowest candidate among
    /// `align(heap_base)` and `align(end)` of every live allocation (512-byte
    /// granularity) whose range overlaps no live allocation. (The node pool
    /// is below the heap in the default layout, so it is not considered.)
    pub fn first_fit(&self, heap_base: u64, size: u64) -> Option<u64> {
        let align = |x: u128| x.div_ceil(512) * 512;
        let live = || self.allocs.iter().filter(|a| !a.freed);
        std::iter::once(align(heap_base as u128))
            .chain(live().map(|a| align(a.base as u128 + a.size as u128)))
            .filter(|&c| c >= heap_base as u128 && c + size as u128 <= 1u128 << 56)
            .filter(|&c| !live().any(|a| a.overlaps(c as u64, size)))
            .min()
            .map(|c| c as u64)
    }

    /// What a free of `ptr` must do.
    pub fn free(&mut self, ptr: u64) -> Result<(), FreeFinding> {
        if let Some(a) = self.allocs.iter_mut().find(|a| a.ptr == ptr && !a.freed) {
            a.freed = true;
            return Ok(());
        }
        if self.allocs.iter().any(|a| a.ptr == ptr) {
            Err(FreeFinding::DoubleFree)
        } else {
            Err(FreeFinding::InvalidFree)
        }
    }

    /// The allocation whose metadata is still present and holds `a`.
    pub fn holder(&self, a: u64) -> Option<&OracleAlloc> {
        self.allocs.iter().find(|x| !x.retired && x.holds(a))
    }

    /// The verdict of an access of `w` bytes through `ptr` in `mode`, with
    /// the compiler's root pointer `root` (default `ptr`): the untagged
    /// address or the fault code. Assumes a well-formed structure (no step
    /// limit or memory error).
    pub fn access(&self, mode: Mode, ptr: u64, w: u32, root: Option<u64>) -> Result<u64, FaultCode> {
        if tag(ptr) == 0 {
            return Ok(untag(ptr));
        }
        let meta = match mode {
            Mode::Compiler => {
                let root = root.unwrap_or(ptr);
                if tag(root) == 0 {
                    return Err(FaultCode::NoMeta);
                }
                self.holder(untag(root))
            }
            Mode::Hwonly => self.holder(untag(ptr)),
        };
        let Some(m) = meta else {
            return Err(FaultCode::NoMeta);
        };
        if m.freed {
            Err(FaultCode::UseAfterFree)
        } else if m.tag != tag(ptr) {
            Err(FaultCode::TagMismatch)
        } else if !{
            // The spec's formula in wide arithmetic, independent of
            // memcheck::in_bounds (which the model uses).
            let a = untag(ptr) as u128;
            a >= m.base as u128 && a + w as u128 <= m.base as u128 + m.size as u128
        } {
            Err(FaultCode::OutOfBounds)
        } else {
            Ok(untag(ptr))
        }
    }
}
