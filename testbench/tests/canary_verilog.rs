//! The canary allocator unit's emitted Verilog in all three check modes:
//! Verilator --lint-only -Wall clean (with the project's rust-hdl waivers),
//! iverilog parses and elaborates it.
use hw::canary::alloc_unit::CanaryParams;
use sim::canary::heap::CheckMode;
use testbench::lint::{iverilog_parse, verilator_lint};

#[test]
fn canary_alloc_verilog_lints_clean() {
    for check in [CheckMode::Always, CheckMode::Free, CheckMode::Off] {
        let name = format!("canary_alloc_{}", check.name());
        let p = CanaryParams { check, slack: if check == CheckMode::Free { 16 } else { 0 }, ..CanaryParams::default() };
        let g = hw::generate::canary_alloc(&name, &p).unwrap();
        let dir = std::env::temp_dir().join(format!("mlugen-canary-v-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (v, _) = g.write(&dir).unwrap();
        verilator_lint(&v, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
        iverilog_parse(&v, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
