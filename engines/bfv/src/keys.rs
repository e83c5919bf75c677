//! Keys: secret, public, relinearization and Galois keys; encryption and
//! decryption.
//!
//! Encryption of m in R_t under s, with Q_l the level's modulus:
//!
//! ```text
//! public key  (b, a) = (-(a s + e), a),  a uniform (from a seed)
//! public      c = (b u + e0 + D(m), a u + e1),  u ternary, e0, e1 Gaussian
//! symmetric   c = (-(a s) + e + D(m), a),       a uniform from a fresh seed
//! D(m)        = round(Q m / t) = floor(Q/t) m + round((Q mod t) m / t)
//! decryption  m = round(t [c0 + c1 s (+ c2 s^2)]_Q / Q) mod t
//! ```
//!
//! Decryption computes round(t x / Q) without big integers (Halevi-Polyakov-
//! Shoup): with y_i = [x_i (Q/q_i)^-1]_{q_i}, t x / Q = sum_i y_i t / q_i
//! (mod t), and the sum is accumulated in 64.128-bit fixed point (each
//! fraction t/q_i truncated to 128 bits, an error below 2^-66 per term).

use std::sync::Arc;

use num_bigint::BigUint;
use triskel_kernels as kernels;
use triskel_ring::rlwe::{self, check_encrypted, check_same_context, Scheme};
use triskel_ring::KeyId;
use triskel_ring::{
    power_of_two_steps, LweCiphertext, LweSecretKey, Poly, Prng, Representation, RlweSecret,
};
use zeroize::Zeroizing;

use crate::ciphertext::Ciphertext;
use crate::context::BfvContext;
use crate::encoding::Plaintext;
use crate::error::{Error, Result};
use crate::params::{public_fresh_noise_log2, symmetric_fresh_noise_log2};

/// The secret key s (ternary). Zeroized on drop; never printed.
pub struct SecretKey {
    pub(crate) ctx: Arc<BfvContext>,
    pub(crate) secret: RlweSecret,
}

triskel_ring::rlwe_secret_key!(SecretKey for BfvContext);

/// The public key (b, a) = (e - a s, a) in NTT form over Q: the RLWE
/// layer's, for BFV.
pub type PublicKey = rlwe::PublicKey<BfvContext>;

/// The relinearization key (s^2 -> s): the RLWE layer's, for BFV.
pub type RelinKey = rlwe::RelinKey<BfvContext>;

/// Galois keys s(X^g) -> s for row rotations and the row swap: the RLWE
/// layer's, for BFV.
pub type GaloisKeys = rlwe::GaloisKeys<BfvContext>;

/// D(m) = round(Q_l m / t) at a level, in coefficient form.
pub(crate) fn scaled_message(ctx: &BfvContext, pt: &Plaintext, level: usize) -> Result<Poly> {
    let lv = ctx.level(level)?;
    let n = ctx.n();
    // round((Q mod t) m / t), the same for every prime (below t), without a
    // division on the (secret) message.
    let correction: Zeroizing<Vec<u64>> = Zeroizing::new(
        pt.coeffs
            .iter()
            .map(|&m| lv.q_mod_t_scaling.round_product(m))
            .collect(),
    );
    let mut out = Poly::zero(&lv.basis, Representation::Coefficient);
    for (i, limb) in out.data_mut().chunks_mut(n).enumerate() {
        let q = lv.basis.modulus(i);
        // m < t < q_i and correction < t < q_i: both are residues mod q_i.
        kernels::mul_scalar(q, limb, &pt.coeffs, lv.delta[i])?;
        kernels::add_assign(q, limb, &correction)?;
    }
    Ok(out)
}

/// round(t x / Q_l) mod t for phase coefficients x given by their residues
/// (`limbs[i]` modulo prime i of the level, one value per coefficient), by
/// the fixed-point sums of the module documentation. Wiped on drop.
pub(crate) fn decode_phase(
    ctx: &BfvContext,
    level: usize,
    limbs: &[&[u64]],
) -> Result<Zeroizing<Vec<u64>>> {
    let lv = ctx.level(level)?;
    let basis = &lv.basis;
    let t = ctx.plain_modulus();
    let len = limbs.first().map_or(0, |l| l.len());
    if limbs.len() != basis.len() || limbs.iter().any(|l| l.len() != len) {
        return Err(Error::InvalidParameters(format!(
            "a phase of {} limbs for a level of {} primes",
            limbs.len(),
            basis.len()
        )));
    }
    let mut int_part = Zeroizing::new(vec![0u64; len]);
    let mut frac = Zeroizing::new(vec![0u128; len]);
    let mut y = Zeroizing::new(vec![0u64; len]);
    for (i, limb) in limbs.iter().enumerate() {
        let q = basis.modulus(i);
        kernels::mul_scalar(q, &mut y, limb, basis.qhat_inv(i))?;
        let f = lv.t_over_q[i];
        let (f_hi, f_lo) = ((f >> 64) as u64, f as u64);
        for ((acc_int, acc_frac), &yj) in int_part.iter_mut().zip(frac.iter_mut()).zip(y.iter()) {
            let low = yj as u128 * f_lo as u128;
            let high = yj as u128 * f_hi as u128;
            let (s1, c1) = acc_frac.overflowing_add(low);
            let (s2, c2) = s1.overflowing_add((high as u64 as u128) << 64);
            *acc_frac = s2;
            *acc_int = acc_int
                .wrapping_add((high >> 64) as u64)
                .wrapping_add(c1 as u64 + c2 as u64);
        }
    }
    // x mod t without a division (whose time depends on the secret x):
    // for x < 2^63 (guaranteed by the parameter checks: x < (k + 2) t),
    // Barrett with floor((2^64 - 1) / t) is at most one short, removed by
    // one masked subtraction.
    let ratio = u64::MAX / t;
    let reduce = |x: u64| {
        let r = x.wrapping_sub(((x as u128 * ratio as u128) >> 64) as u64 * t);
        r.wrapping_sub(t & 0u64.wrapping_sub((r >= t) as u64))
    };
    Ok(Zeroizing::new(
        int_part
            .iter()
            .zip(frac.iter())
            .map(|(&i, &f)| reduce(reduce(i) + (f >> 127) as u64))
            .collect(),
    ))
}

impl SecretKey {
    /// Draws a fresh uniform ternary secret from the OS-seeded CSPRNG.
    pub fn generate(ctx: &Arc<BfvContext>) -> Result<SecretKey> {
        SecretKey::from_rlwe(ctx, RlweSecret::generate_for(&**ctx)?)
    }

    pub(crate) fn from_rlwe(ctx: &Arc<BfvContext>, secret: RlweSecret) -> Result<SecretKey> {
        Ok(SecretKey {
            ctx: ctx.clone(),
            secret,
        })
    }

    #[cfg(test)]
    pub(crate) fn from_ring(
        ctx: &Arc<BfvContext>,
        secret: triskel_ring::SecretKey,
    ) -> Result<SecretKey> {
        SecretKey::from_rlwe(ctx, RlweSecret::for_context(&**ctx, secret)?)
    }

    /// A public key for this secret.
    pub fn public_key(&self) -> Result<PublicKey> {
        Ok(PublicKey::generate(&self.ctx, &self.secret)?)
    }

    /// The relinearization key (needed after ciphertext multiplication).
    pub fn relin_key(&self) -> Result<RelinKey> {
        Ok(RelinKey::generate(&self.ctx, &self.secret)?)
    }

    /// Galois keys for row rotations by each of `steps` (positive = left)
    /// and, when `row_swap`, for swapping the two rows.
    pub fn galois_keys(&self, steps: &[i64], row_swap: bool) -> Result<GaloisKeys> {
        let elements = self
            .ctx
            .galois_elements(BfvContext::ROTATION_GENERATOR, steps, row_swap)?;
        Ok(GaloisKeys::generate(&self.ctx, &self.secret, &elements)?)
    }

    /// Galois keys for rotations by every power of two (both directions) and
    /// the row swap: any rotation is then a sum of at most log2(n) steps.
    pub fn galois_keys_power_of_two(&self) -> Result<GaloisKeys> {
        self.galois_keys(&power_of_two_steps(self.ctx.n() / 2), true)
    }

    /// Symmetric encryption: c = (-(a s) + e + D(m), a) with a from a fresh
    /// seed, which serialization stores instead of a (half the size).
    pub fn encrypt(&self, pt: &Plaintext) -> Result<Ciphertext> {
        check_same_context(&self.ctx, &pt.ctx)?;
        let level = self.ctx.max_level();
        let body = scaled_message(&self.ctx, pt, level)?;
        let (polys, seed) = self
            .secret
            .encrypt(body, self.ctx.noise(), &mut Prng::from_os()?)?;
        let noise = symmetric_fresh_noise_log2(self.ctx.noise().variance().sqrt());
        Ciphertext::new(&self.ctx, self.secret.id(), polys, level, noise, Some(seed))
            .checked("encrypt")
    }

    /// Ok when `ct` is under this key (parameter set and identity).
    pub(crate) fn check(&self, ct: &Ciphertext) -> Result<()> {
        Ok(check_encrypted(&self.ctx, self.secret.id(), ct)?)
    }

    /// The identity of this key, carried by every key and ciphertext made
    /// with it.
    pub fn id(&self) -> KeyId {
        self.secret.id()
    }

    /// x = c0 + c1 s (+ c2 s^2) in coefficient form.
    fn phase(&self, ct: &Ciphertext) -> Result<Zeroizing<Poly>> {
        self.check(ct)?;
        let mut x = self.secret.phase(&ct.polys)?;
        x.to_coefficient()?;
        Ok(x)
    }

    /// Decrypts: m = round(t x / Q) mod t (module documentation).
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        let x = self.phase(ct)?;
        let limbs: Vec<&[u64]> = (0..x.basis().len()).map(|i| x.limb(i)).collect();
        let coeffs = decode_phase(&self.ctx, ct.level, &limbs)?;
        Ok(Plaintext::from_reduced(&self.ctx, coeffs.to_vec()))
    }

    /// The invariant noise budget in bits, measured (like SEAL's): with
    /// v = [t x]_Q centered, log2(Q) - log2(||v||_inf) - 1. Decryption is
    /// correct while it is positive. Uses big integers: a diagnostic, not a
    /// hot path, for the key holder only (its result and its big-integer
    /// intermediates, which `num-bigint` does not wipe, are functions of
    /// the noise).
    pub fn noise_budget(&self, ct: &Ciphertext) -> Result<f64> {
        let x = self.phase(ct)?;
        let lv = self.ctx.level(ct.level)?;
        let basis = &lv.basis;
        let (n, t) = (self.ctx.n(), self.ctx.plain_modulus());
        let primes = basis.primes();
        let q_big = primes.iter().fold(BigUint::from(1u32), |a, &q| a * q);
        let half = &q_big >> 1u32;
        let qhat: Vec<BigUint> = primes.iter().map(|&q| &q_big / q).collect();
        let mut max_bits = 0f64;
        for j in 0..n {
            let mut v = BigUint::default();
            for (i, &q) in primes.iter().enumerate() {
                let m = basis.modulus(i);
                let y = m.mul_mod(m.mul_mod(x.limb(i)[j], t % q), basis.qhat_inv(i));
                v += &qhat[i] * y;
            }
            v %= &q_big;
            let centered = if v > half { &q_big - &v } else { v };
            max_bits = max_bits.max(big_log2(&centered));
        }
        Ok((lv.log2_q - max_bits - 1.0).max(0.0))
    }

    /// The secret's coefficients as an LWE key (dimension n, ternary): the
    /// key of [`Ciphertext::sample_extract`]'s output, from which the key
    /// holder builds transition (LWE key-switching) keys. Secret.
    pub fn lwe_key(&self) -> LweSecretKey {
        self.secret.lwe_key()
    }

    /// Decrypts an LWE ciphertext from [`Ciphertext::sample_extract`]:
    /// round(t phase / 2^64) mod t, by a 128-bit product (no division on the
    /// secret phase). One extracted under another secret key is refused
    /// with `Error::Ring(KeyMismatch)`.
    pub fn decrypt_lwe(&self, ct: &LweCiphertext) -> Result<u64> {
        let phase = self.lwe_key().phase(ct)?;
        let t = self.ctx.plain_modulus() as u128;
        let m = ((phase as u128 * t + (1u128 << 63)) >> 64) as u64;
        // m <= t: the only value to fold is t itself (masked, no branch).
        Ok(m & 0u64.wrapping_sub((m != t as u64) as u64))
    }

    /// The parameters this key belongs to.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }
}

/// log2(x) of a big integer (0 for 0).
fn big_log2(x: &BigUint) -> f64 {
    let bits = x.bits();
    if bits == 0 {
        return 0.0;
    }
    let shift = bits.saturating_sub(53);
    let top: BigUint = x >> shift;
    let top = top.iter_u64_digits().next().unwrap_or(0) as f64;
    top.log2() + shift as f64
}

/// Public-key encryption: c = (b u + e0 + D(m), a u + e1).
pub(crate) fn encrypt_public(pk: &PublicKey, pt: &Plaintext) -> Result<Ciphertext> {
    let ctx = pk.context();
    check_same_context(ctx, &pt.ctx)?;
    let level = ctx.max_level();
    encrypt_phase(pk, scaled_message(ctx, pt, level)?, level, None)
}

/// A fresh encryption of zero under `pk` at `level`; with
/// `flood_log2 = Some(f)`, its c0 also carries noise uniform in
/// [-2^f, 2^f] ([`triskel_ring::sampling::sample_flooding`]).
pub(crate) fn encrypt_zero(
    pk: &PublicKey,
    level: usize,
    flood_log2: Option<u32>,
) -> Result<Ciphertext> {
    let basis = &pk.context().level(level)?.basis;
    let c0 = match flood_log2 {
        Some(f) => {
            let mut rng = Prng::from_os()?;
            triskel_ring::sampling::sample_flooding(basis, f, &mut rng)?
        }
        None => Poly::zero(basis, Representation::Coefficient),
    };
    encrypt_phase(pk, c0, level, flood_log2)
}

/// (b u + e0 + c0, a u + e1) at `level` for c0 in coefficient form (the
/// scaled message, or flooding noise of 2^`flood_log2`, or zero).
fn encrypt_phase(
    pk: &PublicKey,
    c0: Poly,
    level: usize,
    flood_log2: Option<u32>,
) -> Result<Ciphertext> {
    let ctx = pk.context();
    let polys = pk.key().encrypt(c0, ctx.noise(), &mut Prng::from_os()?)?;
    let mut noise = public_fresh_noise_log2(ctx.n(), ctx.noise().variance().sqrt());
    if let Some(f) = flood_log2 {
        // Uniform on [-B, B]: standard deviation B / sqrt(3).
        noise = crate::ciphertext::add_std(noise, f as f64 - 0.5 * 3f64.log2());
    }
    Ciphertext::new(ctx, pk.id(), polys.into(), level, noise, None).checked("encrypt")
}
