//! Where the project's files are: the source tree (verilog_out/, pdk/,
//! synth/reports/) and the cache for builds and fetched libraries.
//!
//! The `mlugen` binary calls [`set_root`] once at start, with the tree it
//! found (`--project DIR`, `$MLUGEN_PROJECT`, or the current directory when
//! it is one) or with `None`; from then on nothing looks at the path the
//! binary was compiled from, so an installed binary works from any directory.
//! Library users and the test suite that never call [`set_root`] get the
//! workspace this crate was built in.
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Fix the project root for this process (the first call wins).
pub fn set_root(root: Option<PathBuf>) {
    let _ = ROOT.set(root);
}

/// The project's source tree, if there is one.
pub fn root() -> Option<PathBuf> {
    ROOT.get_or_init(|| Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf)).clone()
}

/// Whether `dir` is an mlugen source tree (its Cargo.toml names the mlugen
/// package and it has verilog_out/).
pub fn is_project(dir: &Path) -> bool {
    dir.join("verilog_out").is_dir()
        && std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|t| t.lines().any(|l| l.trim() == "name = \"mlugen\""))
}

/// Where builds (Verilator harnesses) and fetched libraries are cached:
/// `<project>/build` in a source tree, else `$XDG_CACHE_HOME/mlugen`, else
/// `$HOME/.cache/mlugen`, else `./.mlugen-cache`.
pub fn cache_dir() -> PathBuf {
    if let Some(r) = root() {
        return r.join("build");
    }
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("mlugen");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(h).join(".cache").join("mlugen");
    }
    PathBuf::from(".mlugen-cache")
}

/// The project root, or an error saying that `what` needs one.
pub fn require_root(what: &str) -> anyhow::Result<PathBuf> {
    root().ok_or_else(|| {
        anyhow::anyhow!("{what} needs the mlugen source tree: run from it, or give --project DIR (or set MLUGEN_PROJECT)")
    })
}
