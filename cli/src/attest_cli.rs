//! `triskel attest keygen | sign | verify | inspect`: attestation records on files
//! (see the `triskel-attest` crate for the formats).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::{json, Value};
use triskel_attest::files::{self, RecordFiles};
use triskel_attest::{hex, signed_message, Error, Record, RecordKind, Route, Verified};

/// The `triskel attest` subcommands.
#[derive(Subcommand, Debug)]
pub enum AttestCommand {
    /// Creates an identity (suite 2: one ML-DSA-65, Falcon-512 and SLH-DSA-SHA2-128f key
    /// pair) in two new files.
    Keygen {
        /// Secret identity file to create (mode 0600; never overwritten).
        #[arg(long)]
        secret: PathBuf,
        /// Public identity file to create, for verifiers.
        #[arg(long)]
        public: PathBuf,
    },
    /// Attests a result file: writes its 74-byte receipt and its signature bundle.
    Sign {
        /// Secret identity file (refused if group or others may access it).
        #[arg(long)]
        secret: PathBuf,
        /// Use the secret identity file even if group or others may access it.
        #[arg(long)]
        allow_insecure_key_file: bool,
        #[command(flatten)]
        record: RecordArgs,
    },
    /// Verifies a result file against its receipt and bundle; fails unless all three
    /// signatures verify.
    Verify {
        /// Public identity file of the signer.
        #[arg(long)]
        public: PathBuf,
        #[command(flatten)]
        record: RecordArgs,
    },
    /// Prints everything a standard verifier needs to check each signature of a record
    /// on its own: suite, timestamp, key id, digests, the exact signed message, public keys
    /// and signatures, in hex. Checks that receipt and bundle belong together; does not
    /// verify the signatures (`verify` does).
    Inspect {
        /// Receipt file.
        receipt: PathBuf,
        /// Signature bundle file.
        bundle: PathBuf,
        /// Public identity file of the signer, to print its public keys (its key id must
        /// be the record's).
        #[arg(long)]
        public: Option<PathBuf>,
        /// Print one JSON object (shape in the triskel-attest README).
        #[arg(long)]
        json: bool,
    },
}

/// The result, the routing decision, the context and the record files.
#[derive(Args, Debug)]
pub struct RecordArgs {
    /// File holding the result bytes.
    #[arg(long)]
    result: PathBuf,
    /// Engine that computed the result (e.g. bfv).
    #[arg(long)]
    engine: String,
    /// Parameter-set id the engine used.
    #[arg(long)]
    params: String,
    /// Caller context (who asked, for what), as text.
    #[arg(long, default_value = "")]
    context: String,
    /// Receipt file [default: RESULT.receipt].
    #[arg(long)]
    receipt: Option<PathBuf>,
    /// Signature bundle file [default: RESULT.bundle].
    #[arg(long)]
    bundle: Option<PathBuf>,
}

impl RecordArgs {
    /// Calls `f` with the record's files, defaults filled in.
    fn with_files<T>(&self, f: impl FnOnce(RecordFiles<'_>) -> T) -> T {
        let or_default = |given: &Option<PathBuf>, suffix| {
            given
                .clone()
                .unwrap_or_else(|| with_suffix(&self.result, suffix))
        };
        let (receipt, bundle) = (
            or_default(&self.receipt, ".receipt"),
            or_default(&self.bundle, ".bundle"),
        );
        f(RecordFiles {
            result: &self.result,
            receipt: &receipt,
            bundle: &bundle,
        })
    }

    fn route(&self) -> Route {
        Route::new(self.engine.clone(), self.params.clone())
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Runs one `triskel attest` subcommand, printing what it did to stdout.
pub fn run(cmd: AttestCommand) -> Result<(), Box<dyn std::error::Error>> {
    match cmd {
        AttestCommand::Keygen { secret, public } => {
            let identity = files::keygen(&secret, &public)?;
            println!("suite:   {}", identity.suite().describe());
            println!("key id:  {}", hex(identity.key_id()));
            println!("secret:  {}", secret.display());
            println!("public:  {}", public.display());
        }
        AttestCommand::Sign {
            secret,
            allow_insecure_key_file,
            record,
        } => {
            let context = record.context.as_bytes();
            record.with_files(|paths| -> Result<(), Error> {
                let signed = files::sign(
                    &secret,
                    allow_insecure_key_file,
                    paths,
                    &record.route(),
                    context,
                )?;
                println!("suite:      {}", signed.receipt.suite.describe());
                println!("signer:     {}", hex(signed.bundle.key_id()));
                println!("commitment: {}", hex(&signed.receipt.commitment));
                println!(
                    "timestamp:  {} ms since the Unix epoch",
                    signed.receipt.timestamp_ms
                );
                println!("receipt:    {}", paths.receipt.display());
                println!("bundle:     {}", paths.bundle.display());
                Ok(())
            })?;
        }
        AttestCommand::Verify { public, record } => {
            let context = record.context.as_bytes();
            let (_, verified) = record
                .with_files(|paths| files::verify(&public, paths, &record.route(), context))?;
            print_verified(&verified);
        }
        AttestCommand::Inspect {
            receipt,
            bundle,
            public,
            json,
        } => {
            let report = inspect(&receipt, &bundle, public.as_deref())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print_inspection(&report);
            }
        }
    }
    Ok(())
}

fn print_verified(verified: &Verified) {
    let [a, b, c] = verified.suite.algorithms();
    println!("verified:   all three signatures valid: {a}; {b}; {c}");
    println!("suite:      {}", verified.suite.id());
    println!("signer:     {}", hex(&verified.key_id));
    println!("commitment: {}", hex(&verified.commitment));
    println!(
        "timestamp:  {} ms since the Unix epoch",
        verified.timestamp_ms
    );
}

/// The inspection of a record as one JSON value (the shape the crate README documents).
fn inspect(receipt: &Path, bundle: &Path, public: Option<&Path>) -> Result<Value, Error> {
    let record: Record = files::load_record(receipt, bundle)?;
    let (receipt, bundle) = (&record.receipt, &record.bundle);
    if bundle.digest() != receipt.bundle_digest {
        return Err(Error::BundleDigestMismatch);
    }
    if receipt.suite != bundle.suite() {
        return Err(Error::SuiteMismatch);
    }
    if bundle.commitment(receipt.timestamp_ms) != receipt.commitment {
        return Err(Error::CommitmentMismatch);
    }
    let public = public.map(files::load_public).transpose()?;
    if public
        .as_ref()
        .is_some_and(|p| p.key_id() != bundle.key_id())
    {
        return Err(Error::WrongIdentity);
    }
    if public.as_ref().is_some_and(|p| p.suite() != bundle.suite()) {
        return Err(Error::SuiteMismatch);
    }
    let suite = receipt.suite;
    let message = hex(&signed_message(&receipt.commitment));
    let keys = public.as_ref().map(|p| p.public_keys());
    let signatures: Vec<Value> = (0..3)
        .map(|i| {
            json!({
                "family": suite.families()[i],
                "algorithm": suite.algorithms()[i],
                "message": message,
                "context": suite.contexts()[i].map(hex),
                "public_key": keys.map(|k| hex(k[i])),
                "signature": hex(bundle.signatures()[i]),
            })
        })
        .collect();
    Ok(json!({
        "version": record.version(),
        "suite": suite.id(),
        "suite_name": suite.describe(),
        "kind": match bundle.kind() {
            RecordKind::Single => "single",
            RecordKind::Batch => "batch",
            RecordKind::Computation => "computation",
        },
        "timestamp_ms": receipt.timestamp_ms,
        "key_id": hex(bundle.key_id()),
        "nonce": hex(bundle.nonce()),
        "subject": hex(bundle.subject()),
        "route_digest": hex(bundle.route_digest()),
        "context_digest": hex(bundle.context_digest()),
        "commitment": hex(&receipt.commitment),
        "bundle_digest": hex(&receipt.bundle_digest),
        "signed_message": message,
        "signatures": signatures,
    }))
}

fn print_inspection(report: &Value) {
    let text = |v: &Value| match v {
        Value::String(s) if s.is_empty() => "(empty)".into(),
        Value::String(s) => s.clone(),
        Value::Null => "(not given)".into(),
        other => other.to_string(),
    };
    for key in [
        "version",
        "suite_name",
        "kind",
        "timestamp_ms",
        "key_id",
        "nonce",
        "subject",
        "route_digest",
        "context_digest",
        "commitment",
        "bundle_digest",
        "signed_message",
    ] {
        println!("{key}: {}", text(&report[key]));
    }
    for sig in report["signatures"].as_array().into_iter().flatten() {
        println!("{}:", text(&sig["algorithm"]));
        for key in ["message", "context", "public_key", "signature"] {
            let shown = match (key, &sig[key]) {
                ("context", Value::Null) => "(none: the scheme has no context string)".into(),
                (_, value) => text(value),
            };
            println!("  {key}: {shown}");
        }
    }
}
