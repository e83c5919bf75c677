//! The evaluator: runs a plan on ciphertexts with evaluation keys only.
//!
//! Nothing here can reach a secret key: the imports below name the public
//! types of the engines (contexts, ciphertexts, public, relinearization,
//! Galois and server keys) and nothing else, and [`EvaluationKeys`] holds
//! only those. A [`Server`] re-derives the client's plan from the program
//! and the [`PlanChoice`] ([`crate::plan_chosen`]: capabilities, noise,
//! failure bounds and the 128-bit check are the planner's), refuses keys
//! made for another program or choice and inputs under other keys, runs
//! the plan and releases only the asked values ([`Released`]), each output
//! with a record signed by the server's identity.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use triskel_attest::{Computation, Digest32, Identity};
use triskel_bfv::{
    BfvContext, Ciphertext as BfvCiphertext, GaloisKeys as BfvGaloisKeys,
    Plaintext as BfvPlaintext, PublicKey as BfvPublicKey, RelinKey as BfvRelinKey,
};
use triskel_ckks::{
    Ciphertext as CkksCiphertext, CkksContext, GaloisKeys as CkksGaloisKeys, LinearTransform,
    Plaintext as CkksPlaintext, PublicKey as CkksPublicKey, RelinKey as CkksRelinKey,
};
use triskel_ring::{KeyId, LweCiphertext};
use triskel_tfhe::{Ciphertext as TfheBit, Comparison, RadixCiphertext, ServerKey};
use zeroize::Zeroizing;

use crate::argmax::{signed_argmax, Sources};
use crate::bridge::{run_bfv_to_tfhe, BfvToTfhe};
use crate::error::{Error, Result};
use crate::plan::{
    ckks_polynomial, plan_chosen, read_tolerance, slots_dirty, BfvEncoding, Placement, Plan,
    PlanChoice, ReleaseMask, StepKind,
};
use crate::program::{Cmp, Kind, Op, Program, Scalar};
use crate::transition::{ckks_coefficients_above, TransitionKey};
use crate::wire::{EncryptedInputs, EncryptedOutput, EncryptedOutputs, Slot};

/// A value during a run.
#[derive(Clone)]
pub(crate) enum Val {
    Bfv(BfvCiphertext),
    /// A score of the single-product placement: coefficient `usize` of a
    /// product shared by its group ([`crate::plan::ScoreSlot`]); only
    /// decisions read it, by extracting that coefficient.
    Score(Arc<BfvCiphertext>, usize),
    /// A CKKS ciphertext and its packing period.
    Ckks(CkksCiphertext, usize),
    Radix(Vec<RadixCiphertext>),
    Bits(Vec<TfheBit>),
}

/// What leaves the server for the key holder to decrypt: only the asked
/// values. A BFV or CKKS value first gets a fresh public-key encryption of
/// zero added, so its randomness does not depend on how it was computed.
#[derive(Clone)]
pub(crate) enum Released {
    /// BFV slots: the ciphertext, times a plaintext mask (1 in the asked
    /// slots, 0 elsewhere) when its other slots may hold anything
    /// ([`crate::plan::slots_dirty`]).
    Slots(BfvCiphertext),
    /// BFV coefficients: the asked coefficients, sample-extracted as LWE
    /// ciphertexts at the last prime; the rest never leaves.
    Extracted(Vec<LweCiphertext>),
    /// CKKS slots: every slot but the asked ones zeroed by a 0/1 product
    /// ([`ReleaseMask`]).
    CkksSlots(CkksCiphertext),
    /// CKKS coefficients: the asked ones, sample-extracted at q_0 (phase
    /// (scale x + e) 2^64 / q_0), with the scale.
    CkksExtracted(Vec<LweCiphertext>, f64),
    /// TFHE values leave as they are (every one is bootstrapped).
    Radix(Vec<RadixCiphertext>),
    Bits(Vec<TfheBit>),
}

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

/// Everything a server needs to run one plan of one program, and nothing
/// secret: per BFV part and for CKKS the public key (to re-randomize
/// releases), the relinearization key when the part multiplies and the
/// Galois keys of exactly the rotations it uses; the TFHE server key; the
/// transition keys (BFV/CKKS -> TFHE). Made by
/// [`Client::evaluation_keys`](crate::Client::evaluation_keys); its bytes
/// are seed-compressed ([`EvaluationKeys::to_bytes`]).
#[derive(Clone)]
pub struct EvaluationKeys {
    /// The digest of the program's bytes.
    pub(crate) program: Digest32,
    pub(crate) choice: PlanChoice,
    pub(crate) bfv: Vec<BfvEval>,
    pub(crate) ckks: Option<CkksEval>,
    pub(crate) tfhe: Option<Arc<ServerKey>>,
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

    pub(crate) fn tfhe(&self) -> Result<&ServerKey> {
        self.tfhe
            .as_deref()
            .ok_or_else(|| missing("the TFHE server key"))
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

fn missing(what: &str) -> Error {
    Error::Refused {
        op: "evaluation keys".into(),
        msg: format!("{what} are not in the bundle"),
    }
}

pub(crate) fn wrong(op: &str) -> Error {
    Error::Internal(format!(
        "{op}: operand of an unexpected engine (a planner bug)"
    ))
}

pub(crate) fn int(s: &Scalar) -> i64 {
    match *s {
        Scalar::Int(i) => i,
        Scalar::Real(r) => r as i64,
    }
}

fn real(s: &Scalar) -> f64 {
    match *s {
        Scalar::Real(r) => r,
        Scalar::Int(i) => i as f64,
    }
}

fn tfhe_cmp(c: Cmp) -> Comparison {
    match c {
        Cmp::Eq => Comparison::Eq,
        Cmp::Ne => Comparison::Ne,
        Cmp::Lt => Comparison::Lt,
        Cmp::Le => Comparison::Le,
        Cmp::Gt => Comparison::Gt,
        Cmp::Ge => Comparison::Ge,
    }
}

/// A BFV plaintext of `values` (slots 0..len or coefficients 0..len).
pub(crate) fn bfv_plain(
    ctx: &Arc<BfvContext>,
    encoding: BfvEncoding,
    values: &[i128],
) -> Result<BfvPlaintext> {
    let t = ctx.plain_modulus() as i128;
    // Inputs lie in (-t, t) (checked, and the planner's t covers their
    // range): one masked add, no division on them. Only public weights can
    // be larger.
    let reduced = Zeroizing::new(
        values
            .iter()
            .map(|&v| {
                if v.unsigned_abs() < t as u128 {
                    (v + (t & (v >> 127))) as u64
                } else {
                    v.rem_euclid(t) as u64
                }
            })
            .collect::<Vec<u64>>(),
    );
    Ok(match encoding {
        BfvEncoding::Slots => BfvPlaintext::from_slots(ctx, &reduced)?,
        BfvEncoding::Coefficients => BfvPlaintext::from_coeffs(ctx, &reduced)?,
    })
}

/// A CKKS plaintext of `values` repeated with `period` (zeros in
/// len..period) at `level` and `scale`, under the declared `bound`
/// (`None`: a public operand, bounded by its own largest value).
pub(crate) fn ckks_plain(
    ctx: &Arc<CkksContext>,
    values: &[f64],
    period: usize,
    level: usize,
    scale: f64,
    bound: Option<f64>,
) -> Result<CkksPlaintext> {
    let mut padded = values.to_vec();
    padded.resize(period, 0.0);
    let packed = LinearTransform::pack(&padded, period, ctx.slots());
    let bound =
        bound.unwrap_or_else(|| values.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs())));
    Ok(CkksPlaintext::encode_real(
        ctx, &packed, level, scale, bound,
    )?)
}

/// What one pass of the evaluator left: the values of the nodes it could
/// compute, and per node the nanoseconds it took.
pub(crate) struct Pass {
    pub(crate) vals: Vec<Option<Val>>,
    pub(crate) node_ns: Vec<f64>,
}

/// The evaluator of one plan under one bundle of evaluation keys.
pub(crate) struct Evaluator<'a> {
    pub(crate) plan: &'a Plan,
    pub(crate) keys: &'a EvaluationKeys,
}

impl Evaluator<'_> {
    /// Computes every operation node of the plan whose operands are known
    /// (in step order), leaving `None` where a key-holder round trip has
    /// not been made yet.
    pub(crate) fn evaluate(&self, pass: &mut Pass) -> Result<()> {
        let plan = self.plan;
        let transforms = self.keys.transforms(plan)?;
        for step in &plan.steps {
            let (StepKind::Op(i) | StepKind::Transition { node: i, .. }) = step.kind else {
                continue;
            };
            if pass.vals[i].is_some() || !self.ready(i, &pass.vals) {
                continue;
            }
            let start = Instant::now();
            let v = self.op(plan, i, &pass.vals, transforms)?;
            pass.node_ns[i] += start.elapsed().as_nanos() as f64;
            pass.vals[i] = Some(v);
        }
        Ok(())
    }

    /// Node `i`'s value from its operands' values.
    pub(crate) fn op_at(&self, i: usize, vals: &[Option<Val>]) -> Result<Val> {
        self.op(self.plan, i, vals, self.keys.transforms(self.plan)?)
    }

    /// Whether node `i`'s operands (and its single product's leader) have values.
    fn ready(&self, i: usize, vals: &[Option<Val>]) -> bool {
        let leader = self.plan.scores[i].map(|s| s.leader).filter(|&l| l != i);
        self.plan.program.nodes[i]
            .op
            .operands()
            .iter()
            .map(|&a| a as usize)
            .chain(leader)
            .all(|a| vals[a].is_some())
    }

    /// The release of node `i`'s value `v` ([`Released`]).
    pub(crate) fn release(&self, i: usize, v: &Val) -> Result<Released> {
        let plan = self.plan;
        let len = plan.program.nodes[i].kind.len();
        match (v, plan.placements[i]) {
            (Val::Bfv(c), Placement::Bfv(part)) => self.release_bfv(
                self.keys.bfv(part)?,
                plan.bfv[part].encoding,
                c,
                len,
                slots_dirty(&plan.program)[i],
            ),
            (Val::Ckks(c, _), Placement::Ckks) => self.release_ckks(plan, i, c),
            (Val::Radix(r), _) => Ok(Released::Radix(r.clone())),
            (Val::Bits(b), _) => Ok(Released::Bits(b.clone())),
            _ => Err(wrong("output")),
        }
    }

    fn op(
        &self,
        plan: &Plan,
        i: usize,
        vals: &[Option<Val>],
        transforms: &HashMap<usize, LinearTransform>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
        let get = |k: &u32| {
            vals[*k as usize]
                .as_ref()
                .ok_or_else(|| wrong(node.op.name()))
        };
        match plan.placements[i] {
            Placement::Bfv(part) if plan.scores[i].is_some() => {
                self.single_product(plan, part, i, &get)
            }
            Placement::Bfv(part) => self.bfv_op(plan, part, i, &get),
            Placement::Ckks => self.ckks_op(plan, i, &get, transforms),
            Placement::Tfhe => self.tfhe_op(plan, i, &get),
            Placement::CkksToTfhe => {
                let Op::ThresholdReal {
                    x,
                    threshold,
                    tolerance,
                } = node.op
                else {
                    return Err(wrong("transition"));
                };
                let set = plan.ckks.as_ref().map_or("", |p| p.name());
                let key = self
                    .keys
                    .transition
                    .get(set)
                    .ok_or_else(|| wrong("transition key"))?;
                let Val::Ckks(c, _) = get(&x)? else {
                    return Err(wrong("transition"));
                };
                let coefficients: Vec<usize> = (0..node.kind.len()).collect();
                let (bits, _) = ckks_coefficients_above(
                    c,
                    &coefficients,
                    threshold,
                    tolerance,
                    key,
                    self.keys.tfhe()?,
                )
                .map_err(|e| Error::Refused {
                    op: node.op.name().to_string(),
                    msg: e.to_string(),
                })?;
                Ok(Val::Bits(bits))
            }
            Placement::BfvToTfhe(part) => {
                let key = self
                    .keys
                    .transition
                    .get(plan.bfv[part].params.name())
                    .ok_or_else(|| wrong("transition key"))?;
                let t = self.keys.tfhe()?;
                let bfv_of = |k: &u32| match get(k)? {
                    Val::Bfv(c) => Ok(c),
                    _ => Err(wrong("transition")),
                };
                // The values' ciphertext and the coefficients holding them.
                let values = |k: &u32| match get(k)? {
                    Val::Bfv(c) => Ok((c.clone(), (0..node.kind.len()).collect())),
                    Val::Score(c, at) => Ok((c.as_ref().clone(), vec![*at])),
                    _ => Err(wrong("transition")),
                };
                if let Op::ArgmaxSigned { xs, .. } = &node.op {
                    let mut sources = Sources::new();
                    for x in xs {
                        match get(x)? {
                            Val::Bfv(c) => {
                                sources.push(c, 0..plan.program.nodes[*x as usize].kind.len())
                            }
                            Val::Score(c, at) => sources.push(c.as_ref(), std::iter::once(*at)),
                            _ => return Err(wrong("argmax")),
                        }
                    }
                    let log_t = plan.bfv[part].params.plain_modulus().trailing_zeros();
                    let Kind::Uint { bits, .. } = node.kind else {
                        return Err(wrong("argmax"));
                    };
                    let r = read_tolerance(&node.op, log_t);
                    return Ok(Val::Radix(vec![signed_argmax(&sources, r, bits, key, t)?]));
                }
                if let Op::Lookup { x, table } = &node.op {
                    let (input, coefficients) = values(x)?;
                    // Decisions x >= c for every c in (-B, B].
                    let bound = (table.len() as i64 - 1) / 2;
                    let decisions = (1 - bound..=bound)
                        .map(|c| {
                            run_bfv_to_tfhe(&BfvToTfhe {
                                input: &input,
                                coefficients: &coefficients,
                                cmp: Cmp::Ge,
                                constant: c,
                                tolerance_bits: 0,
                                key,
                                tfhe_server: t,
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let out = (0..coefficients.len())
                        .map(|v| {
                            let bits: Vec<_> = decisions.iter().map(|d| d[v].clone()).collect();
                            triskel_tfhe::lookup::lookup_from_decisions(t, &bits, table)
                        })
                        .collect::<triskel_tfhe::Result<_>>()?;
                    return Ok(Val::Radix(out));
                }
                let ((input, coefficients), cmp, constant) = match &node.op {
                    Op::Compare(a, b, cmp) => (
                        (bfv_of(a)?.sub(bfv_of(b)?)?, (0..node.kind.len()).collect()),
                        *cmp,
                        0,
                    ),
                    Op::CompareScalar(a, c, cmp) => (values(a)?, *cmp, int(c)),
                    Op::ThresholdWithin { x, threshold, .. } => (values(x)?, Cmp::Ge, *threshold),
                    _ => return Err(wrong("transition")),
                };
                let bits = run_bfv_to_tfhe(&BfvToTfhe {
                    input: &input,
                    coefficients: &coefficients,
                    cmp,
                    constant,
                    tolerance_bits: read_tolerance(
                        &node.op,
                        input.context().plain_modulus().trailing_zeros(),
                    ),
                    key,
                    tfhe_server: t,
                })?;
                Ok(Val::Bits(bits))
            }
        }
    }

    /// An inner product of the single-product placement: at its group's
    /// leader, the one plaintext product with every member's weights
    /// reversed at offset L j + L - 1 - i; each member's value is its
    /// coefficient of that product.
    fn single_product<'v>(
        &self,
        plan: &Plan,
        part: usize,
        i: usize,
        get: &dyn Fn(&u32) -> Result<&'v Val>,
    ) -> Result<Val> {
        let slot = plan.scores[i].ok_or_else(|| wrong("dot_plain"))?;
        if slot.leader != i {
            return match get(&(slot.leader as u32))? {
                Val::Score(product, _) => Ok(Val::Score(product.clone(), slot.coefficient)),
                _ => Err(wrong("dot_plain")),
            };
        }
        let keys = self.keys.bfv(part)?;
        let Op::DotPlain(a, _) = plan.program.nodes[i].op else {
            return Err(wrong("dot_plain"));
        };
        let mut weights = vec![0i128; keys.ctx.n()];
        for (k, member) in plan.scores.iter().enumerate() {
            let (Some(m), Op::DotPlain(_, w)) = (member, &plan.program.nodes[k].op) else {
                continue;
            };
            if m.leader != i {
                continue;
            }
            for (idx, s) in w.iter().enumerate() {
                weights[m.coefficient - idx] = int(s) as i128;
            }
        }
        let x = match get(&a)? {
            Val::Bfv(c) => c,
            _ => return Err(wrong("dot_plain")),
        };
        let product = x.mul_plain(&bfv_plain(
            &self.keys.bfv(part)?.ctx,
            plan.bfv[part].encoding,
            &weights,
        )?)?;
        Ok(Val::Score(Arc::new(product), slot.coefficient))
    }

    fn bfv_op<'v>(
        &self,
        plan: &Plan,
        part: usize,
        i: usize,
        get: &dyn Fn(&u32) -> Result<&'v Val>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
        let keys = self.keys.bfv(part)?;
        let ct = |k: &u32| match get(k)? {
            Val::Bfv(c) => Ok(c),
            _ => Err(wrong(node.op.name())),
        };
        let rk = || keys.rk.as_ref().ok_or_else(|| wrong("relinearization key"));
        let mul = |a: &BfvCiphertext, b: &BfvCiphertext| -> Result<BfvCiphertext> {
            Ok(a.mul(b)?.relinearize(rk()?)?)
        };
        let t = keys.ctx.plain_modulus() as i128;
        let constant = |c: &Scalar| {
            BfvPlaintext::from_coeffs(&keys.ctx, &[(int(c) as i128).rem_euclid(t) as u64])
        };
        let repeat = |c: &Scalar, len: usize| {
            bfv_plain(
                &self.keys.bfv(part)?.ctx,
                plan.bfv[part].encoding,
                &vec![int(c) as i128; len],
            )
        };
        // x <- x + rotate(x, s) for s = len/2 .. 1, with one lazy ModDown.
        let tree = |x: BfvCiphertext, len: usize| -> Result<BfvCiphertext> {
            let steps: Vec<i64> =
                std::iter::successors(Some(len.next_power_of_two() / 2), |s| Some(s / 2))
                    .take_while(|&s| s >= 1)
                    .map(|s| s as i64)
                    .collect();
            if steps.is_empty() {
                return Ok(x);
            }
            let gk = keys.gk.as_ref().ok_or_else(|| wrong("galois keys"))?;
            Ok(x.rotation_tree_sum(&steps, gk)?)
        };
        let len = |k: &u32| plan.program.nodes[*k as usize].kind.len();
        let out = match &node.op {
            Op::Add(a, b) => ct(a)?.add(ct(b)?)?,
            Op::Sub(a, b) => ct(a)?.sub(ct(b)?)?,
            Op::Mul(a, b) => mul(ct(a)?, ct(b)?)?,
            Op::AddScalar(a, c) => ct(a)?.add_plain(&repeat(c, len(a))?)?,
            Op::MulScalar(a, c) => ct(a)?.mul_plain(&constant(c)?)?,
            Op::Dot(a, b) => tree(mul(ct(a)?, ct(b)?)?, len(a))?,
            Op::DotPlain(a, w) if plan.bfv[part].encoding == BfvEncoding::Coefficients => {
                // Weights reversed negacyclically (w_0 at X^0, -w_i at
                // X^(n-i)): coefficient 0 of the one product is sum x_i w_i.
                let n = keys.ctx.n();
                let mut reversed = vec![0i128; n];
                for (i, s) in w.iter().enumerate() {
                    let v = int(s) as i128;
                    if i == 0 {
                        reversed[0] = v;
                    } else {
                        reversed[n - i] = -v;
                    }
                }
                ct(a)?.mul_plain(&bfv_plain(
                    &self.keys.bfv(part)?.ctx,
                    plan.bfv[part].encoding,
                    &reversed,
                )?)?
            }
            Op::DotPlain(a, w) => {
                let w: Vec<i128> = w.iter().map(|s| int(s) as i128).collect();
                tree(
                    ct(a)?.mul_plain(&bfv_plain(
                        &self.keys.bfv(part)?.ctx,
                        plan.bfv[part].encoding,
                        &w,
                    )?)?,
                    len(a),
                )?
            }
            Op::Sum(a) => tree(ct(a)?.clone(), len(a))?,
            Op::Polynomial(a, cs) => {
                let x = ct(a)?;
                let top = cs.last().ok_or_else(|| wrong("polynomial"))?;
                // Horner; degree 0 is x * 0 + c0.
                let lead = if cs.len() == 1 { Scalar::Int(0) } else { *top };
                let mut acc = x.mul_plain(&constant(&lead)?)?;
                for (k, c) in cs.iter().enumerate().rev().skip(usize::from(cs.len() > 1)) {
                    acc = acc.add_plain(&repeat(c, len(a))?)?;
                    if k > 0 {
                        acc = mul(&acc, x)?;
                    }
                }
                acc
            }
            op => return Err(wrong(op.name())),
        };
        Ok(Val::Bfv(out))
    }

    fn ckks_op<'v>(
        &self,
        plan: &Plan,
        i: usize,
        get: &dyn Fn(&u32) -> Result<&'v Val>,
        transforms: &HashMap<usize, LinearTransform>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
        let keys = self.keys.ckks()?;
        let ct = |k: &u32| match get(k)? {
            Val::Ckks(c, p) => Ok((c, *p)),
            _ => Err(wrong(node.op.name())),
        };
        let rk = || keys.rk.as_ref().ok_or_else(|| wrong("relinearization key"));
        let gk = || keys.gk.as_ref().ok_or_else(|| wrong("galois keys"));
        let len = |k: &u32| plan.program.nodes[*k as usize].kind.len();
        // A product with a plaintext of `values` at scale q_level, rescaled: one level.
        let mul_plain =
            |c: &CkksCiphertext, values: &[f64], period: usize| -> Result<CkksCiphertext> {
                let q = keys.ctx.prime(c.level())? as f64;
                let pt = ckks_plain(&self.keys.ckks()?.ctx, values, period, c.level(), q, None)?;
                Ok(c.mul_plain(&pt)?.rescale()?)
            };
        let sum = |c: CkksCiphertext, period: usize| -> Result<CkksCiphertext> {
            if period == 1 {
                return Ok(c);
            }
            Ok(c.slot_sum(period, gk()?)?)
        };
        let mask = |c: CkksCiphertext, n: usize, period: usize| -> Result<CkksCiphertext> {
            if plan.packing[i].mask_operand {
                return mul_plain(&c, &vec![1.0; n], period);
            }
            Ok(c)
        };
        let period = plan.packing[i].period;
        let coefficients = plan.packing[i].coefficients;
        // A plaintext of `values` in coefficients 0..len at the ciphertext's
        // level and `scale` (bound: the sum of their magnitudes).
        let coefficient_plain =
            |c: &CkksCiphertext, values: &[f64], scale: f64| -> Result<CkksPlaintext> {
                let bound = values.iter().map(|v| v.abs()).sum::<f64>();
                Ok(CkksPlaintext::from_coefficients(
                    &keys.ctx,
                    values,
                    c.level(),
                    scale,
                    bound.max(f64::MIN_POSITIVE),
                )?)
            };
        let out = match &node.op {
            Op::AddScalar(a, c) if coefficients => {
                let x = ct(a)?.0;
                x.add_plain(&coefficient_plain(x, &vec![real(c); len(a)], x.scale())?)?
            }
            Op::DotPlain(a, w) if coefficients => {
                // Weights reversed negacyclically (w_0 at X^0, -w_i at
                // X^(n-i)): coefficient 0 of the product is sum x_i w_i.
                let x = ct(a)?.0;
                let n = keys.ctx.n();
                let mut reversed = vec![0.0; n];
                for (k, s) in w.iter().enumerate() {
                    reversed[(n - k) % n] = if k == 0 { real(s) } else { -real(s) };
                }
                let q = keys.ctx.prime(x.level())? as f64;
                x.mul_plain(&coefficient_plain(x, &reversed, q)?)?
                    .rescale()?
            }
            // The release's 0/1 mask rides on the constant's plaintext.
            Op::MulScalar(a, c) if plan.packing[i].release == ReleaseMask::Folded => {
                let x = ct(a)?.0;
                mul_plain(x, &vec![real(c); len(a)], keys.ctx.slots())?
            }
            Op::Add(a, b) => ct(a)?.0.add(ct(b)?.0)?,
            Op::Sub(a, b) => ct(a)?.0.sub(ct(b)?.0)?,
            Op::Mul(a, b) => ct(a)?.0.mul_relin_rescale(ct(b)?.0, rk()?)?,
            Op::AddScalar(a, c) => {
                let (x, p) = ct(a)?;
                x.add_plain(&ckks_plain(
                    &keys.ctx,
                    &vec![real(c); len(a)],
                    p,
                    x.level(),
                    x.scale(),
                    None,
                )?)?
            }
            Op::MulScalar(a, c) => ct(a)?.0.mul_const_rescale(real(c))?,
            Op::Dot(a, b) => {
                let (x, p) = ct(a)?;
                sum(mask(x.mul_relin_rescale(ct(b)?.0, rk()?)?, len(a), p)?, p)?
            }
            Op::DotPlain(a, w) => {
                let (x, p) = ct(a)?;
                let w: Vec<f64> = w.iter().map(real).collect();
                sum(mul_plain(x, &w, p)?, p)?
            }
            Op::Sum(a) => {
                let (x, p) = ct(a)?;
                sum(mask(x.clone(), len(a), p)?, p)?
            }
            op @ (Op::Polynomial(a, _) | Op::Chebyshev { x: a, .. }) => {
                let poly = ckks_polynomial(op)?.ok_or_else(|| wrong("polynomial"))?;
                poly.evaluate(ct(a)?.0, rk()?)?
            }
            Op::MatVec { x, .. } => {
                let lt = transforms.get(&i).ok_or_else(|| wrong("matvec"))?;
                if lt.output_period() != period {
                    return Err(Error::Internal(format!(
                        "matvec: the transform's output period {} differs from the planned {period}",
                        lt.output_period()
                    )));
                }
                lt.apply(ct(x)?.0, gk()?)?
            }
            op => return Err(wrong(op.name())),
        };
        Ok(Val::Ckks(out, period))
    }

    fn tfhe_op<'v>(
        &self,
        plan: &Plan,
        i: usize,
        get: &dyn Fn(&u32) -> Result<&'v Val>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
        let sk = self.keys.tfhe()?;
        let radix = |k: &u32| match get(k)? {
            Val::Radix(v) => Ok(v),
            _ => Err(wrong(node.op.name())),
        };
        // Constants of u8..u64 arithmetic wrap modulo 2^bits.
        let bits = match node.kind {
            Kind::Uint { bits, .. } => bits,
            _ => 64,
        };
        let word = |c: &Scalar| (int(c) as u64) & (u64::MAX >> (64 - bits));
        let zip = |a: &u32,
                   b: &u32,
                   f: &dyn Fn(
            &RadixCiphertext,
            &RadixCiphertext,
        ) -> triskel_tfhe::Result<RadixCiphertext>|
         -> Result<Vec<RadixCiphertext>> {
            Ok(radix(a)?
                .iter()
                .zip(radix(b)?)
                .map(|(x, y)| f(x, y))
                .collect::<std::result::Result<_, _>>()?)
        };
        let map = |a: &u32,
                   f: &dyn Fn(&RadixCiphertext) -> triskel_tfhe::Result<RadixCiphertext>|
         -> Result<Vec<RadixCiphertext>> {
            Ok(radix(a)?
                .iter()
                .map(f)
                .collect::<std::result::Result<_, _>>()?)
        };
        let total = |terms: Vec<RadixCiphertext>| -> Result<Vec<RadixCiphertext>> {
            let mut it = terms.into_iter();
            let first = it.next().ok_or_else(|| wrong("sum"))?;
            Ok(vec![it.try_fold(first, |acc, x| sk.add(&acc, &x))?])
        };
        let out = match &node.op {
            Op::Add(a, b) => Val::Radix(zip(a, b, &|x, y| sk.add(x, y))?),
            Op::Sub(a, b) => Val::Radix(zip(a, b, &|x, y| sk.sub(x, y))?),
            Op::Mul(a, b) => Val::Radix(zip(a, b, &|x, y| sk.mul(x, y))?),
            Op::AddScalar(a, c) => Val::Radix(map(a, &|x| sk.scalar_add(x, word(c)))?),
            Op::MulScalar(a, c) => Val::Radix(map(a, &|x| sk.scalar_mul(x, word(c)))?),
            Op::Dot(a, b) => Val::Radix(total(zip(a, b, &|x, y| sk.mul(x, y))?)?),
            Op::DotPlain(a, w) => {
                let terms = radix(a)?
                    .iter()
                    .zip(w)
                    .map(|(x, c)| sk.scalar_mul(x, word(c)))
                    .collect::<std::result::Result<_, _>>()?;
                Val::Radix(total(terms)?)
            }
            Op::Sum(a) => Val::Radix(total(radix(a)?.clone())?),
            Op::Polynomial(a, cs) => {
                let top = cs.last().ok_or_else(|| wrong("polynomial"))?;
                Val::Radix(map(a, &|x| {
                    let lead = if cs.len() == 1 { 0 } else { word(top) };
                    let mut acc = sk.scalar_mul(x, lead)?;
                    for (k, c) in cs.iter().enumerate().rev().skip(usize::from(cs.len() > 1)) {
                        acc = sk.scalar_add(&acc, word(c))?;
                        if k > 0 {
                            acc = sk.mul(&acc, x)?;
                        }
                    }
                    Ok(acc)
                })?)
            }
            Op::Compare(a, b, cmp) => Val::Bits(
                radix(a)?
                    .iter()
                    .zip(radix(b)?)
                    .map(|(x, y)| sk.compare(tfhe_cmp(*cmp), x, y))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Op::CompareScalar(a, c, cmp) => Val::Bits(
                radix(a)?
                    .iter()
                    .map(|x| {
                        // The constant as a ciphertext of x's width: x * 0 + c.
                        let k = sk.scalar_add(&sk.scalar_mul(x, 0)?, word(c))?;
                        sk.compare(tfhe_cmp(*cmp), x, &k)
                    })
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Op::Select { cond, a, b } => {
                let Val::Bits(conds) = get(cond)? else {
                    return Err(wrong("select"));
                };
                Val::Radix(
                    conds
                        .iter()
                        .zip(radix(a)?.iter().zip(radix(b)?))
                        .map(|(c, (x, y))| sk.select(c, x, y))
                        .collect::<std::result::Result<_, _>>()?,
                )
            }
            Op::Any(operands) => {
                let mut bits = Vec::new();
                for a in operands {
                    match get(a)? {
                        Val::Bits(b) => bits.extend(b.iter().cloned()),
                        _ => return Err(wrong("any")),
                    }
                }
                Val::Bits(vec![crate::transition::any(sk, &bits)?])
            }
            Op::Lookup { x, table } => Val::Radix(
                radix(x)?
                    .iter()
                    .map(|v| triskel_tfhe::lookup::lookup_u8(sk, v, table))
                    .collect::<triskel_tfhe::Result<_>>()?,
            ),
            Op::Argmax(a) => Val::Radix(vec![triskel_tfhe::argmax::tournament(
                sk,
                radix(a)?.clone(),
                bits,
            )?]),
            op => return Err(wrong(op.name())),
        };
        Ok(out)
    }

    fn release_bfv(
        &self,
        keys: &BfvEval,
        encoding: BfvEncoding,
        c: &BfvCiphertext,
        len: usize,
        dirty: bool,
    ) -> Result<Released> {
        let fresh = c.rerandomize(&keys.pk)?;
        Ok(match encoding {
            BfvEncoding::Slots if !dirty => Released::Slots(fresh),
            BfvEncoding::Slots => {
                let mask: Vec<u64> = (0..keys.ctx.n()).map(|s| u64::from(s < len)).collect();
                let mask = BfvPlaintext::from_slots(&keys.ctx, &mask)?;
                Released::Slots(fresh.mul_plain(&mask)?)
            }
            BfvEncoding::Coefficients => {
                let mut low = fresh;
                while low.level() > 0 {
                    low = low.mod_switch_to_next()?;
                }
                Released::Extracted(low.sample_extract(&(0..len).collect::<Vec<_>>())?)
            }
        })
    }

    /// The asked values of CKKS node `i` (the first `len`), as they leave
    /// the server: slots masked as planned ([`ReleaseMask`]) or
    /// coefficients extracted, after a fresh public-key encryption of zero
    /// is added.
    fn release_ckks(&self, plan: &Plan, i: usize, c: &CkksCiphertext) -> Result<Released> {
        let keys = self.keys.ckks()?;
        let len = plan.program.nodes[i].kind.len();
        let masked = match plan.packing[i].release {
            ReleaseMask::Product => {
                let mask = vec![1.0; len];
                let q = keys.ctx.prime(c.level())? as f64;
                let pt = ckks_plain(
                    &self.keys.ckks()?.ctx,
                    &mask,
                    keys.ctx.slots(),
                    c.level(),
                    q,
                    None,
                )?;
                c.mul_plain(&pt)?.rescale()?
            }
            ReleaseMask::Folded | ReleaseMask::None => c.clone(),
        };
        let zero = CkksPlaintext::encode_real(
            &keys.ctx,
            &[0.0],
            masked.level(),
            masked.scale(),
            f64::MIN_POSITIVE,
        )?;
        let fresh = masked.add(&keys.pk.encrypt(&zero)?)?;
        if plan.packing[i].coefficients {
            let lwes = fresh.sample_extract(&(0..len).collect::<Vec<_>>())?;
            return Ok(Released::CkksExtracted(lwes, fresh.scale()));
        }
        Ok(Released::CkksSlots(fresh))
    }
}

/// The evaluator of outsourced work: holds the server's attestation
/// identity and nothing secret of any client.
pub struct Server {
    identity: Identity,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field(
                "identity",
                &triskel_attest::hex(self.identity.public().key_id()),
            )
            .finish()
    }
}

/// Refuses `what` with `msg`.
fn refused(what: &str, msg: impl Into<String>) -> Error {
    Error::Refused {
        op: what.into(),
        msg: msg.into(),
    }
}

impl Server {
    /// A server signing its outputs' records with `identity`.
    pub fn new(identity: Identity) -> Server {
        Server { identity }
    }

    /// The identity whose public part clients verify records with.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// Runs `program` as `choice` places it, with `keys`, on `inputs`.
    ///
    /// Refuses, before any work: keys made for another program or plan
    /// choice, a choice the planner's rules do not give for the program
    /// ([`crate::plan_chosen`]), keys that lack what the plan needs, inputs
    /// of another key set, and every input whose shape, parameter set or key
    /// identity does not match. Returns every output, or, when the plan has
    /// a key-holder round trip not made yet, the values the key holder must
    /// convert ([`EncryptedOutputs::is_final`] false; the client continues
    /// with [`Client::continue_round_trips`](crate::Client::continue_round_trips)).
    /// Each entry carries a record signed by this server that binds the
    /// program digest, the plan's route, the key-set id, every input's
    /// digest, the entry's digest and the inputs' context.
    pub fn run(
        &self,
        program: &Program,
        choice: &PlanChoice,
        keys: &EvaluationKeys,
        inputs: &EncryptedInputs,
    ) -> Result<EncryptedOutputs> {
        let plan = check_run(program, choice, keys)?;
        let key_set = keys.id();
        if inputs.key_set != key_set {
            return Err(refused(
                "inputs",
                "encrypted under another key set than these evaluation keys",
            ));
        }
        let mut pass = Pass {
            vals: vec![None; plan.program.nodes.len()],
            node_ns: vec![0.0; plan.program.nodes.len()],
        };
        for input in &inputs.values {
            let i = input.node as usize;
            if pass.vals.get(i).is_some_and(|v| v.is_some()) {
                return Err(refused("inputs", format!("node v{i} is given twice")));
            }
            pass.vals[i] = Some(crate::wire::decode_input(&plan, keys, input)?);
        }
        for (i, node) in plan.program.nodes.iter().enumerate() {
            if matches!(node.op, Op::Input { .. }) && pass.vals[i].is_none() {
                return Err(refused("inputs", format!("input v{i} is missing")));
            }
        }
        let eval = Evaluator { plan: &plan, keys };
        let releases = eval.finish(&mut pass)?;
        let program_digest = keys.program;
        let input_digests: Vec<Digest32> = inputs.values.iter().map(|v| v.digest()).collect();
        let route = crate::route(&plan);
        let mut entries = Vec::with_capacity(releases.len());
        for Release { slot, value } in releases {
            let value = crate::wire::encode_released(&value);
            let computation = Computation {
                program: program_digest,
                key_set,
                inputs: &input_digests,
                output: value.digest(),
            };
            let record = triskel_attest::attest_computation(
                &self.identity,
                &computation,
                &route,
                &inputs.context,
            )?;
            entries.push(EncryptedOutput {
                slot,
                value,
                record,
            });
        }
        Ok(EncryptedOutputs {
            key_set,
            program: program_digest,
            inputs: input_digests,
            context: inputs.context.clone(),
            entries,
        })
    }
}

/// The plan of a run, after every check of the keys against the program
/// and the choice.
pub(crate) fn check_run(
    program: &Program,
    choice: &PlanChoice,
    keys: &EvaluationKeys,
) -> Result<Plan> {
    if keys.choice != *choice {
        return Err(refused(
            "evaluation keys",
            format!(
                "made for another plan choice ({}, not {})",
                keys.choice.describe(),
                choice.describe()
            ),
        ));
    }
    if triskel_attest::program_digest(&program.to_bytes()) != keys.program {
        return Err(refused(
            "evaluation keys",
            "made for another program (its digest differs)",
        ));
    }
    let plan = plan_chosen(program, choice)?;
    check_keys(&plan, keys)?;
    Ok(plan)
}

/// Every key the plan uses is in the bundle, for the plan's sets, and
/// belongs to the same secret keys as the rest.
fn check_keys(plan: &Plan, keys: &EvaluationKeys) -> Result<()> {
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
        let tfhe = keys.tfhe()?;
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
fn check_rotations(
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

/// One value leaving the server and where it goes.
pub(crate) struct Release {
    pub(crate) slot: Slot,
    pub(crate) value: Released,
}

impl Evaluator<'_> {
    /// Evaluates what it can, then releases: the operands of the round
    /// trips not made yet when there are any, else every output.
    pub(crate) fn finish(&self, pass: &mut Pass) -> Result<Vec<Release>> {
        self.evaluate(pass)?;
        let plan = self.plan;
        let released = |slot: Slot, i: usize, v: &Val| -> Result<Release> {
            Ok(Release {
                slot,
                value: self.release(i, v)?,
            })
        };
        let mut out = Vec::new();
        for &(i, _) in &plan.round_trips {
            let a = plan.program.nodes[i].op.operands()[0] as usize;
            if let (None, Some(v)) = (&pass.vals[i], &pass.vals[a]) {
                out.push(released(Slot::RoundTrip(i as u32), a, v)?);
            }
        }
        if !out.is_empty() {
            return Ok(out);
        }
        for (o, (_, i)) in plan.program.outputs.iter().enumerate() {
            let i = *i as usize;
            let v = pass.vals[i].as_ref().ok_or_else(|| wrong("output"))?;
            out.push(released(Slot::Output(o as u32), i, v)?);
        }
        Ok(out)
    }
}
