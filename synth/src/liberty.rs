//! Liberty libraries: finding them (Nangate45 fetched, ASAP7 merged, or a
//! user's file), and the few facts the flow needs from them (units, cell
//! areas, which cells are flip-flops).
//!
//! Yosys 0.23 takes one `-liberty` file per `dfflibmap`/`abc`/`stat` call and
//! reads gzip only in `read_liberty`, so a multi-file library (ASAP7: five
//! RVT TT files) is merged into one plain Liberty file, which Yosys, ABC and
//! OpenSTA then all read.
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The project's source tree (sim::project: `--project`, the current
/// directory, or the workspace for library users), else the current directory.
pub fn repo_root() -> PathBuf {
    sim::project::root().unwrap_or_else(|| PathBuf::from("."))
}

/// Where prepared libraries are cached (`<cache>/pdk/<name>`).
pub fn pdk_cache() -> PathBuf {
    sim::project::cache_dir().join("pdk")
}

/// scripts/fetch-nangate45.sh, built into the binary so that an installed
/// `mlugen` fetches the library without the source tree.
const FETCH_NANGATE45: &str = include_str!("../../scripts/fetch-nangate45.sh");

/// Which library the user asked for (`--lib`).
#[derive(Clone, Debug, PartialEq)]
pub enum LibSpec {
    /// Nangate45 typical (1.1 V), fetched by scripts/fetch-nangate45.sh.
    Nangate45,
    /// ASAP7 RVT TT (0.7 V): the five .lib.gz files in a directory.
    Asap7,
    /// Any single Liberty file (.lib or .lib.gz).
    Path(PathBuf),
}

impl LibSpec {
    pub fn parse(s: &str) -> Result<LibSpec> {
        match s {
            "nangate45" => Ok(LibSpec::Nangate45),
            "asap7" => Ok(LibSpec::Asap7),
            p if p.ends_with(".lib") || p.ends_with(".lib.gz") => Ok(LibSpec::Path(p.into())),
            other => bail!(
                "--lib {other:?}: expected nangate45, asap7 or a path ending in .lib or .lib.gz"
            ),
        }
    }
}

/// A library ready for the tools: one plain Liberty file plus parsed facts.
#[derive(Clone, Debug)]
pub struct Library {
    /// Short name used in reports: "nangate45", "asap7" or the file stem.
    pub name: String,
    /// The single Liberty file given to Yosys, ABC and OpenSTA.
    pub path: PathBuf,
    /// A Liberty file holding only the flip-flop cells `dfflibmap` may use
    /// (Yosys 0.23 has no `dfflibmap -dont_use`; without this it may pick a
    /// large x4 flop for ASAP7).
    pub dff_path: PathBuf,
    /// Length of the library's time unit in picoseconds (1000 for "1ns").
    pub time_unit_ps: f64,
    /// Nominal supply voltage (V).
    pub voltage: f64,
    /// Area of every cell (um^2 in both shipped libraries).
    pub cell_area: BTreeMap<String, f64>,
    /// Cells that contain an `ff` group (edge-triggered storage).
    pub flip_flops: Vec<String>,
    /// Which supply rails' power groups are kept (documentation for reports).
    pub rails_note: String,
    /// Tie and buffer cells for netlist clean-up and the I/O environment
    /// (None for a user's library: those steps are skipped).
    pub tech: Option<TechCells>,
}

/// Library-specific cell choices, documented in docs/synth.md.
#[derive(Clone, Debug)]
pub struct TechCells {
    /// `hilomap -hicell` / `-locell` arguments: "CELL PORT".
    pub tie_hi: &'static str,
    pub tie_lo: &'static str,
    /// `insbuf -buf` arguments: "CELL IN OUT".
    pub buf: &'static str,
    /// The x1 buffer that drives every input (ABC -constr and OpenSTA).
    pub drive_cell: &'static str,
    pub drive_pin: &'static str,
    /// Load on every output: 4 x the drive buffer's input capacitance (a
    /// fanout of four), in fF.
    pub load_ff: f64,
    /// The integrated clock-gating cell (synth/src/gating.rs).
    pub icg: crate::gating::IcgCell,
}

pub const NANGATE45_TECH: TechCells = TechCells {
    tie_hi: "LOGIC1_X1 Z",
    tie_lo: "LOGIC0_X1 Z",
    buf: "BUF_X1 A Z",
    drive_cell: "BUF_X1",
    drive_pin: "Z",
    load_ff: 3.9, // 4 x BUF_X1/A 0.974659 fF
    icg: crate::gating::IcgCell { cell: "CLKGATE_X1", clock_pin: "CK", enable_pin: "E", gated_clock_pin: "GCK", test_pin: None },
};

pub const ASAP7_TECH: TechCells = TechCells {
    tie_hi: "TIEHIx1_ASAP7_75t_R H",
    tie_lo: "TIELOx1_ASAP7_75t_R L",
    buf: "BUFx2_ASAP7_75t_R A Y",
    drive_cell: "BUFx2_ASAP7_75t_R",
    drive_pin: "Y",
    load_ff: 2.14, // 4 x BUFx2/A 0.534279 fF
    icg: crate::gating::IcgCell { cell: "ICGx1_ASAP7_75t_R", clock_pin: "CLK", enable_pin: "ENA", gated_clock_pin: "GCLK", test_pin: Some("SE") },
};

impl Library {
    /// The smallest flip-flop's area: the per-bit storage floor.
    pub fn smallest_ff(&self) -> Option<(String, f64)> {
        self.flip_flops
            .iter()
            .filter_map(|c| self.cell_area.get(c).map(|a| (c.clone(), *a)))
            .min_by(|a, b| a.1.partial_cmp(&b.1).unwrap())
    }
    pub fn is_ff(&self, cell: &str) -> bool {
        self.flip_flops.iter().any(|c| c == cell)
    }
}

/// Where the Nangate45 file lives (fetched on demand).
pub fn nangate45_path() -> PathBuf {
    match std::env::var_os("MLUGEN_NANGATE45_DIR") {
        Some(d) => PathBuf::from(d).join("stdcells.lib"),
        None => pdk_cache().join("nangate45/stdcells.lib"),
    }
}

/// Where the ASAP7 .lib.gz files are: $MLUGEN_ASAP7_DIR, else the copy
/// vendored in the repository (`pdk/asap7`, see pdk/PROVENANCE.md), so a
/// clean clone synthesizes for ASAP7 wherever it is checked out. Outside a
/// source tree (an installed binary) one of the two must be given.
pub fn asap7_dir() -> Result<PathBuf> {
    match std::env::var_os("MLUGEN_ASAP7_DIR") {
        Some(d) => Ok(PathBuf::from(d)),
        None => Ok(sim::project::require_root("--lib asap7 (the vendored ASAP7 files in pdk/asap7; or set MLUGEN_ASAP7_DIR)")?.join("pdk/asap7")),
    }
}

/// The five ASAP7 RVT TT files, in merge order (SIMPLE first: its header
/// becomes the merged library's header).
pub const ASAP7_FILES: [&str; 5] = [
    "asap7sc7p5t_SIMPLE_RVT_TT_nldm_211120.lib.gz",
    "asap7sc7p5t_INVBUF_RVT_TT_nldm_220122.lib.gz",
    "asap7sc7p5t_AO_RVT_TT_nldm_211120.lib.gz",
    "asap7sc7p5t_OA_RVT_TT_nldm_211120.lib.gz",
    "asap7sc7p5t_SEQ_RVT_TT_nldm_220123.lib.gz",
];

/// Run scripts/fetch-nangate45.sh (idempotent, quick when present).
pub fn fetch_nangate45() -> Result<PathBuf> {
    let path = nangate45_path();
    if path.is_file() {
        return Ok(path);
    }
    let script = "scripts/fetch-nangate45.sh";
    let dest = path.parent().expect("stdcells.lib has a directory");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(FETCH_NANGATE45)
        .env("MLUGEN_NANGATE45_DIR", dest)
        .output()
        .with_context(|| format!("running {script} (built in)"))?;
    if !out.status.success() {
        bail!("{script} failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    if !path.is_file() {
        bail!("{script} ran but {} is missing", path.display());
    }
    Ok(path)
}

/// Resolve a `--lib` choice to a ready library, writing merged/derived files
/// under `work` (a cache directory).
pub fn prepare(spec: &LibSpec, work: &Path) -> Result<Library> {
    let asap7 = if *spec == LibSpec::Asap7 { asap7_dir()? } else { PathBuf::new() };
    prepare_with(spec, work, &asap7)
}

/// `prepare`, with the ASAP7 files taken from `asap7`.
pub fn prepare_with(spec: &LibSpec, work: &Path, asap7: &Path) -> Result<Library> {
    std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
    match spec {
        LibSpec::Nangate45 => {
            let src = fetch_nangate45()?;
            let text = read_text(&src)?;
            finish("nangate45", &src, &text, work, &["DFF_X1"], "Nangate45: one supply, every internal_power/leakage_power group counted", Some(NANGATE45_TECH))
        }
        LibSpec::Asap7 => {
            let dir = asap7.to_path_buf();
            let merged = work.join("asap7_rvt_tt_merged.lib");
            let text = if merged.is_file() {
                read_text(&merged)?
            } else {
                let mut texts = Vec::new();
                for f in ASAP7_FILES {
                    let p = dir.join(f);
                    texts.push((p.clone(), read_text(&p).with_context(|| {
                        format!("ASAP7 library file missing or unreadable (set MLUGEN_ASAP7_DIR to the directory holding the five RVT TT .lib.gz files)")
                    })?));
                }
                let m = merge(&texts)?;
                // Written under a per-process name and renamed, so that a
                // concurrent run never reads a half-written library.
                let tmp = merged.with_extension(format!("lib.{}.part", std::process::id()));
                std::fs::write(&tmp, &m).with_context(|| format!("writing {}", tmp.display()))?;
                std::fs::rename(&tmp, &merged)?;
                m
            };
            finish(
                "asap7",
                &merged,
                &text,
                work,
                &["DFFHQNx1_ASAP7_75t_R"],
                "ASAP7: only the VDD rail's internal_power/leakage_power groups are kept (the VSS copies are dropped when merging, so supply energy is not double counted)",
                Some(ASAP7_TECH),
            )
        }
        LibSpec::Path(p) => {
            let text = read_text(p)?;
            let name = p
                .file_name()
                .map(|s| s.to_string_lossy().trim_end_matches(".gz").trim_end_matches(".lib").to_string())
                .unwrap_or_else(|| "custom".into());
            // A gzip file is decompressed once so every tool can read it.
            let plain = if p.to_string_lossy().ends_with(".gz") {
                let out = work.join(format!("{name}.lib"));
                std::fs::write(&out, &text).with_context(|| format!("writing {}", out.display()))?;
                out
            } else {
                p.clone()
            };
            finish(&name, &plain, &text, work, &[], "user library: taken as is (every power group counted)", None)
        }
    }
}

fn finish(
    name: &str,
    path: &Path,
    text: &str,
    work: &Path,
    dffs: &[&str],
    rails: &str,
    tech: Option<TechCells>,
) -> Result<Library> {
    let facts = scan(text).with_context(|| format!("parsing Liberty file {}", path.display()))?;
    if facts.cell_area.is_empty() {
        bail!("Liberty file {} has no cells", path.display());
    }
    if facts.flip_flops.is_empty() {
        bail!("Liberty file {} has no flip-flop (ff group) cells", path.display());
    }
    // dfflibmap gets a library with only the chosen flops; for a user's
    // library every flop (dfflibmap picks the smallest fit itself).
    let dff_path = if dffs.is_empty() {
        path.to_path_buf()
    } else {
        let out = work.join(format!("{name}_dff_only.lib"));
        if !out.is_file() {
            let sub = subset(text, dffs)
                .with_context(|| format!("extracting flip-flops {dffs:?} from {}", path.display()))?;
            let tmp = out.with_extension(format!("lib.{}.part", std::process::id()));
            std::fs::write(&tmp, sub).with_context(|| format!("writing {}", tmp.display()))?;
            std::fs::rename(&tmp, &out)?;
        }
        out
    };
    Ok(Library {
        name: name.to_string(),
        path: path.to_path_buf(),
        dff_path,
        time_unit_ps: facts.time_unit_ps,
        voltage: facts.voltage,
        cell_area: facts.cell_area,
        flip_flops: facts.flip_flops,
        rails_note: rails.to_string(),
        tech,
    })
}

/// Read a .lib or .lib.gz file as text; the error names the path.
pub fn read_text(p: &Path) -> Result<String> {
    let bytes = std::fs::read(p)
        .with_context(|| format!("Liberty file {} is missing or unreadable", p.display()))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .with_context(|| format!("Liberty file {}: bad gzip data", p.display()))?;
        Ok(s)
    } else {
        String::from_utf8(bytes).with_context(|| format!("Liberty file {} is not UTF-8 text", p.display()))
    }
}

struct Facts {
    time_unit_ps: f64,
    voltage: f64,
    cell_area: BTreeMap<String, f64>,
    flip_flops: Vec<String>,
}

/// A top-level item of a library body: a simple attribute or a group.
struct Item<'a> {
    /// `cell`, `lu_table_template`, ... ("" for a simple attribute).
    kind: String,
    /// The group's argument, e.g. the cell name.
    arg: String,
    text: &'a str,
}

/// Split the body of `library (...) { body }` into its top-level items.
/// Comments are skipped; strings may hold braces.
fn items(text: &str) -> Result<(usize, Vec<Item<'_>>, usize)> {
    let b = text.as_bytes();
    let lib = find_library(text)?;
    let open = lib + text[lib..].find('{').context("no '{' after library (")?;
    let mut out = Vec::new();
    let mut i = open + 1;
    let mut start = i;
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").context("unterminated comment")?;
                if depth == 0 && text[start..i].trim().is_empty() {
                    start = i + 2 + end + 2;
                }
                i += 2 + end + 2;
                continue;
            }
            b'"' => {
                let end = text[i + 1..].find('"').context("unterminated string")?;
                i += end + 2;
                continue;
            }
            b'{' => depth += 1,
            b'}' => {
                if depth == 0 {
                    return Ok((open + 1, out, i));
                }
                depth -= 1;
                if depth == 0 {
                    out.push(item(&text[start..=i]));
                    start = i + 1;
                }
            }
            b';' if depth == 0 => {
                out.push(item(&text[start..=i]));
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    bail!("library group is not closed")
}

fn find_library(text: &str) -> Result<usize> {
    // The first `library` keyword outside the leading comment.
    let mut from = 0;
    loop {
        let rel = text[from..].find("library").context("no library ( ... ) group")?;
        let at = from + rel;
        let before = &text[..at];
        let in_comment = before.rfind("/*").map_or(false, |o| before[o..].find("*/").is_none());
        let after = text[at + 7..].trim_start();
        if !in_comment && after.starts_with('(') {
            return Ok(at);
        }
        from = at + 7;
    }
}

fn item(t: &str) -> Item<'_> {
    let s = t.trim_start();
    let (kind, arg) = match (s.find('('), s.find('{')) {
        (Some(p), Some(b)) if p < b => {
            let close = s[p..].find(')').map(|c| p + c).unwrap_or(p);
            (s[..p].trim().to_string(), s[p + 1..close].trim().trim_matches('"').to_string())
        }
        _ => (String::new(), String::new()),
    };
    Item { kind, arg, text: t }
}

fn scan(text: &str) -> Result<Facts> {
    let (_, its, _) = items(text)?;
    let mut time_unit_ps = None;
    let mut voltage = None;
    let mut cell_area = BTreeMap::new();
    let mut flip_flops = Vec::new();
    for it in &its {
        if it.kind.is_empty() {
            let t = it.text.trim();
            if let Some(v) = attr(t, "time_unit") {
                let v = v.trim_matches('"');
                time_unit_ps = Some(match v {
                    "1ps" => 1.0,
                    "10ps" => 10.0,
                    "100ps" => 100.0,
                    "1ns" => 1000.0,
                    other => bail!("unsupported time_unit {other:?}"),
                });
            } else if let Some(v) = attr(t, "nom_voltage") {
                voltage = v.parse::<f64>().ok();
            }
        } else if it.kind == "cell" {
            let area = cell_area_attr(it.text).with_context(|| format!("cell {} has no area", it.arg))?;
            cell_area.insert(it.arg.clone(), area);
            if has_group(it.text, "ff") {
                flip_flops.push(it.arg.clone());
            }
        }
    }
    Ok(Facts {
        time_unit_ps: time_unit_ps.context("library has no time_unit")?,
        voltage: voltage.context("library has no nom_voltage")?,
        cell_area,
        flip_flops,
    })
}

/// Whether `text` opens a group `kind (` (word boundary before `kind`).
fn has_group(text: &str, kind: &str) -> bool {
    let b = text.as_bytes();
    text.match_indices(kind).any(|(at, _)| {
        let before_ok = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        before_ok && text[at + kind.len()..].trim_start().starts_with('(')
    })
}

/// The first `area : <number>` of a cell group (the `;` may be missing).
fn cell_area_attr(cell: &str) -> Option<f64> {
    let mut from = 0;
    while let Some(rel) = cell[from..].find("area") {
        let at = from + rel;
        let before_ok = at == 0 || !cell.as_bytes()[at - 1].is_ascii_alphanumeric() && cell.as_bytes()[at - 1] != b'_';
        let rest = cell[at + 4..].trim_start();
        if before_ok {
            if let Some(v) = rest.strip_prefix(':') {
                let num: String = v.trim_start().chars().take_while(|c| c.is_ascii_digit() || ".eE+-".contains(*c)).collect();
                if let Ok(a) = num.parse() {
                    return Some(a);
                }
            }
        }
        from = at + 4;
    }
    None
}

/// `name : value ;` (the `;` optional: ASAP7's INVx1 area lacks it).
fn attr<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(name)?.trim_start().strip_prefix(':')?;
    Some(rest.trim().trim_end_matches(';').trim())
}

/// Merge several Liberty files into one library: the first file's header,
/// every template group of the others not already defined (ASAP7's files
/// name their templates differently, e.g. `delay_template_7x7_x1` vs
/// `delay_template_7x7`), then every cell. Power groups tied to the VSS rail
/// are dropped (see `drop_vss_power`), and an `area` missing its `;` is fixed.
pub fn merge(files: &[(PathBuf, String)]) -> Result<String> {
    let mut header = String::new();
    let mut cells = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for (n, (path, text)) in files.iter().enumerate() {
        let (_, its, _) = items(text).with_context(|| format!("parsing {}", path.display()))?;
        for it in its {
            if it.kind == "cell" {
                cells.push_str(&drop_vss_power(&fix_area(it.text)));
            } else if it.kind.is_empty() {
                if n == 0 {
                    header.push_str(it.text);
                }
            } else if seen.insert((it.kind.clone(), it.arg.clone())) {
                header.push_str(it.text);
            }
        }
    }
    let open = "library (asap7sc7p5t_RVT_TT_merged) {\n";
    Ok(format!(
        "/* Merged by mlugen synth from the ASAP7 RVT TT files (BSD 3-Clause, ASU). VSS-rail power groups dropped. */\n{open}{header}{cells}\n}}\n"
    ))
}

fn fix_area(t: &str) -> String {
    t.lines()
        .map(|l| {
            let s = l.trim();
            if s.starts_with("area") && s.contains(':') && !s.ends_with(';') {
                format!("{l};")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Remove `internal_power` / `leakage_power` groups whose `related_pg_pin`
/// is VSS. ASAP7 characterises each once per rail; OpenSTA 2.0.17 adds both,
/// about doubling internal and leakage power. The energy drawn from the
/// supply is the VDD view, so that is what is kept.
fn drop_vss_power(cell: &str) -> String {
    let mut out = String::with_capacity(cell.len());
    let mut rest = cell;
    loop {
        let next = ["internal_power ()", "leakage_power ()", "internal_power()", "leakage_power()"]
            .iter()
            .filter_map(|k| rest.find(k))
            .min();
        let Some(at) = next else {
            out.push_str(rest);
            return out;
        };
        // Find the group's extent by brace matching.
        let open = at + rest[at..].find('{').unwrap_or(0);
        let mut depth = 0;
        let mut end = rest.len();
        for (k, ch) in rest[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let group = &rest[at..end];
        let vss = group.replace([' ', '\t'], "").contains("related_pg_pin:VSS");
        // Keep the indentation before the group either way.
        out.push_str(&rest[..at]);
        if !vss {
            out.push_str(group);
        } else {
            // Swallow the now-empty line.
            while out.ends_with(' ') {
                out.pop();
            }
        }
        rest = &rest[end..];
    }
}

/// A library with the same header and only the named cells.
fn subset(text: &str, keep: &[&str]) -> Result<String> {
    let (body_start, its, _) = items(text)?;
    let mut out = text[find_library(text)?..body_start].to_string();
    let mut found = 0;
    for it in its {
        if it.kind == "cell" {
            if keep.contains(&it.arg.as_str()) {
                out.push_str(it.text);
                found += 1;
            }
        } else {
            out.push_str(it.text);
        }
    }
    if found != keep.len() {
        bail!("library lacks some of the cells {keep:?}");
    }
    out.push_str("\n}\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = r#"/* c */ library (a) {
  time_unit : "1ps";
  nom_voltage : 0.7;
  lu_table_template (t1) { variable_1 : x; }
  cell (INV) {
    area : 0.04374
    leakage_power () { value : 3; related_pg_pin : VDD; }
    leakage_power () { value : 0; related_pg_pin : VSS; }
    pin (Y) { function : "(!A)"; internal_power () { related_pin : "A";
        related_pg_pin : VSS; rise_power (t1) { values ("1"); } } }
  }
}
"#;
    const B: &str = r#"library (b) {
  time_unit : "1ps";
  nom_voltage : 0.7;
  lu_table_template (t1) { variable_1 : x; }
  lu_table_template (t2) { variable_1 : y; }
  cell (DFF) { area : 0.29; ff (IQ, IQN) { next_state : "D"; clocked_on : "CLK"; } }
}
"#;

    #[test]
    fn merge_keeps_cells_and_new_templates_and_drops_vss() {
        let m = merge(&[("a".into(), A.into()), ("b".into(), B.into())]).unwrap();
        let f = scan(&m).unwrap();
        assert_eq!(f.time_unit_ps, 1.0);
        assert_eq!(f.cell_area["INV"], 0.04374);
        assert_eq!(f.cell_area["DFF"], 0.29);
        assert_eq!(f.flip_flops, vec!["DFF".to_string()]);
        assert_eq!(m.matches("lu_table_template (t1)").count(), 1);
        assert_eq!(m.matches("lu_table_template (t2)").count(), 1);
        assert!(!m.contains("related_pg_pin : VSS"), "{m}");
        assert!(m.contains("value : 3"));
        assert!(m.contains("area : 0.04374;"));
    }
}
