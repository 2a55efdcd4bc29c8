//! Yosys equivalence check of the clean emission pass (hw/src/clean.rs):
//! rust-hdl's raw text against the shipped clean text of one top, module by
//! module.
//!
//! The pass keeps every real block as a module of its own (it inlines only
//! register wrappers and width-cast helpers), so the proof goes one block at
//! a time, which keeps each SAT problem the size of one block instead of
//! the whole flattened MLU. For each block, on both sides:
//! - the raw text is renamed, before Yosys reads it, with the pass's own
//!   renaming map (`valid$0$q` -> `valid_0_q`) by a tokenizer of this file's
//!   own (not the pass's), so blocks, instances, registers and wires carry the
//!   same names on both sides. The map must be one-to-one over the raw
//!   text's identifiers, or the proof stops (a renaming that merged two
//!   names could hide a difference). This replaced one Yosys `rename` per
//!   signal, which cost about 25 ms each (90 s for the MLU unit's top);
//! - `proc`, then the register wrappers and helpers are flattened in (the
//!   real sub-blocks are made black boxes first, so they stay cells);
//! - `expose -evert` cuts every sub-block instance out: its outputs become
//!   free inputs of the block, its inputs outputs to be proven, so a
//!   sub-block's own proof covers what is behind the cut;
//! - `equiv_make` pairs every same-named signal, `equiv_simple` proves the
//!   pairs from the paired signals around them, `equiv_induct` the rest by
//!   induction over the paired registers, and `equiv_status -assert` fails
//!   on any pair left unproven.
//! The initial values (which equivalence of next-state functions does not
//! cover) are compared per register from Yosys's JSON of both sides.
//!
//! Blocks whose raw text is identical up to the module name (the same
//! priority encoder three times in one MLB) are proven once.
use hw::generate::Generated;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// One raw module: name, ports, body lines.
struct RawModule<'a> {
    name: &'a str,
    ports: Vec<&'a str>,
    body: Vec<&'a str>,
}

fn raw_modules(raw: &str) -> Vec<RawModule<'_>> {
    let mut out = vec![];
    let mut cur: Option<RawModule> = None;
    for line in raw.lines() {
        if let Some(rest) = line.strip_prefix("module ") {
            let (name, ports) = rest.split_once('(').unwrap_or((rest, ""));
            let ports = ports
                .trim_end_matches(';')
                .trim_end_matches(')')
                .split(',')
                .filter(|p| !p.is_empty())
                .collect();
            cur = Some(RawModule {
                name,
                ports,
                body: vec![],
            });
        } else if line.starts_with("endmodule") {
            out.extend(cur.take());
        } else if let Some(m) = cur.as_mut() {
            m.body.push(line);
        }
    }
    out
}

/// Instances `(module, instance)` in a body of the modules `of` accepts.
fn instances<'a>(m: &RawModule<'a>, of: impl Fn(&str) -> bool) -> Vec<(&'a str, &'a str)> {
    m.body
        .iter()
        .filter_map(|l| {
            let mut w = l.trim().split_whitespace();
            let (module, inst) = (w.next()?, w.next()?);
            let inst = inst.strip_suffix('(')?;
            of(module).then_some((module, inst))
        })
        .collect()
}

/// `text` with every identifier that `renames` maps renamed. An identifier
/// is a run of `[A-Za-z0-9_$]` (a number's digits never form a key: every key
/// has a `$` inside). `Err` if, within one module, a new name is also an
/// identifier left as it is, or two names get one new name (two modules
/// given one name fail in Yosys's `read_verilog`).
fn rename_text(text: &str, renames: &BTreeMap<String, String>) -> Result<String, String> {
    let is_id = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(text.len());
    for module in text.split_inclusive('\n').collect::<Vec<_>>().split_inclusive(|l| l.starts_with("endmodule")) {
        let (mut kept, mut by_new) = (BTreeSet::new(), BTreeMap::new());
        for line in module {
            let mut rest = *line;
            while let Some(start) = rest.find(is_id) {
                out.push_str(&rest[..start]);
                let len = rest[start..].find(|c| !is_id(c)).unwrap_or(rest.len() - start);
                let id = &rest[start..start + len];
                match renames.get(id) {
                    Some(new) => {
                        if let Some(old) = by_new.insert(new.as_str(), id).filter(|old| *old != id) {
                            return Err(format!("the renaming maps both `{old}` and `{id}` to `{new}`"));
                        }
                        out.push_str(new);
                    }
                    None => {
                        kept.insert(id);
                        out.push_str(id);
                    }
                }
                rest = &rest[start + len..];
            }
            out.push_str(rest);
        }
        if let Some((new, old)) = by_new.iter().find(|(new, _)| kept.contains(*new)) {
            return Err(format!("the renaming maps `{old}` to `{new}`, a name its module already has"));
        }
    }
    Ok(out)
}

/// The text of module `name` in `text`, from `module` to `endmodule`.
fn module_text<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let start = text.find(&format!("\nmodule {name}("))?;
    let len = text[start..].find("\nendmodule")?;
    Some(&text[start..start + len])
}

/// One module's signals from Yosys JSON: per public name, its bits and
/// their initial values, MSB first (`-` for a bit without one), whichever of
/// the bit's aliases carries the `init` attribute.
struct Signals {
    init: BTreeMap<String, String>,
    /// The names of each bit that has an initial value (a register's bits).
    names_of_init_bit: BTreeMap<String, Vec<String>>,
}

fn signals(json: &str, module: &str) -> Result<Signals, String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("yosys JSON: {e}"))?;
    let nets = v["modules"][module]["netnames"]
        .as_object()
        .ok_or_else(|| format!("yosys JSON: no netnames for {module}"))?;
    let bits = |net: &serde_json::Value| -> Vec<String> {
        net["bits"]
            .as_array()
            .map(|b| b.iter().map(|b| b.to_string()).collect())
            .unwrap_or_default()
    };
    let mut init_of_bit: BTreeMap<String, char> = BTreeMap::new();
    for net in nets.values() {
        if let Some(init) = net["attributes"]["init"].as_str() {
            // `init` is MSB first; `bits` LSB first.
            for (bit, value) in bits(net).into_iter().zip(init.chars().rev()) {
                init_of_bit.insert(bit, value);
            }
        }
    }
    let mut s = Signals {
        init: BTreeMap::new(),
        names_of_init_bit: BTreeMap::new(),
    };
    for (name, net) in nets.iter().filter(|(name, _)| !name.starts_with('$')) {
        let b = bits(net);
        s.init.insert(
            name.clone(),
            b.iter()
                .rev()
                .map(|b| init_of_bit.get(b).copied().unwrap_or('-'))
                .collect(),
        );
        for bit in b.into_iter().filter(|b| init_of_bit.contains_key(b)) {
            s.names_of_init_bit
                .entry(bit)
                .or_default()
                .push(name.clone());
        }
    }
    Ok(s)
}

/// Compare the initial values of the two sides of one block: every register
/// bit must be visible under a name both sides have (the proof pairs
/// registers by name), and every name both sides have must start equal.
fn compare_inits(gold: &Signals, gate: &Signals) -> Result<(), String> {
    for (side, this, other) in [("raw", gold, gate), ("clean", gate, gold)] {
        if let Some(names) = this
            .names_of_init_bit
            .values()
            .find(|names| !names.iter().any(|n| other.init.contains_key(n)))
        {
            return Err(format!("a register of the {side} side, named {names:?}, has no same-named partner (its initial value cannot be compared)"));
        }
    }
    let bad: Vec<String> = gold
        .init
        .iter()
        .filter_map(|(k, v)| {
            gate.init
                .get(k)
                .filter(|w| *w != v)
                .map(|w| format!("{k}: raw {v}, clean {w}"))
        })
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!("initial values differ:\n  {}", bad.join("\n  ")))
    }
}

/// Proves tops one after another, each block once: a block whose raw text
/// (with its register and helper modules) and clean text are those of a
/// block proven before, up to its own name, is not proven again (the MLB
/// inside `mlu8_bst` is the block `mlb8_plru`; one MLB has three identical
/// priority encoders).
#[derive(Default)]
pub struct Prover {
    proven: BTreeSet<String>,
    /// Blocks proven and blocks skipped as proven before.
    pub blocks: (usize, usize),
}

/// Prove `g.raw` and `g.verilog` equivalent; `Err` says where they differ.
pub fn prove_clean(g: &Generated, dir: &Path) -> Result<(), String> {
    Prover::default().prove(g, dir)
}

impl Prover {
    /// Prove `g.raw` and `g.verilog` equivalent (in the scratch directory
    /// `dir`); `Err` says where they differ.
    pub fn prove(&mut self, g: &Generated, dir: &Path) -> Result<(), String> {
        let top = g.name();
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let w = |f: &str, s: &str| std::fs::write(dir.join(f), s).map_err(|e| format!("{f}: {e}"));
        w("raw.v", &rename_text(&g.raw, &g.renames).map_err(|e| format!("{top}: {e}"))?)?;
        w("clean.v", &g.verilog)?;
        let renamed = |id: &str| g.renames.get(id).cloned().unwrap_or_else(|| id.to_string());
        let modules = raw_modules(&g.raw);
        // The real blocks: raw modules the clean text still has (by their clean name).
        let real: BTreeSet<&str> = modules
            .iter()
            .map(|m| m.name)
            .filter(|n| g.verilog.contains(&format!("\nmodule {}(", renamed(n))))
            .collect();
        if !real.contains(top) {
            return Err(format!("{top}: the clean text has no module `{top}`"));
        }
        let mut script = String::from("read_verilog raw.v\ndesign -save raw\ndesign -reset\nread_verilog clean.v\ndesign -save clean\n");
        let mut checked = vec![];
        for m in modules.iter().filter(|m| real.contains(m.name)) {
            let (raw, clean) = (m.name, renamed(m.name));
            let subs = instances(m, |module| real.contains(module));
            // The block's own text, its register and helper modules' and its
            // clean text, each with the block's name taken out.
            let mut key = format!("{}\n{}\n", m.ports.join(","), m.body.join("\n"));
            for (module, _) in instances(m, |module| !real.contains(module)) {
                key += module_text(&g.raw, module)
                    .ok_or_else(|| format!("{top}: no module {module}"))?;
            }
            key = key.replace(raw, "<self>");
            key += &module_text(&g.verilog, &clean)
                .ok_or_else(|| format!("{top}: no clean module {clean}"))?
                .replace(&clean, "<self>");
            if !self.proven.insert(key) {
                self.blocks.1 += 1;
                continue;
            }
            self.blocks.0 += 1;
            // Both sides alike: the sub-blocks made black boxes before
            // `proc` (so only this block is elaborated), the register
            // wrappers and helpers flattened in, the sub-blocks cut out.
            let sub_modules: BTreeSet<String> = subs.iter().map(|s| renamed(s.0)).collect();
            let black_boxes = if sub_modules.is_empty() {
                String::new()
            } else {
                format!("blackbox {}\n", sub_modules.into_iter().collect::<Vec<_>>().join(" "))
            };
            let prep = |design: &str, side: &str| {
                format!(
                "design -load {design}\nhierarchy -check -top {clean}\n{black_boxes}hierarchy -top {clean}\nproc\nmemory\nflatten\nrename -hide {clean}/w:*.*\nexpose -evert {clean}/c:*\nopt -fast -nodffe -nosdff\nwrite_json {side}.json\nrename {clean} {side}\ndesign -stash {side}\n"
            )
            };
            script += &format!("log -header {clean}\n");
            script += &prep("raw", "gold");
            script += &prep("clean", "gate");
            script += "design -reset\ndesign -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\n\
                   equiv_make gold gate equiv\nhierarchy -top equiv\nequiv_simple -short\nequiv_simple\nequiv_induct\nequiv_status -assert\n";
            // Keep this block's JSON for the initial values below.
            script += &format!(
                "exec -- mv gold.json gold_{n}.json\nexec -- mv gate.json gate_{n}.json\n",
                n = checked.len()
            );
            checked.push(clean);
        }
        w("equiv.ys", &script)?;
        let out = Command::new("yosys")
            .args(["-q", "-l", "equiv.log", "equiv.ys"])
            .current_dir(dir)
            .output()
            .map_err(|e| format!("cannot run yosys: {e} (is it installed and on PATH?)"))?;
        if !out.status.success() {
            let log = std::fs::read_to_string(dir.join("equiv.log")).unwrap_or_default();
            let tail: Vec<&str> = log
                .lines()
                .rev()
                .take(12)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            return Err(format!(
                "{top}: raw and clean Verilog not proven equivalent (yosys, {}):\n{}",
                dir.display(),
                tail.join("\n")
            ));
        }
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).map_err(|e| format!("{f}: {e}"));
        for (i, clean) in checked.iter().enumerate() {
            let gold = signals(&read(&format!("gold_{i}.json"))?, clean)?;
            let gate = signals(&read(&format!("gate_{i}.json"))?, clean)?;
            compare_inits(&gold, &gate).map_err(|e| format!("{top}: {clean}: {e}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::rename_text;
    use std::collections::BTreeMap;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn renames_whole_identifiers_only() {
        let raw = "module t$a(x$q);\n  wire x$q2;\n  assign y = x$q & 8'hff;\nendmodule\n";
        let out = rename_text(raw, &map(&[("t$a", "t_a"), ("x$q", "x_q")])).unwrap();
        assert_eq!(out, "module t_a(x_q);\n  wire x$q2;\n  assign y = x_q & 8'hff;\nendmodule\n");
    }

    #[test]
    fn refuses_a_new_name_its_module_already_has() {
        let raw = "module t(a);\n  wire x$q;\n  wire x_q;\nendmodule\n";
        assert!(rename_text(raw, &map(&[("x$q", "x_q")])).is_err());
        // The same name in another module is another scope.
        let raw = "module r(q);\n  reg x_q;\nendmodule\nmodule t(a);\n  wire x$q;\nendmodule\n";
        assert!(rename_text(raw, &map(&[("x$q", "x_q")])).is_ok());
    }

    #[test]
    fn refuses_two_names_made_one() {
        let raw = "module t(a);\n  wire x$q;\n  wire x$$q;\nendmodule\n";
        assert!(rename_text(raw, &map(&[("x$q", "x_q"), ("x$$q", "x_q")])).is_err());
    }
}
