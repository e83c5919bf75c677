//! `triskel bench service`: a load test of `triskel serve` on 127.0.0.1.
//! C client threads each submit the biometric match decision, wait for it,
//! verify every record and check the decrypted decision, and submit again
//! until the time is up; then every job still in flight is waited for.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use triskel::Client;
use triskel_serve::remote::{self, Remote, RemoteError};
use triskel_serve::{Config, Quotas};

use crate::programs;
use crate::CliResult;

/// How long a job still in flight at the end is waited for before it
/// counts as lost.
const DRAIN: Duration = Duration::from_secs(600);

/// What the client threads saw.
#[derive(Default)]
struct Tally {
    submitted: u64,
    completed: u64,
    failed: u64,
    lost: u64,
    /// Submission to end of each completed job, by the server's clock.
    latencies_ms: Vec<f64>,
}

pub fn run(clients: usize, seconds: f64, workers: Option<usize>, json: bool) -> CliResult {
    let store = std::env::temp_dir().join(format!("triskel-bench-store-{}", std::process::id()));
    let result = load(&store, clients.max(1), seconds, workers, json);
    let _ = std::fs::remove_dir_all(&store);
    result
}

fn load(
    store: &std::path::Path,
    clients: usize,
    seconds: f64,
    workers: Option<usize>,
    json: bool,
) -> CliResult {
    let demo = programs::biometric_match()?;
    let mut config = Config::new(store.to_path_buf());
    config.listen = "127.0.0.1:0".parse()?;
    if let Some(w) = workers {
        config.workers = w.max(1);
    }
    config.queue_capacity = (clients as u64).max(256);
    let workers = config.workers;
    let quotas = Quotas {
        max_jobs_in_flight: clients as u64,
        ..Quotas::default()
    };
    let token = triskel_serve::create_token(store, "bench", Some(quotas))?;
    let running = triskel_serve::start(config)?;
    let url = running.url();

    let mut client = Client::new(&demo.program, triskel::PlanOptions::default())?;
    let setup = Remote::new(&url, Some(token.clone()))?;
    let server = setup.identity()?;
    setup.put_keys(&client.evaluation_keys()?.to_bytes())?;
    // One encryption per client thread, made before the clock starts: the
    // load is the service's, not the key holder's.
    let sent = (0..clients)
        .map(|i| client.encrypt_with_context(&demo.inputs, format!("bench client {i}").as_bytes()))
        .collect::<Result<Vec<_>, _>>()?;
    let load = Load {
        url: &url,
        token: &token,
        client: &client,
        server: &server,
        demo: &demo,
    };

    let (http_before, work_before) = (http_cpu_seconds(), running.worker_time());
    let start = Instant::now();
    let (mut t, warm_rss) = drive(&load, &sent, seconds);
    let elapsed = start.elapsed().as_secs_f64();
    let end_rss = rss_mib();
    let work = running.worker_time();
    let http = http_cpu_seconds().zip(http_before).map(|(a, b)| a - b);
    running.stop();

    t.latencies_ms.sort_by(f64::total_cmp);
    let quantile = |q: f64| -> f64 {
        if t.latencies_ms.is_empty() {
            return 0.0;
        }
        let i = ((t.latencies_ms.len() as f64 * q).ceil() as usize).clamp(1, t.latencies_ms.len());
        t.latencies_ms[i - 1]
    };
    // The service's own cost per job: what workers did besides evaluating
    // (loading, parsing, storing), and the CPU of the HTTP threads.
    let runs = (work.runs - work_before.runs).max(1) as f64;
    let evaluation_ms = (work.evaluation_seconds - work_before.evaluation_seconds) * 1e3 / runs;
    let worker_overhead_ms =
        (work.busy_seconds - work_before.busy_seconds) * 1e3 / runs - evaluation_ms;
    let http_ms = http.map(|s| s * 1e3 / (t.completed.max(1) as f64));
    let overhead_ratio = http_ms.map(|h| (worker_overhead_ms + h) / evaluation_ms);
    let report = serde_json::json!({
        "cpu": triskel::kernels::cpu_model(),
        "workload": "router.match_decision",
        "clients": clients,
        "workers": workers,
        "seconds": elapsed,
        "throughput_jobs_per_s": t.completed as f64 / elapsed,
        "p50_ms": quantile(0.50),
        "p99_ms": quantile(0.99),
        "submitted": t.submitted,
        "completed": t.completed,
        "failed": t.failed,
        "lost": t.lost,
        "evaluation_ms_per_job": evaluation_ms,
        "worker_overhead_ms_per_job": worker_overhead_ms,
        "http_cpu_ms_per_job": http_ms,
        "overhead_ratio": overhead_ratio,
        "rss_mib_after_warmup": warm_rss,
        "rss_mib_end": end_rss,
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "triskel serve, {clients} clients, {workers} workers, {elapsed:.1} s: {:.2} jobs/s, \
             p50 {:.0} ms, p99 {:.0} ms; {} submitted, {} completed, {} failed, {} lost; \
             per job {evaluation_ms:.1} ms evaluating, {worker_overhead_ms:.1} ms of worker \
             overhead, {} ms of HTTP CPU",
            report["throughput_jobs_per_s"].as_f64().unwrap_or(0.0),
            quantile(0.50),
            quantile(0.99),
            t.submitted,
            t.completed,
            t.failed,
            t.lost,
            http_ms.map_or("unknown".into(), |h| format!("{h:.1}")),
        );
    }
    if t.failed > 0 || t.lost > 0 {
        return Err(format!("{} jobs failed and {} were lost", t.failed, t.lost).into());
    }
    Ok(())
}

/// What every client thread shares.
struct Load<'a> {
    url: &'a str,
    token: &'a str,
    client: &'a Client,
    server: &'a triskel::attest::PublicIdentity,
    demo: &'a programs::Demo,
}

/// Runs a client thread per encryption in `sent`, each submitting jobs one
/// after the other for `seconds`; what they saw, and the resident set after
/// a fifth of the time (the warm-up).
fn drive(load: &Load, sent: &[triskel::EncryptedInputs], seconds: f64) -> (Tally, Option<f64>) {
    let tally = Mutex::new(Tally::default());
    let deadline = Instant::now() + Duration::from_secs_f64(seconds.max(0.0));
    let warm_rss = Mutex::new(None);
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_secs_f64(seconds.max(0.0) / 5.0));
            *warm_rss.lock().unwrap_or_else(|p| p.into_inner()) = rss_mib();
        });
        for inputs in sent {
            let tally = &tally;
            s.spawn(move || {
                let Ok(remote) = Remote::new(load.url, Some(load.token.to_string())) else {
                    return;
                };
                while Instant::now() < deadline {
                    let outcome = one_job(&remote, load, inputs);
                    let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
                    match outcome {
                        Outcome::Busy => {}
                        Outcome::Done(ms) => {
                            t.submitted += 1;
                            t.completed += 1;
                            t.latencies_ms.push(ms);
                        }
                        Outcome::Failed => {
                            t.submitted += 1;
                            t.failed += 1;
                        }
                        Outcome::Lost => {
                            t.submitted += 1;
                            t.lost += 1;
                        }
                        Outcome::Refused => t.failed += 1,
                    }
                    drop(t);
                    if matches!(outcome, Outcome::Busy) {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
            });
        }
    });
    let tally = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    (
        tally,
        warm_rss.into_inner().unwrap_or_else(|p| p.into_inner()),
    )
}

/// CPU seconds (user and system) used so far by the server's HTTP threads
/// (tokio's workers and blocking pool, named `triskel-http`); Linux only.
fn http_cpu_seconds() -> Option<f64> {
    // The kernel's clock tick for these fields is 100 Hz on Linux.
    const TICKS_PER_SECOND: f64 = 100.0;
    let mut ticks = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() != "triskel-http" {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // After the parenthesized name: state is field 3, utime 14, stime 15.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
        for i in [11, 12] {
            ticks += fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Some(ticks as f64 / TICKS_PER_SECOND)
}

/// This process's resident set (the server and the clients), MiB; Linux only.
fn rss_mib() -> Option<f64> {
    crate::bench::status_kb("VmRSS").map(|kb| kb / 1024.0)
}

enum Outcome {
    /// Answered 429: nothing was submitted.
    Busy,
    /// Done, verified and decrypted to the right decision; the latency.
    Done(f64),
    /// Ended failed or cancelled, or its outputs did not verify or decrypt
    /// to the right decision.
    Failed,
    /// Acknowledged, but not finished within [`DRAIN`] after the end.
    Lost,
    /// The submission itself was refused (other than 429).
    Refused,
}

fn one_job(remote: &Remote, load: &Load, inputs: &triskel::EncryptedInputs) -> Outcome {
    let (client, server, demo) = (load.client, load.server, load.demo);
    let job = match remote.submit(&demo.program, inputs, None) {
        Ok(job) => job,
        Err(RemoteError::Api { status: 429, .. }) => return Outcome::Busy,
        Err(_) => return Outcome::Refused,
    };
    let Ok(end) = remote.wait(&job.id, DRAIN) else {
        return Outcome::Lost;
    };
    let latency = match (end.state.as_str(), end.finished_ms) {
        ("done", Some(f)) => f.saturating_sub(end.created_ms) as f64,
        _ => return Outcome::Failed,
    };
    let checked = remote.outputs(&job.id).ok().and_then(|outputs| {
        remote::verify(client, inputs, &outputs, server).ok()?;
        let plain = client.decrypt(&outputs, server).ok()?;
        let error = (demo.check)(&plain).ok()?;
        (error <= 1e-4).then_some(())
    });
    // Delete the job, so that the store holds only the jobs in flight.
    let _ = remote.cancel(&job.id);
    match checked {
        Some(()) => Outcome::Done(latency),
        None => Outcome::Failed,
    }
}
