//! RLWE encryption shared by the BFV and CKKS engines. A scheme only decides
//! what goes into the message body (BFV: round(Q m / t); CKKS: the scaled
//! encoding) and how the phase is decoded.
//!
//! ```text
//! public key  (b, a) = (e - a s, a),            a uniform from a seed
//! symmetric   c = (body + e - a s, a),          a uniform from a fresh seed
//! public      c = (body + e0 + b u, e1 + a u),  u ternary, e, e0, e1 from the noise
//! phase       c0 + c1 s + c2 s^2 + ...          (Horner, NTT form)
//! ```
//!
//! Products with the secret are accumulated into the output (`mul_acc`) or
//! kept in zeroized buffers, so that no copy of a s or of the secret is left
//! behind in freed memory.

use std::collections::BTreeMap;
use std::sync::Arc;

use zeroize::Zeroizing;

use crate::basis::RnsBasis;
use crate::error::Result;
use crate::key_id::KeyId;
use crate::keyswitch::{KeySwitchContext, KeySwitchKey, SecretDistribution, SecretKey};
use crate::lwe::LweSecretKey;
use crate::poly::{same_basis, Poly, Representation};
use crate::sampling::{sample_ternary, sample_uniform, NoiseDistribution, Prng, Seed};
use crate::serialize::Reader;

/// A secret key with its NTT form over the full ciphertext basis (restricted
/// per level when used). Zeroized on drop; never printed.
pub struct RlweSecret {
    secret: SecretKey,
    s_ntt: Zeroizing<Poly>,
}

impl std::fmt::Debug for RlweSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RlweSecret { .. }")
    }
}

/// An RLWE public key (b, a) = (e - a s, a) in NTT form, with the identity
/// of s; a is regenerated from the seed, so the bytes hold the identity, the
/// seed and b only.
#[derive(Clone, Debug)]
pub struct RlwePublicKey {
    pub(crate) id: KeyId,
    pub(crate) seed: Seed,
    pub(crate) b: Poly,
    pub(crate) a: Poly,
}

/// The polynomial of `poly` at `basis` (a prefix of its own), borrowed when
/// nothing has to be dropped.
pub(crate) fn at_basis<'a>(
    poly: &'a Poly,
    basis: &Arc<RnsBasis>,
    slot: &'a mut Option<Poly>,
) -> Result<&'a Poly> {
    if poly.basis().len() == basis.len() {
        return Ok(poly);
    }
    Ok(slot.insert(poly.restrict(basis)?))
}

/// (e - a s, a) over the basis of `s` (NTT form), a from a fresh seed; `id`
/// is s's identity.
fn public_key_for(
    s: &Poly,
    id: KeyId,
    noise: NoiseDistribution,
    rng: &mut Prng,
) -> Result<RlwePublicKey> {
    let seed = rng.gen_seed();
    public_key_with_seed(s, id, noise, seed, rng)
}

/// [`public_key_for`] with a from `seed` (a common reference string in the
/// threshold protocols), the error from `rng`.
pub(crate) fn public_key_with_seed(
    s: &Poly,
    id: KeyId,
    noise: NoiseDistribution,
    seed: Seed,
    rng: &mut Prng,
) -> Result<RlwePublicKey> {
    let basis = s.basis().clone();
    let a = sample_uniform(&basis, Representation::Ntt, &mut Prng::from_seed(seed));
    let e = Zeroizing::new(noise.sample(basis.n(), rng)?);
    let mut b = Poly::from_signed(&basis, &e, Representation::Ntt)?;
    // e - a s as -(-e + a s): no a s temporary to wipe.
    b.neg_assign()?;
    b.mul_acc(&a, s)?;
    b.neg_assign()?;
    Ok(RlwePublicKey { id, seed, b, a })
}

/// x (in Q P, NTT form) at Q_l P: its first limbs and the limbs of P,
/// borrowed when nothing has to be dropped.
fn at_level_qp<'a>(
    x: &'a Poly,
    ks: &KeySwitchContext,
    qlp: &Arc<RnsBasis>,
    slot: &'a mut Option<Poly>,
) -> &'a Poly {
    if qlp.len() == x.basis().len() {
        return x;
    }
    let n = x.n();
    let ql = qlp.len() - ks.p().len();
    let mut data = Vec::with_capacity(qlp.len() * n);
    data.extend_from_slice(&x.data()[..ql * n]);
    data.extend_from_slice(&x.data()[ks.q().len() * n..]);
    slot.insert(Poly::from_raw(qlp, Representation::Ntt, &data))
}

impl RlweSecret {
    /// The secret with its NTT form over `basis` (the largest ciphertext basis).
    pub fn new(secret: SecretKey, basis: &Arc<RnsBasis>) -> Result<RlweSecret> {
        let s_ntt = secret.to_poly(basis, Representation::Ntt)?;
        Ok(RlweSecret { secret, s_ntt })
    }

    /// A fresh uniform ternary secret from the OS-seeded CSPRNG, with its NTT
    /// form over `basis`.
    pub fn generate(basis: &Arc<RnsBasis>) -> Result<RlweSecret> {
        let mut rng = Prng::from_os()?;
        let secret = SecretKey::generate(basis.n(), SecretDistribution::Ternary, &mut rng)?;
        RlweSecret::new(secret, basis)
    }

    /// The relinearization key (s^2 -> s) for `ks`, from the OS-seeded CSPRNG.
    pub fn relin_key(&self, ks: &KeySwitchContext) -> Result<KeySwitchKey> {
        KeySwitchKey::relinearization(ks, &self.secret, &mut Prng::from_os()?)
    }

    /// Galois keys s(X^g) -> s for `ks`, one per distinct element of
    /// `elements` but 1 ([`KeySwitchKey::galois_set`]), from the OS-seeded
    /// CSPRNG.
    pub fn galois_keys(
        &self,
        ks: &KeySwitchContext,
        elements: &[usize],
    ) -> Result<BTreeMap<usize, KeySwitchKey>> {
        KeySwitchKey::galois_set(ks, &self.secret, elements, &mut Prng::from_os()?)
    }

    /// The coefficients as an LWE key (dimension n) of this secret's
    /// identity: the key of a sample extracted from a ciphertext under this
    /// secret. Secret.
    pub fn lwe_key(&self) -> LweSecretKey {
        LweSecretKey::from_coefficients(self.secret.coeffs(), self.id())
    }

    /// The ring secret (its coefficients).
    pub fn secret(&self) -> &SecretKey {
        &self.secret
    }

    /// The secret's identity.
    pub fn id(&self) -> KeyId {
        self.secret.id()
    }

    /// s at `basis` (a prefix of the full basis), NTT form.
    pub fn at(&self, basis: &Arc<RnsBasis>) -> Result<Zeroizing<Poly>> {
        Ok(Zeroizing::new(self.s_ntt.restrict(basis)?))
    }

    /// A public key over the full basis with error from `noise`.
    pub fn public_key(&self, noise: NoiseDistribution, rng: &mut Prng) -> Result<RlwePublicKey> {
        public_key_for(&self.s_ntt, self.id(), noise, rng)
    }

    /// A public key over `basis` (the full ciphertext basis, or Q P for
    /// [`RlwePublicKey::encrypt_mod_qp`]) with error from `noise`.
    pub fn public_key_over(
        &self,
        basis: &Arc<RnsBasis>,
        noise: NoiseDistribution,
        rng: &mut Prng,
    ) -> Result<RlwePublicKey> {
        if same_basis(basis, self.s_ntt.basis()) {
            return public_key_for(&self.s_ntt, self.id(), noise, rng);
        }
        let s = self.secret.to_poly(basis, Representation::Ntt)?;
        public_key_for(&s, self.id(), noise, rng)
    }

    /// A public key modulo Q P, the basis of `ks`'s keys, for
    /// [`RlwePublicKey::encrypt_mod_qp`].
    pub fn public_key_mod_qp(
        &self,
        ks: &KeySwitchContext,
        noise: NoiseDistribution,
        rng: &mut Prng,
    ) -> Result<RlwePublicKey> {
        let s = self.secret.to_poly(ks.qp(), Representation::Ntt)?;
        public_key_for(&s, self.id(), noise, rng)
    }

    /// Symmetric encryption of `body` (coefficient or NTT form, in the basis
    /// of the level to encrypt at): (body + e - a s, a) in NTT form with a
    /// from a fresh seed, returned so that serialization can store it
    /// instead of a.
    pub fn encrypt(
        &self,
        mut body: Poly,
        noise: NoiseDistribution,
        rng: &mut Prng,
    ) -> Result<(Vec<Poly>, Seed)> {
        let basis = body.basis().clone();
        let seed = rng.gen_seed();
        let a = sample_uniform(&basis, Representation::Ntt, &mut Prng::from_seed(seed));
        let e = Zeroizing::new(noise.sample(self.secret.n(), rng)?);
        // The error as a polynomial is wiped before its storage goes back
        // to the pool.
        let e_poly = Zeroizing::new(Poly::from_signed(&basis, &e, body.representation())?);
        body.add_assign(&e_poly)?;
        body.to_ntt()?;
        let restricted;
        let s: &Poly = if basis.len() == self.s_ntt.basis().len() {
            &self.s_ntt
        } else {
            restricted = self.at(&basis)?;
            &restricted
        };
        body.neg_assign()?;
        body.mul_acc(&a, s)?;
        body.neg_assign()?;
        Ok((vec![body, a], seed))
    }

    /// The phase c0 + c1 s + c2 s^2 + ... of `polys` (NTT form, one basis),
    /// in NTT form, by Horner's rule.
    pub fn phase(&self, polys: &[Poly]) -> Result<Zeroizing<Poly>> {
        let (last, rest) = polys.split_last().ok_or_else(|| {
            crate::Error::InvalidParameter("a ciphertext has no component".into())
        })?;
        let s = self.at(last.basis())?;
        let mut x = Zeroizing::new(last.clone());
        for c in rest.iter().rev() {
            x.mul_assign(&s)?;
            x.add_assign(c)?;
        }
        Ok(x)
    }
}

impl RlwePublicKey {
    /// The identity of the secret key s.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// The seed of a.
    pub fn seed(&self) -> &Seed {
        &self.seed
    }

    /// The basis of the key.
    pub fn basis(&self) -> &Arc<RnsBasis> {
        self.b.basis()
    }

    /// Public-key encryption of `body` (coefficient or NTT form, in the
    /// basis of the level to encrypt at): (body + e0 + b u, e1 + a u), NTT.
    pub fn encrypt(
        &self,
        mut body: Poly,
        noise: NoiseDistribution,
        rng: &mut Prng,
    ) -> Result<[Poly; 2]> {
        let basis = body.basis().clone();
        let n = basis.n();
        let (mut b_slot, mut a_slot) = (None, None);
        let b = at_basis(&self.b, &basis, &mut b_slot)?;
        let a = at_basis(&self.a, &basis, &mut a_slot)?;
        let u = Zeroizing::new(sample_ternary(n, rng));
        let u = Zeroizing::new(Poly::from_signed(&basis, &u, Representation::Ntt)?);
        let e0 = Zeroizing::new(noise.sample(n, rng)?);
        let e1 = Zeroizing::new(noise.sample(n, rng)?);
        // The body turns into c0 in place: no copy of the message or of e0
        // is left behind.
        let e0_poly = Zeroizing::new(Poly::from_signed(&basis, &e0, body.representation())?);
        body.add_assign(&e0_poly)?;
        body.to_ntt()?;
        body.mul_acc(b, &u)?;
        let mut c1 = Poly::from_signed(&basis, &e1, Representation::Ntt)?;
        c1.mul_acc(a, &u)?;
        Ok([body, c1])
    }

    /// Public-key encryption modulo Q_l P with a key modulo Q P (from
    /// [`RlweSecret::public_key_mod_qp`] for `ks`), `body` in Q_l (any
    /// representation): (e0 + b u, e1 + a u) in Q_l P divided by P
    /// (ModDown), plus the body, NTT form. The error e0 + e u + e1 s shrinks
    /// by P and leaves about the ModDown's rounding r0 + r1 s, instead of
    /// e0 + e u + e1 s when encrypting modulo Q_l.
    pub fn encrypt_mod_qp(
        &self,
        mut body: Poly,
        ks: &KeySwitchContext,
        noise: NoiseDistribution,
        rng: &mut Prng,
    ) -> Result<[Poly; 2]> {
        let ql = body.basis().len();
        let qlp = ks.level_qp(ql)?.clone();
        if !same_basis(self.b.basis(), ks.qp()) || body.basis().primes()[..] != qlp.primes()[..ql] {
            return Err(crate::Error::BasisMismatch);
        }
        let n = qlp.n();
        let (mut b_slot, mut a_slot) = (None, None);
        let b = at_level_qp(&self.b, ks, &qlp, &mut b_slot);
        let a = at_level_qp(&self.a, ks, &qlp, &mut a_slot);
        let u = Zeroizing::new(sample_ternary(n, rng));
        let u = Zeroizing::new(Poly::from_signed(&qlp, &u, Representation::Ntt)?);
        let e0 = Zeroizing::new(noise.sample(n, rng)?);
        let e1 = Zeroizing::new(noise.sample(n, rng)?);
        let mut c0 = Poly::from_signed(&qlp, &e0, Representation::Ntt)?;
        c0.mul_acc(b, &u)?;
        let mut c1 = Poly::from_signed(&qlp, &e1, Representation::Ntt)?;
        c1.mul_acc(a, &u)?;
        // The body turns into c0 in place (no copy of the message is left
        // behind); the P limbs left in the moved-down buffers are RLWE
        // samples modulo P (b u + e0, a u + e1), as public as the ciphertext.
        body.to_ntt()?;
        body.add_assign(&ks.mod_down_owned(c0)?)?;
        Ok([body, ks.mod_down_owned(c1)?])
    }

    /// Bytes: id (16) | seed (32) | b (ring polynomial body).
    pub fn write(&self, out: &mut Vec<u8>) {
        self.id.write(out);
        out.extend_from_slice(&self.seed);
        self.b.write_body(out);
    }

    /// Reads [`write`](Self::write) output over `basis` (b must be in NTT
    /// form and reduced), regenerating a from the seed.
    pub fn read(r: &mut Reader<'_>, basis: &Arc<RnsBasis>) -> Result<RlwePublicKey> {
        let id = KeyId::read(r)?;
        let seed = r.seed()?;
        let b = Poly::read_ntt_body(r, basis)?;
        let a = sample_uniform(basis, Representation::Ntt, &mut Prng::from_seed(seed));
        Ok(RlwePublicKey { id, seed, b, a })
    }
}

/// Writes ciphertext components: `1 | seed | c0` when `seed` is set (c1 is
/// regenerated from it), else `0 | c0 | c1 | ...`.
pub fn write_components(out: &mut Vec<u8>, polys: &[Poly], seed: Option<&Seed>) {
    match seed {
        Some(seed) => {
            out.push(1);
            out.extend_from_slice(seed);
            polys[0].write_body(out);
        }
        None => {
            out.push(0);
            for p in polys {
                p.write_body(out);
            }
        }
    }
}

/// Reads [`write_components`] output: `size` components over `basis`, all in
/// NTT form. A seed is accepted only when `seed_allowed` (a fresh symmetric
/// encryption: two components at the top level) and yields c1 = a.
pub fn read_components(
    r: &mut Reader<'_>,
    basis: &Arc<RnsBasis>,
    size: usize,
    seed_allowed: bool,
) -> Result<(Vec<Poly>, Option<Seed>)> {
    match r.u8()? {
        0 => Ok((
            (0..size)
                .map(|_| Poly::read_ntt_body(r, basis))
                .collect::<Result<Vec<_>>>()?,
            None,
        )),
        1 if seed_allowed && size == 2 => {
            let seed = r.seed()?;
            let c0 = Poly::read_ntt_body(r, basis)?;
            let a = sample_uniform(basis, Representation::Ntt, &mut Prng::from_seed(seed));
            Ok((vec![c0, a], Some(seed)))
        }
        flag => Err(crate::Error::Malformed(format!(
            "seed flag {flag} invalid for a ciphertext of {size} components at this level"
        ))),
    }
}
