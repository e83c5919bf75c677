//! `triskel bench scaling`: how each workload's throughput grows with
//! copies running side by side, and its latency with one run spread over
//! several threads, in interleaved rounds so that a shared host's drift
//! falls on every thread count alike.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::workloads::{self, Workload};
use crate::CliResult;

#[derive(Serialize)]
struct Report {
    cpu: String,
    rounds: usize,
    workloads: Vec<Scaling>,
}

/// One workload's figures, keyed by thread count.
#[derive(Serialize)]
struct Scaling {
    name: &'static str,
    /// Runs per second: one copy on one thread, K copies on K threads.
    throughput: BTreeMap<String, f64>,
    /// throughput(K) / throughput(1).
    scaling: BTreeMap<String, f64>,
    /// Median total of one run with its inner work on K threads.
    spread_latency_us: BTreeMap<String, f64>,
    /// The resident set one copy adds at its peak, MB (Linux; absent
    /// elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    peak_rss_mb: Option<f64>,
}

pub fn bench(only: Option<&str>, threads: &[usize], rounds: usize, json: bool) -> CliResult {
    let mut counts: Vec<usize> = threads.to_vec();
    counts.push(1);
    counts.sort_unstable();
    counts.dedup();
    for &k in &counts {
        workloads::check_threads(k)?;
    }
    if rounds == 0 {
        return Err("--rounds must be at least 1".into());
    }
    let pools = counts
        .iter()
        .map(|&k| Ok((k, workloads::pool(k)?)))
        .collect::<Result<Vec<_>, Box<dyn std::error::Error>>>()?;
    let mut report = Report {
        cpu: triskel::kernels::cpu_model(),
        rounds,
        workloads: Vec::new(),
    };
    for w in workloads::select(only)? {
        let s = scale(&w, &pools, rounds)?;
        if !json {
            print(&s);
        }
        report.workloads.push(s);
    }
    if json {
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}

fn scale(
    w: &Workload,
    pools: &[(usize, rayon::ThreadPool)],
    rounds: usize,
) -> Result<Scaling, Box<dyn std::error::Error>> {
    let mut rate: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    let mut spread: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    let mut peak_rss_mb = None;
    for round in 0..rounds {
        for (k, pool) in pools {
            let report = if *k == 1 {
                if round == 0 {
                    // The first single-copy run also gives the peak.
                    reset_peak_rss();
                    let before = rss_mb("VmRSS");
                    let r = workloads::run_on(pool, w)?;
                    peak_rss_mb = rss_mb("VmHWM").zip(before).map(|(p, b)| p - b);
                    r
                } else {
                    workloads::run_on(pool, w)?
                }
            } else {
                let one = workloads::run_on(pool, w)?;
                spread.entry(*k).or_default().push(one.median_us.total);
                workloads::copies(w, *k, pool)?
            };
            check(&report)?;
            let r = report
                .workloads_per_second
                .unwrap_or(1e6 / report.median_us.total);
            rate.entry(*k).or_default().push(r);
            if *k == 1 {
                spread.entry(1).or_default().push(report.median_us.total);
            }
        }
    }
    let rate: BTreeMap<usize, f64> = rate.into_iter().map(|(k, v)| (k, median(v))).collect();
    let one = rate.get(&1).copied().unwrap_or(f64::NAN);
    Ok(Scaling {
        name: w.name,
        scaling: rate
            .iter()
            .filter(|(&k, _)| k > 1)
            .map(|(k, r)| (k.to_string(), r / one))
            .collect(),
        throughput: rate.iter().map(|(k, r)| (k.to_string(), *r)).collect(),
        spread_latency_us: spread
            .into_iter()
            .map(|(k, v)| (k.to_string(), median(v)))
            .collect(),
        peak_rss_mb,
    })
}

/// An error unless every copy's result was checked and right.
fn check(r: &workloads::WorkloadReport) -> CliResult {
    if !r.verified {
        return Err(format!("{}: a result did not verify", r.name).into());
    }
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn print(s: &Scaling) {
    let list = |m: &BTreeMap<String, f64>, digits: usize| {
        m.iter()
            .map(|(k, v)| format!("{k}: {v:.digits$}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "{:<26} runs/s {{{}}}  scaling {{{}}}  spread latency us {{{}}}  peak RSS {}",
        s.name,
        list(&s.throughput, 2),
        list(&s.scaling, 2),
        list(&s.spread_latency_us, 0),
        s.peak_rss_mb
            .map_or("unknown".to_string(), |m| format!("{m:.1} MB")),
    );
}

/// Restarts the kernel's count of this process's peak resident set
/// (Linux: writing 5 to clear_refs resets VmHWM to the current RSS).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn rss_mb(field: &str) -> Option<f64> {
    crate::bench::status_kb(field).map(|kb| kb / 1e3)
}
