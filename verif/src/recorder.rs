//! Recorder: a generated Verilog top run under Verilator's cycle harness
//! ([`CycleSim`], one record per cycle, so a memory model or a requester can
//! react to this cycle's outputs), driven by port name, with every input
//! and every output port recorded per cycle. The recording becomes a
//! [`Stimulus`] for the gate-level energy runs (synth::activity): the inputs
//! are replayed into the mapped netlist and the outputs are what the netlist
//! must produce, cycle for cycle (the netlist is cycle-equivalent to the RTL,
//! so any difference is a synthesis or simulation error, and reported so).
//!
//! Timing, as the harness (verif/templates/portvec.cpp) and the
//! gate-level testbench agree on: in cycle c the inputs take the recorded
//! values with the clock low, the outputs are sampled after they settle, then
//! the rising edge.
//!
//! Registers without a reset start random in Verilator (`randReset(2)`) and
//! x at gate level: a workload's warm-up must reset the top; expected
//! outputs are recorded from `check_from` (see [`Recorder::stimulus`]).
use crate::harness::{portvec_cpp, CycleSim};
use crate::verilator::{build, BuildSpec, Layout, PortSlot, Top};
use anyhow::{anyhow, bail, Result};
use synth::activity::Stimulus;

/// Verilator's C++ name of a port: `$` (rust-hdl's array separator) is
/// escaped as `__024`.
fn cpp_port(name: &str) -> String {
    name.replace('$', "__024")
}

pub struct Recorder {
    sim: CycleSim,
    top: String,
    /// Ports under their Verilog names (the harness uses the C++ names).
    ins: Vec<PortSlot>,
    outs: Vec<PortSlot>,
    /// The inputs driven from now on (kept from cycle to cycle).
    rec: Vec<u8>,
    /// The outputs of the last cycle stepped.
    out: Vec<u8>,
    in_log: Vec<Vec<u8>>,
    out_log: Vec<Vec<u8>>,
}

fn find<'a>(ps: &'a [PortSlot], top: &str, name: &str, dir: &str) -> Result<&'a PortSlot> {
    ps.iter().find(|p| p.name == name).ok_or_else(|| anyhow!("top {top} has no {dir} port `{name}`"))
}

/// A port's value (at most 128 bits) from a record.
pub(crate) fn read(p: &PortSlot, rec: &[u8]) -> u128 {
    let l = p.get_wide(rec);
    l[0] as u128 | (l.get(1).copied().unwrap_or(0) as u128) << 64
}

/// Per cycle `0..log.len()`, the inputs of `ins` whose value changed from
/// the cycle before (cycle 0: from all zero): a [`Stimulus`]'s `cycles`.
pub(crate) fn changes(ins: &[PortSlot], log: &[Vec<u8>]) -> Vec<Vec<(String, u128)>> {
    let zero = vec![0u8; log.first().map_or(0, Vec::len)];
    (0..log.len())
        .map(|c| {
            let (prev, now) = (if c == 0 { &zero } else { &log[c - 1] }, &log[c]);
            ins.iter().filter(|p| read(p, now) != read(p, prev)).map(|p| (p.name.clone(), read(p, now))).collect()
        })
        .collect()
}

impl Recorder {
    /// Build (or reuse the cached build of) `top`'s cycle harness and start
    /// it with every input at 0. `seed` seeds Verilator's random initial
    /// register values.
    pub fn start(top: &Top, seed: u64) -> Result<Recorder> {
        let layout = Layout::from_manifest(&top.manifest)?;
        if let Some(p) = layout.inputs.iter().chain(&layout.outputs).find(|p| p.width > 128) {
            bail!("top {}: port `{}` is {} bits wide; recordings hold at most 128", top.name(), p.name, p.width);
        }
        let (ins, outs) = (layout.inputs.clone(), layout.outputs.clone());
        let mut cl = layout;
        for p in cl.inputs.iter_mut().chain(cl.outputs.iter_mut()) {
            p.name = cpp_port(&p.name);
        }
        let cpp = portvec_cpp(&cl)?;
        let built = build(&BuildSpec { name: top.name().to_string(), top_module: top.name().to_string(), verilog: &top.verilog, cpp, trace: false })?;
        let rec = vec![0; cl.in_bytes];
        let out = vec![0; cl.out_bytes];
        let sim = CycleSim::start(cl, &built, seed)?;
        Ok(Recorder { sim, top: top.name().to_string(), ins, outs, rec, out, in_log: vec![], out_log: vec![] })
    }

    /// Drive input `name` with `v` from the next cycle stepped on.
    pub fn set(&mut self, name: &str, v: u128) -> Result<()> {
        let p = find(&self.ins, &self.top, name, "input")?;
        if p.width < 128 && v >> p.width != 0 {
            bail!("top {}: value {v:#x} does not fit the {}-bit input `{name}`", self.top, p.width);
        }
        p.put_wide(&mut self.rec, &[v as u64, (v >> 64) as u64]);
        Ok(())
    }

    /// One clock cycle with the inputs set so far; records it.
    pub fn step(&mut self) -> Result<()> {
        let mut out = std::mem::take(&mut self.out);
        self.sim.run(&self.rec, &mut out).map_err(|e| anyhow!("cycle {}: Verilator harness of {}: {e:#}", self.in_log.len(), self.top))?;
        self.in_log.push(self.rec.clone());
        self.out_log.push(out.clone());
        self.out = out;
        Ok(())
    }

    /// Output `name` in the last cycle stepped (sampled before its edge).
    pub fn get(&self, name: &str) -> Result<u128> {
        Ok(read(find(&self.outs, &self.top, name, "output")?, &self.out))
    }

    /// Output `name` as recorded in cycle `c`.
    pub fn output_at(&self, c: usize, name: &str) -> Result<u128> {
        let rec = self.out_log.get(c).ok_or_else(|| anyhow!("recording of {}: no cycle {c} (recorded {})", self.top, self.out_log.len()))?;
        Ok(read(find(&self.outs, &self.top, name, "output")?, rec))
    }

    /// Cycles stepped so far (the index the next cycle will have).
    pub fn cycles(&self) -> usize {
        self.in_log.len()
    }

    /// Cycles `0..end` as a gate-level stimulus: each cycle names the inputs
    /// that changed (cycle 0: those not 0), measured from `warmup`, with
    /// every output's recorded value expected in cycles `check_from..end`.
    /// `ops` operations happen in the measured cycles.
    pub fn stimulus(&self, end: usize, warmup: usize, check_from: usize, op: &str, ops: f64) -> Result<Stimulus> {
        if !(warmup < end && end <= self.cycles()) {
            bail!("recording of {}: window {warmup}..{end} is not inside the {} cycles recorded", self.top, self.cycles());
        }
        if !(ops > 0.0) {
            bail!("recording of {}: no operations in the measured window", self.top);
        }
        let mut st = Stimulus { warmup, op: op.to_string(), ops_per_cycle: ops / (end - warmup) as f64, ..Default::default() };
        st.cycles = changes(&self.ins, &self.in_log[..end]);
        for c in 0..end {
            st.expect.push(if c >= check_from { self.outs.iter().map(|p| (p.name.clone(), read(p, &self.out_log[c]))).collect() } else { vec![] });
        }
        Ok(st)
    }

    /// Stop the harness.
    pub fn finish(self) -> Result<()> {
        self.sim.finish()
    }
}

/// Record an open-loop stimulus (e.g. synth's built-in MLB workloads) on the
/// RTL: the same inputs, with the RTL's outputs expected from `check_from`.
pub fn record_open_loop(top: &Top, st: &Stimulus, check_from: usize) -> Result<Stimulus> {
    let mut r = Recorder::start(top, 1)?;
    for cyc in &st.cycles {
        for (name, v) in cyc {
            r.set(name, *v)?;
        }
        r.step()?;
    }
    let ops = st.ops_per_cycle * (st.cycles.len() - st.warmup) as f64;
    let mut out = r.stimulus(st.cycles.len(), st.warmup, check_from, &st.op, ops)?;
    r.finish()?;
    out.facts = st.facts.clone();
    Ok(out)
}
