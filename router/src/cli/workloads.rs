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
    use triskel::bfv::biometric::{self, MatchPrivacy};
    use triskel::bfv::BfvParameters;
    vec![
        Workload {
            name: "bfv.biometric_match",
            run: || {
                let params = biometric::match_parameters()?;
                Ok(bfv::biometric_match(params, MatchPrivacy::Masked)?.0)
            },
        },
        Workload {
            name: "bfv.biometric_match_private",
            run: || {
                let params = biometric::private_match_parameters()?;
                Ok(bfv::biometric_match(params, MatchPrivacy::flooded())?.0)
            },
        },
        Workload {
            name: "bfv.mul_relin",
            run: || bfv::mul_relin(BfvParameters::n8192()),
        },
    ]
}

#[derive(Serialize)]
struct Report {
    cpu: String,
    threads: usize,
    workloads: Vec<WorkloadReport>,
}

pub fn bench(only: Option<&str>, json: bool) -> CliResult {
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
    // One thread, as the report says: the ring layer would otherwise spread
    // RNS limbs over every core.
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()?;
    let workloads = selected
        .iter()
        .map(|w| (w.run)())
        .collect::<Result<Vec<_>, _>>()?;
    let report = Report {
        cpu: triskel::kernels::cpu_model(),
        threads: 1,
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
