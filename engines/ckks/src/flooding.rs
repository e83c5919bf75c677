//! Decryption with noise flooding, for decryptions that are shared
//! (IND-CPA-D).
//!
//! A plain CKKS decryption returns m + e, and e is a function of the secret
//! key: Li and Micciancio (EUROCRYPT 2021) recover the key from a few such
//! decryptions. Flooded decryption adds, in the coefficient domain modulo
//! Q_l, a fresh rounded Gaussian of standard deviation
//!
//! ```text
//! sigma = sqrt(24 N alpha) 2^(s / 2) B
//! ```
//!
//! (Li, Micciancio, Schultz and Sorrell, "Securing approximate homomorphic
//! encryption using differential privacy", CRYPTO 2022, section 4.4, as
//! OpenFHE's developers state it; OpenFHE's NOISE_FLOODING_DECRYPT uses
//! sqrt(12 alpha) 2^(s / 2) t with t measured in the decoded slots), where N is the ring
//! degree, B bounds the infinity norm of the error polynomial e of every
//! decrypted ciphertext (coefficient domain, integer units), alpha bounds
//! the number of decryptions per key and s is the statistical security: an
//! adversary who sees alpha flooded decryptions gains at most 2^-s in
//! advantage.
//!
//! Alpha is checked here: every [`SecretKey`] counts its flooded
//! decryptions ([`SecretKey::flooded_decryptions`]), and one that would
//! take the total above alpha is refused with [`Error::FloodingExhausted`]
//! before anything is decrypted. Floods under one key may use different
//! [`Flooding`] values: the proof covers T decryptions each flooded at
//! least as wide as sigma for alpha = T (a wider flood is a narrower one
//! plus independent noise the adversary could add itself, so it reveals no
//! more). A key therefore keeps the least alpha of its floods, and a flood
//! is allowed while the total, itself included, stays within the least
//! alpha of all of them: after a flood for alpha = 1 the key floods no
//! more, whatever alpha the next one names (checking only the alpha named
//! now would let a flood made to be the only one be followed by others).
//! The advantage is then at most 2^-s for the least s among the floods.
//! The count lives in memory only: a key loaded from bytes starts at zero,
//! so a key holder who stores and reloads a key carries its count across.
//!
//! B stays the caller's guarantee; nothing here can check it.
//! B comes from a trial run ([`SecretKey::noise_bound_log2`]): the same
//! circuit on data the caller knows, ideally under a separate key pair. An
//! estimate measured on the real ciphertexts under the real key is itself a
//! function of their secret error, and so leaks what flooding should hide;
//! the trial's B holds for the real run when the circuit and the parameters
//! (level, scale) are the same and the data within the same bounds.

use triskel_ring::sampling::{sample_wide_gaussian, WIDE_GAUSSIAN_MAX_SIGMA, WIDE_GAUSSIAN_TAIL};
use triskel_ring::{Poly, Prng, Representation};
use zeroize::Zeroizing;

use crate::ciphertext::Ciphertext;
use crate::encoder::Complex;
use crate::error::{Error, Result};
use crate::keys::SecretKey;
use crate::noise::{Noise, TAIL};
use crate::plaintext::{check_scale, poly_from_i128, Plaintext};

/// The statistical security OpenFHE uses by default, in bits.
pub const DEFAULT_STATISTICAL_SECURITY: u32 = 30;

/// The parameters of a flooded decryption (module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flooding {
    /// log2 of B, the bound on the infinity norm of the decrypted
    /// ciphertexts' error polynomial (integer units at their scale), as
    /// [`SecretKey::noise_bound_log2`] measures it on a trial run; at
    /// least 0.
    pub noise_bound_log2: f64,
    /// s: an adversary's advantage is at most 2^-s (plus the sampler's tail
    /// cut, alpha N 2^-65, which [`Flooding::sigma`] keeps below 2^-s by
    /// refusing s above 65 - log2(N alpha): 52 at N = 8192, alpha = 1).
    /// Default 30 (OpenFHE's).
    pub statistical_security: u32,
    /// alpha: the number of flooded decryptions per key that the security
    /// statement covers, enforced by the key's count (module
    /// documentation). Default 1; at least 1.
    pub decryptions: u64,
}

impl Flooding {
    /// Flooding of errors up to 2^`noise_bound_log2` with the defaults
    /// s = 30 and alpha = 1.
    pub fn new(noise_bound_log2: f64) -> Flooding {
        Flooding {
            noise_bound_log2,
            statistical_security: DEFAULT_STATISTICAL_SECURITY,
            decryptions: 1,
        }
    }

    /// The standard deviation sqrt(24 N alpha) 2^(s / 2) B for ring degree
    /// `n`; an error for a bound that is not a finite number >= 0, s outside
    /// 1..=128 or alpha = 0, and for s above 65 - log2(N alpha), where the
    /// sampler's tail cut (2^-64 per pair of normals, N / 2 pairs per
    /// flood) would cost more than 2^-s over alpha floods.
    pub fn sigma(&self, n: usize) -> Result<f64> {
        let Flooding {
            noise_bound_log2: b,
            statistical_security: s,
            decryptions: alpha,
        } = *self;
        if !(b.is_finite() && b >= 0.0 && (1..=128).contains(&s) && alpha > 0) {
            return Err(Error::InvalidParameters(format!(
                "flooding needs a finite noise bound log2 >= 0 (got {b}), statistical \
                 security in 1..=128 (got {s}) and at least one decryption (got {alpha})"
            )));
        }
        let floods_log2 = (n as f64 * alpha as f64).log2();
        if s as f64 > 65.0 - floods_log2 {
            return Err(Error::InvalidParameters(format!(
                "statistical security {s} above 65 - log2(N alpha) = {:.1}: the Gaussian \
                 sampler's tail cut (2^-64 per pair of normals) over {alpha} flood(s) of N = {n} \
                 coefficients would exceed 2^-{s}",
                65.0 - floods_log2
            )));
        }
        Ok((24.0 * n as f64 * alpha as f64).sqrt() * (s as f64 / 2.0 + b).exp2())
    }
}

impl SecretKey {
    /// The flooded decryptions made under this key in memory (a key loaded
    /// from bytes starts at zero: module documentation).
    pub fn flooded_decryptions(&self) -> u64 {
        self.floods.done()
    }

    /// How many more decryptions flooded with `flooding` this key allows:
    /// the least alpha of its floods and of `flooding`, less the floods made.
    pub fn flooded_decryptions_left(&self, flooding: &Flooding) -> u64 {
        self.floods.left(flooding.decryptions)
    }

    /// Counts one flood for `alpha` on the key's ledger
    /// ([`triskel_ring::FloodLedger`]), or refuses it when the key's total
    /// would exceed its least alpha.
    fn count_flood(&self, alpha: u64) -> Result<()> {
        self.floods.count(alpha).map_err(|e| match e {
            triskel_ring::Error::FloodingExhausted { done, alpha } => Error::FloodingExhausted {
                done,
                asked: 1,
                alpha,
            },
            other => other.into(),
        })
    }

    /// log2 of the infinity norm of the error polynomial
    /// e = phase(ct) - encode(expected at ct's scale), exact in the
    /// coefficient domain (integer units; at least 0: an error below one
    /// unit counts as one). `expected` holds what `ct` should encrypt, one
    /// value per slot (all n/2 of them). For a trial run: see the module
    /// documentation for why under a separate key pair.
    pub fn noise_bound_log2(&self, ct: &Ciphertext, expected: &[Complex]) -> Result<f64> {
        // The phase checks the ciphertext's key first.
        let mut error = self.phase(ct)?;
        if expected.len() != self.ctx.slots() {
            return Err(Error::Encoding(format!(
                "{} expected values for {} slots: give one per slot",
                expected.len(),
                self.ctx.slots()
            )));
        }
        check_scale(&self.ctx, ct.level, ct.scale)?;
        let level = self.ctx.level(ct.level)?;
        let encoded = poly_from_i128(&level.basis, &self.ctx.encoder.encode(expected, ct.scale)?)?;
        error.sub_assign(&encoded)?;
        error.to_coefficient()?;
        let coeffs = level.centered_coefficients(&error)?;
        Ok(coeffs.iter().fold(1.0, |m: f64, c| m.max(c.abs())).log2())
    }

    /// Decrypts with noise flooding (module documentation): the phase plus a
    /// fresh rounded Gaussian of [`Flooding::sigma`], from the OS-seeded
    /// CSPRNG, modulo Q_l. Refused with [`Error::MessageOverflow`] when the
    /// ciphertext's message bound plus B plus the flooding's tail
    /// ([`WIDE_GAUSSIAN_TAIL`] sigma + 1) could reach Q_l / 2 (the flooded
    /// phase could wrap); refused with [`Error::InvalidParameters`] when
    /// sigma is above the sampler's [`WIDE_GAUSSIAN_MAX_SIGMA`] (2^59, where
    /// its samples would no longer fit 64 bits); refused with
    /// [`Error::FloodingExhausted`] when the key's flooded decryptions would
    /// exceed alpha (module documentation: the least
    /// [`Flooding::decryptions`] of the key's floods and of this one). A
    /// decryption that passes these checks counts one against the key, also
    /// when it fails later (a CSPRNG error): nothing refused is decrypted.
    ///
    /// The price is precision: each slot gains an error of standard
    /// deviation sqrt(N / 2) sigma / scale in its real and imaginary parts
    /// (about 2^-14 with N = 8192, s = 30, B = 2^6 and scale 2^50; useless at
    /// scale 2^40), which the returned plaintext's noise bound includes.
    pub fn decrypt_flooded(&self, ct: &Ciphertext, flooding: &Flooding) -> Result<Plaintext> {
        self.check(ct)?;
        let n = self.ctx.n();
        let sigma = flooding.sigma(n)?;
        if sigma > WIDE_GAUSSIAN_MAX_SIGMA {
            return Err(Error::InvalidParameters(format!(
                "flooding sigma 2^{:.1} (B = 2^{}, s = {}, alpha = {}) is above the sampler's 2^59",
                sigma.log2(),
                flooding.noise_bound_log2,
                flooding.statistical_security,
                flooding.decryptions
            )));
        }
        let level = self.ctx.level(ct.level)?;
        let needed =
            ct.noise.message + flooding.noise_bound_log2.exp2() + WIDE_GAUSSIAN_TAIL * sigma + 1.0;
        if needed >= (level.log2_q - 1.0).exp2() {
            return Err(Error::MessageOverflow {
                needed_log2: needed.log2(),
                q_log2: level.log2_q,
            });
        }
        self.count_flood(flooding.decryptions)?;
        let flood = sample_wide_gaussian(n, sigma, &mut Prng::from_os()?)?;
        let mut flood = Zeroizing::new(Poly::from_signed(
            &level.basis,
            &flood,
            Representation::Coefficient,
        )?);
        flood.to_ntt()?;
        let mut x = self.phase(ct)?;
        x.add_assign(&flood)?;
        // Complex slot values of variance N sigma^2, bounded like the
        // engine's fresh errors (6 standard deviations).
        let flood_error = TAIL * (n as f64).sqrt() * sigma;
        Ok(Plaintext {
            ctx: self.ctx.clone(),
            poly: (*x).clone(),
            level: ct.level,
            scale: ct.scale,
            noise: Noise::new(ct.noise.message, ct.noise.error + flood_error),
        })
    }

    /// [`decrypt_flooded`](Self::decrypt_flooded), decoded to the real parts
    /// of the n/2 slots.
    pub fn decrypt_flooded_real(&self, ct: &Ciphertext, flooding: &Flooding) -> Result<Vec<f64>> {
        self.decrypt_flooded(ct, flooding)?.decode_real()
    }
}
