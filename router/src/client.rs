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
    bfv_plain, ckks_plain, wrong, BfvEval, CkksEval, EvaluationKeys, Released, Val,
};
use crate::transition::TransitionKey;
use crate::wire::{
    bad, decode_tfhe, encode_val, read_limited, read_lwe, Encoded, EncryptedInputs,
    EncryptedOutputs, InputValue, Reader, Slot, Writer, TAG_COMPRESSED_BITS, TAG_COMPRESSED_RADIX,
};

pub(crate) struct BfvKeys {
    pub(crate) ctx: Arc<bfv::BfvContext>,
    pub(crate) sk: bfv::SecretKey,
    /// `None` for keys loaded from a client's saved state.
    pub(crate) eval: Option<BfvEval>,
    pub(crate) rotations: Vec<i64>,
}

pub(crate) struct CkksKeys {
    pub(crate) ctx: Arc<ckks::CkksContext>,
    pub(crate) sk: ckks::SecretKey,
    pub(crate) eval: Option<CkksEval>,
    pub(crate) rotations: BTreeSet<i64>,
}

pub(crate) struct TfheKeys {
    pub(crate) ck: tfhe::ClientKey,
    pub(crate) sk: Option<Arc<tfhe::ServerKey>>,
}

/// Flooding is on and a CKKS output is coefficient-encoded.
fn unflooded_coefficients() -> Error {
    Error::Unsupported(
        "noise flooding of a coefficient-encoded CKKS output (its values leave as extracted \
         LWE ciphertexts, which are not flooded)"
            .into(),
    )
}

fn input_err<T>(msg: String) -> Result<T> {
    Err(Error::Input(msg))
}

/// The secret keys made so far (by set name) and the evaluation keys made
/// with them.
#[derive(Default)]
pub(crate) struct KeyStore {
    pub(crate) bfv: HashMap<String, BfvKeys>,
    pub(crate) ckks: HashMap<String, CkksKeys>,
    pub(crate) tfhe: Option<TfheKeys>,
    /// Transition keys (BFV or CKKS secret -> TFHE LWE key) by set name.
    pub(crate) transition: HashMap<String, Arc<TransitionKey>>,
}

impl KeyStore {
    pub(crate) fn bfv_keys_held(&self, plan: &Plan, part: usize) -> bool {
        let needs = &key_needs(plan).bfv[part];
        self.bfv.get(plan.bfv[part].params.name()).is_some_and(|k| {
            k.rotations == needs.rotations
                && k.eval
                    .as_ref()
                    .is_some_and(|e| e.rk.is_some() || !needs.relin)
        })
    }

    pub(crate) fn tfhe_keys_held(&self, plan: &Plan) -> bool {
        self.tfhe.as_ref().is_some_and(|t| t.sk.is_some())
            && transition_sets(plan)
                .iter()
                .all(|s| self.transition.contains_key(s))
    }

    pub(crate) fn keygen_bfv(&mut self, plan: &Plan, part: usize) -> Result<()> {
        if self.bfv_keys_held(plan, part) {
            return Ok(());
        }
        let params = &plan.bfv[part].params;
        let needs = key_needs(plan).bfv.swap_remove(part);
        let ctx = bfv::BfvContext::new(params.clone())?;
        let sk = bfv::SecretKey::generate(&ctx)?;
        // A new secret key: a transition key of the old one is stale.
        self.transition.remove(params.name());
        let rk = needs.relin.then(|| sk.relin_key()).transpose()?;
        let gk = (!needs.rotations.is_empty())
            .then(|| sk.galois_keys(&needs.rotations, false))
            .transpose()?;
        let eval = BfvEval {
            ctx: ctx.clone(),
            pk: Arc::new(sk.public_key()?),
            rk: rk.map(Arc::new),
            gk: gk.map(Arc::new),
        };
        self.bfv.insert(
            params.name().to_string(),
            BfvKeys {
                ctx,
                sk,
                eval: Some(eval),
                rotations: needs.rotations,
            },
        );
        Ok(())
    }

    /// CKKS keys; returns the plan's linear transforms (their rotations
    /// decide the Galois keys).
    pub(crate) fn keygen_ckks(
        &mut self,
        plan: &Plan,
    ) -> Result<HashMap<usize, ckks::LinearTransform>> {
        let params = plan.ckks.as_ref().ok_or_else(|| wrong("keygen"))?;
        let ctx = match self.ckks.get(params.name()) {
            Some(k) => k.ctx.clone(),
            None => ckks::CkksContext::new(params.clone())?,
        };
        let needs = ckks_needs(plan, &ctx)?;
        let relin = key_needs(plan).ckks_relin;
        if let Some(k) = self.ckks.get(params.name()) {
            if needs.rotations.is_subset(&k.rotations)
                && k.eval.as_ref().is_some_and(|e| e.rk.is_some() || !relin)
            {
                return Ok(needs.transforms);
            }
        }
        let sk = ckks::SecretKey::generate(&ctx)?;
        self.transition.remove(params.name());
        let rk = relin.then(|| sk.relin_key()).transpose()?;
        let steps: Vec<i64> = needs.rotations.iter().copied().collect();
        let gk = (!steps.is_empty())
            .then(|| sk.galois_keys(&steps, false))
            .transpose()?;
        let eval = CkksEval {
            ctx: ctx.clone(),
            pk: Arc::new(sk.public_key()?),
            rk: rk.map(Arc::new),
            gk: gk.map(Arc::new),
        };
        self.ckks.insert(
            params.name().to_string(),
            CkksKeys {
                ctx,
                sk,
                eval: Some(eval),
                rotations: needs.rotations,
            },
        );
        Ok(needs.transforms)
    }

    /// The TFHE keys, then the transition keys of the plan's BFV parts and
    /// CKKS set with a transition to TFHE (after their keys exist).
    pub(crate) fn keygen_tfhe(&mut self, plan: &Plan) -> Result<()> {
        if self.tfhe.as_ref().is_none_or(|t| t.sk.is_none()) {
            let ck = tfhe::ClientKey::generate(&crate::plan::tfhe_set())?;
            let sk = Some(Arc::new(ck.server_key()?));
            self.tfhe = Some(TfheKeys { ck, sk });
            self.transition.clear();
        }
        for name in transition_sets(plan) {
            if self.transition.contains_key(&name) {
                continue;
            }
            let ck = &self.tfhe_part()?.ck;
            let key = match (self.bfv.get(&name), self.ckks.get(&name)) {
                (Some(k), _) => TransitionKey::generate(&k.sk, ck)?,
                (None, Some(k)) => TransitionKey::generate_for_ckks(&k.sk, ck)?,
                (None, None) => return Err(wrong("transition keys")),
            };
            self.transition.insert(name, Arc::new(key));
        }
        Ok(())
    }

    /// Every key generation step of `plan`.
    pub(crate) fn keygen(&mut self, plan: &Plan) -> Result<()> {
        for part in 0..plan.bfv.len() {
            self.keygen_bfv(plan, part)?;
        }
        if plan.ckks.is_some() {
            self.keygen_ckks(plan)?;
        }
        if plan.tfhe.is_some() {
            self.keygen_tfhe(plan)?;
        }
        Ok(())
    }

    pub(crate) fn bfv_part(&self, plan: &Plan, part: usize) -> Result<&BfvKeys> {
        self.bfv
            .get(plan.bfv[part].params.name())
            .ok_or_else(|| wrong("bfv keys"))
    }

    pub(crate) fn ckks_part(&self, plan: &Plan) -> Result<&CkksKeys> {
        let name = plan.ckks.as_ref().map_or("", |p| p.name());
        self.ckks.get(name).ok_or_else(|| wrong("ckks keys"))
    }

    pub(crate) fn tfhe_part(&self) -> Result<&TfheKeys> {
        self.tfhe.as_ref().ok_or_else(|| wrong("tfhe keys"))
    }

    /// The evaluation keys of `plan` (after its key generation), sharing
    /// the keys held; `transforms`, when given, are the plan's CKKS linear
    /// transforms already built.
    pub(crate) fn evaluation_keys(
        &self,
        plan: &Plan,
        transforms: Option<HashMap<usize, ckks::LinearTransform>>,
    ) -> Result<EvaluationKeys> {
        let saved = || {
            Error::Unsupported(
                "a client loaded from its saved state holds no evaluation keys (they are \
                 written once, at key generation)"
                    .into(),
            )
        };
        let bfv = (0..plan.bfv.len())
            .map(|part| self.bfv_part(plan, part)?.eval.clone().ok_or_else(saved))
            .collect::<Result<_>>()?;
        let ckks = match plan.ckks {
            Some(_) => Some(self.ckks_part(plan)?.eval.clone().ok_or_else(saved)?),
            None => None,
        };
        let tfhe = match plan.tfhe {
            Some(_) => Some(self.tfhe_part()?.sk.clone().ok_or_else(saved)?),
            None => None,
        };
        let transition = transition_sets(plan)
            .into_iter()
            .map(|name| {
                let key = self
                    .transition
                    .get(&name)
                    .cloned()
                    .ok_or_else(|| wrong("transition keys"))?;
                Ok((name, key))
            })
            .collect::<Result<_>>()?;
        let cell = OnceLock::new();
        if let Some(t) = transforms {
            let _ = cell.set(t);
        }
        Ok(EvaluationKeys {
            program: triskel_attest::program_digest(&plan.program.to_bytes()),
            choice: plan.choice(),
            bfv,
            ckks,
            tfhe,
            transition,
            id: OnceLock::new(),
            transforms: cell,
        })
    }

    /// Encrypts `value` as node `i`'s value (an input, or the key holder's
    /// half of a round trip).
    pub(crate) fn encrypt(&self, plan: &Plan, i: usize, value: &PlainValue) -> Result<Val> {
        let kind = &plan.program.nodes[i].kind;
        match (plan.placements[i], value) {
            (Placement::Bfv(part), PlainValue::Ints(v)) => {
                let k = self.bfv_part(plan, part)?;
                let pt = bfv_plain(&k.ctx, plan.bfv[part].encoding, v)?;
                Ok(Val::Bfv(k.sk.encrypt(&pt)?))
            }
            (Placement::Ckks, PlainValue::Reals(v)) if plan.packing[i].coefficients => {
                let k = self.ckks_part(plan)?;
                // Each value in [-1, 1] (as in slots); the declared bound is
                // the public sum of magnitudes len.
                if v.iter().any(|x| x.abs() > ckks::DEFAULT_BOUND) {
                    return input_err(format!("input v{i}: reals must lie in [-1, 1]"));
                }
                let pt = ckks::Plaintext::from_coefficients(
                    &k.ctx,
                    v,
                    k.ctx.max_level(),
                    k.ctx.default_scale(),
                    v.len() as f64 * ckks::DEFAULT_BOUND,
                )?;
                Ok(Val::Ckks(k.sk.encrypt(&pt)?, 0))
            }
            (Placement::Ckks, PlainValue::Reals(v)) => {
                let k = self.ckks_part(plan)?;
                let period = plan.packing[i].period;
                // Real inputs are in [-1, 1]: the bound a ciphertext
                // carries must not depend on the secret values.
                let pt = ckks_plain(
                    &k.ctx,
                    v,
                    period,
                    k.ctx.max_level(),
                    k.ctx.default_scale(),
                    Some(ckks::DEFAULT_BOUND),
                )?;
                Ok(Val::Ckks(k.sk.encrypt(&pt)?, period))
            }
            (Placement::Tfhe, PlainValue::Ints(v)) => {
                let (ck, bits) = (
                    &self.tfhe_part()?.ck,
                    match kind {
                        Kind::Uint { bits, .. } => *bits,
                        _ => return Err(wrong("input")),
                    },
                );
                Ok(Val::Radix(
                    v.iter()
                        .map(|&x| ck.encrypt_radix(x as u64, bits))
                        .collect::<std::result::Result<_, _>>()?,
                ))
            }
            (Placement::Tfhe, PlainValue::Bits(b)) => {
                let ck = &self.tfhe_part()?.ck;
                Ok(Val::Bits(
                    b.iter()
                        .map(|&x| ck.encrypt(x as u64))
                        .collect::<std::result::Result<_, _>>()?,
                ))
            }
            _ => Err(wrong("input")),
        }
    }

    /// Encrypts input `i` for the wire: TFHE values seed-compressed (a seed
    /// and a body per block), BFV and CKKS ones as their engines write fresh
    /// encryptions (seed-compressed too).
    pub(crate) fn encrypt_wire(
        &self,
        plan: &Plan,
        i: usize,
        value: &PlainValue,
    ) -> Result<Encoded> {
        let compressed = |blobs: Vec<Vec<u8>>, tag: u8| Encoded { tag, blobs };
        match (plan.placements[i], value, plan.program.nodes[i].kind) {
            (Placement::Tfhe, PlainValue::Ints(v), Kind::Uint { bits, .. }) => {
                let ck = &self.tfhe_part()?.ck;
                let blobs = v
                    .iter()
                    .map(|&x| Ok(ck.encrypt_radix_compressed(x as u64, bits)?.to_bytes()))
                    .collect::<Result<_>>()?;
                Ok(compressed(blobs, TAG_COMPRESSED_RADIX))
            }
            (Placement::Tfhe, PlainValue::Bits(b), _) => {
                let ck = &self.tfhe_part()?.ck;
                let blobs = b
                    .iter()
                    .map(|&x| Ok(ck.encrypt_compressed(x as u64)?.to_bytes()))
                    .collect::<Result<_>>()?;
                Ok(compressed(blobs, TAG_COMPRESSED_BITS))
            }
            _ => encode_val(&self.encrypt(plan, i, value)?),
        }
    }

    /// With flooding on: refuses a run whose CKKS outputs cannot all be
    /// flooded, before any is decrypted: a coefficient-encoded one, or more
    /// than the CKKS key has left of alpha.
    pub(crate) fn check_floods(
        &self,
        plan: &Plan,
        flooding: Option<&ckks::Flooding>,
    ) -> Result<()> {
        let Some(flooding) = flooding else {
            return Ok(());
        };
        let mut floods = 0;
        for &(_, i) in &plan.program.outputs {
            if plan.placements[i as usize] == Placement::Ckks {
                if plan.packing[i as usize].coefficients {
                    return Err(unflooded_coefficients());
                }
                floods += 1;
            }
        }
        if floods == 0 {
            return Ok(());
        }
        let sk = &self.ckks_part(plan)?.sk;
        let (done, left) = (
            sk.flooded_decryptions(),
            sk.flooded_decryptions_left(flooding),
        );
        if floods > left {
            return Err(ckks::Error::FloodingExhausted {
                done,
                asked: floods,
                // The least alpha of the key's floods and of this one.
                alpha: flooding.decryptions.min(done + left),
            }
            .into());
        }
        Ok(())
    }

    /// Everything in a release, decrypted with the keys of `set`: every
    /// slot, or every extracted coefficient (BFV values mod t).
    pub(crate) fn open_whole(
        &self,
        set: &str,
        released: &Released,
        flooding: Option<&ckks::Flooding>,
    ) -> Result<PlainValue> {
        let bfv_keys = || self.bfv.get(set).ok_or_else(|| wrong("bfv keys"));
        let ckks_keys = || self.ckks.get(set).ok_or_else(|| wrong("ckks keys"));
        Ok(match released {
            Released::Slots(c) => PlainValue::Ints(
                bfv_keys()?
                    .sk
                    .decrypt(c)?
                    .to_slots()?
                    .into_iter()
                    .map(i128::from)
                    .collect(),
            ),
            Released::Extracted(lwes) => {
                let keys = bfv_keys()?;
                PlainValue::Ints(
                    lwes.iter()
                        .map(|l| Ok(i128::from(keys.sk.decrypt_lwe(l)?)))
                        .collect::<Result<_>>()?,
                )
            }
            Released::CkksSlots(c) => PlainValue::Reals(match flooding {
                Some(flooding) => ckks_keys()?.sk.decrypt_flooded_real(c, flooding)?,
                None => ckks_keys()?.sk.decrypt_real(c)?,
            }),
            Released::CkksExtracted(..) if flooding.is_some() => {
                return Err(unflooded_coefficients())
            }
            Released::CkksExtracted(lwes, scale) => {
                let keys = ckks_keys()?;
                let key = keys.sk.lwe_key();
                let q0 = keys.ctx.q_primes()[0];
                // The phase (scale x + e) 2^64 / q_0 as a signed torus value.
                let unit = q0 as f64 / 2f64.powi(64) / scale;
                PlainValue::Reals(
                    lwes.iter()
                        .map(|l| {
                            let phase = key.phase(l)?;
                            Ok(phase as i64 as f64 * unit)
                        })
                        .collect::<Result<_>>()?,
                )
            }
            Released::Radix(r) => {
                let ck = &self.tfhe_part()?.ck;
                PlainValue::Ints(
                    r.iter()
                        .map(|x| Ok(ck.decrypt_radix(x)? as i128))
                        .collect::<Result<_>>()?,
                )
            }
            Released::Bits(b) => {
                let ck = &self.tfhe_part()?.ck;
                PlainValue::Bits(
                    b.iter()
                        .map(|x| Ok(ck.decrypt(x)? == 1))
                        .collect::<Result<_>>()?,
                )
            }
        })
    }

    /// Node `i`'s value from its release: the asked values, BFV signed
    /// values centred.
    pub(crate) fn open(
        &self,
        plan: &Plan,
        i: usize,
        released: &Released,
        flooding: Option<&ckks::Flooding>,
    ) -> Result<PlainValue> {
        let kind = plan.program.nodes[i].kind;
        let len = kind.len();
        let set = set_of(plan, i).unwrap_or_default();
        Ok(
            match (
                self.open_whole(&set, released, flooding)?,
                plan.placements[i],
            ) {
                (PlainValue::Ints(raw), Placement::Bfv(part)) => {
                    let t = plan.bfv[part].params.plain_modulus() as i128;
                    let centred = matches!(kind, Kind::Signed { .. });
                    PlainValue::Ints(
                        raw.get(..len)
                            .ok_or_else(|| wrong("output"))?
                            .iter()
                            // Decrypted data: centred by a product, not a branch.
                            .map(|&x| x - t * i128::from(centred & (x > t / 2)))
                            .collect(),
                    )
                }
                (PlainValue::Reals(all), Placement::Ckks) => {
                    PlainValue::Reals(all.get(..len).ok_or_else(|| wrong("output"))?.to_vec())
                }
                (v, _) => v,
            },
        )
    }

    /// Parses an entry's value as node `i`'s release under these keys.
    fn decode_released(&self, plan: &Plan, i: usize, e: &crate::wire::Encoded) -> Result<Released> {
        const WHAT: &str = "encrypted outputs";
        let kind = plan.program.nodes[i].kind;
        let len = kind.len();
        Ok(match plan.placements[i] {
            Placement::Bfv(part) => {
                let k = self.bfv_part(plan, part)?;
                let id = k.sk.id();
                match (e.tag, plan.bfv[part].encoding) {
                    (1, BfvEncoding::Slots) => {
                        let c = bfv::Ciphertext::from_bytes(e.single(1, WHAT)?, &k.ctx)?;
                        if c.key_id() != id {
                            return bad(WHAT, "a BFV value under another key");
                        }
                        Released::Slots(c)
                    }
                    (2, BfvEncoding::Coefficients) => Released::Extracted(
                        e.many(2, len, WHAT)?
                            .iter()
                            .map(|b| read_lwe(b, k.ctx.n(), id, WHAT))
                            .collect::<Result<_>>()?,
                    ),
                    (t, _) => return bad(WHAT, format!("value tag {t} for a BFV value")),
                }
            }
            Placement::Ckks if plan.packing[i].coefficients => {
                let k = self.ckks_part(plan)?;
                let blobs = e.many(4, len + 1, WHAT)?;
                let scale = match <[u8; 8]>::try_from(blobs[0].as_slice()) {
                    Ok(b) => f64::from_bits(u64::from_le_bytes(b)),
                    Err(_) => return bad(WHAT, "a scale of 8 bytes expected"),
                };
                if !(scale.is_finite() && scale >= 1.0) {
                    return bad(WHAT, "the scale of extracted values is out of range");
                }
                let lwes = blobs[1..]
                    .iter()
                    .map(|b| read_lwe(b, k.ctx.n(), k.sk.id(), WHAT))
                    .collect::<Result<_>>()?;
                Released::CkksExtracted(lwes, scale)
            }
            Placement::Ckks => {
                let k = self.ckks_part(plan)?;
                let c = ckks::Ciphertext::from_bytes(e.single(3, WHAT)?, &k.ctx)?;
                if c.key_id() != k.sk.id() {
                    return bad(WHAT, "a CKKS value under another key");
                }
                Released::CkksSlots(c)
            }
            _ => {
                let ck = &self.tfhe_part()?.ck;
                match decode_tfhe(e, kind, ck.parameters(), ck.key_id(), WHAT)? {
                    Val::Radix(r) => Released::Radix(r),
                    Val::Bits(b) => Released::Bits(b),
                    _ => return Err(wrong("output")),
                }
            }
        })
    }
}

/// The set whose keys open node `i`'s release (BFV and CKKS nodes).
pub(crate) fn set_of(plan: &Plan, i: usize) -> Option<String> {
    match plan.placements[i] {
        Placement::Bfv(part) => Some(plan.bfv[part].params.name().to_string()),
        Placement::Ckks => plan.ckks.as_ref().map(|p| p.name().to_string()),
        _ => None,
    }
}

/// The key holder's conversion at round-trip node `i` of its operand's
/// decrypted value.
pub(crate) fn convert(plan: &Plan, i: usize, value: PlainValue) -> Result<PlainValue> {
    let op = &plan.program.nodes[i].op;
    let ints = match value {
        PlainValue::Ints(v) => v,
        PlainValue::Bits(b) => b.into_iter().map(i128::from).collect(),
        PlainValue::Reals(_) => return Err(wrong(op.name())),
    };
    Ok(match op {
        Op::ToReal { scale, .. } => {
            PlainValue::Reals(ints.iter().map(|&x| x as f64 * scale).collect())
        }
        _ => PlainValue::Ints(ints),
    })
}

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

    /// Checks that `outputs` answer inputs this client sent, under its key
    /// set and program, and that every entry's record, signed by `server`,
    /// binds them, the plan's route and the context.
    fn verify(&self, outputs: &EncryptedOutputs, server: &PublicIdentity) -> Result<()> {
        let refuse = |msg: &str| {
            Err(Error::Refused {
                op: "outputs".into(),
                msg: msg.into(),
            })
        };
        if outputs.key_set != self.key_set {
            return refuse("computed under another key set");
        }
        if outputs.program != self.program {
            return refuse("computed for another program");
        }
        if !self.sent.contains(&outputs.inputs) {
            return refuse("computed on inputs this client did not send");
        }
        let route = crate::route(&self.plan);
        for e in &outputs.entries {
            let computation = Computation {
                program: self.program,
                key_set: self.key_set,
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

    /// Decrypts the outputs of a run after verifying every record against
    /// `server`: refused when they were made under another key set, for
    /// another program or plan, on inputs this client did not send, or
    /// when any record does not verify.
    pub fn decrypt(&self, outputs: &EncryptedOutputs, server: &PublicIdentity) -> Result<Outputs> {
        self.verify(outputs, server)?;
        if !outputs.is_final() {
            return Err(Error::Refused {
                op: "outputs".into(),
                msg: "these are round-trip values: continue with Client::continue_round_trips"
                    .into(),
            });
        }
        let plan = &self.plan;
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
        self.store.check_floods(plan, self.flooding.as_ref())?;
        let mut values = Vec::new();
        for (o, e) in outputs.entries.iter().enumerate() {
            if e.slot != Slot::Output(o as u32) {
                return bad(
                    "encrypted outputs",
                    "entries out of the program's output order",
                );
            }
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
    /// state = "TRSKCLS" version:u8(1) program:blob choice:blob key_set:digest
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
        let io = |e: std::io::Error| Error::Input(format!("{}: {e}", path.display()));
        let file = std::fs::File::open(path).map_err(io)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = file.metadata().map_err(io)?.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(Error::Input(format!(
                    "{}: a client's secret state must be readable by its owner only (mode {mode:o}; chmod 600 it)",
                    path.display()
                )));
            }
        }
        let bytes = Zeroizing::new(read_limited(file, MAX_CLIENT_STATE_BYTES, "client state")?);
        Client::from_bytes(&bytes, MAX_CLIENT_STATE_BYTES)
    }
}

/// Writes `bytes` to `path` (replaced if it exists) with mode 0600.
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
