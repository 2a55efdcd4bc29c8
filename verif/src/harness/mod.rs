//! Cosimulation harnesses: the generated C++ (askama templates under
//! verif/templates/) and the Rust side that drives each one.
//!
//! - [`CycleSim`]: the generic cycle-level harness (`portvec.cpp`): every
//!   input port of a top is driven per cycle from Rust and every output port
//!   sampled per cycle, in batches. Used for the MLB, whose golden model is
//!   cycle-accurate ([`sim::mlb::Mlb::cycle`]).
//! - [`mlb`]: MLB stimulus, encoding and the cycle-by-cycle comparison with
//!   the golden model (shared by the Verilator and the Icarus runs).
//! - [`iverilog`]: the same cycle records through Icarus Verilog.
//! - [`fault`]: fault injection into the MLU's metadata memory.
pub mod iverilog;
pub mod mlb;

use crate::verilator::{build, BuildSpec, Built, Layout, Process, Top};
use anyhow::{bail, Result};
use askama::Template;
use std::path::Path;

/// A port as the templates see it.
#[derive(Clone, Debug)]
pub struct TemplatePort {
    pub name: String,
    pub width: usize,
    pub offset: usize,
    pub bytes: usize,
    pub wide: bool,
    pub words: usize,
}

impl TemplatePort {
    fn list(slots: &[crate::verilator::PortSlot]) -> Vec<TemplatePort> {
        slots
            .iter()
            .map(|p| TemplatePort {
                name: p.name.clone(),
                width: p.width,
                offset: p.offset,
                bytes: p.bytes,
                wide: p.is_wide(),
                words: p.words(),
            })
            .collect()
    }
}

#[derive(Template)]
#[template(path = "portvec.cpp", escape = "none")]
struct PortVecCpp<'a> {
    top: &'a str,
    clock: &'a str,
    in_bytes: usize,
    out_bytes: usize,
    inputs: Vec<TemplatePort>,
    outputs: Vec<TemplatePort>,
}

/// The cycle harness's C++ for `layout`.
pub fn portvec_cpp(layout: &Layout) -> Result<String> {
    Ok(PortVecCpp {
        top: &layout.top,
        clock: &layout.clock,
        in_bytes: layout.in_bytes,
        out_bytes: layout.out_bytes,
        inputs: TemplatePort::list(&layout.inputs),
        outputs: TemplatePort::list(&layout.outputs),
    }
    .render()?)
}

/// Build (cached) the cycle harness of `top` with `verilog` (normally the
/// top's own text; a mutant for the mutation tests).
pub fn build_cycle_harness(top: &Top, verilog: &str, variant: &str, trace: bool) -> Result<(Layout, Built)> {
    let layout = Layout::from_manifest(&top.manifest)?;
    let cpp = portvec_cpp(&layout)?;
    let name = format!("{}{}{}", top.name(), variant, if trace { "-trace" } else { "" });
    let built = build(&BuildSpec { name, top_module: top.name().to_string(), verilog, cpp, trace })?;
    Ok((layout, built))
}

/// A running cycle harness.
pub struct CycleSim {
    proc: Process,
    pub layout: Layout,
    /// Cycles sent but not yet answered.
    pending: usize,
}

impl CycleSim {
    /// Start the harness `built` (for `layout`); `seed` seeds Verilator's
    /// random initial register values.
    pub fn start(layout: Layout, built: &Built, seed: u64) -> Result<CycleSim> {
        Self::start_with_plusargs(layout, built, seed, &[])
    }

    /// [`CycleSim::start`] with Verilog plusargs on the harness's command
    /// line (`+name`, read by `$test$plusargs` in the design), as the
    /// mutants of one build select which of them is on.
    pub fn start_with_plusargs(layout: Layout, built: &Built, seed: u64, plusargs: &[&str]) -> Result<CycleSim> {
        let mut args = vec![seed.to_string()];
        args.extend(plusargs.iter().map(|a| format!("+{a}")));
        let proc = Process::spawn(&built.exe, &args)?;
        Ok(CycleSim { proc, layout, pending: 0 })
    }

    /// Send a batch of input records (`n * in_bytes` bytes). At most one batch
    /// may be outstanding: [`CycleSim::receive`] it before sending the next.
    pub fn send(&mut self, records: &[u8]) -> Result<()> {
        let ib = self.layout.in_bytes;
        if ib == 0 || records.len() % ib != 0 {
            bail!("batch of {} bytes is not a whole number of {ib}-byte records", records.len());
        }
        if self.pending != 0 {
            bail!("a batch is still outstanding");
        }
        let n = records.len() / ib;
        let mut hdr = [0u8; 5];
        hdr[0] = b'C';
        hdr[1..].copy_from_slice(&(n as u32).to_le_bytes());
        self.proc.write(&hdr)?;
        self.proc.write(records)?;
        self.proc.flush()?;
        self.pending = n;
        Ok(())
    }

    /// The output records of the outstanding batch.
    pub fn receive(&mut self, out: &mut Vec<u8>) -> Result<()> {
        out.resize(self.pending * self.layout.out_bytes, 0);
        self.proc.read_exact(out)?;
        self.pending = 0;
        Ok(())
    }

    /// Run one batch to completion.
    pub fn run(&mut self, records: &[u8], out: &mut Vec<u8>) -> Result<()> {
        self.send(records)?;
        self.receive(out)
    }

    /// Start writing a VCD (trace builds only) from the next cycle on.
    pub fn start_vcd(&mut self, path: &Path) -> Result<()> {
        let p = path.to_string_lossy();
        let mut cmd = vec![b'V'];
        cmd.extend_from_slice(&(p.len() as u16).to_le_bytes());
        cmd.extend_from_slice(p.as_bytes());
        self.proc.write(&cmd)?;
        self.proc.flush()
    }

    /// Stop the harness (flushes a VCD).
    pub fn finish(self) -> Result<()> {
        self.proc.finish(b'Q')
    }
}
