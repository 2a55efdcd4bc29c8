//! Fault codes, MLU operations and fault reports (spec section 4,
//! docs/design.md "Fault reports" and "Encodings"). The 3-bit encodings are
//! the RTL's `fault` and `op` port values.
use crate::node::Meta;
use serde::{Deserialize, Serialize};
use std::fmt;

/// MLU fault code (3 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FaultCode {
    None = 0,
    OutOfBounds = 1,
    UseAfterFree = 2,
    TagMismatch = 3,
    NoMeta = 4,
    SharedOob = 5,
    TraversalLimit = 6,
    MemError = 7,
}

impl FaultCode {
    pub const ALL: [FaultCode; 8] = [
        FaultCode::None,
        FaultCode::OutOfBounds,
        FaultCode::UseAfterFree,
        FaultCode::TagMismatch,
        FaultCode::NoMeta,
        FaultCode::SharedOob,
        FaultCode::TraversalLimit,
        FaultCode::MemError,
    ];

    /// The 3-bit hardware encoding.
    pub fn bits(self) -> u8 {
        self as u8
    }

    /// Decode a 3-bit value (None for values above 7).
    pub fn from_bits(b: u8) -> Option<FaultCode> {
        FaultCode::ALL.get(b as usize).copied()
    }

    /// The name used in reports: "NONE", "OUT_OF_BOUNDS", ...
    pub fn name(self) -> &'static str {
        match self {
            FaultCode::None => "NONE",
            FaultCode::OutOfBounds => "OUT_OF_BOUNDS",
            FaultCode::UseAfterFree => "USE_AFTER_FREE",
            FaultCode::TagMismatch => "TAG_MISMATCH",
            FaultCode::NoMeta => "NO_META",
            FaultCode::SharedOob => "SHARED_OOB",
            FaultCode::TraversalLimit => "TRAVERSAL_LIMIT",
            FaultCode::MemError => "MEM_ERROR",
        }
    }

    pub fn from_name(s: &str) -> Option<FaultCode> {
        FaultCode::ALL.iter().copied().find(|c| c.name() == s)
    }

    /// Whether a report of this fault carries the allocation's base and size.
    pub fn has_alloc(self) -> bool {
        matches!(
            self,
            FaultCode::UseAfterFree | FaultCode::TagMismatch | FaultCode::OutOfBounds | FaultCode::SharedOob
        )
    }
}

impl fmt::Display for FaultCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// MLU operation (3 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    LoadMeta = 0,
    MemcheckG = 1,
    MemcheckS = 2,
    Invalidate = 3,
    Flush = 4,
}

impl Op {
    pub const ALL: [Op; 5] = [Op::LoadMeta, Op::MemcheckG, Op::MemcheckS, Op::Invalidate, Op::Flush];

    pub fn bits(self) -> u8 {
        self as u8
    }
    pub fn from_bits(b: u8) -> Option<Op> {
        Op::ALL.get(b as usize).copied()
    }
    /// "LOADMETA", "MEMCHECK.G", "MEMCHECK.S", "INVALIDATE", "FLUSH".
    pub fn name(self) -> &'static str {
        match self {
            Op::LoadMeta => "LOADMETA",
            Op::MemcheckG => "MEMCHECK.G",
            Op::MemcheckS => "MEMCHECK.S",
            Op::Invalidate => "INVALIDATE",
            Op::Flush => "FLUSH",
        }
    }
    pub fn from_name(s: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|o| o.name() == s)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fault report: built only on the fault path, so passing checks never
/// format strings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub code: FaultCode,
    pub op: Op,
    /// The faulting pointer as given to the op (tag included; for MEMCHECK.S
    /// the shared address).
    pub ptr: u64,
    /// The allocation's metadata where it is known (USE_AFTER_FREE,
    /// TAG_MISMATCH, OUT_OF_BOUNDS, SHARED_OOB; tag 0 for SHARED_OOB).
    pub alloc: Option<Meta>,
    /// "N bytes after" / "N bytes before" for OUT_OF_BOUNDS and SHARED_OOB.
    pub distance: Option<String>,
}

impl Fault {
    /// A fault without allocation facts (NO_META, TRAVERSAL_LIMIT, MEM_ERROR).
    pub fn bare(code: FaultCode, op: Op, ptr: u64) -> Fault {
        Fault { code, op, ptr, alloc: None, distance: None }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {} of {:#x}", self.code, self.op, self.ptr)?;
        if let Some(m) = &self.alloc {
            match &self.distance {
                Some(d) => write!(f, ": {d} the nearest allocation at {:#x} of size {}", m.base, m.size)?,
                None => write!(f, ": allocation at {:#x} of size {}", m.base, m.size)?,
            }
        }
        Ok(())
    }
}

impl std::error::Error for Fault {}
