//! The MLU's CSR map, the walk-result encoding and `LocWiden`: what the MLU
//! as an SM unit (`crate::mlu_unit::MluUnit`, the one MLU) and its walkers
//! (`crate::walker::Walker`) share. Its generation parameters are its golden
//! twin's, `sim::mlu_unit::UnitParams` (named and validated in `sim::top`
//! and `sim::config`). The blocking MLU that this file held until the unit took its
//! place is retired (git history: `hw::mlu::Mlu`).
//!
//! CSR write port (`csr_we`, `csr_addr` (3), `csr_data` (64)): 0 MODE
//! (bit 0: COMPILER=0, HWONLY=1), 1 STRUCTURE (bit 0: LIST=0, BST=1; a
//! walker is built for one structure, so the register is kept for the
//! interface and selects nothing), 2 ROOT (64), 3 STEP_LIMIT (16), and the
//! device heap's window (sim::mlu "Heap window", an aligned power-of-two
//! region): 4 HEAP_BASE, 5 HEAP_MASK (size - 1; 0 turns it off), 6 HEAP_DIR
//! (64 each). Reset
//! values: the generation parameters' mode, structure and step limit, root
//! and window 0.
use rust_hdl::prelude::*;

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
pub const CSR_HEAP_BASE: u64 = 4;
pub const CSR_HEAP_MASK: u64 = 5;
pub const CSR_HEAP_DIR: u64 = 6;

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
