//! The MLU's generation parameters, its CSR map, the walk-result encoding
//! and `LocWiden`: what the MLU as an SM unit (`crate::mlu_unit::MluUnit`,
//! the one MLU) and its walkers (`crate::walker::Walker`) share with the
//! generator. The blocking MLU that this file held until the unit took its
//! place is retired (git history: `hw::mlu::Mlu`).
//!
//! CSR write port (`csr_we`, `csr_addr` (2), `csr_data` (64)): 0 MODE
//! (bit 0: COMPILER=0, HWONLY=1), 1 STRUCTURE (bit 0: LIST=0, BST=1; ignored
//! unless both structures are built), 2 ROOT (64), 3 STEP_LIMIT (16). Reset
//! values: the generation parameters' mode, structure and step limit, root 0.
use rust_hdl::prelude::*;
use sim::config::{Mode, MluConfig, Replacement, Structure};

/// Which structures a walker (and the MLU) is generated for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Structures {
    List,
    Bst,
    /// Both walks built; the STRUCTURE CSR selects one.
    Both,
}

impl Structures {
    pub fn name(self) -> &'static str {
        match self {
            Structures::List => "list",
            Structures::Bst => "bst",
            Structures::Both => "both",
        }
    }
}

/// A walk's `result` (2 bits).
pub const RES_FOUND: u64 = 0;
pub const RES_NOT_FOUND: u64 = 1;
pub const RES_LIMIT: u64 = 2;
pub const RES_MEM_ERROR: u64 = 3;

/// CSR addresses of the write port.
pub const CSR_MODE: u64 = 0;
pub const CSR_STRUCTURE: u64 = 1;
pub const CSR_ROOT: u64 = 2;
pub const CSR_STEP_LIMIT: u64 = 3;

/// Generation parameters of an MLU (besides the entry count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MluParams {
    pub structures: Structures,
    pub replacement: Replacement,
    /// Reset value of the MODE CSR.
    pub mode: Mode,
    /// Reset value of the STRUCTURE CSR when both are built.
    pub structure: Structure,
    /// Reset value of the STEP_LIMIT CSR.
    pub step_limit: u32,
}

impl MluParams {
    /// The parameters for one structure with the model's defaults (compiler
    /// mode, tree PLRU, step limit 4096).
    pub fn new(structures: Structures) -> Self {
        let d = MluConfig::default();
        let structure = match structures {
            Structures::List => Structure::List,
            Structures::Bst | Structures::Both => Structure::Bst,
        };
        MluParams { structures, replacement: d.replacement, mode: d.mode, structure, step_limit: d.step_limit }
    }

    /// From a model configuration (its structure must be list or bst; sol is
    /// not built in hardware).
    pub fn from_config(cfg: &MluConfig) -> anyhow::Result<Self> {
        let structures = match cfg.structure {
            Structure::List => Structures::List,
            Structure::Bst => Structures::Bst,
            Structure::Sol => anyhow::bail!("structure \"sol\" is a model-only reference point and has no RTL"),
        };
        anyhow::ensure!(cfg.step_limit <= 0xFFFF, "step_limit {} does not fit the 16-bit CSR", cfg.step_limit);
        Ok(MluParams {
            structures,
            replacement: cfg.replacement,
            mode: cfg.mode,
            structure: cfg.structure,
            step_limit: cfg.step_limit,
        })
    }
}

/// `{8'b0, loc[55:5], 5'b0}`: a 51-bit MLB location back to a 64-bit
/// address. A block of its own because rust-hdl can only widen by a masked
/// cast, which Verilator flags (WIDTH); this emits an exact concatenation.
#[derive(LogicBlock, Default)]
pub struct LocWiden {
    pub loc51: Signal<In, Bits<51>>,
    pub loc64: Signal<Out, Bits<64>>,
}

impl Logic for LocWiden {
    fn update(&mut self) {
        self.loc64.next = bit_cast::<64, 51>(self.loc51.val()) << 5_u64;
    }
    fn connect(&mut self) {
        self.loc64.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(*) loc64 = {8'h00, loc51, 5'h00};".into())
    }
}
