//! The noise estimate every ciphertext carries.
//!
//! Two bounds in the canonical embedding (the slot values), in scaled units
//! (a value v at scale D is the integer v D): `message` >= max |m_i D| and
//! `error` >= max |e_i|, where decryption yields m_i D + e_i in slot i. The
//! decrypted values are therefore within `error / scale` of the exact result.
//!
//! The propagation is that of Cheon, Kim, Kim and Song (ASIACRYPT 2017,
//! Lemmas 2-3): errors add under addition, a product of (m1 + e1)(m2 + e2)
//! has error m1 e2 + m2 e1 + e1 e2, so it is bounded by
//! M1 E2 + M2 E1 + E1 E2 (the embedding is multiplicative slot by slot, so
//! this is tight in the worst slot), rescaling by q divides both bounds and
//! adds a rounding error, key switching adds its error, and automorphisms
//! permute the slots (norms unchanged).
//!
//! The fresh errors (encryption, rounding of an encoding or a rescale, key
//! switching) are average-case, as in Costache, Curtis, Hales, Murphy,
//! Ogilvie and Player, "On the precision loss in approximate homomorphic
//! encryption" (SAC 2023): a polynomial whose N coefficients are independent
//! with variance V has slot values of variance N V, and the bound is
//! TAIL sqrt(N V): [`TAIL`] = 6 for a polynomial of independent
//! coefficients (its slots are complex Gaussians), [`PRODUCT_TAIL`] = 16
//! when the error is a product of two such polynomials (e u, r s, digits
//! times key errors), whose slots are products of two Gaussians with a much
//! heavier tail, and [`SQUARE_TAIL`] = 67 for the r2 s^2 of a size-3
//! rounding (one Gaussian times the square of another). The variances, with rho = 2/3 the variance of a ternary coefficient (secret
//! s and the public-key mask u) and sigma^2 that of the error distribution:
//! - encoding rounding: 1/12;
//! - symmetric encryption: sigma^2; public-key (modulo Q_l P, then divided
//!   by P): sigma^2 (1 + 2 N rho) / P^2 ((e0 + e u + e1 s) / P) plus the
//!   rounding of a size-2 ciphertext;
//! - rescale / ModDown rounding of a size-k ciphertext: (1/12) (1 + N rho +
//!   [k = 3] N^2 rho^2) (r0 + r1 s + r2 s^2);
//! - key switching (hybrid, digits Q_j, special modulus P):
//!   N sigma^2 sum_j Q_j^2 / (12 P^2) (centered digits times key errors,
//!   divided by P), plus the ModDown rounding where it is paid: once per
//!   switch for a plain one; once for the whole pipeline or linear
//!   transform where ModDown and rescale are one division (then divided by
//!   q_l like the rest); for a chain of lazy switches, r1 s per switch (its
//!   c1 is moved down at once) and r0 once at the end.
//!
//! The estimate assumes a uniform ternary secret, as [`crate::SecretKey`]
//! generates.

use triskel_ring::NoiseDistribution;

use crate::context::CkksContext;
use crate::error::{Error, Result};

/// Standard deviations of a complex Gaussian slot value taken as its bound:
/// P(|z| > 6 sd) = exp(-36) < 2^-51 per slot.
pub(crate) const TAIL: f64 = 6.0;

/// The same for a product z1 z2 of two independent complex Gaussians
/// (sd = sqrt(v1 v2)): P(|z1 z2| > k sd) = 2k K_1(2k) < 2^-42 per slot at
/// k = 16 (K_1 the modified Bessel function), where 6 would give 2^-13.
pub(crate) const PRODUCT_TAIL: f64 = 16.0;

/// The same for |z1| |z2|^2 with z1, z2 independent complex Gaussians (sd =
/// sqrt(E|z1|^2) E|z2|^2): the slots of r2 s^2 in the rounding of a size-3
/// ciphertext, where s^2's slots are the squares of s's.
/// P(|z1| |z2|^2 > k sd) = E[exp(-k^2 / E^2)] over E ~ Exp(1), below 2^-42
/// per slot at k = 67 (2^-15 at 16: the estimate of a rescaled size-3
/// product was exceeded in about 1 of 18 trials with 16).
pub(crate) const SQUARE_TAIL: f64 = 67.0;

/// Variance of a uniform ternary coefficient.
const TERNARY_VARIANCE: f64 = 2.0 / 3.0;

/// Bounds on the message and the error, in the canonical embedding and
/// scaled units (module documentation): what every ciphertext carries, and
/// what a planner propagates through a program before any key exists.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Noise {
    /// Bound on |m_i D| in every slot.
    pub message: f64,
    /// Bound on |e_i| in every slot.
    pub error: f64,
}

/// The engine's fresh error bounds for a ring of degree n (scaled units):
/// [`error_bounds`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorBounds {
    /// Rounding the coefficients of an encoding.
    pub encoding: f64,
    /// A symmetric (secret-key) encryption.
    pub symmetric: f64,
    /// Rounding a 2-component ciphertext after a division (rescale).
    pub rounding: f64,
}

/// The error bounds of [`ErrorBounds`] for ring degree `n` and the error
/// distribution `noise`, the ones the engine's operations add.
pub fn error_bounds(n: usize, noise: NoiseDistribution) -> ErrorBounds {
    ErrorBounds {
        encoding: slot_bound(n, 1.0 / 12.0, TAIL),
        symmetric: slot_bound(n, noise.variance(), TAIL),
        rounding: rounding_bound(n, 2),
    }
}

/// The bound TAIL sqrt(N V) on the slots of a polynomial whose coefficients
/// have variance V.
fn slot_bound(n: usize, variance: f64, tail: f64) -> f64 {
    tail * (n as f64 * variance).sqrt()
}

/// Error of rounding the coefficients of an encoding.
pub(crate) fn encoding_error(ctx: &CkksContext) -> f64 {
    error_bounds(ctx.n(), ctx.noise()).encoding
}

/// Error added by a symmetric encryption.
pub(crate) fn symmetric_error(ctx: &CkksContext) -> f64 {
    error_bounds(ctx.n(), ctx.noise()).symmetric
}

/// Error added by a public-key encryption modulo Q_l P moved down by P:
/// (e0 + e u + e1 s) / P plus the rounding r0 + r1 s.
pub(crate) fn public_key_error(ctx: &CkksContext) -> f64 {
    let n = ctx.n() as f64;
    let p2 = (2.0 * ctx.key_switch().p().log2_product()).exp2();
    let var = ctx.noise().variance() * (1.0 + 2.0 * n * TERNARY_VARIANCE) / p2;
    slot_bound(ctx.n(), var, PRODUCT_TAIL) + rounding_error(ctx, 2)
}

/// Error of rounding a ciphertext of `size` components after a division.
pub(crate) fn rounding_error(ctx: &CkksContext, size: usize) -> f64 {
    rounding_bound(ctx.n(), size)
}

fn rounding_bound(n: usize, size: usize) -> f64 {
    let nf = n as f64;
    let linear = slot_bound(n, (1.0 + nf * TERNARY_VARIANCE) / 12.0, PRODUCT_TAIL);
    if size < 3 {
        return linear;
    }
    let square = nf * nf * TERNARY_VARIANCE * TERNARY_VARIANCE / 12.0;
    linear + slot_bound(n, square, SQUARE_TAIL)
}

/// Error added by a key switch of a ciphertext at `level`, with its ModDown.
pub(crate) fn key_switch_error(ctx: &CkksContext, level: usize) -> f64 {
    digit_error(ctx, level) + rounding_error(ctx, 2)
}

/// Error added by a key switch whose first half stays in Q_l P (lazy
/// ModDown): the digits' error and the rounding r1 s of the second half,
/// moved down at once; the first half's rounding r0 is
/// [`lazy_finish_error`], paid once for the whole chain.
pub(crate) fn lazy_switch_error(ctx: &CkksContext, level: usize) -> f64 {
    let n = ctx.n() as f64;
    digit_error(ctx, level) + slot_bound(ctx.n(), n * TERNARY_VARIANCE / 12.0, PRODUCT_TAIL)
}

/// The rounding r0 of the one ModDown that ends a chain of lazy switches.
pub(crate) fn lazy_finish_error(ctx: &CkksContext) -> f64 {
    slot_bound(ctx.n(), 1.0 / 12.0, TAIL)
}

/// The error of a key switch before its ModDown, in the units of the
/// result (divided by P): centered digits times the key's errors. Where the
/// ModDown is merged with a rescale, only this and one rounding are paid.
pub(crate) fn digit_error(ctx: &CkksContext, level: usize) -> f64 {
    let ks = ctx.key_switch();
    let log_p = ks.p().log2_product();
    let ql = level + 1;
    let digits: f64 = ks
        .digits()
        .iter()
        .filter(|r| r.start < ql)
        .map(|r| {
            let log_qj: f64 = (r.start..r.end.min(ql))
                .map(|i| (ks.q().modulus(i).value() as f64).log2())
                .sum();
            (2.0 * (log_qj - log_p)).exp2()
        })
        .sum();
    let n = ctx.n() as f64;
    let var = n * ctx.noise().variance() * digits / 12.0;
    slot_bound(ctx.n(), var, PRODUCT_TAIL)
}

/// Error added by a key switch of one digit of log2 `log_q` bits with
/// special modulus of log2 `log_p` bits, and its ModDown (the level-0
/// switch to the ephemeral secret of bootstrapping).
pub(crate) fn one_digit_switch_error(ctx: &CkksContext, log_q: f64, log_p: f64) -> f64 {
    let n = ctx.n() as f64;
    let var = n * ctx.noise().variance() * (2.0 * (log_q - log_p)).exp2() / 12.0;
    slot_bound(ctx.n(), var, PRODUCT_TAIL) + rounding_error(ctx, 2)
}

/// The average-case bound TAIL sqrt(count) x on the slots of a sum of
/// `count` independent terms of magnitude at most x (the slot errors of
/// a polynomial whose coefficients have errors up to x).
pub(crate) fn sum_bound(count: usize, x: f64) -> f64 {
    TAIL * (count as f64).sqrt() * x
}

impl Noise {
    /// A value of magnitude `message` with error `error`.
    pub fn new(message: f64, error: f64) -> Noise {
        Noise { message, error }
    }

    /// Times an exact integer k.
    pub fn times(self, k: f64) -> Noise {
        Noise::new(self.message * k.abs(), self.error * k.abs())
    }

    /// Plus an error `e`.
    pub fn plus_error(self, e: f64) -> Noise {
        Noise::new(self.message, self.error + e)
    }

    /// Divided by q, then rounded (`rounding` from `rounding_error`).
    pub fn divide(self, q: f64, rounding: f64) -> Noise {
        Noise::new(self.message / q, self.error / q + rounding)
    }

    /// Refuses a result with no precision left: error >= scale (a value of
    /// magnitude 1 would be all noise), and one that decryption could not
    /// recover: message + error >= Q_l / 2 (`log2_q` = log2 Q_l), where the
    /// phase's coefficients (at most its slots' bound) would wrap modulo
    /// Q_l. Also refuses non-finite bounds.
    pub fn check(self, scale: f64, log2_q: f64) -> Result<Noise> {
        if !self.error.is_finite() || !self.message.is_finite() || self.error >= scale {
            return Err(Error::NoiseExhausted {
                noise_log2: self.error.log2(),
                scale_log2: scale.log2(),
            });
        }
        let needed = self.message + self.error;
        if needed >= (log2_q - 1.0).exp2() {
            return Err(Error::MessageOverflow {
                needed_log2: needed.log2(),
                q_log2: log2_q,
            });
        }
        Ok(self)
    }
}

/// The sum (or difference) of two values.
impl std::ops::Add for Noise {
    type Output = Noise;

    fn add(self, other: Noise) -> Noise {
        Noise::new(self.message + other.message, self.error + other.error)
    }
}

/// The product of two values (M1 E2 + M2 E1 + E1 E2).
impl std::ops::Mul for Noise {
    type Output = Noise;

    fn mul(self, other: Noise) -> Noise {
        Noise::new(
            self.message * other.message,
            self.message * other.error + other.message * self.error + self.error * other.error,
        )
    }
}
