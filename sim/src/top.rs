//! What a generated top is: its kind and parameters, its name, and the
//! `parameters` of its JSON manifest, each written once. The generator
//! (`hw::generate`) builds from a [`TopKind`], the synthesis flow and the
//! cosimulation find a top's files by [`TopKind::name`], and the vector
//! recorder reads a manifest back with [`TopKind::from_manifest`]. It lives
//! in the golden model's crate because none of this needs the RTL (the
//! synthesis crate does not depend on rust-hdl).
//!
//! A parameter's way from the command line: `MluFlags` (src/cli) parses it
//! into an [`MluConfig`], [`TopKind::for_config`] validates the
//! configuration once (`MluConfig::validate`) and turns it into the two tops
//! it generates, and `hw::generate` instantiates the block whose const
//! generics that top's entry count and lane count select.
use crate::config::{ConfigError, Mode, MluConfig, Replacement, Structure, Target};
use crate::mlu_unit::{UnitParams, MISS_SLOTS};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A top the generator emits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopKind {
    /// `hw::mlb::Mlb<entries, ..>` with a search pipeline of `hit_latency`
    /// (1 or 2) stages.
    Mlb { entries: usize, replacement: Replacement, hit_latency: usize },
    /// `hw::memcheck::Memcheck`.
    Memcheck,
    /// `hw::mlu_unit::MluUnit<entries, .., lanes, ..>`: the MLU as an SM unit
    /// (pipelined, `walkers` walks at once, warp-wide when `lanes` is 32),
    /// described by the same parameters as its golden twin
    /// `sim::mlu_unit::MluUnit`.
    MluUnit(UnitParams),
    /// `hw::canary::alloc_unit::AllocUnit` with its default parameters
    /// (always-on checking, slack 0): `canary_alloc`, untagged; with a tag
    /// seed (malloc returns tagged pointers, free retags FREED: spec
    /// section 8's registration with the MLU) `canary_alloc_tag<seed>`.
    CanaryAlloc { tag_seed: Option<u16> },
}

/// `plru` or `rr`: the replacement policy's short form in top names (the
/// value itself is spelled `plru` / `round_robin` everywhere else).
pub fn replacement_short(r: Replacement) -> &'static str {
    match r {
        Replacement::Plru => "plru",
        Replacement::RoundRobin => "rr",
    }
}

impl TopKind {
    /// The tops one configuration generates: the MLB on its own (at the
    /// unit's search latency) and the MLU as an SM unit in the shape
    /// `cfg.unit_shape()` gives (the committed one unless `unit` says).
    /// The configuration is validated for hardware here, so a bad value is
    /// an error naming its field.
    pub fn for_config(cfg: &MluConfig) -> Result<[TopKind; 2], ConfigError> {
        let u = cfg.unit_shape();
        let cfg = MluConfig { unit: Some(u), ..cfg.clone() };
        cfg.validate(Target::Hardware)?;
        let p = UnitParams::from_config(&cfg).expect("the unit shape is set");
        Ok([TopKind::Mlb { entries: cfg.entries, replacement: cfg.replacement, hit_latency: u.mlb_latency }, TopKind::MluUnit(p)])
    }

    /// The top's module and file name, e.g. `mlb8_plru`, `mlb16_rr_p2`,
    /// `memcheck`, `mlu8_bst_k4_l32_p2_c2`.
    pub fn name(&self) -> String {
        let stages = |prefix: &str, n: usize| if n == 1 { String::new() } else { format!("_{prefix}{n}") };
        match self {
            TopKind::Mlb { entries, replacement, hit_latency } => {
                format!("mlb{entries}_{}{}", replacement_short(*replacement), stages("p", *hit_latency))
            }
            TopKind::Memcheck => "memcheck".to_string(),
            TopKind::CanaryAlloc { tag_seed: None } => "canary_alloc".to_string(),
            TopKind::CanaryAlloc { tag_seed: Some(s) } => format!("canary_alloc_tag{s:04x}"),
            // The reset values of the mode and step-limit CSRs change the
            // RTL, so a non-default one is in the name too (`_hwonly`,
            // `_sl<N>`): two configurations never share a top name.
            TopKind::MluUnit(p) => format!(
                "mlu{}_{}{}{}{}_k{}_l{}{}{}{}",
                p.cfg.entries,
                p.cfg.structure.name(),
                if p.cfg.replacement == Replacement::Plru { "" } else { "_rr" },
                if p.cfg.mode == Mode::Compiler { "" } else { "_hwonly" },
                if p.cfg.step_limit == MluConfig::default().step_limit { String::new() } else { format!("_sl{}", p.cfg.step_limit) },
                p.walkers,
                p.lanes,
                stages("p", p.mlb_latency),
                stages("c", p.check_latency),
                if p.heap_path { "" } else { "_noheap" }
            ),
        }
    }

    /// The rule [`TopKind::name`] follows, for the manifest.
    pub fn naming(&self) -> &'static str {
        match self {
            TopKind::Mlb { .. } => "mlb<entries>_<replacement: plru|rr>, then _p2 if hit_latency is 2",
            TopKind::Memcheck => "memcheck (no parameters)",
            TopKind::CanaryAlloc { .. } => "canary_alloc, then _tag<tag seed, 4 hex digits> if tagged (the other parameters are the defaults)",
            TopKind::MluUnit(_) => {
                "mlu<entries>_<structures>, then _rr if replacement is round_robin, _hwonly if mode_reset is hwonly, _sl<step_limit_reset> if it is not 4096, then _k<walkers>_l<lanes>, then _p2 if the MLB search latency is 2, then _c2 if the lane checks take two stages, then _noheap if the heap window's lookup path is not built"
            }
        }
    }

    /// The manifest's `parameters` (the canary unit's come from its own
    /// parameter type, `hw::canary::alloc_unit::CanaryParams`).
    pub fn parameters(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        match self {
            TopKind::Mlb { entries, replacement, hit_latency } => {
                m.insert("entries".into(), json!(entries));
                m.insert("replacement".into(), json!(replacement.name()));
                if *hit_latency != 1 {
                    m.insert("hit_latency".into(), json!(hit_latency));
                }
            }
            TopKind::MluUnit(p) => {
                m.insert("entries".into(), json!(p.cfg.entries));
                // `structures`: the walkers' structure (the key predates the unit's
                // one-structure walkers; kept so the shipped Verilog's header,
                // which the synthesis report's hashes cover, stays as it is).
                m.insert("structures".into(), json!(p.cfg.structure.name()));
                m.insert("replacement".into(), json!(p.cfg.replacement.name()));
                m.insert("mode_reset".into(), json!(p.cfg.mode.name()));
                m.insert("step_limit_reset".into(), json!(p.cfg.step_limit));
                m.insert("walkers".into(), json!(p.walkers));
                m.insert("lanes".into(), json!(p.lanes));
                m.insert("mlb_latency".into(), json!(p.mlb_latency));
                m.insert("check_latency".into(), json!(p.check_latency));
                m.insert("miss_slots".into(), json!(p.miss_slots));
                // Only when off: the default's manifest (in the shipped
                // Verilog's header) keeps the keys it had.
                if !p.heap_path {
                    m.insert("heap_path".into(), json!(false));
                }
            }
            TopKind::Memcheck | TopKind::CanaryAlloc { .. } => {}
        }
        m
    }

    /// The top a manifest describes, from its `block` and `parameters`: the
    /// inverse of [`TopKind::parameters`] (an error names the parameter).
    pub fn from_manifest(block: &str, params: &BTreeMap<String, Value>) -> Result<TopKind, String> {
        let get = |k: &str| params.get(k).ok_or_else(|| format!("no parameter `{k}`"));
        let num = |k: &str| get(k)?.as_u64().map(|n| n as usize).ok_or_else(|| format!("parameter `{k}` is not a number"));
        let text = |k: &str| get(k)?.as_str().ok_or_else(|| format!("parameter `{k}` is not a string"));
        let replacement = || text("replacement").and_then(|r| r.parse::<Replacement>());
        if block.starts_with("hw::mlb::Mlb<") {
            let hit_latency = if params.contains_key("hit_latency") { num("hit_latency")? } else { 1 };
            Ok(TopKind::Mlb { entries: num("entries")?, replacement: replacement()?, hit_latency })
        } else if block == "hw::memcheck::Memcheck" {
            Ok(TopKind::Memcheck)
        } else if block == "hw::canary::alloc_unit::AllocUnit" {
            let tag_seed = match params.get("tag_seed") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_u64().and_then(|s| u16::try_from(s).ok()).ok_or("parameter `tag_seed` is not a 16-bit number")?),
            };
            Ok(TopKind::CanaryAlloc { tag_seed })
        } else if block.starts_with("hw::mlu_unit::MluUnit<") {
            let cfg = MluConfig {
                entries: num("entries")?,
                structure: text("structures")?.parse::<Structure>()?,
                replacement: replacement()?,
                mode: text("mode_reset")?.parse::<Mode>()?,
                step_limit: num("step_limit_reset")? as u32,
                unit: Some(crate::config::UnitShape {
                    walkers: num("walkers")?,
                    lanes: num("lanes")?,
                    mlb_latency: num("mlb_latency")?,
                    check_latency: num("check_latency")?,
                    heap_path: match params.get("heap_path") {
                        None => true,
                        Some(v) => v.as_bool().ok_or("parameter `heap_path` is not true or false")?,
                    },
                }),
            };
            cfg.validate(Target::Hardware).map_err(|e| e.to_string())?;
            let p = UnitParams::from_config(&cfg).expect("the unit shape is set");
            if num("miss_slots")? != MISS_SLOTS {
                return Err(format!("parameter `miss_slots` is not {MISS_SLOTS}"));
            }
            Ok(TopKind::MluUnit(p))
        } else {
            Err(format!("no top kind builds block {block}"))
        }
    }
}
