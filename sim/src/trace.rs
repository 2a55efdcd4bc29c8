//! Streaming reader for `gpuarmor-trace` versions 1 and 2 (see
//! `traces/README.md`): gzip'd JSON lines, a header object first, then one
//! event per line in program order. Version 2 adds the header's `sm_count`,
//! `iter` events and, per operator, the GPU work it launched (`gpu`: kernel
//! launches with geometry and measured duration, memset/memcpy); version 1
//! has none of these, and its `kernel` events read with an empty `gpu` list.
//!
//! The reader decodes and validates one line at a time (the files are never
//! loaded whole) and yields typed [`Event`]s. Every error names the file and
//! the 1-based line number and says what is wrong, and the iterator stops
//! after the first error. It is the one place the trace rules are checked:
//! `mlugen trace` ([`summarize`]) and the sweep's expansion
//! ([`crate::expand::load`]) both read through it, so they accept and reject
//! the same files. Besides the per-line format (header, event types, field
//! types) it checks, as it streams:
//! - lifetimes: an `alloc` of an id that is already live, a `free` of an id
//!   that is not live, and a kernel access to an id that is not live;
//! - ranges (`alloc`, `seg_alloc` and `seg_free`): the size is at least 1 and
//!   fits 56 bits (< 2^56), the base is a 56-bit address (< 2^56: pointer
//!   bits 55..0, the top byte is the tag), and `base + size <= 2^56` (the
//!   last byte, `base + size - 1`, is a 56-bit address);
//! - live blocks do not overlap: the caching allocator hands out disjoint
//!   blocks (inside its segments), so a block overlapping a live one means a
//!   broken trace (a `free` was lost, or a base is wrong);
//! - accesses: `offset + length` must not overflow 64 bits, and for an
//!   access to a block, `offset + length <= size` (the range lies inside the
//!   block; an access ending exactly at the block end is valid, a
//!   zero-length range anywhere up to the end too).
//!
//! Not checked: that blocks lie inside a recorded segment, and that a
//! `seg_free` matches an earlier `seg_alloc` (v1 traces may hold segments
//! reserved before recording began); `null`-id accesses beyond the 64-bit
//! overflow (there is no block to check them against).
//!
//! Consumers may rely on these guarantees for every event the reader yields:
//! for an `alloc`, `1 <= size < 2^56` and `base + size <= 2^56`; for a
//! kernel access to block `id`, `offset + length <= size(id) < 2^56` (so
//! `base + offset + length` cannot overflow either).
//!
//! Memory: O(live blocks): a map of live ids and an ordered map of live
//! blocks by base (the overlap check is one `O(log n)` lookup per `alloc`).
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use flate2::read::MultiGzDecoder;
use serde::Serialize;
use serde_json::Value;

/// The only format name this reader accepts, and the versions it reads.
pub const FORMAT: &str = "gpuarmor-trace";
pub const VERSIONS: [u64; 2] = [1, 2];

/// Addresses are 56 bits (pointer bits 55..0; the top byte is the tag): a
/// base is below this, and a block or segment ends at or below it.
pub const ADDR_END: u64 = 1 << 56;

/// Direction of an operator's access to a byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Rw {
    R,
    W,
    RW,
}

/// One `[id, offset, length, rw]` element of a kernel's `acc` list: the byte
/// range `[offset, offset + length)` of block `id`. `id == None` is an access
/// that no live block holds (the format allows it; the four published traces
/// have none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub id: Option<u64>,
    pub offset: u64,
    pub length: u64,
    pub rw: Rw,
}

/// One trace event (every line after the header).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A tensor block allocated by the caching allocator.
    Alloc { id: u64, base: u64, size: u64 },
    /// That block freed by the program.
    Free { id: u64 },
    /// The caching allocator took a segment from cudaMalloc.
    SegAlloc { base: u64, size: u64 },
    /// A segment went back to the driver.
    SegFree { base: u64, size: u64 },
    /// One operator, the byte ranges it touches and (version 2) the GPU work
    /// it launched, in launch order (empty in version 1).
    Kernel { op: String, acc: Vec<Access>, gpu: Vec<GpuWork> },
    /// Iteration `n` of the workload starts here (version 2).
    Iter { n: u64 },
}

/// One entry of a version-2 operator's `gpu` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuWork {
    /// A kernel launch (runs on the SMs).
    Kernel(Launch),
    /// Copy-engine work (`memset` or `memcpy`): no SM instructions.
    Copy { kind: CopyKind, name: String, ns: u64, bytes: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CopyKind {
    Memset,
    Memcpy,
}

/// A kernel launch as torch.profiler (CUPTI) recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub name: String,
    /// Measured duration, ns.
    pub ns: u64,
    /// Grid and block dimensions (each at least 1).
    pub grid: [u64; 3],
    pub block: [u64; 3],
    /// Registers per thread and shared memory per block (bytes).
    pub regs: u64,
    pub smem: u64,
    /// CUPTI's correlation id.
    pub corr: u64,
}

impl Launch {
    pub fn ctas(&self) -> u64 {
        self.grid.iter().product()
    }
    pub fn threads_per_cta(&self) -> u64 {
        self.block.iter().product()
    }
}

/// The header line. `format` and `version` are validated; the descriptive
/// fields are kept when present (strings) and not required.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Header {
    /// 1 or 2.
    pub version: u64,
    /// SMs of the device (version 2).
    pub sm_count: Option<u64>,
    pub workload: Option<String>,
    pub device: Option<String>,
    pub torch: Option<String>,
    pub granularity: Option<String>,
    pub source: Option<String>,
}

/// A trace that cannot be read: file, line (0 = not tied to a line, e.g. the
/// file cannot be opened) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub file: String,
    pub line: u64,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

/// Streaming reader: an iterator of events. Construct with [`TraceReader::open`]
/// (a `.jsonl.gz` file) or [`TraceReader::new`] (any decoded `BufRead`).
pub struct TraceReader<R: BufRead> {
    input: R,
    file: String,
    line: u64,
    header: Header,
    /// Live block id -> (base, size) (for the lifetime and access checks).
    live: HashMap<u64, (u64, u64)>,
    /// Live block base -> (end, id), for the overlap check. Live blocks are
    /// disjoint and have size >= 1, so bases are distinct.
    by_base: BTreeMap<u64, (u64, u64)>,
    done: bool,
    buf: String,
}

impl TraceReader<BufReader<MultiGzDecoder<File>>> {
    /// Opens a gzip'd trace and reads and validates its header.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, TraceError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let f = File::open(path).map_err(|e| TraceError {
            file: name.clone(),
            line: 0,
            message: format!("cannot open: {e}"),
        })?;
        TraceReader::new(BufReader::new(MultiGzDecoder::new(f)), name)
    }
}

impl<R: BufRead> TraceReader<R> {
    /// Wraps already decompressed JSON lines; `file` is the name used in errors.
    pub fn new(input: R, file: impl Into<String>) -> Result<Self, TraceError> {
        let mut r = TraceReader {
            input,
            file: file.into(),
            line: 0,
            header: Header::default(),
            live: HashMap::new(),
            by_base: BTreeMap::new(),
            done: false,
            buf: String::new(),
        };
        let v = match r.next_value()? {
            Some(v) => v,
            None => return Err(r.err_at(0, "empty file: no header line".into())),
        };
        r.header = r.parse_header(&v)?;
        Ok(r)
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Number of blocks allocated and not yet freed after the events read so far.
    pub fn live_blocks(&self) -> usize {
        self.live.len()
    }

    /// The size of a live block, if `id` is live.
    pub fn live_size(&self, id: u64) -> Option<u64> {
        self.live.get(&id).map(|&(_, size)| size)
    }

    /// The 1-based line number of the last line read (the header is line 1,
    /// so after an event it is that event's line).
    pub fn line(&self) -> u64 {
        self.line
    }

    fn err_at(&self, line: u64, message: String) -> TraceError {
        TraceError { file: self.file.clone(), line, message }
    }

    fn err(&self, message: String) -> TraceError {
        self.err_at(self.line, message)
    }

    /// Reads the next line as JSON; `Ok(None)` at a clean end of file.
    fn next_value(&mut self) -> Result<Option<Value>, TraceError> {
        self.buf.clear();
        let n = match self.input.read_line(&mut self.buf) {
            Ok(n) => n,
            Err(e) => {
                let what = match e.kind() {
                    std::io::ErrorKind::UnexpectedEof => {
                        "truncated gzip stream (unexpected end of file)".to_string()
                    }
                    std::io::ErrorKind::InvalidData => format!("not valid UTF-8 text or gzip data: {e}"),
                    _ => format!("read error: {e}"),
                };
                // The failing line is the one after the last complete line.
                return Err(self.err_at(self.line + 1, what));
            }
        };
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        let text = self.buf.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            return Err(self.err("empty line (every line must be one JSON object)".into()));
        }
        serde_json::from_str::<Value>(text)
            .map(Some)
            .map_err(|e| self.err(format!("bad JSON: {e}")))
    }

    fn parse_header(&self, v: &Value) -> Result<Header, TraceError> {
        let obj = v
            .as_object()
            .ok_or_else(|| self.err("header: expected a JSON object".into()))?;
        match obj.get("format") {
            Some(Value::String(s)) if s == FORMAT => {}
            Some(other) => {
                return Err(self.err(format!("header: field \"format\" must be \"{FORMAT}\", got {other}")))
            }
            None => return Err(self.err("header: missing field \"format\"".into())),
        }
        let version = match obj.get("version") {
            Some(x) if x.as_u64().is_some_and(|v| VERSIONS.contains(&v)) => x.as_u64().unwrap_or_default(),
            Some(other) => {
                return Err(self.err(format!(
                    "header: unsupported version {other} (this reader reads versions 1 and 2)"
                )))
            }
            None => return Err(self.err("header: missing field \"version\"".into())),
        };
        let sm_count = match obj.get("sm_count") {
            None | Some(Value::Null) => None,
            Some(x) => match x.as_u64() {
                Some(n) if n >= 1 => Some(n),
                _ => return Err(self.err(format!("header: field \"sm_count\" must be a positive integer, got {x}"))),
            },
        };
        let text = |k: &str| -> Result<Option<String>, TraceError> {
            match obj.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(self.err(format!("header: field \"{k}\" must be a string, got {other}"))),
            }
        };
        Ok(Header {
            version,
            sm_count,
            workload: text("workload")?,
            device: text("device")?,
            torch: text("torch")?,
            granularity: text("granularity")?,
            source: text("source")?,
        })
    }

    fn u64_field(&self, obj: &serde_json::Map<String, Value>, t: &str, k: &str) -> Result<u64, TraceError> {
        match obj.get(k) {
            None => Err(self.err(format!("{t}: missing field \"{k}\""))),
            Some(x) => x.as_u64().ok_or_else(|| {
                self.err(format!("{t}: field \"{k}\" must be a non-negative integer, got {x}"))
            }),
        }
    }

    /// The range rules shared by blocks and segments: `1 <= size < 2^56`,
    /// `base < 2^56`, `base + size <= 2^56`. Returns `base + size`.
    fn check_range(&self, what: &str, base: u64, size: u64) -> Result<u64, TraceError> {
        if size == 0 {
            return Err(self.err(format!("{what}: size 0 (a block or segment has at least one byte)")));
        }
        if size >= ADDR_END {
            return Err(self.err(format!("{what}: size {size} does not fit 56 bits (must be < 2^56)")));
        }
        if base >= ADDR_END {
            return Err(self.err(format!(
                "{what}: base {base:#x} is not a 56-bit address (must be < 2^56; the top byte is the pointer tag)"
            )));
        }
        // Both are below 2^56, so the sum cannot overflow.
        let end = base + size;
        if end > ADDR_END {
            return Err(self.err(format!(
                "{what}: [{base:#x}, {end:#x}) ends past the 56-bit address space (base + size must be <= 2^56)"
            )));
        }
        Ok(end)
    }

    fn parse_event(&mut self, v: &Value) -> Result<Event, TraceError> {
        let obj = v
            .as_object()
            .ok_or_else(|| self.err(format!("expected a JSON object, got {v}")))?;
        let t = match obj.get("t") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => return Err(self.err(format!("field \"t\" must be a string, got {other}"))),
            None => return Err(self.err("missing field \"t\"".into())),
        };
        match t {
            "alloc" => {
                let id = self.u64_field(obj, t, "id")?;
                let base = self.u64_field(obj, t, "base")?;
                let size = self.u64_field(obj, t, "size")?;
                if self.live.contains_key(&id) {
                    return Err(self.err(format!("alloc: id {id} is already live (allocated and not freed)")));
                }
                let what = format!("alloc: id {id}");
                let end = self.check_range(&what, base, size)?;
                // Live blocks are disjoint, so only the live block with the
                // largest base below `end` can overlap [base, end).
                if let Some((&ob, &(oe, oid))) = self.by_base.range(..end).next_back() {
                    if oe > base {
                        return Err(self.err(format!(
                            "{what}: block [{base:#x}, {end:#x}) overlaps live block {oid} at [{ob:#x}, {oe:#x})"
                        )));
                    }
                }
                self.live.insert(id, (base, size));
                self.by_base.insert(base, (end, id));
                Ok(Event::Alloc { id, base, size })
            }
            "free" => {
                let id = self.u64_field(obj, t, "id")?;
                match self.live.remove(&id) {
                    Some((base, _)) => {
                        self.by_base.remove(&base);
                    }
                    None => return Err(self.err(format!("free: unknown id {id} (not a live block)"))),
                }
                Ok(Event::Free { id })
            }
            "seg_alloc" | "seg_free" => {
                let base = self.u64_field(obj, t, "base")?;
                let size = self.u64_field(obj, t, "size")?;
                self.check_range(t, base, size)?;
                Ok(if t == "seg_alloc" {
                    Event::SegAlloc { base, size }
                } else {
                    Event::SegFree { base, size }
                })
            }
            "kernel" => {
                let op = match obj.get("op") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => return Err(self.err(format!("kernel: field \"op\" must be a string, got {other}"))),
                    None => return Err(self.err("kernel: missing field \"op\"".into())),
                };
                let list = match obj.get("acc") {
                    Some(Value::Array(a)) => a,
                    Some(other) => return Err(self.err(format!("kernel: field \"acc\" must be an array, got {other}"))),
                    None => return Err(self.err("kernel: missing field \"acc\"".into())),
                };
                let mut acc = Vec::with_capacity(list.len());
                for (i, a) in list.iter().enumerate() {
                    acc.push(self.parse_access(i, a)?);
                }
                let gpu = match (self.header.version, obj.get("gpu")) {
                    (1, None) => Vec::new(),
                    (1, Some(_)) => return Err(self.err("kernel: field \"gpu\" is not part of version 1".into())),
                    (_, None) => return Err(self.err("kernel: missing field \"gpu\"".into())),
                    (_, Some(Value::Array(a))) => {
                        let mut gpu = Vec::with_capacity(a.len());
                        for (i, g) in a.iter().enumerate() {
                            gpu.push(self.parse_gpu(i, g)?);
                        }
                        gpu
                    }
                    (_, Some(other)) => {
                        return Err(self.err(format!("kernel: field \"gpu\" must be an array, got {other}")))
                    }
                };
                Ok(Event::Kernel { op, acc, gpu })
            }
            "iter" if self.header.version >= 2 => {
                let n = self.u64_field(obj, t, "n")?;
                Ok(Event::Iter { n })
            }
            other => Err(self.err(format!(
                "unknown event type \"t\": \"{other}\" (expected alloc, free, seg_alloc, seg_free, kernel{})",
                if self.header.version >= 2 { " or iter" } else { "; iter is version 2" }
            ))),
        }
    }

    /// One element of a version-2 `gpu` list.
    fn parse_gpu(&self, i: usize, g: &Value) -> Result<GpuWork, TraceError> {
        let what = format!("kernel: gpu[{i}]");
        let obj = g
            .as_object()
            .ok_or_else(|| self.err(format!("{what}: expected an object, got {g}")))?;
        let name = match obj.get("name") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(self.err(format!("{what}: field \"name\" must be a string, got {other}"))),
            None => return Err(self.err(format!("{what}: missing field \"name\""))),
        };
        let num = |k: &str| self.u64_field(obj, &what, k);
        let dim3 = |k: &str| -> Result<[u64; 3], TraceError> {
            let bad = || self.err(format!("{what}: field \"{k}\" must be three positive integers [x, y, z]"));
            let a = obj.get(k).and_then(Value::as_array).ok_or_else(bad)?;
            if a.len() != 3 {
                return Err(bad());
            }
            let mut d = [0u64; 3];
            for (j, x) in a.iter().enumerate() {
                d[j] = x.as_u64().filter(|&v| v >= 1).ok_or_else(bad)?;
            }
            Ok(d)
        };
        match obj.get("kind").and_then(Value::as_str) {
            Some("kernel") => Ok(GpuWork::Kernel(Launch {
                ns: num("ns")?,
                grid: dim3("grid")?,
                block: dim3("block")?,
                regs: num("regs")?,
                smem: num("smem")?,
                corr: num("corr")?,
                name,
            })),
            Some(k @ ("memset" | "memcpy")) => Ok(GpuWork::Copy {
                kind: if k == "memset" { CopyKind::Memset } else { CopyKind::Memcpy },
                ns: num("ns")?,
                bytes: num("bytes")?,
                name,
            }),
            _ => Err(self.err(format!(
                "{what}: field \"kind\" must be \"kernel\", \"memset\" or \"memcpy\", got {}",
                obj.get("kind").map_or("nothing".to_string(), |v| v.to_string())
            ))),
        }
    }

    fn parse_access(&self, i: usize, a: &Value) -> Result<Access, TraceError> {
        let what = || format!("kernel: acc[{i}]");
        let arr = match a.as_array() {
            Some(arr) if arr.len() == 4 => arr,
            _ => return Err(self.err(format!("{}: expected [id, offset, length, rw], got {a}", what()))),
        };
        let id = match &arr[0] {
            Value::Null => None,
            x => Some(x.as_u64().ok_or_else(|| {
                self.err(format!("{}: id must be a non-negative integer or null, got {x}", what()))
            })?),
        };
        let num = |j: usize, name: &str| {
            arr[j].as_u64().ok_or_else(|| {
                self.err(format!("{}: {name} must be a non-negative integer, got {}", what(), arr[j]))
            })
        };
        let offset = num(1, "offset")?;
        let length = num(2, "length")?;
        let rw = match &arr[3] {
            Value::String(s) if s == "r" => Rw::R,
            Value::String(s) if s == "w" => Rw::W,
            Value::String(s) if s == "rw" => Rw::RW,
            x => return Err(self.err(format!("{}: rw must be \"r\", \"w\" or \"rw\", got {x}", what()))),
        };
        if let Some(id) = id {
            if !self.live.contains_key(&id) {
                return Err(self.err(format!("{}: unknown id {id} (not a live block)", what())));
            }
        }
        let Some(end) = offset.checked_add(length) else {
            return Err(self.err(format!("{}: offset {offset} + length {length} overflows 64 bits", what())));
        };
        if let Some(id) = id {
            let size = self.live[&id].1;
            if end > size {
                return Err(self.err(format!(
                    "{}: range [{offset}, {end}) of block {id} ends past the block's end (size {size})",
                    what()
                )));
            }
        }
        Ok(Access { id, offset, length, rw })
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Event, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = match self.next_value() {
            Ok(None) => {
                self.done = true;
                return None;
            }
            Ok(Some(v)) => self.parse_event(&v),
            Err(e) => Err(e),
        };
        if r.is_err() {
            self.done = true;
        }
        Some(r)
    }
}

/// What `mlugen trace` prints for one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TraceSummary {
    pub file: String,
    pub workload: Option<String>,
    /// Lines after the header.
    pub events: u64,
    pub kernels: u64,
    pub allocations: u64,
    pub frees: u64,
    pub seg_allocs: u64,
    pub seg_frees: u64,
    /// Access ranges over all kernels.
    pub accesses: u64,
    pub max_live_allocations: u64,
    pub live_at_end: u64,
    /// Largest number of distinct blocks one operator touches (its
    /// allocation working set; `null` ids are not blocks and not counted).
    pub max_blocks_per_kernel: u64,
    /// Per-operator working set -> number of operators with it.
    pub working_set_histogram: BTreeMap<u64, u64>,
    /// Format version of the file.
    pub version: u64,
    /// GPU work the operators launched (version 2): kernel launches plus
    /// memset/memcpy.
    pub gpu_launches: u64,
    /// Kernel launches (SM work) per iteration `n` (version 2; launches before
    /// the first `iter` are not counted).
    pub kernel_launches_per_iteration: BTreeMap<u64, u64>,
}

/// Reads a whole trace once, streaming, and summarises it.
pub fn summarize(path: impl AsRef<Path>) -> Result<TraceSummary, TraceError> {
    let path = path.as_ref();
    let reader = TraceReader::open(path)?;
    summarize_reader(reader, path.display().to_string())
}

/// [`summarize`] over any reader (the tests feed it in-memory traces).
pub fn summarize_reader<R: BufRead>(mut reader: TraceReader<R>, file: String) -> Result<TraceSummary, TraceError> {
    let mut s = TraceSummary {
        file,
        workload: reader.header().workload.clone(),
        events: 0,
        kernels: 0,
        allocations: 0,
        frees: 0,
        seg_allocs: 0,
        seg_frees: 0,
        accesses: 0,
        max_live_allocations: 0,
        live_at_end: 0,
        max_blocks_per_kernel: 0,
        working_set_histogram: BTreeMap::new(),
        version: reader.header().version,
        gpu_launches: 0,
        kernel_launches_per_iteration: BTreeMap::new(),
    };
    let mut iteration = None;
    let mut blocks = HashSet::new();
    while let Some(ev) = reader.next() {
        s.events += 1;
        match ev? {
            Event::Alloc { .. } => {
                s.allocations += 1;
                s.max_live_allocations = s.max_live_allocations.max(reader.live_blocks() as u64);
            }
            Event::Free { .. } => s.frees += 1,
            Event::SegAlloc { .. } => s.seg_allocs += 1,
            Event::SegFree { .. } => s.seg_frees += 1,
            Event::Iter { n } => iteration = Some(n),
            Event::Kernel { acc, gpu, .. } => {
                s.gpu_launches += gpu.len() as u64;
                if let Some(n) = iteration {
                    let launches = gpu.iter().filter(|g| matches!(g, GpuWork::Kernel(_))).count() as u64;
                    *s.kernel_launches_per_iteration.entry(n).or_insert(0) += launches;
                }
                s.kernels += 1;
                s.accesses += acc.len() as u64;
                blocks.clear();
                blocks.extend(acc.iter().filter_map(|a| a.id));
                let ws = blocks.len() as u64;
                s.max_blocks_per_kernel = s.max_blocks_per_kernel.max(ws);
                *s.working_set_histogram.entry(ws).or_insert(0) += 1;
            }
        }
    }
    s.live_at_end = reader.live_blocks() as u64;
    Ok(s)
}
