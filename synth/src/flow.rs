//! One synthesis run: Yosys + ABC mapping of a Verilog design to a Liberty
//! library, then OpenSTA timing and power of the mapped netlist.
//!
//! Headline numbers (area, cells, flip-flops, timing, power) come from a
//! flattened run, so ABC optimises across rust-hdl's one-module-per-register
//! hierarchy. The per-block area split comes from a second, hierarchical run
//! (`stat` per module), see `blocks`.
use crate::liberty::Library;
use crate::tools::{self, ModuleStat, Power, Timing};
use anyhow::{bail, Context, Result};
use askama::Template;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What to synthesize.
#[derive(Clone, Debug)]
pub struct Design {
    pub verilog: Vec<PathBuf>,
    pub top: String,
    /// The clock input port (rust-hdl names it `clock`).
    pub clock: String,
}

/// Switching activity of one pin or port, for OpenSTA's
/// `sta::set_power_pin_activity`: `activity` is transitions per clock
/// period, `duty` the fraction of time at 1.
#[derive(Clone, Debug, Serialize)]
pub struct PinActivity {
    pub pin: String,
    pub activity: f64,
    pub duty: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Activity {
    /// Flip-flop output pins (`cell/Q`) of the mapped netlist.
    pub pins: Vec<PinActivity>,
    /// Top-level input ports.
    pub inputs: Vec<PinActivity>,
    /// Top-level output ports (not given to OpenSTA: a check that the
    /// workload did what it says, e.g. `rs_hit` high on every hit cycle).
    pub outputs: Vec<PinActivity>,
    /// Output port-cycles compared with a recorded RTL run (all equal, or
    /// the measurement is an error); 0 for an open-loop stimulus.
    pub rtl_checks: usize,
    /// Those port-cycles in which the gate-level port had an x bit (not
    /// compared: registers without a reset, not yet written).
    pub rtl_unknown: usize,
}

#[derive(Template)]
#[template(path = "synth.ys", escape = "none")]
struct YosysScript<'a> {
    what: &'a str,
    json_in: String,
    json_out: String,
    abc_script: String,
    verilog: Vec<String>,
    top: &'a str,
    flatten: bool,
    lcu_map: String,
    dff_lib: String,
    lib: String,
    clock_ps: String,
    constr: String,
    tie_hi: &'a str,
    tie_lo: &'a str,
    buf: &'a str,
    stat: String,
    netlist: String,
}

#[derive(Template)]
#[template(path = "sta.tcl", escape = "none")]
struct StaScript<'a> {
    what: &'a str,
    time_unit: String,
    lib: String,
    netlist: String,
    top: &'a str,
    clock: &'a str,
    period: String,
    drive_cell: &'a str,
    drive_pin: &'a str,
    load: String,
    activity: &'a [PinActivity],
    input_activity: &'a [PinActivity],
    icg_disable: Vec<String>,
    icg_clk: &'a str,
    icg_gclk: &'a str,
}

/// The result of mapping (Yosys) a design.
#[derive(Clone, Debug, Serialize)]
pub struct Mapped {
    pub area_um2: f64,
    pub cells: u64,
    pub flip_flops: u64,
    pub ff_area_um2: f64,
    pub netlist: PathBuf,
    pub dir: PathBuf,
    /// Clock gating inserted (None: mapped without gating).
    pub gating: Option<crate::gating::GatingStats>,
    /// Area of the ICG cells (included in `area_um2`).
    pub icg_area_um2: f64,
}

/// How to map (see `map_with`).
#[derive(Clone, Debug)]
pub struct MapOptions {
    pub clock_ps: f64,
    /// Flatten (headline numbers) or keep the hierarchy (block split).
    pub flatten: bool,
    /// Insert integrated clock gates per enable group (flattened runs and
    /// libraries with a known ICG cell only).
    pub clock_gating: bool,
}


/// The Kogge-Stone `$lcu` techmap (synth/templates/lcu_kogge_stone.v),
/// built into the binary so the flow runs from any directory.
pub const LCU_KOGGE_STONE: &str = include_str!("../templates/lcu_kogge_stone.v");

fn abs(p: &Path) -> Result<String> {
    let a = if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir()?.join(p) };
    Ok(a.to_string_lossy().into_owned())
}

/// Map `design` to `lib` in `dir` (flattened or hierarchical). Returns the
/// per-module statistics too.
pub fn map(design: &Design, lib: &Library, clock_ps: f64, dir: &Path, flatten: bool) -> Result<(Mapped, Vec<ModuleStat>)> {
    map_with(design, lib, &MapOptions { clock_ps, flatten, clock_gating: false }, dir)
}

/// Map `design` to `lib` in `dir` with options. With clock gating the
/// Yosys run stops after the generic synthesis (JSON netlist), the gates are
/// inserted (`gating::insert_clock_gates`), and a second run maps the result.
pub fn map_with(design: &Design, lib: &Library, o: &MapOptions, dir: &Path) -> Result<(Mapped, Vec<ModuleStat>)> {
    let (clock_ps, flatten) = (o.clock_ps, o.flatten);
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for v in &design.verilog {
        if !v.is_file() {
            bail!("Verilog file {} does not exist", v.display());
        }
    }
    if !lib.path.is_file() {
        bail!("Liberty file {} is missing", lib.path.display());
    }
    let what = format!("{} mapped to {} at {} ps ({})", design.top, lib.name, clock_ps, if flatten { "flattened" } else { "hierarchical" });
    let stat = dir.join(if flatten { "stat.txt" } else { "stat_hier.txt" });
    let netlist = dir.join("netlist.v");
    let mut constr = String::new();
    let (mut tie_hi, mut tie_lo, mut buf) = ("", "", "");
    if let Some(t) = &lib.tech {
        let c = dir.join("abc.constr");
        std::fs::write(&c, format!("set_driving_cell {}\nset_load {}\n", t.drive_cell, t.load_ff))?;
        constr = abs(&c)?;
        (tie_hi, tie_lo, buf) = (t.tie_hi, t.tie_lo, t.buf);
    }
    let lcu = dir.join("lcu_kogge_stone.v");
    std::fs::write(&lcu, LCU_KOGGE_STONE)?;
    let icg = match (&lib.tech, o.clock_gating) {
        (Some(t), true) if flatten => Some(t.icg.clone()),
        (None, true) => bail!("clock gating needs a library whose ICG cell the flow knows (nangate45, asap7); {} is not one (use --clock-gating off)", lib.path.display()),
        _ => None,
    };
    let pre_json = dir.join("pre_gating.json");
    let gated_json = dir.join("gated.json");
    let mk = |json_in: String, json_out: String| -> Result<String> {
        Ok(YosysScript {
        what: &what,
        json_in,
        json_out,
        // Yosys's own script for a constrained run measured best of the
        // seven tried (docs/synth.md): no -script.
        abc_script: String::new(),
        lcu_map: abs(&lcu)?,
        verilog: design.verilog.iter().map(|v| abs(v)).collect::<Result<_>>()?,
        top: &design.top,
        flatten,
        dff_lib: abs(&lib.dff_path)?,
        lib: abs(&lib.path)?,
        clock_ps: format!("{}", clock_ps.round() as u64),
        constr: constr.clone(),
        tie_hi,
        tie_lo,
        buf,
        stat: abs(&stat)?,
        netlist: abs(&netlist)?,
        }
        .render()?)
    };
    let sources = design.verilog.iter().map(|v| v.display().to_string()).collect::<Vec<_>>().join(", ");
    let ys = dir.join(if flatten { "synth.ys" } else { "synth_hier.ys" });
    let log = dir.join(if flatten { "yosys.log" } else { "yosys_hier.log" });
    let mut gating = None;
    if let Some(icg) = &icg {
        std::fs::write(&ys, mk(String::new(), abs(&pre_json)?)?)?;
        tools::run("yosys", &["-s", &abs(&ys)?], dir, &log, &format!("{sources} (script {})", ys.display()))?;
        let text = std::fs::read_to_string(&pre_json).with_context(|| format!("Yosys wrote no JSON netlist {}", pre_json.display()))?;
        let (gated, st) = crate::gating::insert_clock_gates(&text, &design.top, icg, crate::gating::MIN_GROUP)
            .with_context(|| format!("clock gating of {}", pre_json.display()))?;
        std::fs::write(&gated_json, gated)?;
        gating = Some(st);
        let ys2 = dir.join("synth_gated.ys");
        let log2 = dir.join("yosys_gated.log");
        std::fs::write(&ys2, mk(abs(&gated_json)?, String::new())?)?;
        tools::run("yosys", &["-s", &abs(&ys2)?], dir, &log2, &format!("{} (script {})", gated_json.display(), ys2.display()))?;
    } else {
        std::fs::write(&ys, mk(String::new(), String::new())?)?;
        tools::run("yosys", &["-s", &abs(&ys)?], dir, &log, &format!("{sources} (script {})", ys.display()))?;
    }
    let text = std::fs::read_to_string(&stat).with_context(|| format!("Yosys wrote no statistics to {}", stat.display()))?;
    let mods = tools::parse_stat(&text)?;
    let mut area = 0.0;
    let mut cells = 0;
    let mut ffs = 0;
    let mut ff_area = 0.0;
    let mut icg_area = 0.0;
    for m in &mods {
        area += m.area;
        for (c, n) in &m.cells {
            if let Some(a) = lib.cell_area.get(c) {
                cells += n;
                if lib.is_ff(c) {
                    ffs += n;
                    ff_area += a * *n as f64;
                }
                if icg.as_ref().is_some_and(|i| i.cell == c) {
                    icg_area += a * *n as f64;
                }
            }
        }
    }
    // Every leaf cell must be a library cell: an unmapped `$_AND_` or a
    // missing module means the netlist is not a real mapping.
    let names: Vec<&str> = mods.iter().map(|m| m.name.as_str()).collect();
    for m in &mods {
        for c in m.cells.keys() {
            if !lib.cell_area.contains_key(c) && !names.contains(&c.as_str()) {
                bail!("Yosys left cell {c} in module {} unmapped to {} (see {})", m.name, lib.path.display(), log.display());
            }
        }
    }
    if area <= 0.0 || cells == 0 {
        bail!("Yosys mapped {} to an empty netlist (see {})", design.top, log.display());
    }
    Ok((Mapped { area_um2: area, cells, flip_flops: ffs, ff_area_um2: ff_area, netlist, dir: dir.to_path_buf(), gating, icg_area_um2: icg_area }, mods))
}

/// Time and power a flattened mapped netlist.
pub fn sta(design: &Design, lib: &Library, mapped: &Mapped, clock_ps: f64, activity: &Activity, tag: &str) -> Result<(Timing, Power)> {
    let period = clock_ps / lib.time_unit_ps;
    let what = format!("{} on {} at {} ps", design.top, lib.name, clock_ps);
    let (drive_cell, drive_pin, load) = match &lib.tech {
        Some(t) => (t.drive_cell, t.drive_pin, format!("{}", t.load_ff)),
        None => ("", "", String::new()),
    };
    // Power runs of a gated netlist: the ICGs' instance names (gating.rs).
    let n_icg = mapped.gating.as_ref().map_or(0, |g| g.icgs);
    let (icg_clk, icg_gclk) = lib.tech.as_ref().map_or(("", ""), |t| (t.icg.clock_pin, t.icg.gated_clock_pin));
    let icg_disable: Vec<String> =
        if activity.pins.is_empty() { vec![] } else { (0..n_icg).map(|k| format!("mlugen_icg{k}")).collect() };
    let script = StaScript {
        what: &what,
        time_unit: format!("{} ps", lib.time_unit_ps),
        lib: abs(&lib.path)?,
        netlist: abs(&mapped.netlist)?,
        top: &design.top,
        clock: &design.clock,
        period: format!("{period}"),
        drive_cell,
        drive_pin,
        load,
        activity: &activity.pins,
        input_activity: &activity.inputs,
        icg_disable,
        icg_clk,
        icg_gclk,
    }
    .render()?;
    let tcl = mapped.dir.join(format!("sta{tag}.tcl"));
    std::fs::write(&tcl, script)?;
    let log = mapped.dir.join(format!("sta{tag}.log"));
    let text = tools::run("sta", &["-no_init", "-no_splash", "-exit", &abs(&tcl)?], &mapped.dir, &log, &format!("{} (script {})", mapped.netlist.display(), tcl.display()))?;
    tools::parse_sta(&text, lib.time_unit_ps, clock_ps).with_context(|| format!("reading OpenSTA output {}", log.display()))
}

/// Area of one block of the design (from the hierarchical run).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BlockArea {
    pub block: String,
    pub area_um2: f64,
    pub cells: u64,
    pub flip_flops: u64,
}

/// Group per-module statistics into blocks: `classify(module)` names the
/// block of each module (first the module's own cells; sub-module instances
/// carry no area).
pub fn blocks(mods: &[ModuleStat], lib: &Library, classify: &dyn Fn(&str) -> String) -> Vec<BlockArea> {
    let mut out: Vec<BlockArea> = Vec::new();
    for m in mods {
        let b = classify(&m.name);
        let (mut cells, mut ffs) = (0, 0);
        for (c, n) in &m.cells {
            if lib.cell_area.contains_key(c) {
                cells += n;
                if lib.is_ff(c) {
                    ffs += n;
                }
            }
        }
        match out.iter_mut().find(|x| x.block == b) {
            Some(x) => {
                x.area_um2 += m.area;
                x.cells += cells;
                x.flip_flops += ffs;
            }
            None => out.push(BlockArea { block: b, area_um2: m.area, cells, flip_flops: ffs }),
        }
    }
    out.sort_by(|a, b| b.area_um2.partial_cmp(&a.area_um2).unwrap());
    out
}
