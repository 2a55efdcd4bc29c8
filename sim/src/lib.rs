//! mlugen's golden model: the executable form of the spec
//! (../shared/spec/MLU-SPEC.md) and docs/design.md that the RTL, the
//! cosimulation and the CLI are checked against. No rust-hdl dependency.
//!
//! Modules and the hardware blocks they mirror:
//! - [`mod@pointer`], [`node`]: tagged pointers and the 32-byte metadata node.
//! - [`memory`]: the metadata memory port's view ([`memory::MetaMemory`]).
//! - [`config`]: generator parameters / CSR reset values.
//! - [`fault`]: fault codes, op codes, fault reports.
//! - [`plru`]: replacement policies (RTL `plru`).
//! - [`mlb`]: the Metadata Lookaside Buffer (RTL `mlb`).
//! - [`memcheck`]: the MEMCHECK.G/S decisions (RTL `memcheck`,
//!   `lane_checks`).
//! - [`mlu_unit`], [`walker`]: the MLU as an SM unit (pipelined, K walkers,
//!   warp-wide), cycle by cycle (RTL `mlu_unit`, `walker`).
//! - [`mlu`], [`traverser`]: the transaction-level reference of what each
//!   operation answers, one request at a time (the unit answers the same;
//!   the RTL twin of this level, the blocking MLU, is retired).
//! - [`meta_port`]: the metadata port's far side (latency, reordering, errors).
//! - [`runtime`]: the host runtime (malloc/free wrapper); software only;
//!   [`tag_history`]: the per-address tag history behind its tag rule.
//! - [`canary`]: the canary allocator unit (RTL `hw::canary`).
//! - [`device_heap`]: the canary allocator's heap registered with the MLU:
//!   tagged chunks and the directory the MLU's heap window reads (the
//!   model leads; the RTL does not have it yet).
//! - [`oracle`]: a brute-force reference used by the property tests.
//! - [`top`]: what a generated top is: its kind, name and manifest
//!   parameters (hw::generate builds from it).
//!
//! Inputs, evaluation and plumbing (no hardware twin):
//! - [`scenario`]: the scenario files of `mlugen check` (spec section 10).
//! - [`trace`], [`expand`]: the workload traces and their expansion into
//!   per-warp instruction streams.
//! - [`sm_pipeline`]: the SM pipeline model (RTL `sm_pipeline`), cycle level.
//! - [`json`], [`project`], [`shard`]: strict JSON parsing, the project's
//!   paths, and `--shard I/N`.
//! - [`parallel`]: independent jobs (tool runs, test cases) on every core.
pub mod canary;
pub mod config;
pub mod device_heap;
pub mod fault;
pub mod json;
pub mod memcheck;
pub mod memory;
pub mod meta_port;
pub mod mlb;
pub mod mlu;
pub mod mlu_unit;
pub mod node;
pub mod oracle;
pub mod parallel;
pub mod plru;
pub mod pointer;
pub mod project;
pub mod runtime;
pub mod shard;
pub mod tag_history;
pub mod top;
pub mod traverser;
pub mod walker;

pub mod scenario;
pub mod trace;
pub mod expand;
pub mod sm_pipeline;
