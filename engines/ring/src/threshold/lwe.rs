//! Threshold decryption of LWE ciphertexts modulo 2^64 (TFHE outputs,
//! extracted BFV/CKKS coefficients): a dealer Shamir-shares the LWE key,
//! and any t parties decrypt by partial inner products plus flooding.
//!
//! Z_{2^64} is no field (Lagrange needs inverses of the point differences),
//! so the key is shared over Z_P, P = p_1 p_2 the two largest 62-bit
//! NTT primes for n = 1024 (about 2^124), residue by residue: party j holds
//! f(j) for a degree t - 1 polynomial f over Z_P with f(0) = s (each
//! coefficient of the key, as a small signed integer). Party j of a set T
//! releases, per ciphertext (a, b) with a read as integers in [0, 2^64),
//! lambda_j <a, f(j)> + E_j mod P; the sum over T is the integer
//! <a, s> + sum E_j exactly (|<a, s>| < d 2^64 for a key in {-1, 0, 1}, plus
//! the floods, below P / 2, so the centered residue is the integer), and
//! b - it mod 2^64 is the phase minus the floods.
//!
//! Key generation stays with the dealer (TFHE's bootstrapping keys are made
//! from the whole key): the dealer draws the key, makes the evaluation keys
//! and the shares, sends each party its share and forgets the key.

use std::sync::OnceLock;

use zeroize::Zeroizing;

use super::share::{aggregate, Payload};
use super::{lagrange_coefficient_mod, u16_le, CiphertextId, Session, Share, ShareKind};
use crate::error::{invalid, protocol, Error, Result};
use crate::flooding::{FloodLedger, Smudging};
use crate::key_id::KeyId;
use crate::lwe::{LweCiphertext, LweSecretKey};
use crate::sampling::{flood_residue, flooding_values, Prng};
use crate::serialize::{read_ring_header, write_ring_header, Reader};
use triskel_kernels::Modulus;

/// The number of primes the LWE key is shared modulo.
pub const LWE_SHARE_PRIMES: usize = 2;

/// Header kind of a serialized [`LweKeyShare`].
const KIND_LWE_KEY_SHARE: u8 = 18;

/// The largest LWE dimension shared: 2^16 (|<a, s>| < 2^80).
const MAX_DIMENSION: usize = 1 << 16;

/// log2 of the largest combined value |<a, s>| + floods allowed: below
/// P / 2 with margin.
const MAX_COMBINED_LOG2: f64 = 121.0;

pub(crate) fn primes() -> Result<&'static [Modulus; LWE_SHARE_PRIMES]> {
    static PRIMES: OnceLock<std::result::Result<[Modulus; 2], Error>> = OnceLock::new();
    PRIMES
        .get_or_init(|| {
            let p = triskel_kernels::ntt_primes(62, 1024, 2)?;
            Ok([Modulus::new(p[0])?, Modulus::new(p[1])?])
        })
        .as_ref()
        .map_err(Clone::clone)
}

pub(crate) fn read_words(r: &mut Reader<'_>) -> Result<Vec<u64>> {
    let count = r.u32()? as usize;
    if !count.is_multiple_of(LWE_SHARE_PRIMES) || count == 0 {
        return Err(Error::Malformed(format!(
            "{count} LWE residues: a positive multiple of {LWE_SHARE_PRIMES} is needed"
        )));
    }
    let raw = r.take(count.saturating_mul(8))?;
    let words: Vec<u64> = raw
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    check_reduced(&words)?;
    Ok(words)
}

fn check_reduced(words: &[u64]) -> Result<()> {
    let per = words.len() / LWE_SHARE_PRIMES;
    for (limb, q) in words.chunks(per.max(1)).zip(primes()?) {
        if limb.iter().any(|&v| v >= q.value()) {
            return Err(Error::Malformed(format!(
                "an LWE residue is not reduced modulo {}",
                q.value()
            )));
        }
    }
    Ok(())
}

pub(crate) fn add_words(a: &mut [u64], b: &[u64]) {
    let per = a.len() / LWE_SHARE_PRIMES;
    if let Ok(ps) = primes() {
        for ((x, y), q) in a.chunks_mut(per.max(1)).zip(b.chunks(per.max(1))).zip(ps) {
            x.iter_mut()
                .zip(y)
                .for_each(|(u, &v)| *u = q.add_mod(*u, v));
        }
    }
}

/// A party's Shamir share of an LWE key: f(j) for every key coefficient,
/// modulo each sharing prime (limb-major), with its ledger of flooded
/// releases. Zeroized on drop.
pub struct LweKeyShare {
    session: [u8; 16],
    key: KeyId,
    party: u16,
    pub(super) values: Zeroizing<Vec<u64>>,
    ledger: FloodLedger,
}

impl std::fmt::Debug for LweKeyShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LweKeyShare {{ party: {}, dimension: {}, .. }}",
            self.party,
            self.dimension()
        )
    }
}

impl LweKeyShare {
    /// The dealer's step: Shamir shares of `key` (coefficients in
    /// {-1, 0, 1}, dimension at most 2^16) for the session's N parties,
    /// threshold t, from the OS-seeded CSPRNG; element j - 1 is party j's.
    pub fn deal(session: &Session, key: &LweSecretKey) -> Result<Vec<LweKeyShare>> {
        let d = key.dimension();
        if d == 0 || d > MAX_DIMENSION {
            return invalid(format!("LWE dimension {d} outside 1..={MAX_DIMENSION}"));
        }
        // Checked without a branch per coefficient: |s_i| <= 1 for all i.
        let bad = key
            .coefficients()
            .iter()
            .fold(0u64, |acc, &c| acc | (c.wrapping_add(1) > 2) as u64);
        if bad != 0 {
            return invalid("an LWE key to share has coefficients in {-1, 0, 1}");
        }
        let ps = primes()?;
        let (t, parties) = (session.threshold() as usize, session.parties());
        let mut rng = Prng::from_os()?;
        let mut shares: Vec<Zeroizing<Vec<u64>>> = (0..parties)
            .map(|_| Zeroizing::new(vec![0u64; LWE_SHARE_PRIMES * d]))
            .collect();
        let mut coeffs = Zeroizing::new(vec![0u64; t]);
        for (i, q) in ps.iter().enumerate() {
            for (k, &s) in key.coefficients().iter().enumerate() {
                coeffs[0] = q.reduce_i64(s as i64);
                for c in coeffs[1..].iter_mut() {
                    *c = rng.below(q.value())?;
                }
                for (j, share) in shares.iter_mut().enumerate() {
                    let x = j as u64 + 1;
                    let v = coeffs
                        .iter()
                        .rev()
                        .fold(0u64, |acc, &c| q.add_mod(q.mul_mod(acc, x), c));
                    share[i * d + k] = v;
                }
            }
        }
        Ok(shares
            .into_iter()
            .enumerate()
            .map(|(j, values)| LweKeyShare {
                session: session.id(),
                key: key.id(),
                party: j as u16 + 1,
                values,
                ledger: FloodLedger::default(),
            })
            .collect())
    }

    /// The party's index.
    pub fn party(&self) -> u16 {
        self.party
    }

    /// The LWE dimension.
    pub fn dimension(&self) -> usize {
        self.values.len() / LWE_SHARE_PRIMES
    }

    /// The identity of the shared LWE key.
    pub fn key_id(&self) -> KeyId {
        self.key
    }

    /// The share's flooded releases (in memory).
    pub fn ledger(&self) -> &FloodLedger {
        &self.ledger
    }

    /// Versioned bytes (secret: for the dealer's private channel to the
    /// party): ring header (kind 18) | session: 16 | key: 16 | party: u16
    /// | dimension: u32 | 2 x dimension x u64 (limb-major).
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(Vec::with_capacity(44 + self.values.len() * 8));
        write_ring_header(&mut out, KIND_LWE_KEY_SHARE);
        out.extend_from_slice(&self.session);
        self.key.write(&mut out);
        out.extend_from_slice(&self.party.to_le_bytes());
        out.extend_from_slice(&(self.dimension() as u32).to_le_bytes());
        self.values
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output of `session` (its
    /// identity, a party of it, a dimension up to 2^16, reduced residues).
    pub fn from_bytes(bytes: &[u8], session: &Session) -> Result<LweKeyShare> {
        let mut r = Reader::new(bytes);
        read_ring_header(&mut r, KIND_LWE_KEY_SHARE)?;
        if r.take(16)? != session.id() {
            return protocol("the LWE key share belongs to another session");
        }
        let key = KeyId::read(&mut r)?;
        let party = u16_le(&mut r)?;
        session.check_party(party)?;
        let d = r.u32()? as usize;
        if d == 0 || d > MAX_DIMENSION {
            return Err(Error::Malformed(format!(
                "LWE dimension {d} outside 1..={MAX_DIMENSION}"
            )));
        }
        let raw = r.take(LWE_SHARE_PRIMES * d * 8)?;
        let values = Zeroizing::new(
            raw.chunks_exact(8)
                .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect::<Vec<u64>>(),
        );
        r.finish()?;
        check_reduced(&values)?;
        Ok(LweKeyShare {
            session: session.id(),
            key,
            party,
            values,
            ledger: FloodLedger::default(),
        })
    }
}

/// Threshold decryption of a batch of LWE ciphertexts under one shared key
/// by a set of at least t parties.
#[derive(Debug)]
pub struct LweDecryption<'a> {
    session: Session,
    set: Vec<u16>,
    key: KeyId,
    subject: [u8; 32],
    cts: &'a [LweCiphertext],
    smudging: Smudging,
    flood_log2: u32,
}

impl<'a> LweDecryption<'a> {
    /// The decryption of `cts` (named together by `batch`, e.g.
    /// [`CiphertextId::of_bytes`] of their bytes), all under the key `key`
    /// of one dimension, by `set`; every ciphertext's phase is flooded by
    /// `smudging` (B in units of 2^-64 of the torus), so that the batch is
    /// one release of `cts.len()` values. The caller checks that the
    /// decoding tolerates the combined error ([`Smudging::check_room`]).
    pub fn new(
        session: &Session,
        set: &[u16],
        key: KeyId,
        batch: CiphertextId,
        cts: &'a [LweCiphertext],
        smudging: Smudging,
    ) -> Result<LweDecryption<'a>> {
        let set = session.decryption_set(set)?;
        let Some(first) = cts.first() else {
            return protocol("no LWE ciphertext to decrypt");
        };
        let d = first.dimension();
        for ct in cts {
            key.check("an LWE ciphertext to decrypt", ct.key_id)?;
            if ct.dimension() != d || d == 0 || d > MAX_DIMENSION {
                return invalid("LWE ciphertexts of one dimension up to 2^16 are needed");
            }
        }
        let flood_log2 = smudging.width_log2(cts.len())?;
        let combined = (d as f64).log2() + 64.0;
        let floods = (set.len() as f64).log2() + flood_log2 as f64 + 1.0;
        if combined.max(floods) + 1.0 > MAX_COMBINED_LOG2 {
            return invalid(format!(
                "floods of 2^{flood_log2} by {} parties do not fit the sharing modulus",
                set.len()
            ));
        }
        Ok(LweDecryption {
            session: session.clone(),
            set,
            key,
            subject: batch.0,
            cts,
            smudging,
            flood_log2,
        })
    }

    /// log2 of each party's flood bound.
    pub fn flood_log2(&self) -> u32 {
        self.flood_log2
    }

    /// Party j's share: lambda_j <a, f(j)> + E_j mod each prime, per
    /// ciphertext. Counts one release on the share's ledger.
    pub fn share(&self, share: &LweKeyShare) -> Result<Share> {
        if share.session != self.session.id() {
            return protocol("the LWE key share belongs to another session");
        }
        self.key.check("the LWE key share", share.key)?;
        if !self.set.contains(&share.party) {
            return protocol(format!(
                "party {} is not in the decryption set {:?}",
                share.party, self.set
            ));
        }
        let d = share.dimension();
        if self.cts[0].dimension() != d {
            return invalid(format!(
                "LWE dimension {} where the key share has {d}",
                self.cts[0].dimension()
            ));
        }
        let ps = primes()?;
        let lambda = lagrange_coefficient_mod(ps, &self.set, share.party)?;
        share.ledger.count(self.smudging.decryptions)?;
        let m = self.cts.len();
        let floods = flooding_values(m, self.flood_log2, &mut Prng::from_os()?)?;
        let mut values = Vec::with_capacity(LWE_SHARE_PRIMES * m);
        for (i, q) in ps.iter().enumerate() {
            let key = &share.values[i * d..(i + 1) * d];
            for (ct, &x) in self.cts.iter().zip(floods.iter()) {
                let dot = dot_mod(q, &ct.a, key);
                let v = q.mul_mod(dot, lambda[i]);
                values.push(q.add_mod(v, flood_residue(q, x, self.flood_log2)));
            }
        }
        Ok(Share::new(
            ShareKind::LweDecryption,
            &self.session,
            self.key,
            share.party,
            self.set.clone(),
            self.subject,
            Payload::Words(values),
        ))
    }

    /// The sum of the set's shares.
    pub fn aggregate(&self, shares: &[Share]) -> Result<Share> {
        let s = &self.session;
        let agg = aggregate(
            shares,
            ShareKind::LweDecryption,
            s,
            self.key,
            &self.subject,
            &self.set,
            None,
        )?;
        match agg.payload() {
            Payload::Words(w) if w.len() == LWE_SHARE_PRIMES * self.cts.len() => Ok(agg),
            _ => protocol("LWE shares of another batch size"),
        }
    }

    /// The phases b - <a, s> - sum E_j mod 2^64 of the batch, from the
    /// aggregate.
    pub fn finish(&self, agg: &Share) -> Result<Vec<u64>> {
        let ok = agg.kind() == ShareKind::LweDecryption
            && agg.party() == 0
            && agg.session_id() == self.session.id()
            && agg.key_id() == self.key
            && agg.parties() == self.set
            && agg.subject() == self.subject;
        let m = self.cts.len();
        let words = match agg.payload() {
            Payload::Words(w) if ok && w.len() == LWE_SHARE_PRIMES * m => w,
            _ => return protocol("not the LWE aggregate of this decryption"),
        };
        phases(words, self.cts)
    }
}

/// b - c mod 2^64 per ciphertext, c the centered integer of residues
/// (limb-major in `words`: prime 1's, then prime 2's).
pub(crate) fn phases(words: &[u64], cts: &[LweCiphertext]) -> Result<Vec<u64>> {
    let [p1, p2] = primes()?;
    let m = cts.len();
    let inv = p2
        .inv_mod(p2.reduce(p1.value()))
        .ok_or_else(|| Error::InvalidParameter("sharing primes not coprime".into()))?;
    let big_p = p1.value() as u128 * p2.value() as u128;
    Ok(cts
        .iter()
        .enumerate()
        .map(|(k, ct)| {
            let (r1, r2) = (words[k], words[m + k]);
            // CRT: x = r1 + p1 [(r2 - r1) p1^-1]_{p2}, in [0, P).
            let h = p2.mul_mod(p2.sub_mod(r2, p2.reduce(r1)), inv);
            let x = r1 as u128 + p1.value() as u128 * h as u128;
            // The centered value, as a 2^128 two's complement.
            let above = 0u128.wrapping_sub((x > big_p / 2) as u128);
            let centered = x.wrapping_sub(big_p & above);
            ct.b.wrapping_sub(centered as u64)
        })
        .collect())
}

/// <a, key> mod q with a in [0, 2^64) and key residues below q < 2^62: four
/// products (each below 2^126) summed before each reduction.
fn dot_mod(q: &Modulus, a: &[u64], key: &[u64]) -> u64 {
    let mut acc = 0u64;
    for (ca, ck) in a.chunks(4).zip(key.chunks(4)) {
        let sum = ca
            .iter()
            .zip(ck)
            .fold(0u128, |s, (&x, &y)| s + x as u128 * y as u128);
        acc = q.add_mod(acc, q.reduce_u128(sum));
    }
    acc
}
