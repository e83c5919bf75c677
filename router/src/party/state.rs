//! A party: its keys per key set, its secret state's bytes and files, and
//! the heads of the messages it sends and reads.

use std::collections::HashMap;

use triskel_bfv as bfv;
use triskel_ckks as ckks;
use triskel_ring::rlwe::threshold::share_basis;
use triskel_ring::threshold::ThresholdShare;
use zeroize::Zeroizing;

use super::set_keys::SetKeys;
use super::{open_stored, PartySession, KIND_STATE, MAGIC, MAX_PARTY_STATE_BYTES, WHAT};
use crate::error::{Error, Result};
use crate::plan::{ckks_needs, key_needs, Plan};
use crate::server::EvaluationKeys;
use crate::wire::{bad, Reader, Writer};
#[cfg(doc)]
use crate::PlanOptions;

/// One of the n key holders of threshold keys ([`PlanOptions::threshold`]).
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{attest::Identity, Kind, Party, PartySession, PlainValue, PlanOptions, Program, Server};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Modular { len: 4, modulus: 65537 })?;
/// let y = p.add_scalar(x, triskel::Scalar::Int(5))?;
/// p.output("y", y)?;
///
/// // 2 of 3: the parties run the key generation rounds, exchanging bytes.
/// let session = PartySession::new(&p, PlanOptions::default().threshold(2, 3))?;
/// let mut parties = (0..3).map(|i| Party::new(&session, i)).collect::<Result<Vec<_>, _>>()?;
/// let round1 = parties.iter_mut().map(|q| q.keygen_round1()).collect::<Result<Vec<_>, _>>()?;
/// let public: Vec<Vec<u8>> = round1.iter().map(|r| r.public.clone()).collect();
/// let mut round2 = Vec::new();
/// for (j, q) in parties.iter_mut().enumerate() {
///     let deals: Vec<Vec<u8>> = round1.iter().map(|r| r.deals[j].to_vec()).collect();
///     round2.push(q.keygen_round2(&public, &deals)?);
/// }
/// parties.iter_mut().try_for_each(|q| q.keygen_finish(&round2))?;
///
/// let keys = parties[0].evaluation_keys()?.clone();
/// let inputs = parties[1].encrypt(&BTreeMap::from([("x".into(), PlainValue::Ints(vec![1, 2, 3, 4]))]), &[])?;
/// let server = Server::new(Identity::generate()?);
/// let outputs = server.run(&p, keys.choice(), &keys, &inputs)?;
///
/// // Parties 0 and 2 decrypt together.
/// let id = server.identity().public();
/// let shares = [0, 2].map(|j| parties[j].decryption_share(&outputs, &inputs, id, &[0, 2]));
/// let shares = shares.into_iter().collect::<Result<Vec<_>, _>>()?;
/// let plain = parties[2].combine(&outputs, &inputs, id, &[0, 2], &shares)?;
/// assert_eq!(plain.get("y"), Some(&PlainValue::Ints(vec![6, 7, 8, 9])));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Party {
    pub(super) session: PartySession,
    pub(super) index: u16,
    pub(super) bfv: Vec<SetKeys<bfv::BfvContext>>,
    pub(super) ckks: Option<SetKeys<ckks::CkksContext>>,
    pub(super) transforms: Option<HashMap<usize, ckks::LinearTransform>>,
    pub(super) keys: Option<EvaluationKeys>,
}

impl std::fmt::Debug for Party {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Party")
            .field("index", &self.index)
            .field("k", &self.session.k)
            .field("n", &self.session.n)
            .finish_non_exhaustive()
    }
}

impl Party {
    /// Party `index` (0..n) of `session`: draws its secret shares of every
    /// key set of the plan.
    pub fn new(session: &PartySession, index: u16) -> Result<Party> {
        Party::build(session, index, true)
    }

    pub(super) fn build(session: &PartySession, index: u16, fresh: bool) -> Result<Party> {
        if index >= session.n {
            return Err(Error::Refused {
                op: "party".into(),
                msg: format!("party {index} is not one of the parties 0..{}", session.n),
            });
        }
        let plan = &session.plan;
        let needs = key_needs(plan);
        let mut bfv = Vec::with_capacity(plan.bfv.len());
        for (part, need) in needs.bfv.iter().enumerate() {
            let ctx = bfv::BfvContext::new(plan.bfv[part].params.clone())?;
            bfv.push(SetKeys::new(
                ctx,
                session.ring_session(part)?,
                index + 1,
                need.relin,
                &need.rotations,
                fresh,
            )?);
        }
        let (ckks, transforms) = match &plan.ckks {
            Some(params) => {
                let ctx = ckks::CkksContext::new(params.clone())?;
                let cn = ckks_needs(plan, &ctx)?;
                let steps: Vec<i64> = cn.rotations.iter().copied().collect();
                let keys = SetKeys::new(
                    ctx,
                    session.ring_session(plan.bfv.len())?,
                    index + 1,
                    needs.ckks_relin,
                    &steps,
                    fresh,
                )?;
                (Some(keys), Some(cn.transforms))
            }
            None => (None, None),
        };
        Ok(Party {
            session: session.clone(),
            index,
            bfv,
            ckks,
            transforms,
            keys: None,
        })
    }

    /// The party's secret state after the key generation (module
    /// documentation): its session, index, key-set id and decryption key
    /// shares with their release counts.
    pub fn to_bytes(&self) -> Result<Zeroizing<Vec<u8>>> {
        let keys = self.evaluation_keys()?;
        let mut w = self.writer(KIND_STATE);
        w.blob(&self.session.to_bytes());
        w.bytes(&keys.id());
        for set in self.bfv.iter().map(|s| s.threshold_share()) {
            w.blob(&set?.to_bytes());
        }
        if let Some(set) = &self.ckks {
            w.blob(&set.threshold_share()?.to_bytes());
        }
        Ok(Zeroizing::new(w.0))
    }

    /// Loads [`Party::to_bytes`] output (at most `limit` bytes) with the
    /// evaluation keys the parties made (refused for any others).
    pub fn from_bytes(bytes: &[u8], limit: u64, keys: &EvaluationKeys) -> Result<Party> {
        let mut r = open_stored(bytes, limit, KIND_STATE, "not a party's state")?;
        let id = r.take(16)?;
        let b = r.take(2)?;
        let index = u16::from_le_bytes([b[0], b[1]]);
        let session = PartySession::from_bytes(r.blob()?, limit)?;
        if id != session.id {
            return bad(WHAT, "a state whose head and session disagree");
        }
        if r.digest()? != keys.id() {
            return Err(Error::Refused {
                op: "party".into(),
                msg: "these evaluation keys are not the ones this party made".into(),
            });
        }
        let mut party = Party::build(&session, index, false)?;
        for set in &mut party.bfv {
            let basis = share_basis(&*set.ctx).clone();
            set.share = Some(ThresholdShare::from_bytes(r.blob()?, &set.session, &basis)?);
        }
        if let Some(set) = &mut party.ckks {
            let basis = share_basis(&*set.ctx).clone();
            set.share = Some(ThresholdShare::from_bytes(r.blob()?, &set.session, &basis)?);
        }
        r.finish()?;
        party.keys = Some(keys.clone());
        Ok(party)
    }

    /// Writes [`Party::to_bytes`] to `path`, readable by its owner only.
    /// Save it after every [`Party::decryption_share`], before the share
    /// leaves: the release counts the floods were sized for live in it.
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        crate::client::write_private(path, &self.to_bytes()?)
    }

    /// Loads a state [`Party::save`] wrote (refused when group or others
    /// may access the file), with its evaluation keys.
    pub fn load(path: &std::path::Path, keys: &EvaluationKeys) -> Result<Party> {
        let bytes = crate::client::read_private(path, MAX_PARTY_STATE_BYTES, "party state")?;
        Party::from_bytes(&bytes, MAX_PARTY_STATE_BYTES, keys)
    }

    /// The party's index, 0..n.
    pub fn index(&self) -> u16 {
        self.index
    }

    /// The plan the keys are made for.
    pub fn plan(&self) -> &Plan {
        &self.session.plan
    }

    pub(super) fn writer(&self, kind: u8) -> Writer {
        let mut w = Writer::new(MAGIC);
        w.u8(kind);
        w.bytes(&self.session.id);
        w.bytes(&self.index.to_le_bytes());
        w
    }

    /// A reader of a message of `kind` from party `from`, past its head.
    pub(super) fn reader<'a>(&self, bytes: &'a [u8], kind: u8, from: u16) -> Result<Reader<'a>> {
        let mut r = Reader::new(WHAT, MAGIC, bytes)?;
        if r.u8()? != kind {
            return bad(WHAT, format!("not a message of kind {kind}"));
        }
        if r.take(16)? != self.session.id {
            return bad(WHAT, "a message from another session");
        }
        let b = r.take(2)?;
        let party = u16::from_le_bytes([b[0], b[1]]);
        if party != from {
            return bad(
                WHAT,
                format!("from party {party} where party {from}'s belongs"),
            );
        }
        Ok(r)
    }

    /// One reader per party for `messages` (one per party, in order).
    pub(super) fn readers<'a>(&self, messages: &'a [Vec<u8>], kind: u8) -> Result<Vec<Reader<'a>>> {
        if messages.len() != self.session.n as usize {
            return bad(
                WHAT,
                format!("{} messages for {} parties", messages.len(), self.session.n),
            );
        }
        (0..self.session.n)
            .zip(messages)
            .map(|(from, m)| self.reader(m, kind, from))
            .collect()
    }
}
