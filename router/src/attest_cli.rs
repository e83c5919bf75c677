//! `triskel attest keygen | sign | verify`: attestation records on files
//! (see the `triskel-attest` crate for the formats).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use triskel_attest::files::{self, RecordFiles};
use triskel_attest::{hex, Record, Route, BUNDLE_LEN, RECEIPT_LEN};

/// The `triskel attest` subcommands.
#[derive(Subcommand, Debug)]
pub enum AttestCommand {
    /// Creates an identity: one ML-DSA-65, Falcon-512 and SLH-DSA key pair, in two new files.
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
        /// Secret identity file.
        #[arg(long)]
        secret: PathBuf,
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
    /// Receipt file [default: <result>.receipt].
    #[arg(long)]
    receipt: Option<PathBuf>,
    /// Signature bundle file [default: <result>.bundle].
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
            println!("key id:  {}", hex(identity.key_id()));
            println!("secret:  {}", secret.display());
            println!("public:  {}", public.display());
        }
        AttestCommand::Sign { secret, record } => {
            let context = record.context.as_bytes();
            record.with_files(|paths| -> Result<(), triskel_attest::Error> {
                let signed = files::sign(&secret, paths, &record.route(), context)?;
                print_record(&signed);
                println!(
                    "receipt:    {} ({RECEIPT_LEN} bytes)",
                    paths.receipt.display()
                );
                println!(
                    "bundle:     {} ({BUNDLE_LEN} bytes)",
                    paths.bundle.display()
                );
                Ok(())
            })?;
        }
        AttestCommand::Verify { public, record } => {
            let context = record.context.as_bytes();
            let verified = record
                .with_files(|paths| files::verify(&public, paths, &record.route(), context))?;
            println!("verified: ML-DSA-65, Falcon-512 and SLH-DSA signatures all valid");
            print_record(&verified);
        }
    }
    Ok(())
}

fn print_record(record: &Record) {
    println!("signer:     {}", hex(record.bundle.key_id()));
    println!("commitment: {}", hex(&record.receipt.commitment));
    println!(
        "timestamp:  {} ms since the Unix epoch",
        record.receipt.timestamp_ms
    );
}
