//! The one-process convenience: a [`Session`] is a [`Client`](crate::Client)'s
//! key store and a [`Server`](crate::Server)'s evaluator in one place. It
//! plans, generates keys lazily (only the engines, relinearization and
//! rotations the plan needs, kept for later runs with the same sets),
//! encrypts, evaluates every step through the evaluator a server uses,
//! releases and decrypts, timing each step; nothing is serialized or
//! signed on the way. Per-output attestation of decrypted results:
//! [`attest_outputs`].
//!
//! # Examples
//!
//! ```
//! use std::collections::BTreeMap;
//! use triskel::{CostModel, Kind, PlainValue, Program, Scalar, Session};
//!
//! let mut p = Program::new();
//! let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
//! let s = p.dot_plain(x, &[1, -2, 3, 4].map(Scalar::Int))?;
//! p.output("s", s)?;
//! let mut session = Session::with_costs(CostModel::builtin());
//! let mut plan = session.plan(&p)?;
//! let inputs = BTreeMap::from([("x".to_string(), PlainValue::Ints(vec![10, 20, 30, 40]))]);
//! let out = session.run(&mut plan, &inputs)?;
//! assert_eq!(out.get("s"), Some(&PlainValue::Ints(vec![10 - 40 + 90 + 160])));
//! # Ok::<(), triskel::Error>(())
//! ```

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use triskel_attest::{Identity, PublicIdentity, Record, Route, Verified};
use triskel_ckks as ckks;

use crate::client::{convert, set_of, KeyStore};
use crate::cost::CostModel;
use crate::error::{Error, Result};
use crate::plan::{check_transitions, plan_with, Engine, Plan, PlanOptions, StepKind};
use crate::program::{Kind, Op, Program};
use crate::server::{wrong, EvaluationKeys, Evaluator, Released, Val, NOT_CANCELLED};

/// Plain values going in and coming out.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{Error, Kind, PlainValue, Program, Session};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 3, bound: 100 })?;
/// let y = p.mul(x, x)?;
/// p.output("y", y)?;
/// let mut session = Session::new();
/// let mut plan = session.plan(&p)?;
/// let run = |session: &mut Session, plan: &mut _, v: PlainValue| {
///     session.run(plan, &BTreeMap::from([("x".to_string(), v)]))
/// };
/// let out = run(&mut session, &mut plan, PlainValue::Ints(vec![-3, 7, 100]))?;
/// assert_eq!(out.get("y"), Some(&PlainValue::Ints(vec![9, 49, 10_000])));
/// // Values of the wrong kind, or out of the declared range, are refused
/// // before anything runs.
/// let reals = PlainValue::Reals(vec![0.5, 0.5, 0.5]);
/// assert!(matches!(run(&mut session, &mut plan, reals), Err(Error::Input(_))));
/// let big = PlainValue::Ints(vec![101, 0, 0]);
/// assert!(matches!(run(&mut session, &mut plan, big), Err(Error::Input(_))));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum PlainValue {
    /// Integers of `Modular`, `Signed` and `Uint` kinds.
    Ints(Vec<i128>),
    Reals(Vec<f64>),
    Bits(Vec<bool>),
}

/// Decrypted outputs, in the program's output order.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{Kind, PlainValue, Program, Scalar, Session};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Modular { len: 2, modulus: 65537 })?;
/// let plus = p.add_scalar(x, Scalar::Int(1))?;
/// let sum = p.sum(x)?;
/// p.output("plus", plus)?;
/// p.output("sum", sum)?;
/// let mut session = Session::new();
/// let mut plan = session.plan(&p)?;
/// let inputs = BTreeMap::from([("x".to_string(), PlainValue::Ints(vec![65536, 5]))]);
/// let out = session.run(&mut plan, &inputs)?;
/// let names: Vec<&str> = out.values.iter().map(|(n, _)| n.as_str()).collect();
/// assert_eq!(names, ["plus", "sum"]);
/// assert_eq!(out.get("plus"), Some(&PlainValue::Ints(vec![0, 6]))); // mod 65537
/// assert_eq!(out.get("sum"), Some(&PlainValue::Ints(vec![4])));
/// assert_eq!(out.get("other"), None);
/// # Ok::<(), triskel::Error>(())
/// ```
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

/// A key holder's session: the cost model and the keys made so far.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{Kind, PlainValue, Program, Session};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 2, bound: 10 })?;
/// let y = p.add(x, x)?;
/// p.output("y", y)?;
/// let mut session = Session::new();
/// session.record_sizes(true);
/// let mut plan = session.plan(&p)?;
/// let inputs = BTreeMap::from([("x".to_string(), PlainValue::Ints(vec![1, -2]))]);
/// assert_eq!(session.run(&mut plan, &inputs)?.get("y"), Some(&PlainValue::Ints(vec![2, -4])));
/// assert!(plan.steps().iter().all(|s| s.measured_ns.is_some()));
/// assert!(plan.steps()[0].bytes.is_some()); // the evaluation keys' size
///
/// // The keys stay with the session: planning again predicts no key generation.
/// let again = session.plan(&p)?;
/// assert_eq!(again.steps()[0].predicted_ns, 0.0);
/// # Ok::<(), triskel::Error>(())
/// ```
pub struct Session {
    costs: CostModel,
    store: KeyStore,
    record_sizes: bool,
    /// Noise flooding of CKKS slot releases ([`Session::flood_ckks_releases`]).
    ckks_flooding: Option<ckks::Flooding>,
    /// What the last run released per BFV or CKKS output (name -> set, release).
    released: BTreeMap<String, (String, Released)>,
}

fn input_err<T>(msg: String) -> Result<T> {
    Err(Error::Input(msg))
}

/// Checks run-time inputs against the program's declarations: every input
/// present once with its kind's length and range, nothing else.
pub(crate) fn check_inputs(p: &Program, inputs: &BTreeMap<String, PlainValue>) -> Result<()> {
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
            store: KeyStore::default(),
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

    /// Serialized bytes of the evaluation keys a key generation step made.
    fn key_bytes(&self, plan: &Plan, engine: Engine, part: usize) -> Result<usize> {
        let keys = self.store.evaluation_keys(plan, None)?;
        Ok(match engine {
            Engine::Bfv => {
                let k = keys.bfv(part)?;
                k.rk.as_ref().map_or(0, |r| r.to_bytes().len())
                    + k.gk.as_ref().map_or(0, |g| g.to_bytes().len())
            }
            Engine::Ckks => {
                let k = keys.ckks()?;
                k.rk.as_ref().map_or(0, |r| r.to_bytes().len())
                    + k.gk.as_ref().map_or(0, |g| g.to_bytes().len())
            }
            // The server key and the transition keys this plan uses.
            Engine::Tfhe => {
                let transition: usize = keys
                    .transition
                    .values()
                    .map(|key| key.to_bytes().len())
                    .sum();
                keys.tfhe_compressed()?.as_bytes().len() + transition
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
                StepKind::Keygen(Engine::Bfv, part) => self.store.bfv_keys_held(&plan, part),
                StepKind::Keygen(Engine::Tfhe, _) => self.store.tfhe_keys_held(&plan),
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

    /// Runs `plan` on `inputs` (checked first: nothing runs on bad inputs),
    /// records each step's measured time in the plan and returns the
    /// decrypted outputs.
    pub fn run(
        &mut self,
        plan: &mut Plan,
        inputs: &BTreeMap<String, PlainValue>,
    ) -> Result<Outputs> {
        crate::client::one_key_holder(&plan.options, "session")?;
        check_inputs(&plan.program, inputs)?;
        check_transitions(plan)?;
        self.released.clear();
        let mut vals: Vec<Option<Val>> = (0..plan.program.nodes.len()).map(|_| None).collect();
        let mut outputs = Vec::new();
        let mut transforms: Option<HashMap<usize, ckks::LinearTransform>> = None;
        let mut keys: Option<EvaluationKeys> = None;
        let mut floods_checked = false;
        for k in 0..plan.steps.len() {
            let start = Instant::now();
            let kind = plan.steps[k].kind.clone();
            if !matches!(kind, StepKind::Keygen(..) | StepKind::Encrypt(_)) && keys.is_none() {
                keys = Some(self.store.evaluation_keys(plan, transforms.take())?);
            }
            let eval = keys.as_ref().map(|keys| Evaluator {
                plan,
                keys,
                cancel: &NOT_CANCELLED,
            });
            let eval = || eval.as_ref().ok_or_else(|| wrong("evaluation keys"));
            match kind {
                StepKind::Keygen(Engine::Bfv, part) => self.store.keygen_bfv(plan, part)?,
                StepKind::Keygen(Engine::Ckks, _) => {
                    transforms = Some(self.store.keygen_ckks(plan)?)
                }
                StepKind::Keygen(Engine::Tfhe, _) => self.store.keygen_tfhe(plan)?,
                StepKind::Encrypt(i) => {
                    let Op::Input { name, .. } = &plan.program.nodes[i].op else {
                        return Err(wrong("input"));
                    };
                    vals[i] = Some(self.store.encrypt(plan, i, &inputs[name])?)
                }
                StepKind::RoundTrip { node: i, .. } => {
                    let a = plan.program.nodes[i].op.operands()[0] as usize;
                    let v = vals[a].as_ref().ok_or_else(|| wrong("round trip"))?;
                    let released = eval()?.release(a, v)?;
                    let value = convert(plan, i, self.store.open(plan, a, &released, None)?)?;
                    vals[i] = Some(self.store.encrypt(plan, i, &value)?)
                }
                StepKind::Op(i) | StepKind::Transition { node: i, .. } => {
                    let v = eval()?.op_at(i, &vals)?;
                    vals[i] = Some(v);
                }
                StepKind::Decrypt(o) => {
                    if !floods_checked {
                        self.store.check_floods(plan, self.ckks_flooding.as_ref())?;
                        floods_checked = true;
                    }
                    let (name, i) = plan.program.outputs[o].clone();
                    let v = vals[i as usize].as_ref().ok_or_else(|| wrong("output"))?;
                    let released = eval()?.release(i as usize, v)?;
                    let value = self.store.open(
                        plan,
                        i as usize,
                        &released,
                        self.ckks_flooding.as_ref(),
                    )?;
                    if let Some(set) = set_of(plan, i as usize) {
                        self.released.insert(name.clone(), (set, released));
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
                        vals[i].as_ref().map(crate::wire::val_bytes)
                    }
                    StepKind::Decrypt(_) => None,
                };
            }
        }
        Ok(Outputs { values: outputs })
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
        self.store
            .open_whole(set, released, self.ckks_flooding.as_ref())
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
        let keys = self.store.ckks.get(set).ok_or_else(|| wrong("ckks keys"))?;
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
