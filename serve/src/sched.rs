//! The scheduler: worker threads take the oldest queued job from the
//! store, run it through [`triskel::Server::run`] on a rayon pool and store
//! its outputs or its error. The queue is the store itself, so a restart
//! loses nothing: jobs left running go back to the queue
//! ([`Store::recover`]) and run again. Cancelling a running job, or its
//! timeout, raises the cancel flag of its run
//! ([`Server::run_cancellable`]), which stops within one operation and
//! frees the worker; whatever the run returns then is dropped
//! ([`Store::finish`] only ends the run it was given).

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use triskel::{EncryptedInputs, EvaluationKeys, Program, Server};

use crate::cache::KeyCache;
use crate::error::{ApiError, ApiResult};
use crate::metrics::Metrics;
use crate::store::{now_ms, Job, State, Store};
use crate::Config;

/// The largest request the limits of the byte formats allow to be loaded.
pub const MAX_BLOB_BYTES: u64 = 8 << 30;

/// What the HTTP handlers and the workers share.
pub struct Core {
    pub store: Store,
    pub server: Server,
    pub metrics: Metrics,
    pub keys: Mutex<KeyCache<EvaluationKeys>>,
    pub queue_capacity: u64,
    pub job_timeout: Duration,
    /// The largest request body taken at all (a tenant's quota may be lower).
    pub max_request_bytes: u64,
    /// How long a request may pause before the server gives up on it.
    pub idle_timeout: Duration,
    pool: rayon::ThreadPool,
    /// Raised by every [`Core::notify`].
    wake: (Mutex<u64>, Condvar),
    /// The runs in progress by job id: when each started, its cancel flag.
    running: Mutex<HashMap<String, (Instant, Arc<AtomicBool>)>>,
    stopping: AtomicBool,
}

impl Core {
    pub fn new(store: Store, server: Server, config: &Config) -> ApiResult<Core> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.workers.max(1))
            .thread_name(|i| format!("triskel-job-{i}"))
            .build()
            .map_err(|e| ApiError::internal(format!("worker pool: {e}")))?;
        Ok(Core {
            store,
            server,
            metrics: Metrics::default(),
            keys: Mutex::new(KeyCache::new(config.key_cache_bytes)),
            queue_capacity: config.queue_capacity,
            job_timeout: config.job_timeout,
            max_request_bytes: config.max_request_bytes,
            idle_timeout: config.idle_timeout,
            pool,
            wake: (Mutex::new(0), Condvar::new()),
            running: Mutex::new(HashMap::new()),
            stopping: AtomicBool::new(false),
        })
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, KeyCache<EvaluationKeys>> {
        self.keys.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The deserialized keys of stored blob `blob` (id `id`), from the cache
    /// or loaded and checked.
    pub fn evaluation_keys(&self, id: &[u8; 32], blob: &str) -> ApiResult<Arc<EvaluationKeys>> {
        if let Some(k) = self.cache().get(id) {
            Metrics::add(&self.metrics.key_cache_hits, 1);
            return Ok(k);
        }
        Metrics::add(&self.metrics.key_cache_misses, 1);
        let bytes = self.store.get_blob(blob)?;
        let keys = EvaluationKeys::from_bytes(&bytes, MAX_BLOB_BYTES)
            .map_err(|e| ApiError::internal(format!("stored evaluation keys: {e}")))?;
        let keys = Arc::new(keys);
        self.remember_keys(keys.clone(), bytes.len() as u64);
        Ok(keys)
    }

    pub fn remember_keys(&self, keys: Arc<EvaluationKeys>, bytes: u64) {
        self.cache().insert(keys.id(), keys, bytes);
    }

    pub fn forget_keys(&self, id: &[u8; 32]) {
        self.cache().remove(id);
    }

    pub fn key_cache_bytes(&self) -> u64 {
        self.cache().used()
    }

    fn runs(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, Arc<AtomicBool>)>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stops job `id`'s run, if one is in progress (the job was cancelled).
    pub fn interrupt(&self, id: &str) {
        if let Some((_, flag)) = self.runs().get(id) {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// Stops the runs in progress for longer than the job timeout.
    fn interrupt_overdue(&self) {
        for (start, flag) in self.runs().values() {
            if start.elapsed() > self.job_timeout {
                flag.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Wakes the waiting workers (a job was queued).
    pub fn notify(&self) {
        let (lock, cv) = &self.wake;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        cv.notify_all();
    }

    fn generation(&self) -> u64 {
        *self.wake.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until a [`Core::notify`] after generation `seen`, or `timeout`.
    fn sleep(&self, seen: u64, timeout: Duration) {
        let (lock, cv) = &self.wake;
        let guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        let _ = cv
            .wait_timeout_while(guard, timeout, |g| *g == seen)
            .unwrap_or_else(|p| p.into_inner());
    }

    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.notify();
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Runs one claimed job to its end.
    fn run(&self, job: &Job) {
        let start = Instant::now();
        let cancel = Arc::new(AtomicBool::new(false));
        self.runs().insert(job.id.clone(), (start, cancel.clone()));
        // A cancellation between the claim and the line above found no flag.
        let still_ours = self.store.job(job.tenant, &job.id).ok().flatten();
        if !still_ours.is_some_and(|j| j.state == State::Running && j.runs == job.runs) {
            cancel.store(true, Ordering::Relaxed);
        }
        let result = catch_unwind(AssertUnwindSafe(|| self.compute(job, &cancel)))
            .unwrap_or_else(|_| Err("the evaluation stopped on an internal error".into()));
        self.runs().remove(&job.id);
        if result.is_err() && cancel.load(Ordering::Relaxed) {
            Metrics::add(&self.metrics.runs_interrupted, 1);
        }
        let result = match result {
            _ if start.elapsed() > self.job_timeout => Err(timed_out(self.job_timeout)),
            r => r,
        };
        let outcome = match &result {
            Ok(bytes) => Ok(bytes.as_slice()),
            Err(e) => Err(e.as_str()),
        };
        let stored = self.store.finish(&job.id, job.runs, outcome).or_else(|e| {
            // The outputs could not be written (a full or unwritable
            // store): the job fails with the reason, which needs no blob.
            // Should that fail too, it stays running and runs again after
            // a restart.
            let reason = format!("its outputs could not be stored: {}", e.message);
            self.store.finish(&job.id, job.runs, Err(&reason))
        });
        if stored == Ok(true) {
            let latency = now_ms().saturating_sub(job.created_ms) as f64 / 1e3;
            self.metrics.observe_latency(latency);
        }
        Metrics::add(&self.metrics.runs, 1);
        Metrics::add(&self.metrics.worker_busy_us, micros(start.elapsed()));
    }

    /// The outputs' bytes of a job, or the reason it failed.
    fn compute(&self, job: &Job, cancel: &AtomicBool) -> Result<Vec<u8>, String> {
        let key_set = self
            .store
            .key_set(job.tenant, &job.key_set)
            .map_err(|e| e.message)?
            .ok_or("its key set was deleted")?;
        let program = self
            .store
            .get_blob(&job.program_blob)
            .map_err(|e| e.message)?;
        let program = Program::from_bytes(&program).map_err(|e| e.to_string())?;
        let inputs = self
            .store
            .get_blob(&job.inputs_blob)
            .map_err(|e| e.message)?;
        let inputs =
            EncryptedInputs::from_bytes(&inputs, MAX_BLOB_BYTES).map_err(|e| e.to_string())?;
        let keys = self
            .evaluation_keys(&key_set.id, &key_set.blob)
            .map_err(|e| e.message)?;
        let evaluation = Instant::now();
        let outputs = self.pool.install(|| {
            self.server
                .run_cancellable(&program, keys.choice(), &keys, &inputs, cancel)
        });
        Metrics::add(&self.metrics.evaluation_us, micros(evaluation.elapsed()));
        let outputs = outputs.map_err(|e| e.to_string())?;
        Ok(outputs.to_bytes())
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn timed_out(limit: Duration) -> String {
    format!("timed out: ran longer than {:.3} s", limit.as_secs_f64())
}

/// Starts `workers` worker threads and the timeout watchdog.
pub fn start_workers(core: &Arc<Core>, workers: usize) -> Vec<JoinHandle<()>> {
    let mut threads: Vec<JoinHandle<()>> = (0..workers.max(1))
        .map(|_| {
            let core = core.clone();
            std::thread::spawn(move || {
                while !core.stopping() {
                    let seen = core.generation();
                    match core.store.claim() {
                        Ok(Some(job)) => core.run(&job),
                        // Nothing queued, or the store is unreadable for now.
                        _ => core.sleep(seen, Duration::from_secs(1)),
                    }
                }
            })
        })
        .collect();
    let watchdog = core.clone();
    threads.push(std::thread::spawn(move || {
        let limit = watchdog.job_timeout;
        while !watchdog.stopping() {
            let before = now_ms().saturating_sub(limit.as_millis() as u64);
            let _ = watchdog.store.expire(before, &timed_out(limit));
            watchdog.interrupt_overdue();
            let seen = watchdog.generation();
            watchdog.sleep(seen, Duration::from_millis(500));
        }
    }));
    threads
}
