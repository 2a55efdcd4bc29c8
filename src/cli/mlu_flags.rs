//! The MLU configuration flags that `mlugen generate` and `mlugen cosim`
//! share: defaults, then `--config FILE`, then the flags, validated once
//! for hardware, and an error that names the flag (or the file) a bad value
//! came from. Values are parsed by clap into the configuration's own types
//! (`sim::config`'s `FromStr`: the spelling of the configuration files).
use anyhow::{anyhow, Result};
use sim::config::{Mode, MluConfig, Replacement, Structure, Target};
use std::path::PathBuf;

#[derive(clap::Args, Clone, Debug, Default)]
pub struct MluFlags {
    /// JSON configuration file (sim::config::MluConfig: entries, structure,
    /// replacement, mode, step_limit, unit); the flags below override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// MLB entries: 1, 2, 4, 8, 16 or 32.
    #[arg(long)]
    pub entries: Option<usize>,
    /// Metadata structure: list or bst.
    #[arg(long)]
    pub structure: Option<Structure>,
    /// MLB replacement policy: plru or round_robin.
    #[arg(long)]
    pub replacement: Option<Replacement>,
    /// Checking mode: compiler or hwonly.
    #[arg(long)]
    pub mode: Option<Mode>,
    /// The MLU is always the SM unit (top
    /// `mlu<N>_<structure>_k<K>_l<L>[_p2][_c2][_noheap]`; config field `unit`), in
    /// the committed shape (4 walkers, 32 lanes (1 in HWONLY mode), two MLB
    /// search and two lane-check stages) unless the file or the flags below
    /// say; `--unit` asks for nothing more (kept for scripts).
    #[arg(long)]
    pub unit: bool,
    /// MLU unit: walkers K (1, 2, 4 or 8); implies --unit.
    #[arg(long)]
    pub walkers: Option<usize>,
    /// MLU unit: lanes (1 or 32); implies --unit.
    #[arg(long)]
    pub lanes: Option<usize>,
    /// MLU unit: MLB search stages (1, or 2 for a clock a one-cycle search
    /// cannot make); implies --unit.
    #[arg(long)]
    pub mlb_latency: Option<usize>,
    /// MLU unit: lane-check stages (1, or 2 for a clock one stage cannot
    /// make: the lowest faulting lane is picked a cycle later); implies --unit.
    #[arg(long)]
    pub check_latency: Option<usize>,
    /// MLU unit: build it without the heap window's lookup path (top name
    /// `_noheap`; config `unit.heap_path: false`), for the path's cost;
    /// implies --unit.
    #[arg(long)]
    pub no_heap_path: bool,
}

impl MluFlags {
    /// Any flag given (`generate --all` takes none).
    pub fn any(&self) -> bool {
        self.config.is_some()
            || self.entries.is_some()
            || self.structure.is_some()
            || self.replacement.is_some()
            || self.mode.is_some()
            || self.unit_flags()
    }

    /// `--unit` or one of the unit's own flags.
    pub fn unit_flags(&self) -> bool {
        self.unit
            || self.walkers.is_some()
            || self.lanes.is_some()
            || self.mlb_latency.is_some()
            || self.check_latency.is_some()
            || self.no_heap_path
    }

    /// The configuration, validated for hardware, with its unit shape set.
    pub fn resolve(&self) -> Result<MluConfig> {
        let mut cfg = match &self.config {
            Some(path) => MluConfig::from_json_file(path).map_err(|e| anyhow!("{e}"))?,
            None => MluConfig::default(),
        };
        if let Some(n) = self.entries {
            cfg.entries = n;
        }
        cfg.structure = self.structure.unwrap_or(cfg.structure);
        cfg.replacement = self.replacement.unwrap_or(cfg.replacement);
        cfg.mode = self.mode.unwrap_or(cfg.mode);
        // The unit's shape: the file's, else the committed one
        // (MluConfig::unit_shape), then the flags.
        let mut u = cfg.unit_shape();
        u.walkers = self.walkers.unwrap_or(u.walkers);
        u.lanes = self.lanes.unwrap_or(u.lanes);
        u.mlb_latency = self.mlb_latency.unwrap_or(u.mlb_latency);
        u.check_latency = self.check_latency.unwrap_or(u.check_latency);
        u.heap_path &= !self.no_heap_path;
        cfg.unit = Some(u);
        cfg.validate(Target::Hardware).map_err(|e| {
            // Name where the bad value came from: the flag that set it, else the file.
            let flag = match e.field.as_deref() {
                Some("entries") if self.entries.is_some() => Some("--entries"),
                Some("structure") if self.structure.is_some() => Some("--structure"),
                Some("replacement") if self.replacement.is_some() => Some("--replacement"),
                Some("mode") if self.mode.is_some() => Some("--mode"),
                Some("unit.walkers") if self.walkers.is_some() => Some("--walkers"),
                Some("unit.lanes") if self.lanes.is_some() => Some("--lanes"),
                Some("unit.mlb_latency") if self.mlb_latency.is_some() => Some("--mlb-latency"),
                Some("unit.check_latency") if self.check_latency.is_some() => Some("--check-latency"),
                _ => None,
            };
            match (flag, &self.config) {
                (Some(f), _) => anyhow!("invalid configuration: {f}: {e}"),
                (None, Some(p)) => anyhow!("invalid configuration: {}", e.clone().in_file(p.display().to_string())),
                (None, None) => anyhow!("invalid configuration: {e}"),
            }
        })?;
        Ok(cfg)
    }
}
