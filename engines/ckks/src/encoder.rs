//! The canonical embedding: n/2 complex slots <-> a real polynomial of
//! degree < n, through a "special" FFT of length n/2.
//!
//! Slot j holds m(zeta_j) / scale with zeta_j = omega^(5^j mod 2n), omega =
//! e^(2 pi i / 2n), for j < n/2. With s = n/2 and u_i = m_i + i m_(i+s)
//! (i < s), zeta_j^s = i (since 5^j = 1 mod 4), so m(zeta_j) = u(zeta_j), and
//! for 5^j = 4t + 1: u(omega^(4t+1)) = sum_i (u_i omega^i) W^(i t) with
//! W = e^(2 pi i / s). Decoding is therefore a twist by omega^i, a plain
//! length-s FFT and the permutation t(j) = (5^j mod 2n - 1) / 4; encoding is
//! the inverse. Rotating slots left by k is X -> X^(5^k); conjugating all
//! slots is X -> X^-1.

use std::f64::consts::PI;
use std::ops::{Add, Mul, Sub};

use zeroize::Zeroizing;

use crate::error::{Error, Result};

/// A complex number (slot value).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Complex {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex {
    /// re + i im.
    pub const fn new(re: f64, im: f64) -> Complex {
        Complex { re, im }
    }

    /// The complex conjugate.
    pub fn conj(self) -> Complex {
        Complex::new(self.re, -self.im)
    }

    /// |z|.
    pub fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }

    /// e^(i theta).
    fn cis(theta: f64) -> Complex {
        Complex::new(theta.cos(), theta.sin())
    }

    fn scale(self, k: f64) -> Complex {
        Complex::new(self.re * k, self.im * k)
    }
}

/// Zero is the default: vectors of slot values can be wiped.
impl zeroize::DefaultIsZeroes for Complex {}

impl Add for Complex {
    type Output = Complex;
    fn add(self, o: Complex) -> Complex {
        Complex::new(self.re + o.re, self.im + o.im)
    }
}

impl Sub for Complex {
    type Output = Complex;
    fn sub(self, o: Complex) -> Complex {
        Complex::new(self.re - o.re, self.im - o.im)
    }
}

impl Mul for Complex {
    type Output = Complex;
    fn mul(self, o: Complex) -> Complex {
        Complex::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

impl From<f64> for Complex {
    fn from(re: f64) -> Complex {
        Complex::new(re, 0.0)
    }
}

/// Precomputed tables of the embedding for one ring degree.
pub(crate) struct Encoder {
    slots: usize,
    /// omega^i for i < s (the twist).
    twist: Vec<Complex>,
    /// W^k = e^(2 pi i k / s) for k < s / 2 (FFT twiddles).
    roots: Vec<Complex>,
    /// slot j lives at FFT output index position[j].
    position: Vec<usize>,
}

impl Encoder {
    pub(crate) fn new(n: usize) -> Encoder {
        let s = n / 2;
        let m = 2 * n;
        let twist = (0..s)
            .map(|i| Complex::cis(2.0 * PI * i as f64 / m as f64))
            .collect();
        let roots = (0..s / 2)
            .map(|k| Complex::cis(2.0 * PI * k as f64 / s as f64))
            .collect();
        let mut position = Vec::with_capacity(s);
        let mut e = 1usize;
        for _ in 0..s {
            position.push((e - 1) / 4);
            e = e * 5 % m;
        }
        Encoder {
            slots: s,
            twist,
            roots,
            position,
        }
    }

    /// In-place radix-2 FFT of length s: a_t <- sum_i a_i W^(+-i t).
    fn fft(&self, a: &mut [Complex], inverse: bool) {
        let s = a.len();
        let bits = s.trailing_zeros();
        for i in 0..s {
            let j = i.reverse_bits() >> (usize::BITS - bits);
            if i < j {
                a.swap(i, j);
            }
        }
        let mut len = 2;
        while len <= s {
            let step = s / len;
            for start in (0..s).step_by(len) {
                for k in 0..len / 2 {
                    let w = self.roots[k * step];
                    let w = if inverse { w.conj() } else { w };
                    let (x, y) = (a[start + k], a[start + k + len / 2] * w);
                    a[start + k] = x + y;
                    a[start + k + len / 2] = x - y;
                }
            }
            len <<= 1;
        }
    }

    /// The integer coefficients round(scale * m_i) of the polynomial whose
    /// slots are `values` (zero-padded to n/2).
    /// Every buffer holding the message is wiped (the result on drop).
    pub(crate) fn encode(&self, values: &[Complex], scale: f64) -> Result<Zeroizing<Vec<i128>>> {
        let s = self.slots;
        if values.len() > s {
            return Err(Error::Encoding(format!(
                "{} values for {s} slots",
                values.len()
            )));
        }
        if values
            .iter()
            .any(|z| !z.re.is_finite() || !z.im.is_finite())
        {
            return Err(Error::Encoding("values must be finite".into()));
        }
        let mut v = Zeroizing::new(vec![Complex::default(); s]);
        for (z, &p) in values.iter().zip(&self.position) {
            v[p] = *z;
        }
        self.fft(&mut v, true);
        // u_i = (1/s) v_i omega^-i, times the scale.
        let k = scale / s as f64;
        let mut out = Zeroizing::new(vec![0i128; 2 * s]);
        for (i, (x, w)) in v.iter().zip(&self.twist).enumerate() {
            let u = (*x * w.conj()).scale(k);
            for (slot, part) in [(i, u.re), (i + s, u.im)] {
                let r = part.round();
                // Far below i128's range; above it the message cannot fit any modulus.
                if r.abs() >= 2f64.powi(120) {
                    // Its size is not shown: it is a function of the message.
                    return Err(Error::Encoding(format!(
                        "a coefficient is at least 2^120 (scale 2^{:.1})",
                        scale.log2()
                    )));
                }
                out[slot] = r as i128;
            }
        }
        Ok(out)
    }

    /// The slots of the polynomial with (centered, exact) coefficients
    /// `coeffs` divided by `scale`.
    pub(crate) fn decode(&self, coeffs: &[f64], scale: f64) -> Vec<Complex> {
        let s = self.slots;
        // Wiped on drop: when decrypting, these are the phase's slot values.
        let mut u: Zeroizing<Vec<Complex>> = Zeroizing::new(
            (0..s)
                .map(|i| Complex::new(coeffs[i], coeffs[i + s]).scale(1.0 / scale) * self.twist[i])
                .collect(),
        );
        self.fft(&mut u, false);
        self.position.iter().map(|&p| u[p]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// m(zeta_j) by direct evaluation: the definition the FFT must match.
    fn slow_decode(coeffs: &[f64], n: usize) -> Vec<Complex> {
        let m = 2 * n;
        let mut e = 1usize;
        (0..n / 2)
            .map(|_| {
                let z = (0..n).fold(Complex::default(), |acc, i| {
                    acc + Complex::cis(2.0 * PI * ((e * i) % m) as f64 / m as f64).scale(coeffs[i])
                });
                e = e * 5 % m;
                z
            })
            .collect()
    }

    #[test]
    fn fft_decoding_matches_the_definition_and_inverts_encoding() {
        let n = 64;
        let enc = Encoder::new(n);
        let values: Vec<Complex> = (0..n / 2)
            .map(|j| Complex::new((j as f64 * 0.37).sin(), (j as f64 * 0.11).cos()))
            .collect();
        let coeffs = enc.encode(&values, 2f64.powi(30)).unwrap();
        let as_f64: Vec<f64> = coeffs.iter().map(|&c| c as f64).collect();
        let slow = slow_decode(&as_f64, n);
        let fast = enc.decode(&as_f64, 2f64.powi(30));
        for ((a, b), z) in slow.iter().zip(&fast).zip(&values) {
            assert!((a.scale(2f64.powi(-30)) - *b).abs() < 1e-9);
            assert!((*b - *z).abs() < 1e-7);
        }
    }
}
