//! The end-to-end workloads of `triskel bench workloads` (DESIGN.md, "Bench
//! output"). Each engine adds its workloads to [`all`] as it lands.

use serde::Serialize;

use super::CliResult;

/// Per-stage medians in microseconds; stages a workload lacks are left out.
#[derive(Serialize, Debug, Default)]
pub struct StageMedians {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encode: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypt: Option<f64>,
    pub compute: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decrypt: Option<f64>,
    pub total: f64,
}

/// One measured workload.
#[derive(Serialize, Debug)]
pub struct WorkloadReport {
    pub name: &'static str,
    pub engine: &'static str,
    pub params: String,
    pub median_us: StageMedians,
    pub max_abs_error: f64,
    /// True only when the decrypted result was compared with the plaintext
    /// computation in this run.
    pub verified: bool,
    /// For the biometric match: templates matched per second, end to end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches_per_second: Option<f64>,
}

/// A workload: its name and the function that measures and checks it.
pub struct Workload {
    pub name: &'static str,
    pub run: fn() -> Result<WorkloadReport, Box<dyn std::error::Error>>,
}

/// Every workload, in report order.
pub fn all() -> Vec<Workload> {
    use super::bfv_workloads as bfv;
    use super::tfhe_workloads as tfhe;
    use triskel::bfv::BfvParameters;
    vec![
        Workload {
            name: "bfv.biometric_match",
            run: || Ok(bfv::biometric_match(BfvParameters::n4096_shallow())?.0),
        },
        Workload {
            name: "bfv.mul_relin",
            run: || bfv::mul_relin(BfvParameters::n8192()),
        },
        Workload {
            name: "tfhe.gate_nand",
            run: tfhe::gate_nand,
        },
        Workload {
            name: "tfhe.pbs_2_2",
            run: tfhe::pbs_2_2,
        },
        Workload {
            name: "tfhe.uint8_gt",
            run: tfhe::uint8_gt,
        },
        Workload {
            name: "tfhe.uint8_add",
            run: tfhe::uint8_add,
        },
        Workload {
            name: "tfhe.uint64_add",
            run: tfhe::uint64_add,
        },
        Workload {
            name: "tfhe.uint64_mul",
            run: tfhe::uint64_mul,
        },
    ]
}

#[derive(Serialize)]
struct Report {
    cpu: String,
    threads: usize,
    workloads: Vec<WorkloadReport>,
}

/// Runs the selected workloads on one thread, or on every thread with `all_threads`.
pub fn bench(only: Option<&str>, json: bool, all_threads: bool) -> CliResult {
    let mut selected = all();
    if let Some(name) = only {
        let known: Vec<&str> = selected.iter().map(|w| w.name).collect();
        selected.retain(|w| w.name == name);
        if selected.is_empty() {
            return Err(
                format!("no workload named {name:?}; known: [{}]", known.join(", ")).into(),
            );
        }
    }
    // One thread unless asked: the ring layer would otherwise spread RNS
    // limbs over every core, and TFHE its bootstraps.
    let threads = if all_threads {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        1
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()?;
    let workloads = selected
        .iter()
        .map(|w| (w.run)())
        .collect::<Result<Vec<_>, _>>()?;
    let report = Report {
        cpu: triskel::kernels::cpu_model(),
        threads,
        workloads,
    };
    if json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    println!("cpu: {}  threads: {}", report.cpu, report.threads);
    for w in &report.workloads {
        print_workload(w);
    }
    Ok(())
}

/// One human-readable line per workload (shared with the demo).
pub fn print_workload(w: &WorkloadReport) {
    let m = &w.median_us;
    let stage = |s: Option<f64>| s.map_or("-".to_string(), |v| format!("{v:.1}"));
    print!(
        "{:<20} {:<24} encode {} | encrypt {} | compute {:.1} | decrypt {} | total {:.1} us",
        w.name,
        w.params,
        stage(m.encode),
        stage(m.encrypt),
        m.compute,
        stage(m.decrypt),
        m.total
    );
    if let Some(mps) = w.matches_per_second {
        print!(" | {mps:.0} matches/s");
    }
    println!(
        "  [max error {}, verified: {}]",
        w.max_abs_error,
        if w.verified { "yes" } else { "NO" }
    );
}
