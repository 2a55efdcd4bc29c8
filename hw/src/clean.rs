//! The clean emission pass: rust-hdl's Verilog rewritten into what an ASIC
//! or FPGA engineer expects, with the same behaviour. Every cosimulation,
//! formal and synthesis test runs on the clean text (verilog_out/); Yosys
//! proves raw and clean equivalent, block by block, on every committed top
//! (testbench/src/equiv.rs, testbench/tests/verilog_clean.rs).
//!
//! rust-hdl 0.46 writes one module per *instance*, including one per
//! register (`module mlu8_bst$mlb$base$0(d,q,clock)`), separates path parts
//! with `$`, and drives every sub-block's clock from a combinational block
//! (`base$0$clock = clock;`). The pass, over that text:
//! - inlines every register module as a `reg <name>_q` of its parent, loaded
//!   from `<name>_d` in one `always @(posedge clock)` per module;
//! - inlines the one-line combinational helpers (`always @(*) y = {8'd0, a};`,
//!   rust-hdl's width casts) as an `always @(*)` of their parent;
//! - wires clocks: a 1-bit stub assigned only `= clock` is replaced by the
//!   clock it copies;
//! - renames every identifier without `$` (`$` -> `_`), refusing a rename that
//!   would make two names one;
//! - heads every module with a line naming its Rust block.
//!
//! It reads rust-hdl's output as a fixed grammar and refuses anything else
//! (an error naming the module), so a rust-hdl change cannot slip through as
//! silently wrong Verilog.
use anyhow::{anyhow, bail, Result};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One module of the raw text.
#[derive(Clone, Debug)]
struct Module {
    name: String,
    ports: Vec<String>,
    /// Lines between `module ...;` and `endmodule`.
    body: Vec<String>,
}

/// A register module: `q <= d` on the clock, with an initial value.
#[derive(Clone, Debug)]
struct Register {
    /// The initial value literal, e.g. `3'd0`.
    init: String,
}

/// A one-line combinational helper: `always @(*) out = expr;`.
#[derive(Clone, Debug)]
struct Helper {
    out: String,
    expr: String,
}

/// Names the Rust block of a sub-module from its instance path below the top
/// (`["mlb", "rs_pe"]`); `None` for an unknown block (an error).
pub type BlockNamer<'a> = &'a dyn Fn(&[&str]) -> Option<String>;

/// The clean text and the renaming it applied (rust-hdl name -> clean name,
/// for every identifier with `$`).
#[derive(Clone, Debug)]
pub struct Cleaned {
    pub text: String,
    pub renames: BTreeMap<String, String>,
}

/// The clean text of `raw` (rust-hdl output whose first module is `top`, the
/// Rust block `top_block`; `namer` names the blocks of the sub-modules).
pub fn clean(raw: &str, top: &str, top_block: &str, namer: BlockNamer) -> Result<Cleaned> {
    let modules = parse(raw)?;
    if modules.first().map(|m| m.name.as_str()) != Some(top) {
        bail!("clean: the first module of the rust-hdl output is not `{top}`");
    }
    refuse_keywords(&modules)?;
    let mut registers = HashMap::new();
    let mut helpers = HashMap::new();
    for m in &modules {
        if m.ports == ["d", "q", "clock"] {
            registers.insert(m.name.clone(), as_register(m)?);
        } else if let Some(h) = as_helper(m) {
            helpers.insert(m.name.clone(), h);
        }
    }
    let mut out = String::new();
    for m in modules.iter().filter(|m| !registers.contains_key(&m.name) && !helpers.contains_key(&m.name)) {
        let block = if m.name == top {
            top_block.to_string()
        } else {
            let path: Vec<&str> = m
                .name
                .strip_prefix(top)
                .and_then(|p| p.strip_prefix('$'))
                .ok_or_else(|| anyhow!("clean: module `{}` is not below the top `{top}`", m.name))?
                .split('$')
                .collect();
            namer(&path).ok_or_else(|| anyhow!("clean: no Rust block is known for module `{}` (add it to the namer)", m.name))?
        };
        out += "\n";
        out += &format!("// {}: {block}\n", rename(&m.name));
        out += &rewrite(m, &registers, &helpers, &modules)?;
    }
    let c = rename_all(&out)?;
    Ok(Cleaned { text: single_assignment(&c.text)?, renames: c.renames })
}

/// Suffix of a working copy (see [`single_assignment`]).
const WORKING: &str = "_comb";

/// In each module's `always @(*)` block, every signal assigned more than
/// once (rust-hdl writes a default, then overrides it) is computed in a
/// working copy `<name>_comb` and assigned once, at the end of the block. The
/// value is the same; what changes is that no other process ever sees an
/// intermediate value. Event-driven simulators (Icarus, and any simulator
/// that schedules per event) wake every reader of a signal on each change, so
/// the MLU's block glitching the MEMCHECK block's inputs, whose outputs it
/// reads, looped forever at one time step; with one assignment per signal
/// the two blocks settle. Cycle-based simulators (Verilator) and synthesis
/// never saw the difference.
fn single_assignment(text: &str) -> Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = vec![];
    let mut module_start = 0;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with("module ") {
            module_start = i;
        }
        if l != "    always @(*) begin" {
            out.push(l.to_string());
            i += 1;
            continue;
        }
        let end = (i + 1..lines.len()).find(|&k| lines[k] == "    end").ok_or_else(|| anyhow!("clean: an always @(*) block without its end (line {})", i + 1))?;
        let module_end = (i..lines.len()).find(|&k| lines[k].starts_with("endmodule")).ok_or_else(|| anyhow!("clean: a module without endmodule"))?;
        let block = &lines[i + 1..end];
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for b in block {
            let t = b.trim();
            if let Some((lhs, _)) = t.split_once(" = ") {
                if t.ends_with(';') && !lhs.is_empty() && lhs.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
                    *count.entry(lhs).or_default() += 1;
                }
            }
        }
        // Signals read only inside the block (its locals) glitch for no one:
        // only those read elsewhere (instances, other blocks, the port list)
        // need a working copy.
        let mut outside: BTreeSet<String> = BTreeSet::new();
        for (k, o) in lines[module_start..module_end].iter().enumerate().map(|(k, o)| (k + module_start, o)) {
            let decl = ["input ", "output ", "reg ", "wire "].iter().any(|w| o.trim_start().starts_with(w));
            if (i..=end).contains(&k) || decl {
                continue;
            }
            map_identifiers(o, |id| {
                outside.insert(id.to_string());
                None
            });
        }
        let multi: Vec<&str> = count.iter().filter(|(id, n)| **n > 1 && outside.contains(**id)).map(|(id, _)| *id).collect();
        if multi.is_empty() {
            out.extend(lines[i..=end].iter().map(|s| s.to_string()));
            i = end + 1;
            continue;
        }
        let mut used: BTreeSet<String> = BTreeSet::new();
        map_identifiers(&lines[module_start..module_end].join("\n"), |id| {
            used.insert(id.to_string());
            None
        });
        out.push("    // Working copies: each signal assigned more than once below is computed".to_string());
        out.push("    // in `<name>_comb` and assigned once at the end, so other processes never see".to_string());
        out.push("    // an intermediate value (event-driven simulators would loop on it).".to_string());
        for id in &multi {
            let working = format!("{id}{WORKING}");
            if used.contains(&working) {
                bail!("clean: working copy `{working}` collides with a signal of the module");
            }
            let range = lines[module_start..i]
                .iter()
                .filter_map(|d| declaration(d.trim()))
                .find(|(_, _, n)| n == id)
                .map(|(_, r, _)| r)
                .ok_or_else(|| anyhow!("clean: `{id}` is assigned in an always @(*) block but not declared before it"))?;
            out.push(format!("    reg  {range}{working};"));
        }
        out.push(l.to_string());
        for b in block {
            out.push(map_identifiers(b, |id| multi.contains(&id).then(|| format!("{id}{WORKING}"))));
        }
        for id in &multi {
            out.push(format!("        {id} = {id}{WORKING};"));
        }
        out.push(lines[end].to_string());
        i = end + 1;
    }
    Ok(out.join("\n") + "\n")
}

fn parse(raw: &str) -> Result<Vec<Module>> {
    let mut modules = vec![];
    let mut cur: Option<Module> = None;
    for line in raw.lines() {
        if let Some(rest) = line.strip_prefix("module ") {
            if let Some(m) = &cur {
                bail!("clean: module `{}` has no endmodule before `{line}`", m.name);
            }
            let (name, ports) = rest
                .strip_suffix(");")
                .and_then(|r| r.split_once('('))
                .ok_or_else(|| anyhow!("clean: cannot read the module line `{line}`"))?;
            let ports = if ports.is_empty() { vec![] } else { ports.split(',').map(str::to_string).collect() };
            cur = Some(Module { name: name.to_string(), ports, body: vec![] });
        } else if line.starts_with("endmodule") {
            let m = cur.take().ok_or_else(|| anyhow!("clean: `endmodule` outside a module"))?;
            modules.push(m);
        } else if let Some(m) = &mut cur {
            m.body.push(line.to_string());
        }
    }
    if let Some(m) = cur {
        bail!("clean: module `{}` has no endmodule", m.name);
    }
    Ok(modules)
}

/// The significant lines of a body: trimmed, without blanks and comments.
fn significant(body: &[String]) -> Vec<&str> {
    body.iter().map(|l| l.trim()).filter(|l| !l.is_empty() && !l.starts_with("//")).collect()
}

/// `input wire  [2:0] d;` -> ("input", "[2:0] ", "d").
fn declaration(line: &str) -> Option<(&str, String, &str)> {
    let mut words = line.strip_suffix(';')?.split_whitespace();
    let dir = words.next()?;
    let mut range = String::new();
    let mut name = None;
    for w in words {
        match w {
            "wire" | "reg" => {}
            w if w.starts_with('[') => range = format!("{w} "),
            w => name = Some(w),
        }
    }
    Some((dir, range, name?))
}

/// A register module in either of rust-hdl's two forms (custom: `output reg q`;
/// wrapper: an inner `<x>_q` assigned to `q`). Anything else is an error.
fn as_register(m: &Module) -> Result<Register> {
    let lines = significant(&m.body);
    let not_a_register = || anyhow!("clean: module `{}` has ports (d, q, clock) but is not a plain register:\n{}", m.name, m.body.join("\n"));
    let ok_decls = match lines.get(..3) {
        Some([d, q, c]) => {
            let (dd, dr, dn) = declaration(d).ok_or_else(not_a_register)?;
            let (qd, qr, qn) = declaration(q).ok_or_else(not_a_register)?;
            let ok = dd == "input" && dn == "d" && qd == "output" && qn == "q" && qr == dr && *c == "input wire  clock;";
            ok
        }
        _ => return Err(not_a_register()),
    };
    if !ok_decls {
        return Err(not_a_register());
    }
    let rest = &lines[3..];
    // custom: initial begin / q = V; / end / always @(posedge clock) begin / q <= d; / end
    // wrapper: reg [W:0] x_q; / initial begin / x_q = V; / end / always ... / x_q <= d; / end / assign q = x_q;
    let (reg, rest) = match rest.first() {
        Some(l) if l.starts_with("reg") => {
            let inner = l.rsplit(' ').next().unwrap_or("").trim_end_matches(';').to_string();
            if rest.last() != Some(&format!("assign q = {inner};").as_str()) {
                return Err(not_a_register());
            }
            (inner, &rest[1..rest.len() - 1])
        }
        _ => ("q".to_string(), rest),
    };
    match rest {
        [a, init, b, c, load, e] => {
            let init = init
                .strip_prefix(&format!("{reg} = "))
                .and_then(|v| v.strip_suffix(';'))
                .ok_or_else(not_a_register)?;
            let ok = *a == "initial begin"
                && *b == "end"
                && *c == "always @(posedge clock) begin"
                && *load == format!("{reg} <= d;")
                && *e == "end";
            if !ok {
                return Err(not_a_register());
            }
            Ok(Register { init: init.to_string() })
        }
        _ => Err(not_a_register()),
    }
}

/// A module whose whole logic is one `always @(*) out = expr;` over its inputs.
fn as_helper(m: &Module) -> Option<Helper> {
    let lines = significant(&m.body);
    let (logic, decls) = lines.split_last()?;
    let assign = logic.strip_prefix("always @(*) ")?.strip_suffix(';')?;
    let (out, expr) = assign.split_once(" = ")?;
    if decls.len() != m.ports.len() {
        return None;
    }
    for d in decls {
        let (dir, _, name) = declaration(d)?;
        let ok = if name == out { dir == "output" } else { dir == "input" };
        if !ok || !m.ports.iter().any(|p| p == name) {
            return None;
        }
    }
    Some(Helper { out: out.to_string(), expr: expr.to_string() })
}

/// One sub-module instance in a parent's body.
struct Instance {
    module: String,
    name: String,
    /// (port, connected signal).
    conns: Vec<(String, String)>,
    /// Body line range [first, last].
    lines: (usize, usize),
}

fn instances(m: &Module, modules: &[Module]) -> Result<Vec<Instance>> {
    let known: BTreeSet<&str> = modules.iter().map(|m| m.name.as_str()).collect();
    let mut v = vec![];
    let mut i = 0;
    while i < m.body.len() {
        let t = m.body[i].trim();
        let head = t.strip_suffix('(').and_then(|h| h.split_once(' '));
        if let Some((module, name)) = head.filter(|(module, _)| known.contains(module)) {
            let first = i;
            let mut conns = vec![];
            loop {
                i += 1;
                let l = m.body.get(i).map(|l| l.trim()).ok_or_else(|| anyhow!("clean: instance `{name}` in `{}` is not closed", m.name))?;
                if l == ");" {
                    break;
                }
                let (port, sig) = l
                    .trim_end_matches(',')
                    .strip_prefix('.')
                    .and_then(|c| c.strip_suffix(')'))
                    .and_then(|c| c.split_once('('))
                    .ok_or_else(|| anyhow!("clean: cannot read connection `{l}` of `{name}` in `{}`", m.name))?;
                conns.push((port.to_string(), sig.to_string()));
            }
            v.push(Instance { module: module.to_string(), name: name.to_string(), conns, lines: (first, i) });
        }
        i += 1;
    }
    Ok(v)
}

fn conn<'a>(inst: &'a Instance, port: &str) -> Result<&'a str> {
    inst.conns
        .iter()
        .find(|(p, _)| p == port)
        .map(|(_, s)| s.as_str())
        .ok_or_else(|| anyhow!("clean: instance `{}` has no connection for `{port}`", inst.name))
}

/// The body of a non-register module, registers and helpers inlined and
/// clocks wired (names still rust-hdl's).
fn rewrite(m: &Module, registers: &HashMap<String, Register>, helpers: &HashMap<String, Helper>, modules: &[Module]) -> Result<String> {
    let insts = instances(m, modules)?;
    let mut drop: BTreeSet<usize> = BTreeSet::new();
    // Stub declarations to turn from `wire` into `reg`.
    let mut to_reg: BTreeSet<String> = BTreeSet::new();

    // Clock stubs: `x = clock;` (or a clock alias) on a 1-bit stub `reg x;`
    // assigned nowhere else.
    let mut clock_of: BTreeMap<String, String> = BTreeMap::new();
    let clock_inputs: BTreeSet<String> = m
        .body
        .iter()
        .filter_map(|l| declaration(l.trim()))
        .filter(|(dir, range, name)| *dir == "input" && range.is_empty() && (*name == "clock" || name.ends_with("_clock")))
        .map(|(_, _, n)| n.to_string())
        .collect();
    let stub_regs: BTreeSet<String> = m
        .body
        .iter()
        .filter_map(|l| declaration(l.trim()))
        .filter(|(dir, range, _)| *dir == "reg" && range.is_empty())
        .map(|(_, _, n)| n.to_string())
        .collect();
    let mut assigned: HashMap<String, usize> = HashMap::new();
    for l in &m.body {
        if let Some((lhs, _)) = l.trim().split_once(" = ") {
            *assigned.entry(lhs.to_string()).or_default() += 1;
        }
    }
    for (i, l) in m.body.iter().enumerate() {
        let Some((lhs, rhs)) = l.trim().strip_suffix(';').and_then(|a| a.split_once(" = ")) else { continue };
        let source = if clock_inputs.contains(rhs) { Some(rhs.to_string()) } else { clock_of.get(rhs).cloned() };
        if let Some(src) = source {
            if stub_regs.contains(lhs) && assigned.get(lhs) == Some(&1) {
                clock_of.insert(lhs.to_string(), src);
                drop.insert(i);
            }
        }
    }

    let mut reg_lines = vec![];
    let mut init_lines = vec![];
    let mut helper_lines = vec![];
    let mut clock = None;
    for inst in &insts {
        if let Some(r) = registers.get(&inst.module) {
            let (d, q, c) = (conn(inst, "d")?, conn(inst, "q")?, conn(inst, "clock")?);
            let c = clock_of.get(c).cloned().or_else(|| clock_inputs.contains(c).then(|| c.to_string())).ok_or_else(|| {
                anyhow!("clean: the clock `{c}` of register `{}` in `{}` is not a wired clock", inst.name, m.name)
            })?;
            if clock.get_or_insert_with(|| c.clone()) != &c {
                bail!("clean: module `{}` has registers on two clocks ({} and {c}); the pass writes one clocked block", m.name, clock.unwrap());
            }
            init_lines.push(format!("        {q} = {};", r.init));
            reg_lines.push(format!("        {q} <= {d};"));
            to_reg.insert(q.to_string());
            (inst.lines.0..=inst.lines.1).for_each(|i| {
                drop.insert(i);
            });
        } else if let Some(h) = helpers.get(&inst.module) {
            let map: HashMap<&str, &str> = inst.conns.iter().map(|(p, s)| (p.as_str(), s.as_str())).collect();
            let out = map.get(h.out.as_str()).ok_or_else(|| anyhow!("clean: helper `{}` output unconnected", inst.name))?;
            let expr = map_identifiers(&h.expr, |id| map.get(id).map(|s| s.to_string()));
            if helper_lines.is_empty() {
                helper_lines.push("    // Width casts (rust-hdl helper blocks, inlined)".to_string());
            }
            helper_lines.push(format!("    always @(*) {out} = {expr}; // {}", inst.name));
            to_reg.insert(out.to_string());
            (inst.lines.0..=inst.lines.1).for_each(|i| {
                drop.insert(i);
            });
        }
    }

    // Outputs of kept sub-blocks that this block never reads (the MLB's
    // free-entry finder needs only `any` and `index` of its priority
    // encoder): tied into a `unused_<instance>` sink, the lint idiom that
    // says "intentionally unused" in the Verilog itself (Verilator exempts
    // `*unused*` names; synthesis removes the sink).
    let mut uses: HashMap<String, usize> = HashMap::new();
    for l in &m.body {
        map_identifiers(l, |id| {
            *uses.entry(id.to_string()).or_default() += 1;
            None
        });
    }
    let mut sinks = vec![];
    for inst in insts.iter().filter(|i| !registers.contains_key(&i.module) && !helpers.contains_key(&i.module)) {
        let sub = modules.iter().find(|s| s.name == inst.module).expect("instances() found it");
        let outputs: BTreeSet<&str> =
            sub.body.iter().filter_map(|l| declaration(l.trim())).filter(|(d, _, _)| *d == "output").map(|(_, _, n)| n).collect();
        let unused: Vec<&str> = inst
            .conns
            .iter()
            .filter(|(p, sig)| outputs.contains(p.as_str()) && uses.get(sig.as_str()) == Some(&2))
            .map(|(_, sig)| sig.as_str())
            .collect();
        if !unused.is_empty() {
            sinks.push(format!("    wire unused_{} = &{{1'b0, {}, 1'b0}};", inst.name, unused.join(", ")));
        }
    }
    if !sinks.is_empty() {
        helper_lines.push("    // Sub-block outputs this block does not use".to_string());
        helper_lines.append(&mut sinks);
    }

    let mut body = vec![];
    let mut inserted = false;
    let mut insert = |body: &mut Vec<String>| {
        if !helper_lines.is_empty() {
            body.append(&mut helper_lines);
            body.push("    ".to_string());
        }
        if !reg_lines.is_empty() {
            body.push("    // Registers: `<name>_q` is the flip-flop, `<name>_d` its next value (set".to_string());
            body.push("    // in the update code). Initial values as in the rust-hdl model; state".to_string());
            body.push("    // that must reset has an explicit reset input.".to_string());
            body.push("    initial begin".to_string());
            body.append(&mut init_lines);
            body.push("    end".to_string());
            body.push(format!("    always @(posedge {}) begin", clock.as_deref().unwrap_or("clock")));
            body.append(&mut reg_lines);
            body.push("    end".to_string());
            body.push("    ".to_string());
        }
    };
    for (i, l) in m.body.iter().enumerate() {
        if drop.contains(&i) {
            continue;
        }
        let t = l.trim();
        if !inserted && t.starts_with("// Update code") {
            insert(&mut body);
            inserted = true;
        }
        if let Some((dir, range, name)) = declaration(t) {
            if clock_of.contains_key(name) && dir == "reg" {
                continue;
            }
            if to_reg.contains(name) && dir == "wire" {
                body.push(format!("    reg  {range}{name};"));
                continue;
            }
        }
        // A sub-block's clock connection: the wired clock itself.
        let line = map_identifiers(l, |id| clock_of.get(id).cloned());
        body.push(line);
    }
    if !inserted {
        insert(&mut body);
    }
    // An instance section left empty, or a comb block left with nothing.
    let text = format!("module {}({});\n{}\nendmodule // {}\n", m.name, m.ports.join(","), collapse(&body).join("\n"), rename(&m.name));
    Ok(text)
}

/// Drop section comments whose section became empty and runs of blank lines.
fn collapse(body: &[String]) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for l in body {
        let blank = l.trim().is_empty();
        if blank && out.last().is_some_and(|p| p.trim().is_empty()) {
            continue;
        }
        // "// Sub module instances" directly followed by a blank or another header.
        if (blank || l.trim().starts_with("// ")) && out.last().is_some_and(|p| p.trim() == "// Sub module instances") {
            out.pop();
        }
        out.push(l.clone());
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out
}

/// Token-level rewrite: each identifier `id` for which `f` returns a name is
/// replaced; literals, system names (`$signed`) and comments are kept.
fn map_identifiers(text: &str, mut f: impl FnMut(&str) -> Option<String>) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            let id = &text[s..i];
            match f(id) {
                Some(n) => out += &n,
                None => out += id,
            }
        } else if c.is_ascii_digit() || c == b'\'' || c == b'$' {
            // A number (with its size, base and digits) or a system name.
            let s = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'\'') {
                i += 1;
            }
            out += &text[s..i];
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let e = text[i..].find('\n').map_or(b.len(), |n| i + n);
            out += &text[i..e];
            i = e;
        } else {
            let ch = text[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The reserved words of Verilog-2005 (IEEE 1364) and SystemVerilog-2017
/// (IEEE 1800, which Verilator and most ASIC tools read a `.v` file as).
const KEYWORDS: &[&str] = &[
    "accept_on", "alias", "always", "always_comb", "always_ff", "always_latch", "and", "assert", "assign", "assume", "automatic",
    "before", "begin", "bind", "bins", "binsof", "bit", "break", "buf", "bufif0", "bufif1", "byte", "case", "casex", "casez",
    "cell", "chandle", "checker", "class", "clocking", "cmos", "config", "const", "constraint", "context", "continue", "cover",
    "covergroup", "coverpoint", "cross", "deassign", "default", "defparam", "design", "disable", "dist", "do", "edge", "else",
    "end", "endcase", "endchecker", "endclass", "endclocking", "endconfig", "endfunction", "endgenerate", "endgroup",
    "endinterface", "endmodule", "endpackage", "endprimitive", "endprogram", "endproperty", "endspecify", "endsequence",
    "endtable", "endtask", "enum", "event", "eventually", "expect", "export", "extends", "extern", "final", "first_match", "for",
    "force", "foreach", "forever", "fork", "forkjoin", "function", "generate", "genvar", "global", "highz0", "highz1", "if", "iff",
    "ifnone", "ignore_bins", "illegal_bins", "implements", "implies", "import", "incdir", "include", "initial", "inout", "input",
    "inside", "instance", "int", "integer", "interconnect", "interface", "intersect", "join", "join_any", "join_none", "large",
    "let", "liblist", "library", "local", "localparam", "logic", "longint", "macromodule", "matches", "medium", "modport", "module",
    "nand", "negedge", "nettype", "new", "nexttime", "nmos", "nor", "noshowcancelled", "not", "notif0", "notif1", "null", "or",
    "output", "package", "packed", "parameter", "pmos", "posedge", "primitive", "priority", "program", "property", "protected",
    "pull0", "pull1", "pulldown", "pullup", "pulsestyle_ondetect", "pulsestyle_onevent", "pure", "rand", "randc", "randcase",
    "randsequence", "rcmos", "real", "realtime", "ref", "reg", "reject_on", "release", "repeat", "restrict", "return", "rnmos",
    "rpmos", "rtran", "rtranif0", "rtranif1", "s_always", "s_eventually", "s_nexttime", "s_until", "s_until_with", "scalared",
    "sequence", "shortint", "shortreal", "showcancelled", "signed", "small", "soft", "solve", "specify", "specparam", "static",
    "string", "strong", "strong0", "strong1", "struct", "super", "supply0", "supply1", "sync_accept_on", "sync_reject_on",
    "table", "tagged", "task", "this", "throughout", "time", "timeprecision", "timeunit", "tran", "tranif0", "tranif1", "tri",
    "tri0", "tri1", "triand", "trior", "trireg", "type", "typedef", "union", "unique", "unique0", "unsigned", "until",
    "until_with", "untyped", "use", "uwire", "var", "vectored", "virtual", "void", "wait", "wait_order", "wand", "weak", "weak0",
    "weak1", "while", "wildcard", "wire", "with", "within", "wor", "xnor", "xor",
];

/// Refuse a port or signal whose clean name is a reserved word: rust-hdl
/// writes a Rust field `release` as is, and its own simulation runs, but
/// every Verilog tool then stops at a syntax error (`release` is Verilog's
/// `force`/`release`; `join_any` is SystemVerilog's). Rename the field.
fn refuse_keywords(modules: &[Module]) -> Result<()> {
    for m in modules {
        let declared = significant(&m.body).into_iter().filter_map(declaration).filter(|(d, _, _)| matches!(*d, "input" | "output" | "reg" | "wire")).map(|(_, _, n)| n.to_string());
        for name in m.ports.iter().cloned().chain(declared) {
            let n = rename(&name);
            if KEYWORDS.contains(&n.as_str()) {
                bail!("clean: module `{}` has a port or signal `{name}`, a Verilog/SystemVerilog reserved word: rename the Rust field", m.name);
            }
        }
    }
    Ok(())
}

/// `a$b$0` -> `a_b_0`.
fn rename(id: &str) -> String {
    id.replace('$', "_")
}

/// Rename every identifier with `$`: `$` -> `_`, or `$` -> `__` for the
/// names where `_` would make two names one (the MLU's debug output
/// `mlb_fill_ok` beside the MLB instance's port `mlb$fill_ok`, which becomes
/// `mlb__fill_ok`). A collision left after that is an error.
fn rename_all(text: &str) -> Result<Cleaned> {
    let mut ids: BTreeSet<String> = BTreeSet::new();
    map_identifiers(text, |id| {
        ids.insert(id.to_string());
        None
    });
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for id in &ids {
        *count.entry(rename(id)).or_default() += 1;
    }
    let mut new: BTreeMap<&str, String> = BTreeMap::new();
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for id in &ids {
        let n = if id.contains('$') && count[&rename(id)] > 1 { id.replace('$', "__") } else { rename(id) };
        if let Some(other) = seen.insert(n.clone(), id) {
            bail!("clean: `{other}` and `{id}` would both be named `{n}`");
        }
        new.insert(id, n);
    }
    let text = map_identifiers(text, |id| id.contains('$').then(|| new[id].clone()));
    let renames = new.into_iter().filter(|(k, _)| k.contains('$')).map(|(k, v)| (k.to_string(), v)).collect();
    Ok(Cleaned { text, renames })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_renamed_but_literals_and_system_names_kept() {
        let t = "x$0$q = 8'hFD & $signed(y$d) // a$b\n";
        assert_eq!(map_identifiers(t, |id| id.contains('$').then(|| rename(id))), "x_0_q = 8'hFD & $signed(y_d) // a$b\n");
    }

    #[test]
    fn a_rename_that_would_merge_two_names_takes_a_double_underscore() {
        assert_eq!(rename_all("a$b = a_b & c$d;").unwrap().text, "a__b = a_b & c_d;");
    }

    #[test]
    fn a_signal_assigned_twice_is_computed_in_a_working_copy() {
        let t = "module m(a,y);\n    input wire  a;\n    output reg  [1:0] y;\n    reg  z;\n    reg  l;\n    always @(*) begin\n        y = 2'd0;\n        z = a;\n        l = 1'b0;\n        l = a;\n        if (l) begin\n            y = {1'b0, z};\n        end\n    end\nendmodule // m\n";
        let c = single_assignment(t).unwrap();
        assert!(c.contains("    reg  [1:0] y_comb;\n    always @(*) begin\n        y_comb = 2'd0;\n        z = a;"), "{c}");
        assert!(c.contains("            y_comb = {1'b0, z};\n        end\n        y = y_comb;\n    end\n"), "{c}");
        // z is assigned once, l is read only inside the block: no copies.
        assert!(!c.contains("z_comb") && !c.contains("l_comb"), "{c}");
    }

    #[test]
    fn a_port_or_signal_named_by_a_reserved_word_is_refused() {
        for (raw, word) in [
            ("module t(clock,release);\n    input wire  clock;\n    input wire  release;\nendmodule // t\n", "release"),
            ("module t(clock);\n    input wire  clock;\n    reg  join_any;\nendmodule // t\n", "join_any"),
        ] {
            let e = clean(raw, "t", "T", &|_| None).unwrap_err().to_string();
            assert!(e.contains(&format!("`{word}`, a Verilog/SystemVerilog reserved word")), "{e}");
        }
        let ok = "module t(clock,taken);\n    input wire  clock;\n    input wire  taken;\nendmodule // t\n";
        assert!(refuse_keywords(&parse(ok).unwrap()).is_ok());
    }

    #[test]
    fn a_rename_that_still_merges_two_names_is_refused() {
        let e = rename_all("a$b = a_b | a__b;").unwrap_err().to_string();
        assert!(e.contains("would both be named `a__b`"), "{e}");
    }
}
