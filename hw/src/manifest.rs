//! The JSON manifest written next to every generated Verilog top: what a
//! downstream flow (synthesis scripts, a cosimulation harness, a user's SoC
//! integration) needs without parsing Verilog: the parameters the top was
//! built with, its ports (name, direction, width, as in the Verilog), every
//! module in the file, and the generator that made it.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Manifest format version (bump on an incompatible change).
pub const MANIFEST_VERSION: u32 = 2;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub manifest_version: u32,
    /// Top module name (also the file stem: `<top>.v`, `<top>.json`).
    pub top: String,
    /// The rust-hdl block it was generated from, e.g. `hw::mlb::Mlb<8, 3>`.
    pub block: String,
    /// "mlugen <version>".
    pub generator: String,
    /// "rust-hdl <version>".
    pub hdl: String,
    /// Generation parameters (entries, replacement, structure, ...).
    pub parameters: BTreeMap<String, serde_json::Value>,
    /// Ports of the top module in declaration order.
    pub ports: Vec<Port>,
    /// Every module in the Verilog file, top first.
    pub modules: Vec<String>,
    /// How the top's name encodes its parameters (every configuration whose
    /// RTL differs has its own name).
    #[serde(default)]
    pub naming: String,
    /// Encodings, reset and handshake rules, latencies (hw::interface).
    #[serde(default)]
    pub interface: crate::interface::Interface,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    pub name: String,
    /// "input" or "output".
    pub direction: String,
    pub width: usize,
    /// What the port carries (hw::interface).
    #[serde(default)]
    pub meaning: String,
}

/// Module names of a Verilog text, in order (`module NAME(`).
pub fn module_names(verilog: &str) -> Vec<String> {
    verilog
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("module "))
        .filter_map(|rest| rest.split('(').next())
        .map(|n| n.trim().to_string())
        .collect()
}

/// The ports of module `top` as declared in `verilog` (rust-hdl declares one
/// port per line: `input wire  [55:0] rs_addr;`, `output reg  rs_hit;`).
pub fn module_ports(verilog: &str, top: &str) -> Result<Vec<Port>, String> {
    let header = format!("module {top}(");
    let start = verilog.find(&header).ok_or_else(|| format!("module {top} not found"))?;
    let body = &verilog[start..];
    let end = body.find("endmodule").ok_or_else(|| format!("module {top} has no endmodule"))?;
    let mut ports = vec![];
    for line in body[..end].lines() {
        let mut words = line.split_whitespace().peekable();
        let direction = match words.peek() {
            Some(&"input") => "input",
            Some(&"output") => "output",
            _ => continue,
        };
        words.next();
        let mut width = 1;
        let mut name = None;
        for w in words {
            if w == "wire" || w == "reg" {
                continue;
            }
            if let Some(range) = w.strip_prefix('[').and_then(|r| r.strip_suffix(":0]")) {
                width = range.parse::<usize>().map_err(|e| format!("bad port range in `{line}`: {e}"))? + 1;
            } else {
                name = Some(w.trim_end_matches(';').to_string());
            }
        }
        let name = name.ok_or_else(|| format!("cannot parse port declaration `{line}`"))?;
        ports.push(Port { name, direction: direction.to_string(), width, meaning: String::new() });
    }
    Ok(ports)
}
