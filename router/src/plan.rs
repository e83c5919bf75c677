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

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Instant;

use triskel_bfv::BfvParameters;
use triskel_ckks::{self as ckks, ChebyshevPolynomial, CkksParameters};
use triskel_tfhe::TfheParameters;

use crate::cost::CostModel;
use crate::error::{Error, Result};
use crate::program::{Cmp, Kind, Op, Program, Scalar, MAX_SIGNED_BOUND};
use crate::transition::{
    analyse_bits, any_bootstraps, ckks_reading, decision_analysis, CkksReading, DecisionAnalysis,
    MAX_LOG2_FAILURE, MAX_TRANSITION_DIMENSION,
};

/// An engine.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BfvEncoding {
    /// Values in slots 0..len of row 0 (t prime, 1 mod 2n).
    Slots,
    /// Values in coefficients 0..len (t = 2^bits): additions and scalars only.
    Coefficients,
}

/// The BFV contexts of a plan: one per plaintext modulus and encoding.
#[derive(Clone, Debug, PartialEq)]
pub struct BfvPart {
    pub encoding: BfvEncoding,
    pub params: BfvParameters,
    /// The named set it derives from (the cost table's key).
    pub base: String,
}

/// Where a node runs.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoreSlot {
    pub leader: usize,
    pub coefficient: usize,
}

/// A plan: placements, parameter sets and steps. Only the planner writes
/// its parts ([`Session::run`](crate::Session::run) trusts them; readers
/// take them through the methods of the same names).
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
}

/// The decisions a plan makes where the capability rules leave a choice
/// (engines, parameter sets, and the options they were made under): what a
/// client sends a server with its evaluation keys. Costs differ by machine,
/// so a server does not plan again by its own cost model; it re-derives the
/// plan under these decisions and checks it ([`plan_chosen`]).
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
/// integer operation, BENCHMARKS.md "Eighth round").
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

/// Bits of noise a BFV budget must keep at the end (the planner's model is
/// an estimate; the engine checks its own at run time).
const BFV_MARGIN: f64 = 6.0;

/// The BFV noise model of the planner (log2 standard deviations, the
/// engine's heuristic with a margin): fresh public-key noise, and growth per
/// operation; `budget` as the engine counts it.
struct BfvNoise {
    n: f64,
    log_t: f64,
    log_q: f64,
}

impl BfvNoise {
    fn new(p: &BfvParameters) -> BfvNoise {
        BfvNoise {
            n: p.n() as f64,
            log_t: (p.plain_modulus() as f64).log2(),
            log_q: p.q_bits().iter().map(|&b| b as f64 - 0.05).sum(),
        }
    }
    fn fresh(&self) -> f64 {
        0.5 * (3.2f64 * 3.2 * (4.0 * self.n / 3.0 + 1.0)).log2()
    }
    fn budget(&self, noise: f64) -> f64 {
        self.log_q - self.log_t - 1.0 - 3.0 - noise
    }
    /// Key switching (relinearization, rotation) adds a small fixed term.
    fn key_switch(&self, noise: f64) -> f64 {
        noise.max(self.n.log2() + 8.0) + 1.0
    }
    fn mul(&self, a: f64, b: f64) -> f64 {
        let cross = self.log_t + 0.5 * (self.n * self.n / 18.0).log2() + a.max(b) + 1.0;
        self.key_switch(cross + 1.5)
    }
    /// Product with a plaintext whose coefficients are uniform mod t.
    fn mul_slots_plain(&self, a: f64) -> f64 {
        a + self.log_t + 0.5 * (self.n / 12.0).log2()
    }
}

/// The square and hybrid diagonal counts of the CKKS linear transform for
/// `rows` on a packing of `dim` (mirrors triskel-ckks' choice): (rotations,
/// plaintext products, output period).
fn matvec_shape(rows: &[Vec<f64>], dim: usize) -> (usize, usize, usize) {
    let entry = |j: usize, c: usize| rows.get(j).and_then(|r| r.get(c)).copied().unwrap_or(0.0);
    let nonzero = |count: usize, u: &dyn Fn(usize, usize) -> f64| -> Vec<usize> {
        (0..count)
            .filter(|&i| (0..dim).any(|s| u(i, s) != 0.0))
            .collect()
    };
    let square = nonzero(dim, &|i, j| entry(j, (j + i) % dim));
    let r = rows.len().next_power_of_two();
    let hybrid = nonzero(r, &|i, s| entry(s % r, (s + i) % dim));
    let baby = 1usize << dim.trailing_zeros().div_ceil(2);
    let babies: BTreeSet<usize> = square.iter().map(|i| i % baby).collect();
    let giants: BTreeSet<usize> = square.iter().map(|i| i - i % baby).collect();
    let bsgs = babies.len() + giants.len();
    let hyb = hybrid.len() + (dim / r).trailing_zeros() as usize;
    if r < dim && hyb < bsgs {
        (hyb, hybrid.len(), r)
    } else {
        (bsgs, square.len(), dim)
    }
}

/// x^k coefficients (power basis) as Chebyshev coefficients on [-1, 1]:
/// Horner with x T_0 = T_1 and x T_j = (T_{j+1} + T_{j-1}) / 2.
pub fn power_to_chebyshev(coeffs: &[f64]) -> Vec<f64> {
    let mut t = vec![0.0; coeffs.len()];
    for &c in coeffs.iter().rev() {
        let mut next = vec![0.0; coeffs.len()];
        for (j, &v) in t.iter().enumerate() {
            if v == 0.0 {
                continue;
            }
            if j == 0 {
                next[1] += v;
            } else {
                next[j + 1] += v / 2.0;
                next[j - 1] += v / 2.0;
            }
        }
        next[0] += c;
        t = next;
    }
    t
}

fn reals(cs: &[Scalar]) -> Vec<f64> {
    cs.iter()
        .map(|s| match *s {
            Scalar::Real(r) => r,
            Scalar::Int(i) => i as f64,
        })
        .collect()
}

/// The Chebyshev polynomial a CKKS node evaluates, if any.
pub fn ckks_polynomial(op: &Op) -> Result<Option<ChebyshevPolynomial>> {
    Ok(match op {
        Op::Polynomial(_, cs) => Some(ChebyshevPolynomial::new(
            power_to_chebyshev(&reals(cs)),
            -1.0,
            1.0,
        )?),
        Op::Chebyshev { coeffs, lo, hi, .. } => {
            Some(ChebyshevPolynomial::new(coeffs.clone(), *lo, *hi)?)
        }
        _ => None,
    })
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

impl Planner<'_> {
    fn kind(&self, i: usize) -> Kind {
        self.p.nodes[i].kind
    }

    /// Reals -> CKKS; bits -> TFHE; comparisons of u8..u64 and selects -> TFHE.
    fn place_ckks_and_tfhe(&mut self) {
        for (i, node) in self.p.nodes.iter().enumerate() {
            let place = match (node.kind, &node.op) {
                (Kind::Real { .. }, _) => Placement::Ckks,
                (Kind::Bit { .. }, Op::Compare(a, ..) | Op::CompareScalar(a, ..)) => {
                    match self.kind(*a as usize) {
                        Kind::Uint { .. } => Placement::Tfhe,
                        _ => continue, // a transition, placed with its BFV part
                    }
                }
                (Kind::Bit { .. }, Op::ThresholdWithin { .. }) => continue,
                (Kind::Bit { .. }, Op::ThresholdReal { .. }) => Placement::CkksToTfhe,
                (Kind::Bit { .. }, _) => Placement::Tfhe,
                _ => continue,
            };
            self.placements[i] = Some(place);
        }
    }

    /// Modular and signed integers -> BFV slots, one part per plaintext
    /// modulus; comparisons of them -> a transition to TFHE. A part with a
    /// transition uses the coefficient encoding with t a power of two (what
    /// the transition reads), sized so that every compared value and
    /// constant lies in [-t/4, t/4); its inner products with plaintext
    /// weights are then one plaintext product with the weights reversed, no
    /// rotation.
    fn place_bfv_slots(&mut self) -> Result<()> {
        let mut groups: Vec<(Option<u64>, Vec<usize>)> = Vec::new();
        for (i, node) in self.p.nodes.iter().enumerate() {
            let key = match (node.kind, &node.op) {
                (Kind::Signed { .. }, _) => None,
                (Kind::Modular { modulus, .. }, _) => Some(modulus),
                (Kind::Bit { .. }, Op::ThresholdWithin { .. }) => None,
                (Kind::Uint { .. }, Op::Lookup { x, .. })
                    if matches!(self.kind(*x as usize), Kind::Signed { .. }) =>
                {
                    None
                }
                (Kind::Uint { .. }, Op::ArgmaxSigned { .. }) => None,
                (Kind::Bit { .. }, Op::Compare(a, ..) | Op::CompareScalar(a, ..))
                    if self.placements[i].is_none() =>
                {
                    match self.kind(*a as usize) {
                        Kind::Modular { modulus, .. } => Some(modulus),
                        _ => None,
                    }
                }
                _ => continue,
            };
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, nodes)) => nodes.push(i),
                None => groups.push((key, vec![i])),
            }
        }
        for (modulus, nodes) in groups {
            let part = self.bfv.len();
            let chosen = match self.transition_range(&nodes, modulus)? {
                Some(range) => {
                    let t = (4 * (range + 1)).next_power_of_two();
                    self.choose_bfv(&nodes, BfvEncoding::Coefficients, |_, _| Some(t))?
                }
                None => self.choose_bfv(&nodes, BfvEncoding::Slots, |n, bound| match modulus {
                    Some(t) => {
                        (triskel_kernels::is_prime(t) && t % (2 * n as u64) == 1).then_some(t)
                    }
                    None => smallest_batching_prime(n, 2 * bound + 1),
                })?,
            };
            self.bfv.push(chosen);
            for &i in &nodes {
                self.placements[i] = Some(match (self.p.nodes[i].kind, &self.p.nodes[i].op) {
                    (Kind::Bit { .. }, _) | (_, Op::Lookup { .. } | Op::ArgmaxSigned { .. }) => {
                        Placement::BfvToTfhe(part)
                    }
                    _ => Placement::Bfv(part),
                });
            }
        }
        Ok(())
    }

    /// For a BFV group with comparisons (transitions to TFHE): the largest
    /// absolute value a decision reads (compared values, differences,
    /// constants and the constant + 1 of a strict comparison); `None`
    /// without comparisons. Refuses what the coefficient encoding cannot
    /// run, naming the operation.
    fn transition_range(&self, nodes: &[usize], modulus: Option<u64>) -> Result<Option<u64>> {
        let bound = |k: &u32| match self.kind(*k as usize) {
            Kind::Signed { bound, .. } => bound,
            _ => 0,
        };
        let (mut range, mut decision) = (None, "compare");
        for &i in nodes {
            let r = match &self.p.nodes[i].op {
                Op::Compare(a, b, _) => bound(a).saturating_add(bound(b)).saturating_add(1),
                Op::CompareScalar(a, c, _) => {
                    let c = match c {
                        Scalar::Int(c) => c.unsigned_abs().saturating_add(1),
                        Scalar::Real(_) => u64::MAX,
                    };
                    bound(a).max(c)
                }
                // The threshold leaves room for the rounding of the tolerance.
                Op::ThresholdWithin {
                    x,
                    threshold,
                    tolerance_bits,
                } => bound(x).max(threshold.unsigned_abs().saturating_add(1 << tolerance_bits)),
                // Decisions x >= c for c up to the bound.
                Op::Lookup { x, .. } => bound(x).saturating_add(1),
                // Every value read as a number in [-t/4, t/4).
                Op::ArgmaxSigned { xs, .. } => xs.iter().map(bound).max().unwrap_or(0),
                _ => continue,
            };
            if range.is_none() {
                decision = self.p.nodes[i].op.name();
            }
            range = Some(range.unwrap_or(0).max(r));
        }
        let Some(range) = range else {
            return Ok(None);
        };
        if let Some(m) = modulus {
            return refuse(
                decision,
                format!(
                    "comparing integers modulo {m}: the BFV -> TFHE transition needs signed integers (coefficient encoding, t a power of two)"
                ),
            );
        }
        if range > MAX_SIGNED_BOUND {
            return refuse(
                decision,
                format!("values up to {range} exceed what a transition reads (2^40)"),
            );
        }
        for &i in nodes {
            let op = &self.p.nodes[i].op;
            let coefficient_ready = runs_on_coefficients(op)
                || matches!(
                    op,
                    Op::Compare(..)
                        | Op::CompareScalar(..)
                        | Op::ThresholdWithin { .. }
                        | Op::Lookup { .. }
                        | Op::ArgmaxSigned { .. }
                        | Op::ToSigned(..)
                );
            if !coefficient_ready {
                return refuse(
                    op.name(),
                    "values compared through a BFV -> TFHE transition use the coefficient encoding, which runs additions, scalar operations and inner products with plaintext weights only",
                );
            }
        }
        Ok(Some(range))
    }

    /// The cheapest named BFV set (with the plaintext modulus `modulus(n,
    /// largest bound)` gives) on which `nodes` keep a noise budget, or a
    /// refusal naming the operation that exhausts the largest set.
    fn choose_bfv(
        &self,
        nodes: &[usize],
        encoding: BfvEncoding,
        modulus: impl Fn(usize, u64) -> Option<u64>,
    ) -> Result<BfvPart> {
        let bound = nodes
            .iter()
            .map(|&i| match self.kind(i) {
                Kind::Signed { bound, .. } => bound,
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        let len = nodes.iter().map(|&i| self.kind(i).len()).max().unwrap_or(1);
        let mut best: Option<(f64, BfvPart)> = None;
        let mut failure = None;
        // Bits, lookups and argmaxes of a BFV part are its transitions to TFHE.
        let decides = nodes.iter().any(|&i| {
            matches!(self.kind(i), Kind::Bit { .. })
                || matches!(
                    self.p.nodes[i].op,
                    Op::Lookup { .. } | Op::ArgmaxSigned { .. }
                )
        });
        let given = self
            .given
            .map(|g| g.bfv.get(self.bfv.len()).map_or("", |s| s.as_str()));
        for base in bfv_sets() {
            if given.is_some_and(|name| name != base.name()) {
                continue;
            }
            let n = base.n();
            // Sets a transition key cannot take are no candidates for a part
            // with decisions (the reason of an earlier set is kept).
            if decides && n > MAX_TRANSITION_DIMENSION {
                continue;
            }
            let room = if encoding == BfvEncoding::Slots {
                n / 2
            } else {
                n
            };
            if len > room {
                failure = Some(refuse(
                    self.p.nodes[nodes[0]].op.name(),
                    format!("{len} values exceed the {room} of the largest BFV set"),
                ));
                continue;
            }
            let Some(t) = modulus(n, bound) else {
                failure = Some(refuse(
                    "input",
                    format!(
                        "no prime plaintext modulus = 1 mod {} fits the program",
                        2 * n
                    ),
                ));
                continue;
            };
            let min_q = *base.q_bits().iter().min().unwrap_or(&0);
            if 64 - t.leading_zeros() >= min_q
                || (t as u128) * (base.q_bits().len() as u128 + 2) >= 1 << 63
            {
                failure = Some(refuse(
                    "input",
                    format!("plaintext modulus {t} does not fit {}", base.name()),
                ));
                continue;
            }
            let params = base.clone().with_plain_modulus(t);
            if let Err((op, msg)) = Self::bfv_noise(self.p, nodes, &params, encoding) {
                failure = Some(refuse(op, msg));
                continue;
            }
            let mut cost = 0.0;
            for &i in nodes {
                cost += self
                    .costs
                    .predict("bfv", base.name(), &bfv_counts(self.p, i, encoding))?;
            }
            if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                best = Some((
                    cost,
                    BfvPart {
                        encoding,
                        base: base.name().to_string(),
                        params,
                    },
                ));
            }
        }
        match (best, failure, given) {
            (Some((_, part)), _, _) => Ok(part),
            (None, Some(err), _) => err,
            (None, None, Some(name)) => refuse(
                "plan choice",
                format!(
                    "BFV part {}: {name:?} is no named BFV set this part can take",
                    self.bfv.len()
                ),
            ),
            (None, None, None) => refuse("input", "no BFV set"),
        }
    }

    /// Walks `nodes` (in order) with the noise model; the first operation
    /// that leaves less than the margin, or a decision whose transition
    /// (after the mod switch to the last prime) the noise analysis of
    /// [`crate::transition`] would not pass, is the error: (operation,
    /// why); else the noise (log2) of every node. After the transition nothing accumulates: every TFHE
    /// operation bootstraps, and `any` sums only as many bits as the set's
    /// noise level allows before its bootstrap.
    fn bfv_noise(
        p: &Program,
        nodes: &[usize],
        params: &BfvParameters,
        encoding: BfvEncoding,
    ) -> std::result::Result<Vec<f64>, (&'static str, String)> {
        let m = BfvNoise::new(params);
        let t = params.plain_modulus() as i128;
        let scalar_bits = |s: &Scalar| match *s {
            Scalar::Int(c) => {
                let c = (c as i128).rem_euclid(t);
                (c.min(t - c).max(1) as f64).log2()
            }
            Scalar::Real(_) => 0.0,
        };
        let mut noise = vec![0.0f64; p.nodes.len()];
        let dirty = slots_dirty(p);
        for &i in nodes {
            let op = &p.nodes[i].op;
            let x = |k: &u32| noise[*k as usize];
            let tree = |v: f64, len: usize| {
                (0..log2_tree(len) as usize).fold(v, |v, _| m.key_switch(v) + 1.0)
            };
            let len_of = |k: &u32| p.nodes[*k as usize].kind.len();
            let v = match op {
                Op::Input { .. } | Op::ToSigned(..) => m.fresh(),
                Op::Add(a, b) | Op::Sub(a, b) | Op::Compare(a, b, _) => x(a).max(x(b)) + 1.0,
                Op::AddScalar(a, _)
                | Op::CompareScalar(a, _, _)
                | Op::ThresholdWithin { x: a, .. }
                | Op::Lookup { x: a, .. } => x(a),
                Op::MulScalar(a, c) => x(a) + scalar_bits(c),
                Op::ArgmaxSigned { xs, .. } => xs.iter().map(x).fold(f64::MIN, f64::max),
                Op::Mul(a, b) => m.mul(x(a), x(b)),
                Op::Dot(a, b) => tree(m.mul(x(a), x(b)), len_of(a)),
                Op::DotPlain(a, _) if encoding == BfvEncoding::Coefficients => {
                    m.mul_slots_plain(x(a))
                }
                Op::DotPlain(a, _) => tree(m.mul_slots_plain(x(a)), len_of(a)),
                Op::Sum(a) => tree(x(a), len_of(a)),
                Op::Polynomial(a, cs) => {
                    let top = cs.last().map_or(0.0, scalar_bits);
                    (2..cs.len()).fold(x(a) + top, |acc, _| m.mul(acc, x(a)))
                }
                _ => return Err((op.name(), "not available on BFV".into())),
            };
            if m.budget(v) < BFV_MARGIN {
                return Err((
                    op.name(),
                    format!(
                        "the BFV noise budget of {} is exhausted (multiplicative depth too large)",
                        params.name()
                    ),
                ));
            }
            // A release re-randomizes (fresh noise), then masks the slots
            // (a plaintext product) or extracts coefficients at the last prime.
            if released(p, i) {
                let fresh = (v.exp2() + m.fresh().exp2()).log2();
                let left = match encoding {
                    BfvEncoding::Slots if dirty[i] => m.budget(m.mul_slots_plain(fresh)),
                    BfvEncoding::Slots => m.budget(fresh),
                    BfvEncoding::Coefficients => {
                        let q0 = params.q_bits().first().map_or(0.0, |&b| b as f64 - 0.05);
                        q0 - m.log_t - 1.0 - 3.0 - at_last_prime(fresh, params)
                    }
                };
                if left < BFV_MARGIN {
                    return Err((
                        op.name(),
                        format!(
                            "the BFV noise budget of {} leaves no room to release the value (mask or extraction)",
                            params.name()
                        ),
                    ));
                }
            }
            if let Some(failure) = transition_failure(p, op, v, params) {
                return Err((
                    op.name(),
                    format!(
                        "the BFV -> TFHE decision on {} would fail with probability 2^{failure:.0} (noise of the value, the ring switch and the key switch; at most 2^{MAX_LOG2_FAILURE:.0} is accepted)",
                        params.name()
                    ),
                ));
            }
            noise[i] = v;
        }
        Ok(noise)
    }

    /// u8..u32 groups with only additions and scalar operations: BFV with
    /// coefficient encoding when cheaper; everything else of u8..u64: TFHE.
    fn place_small_integers(&mut self) -> Result<()> {
        let count = self.p.nodes.len();
        let mut parent: Vec<usize> = (0..count).collect();
        for (i, node) in self.p.nodes.iter().enumerate() {
            if let Kind::Uint { .. } = node.kind {
                for a in node.op.operands() {
                    let (ra, ri) = (find(&mut parent, a as usize), find(&mut parent, i));
                    parent[ra] = ri;
                }
            }
        }
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for i in 0..count {
            if self.placements[i].is_some() {
                continue;
            }
            let r = find(&mut parent, i);
            match groups.iter_mut().find(|(k, _)| *k == r) {
                Some((_, g)) => g.push(i),
                None => groups.push((r, vec![i])),
            }
        }
        for (_, nodes) in groups {
            let linear = nodes.iter().all(|&i| {
                matches!(
                    self.p.nodes[i].op,
                    Op::Input { .. }
                        | Op::Add(..)
                        | Op::Sub(..)
                        | Op::AddScalar(..)
                        | Op::MulScalar(..)
                )
            });
            // A value from another engine's node (a lookup read through the
            // transition) arrives in TFHE.
            let fed_outside = nodes.iter().any(|&i| {
                self.p.nodes[i]
                    .op
                    .operands()
                    .iter()
                    .any(|a| !nodes.contains(&(*a as usize)))
            });
            // A consumer outside the group (a comparison, a select) needs TFHE values.
            let consumed_outside = self.p.nodes.iter().enumerate().any(|(j, n)| {
                !nodes.contains(&j)
                    && n.op
                        .operands()
                        .iter()
                        .any(|a| nodes.contains(&(*a as usize)))
            });
            let bits = match self.kind(nodes[0]) {
                Kind::Uint { bits, .. } => bits,
                _ => 64,
            };
            let mut place = Placement::Tfhe;
            let eligible = linear && !consumed_outside && !fed_outside && bits <= 32;
            if let (true, Some(given)) = (eligible, self.given) {
                // Refused later if the choice names no set this group fits.
                if given.engines[nodes[0]] == Engine::Bfv {
                    let part = self
                        .choose_bfv(&nodes, BfvEncoding::Coefficients, |_, _| Some(1u64 << bits))?;
                    place = Placement::Bfv(self.bfv.len());
                    self.bfv.push(part);
                }
            } else if eligible {
                let tfhe_cost = self.tfhe_cost(&nodes)?;
                if let Ok(part) =
                    self.choose_bfv(&nodes, BfvEncoding::Coefficients, |_, _| Some(1u64 << bits))
                {
                    let bfv_cost = nodes
                        .iter()
                        .map(|&i| {
                            self.costs.predict(
                                "bfv",
                                &part.base,
                                &bfv_counts(self.p, i, part.encoding),
                            )
                        })
                        .sum::<Result<f64>>()?;
                    if bfv_cost < tfhe_cost {
                        place = Placement::Bfv(self.bfv.len());
                        self.bfv.push(part);
                    }
                }
            }
            for &i in &nodes {
                self.placements[i] = Some(place);
            }
        }
        Ok(())
    }

    fn tfhe_cost(&self, nodes: &[usize]) -> Result<f64> {
        let set = tfhe_set();
        nodes
            .iter()
            .map(|&i| {
                self.costs
                    .predict("tfhe", set.name, &tfhe_counts(self.p, i))
            })
            .sum()
    }
}

/// Every value crossing engines does so through a BFV -> TFHE transition
/// node or a CKKS -> TFHE one reading coefficient-encoded values: any other
/// crossing (TFHE -> BFV, TFHE -> CKKS, CKKS slots -> TFHE, ...) is
/// refused, naming the operation and the direction. A run checks this
/// again before any work (plans are read-only outside the planner; the
/// check stays as a second line).
pub(crate) fn check_transitions(plan: &Plan) -> Result<()> {
    for (i, node) in plan.program.nodes.iter().enumerate() {
        if plan.round_trips.iter().any(|&(n, _)| n == i) {
            if !matches!(node.op, Op::ToSigned(..) | Op::ToReal { .. }) {
                return refuse(
                    node.op.name(),
                    "only conversions take a key-holder round trip",
                );
            }
            continue;
        }
        let (to, needs) = match plan.placements[i] {
            Placement::BfvToTfhe(k) => (Engine::Bfv, Some(Placement::Bfv(k))),
            Placement::CkksToTfhe => (Engine::Ckks, Some(Placement::Ckks)),
            place => (place.engine(), None),
        };
        for a in node.op.operands() {
            let operand = plan.placements[a as usize];
            let from = operand.engine();
            let coefficients = plan.packing.get(a as usize).is_some_and(|p| p.coefficients);
            if from == to
                && needs.is_none_or(|p| p == operand)
                && (plan.placements[i] != Placement::CkksToTfhe || coefficients)
            {
                continue;
            }
            let msg = match crate::transition::check_direction(from, to) {
                Err(e) => e.to_string(),
                Ok(()) => format!(
                    "v{a} on {} feeds an operation on {}: the router moves values between engines only by a comparison of BFV values (BFV -> TFHE) or a threshold on coefficient-encoded reals (CKKS -> TFHE)",
                    from.name(),
                    to.name()
                ),
            };
            return refuse(node.op.name(), msg);
        }
    }
    Ok(())
}

/// The conversions of a program: each crosses engines with no homomorphic
/// path (TFHE -> BFV/CKKS, BFV -> CKKS), so each takes a key-holder round
/// trip, refused unless `options` allow it.
fn round_trips(
    p: &Program,
    placements: &[Placement],
    options: PlanOptions,
) -> Result<Vec<(usize, Engine)>> {
    let mut trips = Vec::new();
    for (i, node) in p.nodes.iter().enumerate() {
        let (Op::ToSigned(a) | Op::ToReal { x: a, .. }) = node.op else {
            continue;
        };
        let (from, to) = (placements[a as usize].engine(), placements[i].engine());
        if from == to {
            return refuse(
                node.op.name(),
                format!("v{a} is already on {}: nothing to convert", to.name()),
            );
        }
        if !options.allow_round_trips {
            return refuse(
                node.op.name(),
                format!(
                    "{} -> {} has no homomorphic path; it needs a key-holder round trip (decrypt and re-encrypt), which the caller has not allowed (PlanOptions::allow_round_trips)",
                    from.name(),
                    to.name()
                ),
            );
        }
        trips.push((i, from));
    }
    Ok(trips)
}

/// The single-product placement (issue 15): in a coefficient-encoded BFV
/// part, inner products of one vector x with plaintext weights whose
/// values only feed decisions (threshold comparisons, never an output or
/// arithmetic) share one product. With x(X) = sum x_i X^i and the weights
/// w_j of score j reversed at offset L j + L - 1 - i (L = len x),
/// coefficient L j + L - 1 of x(X) w(X) is sum_i x_i w_j,i: n / L scores
/// per plaintext product, no rotation.
fn single_products(
    p: &Program,
    placements: &[Placement],
    bfv: &[BfvPart],
) -> Vec<Option<ScoreSlot>> {
    let mut slots = vec![None; p.nodes.len()];
    let decides = |j: usize, i: usize| match &p.nodes[j].op {
        Op::CompareScalar(a, ..) | Op::ThresholdWithin { x: a, .. } | Op::Lookup { x: a, .. } => {
            *a as usize == i
        }
        Op::ArgmaxSigned { xs, .. } => xs.contains(&(i as u32)),
        _ => false,
    };
    let mut groups: Vec<((usize, u32), Vec<usize>)> = Vec::new();
    for (i, node) in p.nodes.iter().enumerate() {
        let (Placement::Bfv(part), Op::DotPlain(a, _)) = (placements[i], &node.op) else {
            continue;
        };
        let only_decisions = p
            .nodes
            .iter()
            .enumerate()
            .all(|(j, n)| !n.op.operands().contains(&(i as u32)) || decides(j, i))
            && !p.outputs.iter().any(|(_, v)| *v as usize == i);
        if bfv[part].encoding != BfvEncoding::Coefficients || !only_decisions {
            continue;
        }
        match groups.iter_mut().find(|(k, _)| *k == (part, *a)) {
            Some((_, g)) => g.push(i),
            None => groups.push(((part, *a), vec![i])),
        }
    }
    for ((part, a), members) in groups {
        let len = len_of(p, a);
        let per_product = bfv[part].params.n() / len;
        for chunk in members.chunks(per_product) {
            for (j, &i) in chunk.iter().enumerate() {
                slots[i] = Some(ScoreSlot {
                    leader: chunk[0],
                    coefficient: len * j + len - 1,
                });
            }
        }
    }
    slots
}

/// The smallest prime = 1 mod 2n above `above`.
fn smallest_batching_prime(n: usize, above: u64) -> Option<u64> {
    let step = 2 * n as u64;
    let mut t = (above / step + 1) * step + 1;
    while !triskel_kernels::is_prime(t) {
        t = t.checked_add(step)?;
    }
    Some(t)
}

fn len_of(p: &Program, k: u32) -> usize {
    p.nodes[k as usize].kind.len()
}

/// Primitive counts shared by BFV and CKKS: `tree` rotations (and
/// additions) of a reduction, `mask` extra plaintext products.
fn rlwe_counts(op: &Op, tree: f64, mask: f64) -> Vec<(&'static str, f64)> {
    // Plaintext vectors (inputs, added constants, weights, masks) are encoded first.
    match op {
        Op::Input { .. } | Op::ToSigned(..) | Op::ToReal { .. } => {
            vec![("encode", 1.0), ("encrypt", 1.0)]
        }
        Op::Add(..) | Op::Sub(..) | Op::Compare(..) => vec![("add", 1.0)],
        Op::AddScalar(..) => vec![("encode", 1.0), ("add", 1.0)],
        Op::MulScalar(..) => vec![("mul_plain", 1.0)],
        Op::Mul(..) => vec![("mul_relin", 1.0)],
        Op::Dot(..) => vec![
            ("mul_relin", 1.0),
            ("encode", mask),
            ("mul_plain", mask),
            ("rotate", tree),
            ("add", tree),
        ],
        Op::DotPlain(..) => vec![
            ("encode", 1.0),
            ("mul_plain", 1.0),
            ("rotate", tree),
            ("add", tree),
        ],
        Op::Sum(..) => vec![
            ("encode", mask),
            ("mul_plain", mask),
            ("rotate", tree),
            ("add", tree),
        ],
        _ => vec![],
    }
}

/// BFV primitive counts of node `i` (one ciphertext per vector).
fn bfv_counts(p: &Program, i: usize, encoding: BfvEncoding) -> Vec<(&'static str, f64)> {
    let op = &p.nodes[i].op;
    match op {
        // Coefficient encoding: the weights reversed, one product, no rotation.
        Op::DotPlain(..) if encoding == BfvEncoding::Coefficients => rlwe_counts(op, 0.0, 0.0),
        Op::Polynomial(_, cs) => {
            let d = cs.len() as f64 - 1.0;
            vec![
                ("mul_relin", (d - 1.0).max(0.0)),
                ("mul_plain", 1.0),
                ("encode", d.max(1.0)),
                ("add", d.max(1.0)),
            ]
        }
        Op::Dot(a, _) | Op::DotPlain(a, _) | Op::Sum(a) => {
            rlwe_counts(op, log2_tree(len_of(p, *a)), 0.0)
        }
        op => rlwe_counts(op, 0.0, 0.0),
    }
}

/// TFHE primitive counts of node `i`: the u8 figures scaled by blocks
/// (linear operations) or blocks^2 (products).
fn tfhe_counts(p: &Program, i: usize) -> Vec<(&'static str, f64)> {
    let node = &p.nodes[i];
    let operand_kind = |k: u32| p.nodes[k as usize].kind;
    let width = |k: Kind| match k {
        Kind::Uint { bits, .. } => bits as f64 / 8.0,
        _ => 1.0,
    };
    let len = node.kind.len() as f64;
    match &node.op {
        Op::Input { kind, .. } => match *kind {
            Kind::Uint { bits, len } => vec![("encrypt_block", len as f64 * bits as f64 / 2.0)],
            k => vec![("encrypt_block", k.len() as f64)],
        },
        Op::Add(a, _) | Op::Sub(a, _) => vec![("add8", len * width(operand_kind(*a)))],
        Op::AddScalar(a, _) => vec![("scalar_add8", len * width(operand_kind(*a)))],
        Op::MulScalar(a, _) => vec![("scalar_mul8", len * width(operand_kind(*a)).powi(2))],
        Op::Mul(a, _) => vec![("mul8", len * width(operand_kind(*a)).powi(2))],
        Op::Dot(a, _) => {
            let (l, w) = (len_of(p, *a) as f64, width(operand_kind(*a)));
            vec![("mul8", l * w * w), ("add8", (l - 1.0) * w)]
        }
        Op::DotPlain(a, _) => {
            let (l, w) = (len_of(p, *a) as f64, width(operand_kind(*a)));
            vec![("scalar_mul8", l * w * w), ("add8", (l - 1.0) * w)]
        }
        Op::Sum(a) => {
            let (l, w) = (len_of(p, *a) as f64, width(operand_kind(*a)));
            vec![("add8", (l - 1.0) * w)]
        }
        Op::Polynomial(a, cs) => {
            let (d, w) = (cs.len() as f64 - 1.0, width(operand_kind(*a)));
            vec![
                ("mul8", len * (d - 1.0).max(0.0) * w * w),
                ("scalar_mul8", len * w * w),
                ("scalar_add8", len * d.max(1.0) * w),
            ]
        }
        Op::Compare(a, ..) => vec![("compare8", len * width(operand_kind(*a)))],
        Op::Any(bits) => {
            let count = bits.iter().map(|&b| len_of(p, b)).sum();
            let bootstraps = any_bootstraps(&tfhe_set(), count).unwrap_or(count);
            vec![("pbs", bootstraps as f64)]
        }
        Op::CompareScalar(a, ..) => {
            let w = width(operand_kind(*a));
            vec![
                ("compare8", len * w),
                ("scalar_mul8", len * w * w),
                ("scalar_add8", len * w),
            ]
        }
        Op::Select { a, .. } => vec![("select8", len * width(operand_kind(*a)))],
        Op::Lookup { .. } => vec![("lookup8", len)],
        Op::Argmax(a) => {
            // Per challenger: a comparison and two selects (value, index),
            // the last one the index only.
            let (l, w) = (len_of(p, *a) as f64 - 1.0, width(operand_kind(*a)));
            vec![
                ("compare8", l * w),
                ("select8", (2.0 * l - 1.0).max(0.0) * w),
            ]
        }
        _ => vec![],
    }
}

/// The arithmetic a coefficient encoding (BFV or CKKS) runs: inputs,
/// additions, scalar operations and inner products with plaintext weights
/// (one product with the weights reversed).
fn runs_on_coefficients(op: &Op) -> bool {
    matches!(
        op,
        Op::Input { .. }
            | Op::Add(..)
            | Op::Sub(..)
            | Op::AddScalar(..)
            | Op::MulScalar(..)
            | Op::DotPlain(..)
    )
}

/// The real nodes that use the coefficient encoding: every real connected
/// (through real operands) to a value a `threshold_real` reads. Refuses an
/// operation of such a group that the coefficient encoding cannot run.
fn coefficient_nodes(p: &Program) -> Result<Vec<bool>> {
    let count = p.nodes.len();
    let real = |i: usize| matches!(p.nodes[i].kind, Kind::Real { .. });
    let mut parent: Vec<usize> = (0..count).collect();
    for (i, node) in p.nodes.iter().enumerate() {
        for a in node.op.operands() {
            if real(i) && real(a as usize) {
                let (ra, ri) = (find(&mut parent, a as usize), find(&mut parent, i));
                parent[ra] = ri;
            }
        }
    }
    let mut read = vec![false; count];
    for node in &p.nodes {
        if let Op::ThresholdReal { x, .. } = node.op {
            let r = find(&mut parent, x as usize);
            read[r] = true;
        }
    }
    let mut coefficients = vec![false; count];
    for i in 0..count {
        if !real(i) || !read[find(&mut parent, i)] {
            continue;
        }
        let op = &p.nodes[i].op;
        if !runs_on_coefficients(op) {
            return refuse(
                op.name(),
                "reals decided through the CKKS -> TFHE transition use the coefficient encoding, which runs additions, scalar operations and inner products with plaintext weights only",
            );
        }
        coefficients[i] = true;
    }
    Ok(coefficients)
}

/// CKKS packing and depth of every node, then, among the named sets of
/// scale at least 2^`min_scale` deep and wide enough on which every CKKS ->
/// TFHE decision fits its tolerance, the cheapest of the smallest scale.
fn choose_ckks(
    p: &Program,
    costs: &CostModel,
    min_scale: u32,
    given: Option<&str>,
) -> Result<(CkksParameters, Vec<Packing>)> {
    let coefficients = coefficient_nodes(p)?;
    let mut packing = vec![Packing::default(); p.nodes.len()];
    // Levels each real node needs (with its release's mask), in order.
    let mut needs_of: Vec<(usize, &str)> = Vec::new();
    let mut widest = 1;
    for (i, node) in p.nodes.iter().enumerate() {
        if !matches!(node.kind, Kind::Real { .. }) {
            continue;
        }
        let len = node.kind.len();
        let get = |k: &u32| packing[*k as usize];
        let binary = |a: &u32, b: &u32| -> Result<(Packing, Packing)> {
            let (x, y) = (get(a), get(b));
            if x.period != y.period {
                return refuse(
                    node.op.name(),
                    format!(
                        "operands are packed with periods {} and {}",
                        x.period, y.period
                    ),
                );
            }
            Ok((x, y))
        };
        let padded = |dirty: bool, period: usize| dirty && len < period;
        let mut pk = match &node.op {
            Op::Input { .. } | Op::ToReal { .. } => Packing {
                period: len.next_power_of_two(),
                ..Default::default()
            },
            Op::Add(a, b) | Op::Sub(a, b) => {
                let (x, y) = binary(a, b)?;
                Packing {
                    dirty: x.dirty || y.dirty,
                    depth: x.depth.max(y.depth),
                    ..x
                }
            }
            Op::Mul(a, b) => {
                let (x, y) = binary(a, b)?;
                Packing {
                    dirty: x.dirty && y.dirty,
                    depth: x.depth.max(y.depth) + 1,
                    ..x
                }
            }
            Op::AddScalar(a, _) => get(a),
            Op::MulScalar(a, _) => Packing {
                depth: get(a).depth + 1,
                ..get(a)
            },
            Op::Dot(a, b) => {
                let (x, y) = binary(a, b)?;
                let mask = x.dirty && y.dirty;
                Packing {
                    period: 1,
                    dirty: false,
                    depth: x.depth.max(y.depth) + 1 + mask as usize,
                    mask_operand: mask,
                    ..Default::default()
                }
            }
            Op::DotPlain(a, _) => Packing {
                period: 1,
                dirty: false,
                depth: get(a).depth + 1,
                ..Default::default()
            },
            Op::Sum(a) => {
                let mask = get(a).dirty;
                Packing {
                    period: 1,
                    dirty: false,
                    depth: get(a).depth + mask as usize,
                    mask_operand: mask,
                    ..Default::default()
                }
            }
            Op::Polynomial(a, _) | Op::Chebyshev { x: a, .. } => {
                let poly = ckks_polynomial(&node.op)?.expect("a polynomial node");
                let x = get(a);
                Packing {
                    dirty: padded(true, x.period) || x.dirty,
                    depth: x.depth + poly.depth(),
                    ..x
                }
            }
            Op::MatVec { x, rows } => {
                let input = get(x);
                let dim = input.period.max(rows.len().next_power_of_two());
                let (_, _, period) = matvec_shape(rows, dim);
                widest = widest.max(dim);
                Packing {
                    period,
                    dirty: false,
                    depth: input.depth + 1,
                    ..Default::default()
                }
            }
            op => return refuse(op.name(), "not available on reals"),
        };
        pk.coefficients = coefficients[i];
        pk.release = ReleaseMask::None;
        // Slots: the release zeroes the slots not asked for (module documentation).
        let mut needs = pk.depth;
        if released(p, i) && !pk.coefficients {
            pk.release = if matches!(node.op, Op::MulScalar(..)) {
                ReleaseMask::Folded
            } else {
                needs += 1;
                ReleaseMask::Product
            };
        }
        widest = widest.max(pk.period).max(len);
        needs_of.push((needs, node.op.name()));
        packing[i] = pk;
    }
    let deepest = needs_of.iter().map(|n| n.0).max().unwrap_or(0);
    let decides = p
        .nodes
        .iter()
        .any(|n| matches!(n.op, Op::ThresholdReal { .. }));
    let mut best: Option<(u32, f64, CkksParameters)> = None;
    let mut failure = None;
    let sets: Vec<CkksParameters> = ckks_sets()
        .into_iter()
        .filter(|s| s.log_scale() >= min_scale && given.is_none_or(|name| name == s.name()))
        .collect();
    if let (true, Some(name)) = (sets.is_empty(), given) {
        return refuse(
            "plan choice",
            format!("{name:?} is no named CKKS set of scale 2^{min_scale} or more"),
        );
    }
    for set in sets.iter().cloned() {
        if set.max_level() < deepest || set.slots() < widest {
            continue;
        }
        if decides && set.n() > MAX_TRANSITION_DIMENSION {
            continue;
        }
        if let Err(e) = ckks_readings(p, &packing, &set) {
            failure = Some(e);
            continue;
        }
        let mut cost = 0.0;
        for i in 0..p.nodes.len() {
            if matches!(p.nodes[i].kind, Kind::Real { .. }) {
                cost += costs.predict("ckks", set.name(), &ckks_counts(p, &packing, i))?;
            }
        }
        let scale = set.log_scale();
        if best
            .as_ref()
            .is_none_or(|(s, c, _)| (scale, cost) < (*s, *c))
        {
            best = Some((scale, cost, set));
        }
    }
    if sets.is_empty() {
        let most = ckks_sets().iter().map(|s| s.log_scale()).max().unwrap_or(0);
        return refuse(
            "plan",
            format!("no CKKS set has a scale of 2^{min_scale} or more (the largest is 2^{most})"),
        );
    }
    // The deepest set a decision's transition takes (all of them without one).
    let largest = sets
        .into_iter()
        .filter(|s| !decides || s.n() <= MAX_TRANSITION_DIMENSION)
        .max_by_key(|s| s.max_level());
    // The first operation deeper than the largest set names the refusal.
    let top = largest.as_ref().map_or(0, |s| s.max_level());
    let named = needs_of.iter().find(|n| n.0 > top).map_or("input", |n| n.1);
    match (best, failure) {
        (Some((_, _, set)), _) => Ok((set, packing)),
        (None, Some(err)) => Err(err),
        (None, None) => refuse(
            named,
            format!(
                "needs multiplicative depth {deepest} (a released value in slots takes one level for its mask) and {widest} slots; the deepest CKKS set{}{} has depth {} and {} slots",
                if min_scale > 0 { format!(" of scale 2^{min_scale} or more") } else { String::new() },
                if decides { " a CKKS -> TFHE transition takes" } else { "" },
                top,
                largest.as_ref().map_or(0, |s| s.slots())
            ),
        ),
    }
}

/// The reading of every `threshold_real` of the program on `set` (`None`
/// for other nodes), or a refusal naming the operation: the error bound
/// of the value it reads (the engine's formulas: fresh symmetric
/// encryption, additions, exact rounding of constants, rescale rounding)
/// leaves room for the reading within the tolerance, the values and
/// threshold stay inside what the torus holds, and the transition's
/// failure probability is at most 2^[`MAX_LOG2_FAILURE`]
/// ([`crate::transition::ckks_reading`]). The error names the operation.
pub fn ckks_readings(
    p: &Program,
    packing: &[Packing],
    set: &CkksParameters,
) -> Result<Vec<Option<CkksReading>>> {
    // The engine's own bounds and propagation (triskel-ckks' `Noise`).
    let bounds = ckks::error_bounds(set.n(), triskel_ring::NoiseDistribution::default());
    let (encoding, rounding) = (bounds.encoding, bounds.rounding);
    let scale = (set.log_scale() as f64).exp2();
    let prime = |level: usize| (set.q_bits()[level] as f64 - 0.05).exp2();
    let top = set.max_level();
    let mut b = vec![ckks::Noise::default(); p.nodes.len()];
    let mut readings = vec![None; p.nodes.len()];
    for (i, node) in p.nodes.iter().enumerate() {
        let at = |k: &u32| b[*k as usize];
        let level = |k: &u32| top - packing[*k as usize].depth;
        if let &Op::ThresholdReal {
            x,
            threshold,
            tolerance,
        } = &node.op
        {
            let v = b[x as usize];
            let reading = ckks_reading(
                set.n(),
                &tfhe_set(),
                v.error,
                scale,
                prime(0),
                v.message / scale,
                threshold,
                tolerance,
            )
            .map_err(|e| Error::Refused {
                op: node.op.name().to_string(),
                msg: format!("on {}: {e}", set.name()),
            })?;
            readings[i] = Some(reading);
            continue;
        }
        if !packing[i].coefficients {
            continue;
        }
        let len = node.kind.len() as f64;
        b[i] = match &node.op {
            // Inputs in [-1, 1], declared bound len (the sum of magnitudes).
            Op::Input { .. } => ckks::Noise::new(len * scale, encoding + bounds.symmetric),
            Op::Add(x, y) | Op::Sub(x, y) => at(x) + at(y),
            Op::AddScalar(x, c) => {
                let c = reals(&[*c])[0].abs();
                at(x) + ckks::Noise::new(c * len * scale, encoding)
            }
            // The constant at scale q (rounded by at most 1/2), rescaled by q.
            Op::MulScalar(x, c) => {
                let (c, v, q) = (reals(&[*c])[0].abs(), at(x), prime(level(x)));
                v.times(c * q)
                    .plus_error(v.message / 2.0)
                    .divide(q, rounding)
            }
            // The reversed weights at scale q (bound sum |w|), rescaled by q.
            Op::DotPlain(x, w) => {
                let sum = reals(w).iter().map(|w| w.abs()).sum::<f64>();
                let q = prime(level(x));
                (at(x) * ckks::Noise::new(sum * q, encoding)).divide(q, rounding)
            }
            _ => ckks::Noise::default(),
        };
    }
    Ok(readings)
}

/// CKKS primitive counts of node `i`.
fn ckks_counts(p: &Program, packing: &[Packing], i: usize) -> Vec<(&'static str, f64)> {
    let mask = packing[i].mask_operand as u8 as f64;
    match &p.nodes[i].op {
        op @ (Op::Polynomial(..) | Op::Chebyshev { .. }) => {
            // triskel-ckks' baby-step giant-step: T_2 .. T_(k-1) and the
            // giants T_k, T_2k, .. <= d (one product each), one product per
            // split of the coefficients by a giant, d scalar terms.
            let d = ckks_polynomial(op).ok().flatten().map_or(1, |c| c.degree());
            let m = (usize::BITS - d.leading_zeros()) as usize;
            let k = 1usize << m.div_ceil(2);
            let giants = std::iter::successors(Some(k), |g| Some(2 * g))
                .take_while(|&g| g <= d)
                .count();
            let products =
                k.saturating_sub(2).min(d.saturating_sub(1)) + giants + (d + 1).div_ceil(k) - 1;
            vec![("mul_relin", products as f64), ("add", d as f64)]
        }
        Op::MatVec { x, rows } => {
            let dim = packing[*x as usize]
                .period
                .max(rows.len().next_power_of_two());
            let (rotations, products, _) = matvec_shape(rows, dim);
            vec![
                ("rotate", rotations as f64),
                ("mul_plain", products as f64),
                ("add", products as f64),
            ]
        }
        op @ (Op::Dot(a, _) | Op::DotPlain(a, _) | Op::Sum(a)) => {
            rlwe_counts(op, log2_tree(packing[*a as usize].period), mask)
        }
        op => rlwe_counts(op, 0.0, mask),
    }
}

/// For a decision (a BFV -> TFHE transition) on a value of noise `noise`
/// (log2, at the full modulus of `params`): log2 of its failure
/// probability when above [`MAX_LOG2_FAILURE`], by the transition's own
/// analysis after the mod switch to the last prime (the noise divided by
/// the dropped primes, plus the rounding of the switch).
fn transition_failure(p: &Program, op: &Op, noise: f64, params: &BfvParameters) -> Option<f64> {
    let failure = transition_log2_failure(p, op, noise, params)?;
    (failure > MAX_LOG2_FAILURE).then_some(failure)
}

/// log2 of the failure probability of a BFV -> TFHE transition node (an
/// argmax: all its values' readings together), `None` for other nodes.
fn transition_log2_failure(
    p: &Program,
    op: &Op,
    noise: f64,
    params: &BfvParameters,
) -> Option<f64> {
    match op {
        Op::ArgmaxSigned { xs, .. } => {
            let (at_q0, q0, log_t, r) = last_prime_reading(op, noise, params)?;
            let analysis = analyse_bits(params.n(), &tfhe_set(), at_q0, q0, log_t, r);
            let count: usize = xs.iter().map(|&x| len_of(p, x)).sum();
            Some(analysis.log2_failure_per_decision + (count.max(1) as f64).log2())
        }
        op => Some(transition_analysis(op, noise, params)?.log2_failure_per_decision),
    }
}

/// The analysis of one decision of a BFV -> TFHE transition node other
/// than an argmax (in the widest windows that meet the bound), `None` for
/// other nodes.
fn transition_analysis(op: &Op, noise: f64, params: &BfvParameters) -> Option<DecisionAnalysis> {
    match op {
        Op::Compare(..)
        | Op::CompareScalar(..)
        | Op::ThresholdWithin { .. }
        | Op::Lookup { .. } => {
            let (at_q0, q0, log_t, r) = last_prime_reading(op, noise, params)?;
            Some(decision_analysis(
                params.n(),
                &tfhe_set(),
                at_q0,
                q0,
                log_t - r,
                r > 0,
            ))
        }
        _ => None,
    }
}

/// A transition's source noise at the last prime (log2), the last prime,
/// log2 t and the bits left unread (the tolerance).
fn last_prime_reading(op: &Op, noise: f64, params: &BfvParameters) -> Option<(f64, u64, u32, u32)> {
    let q0_bits = *params.q_bits().first()?;
    let log_t = params.plain_modulus().trailing_zeros();
    // Named sets' primes lie just below 2^b (as in the budget model).
    let q0 = (q0_bits as f64 - 0.05).exp2() as u64;
    Some((
        at_last_prime(noise, params),
        q0,
        log_t,
        read_tolerance(op, log_t),
    ))
}

/// A noise (log2, at the full modulus of `params`) after the mod switch to
/// the last prime: divided by the dropped primes, plus the switch's
/// rounding.
fn at_last_prime(noise: f64, params: &BfvParameters) -> f64 {
    let bits = params.q_bits();
    let dropped: f64 = bits.iter().skip(1).map(|&b| b as f64).sum();
    if dropped == 0.0 {
        return noise;
    }
    let n = params.n() as f64;
    let rounding = 0.5 * ((1.0 + 2.0 * n / 3.0) / 12.0).log2();
    let scaled = noise - dropped;
    let (hi, lo) = (scaled.max(rounding), scaled.min(rounding));
    hi + 0.5 * (1.0 + (2.0 * (lo - hi)).exp2()).log2()
}

/// Per node: whether a slot-encoded BFV value may hold anything in the
/// slots past its length (a rotation tree's partial sums, or an operand's).
/// Inputs, constants and element-wise operations keep those slots 0.
pub(crate) fn slots_dirty(p: &Program) -> Vec<bool> {
    let mut dirty = vec![false; p.nodes.len()];
    for (i, node) in p.nodes.iter().enumerate() {
        dirty[i] = matches!(node.op, Op::Sum(..) | Op::Dot(..) | Op::DotPlain(..))
            || node.op.operands().iter().any(|&a| dirty[a as usize]);
    }
    dirty
}

/// Whether node `i`'s value is released to the key holder for decryption
/// (an output, or the operand of a round trip).
fn released(p: &Program, i: usize) -> bool {
    p.outputs.iter().any(|(_, v)| *v as usize == i)
        || p.nodes
            .iter()
            .any(|n| matches!(n.op, Op::ToSigned(a) | Op::ToReal { x: a, .. } if a as usize == i))
}

/// The tolerance (bits) a decision or an argmax on a t = 2^`log_t` part
/// rounds away: the operation's, capped where the transition needs 3 bits
/// (1 for an argmax) left.
pub fn read_tolerance(op: &Op, log_t: u32) -> u32 {
    match op {
        Op::ThresholdWithin { tolerance_bits, .. } => (*tolerance_bits).min(log_t - 3),
        // At least one bit of each value is read.
        Op::ArgmaxSigned { tolerance_bits, .. } => (*tolerance_bits).min(log_t - 1),
        _ => 0,
    }
}

/// The evaluation keys of one BFV part: a relinearization key when it
/// multiplies ciphertexts, and the Galois keys of its rotations.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BfvKeyNeeds {
    pub(crate) relin: bool,
    pub(crate) rotations: Vec<i64>,
}

/// Which evaluation keys a plan needs, except the CKKS rotations (which
/// come from its linear transforms: [`ckks_needs`]). Key generation and
/// the server's check of a bundle both read it.
pub(crate) struct KeyNeeds {
    pub(crate) bfv: Vec<BfvKeyNeeds>,
    pub(crate) ckks_relin: bool,
}

pub(crate) fn key_needs(plan: &Plan) -> KeyNeeds {
    let multiplies = |place: Placement| {
        plan.program.nodes.iter().enumerate().any(|(i, n)| {
            plan.placements[i] == place
                && matches!(
                    &n.op,
                    Op::Mul(..) | Op::Dot(..) | Op::Polynomial(..) | Op::Chebyshev { .. }
                )
        })
    };
    KeyNeeds {
        bfv: (0..plan.bfv.len())
            .map(|part| BfvKeyNeeds {
                relin: multiplies(Placement::Bfv(part)),
                rotations: bfv_rotations(plan, part),
            })
            .collect(),
        ckks_relin: multiplies(Placement::Ckks),
    }
}

/// The CKKS part's linear transforms (by node) and every rotation it
/// makes: slot sums of inner products, and the transforms' steps.
pub(crate) struct CkksNeeds {
    pub(crate) transforms: std::collections::HashMap<usize, ckks::LinearTransform>,
    pub(crate) rotations: BTreeSet<i64>,
}

pub(crate) fn ckks_needs(
    plan: &Plan,
    ctx: &std::sync::Arc<ckks::CkksContext>,
) -> Result<CkksNeeds> {
    let mut transforms = std::collections::HashMap::new();
    for (i, node) in plan.program.nodes.iter().enumerate() {
        if let (Placement::Ckks, Op::MatVec { x, rows }) = (plan.placements[i], &node.op) {
            let dim = plan.packing[*x as usize]
                .period
                .max(rows.len().next_power_of_two());
            let level = ctx.max_level() - plan.packing[*x as usize].depth;
            transforms.insert(i, ckks::LinearTransform::new(ctx, rows, dim, level)?);
        }
    }
    let rotations = ckks_rotations(plan, &transforms);
    Ok(CkksNeeds {
        transforms,
        rotations,
    })
}

/// Every rotation of the CKKS part: the slot sums of its inner products and
/// the steps of its linear transforms.
pub(crate) fn ckks_rotations(
    plan: &Plan,
    transforms: &std::collections::HashMap<usize, ckks::LinearTransform>,
) -> BTreeSet<i64> {
    let mut rotations: BTreeSet<i64> = transforms
        .values()
        .flat_map(|t| t.rotation_steps())
        .collect();
    for (i, node) in plan.program.nodes.iter().enumerate() {
        if plan.placements[i] != Placement::Ckks || plan.packing[i].coefficients {
            continue;
        }
        // Coefficient-encoded inner products rotate nothing.
        if let Op::Sum(a) | Op::Dot(a, _) | Op::DotPlain(a, _) = &node.op {
            let mut s = 1;
            while s < plan.packing[*a as usize].period {
                rotations.insert(s as i64);
                s *= 2;
            }
        }
    }
    rotations
}

/// The names of the sets (BFV parts, the CKKS set) whose values a plan
/// moves to TFHE by a transition.
pub(crate) fn transition_sets(plan: &Plan) -> Vec<String> {
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

/// Rotation steps of a BFV slots part (for its Galois keys).
pub fn bfv_rotations(plan: &Plan, part: usize) -> Vec<i64> {
    let p = &plan.program;
    let mut steps = BTreeSet::new();
    for (i, node) in p.nodes.iter().enumerate() {
        if plan.placements[i] != Placement::Bfv(part)
            || plan.bfv[part].encoding == BfvEncoding::Coefficients
        {
            continue;
        }
        if let Op::Dot(a, _) | Op::DotPlain(a, _) | Op::Sum(a) = node.op {
            let w = len_of(p, a).next_power_of_two();
            let mut s = w / 2;
            while s >= 1 {
                steps.insert(s as i64);
                s /= 2;
            }
        }
    }
    steps.into_iter().collect()
}

fn describe_node(p: &Program, i: usize) -> String {
    let node = &p.nodes[i];
    let args: Vec<String> = node.op.operands().iter().map(|a| format!("v{a}")).collect();
    match &node.op {
        Op::Input { name, .. } => format!("v{i} = input {name:?} ({})", node.kind.describe()),
        op => format!(
            "v{i} = {}({}) -> {}",
            op.name(),
            args.join(", "),
            node.kind.describe()
        ),
    }
}

fn params_name(plan: &Plan, place: Placement) -> String {
    match place {
        Placement::Bfv(k) => plan.bfv[k].params.name().to_string(),
        Placement::Ckks => plan.ckks.as_ref().map_or("", |s| s.name()).to_string(),
        Placement::Tfhe | Placement::BfvToTfhe(_) | Placement::CkksToTfhe => {
            tfhe_set().name.to_string()
        }
    }
}

fn steps(plan: &Plan, costs: &CostModel) -> Result<Vec<Step>> {
    let p = &plan.program;
    let readings = match &plan.ckks {
        Some(set) => ckks_readings(p, &plan.packing, set)?,
        None => vec![None; p.nodes.len()],
    };
    let tfhe = tfhe_set();
    let mut steps = Vec::new();
    let step = |kind, engine: Engine, params: String, label: String, predicted_ns: f64| Step {
        kind,
        engine,
        params,
        label,
        predicted_ns,
        measured_ns: None,
        bytes: None,
    };
    for (k, part) in plan.bfv.iter().enumerate() {
        let rotations = bfv_rotations(plan, k).len() as f64;
        let ns = costs.predict(
            "bfv",
            &part.base,
            &[("keygen", 1.0), ("galois_key", rotations)],
        )?;
        let label =
            format!("keys ({:?} encoding, {rotations} rotations)", part.encoding).to_lowercase();
        steps.push(step(
            StepKind::Keygen(Engine::Bfv, k),
            Engine::Bfv,
            part.params.name().into(),
            label,
            ns,
        ));
    }
    if let Some(set) = &plan.ckks {
        // The linear transforms' diagonals are encoded with the keys.
        let (mut rotations, mut encodes) = (0.0, 0.0);
        for (i, node) in p.nodes.iter().enumerate() {
            match &node.op {
                Op::Sum(a) | Op::Dot(a, _) | Op::DotPlain(a, _)
                    if plan.placements[i] == Placement::Ckks && !plan.packing[i].coefficients =>
                {
                    rotations += log2_tree(plan.packing[*a as usize].period)
                }
                Op::MatVec { x, rows } => {
                    let dim = plan.packing[*x as usize]
                        .period
                        .max(rows.len().next_power_of_two());
                    let (r, products, _) = matvec_shape(rows, dim);
                    rotations += r as f64;
                    encodes += products as f64;
                }
                _ => {}
            }
        }
        let ns = costs.predict(
            "ckks",
            set.name(),
            &[
                ("keygen", 1.0),
                ("galois_key", rotations),
                ("encode", encodes),
            ],
        )?;
        steps.push(step(
            StepKind::Keygen(Engine::Ckks, 0),
            Engine::Ckks,
            set.name().into(),
            format!("keys (up to {rotations} rotations)"),
            ns,
        ));
    }
    if plan.tfhe.is_some() {
        let mut ns = costs.predict("tfhe", tfhe.name, &[("keygen", 1.0)])?;
        for (k, part) in plan.bfv.iter().enumerate() {
            if plan.placements.contains(&Placement::BfvToTfhe(k)) {
                ns += costs.predict("bfv", &part.base, &[("transition_key", 1.0)])?;
            }
        }
        let from_ckks = plan.placements.contains(&Placement::CkksToTfhe);
        if let (true, Some(set)) = (from_ckks, &plan.ckks) {
            // A transition key's cost depends on the ring degree only: the
            // BFV set of the same degree's calibrated figure.
            if let Some(bfv) = bfv_sets().iter().find(|b| b.n() == set.n()) {
                ns += costs.predict("bfv", bfv.name(), &[("transition_key", 1.0)])?;
            }
        }
        let mut sources: Vec<&str> = Vec::new();
        if plan
            .placements
            .iter()
            .any(|p| matches!(p, Placement::BfvToTfhe(_)))
        {
            sources.push("bfv");
        }
        if from_ckks {
            sources.push("ckks");
        }
        let label = match sources.as_slice() {
            [] => "client and server keys".to_string(),
            s => format!(
                "client and server keys + transition keys ({} -> tfhe)",
                s.join(", ")
            ),
        };
        steps.push(step(
            StepKind::Keygen(Engine::Tfhe, 0),
            Engine::Tfhe,
            tfhe.name.into(),
            label,
            ns,
        ));
    }
    for (i, node) in p.nodes.iter().enumerate() {
        let place = plan.placements[i];
        let (engine, params) = (place.engine(), params_name(plan, place));
        let counts = |place: Placement| -> Result<f64> {
            match place {
                Placement::Bfv(k) => costs.predict(
                    "bfv",
                    &plan.bfv[k].base,
                    &bfv_counts(p, i, plan.bfv[k].encoding),
                ),
                Placement::Ckks => Ok(costs.predict(
                    "ckks",
                    &params,
                    &ckks_counts(p, &plan.packing, i),
                )? * ckks_level_factor(plan, i)),
                Placement::Tfhe => costs.predict("tfhe", tfhe.name, &tfhe_counts(p, i)),
                Placement::CkksToTfhe => {
                    let pbs = readings[i].map_or(0, |r| r.bootstraps) as f64;
                    costs.predict("tfhe", tfhe.name, &[("pbs", pbs * node.kind.len() as f64)])
                }
                Placement::BfvToTfhe(k) if matches!(node.op, Op::ArgmaxSigned { .. }) => {
                    let a = argmax_shape(plan, i, k)?;
                    let (wv, wi) = (a.value_bits as f64 / 8.0, index_bits(node.kind) / 8.0);
                    let challengers = a.values as f64 - 1.0;
                    Ok(decisions_ns(
                        costs,
                        &plan.bfv[k].base,
                        a.sources as f64,
                        a.values as f64 / a.sources as f64,
                        a.read as f64,
                    )? + costs.predict(
                        "tfhe",
                        tfhe.name,
                        &[
                            ("pbs", (a.values * a.refreshes) as f64),
                            ("compare8", challengers * wv),
                            ("select8", challengers * (wv + wi)),
                        ],
                    )?)
                }
                Placement::BfvToTfhe(k) => {
                    let part = &plan.bfv[k];
                    let decision = decision_shape(plan, i, k)?.bootstraps as f64;
                    // A lookup: one decision per table entry past the first,
                    // and a u8 addition for each.
                    let entries = match &node.op {
                        Op::Lookup { table, .. } => table.len() as f64 - 1.0,
                        _ => 0.0,
                    };
                    // Decisions per value, and bootstraps besides them
                    // (== / != combine two decisions by one).
                    let (decisions, extra) = match &node.op {
                        Op::Compare(_, _, Cmp::Eq | Cmp::Ne)
                        | Op::CompareScalar(_, _, Cmp::Eq | Cmp::Ne) => (2.0, 1.0),
                        Op::Lookup { .. } => (entries, 0.0),
                        _ => (1.0, 0.0),
                    };
                    let len = node.kind.len() as f64;
                    Ok(
                        costs.predict("bfv", &part.base, &bfv_counts(p, i, part.encoding))?
                            + decisions_ns(costs, &part.base, decisions, len, decision)?
                            + costs.predict(
                                "tfhe",
                                tfhe.name,
                                &[("pbs", extra * len), ("add8", entries * len)],
                            )?,
                    )
                }
            }
        };
        let round_trip = plan.round_trips.iter().find(|&&(n, _)| n == i);
        let kind = match (&node.op, place) {
            (Op::Input { .. }, _) => StepKind::Encrypt(i),
            _ if round_trip.is_some() => StepKind::RoundTrip {
                node: i,
                from: round_trip.map_or(engine, |r| r.1),
                to: engine,
            },
            (_, Placement::BfvToTfhe(_)) => StepKind::Transition {
                node: i,
                from: Engine::Bfv,
                to: Engine::Tfhe,
            },
            (_, Placement::CkksToTfhe) => StepKind::Transition {
                node: i,
                from: Engine::Ckks,
                to: Engine::Tfhe,
            },
            _ => StepKind::Op(i),
        };
        let mut label = describe_node(p, i);
        if plan.packing[i].mask_operand {
            label += " (operand masked first)";
        }
        let mut ns = counts(place)?;
        match kind {
            StepKind::Transition {
                from: Engine::Ckks, ..
            } => {
                if let (Some(r), Op::ThresholdReal { tolerance, .. }) = (readings[i], &node.op) {
                    label += &format!(
                        " [transition ckks -> tfhe: ring switch, extract, key switch, {} bootstraps per value; right when |x - threshold| > {:.3e} (asked {tolerance:.3e}), failure 2^{:.0}]",
                        r.bootstraps,
                        r.tolerance,
                        r.log2_failure
                    );
                }
            }
            StepKind::Transition { .. } => match place {
                Placement::BfvToTfhe(k) if matches!(node.op, Op::ArgmaxSigned { .. }) => {
                    let a = argmax_shape(plan, i, k)?;
                    let within = match a.tolerance {
                        0 => "exact".to_string(),
                        r => format!("within 2^{r}"),
                    };
                    label += &format!(
                        " [transition bfv -> tfhe: ring switch, extract, key switch, {} bootstraps per value (its bits, {within}), {} block refreshes, then a tournament of {} comparisons of u{} on tfhe; failure <= 2^{:.0} for all {} values]",
                        a.read,
                        a.refreshes,
                        a.values.saturating_sub(1),
                        a.value_bits,
                        // Beyond it the tail's float underflows.
                        a.log2_failure.max(-1000.0),
                        a.values
                    );
                }
                _ => {
                    label +=
                        " [transition bfv -> tfhe: ring switch, extract, key switch, bootstrap]"
                }
            },
            StepKind::RoundTrip { from, to, .. } => {
                label += &format!(
                    " [KEY-HOLDER ROUND TRIP {} -> {}: decrypted by the key holder, encrypted again]",
                    from.name(),
                    to.name()
                );
                let a = node.op.operands()[0] as usize;
                ns += decrypt_ns(plan, costs, a)?;
            }
            _ => {}
        }
        if let Some(slot) = plan.scores[i] {
            if slot.leader == i {
                label += " [one plaintext product for its group's scores]";
            } else {
                label += &format!(
                    " [coefficient {} of v{}'s product]",
                    slot.coefficient, slot.leader
                );
                ns = 0.0;
            }
        }
        steps.push(step(kind, engine, params, label, ns));
    }
    for (k, (name, v)) in p.outputs.iter().enumerate() {
        let i = *v as usize;
        let place = plan.placements[i];
        let (engine, params) = (place.engine(), params_name(plan, place));
        let ns = decrypt_ns(plan, costs, i)?;
        steps.push(step(
            StepKind::Decrypt(k),
            engine,
            params,
            format!("decrypt output {name:?} (v{v})"),
            ns,
        ));
    }
    Ok(steps)
}

/// Predicted time of `calls` threshold decisions on `values` coefficients
/// each, of `windows` bootstraps per value, from BFV set `base`
/// (`transition::bfv_scores_above`): per call one ring switch per window,
/// per value and window one key switch and one sign bootstrap.
/// What an argmax of signed values (node `i`, of BFV part `part`) runs.
pub(crate) struct ArgmaxShape {
    /// Values compared.
    pub values: usize,
    /// Ciphertexts they are read from (one ring switch per window each).
    pub sources: usize,
    /// Bits read per value (one bootstrap each) and the tolerance.
    pub read: u32,
    pub tolerance: u32,
    /// Bootstraps per value that refresh its two-bit blocks (b0 + 2 b1).
    pub refreshes: usize,
    /// Width of the radix integers compared ([`radix_width`] of `read`).
    pub value_bits: u32,
    /// log2 of the failure probability of all the readings together.
    pub log2_failure: f64,
}

/// The analysis of the decisions of node `i` (a BFV -> TFHE transition
/// other than an argmax, of BFV part `part`): its windows and bootstraps.
fn decision_shape(plan: &Plan, i: usize, part: usize) -> Result<DecisionAnalysis> {
    let p = &plan.program;
    let op = &p.nodes[i].op;
    let params = &plan.bfv[part].params;
    let noise = part_noise(plan, i, part)?;
    transition_analysis(op, noise, params)
        .map_or_else(|| refuse(op.name(), "not a decision on BFV values"), Ok)
}

/// The noise of node `i` of BFV part `part` (log2, at the full modulus).
fn part_noise(plan: &Plan, i: usize, part: usize) -> Result<f64> {
    let p = &plan.program;
    let nodes: Vec<usize> = (0..=i)
        .filter(|&j| {
            matches!(plan.placements[j], Placement::Bfv(k) | Placement::BfvToTfhe(k) if k == part)
        })
        .collect();
    let noise = Planner::bfv_noise(p, &nodes, &plan.bfv[part].params, plan.bfv[part].encoding)
        .or_else(|(op, msg)| refuse(op, msg))?;
    Ok(noise[i])
}

pub(crate) fn argmax_shape(plan: &Plan, i: usize, part: usize) -> Result<ArgmaxShape> {
    let p = &plan.program;
    let op = &p.nodes[i].op;
    let Op::ArgmaxSigned { xs, .. } = op else {
        return refuse(op.name(), "not an argmax of signed values");
    };
    let params = &plan.bfv[part].params;
    let log_t = params.plain_modulus().trailing_zeros();
    let tolerance = read_tolerance(op, log_t);
    let read = log_t - tolerance;
    let mut sources: Vec<usize> = xs
        .iter()
        .map(|&x| plan.scores[x as usize].map_or(x as usize, |s| s.leader))
        .collect();
    sources.sort_unstable();
    sources.dedup();
    let noise = part_noise(plan, i, part)?;
    Ok(ArgmaxShape {
        values: xs.iter().map(|&x| len_of(p, x)).sum(),
        sources: sources.len(),
        read,
        tolerance,
        refreshes: (read / 2) as usize,
        value_bits: radix_width(read),
        log2_failure: transition_log2_failure(p, op, noise, params).unwrap_or(f64::NEG_INFINITY),
    })
}

/// The narrowest radix integer (8, 16, 32 or 64 bits) holding `bits`.
pub(crate) use triskel_tfhe::argmax::radix_width;

/// Bits of a u8..u64 kind.
fn index_bits(kind: Kind) -> f64 {
    match kind {
        Kind::Uint { bits, .. } => bits as f64,
        _ => 8.0,
    }
}

fn decisions_ns(
    costs: &CostModel,
    base: &str,
    calls: f64,
    values: f64,
    windows: f64,
) -> Result<f64> {
    let readings = calls * values * windows;
    Ok(calls * windows * costs.get("bfv", base, "ring_switch")?
        + costs.predict(
            "tfhe",
            tfhe_set().name,
            &[("sign_bootstrap", readings), ("key_switch", readings)],
        )?)
}

/// The calibrated CKKS costs are at the top level; node `i` runs at its
/// operands' level, on (primes left) / (all primes) of the work.
fn ckks_level_factor(plan: &Plan, i: usize) -> f64 {
    let used = plan.program.nodes[i]
        .op
        .operands()
        .iter()
        .map(|&a| plan.packing[a as usize].depth)
        .max()
        .unwrap_or(0);
    ckks_primes_left(plan, used)
}

/// (primes left) / (all primes) of the CKKS set after `depth` levels.
fn ckks_primes_left(plan: &Plan, depth: usize) -> f64 {
    let primes = plan.ckks.as_ref().map_or(1, |c| c.q_bits().len()) as f64;
    ((primes - depth as f64) / primes).clamp(1.0 / primes, 1.0)
}

/// Predicted time of decrypting node `i`'s value.
fn decrypt_ns(plan: &Plan, costs: &CostModel, i: usize) -> Result<f64> {
    let place = plan.placements[i];
    match place {
        // The release: a fresh encryption of zero, the mask's product (slots).
        Placement::Bfv(part) => {
            let mask = (plan.bfv[part].encoding == BfvEncoding::Slots
                && slots_dirty(&plan.program)[i]) as u8 as f64;
            costs.predict(
                "bfv",
                &plan.bfv[part].base,
                &[
                    ("decrypt", 1.0),
                    ("encrypt", 1.0),
                    ("encode", mask),
                    ("mul_plain", mask),
                ],
            )
        }
        // The release: the mask's product, a fresh encryption of zero.
        Placement::Ckks => {
            let mask = (plan.packing[i].release == ReleaseMask::Product) as u8 as f64;
            Ok(costs.predict(
                "ckks",
                &params_name(plan, place),
                &[
                    ("decrypt", 1.0),
                    ("encrypt", 1.0),
                    ("add", 1.0),
                    ("encode", mask),
                    ("mul_plain", mask),
                ],
            )? * ckks_primes_left(plan, plan.packing[i].depth))
        }
        Placement::Tfhe | Placement::BfvToTfhe(_) | Placement::CkksToTfhe => {
            let blocks = match plan.program.nodes[i].kind {
                Kind::Uint { bits, len } => (bits / 2) as f64 * len as f64,
                k => k.len() as f64,
            };
            costs.predict("tfhe", tfhe_set().name, &[("decrypt_block", blocks)])
        }
    }
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

    /// A canonical one-line description of the computation and its routing
    /// decision (the program's digest, [`triskel_attest::program_digest`] of
    /// its bytes, then sets, placements, transitions, key-holder round
    /// trips): what attestation binds.
    pub fn route(&self) -> String {
        let digest = triskel_attest::program_digest(&self.program.to_bytes());
        let mut s = format!("program:{};", triskel_attest::hex(&digest));
        for part in &self.bfv {
            let _ = write!(s, "bfv:{}:{:?};", part.params.name(), part.encoding);
        }
        if let Some(c) = &self.ckks {
            let _ = write!(s, "ckks:{};", c.name());
        }
        if let Some(t) = &self.tfhe {
            let _ = write!(s, "tfhe:{};", t.name);
        }
        for (i, place) in self.placements.iter().enumerate() {
            let _ = write!(s, "v{i}:{}", place.engine().name());
            match place {
                Placement::BfvToTfhe(_) => s += "(transition bfv->tfhe, homomorphic)",
                Placement::CkksToTfhe => s += "(transition ckks->tfhe, homomorphic)",
                _ => {}
            }
            if let Some((_, from)) = self.round_trips.iter().find(|&&(n, _)| n == i) {
                let _ = write!(
                    s,
                    "(round trip {}->{}, key holder)",
                    from.name(),
                    place.engine().name()
                );
            }
            s += ";";
        }
        s += "round-trips:";
        if self.round_trips.is_empty() {
            s += "none";
        }
        for (k, (i, from)) in self.round_trips.iter().enumerate() {
            let to = self.placements[*i].engine();
            let sep = if k > 0 { "," } else { "" };
            let _ = write!(s, "{sep}v{i}({}->{})", from.name(), to.name());
        }
        s
    }

    /// Steps whose prediction is more than `factor` off their measured time
    /// (either way), after a run.
    pub fn steps_off_by(&self, factor: f64) -> Vec<usize> {
        (0..self.steps.len())
            .filter(|&k| {
                self.steps[k]
                    .ratio()
                    .is_some_and(|r| r > factor || r < 1.0 / factor)
            })
            .collect()
    }

    /// The plan as a table: each step's engine, parameter set, predicted
    /// time and, after a run, the measured time and predicted / measured
    /// (`!` when more than 2x off), then the totals' ratio line.
    pub fn explain(&self) -> String {
        let ms = |ns: f64| format!("{:.3} ms", ns / 1e6);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<5} {:<5} {:<34} {:>12} {:>12} {:>7}  step",
            "#", "eng", "parameter set", "predicted", "measured", "p/m"
        );
        let off = self.steps_off_by(2.0);
        for (k, s) in self.steps.iter().enumerate() {
            let measured = s.measured_ns.map_or("-".to_string(), ms);
            let ratio = s.ratio().map_or("-".to_string(), |r| {
                format!("{r:.2}{}", if off.contains(&k) { "!" } else { " " })
            });
            let _ = writeln!(
                out,
                "{k:<5} {:<5} {:<34} {:>12} {:>12} {ratio:>7}  {}",
                s.engine.name(),
                s.params,
                ms(s.predicted_ns),
                measured,
                s.label
            );
        }
        let measured: Option<f64> = self.steps.iter().map(|s| s.measured_ns).sum();
        let _ = writeln!(
            out,
            "total predicted {}, measured {}; planning took {}",
            ms(self.predicted_ns()),
            measured.map_or("-".to_string(), ms),
            ms(self.planning_ns)
        );
        let _ = writeln!(
            out,
            "ciphertexts held: at most {:.1} MiB",
            self.ciphertext_bytes() as f64 / f64::from(1 << 20)
        );
        if let Some(m) = measured {
            let off_ns: f64 = off.iter().filter_map(|&k| self.steps[k].measured_ns).sum();
            let _ = writeln!(
                out,
                "predicted / measured: {:.2}; steps more than 2x off: {} ({:.1}% of the measured time)",
                self.predicted_ns() / m,
                if off.is_empty() {
                    "none".to_string()
                } else {
                    format!("{off:?}")
                },
                100.0 * off_ns / m
            );
        }
        for &(i, from) in &self.round_trips {
            let _ = writeln!(
                out,
                "key-holder round trip at v{i}: {} -> {} (the key holder decrypts and re-encrypts; no homomorphic path)",
                from.name(),
                self.placements[i].engine().name()
            );
        }
        let unused = self.unused_inputs();
        if !unused.is_empty() {
            let _ = writeln!(
                out,
                "inputs no output reads: {} (keyed and encrypted all the same)",
                unused.join(", ")
            );
        }
        out
    }

    /// Names of the inputs from which no output is computed.
    pub fn unused_inputs(&self) -> Vec<&str> {
        let nodes = &self.program.nodes;
        let mut read = vec![false; nodes.len()];
        for (_, i) in self.program.outputs() {
            read[i] = true;
        }
        // Operands come before their nodes: one backward pass marks them all.
        for i in (0..nodes.len()).rev() {
            if read[i] {
                for a in nodes[i].op.operands() {
                    read[a as usize] = true;
                }
            }
        }
        nodes
            .iter()
            .zip(&read)
            .filter_map(|(node, &r)| match &node.op {
                Op::Input { name, .. } if !r => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }
}
