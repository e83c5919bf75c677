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
use std::sync::atomic::AtomicBool;
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
use triskel_tfhe::{
    Ciphertext as TfheBit, Comparison, CompressedServerKey, RadixCiphertext, ServerKey,
};
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

mod eval;
mod eval_bfv;
mod eval_ckks;
mod eval_tfhe;
mod eval_transition;
mod keys;

pub(crate) use self::eval::*;
pub(crate) use self::eval_bfv::*;
pub(crate) use self::eval_ckks::*;
pub use self::keys::*;

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

pub(crate) fn wrong(op: &str) -> Error {
    Error::Internal(format!(
        "{op}: operand of an unexpected engine (a planner bug)"
    ))
}

/// The evaluator of outsourced work: holds the server's attestation
/// identity and nothing secret of any client.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{attest::Identity, Client, Error, Kind, PlainValue, PlanOptions, Program, Server};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 2, bound: 100 })?;
/// let y = p.add(x, x)?;
/// p.output("y", y)?;
/// let (mut alice, bob) = (Client::new(&p, PlanOptions::default())?, Client::new(&p, PlanOptions::default())?);
/// let inputs = alice.encrypt(&BTreeMap::from([("x".into(), PlainValue::Ints(vec![3, -4]))]))?;
///
/// let server = Server::new(Identity::generate()?);
/// let keys = alice.evaluation_keys()?;
/// let outputs = server.run(&p, keys.choice(), keys, &inputs)?;
/// assert!(outputs.is_final());
/// let plain = alice.decrypt(&outputs, server.identity().public())?;
/// assert_eq!(plain.get("y"), Some(&PlainValue::Ints(vec![6, -8])));
///
/// // Alice's inputs under Bob's keys are refused before any work.
/// let bobs = bob.evaluation_keys()?;
/// let refused = server.run(&p, bobs.choice(), bobs, &inputs);
/// assert!(matches!(refused, Err(Error::Refused { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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

/// The cancel flag of a run nobody cancels.
pub(crate) static NOT_CANCELLED: AtomicBool = AtomicBool::new(false);

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
        self.run_cancellable(program, choice, keys, inputs, &NOT_CANCELLED)
    }

    /// [`Server::run`] that stops with [`Error::Cancelled`] once `cancel`
    /// is raised (by another thread): it is checked before each operation
    /// and before each record is signed, so a run ends within one
    /// operation of it.
    pub fn run_cancellable(
        &self,
        program: &Program,
        choice: &PlanChoice,
        keys: &EvaluationKeys,
        inputs: &EncryptedInputs,
        cancel: &AtomicBool,
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
        let eval = Evaluator {
            plan: &plan,
            keys,
            cancel,
        };
        let releases = eval.finish(&mut pass)?;
        let program_digest = keys.program;
        let input_digests: Vec<Digest32> = inputs.values.iter().map(|v| v.digest()).collect();
        let route = crate::route(&plan);
        let mut entries = Vec::with_capacity(releases.len());
        for Release { slot, value } in releases {
            eval.check_cancel()?;
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
