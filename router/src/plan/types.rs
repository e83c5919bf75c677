//! What a plan is made of: engines, placements, BFV parts, packings,
//! steps, release masks, and the plan itself with its read-only accessors.

use std::collections::BTreeSet;

use triskel_bfv::BfvParameters;
use triskel_ckks::CkksParameters;
use triskel_tfhe::TfheParameters;

use super::{tfhe_set, PlanChoice, PlanOptions};
use crate::program::{Kind, Program};

/// An engine.
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Engine, Kind, Program};
///
/// let mut p = Program::new();
/// let r = p.input("r", Kind::Real { len: 2 })?;
/// let y = p.add(r, r)?;
/// p.output("y", y)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// assert_eq!(plan.engines(), [Engine::Ckks]);
/// assert_eq!(plan.choice().engines, [Engine::Ckks, Engine::Ckks]); // per node
/// assert_eq!(Engine::Ckks.name(), "ckks");
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    Bfv,
    Ckks,
    Tfhe,
}

impl Engine {
    /// Lower-case name, as in the cost table and attestation routes.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Bfv => "bfv",
            Engine::Ckks => "ckks",
            Engine::Tfhe => "tfhe",
        }
    }
}

/// How a BFV part encodes its vectors.
///
/// # Examples
///
/// ```
/// use triskel::{plan, BfvEncoding, CostModel, Kind, Program, Scalar};
///
/// // Signed integers compared with a constant: coefficient encoding, read by
/// // the BFV -> TFHE transition.
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
/// let big = p.threshold(x, Scalar::Int(50))?;
/// p.output("big", big)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// assert_eq!(plan.bfv()[0].encoding, BfvEncoding::Coefficients);
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BfvEncoding {
    /// Values in slots 0..len of row 0 (t prime, 1 mod 2n).
    Slots,
    /// Values in coefficients 0..len (t = 2^bits): additions and scalars only.
    Coefficients,
}

/// The BFV contexts of a plan: one per plaintext modulus and encoding.
///
/// # Examples
///
/// ```
/// use triskel::{plan, BfvEncoding, CostModel, Kind, Program};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Modular { len: 4, modulus: 65537 })?;
/// let y = p.mul(x, x)?;
/// p.output("y", y)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// let part = &plan.bfv()[0];
/// assert_eq!(part.encoding, BfvEncoding::Slots);
/// assert_eq!(part.params.plain_modulus(), 65537);
/// assert!(plan.choice().bfv.contains(&part.base));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BfvPart {
    pub encoding: BfvEncoding,
    pub params: BfvParameters,
    /// The named set it derives from (the cost table's key).
    pub base: String,
}

/// Where a node runs.
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Engine, Kind, Placement, Program, Scalar};
///
/// let mut p = Program::new();
/// let r = p.input("r", Kind::Real { len: 4 })?;
/// let high = p.threshold_real(r, 0.5, 0.01)?;
/// p.output("high", high)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// assert_eq!(plan.placements(), [Placement::Ckks, Placement::CkksToTfhe]);
/// assert_eq!(Placement::CkksToTfhe.engine(), Engine::Tfhe);
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    Bfv(usize),
    Ckks,
    Tfhe,
    /// A comparison of BFV values of part `usize`: BFV -> TFHE transition.
    BfvToTfhe(usize),
    /// A threshold on coefficient-encoded CKKS values: CKKS -> TFHE transition.
    CkksToTfhe,
}

impl Placement {
    pub fn engine(self) -> Engine {
        match self {
            Placement::Bfv(_) => Engine::Bfv,
            Placement::Ckks => Engine::Ckks,
            Placement::Tfhe | Placement::BfvToTfhe(_) | Placement::CkksToTfhe => Engine::Tfhe,
        }
    }
}

/// What a step does.
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Engine, Kind, Program, StepKind};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 2, bound: 10 })?;
/// let y = p.add(x, x)?;
/// p.output("y", y)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// let kinds: Vec<&StepKind> = plan.steps().iter().map(|s| &s.kind).collect();
/// assert_eq!(kinds.first(), Some(&&StepKind::Keygen(Engine::Bfv, 0)));
/// assert!(kinds.contains(&&StepKind::Encrypt(0)));
/// assert!(kinds.contains(&&StepKind::Op(1)));
/// assert_eq!(kinds.last(), Some(&&StepKind::Decrypt(0)));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum StepKind {
    /// Key generation of one engine part (only the keys the program needs).
    Keygen(Engine, usize),
    /// Encryption of input node `usize`.
    Encrypt(usize),
    /// Operation node `usize`.
    Op(usize),
    /// Node `usize` needs a transition from one engine to another.
    Transition {
        node: usize,
        from: Engine,
        to: Engine,
    },
    /// Node `usize` (a conversion) crosses engines where no homomorphic
    /// path exists: the key holder decrypts its operand and encrypts the
    /// values again in the other engine (allowed by
    /// [`PlanOptions::allow_round_trips`] only).
    RoundTrip {
        node: usize,
        from: Engine,
        to: Engine,
    },
    /// Decryption of output `usize`.
    Decrypt(usize),
}

/// One step of a plan.
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Engine, Kind, Program, Step};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 2, bound: 10 })?;
/// let y = p.add(x, x)?;
/// p.output("y", y)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// let step: &Step = &plan.steps()[0];
/// assert_eq!(step.engine, Engine::Bfv);
/// assert!(step.predicted_ns > 0.0);
/// // Not run yet: nothing measured, no ratio.
/// assert_eq!((step.measured_ns, step.ratio()), (None, None));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub kind: StepKind,
    pub engine: Engine,
    pub params: String,
    pub label: String,
    pub predicted_ns: f64,
    pub measured_ns: Option<f64>,
    /// After a run with sizes recorded ([`crate::Session::record_sizes`]):
    /// serialized bytes of the step's ciphertext, or of the evaluation keys
    /// a key generation step made.
    pub bytes: Option<usize>,
}

impl Step {
    /// predicted / measured, after a run; None for a step predicted at 0
    /// (its work belongs to another step, or its keys exist already).
    pub fn ratio(&self) -> Option<f64> {
        self.measured_ns
            .filter(|&m| m > 0.0 && self.predicted_ns > 0.0)
            .map(|m| self.predicted_ns / m)
    }
}

/// How a released CKKS value in slots gets every other slot zeroed.
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Kind, Program, ReleaseMask, Scalar};
///
/// let mut p = Program::new();
/// let r = p.input("r", Kind::Real { len: 4 })?;
/// let h = p.mul_scalar(r, Scalar::Real(0.5))?;
/// let y = p.mul(r, r)?;
/// p.output("h", h)?;
/// p.output("y", y)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// let release = |v: triskel::Value| plan.packing()[v.index()].release;
/// assert_eq!(release(r), ReleaseMask::None); // not an output
/// assert_eq!(release(h), ReleaseMask::Folded); // the scalar product masks it
/// assert_eq!(release(y), ReleaseMask::Product); // one more product, one level
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReleaseMask {
    /// Not released in slots (not an output, or coefficient-encoded: the
    /// asked coefficients are extracted, the rest never leaves).
    #[default]
    None,
    /// The node's own plaintext product (a scalar product) carries the 0/1
    /// mask: no extra level.
    Folded,
    /// A 0/1 plaintext product and a rescale at release: one level.
    Product,
}

/// CKKS layout of a node's value: vectors are packed periodically over all
/// slots with `period` (a power of two >= len, zeros in len..period unless
/// `dirty`), or, with `coefficients`, held in coefficients 0..len.
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Kind, Program};
///
/// let mut p = Program::new();
/// let r = p.input("r", Kind::Real { len: 3 })?;
/// let y = p.mul(r, r)?;
/// p.output("y", y)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// let packing = plan.packing()[y.index()];
/// assert!(packing.period >= 3 && packing.period.is_power_of_two());
/// assert!(!packing.coefficients);
/// assert!(packing.depth >= 1); // the product used a level
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packing {
    pub period: usize,
    pub dirty: bool,
    /// Levels used so far.
    pub depth: usize,
    /// The operand must be masked (0/1 product, one level) before this node.
    pub mask_operand: bool,
    /// Coefficient encoding (values read by a CKKS -> TFHE threshold).
    pub coefficients: bool,
    /// How the value is masked when released.
    pub release: ReleaseMask,
}

/// A score of the single-product placement: the node's value (an inner
/// product with plaintext weights) is coefficient `coefficient` of the one
/// plaintext product computed at node `leader` for its whole group. The
/// product's other coefficients hold partial sums of the templates, so it
/// is never decrypted or used whole: only decisions read it, by extracting
/// their score's coefficient as an LWE ciphertext.
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Kind, Program, Scalar, ScoreSlot};
///
/// // Two scores of one vector, each only decided: one shared product.
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
/// let a = p.dot_plain(x, &[1, 2, 3, 4].map(Scalar::Int))?;
/// let b = p.dot_plain(x, &[4, 3, 2, 1].map(Scalar::Int))?;
/// let (ta, tb) = (p.threshold(a, Scalar::Int(500))?, p.threshold(b, Scalar::Int(500))?);
/// let m = p.any(&[ta, tb])?;
/// p.output("m", m)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// let (sa, sb): (ScoreSlot, ScoreSlot) = match plan.scores() {
///     [_, Some(sa), Some(sb), ..] => (*sa, *sb),
///     other => panic!("no shared product: {other:?}"),
/// };
/// assert_eq!(sa.leader, sb.leader);
/// assert_ne!(sa.coefficient, sb.coefficient);
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoreSlot {
    pub leader: usize,
    pub coefficient: usize,
}

/// A plan: placements, parameter sets and steps. Only the planner writes
/// its parts ([`Session::run`](crate::Session::run) trusts them; readers
/// take them through the methods of the same names).
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Kind, Placement, Program, Scalar};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
/// let s = p.dot_plain(x, &[1, -2, 3, 4].map(Scalar::Int))?;
/// p.output("s", s)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// assert_eq!(plan.placements(), [Placement::Bfv(0), Placement::Bfv(0)]);
/// assert!(plan.ckks().is_none() && plan.tfhe().is_none());
/// assert!(plan.round_trips().is_empty());
/// assert!(plan.route().ends_with("round-trips:none"));
/// assert!(plan.explain().contains(plan.bfv()[0].params.name()));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Plan {
    pub(crate) program: Program,
    pub(crate) placements: Vec<Placement>,
    pub(crate) bfv: Vec<BfvPart>,
    pub(crate) ckks: Option<CkksParameters>,
    pub(crate) tfhe: Option<TfheParameters>,
    pub(crate) packing: Vec<Packing>,
    /// The single-product placement of inner products whose values only
    /// flow into decisions ([`ScoreSlot`]); `None` for every other node.
    pub(crate) scores: Vec<Option<ScoreSlot>>,
    pub(crate) steps: Vec<Step>,
    /// Nodes that cross engines by a key-holder round trip (conversions
    /// the caller allowed to), with the engine of their operand.
    pub(crate) round_trips: Vec<(usize, Engine)>,
    /// Time the planner took.
    pub(crate) planning_ns: f64,
    /// What the caller allowed the planner.
    pub(crate) options: PlanOptions,
}

impl Plan {
    /// The decisions of this plan that a server must follow ([`PlanChoice`]).
    pub fn choice(&self) -> PlanChoice {
        PlanChoice {
            options: self.options,
            engines: self.placements.iter().map(|p| p.engine()).collect(),
            bfv: self.bfv.iter().map(|b| b.base.clone()).collect(),
            ckks: self.ckks.as_ref().map(|c| c.name().to_string()),
            tfhe: self.tfhe.as_ref().map(|t| t.name.to_string()),
        }
    }

    // Read-only access: `Session::run` trusts a plan's parts, so only the
    // planner writes them.
    /// Bytes of the ciphertexts a run holds, one value per node (an upper
    /// bound: BFV and CKKS values as one ciphertext at the top level, TFHE
    /// values as their blocks' LWE ciphertexts).
    pub fn ciphertext_bytes(&self) -> u64 {
        let rlwe = |set: &triskel_ring::RlweSet| 2 * 8 * (set.n() * set.q_bits().len()) as u64;
        let tfhe = tfhe_set();
        let block = 8 * (tfhe.glwe_dimension * tfhe.polynomial_size + 1) as u64;
        let node_bytes = |i: usize| match self.placements[i] {
            Placement::Bfv(k) => rlwe(&self.bfv[k].params),
            Placement::Ckks => self.ckks.as_ref().map_or(0, |c| rlwe(c)),
            Placement::Tfhe | Placement::BfvToTfhe(_) | Placement::CkksToTfhe => {
                let blocks = match self.program.nodes[i].kind {
                    Kind::Uint { bits, len } => (bits as u64 / 2) * len as u64,
                    k => k.len() as u64,
                };
                blocks * block
            }
        };
        (0..self.placements.len())
            .map(node_bytes)
            .fold(0u64, u64::saturating_add)
    }

    /// The program planned.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Where each node runs, by node index.
    pub fn placements(&self) -> &[Placement] {
        &self.placements
    }

    /// The BFV parts, each with its parameter set and encoding.
    pub fn bfv(&self) -> &[BfvPart] {
        &self.bfv
    }

    /// The CKKS parameter set, if any node runs on CKKS.
    pub fn ckks(&self) -> Option<&CkksParameters> {
        self.ckks.as_ref()
    }

    /// The TFHE parameter set, if any node runs on TFHE.
    pub fn tfhe(&self) -> Option<&TfheParameters> {
        self.tfhe.as_ref()
    }

    /// How each node's values are packed, by node index.
    pub fn packing(&self) -> &[Packing] {
        &self.packing
    }

    /// The single-product placement of inner products that only feed decisions, by node index.
    pub fn scores(&self) -> &[Option<ScoreSlot>] {
        &self.scores
    }

    /// The steps in execution order, with their predicted (and, once run, measured) times.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Nodes that cross engines by a key-holder round trip, with the engine of their operand.
    pub fn round_trips(&self) -> &[(usize, Engine)] {
        &self.round_trips
    }

    /// Time the planner took, in nanoseconds.
    pub fn planning_ns(&self) -> f64 {
        self.planning_ns
    }

    /// Total predicted time in nanoseconds.
    pub fn predicted_ns(&self) -> f64 {
        self.steps.iter().map(|s| s.predicted_ns).sum()
    }

    /// The engines the plan uses, in order.
    pub fn engines(&self) -> Vec<Engine> {
        let set: BTreeSet<Engine> = self.steps.iter().map(|s| s.engine).collect();
        set.into_iter().collect()
    }
}
