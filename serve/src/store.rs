//! The persistent store under one directory, and nothing outside it:
//!
//! ```text
//! DIR/serve.db             SQLite: tenants, token hashes, key sets, jobs
//! DIR/identity.secret      the server's attestation identity (mode 0600)
//! DIR/identity.public
//! DIR/blobs/ab/cdef...     evaluation keys, programs, inputs and outputs,
//!                          named by the BLAKE3 digest of their bytes
//! DIR/tmp/                 blobs being written
//! ```
//!
//! A blob is written to `tmp/`, flushed to disk, renamed into place and its
//! directory flushed, so a blob in `blobs/` is whole; loading checks it
//! against its digest. A row that names a blob is committed only after the
//! blob is in place, and the database runs in WAL mode with full syncs, so
//! an acknowledged request survives a crash.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};

use crate::auth;
use crate::error::{ApiError, ApiResult};

/// A tenant's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    /// Bytes of evaluation keys stored at once.
    pub max_key_bytes: u64,
    /// Jobs queued or running at once.
    pub max_jobs_in_flight: u64,
    /// Bytes of one request body.
    pub max_request_bytes: u64,
}

impl Default for Quotas {
    fn default() -> Quotas {
        Quotas {
            max_key_bytes: 4 << 30,
            max_jobs_in_flight: 64,
            max_request_bytes: 2 << 30,
        }
    }
}

/// An authenticated tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    pub id: i64,
    pub name: String,
    pub quotas: Quotas,
}

/// A stored key set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySet {
    pub id: [u8; 32],
    pub blob: String,
    pub bytes: u64,
    /// The digest of the program the keys were made for.
    pub program: [u8; 32],
    /// The plan choice the keys were made for (`PlanChoice::to_bytes`).
    pub choice: Vec<u8>,
}

/// The state of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl State {
    pub const ALL: [State; 5] = [
        State::Queued,
        State::Running,
        State::Done,
        State::Failed,
        State::Cancelled,
    ];

    pub fn name(self) -> &'static str {
        match self {
            State::Queued => "queued",
            State::Running => "running",
            State::Done => "done",
            State::Failed => "failed",
            State::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> rusqlite::Result<State> {
        State::ALL
            .into_iter()
            .find(|st| st.name() == s)
            .ok_or_else(|| {
                rusqlite::Error::InvalidColumnType(0, s.into(), rusqlite::types::Type::Text)
            })
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, State::Done | State::Failed | State::Cancelled)
    }
}

/// A job as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: String,
    pub tenant: i64,
    pub key_set: [u8; 32],
    pub program_blob: String,
    pub inputs_blob: String,
    pub outputs_blob: Option<String>,
    pub state: State,
    pub error: Option<String>,
    /// How many times a worker started it (more than one after a restart).
    pub runs: u64,
    pub created_ms: u64,
    pub started_ms: Option<u64>,
    pub finished_ms: Option<u64>,
}

/// A new job to store.
pub struct NewJob<'a> {
    pub tenant: &'a Tenant,
    pub key_set: [u8; 32],
    pub program: &'a [u8],
    pub inputs: &'a [u8],
    pub idempotency_key: Option<&'a str>,
    /// The digest of the whole request body (an idempotent retry must match it).
    pub request: [u8; 32],
    /// The most jobs queued at once over every tenant.
    pub queue_capacity: u64,
}

/// What cancelling or deleting a job did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// It was queued or running and is cancelled now.
    Cancelled(Box<Job>),
    /// It had finished; it and its outputs are deleted.
    Deleted,
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

const SCHEMA: &str = "
PRAGMA foreign_keys = ON;
CREATE TABLE IF NOT EXISTS tenants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    max_key_bytes INTEGER NOT NULL,
    max_jobs_in_flight INTEGER NOT NULL,
    max_request_bytes INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
    hash BLOB PRIMARY KEY,
    tenant INTEGER NOT NULL REFERENCES tenants(id),
    created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS key_sets (
    tenant INTEGER NOT NULL REFERENCES tenants(id),
    id BLOB NOT NULL,
    blob TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    program BLOB NOT NULL,
    choice BLOB NOT NULL,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant INTEGER NOT NULL REFERENCES tenants(id),
    key_set BLOB NOT NULL,
    program_blob TEXT NOT NULL,
    inputs_blob TEXT NOT NULL,
    outputs_blob TEXT,
    idempotency_key TEXT,
    request BLOB NOT NULL,
    state TEXT NOT NULL,
    error TEXT,
    runs INTEGER NOT NULL DEFAULT 0,
    created_ms INTEGER NOT NULL,
    started_ms INTEGER,
    finished_ms INTEGER,
    UNIQUE (tenant, idempotency_key)
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, seq);
";

const JOB_COLUMNS: &str = "id, tenant, key_set, program_blob, inputs_blob, outputs_blob, state, \
     error, runs, created_ms, started_ms, finished_ms";

fn job_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Job> {
    job_row_at(r, 0)
}

/// The store: the database and the blob files.
pub struct Store {
    dir: PathBuf,
    db: Mutex<Connection>,
}

fn io_err(context: &str) -> impl Fn(std::io::Error) -> ApiError + '_ {
    move |e| ApiError::io(context, &e)
}

impl Store {
    /// Opens (creating if needed) the store in `dir`.
    pub fn open(dir: &Path) -> ApiResult<Store> {
        for sub in ["", "blobs", "tmp"] {
            fs::create_dir_all(dir.join(sub)).map_err(io_err("creating the store"))?;
        }
        let db = Connection::open(dir.join("serve.db"))?;
        db.busy_timeout(std::time::Duration::from_secs(30))?;
        db.pragma_update(None, "journal_mode", "WAL")?;
        db.pragma_update(None, "synchronous", "FULL")?;
        db.execute_batch(SCHEMA)?;
        Ok(Store {
            dir: dir.to_path_buf(),
            db: Mutex::new(db),
        })
    }

    /// Removes blobs half-written when a server stopped; only the one
    /// server of a store calls it, when it starts.
    pub fn clear_tmp(&self) {
        if let Ok(entries) = fs::read_dir(self.dir.join("tmp")) {
            for e in entries.flatten() {
                let _ = fs::remove_file(e.path());
            }
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn db(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a half-made change:
        // every change is one statement or one transaction.
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn blob_path(&self, digest: &str) -> PathBuf {
        self.dir.join("blobs").join(&digest[..2]).join(&digest[2..])
    }

    /// Stores `bytes` (atomically, flushed to disk) and returns its digest.
    pub fn put_blob(&self, bytes: &[u8]) -> ApiResult<String> {
        let digest = blake3::hash(bytes).to_hex().to_string();
        let path = self.blob_path(&digest);
        if path.exists() {
            return Ok(digest);
        }
        let parent = path.parent().expect("a blob has a directory");
        fs::create_dir_all(parent).map_err(|e| ApiError::write_failed("storing a blob", &e))?;
        let mut name = [0u8; 16];
        getrandom::fill(&mut name).map_err(|e| ApiError::internal(format!("randomness: {e}")))?;
        let tmp = self.dir.join("tmp").join(triskel::attest::hex(&name));
        let written = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)?;
            fs::File::open(parent)?.sync_all()
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(ApiError::write_failed("storing a blob", &e));
        }
        Ok(digest)
    }

    /// The bytes of blob `digest`, checked against it.
    pub fn get_blob(&self, digest: &str) -> ApiResult<Vec<u8>> {
        let bytes = fs::read(self.blob_path(digest)).map_err(io_err("reading a blob"))?;
        if blake3::hash(&bytes).to_hex().as_str() != digest {
            return Err(ApiError::internal(format!(
                "blob {digest} is damaged: its bytes do not match its digest"
            )));
        }
        Ok(bytes)
    }

    /// Writes blob `digest` again if a concurrent [`Store::collect`] removed
    /// it (called with the database locked, before the row naming it is
    /// committed).
    fn ensure_blob(&self, digest: &str, bytes: &[u8]) -> ApiResult<()> {
        if !self.blob_path(digest).exists() {
            self.put_blob(bytes)?;
        }
        Ok(())
    }

    /// Removes the blobs of `digests` that no row names any more (called
    /// with the database locked).
    fn collect(&self, db: &Connection, digests: &[String]) -> ApiResult<()> {
        for d in digests {
            let used: bool = db.query_row(
                "SELECT EXISTS (SELECT 1 FROM key_sets WHERE blob = ?1)
                     OR EXISTS (SELECT 1 FROM jobs WHERE program_blob = ?1 OR inputs_blob = ?1
                                OR outputs_blob = ?1)",
                [d],
                |r| r.get(0),
            )?;
            if !used {
                let _ = fs::remove_file(self.blob_path(d));
            }
        }
        Ok(())
    }

    /// A new token for tenant `name` (created with `quotas` if new; an
    /// existing tenant's quotas are set to `quotas` when given).
    pub fn create_token(&self, name: &str, quotas: Option<Quotas>) -> ApiResult<String> {
        let valid = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !valid {
            return Err(ApiError::bad_request(
                "invalid_tenant",
                "a tenant name is 1 to 64 of A-Z a-z 0-9 - _ .",
            ));
        }
        let token =
            auth::new_token().map_err(|e| ApiError::internal(format!("randomness: {e}")))?;
        let mut db = self.db();
        let tx = db.transaction()?;
        let q = quotas.unwrap_or_default();
        tx.execute(
            "INSERT INTO tenants (name, max_key_bytes, max_jobs_in_flight, max_request_bytes)
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name) DO NOTHING",
            params![
                name,
                q.max_key_bytes,
                q.max_jobs_in_flight,
                q.max_request_bytes
            ],
        )?;
        if quotas.is_some() {
            tx.execute(
                "UPDATE tenants SET max_key_bytes = ?2, max_jobs_in_flight = ?3,
                 max_request_bytes = ?4 WHERE name = ?1",
                params![
                    name,
                    q.max_key_bytes,
                    q.max_jobs_in_flight,
                    q.max_request_bytes
                ],
            )?;
        }
        let tenant: i64 = tx.query_row("SELECT id FROM tenants WHERE name = ?1", [name], |r| {
            r.get(0)
        })?;
        tx.execute(
            "INSERT INTO tokens (hash, tenant, created_ms) VALUES (?1, ?2, ?3)",
            params![auth::token_hash(&token), tenant, now_ms()],
        )?;
        tx.commit()?;
        Ok(token)
    }

    /// The tenant of `token`, if it is a live token.
    pub fn authenticate(&self, token: &str) -> ApiResult<Option<Tenant>> {
        Ok(self
            .db()
            .query_row(
                "SELECT t.id, t.name, t.max_key_bytes, t.max_jobs_in_flight, t.max_request_bytes
                 FROM tokens k JOIN tenants t ON t.id = k.tenant WHERE k.hash = ?1",
                [auth::token_hash(token)],
                |r| {
                    Ok(Tenant {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        quotas: Quotas {
                            max_key_bytes: r.get(2)?,
                            max_jobs_in_flight: r.get(3)?,
                            max_request_bytes: r.get(4)?,
                        },
                    })
                },
            )
            .optional()?)
    }

    /// Key set `id` of `tenant`.
    pub fn key_set(&self, tenant: i64, id: &[u8; 32]) -> ApiResult<Option<KeySet>> {
        Ok(self
            .db()
            .query_row(
                "SELECT id, blob, bytes, program, choice FROM key_sets WHERE tenant = ?1 AND id = ?2",
                params![tenant, id],
                |r| {
                    Ok(KeySet {
                        id: r.get(0)?,
                        blob: r.get(1)?,
                        bytes: r.get(2)?,
                        program: r.get(3)?,
                        choice: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// Bytes of key sets `tenant` stores.
    pub fn key_bytes(&self, tenant: i64) -> ApiResult<u64> {
        Ok(self.db().query_row(
            "SELECT COALESCE(SUM(bytes), 0) FROM key_sets WHERE tenant = ?1",
            [tenant],
            |r| r.get(0),
        )?)
    }

    /// Stores key set `id` of `tenant` (the bundle `bytes`, made for
    /// `program` and `choice`); returns whether it was new. Refused above
    /// the tenant's key-byte quota.
    pub fn add_key_set(
        &self,
        tenant: &Tenant,
        id: &[u8; 32],
        program: &[u8; 32],
        choice: &[u8],
        bytes: &[u8],
    ) -> ApiResult<bool> {
        if self.key_set(tenant.id, id)?.is_some() {
            return Ok(false);
        }
        let size = bytes.len() as u64;
        let quota = tenant.quotas.max_key_bytes;
        let stored = self.key_bytes(tenant.id)?;
        if stored + size > quota {
            return Err(quota_keys(stored, size, quota));
        }
        let blob = self.put_blob(bytes)?;
        let mut db = self.db();
        self.ensure_blob(&blob, bytes)?;
        let tx = db.transaction()?;
        let stored: u64 = tx.query_row(
            "SELECT COALESCE(SUM(bytes), 0) FROM key_sets WHERE tenant = ?1",
            [tenant.id],
            |r| r.get(0),
        )?;
        if stored + size > quota {
            drop(tx);
            self.collect(&db, &[blob])?;
            return Err(quota_keys(stored, size, quota));
        }
        let added = tx.execute(
            "INSERT INTO key_sets (tenant, id, blob, bytes, program, choice, created_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
            params![tenant.id, id, blob, size, program, choice, now_ms()],
        )?;
        tx.commit()?;
        Ok(added == 1)
    }

    /// Deletes key set `id` of `tenant`: false when there is none; refused
    /// while a queued or running job uses it.
    pub fn delete_key_set(&self, tenant: i64, id: &[u8; 32]) -> ApiResult<bool> {
        let mut db = self.db();
        let tx = db.transaction()?;
        let blob: Option<String> = tx
            .query_row(
                "SELECT blob FROM key_sets WHERE tenant = ?1 AND id = ?2",
                params![tenant, id],
                |r| r.get(0),
            )
            .optional()?;
        let Some(blob) = blob else {
            return Ok(false);
        };
        let busy: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE tenant = ?1 AND key_set = ?2
                            AND state IN ('queued', 'running'))",
            params![tenant, id],
            |r| r.get(0),
        )?;
        if busy {
            return Err(ApiError::conflict(
                "key_set_in_use",
                "a queued or running job uses this key set: cancel it first",
            ));
        }
        tx.execute(
            "DELETE FROM key_sets WHERE tenant = ?1 AND id = ?2",
            params![tenant, id],
        )?;
        tx.commit()?;
        self.collect(&db, &[blob])?;
        Ok(true)
    }

    /// Stores a new job (its blobs already stored), or returns the job an
    /// earlier submission with the same idempotency key made (`false`).
    pub fn submit(&self, new: &NewJob<'_>) -> ApiResult<(Job, bool)> {
        let program_blob = self.put_blob(new.program)?;
        let inputs_blob = self.put_blob(new.inputs)?;
        let mut db = self.db();
        self.ensure_blob(&program_blob, new.program)?;
        self.ensure_blob(&inputs_blob, new.inputs)?;
        let tx = db.transaction()?;
        if let Some(key) = new.idempotency_key {
            let earlier = tx
                .query_row(
                    &format!(
                        "SELECT request, {JOB_COLUMNS} FROM jobs WHERE tenant = ?1 AND idempotency_key = ?2"
                    ),
                    params![new.tenant.id, key],
                    |r| Ok((r.get::<_, [u8; 32]>(0)?, job_row_at(r, 1)?)),
                )
                .optional()?;
            if let Some((request, job)) = earlier {
                drop(tx);
                self.collect(&db, &[program_blob, inputs_blob])?;
                if request != new.request {
                    return Err(ApiError::unprocessable(
                        "idempotency_key_reused",
                        "this Idempotency-Key was used for another request",
                    ));
                }
                return Ok((job, false));
            }
        }
        let queued: u64 = tx.query_row(
            "SELECT COUNT(*) FROM jobs WHERE state = 'queued'",
            [],
            |r| r.get(0),
        )?;
        let refusal = if queued >= new.queue_capacity {
            Some(ApiError::too_many(
                "queue_full",
                format!("the queue holds {queued} jobs, its capacity; retry later"),
            ))
        } else {
            let in_flight: u64 = tx.query_row(
                "SELECT COUNT(*) FROM jobs WHERE tenant = ?1 AND state IN ('queued', 'running')",
                [new.tenant.id],
                |r| r.get(0),
            )?;
            (in_flight >= new.tenant.quotas.max_jobs_in_flight).then(|| {
                ApiError::too_many(
                    "quota_jobs_in_flight",
                    format!("{in_flight} jobs queued or running, the tenant's quota; retry later"),
                )
            })
        };
        if let Some(e) = refusal {
            drop(tx);
            self.collect(&db, &[program_blob, inputs_blob])?;
            return Err(e);
        }
        let mut raw = [0u8; 16];
        getrandom::fill(&mut raw).map_err(|e| ApiError::internal(format!("randomness: {e}")))?;
        let id = format!("j{}", triskel::attest::hex(&raw));
        tx.execute(
            "INSERT INTO jobs (id, tenant, key_set, program_blob, inputs_blob, idempotency_key,
                               request, state, created_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued', ?8)",
            params![
                id,
                new.tenant.id,
                new.key_set,
                program_blob,
                inputs_blob,
                new.idempotency_key,
                new.request,
                now_ms()
            ],
        )?;
        let job = tx.query_row(
            &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"),
            [&id],
            job_row,
        )?;
        tx.commit()?;
        Ok((job, true))
    }

    /// Job `id` of `tenant`.
    pub fn job(&self, tenant: i64, id: &str) -> ApiResult<Option<Job>> {
        Ok(self
            .db()
            .query_row(
                &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE tenant = ?1 AND id = ?2"),
                params![tenant, id],
                job_row,
            )
            .optional()?)
    }

    /// The oldest queued job, now running (its run count raised).
    pub fn claim(&self) -> ApiResult<Option<Job>> {
        Ok(self
            .db()
            .query_row(
                &format!(
                    "UPDATE jobs SET state = 'running', runs = runs + 1, started_ms = ?1
                     WHERE seq = (SELECT seq FROM jobs WHERE state = 'queued' ORDER BY seq LIMIT 1)
                     RETURNING {JOB_COLUMNS}"
                ),
                [now_ms()],
                job_row,
            )
            .optional()?)
    }

    /// Ends run `runs` of job `id`: done with `outputs_blob`, or failed
    /// with `error`. False when the job is no longer in that run
    /// (cancelled, timed out): the result is dropped.
    pub fn finish(&self, id: &str, runs: u64, outcome: Result<&[u8], &str>) -> ApiResult<bool> {
        let (state, outputs, error) = match outcome {
            Ok(bytes) => ("done", Some((self.put_blob(bytes)?, bytes)), None),
            Err(e) => ("failed", None, Some(e)),
        };
        let db = self.db();
        if let Some((blob, bytes)) = &outputs {
            self.ensure_blob(blob, bytes)?;
        }
        let outputs = outputs.map(|(blob, _)| blob);
        let changed = db.execute(
            "UPDATE jobs SET state = ?3, outputs_blob = ?4, error = ?5, finished_ms = ?6
             WHERE id = ?1 AND runs = ?2 AND state = 'running'",
            params![id, runs, state, outputs, error, now_ms()],
        )?;
        if changed == 0 {
            if let Some(blob) = outputs {
                self.collect(&db, &[blob])?;
            }
        }
        Ok(changed == 1)
    }

    /// Cancels job `id` of `tenant` if queued or running, deletes it and
    /// its outputs if finished; `None` when there is no such job.
    pub fn remove_job(&self, tenant: i64, id: &str) -> ApiResult<Option<Removal>> {
        let mut db = self.db();
        let tx = db.transaction()?;
        let job = tx
            .query_row(
                &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE tenant = ?1 AND id = ?2"),
                params![tenant, id],
                job_row,
            )
            .optional()?;
        let Some(job) = job else {
            return Ok(None);
        };
        if !job.state.is_terminal() {
            let job = tx.query_row(
                &format!(
                    "UPDATE jobs SET state = 'cancelled', finished_ms = ?2 WHERE id = ?1
                     RETURNING {JOB_COLUMNS}"
                ),
                params![id, now_ms()],
                job_row,
            )?;
            tx.commit()?;
            return Ok(Some(Removal::Cancelled(Box::new(job))));
        }
        tx.execute("DELETE FROM jobs WHERE id = ?1", [id])?;
        tx.commit()?;
        let blobs: Vec<String> = [
            Some(job.program_blob),
            Some(job.inputs_blob),
            job.outputs_blob,
        ]
        .into_iter()
        .flatten()
        .collect();
        self.collect(&db, &blobs)?;
        Ok(Some(Removal::Deleted))
    }

    /// Jobs left running by a stopped process go back to the queue; returns
    /// how many.
    pub fn recover(&self) -> ApiResult<usize> {
        Ok(self.db().execute(
            "UPDATE jobs SET state = 'queued' WHERE state = 'running'",
            [],
        )?)
    }

    /// Fails every job running since before `started_before_ms`.
    pub fn expire(&self, started_before_ms: u64, message: &str) -> ApiResult<usize> {
        Ok(self.db().execute(
            "UPDATE jobs SET state = 'failed', error = ?2, finished_ms = ?3
             WHERE state = 'running' AND started_ms < ?1",
            params![started_before_ms, message, now_ms()],
        )?)
    }

    /// The number of jobs in each state, in [`State::ALL`] order.
    pub fn counts(&self) -> ApiResult<[u64; 5]> {
        let db = self.db();
        let mut stmt = db.prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state")?;
        let mut out = [0u64; 5];
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, u64>(1)?)))?;
        for row in rows {
            let (state, n) = row?;
            if let Some(i) = State::ALL.iter().position(|s| s.name() == state) {
                out[i] = n;
            }
        }
        Ok(out)
    }
}

fn job_row_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Job> {
    let g = |i: usize| at + i;
    Ok(Job {
        id: r.get(g(0))?,
        tenant: r.get(g(1))?,
        key_set: r.get(g(2))?,
        program_blob: r.get(g(3))?,
        inputs_blob: r.get(g(4))?,
        outputs_blob: r.get(g(5))?,
        state: State::parse(&r.get::<_, String>(g(6))?)?,
        error: r.get(g(7))?,
        runs: r.get(g(8))?,
        created_ms: r.get(g(9))?,
        started_ms: r.get(g(10))?,
        finished_ms: r.get(g(11))?,
    })
}

pub fn quota_keys(stored: u64, more: u64, quota: u64) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::FORBIDDEN,
        "quota_key_bytes",
        format!(
            "{stored} bytes of keys stored and {more} more exceed the tenant's quota of {quota}"
        ),
    )
}
