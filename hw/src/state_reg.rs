//! `StateReg<T>`: a D flip-flop for an FSM's `LogicState` enum. rust-hdl's
//! `DFF` initialises `q` from `T::default().verilog()`, which for an enum is a
//! 64-bit literal (Verilator -Wall: WIDTH); this register is the same flop
//! with an initial value sized to the state's width (the first variant, 0),
//! emitted without the enum's localparams, which it does not use.
//! Ports as `DFF`: `d`, `q`, `clock` (rising edge).
use rust_hdl::prelude::*;

#[derive(Clone, Debug, LogicBlock)]
pub struct StateReg<T: Synth> {
    pub d: Signal<In, T>,
    pub q: Signal<Out, T>,
    pub clock: Signal<In, Clock>,
}

impl<T: Synth> Default for StateReg<T> {
    fn default() -> Self {
        Self { d: Signal::default(), q: Signal::default(), clock: Signal::default() }
    }
}

impl<T: Synth> Logic for StateReg<T> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.q.next = self.d.val()
        }
    }
    fn connect(&mut self) {
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        // Wrapper form: rust-hdl then declares no enum localparams here
        // (which this module would not use: Verilator UNUSEDPARAM) and makes
        // `q` a wire, driven from the flop `state_q`.
        let w = T::BITS;
        Verilog::Wrapper(Wrapper {
            code: format!(
                "reg [{m}:0] state_q;\ninitial begin\n   state_q = {w}'d0;\nend\n\nalways @(posedge clock) begin\n   state_q <= d;\nend\nassign q = state_q;\n",
                m = w - 1
            ),
            cores: String::new(),
        })
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "dff".into(),
            clock: "clock".into(),
            inputs: vec!["d".into()],
            outputs: vec!["q".into()],
        }]
    }
}
