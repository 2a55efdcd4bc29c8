//! Clock gating: a transform of Yosys's JSON netlist between the generic
//! synthesis and the technology mapping (Yosys 0.23 has no clock-gating
//! pass). After `synth -run fine:` every flip-flop that holds unless enabled
//! is a `$_DFFE_P?_` (or `$_SDFFCE_P???_`: synchronous reset taken only when
//! enabled) cell. Flip-flops sharing one clock and one enable net form a
//! group; each group of at least `min_group` flip-flops gets one integrated
//! clock-gating cell (a latch and an AND: ASAP7 `ICGx1_ASAP7_75t_R`,
//! Nangate45 `CLKGATE_X1`) whose gated clock drives the group, and its
//! flip-flops become plain `$_DFF_P_` (`$_SDFF_P??_`) cells: the enable
//! multiplexer in front of every bit disappears, and a flip-flop whose
//! group is not enabled sees no clock edge. A negative enable gets one
//! inverter. Smaller groups are left as they are (an ICG costs about a
//! flip-flop's area).
//!
//! For the MLB this makes one group per entry (its location, base, size and
//! tag registers share the entry's write enable) and one per output-data
//! register bank (they load only on a request).
use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// An integrated clock-gating cell of a library.
#[derive(Clone, Debug)]
pub struct IcgCell {
    pub cell: &'static str,
    pub clock_pin: &'static str,
    pub enable_pin: &'static str,
    pub gated_clock_pin: &'static str,
    /// A scan/test enable input, tied to 0.
    pub test_pin: Option<&'static str>,
}

/// What the transform did.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct GatingStats {
    /// ICG cells inserted (= gated groups).
    pub icgs: u64,
    /// Flip-flops now clocked by a gated clock.
    pub gated_flip_flops: u64,
    /// Enable flip-flops left ungated (their group was too small).
    pub ungated_enable_flip_flops: u64,
    /// Size of every gated group, largest first.
    pub group_sizes: Vec<u64>,
}

/// The default smallest group worth a gate.
pub const MIN_GROUP: usize = 8;

/// `$_DFFE_PP_` -> (`$_DFF_P_`, enable active high); `$_SDFFCE_PP0N_` ->
/// (`$_SDFF_PP0_`, active low). Only rising-edge flip-flops are gated.
fn ungated_type(t: &str) -> Option<(String, bool)> {
    if let Some(p) = t.strip_prefix("$_DFFE_P").and_then(|r| r.strip_suffix('_')) {
        return match p {
            "P" => Some(("$_DFF_P_".into(), true)),
            "N" => Some(("$_DFF_P_".into(), false)),
            _ => None,
        };
    }
    if let Some(p) = t.strip_prefix("$_SDFFCE_P").and_then(|r| r.strip_suffix('_')) {
        let b = p.as_bytes();
        if b.len() == 3 && matches!(b[0], b'P' | b'N') && matches!(b[1], b'0' | b'1') && matches!(b[2], b'P' | b'N') {
            return Some((format!("$_SDFF_P{}{}_", b[0] as char, b[1] as char), b[2] == b'P'));
        }
    }
    None
}

fn bit_of(c: &Value, port: &str, cell: &str) -> Result<Value> {
    let v = c
        .get("connections")
        .and_then(|x| x.get(port))
        .and_then(|x| x.as_array())
        .with_context(|| format!("cell {cell}: no connection for port {port}"))?;
    if v.len() != 1 {
        bail!("cell {cell}: port {port} is {} bits wide, expected 1", v.len());
    }
    Ok(v[0].clone())
}

fn max_bit(v: &Value, m: &mut u64) {
    match v {
        Value::Number(n) => *m = (*m).max(n.as_u64().unwrap_or(0)),
        Value::Array(a) => a.iter().for_each(|x| max_bit(x, m)),
        Value::Object(o) => o.values().for_each(|x| max_bit(x, m)),
        _ => {}
    }
}

/// Insert clock gates into module `top` of a Yosys JSON netlist. Errors on
/// text that is not a Yosys JSON netlist or has no module `top`.
pub fn insert_clock_gates(json_text: &str, top: &str, icg: &IcgCell, min_group: usize) -> Result<(String, GatingStats)> {
    let mut j: Value = serde_json::from_str(json_text).context("not a JSON netlist")?;
    let module = j
        .get_mut("modules")
        .and_then(|m| m.get_mut(top))
        .with_context(|| format!("JSON netlist has no module {top:?}"))?;
    let mut next = 0u64;
    max_bit(module, &mut next);
    next += 1;
    let cells = module
        .get_mut("cells")
        .and_then(|c| c.as_object_mut())
        .with_context(|| format!("module {top}: no cells"))?;
    // (clock bit, enable bit, enable active high) -> cell names
    let mut groups: BTreeMap<(String, String, bool), Vec<String>> = BTreeMap::new();
    for (name, c) in cells.iter() {
        let Some(t) = c.get("type").and_then(|t| t.as_str()) else { continue };
        let Some((_, high)) = ungated_type(t) else { continue };
        let clk = bit_of(c, "C", name)?;
        let en = bit_of(c, "E", name)?;
        groups.entry((clk.to_string(), en.to_string(), high)).or_default().push(name.clone());
    }
    let mut st = GatingStats::default();
    let mut new_cells = Vec::new();
    let mut new_nets = Vec::new();
    for ((_, _, high), names) in groups.iter() {
        if names.len() < min_group {
            st.ungated_enable_flip_flops += names.len() as u64;
            continue;
        }
        let first = &cells[&names[0]];
        let clk = bit_of(first, "C", &names[0])?;
        let mut en = bit_of(first, "E", &names[0])?;
        let k = st.icgs;
        if !high {
            let inv = json!(next);
            next += 1;
            new_cells.push((
                format!("mlugen_icg{k}_en_inv"),
                json!({"hide_name": 0, "type": "$_NOT_", "parameters": {}, "attributes": {},
                       "port_directions": {"A": "input", "Y": "output"}, "connections": {"A": [en], "Y": [inv]}}),
            ));
            new_nets.push((format!("mlugen_icg{k}_en_n"), inv.clone()));
            en = inv;
        }
        let gclk = json!(next);
        next += 1;
        let mut conns = serde_json::Map::new();
        let mut dirs = serde_json::Map::new();
        conns.insert(icg.clock_pin.into(), json!([clk]));
        conns.insert(icg.enable_pin.into(), json!([en]));
        conns.insert(icg.gated_clock_pin.into(), json!([gclk]));
        dirs.insert(icg.clock_pin.into(), json!("input"));
        dirs.insert(icg.enable_pin.into(), json!("input"));
        dirs.insert(icg.gated_clock_pin.into(), json!("output"));
        if let Some(tp) = icg.test_pin {
            conns.insert(tp.into(), json!(["0"]));
            dirs.insert(tp.into(), json!("input"));
        }
        new_cells.push((
            format!("mlugen_icg{k}"),
            json!({"hide_name": 0, "type": icg.cell, "parameters": {}, "attributes": {},
                   "port_directions": Value::Object(dirs), "connections": Value::Object(conns)}),
        ));
        new_nets.push((format!("mlugen_gclk{k}"), gclk.clone()));
        for n in names {
            let c = cells.get_mut(n).expect("grouped from this map");
            let t = c["type"].as_str().unwrap_or_default().to_string();
            let (plain, _) = ungated_type(&t).expect("grouped by this test");
            c["type"] = json!(plain);
            let conn = c["connections"].as_object_mut().expect("checked by bit_of");
            conn.remove("E");
            conn.insert("C".into(), json!([gclk]));
            if let Some(d) = c.get_mut("port_directions").and_then(|d| d.as_object_mut()) {
                d.remove("E");
            }
        }
        st.icgs += 1;
        st.gated_flip_flops += names.len() as u64;
        st.group_sizes.push(names.len() as u64);
    }
    for (n, c) in new_cells {
        cells.insert(n, c);
    }
    let nets = module
        .get_mut("netnames")
        .and_then(|c| c.as_object_mut())
        .with_context(|| format!("module {top}: no netnames"))?;
    for (n, b) in new_nets {
        nets.insert(n, json!({"hide_name": 0, "bits": [b], "attributes": {}}));
    }
    st.group_sizes.sort_unstable_by(|a, b| b.cmp(a));
    Ok((serde_json::to_string(&j)?, st))
}

/// Behavioural Verilog of the ICG cells, for gate-level simulation (Yosys
/// writes no model for a cell described by a Liberty `statetable`): a latch
/// transparent while the clock is low, ANDed with the clock.
pub fn icg_model(icg: &IcgCell) -> String {
    let test = icg.test_pin.map(|t| format!(", input {t}")).unwrap_or_default();
    let en = match icg.test_pin {
        Some(t) => format!("{} | {t}", icg.enable_pin),
        None => icg.enable_pin.to_string(),
    };
    format!(
        "// Behavioural model of {cell} (mlugen synth, gate-level activity runs).\nmodule {cell}(input {ck}, input {e}{test}, output {g});\n  reg en_l;\n  always @({ck} or {en_s}) if (!{ck}) en_l = {en};\n  assign {g} = {ck} & en_l;\nendmodule\n",
        cell = icg.cell,
        ck = icg.clock_pin,
        e = icg.enable_pin,
        g = icg.gated_clock_pin,
        en_s = en.replace(" | ", " or "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ICG: IcgCell = IcgCell { cell: "ICG", clock_pin: "CLK", enable_pin: "ENA", gated_clock_pin: "GCLK", test_pin: Some("SE") };

    fn dffe(t: &str, d: u64, e: u64, q: u64) -> Value {
        json!({"type": t, "connections": {"C": [2], "D": [d], "E": [e], "Q": [q]}})
    }

    #[test]
    fn groups_by_enable_and_skips_small_groups() {
        let mut cells = serde_json::Map::new();
        for i in 0..8 {
            cells.insert(format!("a{i}"), dffe("$_DFFE_PP_", 10 + i, 3, 30 + i));
        }
        for i in 0..8 {
            cells.insert(format!("b{i}"), dffe("$_DFFE_PN_", 50 + i, 4, 70 + i));
        }
        cells.insert("c".into(), dffe("$_DFFE_PP_", 90, 5, 91));
        cells.insert("d".into(), json!({"type": "$_DFF_P_", "connections": {"C": [2], "D": [92], "Q": [93]}}));
        let j = json!({"modules": {"t": {"cells": cells, "netnames": {}}}});
        let (out, st) = insert_clock_gates(&j.to_string(), "t", &ICG, 8).unwrap();
        assert_eq!(st.icgs, 2);
        assert_eq!(st.gated_flip_flops, 16);
        assert_eq!(st.ungated_enable_flip_flops, 1);
        let o: Value = serde_json::from_str(&out).unwrap();
        let cells = o["modules"]["t"]["cells"].as_object().unwrap();
        assert_eq!(cells.values().filter(|c| c["type"] == "ICG").count(), 2);
        assert_eq!(cells.values().filter(|c| c["type"] == "$_NOT_").count(), 1);
        assert_eq!(cells["a0"]["type"], "$_DFF_P_");
        assert!(cells["a0"]["connections"].get("E").is_none());
        assert_eq!(cells["c"]["type"], "$_DFFE_PP_");
        // Every gated flop of group a is clocked by the ICG whose enable is bit 3.
        let icg_a = cells.values().find(|c| c["type"] == "ICG" && c["connections"]["ENA"] == json!([3])).unwrap();
        assert_eq!(cells["a5"]["connections"]["C"], icg_a["connections"]["GCLK"]);
        assert_eq!(icg_a["connections"]["SE"], json!(["0"]));
    }

    #[test]
    fn reset_enable_flops_keep_their_reset() {
        assert_eq!(ungated_type("$_SDFFCE_PP0P_"), Some(("$_SDFF_PP0_".into(), true)));
        assert_eq!(ungated_type("$_SDFFCE_PN1N_"), Some(("$_SDFF_PN1_".into(), false)));
        assert_eq!(ungated_type("$_DFFE_NP_"), None);
        assert_eq!(ungated_type("$_SDFFE_PP0P_"), None);
    }

    #[test]
    fn broken_input_is_an_error() {
        assert!(insert_clock_gates("not json", "t", &ICG, 8).is_err());
        let msg = format!("{:#}", insert_clock_gates(r#"{"modules": {}}"#, "t", &ICG, 8).unwrap_err());
        assert!(msg.contains("no module \"t\""), "{msg}");
        let bad = json!({"modules": {"t": {"cells": {"x": {"type": "$_DFFE_PP_", "connections": {"C": [2], "D": [3]}}}, "netnames": {}}}});
        let msg = format!("{:#}", insert_clock_gates(&bad.to_string(), "t", &ICG, 1).unwrap_err());
        assert!(msg.contains("cell x: no connection for port E"), "{msg}");
    }
}
