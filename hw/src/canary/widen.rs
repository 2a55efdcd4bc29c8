//! `Widen<O, I>`: zero-extension of an I-bit value to O bits. A block of its
//! own because rust-hdl can only widen by a masked cast, which Verilator
//! flags (WIDTH); this emits an exact concatenation (as `mlu::LocWiden`).
//! Ports: `a` in (I bits), `y` out (O bits), combinational.
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct Widen<const O: usize, const I: usize> {
    pub a: Signal<In, Bits<I>>,
    pub y: Signal<Out, Bits<O>>,
}

impl<const O: usize, const I: usize> Logic for Widen<O, I> {
    fn update(&mut self) {
        self.y.next = bit_cast::<O, I>(self.a.val());
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        assert!(O > I, "Widen<{O}, {I}>: O must exceed I");
        Verilog::Custom(format!("always @(*) y = {{{}'d0, a}};", O - I))
    }
}
