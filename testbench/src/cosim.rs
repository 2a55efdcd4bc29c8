//! Cosimulation runs of the emitted Verilog against the golden model, as the
//! `mlugen cosim` command and the cosim tests use them.
//!
//! - [`run_mlb`]: random cycles through the MLB's cycle harness, compared
//!   every cycle with [`sim::mlb::Mlb::cycle`] ([`crate::harness::mlb`]).
//! - [`run_mlu`]: random programs on the model's runtime through the MLU's
//!   transaction harness, every request's result and latency and every
//!   program's final counters compared ([`crate::harness::program`]).
//!
//! Each run is batched and pipelined: while the harness simulates batch k,
//! Rust draws batch k+1 and steps the model through it. A run stops at the
//! first mismatch; with a VCD path it then re-runs the same (deterministic)
//! stimulus on a `--trace` build and writes a VCD of the last cycles up to
//! and including the mismatch.
use crate::harness::mlb::{compare, MlbBench, MlbExpect, MlbMismatch, MlbOut, MlbPorts, MlbStats, MlbStim};
use crate::harness::mlu::{build_mlu_harness, Answer, Cmd, HwState, MluResp, MluSim};
use crate::harness::program::{check_resp, check_state, Batch, Expect, Expected, MluBench, ProgramConfig, ProgramStats, StateExpect};
use crate::harness::{build_cycle_harness, CycleSim};
use crate::verilator::{Built, Layout, PortSlot, Top};
use anyhow::{anyhow, Result};
use sim::config::Replacement;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options shared by the runs.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Cycles (MLB) or transactions (MLU) to run.
    pub count: u64,
    pub seed: u64,
    /// Records per batch.
    pub batch: usize,
    /// On a mismatch, write a VCD of the last `vcd_window` cycles here.
    pub vcd: Option<PathBuf>,
    pub vcd_window: u64,
    /// Told when the harness is built and after every compared batch.
    pub progress: Option<ProgressHook>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { count: 1_000_000, seed: 1, batch: 32768, vcd: None, vcd_window: 200, progress: None }
    }
}

/// What a run reports to its [`ProgressHook`].
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// The Verilator harness is ready (`compiled`: built now, else cached).
    Built { compiled: bool, seconds: f64 },
    /// Cycles (MLB) or requests (MLU) compared so far.
    Compared(u64),
}

/// A progress callback (the CLI's bar); cheap to clone.
#[derive(Clone)]
pub struct ProgressHook(pub std::sync::Arc<dyn Fn(Progress) + Send + Sync>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
}

impl RunOptions {
    pub fn report(&self, p: Progress) {
        if let Some(h) = &self.progress {
            (h.0)(p);
        }
    }
}

/// The outcome of an MLB run.
#[derive(Clone, Debug)]
pub struct MlbRun {
    pub top: String,
    pub cycles: u64,
    pub stats: MlbStats,
    pub mismatch: Option<MlbMismatch>,
    /// The build used (compile time, cache hit or not).
    pub build: Built,
    /// Wall time of the run after the build (stimulus, model, Verilator,
    /// compare; the model and Verilator overlap).
    pub seconds: f64,
    /// Time spent drawing stimulus and stepping the golden model alone.
    pub model_seconds: f64,
    /// Where the VCD went, if one was written.
    pub vcd: Option<PathBuf>,
}

impl MlbRun {
    pub fn cycles_per_second(&self) -> f64 {
        self.cycles as f64 / self.seconds.max(1e-9)
    }
    pub fn model_cycles_per_second(&self) -> f64 {
        self.cycles as f64 / self.model_seconds.max(1e-9)
    }
}

struct MlbBatch {
    stims: Vec<MlbStim>,
    expects: Vec<MlbExpect>,
    records: Vec<u8>,
}

fn mlb_batch(bench: &mut MlbBench, ports: &MlbPorts, in_bytes: usize, n: usize) -> MlbBatch {
    let mut b = MlbBatch { stims: Vec::with_capacity(n), expects: Vec::with_capacity(n), records: vec![0; n * in_bytes] };
    for i in 0..n {
        let (s, e) = bench.next();
        s.encode(ports, &mut b.records[i * in_bytes..(i + 1) * in_bytes]);
        b.stims.push(s);
        b.expects.push(e);
    }
    b
}

/// Run `opts.count` random cycles of an `entries`-entry MLB through the cycle
/// harness built from `verilog` (the top's own text, or a mutant of it;
/// `variant` names the build) and compare every cycle with the model.
pub fn run_mlb(top: &Top, verilog: &str, variant: &str, entries: usize, replacement: Replacement, opts: &RunOptions) -> Result<MlbRun> {
    let (layout, build) = build_cycle_harness(top, verilog, variant, false)?;
    opts.report(Progress::Built { compiled: build.compiled, seconds: build.seconds });
    let mut run = run_mlb_cycles(top.name(), layout, build, entries, replacement, opts, &[])?;
    if let (Some(m), Some(path)) = (&run.mismatch, &opts.vcd) {
        mlb_vcd(top, verilog, variant, entries, replacement, opts, m.cycle, path)?;
        run.vcd = Some(path.clone());
    }
    Ok(run)
}

/// The cycle comparison of [`run_mlb`] on a built harness (`layout`,
/// `built`), for any netlist with the MLB's ports (the RTL, or a mapped gate
/// netlist: crate::gatelevel). `force` holds inputs outside the MLB's ports
/// (a mutant switch) at a value in every cycle. No VCD is written.
pub fn run_mlb_cycles(
    top: &str,
    layout: Layout,
    build: Built,
    entries: usize,
    replacement: Replacement,
    opts: &RunOptions,
    force: &[(PortSlot, u64)],
) -> Result<MlbRun> {
    let ports = MlbPorts::new(&layout, entries)?;
    let (ib, ob) = (layout.in_bytes, layout.out_bytes);
    let t0 = Instant::now();
    let mut sim = CycleSim::start(layout, &build, opts.seed)?;
    let mut bench = MlbBench::new(entries, replacement, opts.seed);
    let mut model_seconds = 0.0;
    let mut done = 0u64;
    let next_batch = |bench: &mut MlbBench, done: u64, model_seconds: &mut f64| -> Option<MlbBatch> {
        let n = (opts.count - done).min(opts.batch as u64) as usize;
        if n == 0 {
            return None;
        }
        let t = Instant::now();
        let mut b = mlb_batch(bench, &ports, ib, n);
        for rec in b.records.chunks_mut(ib) {
            for (p, v) in force {
                p.put(rec, *v);
            }
        }
        *model_seconds += t.elapsed().as_secs_f64();
        Some(b)
    };
    let mut cur = next_batch(&mut bench, done, &mut model_seconds);
    let mut out = Vec::new();
    let mut mismatch = None;
    let mut prev_stim: Option<MlbStim> = None;
    while let Some(b) = cur.take() {
        sim.send(&b.records)?;
        let nxt = next_batch(&mut bench, done + b.stims.len() as u64, &mut model_seconds);
        sim.receive(&mut out)?;
        for (i, (s, e)) in b.stims.iter().zip(&b.expects).enumerate() {
            let o = MlbOut::decode(&ports, &out[i * ob..(i + 1) * ob]);
            if let Some((output, expected, got)) = compare(e, &o) {
                mismatch = Some(MlbMismatch { cycle: done + i as u64, output, expected, got, stim: *s, prev_stim, sample: o, expect: *e });
                break;
            }
            prev_stim = Some(*s);
        }
        done += b.stims.len() as u64;
        if mismatch.is_some() {
            break;
        }
        opts.report(Progress::Compared(done));
        cur = nxt;
    }
    sim.finish()?;
    Ok(MlbRun {
        top: top.to_string(),
        cycles: mismatch.as_ref().map_or(done, |m| m.cycle + 1),
        stats: bench.stats,
        mismatch,
        build,
        seconds: t0.elapsed().as_secs_f64(),
        model_seconds,
        vcd: None,
    })
}

/// Re-run the first `last + 1` cycles of the same stimulus on a trace build,
/// dumping the last `opts.vcd_window` of them to `path`.
#[allow(clippy::too_many_arguments)]
fn mlb_vcd(top: &Top, verilog: &str, variant: &str, entries: usize, replacement: Replacement, opts: &RunOptions, last: u64, path: &Path) -> Result<()> {
    let (layout, build) = build_cycle_harness(top, verilog, variant, true)?;
    let ports = MlbPorts::new(&layout, entries)?;
    let ib = layout.in_bytes;
    let mut sim = CycleSim::start(layout, &build, opts.seed)?;
    let mut bench = MlbBench::new(entries, replacement, opts.seed);
    let start = (last + 1).saturating_sub(opts.vcd_window);
    let mut out = Vec::new();
    let mut done = 0u64;
    let abs = std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf());
    while done <= last {
        // Up to the start of the window, then the window itself.
        let end = if done < start { start } else { last + 1 };
        let n = (end - done).min(opts.batch as u64) as usize;
        if done == start {
            sim.start_vcd(&abs)?;
        }
        let b = mlb_batch(&mut bench, &ports, ib, n);
        sim.run(&b.records, &mut out)?;
        done += n as u64;
    }
    sim.finish()?;
    if !abs.is_file() {
        return Err(anyhow!("the trace harness wrote no VCD at {}", abs.display()));
    }
    Ok(())
}

/// A request (or a program's final state check) where the Verilog and the
/// model differ.
#[derive(Clone, Debug)]
pub struct MluMismatch {
    /// Index of the request (for a state check: requests issued before it).
    pub index: u64,
    pub what: String,
    /// The request and the model's answer (None for a state check).
    pub expect: Option<Expect>,
    pub got: Option<MluResp>,
    pub state: Option<(StateExpect, HwState)>,
    /// The commands of the batch up to the mismatch (the last few are shown).
    pub history: Vec<Cmd>,
}

impl std::fmt::Display for MluMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.expect, &self.got) {
            (Some(e), Some(r)) => {
                writeln!(f, "MLU mismatch at request {}: {}", self.index, e.req)?;
                writeln!(f, "  differences: {}", self.what)?;
                writeln!(
                    f,
                    "  model:   fault={} loc={} addr={} alloc={} reads={} latency={} + reads + memory wait",
                    e.fault.name(),
                    e.loc.map_or("-".into(), |l| format!("{l:#x}")),
                    e.addr.map_or("-".into(), |a| format!("{a:#x}")),
                    e.alloc.map_or("-".into(), |(b, s)| format!("base {b:#x} size {s:#x}")),
                    e.reads,
                    e.fixed_cycles
                )?;
                writeln!(f, "  Verilog: {r}")?;
            }
            _ => {
                writeln!(f, "MLU state mismatch at the end of a program (after request {}):", self.index)?;
                writeln!(f, "  {}", self.what)?;
            }
        }
        writeln!(f, "  preceding commands (oldest first):")?;
        for c in self.history.iter().rev().take(12).collect::<Vec<_>>().into_iter().rev() {
            writeln!(f, "    {c}")?;
        }
        Ok(())
    }
}

/// The outcome of an MLU run.
#[derive(Clone, Debug)]
pub struct MluRun {
    pub top: String,
    pub config: ProgramConfig,
    pub requests: u64,
    pub stats: ProgramStats,
    pub mismatch: Option<MluMismatch>,
    pub build: Built,
    /// Wall time after the build (model and Verilator overlap).
    pub seconds: f64,
    /// Time in the program generator and the golden model alone.
    pub model_seconds: f64,
    /// Simulated clock cycles.
    pub cycles: u64,
    pub vcd: Option<PathBuf>,
    /// The longest request-to-response time seen, in cycles.
    pub max_response_cycles: u64,
}

impl MluRun {
    pub fn requests_per_second(&self) -> f64 {
        self.requests as f64 / self.seconds.max(1e-9)
    }
    pub fn model_requests_per_second(&self) -> f64 {
        self.requests as f64 / self.model_seconds.max(1e-9)
    }
}

/// Compare a batch's answers with its expectations; the first mismatch.
pub fn check_mlu_batch(b: &Batch, answers: &[Answer], issued_before: u64) -> Option<MluMismatch> {
    let mut ai = 0;
    let mut last_index = issued_before;
    for (ci, c) in b.cmds.iter().enumerate() {
        if c.response_bytes() == 0 {
            continue;
        }
        let (e, a) = (&b.expected[ai], &answers[ai]);
        ai += 1;
        let history = || b.cmds[ci.saturating_sub(40)..=ci].to_vec();
        match (e, a) {
            (Expected::Resp(e), Answer::Resp(r)) => {
                last_index = e.index;
                if let Some(what) = check_resp(e, r) {
                    return Some(MluMismatch { index: e.index, what, expect: Some(*e), got: Some(*r), state: None, history: history() });
                }
            }
            (Expected::State(e), Answer::State(h)) => {
                if let Some(what) = check_state(e, h) {
                    return Some(MluMismatch { index: last_index, what, expect: None, got: None, state: Some((*e, *h)), history: history() });
                }
            }
            _ => {
                return Some(MluMismatch { index: last_index, what: "harness answers out of step with the commands".into(), expect: None, got: None, state: None, history: history() })
            }
        }
    }
    None
}

/// Run about `opts.count` random requests of programs drawn for `cfg`
/// through the MLU top's harness, comparing every answer with the model.
pub fn run_mlu(top: &Top, verilog: &str, variant: &str, cfg: &ProgramConfig, opts: &RunOptions) -> Result<MluRun> {
    let build = build_mlu_harness(top, verilog, variant, false)?;
    opts.report(Progress::Built { compiled: build.compiled, seconds: build.seconds });
    let t0 = Instant::now();
    let mut sim = MluSim::start(&build, opts.seed)?;
    let mut bench = MluBench::new(cfg.clone(), opts.seed);
    let batch = (opts.batch as u64).min(opts.count.max(1));
    let mut cur = Some(bench.batch(batch));
    let mut finished = false;
    let mut mismatch = None;
    let mut cycles = 0;
    let mut max_response = 0;
    while let Some(b) = cur.take() {
        let issued_before = bench.issued - b.requests;
        sim.send(&b.cmds)?;
        let nxt = if bench.issued < opts.count {
            Some(bench.batch(batch.min(opts.count - bench.issued)))
        } else if !finished {
            finished = true;
            Some(bench.finish())
        } else {
            None
        };
        let answers = sim.receive()?;
        for a in &answers {
            match a {
                Answer::State(h) => cycles = h.cycles,
                Answer::Resp(r) => max_response = max_response.max(r.cycles as u64),
            }
        }
        if let Some(m) = check_mlu_batch(&b, &answers, issued_before) {
            mismatch = Some(m);
            break;
        }
        opts.report(Progress::Compared(issued_before + b.requests));
        cur = nxt;
    }
    sim.finish()?;
    let seconds = t0.elapsed().as_secs_f64();
    let mut vcd = None;
    if let (Some(m), Some(path)) = (&mismatch, &opts.vcd) {
        mlu_vcd(top, verilog, variant, cfg, opts, m.index, path)?;
        vcd = Some(path.clone());
    }
    Ok(MluRun {
        top: top.name().to_string(),
        config: cfg.clone(),
        requests: mismatch.as_ref().map_or(bench.issued, |m| m.index + 1),
        stats: bench.stats,
        mismatch,
        build,
        seconds,
        model_seconds: bench.model_seconds,
        cycles,
        vcd,
        max_response_cycles: max_response,
    })
}

/// Re-run the same programs on a trace build up to request `last`, with a
/// VCD from `opts.vcd_window` requests before it.
fn mlu_vcd(top: &Top, verilog: &str, variant: &str, cfg: &ProgramConfig, opts: &RunOptions, last: u64, path: &Path) -> Result<()> {
    let build = build_mlu_harness(top, verilog, variant, true)?;
    let mut sim = MluSim::start(&build, opts.seed)?;
    let mut bench = MluBench::new(cfg.clone(), opts.seed);
    let batch = (opts.batch as u64).min(opts.count.max(1));
    let start = last.saturating_sub(opts.vcd_window);
    let abs = std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf());
    let mut started = false;
    loop {
        let first = bench.issued;
        let b = bench.batch(batch);
        let mut cmds = Vec::with_capacity(b.cmds.len() + 1);
        let mut idx = first;
        let mut done = false;
        for c in b.cmds {
            let is_req = matches!(c, Cmd::Req(_));
            if is_req && !started && idx >= start {
                cmds.push(Cmd::Vcd(abs.to_string_lossy().to_string()));
                started = true;
            }
            cmds.push(c);
            if is_req {
                if idx == last {
                    done = true;
                    break;
                }
                idx += 1;
            }
        }
        sim.run(&cmds)?;
        if done || bench.issued > last + batch {
            break;
        }
    }
    sim.finish()?;
    if !abs.is_file() {
        return Err(anyhow!("the trace harness wrote no VCD at {}", abs.display()));
    }
    Ok(())
}

/// The outcome of replaying one scenario through the MLU Verilog.
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    pub name: String,
    pub requests: u64,
    pub mismatch: Option<MluMismatch>,
}

/// The memory timings each scenario is replayed under: a fixed latency
/// with an always-ready port, and random latency and ready.
pub fn scenario_timings() -> [Cmd; 2] {
    [Cmd::Timing { lmin: 2, lmax: 2, ready_pct: 100, seed: 1 }, Cmd::Timing { lmin: 1, lmax: 4, ready_pct: 70, seed: 7 }]
}

/// Replay `scenarios` (each must have the top's entry count and structure)
/// through the MLU harness of `top`, every request and the final counters
/// compared with the model; one harness process for all of them.
pub fn run_scenarios(top: &Top, scenarios: &[sim::scenario::Scenario]) -> Result<Vec<ScenarioRun>> {
    let build = build_mlu_harness(top, &top.verilog, "", false)?;
    let mut sim = MluSim::start(&build, 1)?;
    let mut out = vec![];
    for sc in scenarios {
        let cfg = ProgramConfig { replacement: sc.config.replacement, ..ProgramConfig::new(sc.config.entries, sc.config.structure, sc.config.mode) };
        for timing in scenario_timings() {
            let mut bench = MluBench::new(cfg.clone(), sc.seed);
            let b = bench.replay(sc, timing).map_err(|e| anyhow!(e))?;
            let answers = sim.run(&b.cmds)?;
            let mismatch = check_mlu_batch(&b, &answers, 0);
            let stop = mismatch.is_some();
            out.push(ScenarioRun { name: sc.name.clone(), requests: b.requests, mismatch });
            if stop {
                break;
            }
        }
    }
    sim.finish()?;
    Ok(out)
}

/// The committed MLB top `mlb<entries>_<plru|rr>` (generated if absent).
pub fn mlb_top(entries: usize, replacement: Replacement) -> Result<Top> {
    let name = format!("mlb{entries}_{}", hw::generate::replacement_short(replacement));
    Top::committed_or_generated(&name, || Ok(hw::generate::TopSpec::new(hw::generate::TopKind::Mlb { entries, replacement, hit_latency: 1 })))
}

/// The committed MLU top `mlu<entries>_<list|bst>` (tree PLRU, compiler
/// mode at reset); generated from `hw::mlu` if it is not under verilog_out/.
pub fn mlu_top(entries: usize, structure: sim::config::Structure) -> Result<Top> {
    mlu_top_for(&sim::config::MluConfig { entries, structure, ..Default::default() })
}

/// The MLU top for a hardware configuration: the committed
/// `verilog_out/mlu<N>_<structure>.v` when the configuration is a committed
/// one (tree PLRU, compiler mode and step limit 4096 at reset; the mode and
/// step limit are CSRs the runs write anyway), else generated now as
/// `mlu<N>_<structure>[_rr]`.
pub fn mlu_top_for(cfg: &sim::config::MluConfig) -> Result<Top> {
    use hw::mlu::{Mlu, MluParams};
    cfg.validate(sim::config::Target::Hardware).map_err(|e| anyhow!("{e}"))?;
    let rr = if cfg.replacement == Replacement::RoundRobin { "_rr" } else { "" };
    let name = format!("mlu{}_{}{rr}", cfg.entries, cfg.structure.name());
    if let Some(dir) = crate::verilator::verilog_out_dir().filter(|d| d.join(format!("{name}.v")).is_file()) {
        return Top::load(&dir, &name);
    }
    let params = MluParams::from_config(cfg)?;
    let pj = std::collections::BTreeMap::from([
        ("entries".to_string(), serde_json::json!(cfg.entries)),
        ("structure".to_string(), serde_json::json!(cfg.structure.name())),
        ("replacement".to_string(), serde_json::json!(cfg.replacement.name())),
    ]);
    macro_rules! mlu {
        ($n:literal, $iw:literal) => {
            hw::generate::emit(&name, concat!("hw::mlu::Mlu<", $n, ", ", $iw, ">"), &mut Mlu::<$n, $iw>::new(params), pj, &hw::interface::mlu())
        };
    }
    let g = match cfg.entries {
        1 => mlu!(1, 1),
        2 => mlu!(2, 1),
        4 => mlu!(4, 2),
        8 => mlu!(8, 3),
        16 => mlu!(16, 4),
        32 => mlu!(32, 5),
        n => return Err(anyhow!("an MLU of {n} entries cannot be built (allowed: 1, 2, 4, 8, 16, 32)")),
    }?;
    Ok(g.into())
}

/// An MLB run through Icarus Verilog (`count` cycles, one batch).
pub fn run_mlb_iverilog(top: &Top, entries: usize, replacement: Replacement, opts: &RunOptions) -> Result<MlbRun> {
    let t_build = Instant::now();
    let sim = crate::harness::iverilog::IverilogSim::build(top, &top.verilog)?;
    let build = Built { exe: sim.dir.join("tb.vvp"), dir: sim.dir.clone(), compiled: false, seconds: t_build.elapsed().as_secs_f64() };
    let ports = MlbPorts::new(&sim.layout, entries)?;
    let (ib, ob) = (sim.layout.in_bytes, sim.layout.out_bytes);
    let t0 = Instant::now();
    let mut bench = MlbBench::new(entries, replacement, opts.seed);
    let b = mlb_batch(&mut bench, &ports, ib, opts.count as usize);
    let model_seconds = t0.elapsed().as_secs_f64();
    let (out, xmask) = sim.run(&b.records)?;
    let mut mismatch = None;
    let mut prev_stim = None;
    for (i, (s, e)) in b.stims.iter().zip(&b.expects).enumerate() {
        let rec = &out[i * ob..(i + 1) * ob];
        let o = MlbOut::decode(&ports, rec);
        let mut diff = compare(e, &o);
        if diff.is_none() && e.check {
            // A compared output with unknown bits is a mismatch too.
            let xm = MlbOut::decode(&ports, &xmask[i * ob..(i + 1) * ob]);
            let mut unknown = vec![];
            let always = [("victim", xm.victim), ("fill_ok", xm.fill_ok as u64), ("repl_state", xm.repl_state), ("rs_hit", xm.rs_hit as u64), ("ls_hit", xm.ls_hit as u64), ("rs_multi", xm.rs_multi as u64), ("ls_multi", xm.ls_multi as u64)];
            unknown.extend(always.iter().filter(|(_, m)| *m != 0).map(|(n, _)| *n));
            if e.rs.hit.is_some() && (xm.rs_way | xm.rs_loc | xm.rs_base | xm.rs_size | xm.rs_tag) != 0 {
                unknown.push("rs data");
            }
            if e.ls.hit.is_some() && (xm.ls_way | xm.ls_base | xm.ls_size | xm.ls_tag) != 0 {
                unknown.push("ls data");
            }
            if let Some(n) = unknown.first() {
                diff = Some((n, "a known value".to_string(), "x/z bits".to_string()));
            }
        }
        if let Some((output, expected, got)) = diff {
            mismatch = Some(MlbMismatch { cycle: i as u64, output, expected, got, stim: *s, prev_stim, sample: o, expect: *e });
            break;
        }
        prev_stim = Some(*s);
    }
    Ok(MlbRun {
        top: top.name().to_string(),
        cycles: mismatch.as_ref().map_or(opts.count, |m| m.cycle + 1),
        stats: bench.stats,
        mismatch,
        build,
        seconds: t0.elapsed().as_secs_f64(),
        model_seconds,
        vcd: None,
    })
}

/// A recorded trace (`sim::expand::load` with `expand`) replayed through
/// the MLU Verilog: every request and the final counters compared with the
/// model, as [`run_mlu`] does for random programs.
pub fn run_trace(top: &Top, cfg: &ProgramConfig, trace: &Path, expand: &sim::expand::ExpandConfig, opts: &RunOptions) -> Result<MluRun> {
    use crate::harness::program::TraceReplay;
    let workload = sim::expand::load(trace, expand).map_err(|e| anyhow!("{e}"))?;
    let build = build_mlu_harness(top, &top.verilog, "", false)?;
    let t0 = Instant::now();
    let mut sim = MluSim::start(&build, opts.seed)?;
    let mut replay = TraceReplay::new(cfg.clone(), workload);
    let batch = opts.batch as u64;
    let mut cur = replay.batch(batch).map_err(|e| anyhow!(e))?;
    let mut mismatch = None;
    let mut cycles = 0;
    let mut max_response = 0;
    while let Some(b) = cur.take() {
        let issued_before = replay.issued() - b.requests;
        sim.send(&b.cmds)?;
        let nxt = replay.batch(batch).map_err(|e| anyhow!(e))?;
        let answers = sim.receive()?;
        for a in &answers {
            match a {
                Answer::State(h) => cycles = h.cycles,
                Answer::Resp(r) => max_response = max_response.max(r.cycles as u64),
            }
        }
        if let Some(m) = check_mlu_batch(&b, &answers, issued_before) {
            mismatch = Some(m);
            break;
        }
        cur = nxt;
    }
    sim.finish()?;
    Ok(MluRun {
        top: top.name().to_string(),
        config: cfg.clone(),
        requests: mismatch.as_ref().map_or(replay.issued(), |m| m.index + 1),
        stats: *replay.stats(),
        mismatch,
        build,
        seconds: t0.elapsed().as_secs_f64(),
        model_seconds: replay.model_seconds(),
        cycles,
        vcd: None,
        max_response_cycles: max_response,
    })
}
