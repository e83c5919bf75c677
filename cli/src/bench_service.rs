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

    let tally = Mutex::new(Tally::default());
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds.max(0.0));
    let warm_rss = Mutex::new(None);
    std::thread::scope(|s| {
        // The resident set after a fifth of the time, the warm-up.
        s.spawn(|| {
            std::thread::sleep(Duration::from_secs_f64(seconds.max(0.0) / 5.0));
            *warm_rss.lock().unwrap_or_else(|p| p.into_inner()) = rss_mib();
        });
        for inputs in &sent {
            let (tally, client, server, demo) = (&tally, &client, &server, &demo);
            let (url, token) = (url.clone(), token.clone());
            s.spawn(move || {
                let Ok(remote) = Remote::new(&url, Some(token)) else {
                    return;
                };
                while Instant::now() < deadline {
                    let outcome = one_job(&remote, client, server, demo, inputs);
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
    let elapsed = start.elapsed().as_secs_f64();
    let end_rss = rss_mib();
    running.stop();

    let mut t = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    t.latencies_ms.sort_by(f64::total_cmp);
    let quantile = |q: f64| -> f64 {
        if t.latencies_ms.is_empty() {
            return 0.0;
        }
        let i = ((t.latencies_ms.len() as f64 * q).ceil() as usize).clamp(1, t.latencies_ms.len());
        t.latencies_ms[i - 1]
    };
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
        "rss_mib_after_warmup": warm_rss.into_inner().unwrap_or_else(|p| p.into_inner()),
        "rss_mib_end": end_rss,
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "triskel serve, {clients} clients, {workers} workers, {elapsed:.1} s: {:.2} jobs/s, \
             p50 {:.0} ms, p99 {:.0} ms; {} submitted, {} completed, {} failed, {} lost",
            report["throughput_jobs_per_s"].as_f64().unwrap_or(0.0),
            quantile(0.50),
            quantile(0.99),
            t.submitted,
            t.completed,
            t.failed,
            t.lost
        );
    }
    if t.failed > 0 || t.lost > 0 {
        return Err(format!("{} jobs failed and {} were lost", t.failed, t.lost).into());
    }
    Ok(())
}

/// This process's resident set (the server and the clients), MiB; Linux only.
fn rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
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

fn one_job(
    remote: &Remote,
    client: &Client,
    server: &triskel::attest::PublicIdentity,
    demo: &programs::Demo,
    inputs: &triskel::EncryptedInputs,
) -> Outcome {
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
