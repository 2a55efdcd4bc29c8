//! The trace expander: a `gpuarmor-trace` file (read by [`crate::trace`];
//! only the allocations and operators are used, a version-2 file's GPU
//! launches are ignored) becomes a [`Workload`]: the allocation stream as recorded, and for every
//! operator (`kernel` event) per-warp instruction streams for the SM memory
//! pipeline ([`crate::sm_pipeline`]).
//!
//! What comes from the file: the alloc/free stream with its ids, bases and
//! sizes (replayed through the [`Runtime`](crate::runtime::Runtime) with the
//! trace's own bases), and each operator's argument list: the byte ranges
//! `[offset, offset + length)` of blocks it touches and their direction.
//!
//! What is synthesized (the trace records neither the order of individual
//! accesses nor the instruction mix), all parameters of [`ExpandConfig`]:
//! - Sweep: each argument range is cut into `step`-byte warp accesses (32 or
//!   128 bytes: one coalesced warp instruction of 32 threads x 1 or 4 bytes);
//!   the last step may be shorter.
//! - One SM of many: the pipeline models one SM of a GPU with `sms` SMs
//!   (default 132, the H200 the traces come from). An operator's grid is
//!   spread evenly over the SMs, so this SM does `ceil(n / sms)` of an
//!   argument's n steps (at least one: every SM whose CTAs touch an argument
//!   loads its metadata).
//! - Sampling cap: at most `cap` steps per argument per kernel (default 256,
//!   8 per warp), to bound the sweep's work. The steps taken are spread
//!   evenly over the whole range (step `floor(k * n / m)` for k < m, m the
//!   steps this SM does after the cap). Capping shortens the kernel but not
//!   its metadata work (the LOADMETAs and the first misses), so it biases a
//!   slowdown upwards for the largest tensors (`Kernel::full_steps` says how
//!   much was cut). Since the version-2 traces the evaluation does not use
//!   this expansion (`eval::sm_model` times the real kernels); it drives the
//!   RTL SM pipeline's comparison with `crate::sm_pipeline`.
//! - Warps: sample k of an argument goes to warp `k % warps`, as its
//!   `k / warps`-th step; a warp interleaves its arguments: step j of
//!   argument 0, step j of argument 1, ..., then step j+1.
//! - Per step: a `MEMCHECK` (the compiler pass), then the global access (a
//!   load for `r`, a store for `w`, a load then a store for `rw`, each
//!   preceded by its own MEMCHECK), each access followed by `alu` ALU
//!   instructions (the operator's arithmetic).
//! - MEMCHECK operands: the tagged pointer to the step's first byte, width
//!   = the thread width `step / 32` (1 or 4 bytes), smaller (1 or 2) when
//!   fewer bytes remain. One check per warp instruction: the lanes of a
//!   coalesced access share one allocation, so the MLU does one lookup.
//! - Compiler pass: a warp starts with one `LOADMETA` per argument it
//!   touches (the root pointer `base + offset` of the argument's range), in
//!   argument order; its MEMCHECKs use the location that LOADMETA returned.
//!   HWONLY code has the MEMCHECKs only (the pipeline skips LOADMETA, see
//!   [`Checks`](crate::sm_pipeline::Checks)); the unchecked baseline skips both.
//! - An `acc` entry with a `null` id (no live block holds it; the published
//!   traces have none) has no address to sweep and is counted and skipped.
//! - `seg_alloc`/`seg_free` are the caching allocator's cudaMalloc segments,
//!   not tensors: the MLU tracks blocks, so they are ignored.
//!
//! Validity: the expander checks nothing of the trace itself; every rule
//! (lifetimes, 56-bit ranges, overlapping live blocks, accesses inside their
//! block) is [`TraceReader`]'s, so the expansion rejects exactly the files
//! `mlugen trace` rejects, with the same error. Its arithmetic relies on the
//! reader's guarantee that an access to block `id` has
//! `offset + length <= size(id) < 2^56`: `offset + length` and every step
//! start below it cannot overflow, and every step lies inside its block.
use std::io::BufRead;
use std::path::Path;

use crate::trace::{Event, Rw, TraceError, TraceReader};

/// Expansion parameters (see the module doc for what each synthesizes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpandConfig {
    /// Bytes per warp access: 32 or 128.
    pub step: u64,
    /// ALU instructions after every global access.
    pub alu: u32,
    /// Warps the kernel's steps are dealt to.
    pub warps: usize,
    /// Most steps per argument per kernel (evenly sampled).
    pub cap: u64,
    /// SMs the operator's grid is spread over (this model is one of them).
    pub sms: u64,
}

impl ExpandConfig {
    /// Defaults: 128-byte steps, 4 ALU ops per access, `warps` warps, cap =
    /// 8 steps per warp per argument, one SM of 132.
    pub fn new(warps: usize) -> ExpandConfig {
        ExpandConfig { step: 128, alu: 4, warps, cap: 8 * warps as u64, sms: 132 }
    }

    /// Errors name the parameter.
    pub fn validate(&self) -> Result<(), String> {
        if self.step != 32 && self.step != 128 {
            return Err(format!("step: must be 32 or 128 bytes, got {}", self.step));
        }
        if self.warps == 0 || self.warps > 1024 {
            return Err(format!("warps: must be 1..=1024, got {}", self.warps));
        }
        if self.sms == 0 {
            return Err("sms: must be at least 1".into());
        }
        if self.cap == 0 {
            return Err("cap: must be at least 1 step per argument".into());
        }
        Ok(())
    }
}

impl Default for ExpandConfig {
    fn default() -> Self {
        ExpandConfig::new(32)
    }
}

/// One warp instruction. `arg` indexes the kernel's [`Kernel::args`]; `off` is
/// the byte offset from that argument block's base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instr {
    /// `n` ALU instructions (each takes one issue cycle).
    Alu(u32),
    /// LOADMETA of the argument's root pointer (compiler pass only).
    LoadMeta { arg: u32 },
    /// MEMCHECK.G of `base(arg) + off`, `width` bytes.
    MemCheck { arg: u32, off: u64, width: u8 },
    /// Global load / store of one warp access at `base(arg) + off`.
    Load { arg: u32, off: u64 },
    Store { arg: u32, off: u64 },
    /// In-kernel malloc of `size` bytes through the canary allocator unit;
    /// the pointer (0 on an error) goes to warp register `dst` (the
    /// registers LOADMETA writes, one per argument index). Timing:
    /// [`crate::sm_pipeline`] "Canary allocator unit". Never made by the expander.
    Malloc { size: u64, dst: u32 },
    /// In-kernel free of the pointer in warp register `src`.
    Free { src: u32 },
    /// Load / store of one warp access at register `reg` + `off` (a device
    /// heap pointer): the timing of [`Instr::Load`] / [`Instr::Store`]; the
    /// store also writes `width` bytes there if they fall in the unit's heap
    /// (how a kernel overflows a chunk).
    LoadReg { reg: u32, off: u64 },
    StoreReg { reg: u32, off: u64, width: u8 },
    /// LOADMETA of the pointer in register `src` (a device heap pointer);
    /// the location goes to register `dst`. Compiler mode only, as
    /// [`Instr::LoadMeta`]; [`crate::sm_pipeline`]'s unit timing only.
    LoadMetaReg { src: u32, dst: u32 },
    /// MEMCHECK.G of register `reg` + `off`, `width` bytes, with the
    /// location operand in register `loc` (compiler mode; HWONLY ignores
    /// it). [`crate::sm_pipeline`]'s unit timing only.
    MemCheckReg { reg: u32, loc: u32, off: u64, width: u8 },
}

/// One operator argument as the trace gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// Trace block id.
    pub id: u64,
    pub offset: u64,
    pub length: u64,
    pub rw: Rw,
}

/// One operator: its arguments and one instruction stream per warp that has
/// work (warps without any step are not launched).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub op: String,
    pub args: Vec<Arg>,
    pub warps: Vec<Vec<Instr>>,
    /// Distinct blocks the operator touches (its allocation working set).
    pub working_set: usize,
    /// Steps this SM would do before the cap (sum over arguments).
    pub full_steps: u64,
}

/// One item of the program, in trace order; `line` is the trace line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Alloc { id: u64, base: u64, size: u64, line: u64 },
    Free { id: u64, line: u64 },
    Kernel { kernel: Kernel, line: u64 },
}

/// A whole expanded trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    pub file: String,
    pub workload: String,
    pub items: Vec<Item>,
    /// `acc` entries with a null id (skipped).
    pub null_accesses: u64,
}

impl Workload {
    pub fn kernels(&self) -> impl Iterator<Item = &Kernel> {
        self.items.iter().filter_map(|i| match i {
            Item::Kernel { kernel, .. } => Some(kernel),
            _ => None,
        })
    }
}

/// Expands one kernel's arguments into per-warp streams. Each argument must
/// satisfy `offset + length` without overflow (the arguments [`load`] passes
/// come from [`TraceReader`], which guarantees `offset + length <= size <
/// 2^56`).
pub fn expand_kernel(op: &str, args: Vec<Arg>, cfg: &ExpandConfig) -> Kernel {
    let w = cfg.warps;
    let tw = cfg.step / 32;
    // Per argument: its sampled step starts (offsets in the block).
    let mut full_steps = 0u64;
    let samples: Vec<Vec<u64>> = args
        .iter()
        .map(|a| {
            let n = a.length.div_ceil(cfg.step);
            let mine = n.div_ceil(cfg.sms).min(cfg.cap);
            full_steps += n.div_ceil(cfg.sms);
            (0..mine).map(|i| a.offset + (i as u128 * n as u128 / mine as u128) as u64 * cfg.step).collect()
        })
        .collect();
    let mut warps = Vec::new();
    for wi in 0..w {
        let mut s = Vec::new();
        let touches = |ai: usize| samples[ai].len() > wi;
        for ai in 0..args.len() {
            if touches(ai) {
                s.push(Instr::LoadMeta { arg: ai as u32 });
            }
        }
        if s.is_empty() {
            continue;
        }
        let mut j = 0;
        loop {
            let mut any = false;
            for (ai, a) in args.iter().enumerate() {
                let Some(&off) = samples[ai].get(wi + j * w) else { continue };
                any = true;
                let end = a.offset + a.length;
                let left = end - off;
                let width = if left >= tw { tw } else if left >= 2 { 2 } else { 1 } as u8;
                let arg = ai as u32;
                let access = |instr: Instr, s: &mut Vec<Instr>| {
                    s.push(Instr::MemCheck { arg, off, width });
                    s.push(instr);
                    if cfg.alu > 0 {
                        s.push(Instr::Alu(cfg.alu));
                    }
                };
                match a.rw {
                    Rw::R => access(Instr::Load { arg, off }, &mut s),
                    Rw::W => access(Instr::Store { arg, off }, &mut s),
                    Rw::RW => {
                        access(Instr::Load { arg, off }, &mut s);
                        access(Instr::Store { arg, off }, &mut s);
                    }
                }
            }
            if !any {
                break;
            }
            j += 1;
        }
        warps.push(s);
    }
    let mut ids: Vec<u64> = args.iter().map(|a| a.id).collect();
    ids.sort_unstable();
    ids.dedup();
    Kernel { op: op.to_string(), working_set: ids.len(), args, warps, full_steps }
}

/// Reads and expands a trace file.
pub fn load(path: impl AsRef<Path>, cfg: &ExpandConfig) -> Result<Workload, TraceError> {
    let path = path.as_ref();
    let reader = TraceReader::open(path)?;
    expand_reader(reader, path.display().to_string(), cfg)
}

/// [`load`] over any reader (tests feed in-memory traces).
pub fn expand_reader<R: BufRead>(
    mut reader: TraceReader<R>,
    file: String,
    cfg: &ExpandConfig,
) -> Result<Workload, TraceError> {
    if let Err(m) = cfg.validate() {
        return Err(TraceError { file, line: 0, message: format!("expansion parameter {m}") });
    }
    let workload = reader.header().workload.clone().unwrap_or_else(|| {
        Path::new(&file).file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    });
    let mut items = Vec::new();
    let mut null_accesses = 0;
    // Every event has been validated by the reader (see the module doc).
    while let Some(ev) = reader.next() {
        let line = reader.line();
        match ev? {
            Event::Alloc { id, base, size } => items.push(Item::Alloc { id, base, size, line }),
            Event::Free { id } => items.push(Item::Free { id, line }),
            Event::SegAlloc { .. } | Event::SegFree { .. } | Event::Iter { .. } => {}
            Event::Kernel { op, acc, .. } => {
                let mut args = Vec::with_capacity(acc.len());
                for a in acc {
                    match a.id {
                        Some(id) => args.push(Arg { id, offset: a.offset, length: a.length, rw: a.rw }),
                        None => null_accesses += 1,
                    }
                }
                items.push(Item::Kernel { kernel: expand_kernel(&op, args, cfg), line });
            }
        }
    }
    let workload = workload.trim_end_matches(".jsonl.gz").to_string();
    Ok(Workload { file, workload, items, null_accesses })
}
