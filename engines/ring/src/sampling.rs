//! Sampling from a ChaCha20 CSPRNG seeded by the OS or by an explicit seed.
//!
//! Small distributions (ternary, centered binomial, discrete Gaussian) are
//! sampled once as signed integers; turn them into RNS polynomials with
//! [`Poly::from_signed`], which reduces the same integers to every prime.

use std::sync::Arc;

use chacha20::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use zeroize::{Zeroize, Zeroizing};

use crate::basis::RnsBasis;
use crate::error::{invalid, Error, Result};
use crate::poly::{Poly, Representation};

/// A 256-bit seed: everything the uniform half of a key or a seed-compressed
/// ciphertext needs to be regenerated.
pub type Seed = [u8; 32];

/// Standard deviation of the error distribution of the HomomorphicEncryption.org standard.
pub const DEFAULT_SIGMA: f64 = 3.2;

/// Tail cut of the default discrete Gaussian: |e| <= floor(6 sigma) = 19.
pub const DEFAULT_ERROR_BOUND: i64 = 19;

/// A cryptographically secure generator (ChaCha20, RFC 8439 block function
/// with a 64-bit counter and 64-bit stream id). Its key, state and output
/// buffer are wiped when it is dropped, and never printed.
pub struct Prng(ChaCha20Rng);

impl std::fmt::Debug for Prng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prng { .. }")
    }
}

impl Prng {
    /// A generator seeded from the operating system's random source.
    pub fn from_os() -> Result<Prng> {
        let mut seed = Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut seed[..]).map_err(|e| Error::Randomness(e.to_string()))?;
        Ok(Prng::from_seed(*seed))
    }

    /// A deterministic generator (tests, and regenerating public randomness).
    pub fn from_seed(seed: Seed) -> Prng {
        Prng(ChaCha20Rng::from_seed(seed))
    }

    /// The deterministic generator of stream `stream` under `seed`: independent
    /// streams under one seed, e.g. one per key digit.
    pub fn from_seed_stream(seed: Seed, stream: u64) -> Prng {
        let mut rng = ChaCha20Rng::from_seed(seed);
        rng.set_stream(stream);
        Prng(rng)
    }

    /// A fresh seed drawn from this generator.
    pub fn gen_seed(&mut self) -> Seed {
        let mut s = [0u8; 32];
        self.0.fill_bytes(&mut s);
        s
    }

    /// A uniform 64-bit word.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, bound), by rejection on the smallest covering power of
    /// two (no modulo bias); an error for bound = 0, an empty range.
    pub fn below(&mut self, bound: u64) -> Result<u64> {
        if bound == 0 {
            return invalid("cannot draw below 0: the range is empty");
        }
        Ok(self.below_nonzero(bound))
    }

    /// [`below`](Self::below) for a bound the caller knows to be >= 1.
    fn below_nonzero(&mut self, bound: u64) -> u64 {
        let mask = below_mask(bound);
        loop {
            let x = self.0.next_u64() & mask;
            if x < bound {
                return x;
            }
        }
    }

    /// Fills `out` with what as many [`below_nonzero`](Self::below_nonzero)
    /// calls return, drawing the same words, a batch at a time.
    fn fill_below_nonzero(&mut self, bound: u64, out: &mut [u64]) {
        const BATCH: usize = 256;
        let mask = below_mask(bound);
        let mut bytes = [0u8; 8 * BATCH];
        let mut filled = 0;
        while filled < out.len() {
            // Never more words than values still missing, so the generator
            // ends where the call-at-a-time draw ends.
            let words = &mut bytes[..8 * (out.len() - filled).min(BATCH)];
            self.0.fill_bytes(words);
            for c in words.chunks_exact(8) {
                let x = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                let x = x & mask;
                if x < bound {
                    out[filled] = x;
                    filled += 1;
                }
            }
        }
        // The words may be secret where the values are (uniform masks of
        // shares).
        bytes.zeroize();
    }
}

/// The smallest all-ones mask covering [0, bound).
fn below_mask(bound: u64) -> u64 {
    u64::MAX >> (bound.max(2) - 1).leading_zeros()
}

/// Uniform element of R_Q, in representation `repr`. By the CRT, independent
/// uniform residues modulo each q_i are a uniform element modulo Q, and the NTT
/// is a bijection, so sampling directly in either form is uniform.
pub fn sample_uniform(basis: &Arc<RnsBasis>, repr: Representation, rng: &mut Prng) -> Poly {
    // Every value is drawn below.
    let mut p = Poly::for_overwrite(basis, repr);
    let n = basis.n();
    for (i, limb) in p.data_mut().chunks_mut(n).enumerate() {
        rng.fill_below_nonzero(basis.modulus(i).value(), limb);
    }
    p
}

/// n coefficients uniform in {-1, 0, 1}.
pub fn sample_ternary(n: usize, rng: &mut Prng) -> Vec<i64> {
    // Each 64-bit word gives 32 two-bit values, uniform in [0, 4); a 3 is
    // rejected, so the kept ones are uniform in {0, 1, 2} (as with
    // `below(3)`, which would spend a whole word on each).
    let mut out = Vec::with_capacity(n);
    let (mut word, mut left) = (0u64, 0u32);
    while out.len() < n {
        if left == 0 {
            (word, left) = (rng.next_u64(), 32);
        }
        let v = word & 3;
        (word, left) = (word >> 2, left - 1);
        if v != 3 {
            out.push(v as i64 - 1);
        }
    }
    out
}

/// n coefficients in {-1, 0, 1} with exactly h non-zero ones: uniform
/// positions (the i-th one uniform among the n - i still free) and uniform
/// signs. Constant time: each pick scans every coefficient with masks, so
/// no memory index or branch depends on the secret positions (O(n h), for
/// key generation only).
pub fn sample_ternary_hw(n: usize, h: usize, rng: &mut Prng) -> Result<Vec<i64>> {
    if h > n {
        return invalid(format!("Hamming weight {h} exceeds n = {n}"));
    }
    let mut out = vec![0i64; n];
    for i in 0..h {
        let pick = rng.below_nonzero((n - i) as u64) as i64;
        let sign = 2 * rng.below_nonzero(2) as i64 - 1;
        // The pick-th free coefficient (counting from 0) gets the sign.
        let mut free_before = 0i64;
        for c in out.iter_mut() {
            let free = (*c == 0) as i64;
            let hit = free & ((free_before == pick) as i64);
            *c |= sign & -hit;
            free_before += free;
        }
    }
    Ok(out)
}

/// n coefficients from the centered binomial distribution of parameter eta:
/// sum of eta bits minus sum of eta bits, variance eta / 2, support [-eta, eta].
/// eta = 21 gives sigma = 3.24, the usual stand-in for sigma = 3.2.
pub fn sample_cbd(n: usize, eta: u32, rng: &mut Prng) -> Result<Vec<i64>> {
    if eta == 0 || eta > 32 {
        return invalid(format!("binomial parameter {eta} must be in 1..=32"));
    }
    let mask = u64::MAX >> (64 - eta);
    Ok((0..n)
        .map(|_| {
            let w = rng.next_u64();
            (w & mask).count_ones() as i64 - ((w >> 32) & mask).count_ones() as i64
        })
        .collect())
}

/// n coefficients from the discrete Gaussian of standard deviation sigma cut at
/// |x| <= bound: Pr\[x\] proportional to exp(-x^2 / (2 sigma^2)).
///
/// Inversion sampling on a cumulative table of |x| (Pr[|x| = 0] = p(0),
/// Pr[|x| = v] = 2 p(v)) scaled to 2^64, scanned in full for every draw so
/// the time does not depend on the value; then a uniform sign (one bit of a
/// word drawn once per 64 samples).
pub fn sample_gaussian(n: usize, sigma: f64, bound: i64, rng: &mut Prng) -> Result<Vec<i64>> {
    if !(sigma > 0.0 && sigma < 1e6 && (1..=1 << 20).contains(&bound)) {
        return invalid(format!(
            "Gaussian sigma = {sigma} or bound = {bound} out of range"
        ));
    }
    let weight = |v: i64| {
        let w = (-(v * v) as f64 / (2.0 * sigma * sigma)).exp();
        if v == 0 {
            w
        } else {
            2.0 * w
        }
    };
    let total: f64 = (0..=bound).map(weight).sum();
    let mut acc = 0.0;
    let cdf: Vec<u64> = (0..bound)
        .map(|v| {
            acc += weight(v) / total;
            (acc * 18446744073709551616.0).min(u64::MAX as f64) as u64
        })
        .collect();
    let mut signs = 0u64;
    Ok((0..n)
        .map(|i| {
            if i % 64 == 0 {
                signs = rng.next_u64();
            }
            let r = rng.next_u64();
            let mag = cdf.iter().map(|&c| (r >= c) as i64).sum::<i64>();
            let sign = (signs & 1) as i64;
            signs >>= 1;
            mag * (1 - 2 * sign)
        })
        .collect())
}

/// The largest standard deviation [`sample_wide_gaussian`] accepts: 2^59, so
/// that every sample (|x| < 9.5 sigma + 1 < 2^62.3) fits an i64. (2^60 would
/// not: its tail reaches 9.42 x 2^60 > 2^63.)
pub const WIDE_GAUSSIAN_MAX_SIGMA: f64 = (1u64 << 59) as f64;

/// The tail cut of [`sample_wide_gaussian`]: |x| <= 9.5 sigma + 1. The
/// Box-Muller radius sqrt(-2 ln u) with u >= 2^-64 is at most
/// sqrt(128 ln 2) = 9.42; a standard normal pair exceeds that radius with
/// probability exp(-64 ln 2) = 2^-64 (the statistical distance the cut costs
/// per pair of normals).
pub const WIDE_GAUSSIAN_TAIL: f64 = 9.5;

/// The largest sigma drawn as one f64 sample: below 2^46 every sample is
/// below 2^50, where the f64 spacing is at most 1/8.
const SINGLE_SAMPLE_MAX_SIGMA: f64 = (1u64 << 46) as f64;

/// Above [`SINGLE_SAMPLE_MAX_SIGMA`]: the deviation of the fine part and the
/// coarse part's step (fine deviation = 8 steps).
const FINE_SIGMA: f64 = (1u64 << 36) as f64;
const COARSE_STEP: i64 = 1 << 33;

/// n samples of the rounded Gaussian round(sigma z), z a standard normal,
/// for 0 <= sigma <= [`WIDE_GAUSSIAN_MAX_SIGMA`]: LWE and GLWE encryption
/// noise of any width and the flooding of shared CKKS decryptions, where the
/// table of [`sample_gaussian`] would not fit. Returned wiped on drop (the
/// noise of an encryption or a flood hides a secret). |x| <= 9.5 sigma + 1
/// ([`WIDE_GAUSSIAN_TAIL`]).
///
/// **Normals.** Box-Muller, one pair per 192 random bits: the radius
/// sqrt(-2 ln u) takes u = (h + f) / 2^64 with h a nonzero 64-bit word (drawn
/// again when 0, probability 2^-64) and f a 53-bit fraction, so u in
/// [2^-64, 1] keeps a relative precision of about 2^-53 down to its smallest
/// values: the tail has no coarse grid of radii (a u on a fixed 2^-53 grid
/// would let only a few widely spaced radii occur beyond 8 sigma). The cut
/// at radius 9.42 costs 2^-64 per pair. The angle takes 53 bits.
///
/// **Up to 2^46**: x = round(sigma z). ln, sqrt, sin and cos in f64 are
/// accurate to a few units in the last place, so sigma z (below 2^50) is
/// computed within 1/2 of its exact value and each sample is within one unit
/// of round(sigma z).
///
/// **Above 2^46** one f64 would leave the low bits unreachable, so a sample
/// is the sum of a fine and a coarse part, from two independent normals:
///
/// ```text
/// x = round(s1 z1) + 2^k round(s2 z2),  s1 = 2^36, k = 33,
/// s1^2 + 4^k s2^2 = sigma^2
/// ```
///
/// (s2 <= 2^26, so both parts are within one unit of their exact rounding,
/// and the sum is exact in i64). Smoothing: 2^k round(s2 z2) is an integer,
/// so x = round(Y) with Y = s1 z1 + 2^k C, C = round(s2 z2). The law of C is
/// h sampled on Z, where h is the density of s2 z2 + U (U uniform on
/// [-1/2, 1/2]); by Poisson summation, adding (s1 / 2^k) z1 = 8 z1 to C
/// gives the density of s2 z2 + U + 8 z1 up to Fourier terms of size
/// exp(-2 pi^2 8^2 s2^2 / (s2^2 + 64)) < 2^-1800 (s2 > 2^12), less than
/// 2^-1700 in total over the samples' range: the coarse
/// lattice 2^k Z is smoothed by the fine Gaussian, which is 8 steps wide
/// (Peikert's convolution theorem, CRYPTO 2010, Theorem 3.1, for discrete
/// Gaussians; Genise, Micciancio, Peikert and Walter, PKC 2020, for the
/// general framework). So up to a statistical distance of 2^-1700 (plus the
/// cuts' 2^-64 per pair), x is round(sigma z + 2^k U): the rounded Gaussian
/// of deviation sigma with an independent uniform of width 2^33 added
/// before rounding. That uniform adds 4^k / 12 to the variance (a relative
/// 2^-29.6 at sigma = 2^46, less above) and can only help the noise it is
/// added to hide (a shift is no easier to see through a convolution with an
/// independent law). Floating point: s2 z2 (below 2^30) is computed within
/// about 2^-20, so C differs from the exact rounding of s2 z2 by one step
/// with probability about 2^-19; through the fine part, 8 steps wide, that
/// is a statistical distance of about 2^-22 per sample (a single f64 sample
/// near 2^46 is off by one unit far more often). The tail:
/// |x| <= 9.42 (s1 + 2^k s2) + 2^(k+1) <= 9.42 sigma + 2^39.3 <= 9.43 sigma
/// for sigma > 2^46. Each part costs a pair of normals: two pairs per pair
/// of samples above 2^46, one below.
///
/// Timing: the libm calls' run time may vary with their (random) arguments;
/// only the total time of all n samples is observable to a caller.
pub fn sample_wide_gaussian(n: usize, sigma: f64, rng: &mut Prng) -> Result<Zeroizing<Vec<i64>>> {
    if !(0.0..=WIDE_GAUSSIAN_MAX_SIGMA).contains(&sigma) {
        return invalid(format!(
            "Gaussian deviation {sigma:e} (2^{:.1}) outside [0, 2^59]",
            sigma.log2()
        ));
    }
    let mut out = Zeroizing::new(vec![0i64; n]);
    if sigma <= SINGLE_SAMPLE_MAX_SIGMA {
        for pair in out.chunks_mut(2) {
            for (x, z) in pair.iter_mut().zip(standard_normal_pair(rng)) {
                *x = (sigma * z).round() as i64;
            }
        }
    } else {
        let coarse = (sigma * sigma - FINE_SIGMA * FINE_SIGMA).sqrt() / COARSE_STEP as f64;
        for pair in out.chunks_mut(2) {
            let (z, c) = (standard_normal_pair(rng), standard_normal_pair(rng));
            for ((x, z), c) in pair.iter_mut().zip(z).zip(c) {
                *x = (FINE_SIGMA * z).round() as i64 + (coarse * c).round() as i64 * COARSE_STEP;
            }
        }
    }
    Ok(out)
}

/// Two independent standard normals by Box-Muller, cut at radius 9.42
/// ([`sample_wide_gaussian`]).
fn standard_normal_pair(rng: &mut Prng) -> [f64; 2] {
    let unit = 1.0 / (1u64 << 53) as f64;
    let high = loop {
        let h = rng.next_u64();
        if h != 0 {
            break h;
        }
    };
    let fraction = (rng.next_u64() >> 11) as f64 * unit;
    let u = (high as f64 + fraction) * f64::exp2(-64.0);
    let angle = (rng.next_u64() >> 11) as f64 * unit * std::f64::consts::TAU;
    let radius = (-2.0 * u.ln()).sqrt();
    let (sin, cos) = angle.sin_cos();
    [radius * cos, radius * sin]
}

/// The distribution of fresh errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NoiseDistribution {
    /// Discrete Gaussian of deviation `sigma`, cut at |x| <= `bound`.
    Gaussian {
        /// Standard deviation.
        sigma: f64,
        /// Tail cut.
        bound: i64,
    },
    /// Centered binomial of parameter `eta` (support [-eta, eta]).
    CenteredBinomial {
        /// Number of bits per half.
        eta: u32,
    },
}

impl Default for NoiseDistribution {
    /// sigma = 3.2, cut at 19.
    fn default() -> Self {
        NoiseDistribution::Gaussian {
            sigma: DEFAULT_SIGMA,
            bound: DEFAULT_ERROR_BOUND,
        }
    }
}

impl NoiseDistribution {
    /// n samples.
    pub fn sample(&self, n: usize, rng: &mut Prng) -> Result<Vec<i64>> {
        match *self {
            NoiseDistribution::Gaussian { sigma, bound } => sample_gaussian(n, sigma, bound, rng),
            NoiseDistribution::CenteredBinomial { eta } => sample_cbd(n, eta, rng),
        }
    }

    /// The variance of one sample (sigma^2; eta / 2 for the centered
    /// binomial).
    pub fn variance(&self) -> f64 {
        match *self {
            NoiseDistribution::Gaussian { sigma, .. } => sigma * sigma,
            NoiseDistribution::CenteredBinomial { eta } => eta as f64 / 2.0,
        }
    }

    /// The largest |x| it can produce.
    pub fn bound(&self) -> i64 {
        match *self {
            NoiseDistribution::Gaussian { bound, .. } => bound,
            NoiseDistribution::CenteredBinomial { eta } => eta as i64,
        }
    }
}

/// Flooding noise: n coefficients uniform in [-2^`log2_bound`, 2^`log2_bound`]
/// (log2_bound <= 120), reduced to every prime of `basis`, in coefficient
/// form. Added to a ciphertext whose own noise is below E, it makes the
/// result statistically close to a fresh one: the distance is at most
/// n E / 2^(log2_bound + 1) (a shift by |e| <= E moves a uniform law on
/// 2B + 1 points by |e| / (2B + 1)). Wipe it after use.
pub fn sample_flooding(basis: &Arc<RnsBasis>, log2_bound: u32, rng: &mut Prng) -> Result<Poly> {
    let n = basis.n();
    let values = flooding_values(n, log2_bound, rng)?;
    let mut p = Poly::zero(basis, Representation::Coefficient);
    for (i, limb) in p.data_mut().chunks_mut(n).enumerate() {
        let m = basis.modulus(i);
        for (out, &x) in limb.iter_mut().zip(values.iter()) {
            *out = flood_residue(m, x, log2_bound);
        }
    }
    Ok(p)
}

/// `count` integers uniform in [0, 2 B] with B = 2^`log2_bound` (at most
/// 2^120), each standing for its value minus B ([`flood_residue`]). Wiped
/// on drop.
pub(crate) fn flooding_values(
    count: usize,
    log2_bound: u32,
    rng: &mut Prng,
) -> Result<Zeroizing<Vec<u128>>> {
    if log2_bound > 120 {
        return invalid(format!(
            "flooding bound 2^{log2_bound} is above the supported 2^120"
        ));
    }
    let width = 2 * (1u128 << log2_bound) + 1;
    // Rejection on the smallest covering power of two: no modulo bias.
    let mask = u128::MAX >> (width - 1).leading_zeros();
    let mut values = Zeroizing::new(vec![0u128; count]);
    for v in values.iter_mut() {
        *v = loop {
            let x = ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) & mask;
            if x < width {
                break x;
            }
        };
    }
    Ok(values)
}

/// x - 2^`log2_bound` modulo m for a value of [`flooding_values`]:
/// (x mod q) + q - (B mod q), without a branch on x.
pub(crate) fn flood_residue(m: &triskel_kernels::Modulus, x: u128, log2_bound: u32) -> u64 {
    m.sub_mod(m.reduce_u128(x), m.reduce_u128(1u128 << log2_bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The batched draw returns what value-at-a-time draws return and leaves
    /// the generator at the same word, for bounds with high and low
    /// acceptance and lengths around the batch size.
    #[test]
    fn batched_uniform_draw_matches_one_at_a_time() {
        for (i, bound) in [1u64, 2, 3, (1 << 47) + 1, (1 << 61) - 1, u64::MAX]
            .into_iter()
            .enumerate()
        {
            for len in [0usize, 1, 7, 255, 256, 257, 1000] {
                let seed = [i as u8 + 1; 32];
                let (mut a, mut b) = (Prng::from_seed(seed), Prng::from_seed(seed));
                // Start both off a block boundary, at an odd word.
                let mut skip = [0u8; 12];
                a.0.fill_bytes(&mut skip);
                b.0.fill_bytes(&mut skip);
                let one: Vec<u64> = (0..len).map(|_| a.below_nonzero(bound)).collect();
                let mut batched = vec![0u64; len];
                b.fill_below_nonzero(bound, &mut batched);
                assert_eq!(one, batched, "bound {bound}, {len} values");
                assert_eq!(a.next_u64(), b.next_u64(), "bound {bound}, {len} values");
                assert!(batched.iter().all(|&x| x < bound));
            }
        }
    }
}
