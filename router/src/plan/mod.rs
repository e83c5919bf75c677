//! The planner: an engine per operation by capability first and by the cost
//! model second, the smallest secure parameter set of each engine that fits
//! its part of the program, and the steps with their predicted times.
//!
//! Capability rules:
//! - reals run on CKKS; integers modulo a prime and signed integers run on
//!   BFV (slot encoding, t chosen from the program's bounds or given);
//! - u8..u64 values and bits run on TFHE, except that a group of u8..u32
//!   values touched only by additions, subtractions and scalar operations may
//!   run on BFV with coefficient encoding and t = 2^bits when the cost model
//!   says it is cheaper;
//! - a comparison of BFV values moves them to TFHE by a transition
//!   ([`crate::bridge::run_bfv_to_tfhe`]). Inner products of one vector
//!   whose values only feed such decisions share one plaintext product
//!   ([`ScoreSlot`]);
//! - a threshold on reals (`threshold_real`) moves them from CKKS to TFHE
//!   ([`crate::transition::ckks_coefficients_above`]): the reals it reads,
//!   and every real connected to them, use the coefficient encoding from
//!   their input on (values in coefficients 0..len, inner products by the
//!   reversed weights, no rotation), which runs additions, scalar
//!   operations and inner products with plaintext weights only. Its
//!   tolerance must exceed what the path reads (the CKKS error bound plus
//!   the reading's rounding): [`ckks_decisions_fit`].
//! - a released CKKS value in slots has every slot but the asked ones
//!   zeroed ([`ReleaseMask`]), in its own plaintext product when it is one
//!   (a scalar product), else by a 0/1 product that the planner gives a
//!   level.
//!
//! Programs that cannot run (an exhausted noise budget or depth, a decision
//! the transition's noise analysis would not pass, a modulus no set
//! batches, vectors longer than any set holds) are refused here, before any
//! key or ciphertext exists, with an error naming the operation.
//!
//! # Examples
//!
//! ```
//! use triskel::{plan, CostModel, Engine, Kind, Program, Scalar};
//!
//! let mut p = Program::new();
//! let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
//! let r = p.input("r", Kind::Real { len: 4 })?;
//! let s = p.dot_plain(x, &[1, -2, 3, 4].map(Scalar::Int))?;
//! let y = p.mul(r, r)?;
//! p.output("s", s)?;
//! p.output("y", y)?;
//! let plan = plan(&p, &CostModel::builtin())?;
//! assert_eq!(plan.engines(), [Engine::Bfv, Engine::Ckks]); // the engines used
//! let per_node = [Engine::Bfv, Engine::Ckks, Engine::Bfv, Engine::Ckks];
//! assert_eq!(plan.choice().engines, per_node);
//! assert!(plan.predicted_ns() > 0.0);
//! println!("{}", plan.explain());
//! # Ok::<(), triskel::Error>(())
//! ```

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Instant;

use triskel_bfv::BfvParameters;
use triskel_ckks::{self as ckks, ChebyshevPolynomial, CkksParameters};
use triskel_tfhe::TfheParameters;

use crate::cost::{CostModel, Primitive};
use crate::error::{Error, Result};
use crate::program::{Cmp, Kind, Op, Program, Scalar, MAX_SIGNED_BOUND};
use crate::transition::{
    analyse_bits, any_bootstraps, ckks_reading, decision_analysis, CkksReading, DecisionAnalysis,
    MAX_LOG2_FAILURE, MAX_TRANSITION_DIMENSION,
};

mod bfv_part;
mod ckks_part;
mod explain;
mod keys;
mod place;
mod steps;
mod tfhe_part;

pub(crate) use self::bfv_part::*;
pub(crate) use self::ckks_part::*;
use self::explain::*;
pub(crate) use self::keys::*;
pub(crate) use self::place::*;
pub(crate) use self::steps::*;
pub(crate) use self::tfhe_part::*;

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

/// What the caller allows the planner beyond homomorphic evaluation.
///
/// # Examples
///
/// ```
/// use triskel::{plan, plan_with, CostModel, Engine, Error, Kind, PlanOptions, Program};
///
/// // u8 values (TFHE) as signed integers (BFV): no homomorphic path.
/// let mut p = Program::new();
/// let u = p.input("u", Kind::Uint { len: 2, bits: 8 })?;
/// let s = p.to_signed(u)?;
/// p.output("s", s)?;
/// let costs = CostModel::builtin();
/// assert!(matches!(plan(&p, &costs), Err(Error::Refused { .. })));
///
/// let options = PlanOptions { allow_round_trips: true, ..PlanOptions::default() };
/// let plan = plan_with(&p, &costs, options)?;
/// assert_eq!(plan.round_trips(), [(s.index(), Engine::Tfhe)]);
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// Conversions with no homomorphic path (TFHE -> BFV/CKKS, BFV ->
    /// CKKS) may take a key-holder round trip: the key holder decrypts the
    /// values and encrypts them again. Off by default: such programs are
    /// refused.
    pub allow_round_trips: bool,
    /// The least CKKS scale, log2 (`None`: no least). Among the sets deep
    /// and wide enough, the planner takes those of the smallest scale that
    /// meets it, then the cheapest; a program no such set holds is refused.
    /// Decryptions with noise flooding need about 2^(log2 B + 31 + p) for p
    /// bits of precision ([`crate::Session::flood_ckks_releases`]): the
    /// sets of scale 2^50 serve them, the default ones (2^40) do not.
    pub ckks_scale_log2: Option<u32>,
    /// The most bytes the program's ciphertexts may take, one per node as a
    /// run holds them ([`Plan::ciphertext_bytes`]; `None`:
    /// [`DEFAULT_MAX_CIPHERTEXT_BYTES`]). A program above it is refused
    /// before any key exists: a few nodes of long u64 vectors would
    /// otherwise ask for tens of GB.
    pub max_ciphertext_bytes: Option<u64>,
    /// Keys held by parties, any k of n of whom decrypt ([`Threshold`];
    /// `None`: one key holder, a [`Client`](crate::Client)). The parties
    /// ([`Party`](crate::Party)) generate the keys together; a program
    /// whose plan needs keys no collective protocol makes (TFHE, transition
    /// keys, key-holder round trips) is refused.
    pub threshold: Option<Threshold>,
}

/// k-of-n threshold keys ([`PlanOptions::threshold`]): n parties, numbered
/// 0..n, of whom any k decrypt together and fewer learn nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Threshold {
    pub k: u16,
    pub n: u16,
}

impl PlanOptions {
    /// These options with k-of-n threshold keys.
    pub fn threshold(self, k: u16, n: u16) -> PlanOptions {
        PlanOptions {
            threshold: Some(Threshold { k, n }),
            ..self
        }
    }
}

/// The decisions a plan makes where the capability rules leave a choice
/// (engines, parameter sets, and the options they were made under): what a
/// client sends a server with its evaluation keys. Costs differ by machine,
/// so a server does not plan again by its own cost model; it re-derives the
/// plan under these decisions and checks it ([`plan_chosen`]).
///
/// # Examples
///
/// ```
/// use triskel::{plan, plan_chosen, CostModel, Engine, Error, Kind, Program, Scalar};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
/// let s = p.dot_plain(x, &[1, -2, 3, 4].map(Scalar::Int))?;
/// p.output("s", s)?;
/// let choice = plan(&p, &CostModel::builtin())?.choice();
/// assert_eq!(choice.engines, [Engine::Bfv, Engine::Bfv]);
/// assert!(choice.describe().ends_with("with 2 BFV, 0 CKKS, 0 TFHE nodes"));
///
/// // What a server does: the same plan from the program and the choice,
/// // and a choice the rules do not give is refused.
/// assert_eq!(plan_chosen(&p, &choice)?.choice(), choice);
/// let mut forged = choice.clone();
/// forged.engines[1] = Engine::Ckks;
/// assert!(matches!(plan_chosen(&p, &forged), Err(Error::Refused { .. })));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PlanChoice {
    pub options: PlanOptions,
    /// The engine of every node, in program order.
    pub engines: Vec<Engine>,
    /// The named set of each BFV part, in part order.
    pub bfv: Vec<String>,
    pub ckks: Option<String>,
    pub tfhe: Option<String>,
}

impl PlanChoice {
    /// One line: the sets and how many nodes run on each engine.
    pub fn describe(&self) -> String {
        let count = |e: Engine| self.engines.iter().filter(|&&x| x == e).count();
        let mut sets: Vec<String> = self.bfv.iter().map(|s| format!("bfv {s}")).collect();
        sets.extend(self.ckks.iter().map(|s| format!("ckks {s}")));
        sets.extend(self.tfhe.iter().map(|s| format!("tfhe {s}")));
        format!(
            "[{}] with {} BFV, {} CKKS, {} TFHE nodes",
            sets.join(", "),
            count(Engine::Bfv),
            count(Engine::Ckks),
            count(Engine::Tfhe)
        )
    }
}

/// The default of [`PlanOptions::max_ciphertext_bytes`]: 4 GiB.
pub const DEFAULT_MAX_CIPHERTEXT_BYTES: u64 = 4 << 30;

/// Named BFV sets, smallest first.
fn bfv_sets() -> Vec<BfvParameters> {
    BfvParameters::named()
}

/// Named CKKS sets (smallest N first within each scale), up to N = 32768:
/// the N = 65536 set (keys of hundreds of MB) has no calibrated costs and is
/// for explicit use.
pub(crate) fn ckks_sets() -> Vec<CkksParameters> {
    CkksParameters::named()
        .into_iter()
        .filter(|p| p.n() <= 32768)
        .collect()
}

/// The TFHE set for integers, bits and transitions: 2-bit message blocks,
/// multi-bit blind rotation (faster than the classic 2_2 bootstrap on every
/// integer operation).
pub fn tfhe_set() -> TfheParameters {
    TfheParameters::message_2_carry_2_multi_bit()
}

fn refuse<T>(op: &str, msg: impl Into<String>) -> Result<T> {
    Err(Error::Refused {
        op: op.to_string(),
        msg: msg.into(),
    })
}

fn log2_tree(width: usize) -> f64 {
    width.next_power_of_two().trailing_zeros() as f64
}

/// Union-find over node indices.
fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

struct Planner<'a> {
    p: &'a Program,
    costs: &'a CostModel,
    /// A client's decisions to follow instead of the cost model's
    /// ([`plan_chosen`]).
    given: Option<&'a PlanChoice>,
    placements: Vec<Option<Placement>>,
    bfv: Vec<BfvPart>,
    /// Threshold keys: BFV sets must leave room for the decryption floods.
    threshold: Option<Threshold>,
}

/// Plans `program` with `costs`, homomorphically only (no key-holder round
/// trip).
pub fn plan(program: &Program, costs: &CostModel) -> Result<Plan> {
    plan_with(program, costs, PlanOptions::default())
}

/// Plans `program` with `costs` and what `options` allow.
pub fn plan_with(program: &Program, costs: &CostModel, options: PlanOptions) -> Result<Plan> {
    plan_inner(program, costs, options, None)
}

/// The plan of `program` that follows `choice` (a client's decisions,
/// [`Plan::choice`]) instead of a cost model: what a server runs. Every
/// rule of the planner still applies (capabilities, noise budgets, the
/// transitions' failure bounds, named sets only, so each passes the 128-bit
/// check), and the plan they give must make exactly the decisions of
/// `choice`; anything else is refused. Predicted times come from the
/// built-in cost table.
pub fn plan_chosen(program: &Program, choice: &PlanChoice) -> Result<Plan> {
    if choice.engines.len() != program.nodes.len() {
        return refuse(
            "plan choice",
            format!(
                "made for {} nodes, the program has {}",
                choice.engines.len(),
                program.nodes.len()
            ),
        );
    }
    let plan = plan_inner(program, &CostModel::builtin(), choice.options, Some(choice))?;
    let derived = plan.choice();
    if derived != *choice {
        return refuse(
            "plan choice",
            format!(
                "does not match the program: the rules give {}, the choice says {}",
                derived.describe(),
                choice.describe()
            ),
        );
    }
    Ok(plan)
}

fn plan_inner(
    program: &Program,
    costs: &CostModel,
    options: PlanOptions,
    given: Option<&PlanChoice>,
) -> Result<Plan> {
    let start = Instant::now();
    if program.outputs.is_empty() {
        return refuse("output", "the program has no outputs");
    }
    let mut pl = Planner {
        p: program,
        costs,
        given,
        placements: vec![None; program.nodes.len()],
        bfv: Vec::new(),
        threshold: options.threshold,
    };
    pl.place_ckks_and_tfhe();
    pl.place_bfv_slots()?;
    pl.place_small_integers()?;
    let placements: Vec<Placement> = pl
        .placements
        .iter()
        .map(|p| p.expect("every node is placed"))
        .collect();
    let uses_ckks = placements.contains(&Placement::Ckks);
    let (ckks, packing) = if uses_ckks {
        let given = given.map(|g| g.ckks.as_deref().unwrap_or(""));
        let (set, packing) =
            choose_ckks(program, costs, options.ckks_scale_log2.unwrap_or(0), given)?;
        (Some(set), packing)
    } else {
        (None, vec![Packing::default(); program.nodes.len()])
    };
    let uses_tfhe = placements.iter().any(|p| p.engine() == Engine::Tfhe);
    let scores = single_products(program, &placements, &pl.bfv);
    let round_trips = round_trips(program, &placements, options)?;
    let mut plan = Plan {
        program: program.clone(),
        placements,
        bfv: pl.bfv,
        ckks,
        tfhe: uses_tfhe.then(tfhe_set),
        packing,
        scores,
        steps: Vec::new(),
        round_trips,
        planning_ns: 0.0,
        options,
    };
    check_transitions(&plan)?;
    if let Some(t) = options.threshold {
        check_collective(&plan, t)?;
    }
    let limit = options
        .max_ciphertext_bytes
        .unwrap_or(DEFAULT_MAX_CIPHERTEXT_BYTES);
    let bytes = plan.ciphertext_bytes();
    if bytes > limit {
        return refuse(
            "program",
            format!(
                "its ciphertexts would take about {} MiB, above the limit of {} MiB \
                 (PlanOptions::max_ciphertext_bytes)",
                bytes >> 20,
                limit >> 20
            ),
        );
    }
    plan.steps = steps(&plan, costs)?;
    plan.planning_ns = start.elapsed().as_nanos() as f64;
    Ok(plan)
}

/// The most parties of threshold keys.
pub const MAX_PARTIES: u16 = triskel_ring::threshold::MAX_PARTIES;

/// Refuses k-of-n threshold keys that are out of range, or for a plan that
/// needs a piece no collective protocol makes (naming it).
fn check_collective(plan: &Plan, t: Threshold) -> Result<()> {
    if !(2..=MAX_PARTIES).contains(&t.n) || !(1..=t.n).contains(&t.k) {
        return refuse(
            "threshold",
            format!(
                "{} of {} parties: k must be in 1..=n and n in 2..={MAX_PARTIES}",
                t.k, t.n
            ),
        );
    }
    let missing = |piece: String| Err(Error::NotCollective { piece });
    if let Some(set) = keys::transition_sets(plan).first() {
        return missing(format!("a transition key ({set} -> TFHE)"));
    }
    if plan.tfhe.is_some() {
        return missing("TFHE keys (for its TFHE nodes)".into());
    }
    if let Some((i, _)) = plan.round_trips.first() {
        return missing(format!("a key-holder round trip (at node v{i})"));
    }
    for &(_, i) in &plan.program.outputs {
        let i = i as usize;
        let extracted = match plan.placements[i] {
            Placement::Bfv(part) => plan.bfv[part].encoding == BfvEncoding::Coefficients,
            Placement::Ckks => plan.packing[i].coefficients,
            _ => false,
        };
        if extracted {
            return missing(format!(
                "a threshold decryption of output v{i}, released as extracted coefficients (LWE)"
            ));
        }
    }
    Ok(())
}

fn len_of(p: &Program, k: u32) -> usize {
    p.nodes[k as usize].kind.len()
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
