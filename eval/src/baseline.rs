//! The unchecked SM model against what the H200 measured, kernel by kernel.
use serde::{Deserialize, Serialize};

use crate::sm_model::{self, GpuParams, Shape, Timing};
use crate::workload::{Kernel, Workload};

/// The model's inputs for one launch.
pub fn shape(k: &Kernel, w: &Workload, p: &GpuParams) -> Shape {
    Shape::new(k.launch.ctas(), k.launch.threads_per_cta(), &k.counters, w.sm_count, p.max_warps, k.footprint_bytes)
}

/// One launch: measured (CUPTI) and simulated, ns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelFit {
    pub name: String,
    pub measured_ns: f64,
    pub simulated_ns: f64,
    /// The simulation behind `simulated_ns` (the checked runs pair with it).
    #[serde(skip)]
    pub timing: Timing,
}

/// A workload's validation (the `baseline` object of `mlugen sweep --json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub workload: String,
    pub kernels: usize,
    /// Median and 90th percentile of |simulated / measured - 1| over the
    /// kernels, and the same for the sum over the iteration's kernels
    /// (fractions; the iteration error is signed).
    pub median_abs_error: f64,
    pub p90_abs_error: f64,
    pub iteration_error: f64,
    pub measured_kernel_ms: f64,
    pub simulated_kernel_ms: f64,
    /// Every launch, for the scatter of simulated against measured time.
    pub per_kernel: Vec<KernelFit>,
}

/// `q`-quantile of sorted values (nearest rank).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

pub fn validate(w: &Workload, p: &GpuParams) -> Baseline {
    let per_kernel: Vec<KernelFit> = w
        .kernels
        .iter()
        .map(|k| {
            let timing = sm_model::simulate(&shape(k, w, p), p);
            KernelFit { name: k.launch.name.clone(), measured_ns: k.launch.ns as f64, simulated_ns: timing.ns, timing }
        })
        .collect();
    summarize(&w.name, per_kernel)
}

pub fn summarize(workload: &str, per_kernel: Vec<KernelFit>) -> Baseline {
    let mut errs: Vec<f64> =
        per_kernel.iter().map(|k| (k.simulated_ns / k.measured_ns.max(1.0) - 1.0).abs()).collect();
    errs.sort_by(f64::total_cmp);
    let measured: f64 = per_kernel.iter().map(|k| k.measured_ns).sum();
    let simulated: f64 = per_kernel.iter().map(|k| k.simulated_ns).sum();
    Baseline {
        workload: workload.to_string(),
        kernels: per_kernel.len(),
        median_abs_error: quantile(&errs, 0.5),
        p90_abs_error: quantile(&errs, 0.9),
        iteration_error: simulated / measured.max(1.0) - 1.0,
        measured_kernel_ms: measured / 1e6,
        simulated_kernel_ms: simulated / 1e6,
        per_kernel,
    }
}
