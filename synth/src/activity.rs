//! Workload-derived switching activity for OpenSTA's power report.
//!
//! Method (docs/synth.md, "Energy"): the *mapped, flattened* netlist is
//! simulated at gate level with Icarus Verilog (cell models written by Yosys
//! from the same Liberty file) under a cycle-by-cycle input stimulus; after
//! a warm-up the testbench dumps a VCD of every net of the netlist for the
//! measured cycles. For each top-level input bit and each flip-flop output
//! pin, toggles per clock cycle and the fraction of time at 1 are applied
//! with `sta::set_power_pin_activity` (OpenSTA 2.0.17 honours activity only
//! there and propagates it probabilistically through the logic).
use crate::flow::{Activity, PinActivity};
use crate::liberty::Library;
use crate::tools;
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One port of the netlist's top module.
#[derive(Clone, Debug, PartialEq)]
pub struct Port {
    pub name: String,
    pub input: bool,
    pub width: usize,
}

/// One cell instance: type, name, pin -> net.
#[derive(Clone, Debug)]
pub struct Inst {
    pub cell: String,
    pub name: String,
    pub pins: Vec<(String, String)>,
}

/// Ports and instances of a Yosys `write_verilog -noattr` netlist.
pub fn parse_netlist(text: &str) -> Result<(Vec<Port>, Vec<Inst>)> {
    let mut ports = Vec::new();
    let mut insts = Vec::new();
    let mut cur: Option<Inst> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(inst) = cur.as_mut() {
            if t.starts_with(");") {
                insts.push(cur.take().unwrap());
                continue;
            }
            // `.PIN(NET),`
            if let Some(rest) = t.strip_prefix('.') {
                let open = rest.find('(').context("netlist: bad pin connection")?;
                let close = rest.rfind(')').context("netlist: bad pin connection")?;
                inst.pins.push((rest[..open].trim().to_string(), rest[open + 1..close].trim().to_string()));
            }
            continue;
        }
        let decl = t.strip_prefix("input ").map(|r| (true, r)).or_else(|| t.strip_prefix("output ").map(|r| (false, r)));
        if let Some((input, rest)) = decl {
            let rest = rest.trim_end_matches(';').trim();
            let (width, name) = if let Some(r) = rest.strip_prefix('[') {
                let close = r.find(']').context("netlist: bad port range")?;
                let (h, l) = r[..close].split_once(':').context("netlist: bad port range")?;
                let h: usize = h.trim().parse()?;
                let l: usize = l.trim().parse()?;
                (h.max(l) - h.min(l) + 1, r[close + 1..].trim())
            } else {
                (1, rest)
            };
            ports.push(Port { name: name.trim_start_matches('\\').trim().to_string(), input, width });
            continue;
        }
        // `CELL NAME (` starts an instance.
        if t.ends_with('(') && !t.starts_with("module") {
            let mut w = t.trim_end_matches('(').split_whitespace();
            if let (Some(cell), Some(name), None) = (w.next(), w.next(), w.next()) {
                cur = Some(Inst { cell: cell.to_string(), name: name.to_string(), pins: Vec::new() });
            }
        }
    }
    if ports.is_empty() {
        bail!("netlist has no ports");
    }
    Ok((ports, insts))
}

/// A net reference of the netlist split into (base name, bit): `_12_` ->
/// ("_12_", None), `\a.b [3]` -> ("a.b", Some(3)), `addr[3]` -> ("addr", Some(3)).
pub fn split_net(net: &str) -> (String, Option<usize>) {
    let n = net.trim();
    if let Some(esc) = n.strip_prefix('\\') {
        // Escaped identifier ends at the first space.
        return match esc.split_once(' ') {
            Some((base, idx)) => (base.to_string(), idx.trim().trim_start_matches('[').trim_end_matches(']').parse().ok()),
            None => (esc.to_string(), None),
        };
    }
    if let (Some(o), true) = (n.rfind('['), n.ends_with(']')) {
        if let Ok(i) = n[o + 1..n.len() - 1].parse() {
            return (n[..o].to_string(), Some(i));
        }
    }
    (n.to_string(), None)
}

/// Per-bit toggle counts and time at 1 from a VCD, for the variables of the
/// scope `scope` (dotted path, e.g. "tb.dut") only, between the first
/// timestamp and `end`.
#[derive(Debug, Default)]
pub struct Toggles {
    /// (base name, bit or None for a scalar) -> (toggles, time at 1)
    pub bits: HashMap<(String, Option<usize>), (u64, u64)>,
    pub start: u64,
    pub end: u64,
}

pub fn parse_vcd(text: &str, scope: &str) -> Result<Toggles> {
    struct Var {
        name: String,
        width: usize,
        lsb: usize,
        last: Vec<u8>,
        since: Vec<u64>,
        toggles: Vec<u64>,
        high: Vec<u64>,
    }
    let mut vars: Vec<Var> = Vec::new();
    let mut by_id: HashMap<String, Vec<usize>> = HashMap::new();
    let mut stack: Vec<String> = Vec::new();
    let mut toks = text.split_whitespace();
    let mut now: u64 = 0;
    let mut start: Option<u64> = None;
    let apply = |vars: &mut Vec<Var>, ids: &[usize], val: &str, now: u64| {
        for &vi in ids {
            let v = &mut vars[vi];
            let bytes = val.as_bytes();
            for b in 0..v.width {
                // VCD vectors are MSB first and may be left-truncated
                // (extended with 0, or with x/z when that leads).
                let c = if b < bytes.len() {
                    bytes[bytes.len() - 1 - b]
                } else if matches!(bytes.first(), Some(b'x' | b'z' | b'X' | b'Z')) {
                    bytes[0]
                } else {
                    b'0'
                };
                let c = c.to_ascii_lowercase();
                let old = v.last[b];
                if old == b'1' {
                    v.high[b] += now - v.since[b];
                }
                if (old == b'0' && c == b'1') || (old == b'1' && c == b'0') {
                    v.toggles[b] += 1;
                }
                v.last[b] = c;
                v.since[b] = now;
            }
        }
    };
    while let Some(tok) = toks.next() {
        match tok {
            "$scope" => {
                toks.next();
                stack.push(toks.next().context("VCD: $scope without name")?.to_string());
            }
            "$upscope" => {
                stack.pop();
            }
            "$var" => {
                let _kind = toks.next();
                let width: usize = toks.next().context("VCD: $var width")?.parse()?;
                let id = toks.next().context("VCD: $var id")?.to_string();
                let mut name = toks.next().context("VCD: $var name")?.to_string();
                let mut lsb = 0;
                let mut rest: Vec<&str> = Vec::new();
                for t in toks.by_ref() {
                    if t == "$end" {
                        break;
                    }
                    rest.push(t);
                }
                if let Some(r) = rest.first() {
                    if let Some(r) = r.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                        lsb = r.split(':').last().unwrap_or("0").parse().unwrap_or(0);
                    }
                } else if name.ends_with(']') && width > 1 {
                    if let Some(o) = name.rfind('[') {
                        lsb = name[o + 1..name.len() - 1].split(':').last().unwrap_or("0").parse().unwrap_or(0);
                        name.truncate(o);
                    }
                }
                if stack.join(".") == scope {
                    let name = name.trim_start_matches('\\').to_string();
                    by_id.entry(id).or_default().push(vars.len());
                    vars.push(Var { name, width, lsb, last: vec![b'x'; width], since: vec![0; width], toggles: vec![0; width], high: vec![0; width] });
                }
            }
            t if t.starts_with('#') => {
                now = t[1..].parse().context("VCD: bad timestamp")?;
                start.get_or_insert(now);
            }
            t if t.starts_with('b') || t.starts_with('B') || t.starts_with('r') => {
                let id = toks.next().context("VCD: vector change without id")?;
                if let Some(ids) = by_id.get(id) {
                    let ids = ids.clone();
                    apply(&mut vars, &ids, &t[1..], now);
                }
            }
            t if t.starts_with('$') => {
                // $date, $version, $timescale, $dumpvars, $end, ...: skip
                // the keyword only; the scalar/vector changes inside
                // $dumpvars are values like any other.
                if matches!(t, "$date" | "$version" | "$timescale" | "$comment") {
                    for t in toks.by_ref() {
                        if t == "$end" {
                            break;
                        }
                    }
                }
            }
            t => {
                let (v, id) = t.split_at(1);
                if matches!(v, "0" | "1" | "x" | "z" | "X" | "Z") {
                    if let Some(ids) = by_id.get(id) {
                        let ids = ids.clone();
                        apply(&mut vars, &ids, v, now);
                    }
                }
            }
        }
    }
    let mut out = Toggles { start: start.unwrap_or(0), end: now, ..Default::default() };
    for v in &vars {
        for b in 0..v.width {
            let mut high = v.high[b];
            if v.last[b] == b'1' {
                high += now - v.since[b];
            }
            let key = (v.name.clone(), if v.width == 1 && v.lsb == 0 { None } else { Some(v.lsb + b) });
            out.bits.insert(key, (v.toggles[b], high));
        }
    }
    Ok(out)
}

/// A cycle-by-cycle input stimulus: before each rising clock edge the given
/// input ports take the given values (ports not named keep their value;
/// every input starts at 0). Only cycles `warmup..` are measured.
///
/// `expect` (empty, or one entry per cycle) holds output values recorded
/// from the RTL under the same inputs (verif/src/recorder.rs): the
/// gate-level run compares them, 4-state (`!==`, so an x is a difference),
/// just before that cycle's rising edge, where the RTL harness sampled them,
/// and any difference is an error. That makes a replayed recording an
/// equivalence check of the netlist on that run.
#[derive(Clone, Debug, Default)]
pub struct Stimulus {
    pub cycles: Vec<Vec<(String, u128)>>,
    pub warmup: usize,
    /// What one measured operation is, for reports ("one hit lookup").
    pub op: String,
    /// Operations per measured cycle (energy/op = power x period / this).
    pub ops_per_cycle: f64,
    /// Per cycle: (output port, value the RTL drove) pairs to compare.
    pub expect: Vec<Vec<(String, u128)>>,
    /// Facts about the run for the report, e.g. ("nodes_per_op", 7.0).
    pub facts: Vec<(String, f64)>,
}

/// One difference between the gate-level outputs and the recorded RTL ones.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    pub cycle: usize,
    pub port: String,
    /// The gate-level value as Icarus prints it (hex, x/z digits possible).
    pub gate: String,
    pub rtl: u128,
}

/// The `MLUGEN_MISMATCH cycle port gate rtl` lines of a gate-level log
/// (values in hex; the gate value may hold x digits).
pub fn parse_mismatches(log: &str) -> Vec<Mismatch> {
    log.lines()
        .filter_map(|l| {
            let mut w = l.strip_prefix("MLUGEN_MISMATCH ")?.split_whitespace();
            let cycle = w.next()?.parse().ok()?;
            let port = w.next()?.to_string();
            let gate = w.next()?.to_string();
            let rtl = u128::from_str_radix(w.next()?, 16).ok()?;
            Some(Mismatch { cycle, port, gate, rtl })
        })
        .collect()
}

/// Verilog cell models of a library, written by Yosys (cached in `dir`).
pub fn cell_models(lib: &Library, dir: &Path) -> Result<PathBuf> {
    let out = dir.join(format!("{}_cells.v", lib.name));
    if out.is_file() {
        return Ok(out);
    }
    let log = dir.join(format!("{}_cells.log", lib.name));
    // A temporary name per process and call: concurrent runs (the energy
    // workloads of one top run side by side) may share the cache.
    static PARTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let part = PARTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!("{}_cells.v.{}-{part}.part", lib.name, std::process::id()));
    let cmd = format!("read_liberty -ignore_miss_func {}; write_verilog -noattr {}", lib.path.display(), tmp.display());
    tools::run("yosys", &["-q", "-p", &cmd], dir, &log, &format!("cell models of {}", lib.path.display()))?;
    std::fs::rename(&tmp, &out)?;
    Ok(out)
}

/// Simulate `netlist` under `stim` and return the activity of its inputs
/// and flip-flop outputs, plus the number of measured cycles.
pub fn measure(
    lib: &Library,
    netlist: &Path,
    top: &str,
    clock: &str,
    clock_ps: f64,
    stim: &Stimulus,
    dir: &Path,
    models_dir: &Path,
    tag: &str,
) -> Result<(Activity, usize)> {
    let text = std::fs::read_to_string(netlist).with_context(|| format!("reading {}", netlist.display()))?;
    let (ports, insts) = parse_netlist(&text).with_context(|| format!("parsing netlist {}", netlist.display()))?;
    if !ports.iter().any(|p| p.name == clock && p.input) {
        bail!("netlist {} has no clock input {clock:?}", netlist.display());
    }
    if stim.cycles.len() <= stim.warmup {
        bail!("stimulus has no measured cycles");
    }
    let models = cell_models(lib, models_dir)?;
    // Clock-gated netlists need a model of the ICG cell (gating.rs).
    let icg = lib.tech.as_ref().map(|t| t.icg.clone()).filter(|i| insts.iter().any(|x| x.cell == i.cell));
    let icg_model = match &icg {
        Some(i) => {
            // One per run: the runs of one netlist go side by side.
            let p = dir.join(format!("{}_model{tag}.v", i.cell));
            std::fs::write(&p, crate::gating::icg_model(i))?;
            Some(p)
        }
        None => None,
    };
    let half = (clock_ps / 2.0).round().max(1.0) as u64;
    let mut tb = String::new();
    writeln!(tb, "`timescale 1ps/1ps\n// Rendered by mlugen synth: gate-level activity testbench ({}).\nmodule mlugen_activity_tb;", stim.op)?;
    for p in &ports {
        let range = if p.width > 1 { format!("[{}:0] ", p.width - 1) } else { String::new() };
        if p.input {
            writeln!(tb, "  reg {range}{} = 0;", p.name)?;
        } else {
            writeln!(tb, "  wire {range}{};", p.name)?;
        }
    }
    let conns: Vec<String> = ports.iter().map(|p| format!(".{0}({0})", p.name)).collect();
    writeln!(tb, "  {top} dut({});", conns.join(", "))?;
    // Ports the gate-level run does not fully know (an x bit: flip-flops
    // without a reset that nothing has written yet, e.g. a response
    // register before the first response, or an address computed from
    // one) are counted, not compared: the RTL starts those registers at
    // an initial or random value, which the mapped flops do not have. Every
    // fully known port must match.
    writeln!(
        tb,
        "  integer mlugen_unknown = 0;
  task mlugen_chk(input integer cyc, input [127:0] got, input [127:0] exp, input integer w, input [8*64:1] name);
    begin
      if (^got === 1'bx) mlugen_unknown = mlugen_unknown + 1;
      else $display(\"MLUGEN_MISMATCH %0d %0s %h %h\", cyc, name, got, exp);
    end
  endtask"
    )?;
    writeln!(tb, "  initial begin")?;
    let vcd = dir.join(format!("activity{tag}.vcd"));
    if !stim.expect.is_empty() && stim.expect.len() != stim.cycles.len() {
        bail!("stimulus has {} cycles but {} cycles of expected outputs", stim.cycles.len(), stim.expect.len());
    }
    let mut checks = 0usize;
    for (i, cyc) in stim.cycles.iter().enumerate() {
        if i == stim.warmup {
            writeln!(tb, "    $dumpfile(\"{}\");\n    $dumpvars(1, dut);", vcd.display())?;
        }
        for (name, v) in cyc {
            let p = ports
                .iter()
                .find(|p| &p.name == name && p.input)
                .with_context(|| format!("stimulus drives {name:?}, which is not an input of {top} in {}", netlist.display()))?;
            if p.width > 128 {
                bail!("input {name} is {} bits wide; the stimulus takes at most 128", p.width);
            }
            if p.width < 128 && *v >> p.width != 0 {
                bail!("stimulus value {v:#x} does not fit the {}-bit input {name}", p.width);
            }
            writeln!(tb, "    {name} = {}'h{v:x};", p.width)?;
        }
        let exp = stim.expect.get(i).map(|e| e.as_slice()).unwrap_or_default();
        if exp.is_empty() {
            writeln!(tb, "    #{half} {clock} = 1; #{half} {clock} = 0;")?;
            continue;
        }
        // Compare where the RTL harness sampled: inputs settled, clock low,
        // just before the rising edge.
        writeln!(tb, "    #{}", half.max(2) - 1)?;
        for (name, v) in exp {
            let p = ports
                .iter()
                .find(|p| &p.name == name && !p.input)
                .with_context(|| format!("recorded output {name:?} is not an output of {top} in {}", netlist.display()))?;
            if p.width > 128 || (p.width < 128 && *v >> p.width != 0) {
                bail!("recorded value {v:#x} does not fit the {}-bit output {name}", p.width);
            }
            writeln!(tb, "    if ({name} !== {w}'h{v:x}) mlugen_chk({i}, {name}, {w}'h{v:x}, {w}, \"{name}\");", w = p.width)?;
            checks += 1;
        }
        writeln!(tb, "    #1 {clock} = 1; #{half} {clock} = 0;")?;
    }
    writeln!(tb, "    $display(\"MLUGEN_DONE %0d\", mlugen_unknown);\n    $finish;\n  end\nendmodule")?;
    let tbp = dir.join(format!("activity_tb{tag}.v"));
    std::fs::write(&tbp, tb)?;
    let simp = dir.join(format!("activity{tag}.vvp"));
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut args = vec!["-o".to_string(), s(&simp), "-s".into(), "mlugen_activity_tb".into(), s(&tbp), s(netlist), s(&models)];
    args.extend(icg_model.iter().map(|p| s(p)));
    let args: Vec<&str> = args.iter().map(|a| a.as_str()).collect();
    tools::run("iverilog", &args, dir, &dir.join(format!("iverilog{tag}.log")), &format!("gate-level testbench {}", tbp.display()))?;
    let vvp_log = dir.join(format!("vvp{tag}.log"));
    let log = tools::run("vvp", &["-n", &s(&simp)], dir, &vvp_log, &format!("gate-level simulation {}", simp.display()))?;
    let mm = parse_mismatches(&log);
    if let Some(m) = mm.first() {
        let _ = std::fs::remove_file(&simp);
        bail!(
            "gate-level netlist {} disagrees with the recorded RTL outputs ({}): {} of {checks} compared port-cycles differ; first at cycle {} port {}: gate {}, RTL {:x} (testbench {}, log {})",
            netlist.display(),
            stim.op,
            mm.len(),
            m.cycle,
            m.port,
            m.gate,
            m.rtl,
            tbp.display(),
            vvp_log.display()
        );
    }
    let unknown: usize = match log.lines().find_map(|l| l.strip_prefix("MLUGEN_DONE ")) {
        Some(n) => n.trim().parse().with_context(|| format!("{}: bad MLUGEN_DONE line", vvp_log.display()))?,
        None => bail!("gate-level simulation {} stopped before its end (log {})", simp.display(), vvp_log.display()),
    };
    // The compiled simulation is large (tens of MB) and not needed again.
    let _ = std::fs::remove_file(&simp);
    let vtext = std::fs::read_to_string(&vcd).with_context(|| format!("simulation wrote no VCD {}", vcd.display()))?;
    let tog = parse_vcd(&vtext, "mlugen_activity_tb.dut")?;
    let measured = stim.cycles.len() - stim.warmup;
    let span = (tog.end - tog.start).max(1) as f64;
    let act = |key: &(String, Option<usize>)| -> Option<(f64, f64)> {
        tog.bits.get(key).map(|(t, h)| (*t as f64 / measured as f64, (*h as f64 / span).clamp(0.0, 1.0)))
    };
    let mut out = Activity { rtl_checks: checks, rtl_unknown: unknown, ..Default::default() };
    // Input ports, bit by bit (the clock is OpenSTA's clock).
    for p in ports.iter().filter(|p| p.input && p.name != clock) {
        for b in 0..p.width {
            let key = (p.name.clone(), if p.width == 1 { None } else { Some(b) });
            let (a, d) = act(&key).with_context(|| format!("VCD lacks input {}[{b}]", p.name))?;
            let pin = if p.width == 1 { p.name.clone() } else { format!("{}[{b}]", p.name) };
            out.inputs.push(PinActivity { pin, activity: a, duty: d });
        }
    }
    for p in ports.iter().filter(|p| !p.input) {
        for b in 0..p.width {
            let key = (p.name.clone(), if p.width == 1 { None } else { Some(b) });
            if let Some((a, d)) = act(&key) {
                let pin = if p.width == 1 { p.name.clone() } else { format!("{}[{b}]", p.name) };
                out.outputs.push(PinActivity { pin, activity: a, duty: d });
            }
        }
    }
    // Every connected pin of every cell gets its net's measured activity
    // (docs/synth.md, "Energy per operation"). OpenSTA 2.0.17 keeps a
    // user activity only on pins its propagation does not reach: given
    // flip-flop outputs alone, its second pass overwrote them with the
    // probabilistic activity of the D input, and in deep cones that product
    // of duties underflowed to a subnormal float, which report_power then
    // divided by (NaN on the 32-entry ASAP7 MLB). With every D pin set
    // there is no second pass, and the cells no input reaches keep the
    // measured values.
    let (pins, missing) = cell_pin_activities(&insts, &act);
    out.pins = pins;
    if out.pins.is_empty() || !missing.is_empty() {
        bail!(
            "activity: {} cell pin nets not found in {} (e.g. {:?})",
            missing.len(),
            vcd.display(),
            missing.first()
        );
    }
    if let Some(bad) = out.pins.iter().chain(&out.inputs).find(|a| !(a.activity.is_finite() && a.activity >= 0.0 && (0.0..=1.0).contains(&a.duty))) {
        bail!("activity: pin {} has activity {} duty {} (from {})", bad.pin, bad.activity, bad.duty, vcd.display());
    }
    Ok((out, measured))
}

/// The measured activity of every connected pin of every cell (`cell/PIN`),
/// from `act` (per net: toggles per cycle, duty); tie-offs (`1'h0`) are
/// constant. Returns the pins and the nets `act` does not know.
pub fn cell_pin_activities(insts: &[Inst], act: &dyn Fn(&(String, Option<usize>)) -> Option<(f64, f64)>) -> (Vec<PinActivity>, Vec<String>) {
    let mut pins = Vec::new();
    let mut missing = Vec::new();
    for inst in insts {
        for (pin, net) in inst.pins.iter().filter(|(_, n)| !n.is_empty()) {
            let v = match net.as_str() {
                "1'h0" | "1'b0" => Some((0.0, 0.0)),
                "1'h1" | "1'b1" => Some((0.0, 1.0)),
                _ => act(&split_net(net)),
            };
            match v {
                Some((a, d)) => pins.push(PinActivity { pin: format!("{}/{}", inst.name, pin), activity: a, duty: d }),
                None => missing.push(net.clone()),
            }
        }
    }
    (pins, missing)
}

/// Mean activity, for reports.
pub fn mean(a: &[PinActivity]) -> f64 {
    if a.is_empty() {
        0.0
    } else {
        a.iter().map(|x| x.activity).sum::<f64>() / a.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_pin_gets_its_net_activity() {
        // A toggle flop: D = NOR(Q, rst). Before the fix only Q/QN/GCLK
        // were listed, and OpenSTA replaced Q by D's propagated activity.
        let nl = "module t(clock, rst, y);\n  input clock;\n  input rst;\n  output y;\n  DFF_X1 r (\n    .CK(clock),\n    .D(_1_),\n    .Q(y)\n  );\n  NOR2_X1 g (\n    .A1(y),\n    .A2(rst),\n    .ZN(_1_)\n  );\n  TIEL t0 (\n    .Z(1'h0)\n  );\nendmodule\n";
        let (_, insts) = parse_netlist(nl).unwrap();
        let act = |k: &(String, Option<usize>)| match k.0.as_str() {
            "y" => Some((1.0, 0.5)),
            "_1_" => Some((1.0, 0.5)),
            "rst" => Some((0.0, 0.0)),
            "clock" => Some((2.0, 0.5)),
            _ => None,
        };
        let (pins, missing) = cell_pin_activities(&insts, &act);
        assert!(missing.is_empty(), "{missing:?}");
        let get = |p: &str| pins.iter().find(|x| x.pin == p).map(|x| (x.activity, x.duty));
        assert_eq!(get("r/D"), Some((1.0, 0.5)));
        assert_eq!(get("r/Q"), Some((1.0, 0.5)));
        assert_eq!(get("g/A1"), Some((1.0, 0.5)));
        assert_eq!(get("g/A2"), Some((0.0, 0.0)));
        assert_eq!(get("g/ZN"), Some((1.0, 0.5)));
        assert_eq!(get("t0/Z"), Some((0.0, 0.0)));
        assert_eq!(pins.len(), 7);
        // A net the VCD lacks is reported, not defaulted.
        let none = |_: &(String, Option<usize>)| None;
        assert_eq!(cell_pin_activities(&insts, &none).1.len(), 6);
    }

    #[test]
    fn nets_split() {
        assert_eq!(split_net("_12_"), ("_12_".into(), None));
        assert_eq!(split_net("\\e[2].b.q [9]"), ("e[2].b.q".into(), Some(9)));
        assert_eq!(split_net("addr[3]"), ("addr".into(), Some(3)));
    }

    #[test]
    fn vcd_toggles_and_duty() {
        let v = "$timescale 1ps $end\n$scope module tb $end\n$scope module dut $end\n$var wire 1 ! a $end\n$var wire 3 \" v [2:0] $end\n$upscope $end\n$upscope $end\n$enddefinitions $end\n#0\n$dumpvars\n0!\nb0 \"\n$end\n#10\n1!\nb101 \"\n#20\n0!\nb100 \"\n#40\n";
        let t = parse_vcd(v, "tb.dut").unwrap();
        assert_eq!(t.bits[&("a".to_string(), None)], (2, 10));
        assert_eq!(t.bits[&("v".to_string(), Some(0))], (2, 10));
        assert_eq!(t.bits[&("v".to_string(), Some(1))], (0, 0));
        assert_eq!(t.bits[&("v".to_string(), Some(2))], (1, 30));
        assert_eq!((t.start, t.end), (0, 40));
    }
}
