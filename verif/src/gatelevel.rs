//! Gate-level cosimulation of a mapped MLB: the netlist that `mlugen synth`
//! reports (Yosys + ABC, flattened, library cells only) runs under Verilator
//! with the same random cycle stimulus, harness and cycle-by-cycle golden
//! model comparison as the RTL MLB cosimulation ([`crate::cosim::run_mlb`]),
//! so a difference means synthesis changed behaviour.
//!
//! - The netlist comes from [`synth::flow::map`] (the flow's own script, the
//!   library's default clock target), never from a second copy of the flow.
//! - Cell behaviour comes from the Liberty file: the Verilog models Yosys
//!   writes from each cell's `function`, `ff` and `latch` groups
//!   ([`synth::activity::cell_models`], the ones the energy flow simulates
//!   with Icarus). Yosys writes nothing for a cell described by a
//!   `statetable`: an integrated clock gate (`clock_gating_integrated_cell`)
//!   gets a latch + AND model here ([`icg_model`]); any other cell without a
//!   model is an error naming the cell and an instance.
//! - The mutant ([`GateNetlist::mutant`]) swaps one two-input gate for its
//!   dual (NAND2 <-> NOR2, AND2 <-> OR2) near the `rs_hit` register, so the
//!   comparison is shown to catch a one-gate change.
use crate::cosim::{run_mlb_cycles, MlbRun, RunOptions};
use crate::harness::portvec_cpp;
use crate::verilator::{build_with_cxx_opt, BuildSpec, Built, Layout, PortSlot, Top};
use anyhow::{bail, Context, Result};
use sim::config::Replacement;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Instant;
use synth::activity::{self, Inst};
use synth::flow::{self, Design};
use synth::liberty::{LibSpec, Library};
use synth::sweep;

/// A mapped netlist with the models of the cells it uses, ready for
/// Verilator.
#[derive(Clone, Debug)]
pub struct GateNetlist {
    /// The RTL top it was mapped from (its manifest gives the ports).
    pub top: Top,
    pub lib: Library,
    pub netlist_path: PathBuf,
    pub netlist: String,
    /// Verilog modules of every cell type the netlist instantiates.
    pub models: String,
    /// Instances per cell type.
    pub cells: BTreeMap<String, u64>,
    pub flip_flops: u64,
    pub area_um2: f64,
    /// Clock target given to ABC (ps).
    pub clock_ps: f64,
    /// Cell types modelled here as integrated clock gates.
    pub icg_cells: Vec<String>,
    /// Wall time of the Yosys/ABC mapping.
    pub map_seconds: f64,
}

/// Map the committed `entries`-entry MLB to `spec` in `work` (created; the
/// flow's scripts, logs and `netlist.v` stay there).
pub fn map_mlb(entries: usize, replacement: Replacement, spec: &LibSpec, work: &Path) -> Result<GateNetlist> {
    let top = crate::cosim::mlb_top(entries, replacement)?;
    let out = crate::verilator::verilog_out_dir().ok_or_else(|| anyhow::anyhow!("the gate-level MLB run reads verilog_out/ of the source tree"))?;
    let design = sweep::resolve(&out, &sim::top::TopKind::Mlb { entries, replacement, hit_latency: 1 })?.design;
    if design.top != top.name() {
        bail!("verilog_out/ resolves a {entries}-entry MLB to {}, the cosimulation to {}", design.top, top.name());
    }
    let lib = sweep::library(spec)?;
    map_design(top, &design, lib, sweep::default_clock_ps(spec), work)
}

/// Map `design` (whose top is `top`) to `lib` at `clock_ps` in `work`.
pub fn map_design(top: Top, design: &Design, lib: Library, clock_ps: f64, work: &Path) -> Result<GateNetlist> {
    let t0 = Instant::now();
    let (mapped, _) = flow::map(design, &lib, clock_ps, work, true)?;
    let map_seconds = t0.elapsed().as_secs_f64();
    let netlist = std::fs::read_to_string(&mapped.netlist).with_context(|| format!("reading {}", mapped.netlist.display()))?;
    let (_, insts) = activity::parse_netlist(&netlist).with_context(|| format!("parsing netlist {}", mapped.netlist.display()))?;
    if !netlist.contains(&format!("module {}(", top.name())) {
        bail!("netlist {} has no module {}", mapped.netlist.display(), top.name());
    }
    let mut cells = BTreeMap::new();
    for i in &insts {
        *cells.entry(i.cell.clone()).or_insert(0u64) += 1;
    }
    let (models, icg_cells) = cell_models(&lib, &insts, work)?;
    Ok(GateNetlist {
        top,
        lib,
        netlist_path: mapped.netlist.clone(),
        netlist,
        models,
        cells,
        flip_flops: mapped.flip_flops,
        area_um2: mapped.area_um2,
        clock_ps,
        icg_cells,
        map_seconds,
    })
}

/// The Verilog modules of the cell types `insts` use: Yosys's models of
/// the library (cached under `dir`), plus a latch + AND model for each
/// integrated clock gate. Returns the text and the ICG cell names.
pub fn cell_models(lib: &Library, insts: &[Inst], dir: &Path) -> Result<(String, Vec<String>)> {
    let path = activity::cell_models(lib, dir)?;
    let all = std::fs::read_to_string(&path).with_context(|| format!("reading cell models {}", path.display()))?;
    let modules = split_modules(&all);
    let used: BTreeSet<&str> = insts.iter().map(|i| i.cell.as_str()).collect();
    let mut lib_text: Option<String> = None;
    let mut out = format!("// Cell models of {} (Yosys read_liberty of {}; ICGs: mlugen gatelevel)\n", lib.name, lib.path.display());
    let mut icgs = Vec::new();
    for cell in used {
        let inst = insts.iter().find(|i| i.cell == cell).expect("a used cell has an instance");
        if lib_text.is_none() {
            lib_text = Some(synth::liberty::read_text(&lib.path)?);
        }
        let group = liberty_cell(lib_text.as_deref().unwrap(), cell);
        let Some(group) = group else {
            bail!("instance {} of the netlist uses cell {cell}, which {} does not define", inst.name, lib.path.display());
        };
        if let Some(kind) = attr(group, "clock_gating_integrated_cell") {
            out.push_str(&icg_model(cell, &kind, group).with_context(|| format!("cell {cell} of {}", lib.path.display()))?);
            icgs.push(cell.to_string());
            continue;
        }
        match modules.get(cell) {
            Some(m) => {
                out.push_str(m);
                out.push('\n');
            }
            None => bail!(
                "no behavioural model for cell {cell} (instance {}): Yosys writes none for a Liberty cell without function/ff/latch groups (a statetable?), and it is not an integrated clock gate; {} ",
                inst.name,
                lib.path.display()
            ),
        }
    }
    Ok((out, icgs))
}

/// `module NAME(...) ... endmodule` texts by name.
fn split_modules(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut rest = text;
    while let Some(at) = rest.find("\nmodule ").map(|a| a + 1).or_else(|| rest.starts_with("module ").then_some(0)) {
        let body = &rest[at..];
        let Some(end) = body.find("endmodule") else { break };
        let m = &body[..end + "endmodule".len()];
        let name: String = m["module ".len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        out.insert(name, m.to_string());
        rest = &body[end..];
    }
    out
}

/// The body of Liberty group `cell (name)`, brace-matched.
fn liberty_cell<'a>(lib: &'a str, name: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(rel) = lib[from..].find("cell") {
        let at = from + rel;
        from = at + 4;
        let before_ok = at == 0 || !(lib.as_bytes()[at - 1].is_ascii_alphanumeric() || lib.as_bytes()[at - 1] == b'_');
        let rest = lib[at + 4..].trim_start();
        let Some(arg) = rest.strip_prefix('(') else { continue };
        let Some(close) = arg.find(')') else { continue };
        if !before_ok || arg[..close].trim().trim_matches('"') != name {
            continue;
        }
        let open = at + lib[at..].find('{')?;
        return group_end(lib, open).map(|e| &lib[open..e]);
    }
    None
}

/// Index one past the `}` closing the group opened at `open`.
fn group_end(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (k, ch) in text[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// `name : value;` anywhere in `text` (first occurrence, quotes removed;
/// several attributes may share a line).
fn attr(text: &str, name: &str) -> Option<String> {
    text.split(['\n', ';', '{', '}']).find_map(|l| {
        let rest = l.trim().strip_prefix(name)?.trim_start().strip_prefix(':')?;
        Some(rest.trim().trim_matches('"').to_string())
    })
}

/// The `pin (X)` groups of a cell: (name, body).
fn pins(cell: &str) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = cell[from..].find("pin") {
        let at = from + rel;
        from = at + 3;
        let b = cell.as_bytes();
        let before_ok = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        let rest = cell[at + 3..].trim_start();
        let Some(arg) = rest.strip_prefix('(') else { continue };
        let Some(close) = arg.find(')') else { continue };
        if !before_ok {
            continue;
        }
        let Some(open) = cell[at..].find('{').map(|o| at + o) else { continue };
        let Some(end) = group_end(cell, open) else { continue };
        out.push((arg[..close].trim().trim_matches('"').to_string(), &cell[open..end]));
        from = end;
    }
    out
}

/// A Verilog model of an integrated clock gate from its Liberty pin roles:
/// a latch open while the clock is low captures the enable (ORed with the
/// test enable for `*_precontrol`), and the gated clock is clock AND latch
/// (`latch_posedge*` cells, the only kind the shipped libraries have).
pub fn icg_model(cell: &str, kind: &str, group: &str) -> Result<String> {
    let ps = pins(group);
    let role = |a: &str| -> Option<String> { ps.iter().find(|(_, b)| attr(b, a).as_deref() == Some("true")).map(|(n, _)| n.clone()) };
    let clk = role("clock_gate_clock_pin").context("no clock_gate_clock_pin")?;
    let en = role("clock_gate_enable_pin").context("no clock_gate_enable_pin")?;
    let gck = role("clock_gate_out_pin").context("no clock_gate_out_pin")?;
    let test = role("clock_gate_test_pin");
    let (latched, after) = match (kind, &test) {
        ("latch_posedge", None) => (en.clone(), None),
        ("latch_posedge_precontrol", Some(t)) => (format!("{en} | {t}"), None),
        ("latch_posedge_postcontrol", Some(t)) => (en.clone(), Some(t.clone())),
        _ => bail!("integrated clock gate of kind {kind:?} with test pin {test:?} is not modelled (latch_posedge, latch_posedge_precontrol and latch_posedge_postcontrol are)"),
    };
    let mut ports = vec![clk.clone(), en.clone(), gck.clone()];
    ports.extend(test.iter().cloned());
    let inputs: Vec<&String> = ports.iter().filter(|p| **p != gck).collect();
    let ins = inputs.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
    let gated = match after {
        Some(t) => format!("{clk} & (en_latch | {t})"),
        None => format!("{clk} & en_latch"),
    };
    Ok(format!(
        "// Integrated clock gate {cell} ({kind}), from its Liberty pin roles.\nmodule {cell}({});\n  input {ins};\n  output {gck};\n  reg en_latch;\n  // Transparent while the clock is low: the enable is stable before the edge.\n  always @*\n    if (!{clk}) en_latch = {latched};\n  assign {gck} = {gated};\nendmodule\n",
        ports.join(", ")
    ))
}

/// A one-gate mutant of the netlist.
#[derive(Clone, Debug)]
pub struct Mutant {
    pub netlist: String,
    pub instance: String,
    pub from: String,
    pub to: String,
}

/// The dual of a two-input gate with the same pins (`NAND2_X1` ->
/// `NOR2_X1`, `AND2x2_ASAP7_75t_R` -> `OR2x2_ASAP7_75t_R`), if `lib` has it.
fn dual(cell: &str, lib: &Library) -> Option<String> {
    for (a, b) in [("NAND2", "NOR2"), ("NOR2", "NAND2"), ("AND2", "OR2"), ("OR2", "AND2")] {
        if let Some(rest) = cell.strip_prefix(a) {
            let d = format!("{b}{rest}");
            if lib.cell_area.contains_key(&d) {
                return Some(d);
            }
        }
    }
    None
}

impl GateNetlist {
    /// Netlist and cell models as one Verilog text.
    pub fn verilog(&self) -> String {
        format!("{}\n{}", self.netlist, self.models)
    }

    pub fn instances(&self) -> u64 {
        self.cells.values().sum()
    }

    /// Swap the `skip`-th two-input gate (in breadth-first order backwards
    /// from the D input of the flip-flop that drives output `port`) for its
    /// dual. Net drivers are found from the output pins the cell models
    /// declare.
    pub fn mutant(&self, port: &str, skip: usize) -> Result<Mutant> {
        let (_, insts) = activity::parse_netlist(&self.netlist)?;
        let outputs = model_outputs(&self.models);
        let mut driver: HashMap<&str, usize> = HashMap::new();
        for (k, i) in insts.iter().enumerate() {
            let outs = outputs.get(&i.cell).with_context(|| format!("no model for cell {}", i.cell))?;
            for (p, n) in &i.pins {
                if outs.contains(p) {
                    driver.insert(n.as_str(), k);
                }
            }
        }
        // The output port's bit 0 net (a scalar port is its own name).
        let start = driver
            .get(port)
            .or_else(|| driver.get(format!("{port}[0]").as_str()))
            .copied()
            .with_context(|| format!("no cell drives output {port} in {}", self.netlist_path.display()))?;
        let mut seen = BTreeSet::from([start]);
        let mut queue = VecDeque::from([start]);
        let mut found = 0;
        while let Some(k) = queue.pop_front() {
            let inst = &insts[k];
            if let Some(d) = dual(&inst.cell, &self.lib) {
                if found == skip {
                    return self.swap(inst, &d);
                }
                found += 1;
            }
            let outs = &outputs[&inst.cell];
            for (p, n) in &inst.pins {
                if outs.contains(p) {
                    continue;
                }
                if let Some(&j) = driver.get(n.as_str()) {
                    if seen.insert(j) {
                        queue.push_back(j);
                    }
                }
            }
        }
        bail!("fewer than {} two-input gates with a dual in the fan-in of {port}", skip + 1)
    }

    fn swap(&self, inst: &Inst, to: &str) -> Result<Mutant> {
        let old = format!("  {} {} (", inst.cell, inst.name);
        if self.netlist.matches(&old).count() != 1 {
            bail!("instance line {old:?} is not unique in the netlist");
        }
        let new = format!("  {to} {} (", inst.name);
        Ok(Mutant { netlist: self.netlist.replacen(&old, &new, 1), instance: inst.name.clone(), from: inst.cell.clone(), to: to.to_string() })
    }

    /// The mutant's netlist with the cell models (the dual's model added).
    pub fn mutant_verilog(&self, m: &Mutant, work: &Path) -> Result<String> {
        let (_, insts) = activity::parse_netlist(&m.netlist)?;
        std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
        let (models, _) = cell_models(&self.lib, &insts, work)?;
        Ok(format!("{}\n{}", m.netlist, models))
    }

    /// Build (cached) the cycle harness for `verilog` (this netlist or a
    /// mutant's text); `variant` names the build, `opt` is the C++
    /// optimisation level (see [`build`]).
    pub fn build(&self, verilog: &str, variant: &str, opt: &str) -> Result<(Layout, Built)> {
        let layout = Layout::from_manifest(&self.top.manifest)?;
        let cpp = portvec_cpp(&layout)?;
        let name = format!("{}-gl-{}{variant}{opt}", self.top.name(), self.lib.name);
        Ok((layout, build(&name, self.top.name(), verilog, &cpp, opt)?))
    }

    /// Cosimulate `verilog` against the golden model for `opts.count` cycles
    /// of the MLB cosimulation's random stimulus (seed `opts.seed`),
    /// stopping at the first mismatch.
    pub fn run(&self, verilog: &str, variant: &str, opt: &str, entries: usize, replacement: Replacement, opts: &RunOptions) -> Result<MlbRun> {
        let (layout, built) = self.build(verilog, variant, opt)?;
        run_cycles(self.top.name(), layout, built, entries, replacement, opts, &[])
    }

    /// One build for the netlist and a mutant: `m`'s gate is instantiated
    /// both as mapped and as its dual, and a new top-level input
    /// [`MUTANT_SWITCH`] selects which one drives the gate's output net
    /// (`assign net = switch ? dual : mapped`). With the switch at 0 the
    /// netlist computes exactly the mapped function; the suite test uses this
    /// to save a second Verilator build of the flat netlist.
    pub fn switched_mutant(&self, m: &Mutant, work: &Path) -> Result<(Layout, String)> {
        let (_, insts) = activity::parse_netlist(&self.netlist)?;
        let inst = insts.iter().find(|i| i.name == m.instance).with_context(|| format!("no instance {}", m.instance))?;
        let outs = model_outputs(&self.models);
        let outs = outs.get(&inst.cell).with_context(|| format!("no model for {}", inst.cell))?;
        let (pin, net) = inst.pins.iter().find(|(p, _)| outs.contains(p)).with_context(|| format!("instance {} drives no net", inst.name))?;
        let conns = |o: &str| -> String {
            inst.pins.iter().map(|(p, n)| format!("    .{p}({})", if p == pin { o } else { n.as_str() })).collect::<Vec<_>>().join(",\n")
        };
        let start = format!("  {} {} (", inst.cell, inst.name);
        let at = self.netlist.find(&start).context("instance not found in the netlist text")?;
        let end = at + self.netlist[at..].find(");").context("unterminated instance")? + 2;
        let replacement = format!(
            "  {} {} (\n{}\n  );\n  {} {}_mlugen_dual (\n{}\n  );\n  assign {net} = {MUTANT_SWITCH} ? mlugen_mutant_dual : mlugen_mutant_mapped;",
            inst.cell, inst.name, conns("mlugen_mutant_mapped"), m.to, inst.name, conns("mlugen_mutant_dual")
        );
        let mut text = format!("{}{}{}", &self.netlist[..at], replacement, &self.netlist[end..]);
        // The switch: first port of the top, and its declarations.
        let head = format!("module {}(", self.top.name());
        let h = text.find(&head).context("no top module header")?;
        let close = h + text[h..].find(");").context("unterminated module header")? + 2;
        text.insert_str(close, &format!("\n  input {MUTANT_SWITCH};\n  wire mlugen_mutant_mapped;\n  wire mlugen_mutant_dual;"));
        text.insert_str(h + head.len(), &format!("{MUTANT_SWITCH}, "));
        let mut manifest = self.top.manifest.clone();
        manifest.ports.push(hw::manifest::Port { name: MUTANT_SWITCH.into(), direction: "input".into(), width: 1, meaning: "mutant switch (test only)".into() });
        let layout = Layout::from_manifest(&manifest)?;
        let (_, insts) = activity::parse_netlist(&text)?;
        std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
        let (models, _) = cell_models(&self.lib, &insts, work)?;
        Ok((layout, format!("{text}\n{models}")))
    }

    /// Run the switched build (see [`Self::switched_mutant`]) with the
    /// switch at `on`.
    #[allow(clippy::too_many_arguments)]
    pub fn run_switched(&self, layout: &Layout, verilog: &str, on: bool, opt: &str, entries: usize, replacement: Replacement, opts: &RunOptions) -> Result<MlbRun> {
        let name = format!("{}-gl-{}-switched{opt}", self.top.name(), self.lib.name);
        let built = build(&name, self.top.name(), verilog, &portvec_cpp(layout)?, opt)?;
        run_cycles(self.top.name(), layout.clone(), built, entries, replacement, opts, &[(MUTANT_SWITCH, on as u64)])
    }
}

/// Build the harness `cpp` with `verilog` (top `top_module`) with C++
/// optimisation `opt` ("-O0", "-O1", ...) unless the same build is cached:
/// the RTL cosimulation's build ([`crate::verilator::build_with_cxx_opt`])
/// with a lower C++ optimisation, which is the cost of a flat netlist:
/// Verilator inlines every cell instance into ~10 MB of C++ (8-entry MLB,
/// Nangate45), which g++ compiles in about 18 s at -O0, 50 s at -O1 and 100 s
/// at the RTL build's -Os on 2 cores.
pub fn build(name: &str, top_module: &str, verilog: &str, cpp: &str, opt: &str) -> Result<Built> {
    let spec = BuildSpec { name: name.to_string(), top_module: top_module.to_string(), verilog, cpp: cpp.to_string(), trace: false };
    build_with_cxx_opt(&spec, Some(opt))
}

/// The MLB cycle comparison of [`crate::cosim::run_mlb`] on a given build
/// ([`crate::cosim::run_mlb_cycles`]). `force` holds inputs outside the
/// MLB's ports (the mutant switch) at a value in every cycle.
pub fn run_cycles(top: &str, layout: Layout, built: Built, entries: usize, replacement: Replacement, opts: &RunOptions, force: &[(&str, u64)]) -> Result<MlbRun> {
    let force: Vec<(PortSlot, u64)> = force.iter().map(|(n, v)| Ok((layout.input(n)?, *v))).collect::<Result<_>>()?;
    let opts = RunOptions { batch: opts.batch.max(1), ..opts.clone() };
    run_mlb_cycles(top, layout, built, entries, replacement, &opts, &force)
}

/// The input that selects the mutant gate in [`GateNetlist::switched_mutant`].
pub const MUTANT_SWITCH: &str = "mlugen_mutant";

/// Output pin names of every module in `models`.
fn model_outputs(models: &str) -> HashMap<String, Vec<String>> {
    split_modules(models)
        .into_iter()
        .map(|(name, text)| {
            let outs = text
                .lines()
                .filter_map(|l| l.trim().strip_prefix("output "))
                .flat_map(|r| r.trim_end_matches(';').split(',').map(|s| s.trim().to_string()).collect::<Vec<_>>())
                .collect();
            (name, outs)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icg_model_from_pin_roles() {
        let cell = r#"cell (ICG) { clock_gating_integrated_cell : "latch_posedge_precontrol";
  pin (CLK) { clock_gate_clock_pin : true; direction : input; }
  pin (ENA) { clock_gate_enable_pin : true; }
  pin (SE) { clock_gate_test_pin : true; }
  pin (GCLK) { clock_gate_out_pin : true; state_function : "CLK * IQ"; }
}"#;
        let m = icg_model("ICG", "latch_posedge_precontrol", cell).unwrap();
        assert!(m.contains("module ICG(CLK, ENA, GCLK, SE);"), "{m}");
        assert!(m.contains("if (!CLK) en_latch = ENA | SE;"), "{m}");
        assert!(m.contains("assign GCLK = CLK & en_latch;"), "{m}");
        assert!(icg_model("ICG", "latch_negedge", cell).is_err());
    }

    #[test]
    fn modules_split_and_outputs() {
        let t = "// x\nmodule A(a, y);\n  input a;\n  output y;\nendmodule\nmodule B_1(a, q, qn);\n  output q;\n  output qn;\nendmodule\n";
        let o = model_outputs(t);
        assert_eq!(o["A"], vec!["y"]);
        assert_eq!(o["B_1"], vec!["q", "qn"]);
    }
}
