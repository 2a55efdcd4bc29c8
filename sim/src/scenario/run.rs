//! The scenario runner: a parsed [`Scenario`] run on the golden model, and
//! its output (spec section 10). The format and its parser are the parent
//! module's.
use super::{Kind, LinkTarget, PtrSpec, Scenario, ScenarioError, ScenarioEvent};
use crate::canary::alloc_unit::rtl_heap_config;
use crate::canary::heap::{FreeError, Freed, HeapConfig};
use crate::device_heap::DEFAULT_DIRECTORY_BASE;
use serde_json::Value;
use std::collections::HashMap;
use crate::fault::FaultCode;
use crate::mlu::Counters;
use crate::pointer::untag;
use crate::runtime::{AllocState, Runtime, RuntimeConfig};
use serde::Serialize;

/// One line of the output (spec section 10): an access event's verdict, or a
/// free the runtime rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioResult {
    /// Index of the event in `events`.
    pub event: usize,
    /// A fault code of spec section 4 (`NONE` for a pass), or `DOUBLE_FREE` /
    /// `INVALID_FREE`.
    pub fault: &'static str,
    /// The untagged address checked (the shared address for shared_access).
    pub addr: u64,
    /// The allocation's (or shared window's) base and size, where known.
    pub alloc: Option<(u64, u64)>,
    /// `"N bytes after"` / `"N bytes before"` for OUT_OF_BOUNDS and SHARED_OOB.
    pub distance: Option<String>,
    /// The MLU op that decided (`LOADMETA`, `MEMCHECK.G`, `MEMCHECK.S`), or
    /// `free` for the runtime's findings.
    pub op: &'static str,
    /// The pointer as the program used it (tag included).
    pub ptr: u64,
}

/// Everything a run produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub results: Vec<ScenarioResult>,
    pub counters: Counters,
}

fn hex(x: u64) -> String {
    format!("{x:#x}")
}

#[derive(Serialize)]
struct JsonAlloc {
    base: String,
    size: u64,
}

/// Field order follows the spec's example, then the additions.
#[derive(Serialize)]
struct JsonResult {
    event: usize,
    fault: &'static str,
    addr: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    alloc: Option<JsonAlloc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    distance: Option<String>,
    op: &'static str,
    ptr: String,
}

#[derive(Serialize)]
struct JsonOutcome<'a> {
    results: Vec<JsonResult>,
    counters: &'a Counters,
}

impl Outcome {
    fn json_outcome(&self) -> JsonOutcome<'_> {
        let results = self
            .results
            .iter()
            .map(|r| JsonResult {
                event: r.event,
                fault: r.fault,
                addr: hex(r.addr),
                alloc: r.alloc.map(|(base, size)| JsonAlloc { base: hex(base), size }),
                distance: r.distance.clone(),
                op: r.op,
                ptr: hex(r.ptr),
            })
            .collect();
        JsonOutcome { results, counters: &self.counters }
    }

    /// The output object `{"results": [...], "counters": {...}}`; addresses
    /// as "0x" strings, sizes as numbers.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.json_outcome()).expect("plain data serialises")
    }

    /// [`Outcome::to_json`] as pretty-printed text with the fields in the
    /// spec's order (event, fault, addr, alloc, distance, then op, ptr).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(&self.json_outcome()).expect("plain data serialises")
    }

    /// The verdict of event `i`: its result's fault, or `NONE` for a free the
    /// runtime accepted (frees have a result only when rejected). `None` for
    /// events that produce no verdict (malloc, poison, ...).
    pub fn verdict(&self, sc: &Scenario, i: usize) -> Option<&'static str> {
        let r = self.results.iter().find(|r| r.event == i);
        match sc.events.get(i)? {
            ScenarioEvent::Access { .. } | ScenarioEvent::SharedAccess { .. } => r.map(|r| r.fault),
            ScenarioEvent::Free { .. } | ScenarioEvent::DeviceFree { .. } => Some(r.map_or("NONE", |r| r.fault)),
            _ => None,
        }
    }

    /// Events whose verdict differs from their `expect`, one line each.
    pub fn mismatches(&self, sc: &Scenario) -> Vec<String> {
        let mut out = Vec::new();
        for (i, ev) in sc.events.iter().enumerate() {
            if let Some(want) = ev.expect() {
                let got = self.verdict(sc, i).unwrap_or("no result");
                if got != want.name() {
                    out.push(format!("event {i} ({}): expected {}, got {got}", ev.op(), want.name()));
                }
            }
        }
        out
    }
}

impl Scenario {
    /// The scenario's runtime before its first event: its MLU parameters,
    /// seed and tag history, and the device heap attached if it has one (the
    /// canary RTL unit's geometry, tags seeded from `seed`, the directory at
    /// [`DEFAULT_DIRECTORY_BASE`]). Every engine starts from it.
    pub fn runtime(&self) -> Result<Runtime, ScenarioError> {
        let cfg = RuntimeConfig {
            mlu: self.config.clone(),
            seed: self.seed,
            tag_history: self.tag_history,
            ..RuntimeConfig::default()
        };
        let mut rt = Runtime::new(cfg).map_err(|e| ScenarioError {
            file: None,
            event: None,
            field: e.field.clone(),
            message: e.message.clone(),
        })?;
        if let Some(d) = self.device_heap {
            let cfg = HeapConfig { tag_seed: Some((self.seed % 65535) as u16 + 1), ..rtl_heap_config(d.check, d.slack) };
            rt.attach_device_heap(cfg, DEFAULT_DIRECTORY_BASE).map_err(|e| ScenarioError {
                file: None,
                event: None,
                field: Some(format!("device_heap.{}", e.field.as_deref().unwrap_or("check"))),
                message: e.message.clone(),
            })?;
        }
        Ok(rt)
    }

    /// Runs the scenario on the golden model (A's [`Runtime`]): every access
    /// is LOADMETA on its root pointer (the allocation's tagged base, or the
    /// raw pointer itself) then MEMCHECK.G in compiler mode, MEMCHECK.G alone
    /// in HWONLY mode. Errors (a malloc the runtime refuses, a corrupt/poison
    /// of a retired node) name the event and field.
    pub fn run(&self) -> Result<Outcome, ScenarioError> {
        let mut rt = self.runtime()?;
        // Allocation name -> runtime allocation id.
        let mut ids: HashMap<&str, usize> = HashMap::new();
        // Device allocation name -> (tagged pointer, requested size).
        let mut dev: HashMap<&str, (u64, u64)> = HashMap::new();
        let mut results = Vec::new();
        let ev_err = |i: usize, ev: &ScenarioEvent, field: &str, msg: String| ScenarioError {
            file: None,
            event: Some((i, ev.op().to_string())),
            field: Some(field.to_string()),
            message: msg,
        };
        // Location of a named allocation's node, if it still has one.
        fn node_loc(rt: &Runtime, ids: &HashMap<&str, usize>, name: &str) -> Result<u64, String> {
            let a = &rt.allocations()[ids[name]];
            if a.state == AllocState::Retired {
                Err(format!("allocation \"{name}\" has no node any more (freed, then retired by an overlapping malloc)"))
            } else {
                Ok(a.location)
            }
        }
        for (i, ev) in self.events.iter().enumerate() {
            // The allocation's tagged pointer plus offset (wrapping, as the SM's adder).
            let resolve = |ids: &HashMap<&str, usize>, rt: &Runtime, p: &PtrSpec| -> (u64, Option<u64>) {
                match p {
                    PtrSpec::Alloc { name, offset, untagged } => {
                        let mut base_ptr = match dev.get(name.as_str()) {
                            Some(&(ptr, _)) => ptr,
                            None => rt.allocations()[ids[name.as_str()]].ptr,
                        };
                        if *untagged {
                            base_ptr = untag(base_ptr);
                        }
                        (base_ptr.wrapping_add(*offset as u64), Some(base_ptr))
                    }
                    PtrSpec::Raw(p) => (*p, None),
                }
            };
            // A named allocation's (untagged base, size), as a fault reports it.
            let named = |ids: &HashMap<&str, usize>, rt: &Runtime, name: &str| -> (u64, u64) {
                match dev.get(name) {
                    Some(&(q, size)) => (untag(q), size),
                    None => {
                        let a = &rt.allocations()[ids[name]];
                        (a.base, a.size)
                    }
                }
            };
            match ev {
                ScenarioEvent::Malloc { name, size, base } => {
                    rt.malloc(*size, *base).map_err(|e| {
                        ev_err(i, ev, if base.is_some() { "base" } else { "size" }, format!("malloc refused: {e}"))
                    })?;
                    ids.insert(name.as_str(), rt.allocations().len() - 1);
                }
                ScenarioEvent::DeviceMalloc { name, size } => {
                    let p = rt.device_malloc(*size, 0).map_err(|e| ev_err(i, ev, "size", format!("device_malloc refused: {e}")))?;
                    dev.insert(name.as_str(), (p, *size));
                }
                ScenarioEvent::DeviceFree { ptr, .. } => {
                    let (p, _) = resolve(&ids, &rt, ptr);
                    let named = match ptr {
                        PtrSpec::Alloc { name, .. } => Some(named(&ids, &rt, name)),
                        PtrSpec::Raw(_) => None,
                    };
                    let (fault, alloc, distance) = match rt.device_free(p) {
                        Ok(Freed { overflow: None, .. }) => continue,
                        Ok(Freed { overflow: Some(o), size, .. }) => {
                            let which = match (o.front, o.rear) {
                                (true, true) => "front and rear canaries",
                                (true, false) => "front canary",
                                _ => "rear canary",
                            };
                            ("CANARY_OVERFLOW", Some((o.ptr, size)), Some(which.to_string()))
                        }
                        Err(FreeError::DoubleFree { .. }) => ("DOUBLE_FREE", named, None),
                        Err(FreeError::OutsideHeap { .. } | FreeError::NotAChunk { .. }) => ("INVALID_FREE", named, None),
                    };
                    results.push(ScenarioResult { event: i, fault, addr: untag(p), alloc, distance, op: "device_free", ptr: p });
                }
                ScenarioEvent::Free { ptr, .. } => {
                    let (p, _) = resolve(&ids, &rt, ptr);
                    if let Err(finding) = rt.free(p) {
                        // Where the allocation is known, report it as a fault would.
                        let alloc = match ptr {
                            PtrSpec::Alloc { name, .. } => Some(named(&ids, &rt, name)),
                            PtrSpec::Raw(_) => rt.live_allocation_at(p).map(|a| (a.base, a.size)),
                        };
                        results.push(ScenarioResult {
                            event: i,
                            fault: finding.name(),
                            addr: untag(p),
                            alloc,
                            distance: None,
                            op: "free",
                            ptr: p,
                        });
                    }
                }
                ScenarioEvent::Access { ptr, width, kind, .. } => {
                    let (p, root) = resolve(&ids, &rt, ptr);
                    let r = rt.access(p, *width as u32, root);
                    if let (Kind::Store, Ok(a)) = (kind, &r) {
                        rt.store(*a, *width as u32);
                    }
                    results.push(result_of(i, p, untag(p), crate::fault::Op::MemcheckG, r));
                }
                ScenarioEvent::SharedAccess { addr, width, base, size, .. } => {
                    let r = rt.memcheck_s(*addr, *width as u32, *base, *size);
                    results.push(result_of(i, *addr, *addr, crate::fault::Op::MemcheckS, r));
                }
                ScenarioEvent::CorruptLink { name, link, to } => {
                    let loc = node_loc(&rt, &ids, name).map_err(|m| ev_err(i, ev, "name", m))?;
                    let value = match to {
                        LinkTarget::Node(n) => node_loc(&rt, &ids, n).map_err(|m| ev_err(i, ev, "to", m))?,
                        LinkTarget::Addr(v) => *v,
                    };
                    rt.corrupt_link(loc, *link as usize, value);
                }
                ScenarioEvent::Poison { name } => {
                    let loc = node_loc(&rt, &ids, name).map_err(|m| ev_err(i, ev, "name", m))?;
                    rt.poison_node(loc);
                }
                ScenarioEvent::Flush => rt.flush_mlb(),
            }
        }
        Ok(Outcome { results, counters: *rt.counters() })
    }
}

fn result_of(
    event: usize,
    ptr: u64,
    addr: u64,
    pass_op: crate::fault::Op,
    r: Result<u64, crate::fault::Fault>,
) -> ScenarioResult {
    match r {
        Ok(a) => ScenarioResult {
            event,
            fault: FaultCode::None.name(),
            addr: a,
            alloc: None,
            distance: None,
            op: pass_op.name(),
            ptr,
        },
        Err(f) => ScenarioResult {
            event,
            fault: f.code.name(),
            addr,
            alloc: f.alloc.map(|m| (m.base, m.size)),
            distance: f.distance.clone(),
            op: f.op.name(),
            ptr,
        },
    }
}
