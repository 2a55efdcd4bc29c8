//! Closed-loop workloads of the MLU and the canary allocator unit, recorded
//! on their Verilog ([`Recorder`]) with the memory each one talks to, as
//! gate-level stimuli for `mlugen synth`'s energy runs (the outputs recorded
//! too, so the replay is checked cycle by cycle against the RTL).
//!
//! Every workload starts from reset (warm-up, not measured) and measures a
//! window of whole operations issued back to back: from the cycle the first
//! measured operation is taken to the cycle the operation after the last one
//! is taken (so each operation's share is one issue period), growing until
//! it is at least `min_cycles` long. Each response is checked against the
//! golden model while recording (an RTL that does not do the operation is an
//! error, not a figure).
//!
//! MLU as an SM unit: [`unit_workloads`].
//!
//! Canary unit (heap memory: [`HeapMem`], latency 1; check mode of the
//! committed top, always; requester 0):
//! - `malloc`: malloc(40) back to back (class 64, canaries written);
//! - `free`: free of the chunks the warm-up allocated (both canaries read
//!   and checked, bit cleared, live-list removal);
//! - `check`: background checks back to back (rate 255/256), 16 live chunks;
//! - `idle`: no request, checker rate 0, 16 live chunks.
//!
//! The checker rate is 0 in the malloc, free and idle windows so no
//! background check falls in them; the check window has no requests.
use crate::canary_driver::{Check, Event, HeapMem, ModelReplay, Resp};
use sim::runtime::SplitMix64;
use crate::recorder::Recorder;
use crate::verilator::Top;
use anyhow::{anyhow, bail, ensure, Context, Result};
use hw::canary::alloc_unit::{CanaryParams, REQUESTERS, RES_OK};
use sim::canary::siphash::CanaryKey;
use sim::fault::Op;
use sim::runtime::{Runtime, RuntimeConfig};
use sim::meta_port::PortParams;
use sim::mlu_unit::{UnitParams, UnitRequest};
use synth::activity::Stimulus;

/// Memory latency (cycles) of every recorded workload.
pub const MEMORY_LATENCY: u32 = 1;

/// A named recorded workload, as `synth::sweep::run_with` takes them.
pub type Workload = (String, Stimulus);

// ----------------------------------------------------------- MLU unit --

/// The recorded workloads of an MLU unit top (hw::mlu_unit, built for `p`),
/// each window at least `min_cycles` long, over a heap of N + `min_cycles` +
/// 64 allocations of 256 to 4,096 bytes whose first N the warm-up loads into
/// the MLB (LOADMETA each); the metadata port answers every read after
/// [`MEMORY_LATENCY`] cycles, always ready, no errors:
/// - `loadmeta_hit`: LOADMETA of a random pointer into a loaded allocation,
///   one per cycle (range-search hits);
/// - `memcheck_hit`: warp-wide MEMCHECK.G, every lane active, 8 bytes per
///   lane, the lanes consecutive 8-byte words of one loaded allocation (as a
///   coalesced warp access), with its location: location-search hits, every
///   lane passes; one per cycle;
/// - `loadmeta_miss`: LOADMETA of allocations never looked up, back to back,
///   each an MLB miss that walks the structure (K walks in flight), fills
///   and answers; `nodes_per_op` is the nodes the walks visited in the
///   window per operation (the model's count);
/// - `idle`: no request, MLB full.
///
/// The stimuli are made by the model and checked against the RTL
/// (unit_driver::record_workload); each window's counters must show the
/// operation it names (hits only, misses only, no fault, no read when idle).
pub fn unit_workloads(top: &Top, p: &UnitParams, min_cycles: usize) -> Result<Vec<Workload>> {
    let n = p.cfg.entries;
    let allocations = n + min_cycles + 64;
    let mut rt = Runtime::new(RuntimeConfig { mlu: p.cfg.clone(), ..RuntimeConfig::default() }).map_err(|e| anyhow!("runtime: {e}"))?;
    let mut rng = SplitMix64(0x5eed_e1e7);
    for _ in 0..allocations {
        let size = 256 + 64 * rng.range(0, 60);
        rt.malloc(size, None).map_err(|e| anyhow!("runtime malloc: {e:?}"))?;
    }
    let allocs = rt.allocations().to_vec();
    let (warm, rest) = allocs.split_at(n);
    let port = PortParams { min_latency: MEMORY_LATENCY, max_latency: MEMORY_LATENCY, ready_percent: 100, errors_per_million: 0, shuffle: false, seed: 1 };
    let lanes = p.lanes;
    let mut id = 0u32;
    let mut req = |op: Op, mask: u32, ptrs: Vec<u64>, loc: u64| {
        id = (id + 1) & 0xFFFF;
        UnitRequest { id, op, mask, ptrs, width: 8, loc, sbase: 0, ssize: 0 }
    };
    let lane0 = |ptr: u64| (0..lanes).map(|k| if k == 0 { ptr } else { 0 }).collect::<Vec<u64>>();
    let all_lanes = if lanes == 32 { u32::MAX } else { (1u32 << lanes) - 1 };
    let warm_reqs: Vec<UnitRequest> = warm.iter().map(|a| req(Op::LoadMeta, 1, lane0(a.ptr), 0)).collect();
    // Enough operations for a window of `min_cycles` at one per cycle.
    let hits = min_cycles + 16;
    let mut out = Vec::new();
    for w in ["loadmeta_hit", "memcheck_hit", "loadmeta_miss", "idle"] {
        let (op, measured): (String, Option<Vec<UnitRequest>>) = match w {
            "loadmeta_hit" => (
                "LOADMETA, MLB range-search hit".into(),
                Some((0..hits).map(|_| {
                    let a = &warm[rng.range(0, n as u64 - 1) as usize];
                    req(Op::LoadMeta, 1, lane0(a.ptr + rng.range(0, a.size - 1)), 0)
                }).collect()),
            ),
            "memcheck_hit" => (
                format!("MEMCHECK.G, {lanes} lane(s) of 8 B in bounds, MLB location-search hit"),
                Some((0..hits).map(|_| {
                    let a = &warm[rng.range(0, n as u64 - 1) as usize];
                    let words = a.size / 8;
                    let first = rng.range(0, words - 1);
                    let ptrs = (0..lanes as u64).map(|k| a.ptr + 8 * ((first + k) % words)).collect();
                    req(Op::MemcheckG, all_lanes, ptrs, a.location)
                }).collect()),
            ),
            "loadmeta_miss" => (
                format!("LOADMETA, MLB miss: walk, fill, response ({} walkers)", p.walkers),
                Some(rest.iter().map(|a| req(Op::LoadMeta, 1, lane0(a.ptr + rng.range(0, a.size - 1)), 0)).collect()),
            ),
            _ => ("idle cycle (MLB full)".into(), None),
        };
        let r = crate::unit_driver::record_workload(top, p, &rt, port, warm_reqs.clone(), measured, min_cycles, &op).with_context(|| format!("workload {w}"))?;
        let (b, a) = (r.before, r.after);
        let d = |f: fn(&sim::mlu_unit::UnitCounters) -> u64| f(&a) - f(&b);
        let (lookups, hits_, misses, faults, nodes, reads) = (d(|c| c.lookups), d(|c| c.hits), d(|c| c.misses), d(|c| c.faults), d(|c| c.nodes), d(|c| c.reads));
        match w {
            "loadmeta_hit" | "memcheck_hit" => ensure!(lookups > 0 && hits_ == lookups && misses == 0 && faults == 0, "{w}: the window counts {lookups} lookups, {hits_} hits, {misses} misses, {faults} faults"),
            "loadmeta_miss" => ensure!(misses > 0 && hits_ == 0 && faults == 0 && nodes > 0, "{w}: the window counts {misses} misses, {hits_} hits, {faults} faults, {nodes} nodes"),
            _ => ensure!(reads == 0 && lookups == 0, "{w}: {reads} metadata reads and {lookups} lookups while idle"),
        }
        let mut st = r.stimulus;
        let ops = r.ops as f64;
        st.facts.push(("memory_latency".into(), MEMORY_LATENCY as f64));
        st.facts.push(("cycles_per_op".into(), 1.0 / st.ops_per_cycle));
        st.facts.push(("lanes".into(), lanes as f64));
        st.facts.push(("walkers".into(), p.walkers as f64));
        if w == "loadmeta_miss" {
            st.facts.push(("nodes_per_op".into(), nodes as f64 / ops));
            st.facts.push(("meta_reads_per_op".into(), reads as f64 / ops));
            st.facts.push(("allocations".into(), allocations as f64));
        }
        out.push((w.to_string(), st));
    }
    Ok(out)
}

// ------------------------------------------------------------- canary --

/// The secret key the canary workloads load (any key does).
pub const CANARY_KEY: CanaryKey = CanaryKey { k0: 0x243f_6a88_85a3_08d3, k1: 0x1319_8a2e_0370_7344 };

#[derive(Default)]
pub(crate) struct CanaryOut {
    pub grant: Option<usize>,
    pub resp: Option<Resp>,
    pub check: Option<Check>,
}

/// The canary unit on its recorder, with its heap memory and the model
/// every grant, response and check is applied to (an error on any
/// difference).
pub(crate) struct CanaryRec {
    pub r: Recorder,
    pub mem: HeapMem,
    pub model: ModelReplay,
}

impl CanaryRec {
    /// Start `top`'s recorder with its heap memory (latency
    /// [`MEMORY_LATENCY`]) and the model; one cycle of reset that also loads
    /// [`CANARY_KEY`]; checker rate 0.
    pub(crate) fn start(top: &Top, params: &CanaryParams) -> Result<CanaryRec> {
        let mut r = CanaryRec {
            r: Recorder::start(top, 1)?,
            mem: HeapMem::new(params.base, MEMORY_LATENCY as u64),
            model: ModelReplay::new(params, CANARY_KEY, 0).map_err(|e| anyhow!(e))?,
        };
        r.r.set("reset", 1)?;
        r.r.set("key_we", 1)?;
        r.r.set("key_k0", CANARY_KEY.k0 as u128)?;
        r.r.set("key_k1", CANARY_KEY.k1 as u128)?;
        r.r.set("rate", 0)?;
        r.step(&[None; REQUESTERS])?;
        r.r.set("reset", 0)?;
        r.r.set("key_we", 0)?;
        Ok(r)
    }

    pub(crate) fn step(&mut self, reqs: &[Option<(bool, u64)>; REQUESTERS]) -> Result<CanaryOut> {
        let c = self.r.cycles();
        for (i, q) in reqs.iter().enumerate() {
            self.r.set(&format!("req_valid_{i}"), q.is_some() as u128)?;
            if let Some((free, arg)) = q {
                self.r.set(&format!("req_free_{i}"), *free as u128)?;
                self.r.set(&format!("req_arg_{i}"), *arg as u128)?;
            }
        }
        let rd = self.mem.response(c as u64);
        self.r.set("mem_rvalid", rd.is_some() as u128)?;
        if let Some(d) = rd {
            self.r.set("mem_rdata", d as u128)?;
        }
        self.r.step()?;
        let g = |s: &Self, n: &str| s.r.get(n).map(|v| v as u64);
        let mut o = CanaryOut::default();
        for i in 0..REQUESTERS {
            if g(self, &format!("req_grant_{i}"))? != 0 {
                ensure!(o.grant.is_none(), "cycle {c}: two grants in one cycle");
                o.grant = Some(i);
            }
        }
        if g(self, "mem_valid")? != 0 {
            self.mem.request(c as u64, g(self, "mem_we")? != 0, g(self, "mem_addr")?, g(self, "mem_wdata")?).map_err(|e| anyhow!(e))?;
        }
        if g(self, "resp_valid")? != 0 {
            let r = Resp {
                id: g(self, "resp_id")? as usize,
                free: g(self, "resp_free")? != 0,
                code: g(self, "resp_code")?,
                ptr: g(self, "resp_ptr")?,
                size: g(self, "resp_size")?,
                front: g(self, "resp_front")? != 0,
                rear: g(self, "resp_rear")? != 0,
            };
            self.model.apply(&Event::Resp(r.clone())).map_err(|e| anyhow!("cycle {c}: {e}"))?;
            o.resp = Some(r);
        }
        if g(self, "chk_done")? != 0 {
            let k = Check { chunk: g(self, "chk_chunk")?, front: g(self, "chk_front")? != 0, rear: g(self, "chk_rear")? != 0 };
            self.model.apply(&Event::Check(k.clone())).map_err(|e| anyhow!("cycle {c}: {e}"))?;
            o.check = Some(k);
        }
        if let Some(i) = o.grant {
            let (free, arg) = reqs[i].ok_or_else(|| anyhow!("cycle {c}: grant to requester {i} without a request"))?;
            self.model.apply(&Event::Grant { id: i, free, arg }).map_err(|e| anyhow!("cycle {c}: {e}"))?;
        }
        Ok(o)
    }

    /// Requester 0 issues `ops` back to back: each presented until granted,
    /// the next from the cycle after the previous response. With
    /// `min_cycles`, stops at the grant that closes a window of at least
    /// that many cycles (not counted); returns the grant cycles and the
    /// responses of the ops granted before.
    pub(crate) fn run(&mut self, ops: &[(bool, u64)], min_cycles: Option<usize>) -> Result<(Vec<usize>, Vec<Resp>)> {
        let (mut grants, mut resps) = (Vec::new(), Vec::new());
        let mut k = 0;
        let mut waiting = false;
        let start = self.r.cycles();
        loop {
            let c = self.r.cycles();
            if !waiting && k == ops.len() {
                return Ok((grants, resps));
            }
            let mut reqs = [None; REQUESTERS];
            if !waiting {
                reqs[0] = Some(ops[k]);
            }
            let o = self.step(&reqs)?;
            if let Some(r) = o.resp {
                ensure!(r.code == RES_OK, "cycle {c}: {} answered with code {}", if r.free { "free" } else { "malloc" }, r.code);
                resps.push(r);
                waiting = false;
            }
            if o.grant.is_some() {
                grants.push(c);
                if min_cycles.is_some_and(|m| c - grants[0] >= m) {
                    return Ok((grants, resps));
                }
                waiting = true;
                k += 1;
            }
            ensure!(c - start < 1_000_000, "cycle {c}: the canary unit stopped answering");
        }
    }
}

/// The recorded canary-unit workloads (`malloc`, `free`, `check`, `idle`)
/// of `top` (generated with `params`), windows of at least `min_cycles`.
pub fn canary_workloads(top: &Top, params: &CanaryParams, min_cycles: usize) -> Result<Vec<Workload>> {
    let mut out = Vec::new();
    for w in ["malloc", "free", "check", "idle"] {
        let mut r = CanaryRec::start(top, params)?;
        // Frees take ~30 cycles: enough chunks for the window (the heap holds 64).
        let live = match w {
            "malloc" => 0,
            "free" => (min_cycles / 20 + 4).min(60),
            _ => 16,
        };
        let (_, resps) = r.run(&vec![(false, 40); live], None)?;
        for _ in 0..2 {
            r.step(&[None; REQUESTERS])?;
        }
        let (op, warmup, end, ops) = match w {
            "malloc" => {
                let (g, _) = r.run(&vec![(false, 40); 60], Some(min_cycles))?;
                ensure!(g.len() >= 2, "malloc: fewer than two grants (heap too small for the window?)");
                ("malloc(40): probe, claim, both canaries written, live-list insert", g[0], *g.last().unwrap(), g.len() - 1)
            }
            "free" => {
                let ops: Vec<(bool, u64)> = resps.iter().map(|x| (true, x.ptr)).collect();
                let (g, fr) = r.run(&ops, Some(min_cycles))?;
                ensure!(g.len() >= 2, "free: fewer than two grants");
                ensure!(fr.iter().all(|x| !x.front && !x.rear), "free: an overflow reported on an untouched chunk");
                ("free (check-on-free: both canaries read and checked), live-list removal", g[0], *g.last().unwrap(), g.len() - 1)
            }
            "check" => {
                r.r.set("rate", 255)?;
                let mut done = Vec::new();
                let start = r.r.cycles();
                while done.len() < 2 || done.last().unwrap() - done[0] < min_cycles {
                    let o = r.step(&[None; REQUESTERS])?;
                    if let Some(k) = o.check {
                        ensure!(!k.front && !k.rear, "check: an overflow reported on an untouched chunk {:#x}", k.chunk);
                        done.push(r.r.cycles() - 1);
                    }
                    ensure!(r.r.cycles() - start < 1_000_000, "the checker does not run");
                }
                ("background check of one live chunk (both canaries)", done[0] + 1, *done.last().unwrap() + 1, done.len() - 1)
            }
            _ => {
                let t0 = r.r.cycles();
                for _ in 0..min_cycles {
                    r.step(&[None; REQUESTERS])?;
                }
                ("idle cycle (16 live chunks, checker rate 0)", t0, t0 + min_cycles, min_cycles)
            }
        };
        let mut st = r.r.stimulus(end, warmup, 1, op, ops as f64)?;
        st.facts.push(("memory_latency".into(), MEMORY_LATENCY as f64));
        st.facts.push(("cycles_per_op".into(), (end - warmup) as f64 / ops as f64));
        st.facts.push(("live_chunks".into(), live as f64));
        r.r.finish()?;
        out.push((w.to_string(), st));
    }
    Ok(out)
}

/// The canary parameters the committed top was generated with, from its
/// manifest; an error names the parameter that is not this unit's.
pub fn canary_params(top: &Top) -> Result<CanaryParams> {
    let d = CanaryParams::default();
    let p = &top.manifest.parameters;
    let s = |k: &str| p.get(k).map(|v| v.to_string().trim_matches('"').to_string());
    let want = [
        ("base", format!("{:#x}", d.base)),
        ("check", "always".to_string()),
        ("slack", d.slack.to_string()),
        ("k_s", d.k_s.to_string()),
        ("k_mp", d.k_mp.to_string()),
    ];
    for (k, v) in want {
        if s(k).as_deref() != Some(v.as_str()) {
            bail!("{}: parameter {k} is {:?}; the energy workloads are built for the default unit ({k} = {v})", top.name(), s(k));
        }
    }
    Ok(d)
}

/// The closed-loop energy workloads of a generated MLU unit or canary top in
/// `verilog_out`, recorded on its Verilog (Verilator), windows of at least
/// `cycles` cycles (`synth::sweep::run_jobs` replays them per library).
pub fn record(verilog_out: &std::path::Path, kind: &sim::top::TopKind, cycles: usize) -> Result<Vec<Workload>> {
    let name = kind.name();
    let t = crate::verilator::Top::load(verilog_out, &name)?;
    match kind {
        sim::top::TopKind::MluUnit(p) => unit_workloads(&t, p, cycles),
        sim::top::TopKind::CanaryAlloc { .. } => canary_workloads(&t, &canary_params(&t)?, cycles),
        _ => anyhow::bail!("{name}: no closed-loop energy workloads (the MLB's are made by the flow)"),
    }
    .with_context(|| format!("recording the energy workloads of {name} on its RTL"))
}
