//! Ciphertexts and homomorphic operations.
//!
//! A ciphertext at level l is (c0, c1[, c2]) in R_{Q_l}, NTT form, with
//! c0 + c1 s (+ c2 s^2) = round(scale * m) + e (mod Q_l); it carries its level
//! and its scale (an f64 tracked exactly as operations multiply and divide
//! it).
//!
//! Matching: binary operations bring the operand at the higher level down to
//! the other's level and scale ([`Ciphertext::adjust`]): dropping primes when
//! the scales already agree, otherwise multiplying by the integer
//! round(target * q / scale) and rescaling by q, which lands on the target
//! scale within a relative 2^-40. Two scales "agree" when they differ by a
//! relative 2^-30 or less (the error this lets through is below 1e-9 of the
//! values). At equal levels with different scales there is nothing to trade
//! and the operation returns [`Error::ScaleMismatch`].
//!
//! Every result's scale is checked against the level's limit Q_l / 4
//! ([`CkksContext::max_scale`]): [`Error::ScaleOverflow`] instead of garbage.
//!
//! Every ciphertext carries a noise estimate (bounds on its message and its
//! error in the slots, see the `noise` module for the formulas and their
//! sources): [`Ciphertext::noise_estimate_log2`] and
//! [`Ciphertext::precision_bits`]. An operation whose result's estimated
//! error would reach its scale returns [`Error::NoiseExhausted`].

use std::borrow::Cow;
use std::sync::Arc;

use triskel_ring::{Addend, KeyId, LazyRlwe, LweCiphertext, Poly, Seed};

use crate::context::CkksContext;
use crate::error::{Error, Result};
use crate::keys::{
    check_ciphertext, check_same_context, conjugation_element, encrypt_zero, rotation_element,
    GaloisKeys, PublicKey, RelinKey,
};
use crate::noise::{
    digit_error, key_switch_error, lazy_finish_error, lazy_switch_error, rounding_error, Noise,
};
use crate::plaintext::{check_scale, reduce_i128, Plaintext};
use triskel_ring::rlwe::RlweCiphertext;

/// Largest relative difference of two scales treated as equal.
const SCALE_TOLERANCE: f64 = 1.0 / (1u64 << 30) as f64;

/// A CKKS ciphertext (see the module documentation), with the identity of
/// the secret key it is encrypted under: operations refuse to combine it
/// with a ciphertext or key of another secret key
/// ([`triskel_ring::Error::KeyMismatch`]), and results carry it on.
/// Dereferences to its [`RlweCiphertext`]: components, level, key identity.
#[derive(Clone, Debug)]
pub struct Ciphertext {
    pub(crate) rlwe: RlweCiphertext<CkksContext>,
    pub(crate) scale: f64,
    pub(crate) noise: Noise,
}

impl std::ops::Deref for Ciphertext {
    type Target = RlweCiphertext<CkksContext>;

    fn deref(&self) -> &Self::Target {
        &self.rlwe
    }
}

/// True when two scales agree within [`SCALE_TOLERANCE`].
fn same_scale(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() <= SCALE_TOLERANCE
}

impl Ciphertext {
    pub(crate) fn new(
        ctx: &Arc<CkksContext>,
        key_id: KeyId,
        polys: Vec<Poly>,
        level: usize,
        scale: f64,
        noise: Noise,
        seed: Option<Seed>,
    ) -> Ciphertext {
        let rlwe = RlweCiphertext::new(ctx, key_id, polys, level, seed);
        Ciphertext { rlwe, scale, noise }
    }

    /// A result of an operation, with its scale and noise checked.
    pub(crate) fn derived(
        &self,
        polys: Vec<Poly>,
        level: usize,
        scale: f64,
        noise: Noise,
    ) -> Result<Ciphertext> {
        check_scale(&self.ctx, level, scale)?;
        let noise = noise.check(scale, self.ctx.level(level)?.log2_q)?;
        Ok(Ciphertext::new(
            &self.ctx,
            self.key_id,
            polys,
            level,
            scale,
            noise,
            None,
        ))
    }

    /// log2 of the estimated bound on the error of every slot, in scaled
    /// units (compare with log2 of the scale): the decrypted values are
    /// within 2^noise_estimate_log2 / scale of the exact result.
    pub fn noise_estimate_log2(&self) -> f64 {
        self.noise.error.log2()
    }

    /// Estimated precision in bits: log2(scale) - [`noise_estimate_log2`](Self::noise_estimate_log2),
    /// so that the absolute error of every slot is at most 2^-precision_bits.
    pub fn precision_bits(&self) -> f64 {
        self.scale.log2() - self.noise_estimate_log2()
    }

    /// Lowers the message bound to `max_value` (in value units) when that is
    /// tighter: for results whose magnitude is known by other means (a
    /// Chebyshev polynomial of a bounded input).
    pub(crate) fn bound_message(&mut self, max_value: f64) {
        self.noise.message = self.noise.message.min(max_value * self.scale);
    }

    /// The bound on the magnitude of the slot values (value units).
    pub(crate) fn message_bound(&self) -> f64 {
        self.noise.message / self.scale
    }

    /// log2 of the estimated bound on the magnitude of the slot values,
    /// in scaled units.
    pub fn message_bound_log2(&self) -> f64 {
        self.noise.message.log2()
    }

    /// The scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The same ciphertext with the primes above `level` dropped (scale unchanged).
    pub fn drop_to_level(&self, level: usize) -> Result<Ciphertext> {
        if level > self.level {
            return Err(Error::LevelMismatch {
                left: self.level,
                right: level,
            });
        }
        if level == self.level {
            return Ok(self.clone());
        }
        let basis = &self.ctx.level(level)?.basis;
        let polys = self
            .polys
            .iter()
            .map(|p| p.restrict(basis))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(Ciphertext::new(
            &self.ctx,
            self.key_id,
            polys,
            level,
            self.scale,
            self.noise,
            None,
        ))
    }

    /// The same values at a lower or equal `level` with (within a relative
    /// 2^-40) the given `scale` (module documentation).
    pub fn adjust(&self, level: usize, scale: f64) -> Result<Ciphertext> {
        let mismatch = || Error::ScaleMismatch {
            left_log2: self.scale.log2(),
            right_log2: scale.log2(),
        };
        if same_scale(self.scale, scale) || level > self.level {
            return self.drop_to_level(level);
        }
        if level == self.level {
            return Err(mismatch());
        }
        let above = self.drop_to_level(level + 1)?;
        let q = self.ctx.prime(level + 1)? as f64;
        let factor = (scale * q / self.scale).round();
        if !(1.0..(1u64 << 62) as f64).contains(&factor) {
            return Err(mismatch());
        }
        let mut polys = above.polys.clone();
        for p in &mut polys {
            p.mul_small_assign(factor as i64)?;
        }
        above
            .derived(
                polys,
                level + 1,
                self.scale * factor,
                self.noise.times(factor),
            )?
            .rescale()
    }

    /// Both operands at one level and scale (the lower level wins): the
    /// first as a new ciphertext (the result to be), the second copied only
    /// when it had to be adjusted.
    fn matched<'a>(&self, other: &'a Ciphertext) -> Result<(Ciphertext, Cow<'a, Ciphertext>)> {
        self.check_pair(other)?;
        if self.level > other.level {
            Ok((self.adjust(other.level, other.scale)?, Cow::Borrowed(other)))
        } else if other.level > self.level {
            Ok((
                self.clone(),
                Cow::Owned(other.adjust(self.level, self.scale)?),
            ))
        } else if same_scale(self.scale, other.scale) {
            Ok((self.clone(), Cow::Borrowed(other)))
        } else {
            Err(Error::ScaleMismatch {
                left_log2: self.scale.log2(),
                right_log2: other.scale.log2(),
            })
        }
    }

    fn combine(
        &self,
        other: &Ciphertext,
        f: impl Fn(&mut Poly, &Poly) -> triskel_ring::Result<()>,
    ) -> Result<Ciphertext> {
        let (mut a, b) = self.matched(other)?;
        if b.polys.len() > a.polys.len() {
            let extra = b.polys[a.polys.len()..].iter().map(|p| {
                let mut z = p.clone();
                z.data_mut().fill(0);
                z
            });
            a.rlwe.polys.extend(extra.collect::<Vec<_>>());
        }
        for (x, y) in a.rlwe.polys.iter_mut().zip(&b.polys) {
            f(x, y)?;
        }
        // b's values are read at a's scale: a relative error |a/b - 1|.
        let drift = b.noise.message * (a.scale / b.scale - 1.0).abs();
        let noise = (a.noise + b.noise).plus_error(drift);
        let polys = std::mem::take(&mut a.rlwe.polys);
        a.derived(polys, a.level, a.scale, noise)
    }

    /// This ciphertext plus a fresh public-key encryption of zero at its
    /// level and scale: the same message under new randomness, so that the
    /// ciphertext no longer shows the randomness of the computation that
    /// made it (its error grows by a fresh encryption's; this is not a
    /// flood, which would also hide the error's size).
    pub fn rerandomize(&self, pk: &PublicKey) -> Result<Ciphertext> {
        check_ciphertext(pk.context(), pk.id(), self)?;
        self.add(&encrypt_zero(pk, self.level, self.scale)?)
    }

    /// self + other (levels and scales matched automatically).
    pub fn add(&self, other: &Ciphertext) -> Result<Ciphertext> {
        self.combine(other, Poly::add_assign)
    }

    /// self - other (levels and scales matched automatically).
    pub fn sub(&self, other: &Ciphertext) -> Result<Ciphertext> {
        self.combine(other, Poly::sub_assign)
    }

    /// -self.
    pub fn neg(&self) -> Result<Ciphertext> {
        let polys = self
            .polys
            .iter()
            .map(Poly::neg)
            .collect::<std::result::Result<Vec<_>, _>>()?;
        self.derived(polys, self.level, self.scale, self.noise)
    }

    /// The plaintext at this ciphertext's level (it must not be below it) and
    /// scale (within the tolerance), for additions.
    fn plain_for_add(&self, pt: &Plaintext) -> Result<Poly> {
        check_same_context(&self.ctx, &pt.ctx)?;
        if pt.level < self.level {
            return Err(Error::LevelMismatch {
                left: self.level,
                right: pt.level,
            });
        }
        if !same_scale(self.scale, pt.scale) {
            return Err(Error::ScaleMismatch {
                left_log2: self.scale.log2(),
                right_log2: pt.scale.log2(),
            });
        }
        Ok(pt.poly.restrict(&self.ctx.level(self.level)?.basis)?)
    }

    /// self + pt (same scale; the plaintext at this level or above).
    pub fn add_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        let p = self.plain_for_add(pt)?;
        let mut polys = self.polys.clone();
        polys[0].add_assign(&p)?;
        self.derived(polys, self.level, self.scale, self.noise + pt.noise)
    }

    /// self - pt (same scale; the plaintext at this level or above).
    pub fn sub_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        let p = self.plain_for_add(pt)?;
        let mut polys = self.polys.clone();
        polys[0].sub_assign(&p)?;
        self.derived(polys, self.level, self.scale, self.noise + pt.noise)
    }

    /// self * pt, scale multiplied (rescale afterwards). The plaintext must be
    /// at this level or above.
    pub fn mul_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        check_same_context(&self.ctx, &pt.ctx)?;
        if pt.level < self.level {
            return Err(Error::LevelMismatch {
                left: self.level,
                right: pt.level,
            });
        }
        let p = pt.poly.restrict(&self.ctx.level(self.level)?.basis)?;
        let polys = self
            .polys
            .iter()
            .map(|c| c.mul(&p))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let noise = self.noise * pt.noise;
        self.derived(polys, self.level, self.scale * pt.scale, noise)
    }

    /// self + c for a real constant c (added to every slot).
    pub fn add_const(&self, c: f64) -> Result<Ciphertext> {
        let v = (c * self.scale).round();
        if !v.is_finite() || v.abs() >= 2f64.powi(120) {
            return Err(Error::Encoding(format!(
                "constant {c:e} is too large (times the scale, at most 2^120)"
            )));
        }
        // A constant polynomial is the same value in every NTT slot.
        let mut polys = self.polys.clone();
        let basis = polys[0].basis().clone();
        let n = basis.n();
        for (i, limb) in polys[0].data_mut().chunks_mut(n).enumerate() {
            let m = basis.modulus(i);
            let r = reduce_i128(m, v as i128);
            limb.iter_mut().for_each(|x| *x = m.add_mod(*x, r));
        }
        // The rounding of c * scale adds |v - c scale| <= 1/2 to every slot.
        let noise = self.noise + Noise::new(v.abs(), (v - c * self.scale).abs());
        self.derived(polys, self.level, self.scale, noise)
    }

    /// self * round(c * const_scale): every slot times c, scale multiplied by
    /// `const_scale` (rescale afterwards).
    pub fn mul_const(&self, c: f64, const_scale: f64) -> Result<Ciphertext> {
        let v = (c * const_scale).round();
        if !v.is_finite() || v.abs() >= 2f64.powi(62) {
            return Err(Error::Encoding(format!(
                "constant {c} at scale 2^{:.1} does not fit 62 bits",
                const_scale.log2()
            )));
        }
        let mut polys = self.polys.clone();
        for p in &mut polys {
            p.mul_small_assign(v as i64)?;
        }
        // v = c const_scale + d with |d| <= 1/2: the message times d is error.
        let rounding = (v - c * const_scale).abs();
        let noise = self
            .noise
            .times(v)
            .plus_error(self.noise.message * rounding);
        self.derived(polys, self.level, self.scale * const_scale, noise)
    }

    /// self * c then rescale, with c encoded at scale q_l so that the result
    /// keeps this ciphertext's scale exactly (one level used).
    pub fn mul_const_rescale(&self, c: f64) -> Result<Ciphertext> {
        if self.level == 0 {
            return Err(Error::LowestLevel);
        }
        let q = self.ctx.prime(self.level)? as f64;
        self.mul_const(c, q)?.rescale()
    }

    /// self * k for an integer k: exact, no level used.
    pub fn mul_int(&self, k: i64) -> Result<Ciphertext> {
        let mut polys = self.polys.clone();
        for p in &mut polys {
            p.mul_small_assign(k)?;
        }
        self.derived(polys, self.level, self.scale, self.noise.times(k as f64))
    }

    /// This ciphertext at `level`, copied only when primes must be dropped.
    fn at_level(&self, level: usize) -> Result<Cow<'_, Ciphertext>> {
        if level == self.level {
            return Ok(Cow::Borrowed(self));
        }
        Ok(Cow::Owned(self.drop_to_level(level)?))
    }

    /// The tensor product (d0, d1, d2) = (a0 b0, a0 b1 + a1 b0, a1 b1) of two
    /// size-2 ciphertexts brought to the lower of their levels (scales need
    /// not agree: they multiply), and that level. A square takes one product
    /// fewer (d1 = 2 a0 a1).
    fn tensor(&self, other: &Ciphertext) -> Result<(usize, [Poly; 3])> {
        self.expect_size(2)?;
        other.expect_size(2)?;
        self.check_pair(other)?;
        let level = self.level.min(other.level);
        let a = self.at_level(level)?;
        if std::ptr::eq(self, other) {
            let mut d1 = a.polys[0].mul(&a.polys[1])?;
            d1.mul_small_assign(2)?;
            let d0 = a.polys[0].mul(&a.polys[0])?;
            return Ok((level, [d0, d1, a.polys[1].mul(&a.polys[1])?]));
        }
        let b = other.at_level(level)?;
        let d0 = a.polys[0].mul(&b.polys[0])?;
        let mut d1 = a.polys[0].mul(&b.polys[1])?;
        d1.mul_acc(&a.polys[1], &b.polys[0])?;
        let d2 = a.polys[1].mul(&b.polys[1])?;
        Ok((level, [d0, d1, d2]))
    }

    /// self * other without relinearization (3 components, scale multiplied).
    pub fn mul(&self, other: &Ciphertext) -> Result<Ciphertext> {
        let (level, d) = self.tensor(other)?;
        let noise = self.noise * other.noise;
        self.derived(d.into(), level, self.scale * other.scale, noise)
    }

    /// Back to 2 components with the relinearization key.
    pub fn relinearize(&self, rk: &RelinKey) -> Result<Ciphertext> {
        let polys = self.relinearized(rk)?;
        let noise = self
            .noise
            .plus_error(key_switch_error(&self.ctx, self.level));
        self.derived(polys, self.level, self.scale, noise)
    }

    /// Sample extraction at the lowest level (the primes above q_0 are
    /// dropped first): coefficient `index` of the plaintext polynomial
    /// (scale x for a coefficient-encoded x, see
    /// [`Plaintext::from_coefficients`]) as an LWE ciphertext modulo 2^64
    /// under [`SecretKey::lwe_key`](crate::SecretKey::lwe_key), with phase
    /// (scale x + e) 2^64 / q_0: the torus value of x for a TFHE bootstrap.
    pub fn sample_extract(&self, indices: &[usize]) -> Result<Vec<LweCiphertext>> {
        self.expect_size(2)?;
        let low = self.drop_to_level(0)?;
        Ok(low.rlwe.sample_extract(indices)?)
    }

    /// Divides by the last prime q_l: level l - 1, scale / q_l.
    pub fn rescale(&self) -> Result<Ciphertext> {
        let lv = self.ctx.level(self.level)?;
        let div = lv.rescale.as_ref().ok_or(Error::LowestLevel)?;
        let q = self.ctx.prime(self.level)? as f64;
        let polys = self.divided_components(div)?;
        let noise = self
            .noise
            .divide(q, rounding_error(&self.ctx, self.polys.len()));
        self.derived(polys, self.level - 1, self.scale / q, noise)
    }

    /// The fused pipeline multiply -> relinearize -> rescale, all in NTT
    /// form: the relinearization's ModUp and inner product run limb by limb
    /// without storing the digits, and its ModDown by P and the rescale by
    /// q_l are one division by q_l P of (P d0 + u0', P d1 + u1') in Q_l P
    /// (limb by limb inside the switch), which saves the transforms of a
    /// separate ModDown.
    pub fn mul_relin_rescale(&self, other: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        rk.check(self)?;
        self.expect_size(2)?;
        other.expect_size(2)?;
        self.check_pair(other)?;
        let level = self.level.min(other.level);
        let lv = self.ctx.level(level)?;
        let div = lv.mod_down_rescale.as_ref().ok_or(Error::LowestLevel)?;
        let ks = self.ctx.key_switch();
        // Only d2 = a1 b1 is formed; P d0 = a0 (P b0) and P d1 = a0 (P b1) +
        // a1 (P b0) are extra terms of the inner product's dot.
        let a = self.at_level(level)?;
        let b = other.at_level(level)?;
        let (a, b) = (&a.polys, &b.polys);
        let d2 = a[1].mul(&b[1])?;
        let pb0 = ks.times_p(&b[0])?;
        // The division by q_l P runs limb by limb inside the switch.
        let (u0, u1) = if std::ptr::eq(self, other) {
            let x1_terms = [(&a[1], &pb0); 2];
            ks.switch_divided(rk.key(), &d2, [&[(&a[0], &pb0)], &x1_terms], div)?
        } else {
            let pb1 = ks.times_p(&b[1])?;
            let x1_terms = [(&a[0], &pb1), (&a[1], &pb0)];
            ks.switch_divided(rk.key(), &d2, [&[(&a[0], &pb0)], &x1_terms], div)?
        };
        let q = self.ctx.prime(level)? as f64;
        let polys = vec![u0, u1];
        // As mul, relinearize, rescale with one rounding (that of the single
        // division by q_l P).
        let noise = (self.noise * other.noise)
            .plus_error(digit_error(&self.ctx, level))
            .divide(q, rounding_error(&self.ctx, 2));
        self.derived(polys, level - 1, self.scale * other.scale / q, noise)
    }

    /// self^2 -> relinearize -> rescale (the fused pipeline).
    pub fn square_relin_rescale(&self, rk: &RelinKey) -> Result<Ciphertext> {
        self.mul_relin_rescale(self, rk)
    }

    /// X -> X^g followed by the key switch back to s, with key `g`.
    fn apply_galois(&self, g: usize, keys: &GaloisKeys) -> Result<Ciphertext> {
        self.expect_size(2)?;
        let key = keys
            .get(g)
            .ok_or_else(|| Error::MissingKey(format!("Galois key for element {g}")))?;
        let c1 = self.polys[1].automorphism(g)?;
        // u0 + c0(X^g), summed in the ModDown's last pass.
        let c0 = Addend::Automorphism(&self.polys[0], g);
        let (u0, u1) = self
            .ctx
            .key_switch()
            .switch_adding(key, &c1, [Some(c0), None])?;
        let noise = self
            .noise
            .plus_error(key_switch_error(&self.ctx, self.level));
        self.derived(vec![u0, u1], self.level, self.scale, noise)
    }

    /// Rotates the slots left by `step` (right when negative). Uses the key
    /// of the step when present, otherwise a signed power-of-two
    /// decomposition of the step over the keys present (composed with lazy
    /// ModDown); an error names the first missing key.
    pub fn rotate(&self, step: i64, keys: &GaloisKeys) -> Result<Ciphertext> {
        keys.check(self)?;
        match self.rotation_elements(step, keys)?[..] {
            [] => Ok(self.clone()),
            [g] => self.apply_galois(g, keys),
            _ => self.rotate_and_add(&[], Some(step), keys),
        }
    }

    /// The Galois elements whose composition rotates left by `step`: none
    /// for a multiple of n/2, the step's own when its key is present, else
    /// those of the shortest signed power-of-two decomposition whose keys
    /// are all present.
    fn rotation_elements(&self, step: i64, keys: &GaloisKeys) -> Result<Vec<usize>> {
        let slots = self.ctx.slots() as i64;
        let step = step.rem_euclid(slots);
        if step == 0 {
            return Ok(Vec::new());
        }
        let g = rotation_element(&self.ctx, step)?;
        if keys.get(g).is_some() {
            return Ok(vec![g]);
        }
        // Candidates: the non-adjacent forms of the two signed
        // representatives of the step, and its plain binary form; the one
        // with fewest terms whose keys all exist wins.
        let binary: Vec<i64> = (0..63)
            .map(|b| 1i64 << b)
            .filter(|b| step & b != 0)
            .collect();
        let mut best: Option<Vec<i64>> = None;
        for terms in [signed_binary(step), signed_binary(step - slots), binary] {
            let available = terms
                .iter()
                .all(|&t| rotation_element(&self.ctx, t).is_ok_and(|g| keys.get(g).is_some()));
            if available && best.as_ref().is_none_or(|b| terms.len() < b.len()) {
                best = Some(terms);
            }
        }
        let terms = best.ok_or_else(|| {
            Error::MissingKey(format!(
                "Galois key for a rotation by {step}, directly or by signed powers of two"
            ))
        })?;
        terms
            .iter()
            .map(|&t| rotation_element(&self.ctx, t))
            .collect()
    }

    /// For each of `shifts` in turn, x <- x + rotate(x, shift); then, with
    /// `last`, x <- rotate(x, last). All key switches with lazy ModDown
    /// (their first halves summed in Q_l P and moved down once, see
    /// `triskel_ring::LazyRlwe`). Noise: as for the same operations one by
    /// one, with the first halves' rounding paid once.
    pub(crate) fn rotate_and_add(
        &self,
        shifts: &[i64],
        last: Option<i64>,
        keys: &GaloisKeys,
    ) -> Result<Ciphertext> {
        keys.check(self)?;
        self.expect_size(2)?;
        let mut acc = LazyRlwe::new(&self.polys[0], &self.polys[1])?;
        let mut noise = self.noise;
        for &shift in shifts {
            let (r, r_noise) = self.rotated_lazy(&acc, noise, shift, keys)?;
            acc.add_assign(self.ctx.key_switch(), &r)?;
            noise = noise + r_noise;
        }
        if let Some(step) = last {
            (acc, noise) = self.rotated_lazy(&acc, noise, step, keys)?;
        }
        // Steps that are multiples of n/2 switch nothing.
        let slots = self.ctx.slots() as i64;
        if shifts.iter().chain(&last).any(|s| s.rem_euclid(slots) != 0) {
            noise = noise.plus_error(lazy_finish_error(&self.ctx));
        }
        let (c0, c1) = acc.finish(self.ctx.key_switch())?;
        self.derived(vec![c0, c1], self.level, self.scale, noise)
    }

    /// x (a lazy form of this ciphertext, or of its rotations) rotated by
    /// `step`, and `noise` after the key switches.
    pub(crate) fn rotated_lazy<'a>(
        &self,
        x: &LazyRlwe<'a>,
        mut noise: Noise,
        step: i64,
        keys: &GaloisKeys,
    ) -> Result<(LazyRlwe<'a>, Noise)> {
        let ks = self.ctx.key_switch();
        let mut out: Option<LazyRlwe<'a>> = None;
        for g in self.rotation_elements(step, keys)? {
            let key = keys
                .get(g)
                .ok_or_else(|| Error::MissingKey(format!("Galois key for element {g}")))?;
            out = Some(out.as_ref().unwrap_or(x).rotated(ks, key, g)?);
            noise = noise.plus_error(lazy_switch_error(&self.ctx, self.level));
        }
        Ok((out.unwrap_or_else(|| x.clone()), noise))
    }

    /// Conjugates every slot.
    pub fn conjugate(&self, keys: &GaloisKeys) -> Result<Ciphertext> {
        keys.check(self)?;
        self.apply_galois(conjugation_element(&self.ctx), keys)
    }

    /// Rotations by each of `steps` sharing one ModUp of c1 (hoisting): each
    /// costs an inner product and a ModDown only. Every step needs its own
    /// key (no power-of-two fallback); step 0 returns a copy.
    pub fn rotate_hoisted(&self, steps: &[i64], keys: &GaloisKeys) -> Result<Vec<Ciphertext>> {
        keys.check(self)?;
        self.expect_size(2)?;
        let ks = self.ctx.key_switch();
        let slots = self.ctx.slots() as i64;
        let mut dec = None;
        steps
            .iter()
            .map(|&step| {
                if step.rem_euclid(slots) == 0 {
                    return Ok(self.clone());
                }
                let g = rotation_element(&self.ctx, step)?;
                let key = keys.get(g).ok_or_else(|| {
                    Error::MissingKey(format!("Galois key for a rotation by {step}"))
                })?;
                if dec.is_none() {
                    dec = Some(ks.decompose(&self.polys[1])?);
                }
                let dec = dec.as_ref().ok_or(Error::LowestLevel)?;
                let (u0, u1) = ks.switch_decomposed(key, dec, Some(g))?;
                let mut c0 = self.polys[0].automorphism(g)?;
                c0.add_assign(&u0)?;
                let noise = self
                    .noise
                    .plus_error(key_switch_error(&self.ctx, self.level));
                self.derived(vec![c0, u1], self.level, self.scale, noise)
            })
            .collect()
    }

    /// Slot i receives sum_{k < width} slot (i + k) (indices mod n/2), by a
    /// tree of log2(width) rotations with lazy ModDown; `width` a power of
    /// two.
    pub fn slot_sum(&self, width: usize, keys: &GaloisKeys) -> Result<Ciphertext> {
        if !width.is_power_of_two() || width > self.ctx.slots() {
            return Err(Error::Encoding(format!(
                "slot sum width {width} is not a power of two up to {}",
                self.ctx.slots()
            )));
        }
        let shifts: Vec<i64> = (0..width.trailing_zeros()).map(|k| 1i64 << k).collect();
        self.rotate_and_add(&shifts, None, keys)
    }
}

/// The non-adjacent form of s: signed powers of two summing to s, fewest
/// non-zero terms.
fn signed_binary(mut s: i64) -> Vec<i64> {
    let mut terms = Vec::new();
    let mut bit = 1i64;
    while s != 0 {
        if s & 1 != 0 {
            // s mod 4 = 1 -> +1, 3 -> -1
            let d = 2 - s.rem_euclid(4);
            terms.push(d * bit);
            s -= d;
        }
        s /= 2;
        bit *= 2;
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::signed_binary;

    #[test]
    fn signed_binary_sums_back() {
        for s in -300i64..300 {
            let t = signed_binary(s);
            assert_eq!(t.iter().sum::<i64>(), s);
            assert!(t.iter().all(|x| x.unsigned_abs().is_power_of_two()));
        }
        assert_eq!(signed_binary(7), vec![-1, 8]);
    }
}
