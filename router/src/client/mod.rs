//! The key holder: secret keys, key generation, encryption, decryption and
//! the check of a server's records.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use triskel_attest::{Computation, Digest32, PublicIdentity};
use triskel_bfv as bfv;
use triskel_ckks as ckks;
use triskel_tfhe as tfhe;
use zeroize::Zeroizing;

use crate::cost::CostModel;
use crate::error::{Error, Result};
use crate::exec::{check_inputs, Outputs, PlainValue};
use crate::plan::{
    ckks_needs, key_needs, plan_chosen, plan_with, transition_sets, BfvEncoding, Placement, Plan,
    PlanOptions,
};
use crate::program::{Kind, Op, Program};
use crate::server::{
    bfv_plain, ckks_plain, wrong, BfvEval, CkksEval, EvaluationKeys, Released, TfheEval, Val,
};
use crate::transition::TransitionKey;
use crate::wire::{
    bad, decode_tfhe, encode_val, read_limited, read_lwe, Encoded, EncryptedInputs,
    EncryptedOutputs, InputValue, Reader, Slot, Writer, TAG_COMPRESSED_BITS, TAG_COMPRESSED_RADIX,
};

mod keystore;
mod open;

pub(crate) use self::keystore::*;
pub(crate) use self::open::*;

const STATE_MAGIC: &[u8; 7] = b"TRSKCLS";
/// The most input sets a client remembers having sent (the oldest go first).
const REMEMBERED_INPUTS: usize = 256;
/// The largest saved client state read (secret keys are small).
pub const MAX_CLIENT_STATE_BYTES: u64 = 64 << 20;

/// The key holder of one program: it plans the program, generates exactly
/// the keys the plan needs, exports the evaluation keys for a
/// [`Server`](crate::Server), encrypts inputs, and decrypts outputs after
/// verifying the server's records.
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{attest::Identity, Client, Kind, PlainValue, PlanOptions, Program, Server};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Modular { len: 4, modulus: 65537 })?;
/// let y = p.add_scalar(x, triskel::Scalar::Int(5))?;
/// p.output("y", y)?;
///
/// let mut client = Client::new(&p, PlanOptions::default())?;
/// let keys = client.evaluation_keys()?.clone();
/// let inputs = client.encrypt(&BTreeMap::from([("x".into(), PlainValue::Ints(vec![1, 2, 3, 4]))]))?;
///
/// // The server sees the program, the plan choice, the keys and the inputs.
/// let server = Server::new(Identity::generate()?);
/// let outputs = server.run(&p, keys.choice(), &keys, &inputs)?;
///
/// let plain = client.decrypt(&outputs, server.identity().public())?;
/// assert_eq!(plain.get("y"), Some(&PlainValue::Ints(vec![6, 7, 8, 9])));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Client {
    plan: Plan,
    store: KeyStore,
    /// `None` after [`Client::load`].
    keys: Option<EvaluationKeys>,
    key_set: Digest32,
    program: Digest32,
    flooding: Option<ckks::Flooding>,
    /// The digests of the input sets sent, newest last.
    sent: Vec<Vec<Digest32>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("key_set", &triskel_attest::hex(&self.key_set))
            .field("plan", &self.plan.choice().describe())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Plans `program` with this machine's cost model and what `options`
    /// allow, and generates its keys.
    pub fn new(program: &Program, options: PlanOptions) -> Result<Client> {
        Client::with_costs(program, options, &CostModel::load().0)
    }

    /// Plans `program` with `costs` and generates its keys.
    pub fn with_costs(
        program: &Program,
        options: PlanOptions,
        costs: &CostModel,
    ) -> Result<Client> {
        one_key_holder(&options, "client")?;
        let plan = plan_with(program, costs, options)?;
        let mut store = KeyStore::default();
        store.keygen(&plan)?;
        let keys = store.evaluation_keys(&plan, None)?;
        Ok(Client {
            key_set: keys.id(),
            program: keys.program,
            plan,
            store,
            keys: Some(keys),
            flooding: None,
            sent: Vec::new(),
        })
    }

    /// The plan the keys were made for.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The key-set id of its evaluation keys.
    pub fn key_set(&self) -> &Digest32 {
        &self.key_set
    }

    /// The evaluation keys for a server: public material only, carrying
    /// the plan choice they were made for. Refused for a client loaded from
    /// its saved state (they are exported once, at key generation).
    pub fn evaluation_keys(&self) -> Result<&EvaluationKeys> {
        self.keys.as_ref().ok_or_else(|| {
            Error::Unsupported(
                "a client loaded from its saved state holds no evaluation keys (they are \
                 written once, at key generation)"
                    .into(),
            )
        })
    }

    /// Decrypts CKKS outputs released in slots with noise flooding, or
    /// plainly with `None` (the default); see
    /// [`Session::flood_ckks_releases`](crate::Session::flood_ckks_releases).
    pub fn flood_ckks_releases(&mut self, flooding: Option<ckks::Flooding>) {
        self.flooding = flooding;
    }

    /// Encrypts `inputs` (checked first: nothing is encrypted on bad input).
    pub fn encrypt(&mut self, inputs: &BTreeMap<String, PlainValue>) -> Result<EncryptedInputs> {
        self.encrypt_with_context(inputs, &[])
    }

    /// Encrypts `inputs` with a context (at most
    /// [`MAX_CONTEXT_BYTES`](crate::wire::MAX_CONTEXT_BYTES) bytes) that the
    /// server's records bind.
    pub fn encrypt_with_context(
        &mut self,
        inputs: &BTreeMap<String, PlainValue>,
        context: &[u8],
    ) -> Result<EncryptedInputs> {
        if context.len() > crate::wire::MAX_CONTEXT_BYTES {
            return input_err(format!(
                "a context of {} bytes (at most {})",
                context.len(),
                crate::wire::MAX_CONTEXT_BYTES
            ));
        }
        check_inputs(&self.plan.program, inputs)?;
        let mut values = Vec::new();
        for (i, node) in self.plan.program.nodes.iter().enumerate() {
            if let Op::Input { name, .. } = &node.op {
                values.push(InputValue {
                    node: i as u32,
                    value: self.store.encrypt_wire(&self.plan, i, &inputs[name])?,
                });
            }
        }
        Ok(self.sending(EncryptedInputs {
            key_set: self.key_set,
            context: context.to_vec(),
            values,
        }))
    }

    /// Remembers the digests of inputs about to be sent.
    fn sending(&mut self, inputs: EncryptedInputs) -> EncryptedInputs {
        if self.sent.len() == REMEMBERED_INPUTS {
            self.sent.remove(0);
        }
        self.sent.push(inputs.digests());
        inputs
    }

    /// Checks that `outputs` answer inputs this client sent
    /// ([`verify_outputs`]).
    fn verify(&self, outputs: &EncryptedOutputs, server: &PublicIdentity) -> Result<()> {
        verify_outputs(
            &self.plan,
            &self.program,
            &self.key_set,
            &self.sent,
            outputs,
            server,
        )
    }

    /// Decrypts the outputs of a run after verifying every record against
    /// `server`: refused when they were made under another key set, for
    /// another program or plan, on inputs this client did not send, or
    /// when any record does not verify.
    pub fn decrypt(&self, outputs: &EncryptedOutputs, server: &PublicIdentity) -> Result<Outputs> {
        self.verify(outputs, server)?;
        let plan = &self.plan;
        check_final(plan, outputs)?;
        self.store.check_floods(plan, self.flooding.as_ref())?;
        let mut values = Vec::new();
        for (o, e) in outputs.entries.iter().enumerate() {
            let (name, i) = plan.program.outputs[o].clone();
            let released = self.store.decode_released(plan, i as usize, &e.value)?;
            values.push((
                name,
                self.store
                    .open(plan, i as usize, &released, self.flooding.as_ref())?,
            ));
        }
        Ok(Outputs { values })
    }

    /// The key holder's half of the round trips `outputs` ask for (after
    /// verifying their records): each value decrypted, converted and
    /// encrypted again; returns `sent` with those values added, for the
    /// server's next run.
    pub fn continue_round_trips(
        &mut self,
        sent: &EncryptedInputs,
        outputs: &EncryptedOutputs,
        server: &PublicIdentity,
    ) -> Result<EncryptedInputs> {
        self.verify(outputs, server)?;
        if sent.digests() != outputs.inputs {
            return Err(Error::Refused {
                op: "round trip".into(),
                msg: "the outputs were computed on other inputs than `sent`".into(),
            });
        }
        let plan = &self.plan;
        let mut values = sent.values.clone();
        for e in &outputs.entries {
            let Slot::RoundTrip(i) = e.slot else {
                return Err(Error::Refused {
                    op: "round trip".into(),
                    msg: "these are final outputs: decrypt them".into(),
                });
            };
            let i = i as usize;
            if !plan.round_trips.iter().any(|&(n, _)| n == i)
                || values.iter().any(|v| v.node as usize == i)
            {
                return bad(
                    "encrypted outputs",
                    format!("no round trip pending at node v{i}"),
                );
            }
            let a = plan.program.nodes[i].op.operands()[0] as usize;
            let released = self.store.decode_released(plan, a, &e.value)?;
            let value = convert(plan, i, self.store.open(plan, a, &released, None)?)?;
            let v = self.store.encrypt(plan, i, &value)?;
            values.push(InputValue {
                node: i as u32,
                value: encode_val(&v)?,
            });
        }
        Ok(self.sending(EncryptedInputs {
            key_set: self.key_set,
            context: sent.context.clone(),
            values,
        }))
    }

    /// The secret state (keys, plan, key-set id, the inputs sent) as
    /// versioned bytes; keep them secret.
    ///
    /// ```text
    /// state = "TRSKCLS" version:u8(2) program:blob choice:blob key_set:digest
    ///         bfv:u8 secret:blob*  opt(ckks secret:blob)  opt(tfhe client key:blob)
    ///         sent:u32 (count:u32 digest*)*
    /// ```
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        let plan = &self.plan;
        let bfv: Vec<Zeroizing<Vec<u8>>> = (0..plan.bfv.len())
            .map(|part| {
                self.store
                    .bfv_part(plan, part)
                    .map_or_else(|_| Zeroizing::new(Vec::new()), |k| k.sk.to_bytes())
            })
            .collect();
        let ckks = plan
            .ckks
            .as_ref()
            .and_then(|_| self.store.ckks_part(plan).ok());
        let ckks = ckks.map(|k| k.sk.to_bytes());
        let tfhe = plan.tfhe.as_ref().and_then(|_| self.store.tfhe_part().ok());
        let tfhe = tfhe.map(|k| k.ck.to_bytes());
        let program = plan.program.to_bytes();
        let choice = plan.choice().to_bytes();
        // Room for everything at once, so that no secret byte is left in a
        // buffer given back by a reallocation.
        let secrets: usize = bfv
            .iter()
            .chain(&ckks)
            .chain(&tfhe)
            .map(|b| b.len() + 5)
            .sum();
        let sent: usize = self.sent.iter().map(|s| 4 + 32 * s.len()).sum();
        let mut w = Writer(Vec::with_capacity(
            64 + program.len() + choice.len() + secrets + sent,
        ));
        w.bytes(STATE_MAGIC);
        w.u8(crate::wire::WIRE_FORMAT_VERSION);
        w.blob(&program);
        w.blob(&choice);
        w.bytes(&self.key_set);
        w.u8(bfv.len() as u8);
        bfv.iter().for_each(|b| w.blob(b));
        w.opt(ckks.as_ref(), |w, b| w.blob(b));
        w.opt(tfhe.as_ref(), |w, b| w.blob(b));
        w.u32(self.sent.len());
        for set in &self.sent {
            w.u32(set.len());
            set.iter().for_each(|d| w.bytes(d));
        }
        Zeroizing::new(w.0)
    }

    /// Loads [`Client::to_bytes`] output of at most `limit` bytes: the plan
    /// is derived again from the program and the choice, and every secret
    /// key is checked against it.
    pub fn from_bytes(bytes: &[u8], limit: u64) -> Result<Client> {
        const WHAT: &str = "client state";
        if bytes.len() as u64 > limit {
            return bad(
                WHAT,
                format!("{} bytes, above the limit of {limit}", bytes.len()),
            );
        }
        let mut r = Reader::new(WHAT, STATE_MAGIC, bytes)?;
        let program = Program::from_bytes(r.blob()?)?;
        let choice = crate::PlanChoice::from_bytes(r.blob()?, u64::MAX)?;
        let plan = plan_chosen(&program, &choice)?;
        let key_set = r.digest()?;
        let mut store = KeyStore::default();
        if r.u8()? as usize != plan.bfv.len() {
            return bad(WHAT, "its BFV keys do not match its plan's parts");
        }
        for part in &plan.bfv {
            let ctx = bfv::BfvContext::new(part.params.clone())?;
            let sk = bfv::SecretKey::from_bytes(r.blob()?, &ctx)?;
            store.bfv.insert(
                part.params.name().to_string(),
                BfvKeys {
                    ctx,
                    sk,
                    eval: None,
                    rotations: Vec::new(),
                },
            );
        }
        match (r.flag()?, &plan.ckks) {
            (true, Some(params)) => {
                let ctx = ckks::CkksContext::new(params.clone())?;
                let sk = ckks::SecretKey::from_bytes(r.blob()?, &ctx)?;
                store.ckks.insert(
                    params.name().to_string(),
                    CkksKeys {
                        ctx,
                        sk,
                        eval: None,
                        rotations: BTreeSet::new(),
                    },
                );
            }
            (false, None) => {}
            _ => return bad(WHAT, "its CKKS key does not match its plan"),
        }
        match (r.flag()?, &plan.tfhe) {
            (true, Some(params)) => {
                let ck = tfhe::ClientKey::from_bytes(r.blob()?)?;
                if ck.parameters() != params {
                    return bad(WHAT, "its TFHE key is of another set than its plan's");
                }
                store.tfhe = Some(TfheKeys { ck, sk: None });
            }
            (false, None) => {}
            _ => return bad(WHAT, "its TFHE key does not match its plan"),
        }
        let count = r.count(4, REMEMBERED_INPUTS)?;
        let mut sent = Vec::with_capacity(count);
        for _ in 0..count {
            let n = r.count(32, crate::MAX_NODES)?;
            sent.push((0..n).map(|_| r.digest()).collect::<Result<_>>()?);
        }
        r.finish()?;
        Ok(Client {
            program: triskel_attest::program_digest(&plan.program.to_bytes()),
            plan,
            store,
            keys: None,
            key_set,
            flooding: None,
            sent,
        })
    }

    /// Writes the secret state to a new file `path` readable by its owner
    /// only (mode 0600 on Unix).
    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = self.to_bytes();
        write_private(path, &bytes)
    }

    /// Loads a state [`Client::save`] wrote; refused when group or others
    /// may access the file.
    pub fn load(path: &Path) -> Result<Client> {
        let bytes = read_private(path, MAX_CLIENT_STATE_BYTES, "client state")?;
        Client::from_bytes(&bytes, MAX_CLIENT_STATE_BYTES)
    }
}

/// Checks that `outputs` are the final outputs of `plan`'s program, one
/// entry per output in order (not round-trip values).
pub(crate) fn check_final(plan: &Plan, outputs: &EncryptedOutputs) -> Result<()> {
    if !outputs.is_final() {
        return Err(Error::Refused {
            op: "outputs".into(),
            msg: "these are round-trip values: continue with Client::continue_round_trips".into(),
        });
    }
    if outputs.entries.len() != plan.program.outputs.len() {
        return bad(
            "encrypted outputs",
            format!(
                "{} entries for {} outputs",
                outputs.entries.len(),
                plan.program.outputs.len()
            ),
        );
    }
    if (0..)
        .zip(&outputs.entries)
        .any(|(o, e)| e.slot != Slot::Output(o))
    {
        return bad(
            "encrypted outputs",
            "entries out of the program's output order",
        );
    }
    Ok(())
}

/// Refuses threshold keys ([`PlanOptions::threshold`]) for `op`, a single
/// key holder: the parties ([`crate::Party`]) make those.
pub(crate) fn one_key_holder(options: &PlanOptions, op: &str) -> Result<()> {
    match options.threshold {
        Some(t) => Err(Error::Refused {
            op: op.into(),
            msg: format!(
                "{} of {} threshold keys are made by parties (triskel::Party), not by one key holder",
                t.k, t.n
            ),
        }),
        None => Ok(()),
    }
}

/// Checks that `outputs` were computed under `key_set` for the program of
/// digest `program`, on one of the input sets `sent` (their digests), and
/// that every entry's record, signed by `server`, binds them, the plan's
/// route and the context.
pub(crate) fn verify_outputs(
    plan: &Plan,
    program: &Digest32,
    key_set: &Digest32,
    sent: &[Vec<Digest32>],
    outputs: &EncryptedOutputs,
    server: &PublicIdentity,
) -> Result<()> {
    let refuse = |msg: &str| {
        Err(Error::Refused {
            op: "outputs".into(),
            msg: msg.into(),
        })
    };
    if outputs.key_set != *key_set {
        return refuse("computed under another key set");
    }
    if outputs.program != *program {
        return refuse("computed for another program");
    }
    if !sent.contains(&outputs.inputs) {
        return refuse("computed on inputs the key holders did not send");
    }
    let route = crate::route(plan);
    for e in &outputs.entries {
        let computation = Computation {
            program: *program,
            key_set: *key_set,
            inputs: &outputs.inputs,
            output: e.value.digest(),
        };
        triskel_attest::verify_computation(
            server,
            &computation,
            &route,
            &outputs.context,
            &e.record,
        )?;
    }
    Ok(())
}

/// Writes `bytes` to `path` (replaced if it exists) with mode 0600.
/// A secret file of at most `limit` bytes, refused when group or others
/// may access it.
pub(crate) fn read_private(path: &Path, limit: u64, what: &str) -> Result<Zeroizing<Vec<u8>>> {
    let io = |e: std::io::Error| Error::Input(format!("{}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata().map_err(io)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(Error::Input(format!(
                "{}: a {what} is secret and must be readable by its owner only (mode {mode:o}; chmod 600 it)",
                path.display()
            )));
        }
    }
    Ok(Zeroizing::new(read_limited(file, limit, what)?))
}

pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let io = |e: std::io::Error| Error::Input(format!("{}: {e}", path.display()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(io)?;
    }
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)
}
