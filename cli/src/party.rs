//! `triskel party`: k-of-n threshold keys with one process per party. The
//! key generation exchanges its messages as files in a directory that
//! every party can read (it stands for the channels: in a deployment the
//! deals travel on private channels); a decryption is one share file per
//! party, combined by any of them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Subcommand;
use triskel::attest::{files, PublicIdentity};
use triskel::{EncryptedInputs, EncryptedOutputs, Encryptor, Party, PartySession, PlanOptions};

use crate::split::{
    load_inputs, load_keys, load_outputs, load_program, parse_inputs, print_json, read, to_json,
    write, DEFAULT_MAX_KEY_BYTES,
};
use crate::CliResult;

type Error = Box<dyn std::error::Error>;

const MAX_SESSION_BYTES: u64 = 64 << 20;
const MAX_MESSAGE_BYTES: u64 = 1 << 30;

#[derive(Subcommand, Debug)]
pub enum PartyCommand {
    /// Plans a program for k-of-n threshold keys and writes the parties' public session.
    Session {
        #[arg(long)]
        program: PathBuf,
        /// Parties needed to decrypt.
        #[arg(long)]
        k: u16,
        /// Parties.
        #[arg(long)]
        n: u16,
        #[arg(long)]
        out: PathBuf,
        /// The least CKKS scale, log2.
        #[arg(long, value_name = "BITS")]
        ckks_scale_log2: Option<u32>,
    },
    /// Runs one party's key generation (two rounds), exchanging messages as files in `dir`
    /// with the other parties' processes; writes its secret state (mode 0600) and the
    /// evaluation keys (the same at every party).
    Keygen {
        #[arg(long)]
        session: PathBuf,
        /// This party, 0..n.
        #[arg(long)]
        index: u16,
        #[arg(long)]
        dir: PathBuf,
        #[arg(long)]
        state: PathBuf,
        #[arg(long)]
        keys: PathBuf,
        /// Seconds to wait for the other parties' messages.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
    },
    /// Encrypts JSON inputs under the collective keys (anyone holding the evaluation keys).
    Encrypt {
        #[arg(long)]
        program: PathBuf,
        #[arg(long)]
        keys: PathBuf,
        #[arg(long)]
        inputs: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// A context the server's records bind (UTF-8 text).
        #[arg(long, default_value = "")]
        context: String,
    },
    /// Verifies a server's outputs and writes this party's decryption share for the set of
    /// parties given; the state's release counts are saved first.
    Share {
        #[command(flatten)]
        run: RunFiles,
        #[arg(long)]
        out: PathBuf,
    },
    /// Combines the set's decryption shares (one file per party) and prints the outputs as JSON.
    Combine {
        #[command(flatten)]
        run: RunFiles,
        /// The shares of the parties of `--set`, in any order.
        #[arg(long, num_args = 1.., required = true)]
        shares: Vec<PathBuf>,
    },
}

/// What a decryption reads: the party, the run and the decryption set.
#[derive(clap::Args, Debug)]
pub struct RunFiles {
    #[arg(long)]
    state: PathBuf,
    #[arg(long)]
    keys: PathBuf,
    #[arg(long)]
    server_public: PathBuf,
    /// The encrypted inputs of the run.
    #[arg(long)]
    inputs: PathBuf,
    #[arg(long)]
    outputs: PathBuf,
    /// The decrypting parties, e.g. `0,2,4`.
    #[arg(long, value_delimiter = ',', required = true)]
    set: Vec<u16>,
    /// The largest evaluation-key file read, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_KEY_BYTES)]
    max_key_bytes: u64,
}

fn load_session(path: &Path) -> Result<PartySession, Error> {
    Ok(PartySession::from_bytes(
        &read(path, MAX_SESSION_BYTES, "party session")?,
        MAX_SESSION_BYTES,
    )?)
}

/// Writes `bytes` whole or not at all (a temporary file renamed), mode
/// 0600 when `private`: the other parties poll for the name.
fn publish(path: &Path, bytes: &[u8], private: bool) -> CliResult {
    use std::io::Write;
    let tmp = path.with_extension("partial");
    let io = |e: std::io::Error| format!("{}: {e}", tmp.display());
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// The files `names` in `dir`, waiting for those not there yet until
/// `deadline`.
fn collect(dir: &Path, names: &[String], deadline: Instant) -> Result<Vec<Vec<u8>>, Error> {
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let path = dir.join(name);
        while !path.exists() {
            if Instant::now() >= deadline {
                return Err(format!("timed out waiting for {}", path.display()).into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        out.push(read(&path, MAX_MESSAGE_BYTES, "party message")?);
    }
    Ok(out)
}

fn keygen(
    session: &Path,
    index: u16,
    dir: &Path,
    state: &Path,
    keys: &Path,
    timeout: u64,
) -> CliResult {
    let session = load_session(session)?;
    let (_, n) = session.threshold();
    let deadline = Instant::now() + Duration::from_secs(timeout);
    let mut party = Party::new(&session, index)?;
    let round1 = party.keygen_round1()?;
    for (to, deal) in round1.deals.iter().enumerate() {
        publish(&dir.join(format!("deal-{index}-to-{to}")), deal, true)?;
    }
    publish(&dir.join(format!("round1-{index}")), &round1.public, false)?;
    let names = |f: &dyn Fn(u16) -> String| (0..n).map(f).collect::<Vec<_>>();
    let public = collect(dir, &names(&|j| format!("round1-{j}")), deadline)?;
    let deals = match round1.deals.is_empty() {
        true => Vec::new(),
        false => collect(dir, &names(&|j| format!("deal-{j}-to-{index}")), deadline)?,
    };
    let round2 = party.keygen_round2(&public, &deals)?;
    publish(&dir.join(format!("round2-{index}")), &round2, false)?;
    let round2 = collect(dir, &names(&|j| format!("round2-{j}")), deadline)?;
    party.keygen_finish(&round2)?;
    party.save(state)?;
    let bytes = party.evaluation_keys()?.to_bytes();
    write(keys, &bytes)?;
    println!(
        "party {index}: key set {} ({} bytes of evaluation keys)",
        triskel::attest::hex(&party.evaluation_keys()?.id()),
        bytes.len()
    );
    Ok(())
}

/// The party and the run of a decryption.
fn load_run(
    run: &RunFiles,
) -> Result<(Party, EncryptedInputs, EncryptedOutputs, PublicIdentity), Error> {
    let keys = load_keys(&run.keys, run.max_key_bytes)?;
    let party = Party::load(&run.state, &keys)?;
    Ok((
        party,
        load_inputs(&run.inputs)?,
        load_outputs(&run.outputs)?,
        files::load_public(&run.server_public)?,
    ))
}

pub fn run(cmd: PartyCommand) -> CliResult {
    match cmd {
        PartyCommand::Session {
            program,
            k,
            n,
            out,
            ckks_scale_log2,
        } => {
            let program = load_program(&program)?;
            let options = PlanOptions {
                ckks_scale_log2,
                ..Default::default()
            };
            let session = PartySession::new(&program, options.threshold(k, n))?;
            write(&out, &session.to_bytes())?;
            print!("{}", session.plan().explain());
            Ok(())
        }
        PartyCommand::Keygen {
            session,
            index,
            dir,
            state,
            keys,
            timeout,
        } => keygen(&session, index, &dir, &state, &keys, timeout),
        PartyCommand::Encrypt {
            program,
            keys,
            inputs,
            out,
            context,
        } => {
            let program = load_program(&program)?;
            let keys = load_keys(&keys, DEFAULT_MAX_KEY_BYTES)?;
            let inputs = parse_inputs(&program, &inputs)?;
            let encrypted =
                Encryptor::new(&program, &keys)?.encrypt(&inputs, context.as_bytes())?;
            write(&out, &encrypted.to_bytes())
        }
        PartyCommand::Share { run, out } => {
            let (party, inputs, outputs, server) = load_run(&run)?;
            let share = party.decryption_share(&outputs, &inputs, &server, &run.set)?;
            party.save(&run.state)?;
            write(&out, &share)
        }
        PartyCommand::Combine { run, shares } => {
            let (party, inputs, outputs, server) = load_run(&run)?;
            let shares = shares
                .iter()
                .map(|p| read(p, MAX_MESSAGE_BYTES, "decryption share"))
                .collect::<Result<Vec<_>, _>>()?;
            let plain = party.combine(&outputs, &inputs, &server, &run.set, &shares)?;
            print_json(&to_json(&plain))
        }
    }
}
