//! Checks of emitted Verilog shared by testbench/tests/verilog.rs (and usable
//! by any block's tests): Verilator `--lint-only -Wall`, rust-hdl's
//! `yosys_validate`, and an iverilog parse. Each returns the tool's complaint
//! as the error so a failing test prints it.
use hw::manifest::Manifest;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The one Verilator waiver file shipped with the Verilog
/// (`verilog_out/lint.vlt`, every line says why), written by
/// `mlugen generate --all`.
pub fn waiver_file() -> PathBuf {
    verilog_out().join(hw::generate::LINT_WAIVERS_FILE)
}

/// The workspace root (testbench's parent directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("testbench has a parent").to_path_buf()
}

/// `verilog_out/` in the workspace.
pub fn verilog_out() -> PathBuf {
    workspace_root().join(hw::generate::VERILOG_OUT)
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("cannot run {what}: {e} (is it installed and on PATH?)"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// `verilator --lint-only -Wall` on `file` with top module `top` and the
/// shipped waiver file (`verilog_out/lint.vlt`) and nothing else.
pub fn verilator_lint(file: &Path, top: &str) -> Result<(), String> {
    run(
        Command::new("verilator").args(["--lint-only", "-Wall", "--top-module", top]).arg(waiver_file()).arg(file),
        &format!("verilator --lint-only -Wall {}", file.display()),
    )
}

/// What a user runs on a shipped top, from the repository root (the commands
/// of verilog_out/README.md): `iverilog -g2005 -f verilog_out/<top>.f` and
/// `verilator --lint-only -Wall verilog_out/lint.vlt -f verilog_out/<top>.f`
/// (the filelist), and Yosys `hierarchy -check; proc; check -assert` (no warning of any kind: multiple drivers, undriven
/// or unused-but-driven wires, combinational loops), then `flatten; check
/// -assert` again, for loops that cross module boundaries (what the
/// UNOPTFLAT waiver of lint.vlt relies on).
pub fn user_checks(top: &str) -> Result<(), String> {
    let root = workspace_root();
    let f = format!("{}/{top}.f", hw::generate::VERILOG_OUT);
    run(
        Command::new("iverilog").current_dir(&root).args(["-g2005", "-o", "/dev/null", "-s", top, "-f", &f]),
        &format!("iverilog -g2005 -f {f}"),
    )?;
    let vlt = format!("{}/{}", hw::generate::VERILOG_OUT, hw::generate::LINT_WAIVERS_FILE);
    run(
        Command::new("verilator").current_dir(&root).args(["--lint-only", "-Wall", "--top-module", top, &vlt, "-f", &f]),
        &format!("verilator --lint-only -Wall {vlt} -f {f}"),
    )?;
    let script = format!("read_verilog {}/{top}.v; hierarchy -check -top {top}; proc; check -assert; flatten; check -assert", hw::generate::VERILOG_OUT);
    run(Command::new("yosys").current_dir(&root).args(["-q", "-p", &script]), &format!("yosys -p '{script}'"))
}

/// `iverilog -g2005` parse and elaboration of `file` (output discarded).
pub fn iverilog_parse(file: &Path, top: &str) -> Result<(), String> {
    run(
        Command::new("iverilog").args(["-g2005", "-o", "/dev/null", "-s", top]).arg(file),
        &format!("iverilog -g2005 {}", file.display()),
    )
}

/// A `top` wrapper module instantiating `manifest.top` with every manifest
/// port: rust-hdl's `yosys_validate` insists on a module named `top`, and the
/// wrapper also proves that the manifest's ports exist with those widths.
pub fn top_wrapper(manifest: &Manifest) -> String {
    let mut decls = String::new();
    let mut conns = vec![];
    for p in &manifest.ports {
        let dir = if p.direction == "input" { "input" } else { "output" };
        let range = if p.width > 1 { format!("[{}:0] ", p.width - 1) } else { String::new() };
        // `$` is legal inside Verilog identifiers but not first.
        decls += &format!("    {dir} wire {range}{};\n", p.name);
        conns.push(format!("        .{0}({0})", p.name));
    }
    let names: Vec<&str> = manifest.ports.iter().map(|p| p.name.as_str()).collect();
    format!(
        "\nmodule top({});\n{decls}    {} dut(\n{}\n    );\nendmodule\n",
        names.join(", "),
        manifest.top,
        conns.join(",\n")
    )
}

/// rust-hdl's `yosys_validate` (read, hierarchy -check, proc; latches,
/// undriven wires, implicit declarations and missing modules are errors) on
/// `verilog` plus the [`top_wrapper`].
pub fn yosys_check(verilog: &str, manifest: &Manifest) -> Result<(), String> {
    let text = format!("{verilog}\n{}", top_wrapper(manifest));
    let prefix = format!("mlugen-{}-{}", std::process::id(), manifest.top);
    let result = rust_hdl::prelude::yosys_validate(&prefix, &text)
        .map_err(|e| format!("yosys_validate of {} failed: {e:?}", manifest.top));
    // yosys_validate leaves its work directory (with the log) behind; keep it
    // only when it has something to show.
    if result.is_ok() {
        let _ = std::fs::remove_dir_all(std::env::temp_dir().join(&prefix));
    }
    result
}
