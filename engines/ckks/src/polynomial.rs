//! Polynomial evaluation in the Chebyshev basis with baby-step giant-step
//! (Paterson-Stockmeyer), and approximations of common activations.
//!
//! p(x) = sum_i c_i T_i(y), y = (2x - a - b) / (b - a) maps [a, b] to [-1, 1].
//! With d the degree, m = ceil(log2(d + 1)), k = 2^ceil(m / 2) baby steps and
//! giant steps T_k, T_2k, T_4k, ...: p is split as q T_(k 2^j) + r
//! (Chebyshev division, T_m T_i = (T_(m+i) + T_(|m-i|)) / 2) until the pieces
//! have degree < k, which are linear combinations of T_1..T_(k-1).
//!
//! Depth: at most m + 1 (one level above the optimum m: each leaf multiplies its T_i
//! by non-integer coefficients and rescales once), plus one when [a, b] is not
//! [-1, 1] (the change of variable). Products T_i T_j run through the fused
//! multiply -> relinearize -> rescale pipeline; operands at different levels
//! are matched by [`Ciphertext::adjust`].

use crate::ciphertext::Ciphertext;
use crate::error::{Error, Result};
use crate::keys::RelinKey;

/// Largest supported degree.
pub const MAX_DEGREE: usize = 63;

/// Coefficients below this magnitude are treated as zero (interpolation
/// leaves ~1e-17 where an odd or even function has none).
const NEGLIGIBLE: f64 = 1e-13;

/// A polynomial in the Chebyshev basis on an interval [a, b].
#[derive(Clone, Debug, PartialEq)]
pub struct ChebyshevPolynomial {
    coeffs: Vec<f64>,
    a: f64,
    b: f64,
}

impl ChebyshevPolynomial {
    /// sum_i coeffs[i] T_i((2x - a - b) / (b - a)); degree <= 63, a < b finite.
    pub fn new(coeffs: Vec<f64>, a: f64, b: f64) -> Result<ChebyshevPolynomial> {
        if coeffs.is_empty() || coeffs.len() > MAX_DEGREE + 1 {
            return Err(Error::Encoding(format!(
                "{} coefficients: degree must be 0..={MAX_DEGREE}",
                coeffs.len()
            )));
        }
        if !(a.is_finite() && b.is_finite() && a < b) || coeffs.iter().any(|c| !c.is_finite()) {
            return Err(Error::Encoding(
                "the interval must be finite with a < b, the coefficients finite".into(),
            ));
        }
        Ok(ChebyshevPolynomial { coeffs, a, b })
    }

    /// The interpolant of f of the given degree at the Chebyshev nodes of
    /// [a, b] (near-minimax for smooth f).
    pub fn interpolate(
        f: impl Fn(f64) -> f64,
        a: f64,
        b: f64,
        degree: usize,
    ) -> Result<ChebyshevPolynomial> {
        if degree > MAX_DEGREE {
            return Err(Error::Encoding(format!(
                "degree {degree} is above {MAX_DEGREE}"
            )));
        }
        let n = degree + 1;
        let nodes: Vec<f64> = (0..n)
            .map(|j| (std::f64::consts::PI * (j as f64 + 0.5) / n as f64).cos())
            .collect();
        let values: Vec<f64> = nodes
            .iter()
            .map(|&y| f((y * (b - a) + a + b) / 2.0))
            .collect();
        let coeffs = (0..n)
            .map(|k| {
                let s: f64 = nodes
                    .iter()
                    .zip(&values)
                    .map(|(&y, &v)| v * (k as f64 * y.acos()).cos())
                    .sum();
                s * if k == 0 { 1.0 } else { 2.0 } / n as f64
            })
            .collect();
        ChebyshevPolynomial::new(coeffs, a, b)
    }

    /// Approximation of ReLU max(x, 0) on [a, b].
    pub fn relu(a: f64, b: f64, degree: usize) -> Result<ChebyshevPolynomial> {
        ChebyshevPolynomial::interpolate(|x| x.max(0.0), a, b, degree)
    }

    /// Approximation of the logistic sigmoid 1 / (1 + e^-x) on [a, b].
    pub fn sigmoid(a: f64, b: f64, degree: usize) -> Result<ChebyshevPolynomial> {
        ChebyshevPolynomial::interpolate(|x| 1.0 / (1.0 + (-x).exp()), a, b, degree)
    }

    /// Approximation of tanh on [a, b].
    pub fn tanh(a: f64, b: f64, degree: usize) -> Result<ChebyshevPolynomial> {
        ChebyshevPolynomial::interpolate(f64::tanh, a, b, degree)
    }

    /// The degree.
    pub fn degree(&self) -> usize {
        self.coeffs.len() - 1
    }

    /// The Chebyshev coefficients.
    pub fn coeffs(&self) -> &[f64] {
        &self.coeffs
    }

    /// The levels [`evaluate`](Self::evaluate) needs (it may use fewer when
    /// the top coefficients leave short pieces).
    pub fn depth(&self) -> usize {
        let m = usize::BITS - self.degree().leading_zeros();
        m as usize + 1 + usize::from(!self.on_unit_interval())
    }

    fn on_unit_interval(&self) -> bool {
        self.a == -1.0 && self.b == 1.0
    }

    /// p(x) in plaintext (Clenshaw's recurrence).
    pub fn eval(&self, x: f64) -> f64 {
        let y = (2.0 * x - self.a - self.b) / (self.b - self.a);
        let (mut b1, mut b2) = (0.0, 0.0);
        for &c in self.coeffs[1..].iter().rev() {
            (b1, b2) = (2.0 * y * b1 - b2 + c, b1);
        }
        y * b1 - b2 + self.coeffs[0]
    }

    /// max |p(x) - f(x)| over `samples` evenly spaced points of [a, b]:
    /// the approximation's measured error (before any encryption error).
    pub fn max_error(&self, f: impl Fn(f64) -> f64, samples: usize) -> f64 {
        (0..samples.max(2))
            .map(|i| {
                let x = self.a + (self.b - self.a) * i as f64 / (samples.max(2) - 1) as f64;
                (self.eval(x) - f(x)).abs()
            })
            .fold(0.0, f64::max)
    }

    /// p(x) on every slot of `ct` (module documentation); needs
    /// [`depth`](Self::depth) levels.
    pub fn evaluate(&self, ct: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        if ct.level() < self.depth() {
            return Err(Error::LevelMismatch {
                left: ct.level(),
                right: self.depth(),
            });
        }
        let y = if self.on_unit_interval() {
            ct.clone()
        } else {
            let alpha = 2.0 / (self.b - self.a);
            ct.mul_const_rescale(alpha)?
                .add_const(-(self.a + self.b) / (self.b - self.a))?
        };
        let degree = self.degree();
        let m = (usize::BITS - degree.leading_zeros()) as usize;
        let k = 1usize << m.div_ceil(2);
        // |T_i(x)| <= T_i(max(|x|, 1)): the products' message bounds (the
        // noise estimate) would otherwise grow doubly exponentially.
        let r = y.message_bound().max(1.0);
        let t_bound = |i: usize| (i as f64 * r.acosh()).cosh();
        // T_1 .. T_k: T_2i = 2 T_i^2 - 1, T_2i+1 = 2 T_i T_i+1 - T_1.
        let mut t = vec![y.clone(), y];
        for i in 2..=k.min(degree.max(1)) {
            let (h, odd) = (i / 2, i % 2 == 1);
            let prod = if odd {
                t[h].mul_relin_rescale(&t[h + 1], rk)?
            } else {
                t[h].square_relin_rescale(rk)?
            };
            let twice = prod.mul_int(2)?;
            let mut ti = if odd {
                twice.sub(&t[1])?
            } else {
                twice.add_const(-1.0)?
            };
            ti.bound_message(t_bound(i));
            t.push(ti);
        }
        // Giant steps T_k, T_2k, ... below the degree.
        let mut giants: Vec<(usize, Ciphertext)> = Vec::new();
        let mut g = k;
        while g <= degree {
            let mut next = match giants.last() {
                None => t[k].clone(),
                Some((_, prev)) => prev.square_relin_rescale(rk)?.mul_int(2)?.add_const(-1.0)?,
            };
            next.bound_message(t_bound(g));
            giants.push((g, next));
            g *= 2;
        }
        evaluate_split(&self.coeffs, &t, &giants, rk, None)
    }
}

/// sum_i c_i T_i for coefficients of degree below 2 x the largest giant
/// step used (module documentation). With a `target` (level, scale) the
/// result lands exactly there, so that the two halves of a split add up
/// without a scale mismatch; without one it lands where it naturally does.
fn evaluate_split(
    c: &[f64],
    t: &[Ciphertext],
    giants: &[(usize, Ciphertext)],
    rk: &RelinKey,
    target: Option<(usize, f64)>,
) -> Result<Ciphertext> {
    let Some(pos) = giants.iter().rposition(|(g, _)| *g < c.len()) else {
        return leaf(c, t, target);
    };
    let (m, giant) = (giants[pos].0, &giants[pos].1);
    // p = q T_m + r: q_0 = c_m, q_j = 2 c_(m+j); r_i = c_i - c_(2m-i).
    let q: Vec<f64> = (m..c.len())
        .map(|i| if i == m { c[i] } else { 2.0 * c[i] })
        .collect();
    let r: Vec<f64> = (0..m)
        .map(|i| {
            c[i] - if i > 0 {
                c.get(2 * m - i).copied().unwrap_or(0.0)
            } else {
                0.0
            }
        })
        .collect();
    let high = match target {
        None => evaluate_split(&q, t, &giants[..pos], rk, None)?.mul_relin_rescale(giant, rk)?,
        Some((level, scale)) => {
            // q T_m is multiplied at level + 1 and rescaled by q_(level+1).
            let giant = giant.drop_to_level(level + 1)?;
            let q_scale = scale * giant.context().prime(level + 1)? as f64 / giant.scale();
            evaluate_split(&q, t, &giants[..pos], rk, Some((level + 1, q_scale)))?
                .mul_relin_rescale(&giant, rk)?
        }
    };
    let low = evaluate_split(
        &r,
        t,
        &giants[..pos],
        rk,
        Some((high.level(), high.scale())),
    )?;
    high.add(&low)
}

/// sum_i c_i T_i for i below the number of baby steps, at `target` (level
/// L, scale S) or at the natural one: every used T_i dropped to level L + 1
/// and multiplied by c_i at scale S q_(L+1) / scale(T_i), so that all terms
/// share the scale S q_(L+1); one rescale, then + c_0.
fn leaf(c: &[f64], t: &[Ciphertext], target: Option<(usize, f64)>) -> Result<Ciphertext> {
    let used: Vec<usize> = (1..c.len()).filter(|&i| c[i].abs() > NEGLIGIBLE).collect();
    let lowest = used.iter().min_by_key(|&&i| t[i].level()).map(|&i| &t[i]);
    let (level, scale) = match (target, lowest) {
        (Some(ls), _) => ls,
        (None, Some(low)) if low.level() > 0 => (low.level() - 1, low.scale()),
        (None, Some(_)) => return Err(Error::LowestLevel),
        (None, None) => (t[1].level(), t[1].scale()),
    };
    if used.is_empty() {
        // The constant c_0 at the requested level and scale.
        let zero = t[1].drop_to_level(level)?;
        return zero.mul_const(0.0, scale / zero.scale())?.add_const(c[0]);
    }
    let q = t[1].context().prime(level + 1)? as f64;
    let mut acc: Option<Ciphertext> = None;
    for &i in &used {
        let x = t[i].drop_to_level(level + 1)?;
        let term = x.mul_const(c[i], scale * q / x.scale())?;
        acc = Some(match acc {
            None => term,
            Some(a) => a.add(&term)?,
        });
    }
    acc.ok_or(Error::LowestLevel)?.rescale()?.add_const(c[0])
}
