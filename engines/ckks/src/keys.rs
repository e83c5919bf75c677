//! Keys, encryption and decryption.
//!
//! ```text
//! public key  (b, a) = (-(a s) + e, a) mod Q P,  a uniform (from a seed)
//! public      c = (round((b u + e0) / P) + m, round((a u + e1) / P)) mod Q_l:
//!             encrypted modulo Q_l P and moved down (u ternary, e0, e1
//!             Gaussian), so that only the rounding's r0 + r1 s is left
//! symmetric   c = (-(a s) + e + m, a),       a uniform from a fresh seed
//! decryption  m' = c0 + c1 s  (mod Q_l), decoded with the ciphertext's scale
//! ```

use std::sync::Arc;

pub(crate) use triskel_ring::rlwe::check_same_context;
use triskel_ring::rlwe::{self, check_encrypted, Scheme};
use triskel_ring::{
    power_of_two_steps, KeyId, LweSecretKey, Poly, Prng, Representation, RlweSecret,
};
use zeroize::Zeroizing;

use crate::ciphertext::Ciphertext;
use crate::context::CkksContext;
use crate::error::Result;
use crate::noise::{public_key_error, symmetric_error, Noise};
use crate::plaintext::Plaintext;

/// The secret key s (uniform ternary). Zeroized on drop; never printed.
/// Not `Clone`: holders share one key by reference or `Arc`, and with it
/// its count of flooded decryptions. That count is not in the key's bytes
/// ([`to_bytes`](Self::to_bytes)): the key holder carries it across a
/// reload ([`SecretKey::flooded_decryptions`]); a loaded key counts none,
/// and the floods the key made before it was stored still count against
/// its alpha.
pub struct SecretKey {
    pub(crate) ctx: Arc<CkksContext>,
    pub(crate) secret: RlweSecret,
    /// The flooded decryptions made under this key (not serialized).
    pub(crate) floods: triskel_ring::FloodLedger,
}

triskel_ring::rlwe_secret_key!(SecretKey for CkksContext);

/// The public key (b, a) = (-(a s) + e, a) modulo Q P, NTT form: the RLWE
/// layer's, for CKKS.
pub type PublicKey = rlwe::PublicKey<CkksContext>;

/// The relinearization key (s^2 -> s): the RLWE layer's, for CKKS.
pub type RelinKey = rlwe::RelinKey<CkksContext>;

/// Galois keys s(X^g) -> s for rotations and conjugation: the RLWE layer's,
/// for CKKS.
pub type GaloisKeys = rlwe::GaloisKeys<CkksContext>;

/// Ok when `ct` belongs to the parameter set `ctx` and to the secret key
/// `id` (that of the keys an operation uses); checked before any work.
pub(crate) fn check_ciphertext(ctx: &Arc<CkksContext>, id: KeyId, ct: &Ciphertext) -> Result<()> {
    Ok(check_encrypted(ctx, id, ct)?)
}

/// The Galois element of a left rotation by `step` slots (5^step mod 2n).
pub(crate) fn rotation_element(ctx: &CkksContext, step: i64) -> Result<usize> {
    Ok(ctx.rotation_element(CkksContext::ROTATION_GENERATOR, step)?)
}

/// The Galois element of complex conjugation (X -> X^-1).
pub(crate) fn conjugation_element(ctx: &CkksContext) -> usize {
    ctx.inverse_element()
}

impl SecretKey {
    /// Draws a fresh uniform ternary secret from the OS-seeded CSPRNG.
    pub fn generate(ctx: &Arc<CkksContext>) -> Result<SecretKey> {
        SecretKey::from_rlwe(ctx, RlweSecret::generate_for(&**ctx)?)
    }

    pub(crate) fn from_rlwe(ctx: &Arc<CkksContext>, secret: RlweSecret) -> Result<SecretKey> {
        Ok(SecretKey {
            ctx: ctx.clone(),
            secret,
            floods: triskel_ring::FloodLedger::default(),
        })
    }

    /// A public key for this secret, modulo Q P (encryption moves down by P).
    pub fn public_key(&self) -> Result<PublicKey> {
        Ok(PublicKey::generate(&self.ctx, &self.secret)?)
    }

    /// The relinearization key (needed after ciphertext multiplication).
    pub fn relin_key(&self) -> Result<RelinKey> {
        Ok(RelinKey::generate(&self.ctx, &self.secret)?)
    }

    /// Galois keys for left rotations by each of `steps` (negative = right)
    /// and, when `conjugate`, for complex conjugation.
    pub fn galois_keys(&self, steps: &[i64], conjugate: bool) -> Result<GaloisKeys> {
        let elements =
            self.ctx
                .galois_elements(CkksContext::ROTATION_GENERATOR, steps, conjugate)?;
        Ok(GaloisKeys::generate(&self.ctx, &self.secret, &elements)?)
    }

    /// Galois keys for rotations by every power of two in both directions
    /// and conjugation: any rotation is then a signed sum of at most
    /// log2(n) / 2 + 1 of them.
    pub fn galois_keys_power_of_two(&self) -> Result<GaloisKeys> {
        self.galois_keys(&power_of_two_steps(self.ctx.slots()), true)
    }

    /// Symmetric encryption at the plaintext's level: c = (-(a s) + e + m, a)
    /// with a from a fresh seed, which serialization stores instead of a.
    pub fn encrypt(&self, pt: &Plaintext) -> Result<Ciphertext> {
        check_same_context(&self.ctx, &pt.ctx)?;
        let (polys, seed) =
            self.secret
                .encrypt(pt.poly.clone(), self.ctx.noise(), &mut Prng::from_os()?)?;
        let noise = pt
            .noise
            .plus_error(symmetric_error(&self.ctx))
            .check(pt.scale, self.ctx.level(pt.level)?.log2_q)?;
        Ok(Ciphertext::new(
            &self.ctx,
            self.secret.id(),
            polys,
            pt.level,
            pt.scale,
            noise,
            Some(seed),
        ))
    }

    /// c0 + c1 s (+ c2 s^2) at the ciphertext's level, NTT form.
    pub(crate) fn phase(&self, ct: &Ciphertext) -> Result<Zeroizing<Poly>> {
        self.check(ct)?;
        Ok(self.secret.phase(&ct.polys)?)
    }

    /// Ok when `ct` is under this key (parameter set and identity).
    pub(crate) fn check(&self, ct: &Ciphertext) -> Result<()> {
        check_ciphertext(&self.ctx, self.secret.id(), ct)
    }

    /// The identity of this key, carried by every key and ciphertext made
    /// with it.
    pub fn id(&self) -> KeyId {
        self.secret.id()
    }

    /// Decrypts to a plaintext at the ciphertext's level and scale: the
    /// phase m + e itself. Secure only when the result stays with the key
    /// holder (IND-CPA): e depends on the secret key, and a party who sees
    /// such decryptions can recover the key (Li and Micciancio, EUROCRYPT
    /// 2021). When decryptions are shared (IND-CPA-D), use
    /// [`decrypt_flooded`](Self::decrypt_flooded).
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        let x = self.phase(ct)?;
        Ok(Plaintext {
            ctx: self.ctx.clone(),
            poly: (*x).clone(),
            level: ct.level,
            scale: ct.scale,
            noise: ct.noise,
        })
    }

    /// Decrypts and decodes the real parts of the n/2 slots (IND-CPA only,
    /// as [`decrypt`](Self::decrypt)).
    pub fn decrypt_real(&self, ct: &Ciphertext) -> Result<Vec<f64>> {
        self.decrypt(ct)?.decode_real()
    }

    /// The secret's coefficients as an LWE key (dimension n, ternary): the
    /// key of [`Ciphertext::sample_extract`]'s output, from which the key
    /// holder builds transition keys. Secret.
    pub fn lwe_key(&self) -> LweSecretKey {
        self.secret.lwe_key()
    }

    /// The parameters this key belongs to.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }
}

/// Public-key encryption at the plaintext's level l, modulo Q_l P then
/// divided by P: c = (round((b u + e0) / P) + m, round((a u + e1) / P)),
/// whose error is the rounding r0 + r1 s instead of e0 + e u + e1 s.
pub(crate) fn encrypt_public(pk: &PublicKey, pt: &Plaintext) -> Result<Ciphertext> {
    check_same_context(pk.context(), &pt.ctx)?;
    encrypt_body(pk, pt.poly.clone(), pt.level, pt.scale, pt.noise)
}

/// A public-key encryption of zero at `level` and `scale` (no encoding:
/// the body is the zero polynomial).
pub(crate) fn encrypt_zero(pk: &PublicKey, level: usize, scale: f64) -> Result<Ciphertext> {
    let basis = &pk.context().level(level)?.basis;
    let zero = Poly::zero(basis, Representation::Ntt);
    encrypt_body(pk, zero, level, scale, Noise::new(0.0, 0.0))
}

fn encrypt_body(
    pk: &PublicKey,
    body: Poly,
    level: usize,
    scale: f64,
    noise: Noise,
) -> Result<Ciphertext> {
    let ctx = pk.context();
    let polys =
        pk.key()
            .encrypt_mod_qp(body, ctx.key_switch(), ctx.noise(), &mut Prng::from_os()?)?;
    let noise = noise
        .plus_error(public_key_error(ctx))
        .check(scale, ctx.level(level)?.log2_q)?;
    Ok(Ciphertext::new(
        ctx,
        pk.id(),
        polys.into(),
        level,
        scale,
        noise,
        None,
    ))
}
