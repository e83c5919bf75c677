//! Polynomial evaluation in the Chebyshev basis with baby-step giant-step
//! (Paterson-Stockmeyer) at optimal depth, and approximations of common
//! activations.
//!
//! p(x) = sum_i c_i T_i(y), y = (2x - a - b) / (b - a) maps [a, b] to [-1, 1].
//! With d the degree, m = ceil(log2(d + 1)) and k = 2^ceil(m / 2): the baby
//! steps T_1 .. T_(k-1) and the giant steps T_k, T_2k, T_4k, ... are
//! computed (T_i at level L - ceil(log2 i)), and p is split as q T_g + r
//! (Chebyshev division, T_g T_i = (T_(g+i) + T_(|g-i|)) / 2) until the
//! pieces are linear combinations of baby steps (leaves).
//!
//! Depth m on [-1, 1], the optimum, as in Lattigo and OpenFHE, by
//! level-aware leaves: every piece is evaluated for a target (level,
//! scale), and a leaf is used only where every T_i it needs lies above the
//! target level (its scalar products take one rescale). Otherwise the
//! piece is split again by a smaller power of two whose T_g lies above the
//! target: with k = 2 this is always possible, so the top-level target
//! L - m is always met.
//!
//! On another interval the change of variable y = alpha x + beta takes one
//! more level (a product by the constant alpha and a rescale, which keeps
//! the scale; reading x at scale / alpha instead would cost no level but
//! make the scales of the T_i drift by a factor 1 / alpha that squares at
//! every level, and lose the precision of the pieces). Callers that can
//! fold the map into what precedes (encrypting y, or scaling the weights of
//! a previous linear layer) evaluate the same coefficients on [-1, 1].
//!
//! Every piece lands exactly on its target scale, so the halves of a split
//! add without a scale mismatch. Products T_i T_j run through the fused
//! multiply -> relinearize -> rescale pipeline; operands at different
//! levels are matched by [`Ciphertext::adjust`].

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
    /// sum_i `coeffs[i]` T_i((2x - a - b) / (b - a)); degree <= 63, a < b finite.
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

    /// The levels [`evaluate`](Self::evaluate) uses: ceil(log2(degree + 1)),
    /// the optimum, plus one for the change of variable when the interval
    /// is not [-1, 1].
    pub fn depth(&self) -> usize {
        self.unit_depth() + usize::from(!self.on_unit_interval())
    }

    /// ceil(log2(degree + 1)): the levels of the evaluation in y.
    fn unit_depth(&self) -> usize {
        (usize::BITS - self.degree().leading_zeros()) as usize
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

    /// p(x) on every slot of `ct` (module documentation): the result is
    /// [`depth`](Self::depth) levels below `ct`, at `ct`'s scale.
    pub fn evaluate(&self, ct: &Ciphertext, rk: &RelinKey) -> Result<Ciphertext> {
        self.evaluate_to(ct, rk, ct.scale())
    }

    /// [`evaluate`](Self::evaluate) landing on `scale` instead of `ct`'s
    /// (the double-angle steps of bootstrapping's EvalMod choose theirs).
    pub(crate) fn evaluate_to(
        &self,
        ct: &Ciphertext,
        rk: &RelinKey,
        scale: f64,
    ) -> Result<Ciphertext> {
        rk.check(ct)?;
        if ct.level() < self.depth() {
            return Err(Error::NotEnoughLevels {
                needed: self.depth(),
                left: ct.level(),
            });
        }
        let y = if self.on_unit_interval() {
            ct.clone()
        } else {
            let alpha = 2.0 / (self.b - self.a);
            ct.mul_const_rescale(alpha)?
                .add_const(-(self.a + self.b) / (self.b - self.a))?
        };
        let m = self.unit_depth();
        let degree = self.degree();
        let k = 1usize << m.div_ceil(2);
        // |T_i(x)| <= T_i(max(|x|, 1)): the products' message bounds (the
        // noise estimate) would otherwise grow doubly exponentially.
        let r = y.message_bound().max(1.0);
        let t_bound = |i: usize| (i as f64 * r.acosh()).cosh();
        // T_1 .. T_(k-1), then T_k, T_2k, ...: T_2i = 2 T_i^2 - 1,
        // T_2i+1 = 2 T_i T_i+1 - T_1.
        let mut t: Vec<Option<Ciphertext>> = vec![None; degree.max(1) + 1];
        t[1] = Some(y);
        let giants = std::iter::successors(Some(k), |g| Some(2 * g));
        let needed = (2..k).chain(giants).take_while(|&i| i <= degree);
        for i in needed {
            let (h, odd) = (i / 2, i % 2 == 1);
            let power = |j: usize| t[j].as_ref().ok_or(Error::LowestLevel);
            let prod = if odd {
                power(h)?.mul_relin_rescale(power(h + 1)?, rk)?
            } else {
                power(h)?.square_relin_rescale(rk)?
            };
            let twice = prod.mul_int(2)?;
            let mut ti = if odd {
                twice.sub(power(1)?)?
            } else {
                twice.add_const(-1.0)?
            };
            ti.bound_message(t_bound(i));
            t[i] = Some(ti);
        }
        let target = (ct.level() - self.depth(), scale);
        evaluate_at(&self.coeffs, &t, k, rk, target)
    }
}

/// sum_i c_i T_i at exactly `target` (level, scale), from the powers `t`
/// (module documentation): a leaf when every T_i it needs lies above the
/// target level, otherwise split by the largest power of two g whose T_g
/// does: p = q T_g + r, q at (level + 1, scale q_(level+1) / scale(T_g)).
fn evaluate_at(
    c: &[f64],
    t: &[Option<Ciphertext>],
    k: usize,
    rk: &RelinKey,
    target: (usize, f64),
) -> Result<Ciphertext> {
    // Trailing negligible coefficients need no T_i.
    let len = 1
        + (1..c.len())
            .rev()
            .find(|&i| c[i].abs() > NEGLIGIBLE)
            .unwrap_or(0);
    let c = &c[..len];
    let (level, scale) = target;
    let above = |i: usize| t[i].as_ref().is_some_and(|x| x.level() > level);
    let leaf_fits = (1..len).all(|i| c[i].abs() <= NEGLIGIBLE || (i < k && above(i)));
    if leaf_fits {
        return leaf(c, t, target);
    }
    let g = (1..usize::BITS)
        .map(|b| 1usize << b)
        .take_while(|&g| g < len)
        .filter(|&g| above(g))
        .last()
        .ok_or(Error::LevelMismatch {
            left: level,
            right: level + 1,
        })?;
    let giant = t[g]
        .as_ref()
        .ok_or(Error::LowestLevel)?
        .drop_to_level(level + 1)?;
    // p = q T_g + r: q_0 = c_g, q_j = 2 c_(g+j); r_i = c_i - c_(2g-i).
    let q: Vec<f64> = (g..len)
        .map(|i| if i == g { c[i] } else { 2.0 * c[i] })
        .collect();
    let r: Vec<f64> = (0..g)
        .map(|i| {
            c[i] - if i > 0 {
                c.get(2 * g - i).copied().unwrap_or(0.0)
            } else {
                0.0
            }
        })
        .collect();
    let q_scale = scale * giant.context().prime(level + 1)? as f64 / giant.scale();
    let high = evaluate_at(&q, t, k, rk, (level + 1, q_scale))?.mul_relin_rescale(&giant, rk)?;
    let low = evaluate_at(&r, t, k, rk, (high.level(), high.scale()))?;
    high.add(&low)
}

/// sum_i c_i T_i (every used T_i above the target level) at exactly
/// `target` (level L, scale S): each used T_i dropped to level L + 1 and
/// multiplied by c_i at scale S q_(L+1) / scale(T_i), so that all terms
/// share the scale S q_(L+1); one rescale, then + c_0.
fn leaf(c: &[f64], t: &[Option<Ciphertext>], target: (usize, f64)) -> Result<Ciphertext> {
    let (level, scale) = target;
    let t1 = t[1].as_ref().ok_or(Error::LowestLevel)?;
    let used: Vec<&Ciphertext> = (1..c.len())
        .filter(|&i| c[i].abs() > NEGLIGIBLE)
        .map(|i| t[i].as_ref().ok_or(Error::LowestLevel))
        .collect::<Result<_>>()?;
    if used.is_empty() {
        // The constant c_0 at the requested level and scale.
        let zero = t1.drop_to_level(level)?;
        return zero.mul_const(0.0, scale / zero.scale())?.add_const(c[0]);
    }
    let q = t1.context().prime(level + 1)? as f64;
    let mut acc: Option<Ciphertext> = None;
    for (&ci, x) in c[1..].iter().filter(|ci| ci.abs() > NEGLIGIBLE).zip(used) {
        let x = x.drop_to_level(level + 1)?;
        let term = x.mul_const(ci, scale * q / x.scale())?;
        acc = Some(match acc {
            None => term,
            Some(a) => a.add(&term)?,
        });
    }
    acc.ok_or(Error::LowestLevel)?.rescale()?.add_const(c[0])
}
