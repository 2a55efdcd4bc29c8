//! `mlugen wave --out loadmeta_miss.vcd [--entries 8] [--structure bst]
//! [--latency 3] [--allocations 6]`: a VCD waveform of the RTL MLU (rust-hdl
//! simulation of hw::mlu::Mlu, every signal of the design) running one
//! LOADMETA that misses the MLB, the traverser's walk over the metadata
//! memory, the MLB fill and the response; then the same LOADMETA again (now
//! an MLB hit) and a MEMCHECK.G that hits by location. The metadata memory is
//! the golden model runtime's image after `--allocations` mallocs, answering
//! every read after `--latency` cycles. Prints a JSON summary (cycles of
//! each operation, the location found, the words read) on stdout.
use anyhow::{bail, Context, Result};
use hw::mlu::{Mlu, MluParams, CSR_ROOT};
use sim::config::{MluConfig, Structure, Target};
use sim::fault::Op;
use sim::runtime::{Runtime, RuntimeConfig};
use std::io::BufWriter;
use std::path::PathBuf;
use testbench::memport::{Latency, MemPort};
use testbench::mlu_driver::{MluDriver, Request, Response};

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

/// The most walk cycles `wave` simulates: a VCD of about 40 MB, 20 s (the
/// bound itself was measured at 200,000 cycles: 167 MB, 65 s).
const MAX_WALK_CYCLES: u64 = 50_000;

fn json_resp(r: &Response) -> serde_json::Value {
    serde_json::json!({
        "cycles": r.cycles,
        "fault": sim::fault::FaultCode::from_bits(r.fault).map(|f| f.name()).unwrap_or("?"),
        "location": format!("{:#x}", r.loc),
        "reads": r.reads.iter().map(|a| format!("{a:#x}")).collect::<Vec<_>>(),
    })
}

fn run_sized<const N: usize, const IW: usize>(args: &Args, cfg: &MluConfig) -> Result<serde_json::Value> {
    let mut rt = Runtime::new(RuntimeConfig { mlu: cfg.clone(), ..RuntimeConfig::default() })
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for i in 0..args.allocations {
        rt.malloc(256 + 64 * i as u64, None).map_err(|e| anyhow::anyhow!("malloc: {e:?}"))?;
    }
    let target = rt.allocations()[0].ptr;
    let file = std::fs::File::create(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    let params = MluParams::from_config(cfg)?;
    let mut drv = MluDriver::new(Mlu::<N, IW>::new(params), Some(Box::new(BufWriter::new(file))));
    drv.csr_write(CSR_ROOT, rt.root());
    drv.idle(2);
    let img = rt.memory().clone();
    let mut port = MemPort::new(&img, Latency::Fixed(args.latency), 1);
    let lm = |p| Request { op: Op::LoadMeta.bits(), ptr: p, width: 0, loc: 0, sbase: 0, ssize: 0 };
    let miss = drv.transact(&mut port, lm(target));
    drv.idle(2);
    let hit = drv.transact(&mut port, lm(target));
    drv.idle(2);
    let g = drv.transact(
        &mut port,
        Request { op: Op::MemcheckG.bits(), ptr: target, width: 4, loc: miss.loc, sbase: 0, ssize: 0 },
    );
    drv.idle(3);
    drv.finish()?;
    // The model must agree, or the waveform shows a bug.
    let want = rt.loadmeta(target).map_err(|f| anyhow::anyhow!("model LOADMETA faulted: {f:?}"))?;
    if miss.loc != want || hit.loc != want || miss.fault != 0 || g.fault != 0 {
        bail!("RTL disagrees with the model: LOADMETA gave {:#x}, model {want:#x}", miss.loc);
    }
    Ok(serde_json::json!({
        "vcd": args.out.display().to_string(),
        "top": format!("mlu{}_{}", N, cfg.structure.name()),
        "memory_latency": args.latency,
        "cycles_total": drv.cycle,
        "loadmeta_miss": json_resp(&miss),
        "loadmeta_hit": json_resp(&hit),
        "memcheck_g_hit": json_resp(&g),
    }))
}

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
    // The VCD holds every signal of every cycle (about 850 bytes a cycle):
    // bound the walk's cycles, about 3 reads of latency + 1 cycles per node
    // visited (all nodes of a list; the depth of the balanced tree).
    let depth = match structure {
        Structure::List => args.allocations as u64,
        _ => (usize::BITS - args.allocations.leading_zeros()) as u64,
    };
    let walk_cycles = 3 * depth * (args.latency as u64 + 1);
    if walk_cycles > MAX_WALK_CYCLES {
        bail!(
            "--allocations {} --latency {} ({}): the walk would take about {walk_cycles} cycles; at most {MAX_WALK_CYCLES} are written to a VCD (fewer allocations, a lower latency, or --structure bst)",
            args.allocations,
            args.latency,
            structure.name()
        );
    }
    let cfg = MluConfig { entries: args.entries, structure, ..MluConfig::default() };
    cfg.validate(Target::Hardware).map_err(|e| anyhow::anyhow!("--entries {}: {e}", args.entries))?;
    let summary = match args.entries {
        1 => run_sized::<1, 1>(&args, &cfg)?,
        2 => run_sized::<2, 1>(&args, &cfg)?,
        4 => run_sized::<4, 2>(&args, &cfg)?,
        8 => run_sized::<8, 3>(&args, &cfg)?,
        16 => run_sized::<16, 4>(&args, &cfg)?,
        32 => run_sized::<32, 5>(&args, &cfg)?,
        n => bail!("--entries {n}: allowed: 1, 2, 4, 8, 16, 32"),
    };
    use std::io::Write;
    writeln!(super::out::stdout(), "{}", serde_json::to_string_pretty(&summary)?)?;
    Ok(())
}
