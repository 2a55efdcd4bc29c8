//! Mutation fuzzing of the three input parsers (cargo-fuzz needs a nightly
//! compiler, which this project does not require; this is a deterministic
//! random-mutation harness instead): the scenario parser and runner
//! (`sim::scenario::Scenario`), the trace reader (`sim::trace::TraceReader`,
//! on text and on gzip bytes) and the configuration parser
//! (`sim::config::MluConfig` from JSON, then `validate` for both targets).
//!
//! Property for every mutated input: no panic, and either a result or an
//! error whose text names the input file (and, for traces, a line within the
//! file). Seeds: testbench/scenarios/*.json, fuzz/corpus/{trace,config}/ and
//! traces/*.jsonl.gz. A failing input is written to target/fuzz-failures/.
//!
//! In the suite each target runs a fixed number of inputs (seconds); the long
//! run is `cargo test --release -p testbench --test fuzz_parsers -- --ignored
//! --nocapture` (MLUGEN_FUZZ_SECONDS per target, default 60; MLUGEN_FUZZ_SEED).
use sim::config::{MluConfig, Target};
use sim::scenario::Scenario;
use sim::trace::TraceReader;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// splitmix64: small, seedable, good enough to pick mutations.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Values that sit on the parsers' edges: widths, 16/32/56/64-bit limits,
/// negative, fractional, exponent, huge, keywords of the formats.
const INTERESTING: &[&str] = &[
    "0", "-1", "1", "12", "65535", "65536", "4294967295", "4294967296", "72057594037927935",
    "72057594037927936", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
    "1.5", "1e308", "-0", "null", "true", "\"\"", "[]", "{}", "\"x\"", "\"malloc\"", "\"free\"",
    "\"access\"", "\"kernel\"", "\"alloc\"", "\"seg_alloc\"", "\"w\"", "\"r\"", "\"bst\"", "\"list\"",
    "\"sol\"", "\"hwonly\"", "\"compiler\"", "\"plru\"", "\"round_robin\"", "\"NONE\"",
    "\"OUT_OF_BOUNDS\"", "\"\\u0000\"", "\"\u{1F4A5}\"",
];

/// One random mutation of `data` (bytes; `others` for splicing).
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, others: &[Vec<u8>]) {
    let len = data.len();
    match rng.below(9) {
        // Flip a bit.
        0 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        // Replace a byte with a JSON-significant or arbitrary byte.
        1 if len > 0 => {
            const B: &[u8] = b"{}[]\":,-+.0123456789eE \n\t\\\x00\xff\xc3";
            let i = rng.below(len);
            data[i] = if rng.below(4) == 0 { rng.next() as u8 } else { B[rng.below(B.len())] };
        }
        // Delete a range.
        2 if len > 0 => {
            let i = rng.below(len);
            let n = 1 + rng.below((len - i).min(64));
            data.drain(i..i + n);
        }
        // Duplicate a range (repeated events, lines, fields).
        3 if len > 0 => {
            let i = rng.below(len);
            let n = 1 + rng.below((len - i).min(256));
            let chunk: Vec<u8> = data[i..i + n].to_vec();
            let at = rng.below(len + 1);
            data.splice(at..at, chunk);
        }
        // Truncate.
        4 if len > 0 => data.truncate(rng.below(len)),
        // Replace a number or string token with an interesting value.
        5 | 6 if len > 0 => {
            let i = rng.below(len);
            let is_tok = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'_';
            if let Some(s) = (i..len).find(|&k| is_tok(data[k]) || data[k] == b'"') {
                let e = if data[s] == b'"' {
                    (s + 1..len).find(|&k| data[k] == b'"').map(|k| k + 1).unwrap_or(len)
                } else {
                    (s..len).find(|&k| !is_tok(data[k])).unwrap_or(len)
                };
                let v = INTERESTING[rng.below(INTERESTING.len())].as_bytes();
                data.splice(s..e, v.iter().copied());
            }
        }
        // Swap two lines (traces: events out of order, lifetimes broken).
        7 => {
            let mut lines: Vec<Vec<u8>> = data.split(|&c| c == b'\n').map(|l| l.to_vec()).collect();
            if lines.len() > 2 {
                let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                lines.swap(a, b);
                *data = lines.join(&b'\n');
            }
        }
        // Splice in part of another seed.
        _ if !others.is_empty() => {
            let o = &others[rng.below(others.len())];
            if !o.is_empty() {
                let i = rng.below(o.len());
                let n = 1 + rng.below((o.len() - i).min(512));
                let at = rng.below(len + 1);
                data.splice(at..at, o[i..i + n].iter().copied());
            }
        }
        _ => data.push(rng.next() as u8),
    }
}

fn seeds(dir: &Path, ext: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no {ext} seeds in {}", dir.display());
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

const FILE: &str = "fuzz-input";

/// Runs one input through a target; Err describes a property violation.
/// Ok(true): the input was accepted (parsed, and for scenarios run, cleanly).
type Target1 = fn(&[u8]) -> Result<bool, String>;

fn scenario_target(data: &[u8]) -> Result<bool, String> {
    let text = String::from_utf8_lossy(data);
    match Scenario::from_json_str(&text) {
        Err(e) => clear(&e.with_file(FILE).to_string()).map(|_| false),
        // A scenario that parses is also run: the runner must not panic either.
        Ok(sc) => match sc.run() {
            Ok(_) => Ok(true),
            Err(e) => clear(&e.with_file(FILE).to_string()).map(|_| false),
        },
    }
}

fn trace_lines(data: &[u8]) -> usize {
    data.split(|&c| c == b'\n').count()
}

fn trace_text_target(data: &[u8]) -> Result<bool, String> {
    let lines = trace_lines(data) as u64;
    let check = |e: sim::trace::TraceError| -> Result<bool, String> {
        if e.line > lines {
            return Err(format!("error names line {} of a {lines}-line input: {e}", e.line));
        }
        clear(&e.to_string()).map(|_| false)
    };
    match TraceReader::new(std::io::Cursor::new(data.to_vec()), FILE) {
        Err(e) => check(e),
        Ok(reader) => {
            for ev in reader {
                if let Err(e) = ev {
                    return check(e);
                }
            }
            Ok(true)
        }
    }
}

fn trace_gz_target(data: &[u8]) -> Result<bool, String> {
    // Through the file path users take: TraceReader::open on a .gz file.
    let dir = root().join("target").join("fuzz-scratch");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join(format!("{}-{:?}.jsonl.gz", std::process::id(), std::thread::current().id()));
    std::fs::write(&path, data).map_err(|e| e.to_string())?;
    let name = path.display().to_string();
    let r = match TraceReader::open(&path) {
        Err(e) => Some(e),
        Ok(reader) => reader.filter_map(|ev| ev.err()).next(),
    };
    let _ = std::fs::remove_file(&path);
    match r {
        None => Ok(true),
        Some(e) if e.to_string().contains(&name) && !e.message.trim().is_empty() => Ok(false),
        Some(e) => Err(format!("unclear error: {e}")),
    }
}

fn config_target(data: &[u8]) -> Result<bool, String> {
    let text = String::from_utf8_lossy(data);
    match MluConfig::from_json_str(&text) {
        Err(e) => clear(&e.in_file(FILE).to_string()).map(|_| false),
        Ok(c) => {
            for t in [Target::Model, Target::Hardware] {
                if let Err(e) = c.validate(t) {
                    if e.field.is_none() {
                        return Err(format!("validation error names no field: {e}"));
                    }
                    clear(&e.in_file(FILE).to_string())?;
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
}

/// An error is clear when it names the input and says something.
fn clear(msg: &str) -> Result<(), String> {
    let rest = msg.strip_prefix(FILE).map(|r| r.trim_start_matches(|c: char| c == ':' || c.is_ascii_digit() || c == ' '));
    match rest {
        Some(r) if r.len() >= 5 => Ok(()),
        _ => Err(format!("unclear error: {msg:?}")),
    }
}

struct Stats {
    inputs: u64,
    accepted: u64,
    seconds: f64,
}

/// Mutates seeds (1..=4 stacked mutations per input) until `count` inputs or
/// `budget` elapse; a panic or unclear error fails with the input saved.
fn fuzz(name: &str, target: Target1, seeds: &[Vec<u8>], seed: u64, count: u64, budget: Duration) -> Stats {
    let mut rng = Rng(seed);
    let t = Instant::now();
    let mut inputs = 0u64;
    let mut accepted = 0u64;
    // Every seed itself first: they must pass through cleanly too.
    let mut queue: Vec<Vec<u8>> = seeds.to_vec();
    while inputs < count && t.elapsed() < budget {
        let data = match queue.pop() {
            Some(d) => d,
            None => {
                let mut d = seeds[rng.below(seeds.len())].clone();
                for _ in 0..1 + rng.below(4) {
                    mutate(&mut rng, &mut d, seeds);
                }
                d
            }
        };
        let r = catch_unwind(AssertUnwindSafe(|| target(&data)));
        let problem = match r {
            Ok(Ok(ok)) => {
                accepted += ok as u64;
                None
            }
            Ok(Err(m)) => Some(m),
            Err(p) => Some(format!(
                "panic: {}",
                p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
            )),
        };
        if let Some(m) = problem {
            let dir = root().join("target").join("fuzz-failures");
            std::fs::create_dir_all(&dir).unwrap();
            let f = dir.join(format!("{name}-{seed}-{inputs}"));
            std::fs::write(&f, &data).unwrap();
            panic!("{name}: input {inputs} (saved to {}): {m}", f.display());
        }
        inputs += 1;
    }
    let stats = Stats { inputs, accepted, seconds: t.elapsed().as_secs_f64() };
    eprintln!(
        "fuzz {name}: {} inputs ({} accepted, {} rejected) in {:.1} s ({:.0}/s), seed {seed}, no panic, every error clear",
        stats.inputs,
        stats.accepted,
        stats.inputs - stats.accepted,
        stats.seconds,
        stats.inputs as f64 / stats.seconds
    );
    stats
}

fn scenario_seeds() -> Vec<Vec<u8>> {
    seeds(&root().join("testbench").join("scenarios"), ".json")
}
fn trace_seeds() -> Vec<Vec<u8>> {
    seeds(&root().join("fuzz").join("corpus").join("trace"), ".jsonl")
}
fn gz_seeds() -> Vec<Vec<u8>> {
    seeds(&root().join("traces"), ".jsonl.gz")
}
fn config_seeds() -> Vec<Vec<u8>> {
    seeds(&root().join("fuzz").join("corpus").join("config"), ".json")
}

const QUICK: Duration = Duration::from_secs(600); // counts decide in the suite

#[test]
fn fuzz_scenario_parser_quick() {
    let s = fuzz("scenario", scenario_target, &scenario_seeds(), 1, 20_000, QUICK);
    assert_eq!(s.inputs, 20_000);
    // The seeds themselves are accepted, so the runner is exercised too.
    assert!(s.accepted >= scenario_seeds().len() as u64);
}

#[test]
fn fuzz_trace_reader_quick() {
    let s = fuzz("trace", trace_text_target, &trace_seeds(), 2, 20_000, QUICK);
    assert_eq!(s.inputs, 20_000);
    assert!(s.accepted >= trace_seeds().len() as u64);
    let s = fuzz("trace-gz", trace_gz_target, &gz_seeds(), 3, 200, QUICK);
    assert_eq!(s.inputs, 200);
}

#[test]
fn fuzz_config_parser_quick() {
    let s = fuzz("config", config_target, &config_seeds(), 4, 100_000, QUICK);
    assert_eq!(s.inputs, 100_000);
    assert!(s.accepted >= 1);
}

/// The harness can fail: an input that is not valid JSON gives an error
/// (which `clear` accepts), and a message not naming the file is rejected.
#[test]
fn fuzz_harness_rejects_unclear_errors() {
    assert_eq!(config_target(b"{\"entries\": 12}"), Ok(false)); // validate names the field
    assert_eq!(config_target(b"{\"entries\": 8}"), Ok(true));
    assert!(clear("something went wrong").is_err());
    assert!(clear(&format!("{FILE}: ")).is_err());
    assert!(clear(&format!("{FILE}:3: unknown field `x`")).is_ok());
    // A mutation changes its input.
    let mut rng = Rng(9);
    let seed = b"{\"entries\": 8}".to_vec();
    let changed = (0..100).filter(|_| {
        let mut d = seed.clone();
        mutate(&mut rng, &mut d, &[]);
        d != seed
    });
    assert!(changed.count() > 70); // some mutations (a line swapped with itself) are no-ops
}

fn long_budget() -> (u64, Duration) {
    let secs = std::env::var("MLUGEN_FUZZ_SECONDS").ok().map(|s| s.parse::<u64>().expect("MLUGEN_FUZZ_SECONDS: a whole number of seconds")).unwrap_or(60);
    let seed = std::env::var("MLUGEN_FUZZ_SEED").ok().map(|s| s.parse::<u64>().expect("MLUGEN_FUZZ_SEED: an integer")).unwrap_or(1000);
    (seed, Duration::from_secs(secs))
}

#[test]
#[ignore = "long fuzz run: --ignored, MLUGEN_FUZZ_SECONDS per target"]
fn fuzz_all_parsers_long() {
    let (seed, budget) = long_budget();
    fuzz("scenario", scenario_target, &scenario_seeds(), seed, u64::MAX, budget);
    fuzz("trace", trace_text_target, &trace_seeds(), seed + 1, u64::MAX, budget);
    fuzz("trace-gz", trace_gz_target, &gz_seeds(), seed + 2, u64::MAX, budget / 4);
    fuzz("config", config_target, &config_seeds(), seed + 3, u64::MAX, budget);
}
