//! Verilator cosimulation plumbing shared by every harness: the port layout
//! of a generated top (from its JSON manifest), the cached Verilator build,
//! and the child process that runs the harness.
//!
//! # Exchange with Rust
//! The harness is a C++ program generated from an askama template
//! (verif/templates/) for the ports of the top's manifest, compiled with
//! the top's Verilog by Verilator. It runs as a child process and speaks a
//! compact binary record protocol over its stdin/stdout pipes, in *batches*:
//! Rust writes one command with many records, the harness reads the whole
//! batch, simulates it and writes all the responses back, then waits for the
//! next command. No per-cycle round trip, and no pipe deadlock (the harness
//! never writes while Rust is still writing a batch). All integers are
//! little-endian; a port's value occupies `ceil(width / 8)` bytes, ports in
//! manifest order (clock excluded), so a record follows any configuration's
//! port widths (ports wider than 64 bits are `VlWide` words on the C++ side).
//!
//! # Build cache
//! A build lives in `<cosim dir>/<top>-<key>/` where `key` is a hash of the
//! Verilog text, the generated C++, the Verilator version and the flags; it is
//! reused until one of them changes. Builds go to a temporary directory that
//! is renamed into place, so concurrent test binaries never see half a build;
//! a lock file per build makes threads and processes that need the same
//! build wait for one compile.
//! The cosim dir is `$MLUGEN_COSIM_DIR`, else `target/cosim` of this
//! workspace.
use anyhow::{anyhow, bail, Context, Result};
use hw::manifest::Manifest;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;

/// Direction of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    In,
    Out,
}

/// One port of a top in a record: where its bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSlot {
    pub name: String,
    pub dir: Dir,
    pub width: usize,
    /// Byte offset in the input or output record.
    pub offset: usize,
    /// `ceil(width / 8)`.
    pub bytes: usize,
}

impl PortSlot {
    /// Number of 32-bit Verilator words (`VlWide<words>`) for a wide port.
    pub fn words(&self) -> usize {
        self.width.div_ceil(32)
    }
    /// Whether Verilator represents the port as `VlWide` (> 64 bits).
    pub fn is_wide(&self) -> bool {
        self.width > 64
    }
    /// Write `v` (<= 64-bit port) into `rec`; bits above the width are dropped.
    #[inline]
    pub fn put(&self, rec: &mut [u8], v: u64) {
        let v = if self.width >= 64 { v } else { v & ((1u64 << self.width) - 1) };
        let b = v.to_le_bytes();
        let n = self.bytes.min(8);
        rec[self.offset..self.offset + n].copy_from_slice(&b[..n]);
    }
    /// Read a <= 64-bit port from `rec`.
    #[inline]
    pub fn get(&self, rec: &[u8]) -> u64 {
        let mut b = [0u8; 8];
        let n = self.bytes.min(8);
        b[..n].copy_from_slice(&rec[self.offset..self.offset + n]);
        u64::from_le_bytes(b)
    }
    /// Write a port of any width from little-endian 64-bit limbs.
    pub fn put_wide(&self, rec: &mut [u8], limbs: &[u64]) {
        for i in 0..self.bytes {
            let limb = limbs.get(i / 8).copied().unwrap_or(0);
            let mut byte = (limb >> (8 * (i % 8))) as u8;
            if i == self.bytes - 1 && self.width % 8 != 0 {
                byte &= (1u8 << (self.width % 8)) - 1;
            }
            rec[self.offset + i] = byte;
        }
    }
    /// Read a port of any width as little-endian 64-bit limbs.
    pub fn get_wide(&self, rec: &[u8]) -> Vec<u64> {
        let mut limbs = vec![0u64; self.bytes.div_ceil(8)];
        for i in 0..self.bytes {
            limbs[i / 8] |= (rec[self.offset + i] as u64) << (8 * (i % 8));
        }
        limbs
    }
}

/// The record layout of a top: its clock, input ports (excluding the clock)
/// and output ports, in manifest order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub top: String,
    pub clock: String,
    pub inputs: Vec<PortSlot>,
    pub outputs: Vec<PortSlot>,
    pub in_bytes: usize,
    pub out_bytes: usize,
}

impl Layout {
    /// The layout of `m`'s ports. The top must have exactly one 1-bit input
    /// named `clock` (every rust-hdl block here does).
    pub fn from_manifest(m: &Manifest) -> Result<Layout> {
        let mut inputs = vec![];
        let mut outputs = vec![];
        let (mut in_bytes, mut out_bytes) = (0, 0);
        let mut clock = None;
        for p in &m.ports {
            if p.width == 0 {
                bail!("manifest of {}: port `{}` has width 0", m.top, p.name);
            }
            let bytes = p.width.div_ceil(8);
            match p.direction.as_str() {
                "input" if p.name == "clock" => {
                    if p.width != 1 {
                        bail!("manifest of {}: port `clock` must be 1 bit wide, not {}", m.top, p.width);
                    }
                    clock = Some(p.name.clone());
                }
                "input" => {
                    inputs.push(PortSlot { name: p.name.clone(), dir: Dir::In, width: p.width, offset: in_bytes, bytes });
                    in_bytes += bytes;
                }
                "output" => {
                    outputs.push(PortSlot { name: p.name.clone(), dir: Dir::Out, width: p.width, offset: out_bytes, bytes });
                    out_bytes += bytes;
                }
                d => bail!("manifest of {}: port `{}` has direction `{d}` (expected input or output)", m.top, p.name),
            }
        }
        let clock = clock.ok_or_else(|| anyhow!("manifest of {}: no `clock` input port", m.top))?;
        Ok(Layout { top: m.top.clone(), clock, inputs, outputs, in_bytes, out_bytes })
    }

    /// The input port `name`.
    pub fn input(&self, name: &str) -> Result<PortSlot> {
        self.inputs
            .iter()
            .find(|p| p.name == name)
            .cloned()
            .ok_or_else(|| anyhow!("top {} has no input port `{name}` (its manifest lists: {})", self.top, names(&self.inputs)))
    }

    /// The output port `name`.
    pub fn output(&self, name: &str) -> Result<PortSlot> {
        self.outputs
            .iter()
            .find(|p| p.name == name)
            .cloned()
            .ok_or_else(|| anyhow!("top {} has no output port `{name}` (its manifest lists: {})", self.top, names(&self.outputs)))
    }

    /// The input/output port `name` with exactly `width` bits.
    pub fn port_of_width(&self, name: &str, dir: Dir, width: usize) -> Result<PortSlot> {
        let p = match dir {
            Dir::In => self.input(name)?,
            Dir::Out => self.output(name)?,
        };
        if p.width != width {
            bail!("top {}: port `{name}` is {} bits wide, the harness expects {width}", self.top, p.width);
        }
        Ok(p)
    }
}

fn names(ps: &[PortSlot]) -> String {
    ps.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// A generated top as the harnesses need it: Verilog text and manifest.
#[derive(Clone, Debug)]
pub struct Top {
    pub verilog: String,
    pub manifest: Manifest,
}

impl Top {
    /// Read `<dir>/<name>.v` and `<dir>/<name>.json`; errors name the file.
    pub fn load(dir: &Path, name: &str) -> Result<Top> {
        let v = dir.join(format!("{name}.v"));
        let j = dir.join(format!("{name}.json"));
        let verilog = std::fs::read_to_string(&v).with_context(|| format!("cannot read {}", v.display()))?;
        let text = std::fs::read_to_string(&j).with_context(|| format!("cannot read {}", j.display()))?;
        let manifest: Manifest =
            serde_json::from_str(&text).with_context(|| format!("{}: not a generation manifest", j.display()))?;
        if manifest.top != name {
            bail!("{}: manifest is for top `{}`, not `{name}`", j.display(), manifest.top);
        }
        if !verilog.contains(&format!("module {name}(")) {
            bail!("{}: no `module {name}(` in the Verilog", v.display());
        }
        Ok(Top { verilog, manifest })
    }

    pub fn name(&self) -> &str {
        &self.manifest.top
    }

    /// The committed top `name` from `verilog_out/`, or if it is not there,
    /// generated now from the hw crate's registry (`hw::generate`).
    pub fn committed_or_generated(name: &str, spec: impl FnOnce() -> Result<hw::generate::TopSpec>) -> Result<Top> {
        if let Some(dir) = verilog_out_dir().filter(|d| d.join(format!("{name}.v")).is_file()) {
            return Top::load(&dir, name);
        }
        let g = spec()?.build()?;
        Ok(Top { verilog: g.verilog, manifest: g.manifest })
    }
}

impl From<hw::generate::Generated> for Top {
    fn from(g: hw::generate::Generated) -> Top {
        Top { verilog: g.verilog, manifest: g.manifest }
    }
}

/// The project's committed Verilog directory (`<project>/verilog_out/`;
/// sim::project). Outside a source tree there is none, and tops are
/// generated in the process instead.
pub fn verilog_out_dir() -> Option<PathBuf> {
    sim::project::root().map(|r| r.join(hw::generate::VERILOG_OUT))
}

/// Where cached builds go: `$MLUGEN_COSIM_DIR`, else `<project>/target/cosim`,
/// else `<user cache>/cosim` (sim::project::cache_dir).
pub fn cosim_dir() -> PathBuf {
    match (std::env::var_os("MLUGEN_COSIM_DIR"), sim::project::root()) {
        (Some(d), _) => PathBuf::from(d),
        (None, Some(r)) => r.join("target").join("cosim"),
        (None, None) => sim::project::cache_dir().join("cosim"),
    }
}

/// 64-bit FNV-1a, twice with different offsets for a 128-bit cache key (a
/// stable hash: std's hasher may change between Rust releases).
pub fn cache_key(parts: &[&[u8]]) -> String {
    let mut h = [0xcbf2_9ce4_8422_2325u64, 0x6c62_272e_07bb_0142u64];
    for part in parts {
        for hh in &mut h {
            for &b in part.iter().chain((part.len() as u64).to_le_bytes().iter()) {
                *hh ^= b as u64;
                *hh = hh.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    format!("{:016x}{:016x}", h[0], h[1])
}

/// `verilator --version`, cached for the process.
pub fn verilator_version() -> Result<String> {
    static V: OnceLock<std::result::Result<String, String>> = OnceLock::new();
    V.get_or_init(|| {
        let out = Command::new("verilator")
            .arg("--version")
            .output()
            .map_err(|e| format!("cannot run `verilator --version` (is Verilator installed and on PATH?): {e}"))?;
        if !out.status.success() {
            return Err(format!("`verilator --version` failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    })
    .clone()
    .map_err(|e| anyhow!(e))
}

/// What to compile: the Verilog of the design, the harness C++ and options.
#[derive(Clone, Debug)]
pub struct BuildSpec<'a> {
    /// Build directory prefix, usually the top's name (plus a variant).
    pub name: String,
    /// Top module in `verilog`.
    pub top_module: String,
    pub verilog: &'a str,
    pub cpp: String,
    /// Build with `--trace` (VCD output).
    pub trace: bool,
}

/// A finished (or cached) build.
#[derive(Clone, Debug)]
pub struct Built {
    pub exe: PathBuf,
    pub dir: PathBuf,
    /// Whether this call compiled it (false: taken from the cache).
    pub compiled: bool,
    pub seconds: f64,
}

const VERILATOR_FLAGS: &[&str] = &[
    "--cc",
    "--exe",
    "--build",
    "-O3",
    "--x-assign",
    "fast",
    "--x-initial",
    "unique",
    "--default-language",
    "1364-2005",
    "-Wno-fatal",
    "-Wno-lint",
    "-Wno-style",
    "--prefix",
    "Vdut",
    "-o",
    "harness",
];
const CFLAGS: &str = "-O2 -std=c++17";

/// Build `spec` with Verilator unless a build with the same key exists.
pub fn build(spec: &BuildSpec) -> Result<Built> {
    build_with_cxx_opt(spec, None)
}

/// [`build`] with the C++ optimisation level `cxx_opt` ("-O0" ... "-Os")
/// instead of the RTL builds' [`CFLAGS`], applied to Verilator's generated
/// code too (its OPT_FAST/OPT_SLOW/OPT_GLOBAL): the gate-level build uses it,
/// because g++ takes minutes on a flat netlist's C++ at -O2.
pub fn build_with_cxx_opt(spec: &BuildSpec, cxx_opt: Option<&str>) -> Result<Built> {
    let t0 = std::time::Instant::now();
    let (cflags, make) = match cxx_opt {
        None => (CFLAGS.to_string(), "-j2 -s".to_string()),
        Some(opt) if matches!(opt, "-O0" | "-O1" | "-O2" | "-O3" | "-Os") => {
            (format!("{opt} -std=c++17"), format!("-j2 -s OPT_FAST={opt} OPT_SLOW={opt} OPT_GLOBAL={opt}"))
        }
        Some(opt) => bail!("C++ optimisation {opt:?}: expected -O0, -O1, -O2, -O3 or -Os"),
    };
    let version = verilator_version()?;
    // The RTL builds' key is unchanged (their caches stay valid).
    let flags = match cxx_opt {
        None => format!("{VERILATOR_FLAGS:?} {CFLAGS} trace={}", spec.trace),
        Some(_) => format!("{VERILATOR_FLAGS:?} {cflags} {make} trace={}", spec.trace),
    };
    let key = cache_key(&[spec.verilog.as_bytes(), spec.cpp.as_bytes(), version.as_bytes(), flags.as_bytes()]);
    let root = cosim_dir();
    let dir = root.join(format!("{}-{}", spec.name, &key[..16]));
    let exe = dir.join("obj").join("harness");
    if exe.is_file() {
        return Ok(Built { exe, dir, compiled: false, seconds: t0.elapsed().as_secs_f64() });
    }
    // Tests (threads, or processes such as `mlugen check` runs side by side)
    // that need the same harness wait for one build rather than each
    // compiling it: an exclusive lock on a file per build, released when
    // `build_lock` is dropped. The rename below still keeps a half build
    // from ever being seen.
    std::fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
    let lock_path = root.join(format!(".lock-{}-{}", spec.name, &key[..16]));
    let build_lock = std::fs::File::create(&lock_path).with_context(|| format!("cannot create {}", lock_path.display()))?;
    build_lock.lock().with_context(|| format!("cannot lock {}", lock_path.display()))?;
    if exe.is_file() {
        return Ok(Built { exe, dir, compiled: false, seconds: t0.elapsed().as_secs_f64() });
    }
    let root = root.canonicalize().with_context(|| format!("cannot resolve {}", root.display()))?;
    // Unique per build, not only per process: two test threads may build
    // the same harness at once.
    let tmp = root.join(format!(".tmp-{}-{}-{}-{}", spec.name, &key[..16], std::process::id(), unique()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let v = tmp.join("dut.v");
    let cpp = tmp.join("harness.cpp");
    std::fs::write(&v, spec.verilog).with_context(|| format!("cannot write {}", v.display()))?;
    std::fs::write(&cpp, &spec.cpp).with_context(|| format!("cannot write {}", cpp.display()))?;
    let mut cmd = Command::new("verilator");
    cmd.args(VERILATOR_FLAGS)
        .arg("--top-module")
        .arg(&spec.top_module)
        .arg("--Mdir")
        .arg(tmp.join("obj"))
        .arg("-CFLAGS")
        .arg(&cflags)
        .arg("-MAKEFLAGS")
        .arg(&make);
    if spec.trace {
        cmd.arg("--trace");
    }
    // Absolute paths: with --Mdir the --exe C++ file must be absolute.
    cmd.arg(&v).arg(&cpp);
    let out = cmd.output().context("cannot run verilator")?;
    std::fs::write(tmp.join("build.log"), [&out.stdout[..], &out.stderr[..]].concat()).ok();
    if !out.status.success() {
        let log = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = log.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
        bail!("Verilator build of {} failed (log in {}):\n{}", spec.name, tmp.join("build.log").display(), tail.join("\n"));
    }
    let final_dir = root.join(format!("{}-{}", spec.name, &key[..16]));
    match std::fs::rename(&tmp, &final_dir) {
        Ok(()) => {}
        // Another process finished the same build first: use theirs.
        Err(_) if final_dir.join("obj").join("harness").is_file() => {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Err(e) => bail!("cannot move the build {} to {}: {e}", tmp.display(), final_dir.display()),
    }
    Ok(Built { exe: final_dir.join("obj").join("harness"), dir: final_dir, compiled: true, seconds: t0.elapsed().as_secs_f64() })
}

/// A running harness process.
pub struct Process {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    exe: PathBuf,
    stderr_path: PathBuf,
}

impl Process {
    /// Start `exe` with `args`; its stderr goes to a file next to it.
    pub fn spawn(exe: &Path, args: &[String]) -> Result<Process> {
        let stderr_path = exe.with_file_name(format!("stderr-{}-{}.log", std::process::id(), unique()));
        let err = std::fs::File::create(&stderr_path).with_context(|| format!("cannot create {}", stderr_path.display()))?;
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .with_context(|| format!("cannot start the harness {}", exe.display()))?;
        let stdin = BufWriter::with_capacity(1 << 20, child.stdin.take().expect("piped"));
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().expect("piped"));
        Ok(Process { child, stdin, stdout, exe: exe.to_path_buf(), stderr_path })
    }

    /// Queue bytes for the harness.
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.stdin.write_all(bytes).map_err(|e| self.died(e))
    }

    /// Send everything queued.
    pub fn flush(&mut self) -> Result<()> {
        self.stdin.flush().map_err(|e| self.died(e))
    }

    /// Read exactly `buf.len()` bytes of responses.
    pub fn read_exact(&mut self, buf: &mut [u8]) -> Result<()> {
        self.stdout.read_exact(buf).map_err(|e| self.died(e))
    }

    fn died(&mut self, e: std::io::Error) -> anyhow::Error {
        let status = self.child.try_wait().ok().flatten();
        let stderr = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
        anyhow!(
            "harness {} stopped answering ({e}; exit status {:?}); its stderr:\n{}",
            self.exe.display(),
            status,
            stderr.trim_end()
        )
    }

    /// Send the quit command `quit` and wait for a clean exit.
    pub fn finish(mut self, quit: u8) -> Result<()> {
        self.write(&[quit])?;
        self.flush()?;
        let status = self.child.wait().context("waiting for the harness")?;
        let stderr = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
        let _ = std::fs::remove_file(&self.stderr_path);
        if !status.success() {
            bail!("harness {} exited with {status}: {}", self.exe.display(), stderr.trim_end());
        }
        Ok(())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // A harness still running (an error path) is killed: it is ours.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_file(&self.stderr_path);
    }
}

/// A number no other call in this process gets (temporary file names).
pub(crate) fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}
