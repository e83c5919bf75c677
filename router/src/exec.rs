//! Running a plan: keys generated lazily (only the engines, relinearization
//! and rotations the plan needs, kept in the session for later runs with the
//! same sets), inputs encrypted, every step through the engines' public
//! APIs and timed, outputs decrypted for the key holder, and per-output
//! attestation of the result, the plan and the caller's context.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use triskel_attest::{Identity, PublicIdentity, Record, Route, Verified};
use triskel_bfv as bfv;
use triskel_ckks as ckks;
use triskel_tfhe as tfhe;
use zeroize::Zeroizing;

use crate::argmax::{signed_argmax, tournament, Sources};
use crate::bridge::{run_bfv_to_tfhe, BfvToTfhe};
use crate::cost::CostModel;
use crate::error::{Error, Result};
use crate::lookup::{lookup_from_decisions, lookup_u8};
use crate::plan::{
    bfv_rotations, check_transitions, ckks_polynomial, plan_with, read_tolerance, slots_dirty,
    BfvEncoding, Engine, Placement, Plan, PlanOptions, ReleaseMask, StepKind,
};
use crate::program::{Cmp, Kind, Op, Program, Scalar};
use crate::transition::{ckks_coefficients_above, TransitionKey};

/// Plain values going in and coming out.
#[derive(Clone, Debug, PartialEq)]
pub enum PlainValue {
    /// Integers of `Modular`, `Signed` and `Uint` kinds.
    Ints(Vec<i128>),
    Reals(Vec<f64>),
    Bits(Vec<bool>),
}

/// Decrypted outputs, in the program's output order.
#[derive(Clone, Debug, PartialEq)]
pub struct Outputs {
    pub values: Vec<(String, PlainValue)>,
}

impl Outputs {
    /// The output named `name`.
    pub fn get(&self, name: &str) -> Option<&PlainValue> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

struct BfvKeys {
    ctx: Arc<bfv::BfvContext>,
    sk: bfv::SecretKey,
    /// Re-randomizes what is released for decryption.
    pk: bfv::PublicKey,
    rk: Option<bfv::RelinKey>,
    gk: Option<bfv::GaloisKeys>,
    rotations: Vec<i64>,
}

struct CkksKeys {
    ctx: Arc<ckks::CkksContext>,
    sk: ckks::SecretKey,
    /// Re-randomizes what is released for decryption.
    pk: ckks::PublicKey,
    rk: Option<ckks::RelinKey>,
    gk: Option<ckks::GaloisKeys>,
    rotations: BTreeSet<i64>,
}

struct TfheKeys {
    ck: tfhe::ClientKey,
    sk: tfhe::ServerKey,
}

/// Values during a run.
enum Val {
    Bfv(bfv::Ciphertext),
    /// A score of the single-product placement: coefficient `usize` of a
    /// product shared by its group ([`crate::plan::ScoreSlot`]); only
    /// decisions read it, by extracting that coefficient.
    Score(Arc<bfv::Ciphertext>, usize),
    /// A CKKS ciphertext and its packing period.
    Ckks(ckks::Ciphertext, usize),
    Radix(Vec<tfhe::RadixCiphertext>),
    Bits(Vec<tfhe::Ciphertext>),
}

/// What a BFV or CKKS value hands to the key holder for decryption: only
/// the asked values, after a fresh encryption of zero is added (so its
/// randomness does not depend on how it was computed).
enum Released {
    /// Slots: the ciphertext, times a plaintext mask (1 in the asked slots,
    /// 0 elsewhere) when its other slots may hold anything
    /// ([`crate::plan::slots_dirty`]).
    Slots(bfv::Ciphertext),
    /// Coefficients: the asked coefficients, sample-extracted as LWE
    /// ciphertexts at the last prime; the rest never leaves.
    Extracted(Vec<triskel_ring::LweCiphertext>),
    /// CKKS slots: every slot but the asked ones zeroed by a 0/1 product
    /// ([`ReleaseMask`]).
    CkksSlots(ckks::Ciphertext),
    /// CKKS coefficients: the asked ones, sample-extracted at q_0 (phase
    /// (scale x + e) 2^64 / q_0), with the scale and q_0.
    CkksExtracted(Vec<triskel_ring::LweCiphertext>, f64, u64),
}

/// A key holder's session: the cost model and the keys made so far.
pub struct Session {
    costs: CostModel,
    bfv: HashMap<String, BfvKeys>,
    ckks: HashMap<String, CkksKeys>,
    tfhe: Option<TfheKeys>,
    /// Transition keys (BFV or CKKS secret -> TFHE LWE key) by set name.
    transition: HashMap<String, TransitionKey>,
    record_sizes: bool,
    /// Noise flooding of CKKS slot releases ([`Session::flood_ckks_releases`]).
    ckks_flooding: Option<ckks::Flooding>,
    /// What the last run released per BFV or CKKS output (name -> set, release).
    released: BTreeMap<String, (String, Released)>,
}

/// Whether BFV part `part` of `plan` multiplies ciphertexts (needs a
/// relinearization key).
fn bfv_needs_relin(plan: &Plan, part: usize) -> bool {
    plan.program.nodes.iter().enumerate().any(|(i, n)| {
        plan.placements[i] == Placement::Bfv(part)
            && matches!(&n.op, Op::Mul(..) | Op::Dot(..) | Op::Polynomial(_, _))
    })
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

fn wrong(op: &str) -> Error {
    Error::Engine(format!(
        "{op}: operand of an unexpected engine (a planner bug)"
    ))
}

fn int(s: &Scalar) -> i64 {
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

fn tfhe_cmp(c: Cmp) -> tfhe::Comparison {
    match c {
        Cmp::Eq => tfhe::Comparison::Eq,
        Cmp::Ne => tfhe::Comparison::Ne,
        Cmp::Lt => tfhe::Comparison::Lt,
        Cmp::Le => tfhe::Comparison::Le,
        Cmp::Gt => tfhe::Comparison::Gt,
        Cmp::Ge => tfhe::Comparison::Ge,
    }
}

/// Checks run-time inputs against the program's declarations: every input
/// present once with its kind's length and range, nothing else.
fn check_inputs(p: &Program, inputs: &BTreeMap<String, PlainValue>) -> Result<()> {
    let mut declared = 0;
    for node in &p.nodes {
        let Op::Input { name, kind } = &node.op else {
            continue;
        };
        declared += 1;
        let Some(v) = inputs.get(name) else {
            return input_err(format!("input {name:?} is missing"));
        };
        let len = kind.len();
        let ok = match (kind, v) {
            (Kind::Real { .. }, PlainValue::Reals(r)) => {
                r.len() == len && r.iter().all(|x| x.abs() <= 1.0)
            }
            (Kind::Bit { .. }, PlainValue::Bits(b)) => b.len() == len,
            (Kind::Modular { modulus, .. }, PlainValue::Ints(v)) => {
                v.len() == len && v.iter().all(|&x| (0..*modulus as i128).contains(&x))
            }
            (Kind::Signed { bound, .. }, PlainValue::Ints(v)) => {
                v.len() == len && v.iter().all(|&x| x.unsigned_abs() <= *bound as u128)
            }
            (Kind::Uint { bits, .. }, PlainValue::Ints(v)) => {
                v.len() == len && v.iter().all(|&x| x >= 0 && (x as u128) < 1u128 << bits)
            }
            _ => false,
        };
        if !ok {
            return input_err(format!(
                "input {name:?} must be {} in range",
                kind.describe()
            ));
        }
    }
    if inputs.len() != declared {
        return input_err(format!(
            "{} values given for {declared} declared inputs",
            inputs.len()
        ));
    }
    Ok(())
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    /// A session with the cached cost model of this machine (or the built-in one).
    pub fn new() -> Session {
        Session::with_costs(CostModel::load().0)
    }

    /// A session with a given cost model.
    pub fn with_costs(costs: CostModel) -> Session {
        Session {
            costs,
            bfv: HashMap::new(),
            ckks: HashMap::new(),
            tfhe: None,
            transition: HashMap::new(),
            record_sizes: false,
            ckks_flooding: None,
            released: BTreeMap::new(),
        }
    }

    /// Whether runs record serialized sizes of ciphertexts and evaluation
    /// keys in the plan's steps (serializing costs time, outside the
    /// measured step times).
    pub fn record_sizes(&mut self, on: bool) {
        self.record_sizes = on;
    }

    /// Decrypts the CKKS outputs released in slots with noise flooding
    /// ([`ckks::SecretKey::decrypt_flooded_real`], the crate's README
    /// "Security: shared decryptions and noise flooding"), or plainly with
    /// `None` (the default). Turn it on when the decrypted outputs leave the
    /// key holder (sent back to the server that computed them, attested to
    /// others): plain CKKS decryptions reveal their error, a function of the
    /// secret key. Each output gains a Gaussian error of deviation
    /// sqrt(N / 2) sigma / scale per slot.
    ///
    /// `flooding.noise_bound_log2` (B) is the caller's: it must bound the
    /// coefficient error of every released ciphertext. The estimate each
    /// ciphertext carries cannot serve: it is average-case (tails of 6 or
    /// 16 deviations per slot, the Costache et al. model), not a bound that
    /// holds with a stated probability. Measure B on a trial run of the same
    /// plan under another session's keys ([`Session::release_noise_bound_log2`])
    /// and add a margin.
    ///
    /// `flooding.decryptions` (alpha) bounds the flooded openings under the
    /// session's CKKS secret key, and the key counts them
    /// ([`ckks::SecretKey::decrypt_flooded`]): each run's flooded output and
    /// each [`Session::released_whole`] of one counts one. A run whose
    /// flooded outputs would take the count above alpha fails with the
    /// engine's `FloodingExhausted` error before any output is decrypted; so
    /// does a run with a coefficient-encoded CKKS output (its extracted LWE
    /// values are not flooded). New keys (a plan that needs more rotations
    /// or another set) start a new count. A flood too wide for the released
    /// level (the flooded phase could wrap) fails the run with the engine's
    /// error. The flood costs about
    /// 2^(log2 B + 31) of the scale: at the default 2^40 a slot deviates by
    /// about 0.2, so plan with [`PlanOptions::ckks_scale_log2`] = 50 for
    /// about 6e-4 (alpha = 1; the deviation grows as sqrt(alpha)).
    pub fn flood_ckks_releases(&mut self, flooding: Option<ckks::Flooding>) {
        self.ckks_flooding = flooding;
    }

    /// With flooding on: refuses a run whose CKKS outputs cannot all be
    /// flooded, before any is decrypted: a coefficient-encoded one, or more
    /// than the session's CKKS key has left of alpha.
    fn check_floods(&self, plan: &Plan) -> Result<()> {
        let Some(flooding) = &self.ckks_flooding else {
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

    /// Serialized bytes of a value.
    fn value_bytes(&self, v: &Val) -> Result<usize> {
        Ok(match v {
            Val::Bfv(c) => c.to_bytes().len(),
            Val::Score(c, _) => c.to_bytes().len(),
            Val::Ckks(c, _) => c.to_bytes().len(),
            Val::Radix(r) => r
                .iter()
                .flat_map(|x| x.blocks())
                .map(|b| b.to_bytes().len())
                .sum(),
            Val::Bits(b) => b.iter().map(|x| x.to_bytes().len()).sum(),
        })
    }

    /// Serialized bytes of the evaluation keys a key generation step made.
    fn key_bytes(&self, plan: &Plan, engine: Engine, part: usize) -> Result<usize> {
        Ok(match engine {
            Engine::Bfv => {
                let k = self.bfv_part(plan, part)?;
                k.rk.as_ref().map_or(0, |r| r.to_bytes().len())
                    + k.gk.as_ref().map_or(0, |g| g.to_bytes().len())
            }
            Engine::Ckks => {
                let k = self.ckks_part(plan)?;
                k.rk.as_ref().map_or(0, |r| r.to_bytes().len())
                    + k.gk.as_ref().map_or(0, |g| g.to_bytes().len())
            }
            // The server key and the transition keys this plan uses.
            Engine::Tfhe => {
                let transition: usize = transition_sets(plan)
                    .iter()
                    .filter_map(|name| self.transition.get(name))
                    .map(|key| key.to_bytes().len())
                    .sum();
                self.tfhe_part()?.sk.compressed_size() + transition
            }
        })
    }

    pub fn costs(&self) -> &CostModel {
        &self.costs
    }

    /// Plans `program` with this session's cost model (homomorphically
    /// only: no key-holder round trip).
    pub fn plan(&self, program: &Program) -> Result<Plan> {
        self.plan_with(program, PlanOptions::default())
    }

    /// Plans `program` with this session's cost model and what `options`
    /// allow. BFV and TFHE keys the session already holds are not made
    /// again: their steps are predicted at 0 and say so.
    pub fn plan_with(&self, program: &Program, options: PlanOptions) -> Result<Plan> {
        let mut plan = plan_with(program, &self.costs, options)?;
        let held: Vec<bool> = plan
            .steps
            .iter()
            .map(|s| match s.kind {
                StepKind::Keygen(Engine::Bfv, part) => self.bfv_keys_held(&plan, part),
                StepKind::Keygen(Engine::Tfhe, _) => self.tfhe_keys_held(&plan),
                _ => false,
            })
            .collect();
        for (step, held) in plan.steps.iter_mut().zip(held) {
            if held {
                step.predicted_ns = 0.0;
                step.label += " (held by the session)";
            }
        }
        Ok(plan)
    }

    fn bfv_keys_held(&self, plan: &Plan, part: usize) -> bool {
        let needs_relin = bfv_needs_relin(plan, part);
        self.bfv.get(plan.bfv[part].params.name()).is_some_and(|k| {
            k.rotations == bfv_rotations(plan, part) && (k.rk.is_some() || !needs_relin)
        })
    }

    fn tfhe_keys_held(&self, plan: &Plan) -> bool {
        self.tfhe.is_some()
            && (0..plan.bfv.len()).all(|k| {
                !plan.placements.contains(&Placement::BfvToTfhe(k))
                    || self.transition.contains_key(plan.bfv[k].params.name())
            })
    }

    /// Runs `plan` on `inputs` (checked first: nothing runs on bad inputs),
    /// records each step's measured time in the plan and returns the
    /// decrypted outputs.
    pub fn run(
        &mut self,
        plan: &mut Plan,
        inputs: &BTreeMap<String, PlainValue>,
    ) -> Result<Outputs> {
        check_inputs(&plan.program, inputs)?;
        check_transitions(plan)?;
        self.released.clear();
        let mut vals: Vec<Option<Val>> = (0..plan.program.nodes.len()).map(|_| None).collect();
        let mut outputs = Vec::new();
        let mut ckks_transforms: HashMap<usize, ckks::LinearTransform> = HashMap::new();
        let mut floods_checked = false;
        for k in 0..plan.steps.len() {
            let start = Instant::now();
            match plan.steps[k].kind.clone() {
                StepKind::Keygen(Engine::Bfv, part) => self.bfv_keys(plan, part)?,
                StepKind::Keygen(Engine::Ckks, _) => ckks_transforms = self.ckks_keys(plan)?,
                StepKind::Keygen(Engine::Tfhe, _) => {
                    self.tfhe_keys()?;
                    self.transition_keys(plan)?;
                }
                StepKind::Encrypt(i) => {
                    let Op::Input { name, .. } = &plan.program.nodes[i].op else {
                        return Err(wrong("input"));
                    };
                    vals[i] = Some(self.encrypt(plan, i, &inputs[name])?)
                }
                StepKind::RoundTrip { node: i, .. } => {
                    let value = self.round_trip(plan, i, &vals)?;
                    vals[i] = Some(self.encrypt(plan, i, &value)?)
                }
                StepKind::Op(i) | StepKind::Transition { node: i, .. } => {
                    let v = self.op(plan, i, &vals, &ckks_transforms)?;
                    vals[i] = Some(v);
                }
                StepKind::Decrypt(o) => {
                    if !floods_checked {
                        self.check_floods(plan)?;
                        floods_checked = true;
                    }
                    let (name, i) = plan.program.outputs[o].clone();
                    let v = vals[i as usize].as_ref().ok_or_else(|| wrong("output"))?;
                    let (value, released) = self.decrypt(plan, i as usize, v)?;
                    if let Some(r) = released {
                        let set = self.set_of(plan, i as usize)?;
                        self.released.insert(name.clone(), (set, r));
                    }
                    outputs.push((name, value));
                }
            }
            plan.steps[k].measured_ns = Some(start.elapsed().as_nanos() as f64);
            if self.record_sizes {
                plan.steps[k].bytes = match plan.steps[k].kind {
                    StepKind::Keygen(engine, part) => Some(self.key_bytes(plan, engine, part)?),
                    StepKind::Encrypt(i)
                    | StepKind::Op(i)
                    | StepKind::Transition { node: i, .. }
                    | StepKind::RoundTrip { node: i, .. } => {
                        vals[i].as_ref().map(|v| self.value_bytes(v)).transpose()?
                    }
                    StepKind::Decrypt(_) => None,
                };
            }
        }
        Ok(Outputs { values: outputs })
    }

    fn bfv_keys(&mut self, plan: &Plan, part: usize) -> Result<()> {
        if self.bfv_keys_held(plan, part) {
            return Ok(());
        }
        let params = &plan.bfv[part].params;
        let rotations = bfv_rotations(plan, part);
        let needs_relin = bfv_needs_relin(plan, part);
        let ctx = bfv::BfvContext::new(params.clone())?;
        let sk = bfv::SecretKey::generate(&ctx)?;
        // A new secret key: a transition key of the old one is stale.
        self.transition.remove(params.name());
        let rk = needs_relin.then(|| sk.relin_key()).transpose()?;
        let gk = (!rotations.is_empty())
            .then(|| sk.galois_keys(&rotations, false))
            .transpose()?;
        self.bfv.insert(
            params.name().to_string(),
            BfvKeys {
                ctx,
                pk: sk.public_key()?,
                sk,
                rk,
                gk,
                rotations,
            },
        );
        Ok(())
    }

    /// CKKS keys and the linear transforms (their rotations decide the Galois keys).
    fn ckks_keys(&mut self, plan: &Plan) -> Result<HashMap<usize, ckks::LinearTransform>> {
        let params = plan.ckks.as_ref().ok_or_else(|| wrong("keygen"))?;
        let ctx = match self.ckks.get(params.name()) {
            Some(k) => k.ctx.clone(),
            None => ckks::CkksContext::new(params.clone())?,
        };
        let mut transforms = HashMap::new();
        let mut rotations = BTreeSet::new();
        let mut needs_relin = false;
        for (i, node) in plan.program.nodes.iter().enumerate() {
            if plan.placements[i] != Placement::Ckks {
                continue;
            }
            let period = |a: &u32| plan.packing[*a as usize].period;
            match &node.op {
                // Coefficient-encoded inner products rotate nothing.
                Op::Sum(a) | Op::Dot(a, _) | Op::DotPlain(a, _)
                    if !plan.packing[i].coefficients =>
                {
                    let mut s = 1;
                    while s < period(a) {
                        rotations.insert(s as i64);
                        s *= 2;
                    }
                }
                Op::MatVec { x, rows } => {
                    let dim = period(x).max(rows.len().next_power_of_two());
                    let level = ctx.max_level() - plan.packing[*x as usize].depth;
                    let lt = ckks::LinearTransform::new(&ctx, rows, dim, level)?;
                    rotations.extend(lt.rotation_steps());
                    transforms.insert(i, lt);
                }
                _ => {}
            }
            needs_relin |= matches!(
                &node.op,
                Op::Mul(..) | Op::Dot(..) | Op::Polynomial(..) | Op::Chebyshev { .. }
            );
        }
        if let Some(k) = self.ckks.get(params.name()) {
            if rotations.is_subset(&k.rotations) && (k.rk.is_some() || !needs_relin) {
                return Ok(transforms);
            }
        }
        let sk = ckks::SecretKey::generate(&ctx)?;
        // A new secret key: a transition key of the old one is stale.
        self.transition.remove(params.name());
        let rk = needs_relin.then(|| sk.relin_key()).transpose()?;
        let steps: Vec<i64> = rotations.iter().copied().collect();
        let gk = (!steps.is_empty())
            .then(|| sk.galois_keys(&steps, false))
            .transpose()?;
        self.ckks.insert(
            params.name().to_string(),
            CkksKeys {
                ctx,
                pk: sk.public_key()?,
                sk,
                rk,
                gk,
                rotations,
            },
        );
        Ok(transforms)
    }

    fn tfhe_keys(&mut self) -> Result<()> {
        if self.tfhe.is_none() {
            let ck = tfhe::ClientKey::generate(&crate::plan::tfhe_set())?;
            let sk = ck.server_key()?;
            self.tfhe = Some(TfheKeys { ck, sk });
        }
        Ok(())
    }

    /// The transition keys of the BFV parts and the CKKS set with a
    /// transition to TFHE (after their keys and the TFHE keys exist).
    fn transition_keys(&mut self, plan: &Plan) -> Result<()> {
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
            self.transition.insert(name, key);
        }
        Ok(())
    }

    fn bfv_part(&self, plan: &Plan, part: usize) -> Result<&BfvKeys> {
        self.bfv
            .get(plan.bfv[part].params.name())
            .ok_or_else(|| wrong("bfv keys"))
    }

    fn ckks_part(&self, plan: &Plan) -> Result<&CkksKeys> {
        let name = plan.ckks.as_ref().map_or("", |p| p.name());
        self.ckks.get(name).ok_or_else(|| wrong("ckks keys"))
    }

    fn tfhe_part(&self) -> Result<&TfheKeys> {
        self.tfhe.as_ref().ok_or_else(|| wrong("tfhe keys"))
    }

    /// A BFV plaintext of `values` (slots 0..len or coefficients 0..len).
    fn bfv_plain(&self, plan: &Plan, part: usize, values: &[i128]) -> Result<bfv::Plaintext> {
        let k = self.bfv_part(plan, part)?;
        let t = k.ctx.plain_modulus() as i128;
        // Inputs lie in (-t, t) (check_inputs, and the planner's t covers
        // their range): one masked add, no division on them. Only public
        // weights can be larger.
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
        Ok(match plan.bfv[part].encoding {
            BfvEncoding::Slots => bfv::Plaintext::from_slots(&k.ctx, &reduced)?,
            BfvEncoding::Coefficients => bfv::Plaintext::from_coeffs(&k.ctx, &reduced)?,
        })
    }

    /// A CKKS plaintext of `values` repeated with `period` (zeros in
    /// len..period) at `level` and `scale`, under the declared `bound`
    /// (`None`: a public operand, bounded by its own largest value).
    fn ckks_plain(
        &self,
        plan: &Plan,
        values: &[f64],
        period: usize,
        level: usize,
        scale: f64,
        bound: Option<f64>,
    ) -> Result<ckks::Plaintext> {
        let k = self.ckks_part(plan)?;
        let mut padded = values.to_vec();
        padded.resize(period, 0.0);
        let packed = ckks::LinearTransform::pack(&padded, period, k.ctx.slots());
        let bound =
            bound.unwrap_or_else(|| values.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs())));
        Ok(ckks::Plaintext::encode_real(
            &k.ctx, &packed, level, scale, bound,
        )?)
    }

    /// The key holder's half of a round trip at conversion node `i`: its
    /// operand decrypted and converted to the node's kind.
    fn round_trip(&self, plan: &Plan, i: usize, vals: &[Option<Val>]) -> Result<PlainValue> {
        let op = &plan.program.nodes[i].op;
        let a = op.operands()[0] as usize;
        let v = vals[a].as_ref().ok_or_else(|| wrong(op.name()))?;
        let ints = match self.decrypt(plan, a, v)?.0 {
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

    /// Encrypts `value` as node `i`'s value (an input, or the key holder's
    /// half of a round trip).
    fn encrypt(&self, plan: &Plan, i: usize, value: &PlainValue) -> Result<Val> {
        let kind = &plan.program.nodes[i].kind;
        match (plan.placements[i], value) {
            (Placement::Bfv(part), PlainValue::Ints(v)) => {
                let pt = self.bfv_plain(plan, part, v)?;
                Ok(Val::Bfv(self.bfv_part(plan, part)?.sk.encrypt(&pt)?))
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
                let pt = self.ckks_plain(
                    plan,
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

    fn op(
        &self,
        plan: &Plan,
        i: usize,
        vals: &[Option<Val>],
        transforms: &HashMap<usize, ckks::LinearTransform>,
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
                    &self.tfhe_part()?.sk,
                )
                .map_err(|e| Error::Refused {
                    op: node.op.name().to_string(),
                    msg: e.to_string(),
                })?;
                Ok(Val::Bits(bits))
            }
            Placement::BfvToTfhe(part) => {
                let key = self
                    .transition
                    .get(plan.bfv[part].params.name())
                    .ok_or_else(|| wrong("transition key"))?;
                let t = self.tfhe_part()?;
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
                    return Ok(Val::Radix(vec![signed_argmax(
                        &sources, r, bits, key, &t.sk,
                    )?]));
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
                                tfhe_server: &t.sk,
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let out = (0..coefficients.len())
                        .map(|v| {
                            let bits: Vec<_> = decisions.iter().map(|d| d[v].clone()).collect();
                            lookup_from_decisions(&t.sk, &bits, table)
                        })
                        .collect::<Result<_>>()?;
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
                    tfhe_server: &t.sk,
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
        let keys = self.bfv_part(plan, part)?;
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
        let product = x.mul_plain(&self.bfv_plain(plan, part, &weights)?)?;
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
        let keys = self.bfv_part(plan, part)?;
        let ct = |k: &u32| match get(k)? {
            Val::Bfv(c) => Ok(c),
            _ => Err(wrong(node.op.name())),
        };
        let rk = || keys.rk.as_ref().ok_or_else(|| wrong("relinearization key"));
        let mul = |a: &bfv::Ciphertext, b: &bfv::Ciphertext| -> Result<bfv::Ciphertext> {
            Ok(a.mul(b)?.relinearize(rk()?)?)
        };
        let t = keys.ctx.plain_modulus() as i128;
        let constant = |c: &Scalar| {
            bfv::Plaintext::from_coeffs(&keys.ctx, &[(int(c) as i128).rem_euclid(t) as u64])
        };
        let repeat =
            |c: &Scalar, len: usize| self.bfv_plain(plan, part, &vec![int(c) as i128; len]);
        // x <- x + rotate(x, s) for s = len/2 .. 1, with one lazy ModDown.
        let tree = |x: bfv::Ciphertext, len: usize| -> Result<bfv::Ciphertext> {
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
                ct(a)?.mul_plain(&self.bfv_plain(plan, part, &reversed)?)?
            }
            Op::DotPlain(a, w) => {
                let w: Vec<i128> = w.iter().map(|s| int(s) as i128).collect();
                tree(ct(a)?.mul_plain(&self.bfv_plain(plan, part, &w)?)?, len(a))?
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
        transforms: &HashMap<usize, ckks::LinearTransform>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
        let keys = self.ckks_part(plan)?;
        let ct = |k: &u32| match get(k)? {
            Val::Ckks(c, p) => Ok((c, *p)),
            _ => Err(wrong(node.op.name())),
        };
        let rk = || keys.rk.as_ref().ok_or_else(|| wrong("relinearization key"));
        let gk = || keys.gk.as_ref().ok_or_else(|| wrong("galois keys"));
        let len = |k: &u32| plan.program.nodes[*k as usize].kind.len();
        // A product with a plaintext of `values` at scale q_level, rescaled: one level.
        let mul_plain =
            |c: &ckks::Ciphertext, values: &[f64], period: usize| -> Result<ckks::Ciphertext> {
                let q = keys.ctx.prime(c.level())? as f64;
                let pt = self.ckks_plain(plan, values, period, c.level(), q, None)?;
                Ok(c.mul_plain(&pt)?.rescale()?)
            };
        let sum = |c: ckks::Ciphertext, period: usize| -> Result<ckks::Ciphertext> {
            if period == 1 {
                return Ok(c);
            }
            Ok(c.slot_sum(period, gk()?)?)
        };
        let mask = |c: ckks::Ciphertext, n: usize, period: usize| -> Result<ckks::Ciphertext> {
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
            |c: &ckks::Ciphertext, values: &[f64], scale: f64| -> Result<ckks::Plaintext> {
                let bound = values.iter().map(|v| v.abs()).sum::<f64>();
                Ok(ckks::Plaintext::from_coefficients(
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
                x.add_plain(&self.ckks_plain(
                    plan,
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
                    return Err(Error::Engine(format!(
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
        let sk = &self.tfhe_part()?.sk;
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
            &tfhe::RadixCiphertext,
            &tfhe::RadixCiphertext,
        ) -> tfhe::Result<tfhe::RadixCiphertext>|
         -> Result<Vec<tfhe::RadixCiphertext>> {
            Ok(radix(a)?
                .iter()
                .zip(radix(b)?)
                .map(|(x, y)| f(x, y))
                .collect::<std::result::Result<_, _>>()?)
        };
        let map = |a: &u32,
                   f: &dyn Fn(&tfhe::RadixCiphertext) -> tfhe::Result<tfhe::RadixCiphertext>|
         -> Result<Vec<tfhe::RadixCiphertext>> {
            Ok(radix(a)?
                .iter()
                .map(f)
                .collect::<std::result::Result<_, _>>()?)
        };
        let total = |terms: Vec<tfhe::RadixCiphertext>| -> Result<Vec<tfhe::RadixCiphertext>> {
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
                    .map(|v| lookup_u8(sk, v, table))
                    .collect::<Result<_>>()?,
            ),
            Op::Argmax(a) => Val::Radix(vec![tournament(sk, radix(a)?.clone(), bits)?]),
            op => return Err(wrong(op.name())),
        };
        Ok(out)
    }

    /// The set whose keys open node `i`'s release.
    fn set_of(&self, plan: &Plan, i: usize) -> Result<String> {
        match plan.placements[i] {
            Placement::Bfv(part) => Ok(plan.bfv[part].params.name().to_string()),
            Placement::Ckks => Ok(plan.ckks.as_ref().map_or("", |p| p.name()).to_string()),
            _ => Err(wrong("output")),
        }
    }

    /// The asked values of a BFV value (the first `len`), as they leave the
    /// server ([`Released`]).
    fn release(
        &self,
        keys: &BfvKeys,
        encoding: BfvEncoding,
        c: &bfv::Ciphertext,
        len: usize,
        dirty: bool,
    ) -> Result<Released> {
        let fresh = c.rerandomize(&keys.pk)?;
        Ok(match encoding {
            BfvEncoding::Slots if !dirty => Released::Slots(fresh),
            BfvEncoding::Slots => {
                let mask: Vec<u64> = (0..keys.ctx.n()).map(|s| u64::from(s < len)).collect();
                let mask = bfv::Plaintext::from_slots(&keys.ctx, &mask)?;
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
    fn release_ckks(&self, plan: &Plan, i: usize, c: &ckks::Ciphertext) -> Result<Released> {
        let keys = self.ckks_part(plan)?;
        let len = plan.program.nodes[i].kind.len();
        let masked = match plan.packing[i].release {
            ReleaseMask::Product => {
                let mask = vec![1.0; len];
                let q = keys.ctx.prime(c.level())? as f64;
                let pt = self.ckks_plain(plan, &mask, keys.ctx.slots(), c.level(), q, None)?;
                c.mul_plain(&pt)?.rescale()?
            }
            ReleaseMask::Folded | ReleaseMask::None => c.clone(),
        };
        let zero = ckks::Plaintext::encode_real(
            &keys.ctx,
            &[0.0],
            masked.level(),
            masked.scale(),
            f64::MIN_POSITIVE,
        )?;
        let fresh = masked.add(&keys.pk.encrypt(&zero)?)?;
        if plan.packing[i].coefficients {
            let q0 = keys.ctx.q_primes()[0];
            let lwes = fresh.sample_extract(&(0..len).collect::<Vec<_>>())?;
            return Ok(Released::CkksExtracted(lwes, fresh.scale(), q0));
        }
        Ok(Released::CkksSlots(fresh))
    }

    /// Everything in a release, decrypted with the keys of `set`: every
    /// slot, or every extracted coefficient (BFV values mod t).
    fn open(&self, set: &str, released: &Released) -> Result<PlainValue> {
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
            Released::CkksSlots(c) => PlainValue::Reals(match &self.ckks_flooding {
                Some(flooding) => ckks_keys()?.sk.decrypt_flooded_real(c, flooding)?,
                None => ckks_keys()?.sk.decrypt_real(c)?,
            }),
            Released::CkksExtracted(..) if self.ckks_flooding.is_some() => {
                return Err(unflooded_coefficients())
            }
            Released::CkksExtracted(lwes, scale, q0) => {
                let key = ckks_keys()?.sk.lwe_key();
                // The phase (scale x + e) 2^64 / q_0 as a signed torus value.
                let unit = *q0 as f64 / 2f64.powi(64) / scale;
                PlainValue::Reals(
                    lwes.iter()
                        .map(|l| {
                            let phase = key.phase(l).map_err(|e| Error::Engine(e.to_string()))?;
                            Ok(phase as i64 as f64 * unit)
                        })
                        .collect::<Result<_>>()?,
                )
            }
        })
    }

    /// The key holder's audit of the last run: output `name` as it was
    /// released for decryption, decrypted whole. BFV: every slot of the
    /// masked ciphertext or every extracted coefficient, values mod t;
    /// CKKS: every slot (the asked ones first, the others 0 within the
    /// error bound) or every extracted coefficient. Nothing but the asked
    /// values is in it.
    pub fn released_whole(&self, name: &str) -> Result<PlainValue> {
        let (set, released) = self.released.get(name).ok_or_else(|| {
            Error::Input(format!("no BFV or CKKS output {name:?} in the last run"))
        })?;
        self.open(set, released)
    }

    /// For a trial run: log2 of the infinity norm of the coefficient error
    /// of CKKS output `name` as the last run released it in slots, against
    /// `expected` (the asked values; every other slot is expected 0): the B
    /// of [`Session::flood_ckks_releases`]. Measure it under this session's
    /// keys only when they are not the keys whose decryptions are shared
    /// (the error is a function of the secret).
    pub fn release_noise_bound_log2(&self, name: &str, expected: &[f64]) -> Result<f64> {
        let Some((set, Released::CkksSlots(c))) = self.released.get(name) else {
            return Err(Error::Input(format!(
                "no CKKS output {name:?} released in slots in the last run"
            )));
        };
        let keys = self.ckks.get(set).ok_or_else(|| wrong("ckks keys"))?;
        let slots = keys.ctx.slots();
        if expected.len() > slots {
            return input_err(format!(
                "{} expected values for {slots} slots",
                expected.len()
            ));
        }
        let mut all = vec![ckks::Complex::from(0.0); slots];
        for (a, &e) in all.iter_mut().zip(expected) {
            *a = ckks::Complex::from(e);
        }
        Ok(keys.sk.noise_bound_log2(c, &all)?)
    }

    /// Decrypts node `i`'s value for the key holder; a BFV or CKKS value's
    /// release ([`Released`]) comes with it.
    fn decrypt(&self, plan: &Plan, i: usize, v: &Val) -> Result<(PlainValue, Option<Released>)> {
        let kind = plan.program.nodes[i].kind;
        let len = kind.len();
        if let (Val::Bfv(c), Placement::Bfv(part)) = (v, plan.placements[i]) {
            let keys = self.bfv_part(plan, part)?;
            let dirty = slots_dirty(&plan.program)[i];
            let released = self.release(keys, plan.bfv[part].encoding, c, len, dirty)?;
            let PlainValue::Ints(raw) = self.open(plan.bfv[part].params.name(), &released)? else {
                return Err(wrong("output"));
            };
            let t = keys.ctx.plain_modulus() as i128;
            let centred = matches!(kind, Kind::Signed { .. });
            let values = PlainValue::Ints(
                raw[..len]
                    .iter()
                    // Decrypted data: centred by a product, not a branch.
                    .map(|&x| x - t * i128::from(centred & (x > t / 2)))
                    .collect(),
            );
            return Ok((values, Some(released)));
        }
        if let Val::Ckks(c, _) = v {
            let released = self.release_ckks(plan, i, c)?;
            let set = self.set_of(plan, i)?;
            let PlainValue::Reals(all) = self.open(&set, &released)? else {
                return Err(wrong("output"));
            };
            return Ok((PlainValue::Reals(all[..len].to_vec()), Some(released)));
        }
        let value = match v {
            Val::Radix(r) => {
                let ck = &self.tfhe_part()?.ck;
                PlainValue::Ints(
                    r.iter()
                        .map(|x| Ok(ck.decrypt_radix(x)? as i128))
                        .collect::<Result<_>>()?,
                )
            }
            Val::Bits(b) => {
                let ck = &self.tfhe_part()?.ck;
                PlainValue::Bits(
                    b.iter()
                        .map(|x| Ok(ck.decrypt(x)? == 1))
                        .collect::<Result<_>>()?,
                )
            }
            _ => return Err(wrong("output")),
        };
        Ok((value, None))
    }
}

/// The names of the sets (BFV parts, the CKKS set) whose values a plan
/// moves to TFHE by a transition.
fn transition_sets(plan: &Plan) -> Vec<String> {
    let mut names: Vec<String> = (0..plan.bfv.len())
        .filter(|&k| plan.placements.contains(&Placement::BfvToTfhe(k)))
        .map(|k| plan.bfv[k].params.name().to_string())
        .collect();
    if let (true, Some(set)) = (
        plan.placements.contains(&Placement::CkksToTfhe),
        plan.ckks.as_ref(),
    ) {
        names.push(set.name().to_string());
    }
    names
}

/// The bytes attestation commits to for one output: the output's name and
/// its values, length-prefixed, little-endian (reals as IEEE-754 bits).
pub fn output_bytes(name: &str, value: &PlainValue) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(name.len() as u64).to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    let (tag, count) = match value {
        PlainValue::Ints(v) => (1u8, v.len()),
        PlainValue::Reals(v) => (2, v.len()),
        PlainValue::Bits(v) => (3, v.len()),
    };
    out.push(tag);
    out.extend_from_slice(&(count as u64).to_le_bytes());
    match value {
        PlainValue::Ints(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        PlainValue::Reals(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_bits().to_le_bytes())),
        PlainValue::Bits(v) => out.extend(v.iter().map(|&b| b as u8)),
    }
    out
}

/// The attestation route of a plan: its engines and its canonical
/// description (the program's digest, sets, placements, transitions,
/// key-holder round trips).
pub fn route(plan: &Plan) -> Route {
    let engines: Vec<&str> = plan.engines().iter().map(|e| e.name()).collect();
    Route::new(engines.join("+"), plan.route())
}

/// One attestation record per output, binding its bytes, the plan and `context`.
pub fn attest_outputs(
    identity: &Identity,
    plan: &Plan,
    outputs: &Outputs,
    context: &[u8],
) -> Result<Vec<Record>> {
    let route = route(plan);
    outputs
        .values
        .iter()
        .map(|(name, v)| {
            Ok(triskel_attest::attest(
                identity,
                &output_bytes(name, v),
                &route,
                context,
            )?)
        })
        .collect()
}

/// Verifies one output's record against the plan and context.
pub fn verify_output(
    public: &PublicIdentity,
    plan: &Plan,
    name: &str,
    value: &PlainValue,
    context: &[u8],
    record: &Record,
) -> Result<Verified> {
    Ok(triskel_attest::verify(
        public,
        &output_bytes(name, value),
        &route(plan),
        context,
        record,
    )?)
}
