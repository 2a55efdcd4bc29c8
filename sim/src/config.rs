//! MLU configuration: the generator parameters and CSR reset values shared by
//! the golden model and the RTL (docs/design.md "Encodings", "MLB",
//! "Traverser").
//!
//! JSON form (every field optional, unknown fields rejected):
//! `{"entries": 8, "structure": "bst", "replacement": "plru", "mode": "compiler", "step_limit": 4096}`,
//! and `"unit": {"walkers": 4, "lanes": 32, "mlb_latency": 1, "check_latency": 1}` for the MLU as
//! an SM unit.
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// The metadata structure the traverser walks (CSR `structure`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Structure {
    /// Singly linked list, new nodes at the head.
    List,
    /// Balanced binary search tree ordered by base.
    #[default]
    Bst,
    /// Speed-of-light table: one step, one read per miss (models only).
    Sol,
}

impl Structure {
    /// CSR encoding: LIST=0, BST=1; sol has none (it is not built in hardware).
    pub fn bits(self) -> Option<u8> {
        match self {
            Structure::List => Some(0),
            Structure::Bst => Some(1),
            Structure::Sol => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Structure::List => "list",
            Structure::Bst => "bst",
            Structure::Sol => "sol",
        }
    }
    /// Parse "list" | "bst" | "sol".
    pub fn from_name(s: &str) -> Option<Structure> {
        match s {
            "list" => Some(Structure::List),
            "bst" => Some(Structure::Bst),
            "sol" => Some(Structure::Sol),
            _ => None,
        }
    }
}

/// MLB replacement policy among valid entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Replacement {
    /// Tree pseudo-LRU, N-1 bits.
    #[default]
    #[serde(rename = "plru")]
    Plru,
    /// A log2(N)-bit pointer advanced on fills that replace a valid entry.
    #[serde(rename = "round_robin")]
    RoundRobin,
}

impl Replacement {
    pub fn name(self) -> &'static str {
        match self {
            Replacement::Plru => "plru",
            Replacement::RoundRobin => "round_robin",
        }
    }
    pub fn from_name(s: &str) -> Option<Replacement> {
        match s {
            "plru" => Some(Replacement::Plru),
            "round_robin" => Some(Replacement::RoundRobin),
            _ => None,
        }
    }
}

/// Checking mode (CSR `mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The compiler pass issues LOADMETA per root pointer and passes the
    /// location to MEMCHECK.G.
    #[default]
    Compiler,
    /// Code built without the pass: MEMCHECK.G ignores its location operand and
    /// looks the metadata up by the pointer's own address.
    Hwonly,
}

impl Mode {
    /// CSR encoding: COMPILER=0, HWONLY=1.
    pub fn bits(self) -> u8 {
        match self {
            Mode::Compiler => 0,
            Mode::Hwonly => 1,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Mode::Compiler => "compiler",
            Mode::Hwonly => "hwonly",
        }
    }
    pub fn from_name(s: &str) -> Option<Mode> {
        match s {
            "compiler" => Some(Mode::Compiler),
            "hwonly" => Some(Mode::Hwonly),
            _ => None,
        }
    }
}

/// The command-line parsers of the three value types: one spelling each, the
/// same as in configuration files (`name`), and an error that lists them.
macro_rules! from_str_by_name {
    ($t:ty, $what:literal, $allowed:literal) => {
        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                <$t>::from_name(s).ok_or_else(|| format!("unknown {} `{s}`; allowed: {}", $what, $allowed))
            }
        }
    };
}
from_str_by_name!(Structure, "structure", "list, bst, sol");
from_str_by_name!(Replacement, "replacement policy", "plru, round_robin");
from_str_by_name!(Mode, "mode", "compiler, hwonly");

/// Who the configuration is for: the golden model accepts a superset of what
/// the hardware generator can build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Model,
    Hardware,
}

/// MLB sizes the golden model accepts (0 = no MLB, the sweeps' reference point).
pub const MODEL_ENTRIES: [usize; 7] = [0, 1, 2, 4, 8, 16, 32];
/// MLB sizes the hardware generator builds.
pub const HARDWARE_ENTRIES: [usize; 6] = [1, 2, 4, 8, 16, 32];
/// The step-limit CSR is 16 bits wide.
pub const STEP_LIMIT_MAX: u32 = 0xFFFF;

/// Generator parameters and CSR reset values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MluConfig {
    /// MLB entries.
    pub entries: usize,
    pub structure: Structure,
    pub replacement: Replacement,
    pub mode: Mode,
    /// Traversal step limit (nodes visited), 16-bit CSR.
    pub step_limit: u32,
    /// Build the MLU as an SM unit (spec section 6; `sim::mlu_unit`,
    /// `hw::mlu_unit`, top `mlu<N>_<structure>_k<K>_l<L>[_p2]`): pipelined,
    /// non-blocking, warp-wide. Absent (the default for now): the blocking
    /// MLU of the paper.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<UnitShape>,
}

/// Walker counts the MLU unit is built with.
pub const UNIT_WALKERS: [usize; 4] = [1, 2, 4, 8];
/// Lane counts: a scalar unit or a whole warp.
pub const UNIT_LANES: [usize; 2] = [1, 32];
/// MLB search stages: 1, or 2 for clocks a one-cycle search cannot make.
pub const UNIT_MLB_LATENCIES: [usize; 2] = [1, 2];
/// Lane-check stages: 1, or 2 (the lowest faulting lane picked a cycle
/// after the lanes compare) for clocks one stage cannot make.
pub const UNIT_CHECK_LATENCIES: [usize; 2] = [1, 2];

/// The shape of the MLU as an SM unit (config field `unit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UnitShape {
    /// K walkers, each serving one walk or location fetch at a time.
    pub walkers: usize,
    /// Lanes checked per MEMCHECK.G: 1 (scalar interface) or 32 (a warp).
    pub lanes: usize,
    /// MLB search stages m (the pipeline depth the clock needs).
    pub mlb_latency: usize,
    /// Lane-check stages c (the pipeline depth the clock needs).
    pub check_latency: usize,
    /// The heap window's lookup path (`sim::mlu` "Heap window"; default
    /// on). Off builds the unit without it: the heap CSRs are still
    /// written but no address is in the window, so a heap address is
    /// walked like any other. For the synthesis report's cost of the path.
    pub heap_path: bool,
}

impl Default for UnitShape {
    fn default() -> Self {
        UnitShape { walkers: 4, lanes: 32, mlb_latency: 1, check_latency: 1, heap_path: true }
    }
}

impl UnitShape {
    /// The unit's own ranges (walkers, lanes, stages). Part of
    /// [`MluConfig::validate`], the one place these rules are written; the
    /// generator calls it too for a unit top built without a configuration.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !UNIT_WALKERS.contains(&self.walkers) {
            return Err(ConfigError::field("unit.walkers", format!("{} walkers is not supported; allowed: {}", self.walkers, list(&UNIT_WALKERS))));
        }
        if !UNIT_LANES.contains(&self.lanes) {
            return Err(ConfigError::field("unit.lanes", format!("{} lanes is not supported; allowed: {}", self.lanes, list(&UNIT_LANES))));
        }
        if !UNIT_MLB_LATENCIES.contains(&self.mlb_latency) {
            return Err(ConfigError::field(
                "unit.mlb_latency",
                format!("{} MLB search stages is not supported; allowed: {}", self.mlb_latency, list(&UNIT_MLB_LATENCIES)),
            ));
        }
        if !UNIT_CHECK_LATENCIES.contains(&self.check_latency) {
            return Err(ConfigError::field(
                "unit.check_latency",
                format!("{} lane-check stages is not supported; allowed: {}", self.check_latency, list(&UNIT_CHECK_LATENCIES)),
            ));
        }
        Ok(())
    }
}

impl MluConfig {
    /// The unit's shape: `unit` if given, else the committed one (4
    /// walkers; 32 lanes, 1 in HWONLY mode, which needs one; two MLB search
    /// and two lane-check stages: the shape that closes 500 ps in ASAP7).
    pub fn unit_shape(&self) -> UnitShape {
        self.unit.unwrap_or(UnitShape { walkers: 4, lanes: if self.mode == Mode::Hwonly { 1 } else { 32 }, mlb_latency: 2, check_latency: 2, heap_path: true })
    }
}

impl Default for MluConfig {
    fn default() -> Self {
        MluConfig {
            entries: 8,
            structure: Structure::Bst,
            replacement: Replacement::Plru,
            mode: Mode::Compiler,
            step_limit: 4096,
            unit: None,
        }
    }
}

/// A configuration problem: which file (if any), which field, what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub file: Option<String>,
    /// The offending field, e.g. "entries".
    pub field: Option<String>,
    pub message: String,
}

impl ConfigError {
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        ConfigError { file: None, field: Some(field.to_string()), message: message.into() }
    }
    /// The same error, attributed to `file`.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ConfigError {}

fn list(v: &[usize]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}

impl MluConfig {
    /// Check the parameters for `target`; the error names the field and the
    /// allowed values.
    pub fn validate(&self, target: Target) -> Result<(), ConfigError> {
        let allowed: &[usize] = match target {
            Target::Model => &MODEL_ENTRIES,
            Target::Hardware => &HARDWARE_ENTRIES,
        };
        if !allowed.contains(&self.entries) {
            return Err(ConfigError::field(
                "entries",
                format!("{} MLB entries is not supported; allowed: {}", self.entries, list(allowed)),
            ));
        }
        if target == Target::Hardware && self.structure == Structure::Sol {
            return Err(ConfigError::field(
                "structure",
                "sol is a model-only reference point and cannot be built; allowed for hardware: list, bst",
            ));
        }
        if self.step_limit > STEP_LIMIT_MAX {
            return Err(ConfigError::field(
                "step_limit",
                format!("{} does not fit the 16-bit step-limit CSR; allowed: 0..=65535", self.step_limit),
            ));
        }
        if let Some(u) = &self.unit {
            u.validate()?;
            if self.mode == Mode::Hwonly && u.lanes != 1 {
                return Err(ConfigError::field(
                    "unit.lanes",
                    "mode hwonly needs lanes = 1 (one range lookup per allocation a warp touches is not built)",
                ));
            }
            if self.structure == Structure::Sol {
                return Err(ConfigError::field("structure", "the MLU unit walks a list or a bst; sol has no walker"));
            }
        }
        Ok(())
    }

    /// Parse a JSON configuration (not yet validated: call [`MluConfig::validate`]).
    pub fn from_json_str(s: &str) -> Result<MluConfig, ConfigError> {
        serde_json::from_str(s).map_err(|e| {
            // The option of the retired hit-under-miss MLU gets its own word.
            let retired = e.to_string().contains("unknown field `hit_under_miss`");
            ConfigError {
                file: None,
                field: retired.then(|| "hit_under_miss".to_string()),
                message: if retired {
                    format!("{e}: the hit-under-miss MLU was retired; the MLU unit (field `unit`) serves hits under misses")
                } else {
                    format!("invalid MLU configuration: {e} (allowed fields: entries, structure (list|bst|sol), replacement (plru|round_robin), mode (compiler|hwonly), step_limit, unit {{walkers (1|2|4|8), lanes (1|32), mlb_latency (1|2), check_latency (1|2), heap_path (true|false)}})")
                },
            }
        })
    }

    /// Read and parse a JSON configuration file; errors name the file.
    pub fn from_json_file(path: impl AsRef<Path>) -> Result<MluConfig, ConfigError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: Some(name.clone()),
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        Self::from_json_str(&text).map_err(|e| e.in_file(name))
    }
}
