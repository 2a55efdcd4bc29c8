//! A complete synthesis job (map, per-block split, timing, workload energy)
//! for one design and library, and the MLB sweep report.
use crate::activity::{self, Stimulus};
use crate::flow::{self, Activity, BlockArea, Design};
use crate::liberty::{self, LibSpec, Library};
use crate::tools::{Power, Timing};
use crate::workload;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The family of a synthesized top: what the report groups by and which
/// block split, duty ports and energy workloads apply (the top itself is a
/// `sim::top::TopKind`; [`Family::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Family {
    #[serde(rename = "mlb")]
    Mlb,
    /// The canary allocator unit (`canary_alloc`, hw/src/canary/).
    #[serde(rename = "canary")]
    Canary,
    /// The MLU as an SM unit (`mlu<N>_<structure>_k<K>_l<L>[_p2][_c2]`,
    /// hw/src/mlu_unit.rs).
    #[serde(rename = "unit")]
    Unit,
}

impl Family {
    /// The family of a generated top (`None`: MEMCHECK alone is not
    /// synthesized on its own).
    pub fn of(kind: &sim::top::TopKind) -> Option<Family> {
        match kind {
            sim::top::TopKind::Mlb { .. } => Some(Family::Mlb),
            sim::top::TopKind::MluUnit(_) => Some(Family::Unit),
            sim::top::TopKind::CanaryAlloc { .. } => Some(Family::Canary),
            sim::top::TopKind::Memcheck => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Family::Mlb => "mlb",
            Family::Canary => "canary",
            Family::Unit => "unit",
        }
    }
}

/// A resolved generated top: the design plus what its manifest says.
#[derive(Clone, Debug)]
pub struct Generated {
    pub design: Design,
    /// Input port widths from the manifest (or the netlist later).
    pub port_widths: Vec<(String, usize)>,
    pub manifest: Option<PathBuf>,
}

/// A generated top in `verilog_out`, found by its name
/// ([`sim::top::TopKind::name`], the name `mlugen generate` gives it):
/// `<name>.v` and its manifest `<name>.json`, whose `top` must be that name
/// and whose clock port is `clock` (rust-hdl's name).
pub fn resolve(verilog_out: &Path, kind: &sim::top::TopKind) -> Result<Generated> {
    let top = kind.name();
    let manifest = verilog_out.join(format!("{top}.json"));
    let verilog = verilog_out.join(format!("{top}.v"));
    if !manifest.is_file() || !verilog.is_file() {
        bail!(
            "no {top}.v and {top}.json in {} (run `mlugen generate` with the same parameters, or `--all`; or pass --verilog FILE --top-module NAME)",
            verilog_out.display()
        );
    }
    let text = std::fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not a JSON manifest", manifest.display()))?;
    if v.get("top").and_then(|t| t.as_str()) != Some(top.as_str()) {
        bail!("{}: not the manifest of top {top}", manifest.display());
    }
    let port_widths: Vec<(String, usize)> = v
        .get("ports")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
        .filter(|p| p.get("direction").and_then(|x| x.as_str()) == Some("input"))
        .map(|p| (p.get("name").and_then(|x| x.as_str()).unwrap_or_default().to_string(), p.get("width").and_then(|x| x.as_u64()).unwrap_or(0) as usize))
        .collect();
    if !port_widths.iter().any(|(n, _)| n == "clock") {
        bail!("{}: top {top} has no input port `clock`", manifest.display());
    }
    Ok(Generated { design: Design { verilog: vec![verilog], top, clock: "clock".into() }, port_widths, manifest: Some(manifest) })
}

/// Energy of one operation under a measured workload.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpEnergy {
    pub workload: String,
    pub op: String,
    /// Dynamic energy (internal + switching) per operation, pJ.
    pub dynamic_pj_per_op: f64,
    /// Total power under the workload, W (leakage included).
    pub power: Power,
    pub measured_cycles: usize,
    pub mean_input_activity: f64,
    pub mean_ff_output_activity: f64,
    /// Fraction of the measured time each 1-bit output was high (e.g.
    /// `rs_hit` is 1.0 under `range_hit`): evidence the workload did what
    /// it says.
    pub output_duty: std::collections::BTreeMap<String, f64>,
    /// Operations in the measured window (cycles x ops per cycle).
    #[serde(default)]
    pub ops: f64,
    /// Leakage energy per operation, pJ (leakage power x the cycles one
    /// operation takes); not included in `dynamic_pj_per_op`.
    #[serde(default)]
    pub leakage_pj_per_op: f64,
    /// Output port-cycles of the gate-level run compared with the recorded
    /// RTL run (all equal); 0 for an open-loop stimulus (the MLB's).
    #[serde(default)]
    pub rtl_checked_port_cycles: usize,
    /// Those port-cycles in which the gate-level port had an x bit
    /// (registers with no reset not yet written): not compared; every
    /// other one was, and matched.
    #[serde(default)]
    pub rtl_unknown_port_cycles: usize,
    /// Facts of the recorded run (e.g. `nodes_per_op` of a miss walk,
    /// `memory_latency`).
    #[serde(default)]
    pub facts: std::collections::BTreeMap<String, f64>,
}

/// Everything one job produces (printed by `--json`, collected by the sweep).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SynthReport {
    pub top: String,
    pub kind: Family,
    pub entries: usize,
    pub library: String,
    pub liberty: String,
    pub voltage_v: f64,
    pub clock_ps: f64,
    pub area_um2: f64,
    pub cells: u64,
    pub flip_flops: u64,
    pub ff_area_um2: f64,
    pub smallest_ff: String,
    pub smallest_ff_area_um2: f64,
    /// Area split by block, from the hierarchical run (its total differs
    /// from `area_um2`: no optimisation across module boundaries).
    pub blocks: Vec<BlockArea>,
    pub blocks_total_um2: f64,
    pub timing: Timing,
    /// Power at OpenSTA's default activity (0.1 transitions/cycle on inputs),
    /// not workload-derived; kept for comparison.
    pub power_default_activity: Power,
    pub leakage_w: f64,
    pub energy: Vec<OpEnergy>,
    pub netlist: String,
    /// Clock gates inserted in the flattened netlist (None: no gating).
    #[serde(default)]
    pub clock_gating: Option<crate::gating::GatingStats>,
    #[serde(default)]
    pub icg_area_um2: f64,
    /// MLB search latency in cycles (2 for the two-stage MLB).
    #[serde(default = "one")]
    pub hit_latency: u64,
    /// FNV-1a 64 hash of the input Verilog: which RTL these numbers are for.
    #[serde(default)]
    pub verilog_fnv64: String,
    pub notes: Vec<String>,
}

fn one() -> u64 {
    1
}

/// FNV-1a 64 of the files' bytes, hex (`SynthReport::verilog_fnv64`).
pub fn fnv64(files: &[PathBuf]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for f in files {
        for b in std::fs::read(f).unwrap_or_default() {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}")
}

#[derive(Clone, Debug)]
pub struct JobOptions {
    pub out: PathBuf,
    pub clock_ps: f64,
    pub blocks: bool,
    pub energy: bool,
    pub energy_cycles: usize,
    /// Insert clock gates (flattened run; the block split stays ungated).
    pub clock_gating: bool,
    /// Told the name of each stage as it starts (the CLI's progress), and ""
    /// when the job is over.
    pub on_stage: Option<fn(&str)>,
}

impl JobOptions {
    fn stage(&self, s: &str) {
        if let Some(f) = self.on_stage {
            f(s);
        }
    }
}

/// Default clock per library: 1 GHz for Nangate45, 2 GHz for ASAP7 (the
/// paper's GPU clock), 1 GHz otherwise.
pub fn default_clock_ps(spec: &LibSpec) -> f64 {
    match spec {
        LibSpec::Asap7 => 500.0,
        _ => 1000.0,
    }
}

/// Prepare a library in the shared cache (`<repo>/build/pdk/<name>`).
pub fn library(spec: &LibSpec) -> Result<Library> {
    let dir = match spec {
        LibSpec::Nangate45 => liberty::pdk_cache().join("nangate45"),
        LibSpec::Asap7 => liberty::pdk_cache().join("asap7"),
        LibSpec::Path(_) => liberty::pdk_cache().join("custom"),
    };
    liberty::prepare(spec, &dir)
}

/// Block of a module of the clean Verilog (`mlb8_plru_rs_pe`,
/// `mlb8_plru_plru_0`; hw/src/clean.rs): the MLB's blocks for `mlb*` tops,
/// otherwise the module below the top (`hierarchy_block`), so another top
/// (canary_alloc) is not given MLB labels (the unit: `classify_unit`). Registers are inlined into their block, so the MLB's entry
/// flip-flops count with the MLB (its comparators, muxes and control).
pub fn classify(top: &str, module: &str) -> String {
    if !top.starts_with("mlb") {
        return hierarchy_block(top, module);
    }
    let rest = module.strip_prefix(top).map(|r| r.trim_start_matches('_')).unwrap_or(module);
    if rest.is_empty() || rest == "mlb" {
        "MLB entries (flip-flops), comparators, muxes and control".into()
    } else if rest.ends_with("_pe") {
        "priority encoders".into()
    } else if rest.contains("plru") || rest.contains("rr_") {
        "replacement (PLRU / round-robin)".into()
    } else {
        rest.to_string()
    }
}

/// Block of a module of an MLU unit top (hw/src/mlu_unit.rs): the five the
/// unit is built of, each with its sub-modules (the MLB's priority encoders
/// and replacement, each walker's node comparator, each lane's bounds
/// compare, each counter's zero extensions).
pub fn classify_unit(top: &str, module: &str) -> String {
    let rest = module.strip_prefix(top).map(|r| r.trim_start_matches('_')).unwrap_or(module);
    if rest.is_empty() {
        "unit pipeline: request stages, miss slots, merge and replay, response (the top)".into()
    } else if rest.starts_with("mlb") {
        "MLB: entries, comparators, priority encoders, replacement".into()
    } else if rest.starts_with("walkers") {
        "walkers (each with its node comparator)".into()
    } else if rest.starts_with("checks") {
        "lane checks: per-lane bounds and tag checks, lowest faulting lane".into()
    } else if rest.starts_with("ctr_") {
        "counters (six 32-bit event counters)".into()
    } else {
        rest.to_string()
    }
}

/// Block of a module of any top: the module's name below the top
/// (`canary_alloc_chk_list` -> `chk_list`); the top module's own cells are
/// "<top> top-level logic".
pub fn hierarchy_block(top: &str, module: &str) -> String {
    match module.strip_prefix(top).and_then(|r| r.strip_prefix('_')).filter(|r| !r.is_empty()) {
        Some(rest) => rest.to_string(),
        None => format!("{top} top-level logic (not in a sub-module)"),
    }
}

#[cfg(test)]
mod tests {
    use super::{classify, classify_unit};

    #[test]
    fn unit_modules_fall_into_its_five_blocks() {
        let t = "mlu8_bst_k4_l32_p2_c2";
        let b = |m: &str| classify_unit(t, &format!("{t}{m}"));
        assert!(b("").starts_with("unit pipeline"));
        assert!(b("_mlb").starts_with("MLB"));
        assert_eq!(b("_mlb_rs_pe"), b("_mlb"));
        assert_eq!(b("_mlb_plru_0"), b("_mlb"));
        assert!(b("_walkers_0").starts_with("walkers"));
        assert_eq!(b("_walkers_3_node_cmp"), b("_walkers_0"));
        assert!(b("_checks").starts_with("lane checks"));
        assert_eq!(b("_checks_lanes_31_g_bounds"), b("_checks"));
        assert!(b("_ctr_hits").starts_with("counters"));
        assert_eq!(b("_ctr_nodes_lo_w"), b("_ctr_hits"));
        assert_eq!(b("_other"), "other");
    }

    #[test]
    fn other_tops_get_their_own_hierarchy() {
        assert_eq!(classify("canary_alloc", "canary_alloc"), "canary_alloc top-level logic (not in a sub-module)");
        assert_eq!(classify("canary_alloc", "canary_alloc_chk_list"), "chk_list");
        assert_eq!(classify("canary_alloc", "canary_alloc_sip"), "sip");
    }

    #[test]
    fn modules_fall_into_their_blocks() {
        let mlb = "MLB entries (flip-flops), comparators, muxes and control";
        assert_eq!(classify("mlb8_plru", "mlb8_plru_rs_pe"), "priority encoders");
        assert_eq!(classify("mlb8_plru", "mlb8_plru_plru_0"), "replacement (PLRU / round-robin)");
        assert_eq!(classify("mlb8_rr", "mlb8_rr_rr_0"), "replacement (PLRU / round-robin)");
        assert_eq!(classify("mlb8_plru", "mlb8_plru"), mlb);
    }
}

/// A path relative to the repository when inside it (reports stay
/// machine-independent).
fn rel(p: &Path) -> String {
    let root = liberty::repo_root();
    let root = root.canonicalize().unwrap_or(root);
    let q = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    q.strip_prefix(&root).map(|r| r.display().to_string()).unwrap_or_else(|_| p.display().to_string())
}

/// Run one job: map (flattened), split by block (hierarchical), time, and
/// measure workload energy (the MLB's built-in open-loop workloads; other
/// tops need recorded ones: `run_with`).
pub fn run(design: &Design, kind: Family, entries: usize, lib: &Library, o: &JobOptions) -> Result<SynthReport> {
    run_with(design, kind, entries, lib, o, None)
}

/// 1-bit outputs whose duty each energy run records, per kind of top.
fn duty_ports(kind: Family) -> &'static [&'static str] {
    match kind {
        Family::Mlb => &["rs_hit", "ls_hit", "rs_multi", "ls_multi", "fill_ok"],
        Family::Canary => &["resp_valid", "chk_done", "mem_valid", "mem_we"],
        Family::Unit => &["req_ready", "resp_valid", "mem_req_valid"],
    }
}

/// As `run`; `recorded` (named stimuli with the RTL's outputs, built by the
/// caller, e.g. verif::recorder for the MLU and canary tops) replaces the
/// built-in workloads. Each recorded run is also a cycle-by-cycle equivalence
/// check of the netlist: a difference is an error.
pub fn run_with(design: &Design, kind: Family, entries: usize, lib: &Library, o: &JobOptions, recorded: Option<&[(String, Stimulus)]>) -> Result<SynthReport> {
    // Tools run inside their work directories: every path must be absolute.
    let out = if o.out.is_absolute() { o.out.clone() } else { std::env::current_dir()?.join(&o.out) };
    let dir = out.join(format!("{}_{}", design.top, lib.name));
    let hash_before = fnv64(&design.verilog);
    // The flat mapping (timed and powered below) and the hierarchical one
    // (the area split by block) are independent runs: side by side.
    o.stage(if o.blocks { "mapping, flat and hierarchical for the block split (Yosys, ABC)" } else { "mapping (Yosys, ABC)" });
    let (flat, hier) = std::thread::scope(|s| {
        let hier = o.blocks.then(|| {
            s.spawn(|| -> Result<_> {
                let (hm, mods) = flow::map(design, lib, o.clock_ps, &dir.join("hier"), false)?;
                let split = |name: &str| if kind == Family::Unit { classify_unit(&design.top, name) } else { classify(&design.top, name) };
                Ok((flow::blocks(&mods, lib, &split), hm.area_um2))
            })
        });
        let flat = flow::map_with(design, lib, &flow::MapOptions { clock_ps: o.clock_ps, flatten: true, clock_gating: o.clock_gating }, &dir.join("flat"));
        (flat, hier.map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))))
    });
    let (m, _) = flat?;
    let (blocks, blocks_total) = hier.transpose()?.unwrap_or((vec![], 0.0));
    o.stage("timing and default-activity power (OpenSTA)");
    let (timing, pdef) = flow::sta(design, lib, &m, o.clock_ps, &Activity::default(), "")?;
    let mut notes = vec![lib.rails_note.clone()];
    if o.clock_gating && o.blocks {
        notes.push("the area split by block comes from the hierarchical run, which is not clock gated (its enable muxes are still there)".into());
    }
    let mut energy = Vec::new();
    let mut stimuli: Vec<(String, Stimulus)> = Vec::new();
    if let (true, Some(r)) = (o.energy, recorded) {
        stimuli = r.to_vec();
    } else if o.energy && kind == Family::Mlb {
        // The location ports carry bits 55..5 (51 bits) or a whole 64-bit
        // location: take the width from the netlist.
        let text = std::fs::read_to_string(&m.netlist)?;
        let (ports, _) = activity::parse_netlist(&text)?;
        let loc_width = ports
            .iter()
            .find(|p| p.name == "fill_loc" && p.input)
            .map(|p| p.width)
            .with_context(|| format!("{} has no fill_loc input: not an MLB", design.top))?;
        for w in workload::WORKLOADS {
            stimuli.push((w.to_string(), workload::mlb(w, entries, o.energy_cycles, loc_width)));
        }
    } else if o.energy {
        notes.push(format!("no workload stimulus for the {} top was given: only OpenSTA's default-activity power is reported (not workload-derived)", kind.name()));
    }
    if !stimuli.is_empty() {
        let names: Vec<&str> = stimuli.iter().map(|(w, _)| w.as_str()).collect();
        o.stage(&format!("energy of workloads {} (gate-level simulation, OpenSTA)", names.join(", ")));
    }
    // Each workload's gate-level run and power analysis is its own (files
    // suffixed by the workload): on every core.
    let measured = sim::parallel::map(&stimuli, |(w, st)| -> Result<_> {
        let (act, n) = activity::measure(lib, &m.netlist, &design.top, &design.clock, o.clock_ps, st, &m.dir, &dir, &format!("_{w}"))?;
        let (_, p) = flow::sta(design, lib, &m, o.clock_ps, &act, &format!("_{w}"))?;
        Ok((act, n, p))
    });
    for ((w, st), r) in stimuli.iter().zip(measured) {
        let (act, n, p) = r?;
        let dynamic = p.internal_w + p.switching_w;
        let cycle_s = o.clock_ps * 1e-12;
        energy.push(OpEnergy {
            workload: w.clone(),
            op: st.op.clone(),
            dynamic_pj_per_op: dynamic * cycle_s / st.ops_per_cycle * 1e12,
            power: p.clone(),
            measured_cycles: n,
            mean_input_activity: activity::mean(&act.inputs),
            mean_ff_output_activity: activity::mean(&act.pins),
            output_duty: act
                .outputs
                .iter()
                .filter(|x| duty_ports(kind).contains(&x.pin.as_str()))
                .map(|x| (x.pin.clone(), (x.duty * 1000.0).round() / 1000.0))
                .collect(),
            ops: n as f64 * st.ops_per_cycle,
            leakage_pj_per_op: p.leakage_w * cycle_s / st.ops_per_cycle * 1e12,
            rtl_checked_port_cycles: act.rtl_checks,
            rtl_unknown_port_cycles: act.rtl_unknown,
            facts: st.facts.iter().cloned().collect(),
        });
    }
    if fnv64(&design.verilog) != hash_before {
        bail!("{} changed while it was being synthesized; run again", design.verilog[0].display());
    }
    let (sff, sffa) = lib.smallest_ff().unwrap_or_default();
    o.stage("");
    Ok(SynthReport {
        top: design.top.clone(),
        kind,
        entries,
        library: lib.name.clone(),
        liberty: rel(&lib.path),
        voltage_v: lib.voltage,
        clock_ps: o.clock_ps,
        area_um2: m.area_um2,
        cells: m.cells,
        flip_flops: m.flip_flops,
        ff_area_um2: m.ff_area_um2,
        smallest_ff: sff,
        smallest_ff_area_um2: sffa,
        blocks,
        blocks_total_um2: blocks_total,
        timing,
        leakage_w: pdef.leakage_w,
        power_default_activity: pdef,
        energy,
        netlist: rel(&m.netlist),
        clock_gating: m.gating.clone(),
        icg_area_um2: m.icg_area_um2,
        hit_latency: if design.top.ends_with("_p2") || design.top.contains("_p2_") { 2 } else { 1 },
        verilog_fnv64: fnv64(&design.verilog),
        notes,
    })
}

/// One design of a `mlugen synth` run.
#[derive(Clone, Debug)]
pub struct Job {
    pub design: Design,
    pub family: Family,
    /// MLB entries (0: no MLB).
    pub entries: usize,
    /// The generated top it is (None: a user's `--verilog`): its closed-loop
    /// energy workloads are recorded on its RTL.
    pub kind: Option<sim::top::TopKind>,
}

/// Synthesize every job on every library (each loaded by [`library`] from
/// its spec; clock: `clock_ps`, else the library's default), in order. The MLU unit's and the canary unit's
/// workloads are closed loop (a memory answers the unit), so they are
/// recorded on the RTL by `record`, once per top, and replayed per library;
/// the MLB's are open loop and made here. `done` sees each report as it is
/// finished.
pub fn run_jobs(
    jobs: &[Job],
    libs: &[(LibSpec, Library)],
    clock_ps: Option<f64>,
    o: &JobOptions,
    record: &mut dyn FnMut(&sim::top::TopKind) -> Result<Vec<(String, Stimulus)>>,
    done: &mut dyn FnMut(&SynthReport) -> Result<()>,
) -> Result<Vec<SynthReport>> {
    let mut reports = Vec::new();
    let mut recordings: Vec<(String, Vec<(String, Stimulus)>)> = Vec::new();
    for (spec, lib) in libs {
        let o = JobOptions { clock_ps: clock_ps.unwrap_or_else(|| default_clock_ps(spec)), clock_gating: o.clock_gating && lib.tech.is_some(), ..o.clone() };
        for job in jobs {
            o.stage(&format!("{} ({} entries) on {} at {} ps", job.design.top, job.entries, lib.name, o.clock_ps));
            let closed_loop = job.kind.as_ref().filter(|_| o.energy && job.family != Family::Mlb);
            if let Some(kind) = closed_loop {
                if !recordings.iter().any(|(k, _)| *k == job.design.top) {
                    recordings.push((job.design.top.clone(), record(kind)?));
                }
            }
            let recorded = closed_loop.and_then(|_| recordings.iter().find(|(k, _)| *k == job.design.top)).map(|(_, w)| w.as_slice());
            let r = run_with(&job.design, job.family, job.entries, lib, &o, recorded)
                .with_context(|| format!("synthesizing {} for {}", job.design.top, lib.name))?;
            done(&r)?;
            reports.push(r);
        }
    }
    Ok(reports)
}
