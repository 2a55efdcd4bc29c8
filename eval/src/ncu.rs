//! Reader for a workload's Nsight Compute counters (`traces/ncu/<w>.csv.gz`,
//! see `traces/README.md`): ncu's raw CSV (`--csv --page raw`), gzip'd.
//!
//! Layout: a few `==PROF==` / `==WARNING==` lines, a header row of column
//! names, a units row, then one row per kernel launch of iteration 2 in
//! launch order. Fields are double-quoted; numbers carry thousands
//! separators (`"1,980,000"`). Every row is one physical line (kernel names
//! hold no newline), so a row's line number is the file's.
//!
//! Only the columns the SM model uses are read ([`Counters`]); each must be
//! present in the header and a finite non-negative number in every row, else
//! the error names the file, the line and the column.
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use flate2::read::MultiGzDecoder;

/// One launch's counters (one data row).
#[derive(Clone, Debug, PartialEq)]
pub struct Counters {
    /// 1-based line of the row in the decompressed file.
    pub line: u64,
    pub kernel_name: String,
    /// `gpu__time_duration.sum`: duration under the profiler, ns.
    pub duration_ns: f64,
    /// `sm__cycles_elapsed.max`: SM cycles of the busiest SM.
    pub sm_cycles_max: f64,
    /// `smsp__inst_executed.sum`: warp instructions.
    pub inst: f64,
    /// Global-memory warp instructions a MEMCHECK.G covers: LDG, STG, RED,
    /// generic LD/ST/ATOM, LDGSTS (loads and stores split).
    pub global_ld: f64,
    pub global_st: f64,
    /// Of those: LDGSTS, and generic-address LD/ST/ATOM.
    pub ldgsts: f64,
    pub generic: f64,
    /// TMA bulk copies (load + store): one instruction moves a whole tile.
    pub tma: f64,
    pub shared: f64,
    pub local_ld: f64,
    pub local_st: f64,
    /// Sector hit rates, fractions in [0, 1].
    pub l1_hit: f64,
    pub l2_hit: f64,
    /// Achieved occupancy, fraction of the SM's warp slots.
    pub achieved_occupancy: f64,
    pub ctas_launched: f64,
    /// Resident CTAs per SM: the least of ncu's occupancy limits (blocks,
    /// registers, shared memory, warps, barriers).
    pub ctas_per_sm: u64,
}

impl Counters {
    /// Warp instructions that reach global memory through the LSU (the ones a
    /// MEMCHECK.G is issued for; TMA counted apart).
    pub fn global(&self) -> f64 {
        self.global_ld + self.global_st
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NcuError {
    pub file: String,
    pub line: u64,
    pub message: String,
}

impl fmt::Display for NcuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for NcuError {}

/// Splits one CSV line: comma-separated, fields optionally double-quoted
/// with `""` for a quote inside. `None` on an unterminated quote.
fn split_csv(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut in_quotes = false;
    while let Some(c) = chars.next() {
        match (in_quotes, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => in_quotes = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() && !quoted => {
                quoted = true;
                in_quotes = true;
            }
            (false, ',') => {
                out.push(std::mem::take(&mut field));
                quoted = false;
            }
            (false, c) => field.push(c),
        }
    }
    if in_quotes {
        return None;
    }
    out.push(field);
    Some(out)
}

/// Column names, in [`Counters`] order (sums of several where noted).
const DURATION: &str = "gpu__time_duration.sum";
const CYCLES: &str = "sm__cycles_elapsed.max";
const INST: &str = "smsp__inst_executed.sum";
const L1_HIT: &str = "l1tex__t_sector_hit_rate.pct";
const L2_HIT: &str = "lts__t_sector_hit_rate.pct";
const OCCUPANCY: &str = "sm__warps_active.avg.pct_of_peak_sustained_active";
const CTAS: &str = "sm__ctas_launched.sum";
const LOADS: [&str; 4] = [
    "smsp__inst_executed_op_global_ld.sum",
    "smsp__inst_executed_op_generic_ld.sum",
    "smsp__inst_executed_op_ldgsts.sum",
    "smsp__inst_executed_op_generic_atom.sum",
];
const STORES: [&str; 3] = [
    "smsp__inst_executed_op_global_st.sum",
    "smsp__inst_executed_op_global_red.sum",
    "smsp__inst_executed_op_generic_st.sum",
];
const TMA: [&str; 2] = ["smsp__inst_executed_op_tma_ld.sum", "smsp__inst_executed_op_tma_st.sum"];
const SHARED: [&str; 2] = ["smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum"];
const LOCAL_LD: &str = "smsp__inst_executed_op_local_ld.sum";
const LOCAL_ST: &str = "smsp__inst_executed_op_local_st.sum";
const LIMITS: [&str; 5] = [
    "launch__occupancy_limit_blocks",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_barriers",
];

/// Reads a gzip'd ncu CSV.
pub fn read(path: impl AsRef<Path>) -> Result<Vec<Counters>, NcuError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let f = File::open(path).map_err(|e| NcuError { file: name.clone(), line: 0, message: format!("cannot open: {e}") })?;
    read_from(BufReader::new(MultiGzDecoder::new(f)), &name)
}

/// [`read`] over decompressed text; `file` names it in errors.
pub fn read_from(input: impl BufRead, file: &str) -> Result<Vec<Counters>, NcuError> {
    let err = |line: u64, message: String| NcuError { file: file.to_string(), line, message };
    let mut header: Option<Vec<String>> = None;
    let mut units_seen = false;
    let mut index: Vec<usize> = Vec::new();
    let mut rows = Vec::new();
    let names: Vec<&str> = [DURATION, CYCLES, INST, L1_HIT, L2_HIT, OCCUPANCY, CTAS, LOCAL_LD, LOCAL_ST]
        .into_iter()
        .chain(LOADS)
        .chain(STORES)
        .chain(TMA)
        .chain(SHARED)
        .chain(LIMITS)
        .collect();
    let mut name_col = 0;
    for (i, text) in input.lines().enumerate() {
        let line = i as u64 + 1;
        let text = text.map_err(|e| err(line, format!("read error (not gzip'd UTF-8 text?): {e}")))?;
        if text.starts_with("==") || (header.is_none() && text.trim().is_empty()) {
            continue;
        }
        let fields = split_csv(&text).ok_or_else(|| err(line, "unterminated quoted field".into()))?;
        let Some(h) = &header else {
            name_col = fields
                .iter()
                .position(|f| f == "Kernel Name")
                .ok_or_else(|| err(line, "header row has no \"Kernel Name\" column (not an ncu --csv --page raw file?)".into()))?;
            for n in &names {
                let c = fields
                    .iter()
                    .position(|f| f == n)
                    .ok_or_else(|| err(line, format!("header row has no column \"{n}\"")))?;
                index.push(c);
            }
            header = Some(fields);
            continue;
        };
        if !units_seen {
            units_seen = true;
            continue;
        }
        if fields.len() != h.len() {
            return Err(err(line, format!("row has {} fields, the header {}", fields.len(), h.len())));
        }
        let mut v = Vec::with_capacity(names.len());
        for (k, &c) in index.iter().enumerate() {
            let raw = fields[c].replace(',', "");
            let x: f64 = raw
                .trim()
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| err(line, format!("column \"{}\": expected a non-negative number, got \"{}\"", names[k], fields[c])))?;
            v.push(x);
        }
        // ncu reports L2 sector hit rates above 100% for some launches
        // (102% to 200% in these files: sectors written without a lookup
        // count as hits); a rate is clamped to 1.
        let rate = |pct: f64| (pct / 100.0).min(1.0);
        let sum = |from: usize, n: usize| v[from..from + n].iter().sum::<f64>();
        let base = 9;
        let limit = v[base + 11..base + 16].iter().cloned().fold(f64::INFINITY, f64::min);
        if limit < 1.0 {
            return Err(err(line, "occupancy limits allow no CTA on an SM".into()));
        }
        rows.push(Counters {
            line,
            kernel_name: fields[name_col].clone(),
            duration_ns: v[0],
            sm_cycles_max: v[1],
            inst: v[2],
            l1_hit: rate(v[3]),
            l2_hit: rate(v[4]),
            achieved_occupancy: rate(v[5]),
            ctas_launched: v[6],
            local_ld: v[7],
            local_st: v[8],
            global_ld: sum(base, 4),
            global_st: sum(base + 4, 3),
            ldgsts: v[base + 2],
            generic: v[base + 1] + v[base + 3] + v[base + 6],
            tma: sum(base + 7, 2),
            shared: sum(base + 9, 2),
            ctas_per_sm: limit as u64,
        });
    }
    if header.is_none() {
        return Err(err(0, "no header row (empty file?)".into()));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::split_csv;

    #[test]
    fn csv_fields_quoted_and_not() {
        assert_eq!(split_csv(r#""a,b","1,024",x,"""q""""#).unwrap(), ["a,b", "1,024", "x", "\"q\""]);
        assert_eq!(split_csv("").unwrap(), [""]);
        assert!(split_csv(r#""open"#).is_none());
    }
}
