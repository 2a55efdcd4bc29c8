//! Scenarios: the command-line contract for checking programs (spec section
//! 10), parsed and run on the golden model.
//!
//! A scenario is a JSON object: MLU parameters and a list of host/kernel
//! events. It is parsed by hand from `serde_json::Value` so that every error
//! names the file, the event index and op, and the field
//! (`bad.json: event 3 (access): missing field "width"`); unknown fields are
//! errors too (a typo must not silently fall back to a default).
//!
//! Top level: `name` (string, default: empty), `description` (string,
//! optional), `mode` (`compiler` | `hwonly`, required), `structure` (`list` |
//! `bst` | `sol`, required), `mlb_entries` (0, 1, 2, 4, 8, 16, 32; default 8,
//! the spec's default), `seed` (default 1), and the extensions `step_limit`
//! (default 4096), `replacement` (`plru` | `round_robin`, default `plru`) and
//! `tag_history` (tag generations remembered per address, 0..=64, default
//! 8: `RuntimeConfig::tag_history`), `events` (array, required).
//!
//! Events (`op`), each may also carry a free-text `note`:
//! - `malloc`: `name`, `size` (> 0), optional `base` (used as is);
//! - `free`: `name` (that allocation's tagged pointer), or `ptr` + `offset`,
//!   or `addr` (raw pointer, for INVALID_FREE); optional `expect`;
//! - `access`: `ptr` + `offset` (tagged pointer of that allocation plus a
//!   signed offset, valid after a free: a dangling pointer; optional
//!   `untagged: true` clears the tag, as code that strips it) or `addr` (raw
//!   pointer, tag in its top byte); `width` (1, 2, 4, 8, 16), `kind` (`load` |
//!   `store`), optional `expect`;
//! - `shared_access`: `offset` (signed), `width`, `size` (the shared window's
//!   size, > 0), optional `base` (the window's base, default 0), `kind`,
//!   optional `expect`; the address is `base + offset`, in the 32-bit
//!   shared-memory space (0 <= address, base + size <= 2^32);
//! - `corrupt_link` (extension): `name`, `link` (0 or 1), `to` (an allocation
//!   name: its node's location; or an address): overwrites that link word of
//!   the allocation's node, e.g. to make a cycle;
//! - `poison` (extension): `name`: every read of that allocation's node
//!   answers with a memory error from now on;
//! - `flush` (extension): FLUSH the MLB;
//! - `device_malloc` (extension, spec section 8): `name`, `size` (> 0): an
//!   in-kernel malloc on the device heap, which hands out a tagged pointer;
//! - `device_free` (extension): `name`, or `ptr` + `offset`, or `addr`, as
//!   `free`, on the device heap; optional `expect` (`NONE`, `DOUBLE_FREE`,
//!   `INVALID_FREE`, `CANARY_OVERFLOW`: the allocator's findings).
//!
//! Device heap (top-level `device_heap`, optional object; implied with its
//! defaults by a device event): `check` (`off` | `free` | `always`, default
//! `free`) and `slack` (bytes, default 0). The heap has the canary RTL
//! unit's geometry (`sim::canary::alloc_unit::rtl_heap_config`: 16 pages of
//! 256 B at 0x1000_0000, classes 32-256 B), tags from an LFSR seeded by
//! `seed`, and is registered with the MLU (`sim::device_heap`). A store that
//! passes its check (or goes through an untagged pointer) writes its bytes
//! into the heap, so a store over a canary is found at `device_free`; a
//! faulting store is not performed. Accesses to device allocations are
//! `access` events naming them.
//!
//! Addresses, sizes and offsets are JSON integers or `"0x..."` strings
//! (offsets may be negative: `-4` or `"-0x4"`). `expect` is, on an access, a
//! fault code of spec section 4 (`NONE`, `OUT_OF_BOUNDS`, ...) and, on a free,
//! `NONE`, `DOUBLE_FREE` or `INVALID_FREE`; the runner ignores it (it is for
//! `mlugen check --verify` and the corpus's tests).
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use serde_json::{Map, Value};

use crate::canary::heap::CheckMode;
use crate::config::{Mode, MluConfig, Replacement, Structure, MODEL_ENTRIES, STEP_LIMIT_MAX};
use crate::runtime::{DEFAULT_TAG_HISTORY, TAG_HISTORY_MAX};

mod run;
pub use run::{Outcome, ScenarioResult};

/// A parsed, statically checked scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub seed: u64,
    /// The runtime's `tag_history` (default 8).
    pub tag_history: usize,
    /// MLB entries, structure, replacement, mode and step limit.
    pub config: MluConfig,
    /// The device heap, when the scenario has one (see the module doc).
    pub device_heap: Option<DeviceHeapSpec>,
    pub events: Vec<ScenarioEvent>,
}

/// The scenario's device heap: the allocator's check mode and slack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceHeapSpec {
    pub check: CheckMode,
    pub slack: u64,
}

impl Default for DeviceHeapSpec {
    fn default() -> Self {
        DeviceHeapSpec { check: CheckMode::Free, slack: 0 }
    }
}

/// Access direction: a store that is let through writes the device heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Load,
    Store,
}

/// Which pointer an access or a free uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtrSpec {
    /// The tagged pointer of allocation `name` plus `offset` (64-bit wrapping
    /// add, docs/design.md "Pointers"); with `untagged`, its tag cleared
    /// first (code that strips tags, or was built without the runtime).
    Alloc { name: String, offset: i64, untagged: bool },
    /// A raw 64-bit pointer, tag in the top byte.
    Raw(u64),
}

/// Where a corrupted link points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkTarget {
    /// The node of that allocation.
    Node(String),
    /// Any word value (e.g. an unmapped address).
    Addr(u64),
}

/// A verdict written into the corpus by hand: an MLU fault code or a runtime
/// finding on free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Fault(crate::fault::FaultCode),
    DoubleFree,
    InvalidFree,
    /// A device_free that found a canary overwritten.
    CanaryOverflow,
}

impl Expect {
    pub fn name(self) -> &'static str {
        match self {
            Expect::Fault(c) => c.name(),
            Expect::DoubleFree => "DOUBLE_FREE",
            Expect::InvalidFree => "INVALID_FREE",
            Expect::CanaryOverflow => "CANARY_OVERFLOW",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScenarioEvent {
    Malloc { name: String, size: u64, base: Option<u64> },
    Free { ptr: PtrSpec, expect: Option<Expect> },
    Access { ptr: PtrSpec, width: u8, kind: Kind, expect: Option<Expect> },
    SharedAccess { addr: u64, width: u8, base: u64, size: u64, kind: Kind, expect: Option<Expect> },
    CorruptLink { name: String, link: u8, to: LinkTarget },
    Poison { name: String },
    Flush,
    DeviceMalloc { name: String, size: u64 },
    DeviceFree { ptr: PtrSpec, expect: Option<Expect> },
}

impl ScenarioEvent {
    /// The `op` string of the event.
    pub fn op(&self) -> &'static str {
        match self {
            ScenarioEvent::Malloc { .. } => "malloc",
            ScenarioEvent::Free { .. } => "free",
            ScenarioEvent::Access { .. } => "access",
            ScenarioEvent::SharedAccess { .. } => "shared_access",
            ScenarioEvent::CorruptLink { .. } => "corrupt_link",
            ScenarioEvent::Poison { .. } => "poison",
            ScenarioEvent::Flush => "flush",
            ScenarioEvent::DeviceMalloc { .. } => "device_malloc",
            ScenarioEvent::DeviceFree { .. } => "device_free",
        }
    }

    /// The hand-written verdict, if any.
    pub fn expect(&self) -> Option<Expect> {
        match self {
            ScenarioEvent::Free { expect, .. }
            | ScenarioEvent::DeviceFree { expect, .. }
            | ScenarioEvent::Access { expect, .. }
            | ScenarioEvent::SharedAccess { expect, .. } => *expect,
            _ => None,
        }
    }
}

/// A malformed scenario: file (when read from one), event index and op (when
/// the problem is in an event), field, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: Option<String>,
    /// `(index, op)`; op is `"?"` when the event has no valid op.
    pub event: Option<(usize, String)>,
    pub field: Option<String>,
    pub message: String,
}

impl ScenarioError {
    fn top(field: &str, message: impl Into<String>) -> Self {
        ScenarioError { file: None, event: None, field: Some(field.into()), message: message.into() }
    }
    /// The same error, attributed to `file`.
    pub fn with_file(self, file: &str) -> Self {
        self.in_file(file)
    }
    fn in_file(mut self, file: &str) -> Self {
        self.file = Some(file.to_string());
        self
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        if let Some((i, op)) = &self.event {
            write!(f, "event {i} ({op}): ")?;
        }
        match &self.field {
            // Top-level field errors read `mlb_entries: 12 is not one of ...`.
            Some(field) if self.event.is_none() => write!(f, "{field}: {}", self.message),
            _ => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

const FAULT_CODES_HELP: &str =
    "NONE, OUT_OF_BOUNDS, USE_AFTER_FREE, TAG_MISMATCH, NO_META, SHARED_OOB, TRAVERSAL_LIMIT, MEM_ERROR";
const OPS_HELP: &str = "malloc, free, access, shared_access, corrupt_link, poison, flush, device_malloc, device_free";

/// An unsigned integer: JSON number or "0x" string.
fn parse_u64(v: &Value) -> Result<u64, String> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| format!("must be a non-negative integer, got {n}")),
        Value::String(s) => match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            // Digits only: from_str_radix alone would take a sign ("0x+10" as 16).
            Some(h) if !h.is_empty() => match h.chars().all(|c| c.is_ascii_hexdigit() || c == '_') {
                true => u64::from_str_radix(&h.replace('_', ""), 16).ok(),
                false => None,
            }
            .ok_or_else(|| format!("\"{s}\" is not a 64-bit hexadecimal number")),
            _ => Err(format!("must be an integer or a \"0x\" string, got \"{s}\"")),
        },
        other => Err(format!("must be an integer or a \"0x\" string, got {other}")),
    }
}

/// A signed integer: JSON number or "0x"/"-0x" string.
fn parse_i64(v: &Value) -> Result<i64, String> {
    match v {
        Value::Number(n) => n.as_i64().ok_or_else(|| format!("must be an integer in the 64-bit signed range, got {n}")),
        Value::String(s) => {
            let (neg, rest) = match s.strip_prefix('-') {
                Some(r) => (true, r),
                None => (false, s.as_str()),
            };
            let mag = parse_u64(&Value::String(rest.to_string())).map_err(|_| {
                format!("must be an integer or a \"0x\"/\"-0x\" string, got \"{s}\"")
            })? as i128;
            let val = if neg { -mag } else { mag };
            i64::try_from(val).map_err(|_| format!("\"{s}\" is outside the 64-bit signed range"))
        }
        other => Err(format!("must be an integer or a \"0x\" string, got {other}")),
    }
}

/// Field access for one object, producing errors in the right context.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    /// `(index, op)` for events, None at top level.
    event: Option<(usize, String)>,
}

impl<'a> Obj<'a> {
    fn err(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: None, event: self.event.clone(), field: Some(field.into()), message: message.into() }
    }
    fn field_err(&self, field: &str, message: impl fmt::Display) -> ScenarioError {
        match self.event {
            Some(_) => self.err(field, format!("field \"{field}\" {message}")),
            None => self.err(field, message.to_string()),
        }
    }
    fn get(&self, k: &str) -> Option<&'a Value> {
        self.map.get(k)
    }
    fn require(&self, k: &str) -> Result<&'a Value, ScenarioError> {
        self.get(k).ok_or_else(|| self.err(k, format!("missing field \"{k}\"")))
    }
    /// Rejects fields outside `allowed`.
    fn only(&self, allowed: &[&str]) -> Result<(), ScenarioError> {
        for k in self.map.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(self.err(k, format!("unknown field \"{k}\" (allowed: {})", allowed.join(", "))));
            }
        }
        Ok(())
    }
    fn string(&self, k: &str) -> Result<Option<&'a str>, ScenarioError> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.field_err(k, format!("must be a string, got {other}"))),
        }
    }
    fn req_string(&self, k: &str) -> Result<&'a str, ScenarioError> {
        self.require(k)?;
        Ok(self.string(k)?.expect("present"))
    }
    fn u64(&self, k: &str) -> Result<Option<u64>, ScenarioError> {
        self.get(k).map(|v| parse_u64(v).map_err(|m| self.field_err(k, m))).transpose()
    }
    fn req_u64(&self, k: &str) -> Result<u64, ScenarioError> {
        self.require(k)?;
        Ok(self.u64(k)?.expect("present"))
    }
    fn i64(&self, k: &str) -> Result<Option<i64>, ScenarioError> {
        self.get(k).map(|v| parse_i64(v).map_err(|m| self.field_err(k, m))).transpose()
    }
    fn req_i64(&self, k: &str) -> Result<i64, ScenarioError> {
        self.require(k)?;
        Ok(self.i64(k)?.expect("present"))
    }
}

impl Scenario {
    /// Reads and parses a scenario file; every error names the file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: Some(name.clone()),
            event: None,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        Scenario::from_json_str(&text).map_err(|e| e.in_file(&name))
    }

    /// Parses scenario JSON text.
    pub fn from_json_str(text: &str) -> Result<Scenario, ScenarioError> {
        let v: Value = crate::json::from_str_unique_keys(text).map_err(|e| ScenarioError {
            file: None,
            event: None,
            field: None,
            message: format!("invalid JSON: {e}"),
        })?;
        Scenario::from_value(&v)
    }

    /// Parses and statically checks an already decoded scenario.
    pub fn from_value(v: &Value) -> Result<Scenario, ScenarioError> {
        let map = v.as_object().ok_or_else(|| ScenarioError {
            file: None,
            event: None,
            field: None,
            message: format!("a scenario must be a JSON object, got {}", short(v)),
        })?;
        let top = Obj { map, event: None };
        top.only(&[
            "name",
            "description",
            "mode",
            "structure",
            "mlb_entries",
            "seed",
            "step_limit",
            "replacement",
            "tag_history",
            "device_heap",
            "events",
        ])?;
        let name = top.string("name")?.unwrap_or("").to_string();
        let description = top.string("description")?.map(str::to_string);
        let mode_s = top.req_string("mode")?;
        let mode = Mode::from_name(mode_s)
            .ok_or_else(|| ScenarioError::top("mode", format!("\"{mode_s}\" is not one of compiler, hwonly")))?;
        let st_s = top.req_string("structure")?;
        let structure = Structure::from_name(st_s)
            .ok_or_else(|| ScenarioError::top("structure", format!("\"{st_s}\" is not one of list, bst, sol")))?;
        let entries = match top.u64("mlb_entries")? {
            None => 8,
            Some(n) if MODEL_ENTRIES.iter().any(|&e| e as u64 == n) => n as usize,
            Some(n) => {
                return Err(ScenarioError::top("mlb_entries", format!("{n} is not one of 0, 1, 2, 4, 8, 16, 32")));
            }
        };
        let seed = top.u64("seed")?.unwrap_or(1);
        let step_limit = match top.u64("step_limit")? {
            None => MluConfig::default().step_limit,
            Some(n) if n <= STEP_LIMIT_MAX as u64 => n as u32,
            Some(n) => {
                return Err(ScenarioError::top(
                    "step_limit",
                    format!("{n} does not fit the 16-bit step-limit CSR (0..=65535)"),
                ))
            }
        };
        let replacement = match top.string("replacement")? {
            None => Replacement::Plru,
            Some(s) => Replacement::from_name(s).ok_or_else(|| {
                ScenarioError::top("replacement", format!("\"{s}\" is not one of plru, round_robin"))
            })?,
        };
        let tag_history = match top.u64("tag_history")? {
            None => DEFAULT_TAG_HISTORY,
            Some(n) if n <= TAG_HISTORY_MAX as u64 => n as usize,
            Some(n) => {
                return Err(ScenarioError::top(
                    "tag_history",
                    format!("{n} generations is out of range (0..={TAG_HISTORY_MAX})"),
                ))
            }
        };
        let device_heap = match top.get("device_heap") {
            None => None,
            Some(Value::Object(m)) => Some(parse_device_heap(m)?),
            Some(other) => {
                return Err(ScenarioError::top("device_heap", format!("must be an object, got {}", short(other))))
            }
        };
        let evs = match top.require("events")? {
            Value::Array(a) => a,
            other => return Err(ScenarioError::top("events", format!("must be an array, got {}", short(other)))),
        };
        // Allocation names seen so far -> defining event index.
        let mut names: HashMap<String, Named> = HashMap::new();
        let mut events = Vec::with_capacity(evs.len());
        for (i, ev) in evs.iter().enumerate() {
            events.push(parse_event(i, ev, &mut names)?);
        }
        let device_events =
            events.iter().any(|e| matches!(e, ScenarioEvent::DeviceMalloc { .. } | ScenarioEvent::DeviceFree { .. }));
        let device_heap = device_heap.or(device_events.then(DeviceHeapSpec::default));
        Ok(Scenario {
            device_heap,
            name,
            description,
            seed,
            tag_history,
            config: MluConfig { entries, structure, replacement, mode, step_limit, unit: None },
            events,
        })
    }
}

/// The `device_heap` object.
fn parse_device_heap(m: &Map<String, Value>) -> Result<DeviceHeapSpec, ScenarioError> {
    let o = Obj { map: m, event: None };
    let field = |f: &str| format!("device_heap.{f}");
    if let Some(k) = m.keys().find(|k| !["check", "slack"].contains(&k.as_str())) {
        return Err(ScenarioError::top(&field(k), "unknown field (allowed: check, slack)"));
    }
    let check = match o.string("check").map_err(|e| ScenarioError { field: Some(field("check")), ..e })? {
        None => CheckMode::Free,
        Some("off") => CheckMode::Off,
        Some("free") => CheckMode::Free,
        Some("always") => CheckMode::Always,
        Some(c) => return Err(ScenarioError::top(&field("check"), format!("\"{c}\" is not one of off, free, always"))),
    };
    let slack = o.u64("slack").map_err(|e| ScenarioError { field: Some(field("slack")), ..e })?.unwrap_or(0);
    let spec = DeviceHeapSpec { check, slack };
    crate::canary::alloc_unit::rtl_heap_config(check, slack)
        .validate()
        .map_err(|m| ScenarioError::top(&field("slack"), m.trim_start_matches("slack: ").to_string()))?;
    Ok(spec)
}

/// What an allocation name stands for: the event that made it, and whether
/// it is on the device heap.
#[derive(Clone, Copy)]
struct Named {
    event: usize,
    device: bool,
}

/// A value, abbreviated for an error message.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        format!("{}...", &s[..s.char_indices().nth(57).map(|(i, _)| i).unwrap_or(s.len())])
    } else {
        s
    }
}

fn parse_event(i: usize, ev: &Value, names: &mut HashMap<String, Named>) -> Result<ScenarioEvent, ScenarioError> {
    let noctx = |msg: String| ScenarioError { file: None, event: Some((i, "?".into())), field: None, message: msg };
    let map = ev.as_object().ok_or_else(|| noctx(format!("an event must be a JSON object, got {}", short(ev))))?;
    let op = match map.get("op") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(noctx(format!("field \"op\" must be a string, got {}", short(other)))),
        None => return Err(noctx("missing field \"op\"".into())),
    };
    let o = Obj { map, event: Some((i, op.to_string())) };
    // A name referenced by this event must come from an earlier malloc.
    let known = |field: &str, n: &str| -> Result<String, ScenarioError> {
        if names.contains_key(n) {
            Ok(n.to_string())
        } else {
            Err(o.err(field, format!("unknown allocation \"{n}\" (no earlier malloc names it)")))
        }
    };
    // corrupt_link and poison damage a structure node: a device-heap chunk has none.
    let host_node = |field: &str, n: &str| -> Result<String, ScenarioError> {
        let n = known(field, n)?;
        if names[&n].device {
            return Err(o.err(field, format!("\"{n}\" is a device-heap chunk, which has no structure node")));
        }
        Ok(n)
    };
    // A new allocation name (malloc, device_malloc) and its size.
    let new_alloc = |o: &Obj| -> Result<(String, u64), ScenarioError> {
        let name = o.req_string("name")?;
        if let Some(prev) = names.get(name) {
            return Err(o.err("name", format!("allocation name \"{name}\" is already used by event {}", prev.event)));
        }
        let size = o.req_u64("size")?;
        if size == 0 {
            return Err(o.err("size", "size must be > 0"));
        }
        if size >= 1u64 << crate::pointer::ADDR_BITS {
            return Err(o.err("size", format!("size {size} does not fit the 56-bit size field")));
        }
        Ok((name.to_string(), size))
    };
    let width = |o: &Obj| -> Result<u8, ScenarioError> {
        let w = o.req_u64("width")?;
        match w {
            1 | 2 | 4 | 8 | 16 => Ok(w as u8),
            _ => Err(o.err("width", format!("width must be one of 1, 2, 4, 8, 16 bytes, got {w}"))),
        }
    };
    let kind = |o: &Obj| -> Result<Kind, ScenarioError> {
        match o.req_string("kind")? {
            "load" => Ok(Kind::Load),
            "store" => Ok(Kind::Store),
            k => Err(o.err("kind", format!("kind must be \"load\" or \"store\", got \"{k}\""))),
        }
    };
    // A free's verdict is the runtime's (NONE, DOUBLE_FREE, INVALID_FREE);
    // an access's is an MLU fault code.
    let expect = |o: &Obj, on_free: bool| -> Result<Option<Expect>, ScenarioError> {
        let Some(s) = o.string("expect")? else { return Ok(None) };
        let device = op == "device_free";
        match (s, crate::fault::FaultCode::from_name(s)) {
            ("NONE", _) => Ok(Some(Expect::Fault(crate::fault::FaultCode::None))),
            ("DOUBLE_FREE", _) if on_free => Ok(Some(Expect::DoubleFree)),
            ("INVALID_FREE", _) if on_free => Ok(Some(Expect::InvalidFree)),
            ("CANARY_OVERFLOW", _) if device => Ok(Some(Expect::CanaryOverflow)),
            (_, Some(c)) if !on_free => Ok(Some(Expect::Fault(c))),
            _ => Err(o.err(
                "expect",
                if device {
                    format!("expect \"{s}\" is not one of NONE, DOUBLE_FREE, INVALID_FREE, CANARY_OVERFLOW (a device_free's verdict is the allocator's)")
                } else if on_free {
                    format!("expect \"{s}\" is not one of NONE, DOUBLE_FREE, INVALID_FREE (a free's verdict is the runtime's)")
                } else {
                    format!("expect \"{s}\" is not one of {FAULT_CODES_HELP}")
                },
            )),
        }
    };
    // `ptr` (+ `offset`) or `addr`, exactly one.
    let ptr_spec = |o: &Obj| -> Result<PtrSpec, ScenarioError> {
        match (o.get("ptr"), o.get("addr")) {
            (Some(_), Some(_)) => Err(o.err("addr", "give either \"ptr\" (with \"offset\") or \"addr\", not both")),
            (Some(_), None) => {
                let n = o.req_string("ptr")?;
                let name = known("ptr", n)?;
                let untagged = match o.get("untagged") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(other) => return Err(o.err("untagged", format!("must be true or false, got {}", short(other)))),
                };
                Ok(PtrSpec::Alloc { name, offset: o.req_i64("offset")?, untagged })
            }
            (None, Some(_)) => {
                if o.get("offset").is_some() || o.get("untagged").is_some() {
                    let f = if o.get("offset").is_some() { "offset" } else { "untagged" };
                    return Err(o.err(f, format!("\"{f}\" goes with \"ptr\"; with \"addr\" write the full address")));
                }
                Ok(PtrSpec::Raw(o.req_u64("addr")?))
            }
            (None, None) => Err(o.err("ptr", "missing field \"ptr\" (with \"offset\") or \"addr\"")),
        }
    };
    let ev = match op {
        "malloc" => {
            o.only(&["op", "note", "name", "size", "base"])?;
            let (name, size) = new_alloc(&o)?;
            let base = o.u64("base")?;
            if let Some(b) = base {
                if b >> crate::pointer::ADDR_BITS != 0 || b.checked_add(size).is_none_or(|e| e > 1u64 << 56) {
                    return Err(o.err("base", format!("base {b:#x} + size {size} is outside the 56-bit address space")));
                }
            }
            names.insert(name.clone(), Named { event: i, device: false });
            ScenarioEvent::Malloc { name, size, base }
        }
        "device_malloc" => {
            o.only(&["op", "note", "name", "size"])?;
            let (name, size) = new_alloc(&o)?;
            names.insert(name.clone(), Named { event: i, device: true });
            ScenarioEvent::DeviceMalloc { name, size }
        }
        "free" | "device_free" => {
            o.only(&["op", "note", "name", "ptr", "offset", "addr", "expect"])?;
            let ptr = if o.get("name").is_some() {
                if o.get("ptr").is_some() || o.get("addr").is_some() || o.get("offset").is_some() {
                    return Err(o.err("name", "give \"name\", or \"ptr\" + \"offset\", or \"addr\"; not several"));
                }
                let name = known("name", o.req_string("name")?)?;
                PtrSpec::Alloc { name, offset: 0, untagged: false }
            } else {
                ptr_spec(&o).map_err(|mut e| {
                    if e.message.starts_with("missing field \"ptr\"") {
                        e.message = "missing field \"name\" (or \"ptr\" + \"offset\", or \"addr\")".into();
                        e.field = Some("name".into());
                    }
                    e
                })?
            };
            if op == "free" {
                ScenarioEvent::Free { ptr, expect: expect(&o, true)? }
            } else {
                ScenarioEvent::DeviceFree { ptr, expect: expect(&o, true)? }
            }
        }
        "access" => {
            o.only(&["op", "note", "ptr", "offset", "untagged", "addr", "width", "kind", "expect"])?;
            let ptr = ptr_spec(&o)?;
            ScenarioEvent::Access { ptr, width: width(&o)?, kind: kind(&o)?, expect: expect(&o, false)? }
        }
        "shared_access" => {
            o.only(&["op", "note", "offset", "width", "size", "base", "kind", "expect"])?;
            let offset = o.req_i64("offset")?;
            let width = width(&o)?;
            let size = o.req_u64("size")?;
            if size == 0 {
                return Err(o.err("size", "size must be > 0"));
            }
            let base = o.u64("base")?.unwrap_or(0);
            let a = base as i128 + offset as i128;
            if a < 0 || a > u64::MAX as i128 {
                return Err(o.err(
                    "offset",
                    format!("base {base:#x} + offset {offset} is outside the address space (give a larger \"base\" for a negative offset)"),
                ));
            }
            // Shared memory is a 32-bit space (MEMCHECK.S works on 32-bit
            // addresses in hardware, docs/design.md "RTL conventions").
            if a >= 1 << 32 || base as u128 + size as u128 > 1 << 32 {
                return Err(o.err(
                    "offset",
                    format!("shared-memory addresses are 32-bit: base {base:#x} + offset {offset} and base + size {size} must stay below 2^32"),
                ));
            }
            ScenarioEvent::SharedAccess { addr: a as u64, width, base, size, kind: kind(&o)?, expect: expect(&o, false)? }
        }
        "corrupt_link" => {
            o.only(&["op", "note", "name", "link", "to"])?;
            let name = host_node("name", o.req_string("name")?)?;
            let link = match o.req_u64("link")? {
                l @ (0 | 1) => l as u8,
                l => return Err(o.err("link", format!("link must be 0 (next/left) or 1 (right), got {l}"))),
            };
            let to = match o.require("to")? {
                Value::String(s) if !s.starts_with("0x") && !s.starts_with("0X") => LinkTarget::Node(host_node("to", s)?),
                _ => LinkTarget::Addr(o.req_u64("to")?),
            };
            ScenarioEvent::CorruptLink { name, link, to }
        }
        "poison" => {
            o.only(&["op", "note", "name"])?;
            ScenarioEvent::Poison { name: host_node("name", o.req_string("name")?)? }
        }
        "flush" => {
            o.only(&["op", "note"])?;
            ScenarioEvent::Flush
        }
        other => return Err(o.err("op", format!("unknown op \"{other}\" (expected one of {OPS_HELP})"))),
    };
    if let Some(n) = o.get("note") {
        if !n.is_string() {
            return Err(o.field_err("note", format!("must be a string, got {}", short(n))));
        }
    }
    Ok(ev)
}
