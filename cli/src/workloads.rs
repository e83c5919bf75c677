//! The end-to-end workloads of `triskel bench workloads` (docs/architecture.md,
//! "Bench output"). Each engine adds its workloads to [`all`].

use std::sync::OnceLock;
use std::time::Instant;

use serde::Serialize;

use crate::CliResult;

/// Microseconds on the clock of the workloads: wall time, or with
/// `TRISKEL_BENCH_CLOCK=cpu` the CPU time of the whole process (every thread,
/// the rayon pool's too), which on a loaded machine leaves out the time spent
/// waiting for a core (what the `ci/peers-*.sh` scripts compare).
pub fn now_us() -> f64 {
    static CPU: OnceLock<bool> = OnceLock::new();
    static START: OnceLock<Instant> = OnceLock::new();
    let cpu = *CPU.get_or_init(|| std::env::var("TRISKEL_BENCH_CLOCK").is_ok_and(|v| v == "cpu"));
    match cpu {
        true => process_cpu_us(),
        false => START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e6,
    }
}

#[cfg(target_os = "linux")]
fn process_cpu_us() -> f64 {
    use std::ffi::{c_int, c_long};
    #[repr(C)]
    struct Timespec {
        tv_sec: c_long,
        tv_nsec: c_long,
    }
    const CLOCK_PROCESS_CPUTIME_ID: c_int = 2;
    extern "C" {
        fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
    }
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec (the C layout above, as on
    // every Linux target) through a valid pointer and keeps nothing.
    let rc = unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

#[cfg(not(target_os = "linux"))]
fn process_cpu_us() -> f64 {
    f64::NAN
}

/// Microseconds since `start` (a [`now_us`] reading).
pub fn us(start: f64) -> f64 {
    now_us() - start
}

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
    /// A threshold decryption: one party's partial decryption.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<f64>,
    /// A threshold decryption: the combination of the partial decryptions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub combine: Option<f64>,
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
    /// With `--threads K` > 1: runs completed per second by K threads
    /// running the workload at the same time (the sum of each thread's
    /// 1 / median total, measured under that load).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workloads_per_second: Option<f64>,
    /// For `router.match_decision` and `router.match_identify`: the
    /// baseline measured in the same run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
}

/// A reference computation measured beside a workload.
#[derive(Serialize, Debug)]
pub struct Baseline {
    pub what: &'static str,
    pub median_us: f64,
    /// The workload's compute median over the baseline's.
    pub compute_ratio: f64,
    /// Threshold decisions per run (the scores decided).
    pub decisions: usize,
    /// (compute - the match alone, measured in the same run) / decisions.
    pub per_decision_us: f64,
}

/// A workload: its name and the function that measures and checks it.
pub struct Workload {
    pub name: &'static str,
    pub run: fn() -> Result<WorkloadReport, Box<dyn std::error::Error>>,
}

/// Every workload, in report order.
pub fn all() -> Vec<Workload> {
    use crate::bfv_workloads as bfv;
    use crate::ckks_workloads as ckks;
    use crate::tfhe_workloads as tfhe;
    use triskel::bfv::biometric::{self, MatchPrivacy};
    use triskel::bfv::BfvParameters;
    use triskel::ckks::CkksParameters;
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
            name: "bfv.threshold_3of5",
            run: crate::threshold_workloads::threshold_3of5,
        },
        Workload {
            name: "bfv.mul_relin",
            run: || bfv::mul_relin(BfvParameters::n8192()),
        },
        Workload {
            name: "bfv.rotate",
            run: || bfv::rotate(BfvParameters::n4096()),
        },
        Workload {
            name: "ring.keyswitch_16384",
            run: crate::ring_workloads::keyswitch_16384,
        },
        Workload {
            name: "ckks.mul_pipeline",
            run: || ckks::mul_pipeline("ckks.mul_pipeline", CkksParameters::n8192()),
        },
        Workload {
            name: "ckks.mul_pipeline_16384",
            run: || ckks::mul_pipeline("ckks.mul_pipeline_16384", CkksParameters::n16384_depth2()),
        },
        Workload {
            name: "ckks.rotate",
            run: || ckks::rotate(CkksParameters::n8192()),
        },
        Workload {
            name: "ckks.slot_sum64",
            run: || ckks::slot_sum64(CkksParameters::n8192()),
        },
        Workload {
            name: "ckks.dot64",
            run: || ckks::dot64(CkksParameters::n8192()),
        },
        Workload {
            name: "ckks.poly_x2",
            run: || ckks::poly_x2(CkksParameters::n8192()),
        },
        Workload {
            name: "ckks.poly_deg7",
            run: || ckks::poly_deg7(CkksParameters::n8192_depth3()),
        },
        Workload {
            name: "ckks.dense_64x4",
            run: || ckks::dense_64x4(CkksParameters::n8192()),
        },
        Workload {
            name: "ckks.mlp_64_4_1",
            run: || ckks::mlp_64_4_1(CkksParameters::n16384()),
        },
        Workload {
            name: "ckks.mlp_64_4_1_square",
            run: || ckks::mlp_64_4_1_square(CkksParameters::n8192_depth3()),
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
        Workload {
            name: "router.match_decision",
            run: crate::transition_workloads::match_decision,
        },
        Workload {
            name: "router.match_identify",
            run: crate::transition_workloads::match_identify,
        },
    ]
}

#[derive(Serialize)]
struct Report {
    cpu: String,
    threads: usize,
    /// With more than one thread: "copies" (K runs side by side) or
    /// "spread" (one run at a time over K threads).
    #[serde(skip_serializing_if = "Option::is_none")]
    parallelism: Option<&'static str>,
    workloads: Vec<WorkloadReport>,
}

/// Workloads run only when named by `--only`: too long for the default
/// list (router.match_argmax: about 1300 bootstraps, ~100 s on one core).
pub fn on_request() -> Vec<Workload> {
    vec![Workload {
        name: "router.match_argmax",
        run: crate::transition_workloads::match_argmax,
    }]
}

/// The workloads `only` names (default: [`all`]), or an error listing the
/// known names.
pub fn select(only: Option<&str>) -> Result<Vec<Workload>, Box<dyn std::error::Error>> {
    let mut selected = all();
    if let Some(name) = only {
        selected.extend(on_request());
        let known: Vec<&str> = selected.iter().map(|w| w.name).collect();
        selected.retain(|w| w.name == name);
        if selected.is_empty() {
            return Err(
                format!("no workload named {name:?}; known: [{}]", known.join(", ")).into(),
            );
        }
    }
    Ok(selected)
}

/// An error unless K = `threads` copies or threads can be measured here.
pub fn check_threads(threads: usize) -> CliResult {
    if threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    // K concurrent runs each hold their own keys (up to hundreds of MB), and far more
    // threads than CPUs measure only the scheduler.
    let most = 4 * std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads > most {
        return Err(format!("--threads {threads}: at most {most} here (4 per CPU)").into());
    }
    if threads > 1 && std::env::var("TRISKEL_BENCH_CLOCK").is_ok_and(|v| v == "cpu") {
        // The process's CPU clock counts every thread's work in each stage.
        return Err(
            "TRISKEL_BENCH_CLOCK=cpu counts the CPU time of every thread: use --threads 1".into(),
        );
    }
    Ok(())
}

/// A pool of `threads` for the runs: the ring layer would otherwise spread
/// RNS limbs over every core. With K threads, K runs go side by side
/// (parallelism across ciphertexts), or one run uses them all (parallelism
/// inside one operation).
pub fn pool(threads: usize) -> Result<rayon::ThreadPool, Box<dyn std::error::Error>> {
    Ok(rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?)
}

pub fn bench(only: Option<&str>, json: bool, threads: usize, spread: bool) -> CliResult {
    check_threads(threads)?;
    if spread && threads == 1 {
        return Err("--spread spreads one run over --threads K: give K > 1".into());
    }
    let selected = select(only)?;
    let pool = pool(threads)?;
    let workloads = selected
        .iter()
        .map(|w| {
            if threads == 1 || spread {
                Ok(run_on(&pool, w)?)
            } else {
                copies(w, threads, &pool)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let report = Report {
        cpu: triskel::kernels::cpu_model(),
        // The pool the runs used, as built (not the argument).
        threads: pool.current_num_threads(),
        parallelism: match (threads, spread) {
            (1, _) => None,
            (_, true) => Some("spread"),
            (_, false) => Some("copies"),
        },
        workloads,
    };
    if json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    let mode = report
        .parallelism
        .map_or(String::new(), |p| format!(" ({p})"));
    println!("cpu: {}  threads: {}{mode}", report.cpu, report.threads);
    for w in &report.workloads {
        print_workload(w);
    }
    Ok(())
}

/// One run of `w`, its inner parallel work on `pool`.
pub fn run_on(pool: &rayon::ThreadPool, w: &Workload) -> Result<WorkloadReport, String> {
    pool.install(|| (w.run)().map_err(|e| format!("{}: {e}", w.name)))
}

/// `threads` runs of a workload at the same time, their inner parallel
/// work on `pool`: the first thread's report (medians under load), every
/// thread's check, and the throughput.
pub fn copies(
    w: &Workload,
    threads: usize,
    pool: &rayon::ThreadPool,
) -> Result<WorkloadReport, Box<dyn std::error::Error>> {
    let reports: Vec<Result<WorkloadReport, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(|| run_on(pool, w))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a workload thread panicked".into()))
            })
            .collect()
    });
    let reports = reports.into_iter().collect::<Result<Vec<_>, _>>()?;
    let rate: f64 = reports.iter().map(|r| 1e6 / r.median_us.total).sum();
    let worst = reports.iter().map(|r| r.max_abs_error).fold(0.0, f64::max);
    let all_verified = reports.iter().all(|r| r.verified);
    let mut first = reports.into_iter().next().ok_or("no thread ran")?;
    first.max_abs_error = worst;
    first.verified = all_verified;
    first.workloads_per_second = Some(rate);
    Ok(first)
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
    if let Some(wps) = w.workloads_per_second {
        print!(" | {wps:.1} workloads/s");
    }
    if let Some(b) = &w.baseline {
        print!(
            " | {:.2}x of {:.1} us ({})",
            b.compute_ratio, b.median_us, b.what
        );
    }
    println!(
        "  [max error {}, verified: {}]",
        w.max_abs_error,
        if w.verified { "yes" } else { "NO" }
    );
}
