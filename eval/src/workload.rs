//! One workload as the H200 ran it: the iteration-2 kernel launches of a
//! version-2 trace, joined launch for launch with their Nsight Compute rows.
//!
//! The join follows `traces/README.md`: the k-th row of `ncu/<w>.csv.gz` is
//! the k-th `kind: "kernel"` launch after the trace's `{"t": "iter", "n": 2}`
//! line. Each pair is checked by the kernel's function name (the part before
//! the template or argument list, last `::` component); names that one side
//! keeps mangled (`_Z...`) are not compared. Also checked: equal counts and
//! equal CTA counts (grid size against `sm__ctas_launched.sum`).
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sim::trace::{Event, GpuWork, Launch, Rw, TraceReader};

use crate::ncu::{self, Counters};

/// A byte range one operator touches, resolved to addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Touch {
    /// The allocation (block: its trace id) and the touched range inside it.
    pub id: u64,
    pub block_base: u64,
    pub block_size: u64,
    pub offset: u64,
    pub length: u64,
    pub rw: Rw,
}

/// One operator of iteration 2 that launched at least one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operator {
    pub op: String,
    /// Trace line of the operator.
    pub line: u64,
    pub touches: Vec<Touch>,
    /// The live allocations when it ran (what a list or tree of metadata
    /// holds), in allocation order: (id, base, size).
    pub live: Vec<(u64, u64, u64)>,
    /// Allocations freed since the previous operator of this list (each
    /// free INVALIDATEs its metadata in every SM's MLB).
    pub freed_before: Vec<u64>,
}

/// One kernel launch with its counters.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub launch: Launch,
    pub counters: Counters,
    /// Index into [`Workload::operators`].
    pub operator: usize,
    /// This launch's share of the bytes its operator moves to and from
    /// DRAM: the operator's touched bytes (twice for a range it reads and
    /// writes) split over its launches in proportion to
    /// their global and TMA instructions (which launch touches which bytes is
    /// not in the trace).
    pub footprint_bytes: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub name: String,
    pub sm_count: u64,
    pub operators: Vec<Operator>,
    pub kernels: Vec<Kernel>,
    /// Copy-engine work (memset/memcpy) of iteration 2, measured ns.
    pub copy_ns: u64,
}

impl Workload {
    /// Measured GPU time of iteration 2's kernels (the sum of CUPTI's
    /// durations), ns.
    pub fn measured_kernel_ns(&self) -> u64 {
        self.kernels.iter().map(|k| k.launch.ns).sum()
    }
}

/// The ncu file that goes with a trace: `<trace dir>/ncu/<workload>.csv.gz`.
pub fn default_ncu_path(trace: &Path, workload: &str) -> PathBuf {
    trace.parent().unwrap_or(Path::new(".")).join("ncu").join(format!("{workload}.csv.gz"))
}

/// The function name a kernel name is compared by (see the module doc);
/// `None` for a mangled name. An anonymous namespace is skipped however it
/// is spelt (CUPTI: `(anonymous namespace)`, ncu: `<unnamed>`).
pub fn function_name(name: &str) -> Option<String> {
    let s = name.trim();
    if s.starts_with("_Z") {
        return None;
    }
    let s = s.replace("(anonymous namespace)::", "").replace("<unnamed>::", "");
    let s = s.strip_prefix("void ").unwrap_or(&s);
    let end = s.find(['<', '(']).unwrap_or(s.len());
    Some(s[..end].rsplit("::").next().unwrap_or("").trim().to_string())
}

/// Reads a version-2 trace and its ncu file (`ncu_dir`, or the default next
/// to the trace) and joins them.
pub fn load(trace: &Path, ncu_dir: Option<&Path>) -> Result<Workload> {
    let tname = trace.display().to_string();
    let mut reader = TraceReader::open(trace)?;
    let header = reader.header().clone();
    if header.version < 2 {
        bail!(
            "{tname}: a version-{} trace has no GPU launches; the SM model needs version 2 (kernel launches and Nsight Compute counters, see traces/README.md)",
            header.version
        );
    }
    let workload = header.workload.clone().with_context(|| format!("{tname}: header has no \"workload\""))?;
    let sm_count = header.sm_count.with_context(|| format!("{tname}: header has no \"sm_count\""))?;
    let mut live: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut freed: Vec<u64> = Vec::new();
    let mut iteration = 0;
    let mut operators = Vec::new();
    // (launch, operator index, trace line)
    let mut launches: Vec<(Launch, usize, u64)> = Vec::new();
    let mut copy_ns = 0;
    while let Some(ev) = reader.next() {
        let line = reader.line();
        match ev? {
            Event::Alloc { id, base, size } => {
                live.insert(id, (base, size));
            }
            Event::Free { id } => {
                live.remove(&id);
                freed.push(id);
            }
            Event::Iter { n } => iteration = n,
            Event::Kernel { op, acc, gpu } if iteration == 2 && !gpu.is_empty() => {
                let touches = acc
                    .iter()
                    .filter_map(|a| {
                        let (block_base, block_size) = *live.get(&a.id?)?;
                        let id = a.id?;
                        Some(Touch { id, block_base, block_size, offset: a.offset, length: a.length, rw: a.rw })
                    })
                    .collect();
                let index = operators.len();
                let mut snapshot: Vec<(u64, u64, u64)> = live.iter().map(|(&id, &(b, s))| (id, b, s)).collect();
                snapshot.sort_unstable();
                operators.push(Operator { op, line, touches, live: snapshot, freed_before: std::mem::take(&mut freed) });
                for g in gpu {
                    match g {
                        GpuWork::Kernel(l) => launches.push((l, index, line)),
                        GpuWork::Copy { ns, .. } => copy_ns += ns,
                    }
                }
            }
            _ => {}
        }
    }
    // The trace is read (and its errors reported) before the counters.
    let ncu_path = match ncu_dir {
        Some(d) => d.join(format!("{workload}.csv.gz")),
        None => default_ncu_path(trace, &workload),
    };
    let rows = ncu::read(&ncu_path)?;
    let nname = ncu_path.display().to_string();
    if launches.len() != rows.len() {
        bail!(
            "{tname} has {} kernel launches in iteration 2 but {nname} has {} rows: the files do not belong together",
            launches.len(),
            rows.len()
        );
    }
    let mut kernels = Vec::with_capacity(rows.len());
    for (k, ((launch, operator, line), counters)) in launches.into_iter().zip(rows).enumerate() {
        if let (Some(a), Some(b)) = (function_name(&launch.name), function_name(&counters.kernel_name)) {
            if a != b {
                bail!(
                    "launch {k} of iteration 2: {tname}:{line} launches `{a}` but {nname}:{} profiles `{b}`",
                    counters.line
                );
            }
        }
        if launch.ctas() as f64 != counters.ctas_launched {
            bail!(
                "launch {k} of iteration 2: {tname}:{line} has {} CTAs but {nname}:{} launched {}",
                launch.ctas(),
                counters.line,
                counters.ctas_launched
            );
        }
        kernels.push(Kernel { launch, counters, operator, footprint_bytes: 0.0 });
    }
    let weight = |k: &Kernel| k.counters.global() + k.counters.tma + 1.0;
    let mut op_weight = vec![0.0f64; operators.len()];
    for k in &kernels {
        op_weight[k.operator] += weight(k);
    }
    for k in &mut kernels {
        // A range read and written ("rw": an in-place operator) crosses the
        // DRAM bus twice, in and back out.
        let bytes: u64 = operators[k.operator].touches.iter().map(|t| if t.rw == Rw::RW { 2 * t.length } else { t.length }).sum();
        // No more than its memory instructions can move: 512 B per warp
        // instruction (32 lanes x 16 B, the widest vector access); TMA
        // tiles are not bounded this way. (An embedding gather reads a
        // few rows of a table the trace lists whole.)
        let moved = if k.counters.tma > 0.0 { f64::INFINITY } else { 512.0 * k.counters.global() };
        k.footprint_bytes = (bytes as f64 * weight(k) / op_weight[k.operator]).min(moved);
    }
    Ok(Workload { name: workload, sm_count, operators, kernels, copy_ns })
}
