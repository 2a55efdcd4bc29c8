//! Cosimulation runs of the emitted Verilog against the golden model, as the
//! `mlugen cosim` command and the cosim tests use them.
//!
//! - [`run_mlb`]: random cycles through the MLB's cycle harness, compared
//!   every cycle with [`sim::mlb::Mlb::cycle`] ([`crate::harness::mlb`]);
//!   [`run_mlb_iverilog`]: the same under Icarus Verilog.
//!
//! The MLU as an SM unit has its own driver, [`crate::unit_driver`].
//!
//! Each run is batched and pipelined: while the harness simulates batch k,
//! Rust draws batch k+1 and steps the model through it. A run stops at the
//! first mismatch; with a VCD path it then re-runs the same (deterministic)
//! stimulus on a `--trace` build and writes a VCD of the last cycles up to
//! and including the mismatch.
use crate::harness::mlb::{compare, MlbBench, MlbExpect, MlbMismatch, MlbOut, MlbPorts, MlbStats, MlbStim};
use crate::harness::{build_cycle_harness, CycleSim};
use crate::unit_driver::UnitCosim;
use crate::unit_stimulus::Stream;
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

/// The committed MLB top `mlb<entries>_<plru|rr>` (generated if absent).
pub fn mlb_top(entries: usize, replacement: Replacement) -> Result<Top> {
    let spec = hw::generate::TopSpec::new(hw::generate::TopKind::Mlb { entries, replacement, hit_latency: 1 });
    Top::committed_or_generated(&spec.name(), || Ok(spec.clone()))
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

/// Which block a `mlugen cosim` seed drives.
#[derive(Clone, Debug)]
pub enum Target {
    /// The MLB block, `entries` and `replacement`, random cycles.
    Mlb { entries: usize, replacement: Replacement },
    /// The MLU as an SM unit, random requests of the hot stream.
    Unit(sim::mlu_unit::UnitParams),
}

impl Target {
    /// What one transaction is.
    pub fn unit(&self) -> &'static str {
        match self {
            Target::Mlb { .. } => "cycles",
            Target::Unit(_) => "requests",
        }
    }
}

/// One seed's cosimulation, as `mlugen cosim` prints and reports it.
pub struct SeedOutcome {
    /// Cycles (MLB) or requests (unit) compared.
    pub compared: u64,
    /// `cycles compared: ..` / `requests compared: ..`.
    pub line: String,
    pub throughput: Vec<String>,
    pub coverage: String,
    /// The stimulus coverage as JSON (the per-seed report's `counts`).
    pub counts: serde_json::Value,
    /// The mismatch report and where it happened (`cycle 12`).
    pub mismatch: Option<(String, String)>,
    pub vcd: Option<PathBuf>,
    pub build: Built,
}

/// Run `opts.count` random transactions of seed `opts.seed` on `verilog`
/// (the text of `top`, or a user's copy: `variant` keeps its build apart)
/// against the golden model.
pub fn run_seed(target: &Target, top: &Top, verilog: &str, variant: &str, opts: &RunOptions) -> Result<SeedOutcome> {
    match target {
        Target::Mlb { entries, replacement } => {
            let r = run_mlb(top, verilog, variant, *entries, *replacement, opts)?;
            Ok(SeedOutcome {
                compared: r.cycles,
                line: format!("cycles compared: {}, mismatches: {}", r.cycles, r.mismatch.is_some() as u8),
                throughput: vec![format!(
                    "Verilator cosimulation {:.0} cycles/s (wall, model overlapped); golden model alone {:.0} cycles/s",
                    r.cycles_per_second(),
                    r.model_cycles_per_second()
                )],
                coverage: r.stats.to_string(),
                counts: serde_json::to_value(r.stats)?,
                mismatch: r.mismatch.as_ref().map(|m| (m.to_string(), format!("cycle {}", m.cycle))),
                vcd: r.vcd,
                build: r.build,
            })
        }
        Target::Unit(p) => {
            let mut cs = UnitCosim::start(top, verilog, variant, p.lanes, opts.seed)?;
            opts.report(Progress::Built { compiled: cs.built.compiled, seconds: cs.built.seconds });
            cs.progress = opts.progress.clone();
            let t = Instant::now();
            let r = cs.run_random(p, Stream::Hot, opts.seed, opts.count)?;
            let seconds = t.elapsed().as_secs_f64();
            let build = cs.built.clone();
            cs.finish()?;
            let c = r.counters;
            Ok(SeedOutcome {
                compared: r.requests,
                line: match &r.mismatch {
                    None => format!("requests compared: {} ({} clock cycles), mismatches: 0", r.requests, r.cycles),
                    Some(_) => format!("requests compared: {}, mismatches: 1", r.requests),
                },
                throughput: vec![format!("Verilator cosimulation {:.0} requests/s (wall, golden twin run ahead in the same thread)", r.requests as f64 / seconds.max(1e-9))],
                coverage: format!(
                    "{} requests, {} MLB lookups ({} hits, {} misses, {} merged), {} walks, {} nodes, {} reads, {} faults, {} fills ({} cancelled, {} already present), {} stall cycles",
                    c.requests, c.lookups, c.hits, c.misses, c.merged, c.walks, c.nodes, c.reads, c.faults, c.fills, c.fills_cancelled, c.fills_present, c.stalls
                ),
                counts: serde_json::json!({
                    "requests": c.requests, "lookups": c.lookups, "hits": c.hits, "misses": c.misses, "merged": c.merged,
                    "walks": c.walks, "nodes": c.nodes, "reads": c.reads, "faults": c.faults, "fills": c.fills,
                    "fills_cancelled": c.fills_cancelled, "fills_present": c.fills_present, "stalls": c.stalls,
                }),
                mismatch: r.mismatch.as_ref().map(|m| (m.to_string(), format!("cycle {}", m.cycle))),
                vcd: None,
                build,
            })
        }
    }
}
