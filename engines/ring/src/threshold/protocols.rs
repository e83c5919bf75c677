//! The protocols: each has `share` (one party), `aggregate` (anyone: the
//! sum of all the step's shares, checked) and `finish` (anyone: the key or
//! the result from the aggregates).
//!
//! ```text
//! public key   a = CRS;      share_i = -a s_i + e_i;                    pk = (sum, a)
//! relin round 1 a_j = CRS;   (h0_ij, h1_ij) = (-a_j u_i + P g_j s_i + e, s_i a_j + e')
//! relin round 2              (h0'_ij, h1'_ij) = (s_i h0_j + e, (u_i - s_i) h1_j + e')
//!                            rlk_j = (h0'_j + h1'_j, h1_j): b + a s = P g_j s^2 + small
//! Galois g     a_j = CRS;    share_ij = -a_j s_i + P g_j s_i(X^g) + e_ij; key_j = (sum, a_j)
//! decryption   share_i = c1 s'_i + E_i (released coefficients);  phase = c0 + sum
//! public switch (h0_i, h1_i) = (c1 s'_i + u_i b' + E_i, u_i a' + e_i);  (c0 + sum h0, sum h1)
//! ```
//!
//! with s'_i the party's additive key for the decryption set
//! ([`ThresholdShare::additive_key`]) and E_i its flood ([`Smudging`]).

use std::sync::Arc;

use zeroize::Zeroizing;

use super::share::{aggregate, Payload};
use super::{
    CiphertextId, PartySecret, Released, Session, Share, ShareKind, ThresholdShare, STREAM_GALOIS,
    STREAM_PUBLIC_KEY, STREAM_RELIN,
};
use crate::basis::RnsBasis;
use crate::error::{protocol, Result};
use crate::flooding::{reduce_i128, Flood, Smudging};
use crate::keyswitch::{key_uniform_part, KeySwitchContext, KeySwitchKey, SecretKey};
use crate::poly::{same_basis, Poly, Representation};
use crate::rlwe::{at_basis, public_key_with_seed, RlwePublicKey};
use crate::sampling::{sample_ternary, NoiseDistribution, Prng, Seed};

/// An error unless `secret` belongs to `session`.
fn check_session(session: &Session, other: &Session, what: &str) -> Result<()> {
    if session != other {
        return protocol(format!("{what} belongs to another session"));
    }
    Ok(())
}

/// An error unless `agg` is the aggregate of `kind` for `session`, the set
/// `set` and `subject`.
fn check_aggregate(
    agg: &Share,
    kind: ShareKind,
    session: &Session,
    set: &[u16],
    subject: &[u8; 32],
) -> Result<()> {
    if agg.kind() != kind || agg.party() != 0 {
        return protocol(format!(
            "a {kind:?} aggregate is needed, not a {:?} share of party {}",
            agg.kind(),
            agg.party()
        ));
    }
    if agg.session_id() != session.id() {
        return protocol(format!("the {kind:?} aggregate belongs to another session"));
    }
    session.key_id().check("the aggregate", agg.key_id())?;
    if agg.parties() != set || &agg.subject() != subject {
        return protocol(format!(
            "the {kind:?} aggregate is of another party set or subject"
        ));
    }
    Ok(())
}

/// The polynomials of an aggregate: `count` of them, NTT form, over `basis`.
fn aggregate_polys<'a>(agg: &'a Share, count: usize, basis: &Arc<RnsBasis>) -> Result<&'a [Poly]> {
    let polys = agg.polys();
    if polys.len() != count
        || polys
            .iter()
            .any(|p| !same_basis(p.basis(), basis) || p.representation() != Representation::Ntt)
    {
        return protocol(format!(
            "the {:?} aggregate holds {} polynomials; {count} in NTT form over the step's basis \
             are needed",
            agg.kind(),
            polys.len()
        ));
    }
    Ok(polys)
}

/// -a s + e for the party's secret and a from `seed`: the b of a public key.
fn masked_secret(
    secret: &SecretKey,
    basis: &Arc<RnsBasis>,
    noise: NoiseDistribution,
    seed: Seed,
    rng: &mut Prng,
) -> Result<Poly> {
    let s = secret.to_poly(basis, Representation::Ntt)?;
    Ok(public_key_with_seed(&s, secret.id(), noise, seed, rng)?.b)
}

/// The collective public key (b, a) = (sum_i (-a s_i + e_i), a) over a
/// basis, a from the CRS.
#[derive(Debug)]
pub struct PublicKeyGen {
    session: Session,
    basis: Arc<RnsBasis>,
    noise: NoiseDistribution,
}

impl PublicKeyGen {
    /// The protocol over `basis` (an engine's top level, or Q || P for a key
    /// modulo Q P) with errors from `noise`.
    pub fn new(session: &Session, basis: &Arc<RnsBasis>, noise: NoiseDistribution) -> Self {
        PublicKeyGen {
            session: session.clone(),
            basis: basis.clone(),
            noise,
        }
    }

    fn seed(&self) -> Seed {
        self.session.crs_seed(STREAM_PUBLIC_KEY)
    }

    /// Party i's share -a s_i + e_i.
    pub fn share(&self, secret: &PartySecret) -> Result<Share> {
        check_session(&self.session, &secret.session, "the party's secret")?;
        let b = masked_secret(
            &secret.secret,
            &self.basis,
            self.noise,
            self.seed(),
            &mut Prng::from_os()?,
        )?;
        Ok(self.message(secret.party, Payload::Polys(vec![b])))
    }

    fn message(&self, party: u16, payload: Payload) -> Share {
        let s = &self.session;
        Share::new(
            ShareKind::PublicKey,
            s,
            s.key_id(),
            party,
            s.all_parties(),
            [0; 32],
            payload,
        )
    }

    /// The sum of every party's share.
    pub fn aggregate(&self, shares: &[Share]) -> Result<Share> {
        let s = &self.session;
        aggregate(
            shares,
            ShareKind::PublicKey,
            s,
            s.key_id(),
            &[0; 32],
            &s.all_parties(),
            None,
        )
    }

    /// The public key of the collective secret.
    pub fn finish(&self, agg: &Share) -> Result<RlwePublicKey> {
        let s = &self.session;
        check_aggregate(agg, ShareKind::PublicKey, s, &s.all_parties(), &[0; 32])?;
        let b = aggregate_polys(agg, 1, &self.basis)?[0].clone();
        let seed = self.seed();
        let a = crate::sampling::sample_uniform(
            &self.basis,
            Representation::Ntt,
            &mut Prng::from_seed(seed),
        );
        Ok(RlwePublicKey {
            id: s.key_id(),
            seed,
            b,
            a,
        })
    }
}

/// A party's ephemeral secret u_i between the two relinearization rounds.
/// Zeroized on drop.
pub struct RelinEphemeral {
    party: u16,
    u: SecretKey,
}

impl std::fmt::Debug for RelinEphemeral {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RelinEphemeral {{ party: {}, .. }}", self.party)
    }
}

/// The collective relinearization key (s^2 -> s) in two rounds.
#[derive(Debug)]
pub struct RelinKeyGen<'a> {
    session: Session,
    ks: &'a KeySwitchContext,
}

impl<'a> RelinKeyGen<'a> {
    /// The protocol for the key-switching context `ks`.
    pub fn new(session: &Session, ks: &'a KeySwitchContext) -> Self {
        RelinKeyGen {
            session: session.clone(),
            ks,
        }
    }

    fn digits(&self) -> usize {
        self.ks.digits().len()
    }

    fn message(&self, kind: ShareKind, party: u16, polys: Vec<Poly>) -> Share {
        let s = &self.session;
        Share::new(
            kind,
            s,
            s.key_id(),
            party,
            s.all_parties(),
            [0; 32],
            Payload::Polys(polys),
        )
    }

    /// Round 1 of party i: a fresh ephemeral u_i and the share
    /// (-a_j u_i + P g_j s_i + e, s_i a_j + e') for every digit j.
    pub fn round1(&self, secret: &PartySecret) -> Result<(RelinEphemeral, Share)> {
        check_session(&self.session, &secret.session, "the party's secret")?;
        let (ks, n) = (self.ks, self.ks.q().n());
        let mut rng = Prng::from_os()?;
        let u = SecretKey::from_coeffs(sample_ternary(n, &mut rng), self.session.key_id())?;
        let s = secret.secret.to_poly(ks.qp(), Representation::Ntt)?;
        let a = key_uniform_part(ks, self.session.crs_seed(STREAM_RELIN));
        let mut polys = KeySwitchKey::bodies(ks, &s, &u, &a, &mut rng)?;
        for a in &a {
            // s_i a_j + e' = -(-a_j s_i - e').
            let e = Zeroizing::new(ks.noise().sample(n, &mut rng)?);
            let mut h1 = Poly::from_signed(ks.qp(), &e, Representation::Ntt)?;
            h1.mul_acc(a, &s)?;
            polys.push(h1);
        }
        let eph = RelinEphemeral {
            party: secret.party,
            u,
        };
        Ok((
            eph,
            self.message(ShareKind::RelinRound1, secret.party, polys),
        ))
    }

    /// The sum of every party's round-1 share.
    pub fn aggregate_round1(&self, shares: &[Share]) -> Result<Share> {
        let s = &self.session;
        aggregate(
            shares,
            ShareKind::RelinRound1,
            s,
            s.key_id(),
            &[0; 32],
            &s.all_parties(),
            None,
        )
    }

    /// Round 2 of party i, from the round-1 aggregate (h0, h1):
    /// (s_i h0_j + e, (u_i - s_i) h1_j + e') for every digit j.
    pub fn round2(
        &self,
        secret: &PartySecret,
        ephemeral: &RelinEphemeral,
        round1: &Share,
    ) -> Result<Share> {
        check_session(&self.session, &secret.session, "the party's secret")?;
        if ephemeral.party != secret.party {
            return protocol(format!(
                "the ephemeral secret of party {} given to party {}",
                ephemeral.party, secret.party
            ));
        }
        let s = &self.session;
        check_aggregate(
            round1,
            ShareKind::RelinRound1,
            s,
            &s.all_parties(),
            &[0; 32],
        )?;
        let (ks, d, n) = (self.ks, self.digits(), self.ks.q().n());
        let h = aggregate_polys(round1, 2 * d, ks.qp())?;
        let si = secret.secret.to_poly(ks.qp(), Representation::Ntt)?;
        let mut u_minus_s = ephemeral.u.to_poly(ks.qp(), Representation::Ntt)?;
        u_minus_s.sub_assign(&si)?;
        let mut rng = Prng::from_os()?;
        let mut polys = Vec::with_capacity(2 * d);
        for (k, (key, from)) in [(&si, &h[..d]), (&u_minus_s, &h[d..])]
            .into_iter()
            .enumerate()
        {
            for hj in from {
                let e = Zeroizing::new(ks.noise().sample(n, &mut rng)?);
                let mut out = Poly::from_signed(ks.qp(), &e, Representation::Ntt)?;
                out.mul_acc(hj, key)?;
                polys.push(out);
            }
            debug_assert_eq!(polys.len(), (k + 1) * d);
        }
        Ok(self.message(ShareKind::RelinRound2, secret.party, polys))
    }

    /// The sum of every party's round-2 share.
    pub fn aggregate_round2(&self, shares: &[Share]) -> Result<Share> {
        let s = &self.session;
        aggregate(
            shares,
            ShareKind::RelinRound2,
            s,
            s.key_id(),
            &[0; 32],
            &s.all_parties(),
            None,
        )
    }

    /// The relinearization key (h0'_j + h1'_j, h1_j) of the collective
    /// secret, its halves stored (no seed yields them).
    pub fn finish(&self, round1: &Share, round2: &Share) -> Result<KeySwitchKey> {
        let s = &self.session;
        let all = s.all_parties();
        check_aggregate(round1, ShareKind::RelinRound1, s, &all, &[0; 32])?;
        check_aggregate(round2, ShareKind::RelinRound2, s, &all, &[0; 32])?;
        let d = self.digits();
        let h = aggregate_polys(round1, 2 * d, self.ks.qp())?;
        let h2 = aggregate_polys(round2, 2 * d, self.ks.qp())?;
        let b = (0..d)
            .map(|j| h2[j].add(&h2[d + j]))
            .collect::<Result<Vec<_>>>()?;
        Ok(KeySwitchKey::stored(s.key_id(), b, h[d..].to_vec()))
    }
}

/// The collective Galois key s(X^g) -> s for one element g.
#[derive(Debug)]
pub struct GaloisKeyGen<'a> {
    session: Session,
    ks: &'a KeySwitchContext,
    g: usize,
}

impl<'a> GaloisKeyGen<'a> {
    /// The protocol for element g (odd, in 3..2n) of `ks`'s ring.
    pub fn new(session: &Session, ks: &'a KeySwitchContext, g: usize) -> Result<Self> {
        let two_n = 2 * ks.q().n();
        if g.is_multiple_of(2) || !(3..two_n).contains(&g) {
            return protocol(format!("Galois element {g} is not odd and in 3..{two_n}"));
        }
        Ok(GaloisKeyGen {
            session: session.clone(),
            ks,
            g,
        })
    }

    /// One protocol per distinct element of `elements` but 1 (the
    /// identity needs no key), in increasing order, with its element.
    pub fn for_elements(
        session: &Session,
        ks: &'a KeySwitchContext,
        mut elements: Vec<usize>,
    ) -> Result<Vec<(usize, Self)>> {
        elements.sort_unstable();
        elements.dedup();
        elements.retain(|&g| g != 1);
        elements
            .into_iter()
            .map(|g| Ok((g, GaloisKeyGen::new(session, ks, g)?)))
            .collect()
    }

    fn seed(&self) -> Seed {
        self.session.crs_seed(STREAM_GALOIS + self.g as u64)
    }

    fn subject(&self) -> [u8; 32] {
        let mut s = [0u8; 32];
        s[..8].copy_from_slice(&(self.g as u64).to_le_bytes());
        s
    }

    /// Party i's share: the b_j of a key s_i(X^g) -> s_i with the CRS a_j.
    pub fn share(&self, secret: &PartySecret) -> Result<Share> {
        check_session(&self.session, &secret.session, "the party's secret")?;
        let s = secret.secret.to_poly(self.ks.qp(), Representation::Ntt)?;
        let sg = Zeroizing::new(s.automorphism(self.g)?);
        let key = KeySwitchKey::generate_with_seed(
            self.ks,
            &sg,
            &secret.secret,
            self.seed(),
            &mut Prng::from_os()?,
        )?;
        let ses = &self.session;
        Ok(Share::new(
            ShareKind::Galois,
            ses,
            ses.key_id(),
            secret.party,
            ses.all_parties(),
            self.subject(),
            Payload::Polys(key.b),
        ))
    }

    /// The sum of every party's share.
    pub fn aggregate(&self, shares: &[Share]) -> Result<Share> {
        let s = &self.session;
        let all = s.all_parties();
        aggregate(
            shares,
            ShareKind::Galois,
            s,
            s.key_id(),
            &self.subject(),
            &all,
            None,
        )
    }

    /// The Galois key of the collective secret (seed-compressed).
    pub fn finish(&self, agg: &Share) -> Result<KeySwitchKey> {
        let s = &self.session;
        check_aggregate(agg, ShareKind::Galois, s, &s.all_parties(), &self.subject())?;
        let b = aggregate_polys(agg, self.ks.digits().len(), self.ks.qp())?.to_vec();
        let seed = self.seed();
        Ok(KeySwitchKey::seeded(s.key_id(), seed, b))
    }
}

/// The phase c0 + c1 s (plus the floods) at the released coefficients,
/// limb-major over the ciphertext's basis, coefficient form. Wiped on
/// drop: it is what the engine decodes.
pub struct ReleasedPhase {
    basis: Arc<RnsBasis>,
    indices: Vec<usize>,
    values: Zeroizing<Vec<u64>>,
}

impl std::fmt::Debug for ReleasedPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ReleasedPhase {{ coefficients: {}, .. }}",
            self.indices.len()
        )
    }
}

impl ReleasedPhase {
    /// The basis.
    pub fn basis(&self) -> &Arc<RnsBasis> {
        &self.basis
    }

    /// The released coefficients' indices.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// Residues of the released coefficients modulo prime i.
    pub fn limb(&self, i: usize) -> &[u64] {
        let r = self.indices.len();
        &self.values[i * r..(i + 1) * r]
    }

    /// The whole phase as a polynomial (coefficient form) when every
    /// coefficient was released; an error otherwise.
    pub fn to_poly(&self) -> Result<Zeroizing<Poly>> {
        if self.indices.len() != self.basis.n() {
            return protocol("only some coefficients were released: no whole phase");
        }
        Ok(Zeroizing::new(Poly::from_limbs(
            &self.basis,
            Representation::Coefficient,
            self.values.to_vec(),
        )?))
    }
}

/// What a decryption or key switch names: the session, the decryption set,
/// the ciphertext and its c1, and the flooding.
#[derive(Debug)]
struct Target<'a> {
    session: Session,
    set: Vec<u16>,
    subject: [u8; 32],
    c0: &'a Poly,
    c1: &'a Poly,
    flood: Flood,
    decryptions: u64,
}

impl<'a> Target<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        session: &Session,
        set: &[u16],
        subject: [u8; 32],
        c0: &'a Poly,
        c1: &'a Poly,
        flood: Flood,
        decryptions: u64,
    ) -> Result<Target<'a>> {
        c0.expect_representation(Representation::Ntt)?;
        c1.expect_representation(Representation::Ntt)?;
        if !same_basis(c0.basis(), c1.basis()) {
            return protocol("c0 and c1 are over different bases");
        }
        flood.check()?;
        if decryptions == 0 {
            return protocol("a flood covers at least one decryption");
        }
        Ok(Target {
            session: session.clone(),
            set: session.decryption_set(set)?,
            subject,
            c0,
            c1,
            flood,
            decryptions,
        })
    }

    /// c1 f(j) for the party (NTT form, wiped on drop) and its Lagrange
    /// coefficient (None for an additive share), after counting the release
    /// on the party's ledger.
    fn product(&self, share: &ThresholdShare) -> Result<(Zeroizing<Poly>, Option<Vec<u64>>)> {
        check_session(&self.session, &share.session, "the party's share")?;
        let lambda = share.lagrange(&self.set, self.c1.basis())?;
        let p = share.times(self.c1)?;
        share.ledger.count(self.decryptions)?;
        Ok((p, lambda))
    }

    fn message(&self, kind: ShareKind, party: u16, payload: Payload) -> Share {
        let s = &self.session;
        Share::new(
            kind,
            s,
            s.key_id(),
            party,
            self.set.clone(),
            self.subject,
            payload,
        )
    }

    fn aggregate(&self, kind: ShareKind, shares: &[Share]) -> Result<Share> {
        let s = &self.session;
        aggregate(shares, kind, s, s.key_id(), &self.subject, &self.set, None)
    }
}

/// Collective decryption of a ciphertext (c0, c1) under the collective
/// secret by a set of at least t parties: the key switch to the zero key,
/// releasing all coefficients of the phase or only some.
#[derive(Debug)]
pub struct Decryption<'a> {
    target: Target<'a>,
    released: Released,
}

impl<'a> Decryption<'a> {
    /// The decryption of the ciphertext (c0, c1) (NTT form, a level's
    /// basis; named by `ct`) by the parties `set`,
    /// releasing the coefficients `released` (increasing; None: all), each
    /// party flooding by `smudging` (whose width is checked here; the
    /// engine checks the modulus room, [`Smudging::check_room`]).
    pub fn new(
        session: &Session,
        set: &[u16],
        ct: CiphertextId,
        [c0, c1]: [&'a Poly; 2],
        released: Option<&[usize]>,
        smudging: Smudging,
    ) -> Result<Decryption<'a>> {
        let count = Released::new(released, c1.n())?.count(c1.n());
        let flood = smudging.flood(count)?;
        Decryption::with_flood(
            session,
            set,
            ct,
            [c0, c1],
            released,
            flood,
            smudging.decryptions,
        )
    }

    /// [`new`](Self::new) with each party's flood law given (the CKKS
    /// engine's Gaussian), counted on the ledgers as a flood proven for
    /// `decryptions` releases.
    pub fn with_flood(
        session: &Session,
        set: &[u16],
        ct: CiphertextId,
        [c0, c1]: [&'a Poly; 2],
        released: Option<&[usize]>,
        flood: Flood,
        decryptions: u64,
    ) -> Result<Decryption<'a>> {
        Ok(Decryption {
            target: Target::new(session, set, ct.0, c0, c1, flood, decryptions)?,
            released: Released::new(released, c1.n())?,
        })
    }

    /// The decryption set, sorted.
    pub fn set(&self) -> &[u16] {
        &self.target.set
    }

    /// Each party's flood.
    pub fn flood(&self) -> Flood {
        self.target.flood
    }

    /// How many coefficients each share releases.
    pub fn released_count(&self) -> usize {
        self.released.count(self.target.c1.n())
    }

    /// Party j's share: c1 s'_j + E_j at the released coefficients, and
    /// for the set's first party (the lead) c0 too, so that the combination
    /// needs no transform. Counts one release on the share's ledger
    /// (refused when exhausted).
    pub fn share(&self, share: &ThresholdShare) -> Result<Share> {
        let (mut p, mut lambda) = self.target.product(share)?;
        if share.party == self.target.set[0] {
            if let Some(l) = lambda.take() {
                p.mul_rns_scalar_assign(&l)?;
            }
            p.add_assign(self.target.c0)?;
        }
        p.to_coefficient()?;
        let basis = self.target.c1.basis();
        let count = self.released.count(basis.n());
        let floods = self.target.flood.sample(count, &mut Prng::from_os()?)?;
        let mut values = Vec::with_capacity(basis.len() * count);
        for i in 0..basis.len() {
            let (q, limb) = (basis.modulus(i), p.limb(i));
            let l = lambda.as_ref().map(|l| l[i]);
            let mut push = |v: u64, x: i128| {
                let v = l.map_or(v, |l| q.mul_mod(v, l));
                values.push(q.add_mod(v, reduce_i128(q, x)));
            };
            match &self.released {
                Released::All => limb
                    .iter()
                    .zip(floods.iter())
                    .for_each(|(&v, &x)| push(v, x)),
                Released::Coefficients(idx) => idx
                    .iter()
                    .zip(floods.iter())
                    .for_each(|(&k, &x)| push(limb[k as usize], x)),
            }
        }
        Ok(self.target.message(
            ShareKind::Decryption,
            share.party,
            Payload::Coefficients {
                basis: basis.clone(),
                released: self.released.clone(),
                values,
            },
        ))
    }

    /// The sum of the set's shares.
    pub fn aggregate(&self, shares: &[Share]) -> Result<Share> {
        self.target.aggregate(ShareKind::Decryption, shares)
    }

    /// The released phase c0 + c1 s plus the floods: the aggregate (whose
    /// lead share carries c0).
    pub fn finish(&self, agg: &Share) -> Result<ReleasedPhase> {
        let t = &self.target;
        check_aggregate(agg, ShareKind::Decryption, &t.session, &t.set, &t.subject)?;
        let basis = t.c1.basis();
        let Payload::Coefficients {
            basis: b,
            released,
            values,
        } = agg.payload()
        else {
            return protocol("a decryption aggregate holds coefficients");
        };
        if !same_basis(b, basis) || released != &self.released {
            return protocol("the aggregate is of another basis or released coefficients");
        }
        let indices: Vec<usize> = match released {
            Released::All => (0..basis.n()).collect(),
            Released::Coefficients(idx) => idx.iter().map(|&k| k as usize).collect(),
        };
        Ok(ReleasedPhase {
            basis: basis.clone(),
            indices,
            values: Zeroizing::new(values.clone()),
        })
    }
}

/// Re-encryption of (c0, c1) under the collective secret as a ciphertext
/// under another public key (the key switch with a public target), by a set
/// of at least t parties.
#[derive(Debug)]
pub struct PublicKeySwitch<'a> {
    target: Target<'a>,
    to: &'a RlwePublicKey,
    noise: NoiseDistribution,
}

impl<'a> PublicKeySwitch<'a> {
    /// The switch of `ct` ((c0, c1), NTT form) to `to` (a
    /// public key over a basis that has c1's as a prefix), each party
    /// flooding all n coefficients by `smudging` and adding errors from
    /// `noise` to its second half.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        session: &Session,
        set: &[u16],
        ct: CiphertextId,
        [c0, c1]: [&'a Poly; 2],
        to: &'a RlwePublicKey,
        smudging: Smudging,
        noise: NoiseDistribution,
    ) -> Result<PublicKeySwitch<'a>> {
        let flood = smudging.flood(c1.n())?;
        let mut bytes = ct.0.to_vec();
        to.id.write(&mut bytes);
        let subject = CiphertextId::of_bytes(&bytes).0;
        Ok(PublicKeySwitch {
            target: Target::new(session, set, subject, c0, c1, flood, smudging.decryptions)?,
            to,
            noise,
        })
    }

    /// Each party's flood.
    pub fn flood(&self) -> Flood {
        self.target.flood
    }

    /// Party j's share (c1 s'_j + u_j b' + E_j, u_j a' + e_j). Counts one
    /// release on the share's ledger.
    pub fn share(&self, share: &ThresholdShare) -> Result<Share> {
        let basis = self.target.c1.basis().clone();
        let n = basis.n();
        let (mut b_slot, mut a_slot) = (None, None);
        let b = at_basis(&self.to.b, &basis, &mut b_slot)?;
        let a = at_basis(&self.to.a, &basis, &mut a_slot)?;
        let (mut h0, lambda) = self.target.product(share)?;
        if let Some(l) = lambda {
            h0.mul_rns_scalar_assign(&l)?;
        }
        let mut rng = Prng::from_os()?;
        let u = Zeroizing::new(sample_ternary(n, &mut rng));
        let u = Zeroizing::new(Poly::from_signed(&basis, &u, Representation::Ntt)?);
        let values = self.target.flood.sample(n, &mut rng)?;
        let mut flood = Zeroizing::new(Poly::zero(&basis, Representation::Coefficient));
        for (i, limb) in flood.data_mut().chunks_mut(n).enumerate() {
            let q = basis.modulus(i);
            limb.iter_mut()
                .zip(values.iter())
                .for_each(|(o, &x)| *o = reduce_i128(q, x));
        }
        flood.to_ntt()?;
        h0.add_assign(&flood)?;
        h0.mul_acc(b, &u)?;
        let e = Zeroizing::new(self.noise.sample(n, &mut rng)?);
        let mut h1 = Poly::from_signed(&basis, &e, Representation::Ntt)?;
        h1.mul_acc(a, &u)?;
        let h0 = std::mem::replace(&mut *h0, Poly::zero(&basis, Representation::Ntt));
        Ok(self.target.message(
            ShareKind::PublicSwitch,
            share.party,
            Payload::Polys(vec![h0, h1]),
        ))
    }

    /// The sum of the set's shares.
    pub fn aggregate(&self, shares: &[Share]) -> Result<Share> {
        self.target.aggregate(ShareKind::PublicSwitch, shares)
    }

    /// The ciphertext (c0 + sum h0, sum h1) under the target key (NTT form).
    pub fn finish(&self, agg: &Share) -> Result<[Poly; 2]> {
        let t = &self.target;
        check_aggregate(agg, ShareKind::PublicSwitch, &t.session, &t.set, &t.subject)?;
        let h = aggregate_polys(agg, 2, t.c1.basis())?;
        Ok([t.c0.add(&h[0])?, h[1].clone()])
    }
}
