//! Threshold key holders: n [`Party`] objects generate a plan's BFV and
//! CKKS keys together (no party ever holds the whole secret), a
//! [`Server`](crate::Server) runs the program as for a
//! [`Client`](crate::Client), and any k parties decrypt its outputs.
//!
//! The protocols are those of `triskel_ring::threshold` (collective public,
//! relinearization and Galois keys; Shamir sharing for k < n; decryption
//! by a key switch to zero with noise flooding sized from each ciphertext).
//! Every message is bytes, so that it could travel; in this crate the
//! parties run in one process.
//!
//! ```text
//! message = "TRSKPTY" version:u8(2) kind:u8 session:16 party:u16 body
//! kind 1  round 1 (to all):    per key set: pk share:blob, opt(relin round 1:blob),
//!                              galois:u32 blob*
//! kind 2  deal (to one party): to:u16, per key set: deal:blob   (secret)
//! kind 3  round 2 (to all):    per key set: opt(relin round 2:blob)
//! kind 4  decryption share:    entries:u32 share:blob*
//! kind 5  state (secret):      session:blob key_set:digest, per key set: threshold share:blob
//! session = "TRSKPTY" version:u8(2) kind:u8(0) program:blob choice:blob id:16 crs:32
//! ```
//!
//! The key sets are the plan's BFV parts in order, then its CKKS set.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use triskel_attest::PublicIdentity;
use triskel_bfv as bfv;
use triskel_ckks as ckks;
use triskel_ring::rlwe::{GaloisKeys, PublicKey, RelinKey, Scheme};
use triskel_ring::threshold::{
    CiphertextId, GaloisKeyGen, PartySecret, PublicKeyGen, RelinEphemeral, RelinKeyGen, Session,
    Share, ThresholdShare,
};
use triskel_ring::{Prng, Seed};
use zeroize::Zeroizing;

use crate::client::{check_final, ckks_input, shape_output, verify_outputs};
use crate::cost::CostModel;
use crate::error::{Error, Result};
use crate::exec::{check_inputs, Outputs, PlainValue};
use crate::plan::{ckks_needs, key_needs, plan_chosen, plan_with, Placement, Plan, PlanOptions};
use crate::program::{Op, Program};
use crate::server::{bfv_plain, wrong, BfvEval, CkksEval, EvaluationKeys, Val};
use crate::wire::{bad, encode_val, EncryptedInputs, EncryptedOutputs, InputValue, Reader, Writer};
use crate::PlanChoice;

const MAGIC: &[u8; 7] = b"TRSKPTY";
const KIND_SESSION: u8 = 0;
const KIND_ROUND1: u8 = 1;
const KIND_DEAL: u8 = 2;
const KIND_ROUND2: u8 = 3;
const KIND_DECRYPTION: u8 = 4;
const KIND_STATE: u8 = 5;
/// The largest party state [`Party::load`] reads.
pub const MAX_PARTY_STATE_BYTES: u64 = 1 << 30;
const WHAT: &str = "party message";

/// The flooded decryptions each party's key share covers (the flooding's
/// alpha): the floods are sized for this many releases per share.
pub const THRESHOLD_RELEASES: u64 = 16;
/// The statistical security of each BFV release, in bits (2^-40 per
/// release); CKKS releases use [`ckks::DEFAULT_STATISTICAL_SECURITY`].
pub const BFV_STATISTICAL_SECURITY: u32 = 40;
/// The least precision, in bits, a threshold decryption of a CKKS output
/// must keep after the parties' floods; below it the decryption is refused
/// before any share is made.
pub const MIN_CKKS_PRECISION_BITS: f64 = 10.0;

/// The public setup every party of one collective key set holds: the plan
/// (with [`PlanOptions::threshold`]), a session identity and the seed of
/// the common random polynomials. One party makes it and sends its bytes
/// to the others.
#[derive(Clone, Debug)]
pub struct PartySession {
    plan: Plan,
    k: u16,
    n: u16,
    id: [u8; 16],
    crs: Seed,
}

impl PartySession {
    /// Plans `program` with this machine's cost model; `options` must set
    /// [`PlanOptions::threshold`]. Refused with
    /// [`Error::NotCollective`] for a plan that needs keys no collective
    /// protocol makes.
    pub fn new(program: &Program, options: PlanOptions) -> Result<PartySession> {
        PartySession::with_costs(program, options, &CostModel::load().0)
    }

    /// [`PartySession::new`] with `costs`.
    pub fn with_costs(
        program: &Program,
        options: PlanOptions,
        costs: &CostModel,
    ) -> Result<PartySession> {
        let plan = plan_with(program, costs, options)?;
        let mut rng = Prng::from_os()?;
        let mut id = [0u8; 16];
        id.copy_from_slice(&rng.gen_seed()[..16]);
        PartySession::of_plan(plan, id, rng.gen_seed())
    }

    fn of_plan(plan: Plan, id: [u8; 16], crs: Seed) -> Result<PartySession> {
        let Some(t) = plan.options.threshold else {
            return Err(Error::Refused {
                op: "threshold".into(),
                msg: "parties need PlanOptions::threshold(k, n)".into(),
            });
        };
        Ok(PartySession {
            plan,
            k: t.k,
            n: t.n,
            id,
            crs,
        })
    }

    /// The plan the keys are made for.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// k and n: any k of the n parties decrypt.
    pub fn threshold(&self) -> (u16, u16) {
        (self.k, self.n)
    }

    /// The session's identity (every message carries it).
    pub fn id(&self) -> [u8; 16] {
        self.id
    }

    /// The versioned bytes (module documentation); public.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(MAGIC);
        w.u8(KIND_SESSION);
        w.blob(&self.plan.program.to_bytes());
        w.blob(&self.plan.choice().to_bytes());
        w.bytes(&self.id);
        w.bytes(&self.crs);
        w.0
    }

    /// Loads [`PartySession::to_bytes`] output (at most `limit` bytes): the
    /// plan is derived again from the program and the choice.
    pub fn from_bytes(bytes: &[u8], limit: u64) -> Result<PartySession> {
        if bytes.len() as u64 > limit {
            return bad(
                WHAT,
                format!("{} bytes, above the limit of {limit}", bytes.len()),
            );
        }
        let mut r = Reader::new(WHAT, MAGIC, bytes)?;
        if r.u8()? != KIND_SESSION {
            return bad(WHAT, "not a session");
        }
        let program = Program::from_bytes(r.blob()?)?;
        let choice = PlanChoice::from_bytes(r.blob()?, u64::MAX)?;
        let mut id = [0u8; 16];
        id.copy_from_slice(r.take(16)?);
        let mut crs = [0u8; 32];
        crs.copy_from_slice(r.take(32)?);
        r.finish()?;
        PartySession::of_plan(plan_chosen(&program, &choice)?, id, crs)
    }

    /// The ring session of key set `set` (its identity and CRS derived
    /// from the session's).
    fn ring_session(&self, set: usize) -> Result<Session> {
        let mut material = Vec::with_capacity(56);
        material.extend_from_slice(&self.id);
        material.extend_from_slice(&self.crs);
        material.extend_from_slice(&(set as u64).to_le_bytes());
        let id = blake3::derive_key("triskel/party/session-id/v1", &material);
        let crs = blake3::derive_key("triskel/party/crs/v1", &material);
        let mut short = [0u8; 16];
        short.copy_from_slice(&id[..16]);
        Ok(Session::from_parts(short, crs, self.n, self.k)?)
    }

    /// `parties` (0-based) as the sorted, 1-based set of the ring
    /// protocols, after checking them.
    fn decryption_set(&self, parties: &[u16]) -> Result<Vec<u16>> {
        let refuse = |msg: String| {
            Err(Error::Refused {
                op: "threshold decryption".into(),
                msg,
            })
        };
        let mut set = parties.to_vec();
        set.sort_unstable();
        if let Some(w) = set.windows(2).find(|w| w[0] == w[1]) {
            return refuse(format!("party {} appears twice", w[0]));
        }
        if let Some(p) = set.iter().find(|&&p| p >= self.n) {
            return refuse(format!("party {p} is not one of the parties 0..{}", self.n));
        }
        if set.len() < self.k as usize {
            return refuse(format!(
                "{} parties given; {} of the {} are needed",
                set.len(),
                self.k,
                self.n
            ));
        }
        Ok(set.into_iter().map(|p| p + 1).collect())
    }
}

/// One party's state for one collective key set (a BFV part or the CKKS
/// set).
struct SetKeys<C: Scheme> {
    ctx: Arc<C>,
    session: Session,
    /// None for a party loaded after its key generation.
    secret: Option<PartySecret>,
    relin: bool,
    elements: Vec<usize>,
    rotations: bool,
    ephemeral: Option<RelinEphemeral>,
    relin_round1: Option<Share>,
    pk: Option<PublicKey<C>>,
    rk: Option<RelinKey<C>>,
    gk: Option<GaloisKeys<C>>,
    share: Option<ThresholdShare>,
}

impl<C: Scheme> SetKeys<C>
where
    Error: From<C::Error>,
{
    /// A party's state for the set; `fresh`: with a new secret share for
    /// the key generation.
    fn new(
        ctx: Arc<C>,
        session: Session,
        party: u16,
        relin: bool,
        steps: &[i64],
        fresh: bool,
    ) -> Result<SetKeys<C>> {
        let elements = ctx.galois_elements(C::ROTATION_GENERATOR, steps, false)?;
        let secret = match fresh {
            true => Some(PartySecret::generate(&session, party, ctx.n())?),
            false => None,
        };
        Ok(SetKeys {
            secret,
            ctx,
            session,
            relin,
            elements,
            rotations: !steps.is_empty(),
            ephemeral: None,
            relin_round1: None,
            pk: None,
            rk: None,
            gk: None,
            share: None,
        })
    }

    fn secret(&self) -> Result<&PartySecret> {
        self.secret.as_ref().ok_or_else(|| Error::Refused {
            op: "party".into(),
            msg: "the key generation of a loaded party is over".into(),
        })
    }

    fn pk_gen(&self) -> PublicKeyGen {
        PublicKeyGen::new(&self.session, self.ctx.public_key_basis(), self.ctx.noise())
    }

    fn galois_gens(&self) -> Result<Vec<GaloisKeyGen<'_>>> {
        self.elements
            .iter()
            .map(|&g| Ok(GaloisKeyGen::new(&self.session, self.ctx.key_switch(), g)?))
            .collect()
    }

    fn round1(&mut self, w: &mut Writer) -> Result<()> {
        w.blob(&self.pk_gen().share(self.secret()?)?.to_bytes());
        let relin = if self.relin {
            let (eph, share) =
                RelinKeyGen::new(&self.session, self.ctx.key_switch()).round1(self.secret()?)?;
            self.ephemeral = Some(eph);
            Some(share.to_bytes())
        } else {
            None
        };
        w.opt(relin.as_ref(), |w, b| w.blob(b));
        let gens = self.galois_gens()?;
        w.u32(gens.len());
        for gen in gens {
            w.blob(&gen.share(self.secret()?)?.to_bytes());
        }
        Ok(())
    }

    /// This party's deal for every party (None with k = n).
    fn deals(&self) -> Result<Option<Vec<Share>>> {
        if self.session.threshold() == self.session.parties() {
            return Ok(None);
        }
        Ok(Some(self.secret()?.deal(self.ctx.key_switch().qp())?))
    }

    /// Reads every party's round-1 part for this set (one reader per party,
    /// in party order) and the deals addressed to this party.
    fn finish_round1(&mut self, readers: &mut [Reader<'_>], deals: &[Share]) -> Result<()> {
        let qp = self.ctx.key_switch().qp().clone();
        let pk_basis = self.ctx.public_key_basis().clone();
        let mut pk = Vec::with_capacity(readers.len());
        let mut relin = Vec::new();
        let mut galois: Vec<Vec<Share>> = vec![Vec::new(); self.elements.len()];
        for r in readers.iter_mut() {
            pk.push(Share::from_bytes(r.blob()?, &pk_basis)?);
            match (r.flag()?, self.relin) {
                (true, true) => relin.push(Share::from_bytes(r.blob()?, &qp)?),
                (false, false) => {}
                _ => return bad(WHAT, "a relinearization share where none belongs, or none"),
            }
            if r.u32()? != self.elements.len() {
                return bad(WHAT, "another number of Galois key shares than the plan's");
            }
            for g in galois.iter_mut() {
                g.push(Share::from_bytes(r.blob()?, &qp)?);
            }
        }
        let gen = self.pk_gen();
        let key = gen.finish(&gen.aggregate(&pk)?)?;
        self.pk = Some(PublicKey::from_collective(&self.ctx, key)?);
        if self.rotations {
            let keys = self
                .galois_gens()?
                .into_iter()
                .zip(&galois)
                .zip(&self.elements)
                .map(|((gen, shares), &g)| Ok((g, gen.finish(&gen.aggregate(shares)?)?)))
                .collect::<Result<Vec<_>>>()?;
            self.gk = Some(GaloisKeys::from_collective(
                &self.ctx,
                self.session.key_id(),
                keys,
            )?);
        }
        if self.relin {
            let gen = RelinKeyGen::new(&self.session, self.ctx.key_switch());
            self.relin_round1 = Some(gen.aggregate_round1(&relin)?);
        }
        self.share = Some(if deals.is_empty() {
            ThresholdShare::additive(self.secret()?, &qp)?
        } else {
            ThresholdShare::from_deals(self.secret()?, deals)?
        });
        Ok(())
    }

    fn round2(&self, w: &mut Writer) -> Result<()> {
        let share = match (&self.ephemeral, &self.relin_round1) {
            (Some(eph), Some(agg)) => Some(
                RelinKeyGen::new(&self.session, self.ctx.key_switch())
                    .round2(self.secret()?, eph, agg)?
                    .to_bytes(),
            ),
            _ => None,
        };
        w.opt(share.as_ref(), |w, b| w.blob(b));
        Ok(())
    }

    fn finish_round2(&mut self, readers: &mut [Reader<'_>]) -> Result<()> {
        let qp = self.ctx.key_switch().qp().clone();
        let mut shares = Vec::new();
        for r in readers.iter_mut() {
            match (r.flag()?, self.relin) {
                (true, true) => shares.push(Share::from_bytes(r.blob()?, &qp)?),
                (false, false) => {}
                _ => return bad(WHAT, "a relinearization share where none belongs, or none"),
            }
        }
        if let Some(agg1) = &self.relin_round1 {
            let gen = RelinKeyGen::new(&self.session, self.ctx.key_switch());
            let key = gen.finish(agg1, &gen.aggregate_round2(&shares)?)?;
            self.rk = Some(RelinKey::from_collective(&self.ctx, key)?);
            self.ephemeral = None;
        }
        Ok(())
    }

    /// The collective keys: public key, relinearization and Galois keys.
    #[allow(clippy::type_complexity)]
    fn eval(
        &self,
    ) -> Result<(
        Arc<PublicKey<C>>,
        Option<Arc<RelinKey<C>>>,
        Option<Arc<GaloisKeys<C>>>,
    )>
    where
        PublicKey<C>: Clone,
        RelinKey<C>: Clone,
        GaloisKeys<C>: Clone,
    {
        let pk = self.pk.clone().ok_or_else(|| not_yet("the keys"))?;
        if self.relin && self.rk.is_none() {
            return Err(not_yet("the relinearization key"));
        }
        Ok((
            Arc::new(pk),
            self.rk.clone().map(Arc::new),
            self.gk.clone().map(Arc::new),
        ))
    }

    fn threshold_share(&self) -> Result<&ThresholdShare> {
        self.share.as_ref().ok_or_else(|| not_yet("the key shares"))
    }
}

fn not_yet(what: &str) -> Error {
    Error::Refused {
        op: "party".into(),
        msg: format!("{what} are not made yet: run the key generation rounds first"),
    }
}

/// What a party sends in the first key-generation round.
pub struct Round1 {
    /// For every party (itself included).
    pub public: Vec<u8>,
    /// One deal per party, `deals[j]` for party j, each to be sent over a
    /// private channel (secret). Empty with k = n (additive shares).
    pub deals: Vec<Zeroizing<Vec<u8>>>,
}

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
    session: PartySession,
    index: u16,
    bfv: Vec<SetKeys<bfv::BfvContext>>,
    ckks: Option<SetKeys<ckks::CkksContext>>,
    transforms: Option<HashMap<usize, ckks::LinearTransform>>,
    keys: Option<EvaluationKeys>,
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

    fn build(session: &PartySession, index: u16, fresh: bool) -> Result<Party> {
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
        if bytes.len() as u64 > limit {
            return bad(
                WHAT,
                format!("{} bytes, above the limit of {limit}", bytes.len()),
            );
        }
        let mut r = Reader::new(WHAT, MAGIC, bytes)?;
        if r.u8()? != KIND_STATE {
            return bad(WHAT, "not a party's state");
        }
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
            let basis = set.ctx.key_switch().qp().clone();
            set.share = Some(ThresholdShare::from_bytes(r.blob()?, &set.session, &basis)?);
        }
        if let Some(set) = &mut party.ckks {
            let basis = set.ctx.key_switch().qp().clone();
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

    fn writer(&self, kind: u8) -> Writer {
        let mut w = Writer::new(MAGIC);
        w.u8(kind);
        w.bytes(&self.session.id);
        w.bytes(&self.index.to_le_bytes());
        w
    }

    /// A reader of a message of `kind` from party `from`, past its head.
    fn reader<'a>(&self, bytes: &'a [u8], kind: u8, from: u16) -> Result<Reader<'a>> {
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
    fn readers<'a>(&self, messages: &'a [Vec<u8>], kind: u8) -> Result<Vec<Reader<'a>>> {
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

    /// Round 1: the public key, Galois key and first relinearization
    /// shares for every party, and a private deal for each (k < n).
    pub fn keygen_round1(&mut self) -> Result<Round1> {
        let mut w = self.writer(KIND_ROUND1);
        for set in &mut self.bfv {
            set.round1(&mut w)?;
        }
        if let Some(set) = &mut self.ckks {
            set.round1(&mut w)?;
        }
        let deals: Vec<Option<Vec<Share>>> = self
            .bfv
            .iter()
            .map(SetKeys::deals)
            .chain(self.ckks.iter().map(SetKeys::deals))
            .collect::<Result<_>>()?;
        let deals = if deals.iter().any(Option::is_none) {
            Vec::new()
        } else {
            (0..self.session.n)
                .map(|to| {
                    let mut w = self.writer(KIND_DEAL);
                    w.bytes(&to.to_le_bytes());
                    for d in deals.iter().flatten() {
                        w.blob(&Zeroizing::new(d[to as usize].to_bytes()));
                    }
                    Zeroizing::new(w.0)
                })
                .collect()
        };
        Ok(Round1 { public: w.0, deals })
    }

    /// Round 2: reads every party's round-1 message (`public[j]` from
    /// party j) and the deals addressed to this party (`deals[j]` from
    /// party j; none with k = n); returns the second relinearization share
    /// for every party.
    pub fn keygen_round2(&mut self, public: &[Vec<u8>], deals: &[Vec<u8>]) -> Result<Vec<u8>> {
        let mut readers = self.readers(public, KIND_ROUND1)?;
        let additive = self.session.k == self.session.n;
        if deals.len() != if additive { 0 } else { self.session.n as usize } {
            return bad(
                WHAT,
                format!(
                    "{} deals for {} of {}",
                    deals.len(),
                    self.session.k,
                    self.session.n
                ),
            );
        }
        let mut deal_readers = Vec::with_capacity(deals.len());
        for (from, d) in deals.iter().enumerate() {
            let mut r = self.reader(d, KIND_DEAL, from as u16)?;
            let b = r.take(2)?;
            if u16::from_le_bytes([b[0], b[1]]) != self.index {
                return bad(WHAT, "a deal addressed to another party");
            }
            deal_readers.push(r);
        }
        let mut deal_shares = |basis: &Arc<triskel_ring::RnsBasis>| -> Result<Vec<Share>> {
            deal_readers
                .iter_mut()
                .map(|r| Ok(Share::from_bytes(r.blob()?, basis)?))
                .collect()
        };
        for set in &mut self.bfv {
            let deals = deal_shares(set.ctx.key_switch().qp())?;
            set.finish_round1(&mut readers, &deals)?;
        }
        if let Some(set) = &mut self.ckks {
            let deals = deal_shares(set.ctx.key_switch().qp())?;
            set.finish_round1(&mut readers, &deals)?;
        }
        for r in readers.iter().chain(&deal_readers) {
            r.finish()?;
        }
        let mut w = self.writer(KIND_ROUND2);
        for set in &self.bfv {
            set.round2(&mut w)?;
        }
        if let Some(set) = &self.ckks {
            set.round2(&mut w)?;
        }
        Ok(w.0)
    }

    /// Reads every party's round-2 message and assembles the evaluation
    /// keys (the same bundle, and key-set id, at every party).
    pub fn keygen_finish(&mut self, round2: &[Vec<u8>]) -> Result<()> {
        let mut readers = self.readers(round2, KIND_ROUND2)?;
        for set in &mut self.bfv {
            set.finish_round2(&mut readers)?;
        }
        if let Some(set) = &mut self.ckks {
            set.finish_round2(&mut readers)?;
        }
        for r in &readers {
            r.finish()?;
        }
        let plan = &self.session.plan;
        let bfv = self
            .bfv
            .iter()
            .map(|s| {
                let (pk, rk, gk) = s.eval()?;
                Ok(BfvEval {
                    ctx: s.ctx.clone(),
                    pk,
                    rk,
                    gk,
                })
            })
            .collect::<Result<_>>()?;
        let ckks = match &self.ckks {
            Some(s) => {
                let (pk, rk, gk) = s.eval()?;
                Some(CkksEval {
                    ctx: s.ctx.clone(),
                    pk,
                    rk,
                    gk,
                })
            }
            None => None,
        };
        let transforms = std::sync::OnceLock::new();
        if let Some(t) = self.transforms.take() {
            let _ = transforms.set(t);
        }
        self.keys = Some(EvaluationKeys {
            program: triskel_attest::program_digest(&plan.program.to_bytes()),
            choice: plan.choice(),
            bfv,
            ckks,
            tfhe: None,
            transition: BTreeMap::new(),
            id: std::sync::OnceLock::new(),
            transforms,
        });
        Ok(())
    }

    /// The evaluation keys for a server (after the key generation).
    pub fn evaluation_keys(&self) -> Result<&EvaluationKeys> {
        self.keys.as_ref().ok_or_else(|| not_yet("the keys"))
    }

    /// Encrypts `inputs` under the collective public keys, with a context
    /// the server's records bind (as [`Encryptor::encrypt`]).
    pub fn encrypt(
        &self,
        inputs: &BTreeMap<String, PlainValue>,
        context: &[u8],
    ) -> Result<EncryptedInputs> {
        encrypt_public(&self.session.plan, self.evaluation_keys()?, inputs, context)
    }

    /// The ciphertexts of `outputs` (checked first: the records, signed by
    /// `server`, must bind this key set, the program, the plan's route and
    /// `inputs`), with their identities.
    fn released(
        &self,
        outputs: &EncryptedOutputs,
        inputs: &EncryptedInputs,
        server: &PublicIdentity,
    ) -> Result<Vec<Released>> {
        let keys = self.evaluation_keys()?;
        let plan = &self.session.plan;
        verify_outputs(
            plan,
            &keys.program,
            &keys.id(),
            &[inputs.digests()],
            outputs,
            server,
        )?;
        check_final(plan, outputs)?;
        const OUT: &str = "encrypted outputs";
        outputs
            .entries
            .iter()
            .zip(&plan.program.outputs)
            .map(|(e, &(_, i))| {
                let id = CiphertextId(e.value.digest());
                Ok(match plan.placements[i as usize] {
                    Placement::Bfv(part) => {
                        let ctx = &self.bfv[part].ctx;
                        let c = bfv::Ciphertext::from_bytes(e.value.single(1, OUT)?, ctx)?;
                        Released::Bfv(part, c, id)
                    }
                    Placement::Ckks => {
                        let ctx = &self.ckks.as_ref().ok_or_else(|| wrong("ckks keys"))?.ctx;
                        let c = ckks::Ciphertext::from_bytes(e.value.single(3, OUT)?, ctx)?;
                        Released::Ckks(c, id)
                    }
                    _ => return Err(wrong("threshold output")),
                })
            })
            .collect()
    }

    /// This party's decryption share of every output, for the decryption
    /// set `set` (at least k distinct parties of 0..n, this one among
    /// them), after the checks of [`Party::combine`]. Each counts one
    /// flooded release on the party's key share.
    pub fn decryption_share(
        &self,
        outputs: &EncryptedOutputs,
        inputs: &EncryptedInputs,
        server: &PublicIdentity,
        set: &[u16],
    ) -> Result<Vec<u8>> {
        let ring_set = self.session.decryption_set(set)?;
        let released = self.released(outputs, inputs, server)?;
        let mut w = self.writer(KIND_DECRYPTION);
        w.u32(released.len());
        for r in &released {
            let share = match r {
                Released::Bfv(part, c, id) => {
                    let keys = &self.bfv[*part];
                    bfv_decryption(c, keys, &ring_set, *id)?.share(keys.threshold_share()?)?
                }
                Released::Ckks(c, id) => {
                    let keys = self.ckks.as_ref().ok_or_else(|| wrong("ckks keys"))?;
                    ckks_decryption(c, keys, &ring_set, *id)?.share(keys.threshold_share()?)?
                }
            };
            w.blob(&share.to_bytes());
        }
        Ok(w.0)
    }

    /// The outputs of a run from the decryption shares of the parties of
    /// `set` (`shares`, one per party, in any order), after verifying
    /// every record against `server` as [`Client::decrypt`](crate::Client::decrypt)
    /// does, with `inputs` the inputs sent. A share of another session,
    /// key, ciphertext or set, a party twice or missing, or fewer than k
    /// parties are refused.
    pub fn combine(
        &self,
        outputs: &EncryptedOutputs,
        inputs: &EncryptedInputs,
        server: &PublicIdentity,
        set: &[u16],
        shares: &[Vec<u8>],
    ) -> Result<Outputs> {
        let ring_set = self.session.decryption_set(set)?;
        let released = self.released(outputs, inputs, server)?;
        if shares.len() != ring_set.len() {
            return bad(
                WHAT,
                format!(
                    "{} decryption shares for {} parties",
                    shares.len(),
                    ring_set.len()
                ),
            );
        }
        let mut readers = Vec::with_capacity(shares.len());
        for bytes in shares {
            let mut r = Reader::new(WHAT, MAGIC, bytes)?;
            if r.u8()? != KIND_DECRYPTION {
                return bad(WHAT, "not a decryption share");
            }
            if r.take(16)? != self.session.id {
                return bad(WHAT, "a decryption share from another session");
            }
            r.take(2)?;
            if r.u32()? != released.len() {
                return bad(WHAT, "another number of outputs than the run's");
            }
            readers.push(r);
        }
        let plan = &self.session.plan;
        let mut values = Vec::with_capacity(released.len());
        for (r, (name, i)) in released.iter().zip(&plan.program.outputs) {
            let raw = match r {
                Released::Bfv(part, c, id) => {
                    let dec = bfv_decryption(c, &self.bfv[*part], &ring_set, *id)?;
                    let basis = c.polys()[1].basis();
                    let parts = readers
                        .iter_mut()
                        .map(|r| Ok(Share::from_bytes(r.blob()?, basis)?))
                        .collect::<Result<Vec<_>>>()?;
                    let pt = dec.finish(&dec.aggregate(&parts)?)?;
                    PlainValue::Ints(pt.to_slots()?.into_iter().map(i128::from).collect())
                }
                Released::Ckks(c, id) => {
                    let keys = self.ckks.as_ref().ok_or_else(|| wrong("ckks keys"))?;
                    let dec = ckks_decryption(c, keys, &ring_set, *id)?;
                    let basis = c.polys()[1].basis();
                    let parts = readers
                        .iter_mut()
                        .map(|r| Ok(Share::from_bytes(r.blob()?, basis)?))
                        .collect::<Result<Vec<_>>>()?;
                    PlainValue::Reals(dec.finish(&dec.aggregate(&parts)?)?.decode_real()?)
                }
            };
            values.push((name.clone(), shape_output(plan, *i as usize, raw)?));
        }
        for r in &readers {
            r.finish()?;
        }
        Ok(Outputs { values })
    }
}

/// An output's ciphertext for a threshold decryption.
enum Released {
    Bfv(usize, bfv::Ciphertext, CiphertextId),
    Ckks(ckks::Ciphertext, CiphertextId),
}

fn bfv_decryption<'a>(
    c: &'a bfv::Ciphertext,
    keys: &SetKeys<bfv::BfvContext>,
    set: &[u16],
    id: CiphertextId,
) -> Result<bfv::threshold::ThresholdDecryption<'a>> {
    Ok(bfv::threshold::ThresholdDecryption::new(
        c,
        &keys.session,
        set,
        id,
        None,
        BFV_STATISTICAL_SECURITY,
        THRESHOLD_RELEASES,
    )?)
}

/// Refused when the floods leave fewer than [`MIN_CKKS_PRECISION_BITS`].
fn ckks_decryption<'a>(
    c: &'a ckks::Ciphertext,
    keys: &SetKeys<ckks::CkksContext>,
    set: &[u16],
    id: CiphertextId,
) -> Result<ckks::threshold::ThresholdDecryption<'a>> {
    let dec = ckks::threshold::ThresholdDecryption::new(
        c,
        &keys.session,
        set,
        id,
        ckks::DEFAULT_STATISTICAL_SECURITY,
        THRESHOLD_RELEASES,
    )?;
    let bits = dec.precision_bits();
    if bits < MIN_CKKS_PRECISION_BITS {
        return Err(Error::Refused {
            op: "threshold decryption".into(),
            msg: format!(
                "the floods of a CKKS output (scale 2^{:.0}) would leave {bits:.1} bits of \
                 precision, fewer than {MIN_CKKS_PRECISION_BITS}",
                c.scale().log2()
            ),
        });
    }
    Ok(dec)
}

/// Encrypts inputs under the public keys of an evaluation-key bundle: what
/// anyone who holds the bundle (a party, or an outside data owner) sends
/// a server for threshold keys.
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
