//! `mlugen merge FILE... --json OUT`: join the JSON of the shards of one
//! `mlugen cosim --shard I/N` run into the JSON the unsharded run writes
//! (docs/scale-out.md); every shard 0..N must be given exactly once.
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The shards' JSON files (from `--json`), in any order.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Where the merged JSON goes.
    #[arg(long)]
    json: PathBuf,
}

pub fn run(a: Args) -> Result<()> {
    let mut docs = Vec::new();
    for f in &a.files {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", f.display()))?;
        docs.push((f.display().to_string(), v));
    }
    let is_cosim = |v: &serde_json::Value| v.get("kind").and_then(|k| k.as_str()) == Some("cosim");
    if !docs.iter().all(|(_, v)| is_cosim(v)) {
        bail!("merge: the files must all be `mlugen cosim --json` outputs");
    }
    let parts = docs
        .into_iter()
        .map(|(n, v)| serde_json::from_value(v).map(|r| (n.clone(), r)).with_context(|| format!("{n}: not a cosim report")))
        .collect::<Result<Vec<_>>>()?;
    let m = verif::shard::merge(parts).map_err(|e| anyhow::anyhow!("merge: {e}"))?;
    let what = format!("cosim {}: {} seeds, {} compared, {} mismatching", m.top, m.runs.len(), m.compared, m.mismatches);
    let merged = serde_json::to_value(&m)?;
    std::fs::write(&a.json, serde_json::to_string_pretty(&merged)? + "\n").with_context(|| format!("--json {}", a.json.display()))?;
    writeln!(super::out::stdout(), "mlugen merge: {what} -> {}", a.json.display())?;
    Ok(())
}
