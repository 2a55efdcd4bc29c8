//! Running Yosys and OpenSTA, and parsing what they print.
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Run a tool, writing its stdout+stderr to `log`; fail naming the tool, its
/// script and the last lines of the log.
pub fn run(tool: &str, args: &[&str], cwd: &Path, log: &Path, what: &str) -> Result<String> {
    let out = Command::new(tool)
        .args(args)
        .current_dir(cwd)
        .output()
        .with_context(|| format!("cannot run {tool} (is it installed and on PATH? apt-get install yosys opensta)"))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    std::fs::write(log, &text).with_context(|| format!("writing {}", log.display()))?;
    // OpenSTA keeps going after a failed command and exits 0: any "Error"
    // line is a failure too.
    let sta_error = text.lines().any(|l| l.starts_with("Error:") || l.starts_with("ERROR:"));
    if !out.status.success() || sta_error {
        let tail: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("rror") || l.contains("ERROR"))
            .take(5)
            .collect();
        let tail = if tail.is_empty() {
            text.lines().rev().take(8).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>()
        } else {
            tail
        };
        bail!(
            "{tool} failed on {what}:\n  {}\n(full log: {})",
            tail.join("\n  "),
            log.display()
        );
    }
    Ok(text)
}

/// One module's statistics from Yosys `stat -liberty`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ModuleStat {
    pub name: String,
    /// Cell type -> count (sub-module instances included, with no area).
    pub cells: BTreeMap<String, u64>,
    /// "Chip area for module": only this module's own library cells.
    pub area: f64,
}

/// Parse `stat -liberty` output: every `=== name ===` section with its cell
/// list and chip area. The `design hierarchy` section is skipped.
pub fn parse_stat(text: &str) -> Result<Vec<ModuleStat>> {
    let mut mods = Vec::new();
    let mut cur: Option<ModuleStat> = None;
    let mut in_cells = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("=== ").and_then(|s| s.strip_suffix(" ===")) {
            if let Some(m) = cur.take() {
                mods.push(m);
            }
            in_cells = false;
            if name != "design hierarchy" {
                cur = Some(ModuleStat { name: name.trim_start_matches('\\').to_string(), ..Default::default() });
            }
            continue;
        }
        let Some(m) = cur.as_mut() else { continue };
        if t.starts_with("Number of cells:") {
            in_cells = true;
            continue;
        }
        if let Some(rest) = t.strip_prefix("Chip area for module") {
            let v = rest.rsplit(':').next().unwrap_or("").trim();
            m.area = v.parse().with_context(|| format!("bad chip area in Yosys stat: {t:?}"))?;
            in_cells = false;
            continue;
        }
        if in_cells {
            let mut parts = t.split_whitespace();
            match (parts.next(), parts.next(), parts.next()) {
                (Some(cell), Some(n), None) => {
                    let n: u64 = n.parse().with_context(|| format!("bad cell count in Yosys stat: {t:?}"))?;
                    m.cells.insert(cell.trim_start_matches('\\').to_string(), n);
                }
                _ => in_cells = false,
            }
        }
    }
    if let Some(m) = cur.take() {
        mods.push(m);
    }
    if mods.is_empty() {
        bail!("no module statistics in Yosys stat output");
    }
    Ok(mods)
}

/// The worst setup path, in picoseconds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Timing {
    pub startpoint: String,
    pub endpoint: String,
    /// Data arrival time at the endpoint (includes clock-to-q for a flop start).
    pub arrival_ps: f64,
    /// The clock period this path needs: period - slack (arrival + setup).
    pub min_period_ps: f64,
    /// Worst setup slack at the requested clock.
    pub slack_ps: f64,
    pub met: bool,
}

/// OpenSTA `report_power` totals, in watts.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Power {
    pub internal_w: f64,
    pub switching_w: f64,
    pub leakage_w: f64,
    pub total_w: f64,
    /// Sequential group total (flip-flops incl. their clock pins).
    pub sequential_w: f64,
    pub combinational_w: f64,
}

/// Parse the text between the MLUGEN markers of sta.tcl.
pub fn parse_sta(text: &str, time_unit_ps: f64, period_ps: f64) -> Result<(Timing, Power)> {
    let checks = between(text, "MLUGEN-BEGIN-CHECKS", "MLUGEN-END-CHECKS")
        .context("OpenSTA printed no report_checks section")?;
    let mut startpoint = None;
    let mut endpoint = None;
    let mut arrival = None;
    let mut slack = None;
    for l in checks.lines() {
        let t = l.trim();
        if let Some(s) = t.strip_prefix("Startpoint:") {
            startpoint = Some(s.trim().to_string());
        } else if let Some(s) = t.strip_prefix("Endpoint:") {
            endpoint = Some(s.trim().to_string());
        } else if t.ends_with("data arrival time") && arrival.is_none() {
            arrival = t.split_whitespace().next().and_then(|v| v.parse::<f64>().ok());
        } else if t.contains("slack (") {
            slack = t.split_whitespace().next().and_then(|v| v.parse::<f64>().ok());
        }
    }
    if checks.contains("No paths found") {
        bail!("OpenSTA found no timing paths (is the clock port right?)");
    }
    let startpoint = startpoint.context("report_checks: no Startpoint")?;
    let endpoint = endpoint.context("report_checks: no Endpoint")?;
    let arrival = arrival.context("report_checks: no data arrival time")? * time_unit_ps;
    let slack = slack.context("report_checks: no slack")? * time_unit_ps;
    let timing = Timing {
        startpoint,
        endpoint,
        arrival_ps: arrival,
        min_period_ps: period_ps - slack,
        slack_ps: slack,
        met: slack >= 0.0,
    };

    let pw = between(text, "MLUGEN-BEGIN-POWER", "MLUGEN-END-POWER")
        .context("OpenSTA printed no report_power section")?;
    let row = |name: &str| -> Result<Vec<f64>> {
        let l = pw
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .with_context(|| format!("report_power: no {name} row"))?;
        let v: Vec<f64> = l.split_whitespace().skip(1).take(4).map(|x| x.parse::<f64>()).collect::<Result<_, _>>()
            .with_context(|| format!("report_power: bad {name} row {l:?}"))?;
        if v.len() != 4 {
            bail!("report_power: short {name} row {l:?}");
        }
        // A NaN/inf power is a flow error, never a number in a report.
        if v.iter().any(|x| !x.is_finite()) {
            bail!("report_power: non-finite {name} power {l:?}");
        }
        Ok(v)
    };
    let tot = row("Total")?;
    let seq = row("Sequential")?;
    let comb = row("Combinational")?;
    let power = Power {
        internal_w: tot[0],
        switching_w: tot[1],
        leakage_w: tot[2],
        total_w: tot[3],
        sequential_w: seq[3],
        combinational_w: comb[3],
    };
    Ok((timing, power))
}

fn between<'a>(text: &'a str, a: &str, b: &str) -> Option<&'a str> {
    let s = text.find(a)? + a.len();
    let e = s + text[s..].find(b)?;
    Some(&text[s..e])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_sections_are_parsed() {
        let t = "=== \\sub ===\n   Number of cells:  3\n     DFF_X1   2\n     INV_X1 1\n\n   Chip area for module '\\sub': 10.5\n\n=== top ===\n   Number of cells: 1\n     sub 1\n\n   Chip area for module '\\top': 0.25\n=== design hierarchy ===\n   top 1\n   Chip area for top module '\\top': 10.75\n";
        let m = parse_stat(t).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].name, "sub");
        assert_eq!(m[0].cells["DFF_X1"], 2);
        assert_eq!(m[0].area, 10.5);
        assert_eq!(m[1].cells["sub"], 1);
        assert_eq!(m[1].area, 0.25);
    }

    #[test]
    fn sta_report_is_parsed_in_picoseconds() {
        let t = "MLUGEN-BEGIN-CHECKS\nStartpoint: a (input port clocked by clk)\nEndpoint: _1_ (rising edge-triggered flip-flop clocked by clk)\n   0.0000 0.0000 ^ a (in)\n             2.5652   data arrival time\n             1.9545   data required time\n            -2.5652   data arrival time\n            -0.6107   slack (VIOLATED)\nMLUGEN-END-CHECKS\nMLUGEN-BEGIN-POWER\nSequential           2.0e-03 1.0e-04 3.0e-05 2.13e-03  48.3%\nCombinational        2.0e-03 4.0e-04 8.0e-05 2.48e-03  51.7%\nTotal                4.0e-03 5.0e-04 1.1e-04 4.61e-03 100.0%\nMLUGEN-END-POWER\n";
        let (tm, p) = parse_sta(t, 1000.0, 2000.0).unwrap();
        assert!((tm.arrival_ps - 2565.2).abs() < 1e-6);
        assert!((tm.slack_ps + 610.7).abs() < 1e-6);
        assert!((tm.min_period_ps - 2610.7).abs() < 1e-6);
        assert!(!tm.met);
        assert_eq!(p.total_w, 4.61e-3);
        assert_eq!(p.leakage_w, 1.1e-4);
        assert_eq!(p.sequential_w, 2.13e-3);
        assert!(parse_sta("nothing", 1.0, 1.0).is_err());
        let nan = t.replace("Total                4.0e-03", "Total                -nan");
        let err = parse_sta(&nan, 1000.0, 2000.0).unwrap_err().to_string();
        assert!(err.contains("non-finite Total power"), "{err}");
    }
}
