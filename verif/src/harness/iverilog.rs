//! Icarus Verilog as a second simulator of the same Verilog: a testbench
//! generated from `iverilog_tb.v` for the top's manifest reads the cycle
//! input records from a text file (one hex record per line) and writes one
//! output record per cycle; Rust compares them with the model exactly as in
//! the Verilator run. Unknown (`x`/`z`) bits are kept as a mask, and a
//! compared output with any unknown bit is a mismatch.
use super::TemplatePort;
use crate::verilator::{cache_key, cosim_dir, Layout, Top};
use anyhow::{anyhow, bail, Context, Result};
use askama::Template;
use std::path::PathBuf;
use std::process::Command;

#[derive(Template)]
#[template(path = "iverilog_tb.v", escape = "none")]
struct IverilogTb<'a> {
    top: &'a str,
    clock: &'a str,
    in_bytes: usize,
    out_bytes: usize,
    inputs: Vec<TemplatePort>,
    outputs: Vec<TemplatePort>,
}

/// The testbench's Verilog for `layout`.
pub fn testbench_verilog(layout: &Layout) -> Result<String> {
    Ok(IverilogTb {
        top: &layout.top,
        clock: &layout.clock,
        in_bytes: layout.in_bytes,
        out_bytes: layout.out_bytes,
        inputs: TemplatePort::list(&layout.inputs),
        outputs: TemplatePort::list(&layout.outputs),
    }
    .render()?)
}

/// `iverilog -V` first line, for the cache key.
fn iverilog_version() -> Result<String> {
    let out = Command::new("iverilog")
        .arg("-V")
        .output()
        .map_err(|e| anyhow!("cannot run `iverilog -V` (is Icarus Verilog installed and on PATH?): {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string())
}

/// A compiled Icarus testbench.
pub struct IverilogSim {
    pub layout: Layout,
    pub dir: PathBuf,
    vvp: PathBuf,
}

impl IverilogSim {
    /// Compile (cached by a hash of the Verilog, the testbench and the
    /// iverilog version) the testbench of `top` with `verilog`.
    pub fn build(top: &Top, verilog: &str) -> Result<IverilogSim> {
        let layout = Layout::from_manifest(&top.manifest)?;
        let tb = testbench_verilog(&layout)?;
        let key = cache_key(&[verilog.as_bytes(), tb.as_bytes(), iverilog_version()?.as_bytes()]);
        let dir = cosim_dir().join(format!("{}-iverilog-{}", top.name(), &key[..16]));
        let vvp = dir.join("tb.vvp");
        if !vvp.is_file() {
            std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
            std::fs::write(dir.join("dut.v"), verilog)?;
            std::fs::write(dir.join("tb.v"), &tb)?;
            // Unique per build, not only per process: two test threads may
            // compile the same testbench at once (each renames its own file
            // into place; the last rename wins, and both files are whole).
            let tmp = dir.join(format!("tb.vvp.tmp{}-{}", std::process::id(), crate::verilator::unique()));
            let out = Command::new("iverilog")
                .args(["-g2005", "-s", "mlugen_tb", "-o"])
                .arg(&tmp)
                .arg(dir.join("tb.v"))
                .arg(dir.join("dut.v"))
                .output()
                .context("cannot run iverilog")?;
            if !out.status.success() {
                bail!("iverilog failed on {}:\n{}", top.name(), String::from_utf8_lossy(&out.stderr));
            }
            std::fs::rename(&tmp, &vvp)?;
        }
        Ok(IverilogSim { layout, dir, vvp })
    }

    /// Simulate the input records (`n * in_bytes`); returns the output
    /// records and, per record, a mask of unknown bits (same layout).
    pub fn run(&self, records: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        let (ib, ob) = (self.layout.in_bytes, self.layout.out_bytes);
        let n = records.len() / ib;
        let tag = format!("{}-{}", std::process::id(), crate::verilator::unique());
        let stim = self.dir.join(format!("stim-{tag}.hex"));
        let resp = self.dir.join(format!("resp-{tag}.hex"));
        let mut text = String::with_capacity(n * (2 * ib + 1));
        for r in records.chunks(ib) {
            for b in r.iter().rev() {
                text.push_str(&format!("{b:02x}"));
            }
            text.push('\n');
        }
        std::fs::write(&stim, text).with_context(|| format!("cannot write {}", stim.display()))?;
        let out = Command::new("vvp")
            .arg("-n")
            .arg(&self.vvp)
            .arg(format!("+stim={}", stim.display()))
            .arg(format!("+resp={}", resp.display()))
            .output()
            .context("cannot run vvp (Icarus Verilog)")?;
        let _ = std::fs::remove_file(&stim);
        let got = std::fs::read_to_string(&resp);
        let _ = std::fs::remove_file(&resp);
        if !out.status.success() {
            bail!("vvp failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        let got = got.with_context(|| format!("vvp wrote no response file; its output: {}", String::from_utf8_lossy(&out.stdout)))?;
        let lines: Vec<&str> = got.lines().collect();
        if lines.len() != n {
            bail!("vvp answered {} records for {n} cycles; its output: {}", lines.len(), String::from_utf8_lossy(&out.stdout));
        }
        let mut data = vec![0u8; n * ob];
        let mut xmask = vec![0u8; n * ob];
        for (i, l) in lines.iter().enumerate() {
            let l = l.trim();
            if l.len() != 2 * ob {
                bail!("vvp response line {} has {} hex digits, expected {}", i + 1, l.len(), 2 * ob);
            }
            // Most significant nibble first.
            for (k, c) in l.chars().rev().enumerate() {
                let (v, x) = match c.to_digit(16) {
                    Some(v) => (v as u8, 0u8),
                    None if "xXzZ".contains(c) => (0, 0xF),
                    None => bail!("vvp response line {}: bad digit `{c}`", i + 1),
                };
                let byte = i * ob + k / 2;
                let sh = 4 * (k % 2);
                data[byte] |= v << sh;
                xmask[byte] |= x << sh;
            }
        }
        Ok((data, xmask))
    }
}
