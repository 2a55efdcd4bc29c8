//! How much the cycle model's ideal MLU timing (`MluTiming::Ideal`: a
//! blocking MLU, 1-cycle hit, L per 8-byte metadata read, what `mlugen
//! sweep` uses) differs from the MLU as an SM unit (`MluTiming::Unit`:
//! pipelined, 4 walkers, misses merged, one 32-byte node per read; the
//! timing the RTL SM pipeline matches cycle for cycle,
//! testbench/tests/sm_pipeline.rs) on the four whole traces, at the sweep's
//! defaults (32 warps, 400-cycle data, 64 in flight), compiler mode, list
//! and bst, 1 and 8 MLB entries.
//!
//! `cargo run --release -p testbench --example mlu_timing_gap -- [META_LATENCY]`
//! (default 400; eval/README.md also quotes 30).
use sim::config::{Mode, MluConfig, Structure};
use sim::expand::{self, ExpandConfig};
use sim::pipeline::{run_workload_with, MluTiming, PipelineConfig, WorkloadRun};
use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let meta: u64 = match std::env::args().nth(1) {
        Some(s) => s.parse().map_err(|_| anyhow::anyhow!("META_LATENCY: not a number: {s:?}"))?,
        None => 400,
    };
    let p = PipelineConfig { meta_latency: meta, ..PipelineConfig::default() };
    p.validate().map_err(anyhow::Error::msg)?;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../traces");
    println!("meta latency {meta}: overhead = slowdown - 1 vs the unchecked run; hit rate over MLB lookups");
    println!("| trace | structure | entries | overhead ideal | overhead unit | cycles unit/ideal | hit rate ideal | hit rate unit |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let hr = |w: &WorkloadRun| match &w.unit {
        Some(u) => 100.0 * u.hits as f64 / u.lookups.max(1) as f64,
        None => {
            let c = &w.counters;
            100.0 * (c.range_hits + c.loc_hits) as f64 / (c.range_lookups + c.loc_lookups).max(1) as f64
        }
    };
    for t in ["resnet50_infer", "bert_infer", "resnet50_train", "gpt2_train"] {
        let wl = expand::load(dir.join(format!("{t}.jsonl.gz")), &ExpandConfig::new(32))?;
        let base = run_workload_with(&wl, &p, MluTiming::Ideal, None, 1)?.cycles as f64;
        for st in [Structure::List, Structure::Bst] {
            for e in [1usize, 8] {
                let mlu = MluConfig { entries: e, structure: st, mode: Mode::Compiler, ..MluConfig::default() };
                let i = run_workload_with(&wl, &p, MluTiming::Ideal, Some(&mlu), 1)?;
                let r = run_workload_with(&wl, &p, MluTiming::Unit, Some(&mlu), 1)?;
                println!(
                    "| {t} | {} | {e} | {:.1}% | {:.1}% | {:.3} | {:.2}% | {:.2}% |",
                    st.name(),
                    (i.cycles as f64 / base - 1.0) * 100.0,
                    (r.cycles as f64 / base - 1.0) * 100.0,
                    r.cycles as f64 / i.cycles as f64,
                    hr(&i),
                    hr(&r)
                );
            }
        }
    }
    Ok(())
}
