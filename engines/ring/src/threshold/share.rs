//! The messages of the threshold protocols and their bytes.
//!
//! ```text
//! share   = ring header (kind 17) | protocol: u8 (ShareKind) | session: 16 bytes
//!           | key: 16 bytes (KeyId) | party: u16 (0 = an aggregate)
//!           | parties: u16 | parties x u16 (increasing: the step's set; a deal: its recipient)
//!           | subject: 32 bytes (CiphertextId; Galois element as u64; else zero)
//!           | payload
//! payload = 0 | count: u8 | count x poly               (ring polynomial bodies)
//!         | 1 | released | k: u32 | k x prime: u64 | k x r x u64  (coefficients, limb-major)
//!         | 2 | count: u32 | count x u64   (LWE: residues modulo the two sharing primes,
//!                                           limb-major, count even)
//! released = 0 (all n coefficients) | 1 | r: u32 | r x u32 (increasing, < n)
//! ```
//!
//! Loading checks the header, the protocol byte, the party numbers, that
//! the polynomials and primes are those of the basis the step expects,
//! every residue reduced and no byte left over.

use std::sync::Arc;

use zeroize::Zeroize;

use super::{u16_le, Session, MAX_PARTIES};
use crate::basis::RnsBasis;
use crate::error::{protocol, Error, Result};
use crate::key_id::KeyId;
use crate::poly::{same_basis, Poly};
use crate::serialize::{read_ring_header, write_ring_header, Reader};

const KIND_SHARE: u8 = 17;

/// The protocol step a [`Share`] belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ShareKind {
    /// A Shamir deal f_i(j) (secret: sent over a private channel).
    Deal = 1,
    /// A collective public key share -a s_i + e_i.
    PublicKey = 2,
    /// Round 1 of the relinearization key.
    RelinRound1 = 3,
    /// Round 2 of the relinearization key.
    RelinRound2 = 4,
    /// A Galois key share.
    Galois = 5,
    /// A decryption share (key switch to the zero key).
    Decryption = 6,
    /// A public-key switch share.
    PublicSwitch = 7,
    /// An LWE decryption share (residues modulo the LWE sharing primes).
    LweDecryption = 8,
}

impl ShareKind {
    fn from_u8(b: u8) -> Result<ShareKind> {
        Ok(match b {
            1 => ShareKind::Deal,
            2 => ShareKind::PublicKey,
            3 => ShareKind::RelinRound1,
            4 => ShareKind::RelinRound2,
            5 => ShareKind::Galois,
            6 => ShareKind::Decryption,
            7 => ShareKind::PublicSwitch,
            8 => ShareKind::LweDecryption,
            _ => return Err(Error::Malformed(format!("unknown share protocol {b}"))),
        })
    }
}

/// Which coefficients of a decryption are released.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Released {
    /// All n.
    All,
    /// These (increasing, below n).
    Coefficients(Vec<u32>),
}

impl Released {
    /// The released coefficients for ring degree n: all, or `indices`
    /// after checking that they are increasing and below n.
    pub fn new(indices: Option<&[usize]>, n: usize) -> Result<Released> {
        let Some(indices) = indices else {
            return Ok(Released::All);
        };
        if indices.is_empty() {
            return protocol("a decryption releases at least one coefficient");
        }
        if indices.windows(2).any(|w| w[0] >= w[1]) || indices.iter().any(|&i| i >= n) {
            return protocol(format!(
                "released coefficients must be increasing and below n = {n}"
            ));
        }
        Ok(Released::Coefficients(
            indices.iter().map(|&i| i as u32).collect(),
        ))
    }

    /// How many coefficients, for ring degree n.
    pub fn count(&self, n: usize) -> usize {
        match self {
            Released::All => n,
            Released::Coefficients(v) => v.len(),
        }
    }
}

/// What a share carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Payload {
    /// Ring polynomials (one basis, any representation).
    Polys(Vec<Poly>),
    /// Released coefficients, limb-major: k x r values over `basis`.
    Coefficients {
        basis: Arc<RnsBasis>,
        released: Released,
        values: Vec<u64>,
    },
    /// LWE partial decryptions: residues modulo the sharing primes, one
    /// limb per prime.
    Words(Vec<u64>),
}

/// One party's message in one protocol step, or the aggregate of a step's
/// messages (party 0), with the identity that a step checks before using
/// it: protocol, session, key, party, the step's party set and subject.
/// A deal is wiped when dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share {
    kind: ShareKind,
    session: [u8; 16],
    key: KeyId,
    party: u16,
    parties: Vec<u16>,
    subject: [u8; 32],
    payload: Option<Payload>,
}

impl Drop for Share {
    fn drop(&mut self) {
        if self.kind == ShareKind::Deal {
            if let Some(Payload::Polys(polys)) = &mut self.payload {
                polys.iter_mut().for_each(Zeroize::zeroize);
            }
        }
    }
}

impl Share {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        kind: ShareKind,
        session: &Session,
        key: KeyId,
        party: u16,
        parties: Vec<u16>,
        subject: [u8; 32],
        payload: Payload,
    ) -> Share {
        Share {
            kind,
            session: session.id,
            key,
            party,
            parties,
            subject,
            payload: Some(payload),
        }
    }

    /// The protocol step.
    pub fn kind(&self) -> ShareKind {
        self.kind
    }

    /// The session's identity.
    pub fn session_id(&self) -> [u8; 16] {
        self.session
    }

    /// The collective key's identity.
    pub fn key_id(&self) -> KeyId {
        self.key
    }

    /// The sending party (0 for an aggregate).
    pub fn party(&self) -> u16 {
        self.party
    }

    /// The step's party set (a deal: its recipient).
    pub fn parties(&self) -> &[u16] {
        &self.parties
    }

    /// What the share is about: a [`super::CiphertextId`], a Galois element
    /// (little-endian u64), or zero.
    pub fn subject(&self) -> [u8; 32] {
        self.subject
    }

    pub(crate) fn payload(&self) -> &Payload {
        // Only `take_payload`, which consumes the share, empties it.
        self.payload.as_ref().unwrap_or(&EMPTY)
    }

    pub(crate) fn take_payload(mut self) -> Payload {
        self.payload.take().unwrap_or(Payload::Polys(Vec::new()))
    }

    /// The polynomials of a share that carries polynomials (keygen shares,
    /// deals, public-key switches); empty otherwise.
    pub fn polys(&self) -> &[Poly] {
        match self.payload() {
            Payload::Polys(p) => p,
            _ => &[],
        }
    }

    /// Versioned bytes (module documentation). A deal's bytes are secret:
    /// send them on a private channel and wipe them (`zeroize`) after.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_ring_header(&mut out, KIND_SHARE);
        out.push(self.kind as u8);
        out.extend_from_slice(&self.session);
        self.key.write(&mut out);
        out.extend_from_slice(&self.party.to_le_bytes());
        out.extend_from_slice(&(self.parties.len() as u16).to_le_bytes());
        for p in &self.parties {
            out.extend_from_slice(&p.to_le_bytes());
        }
        out.extend_from_slice(&self.subject);
        match self.payload() {
            Payload::Polys(polys) => {
                out.push(0);
                out.push(polys.len() as u8);
                for p in polys {
                    p.write_body(&mut out);
                }
            }
            Payload::Coefficients {
                basis,
                released,
                values,
            } => {
                out.push(1);
                match released {
                    Released::All => out.push(0),
                    Released::Coefficients(idx) => {
                        out.push(1);
                        out.extend_from_slice(&(idx.len() as u32).to_le_bytes());
                        idx.iter()
                            .for_each(|i| out.extend_from_slice(&i.to_le_bytes()));
                    }
                }
                out.extend_from_slice(&(basis.len() as u32).to_le_bytes());
                for q in basis.primes() {
                    out.extend_from_slice(&q.to_le_bytes());
                }
                values
                    .iter()
                    .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            }
            Payload::Words(words) => {
                out.push(2);
                out.extend_from_slice(&(words.len() as u32).to_le_bytes());
                words
                    .iter()
                    .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            }
        }
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output whose polynomials or
    /// coefficients are over exactly `basis` (the one the step expects).
    /// Whether it fits the step (protocol, session, key, party, set,
    /// subject) is checked by the step.
    pub fn from_bytes(bytes: &[u8], basis: &Arc<RnsBasis>) -> Result<Share> {
        Share::parse(bytes, Some(basis))
    }

    /// Loads the bytes of an LWE decryption share
    /// ([`super::LweDecryption`]).
    pub fn from_bytes_lwe(bytes: &[u8]) -> Result<Share> {
        Share::parse(bytes, None)
    }

    fn parse(bytes: &[u8], basis: Option<&Arc<RnsBasis>>) -> Result<Share> {
        let mut r = Reader::new(bytes);
        read_ring_header(&mut r, KIND_SHARE)?;
        let kind = ShareKind::from_u8(r.u8()?)?;
        let mut session = [0u8; 16];
        session.copy_from_slice(r.take(16)?);
        let key = KeyId::read(&mut r)?;
        let party = u16_le(&mut r)?;
        let count = u16_le(&mut r)?;
        if count > MAX_PARTIES {
            return malformed(format!("{count} parties, at most {MAX_PARTIES}"));
        }
        let parties = (0..count)
            .map(|_| u16_le(&mut r))
            .collect::<Result<Vec<_>>>()?;
        if party > MAX_PARTIES || parties.iter().any(|&p| p == 0 || p > MAX_PARTIES) {
            return malformed(format!("party numbers outside 1..={MAX_PARTIES}"));
        }
        if parties.windows(2).any(|w| w[0] >= w[1]) {
            return malformed("the party set is not increasing");
        }
        let mut subject = [0u8; 32];
        subject.copy_from_slice(r.take(32)?);
        let payload = match (r.u8()?, basis) {
            (0, Some(basis)) => {
                let count = r.u8()? as usize;
                Payload::Polys(
                    (0..count)
                        .map(|_| Poly::read_body(&mut r, basis))
                        .collect::<Result<Vec<_>>>()?,
                )
            }
            (1, Some(basis)) => read_coefficients(&mut r, basis)?,
            (2, None) => Payload::Words(super::lwe::read_words(&mut r)?),
            (t, _) => {
                return malformed(format!(
                    "payload tag {t} is not that of a{} share",
                    if basis.is_some() { " ring" } else { "n LWE" }
                ))
            }
        };
        r.finish()?;
        Ok(Share {
            kind,
            session,
            key,
            party,
            parties,
            subject,
            payload: Some(payload),
        })
    }
}

static EMPTY: Payload = Payload::Polys(Vec::new());

fn malformed<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Malformed(msg.into()))
}

fn read_coefficients(r: &mut Reader<'_>, basis: &Arc<RnsBasis>) -> Result<Payload> {
    let n = basis.n();
    let released = match r.u8()? {
        0 => Released::All,
        1 => {
            let count = r.u32()? as usize;
            if count == 0 || count > n {
                return malformed(format!("{count} released coefficients for n = {n}"));
            }
            let raw = r.take(count * 4)?;
            let idx: Vec<u32> = raw
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            if idx.windows(2).any(|w| w[0] >= w[1]) || idx.iter().any(|&i| i as usize >= n) {
                return malformed("released coefficients are not increasing below n");
            }
            Released::Coefficients(idx)
        }
        t => return malformed(format!("unknown released tag {t}")),
    };
    let k = r.u32()? as usize;
    if k != basis.len() {
        return malformed(format!("{k} primes, expected {}", basis.len()));
    }
    for (i, q) in basis.primes().into_iter().enumerate() {
        let got = r.u64()?;
        if got != q {
            return malformed(format!("prime {i} is {got}, expected {q}"));
        }
    }
    let per_limb = released.count(n);
    let raw = r.take(k * per_limb * 8)?;
    let values: Vec<u64> = raw
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    for (i, limb) in values.chunks(per_limb).enumerate() {
        let q = basis.modulus(i).value();
        if limb.iter().any(|&v| v >= q) {
            return malformed(format!("a value of limb {i} is not reduced modulo {q}"));
        }
    }
    Ok(Payload::Coefficients {
        basis: basis.clone(),
        released,
        values,
    })
}

/// The sum of one step's shares: each of `kind`, of `session` and `key`,
/// about `subject`, one from each party of `set` (a deal: from each party,
/// addressed to `to`; other steps: carrying `set` as their set). Anything
/// else, a duplicate or a missing party is refused with
/// [`Error::Protocol`] naming it; shares of different shapes with
/// [`Error::Protocol`] too.
#[allow(clippy::too_many_arguments)]
pub(crate) fn aggregate(
    shares: &[Share],
    kind: ShareKind,
    session: &Session,
    key: KeyId,
    subject: &[u8; 32],
    set: &[u16],
    to: Option<u16>,
) -> Result<Share> {
    let expected_set: Vec<u16> = match to {
        Some(j) => vec![j],
        None => set.to_vec(),
    };
    let mut seen = vec![false; set.len()];
    for s in shares {
        let who = format!("the {:?} share of party {}", s.kind, s.party);
        if s.kind != kind {
            return protocol(format!("{who} is not a {kind:?} share"));
        }
        if s.session != session.id {
            return protocol(format!("{who} belongs to another session"));
        }
        key.check(&who, s.key)?;
        if &s.subject != subject {
            return protocol(format!(
                "{who} is about another ciphertext, element or key than this step"
            ));
        }
        if s.parties != expected_set {
            return protocol(match to {
                Some(j) => format!("{who} is addressed to {:?}, not to party {j}", s.parties),
                None => format!(
                    "{who} was made for the party set {:?}, this step's is {set:?}",
                    s.parties
                ),
            });
        }
        match set.iter().position(|&p| p == s.party) {
            None => return protocol(format!("{who}: party {} is not in {set:?}", s.party)),
            Some(i) if seen[i] => return protocol(format!("party {} sent twice", s.party)),
            Some(i) => seen[i] = true,
        }
    }
    let missing: Vec<u16> = set
        .iter()
        .zip(&seen)
        .filter(|(_, &s)| !s)
        .map(|(&p, _)| p)
        .collect();
    if !missing.is_empty() {
        return protocol(format!("missing the shares of parties {missing:?}"));
    }
    let (first, rest) = shares
        .split_first()
        .ok_or_else(|| Error::Protocol("no share given".into()))?;
    let mut sum = first.payload().clone();
    for s in rest {
        add_payload(&mut sum, s.payload())?;
    }
    Ok(Share {
        kind,
        session: session.id,
        key,
        party: 0,
        parties: expected_set,
        subject: *subject,
        payload: Some(sum),
    })
}

fn add_payload(sum: &mut Payload, other: &Payload) -> Result<()> {
    match (sum, other) {
        (Payload::Polys(a), Payload::Polys(b)) if a.len() == b.len() => {
            for (x, y) in a.iter_mut().zip(b) {
                if !same_basis(x.basis(), y.basis()) || x.representation() != y.representation() {
                    return protocol("shares hold polynomials of different bases or forms");
                }
                x.add_assign(y)?;
            }
            Ok(())
        }
        (
            Payload::Coefficients {
                basis,
                released,
                values,
            },
            Payload::Coefficients {
                basis: b2,
                released: r2,
                values: v2,
            },
        ) if same_basis(basis, b2) && released == r2 && values.len() == v2.len() => {
            let per_limb = released.count(basis.n());
            for (i, (x, y)) in values
                .chunks_mut(per_limb)
                .zip(v2.chunks(per_limb))
                .enumerate()
            {
                let q = basis.modulus(i);
                x.iter_mut()
                    .zip(y)
                    .for_each(|(a, &b)| *a = q.add_mod(*a, b));
            }
            Ok(())
        }
        (Payload::Words(a), Payload::Words(b)) if a.len() == b.len() => {
            super::lwe::add_words(a, b);
            Ok(())
        }
        _ => protocol("shares of different shapes (counts, bases or released coefficients)"),
    }
}
