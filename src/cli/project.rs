//! `--project DIR`: find the source tree once, at start (sim::project).
use anyhow::{bail, Result};
use std::path::Path;

/// `--project DIR`, else `$MLUGEN_PROJECT`, else the current directory when
/// it is an mlugen tree, else none (commands that need one say so).
pub fn init(flag: Option<&Path>) -> Result<()> {
    let env = std::env::var_os("MLUGEN_PROJECT").filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    // The one given (flag first, then the variable) must be a tree.
    let given = match (flag, env) {
        (Some(p), _) => Some(("--project ", p.to_path_buf())),
        (None, Some(p)) => Some(("MLUGEN_PROJECT=", p)),
        (None, None) => None,
    };
    let root = match given {
        Some((source, p)) => {
            if !sim::project::is_project(&p) {
                bail!("{source}{}: not an mlugen source tree (no Cargo.toml of package mlugen with verilog_out/)", p.display());
            }
            Some(p)
        }
        None => std::env::current_dir().ok().filter(|d| sim::project::is_project(d)),
    };
    sim::project::set_root(root);
    Ok(())
}

/// A path option's default: `<project>/<rel>` in a project, else `rel` (in
/// the current directory).
pub fn default_path(rel: &str) -> std::path::PathBuf {
    match sim::project::root() {
        Some(r) => r.join(rel),
        None => std::path::PathBuf::from(rel),
    }
}
