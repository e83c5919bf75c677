//! EvalMod: the homomorphic reduction modulo q_0 of bootstrapping, as a
//! scaled cosine with double-angle steps.
//!
//! After ModRaise and CoeffToSlot the slots hold y = t / q_0 = I + m / q_0
//! with I an integer, |y| <= K (the failure analysis of `mod.rs` bounds K),
//! and m / q_0 small. sin(2 pi y) = sin(2 pi m / q_0) ~ 2 pi m / q_0 removes
//! I. It is computed as
//!
//! ```text
//! sin(2 pi y) = cos(2 pi (y - 1/4)) = cos(2^r theta),  theta = 2 pi (y - 1/4) / 2^r
//! ```
//!
//! with cos(theta) a Chebyshev interpolant in w = y / K on [-1, 1] (the
//! division by K is folded into CoeffToSlot, so the interpolant costs no
//! level for a change of variable), followed by r double-angle steps
//! cos(2a) = 2 cos(a)^2 - 1, one level each. The scales of the steps are
//! chosen backwards from the output's, S_(i-1) = sqrt(S_i q_(l_i)), so that
//! each square lands exactly on the next one's.

use crate::ciphertext::Ciphertext;
use crate::error::{Error, Result};
use crate::keys::RelinKey;
use crate::polynomial::ChebyshevPolynomial;

use std::f64::consts::PI;

/// The homomorphic sin(2 pi y) for |y| <= K (module documentation).
#[derive(Clone, Debug)]
pub(crate) struct EvalMod {
    k: f64,
    double_angle: u32,
    cosine: ChebyshevPolynomial,
    /// max |approximation - sin(2 pi y)| on [-K, K], measured.
    error: f64,
    /// max |d approximation / dw| on [-1, 1] (w = y / K), measured.
    slope: f64,
}

impl EvalMod {
    /// The interpolant of `degree` and `double_angle` steps for |y| <= k.
    pub(crate) fn new(k: f64, degree: usize, double_angle: u32) -> Result<EvalMod> {
        if !((1.0..=1024.0).contains(&k)) || double_angle > 8 {
            return Err(Error::InvalidParameters(format!(
                "EvalMod: K = {k} must be in [1, 1024] and at most 8 double-angle steps"
            )));
        }
        let r = double_angle as i32;
        let cos = |w: f64| (2.0 * PI * (k * w - 0.25) / 2f64.powi(r)).cos();
        let cosine = ChebyshevPolynomial::interpolate(cos, -1.0, 1.0, degree)?;
        let mut op = EvalMod {
            k,
            double_angle,
            cosine,
            error: 0.0,
            slope: 0.0,
        };
        let samples = (4096.0 * k) as usize;
        op.error = (0..=samples)
            .map(|i| -k + 2.0 * k * i as f64 / samples as f64)
            .map(|y| (op.eval(y) - (2.0 * PI * y).sin()).abs())
            .fold(0.0, f64::max);
        let h = 1.0 / samples as f64;
        op.slope = (0..samples)
            .map(|i| -1.0 + 2.0 * i as f64 * h)
            .map(|w| (op.eval(k * (w + h)) - op.eval(k * w)).abs() / h)
            .fold(0.0, f64::max);
        Ok(op)
    }

    /// The levels it uses.
    pub(crate) fn depth(&self) -> usize {
        self.cosine.depth() + self.double_angle as usize
    }

    /// max |approximation - sin(2 pi y)| over [-K, K] (sampled 4096 K
    /// times): the plaintext error of the approximation.
    pub(crate) fn max_error(&self) -> f64 {
        self.error
    }

    /// The approximation in plaintext, at y (not y / K).
    pub(crate) fn eval(&self, y: f64) -> f64 {
        let mut c = self.cosine.eval(y / self.k);
        for _ in 0..self.double_angle {
            c = 2.0 * c * c - 1.0;
        }
        c
    }

    /// sin(2 pi y) on every slot of `ct`, whose slots hold y / K (real), at
    /// exactly `scale`, [`depth`](Self::depth) levels below `ct`.
    pub(crate) fn evaluate(
        &self,
        ct: &Ciphertext,
        rk: &RelinKey,
        scale: f64,
    ) -> Result<Ciphertext> {
        if ct.level() < self.depth() {
            return Err(Error::NotEnoughLevels {
                needed: self.depth(),
                left: ct.level(),
            });
        }
        let r = self.double_angle as usize;
        let after_poly = ct.level() - self.cosine.depth();
        // scales[i]: the scale after i double-angle steps.
        let mut scales = vec![scale; r + 1];
        for i in (1..=r).rev() {
            let q = ct.context().prime(after_poly - (i - 1))? as f64;
            scales[i - 1] = (scales[i] * q).sqrt();
        }
        // |cos| <= 1 plus the interpolant's error (at most its distance to
        // the cosine, below the whole approximation's measured error).
        let bound = 1.0 + self.error + 1e-9;
        // Noise: the evaluation's own errors (estimated for an exact input)
        // plus the input's error times the approximation's largest slope
        // (2 pi K per unit of y / K, first order): the generic estimate
        // would multiply the input's error by every Chebyshev coefficient.
        let mut exact = ct.clone();
        exact.noise.error = 0.0;
        let mut c = self.cosine.evaluate_to(&exact, rk, scales[0])?;
        c.bound_message(bound);
        for _ in 0..r {
            c = c.square_relin_rescale(rk)?.mul_int(2)?.add_const(-1.0)?;
            c.bound_message(bound);
        }
        let noise = c
            .noise
            .plus_error(ct.noise.error * self.slope * c.scale / ct.scale);
        let polys = std::mem::take(&mut c.rlwe.polys);
        c.derived(polys, c.level, c.scale, noise)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_approximation_is_accurate_on_its_interval_and_only_there() {
        let op = EvalMod::new(16.0, 47, 3).unwrap();
        assert_eq!(op.depth(), 6 + 3);
        assert!(op.max_error() < 1e-11, "{:e}", op.max_error());
        // Near the integers, sin(2 pi y) ~ 2 pi (y - I): the reduction.
        for i in -16..=16 {
            let m = 1e-5;
            let y = i as f64 + m;
            assert!((op.eval(y) / (2.0 * PI) - m).abs() < 1e-11);
        }
        // Well outside [-K, K] the interpolant diverges.
        assert!((op.eval(32.0) - (2.0 * PI * 32.0).sin()).abs() > 1.0);
        assert!(EvalMod::new(0.5, 47, 3).is_err() && EvalMod::new(16.0, 64, 3).is_err());
    }
}
