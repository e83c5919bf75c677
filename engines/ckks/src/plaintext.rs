//! Plaintexts: encoded slot vectors at a level and scale, kept in NTT form.
//!
//! Every plaintext carries a *declared* bound on the magnitude of its slot
//! values: the caller states it ([`DEFAULT_BOUND`] = 1 unless given), the
//! encoder refuses values above it, and everything the ciphertexts built
//! from it carry or serialize (the message bound of the noise estimate)
//! derives from the declared bound only, never from the values: a
//! ciphertext does not reveal the magnitude of what it encrypts.

use std::sync::Arc;

use triskel_kernels::Modulus;
use triskel_ring::{Poly, Representation, RnsBasis};
use zeroize::{Zeroize, Zeroizing};

use crate::context::CkksContext;
use crate::encoder::Complex;
use crate::error::{Error, Result};
use crate::noise::{encoding_error, Noise};

/// An encoded vector: the polynomial round(scale * m) at a level, NTT form.
/// Its polynomial is wiped on drop (it may be a decryption's phase m + e).
#[derive(Clone, Debug)]
pub struct Plaintext {
    pub(crate) ctx: Arc<CkksContext>,
    pub(crate) poly: Poly,
    pub(crate) level: usize,
    pub(crate) scale: f64,
    /// Bounds on the encoded values and the rounding error (scaled units).
    pub(crate) noise: Noise,
}

impl Drop for Plaintext {
    fn drop(&mut self) {
        self.poly.zeroize();
    }
}

/// x mod q for a signed 128-bit x (no division, no branch on x: it is a
/// message coefficient). |x| mod q is negated, or not, by a select.
pub(crate) fn reduce_i128(m: &Modulus, x: i128) -> u64 {
    let r = m.reduce_u128(x.unsigned_abs());
    let negative = 0u64.wrapping_sub((x < 0) as u64);
    r ^ ((r ^ m.neg_mod(r)) & negative)
}

/// The polynomial with integer coefficients `coeffs` in `basis`, NTT form.
pub(crate) fn poly_from_i128(basis: &Arc<RnsBasis>, coeffs: &[i128]) -> Result<Poly> {
    let n = basis.n();
    let mut data = vec![0u64; basis.len() * n];
    for (i, limb) in data.chunks_mut(n).enumerate() {
        let m = basis.modulus(i);
        for (o, &c) in limb.iter_mut().zip(coeffs) {
            *o = reduce_i128(m, c);
        }
    }
    let mut p = Poly::from_limbs(basis, Representation::Coefficient, data)?;
    p.to_ntt()?;
    Ok(p)
}

/// The encoding of `values` at `scale` in any `basis` of the ring (NTT
/// form): a public operand for products outside the ciphertext basis (the
/// linear transforms' diagonals in Q_l P).
pub(crate) fn encode_in(
    ctx: &CkksContext,
    values: &[Complex],
    scale: f64,
    basis: &Arc<RnsBasis>,
) -> Result<Poly> {
    poly_from_i128(basis, &ctx.encoder.encode(values, scale)?)
}

/// The bound on slot magnitudes that [`Plaintext::from_real`] declares:
/// values in [-1, 1], the usual normalization of CKKS inputs.
pub const DEFAULT_BOUND: f64 = 1.0;

/// Checks a declared bound: finite, positive, and representable at `scale`
/// (bound x scale below 2^120, the encoder's coefficient limit).
fn check_bound(bound: f64, scale: f64) -> Result<()> {
    if !(bound.is_finite() && bound > 0.0 && bound * scale < 2f64.powi(120)) {
        return Err(Error::Encoding(format!(
            "the declared bound {bound} must be finite, positive and fit the scale"
        )));
    }
    Ok(())
}

/// Checks a scale: finite, at least 1 and at most the level's limit.
pub(crate) fn check_scale(ctx: &CkksContext, level: usize, scale: f64) -> Result<()> {
    let max = ctx.max_scale(level)?;
    if !scale.is_finite() || scale < 1.0 || scale > max {
        return Err(Error::ScaleOverflow {
            scale_log2: scale.log2(),
            max_log2: max.log2(),
        });
    }
    Ok(())
}

impl Plaintext {
    /// Encodes up to n/2 complex values at `level` with `scale`, under the
    /// caller's public `bound` on their magnitudes (module documentation):
    /// a value with |z| > bound is refused.
    pub fn encode(
        ctx: &Arc<CkksContext>,
        values: &[Complex],
        level: usize,
        scale: f64,
        bound: f64,
    ) -> Result<Plaintext> {
        check_scale(ctx, level, scale)?;
        check_bound(bound, scale)?;
        // Does not say which value or by how much: the values are secret.
        if values.iter().any(|z| z.abs().is_nan() || z.abs() > bound) {
            return Err(Error::Encoding(format!(
                "a value is above the declared bound {bound} (or not finite)"
            )));
        }
        let coeffs = ctx.encoder.encode(values, scale)?;
        Plaintext::from_integers(ctx, &coeffs, level, scale, bound)
    }

    /// The plaintext of integer coefficients at `scale`, whose slots are at
    /// most `bound` in magnitude (before scaling).
    fn from_integers(
        ctx: &Arc<CkksContext>,
        coeffs: &[i128],
        level: usize,
        scale: f64,
        bound: f64,
    ) -> Result<Plaintext> {
        let basis = &ctx.level(level)?.basis;
        Ok(Plaintext {
            ctx: ctx.clone(),
            poly: poly_from_i128(basis, coeffs)?,
            level,
            scale,
            noise: Noise::new(bound * scale, encoding_error(ctx)),
        })
    }

    /// Encodes up to n/2 real values at `level` with `scale` under the
    /// declared `bound` (see [`encode`](Self::encode)).
    pub fn encode_real(
        ctx: &Arc<CkksContext>,
        values: &[f64],
        level: usize,
        scale: f64,
        bound: f64,
    ) -> Result<Plaintext> {
        let values: Vec<Complex> = values.iter().map(|&v| Complex::from(v)).collect();
        Plaintext::encode(ctx, &values, level, scale, bound)
    }

    /// Encodes real values in [-1, 1] ([`DEFAULT_BOUND`]) at the top level
    /// with the default scale.
    pub fn from_real(ctx: &Arc<CkksContext>, values: &[f64]) -> Result<Plaintext> {
        Plaintext::encode_real(
            ctx,
            values,
            ctx.max_level(),
            ctx.default_scale(),
            DEFAULT_BOUND,
        )
    }

    /// Coefficient encoding: the polynomial with coefficients
    /// round(scale v_i) (at most n values; missing ones are zero). Products
    /// then act as polynomial products, and each coefficient can be
    /// sample-extracted on its own ([`Ciphertext::sample_extract`](crate::Ciphertext::sample_extract)).
    /// `bound` is the caller's public bound on sum_i |v_i| (which bounds
    /// every slot); values above it are refused.
    pub fn from_coefficients(
        ctx: &Arc<CkksContext>,
        values: &[f64],
        level: usize,
        scale: f64,
        bound: f64,
    ) -> Result<Plaintext> {
        check_scale(ctx, level, scale)?;
        check_bound(bound, scale)?;
        if values.len() > ctx.n() {
            return Err(Error::Encoding(format!(
                "{} coefficients given, at most n = {} fit",
                values.len(),
                ctx.n()
            )));
        }
        let mut coeffs = Zeroizing::new(vec![0i128; ctx.n()]);
        for (c, &v) in coeffs.iter_mut().zip(values) {
            let x = (v * scale).round();
            if !x.is_finite() || x.abs() >= 2f64.powi(120) {
                return Err(Error::Encoding(
                    "a coefficient times the scale does not fit".into(),
                ));
            }
            *c = x as i128;
        }
        // A slot is the polynomial evaluated at a root of unity: at most the
        // sum of the coefficients' magnitudes.
        if values.iter().map(|v| v.abs()).sum::<f64>() > bound {
            return Err(Error::Encoding(format!(
                "the coefficients' magnitudes sum above the declared bound {bound}"
            )));
        }
        Plaintext::from_integers(ctx, &coeffs, level, scale, bound)
    }

    /// The n/2 slot values.
    pub fn decode(&self) -> Result<Vec<Complex>> {
        let mut x = Zeroizing::new(self.poly.clone());
        x.to_coefficient()?;
        let coeffs = self.ctx.level(self.level)?.centered_coefficients(&x)?;
        Ok(self.ctx.encoder.decode(&coeffs, self.scale))
    }

    /// The real parts of the n/2 slot values.
    pub fn decode_real(&self) -> Result<Vec<f64>> {
        // The imaginary parts of real data are the error's image: wiped.
        let slots = Zeroizing::new(self.decode()?);
        Ok(slots.iter().map(|z| z.re).collect())
    }

    /// The level.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The parameters this plaintext belongs to.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }
}
