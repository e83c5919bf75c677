//! The plan choice and evaluation-key formats.

use super::*;

impl PlanChoice {
    /// The versioned bytes of the choice (module documentation).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(CHOICE_MAGIC);
        w.u8(u8::from(self.options.allow_round_trips));
        w.u8(self
            .options
            .ckks_scale_log2
            .map_or(255, |s| s.min(254) as u8));
        w.u64(self.options.max_ciphertext_bytes.unwrap_or(0));
        let t = self.options.threshold.map_or((0, 0), |t| (t.k, t.n));
        w.bytes(&t.0.to_le_bytes());
        w.bytes(&t.1.to_le_bytes());
        w.u32(self.engines.len());
        self.engines.iter().for_each(|&e| w.u8(engine_tag(e)));
        w.u8(self.bfv.len() as u8);
        self.bfv.iter().for_each(|s| w.name(s));
        w.opt(self.ckks.as_deref(), |w, s| w.name(s));
        w.opt(self.tfhe.as_deref(), |w, s| w.name(s));
        w.0
    }

    /// Loads [`PlanChoice::to_bytes`] output (at most `limit` bytes). What it
    /// says is checked against a program only by [`crate::plan_chosen`].
    pub fn from_bytes(bytes: &[u8], limit: u64) -> Result<PlanChoice> {
        check_limit(bytes, limit, "plan choice")?;
        let mut r = Reader::new("plan choice", CHOICE_MAGIC, bytes)?;
        let choice = read_choice(&mut r)?;
        r.finish()?;
        Ok(choice)
    }
}

pub(crate) fn read_choice(r: &mut Reader<'_>) -> Result<PlanChoice> {
    let allow_round_trips = r.flag()?;
    let scale = r.u8()?;
    if scale > 64 && scale != 255 {
        return bad("plan choice", format!("CKKS scale 2^{scale}"));
    }
    let max = r.u64()?;
    let mut u16_le = || -> Result<u16> {
        let b = r.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    };
    let (k, n) = (u16_le()?, u16_le()?);
    if (n, k) != (0, 0) && !(1..=n).contains(&k) {
        return bad("plan choice", format!("threshold {k} of {n}"));
    }
    let options = PlanOptions {
        allow_round_trips,
        ckks_scale_log2: (scale != 255).then_some(scale as u32),
        max_ciphertext_bytes: (max != 0).then_some(max),
        threshold: (n != 0).then_some(crate::plan::Threshold { k, n }),
    };
    let nodes = r.count(1, crate::MAX_NODES)?;
    let engines = (0..nodes)
        .map(|_| match r.u8()? {
            0 => Ok(Engine::Bfv),
            1 => Ok(Engine::Ckks),
            2 => Ok(Engine::Tfhe),
            t => bad("plan choice", format!("engine tag {t}")),
        })
        .collect::<Result<_>>()?;
    let parts = r.u8()? as usize;
    let bfv = (0..parts).map(|_| r.name()).collect::<Result<_>>()?;
    let ckks = if r.flag()? { Some(r.name()?) } else { None };
    let tfhe = if r.flag()? { Some(r.name()?) } else { None };
    Ok(PlanChoice {
        options,
        engines,
        bfv,
        ckks,
        tfhe,
    })
}

pub(crate) fn key_set_id(bytes: &[u8]) -> Digest32 {
    blake3::derive_key(KEY_SET_CONTEXT, bytes)
}

impl EvaluationKeys {
    /// The key-set id: BLAKE3 in key-derivation mode over the bundle's bytes
    /// (module documentation), so it commits to the program, the plan
    /// choice and every key.
    pub fn id(&self) -> Digest32 {
        *self.id.get_or_init(|| {
            let bytes = self.body_bytes();
            key_set_id(&bytes)
        })
    }

    fn body_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(KEYS_MAGIC);
        w.bytes(&self.program);
        w.blob(&self.choice.to_bytes());
        w.u8(self.bfv.len() as u8);
        for b in &self.bfv {
            w.blob(&b.ctx.params().to_bytes());
            w.blob_with(|out| b.pk.write(out));
            w.opt(b.rk.as_ref(), |w, k| w.blob_with(|out| k.write(out)));
            w.opt(b.gk.as_ref(), |w, k| w.blob_with(|out| k.write(out)));
        }
        w.opt(self.ckks.as_ref(), |w, c| {
            w.blob(&c.ctx.params().to_bytes());
            w.blob_with(|out| c.pk.write(out));
            w.opt(c.rk.as_ref(), |w, k| w.blob_with(|out| k.write(out)));
            w.opt(c.gk.as_ref(), |w, k| w.blob_with(|out| k.write(out)));
        });
        w.opt(self.tfhe.as_ref(), |w, k| w.blob(k.compressed().as_bytes()));
        w.u8(self.transition.len() as u8);
        for (name, key) in &self.transition {
            w.name(name);
            w.blob(&key.to_bytes());
        }
        w.0
    }

    /// The versioned, seed-compressed bytes of the bundle (module
    /// documentation), ending with the key-set id.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = self.body_bytes();
        let id = key_set_id(&bytes);
        let _ = self.id.set(id);
        bytes.extend_from_slice(&id);
        bytes
    }

    /// Loads [`EvaluationKeys::to_bytes`] output of at most `limit` bytes:
    /// every key is parsed and checked by its engine under a named,
    /// 128-bit-secure parameter set, and the key-set id must match the
    /// bytes. Whether the keys fit a plan is checked by
    /// [`Server::run`](crate::Server::run).
    pub fn from_bytes(bytes: &[u8], limit: u64) -> Result<EvaluationKeys> {
        const WHAT: &str = "evaluation keys";
        check_limit(bytes, limit, WHAT)?;
        if bytes.len() < 32 {
            return bad(WHAT, "truncated");
        }
        let (body, id) = bytes.split_at(bytes.len() - 32);
        if key_set_id(body)[..] != *id {
            return bad(
                WHAT,
                "the key-set id does not match the bytes (damaged or edited)",
            );
        }
        let mut r = Reader::new(WHAT, KEYS_MAGIC, body)?;
        let program = r.digest()?;
        let choice = {
            let raw = r.blob()?;
            let mut c = Reader::new("plan choice", CHOICE_MAGIC, raw)?;
            let choice = read_choice(&mut c)?;
            c.finish()?;
            choice
        };
        let parts = r.u8()? as usize;
        let mut bfv = Vec::with_capacity(parts.min(16));
        for _ in 0..parts {
            let params = BfvParameters::from_bytes(r.blob()?)?;
            let ctx = BfvContext::new(params)?;
            let pk = Arc::new(BfvPublicKey::from_bytes(r.blob()?, &ctx)?);
            let rk = match r.flag()? {
                true => Some(Arc::new(BfvRelinKey::from_bytes(r.blob()?, &ctx)?)),
                false => None,
            };
            let gk = match r.flag()? {
                true => Some(Arc::new(BfvGaloisKeys::from_bytes(r.blob()?, &ctx)?)),
                false => None,
            };
            bfv.push(BfvEval { ctx, pk, rk, gk });
        }
        let ckks = match r.flag()? {
            false => None,
            true => {
                let params = CkksParameters::from_bytes(r.blob()?)?;
                let ctx = CkksContext::new(params)?;
                let pk = Arc::new(CkksPublicKey::from_bytes(r.blob()?, &ctx)?);
                let rk = match r.flag()? {
                    true => Some(Arc::new(CkksRelinKey::from_bytes(r.blob()?, &ctx)?)),
                    false => None,
                };
                let gk = match r.flag()? {
                    true => Some(Arc::new(CkksGaloisKeys::from_bytes(r.blob()?, &ctx)?)),
                    false => None,
                };
                Some(CkksEval { ctx, pk, rk, gk })
            }
        };
        let tfhe = match r.flag()? {
            true => Some(TfheEval::loaded(CompressedServerKey::from_bytes(
                r.blob()?,
            )?)),
            false => None,
        };
        let count = r.u8()? as usize;
        let mut transition = BTreeMap::new();
        for _ in 0..count {
            let name = r.name()?;
            let key = TransitionKey::from_bytes(r.blob()?)?;
            if transition.insert(name, Arc::new(key)).is_some() {
                return bad(WHAT, "a transition key is given twice");
            }
        }
        r.finish()?;
        let keys = EvaluationKeys {
            program,
            choice,
            bfv,
            ckks,
            tfhe,
            transition,
            id: OnceLock::new(),
            transforms: OnceLock::new(),
        };
        let mut set_id = [0u8; 32];
        set_id.copy_from_slice(id);
        let _ = keys.id.set(set_id);
        Ok(keys)
    }
}
