//! Encryption under the collective public keys, by a party or by anyone
//! who holds the evaluation keys.

use std::collections::BTreeMap;

use super::state::Party;
use crate::client::ckks_input;
use crate::error::{Error, Result};
use crate::exec::{check_inputs, PlainValue};
use crate::plan::{plan_chosen, Placement, Plan};
use crate::program::{Op, Program};
use crate::server::{bfv_plain, wrong, EvaluationKeys, Val};
use crate::wire::{encode_val, EncryptedInputs, InputValue};

impl Party {
    /// Encrypts `inputs` under the collective public keys, with a context
    /// the server's records bind (as [`Encryptor::encrypt`]).
    pub fn encrypt(
        &self,
        inputs: &BTreeMap<String, PlainValue>,
        context: &[u8],
    ) -> Result<EncryptedInputs> {
        encrypt_public(&self.session.plan, self.evaluation_keys()?, inputs, context)
    }
}

/// Encrypts inputs under the public keys of an evaluation-key bundle: what
/// anyone who holds the bundle (a party, or an outside data owner) sends
/// a server for threshold keys.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{Encryptor, Kind, Party, PartySession, PlainValue, PlanOptions, Program};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Modular { len: 4, modulus: 65537 })?;
/// let y = p.add(x, x)?;
/// p.output("y", y)?;
///
/// // 2 of 2 parties make the keys (additive shares: no deals).
/// let session = PartySession::new(&p, PlanOptions::default().threshold(2, 2))?;
/// let mut parties = [Party::new(&session, 0)?, Party::new(&session, 1)?];
/// let public = parties
///     .iter_mut()
///     .map(|q| Ok(q.keygen_round1()?.public))
///     .collect::<triskel::Result<Vec<_>>>()?;
/// let round2 = parties
///     .iter_mut()
///     .map(|q| q.keygen_round2(&public, &[]))
///     .collect::<triskel::Result<Vec<_>>>()?;
/// parties.iter_mut().try_for_each(|q| q.keygen_finish(&round2))?;
///
/// // A data owner who holds only the evaluation keys encrypts for the server.
/// let keys = parties[0].evaluation_keys()?;
/// let owner = Encryptor::new(&p, keys)?;
/// let inputs = BTreeMap::from([("x".to_string(), PlainValue::Ints(vec![1, 2, 3, 4]))]);
/// let encrypted = owner.encrypt(&inputs, b"owner 7")?;
/// assert_eq!(*encrypted.key_set(), keys.id());
/// assert_eq!(encrypted.context(), b"owner 7");
///
/// // Keys made for another program are refused.
/// let mut other = Program::new();
/// let z = other.input("z", Kind::Modular { len: 4, modulus: 65537 })?;
/// other.output("z", z)?;
/// assert!(Encryptor::new(&other, keys).is_err());
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Debug)]
pub struct Encryptor {
    plan: Plan,
    keys: EvaluationKeys,
}

impl Encryptor {
    /// The encryptor of `program`'s inputs under `keys` (made for it; the
    /// plan is derived again from the keys' plan choice).
    pub fn new(program: &Program, keys: &EvaluationKeys) -> Result<Encryptor> {
        if triskel_attest::program_digest(&program.to_bytes()) != keys.program {
            return Err(Error::Refused {
                op: "encryptor".into(),
                msg: "the keys were made for another program".into(),
            });
        }
        Ok(Encryptor {
            plan: plan_chosen(program, keys.choice())?,
            keys: keys.clone(),
        })
    }

    /// Encrypts `inputs` (checked first) with a context (at most
    /// [`MAX_CONTEXT_BYTES`](crate::wire::MAX_CONTEXT_BYTES) bytes) that
    /// the server's records bind.
    pub fn encrypt(
        &self,
        inputs: &BTreeMap<String, PlainValue>,
        context: &[u8],
    ) -> Result<EncryptedInputs> {
        encrypt_public(&self.plan, &self.keys, inputs, context)
    }
}

fn encrypt_public(
    plan: &Plan,
    keys: &EvaluationKeys,
    inputs: &BTreeMap<String, PlainValue>,
    context: &[u8],
) -> Result<EncryptedInputs> {
    if context.len() > crate::wire::MAX_CONTEXT_BYTES {
        return Err(Error::Input(format!(
            "a context of {} bytes (at most {})",
            context.len(),
            crate::wire::MAX_CONTEXT_BYTES
        )));
    }
    check_inputs(&plan.program, inputs)?;
    let mut values = Vec::new();
    for (i, node) in plan.program.nodes.iter().enumerate() {
        let Op::Input { name, .. } = &node.op else {
            continue;
        };
        let val = match (plan.placements[i], &inputs[name]) {
            (Placement::Bfv(part), PlainValue::Ints(v)) => {
                let k = &keys.bfv[part];
                Val::Bfv(k.pk.encrypt(&bfv_plain(&k.ctx, plan.bfv[part].encoding, v)?)?)
            }
            (Placement::Ckks, PlainValue::Reals(v)) => {
                let k = keys.ckks.as_ref().ok_or_else(|| wrong("ckks keys"))?;
                let period = plan.packing[i].period;
                Val::Ckks(k.pk.encrypt(&ckks_input(&k.ctx, v, period)?)?, period)
            }
            _ => return Err(wrong("input")),
        };
        values.push(InputValue {
            node: i as u32,
            value: encode_val(&val)?,
        });
    }
    Ok(EncryptedInputs {
        key_set: keys.id(),
        context: context.to_vec(),
        values,
    })
}
