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
use triskel_ring::threshold::Session;
use triskel_ring::{Prng, Seed};

use crate::cost::CostModel;
use crate::error::{Error, Result};
use crate::plan::{plan_chosen, plan_with, Plan, PlanChoice, PlanOptions};
use crate::program::Program;
use crate::wire::{bad, Reader, Writer};

mod decrypt;
mod encrypt;
mod keygen;
mod set_keys;
mod state;

pub use encrypt::Encryptor;
pub use keygen::Round1;
pub use state::Party;

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
/// release); CKKS releases use [`crate::ckks::DEFAULT_STATISTICAL_SECURITY`].
pub const BFV_STATISTICAL_SECURITY: u32 = 40;
/// The least precision, in bits, a threshold decryption of a CKKS output
/// must keep after the parties' floods; below it the decryption is refused
/// before any share is made.
pub const MIN_CKKS_PRECISION_BITS: f64 = 10.0;

/// The public setup every party of one collective key set holds: the plan
/// (with [`PlanOptions::threshold`]), a session identity and the seed of
/// the common random polynomials. One party makes it and sends its bytes
/// to the others.
///
/// # Examples
///
/// ```
/// use triskel::{Kind, PartySession, PlanOptions, Program};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Real { len: 4 })?;
/// let y = p.mul(x, x)?;
/// p.output("y", y)?;
/// let session = PartySession::new(&p, PlanOptions::default().threshold(2, 3))?;
/// assert_eq!(session.threshold(), (2, 3));
///
/// // What the other parties receive: the same plan and identity.
/// let received = PartySession::from_bytes(&session.to_bytes(), 1 << 20)?;
/// assert_eq!(received.id(), session.id());
/// assert_eq!(received.plan().choice(), session.plan().choice());
/// # Ok::<(), triskel::Error>(())
/// ```
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
        let mut r = open_stored(bytes, limit, KIND_SESSION, "not a session")?;
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

/// A reader of stored bytes of `kind` (a session or a party's state, at
/// most `limit` bytes), past the kind; `not_kind` says what other bytes
/// are not.
fn open_stored<'a>(bytes: &'a [u8], limit: u64, kind: u8, not_kind: &str) -> Result<Reader<'a>> {
    if bytes.len() as u64 > limit {
        return bad(
            WHAT,
            format!("{} bytes, above the limit of {limit}", bytes.len()),
        );
    }
    let mut r = Reader::new(WHAT, MAGIC, bytes)?;
    if r.u8()? != kind {
        return bad(WHAT, not_kind);
    }
    Ok(r)
}

fn not_yet(what: &str) -> Error {
    Error::Refused {
        op: "party".into(),
        msg: format!("{what} are not made yet: run the key generation rounds first"),
    }
}
