//! The calibrated SM model: times one kernel launch from its geometry and
//! its Nsight Compute counters.
//!
//! What is simulated, per launch:
//! - CTAs spread over the SMs round-robin; the kernel takes as long as its
//!   busiest SM, which runs `ceil(ctas / sms)` CTAs, at most
//!   [`Counters::ctas_per_sm`] (ncu's occupancy limit) resident at once, a
//!   finished CTA's slot refilled after [`GpuParams::cta_launch_cycles`].
//! - Each warp runs the launch's mean warp-instruction count, with the
//!   launch's mix (global loads and stores, TMA, shared, local) spread
//!   evenly through its stream (error diffusion, each warp at its own phase,
//!   so warps do not march in lockstep).
//! - 4 schedulers per SM, warps assigned by slot; each cycle a scheduler
//!   issues one instruction of its oldest ready warp: the lowest CTA
//!   sequence number, then warp index (the age order of greedy-then-oldest
//!   scheduling, Rogers et al., MICRO 2012, common in GPU simulators; the
//!   greedy part does not arise, as a warp never issues in consecutive
//!   cycles at an issue interval above 1). With age priority a
//!   warp's progress depends only on older warps, so a check that delays
//!   one warp cannot speed the launch up by reordering the others (a
//!   least-recently-issued order did: delays staggered the CTAs and let
//!   the next CTAs start earlier). A warp's consecutive instructions are
//!   [`GpuParams::issue_interval`] cycles apart (its dependence chains).
//! - Loads are scoreboarded: the warp stalls only at the first use,
//!   [`GpuParams::use_distance`] instructions after the load.
//! - A load's latency is the launch's expected one: L1, L2 and DRAM
//!   latencies weighted by its measured sector hit rates (a fluid: a
//!   sequence of hits and misses made the sampled time depend on where a
//!   sample ended, and queues shared by the warps let a delayed warp make
//!   the others faster).
//! - Bandwidth as floors ([`bandwidth_floor`]): the launch takes at least its
//!   L2 traffic over the L2 bandwidth and its DRAM traffic (at least its
//!   footprint) over the DRAM bandwidth.
//! - A fixed cost per launch ([`GpuParams::launch_ns`]).
//!
//! Sampling ([`simulate`]): a launch whose warps run more instructions
//! than the sample holds runs the sample, and the rest of its instructions
//! at the steady issue rate measured by least squares over the middle half
//! of the sample; one whose busiest SM runs more than
//! [`GpuParams::sample_waves`] waves of CTAs is simulated at two wave counts
//! and extended linearly. A checked run ([`Checks`]) is sampled alike and
//! paired with the unchecked one: its extensions are the unchecked run's
//! plus its extra cost, never less ([`simulate_checked`]).
//!
//! Synthesized (not in the counters): the order of instructions inside a
//! warp (spread evenly), the load-to-use distance, the bytes per L1 miss
//! ([`GpuParams::bytes_per_request`]) and per TMA instruction
//! ([`GpuParams::tma_bytes`]), and the launch's footprint (its operator's
//! bytes, split over the operator's launches).
use serde::{Deserialize, Serialize};

use crate::ncu::Counters;

/// One global parameter set for every kernel of every workload (never per
/// kernel). The DRAM bandwidth and clock are the H200's; latencies lie in
/// published Hopper ranges (the fit may move them only inside those); the
/// parameters marked *fit*, the L2 bandwidth and the CTA start were fitted
/// once on the four public traces (`eval/examples/fit.rs`; the result is
/// committed here).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuParams {
    /// SM clock, GHz: 1.98 (the H200's boost clock; ncu's
    /// `device__attribute_clock_rate` 1,980,000 kHz).
    pub clock_ghz: f64,
    /// Warp schedulers per SM (Hopper: 4) and warp slots per SM (64).
    pub schedulers: usize,
    pub max_warps: usize,
    /// Load-to-use latencies, cycles. Hopper pointer-chase microbenchmarks
    /// put an L1 hit at about 30-40 cycles, an L2 hit at about 200-270 and
    /// HBM at about 450-600 (Luo et al., "Benchmarking and Dissecting the
    /// Nvidia Hopper GPU Architecture", IPDPS 2024; Accel-Sim's Hopper
    /// configurations use values in these ranges).
    pub l1_latency: f64,
    pub l2_latency: f64,
    pub dram_latency: f64,
    /// Shared memory load-to-use latency, cycles (about 30 on Hopper, same
    /// sources).
    pub shared_latency: f64,
    /// Whole-GPU bandwidths, bytes per SM cycle: HBM3e 4.8 TB/s (H200
    /// datasheet) / 1.98 GHz = 2424; L2 about twice that.
    pub dram_bytes_per_cycle: f64,
    pub l2_bytes_per_cycle: f64,
    /// *fit*: bytes one warp memory instruction moves between L1 and L2 when
    /// it misses L1 (32 lanes x 4 B coalesced = 128; wider with vector loads).
    pub bytes_per_request: f64,
    /// Bytes one TMA instruction moves (one tile).
    pub tma_bytes: f64,
    /// *fit*: cycles between a warp's consecutive instructions (1 = every
    /// instruction independent; more = longer dependence chains).
    pub issue_interval: f64,
    /// *fit*: instructions between a load and its first use.
    pub use_distance: usize,
    /// *fit*: fixed cost per kernel launch, ns (CTA dispatch ramp and drain).
    pub launch_ns: f64,
    /// Cycles to start a CTA in a freed slot.
    pub cta_launch_cycles: f64,
    /// Sampling limits (see the module doc).
    pub sample_warp_insts: usize,
    pub sample_waves: usize,
}

impl Default for GpuParams {
    /// The committed calibration: `eval/examples/fit.rs`, rounded: two runs
    /// (150 and 120 steps, the second with the latencies free inside their
    /// published ranges), and a third of 150 steps from there once in-place
    /// operators' ranges counted twice in the DRAM traffic
    /// ([`crate::workload::Kernel::footprint_bytes`]).
    fn default() -> Self {
        GpuParams {
            clock_ghz: 1.98,
            schedulers: 4,
            max_warps: 64,
            l1_latency: 40.0,
            l2_latency: 270.0,
            dram_latency: 581.0,
            shared_latency: 30.0,
            dram_bytes_per_cycle: 2424.0,
            l2_bytes_per_cycle: 3830.0,
            bytes_per_request: 329.0,
            tma_bytes: 8192.0,
            issue_interval: 1.54,
            use_distance: 202,
            launch_ns: 820.0,
            cta_launch_cycles: 1225.0,
            sample_warp_insts: 384,
            sample_waves: 4,
        }
    }
}

impl GpuParams {
    /// Checks the values once, at the edge; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let pos = [
            ("clock_ghz", self.clock_ghz),
            ("dram_bytes_per_cycle", self.dram_bytes_per_cycle),
            ("l2_bytes_per_cycle", self.l2_bytes_per_cycle),
            ("bytes_per_request", self.bytes_per_request),
            ("tma_bytes", self.tma_bytes),
            ("issue_interval", self.issue_interval),
        ];
        for (k, v) in pos {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{k}: must be a positive number, got {v}"));
            }
        }
        let nonneg = [
            ("l1_latency", self.l1_latency),
            ("l2_latency", self.l2_latency),
            ("dram_latency", self.dram_latency),
            ("shared_latency", self.shared_latency),
            ("launch_ns", self.launch_ns),
            ("cta_launch_cycles", self.cta_launch_cycles),
        ];
        for (k, v) in nonneg {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{k}: must be a non-negative number, got {v}"));
            }
        }
        if self.schedulers == 0 || self.max_warps < self.schedulers {
            return Err(format!(
                "schedulers ({}) must be at least 1 and at most max_warps ({})",
                self.schedulers, self.max_warps
            ));
        }
        if self.sample_warp_insts == 0 || self.sample_waves == 0 {
            return Err("sample_warp_insts and sample_waves must be at least 1".into());
        }
        Ok(())
    }
}

/// Which warp: its slot on the SM (0..resident warps) and the sequence
/// number of its CTA on this SM (0, 1, ... in start order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpRef {
    pub slot: usize,
    pub cta: u64,
    /// Index of the warp inside its CTA.
    pub index: usize,
}

/// What GPUArmor adds to a launch (the checked run); `None` for unchecked.
/// Times are cycles of one simulation run, which starts at cycle 0
/// ([`Checks::begin_run`] is called first).
pub trait Checks {
    /// A launch starts: remember the state (MLB, caches, counters) it
    /// starts from.
    fn begin_launch(&mut self);
    /// A simulation run of the launch starts at cycle 0: back to the state
    /// of [`Checks::begin_launch`], so every sample of a launch starts from
    /// the same MLB and caches and the samples' order does not matter. The
    /// state after the last (largest) run is what the next launch finds.
    fn begin_run(&mut self);
    /// Extra warp instructions issued before each checked memory instruction
    /// (the MEMCHECK.G the compiler pass inserts: 1; HWONLY: 0, the check
    /// rides on the memory instruction itself).
    fn extra_per_global(&self) -> usize;
    /// The LOADMETAs a warp runs once, at its first issue (one per root
    /// pointer), beginning at cycle `t`: the cycle the warp may go on.
    /// Calls come in non-decreasing `t` with [`Checks::memcheck`]'s, as the
    /// MLU would see them.
    fn loadmeta(&mut self, t: f64, warp: WarpRef) -> f64;
    /// The check of a global memory instruction (LDG/STG/RED/generic/LDGSTS,
    /// or a TMA copy, checked once for its box) requested at cycle `t`: the
    /// cycle it completes. A load's data is not usable and a store does not
    /// leave before then.
    fn memcheck(&mut self, t: f64, warp: WarpRef) -> f64;
}

/// The per-launch inputs of the model, from the launch and its counters.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// CTAs the busiest SM runs, and resident at once.
    pub ctas_on_sm: u64,
    pub resident: u64,
    pub warps_per_cta: usize,
    /// Warps of the whole grid (for the bandwidth floors).
    pub total_warps: f64,
    /// Mean warp instructions per warp and the mix (fractions of them).
    pub insts_per_warp: f64,
    pub f_load: f64,
    pub f_store: f64,
    pub f_tma: f64,
    pub f_shared: f64,
    pub l1_hit: f64,
    pub l2_hit: f64,
    /// Bytes the launch touches in memory (its share of its operator's
    /// touched ranges, from the trace): a floor of `bytes / DRAM bandwidth`.
    pub footprint_bytes: f64,
}

impl Shape {
    pub fn new(ctas: u64, threads_per_cta: u64, c: &Counters, sm_count: u64, max_warps: usize, footprint_bytes: f64) -> Shape {
        let warps_per_cta = threads_per_cta.div_ceil(32).max(1) as usize;
        let resident = c.ctas_per_sm.min((max_warps / warps_per_cta).max(1) as u64).max(1);
        let warps = (ctas as f64 * warps_per_cta as f64).max(1.0);
        let inst = c.inst.max(1.0);
        let per = |x: f64| (x / inst).min(1.0);
        Shape {
            ctas_on_sm: ctas.div_ceil(sm_count).max(1),
            resident,
            warps_per_cta,
            total_warps: warps,
            insts_per_warp: (inst / warps).max(1.0),
            f_load: per(c.global_ld + c.local_ld),
            f_store: per(c.global_st + c.local_st),
            f_tma: per(c.tma),
            f_shared: per(c.shared),
            l1_hit: c.l1_hit,
            l2_hit: c.l2_hit,
            footprint_bytes,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Alu,
    Load,
    Store,
    Tma,
    Shared,
}

#[derive(Clone, Debug)]
struct Warp {
    /// Instructions of its own stream issued so far and in all (checks not
    /// counted).
    next: usize,
    total: usize,
    /// Earliest cycle of its next issue (dependence chain).
    ready: f64,
    /// Outstanding results: (first-use instruction index, cycle available).
    pending: std::collections::VecDeque<(usize, f64)>,
    /// Error-diffusion accumulators of the instruction kinds.
    acc: [f64; 4],
    /// A memory instruction decided and waiting behind its checks, the
    /// checks still to issue, and the cycle the last one completes.
    queued: Option<Kind>,
    checks_left: usize,
    check_done: f64,
    active: bool,
    /// Its LOADMETAs have been requested (at its first issue).
    started: bool,
    cta_slot: usize,
    /// Sequence number of its CTA on this SM.
    cta: u64,
}

impl Warp {
    fn new(slot: usize, warps_per_cta: usize, cta: u64, total: usize, start: f64, phase: f64) -> Warp {
        Warp {
            next: 0,
            total,
            ready: start,
            pending: Default::default(),
            acc: [phase; 4],
            queued: None,
            checks_left: 0,
            check_done: 0.0,
            active: true,
            started: false,
            cta_slot: slot / warps_per_cta,
            cta,
        }
    }

    fn id(&self, slot: usize, warps_per_cta: usize) -> WarpRef {
        WarpRef { slot, cta: self.cta, index: slot % warps_per_cta }
    }

    /// The cycle its next instruction may issue (pending results it uses
    /// included).
    fn eligible(&self) -> f64 {
        let mut t = self.ready;
        if self.checks_left == 0 {
            for &(use_at, avail) in &self.pending {
                if use_at <= self.next {
                    t = t.max(avail);
                }
            }
        }
        t
    }

    /// The kind of its next own instruction (error diffusion over the mix).
    fn decide(&mut self, shape: &Shape) -> Kind {
        let fr = [shape.f_load, shape.f_store, shape.f_tma, shape.f_shared];
        let mut k = Kind::Alu;
        for (j, f) in fr.iter().enumerate() {
            self.acc[j] += f;
            if self.acc[j] >= 1.0 && k == Kind::Alu {
                self.acc[j] -= 1.0;
                k = [Kind::Load, Kind::Store, Kind::Tma, Kind::Shared][j];
            }
        }
        k
    }
}

/// Time of one launch, cycles on the busiest SM (sampled and scaled).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timing {
    pub cycles: f64,
    /// The launch in ns: `launch_ns + cycles / clock`.
    pub ns: f64,
    /// The simulation runs it was extended from (one, or two wave counts):
    /// a checked run of the same launch is extended no faster than these
    /// ([`simulate_checked`]).
    pub samples: [Sample; 2],
}

/// One simulation run of a launch, at one wave count.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Cycles per own warp instruction beyond the sample (steady issue
    /// rate times issues per instruction).
    pub per_inst: f64,
    /// The run's time with its warps' remaining instructions added at
    /// `per_inst`.
    pub cycles: f64,
}

/// Load-to-use latency of a global load that hits L1 with `l1`, L2 with
/// `l2` of the rest (a fluid: every load carries the expected latency).
fn load_latency(l1: f64, l2: f64, p: &GpuParams) -> f64 {
    l1 * p.l1_latency + (1.0 - l1) * (l2 * p.l2_latency + (1.0 - l2) * p.dram_latency)
}

/// The least cycles the launch's memory traffic needs at the whole GPU's L2
/// and DRAM bandwidth: L2 sees every L1-missing load, every store and every
/// TMA tile; DRAM the L2-missing part of that, and at least the launch's
/// footprint.
pub fn bandwidth_floor(shape: &Shape, p: &GpuParams) -> f64 {
    let insts = shape.insts_per_warp * shape.total_warps;
    let requests = insts * (shape.f_load * (1.0 - shape.l1_hit) + shape.f_store);
    let l2_bytes = requests * p.bytes_per_request + insts * shape.f_tma * p.tma_bytes;
    let dram_bytes = (l2_bytes * (1.0 - shape.l2_hit)).max(shape.footprint_bytes);
    (l2_bytes / p.l2_bytes_per_cycle).max(dram_bytes / p.dram_bytes_per_cycle)
}

/// Simulates one launch unchecked.
pub fn simulate(shape: &Shape, p: &GpuParams) -> Timing {
    simulate_with(shape, p, None)
}

/// Simulates one launch with GPUArmor's instructions and latency added by
/// `checks`; `unchecked` is [`simulate`]'s result for the same shape.
///
/// The checked and unchecked runs are paired samples, and what is
/// extended from them is the checked run's *extra* cost: per instruction
/// beyond the sample and per wave beyond the simulated ones. Checks only
/// add instructions and latency, so a negative extra is the fit's noise
/// (after a walk early in the sample the stalled warps catch up, and the
/// middle of the sample issues faster than the steady state), amplified by
/// the extension; it is taken as zero. Within the simulated sample nothing
/// is clamped.
pub fn simulate_checked(shape: &Shape, p: &GpuParams, checks: &mut dyn Checks, unchecked: &Timing) -> Timing {
    simulate_with(shape, p, Some((checks, unchecked)))
}

/// Simulates one launch; `checks` adds GPUArmor's instructions and latency.
///
/// Long launches are sampled (module doc): warps run at most the sample's
/// instructions and the rest at the steady issue rate of the sample; more
/// than `sample_waves` waves of CTAs are simulated at `sample_waves / 2` and
/// `sample_waves` waves and extended linearly. Fixed parts (the first CTA's
/// start, a warp's LOADMETAs, the drain of the last loads) enter once, as
/// they do on the GPU.
fn simulate_with(shape: &Shape, p: &GpuParams, checks: Option<(&mut dyn Checks, &Timing)>) -> Timing {
    let (mut checks, reference) = match checks {
        Some((c, u)) => (Some(c), Some(u)),
        None => (None, None),
    };
    // The sampled work is about the same for every launch: a warp runs
    // more instructions when fewer warps share the SM, and always well past
    // a load's first use, so the sample reaches the steady state.
    let warps = (shape.resident.min(shape.ctas_on_sm) as usize * shape.warps_per_cta).clamp(1, p.max_warps);
    let n_cap = (p.sample_warp_insts * p.max_warps / warps).max(4 * p.use_distance).max(1);
    let insts = shape.insts_per_warp;
    let n = (insts.round() as usize).clamp(1, n_cap);
    // Waves: exact up to `sample_waves` of them, else half and all of
    // `sample_waves` (the first wave's ramp is in both, so the slope is the
    // steady state's).
    let waves = p.sample_waves.max(2) as u64;
    let c_points: Vec<u64> = if shape.ctas_on_sm <= shape.resident * waves {
        vec![shape.ctas_on_sm]
    } else {
        vec![shape.resident * (waves / 2), shape.resident * waves]
    };
    if let Some(c) = checks.as_deref_mut() {
        c.begin_launch();
    }
    let mut samples = [Sample::default(); 2];
    for (i, &c) in c_points.iter().enumerate() {
        let r = run(shape, p, checks.as_deref_mut(), c, n);
        // The warps' remaining instructions at the steady issue rate (for a
        // checked run, at least the unchecked one's).
        let rest = (insts - n as f64).max(0.0) * (c as usize * shape.warps_per_cta) as f64;
        let mut per_inst = r.issues_per_inst * r.cycles_per_issue;
        if let Some(u) = reference {
            per_inst = per_inst.max(u.samples[i].per_inst);
        }
        samples[i] = Sample { per_inst, cycles: r.end + rest * per_inst };
    }
    let cycles = if c_points.len() == 1 {
        samples[0].cycles
    } else {
        // Per wave beyond the simulated ones: for a checked run, at least
        // the unchecked run's cycles.
        let mut slope = samples[1].cycles - samples[0].cycles;
        if let Some(u) = reference {
            slope = slope.max(u.samples[1].cycles - u.samples[0].cycles);
        }
        let x = shape.ctas_on_sm as f64;
        let (x1, x2) = (c_points[0] as f64, c_points[1] as f64);
        samples[0].cycles + slope * (x - x1) / (x2 - x1)
    };
    let cycles = cycles.max(bandwidth_floor(shape, p)).max(1.0);
    Timing { cycles, ns: p.launch_ns + cycles / p.clock_ghz, samples }
}

/// Least-squares sums of (issue number, cycle) points.
#[derive(Default)]
struct Fit {
    n: f64,
    sk: f64,
    st: f64,
    skk: f64,
    skt: f64,
}

impl Fit {
    fn add(&mut self, k: f64, t: f64) {
        self.n += 1.0;
        self.sk += k;
        self.st += t;
        self.skk += k * k;
        self.skt += k * t;
    }

    /// Cycles per issue, if the points fix one.
    fn slope(&self) -> Option<f64> {
        let var = self.n * self.skk - self.sk * self.sk;
        (self.n >= 2.0 && var > 0.0).then(|| ((self.n * self.skt - self.sk * self.st) / var).max(0.0))
    }
}

/// One simulation run: when it ended, and its steady state.
struct Run {
    end: f64,
    /// Least-squares cycles per issue over the middle half of the run's
    /// issues (ramp-up and drain left out): averaged over many periods of
    /// the warps' stall patterns, so where the sample ends does not matter.
    /// A checked run leaves out the cycles in which warps wait for their
    /// LOADMETAs, once per CTA (see `run`).
    cycles_per_issue: f64,
    /// Issues per own instruction (MEMCHECK.Gs included).
    issues_per_inst: f64,
}

/// One simulation of the busiest SM running `ctas_sim` CTAs whose warps run
/// `n_sample` instructions each.
fn run<'c>(shape: &Shape, p: &GpuParams, mut checks: Option<&mut (dyn Checks + 'c)>, ctas_sim: u64, n_sample: usize) -> Run {
    let slots = shape.resident.min(ctas_sim) as usize;
    let w = shape.warps_per_cta;
    let extra_g = checks.as_ref().map_or(0, |c| c.extra_per_global());
    let load_lat = load_latency(shape.l1_hit, shape.l2_hit, p);
    let tma_lat = load_latency(0.0, shape.l2_hit, p);
    let phase = |i: usize| (i as f64 * 0.618_033_988_75).fract();
    let mut warps: Vec<Warp> = (0..slots * w).map(|i| Warp::new(i, w, (i / w) as u64, n_sample, 0.0, phase(i))).collect();
    if let Some(c) = checks.as_deref_mut() {
        c.begin_run();
    }
    let mut cta_left = vec![w; slots];
    let mut cta_end = vec![0.0f64; slots];
    let mut ctas_started = slots as u64;
    let mut started_warps = slots * w;
    let mut sched_t = vec![0.0f64; p.schedulers];
    let mut end = 0.0f64;
    // Issues so far, and the least-squares sums of (issue number, cycle)
    // over the middle half of the expected issues.
    let mut issued = 0.0f64;
    let expect = ctas_sim as f64 * w as f64 * n_sample as f64 * (1.0 + (shape.f_load + shape.f_store + shape.f_tma) * extra_g as f64);
    let (lo, hi) = (expect / 4.0, 3.0 * expect / 4.0);
    let mut all = Fit::default();
    // The steady state of a checked run leaves out the cycles in which a
    // warp waits for its LOADMETAs (and the issues in them): that wait comes
    // once per CTA, and the run's end has it, but a short sample would put
    // it in the rate at which the warps' remaining instructions are
    // extended. `meta` is the union of those waits: the current one, and
    // the cycles of those before it.
    let mut steady = Fit::default();
    let (mut meta_from, mut meta_until, mut meta_before) = (0.0f64, 0.0f64, 0.0f64);

    // Each scheduler's choice (cycle, its warp), kept until something it
    // depends on changes: its own issue, or new warps in its slots.
    let mut choice: Vec<Option<(f64, usize)>> = vec![None; p.schedulers];
    let mut stale = vec![true; p.schedulers];
    loop {
        for (s, &free) in sched_t.iter().enumerate() {
            if !stale[s] {
                continue;
            }
            stale[s] = false;
            // Its oldest ready warp: earliest cycle, then CTA age, then
            // warp index.
            let mut pick: Option<(f64, (u64, usize), usize)> = None;
            for i in (s..warps.len()).step_by(p.schedulers) {
                let wp = &warps[i];
                if wp.active {
                    let key = (wp.eligible().max(free), (wp.cta, i % w), i);
                    if pick.is_none_or(|(c, a, _)| key.0 < c || (key.0 == c && key.1 < a)) {
                        pick = Some(key);
                    }
                }
            }
            choice[s] = pick.map(|(c, _, i)| (c, i));
        }
        // The scheduler that can issue earliest (lowest index on a tie).
        let mut best: Option<(f64, usize, usize)> = None;
        for (s, c) in choice.iter().enumerate() {
            if let Some((c, i)) = *c {
                if best.is_none_or(|(bc, _, _)| c < bc) {
                    best = Some((c, s, i));
                }
            }
        }
        let Some((t, s, wi)) = best else { break };
        stale[s] = true;
        if !warps[wi].started {
            // Its LOADMETAs, at the cycle it would first issue: the MLU sees
            // requests in time order (a CTA that starts in the future asks
            // when it starts, not when its slot was freed).
            warps[wi].started = true;
            if let Some(c) = checks.as_deref_mut() {
                let ready = c.loadmeta(t, warps[wi].id(wi, w));
                warps[wi].ready = ready;
                if ready > t {
                    if t >= meta_until {
                        meta_before += meta_until - meta_from;
                        meta_from = t;
                    }
                    meta_until = meta_until.max(ready);
                }
                continue;
            }
        }
        sched_t[s] = t + 1.0;
        issued += 1.0;
        if issued >= lo && issued <= hi {
            all.add(issued, t);
            if t >= meta_until {
                steady.add(steady.n, t - meta_before - (meta_until - meta_from));
            }
        }
        let wp = &mut warps[wi];
        wp.ready = t + p.issue_interval;
        let checked = |k: Kind| matches!(k, Kind::Load | Kind::Store | Kind::Tma);
        if wp.checks_left == 0 && wp.queued.is_none() {
            let k = wp.decide(shape);
            wp.queued = Some(k);
            if checked(k) && extra_g > 0 && checks.is_some() {
                wp.checks_left = extra_g;
            }
        }
        let id = wp.id(wi, w);
        if wp.checks_left > 0 {
            // One MEMCHECK.G of the memory instruction queued behind it.
            wp.checks_left -= 1;
            if wp.checks_left == 0 {
                if let Some(c) = checks.as_deref_mut() {
                    wp.check_done = c.memcheck(t, id);
                }
            }
            continue;
        }
        if extra_g == 0 && wp.queued.is_some_and(checked) {
            // HWONLY: the memory instruction itself is looked up.
            if let Some(c) = checks.as_deref_mut() {
                wp.check_done = c.memcheck(t, id);
            }
        }
        let kind = wp.queued.take().unwrap_or(Kind::Alu);
        let check_done = std::mem::take(&mut wp.check_done);
        let next = wp.next;
        while wp.pending.front().is_some_and(|&(u, _)| u <= next) {
            wp.pending.pop_front();
        }
        wp.next += 1;
        let use_at = next + p.use_distance;
        match kind {
            Kind::Alu => {}
            Kind::Shared => wp.pending.push_back((use_at, t + p.shared_latency)),
            Kind::Load => wp.pending.push_back((use_at, (t + load_lat).max(check_done))),
            // A store may not leave before its check.
            Kind::Store => wp.ready = wp.ready.max(check_done),
            Kind::Tma => wp.pending.push_back((use_at, (t + tma_lat).max(check_done))),
        }
        if wp.next == wp.total {
            let done = wp.pending.iter().fold(t + 1.0, |m, &(_, a)| m.max(a)).max(wp.ready);
            wp.active = false;
            end = end.max(done);
            let slot = wp.cta_slot;
            cta_left[slot] -= 1;
            cta_end[slot] = cta_end[slot].max(done);
            if cta_left[slot] == 0 && ctas_started < ctas_sim {
                let cta = ctas_started;
                ctas_started += 1;
                cta_left[slot] = w;
                let start = cta_end[slot] + p.cta_launch_cycles;
                stale.iter_mut().for_each(|x| *x = true);
                for k in 0..w {
                    let i = slot * w + k;
                    warps[i] = Warp::new(i, w, cta, n_sample, start, phase(started_warps + k));
                }
                started_warps += w;
            }
        }
    }
    // The steady fit when it kept an eighth of the window's issues, else
    // all of them.
    let cycles_per_issue = match steady.slope() {
        Some(s) if steady.n >= all.n / 8.0 => s,
        _ => all.slope().unwrap_or(0.0),
    };
    let own = (ctas_sim as f64 * w as f64 * n_sample as f64).max(1.0);
    Run { end, cycles_per_issue, issues_per_inst: issued / own }
}
