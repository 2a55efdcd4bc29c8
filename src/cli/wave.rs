//! `mlugen wave --out loadmeta_miss.vcd [--entries 8] [--structure bst]
//! [--latency 3] [--allocations 6]`: a VCD waveform of the MLU as an SM unit
//! (a Verilator trace build of its Verilog, every signal of the design from
//! reset on) running one LOADMETA that misses the MLB, the walker's reads of
//! the metadata port, the MLB fill and the response; then the same LOADMETA
//! again (now an MLB hit) and a MEMCHECK.G that hits by location. The top is
//! verif::unit_program::unit_top's (the committed unit for 8 or 16
//! entries and a bst, else a one-lane unit generated now); the metadata
//! memory is the golden runtime's after `--allocations` mallocs, answering
//! every read after `--latency` cycles. Every output is compared with the
//! golden twin every cycle, so the waveform shows the model's behaviour.
//! Prints a JSON summary (each request's latency: cycles from the cycle it
//! is taken to the cycle of its response; its fault and location; the
//! nodes read) on stdout.
use anyhow::{bail, Context, Result};
use sim::config::{MluConfig, Structure};
use sim::fault::{FaultCode, Op};
use sim::meta_port::PortParams;
use sim::runtime::{Runtime, RuntimeConfig};
use std::path::PathBuf;
use verif::unit_driver::{Csr, Phase, UnitCosim, UnitRun};
use verif::unit_program::Requests;

#[derive(clap::Args)]
pub struct Args {
    /// Output VCD file.
    #[arg(long)]
    pub out: PathBuf,
    /// MLB entries: 1, 2, 4, 8, 16 or 32.
    #[arg(long, default_value_t = 8)]
    pub entries: usize,
    /// Metadata structure: list or bst.
    #[arg(long, default_value = "bst")]
    pub structure: String,
    /// Metadata memory latency in cycles (1..=1000).
    #[arg(long, default_value_t = 3)]
    pub latency: u32,
    /// Allocations made before the LOADMETA (1..=1000); the lookup targets
    /// the first one, so a list walk visits all of them.
    #[arg(long, default_value_t = 6)]
    pub allocations: usize,
}

/// The most walk cycles `wave` simulates (the VCD holds every signal of
/// every cycle).
const MAX_WALK_CYCLES: u64 = 50_000;

pub fn run(args: Args) -> Result<()> {
    let structure = match Structure::from_name(&args.structure) {
        Some(s @ (Structure::List | Structure::Bst)) => s,
        _ => bail!("--structure {}: allowed: list, bst", args.structure),
    };
    if !(1..=1000).contains(&args.latency) {
        bail!("--latency {}: must be 1..=1000 cycles", args.latency);
    }
    if !(1..=1000).contains(&args.allocations) {
        bail!("--allocations {}: must be 1..=1000", args.allocations);
    }
    // A walk reads one node per step, each the port's latency plus two
    // cycles (all nodes of a list; the depth of the balanced tree).
    let depth = match structure {
        Structure::List => args.allocations as u64,
        _ => (usize::BITS - args.allocations.leading_zeros()) as u64,
    };
    let walk_cycles = depth * (args.latency as u64 + 2);
    if walk_cycles > MAX_WALK_CYCLES {
        bail!(
            "--allocations {} --latency {} ({}): the walk would take about {walk_cycles} cycles; at most {MAX_WALK_CYCLES} are written to a VCD (fewer allocations, a lower latency, or --structure bst)",
            args.allocations,
            args.latency,
            structure.name()
        );
    }
    let cfg = MluConfig { entries: args.entries, structure, ..MluConfig::default() };
    cfg.validate(sim::config::Target::Hardware).map_err(|e| anyhow::anyhow!("--entries {}: {e}", args.entries))?;
    // Fail on an unwritable path before building anything.
    std::fs::File::create(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    let mut rt = Runtime::new(RuntimeConfig { mlu: cfg.clone(), ..RuntimeConfig::default() }).map_err(|e| anyhow::anyhow!("{e}"))?;
    for i in 0..args.allocations {
        rt.malloc(256 + 64 * i as u64, None).map_err(|e| anyhow::anyhow!("malloc: {e:?}"))?;
    }
    let target = rt.allocations()[0].ptr;
    let (top, params) = verif::unit_program::unit_top(&cfg)?;
    let mut cs = UnitCosim::start_with_vcd(&top, params.lanes, 1, &args.out)?;
    let port = PortParams { min_latency: args.latency, max_latency: args.latency, ready_percent: 100, errors_per_million: 0, shuffle: false, seed: 1 };
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
    let want = rt.loadmeta(target).map_err(|f| anyhow::anyhow!("model LOADMETA faulted: {f:?}"))?;
    let json_resp = |k: usize| {
        let a = run.answers[k];
        serde_json::json!({
            "cycles": run.answered_at[k].1 - run.taken_at[k],
            "fault": FaultCode::from_bits(a.fault).map(|f| f.name()).unwrap_or("?"),
            "location": format!("{:#x}", a.loc),
        })
    };
    if run.answers.len() != 3 || run.answers[0].loc != want || run.answers.iter().any(|a| a.fault != 0) {
        bail!("the unit's answers {:?} are not a LOADMETA of {want:#x} twice and a passing MEMCHECK.G", run.answers);
    }
    let summary = serde_json::json!({
        "vcd": args.out.display().to_string(),
        "top": top.name(),
        "memory_latency": args.latency,
        "cycles_total": run.cycles,
        "nodes_read": run.counters.reads,
        "loadmeta_miss": json_resp(0),
        "loadmeta_hit": json_resp(1),
        "memcheck_g_hit": json_resp(2),
    });
    use std::io::Write;
    writeln!(super::out::stdout(), "{}", serde_json::to_string_pretty(&summary)?)?;
    Ok(())
}
