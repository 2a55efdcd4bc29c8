//! `mlugen cosim --seeds K --shard I/N --json F` and `mlugen merge`: a
//! cosimulation split into independent jobs by seed. Seed `first + k` (k in
//! 0..K) belongs to shard `k mod N`, so the shards are disjoint, reproducible
//! and independent of the machine; [`merge`] checks that a set of reports is
//! exactly the shards 0..N of one run and joins them into the report the
//! unsharded run writes.
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use sim::shard::Shard;

/// The seeds of shard `sh` (all with None) among `first..first + seeds`.
pub fn shard_seeds(sh: Option<Shard>, first: u64, seeds: u64) -> Vec<u64> {
    (0..seeds).filter(|&k| sh.map_or(true, |s| s.holds(k))).map(|k| first.wrapping_add(k)).collect()
}

/// One seed's run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedRun {
    pub seed: u64,
    /// Requests (MLU) or cycles (MLB) compared.
    pub compared: u64,
    /// The first mismatch, as printed; None when the run matched.
    pub mismatch: Option<String>,
    /// The stimulus counters (ProgramStats or MlbStats as JSON).
    pub counts: Value,
}

/// What `mlugen cosim --json` writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CosimReport {
    /// Always "cosim" (what `mlugen merge` recognises).
    pub kind: String,
    pub top: String,
    /// `mlb` or `mlu`.
    pub target: String,
    /// The configuration (entries, structure, replacement, mode, step limit).
    pub config: Value,
    /// Requests (or cycles) per seed.
    pub transactions: u64,
    pub first_seed: u64,
    pub seeds: u64,
    /// None: every seed.
    pub shard: Option<Shard>,
    pub runs: Vec<SeedRun>,
    pub compared: u64,
    pub mismatches: u64,
    /// The sum of every run's counts.
    pub counts: Value,
}

impl CosimReport {
    /// The report of `runs`, totals included.
    #[allow(clippy::too_many_arguments)]
    pub fn new(top: &str, target: &str, config: Value, transactions: u64, first_seed: u64, seeds: u64, shard: Option<Shard>, mut runs: Vec<SeedRun>) -> CosimReport {
        runs.sort_by_key(|r| r.seed.wrapping_sub(first_seed));
        let mut counts = Value::Null;
        for r in &runs {
            counts = add(&counts, &r.counts);
        }
        CosimReport {
            kind: "cosim".into(),
            top: top.into(),
            target: target.into(),
            config,
            transactions,
            first_seed,
            seeds,
            shard,
            compared: runs.iter().map(|r| r.compared).sum(),
            mismatches: runs.iter().filter(|r| r.mismatch.is_some()).count() as u64,
            runs,
            counts,
        }
    }
}

/// Element-wise sum of two counter trees (numbers added, objects by key,
/// arrays by position; Null is zero).
fn add(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Null, x) | (x, Value::Null) => x.clone(),
        (Value::Number(x), Value::Number(y)) => match (x.as_u64(), y.as_u64()) {
            (Some(x), Some(y)) => Value::from(x + y),
            _ => Value::from(x.as_f64().unwrap_or(0.0) + y.as_f64().unwrap_or(0.0)),
        },
        (Value::Object(x), Value::Object(y)) => {
            let mut m = x.clone();
            for (k, v) in y {
                let s = add(m.get(k).unwrap_or(&Value::Null), v);
                m.insert(k.clone(), s);
            }
            Value::Object(m)
        }
        (Value::Array(x), Value::Array(y)) => {
            (0..x.len().max(y.len())).map(|i| add(x.get(i).unwrap_or(&Value::Null), y.get(i).unwrap_or(&Value::Null))).collect()
        }
        (x, _) => x.clone(),
    }
}

/// Join the reports of the shards 0..N of one run (any order). Refuses
/// reports of different runs, a missing or repeated shard.
pub fn merge(parts: Vec<(String, CosimReport)>) -> Result<CosimReport, String> {
    // The run's identity from the first part (not a copy of its runs).
    let (first_name, f) = parts.first().ok_or("no cosim reports to merge")?;
    let (first_name, top, target, config) = (first_name.clone(), f.top.clone(), f.target.clone(), f.config.clone());
    let (transactions, first_seed, seeds) = (f.transactions, f.first_seed, f.seeds);
    for (name, r) in &parts {
        let same = r.top == top
            && r.target == target
            && r.config == config
            && r.transactions == transactions
            && r.first_seed == first_seed
            && r.seeds == seeds;
        if !same {
            return Err(format!("{name}: not a shard of the same run as {first_name} (top, configuration, transactions or seeds differ)"));
        }
        let want = shard_seeds(r.shard, r.first_seed, r.seeds);
        let got: Vec<u64> = r.runs.iter().map(|x| x.seed).collect();
        if got != want {
            return Err(format!("{name}: holds the runs of seeds {got:?}, its shard those of {want:?}"));
        }
    }
    Shard::check_cover(parts.iter().map(|(n, r)| (n.as_str(), r.shard)))?;
    let runs = parts.into_iter().flat_map(|(_, r)| r.runs).collect();
    Ok(CosimReport::new(&top, &target, config, transactions, first_seed, seeds, None, runs))
}
