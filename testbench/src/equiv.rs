//! Yosys equivalence check of the clean emission pass (hw/src/clean.rs):
//! rust-hdl's raw text against the shipped clean text of one top.
//!
//! Method: the raw design's declared signals are renamed with the pass's
//! own renaming (`valid$0$q` -> `valid_0_q`) so registers and wires carry the
//! same names on both sides; both are `proc`ed, flattened and lightly
//! optimised; `equiv_make` pairs every same-named signal, `equiv_simple`
//! proves the pairs combinationally from the paired signals around them and
//! `equiv_induct` proves the rest by induction over the paired registers;
//! `equiv_status -assert` fails on any pair left unproven. The initial values
//! (which equivalence of next-state functions does not cover) are compared
//! per register name from Yosys's JSON of both designs.
use hw::generate::Generated;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Per raw non-register module, `rename` for every declared signal the
/// pass renamed (the top's ports included, sub-modules' ports not).
fn rename_script(g: &Generated) -> String {
    let mut s = String::new();
    let mut module: Option<&str> = None;
    let mut lines = vec![];
    for line in g.raw.lines() {
        if let Some(rest) = line.strip_prefix("module ") {
            let (name, ports) = rest.split_once('(').unwrap_or((rest, ""));
            module = (!ports.starts_with("d,q,clock)")).then_some(name);
            lines.clear();
        } else if line.starts_with("endmodule") {
            if let Some(m) = module.take() {
                s += &format!("cd {m}\n{}cd ..\n", lines.join(""));
            }
        } else if module.is_some() {
            let t = line.trim();
            // A sub-module's ports keep their names: renaming them would cut
            // the parent's connections (Yosys does not rename cell ports).
            let kinds: &[&str] = if module == Some(g.name()) { &["reg ", "wire ", "input ", "output "] } else { &["reg ", "wire "] };
            if kinds.iter().any(|k| t.starts_with(k)) {
                if let Some(new) = t.trim_end_matches(';').split_whitespace().last().and_then(|n| g.renames.get(n).map(|new| (n, new))) {
                    lines.push(format!("rename {} {}\n", new.0, new.1));
                }
            }
        }
    }
    s
}

/// Initial values by wire name (Yosys JSON `init` attributes, top module).
fn inits(json: &str, top: &str) -> Result<BTreeMap<String, String>, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("yosys JSON: {e}"))?;
    let nets = v["modules"][top]["netnames"].as_object().ok_or("yosys JSON: no netnames")?;
    Ok(nets
        .iter()
        .filter_map(|(name, net)| net["attributes"]["init"].as_str().map(|i| (name.clone(), i.to_string())))
        .filter(|(name, _)| !name.starts_with('$'))
        .collect())
}

/// Prove `g.raw` and `g.verilog` equivalent; `Err` says where they differ.
pub fn prove_clean(g: &Generated, dir: &Path) -> Result<(), String> {
    let top = g.name();
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let w = |f: &str, s: &str| std::fs::write(dir.join(f), s).map_err(|e| format!("{f}: {e}"));
    w("raw.v", &g.raw)?;
    w("clean.v", &g.verilog)?;
    w("rename.ys", &rename_script(g))?;
    let prep = "proc\nflatten\nopt -fast\n";
    let script = format!(
        "read_verilog raw.v\nhierarchy -check -top {top}\nscript rename.ys\n{prep}write_json gold.json\nrename {top} gold\ndesign -stash gold\n\
         read_verilog clean.v\nhierarchy -check -top {top}\n{prep}write_json gate.json\nrename {top} gate\ndesign -stash gate\n\
         design -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\n\
         equiv_make gold gate equiv\nhierarchy -top equiv\nequiv_struct\nequiv_simple\nequiv_induct\nequiv_status -assert\n"
    );
    w("equiv.ys", &script)?;
    let out = Command::new("yosys")
        .args(["-q", "-l", "equiv.log", "equiv.ys"])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run yosys: {e} (is it installed and on PATH?)"))?;
    if !out.status.success() {
        let log = std::fs::read_to_string(dir.join("equiv.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect();
        return Err(format!("{top}: raw and clean Verilog not proven equivalent (yosys, {}):\n{}", dir.display(), tail.join("\n")));
    }
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).map_err(|e| format!("{f}: {e}"));
    // In the raw design a register's initial value sits on its register
    // module's flip-flop wire (`mlb.valid$0.q`, or `state.state_q` in
    // rust-hdl's wrapper form); the clean design has it on `mlb.valid_0_q`.
    let renamed = |part: &str| g.renames.get(part).cloned().unwrap_or_else(|| part.to_string());
    let gold: BTreeMap<String, String> = inits(&read("gold.json")?, top)?
        .into_iter()
        .map(|(name, v)| match name.rsplit_once('.') {
            // The register is named for its parent's stub `<instance>$q`.
            Some((path, wire)) if wire == "q" || wire.ends_with("_q") => {
                let (parents, inst) = path.rsplit_once('.').map_or(("", path), |(p, i)| (p, i));
                let mut parts: Vec<String> = parents.split('.').filter(|p| !p.is_empty()).map(renamed).collect();
                parts.push(renamed(&format!("{inst}$q")));
                (parts.join("."), v)
            }
            _ => (name, v),
        })
        .collect();
    let gate = inits(&read("gate.json")?, top)?;
    if gold != gate {
        let keys: std::collections::BTreeSet<&String> = gold.keys().chain(gate.keys()).collect();
        let bad: Vec<String> = keys
            .into_iter()
            .filter(|k| gold.get(*k) != gate.get(*k))
            .map(|k| format!("{k}: raw {:?}, clean {:?}", gold.get(k), gate.get(k)))
            .collect();
        return Err(format!("{top}: initial values differ:\n  {}", bad.join("\n  ")));
    }
    Ok(())
}
