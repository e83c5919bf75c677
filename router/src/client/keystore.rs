//! The key holder's keys: generation per engine for a plan, the
//! evaluation-key bundle, and encryption of inputs.

use super::*;

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
            Some(_) => Some(TfheEval::new(
                self.tfhe_part()?.sk.clone().ok_or_else(saved)?,
            )),
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
                Ok(Val::Ckks(
                    k.sk.encrypt(&ckks_input(&k.ctx, v, period)?)?,
                    period,
                ))
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
}

/// A slot-packed CKKS input plaintext at the top level. Real inputs are in
/// [-1, 1]: the bound a ciphertext carries must not depend on the secret
/// values.
pub(crate) fn ckks_input(
    ctx: &Arc<ckks::CkksContext>,
    values: &[f64],
    period: usize,
) -> Result<ckks::Plaintext> {
    ckks_plain(
        ctx,
        values,
        period,
        ctx.max_level(),
        ctx.default_scale(),
        Some(ckks::DEFAULT_BOUND),
    )
}

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
pub(crate) fn unflooded_coefficients() -> Error {
    Error::Unsupported(
        "noise flooding of a coefficient-encoded CKKS output (its values leave as extracted \
         LWE ciphertexts, which are not flooded)"
            .into(),
    )
}

pub(crate) fn input_err<T>(msg: String) -> Result<T> {
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
