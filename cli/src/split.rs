//! `triskel program`, `triskel client` and `triskel server`: the demo's
//! programs as files, and a run split between a key holder and an
//! evaluator in separate processes. Plain inputs and outputs are JSON
//! objects `{"name": [values]}`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::{Map, Number, Value};
use triskel::attest::files;
use triskel::wire::read_limited;
use triskel::{
    Client, EncryptedInputs, EncryptedOutputs, EvaluationKeys, Kind, Op, Outputs, PlainValue,
    PlanOptions, Program, Server, Session,
};

use crate::programs;
use crate::CliResult;

type Error = Box<dyn std::error::Error>;

/// Byte limits of the files read (each refused above its limit before it is read whole).
const MAX_PROGRAM_BYTES: u64 = 64 << 20;
const MAX_JSON_BYTES: u64 = 64 << 20;
pub const DEFAULT_MAX_KEY_BYTES: u64 = 4 << 30;
pub const MAX_CIPHERTEXT_FILE_BYTES: u64 = 1 << 30;

#[derive(Subcommand, Debug)]
pub enum ProgramCommand {
    /// The demo's programs.
    List,
    /// Writes a demo program as a program file (`Program::to_bytes`).
    Write {
        name: String,
        #[arg(long)]
        out: PathBuf,
    },
    /// Writes a demo program's example inputs as JSON.
    Inputs {
        name: String,
        #[arg(long)]
        out: PathBuf,
    },
    /// Runs a program file in one process (keys, encryption, evaluation and
    /// decryption) and prints the outputs as JSON.
    Run {
        #[arg(long)]
        program: PathBuf,
        #[arg(long)]
        inputs: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum ClientCommand {
    /// Plans a program, generates its keys, writes the secret state (mode
    /// 0600) and the evaluation keys for a server.
    Keygen {
        #[arg(long)]
        program: PathBuf,
        #[arg(long)]
        secret: PathBuf,
        #[arg(long)]
        keys: PathBuf,
        /// The least CKKS scale, log2.
        #[arg(long, value_name = "BITS")]
        ckks_scale_log2: Option<u32>,
        /// Allow key-holder round trips for conversions.
        #[arg(long)]
        allow_round_trips: bool,
    },
    /// Encrypts JSON inputs for a server (the state remembers them).
    Encrypt {
        #[arg(long)]
        secret: PathBuf,
        #[arg(long)]
        inputs: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// A context the server's records bind (UTF-8 text).
        #[arg(long, default_value = "")]
        context: String,
    },
    /// Verifies every record of a server's outputs, decrypts them and prints them as JSON.
    Decrypt {
        #[arg(long)]
        secret: PathBuf,
        #[arg(long)]
        server_public: PathBuf,
        #[arg(long)]
        outputs: PathBuf,
    },
    /// Makes the round trips a server's outputs ask for: writes the inputs of its next run.
    Continue {
        #[arg(long)]
        secret: PathBuf,
        #[arg(long)]
        server_public: PathBuf,
        /// The encrypted inputs of the run that gave `outputs`.
        #[arg(long)]
        inputs: PathBuf,
        #[arg(long)]
        outputs: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum ServerCommand {
    /// Generates the server's attestation identity (secret file mode 0600).
    Identity {
        #[arg(long)]
        secret: PathBuf,
        #[arg(long)]
        public: PathBuf,
    },
    /// Runs a program on encrypted inputs with evaluation keys only.
    Run {
        #[arg(long)]
        identity: PathBuf,
        #[arg(long)]
        program: PathBuf,
        #[arg(long)]
        keys: PathBuf,
        #[arg(long)]
        inputs: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// The largest evaluation-key file read, in bytes.
        #[arg(long, default_value_t = DEFAULT_MAX_KEY_BYTES)]
        max_key_bytes: u64,
    },
}

pub fn read(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, Error> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(read_limited(file, limit, what)?)
}

pub fn write(path: &Path, bytes: &[u8]) -> CliResult {
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// The demo programs by the names the commands take.
fn demos() -> Result<Vec<(&'static str, programs::Demo)>, Error> {
    let mut all = programs::all()?.into_iter();
    let mut next = || all.next().ok_or("a demo program is missing");
    Ok(vec![
        ("match", next()?),
        ("mlp", next()?),
        ("compare8", next()?),
    ])
}

fn demo(name: &str) -> Result<programs::Demo, Error> {
    let all = demos()?;
    let known: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
    let known = known.join(", ");
    match all.into_iter().find(|(n, _)| *n == name) {
        Some((_, d)) => Ok(d),
        None => Err(format!("no demo program named {name:?}; known: {known}").into()),
    }
}

pub fn load_program(path: &Path) -> Result<Program, Error> {
    Ok(Program::from_bytes(&read(
        path,
        MAX_PROGRAM_BYTES,
        "program",
    )?)?)
}

pub fn load_keys(path: &Path, limit: u64) -> Result<EvaluationKeys, Error> {
    Ok(EvaluationKeys::from_bytes(
        &read(path, limit, "evaluation keys")?,
        limit,
    )?)
}

pub fn load_inputs(path: &Path) -> Result<EncryptedInputs, Error> {
    Ok(EncryptedInputs::from_bytes(
        &read(path, MAX_CIPHERTEXT_FILE_BYTES, "inputs")?,
        MAX_CIPHERTEXT_FILE_BYTES,
    )?)
}

pub fn load_outputs(path: &Path) -> Result<EncryptedOutputs, Error> {
    Ok(EncryptedOutputs::from_bytes(
        &read(path, MAX_CIPHERTEXT_FILE_BYTES, "outputs")?,
        MAX_CIPHERTEXT_FILE_BYTES,
    )?)
}

/// Plain values as JSON numbers (integers), numbers (reals) or booleans (bits).
pub fn to_json(outputs: &Outputs) -> Value {
    let mut map = Map::new();
    for (name, v) in &outputs.values {
        let items: Vec<Value> = match v {
            PlainValue::Ints(v) => v
                .iter()
                .map(|&x| match (i64::try_from(x), u64::try_from(x)) {
                    (Ok(i), _) => Value::Number(i.into()),
                    (_, Ok(u)) => Value::Number(u.into()),
                    _ => Value::String(x.to_string()),
                })
                .collect(),
            PlainValue::Reals(v) => v
                .iter()
                .map(|&x| Number::from_f64(x).map_or(Value::Null, Value::Number))
                .collect(),
            PlainValue::Bits(v) => v.iter().map(|&b| Value::Bool(b)).collect(),
        };
        map.insert(name.clone(), Value::Array(items));
    }
    Value::Object(map)
}

fn inputs_json(inputs: &BTreeMap<String, PlainValue>) -> Value {
    to_json(&Outputs {
        values: inputs.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
    })
}

/// The program's inputs from a JSON object, each read as its declared kind.
pub fn parse_inputs(program: &Program, path: &Path) -> Result<BTreeMap<String, PlainValue>, Error> {
    let text = read(path, MAX_JSON_BYTES, "inputs")?;
    let json: Value =
        serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let Value::Object(map) = json else {
        return Err(format!(
            "{}: inputs must be a JSON object {{\"name\": [values]}}",
            path.display()
        )
        .into());
    };
    let kinds: BTreeMap<&str, Kind> = program
        .nodes()
        .iter()
        .filter_map(|n| match &n.op {
            Op::Input { name, kind } => Some((name.as_str(), *kind)),
            _ => None,
        })
        .collect();
    let mut out = BTreeMap::new();
    for (name, value) in map {
        let kind = kinds
            .get(name.as_str())
            .ok_or_else(|| format!("the program has no input {name:?}"))?;
        let Value::Array(items) = value else {
            return Err(format!("input {name:?} must be an array").into());
        };
        let bad = |i: usize| format!("input {name:?}: item {i} is not {}", kind.describe());
        let v = match kind {
            Kind::Real { .. } => PlainValue::Reals(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| x.as_f64().ok_or_else(|| bad(i)))
                    .collect::<Result<_, _>>()?,
            ),
            Kind::Bit { .. } => PlainValue::Bits(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| match x {
                        Value::Bool(b) => Ok(*b),
                        Value::Number(n) if n.as_u64() == Some(0) => Ok(false),
                        Value::Number(n) if n.as_u64() == Some(1) => Ok(true),
                        _ => Err(bad(i)),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            _ => PlainValue::Ints(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        x.as_i64()
                            .map(i128::from)
                            .or_else(|| x.as_u64().map(i128::from))
                            .ok_or_else(|| bad(i))
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        out.insert(name, v);
    }
    Ok(out)
}

pub fn print_json(v: &Value) -> CliResult {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

pub fn program(cmd: ProgramCommand) -> CliResult {
    match cmd {
        ProgramCommand::List => {
            for (name, d) in demos()? {
                println!("{name:10} {}", d.name);
            }
            Ok(())
        }
        ProgramCommand::Write { name, out } => write(&out, &demo(&name)?.program.to_bytes()),
        ProgramCommand::Inputs { name, out } => {
            let text = serde_json::to_string_pretty(&inputs_json(&demo(&name)?.inputs))?;
            write(&out, text.as_bytes())
        }
        ProgramCommand::Run { program, inputs } => {
            let program = load_program(&program)?;
            let inputs = parse_inputs(&program, &inputs)?;
            let mut session = Session::new();
            let mut plan = session.plan(&program)?;
            print_json(&to_json(&session.run(&mut plan, &inputs)?))
        }
    }
}

pub fn client(cmd: ClientCommand) -> CliResult {
    match cmd {
        ClientCommand::Keygen {
            program,
            secret,
            keys,
            ckks_scale_log2,
            allow_round_trips,
        } => {
            let program = load_program(&program)?;
            let options = PlanOptions {
                ckks_scale_log2,
                allow_round_trips,
                ..Default::default()
            };
            let client = Client::new(&program, options)?;
            client.save(&secret)?;
            let bytes = client.evaluation_keys()?.to_bytes();
            write(&keys, &bytes)?;
            println!(
                "key set {} ({} bytes of evaluation keys)",
                triskel::attest::hex(client.key_set()),
                bytes.len()
            );
            Ok(())
        }
        ClientCommand::Encrypt {
            secret,
            inputs,
            out,
            context,
        } => {
            let mut client = Client::load(&secret)?;
            let inputs = parse_inputs(client.plan().program(), &inputs)?;
            let encrypted = client.encrypt_with_context(&inputs, context.as_bytes())?;
            write(&out, &encrypted.to_bytes())?;
            Ok(client.save(&secret)?)
        }
        ClientCommand::Decrypt {
            secret,
            server_public,
            outputs,
        } => {
            let client = Client::load(&secret)?;
            let public = files::load_public(&server_public)?;
            let outputs = load_outputs(&outputs)?;
            print_json(&to_json(&client.decrypt(&outputs, &public)?))
        }
        ClientCommand::Continue {
            secret,
            server_public,
            inputs,
            outputs,
            out,
        } => {
            let mut client = Client::load(&secret)?;
            let public = files::load_public(&server_public)?;
            let sent = load_inputs(&inputs)?;
            let outputs = load_outputs(&outputs)?;
            let next = client.continue_round_trips(&sent, &outputs, &public)?;
            write(&out, &next.to_bytes())?;
            Ok(client.save(&secret)?)
        }
    }
}

pub fn server(cmd: ServerCommand) -> CliResult {
    match cmd {
        ServerCommand::Identity { secret, public } => {
            let public = files::keygen(&secret, &public)?;
            println!("server identity {}", triskel::attest::hex(public.key_id()));
            Ok(())
        }
        ServerCommand::Run {
            identity,
            program,
            keys,
            inputs,
            out,
            max_key_bytes,
        } => {
            let server = Server::new(files::load_identity(&identity, false)?);
            let program = load_program(&program)?;
            let keys = load_keys(&keys, max_key_bytes)?;
            let inputs = load_inputs(&inputs)?;
            let outputs = server.run(&program, keys.choice(), &keys, &inputs)?;
            write(&out, &outputs.to_bytes())?;
            if !outputs.is_final() {
                println!("round trips pending: run `triskel client continue`, then run again");
            }
            Ok(())
        }
    }
}

/// What a run split between a client and a server moved.
pub struct SplitRun {
    pub outputs: Outputs,
    pub key_bytes: usize,
    pub input_bytes: usize,
    pub output_bytes: usize,
    pub records: usize,
}

/// Runs `program` as two parties would: the client plans, makes keys and
/// encrypts; everything the server gets and returns crosses as bytes; the
/// client verifies every record and decrypts.
pub fn run_split(
    program: &Program,
    inputs: &BTreeMap<String, PlainValue>,
    context: &[u8],
) -> Result<SplitRun, Error> {
    let mut client = Client::new(program, PlanOptions::default())?;
    let keys = client.evaluation_keys()?.to_bytes();
    let sent = client.encrypt_with_context(inputs, context)?.to_bytes();
    let server = Server::new(triskel::attest::Identity::generate()?);
    let server_keys = EvaluationKeys::from_bytes(&keys, DEFAULT_MAX_KEY_BYTES)?;
    let received = EncryptedInputs::from_bytes(&sent, MAX_CIPHERTEXT_FILE_BYTES)?;
    let returned = server
        .run(program, server_keys.choice(), &server_keys, &received)?
        .to_bytes();
    let outputs = EncryptedOutputs::from_bytes(&returned, MAX_CIPHERTEXT_FILE_BYTES)?;
    let records = outputs.entries().len();
    Ok(SplitRun {
        outputs: client.decrypt(&outputs, server.identity().public())?,
        key_bytes: keys.len(),
        input_bytes: sent.len(),
        output_bytes: returned.len(),
        records,
    })
}

/// Bytes in kB or MB.
pub fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.1} kB", bytes as f64 / 1e3)
    }
}

/// One demo program's figures in `triskel bench split`.
#[derive(serde::Serialize)]
struct SplitFigures {
    name: &'static str,
    /// Medians over the rounds, microseconds.
    session_compute_us: f64,
    session_decrypt_us: f64,
    server_run_us: f64,
    signing_us: f64,
    /// (server run - signing) / session compute - 1, and the same against
    /// session compute + decrypt: the split's cost lies between them.
    overhead_high: f64,
    overhead_low: f64,
    key_bytes: usize,
    input_bytes: usize,
    output_bytes: usize,
    /// MB/s (10^6 bytes) of writing and of validated reading.
    keys_write_mb_s: f64,
    keys_read_mb_s: f64,
    /// Regenerating the loaded keys' seeded parts (once per loaded bundle,
    /// before its first run), microseconds.
    keys_expand_us: f64,
    inputs_write_mb_s: f64,
    inputs_read_mb_s: f64,
    outputs_write_mb_s: f64,
    outputs_read_mb_s: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    triskel::calibrate::median(&mut v)
}

/// Wall-clock microseconds of `f` (as the Session times its steps: compare
/// on an otherwise idle machine).
fn timed<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<(T, f64), Error> {
    let start = std::time::Instant::now();
    let v = f()?;
    Ok((v, start.elapsed().as_secs_f64() * 1e6))
}

/// Mean wall-clock microseconds per call of a format's `f`, called until
/// 2 ms have passed (a small object is timed over many calls, a large one
/// once), with its last value.
fn timed_format<T>(mut f: impl FnMut() -> Result<T, Error>) -> Result<(T, f64), Error> {
    let start = std::time::Instant::now();
    let mut calls = 0u32;
    loop {
        let v = f()?;
        calls += 1;
        let elapsed = start.elapsed();
        if elapsed >= std::time::Duration::from_millis(2) {
            return Ok((v, elapsed.as_secs_f64() * 1e6 / f64::from(calls)));
        }
    }
}

/// One program: `rounds` interleaved rounds of a Session run and of a
/// client/server run, on one thread.
fn split_figures(
    name: &'static str,
    demo: &programs::Demo,
    rounds: usize,
) -> Result<SplitFigures, Error> {
    use triskel::StepKind;
    let mut session = Session::new();
    let mut plan = session.plan(&demo.program)?;
    session.run(&mut plan, &demo.inputs)?;
    let mut client = Client::new(&demo.program, PlanOptions::default())?;
    let server = Server::new(triskel::attest::Identity::generate()?);
    let (key_bytes, keys_write) = timed(|| Ok(client.evaluation_keys()?.to_bytes()))?;
    let (keys, keys_read) = timed(|| {
        Ok(EvaluationKeys::from_bytes(
            &key_bytes,
            DEFAULT_MAX_KEY_BYTES,
        )?)
    })?;
    // Once per loaded bundle, as the Session's first run above generates
    // its keys.
    let ((), keys_expand) = timed(|| Ok(keys.expand()?))?;
    server.run(
        &demo.program,
        keys.choice(),
        &keys,
        &client.encrypt(&demo.inputs)?,
    )?;
    let mut s = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut io = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut key_io = [vec![keys_write], vec![keys_read]];
    let (mut input_bytes, mut output_bytes) = (0, 0);
    for _ in 0..rounds {
        let (bytes, w) = timed_format(|| Ok(client.evaluation_keys()?.to_bytes()))?;
        let (_, r) =
            timed_format(|| Ok(EvaluationKeys::from_bytes(&bytes, DEFAULT_MAX_KEY_BYTES)?))?;
        key_io[0].push(w);
        key_io[1].push(r);
        session.run(&mut plan, &demo.inputs)?;
        let step = |f: &dyn Fn(&StepKind) -> bool| -> f64 {
            plan.steps()
                .iter()
                .filter(|st| f(&st.kind))
                .filter_map(|st| st.measured_ns)
                .sum::<f64>()
                / 1e3
        };
        s[0].push(step(&|k| {
            matches!(k, StepKind::Op(_) | StepKind::Transition { .. })
        }));
        s[1].push(step(&|k| matches!(k, StepKind::Decrypt(_))));
        let sent = client.encrypt(&demo.inputs)?;
        let (bytes, w) = timed_format(|| Ok(sent.to_bytes()))?;
        let (inputs, r) = timed_format(|| {
            Ok(EncryptedInputs::from_bytes(
                &bytes,
                MAX_CIPHERTEXT_FILE_BYTES,
            )?)
        })?;
        input_bytes = bytes.len();
        io[0].push(w);
        io[1].push(r);
        let (outputs, run) =
            timed(|| Ok(server.run(&demo.program, keys.choice(), &keys, &inputs)?))?;
        s[2].push(run);
        // What signing the run's records costs alone, in the same round.
        let digests = inputs.digests();
        let (_, sign) = timed(|| {
            for e in outputs.entries() {
                let computation = triskel::attest::Computation {
                    program: *keys.program_digest(),
                    key_set: keys.id(),
                    inputs: &digests,
                    output: e.digest(),
                };
                let route = triskel::route(&plan);
                triskel::attest::attest_computation(server.identity(), &computation, &route, b"")?;
            }
            Ok(())
        })?;
        s[3].push(sign);
        let (bytes, w) = timed_format(|| Ok(outputs.to_bytes()))?;
        let (back, r) = timed_format(|| {
            Ok(EncryptedOutputs::from_bytes(
                &bytes,
                MAX_CIPHERTEXT_FILE_BYTES,
            )?)
        })?;
        output_bytes = bytes.len();
        io[2].push(w);
        io[3].push(r);
        let error = (demo.check)(&client.decrypt(&back, server.identity().public())?)?;
        if error > 1e-4 {
            return Err(format!("{name}: a wrong result through Client + Server").into());
        }
    }
    let [compute, decrypt, run, sign] = s.map(median);
    let [iw, ir, ow, or] = io.map(median);
    let [keys_write, keys_read] = key_io.map(median);
    let rate = |bytes: usize, us: f64| bytes as f64 / us;
    Ok(SplitFigures {
        name,
        session_compute_us: compute,
        session_decrypt_us: decrypt,
        server_run_us: run,
        signing_us: sign,
        overhead_high: (run - sign) / compute - 1.0,
        overhead_low: (run - sign) / (compute + decrypt) - 1.0,
        key_bytes: key_bytes.len(),
        input_bytes,
        output_bytes,
        keys_write_mb_s: rate(key_bytes.len(), keys_write),
        keys_read_mb_s: rate(key_bytes.len(), keys_read),
        keys_expand_us: keys_expand,
        inputs_write_mb_s: rate(input_bytes, iw),
        inputs_read_mb_s: rate(input_bytes, ir),
        outputs_write_mb_s: rate(output_bytes, ow),
        outputs_read_mb_s: rate(output_bytes, or),
    })
}

/// `triskel bench split`: what the client/server split costs against the
/// one-process Session, and how fast its formats are, on one thread.
pub fn bench(rounds: usize, json: bool) -> CliResult {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let figures = pool.install(|| {
        demos()
            .map_err(|e| e.to_string())?
            .iter()
            .map(|(name, d)| split_figures(name, d, rounds.max(1)))
            .collect::<Result<Vec<_>, Error>>()
            .map_err(|e| e.to_string())
    })?;
    let cpu = triskel::kernels::cpu_model();
    if json {
        let report =
            serde_json::json!({"cpu": cpu, "threads": 1, "rounds": rounds, "programs": figures});
        return print_json(&report);
    }
    println!("cpu: {cpu}  threads: 1  rounds: {rounds} (medians)");
    println!(
        "{:10} {:>12} {:>12} {:>12} {:>10} {:>16} {:>10} {:>14} {:>10} {:>14}",
        "program",
        "session us",
        "decrypt us",
        "server us",
        "sign us",
        "split cost",
        "keys",
        "keys w/r MB/s",
        "expand us",
        "inputs w/r MB/s"
    );
    for f in &figures {
        println!(
            "{:10} {:>12.0} {:>12.0} {:>12.0} {:>10.0} {:>7.2}%..{:>5.2}% {:>10} {:>6.0}/{:<7.0} {:>10.0} {:>6.0}/{:<7.0}",
            f.name,
            f.session_compute_us,
            f.session_decrypt_us,
            f.server_run_us,
            f.signing_us,
            100.0 * f.overhead_low,
            100.0 * f.overhead_high,
            size(f.key_bytes),
            f.keys_write_mb_s,
            f.keys_read_mb_s,
            f.keys_expand_us,
            f.inputs_write_mb_s,
            f.inputs_read_mb_s,
        );
    }
    Ok(())
}
