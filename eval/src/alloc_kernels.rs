//! Run-time overhead of the canary allocator in the paper's sense: synthetic
//! allocation kernels on the SM pipeline model ([`sim::sm_pipeline`], MALLOC
//! and FREE through the cycle-level unit), run with check mode off, free and
//! always; the overhead is the kernel's cycles against mode off.
//!
//! Each warp repeats `iters` times: MALLOC of `size` bytes into register 0;
//! `accesses` warp accesses over the chunk (alternately a store and a load,
//! 4 bytes per thread at offsets 0, 128, ... wrapped into the chunk: stores
//! are in bounds); `alu` ALU instructions (the compute per allocation);
//! FREE. The heap is the RTL unit's geometry (4 KiB, 8 requesters), no MLU
//! checks (the baseline pipeline: the allocator's cost alone).
use sim::canary::heap::CheckMode;
use sim::canary::alloc_unit::{rtl_heap_config, CanaryUnit, UnitTiming, RTL_REQUESTERS};
use sim::expand::{Arg, Instr, Kernel};
use sim::sm_pipeline::{run_kernel_alloc, KernelRun, MluTiming, PipelineConfig};
use sim::trace::Rw;

/// The most warp instructions one `--workload pipeline` run simulates
/// (about a minute of the cycle-level model on one core).
pub const MAX_KERNEL_INSTRS: u64 = 100_000_000;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AllocKernelConfig {
    pub warps: usize,
    pub size: u64,
    pub accesses: u32,
    pub alu: u32,
    pub iters: u32,
    /// Checker rate CSR (n/256 checks per cycle), always mode.
    pub rate: u8,
    pub slack: u64,
    /// SM memory latency (loads and stores).
    pub mem_latency: u64,
    /// The unit's canary memory port latency.
    pub canary_latency: u64,
}

impl AllocKernelConfig {
    /// Errors name the field.
    /// Checks every field's range (errors name the field as its flag).
    pub fn validate(&self) -> Result<(), String> {
        if self.warps == 0 || self.warps > 64 {
            return Err(format!("warps: must be 1..=64, got {}", self.warps));
        }
        if self.slack > 239 {
            return Err(format!("slack: must be 0..=239 bytes (the unit's largest class is 256 bytes with 16 of canaries), got {}", self.slack));
        }
        let max = 256 - 16 - self.slack;
        if self.size == 0 || self.size > max {
            return Err(format!("size: must be 1..={max} bytes (the unit's largest class with canaries and slack), got {}", self.size));
        }
        if self.iters == 0 || self.iters > 10_000 {
            return Err(format!("iters: must be 1..=10000, got {}", self.iters));
        }
        if self.accesses > 10_000 {
            return Err(format!("accesses: must be 0..=10000, got {}", self.accesses));
        }
        if self.alu > 1_000_000 {
            return Err(format!("alu: must be 0..=1000000 instructions per allocation, got {}", self.alu));
        }
        if self.mem_latency == 0 || self.mem_latency > 100_000 {
            return Err(format!("mem-latency: must be 1..=100000 cycles, got {}", self.mem_latency));
        }
        if self.canary_latency > 100_000 {
            return Err(format!("canary-latency: must be 1..=100000 cycles, got {}", self.canary_latency));
        }
        // The cycle-level run steps every instruction of every warp.
        let instrs = self.warps as u64 * self.iters as u64 * (self.alu as u64 + self.accesses as u64 + 2);
        if instrs > MAX_KERNEL_INSTRS {
            return Err(format!(
                "warps x iters x (alu + accesses + 2) = {instrs} instructions; at most {MAX_KERNEL_INSTRS} are simulated (fewer warps, iters or alu)"
            ));
        }
        if self.rate == 0 {
            return Err("rate: must be 1..=255 (n/256 checks per cycle)".into());
        }
        if self.canary_latency == 0 {
            return Err("canary-latency: must be at least 1 cycle".into());
        }
        Ok(())
    }

    /// The kernel: one stream per warp as the module doc says.
    pub fn kernel(&self) -> Kernel {
        let mut w = Vec::new();
        for _ in 0..self.iters {
            w.push(Instr::Malloc { size: self.size, dst: 0 });
            for j in 0..self.accesses as u64 {
                let off = (j * 128) % self.size.max(1);
                let off = off.min(self.size.saturating_sub(4));
                w.push(if j % 2 == 0 { Instr::StoreReg { reg: 0, off, width: 4.min(self.size) as u8 } } else { Instr::LoadReg { reg: 0, off } });
            }
            if self.alu > 0 {
                w.push(Instr::Alu(self.alu));
            }
            w.push(Instr::Free { src: 0 });
        }
        Kernel { op: "alloc-kernel".into(), args: vec![Arg { id: 0, offset: 0, length: 0, rw: Rw::R }], warps: vec![w; self.warps], working_set: 0, full_steps: 0 }
    }
}

/// One mode's run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AllocKernelRun {
    pub check: &'static str,
    pub cycles: u64,
    pub mallocs: u64,
    pub frees: u64,
    pub alloc_errors: u64,
    pub free_overflows: u64,
    pub unit_checks: u64,
}

/// Run the kernel with check mode `check`.
pub fn run_mode(c: &AllocKernelConfig, check: CheckMode) -> Result<AllocKernelRun, String> {
    c.validate()?;
    let timing = UnitTiming { mem_latency: c.canary_latency, ..UnitTiming::default() };
    let mut unit = CanaryUnit::new(rtl_heap_config(check, c.slack), RTL_REQUESTERS, c.rate, timing)?;
    let cfg = PipelineConfig { mem_latency: c.mem_latency, meta_latency: c.mem_latency, ..PipelineConfig::default() };
    cfg.validate()?;
    let r: KernelRun = run_kernel_alloc(&cfg, MluTiming::Ideal, &c.kernel(), &[0], None, Some(&mut unit), None);
    Ok(AllocKernelRun {
        check: check.name(),
        cycles: r.cycles,
        mallocs: r.mallocs,
        frees: r.frees,
        alloc_errors: r.alloc_errors,
        free_overflows: r.free_overflows,
        unit_checks: r.unit_checks,
    })
}
