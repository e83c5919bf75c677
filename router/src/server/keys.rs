//! The evaluation keys a server holds, and the checks that a bundle
//! holds exactly what a plan needs.

use super::*;

/// The evaluation keys of one BFV part.
#[derive(Clone)]
pub(crate) struct BfvEval {
    pub(crate) ctx: Arc<BfvContext>,
    /// Re-randomizes what is released.
    pub(crate) pk: Arc<BfvPublicKey>,
    pub(crate) rk: Option<Arc<BfvRelinKey>>,
    pub(crate) gk: Option<Arc<BfvGaloisKeys>>,
}

/// The evaluation keys of the CKKS part.
#[derive(Clone)]
pub(crate) struct CkksEval {
    pub(crate) ctx: Arc<CkksContext>,
    /// Re-randomizes what is released.
    pub(crate) pk: Arc<CkksPublicKey>,
    pub(crate) rk: Option<Arc<CkksRelinKey>>,
    pub(crate) gk: Option<Arc<CkksGaloisKeys>>,
}

/// The TFHE server key of a bundle: checked when loaded, its masks
/// regenerated from their seeds on first use (the expanded key is several
/// times the size of its bytes, and reading a bundle stays as fast as
/// reading bytes). A key holder's key is compressed only when the bundle
/// is written.
#[derive(Clone)]
pub(crate) enum TfheEval {
    Held {
        key: Arc<ServerKey>,
        compressed: OnceLock<CompressedServerKey>,
    },
    Loaded {
        compressed: CompressedServerKey,
        expanded: OnceLock<Arc<ServerKey>>,
    },
}

impl TfheEval {
    /// The key of a client that holds it expanded.
    pub(crate) fn new(key: Arc<ServerKey>) -> TfheEval {
        TfheEval::Held {
            key,
            compressed: OnceLock::new(),
        }
    }

    /// The key as loaded, to expand when a run needs it.
    pub(crate) fn loaded(compressed: CompressedServerKey) -> TfheEval {
        TfheEval::Loaded {
            compressed,
            expanded: OnceLock::new(),
        }
    }

    /// The key's bytes form (seed-compressed masks).
    pub(crate) fn compressed(&self) -> &CompressedServerKey {
        match self {
            TfheEval::Held { key, compressed } => compressed.get_or_init(|| key.compress()),
            TfheEval::Loaded { compressed, .. } => compressed,
        }
    }

    fn parameters(&self) -> &triskel_tfhe::TfheParameters {
        match self {
            TfheEval::Held { key, .. } => key.parameters(),
            TfheEval::Loaded { compressed, .. } => compressed.parameters(),
        }
    }

    fn expanded(&self) -> Result<&ServerKey> {
        let (compressed, expanded) = match self {
            TfheEval::Held { key, .. } => return Ok(key),
            TfheEval::Loaded {
                compressed,
                expanded,
            } => (compressed, expanded),
        };
        if let Some(key) = expanded.get() {
            return Ok(key);
        }
        let key = Arc::new(compressed.decompress()?);
        Ok(expanded.get_or_init(|| key))
    }
}

/// Everything a server needs to run one plan of one program, and nothing
/// secret: per BFV part and for CKKS the public key (to re-randomize
/// releases), the relinearization key when the part multiplies and the
/// Galois keys of exactly the rotations it uses; the TFHE server key; the
/// transition keys (BFV/CKKS -> TFHE). Made by
/// [`Client::evaluation_keys`](crate::Client::evaluation_keys); its bytes
/// are seed-compressed ([`EvaluationKeys::to_bytes`]).
///
/// # Examples
///
/// ```
/// use triskel::{Client, Error, EvaluationKeys, Kind, PlanOptions, Program};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
/// let y = p.mul(x, x)?;
/// p.output("y", y)?;
/// let client = Client::new(&p, PlanOptions::default())?;
/// let keys = client.evaluation_keys()?;
/// assert_eq!(keys.choice(), &client.plan().choice());
/// assert_eq!(keys.id(), *client.key_set());
/// assert_eq!(*keys.program_digest(), triskel::attest::program_digest(&p.to_bytes()));
///
/// // Versioned bytes, loaded under a size limit and checked on the way.
/// let bytes = keys.to_bytes();
/// assert_eq!(EvaluationKeys::from_bytes(&bytes, 1 << 30)?.id(), keys.id());
/// assert!(EvaluationKeys::from_bytes(&bytes, 1024).is_err()); // above the limit
/// let mut flipped = bytes.clone();
/// *flipped.last_mut().unwrap() ^= 1; // the key-set id no longer matches
/// assert!(EvaluationKeys::from_bytes(&flipped, 1 << 30).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct EvaluationKeys {
    /// The digest of the program's bytes.
    pub(crate) program: Digest32,
    pub(crate) choice: PlanChoice,
    pub(crate) bfv: Vec<BfvEval>,
    pub(crate) ckks: Option<CkksEval>,
    pub(crate) tfhe: Option<TfheEval>,
    /// By the name of the BFV or CKKS set whose key they switch from.
    pub(crate) transition: BTreeMap<String, Arc<TransitionKey>>,
    /// The key-set id ([`EvaluationKeys::id`]), computed once.
    pub(crate) id: OnceLock<Digest32>,
    /// The CKKS linear transforms of the plan (their diagonals are
    /// plaintexts of the program's public matrices), built on first use.
    pub(crate) transforms: OnceLock<HashMap<usize, LinearTransform>>,
}

impl std::fmt::Debug for EvaluationKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvaluationKeys")
            .field("id", &triskel_attest::hex(&self.id()))
            .field("choice", &self.choice.describe())
            .finish_non_exhaustive()
    }
}

impl EvaluationKeys {
    /// The plan decisions these keys were made for.
    pub fn choice(&self) -> &PlanChoice {
        &self.choice
    }

    /// The digest of the program these keys were made for
    /// ([`triskel_attest::program_digest`] of its bytes).
    pub fn program_digest(&self) -> &Digest32 {
        &self.program
    }

    pub(crate) fn bfv(&self, part: usize) -> Result<&BfvEval> {
        self.bfv
            .get(part)
            .ok_or_else(|| missing("the BFV keys of a part"))
    }

    pub(crate) fn ckks(&self) -> Result<&CkksEval> {
        self.ckks.as_ref().ok_or_else(|| missing("the CKKS keys"))
    }

    /// Regenerates now every key part that is regenerated from its seed on
    /// first use (the TFHE server key's masks, the uniform halves of the
    /// BFV and CKKS relinearization and Galois keys), so that the first run
    /// costs no more than the next. A server that keeps loaded keys calls
    /// it once; [`Server::run`](crate::Server::run) needs no call.
    pub fn expand(&self) -> Result<()> {
        for b in &self.bfv {
            b.rk.iter().for_each(|k| k.expand());
            b.gk.iter().for_each(|k| k.expand());
        }
        if let Some(c) = &self.ckks {
            c.rk.iter().for_each(|k| k.expand());
            c.gk.iter().for_each(|k| k.expand());
        }
        if let Some(t) = &self.tfhe {
            t.expanded()?;
        }
        Ok(())
    }

    /// The TFHE server key, expanded on first use.
    pub(crate) fn tfhe(&self) -> Result<&ServerKey> {
        self.tfhe
            .as_ref()
            .ok_or_else(|| missing("the TFHE server key"))?
            .expanded()
    }

    /// The TFHE server key as loaded (checked, not expanded).
    pub(crate) fn tfhe_compressed(&self) -> Result<&CompressedServerKey> {
        Ok(self
            .tfhe
            .as_ref()
            .ok_or_else(|| missing("the TFHE server key"))?
            .compressed())
    }

    /// The CKKS linear transforms of `plan` (node -> transform).
    pub(crate) fn transforms(&self, plan: &Plan) -> Result<&HashMap<usize, LinearTransform>> {
        if let Some(t) = self.transforms.get() {
            return Ok(t);
        }
        let built = match &self.ckks {
            Some(c) => crate::plan::ckks_needs(plan, &c.ctx)?.transforms,
            None => HashMap::new(),
        };
        Ok(self.transforms.get_or_init(|| built))
    }
}

pub(crate) fn missing(what: &str) -> Error {
    Error::Refused {
        op: "evaluation keys".into(),
        msg: format!("{what} are not in the bundle"),
    }
}

/// Every key the plan uses is in the bundle, for the plan's sets, and
/// belongs to the same secret keys as the rest.
pub(crate) fn check_keys(plan: &Plan, keys: &EvaluationKeys) -> Result<()> {
    if keys.bfv.len() != plan.bfv.len() {
        return Err(refused(
            "evaluation keys",
            format!(
                "{} BFV parts, the plan has {}",
                keys.bfv.len(),
                plan.bfv.len()
            ),
        ));
    }
    let needs = crate::plan::key_needs(plan);
    for (k, (part, eval)) in plan.bfv.iter().zip(&keys.bfv).enumerate() {
        if eval.ctx.params() != &part.params {
            return Err(refused(
                "evaluation keys",
                format!(
                    "BFV part {k} is under {}, the plan uses {}",
                    eval.ctx.params().name(),
                    part.params.name()
                ),
            ));
        }
        let id = eval.pk.id();
        if needs.bfv[k].relin && eval.rk.as_ref().is_none_or(|r| r.id() != id) {
            return Err(refused(
                "evaluation keys",
                format!("BFV part {k}: no relinearization key of its secret"),
            ));
        }
        let n = eval.ctx.n();
        check_rotations(
            &needs.bfv[k].rotations,
            eval.gk.as_ref().map(|g| (g.id(), g.elements())),
            id,
            |s| Ok(triskel_ring::galois_power(n, 3, s)?),
            &format!("BFV part {k}"),
        )?;
    }
    match (&plan.ckks, &keys.ckks) {
        (None, None) => {}
        (Some(params), Some(eval)) if eval.ctx.params() == params => {
            let id = eval.pk.id();
            if needs.ckks_relin && eval.rk.as_ref().is_none_or(|r| r.id() != id) {
                return Err(refused(
                    "evaluation keys",
                    "CKKS: no relinearization key of its secret",
                ));
            }
            let rotations = crate::plan::ckks_rotations(plan);
            let steps: Vec<i64> = rotations.into_iter().collect();
            let n = eval.ctx.n();
            check_rotations(
                &steps,
                eval.gk.as_ref().map(|g| (g.id(), g.elements())),
                id,
                |s| Ok(triskel_ring::galois_element(n, s)?),
                "CKKS",
            )?;
        }
        _ => {
            return Err(refused(
                "evaluation keys",
                "their CKKS part does not match the plan's set",
            ))
        }
    }
    match (&plan.tfhe, &keys.tfhe) {
        (None, None) => {}
        (Some(params), Some(sk)) if sk.parameters() == params => {}
        _ => {
            return Err(refused(
                "evaluation keys",
                "their TFHE part does not match the plan's set",
            ))
        }
    }
    let wanted: BTreeSet<String> = crate::plan::transition_sets(plan).into_iter().collect();
    let have: BTreeSet<String> = keys.transition.keys().cloned().collect();
    if wanted != have {
        return Err(refused(
            "evaluation keys",
            format!("transition keys for {have:?}, the plan needs {wanted:?}"),
        ));
    }
    for (set, key) in &keys.transition {
        let source = plan
            .bfv
            .iter()
            .zip(&keys.bfv)
            .find(|(p, _)| p.params.name() == set)
            .map(|(_, e)| e.pk.id())
            .or_else(|| keys.ckks.as_ref().map(|c| c.pk.id()));
        let tfhe = keys.tfhe_compressed()?;
        if Some(key.source_key_id()) != source || key.tfhe_key_id() != tfhe.key_id() {
            return Err(refused(
                "evaluation keys",
                format!("the transition key of {set} is not between this bundle's keys"),
            ));
        }
    }
    Ok(())
}

/// The Galois keys `(id, elements)` hold the Galois element of every
/// rotation in `steps` (`element(step)`) and belong to the secret `id`.
pub(crate) fn check_rotations(
    steps: &[i64],
    gk: Option<(KeyId, Vec<usize>)>,
    id: KeyId,
    element: impl Fn(i64) -> Result<usize>,
    part: &str,
) -> Result<()> {
    if steps.is_empty() {
        return Ok(());
    }
    let Some((gid, elements)) = gk else {
        return Err(refused(
            "evaluation keys",
            format!("{part}: no Galois keys"),
        ));
    };
    if gid != id {
        return Err(refused(
            "evaluation keys",
            format!("{part}: Galois keys of another secret"),
        ));
    }
    for &s in steps {
        if !elements.contains(&element(s)?) {
            return Err(refused(
                "evaluation keys",
                format!("{part}: no Galois key for a rotation by {s}"),
            ));
        }
    }
    Ok(())
}
