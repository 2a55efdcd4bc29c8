//! The waveform of `mlugen wave`: a VCD of the MLU as an SM unit (a
//! Verilator trace build of its Verilog, every signal of the design from
//! reset on) running one LOADMETA that misses the MLB, the walker's reads of
//! the metadata port, the MLB fill and the response; then the same LOADMETA
//! again (now an MLB hit) and a MEMCHECK.G that hits by location. The top is
//! [`unit_top`]'s (the committed unit for 8 or 16 entries and a bst, else a
//! one-lane unit generated now); the metadata memory is the golden
//! runtime's after `allocations` mallocs, answering every read after
//! `latency` cycles. Every output is compared with the golden twin every
//! cycle, so the waveform shows the model's behaviour.
use crate::unit_driver::{Csr, Phase, UnitCosim, UnitRun};
use crate::unit_program::{unit_top, Requests};
use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;
use sim::config::{MluConfig, Structure};
use sim::fault::{FaultCode, Op};
use sim::meta_port::PortParams;
use sim::runtime::{Runtime, RuntimeConfig};
use std::path::PathBuf;

/// What to record.
#[derive(Clone, Debug)]
pub struct Wave {
    /// Output VCD file.
    pub out: PathBuf,
    /// MLB entries (1, 2, 4, 8, 16, 32).
    pub entries: usize,
    /// Metadata structure: list or bst.
    pub structure: Structure,
    /// Metadata memory latency in cycles (1..=1000).
    pub latency: u32,
    /// Allocations made before the LOADMETA (1..=1000); the lookup targets
    /// the first one, so a list walk visits all of them.
    pub allocations: usize,
}

/// One request of the waveform: cycles from the cycle it is taken to the
/// cycle of its response, its fault and the location it answered.
#[derive(Clone, Debug, Serialize)]
pub struct Answer {
    pub cycles: u64,
    pub fault: &'static str,
    pub location: String,
}

/// What `mlugen wave` prints.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub vcd: String,
    pub top: String,
    pub memory_latency: u32,
    pub cycles_total: u64,
    pub nodes_read: u64,
    pub loadmeta_miss: Answer,
    pub loadmeta_hit: Answer,
    pub memcheck_g_hit: Answer,
}

/// The most walk cycles `wave` simulates (the VCD holds every signal of
/// every cycle).
const MAX_WALK_CYCLES: u64 = 50_000;

/// Record `w`'s waveform into `w.out`; errors name the flag at fault.
pub fn record(w: &Wave) -> Result<Summary> {
    let structure = match w.structure {
        s @ (Structure::List | Structure::Bst) => s,
        s => bail!("--structure {}: allowed: list, bst", s.name()),
    };
    if !(1..=1000).contains(&w.latency) {
        bail!("--latency {}: must be 1..=1000 cycles", w.latency);
    }
    if !(1..=1000).contains(&w.allocations) {
        bail!("--allocations {}: must be 1..=1000", w.allocations);
    }
    // A walk reads one node per step, each the port's latency plus two
    // cycles (all nodes of a list; the depth of the balanced tree).
    let depth = match structure {
        Structure::List => w.allocations as u64,
        _ => (usize::BITS - w.allocations.leading_zeros()) as u64,
    };
    let walk_cycles = depth * (w.latency as u64 + 2);
    if walk_cycles > MAX_WALK_CYCLES {
        bail!(
            "--allocations {} --latency {} ({}): the walk would take about {walk_cycles} cycles; at most {MAX_WALK_CYCLES} are written to a VCD (fewer allocations, a lower latency, or --structure bst)",
            w.allocations,
            w.latency,
            structure.name()
        );
    }
    let cfg = MluConfig { entries: w.entries, structure, ..MluConfig::default() };
    cfg.validate(sim::config::Target::Hardware).map_err(|e| anyhow!("--entries {}: {e}", w.entries))?;
    // Fail on an unwritable path before building anything.
    std::fs::File::create(&w.out).with_context(|| format!("cannot create {}", w.out.display()))?;
    let mut rt = Runtime::new(RuntimeConfig { mlu: cfg.clone(), ..RuntimeConfig::default() }).map_err(|e| anyhow!("{e}"))?;
    for i in 0..w.allocations {
        rt.malloc(256 + 64 * i as u64, None).map_err(|e| anyhow!("malloc: {e:?}"))?;
    }
    let target = rt.allocations()[0].ptr;
    let (top, params) = unit_top(&cfg)?;
    let mut cs = UnitCosim::start_with_vcd(&top, params.lanes, 1, &w.out)?;
    let port = PortParams { min_latency: w.latency, max_latency: w.latency, ready_percent: 100, errors_per_million: 0, shuffle: false, seed: 1 };
    let mut req = Requests::new(params.lanes);
    // LOADMETA (a miss), LOADMETA (a hit), MEMCHECK.G with the location
    // the first answered; each phase runs until the unit is idle.
    let mut step = 0;
    let root = rt.root();
    let run = cs.run_phases(&params, &mut rt, &[Csr::Root(root)], port, |_, run: &UnitRun| {
        step += 1;
        let requests = match step {
            1 | 2 => vec![req.make(Op::LoadMeta, target, 1, 0, 0, 0)],
            3 => vec![req.make(Op::MemcheckG, target, 4, run.answers[0].loc, 0, 0)],
            _ => return Ok(None),
        };
        Ok(Some(Phase { requests, ..Phase::default() }))
    })?;
    cs.finish()?;
    if let Some(m) = &run.mismatch {
        bail!("the Verilog of {} differs from the golden model, so the waveform shows a bug:\n{m}", top.name());
    }
    let want = rt.loadmeta(target).map_err(|f| anyhow!("model LOADMETA faulted: {f:?}"))?;
    if run.answers.len() != 3 || run.answers[0].loc != want || run.answers.iter().any(|a| a.fault != 0) {
        bail!("the unit's answers {:?} are not a LOADMETA of {want:#x} twice and a passing MEMCHECK.G", run.answers);
    }
    let answer = |k: usize| {
        let a = run.answers[k];
        Answer {
            cycles: run.answered_at[k].1 - run.taken_at[k],
            fault: FaultCode::from_bits(a.fault).map(|f| f.name()).unwrap_or("?"),
            location: format!("{:#x}", a.loc),
        }
    };
    Ok(Summary {
        vcd: w.out.display().to_string(),
        top: top.name().to_string(),
        memory_latency: w.latency,
        cycles_total: run.cycles,
        nodes_read: run.counters.reads,
        loadmeta_miss: answer(0),
        loadmeta_hit: answer(1),
        memcheck_g_hit: answer(2),
    })
}
