//! Counters of the service, rendered in the Prometheus text format.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::store::State;

/// Upper bounds (seconds) of the job-latency histogram's buckets.
const BUCKETS: [f64; 12] = [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0,
];

#[derive(Default)]
pub struct Metrics {
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
    pub key_cache_hits: AtomicU64,
    pub key_cache_misses: AtomicU64,
    /// Runs stopped before their end (the job was cancelled or timed out).
    pub runs_interrupted: AtomicU64,
    /// Runs that ended (any way).
    pub runs: AtomicU64,
    /// Microseconds in `Server::run`, summed over runs.
    pub evaluation_us: AtomicU64,
    /// Microseconds workers held jobs (claim to stored result), summed.
    pub worker_busy_us: AtomicU64,
    /// Cumulative-by-render counts per bucket, then +Inf.
    latency: [AtomicU64; BUCKETS.len() + 1],
    /// Microseconds, summed.
    latency_sum_us: AtomicU64,
}

/// Where the workers' time went, summed over every run so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorkerTime {
    pub runs: u64,
    /// In `Server::run`: the evaluation itself.
    pub evaluation_seconds: f64,
    /// From claiming a job to storing its result: the evaluation plus
    /// loading, parsing, serializing and the store.
    pub busy_seconds: f64,
}

impl Metrics {
    pub fn worker_time(&self) -> WorkerTime {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        WorkerTime {
            runs: get(&self.runs),
            evaluation_seconds: get(&self.evaluation_us) as f64 / 1e6,
            busy_seconds: get(&self.worker_busy_us) as f64 / 1e6,
        }
    }

    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// Records a job's latency from submission to its end.
    pub fn observe_latency(&self, seconds: f64) {
        let i = BUCKETS
            .iter()
            .position(|&b| seconds <= b)
            .unwrap_or(BUCKETS.len());
        self.latency[i].fetch_add(1, Ordering::Relaxed);
        self.latency_sum_us
            .fetch_add((seconds.max(0.0) * 1e6) as u64, Ordering::Relaxed);
    }

    /// The text exposition, with the job counts by state (from the store).
    pub fn render(&self, jobs: &[u64; 5], key_cache_bytes: u64) -> String {
        let mut out = String::new();
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        out.push_str(
            "# HELP triskel_jobs Jobs in the store by state.\n# TYPE triskel_jobs gauge\n",
        );
        for (state, n) in State::ALL.iter().zip(jobs) {
            let _ = writeln!(out, "triskel_jobs{{state=\"{}\"}} {n}", state.name());
        }
        let _ = writeln!(
            out,
            "# HELP triskel_queue_depth Jobs waiting for a worker.\n# TYPE triskel_queue_depth gauge\ntriskel_queue_depth {}",
            jobs[0]
        );
        for (name, help, value) in [
            (
                "triskel_bytes_in_total",
                "Request body bytes received.",
                get(&self.bytes_in),
            ),
            (
                "triskel_bytes_out_total",
                "Response body bytes sent.",
                get(&self.bytes_out),
            ),
            (
                "triskel_key_cache_hits_total",
                "Evaluation keys found deserialized in memory.",
                get(&self.key_cache_hits),
            ),
            (
                "triskel_key_cache_misses_total",
                "Evaluation keys loaded from the store.",
                get(&self.key_cache_misses),
            ),
            (
                "triskel_runs_interrupted_total",
                "Runs stopped before their end: the job was cancelled or timed out.",
                get(&self.runs_interrupted),
            ),
            (
                "triskel_runs_total",
                "Runs that ended, however they ended.",
                get(&self.runs),
            ),
        ] {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        }
        let time = self.worker_time();
        for (name, help, value) in [
            (
                "triskel_evaluation_seconds_total",
                "Time workers spent in the evaluation itself.",
                time.evaluation_seconds,
            ),
            (
                "triskel_worker_busy_seconds_total",
                "Time workers held jobs: the evaluation, loading, parsing and storing.",
                time.busy_seconds,
            ),
        ] {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP triskel_key_cache_bytes Bytes of evaluation keys held in memory.\n# TYPE triskel_key_cache_bytes gauge\ntriskel_key_cache_bytes {key_cache_bytes}"
        );
        out.push_str(
            "# HELP triskel_job_latency_seconds Time from submission to the end of a job.\n# TYPE triskel_job_latency_seconds histogram\n",
        );
        let mut cumulative = 0;
        for (i, bound) in BUCKETS.iter().enumerate() {
            cumulative += get(&self.latency[i]);
            let _ = writeln!(
                out,
                "triskel_job_latency_seconds_bucket{{le=\"{bound}\"}} {cumulative}"
            );
        }
        cumulative += get(&self.latency[BUCKETS.len()]);
        let _ = writeln!(
            out,
            "triskel_job_latency_seconds_bucket{{le=\"+Inf\"}} {cumulative}"
        );
        let _ = writeln!(
            out,
            "triskel_job_latency_seconds_sum {}\ntriskel_job_latency_seconds_count {cumulative}",
            get(&self.latency_sum_us) as f64 / 1e6
        );
        out
    }
}
