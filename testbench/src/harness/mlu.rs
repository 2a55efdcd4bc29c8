//! The MLU's transaction-level harness (`mlu_harness.cpp`): Rust sends
//! metadata-memory updates, CSR writes and MLU requests; the C++ side runs
//! the request/response handshake and the metadata memory (word map, seeded
//! random latency and `mem_req_ready`, error responses for unmapped,
//! poisoned and unaligned words) cycle by cycle and answers each request with
//! its result, its latency in cycles and what the memory port saw.
//! The command and response formats are documented in the template.
use super::TemplatePort;
use crate::verilator::{build, BuildSpec, Built, Dir, Layout, Process, Top};
use anyhow::{bail, Result};
use askama::Template;
use sim::fault::{FaultCode, Op};
use sim::mlu::Counters;
use std::fmt;
use std::path::Path;

/// Cycles the harness waits for one response before it reports a hang.
pub const CYCLE_LIMIT: u64 = 20_000_000;

#[derive(Template)]
#[template(path = "mlu_harness.cpp", escape = "none")]
struct MluCpp<'a> {
    top: &'a str,
    ports: Vec<TemplatePort>,
    cycle_limit: u64,
}

/// The ports (name, direction, width) the harness drives and reads; the
/// manifest must have each with exactly this width (`mlb_repl_state` is N
/// bits and not used).
const PORTS: &[(&str, Dir, usize)] = &[
    ("reset", Dir::In, 1),
    ("req_valid", Dir::In, 1),
    ("req_ready", Dir::Out, 1),
    ("req_op", Dir::In, 3),
    ("req_ptr", Dir::In, 64),
    ("req_width", Dir::In, 5),
    ("req_loc", Dir::In, 64),
    ("req_sbase", Dir::In, 32),
    ("req_ssize", Dir::In, 32),
    ("resp_valid", Dir::Out, 1),
    ("resp_op", Dir::Out, 3),
    ("resp_fault", Dir::Out, 3),
    ("resp_loc", Dir::Out, 64),
    ("resp_addr", Dir::Out, 56),
    ("resp_base", Dir::Out, 56),
    ("resp_size", Dir::Out, 56),
    ("csr_we", Dir::In, 1),
    ("csr_addr", Dir::In, 2),
    ("csr_data", Dir::In, 64),
    ("csr_mode", Dir::Out, 1),
    ("csr_structure", Dir::Out, 1),
    ("csr_root", Dir::Out, 64),
    ("csr_step_limit", Dir::Out, 16),
    ("cnt_loadmeta", Dir::Out, 32),
    ("cnt_memcheck_g", Dir::Out, 32),
    ("cnt_memcheck_s", Dir::Out, 32),
    ("cnt_range_lookups", Dir::Out, 32),
    ("cnt_range_hits", Dir::Out, 32),
    ("cnt_range_misses", Dir::Out, 32),
    ("cnt_loc_lookups", Dir::Out, 32),
    ("cnt_loc_hits", Dir::Out, 32),
    ("cnt_loc_misses", Dir::Out, 32),
    ("cnt_steps", Dir::Out, 32),
    ("cnt_meta_reads", Dir::Out, 32),
    ("cnt_faults", Dir::Out, 32),
    ("cnt_invalidates", Dir::Out, 32),
    ("cnt_flushes", Dir::Out, 32),
    ("mem_req_valid", Dir::Out, 1),
    ("mem_req_ready", Dir::In, 1),
    ("mem_req_addr", Dir::Out, 64),
    ("mem_resp_valid", Dir::In, 1),
    ("mem_resp_data", Dir::In, 64),
    ("mem_resp_error", Dir::In, 1),
    ("mlb_multi", Dir::Out, 1),
];

/// CSR addresses (hw/src/mlu.rs).
pub const CSR_MODE: u8 = 0;
pub const CSR_STRUCTURE: u8 = 1;
pub const CSR_ROOT: u8 = 2;
pub const CSR_STEP_LIMIT: u8 = 3;

/// The harness C++ for an MLU top (checks the manifest's ports first).
pub fn mlu_cpp(top: &Top) -> Result<String> {
    let layout = Layout::from_manifest(&top.manifest)?;
    for &(name, dir, width) in PORTS {
        layout.port_of_width(name, dir, width)?;
    }
    let mut ports = TemplatePort::list(&layout.inputs);
    ports.extend(TemplatePort::list(&layout.outputs));
    Ok(MluCpp { top: top.name(), ports, cycle_limit: CYCLE_LIMIT }.render()?)
}

/// Build (cached) the MLU harness of `top` with `verilog`.
pub fn build_mlu_harness(top: &Top, verilog: &str, variant: &str, trace: bool) -> Result<Built> {
    let cpp = mlu_cpp(top)?;
    let name = format!("{}{}{}", top.name(), variant, if trace { "-trace" } else { "" });
    build(&BuildSpec { name, top_module: top.name().to_string(), verilog, cpp, trace })
}

/// One MLU request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MluReq {
    LoadMeta { p: u64 },
    MemcheckG { p: u64, w: u32, loc: u64 },
    /// Shared address, window base and size (32-bit shared space).
    MemcheckS { a: u32, w: u32, base: u32, size: u32 },
    Invalidate { loc: u64 },
    Flush,
}

impl MluReq {
    /// The 3-bit op encoding (docs/design.md "Encodings").
    pub fn op_bits(&self) -> u8 {
        match self {
            MluReq::LoadMeta { .. } => 0,
            MluReq::MemcheckG { .. } => 1,
            MluReq::MemcheckS { .. } => 2,
            MluReq::Invalidate { .. } => 3,
            MluReq::Flush => 4,
        }
    }
    pub fn op(&self) -> Option<Op> {
        match self {
            MluReq::LoadMeta { .. } => Some(Op::LoadMeta),
            MluReq::MemcheckG { .. } => Some(Op::MemcheckG),
            MluReq::MemcheckS { .. } => Some(Op::MemcheckS),
            _ => None,
        }
    }
}

impl fmt::Display for MluReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MluReq::LoadMeta { p } => write!(f, "LOADMETA(p={p:#018x})"),
            MluReq::MemcheckG { p, w, loc } => write!(f, "MEMCHECK.G(p={p:#018x}, w={w}, loc={loc:#x})"),
            MluReq::MemcheckS { a, w, base, size } => write!(f, "MEMCHECK.S(a={a:#x}, w={w}, base={base:#x}, size={size:#x})"),
            MluReq::Invalidate { loc } => write!(f, "INVALIDATE(loc={loc:#x})"),
            MluReq::Flush => write!(f, "FLUSH"),
        }
    }
}

/// The harness's answer to one request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MluResp {
    pub fault: u8,
    pub op: u8,
    /// 1 mlb_multi seen, 2 no response (hang), 4 spurious resp_valid, 8
    /// memory port misuse, 16 the request's [`Injection`] fired.
    pub flags: u8,
    /// Cycles from the edge that took the request to the response cycle.
    pub cycles: u32,
    pub loc: u64,
    pub addr: u64,
    pub base: u64,
    pub size: u64,
    /// Metadata reads the memory port took, the sum of their drawn
    /// latencies, and the cycles requests waited for `mem_req_ready`.
    pub reads: u32,
    pub lat_sum: u32,
    pub stall_sum: u32,
}

pub const RESP_BYTES: usize = 56;

impl MluResp {
    fn decode(b: &[u8]) -> MluResp {
        let u32at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let u64at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        MluResp {
            fault: b[0],
            op: b[1],
            flags: b[2],
            cycles: u32at(4),
            loc: u64at(8),
            addr: u64at(16),
            base: u64at(24),
            size: u64at(32),
            reads: u32at(40),
            lat_sum: u32at(44),
            stall_sum: u32at(48),
        }
    }
    pub fn fault_code(&self) -> Option<FaultCode> {
        FaultCode::from_bits(self.fault)
    }
}

impl fmt::Display for MluResp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fc = self.fault_code().map_or("?".to_string(), |c| c.name().to_string());
        write!(
            f,
            "fault={fc} op={} loc={:#x} addr={:#x} base={:#x} size={:#x} cycles={} reads={} (latency sum {}, ready stalls {}) flags={:#x}",
            self.op, self.loc, self.addr, self.base, self.size, self.cycles, self.reads, self.lat_sum, self.stall_sum, self.flags
        )
    }
}

/// Counters and CSRs as the hardware shows them (counters are 32 bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HwState {
    pub counters: Counters,
    pub csr_mode: u64,
    pub csr_structure: u64,
    pub csr_root: u64,
    pub csr_step_limit: u64,
    pub cycles: u64,
    pub idle_flags: u64,
}

pub const STATE_BYTES: usize = 20 * 8;

impl HwState {
    fn decode(b: &[u8]) -> HwState {
        let v: Vec<u64> = b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
        HwState {
            counters: Counters {
                loadmeta: v[0],
                memcheck_g: v[1],
                memcheck_s: v[2],
                range_lookups: v[3],
                range_hits: v[4],
                range_misses: v[5],
                loc_lookups: v[6],
                loc_hits: v[7],
                loc_misses: v[8],
                steps: v[9],
                meta_reads: v[10],
                faults: v[11],
                invalidates: v[12],
                flushes: v[13],
            },
            csr_mode: v[14],
            csr_structure: v[15],
            csr_root: v[16],
            csr_step_limit: v[17],
            cycles: v[18],
            idle_flags: v[19],
        }
    }
}

/// Counters truncated to the hardware's 32 bits.
pub fn counters_mod32(c: &Counters) -> Counters {
    let m = |x: u64| x & 0xFFFF_FFFF;
    Counters {
        loadmeta: m(c.loadmeta),
        memcheck_g: m(c.memcheck_g),
        memcheck_s: m(c.memcheck_s),
        range_lookups: m(c.range_lookups),
        range_hits: m(c.range_hits),
        range_misses: m(c.range_misses),
        loc_lookups: m(c.loc_lookups),
        loc_hits: m(c.loc_hits),
        loc_misses: m(c.loc_misses),
        steps: m(c.steps),
        meta_reads: m(c.meta_reads),
        faults: m(c.faults),
        invalidates: m(c.invalidates),
        flushes: m(c.flushes),
    }
}

/// A command for the harness (the batch is a sequence of these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cmd {
    Write { addr: u64, data: u64 },
    Forget { addr: u64 },
    Poison { addr: u64 },
    ForgetAll,
    /// Memory timing: latency in [lmin, lmax], ready percentage, PRNG seed.
    Timing { lmin: u32, lmax: u32, ready_pct: u32, seed: u64 },
    Csr { addr: u8, data: u64 },
    Reset,
    Req(MluReq),
    ReadState,
    Vcd(String),
    /// Fault injection: every metadata read waits `min..=max` extra cycles
    /// with `mem_req_ready` low (drawn per read from `seed`); max 0 = off.
    Hold { min: u32, max: u32, seed: u64 },
    /// Fault injection for the next request only (see [`Injection`]).
    Inject(Injection),
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cmd::Write { addr, data } => write!(f, "memory write [{addr:#x}] = {data:#x}"),
            Cmd::Forget { addr } => write!(f, "memory word {addr:#x} removed"),
            Cmd::Poison { addr } => write!(f, "memory word {addr:#x} answers with an error"),
            Cmd::ForgetAll => write!(f, "memory cleared"),
            Cmd::Timing { lmin, lmax, ready_pct, seed } => {
                write!(f, "memory timing: latency {lmin}..={lmax} cycles, ready {ready_pct}% of cycles, seed {seed}")
            }
            Cmd::Csr { addr, data } => write!(f, "CSR write [{addr}] = {data:#x}"),
            Cmd::Reset => write!(f, "reset"),
            Cmd::Req(r) => write!(f, "{r}"),
            Cmd::ReadState => write!(f, "read the counters and CSRs"),
            Cmd::Vcd(p) => write!(f, "VCD to {p}"),
            Cmd::Hold { min, max, seed } => write!(f, "metadata reads held {min}..={max} extra cycles, seed {seed}"),
            Cmd::Inject(i) => write!(
                f,
                "next request's metadata read {}: {}",
                i.at,
                if i.error { "error response".to_string() } else { format!("{} memory writes land first", i.writes.len()) }
            ),
        }
    }
}

/// A one-request memory fault: at that request's metadata read number `at`
/// (from 0), either the read answers with an error, or `writes` land in
/// memory first (so reads `at..` see them: a node changing under a walk).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Injection {
    pub at: u32,
    pub error: bool,
    pub writes: Vec<(u64, u64)>,
}

impl Cmd {
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Cmd::Write { addr, data } => {
                out.push(b'W');
                out.extend_from_slice(&addr.to_le_bytes());
                out.extend_from_slice(&data.to_le_bytes());
            }
            Cmd::Forget { addr } => {
                out.push(b'D');
                out.extend_from_slice(&addr.to_le_bytes());
            }
            Cmd::Poison { addr } => {
                out.push(b'P');
                out.extend_from_slice(&addr.to_le_bytes());
            }
            Cmd::ForgetAll => out.push(b'Z'),
            Cmd::Timing { lmin, lmax, ready_pct, seed } => {
                out.push(b'L');
                out.extend_from_slice(&lmin.to_le_bytes());
                out.extend_from_slice(&lmax.to_le_bytes());
                out.extend_from_slice(&ready_pct.to_le_bytes());
                out.extend_from_slice(&seed.to_le_bytes());
            }
            Cmd::Csr { addr, data } => {
                out.push(b'S');
                out.push(*addr);
                out.extend_from_slice(&data.to_le_bytes());
            }
            Cmd::Reset => out.push(b'X'),
            Cmd::Req(r) => {
                let (w, p, loc, sb, ss) = match *r {
                    MluReq::LoadMeta { p } => (8, p, 0, 0, 0),
                    MluReq::MemcheckG { p, w, loc } => (w, p, loc, 0, 0),
                    MluReq::MemcheckS { a, w, base, size } => (w, a as u64, 0, base, size),
                    MluReq::Invalidate { loc } => (0, 0, loc, 0, 0),
                    MluReq::Flush => (0, 0, 0, 0, 0),
                };
                out.push(b'O');
                out.push(r.op_bits());
                out.push(w as u8);
                out.extend_from_slice(&p.to_le_bytes());
                out.extend_from_slice(&loc.to_le_bytes());
                out.extend_from_slice(&sb.to_le_bytes());
                out.extend_from_slice(&ss.to_le_bytes());
            }
            Cmd::ReadState => out.push(b'K'),
            Cmd::Vcd(path) => {
                out.push(b'V');
                out.extend_from_slice(&(path.len() as u16).to_le_bytes());
                out.extend_from_slice(path.as_bytes());
            }
            Cmd::Hold { min, max, seed } => {
                out.push(b'H');
                out.extend_from_slice(&min.to_le_bytes());
                out.extend_from_slice(&max.to_le_bytes());
                out.extend_from_slice(&seed.to_le_bytes());
            }
            Cmd::Inject(j) => {
                out.push(b'T');
                out.extend_from_slice(&j.at.to_le_bytes());
                out.push(if j.error { 0 } else { 1 });
                out.extend_from_slice(&(j.writes.len() as u16).to_le_bytes());
                for (a, d) in &j.writes {
                    out.extend_from_slice(&a.to_le_bytes());
                    out.extend_from_slice(&d.to_le_bytes());
                }
            }
        }
    }
    /// Bytes of response this command produces.
    pub fn response_bytes(&self) -> usize {
        match self {
            Cmd::Req(_) => RESP_BYTES,
            Cmd::ReadState => STATE_BYTES,
            _ => 0,
        }
    }
}

/// A response, in command order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Resp(MluResp),
    State(HwState),
}

/// A running MLU harness.
pub struct MluSim {
    proc: Process,
    pending: Vec<usize>,
}

impl MluSim {
    pub fn start(built: &Built, seed: u64) -> Result<MluSim> {
        Ok(MluSim { proc: Process::spawn(&built.exe, &[seed.to_string()])?, pending: vec![] })
    }

    /// Send a batch of commands. One batch may be outstanding.
    pub fn send(&mut self, cmds: &[Cmd]) -> Result<()> {
        if !self.pending.is_empty() {
            bail!("a batch is still outstanding");
        }
        let mut buf = Vec::with_capacity(cmds.len() * 36 + 1);
        for c in cmds {
            c.encode(&mut buf);
            let n = c.response_bytes();
            if n != 0 {
                self.pending.push(n);
            }
        }
        buf.push(b'F');
        self.proc.write(&buf)?;
        self.proc.flush()
    }

    /// The answers of the outstanding batch.
    pub fn receive(&mut self) -> Result<Vec<Answer>> {
        let total: usize = self.pending.iter().sum();
        let mut buf = vec![0u8; total];
        self.proc.read_exact(&mut buf)?;
        let mut out = Vec::with_capacity(self.pending.len());
        let mut off = 0;
        for n in self.pending.drain(..) {
            let b = &buf[off..off + n];
            out.push(if n == RESP_BYTES { Answer::Resp(MluResp::decode(b)) } else { Answer::State(HwState::decode(b)) });
            off += n;
        }
        Ok(out)
    }

    pub fn run(&mut self, cmds: &[Cmd]) -> Result<Vec<Answer>> {
        self.send(cmds)?;
        self.receive()
    }

    /// Start a VCD now (trace builds only).
    pub fn start_vcd(&mut self, path: &Path) -> Result<()> {
        let mut b = vec![];
        Cmd::Vcd(path.to_string_lossy().to_string()).encode(&mut b);
        self.proc.write(&b)?;
        self.proc.flush()
    }

    pub fn finish(self) -> Result<()> {
        self.proc.finish(b'Q')
    }
}
