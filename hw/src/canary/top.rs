//! Verilog emission of the canary allocator unit (`canary_alloc` top,
//! registered in `hw::generate`): the default top is the always-on unit
//! with the model's default k_s/k_mp, slack 0, base 0x1000_0000.
use super::alloc_unit::{AllocUnit, CanaryParams, CLASSES, PAGES, PAGE_SIZE, REGION_PAGES, REQUESTERS};
use crate::generate::{emit, Generated};
use anyhow::{anyhow, Result};
use serde_json::json;
use std::collections::BTreeMap;

/// Emit an [`AllocUnit`] as top `name`.
pub fn build(name: &str, p: &CanaryParams) -> Result<Generated> {
    let mut uut = AllocUnit::new(p).map_err(|e| anyhow!("{name}: {e}"))?;
    let params = BTreeMap::from([
        ("base".to_string(), json!(format!("{:#x}", p.base))),
        ("pages".to_string(), json!(PAGES)),
        ("page_size".to_string(), json!(PAGE_SIZE)),
        ("region_pages".to_string(), json!(REGION_PAGES)),
        ("classes".to_string(), json!(CLASSES)),
        ("requesters".to_string(), json!(REQUESTERS)),
        ("k_s".to_string(), json!(p.k_s)),
        ("k_mp".to_string(), json!(p.k_mp)),
        ("slack".to_string(), json!(p.slack)),
        ("check".to_string(), json!(p.check.name())),
    ]);
    emit(name, "hw::canary::alloc_unit::AllocUnit", &mut uut, params, &crate::interface::canary())
}
