//! `triskel serve` (the service of `triskel-serve`), `triskel serve token
//! create`, and `triskel remote`: the key holder's side against a running
//! service. A token is read from `TRISKEL_TOKEN` or `--token-file`, never
//! from the command line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use triskel::attest::{files, hex};
use triskel::{Client, Program};
use triskel_serve::remote::{self, Remote};
use triskel_serve::{Config, Quotas};

use crate::programs;
use crate::split::{load_inputs, load_program, print_json, read, to_json, write};
use crate::CliResult;

const DEFAULT_URL: &str = "http://127.0.0.1:7340";

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    what: Option<ServeCommand>,
    /// Where to listen: any address with --tls-cert and --tls-key, a
    /// loopback one without (plain HTTP). Port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:7340")]
    listen: std::net::SocketAddr,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// The store directory (created if needed); nothing is written elsewhere.
    #[arg(long, default_value = "triskel-store")]
    store: PathBuf,
    /// Worker threads running jobs (default: one per core).
    #[arg(long)]
    workers: Option<usize>,
    /// The most jobs queued at once; more are answered 429.
    #[arg(long, default_value_t = 256)]
    queue: u64,
    /// A running job that takes longer fails.
    #[arg(long, default_value_t = 600)]
    job_timeout_seconds: u64,
    /// Bytes of deserialized evaluation keys kept in memory.
    #[arg(long, default_value_t = 2 << 30)]
    key_cache_bytes: u64,
    /// A client silent for longer (before its first bytes, within its
    /// headers or its body) is dropped.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout_seconds: u64,
}

#[derive(Subcommand, Debug)]
enum ServeCommand {
    /// Tenants' API tokens.
    Token {
        #[command(subcommand)]
        what: TokenCommand,
    },
}

#[derive(Subcommand, Debug)]
enum TokenCommand {
    /// Creates a token for a tenant (and the tenant if new) and prints it;
    /// the store keeps only its hash.
    Create {
        #[arg(long)]
        tenant: String,
        #[arg(long, default_value = "triskel-store")]
        store: PathBuf,
        /// Bytes of evaluation keys the tenant may store.
        #[arg(long)]
        max_key_bytes: Option<u64>,
        /// Jobs the tenant may have queued or running.
        #[arg(long)]
        max_jobs: Option<u64>,
        /// Bytes of one request.
        #[arg(long)]
        max_request_bytes: Option<u64>,
    },
}

#[derive(Args, Debug)]
pub struct RemoteArgs {
    #[command(subcommand)]
    what: RemoteCommand,
    /// The service's address.
    #[arg(long, default_value = DEFAULT_URL, global = true)]
    url: String,
    /// A file holding the token (else `TRISKEL_TOKEN`).
    #[arg(long, global = true)]
    token_file: Option<PathBuf>,
    /// The PEM certificates to trust for an https:// server (its own
    /// self-signed certificate, a private CA, or a system bundle).
    #[arg(long, global = true)]
    ca: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum RemoteCommand {
    /// Uploads evaluation keys; pins the server's identity in
    /// `--server-public` (written if absent, compared if present).
    Keys {
        #[arg(long)]
        keys: PathBuf,
        #[arg(long)]
        server_public: PathBuf,
    },
    /// Submits a program on encrypted inputs; prints the job.
    Submit {
        #[arg(long)]
        program: PathBuf,
        #[arg(long)]
        inputs: PathBuf,
        /// A retry with the same key returns the same job.
        #[arg(long)]
        idempotency_key: Option<String>,
    },
    /// Waits until a job is finished; prints it (fails unless done).
    Wait {
        #[arg(long)]
        job: String,
        #[arg(long, default_value_t = 3600)]
        timeout_seconds: u64,
    },
    /// Fetches a done job's outputs, verifies every record against the
    /// pinned identity and the inputs sent, decrypts and prints them.
    Fetch {
        #[arg(long)]
        job: String,
        #[arg(long)]
        secret: PathBuf,
        #[arg(long)]
        server_public: PathBuf,
        /// The encrypted inputs sent for the job.
        #[arg(long)]
        inputs: PathBuf,
        /// Also write the encrypted outputs here.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

pub fn serve(args: ServeArgs) -> CliResult {
    if let Some(ServeCommand::Token { what }) = args.what {
        let TokenCommand::Create {
            tenant,
            store,
            max_key_bytes,
            max_jobs,
            max_request_bytes,
        } = what;
        let given = max_key_bytes.is_some() || max_jobs.is_some() || max_request_bytes.is_some();
        let d = Quotas::default();
        let quotas = given.then(|| Quotas {
            max_key_bytes: max_key_bytes.unwrap_or(d.max_key_bytes),
            max_jobs_in_flight: max_jobs.unwrap_or(d.max_jobs_in_flight),
            max_request_bytes: max_request_bytes.unwrap_or(d.max_request_bytes),
        });
        println!("{}", triskel_serve::create_token(&store, &tenant, quotas)?);
        return Ok(());
    }
    let mut config = Config::new(args.store);
    config.listen = args.listen;
    config.tls = args
        .tls_cert
        .zip(args.tls_key)
        .map(|(cert, key)| triskel_serve::TlsFiles { cert, key });
    if let Some(w) = args.workers {
        config.workers = w.max(1);
    }
    config.queue_capacity = args.queue;
    config.job_timeout = Duration::from_secs(args.job_timeout_seconds);
    config.key_cache_bytes = args.key_cache_bytes;
    config.idle_timeout = Duration::from_secs(args.idle_timeout_seconds);
    let workers = config.workers;
    let running = triskel_serve::start(config)?;
    // The first line is what scripts read the address from.
    println!("listening on {} ({workers} workers)", running.url());
    use std::io::Write;
    std::io::stdout().flush()?;
    running.wait();
    Ok(())
}

fn token(file: Option<&Path>) -> Result<String, Box<dyn std::error::Error>> {
    let raw = match file {
        Some(f) => String::from_utf8(read(f, 1024, "token")?)?,
        None => std::env::var("TRISKEL_TOKEN")
            .map_err(|_| "no token: set TRISKEL_TOKEN or pass --token-file")?,
    };
    Ok(raw.trim().to_string())
}

/// The server's identity, checked against the pinned copy in `path`
/// (written when absent).
fn pinned_identity(
    remote: &Remote,
    path: &Path,
) -> Result<triskel::attest::PublicIdentity, Box<dyn std::error::Error>> {
    let live = remote.identity()?;
    if path.exists() {
        let pinned = files::load_public(path)?;
        if pinned != live {
            return Err(format!(
                "the server's identity {} is not the one pinned in {} ({})",
                hex(live.key_id()),
                path.display(),
                hex(pinned.key_id())
            )
            .into());
        }
        return Ok(pinned);
    }
    write(path, &live.to_bytes())?;
    eprintln!(
        "pinned server identity {} in {}",
        hex(live.key_id()),
        path.display()
    );
    Ok(live)
}

pub fn remote(args: RemoteArgs) -> CliResult {
    let transport = remote::Transport {
        http2: false,
        ca_pem: args
            .ca
            .as_deref()
            .map(triskel_serve::tls::read_pem)
            .transpose()?,
    };
    let remote = Remote::with_transport(
        &args.url,
        Some(token(args.token_file.as_deref())?),
        &transport,
    )?;
    let job_json = |j: &remote::JobStatus| serde_json::json!({"id": j.id, "state": j.state, "error": j.error, "runs": j.runs});
    match args.what {
        RemoteCommand::Keys {
            keys,
            server_public,
        } => {
            pinned_identity(&remote, &server_public)?;
            let bytes = read(&keys, 1 << 36, "evaluation keys")?;
            println!("key set {}", remote.put_keys(&bytes)?);
            Ok(())
        }
        RemoteCommand::Submit {
            program,
            inputs,
            idempotency_key,
        } => {
            let program: Program = load_program(&program)?;
            let job =
                remote.submit(&program, &load_inputs(&inputs)?, idempotency_key.as_deref())?;
            print_json(&job_json(&job))
        }
        RemoteCommand::Wait {
            job,
            timeout_seconds,
        } => {
            let end = remote.wait(&job, Duration::from_secs(timeout_seconds))?;
            print_json(&job_json(&end))?;
            if end.state != "done" {
                return Err(format!("job {job} is {}", end.state).into());
            }
            Ok(())
        }
        RemoteCommand::Fetch {
            job,
            secret,
            server_public,
            inputs,
            out,
        } => {
            let client = Client::load(&secret)?;
            let server = pinned_identity(&remote, &server_public)?;
            let sent = load_inputs(&inputs)?;
            let outputs = remote.outputs(&job)?;
            remote::verify(&client, &sent, &outputs, &server)?;
            if let Some(out) = out {
                write(&out, &outputs.to_bytes())?;
            }
            print_json(&to_json(&client.decrypt(&outputs, &server)?))
        }
    }
}

/// `triskel demo --remote`: the router's demo programs through a service
/// on 127.0.0.1 over a temporary store (removed at the end): the client
/// encrypts, the service computes and attests, the client verifies every
/// record and decrypts.
pub fn demo_remote() -> CliResult {
    let store = std::env::temp_dir().join(format!("triskel-demo-store-{}", std::process::id()));
    let result = demo_through(&store);
    let _ = std::fs::remove_dir_all(&store);
    result
}

fn demo_through(store: &Path) -> CliResult {
    let mut config = Config::new(store.to_path_buf());
    config.listen = "127.0.0.1:0".parse()?;
    let token = triskel_serve::create_token(store, "demo", None)?;
    let running = triskel_serve::start(config)?;
    let url = running.url();
    let remote = Remote::new(&url, Some(token))?;
    let server = remote.identity()?;
    println!(
        "triskel serve on {url}, identity {}, tenant \"demo\"",
        hex(server.key_id())
    );
    for demo in programs::all()? {
        let start = std::time::Instant::now();
        let mut client = Client::new(&demo.program, triskel::PlanOptions::default())?;
        let keys = client.evaluation_keys()?.to_bytes();
        remote.put_keys(&keys)?;
        let context = format!("triskel demo --remote: {}", demo.name);
        let sent = client.encrypt_with_context(&demo.inputs, context.as_bytes())?;
        let job = remote.submit(&demo.program, &sent, None)?;
        let end = remote.wait(&job.id, Duration::from_secs(3600))?;
        if end.state != "done" {
            return Err(format!(
                "{}: job {} is {} ({:?})",
                demo.name, job.id, end.state, end.error
            )
            .into());
        }
        let outputs = remote.outputs(&job.id)?;
        remote::verify(&client, &sent, &outputs, &server)?;
        let error = (demo.check)(&client.decrypt(&outputs, &server)?)?;
        println!(
            "{}: keys {}, job {} done, {} record(s) verified against the server and the inputs sent, \
             check: {} (worst error {error:.2e}), {:.0} ms",
            demo.name,
            crate::split::size(keys.len()),
            job.id,
            outputs.entries().len(),
            if error <= 1e-4 { "correct" } else { "WRONG" },
            start.elapsed().as_secs_f64() * 1e3
        );
        if error > 1e-4 {
            return Err(
                format!("{} decrypted a wrong result through the service", demo.name).into(),
            );
        }
        remote.cancel(&job.id)?;
        remote.delete_keys(&triskel::attest::hex(client.key_set()))?;
    }
    running.stop();
    Ok(())
}
