//! The checked run's MLU timing ([`crate::mlu_model`], events) against the
//! MLU's golden cycle model (`sim::mlu_unit::MluUnit`), request by request.
//!
//! The sweep cannot tick the unit's cycle model through every cycle of
//! every design point, so the checked run times requests as events under
//! the unit's rules. This module measures how far the two part: one stream
//! of requests goes through both, and each request's latency (presented to
//! answered) is compared.
//!
//! - The heap: `allocations` blocks made by the golden runtime, whose
//!   memory holds the real list, tree or table; the unit walks that memory,
//!   and the event model is given the nodes the golden traverser visits for
//!   each block (so both walk the same nodes).
//! - The port: every node read takes `latency` cycles, always ready (the
//!   event model's metadata caches are turned off and its DRAM latency set
//!   to the same value).
//! - The stream: the compiler pass's requests on one SM: a LOADMETA (range
//!   lookup; `loadmeta_percent` of them) or a one-lane MEMCHECK.G (location
//!   lookup), presented in order,
//!   a random 0..=2g cycles apart; each picks a block of a window of
//!   `window` blocks that slides one block every `window * 4` requests, so
//!   the MLB both hits and misses.
use serde::{Deserialize, Serialize};
use sim::config::{Mode, MluConfig, Replacement, Structure};
use sim::fault::Op;
use sim::meta_port::{PortParams, PortSim};
use sim::mlu_unit::{MluUnit, UnitIn, UnitParams, UnitRequest, MISS_SLOTS};
use sim::node::Meta;
use sim::pointer::untag;
use sim::runtime::{Runtime, RuntimeConfig, SplitMix64};
use sim::traverser::walk;
use std::collections::VecDeque;

use crate::mlu_model::{CheckParams, MluModel};
use crate::sm_model::GpuParams;

/// One comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgreementParams {
    pub structure: Structure,
    pub entries: usize,
    pub walkers: usize,
    /// The unit's MLB search and lane-check stages (m, c).
    pub mlb_latency: usize,
    pub check_latency: usize,
    /// Cycles per node read.
    pub latency: u32,
    pub allocations: usize,
    pub requests: usize,
    /// Mean cycles between requests.
    pub mean_gap: u64,
    /// Blocks in use at once.
    pub window: usize,
    /// Percent of requests that are LOADMETAs (the rest MEMCHECK.G).
    pub loadmeta_percent: u64,
    pub seed: u64,
}

/// What the comparison measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    pub params: AgreementParams,
    /// Mean latency of a request, presented to answered, cycles.
    pub unit_mean_latency: f64,
    pub model_mean_latency: f64,
    /// |model - unit| latency per request: median, 90th percentile, worst.
    pub p50_abs_diff: f64,
    pub p90_abs_diff: f64,
    pub max_abs_diff: f64,
    /// Cycle of the last answer (the stream's makespan).
    pub unit_cycles: u64,
    pub model_cycles: f64,
    /// MLB searches that hit, and walks started.
    pub unit_hits: u64,
    pub model_hits: u64,
    pub unit_walks: u64,
    pub model_walks: u64,
}

/// One request of the stream: presented at `t`, for block `b`.
struct Req {
    t: u64,
    b: usize,
    by_range: bool,
}

/// Runs one stream through both models.
pub fn agreement(p: &AgreementParams) -> Result<Agreement, String> {
    if p.allocations == 0 || p.window == 0 || p.requests == 0 || p.latency == 0 {
        return Err(format!("agreement: allocations, window, requests and latency must be positive: {p:?}"));
    }
    let mlu = MluConfig { entries: p.entries, structure: p.structure, mode: Mode::Compiler, ..MluConfig::default() };
    let mut rt = Runtime::new(RuntimeConfig { mlu: mlu.clone(), seed: p.seed, ..RuntimeConfig::default() })
        .map_err(|e| e.to_string())?;
    let mut rng = SplitMix64(p.seed);
    let mut ptrs = Vec::with_capacity(p.allocations);
    for _ in 0..p.allocations {
        ptrs.push(rt.malloc(16 + rng.next_u64() % 4000, None).map_err(|e| format!("{e:?}"))?);
    }
    let mem = rt.meta_memory();
    // Each block: its node, its metadata, and the nodes a range walk visits.
    let mut blocks = Vec::with_capacity(ptrs.len());
    for &ptr in &ptrs {
        let location = rt.node_of(ptr).ok_or("agreement: a live allocation without a node")?;
        let a = rt.live_allocation_at(ptr).ok_or("agreement: a live allocation not found")?;
        let w = walk(&mem, rt.root(), p.structure, untag(ptr), mlu.step_limit);
        let mut nodes: Vec<u64> = w.reads.iter().map(|r| r & !31).collect();
        nodes.dedup();
        nodes.resize(w.steps as usize, location);
        blocks.push((location, Meta { base: a.base, size: a.size, tag: a.tag }, nodes));
    }
    let stream = stream(p, &mut rng);

    // The unit, cycle by cycle.
    let up = UnitParams {
        cfg: mlu.clone(),
        walkers: p.walkers,
        lanes: 1,
        mlb_latency: p.mlb_latency,
        check_latency: p.check_latency,
        ..UnitParams::default()
    };
    let mut unit = MluUnit::new(&up).map_err(|e| e.to_string())?;
    unit.set_root(rt.root());
    let mut port = PortSim::new(PortParams { min_latency: p.latency, max_latency: p.latency, ..PortParams::default() });
    let mut queue: VecDeque<UnitRequest> = stream
        .iter()
        .enumerate()
        .map(|(i, r)| UnitRequest {
            id: i as u32,
            op: if r.by_range { Op::LoadMeta } else { Op::MemcheckG },
            mask: 1,
            // A LOADMETA looks up the root pointer (the block's base), as the
            // compiler pass issues it; a MEMCHECK.G a word inside.
            ptrs: vec![ptrs[r.b] + if r.by_range { 0 } else { 4 * (i as u64 % 4) }],
            width: 4,
            loc: if r.by_range { 0 } else { blocks[r.b].0 },
            sbase: 0,
            ssize: 0,
        })
        .collect();
    let mut answered = vec![None; stream.len()];
    let mut left = stream.len();
    let limit = stream.last().map_or(0, |r| r.t) + 1000 * (p.latency as u64 + 8) * stream.len() as u64;
    while left > 0 {
        let c = unit.cycle();
        if c > limit {
            return Err(format!("agreement: the unit did not answer every request by cycle {limit}"));
        }
        let out = unit.outputs();
        let (ready, resp) = port.cycle(&mem, out.mem_req.as_ref());
        let req = queue.front().filter(|r| stream[r.id as usize].t <= c);
        let o = unit.tick(UnitIn { req, mem_req_ready: ready, mem_resp: resp })?;
        if o.req_ready && req.is_some() {
            queue.pop_front();
        }
        if let Some(r) = o.resp {
            match answered.get_mut(r.id as usize) {
                Some(slot @ None) => *slot = Some(c),
                _ => return Err(format!("agreement: cycle {c}: response id {} not asked for, or answered twice", r.id)),
            }
            left -= 1;
        }
    }

    // The event model, the same stream in the same order.
    let cp = CheckParams {
        entries: p.entries,
        structure: p.structure,
        mode: Mode::Compiler,
        walkers: p.walkers,
        replacement: Replacement::Plru,
        meta_l1_sectors: 0,
        meta_l2_sectors: 0,
        blocks_per_cta: 1,
        miss_slots: MISS_SLOTS,
        ..CheckParams::default()
    }
    .with_unit_stages(p.mlb_latency, p.check_latency);
    let g = GpuParams { dram_latency: p.latency as f64, ..GpuParams::default() };
    let mut model = MluModel::new(cp, g, 1);
    model.load_blocks(blocks.iter().map(|(l, m, w)| (*l, *m, w.clone())).collect());
    let mut diffs = Vec::with_capacity(stream.len());
    let (mut unit_sum, mut model_sum, mut model_last) = (0.0, 0.0, 0.0f64);
    for (i, r) in stream.iter().enumerate() {
        let m = model.lookup(r.t as f64, r.b, r.by_range);
        let u = answered[i].unwrap_or(0) as f64;
        unit_sum += u - r.t as f64;
        model_sum += m - r.t as f64;
        model_last = model_last.max(m);
        diffs.push((m - u).abs());
    }
    diffs.sort_by(f64::total_cmp);
    let pct = |q: f64| diffs[((diffs.len() - 1) as f64 * q).round() as usize];
    let n = stream.len() as f64;
    let uc = unit.counters();
    Ok(Agreement {
        params: p.clone(),
        unit_mean_latency: unit_sum / n,
        model_mean_latency: model_sum / n,
        p50_abs_diff: pct(0.5),
        p90_abs_diff: pct(0.9),
        max_abs_diff: pct(1.0),
        unit_cycles: answered.iter().flatten().copied().max().unwrap_or(0),
        model_cycles: model_last,
        unit_hits: uc.hits,
        model_hits: model.counters.hits,
        unit_walks: uc.walks,
        model_walks: model.counters.walks,
    })
}

/// The request stream (see the module doc).
fn stream(p: &AgreementParams, rng: &mut SplitMix64) -> Vec<Req> {
    let mut t = 0u64;
    let slide = (p.window * 4).max(1);
    (0..p.requests)
        .map(|i| {
            t += rng.next_u64() % (2 * p.mean_gap + 1);
            let first = i / slide;
            let b = (first + (rng.next_u64() % p.window as u64) as usize) % p.allocations;
            Req { t, b, by_range: rng.next_u64() % 100 < p.loadmeta_percent }
        })
        .collect()
}

/// One configuration summed over several streams (seeds 1..=`seeds`): one
/// stream's mean latency moves by 10-15% with a few long queues, the sums
/// do not. Each pair is (unit, model).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub structure: Structure,
    pub walkers: usize,
    pub latency: u32,
    pub mean_gap: u64,
    /// Mean request latency over all streams, cycles.
    pub mean_latency: (f64, f64),
    /// Summed makespans, MLB hits and walks.
    pub cycles: (f64, f64),
    pub hits: (f64, f64),
    pub walks: (f64, f64),
}

impl Summary {
    /// Whether the unit keeps up (mean latency under 10 reads' time).
    pub fn saturated(&self) -> bool {
        self.mean_latency.0 > 10.0 * self.latency as f64
    }
}

/// Runs `seeds` streams of 20,000 requests over 64 allocations (window of
/// 10, a fifth LOADMETAs, 8 MLB entries, the synthesized unit's m = c = 2).
pub fn summary(structure: Structure, walkers: usize, latency: u32, mean_gap: u64, seeds: u64) -> Result<Summary, String> {
    let mut s = Summary {
        structure,
        walkers,
        latency,
        mean_gap,
        mean_latency: (0.0, 0.0),
        cycles: (0.0, 0.0),
        hits: (0.0, 0.0),
        walks: (0.0, 0.0),
    };
    for seed in 1..=seeds {
        let a = agreement(&AgreementParams {
            structure,
            entries: 8,
            walkers,
            mlb_latency: 2,
            check_latency: 2,
            latency,
            allocations: 64,
            requests: 20_000,
            mean_gap,
            window: 10,
            loadmeta_percent: 20,
            seed,
        })?;
        let n = seeds as f64;
        s.mean_latency = (s.mean_latency.0 + a.unit_mean_latency / n, s.mean_latency.1 + a.model_mean_latency / n);
        s.cycles = (s.cycles.0 + a.unit_cycles as f64, s.cycles.1 + a.model_cycles);
        s.hits = (s.hits.0 + a.unit_hits as f64, s.hits.1 + a.model_hits as f64);
        s.walks = (s.walks.0 + a.unit_walks as f64, s.walks.1 + a.model_walks as f64);
    }
    Ok(s)
}

/// The configurations the report and the tests compare: (structure,
/// walkers, cycles per read, mean cycles between requests). The first four
/// the unit keeps up with; the last four saturate its walkers or miss
/// slots.
pub const CASES: [(Structure, usize, u32, u64); 8] = [
    (Structure::Bst, 1, 30, 40),
    (Structure::Bst, 4, 30, 10),
    (Structure::Bst, 4, 200, 20),
    (Structure::Bst, 4, 400, 40),
    (Structure::Bst, 8, 400, 20),
    (Structure::Bst, 4, 400, 2),
    (Structure::List, 1, 30, 40),
    (Structure::List, 4, 200, 20),
];
