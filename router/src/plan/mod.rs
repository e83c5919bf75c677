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
mod options;
mod place;
mod steps;
mod tfhe_part;
mod types;

pub(crate) use self::bfv_part::*;
pub(crate) use self::ckks_part::*;
use self::explain::*;
pub(crate) use self::keys::*;
pub use self::options::*;
pub(crate) use self::place::*;
pub(crate) use self::steps::*;
pub(crate) use self::tfhe_part::*;
pub use self::types::*;

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
