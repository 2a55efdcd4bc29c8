//! An installed `mlugen` (a copy of the binary somewhere else, run from a
//! directory that is not the source tree) works: it never looks at the source
//! path compiled into it. What needs the tree (the vendored ASAP7
//! files) says so and is found through --project.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Sandbox {
    dir: PathBuf,
    bin: PathBuf,
}

impl Sandbox {
    /// A sandbox of its own for the test `name` (the tests run side by side).
    fn new(name: &str) -> Sandbox {
        let dir = std::env::temp_dir().join(format!("mlugen-installed-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::create_dir_all(dir.join("home")).unwrap();
        std::fs::create_dir_all(dir.join("work")).unwrap();
        let bin = dir.join("bin/mlugen");
        std::fs::copy(env!("CARGO_BIN_EXE_mlugen"), &bin).unwrap();
        Sandbox { dir, bin }
    }

    /// Run in `<sandbox>/work` with a fresh HOME and no mlugen variables.
    fn run(&self, args: &[&str]) -> Output {
        // ETXTBSY: the other test's thread may fork while this test's copy
        // of the binary is still open for writing in the child it forked
        // (a Linux race of copy-then-exec in threads); it clears as soon as
        // that child execs, so try again.
        for attempt in 0.. {
            let o = Command::new(&self.bin)
                .current_dir(self.dir.join("work"))
                .env("HOME", self.dir.join("home"))
                .env_remove("XDG_CACHE_HOME")
                .env_remove("MLUGEN_PROJECT")
                .env_remove("MLUGEN_COSIM_DIR")
                .env_remove("MLUGEN_ASAP7_DIR")
                .env_remove("MLUGEN_NANGATE45_DIR")
                .args(args)
                .output();
            match o {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempt < 50 => {
                    std::thread::sleep(std::time::Duration::from_millis(20))
                }
                o => return o.unwrap(),
            }
        }
        unreachable!()
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(o.status.success(), "mlugen {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn an_installed_binary_generates_checks_and_cosimulates_from_any_directory() {
    let sb = Sandbox::new("cosim");
    let work = sb.dir.join("work");

    // generate writes ./verilog_out, the same Verilog as the committed one.
    sb.ok(&["generate", "--entries", "8", "--quiet"]);
    for f in ["mlu8_bst_k4_l32_p2_c2.v", "mlb8_plru_p2.v"] {
        let got = std::fs::read_to_string(work.join("verilog_out").join(f)).unwrap();
        let want = std::fs::read_to_string(repo().join("verilog_out").join(f)).unwrap();
        assert!(got == want, "{f} generated outside the tree differs from the committed one");
    }

    // The model needs nothing from the tree.
    let sc = repo().join("testbench/scenarios/double-free-bst-compiler.json");
    sb.ok(&["check", "--verify", "--scenario", sc.to_str().unwrap()]);

    // Verilator builds go to the user's cache, not to <source>/target.
    let out = sb.ok(&["cosim", "--top", "mlb", "--entries", "1", "--transactions", "2000", "--quiet"]);
    let cache = sb.dir.join("home/.cache/mlugen/cosim");
    assert!(out.contains("build: compiled") && out.contains(cache.to_str().unwrap()), "{out}");
    assert!(out.contains("cycles compared: 2000, mismatches: 0"), "{out}");
}

#[test]
fn an_installed_binary_synthesizes_with_the_project_given() {
    let sb = Sandbox::new("synth");

    // ASAP7's Liberty files are in the tree: asked for, then found through --project.
    let o = sb.run(&["synth", "--top", "mlb", "--entries", "1", "--lib", "asap7"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() == Some(1) && err.contains("give --project DIR"), "{err}");
    let synth_out = sb.dir.join("synth");
    let o = sb.run(&[
        "--project",
        repo().to_str().unwrap(),
        "synth",
        "--top",
        "mlb",
        "--entries",
        "1",
        "--lib",
        "asap7",
        "--no-energy",
        "--no-blocks",
        "--out",
        synth_out.to_str().unwrap(),
    ]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{err}");
    assert!(out.starts_with("mlb1_plru asap7: ") && out.contains("um2"), "{out}");
    // Each synthesis stage is announced on stderr (plain lines: not a terminal).
    for stage in ["mlugen synth: mapping (Yosys, ABC) ...", "mlugen synth: timing and default-activity power (OpenSTA): done ("] {
        assert!(err.contains(stage), "stage line {stage:?} missing: {err}");
    }
    assert!(synth_out.join("mlb1_plru_asap7").is_dir());
}
