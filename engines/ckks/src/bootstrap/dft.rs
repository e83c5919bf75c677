//! The homomorphic DFT of bootstrapping: CoeffToSlot and SlotToCoeff as a
//! few sparse linear transforms.
//!
//! Decoding (the encoder's canonical embedding) maps the s = n/2 complex
//! coefficients u_i = m_i + i m_(i+s) to the slots z_j = sum_i u_i zeta_j^i,
//! zeta_j = omega^(5^j mod 2n): z = V u. The special FFT factors V as
//!
//! ```text
//! V = S_L ... S_2 S_1 BR        (L = log2 s, BR the bit-reversal permutation)
//! ```
//!
//! where stage S_t (half-length h = 2^(t-1)) is a butterfly on blocks of
//! 2h slots: out[p] = in[p] + w_j in[p + h] and out[p + h] = in[p] - w_j
//! in[p + h] for the j-th slot p of a block's first half, w_j =
//! omega^((5^j mod 8h) n / 4h). As a slot matrix, S_t x = d_0 * x + d_h *
//! rot(x, h) + d_-h * rot(x, -h): three diagonals. Its inverse has the same
//! shape (halves: in[p] = (out[p] + out[p + h]) / 2, in[p + h] = (out[p] -
//! out[p + h]) / (2 w_j)).
//!
//! SlotToCoeff evaluates V without BR (its input holds the coefficients in
//! bit-reversed order, which is how CoeffToSlot leaves them: EvalMod, in
//! between, works slot by slot), CoeffToSlot evaluates BR V^-1 = S_1^-1 ...
//! S_L^-1. Consecutive stages are merged ("level collapsing") into `depth`
//! groups, each one plaintext matrix whose diagonals lie at sums of the
//! stages' steps (at most 2^(k+1) - 1 for k merged stages), evaluated as one
//! [`RotationSum`] with baby-step giant-step and hoisted baby rotations: one
//! level per group.

use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::sync::Arc;

use crate::ciphertext::Ciphertext;
use crate::context::CkksContext;
use crate::encoder::Complex;
use crate::error::{Error, Result};
use crate::keys::GaloisKeys;
use crate::linear::{split_step, RotationSum};

/// A plaintext slot matrix M x = sum_k d_k * rot(x, k) (d_k by step k in
/// [0, s), each of s entries).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SlotMatrix {
    slots: usize,
    pub(crate) diagonals: BTreeMap<usize, Vec<Complex>>,
}

fn cis(theta: f64) -> Complex {
    Complex::new(theta.cos(), theta.sin())
}

fn inverse(z: Complex) -> Complex {
    let m = z.re * z.re + z.im * z.im;
    Complex::new(z.re / m, -z.im / m)
}

impl SlotMatrix {
    fn zero(slots: usize) -> SlotMatrix {
        SlotMatrix {
            slots,
            diagonals: BTreeMap::new(),
        }
    }

    /// Adds c to entry p of diagonal k.
    fn add(&mut self, k: usize, p: usize, c: Complex) {
        let slots = self.slots;
        let d = self
            .diagonals
            .entry(k % slots)
            .or_insert_with(|| vec![Complex::default(); slots]);
        d[p] = d[p] + c;
    }

    /// M x in plaintext.
    #[cfg(test)]
    pub(crate) fn apply(&self, x: &[Complex]) -> Vec<Complex> {
        let s = self.slots;
        let mut out = vec![Complex::default(); s];
        for (&k, d) in &self.diagonals {
            for (p, o) in out.iter_mut().enumerate() {
                *o = *o + d[p] * x[(p + k) % s];
            }
        }
        out
    }

    /// `next` after `self`: (next self) x = sum_(a,b) (d'_a * rot(d_b, a))
    /// * rot(x, a + b).
    fn then(&self, next: &SlotMatrix) -> SlotMatrix {
        let s = self.slots;
        let mut out = SlotMatrix::zero(s);
        for (&a, da) in &next.diagonals {
            for (&b, db) in &self.diagonals {
                for p in 0..s {
                    out.add(a + b, p, da[p] * db[(p + a) % s]);
                }
            }
        }
        out
    }

    /// max_p sum_k |d_k[p]|: ||M x||_inf <= this ||x||_inf.
    fn row_norm(&self) -> f64 {
        (0..self.slots)
            .map(|p| self.diagonals.values().map(|d| d[p].abs()).sum::<f64>())
            .fold(0.0, f64::max)
    }

    /// max_p sqrt(sum_k |d_k[p]|^2).
    fn row_l2_norm(&self) -> f64 {
        (0..self.slots)
            .map(|p| {
                self.diagonals
                    .values()
                    .map(|d| d[p].abs().powi(2))
                    .sum::<f64>()
            })
            .fold(0.0, f64::max)
            .sqrt()
    }

    /// Every entry times c.
    fn times(mut self, c: Complex) -> SlotMatrix {
        for d in self.diagonals.values_mut() {
            d.iter_mut().for_each(|v| *v = *v * c);
        }
        self
    }

    /// The steps as signed integers in (-s/2, s/2].
    fn signed_steps(&self) -> Vec<i64> {
        let s = self.slots as i64;
        self.diagonals
            .keys()
            .map(|&k| {
                if k as i64 > s / 2 {
                    k as i64 - s
                } else {
                    k as i64
                }
            })
            .collect()
    }

    /// The rotation steps of this matrix's [`RotationSum`] (baby and
    /// giant steps, nonzero), computed without encoding anything.
    pub(crate) fn rotation_steps(&self) -> Vec<i64> {
        let giant = self.giant_step();
        self.diagonals
            .keys()
            .flat_map(|&k| {
                let (g, b) = split_step(k, self.slots, giant);
                [g, b]
            })
            .filter(|&k| k != 0)
            .map(|k| k as i64)
            .collect()
    }

    /// The giant step of a baby-step giant-step split of the diagonals:
    /// with steps l c (|c| <= C, l the smallest nonzero |step|), the power
    /// of two n1 near sqrt(2 C + 1) times l; none for three or fewer
    /// diagonals.
    fn giant_step(&self) -> Option<usize> {
        if self.diagonals.len() <= 3 {
            return None;
        }
        let steps = self.signed_steps();
        let l = steps
            .iter()
            .filter(|&&k| k != 0)
            .map(|k| k.unsigned_abs())
            .min()?;
        let c = steps.iter().map(|k| k.unsigned_abs() / l).max()?;
        let n1 = ((2 * c + 1) as f64).sqrt().ceil() as u64;
        Some((n1.next_power_of_two() * l).min(self.slots as u64) as usize)
    }
}

/// The butterfly stage of half-length h (a power of two below s), or its
/// inverse (module documentation).
fn stage(slots: usize, h: usize, inverse_stage: bool) -> SlotMatrix {
    let m = 4 * slots; // 2n
    let mut out = SlotMatrix::zero(slots);
    let mut five = 1usize; // 5^j mod 8h
    let mut roots = Vec::with_capacity(h);
    for _ in 0..h {
        roots.push(cis(
            2.0 * PI * ((five % (8 * h)) * (m / (8 * h))) as f64 / m as f64
        ));
        five = five * 5 % (8 * h);
    }
    let (one, half) = (Complex::new(1.0, 0.0), Complex::new(0.5, 0.0));
    for block in (0..slots).step_by(2 * h) {
        for (j, &w) in roots.iter().enumerate() {
            let (p, q) = (block + j, block + j + h);
            if inverse_stage {
                // in[p] = (out[p] + out[q]) / 2, in[q] = (out[p] - out[q]) / (2 w)
                let wi = inverse(w) * half;
                out.add(0, p, half);
                out.add(h, p, half);
                out.add(slots - h, q, wi);
                out.add(0, q, Complex::default() - wi);
            } else {
                // out[p] = in[p] + w in[q], out[q] = in[p] - w in[q]
                out.add(0, p, one);
                out.add(h, p, w);
                out.add(slots - h, q, one);
                out.add(0, q, Complex::default() - w);
            }
        }
    }
    out
}

/// The stage half-lengths 1, 2, ..., s/2 split into `depth` runs of
/// consecutive stages (the larger runs first).
fn groups(slots: usize, depth: usize) -> Result<Vec<Vec<usize>>> {
    let stages = slots.trailing_zeros() as usize;
    if !slots.is_power_of_two() || slots < 2 || depth == 0 || depth > stages {
        return Err(Error::InvalidParameters(format!(
            "a DFT over {slots} slots takes 1..={stages} levels, not {depth}"
        )));
    }
    let mut out = Vec::with_capacity(depth);
    let mut next = 0;
    for g in 0..depth {
        let size = stages / depth + usize::from(g < stages % depth);
        out.push((next..next + size).map(|t| 1usize << t).collect());
        next += size;
    }
    Ok(out)
}

/// The SlotToCoeff matrices in the order they are applied (S_1 first),
/// merged into `depth` groups, the whole times `factor` (spread evenly over
/// the groups): their product is factor V (BR left out).
pub(crate) fn slot_to_coeff(slots: usize, depth: usize, factor: f64) -> Result<Vec<SlotMatrix>> {
    let per = Complex::new(factor.abs().powf(1.0 / depth as f64), 0.0);
    let sign = Complex::new(factor.signum(), 0.0);
    let groups = groups(slots, depth)?;
    Ok(groups
        .iter()
        .enumerate()
        .map(|(i, hs)| {
            let merged = hs[1..].iter().fold(stage(slots, hs[0], false), |acc, &h| {
                acc.then(&stage(slots, h, false))
            });
            let merged = merged.times(per);
            if i == 0 {
                merged.times(sign)
            } else {
                merged
            }
        })
        .collect())
}

/// The CoeffToSlot matrices in the order they are applied (S_L^-1 first),
/// merged into `depth` groups, the whole times `factor`: their product is
/// factor BR V^-1.
pub(crate) fn coeff_to_slot(slots: usize, depth: usize, factor: f64) -> Result<Vec<SlotMatrix>> {
    let per = Complex::new(factor.abs().powf(1.0 / depth as f64), 0.0);
    let sign = Complex::new(factor.signum(), 0.0);
    let mut groups = groups(slots, depth)?;
    groups.reverse();
    Ok(groups
        .iter()
        .enumerate()
        .map(|(i, hs)| {
            let last = hs.len() - 1;
            let merged = hs[..last]
                .iter()
                .rev()
                .fold(stage(slots, hs[last], true), |acc, &h| {
                    acc.then(&stage(slots, h, true))
                });
            let merged = merged.times(per);
            if i == 0 {
                merged.times(sign)
            } else {
                merged
            }
        })
        .collect())
}

/// i = 0..s in bit-reversed order: slot p of CoeffToSlot's output holds
/// coefficient `bit_reversed(s)[p]`.
#[cfg(test)]
fn bit_reversed(slots: usize) -> Vec<usize> {
    let bits = slots.trailing_zeros();
    (0..slots)
        .map(|i| {
            if bits == 0 {
                0
            } else {
                i.reverse_bits() >> (usize::BITS - bits)
            }
        })
        .collect()
}

/// A chain of slot matrices prepared for ciphertexts: one [`RotationSum`]
/// per matrix at consecutive levels from `level` down.
#[derive(Clone, Debug)]
pub(crate) struct HomomorphicDft {
    sums: Vec<RotationSum>,
    /// Each matrix's row-sum norm: ||M x||_inf <= norm ||x||_inf, a
    /// tighter bound on the result's values than the noise estimate's sum
    /// over the diagonals.
    norms: Vec<f64>,
    /// Each matrix's largest row l2 norm (`apply`).
    l2_norms: Vec<f64>,
    /// The result's scale over the input's, per matrix.
    ratio: f64,
}

impl HomomorphicDft {
    /// Encodes `matrices` (applied in order) for a ciphertext at `level`:
    /// matrix i at level - i, the result's scale the input's times
    /// `scale_ratio` (spread evenly over the matrices).
    pub(crate) fn new(
        ctx: &Arc<CkksContext>,
        matrices: &[SlotMatrix],
        level: usize,
        scale_ratio: f64,
    ) -> Result<HomomorphicDft> {
        let ratio = scale_ratio.powf(1.0 / matrices.len().max(1) as f64);
        if matrices.len() > level {
            return Err(Error::NotEnoughLevels {
                needed: matrices.len(),
                left: level,
            });
        }
        let sums = matrices
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let terms: Vec<(i64, Vec<Complex>)> = m
                    .diagonals
                    .iter()
                    .map(|(&k, d)| (k as i64, d.clone()))
                    .collect();
                RotationSum::with_giant_step(ctx, &terms, level - i, m.giant_step(), ratio)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(HomomorphicDft {
            sums,
            norms: matrices.iter().map(SlotMatrix::row_norm).collect(),
            l2_norms: matrices.iter().map(SlotMatrix::row_l2_norm).collect(),
            ratio,
        })
    }

    /// The levels it uses.
    #[cfg(test)]
    fn depth(&self) -> usize {
        self.sums.len()
    }

    /// Every rotation step it needs a key for.
    pub(crate) fn rotation_steps(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self.sums.iter().flat_map(|s| s.rotation_steps()).collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// The matrices applied in order to `ct` (at the first one's level or
    /// above). Noise: each matrix's own errors (roundings, key switches,
    /// the diagonals' encoding, as [`RotationSum`] estimates them) plus
    /// the input's error times the largest l2 norm of a row: the errors of
    /// different slots are taken as independent (the slots of a random
    /// error polynomial are independent Gaussians, the average-case model
    /// of the noise estimate), where the sum over the diagonals would count
    /// a row's terms as if they were aligned.
    pub(crate) fn apply(&self, ct: &Ciphertext, keys: &GaloisKeys) -> Result<Ciphertext> {
        let mut x = ct.clone();
        for (sum, (norm, l2)) in self.sums.iter().zip(self.norms.iter().zip(&self.l2_norms)) {
            let bound = x.message_bound() * norm;
            let input_error = x.noise.error;
            x.noise.error = 0.0;
            x = sum.apply(&x, keys)?;
            x.noise.error += input_error * l2 * self.ratio;
            x.bound_message(bound);
        }
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// z_j = sum_i u_i zeta_j^i by direct evaluation: the definition.
    fn decode_direct(u: &[Complex]) -> Vec<Complex> {
        let s = u.len();
        let m = 4 * s;
        let mut five = 1usize;
        (0..s)
            .map(|_| {
                let z = u
                    .iter()
                    .enumerate()
                    .fold(Complex::default(), |acc, (i, &ui)| {
                        acc + ui * cis(2.0 * PI * ((five * i) % m) as f64 / m as f64)
                    });
                five = five * 5 % m;
                z
            })
            .collect()
    }

    fn sample(s: usize) -> Vec<Complex> {
        (0..s)
            .map(|i| Complex::new((i as f64 * 0.37).sin(), (i as f64 * 0.91 + 0.3).cos()))
            .collect()
    }

    fn max_diff(a: &[Complex], b: &[Complex]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (*x - *y).abs())
            .fold(0.0, f64::max)
    }

    fn apply_all(ms: &[SlotMatrix], x: &[Complex]) -> Vec<Complex> {
        ms.iter().fold(x.to_vec(), |v, m| m.apply(&v))
    }

    #[test]
    fn slot_to_coeff_is_the_canonical_embedding_and_coeff_to_slot_inverts_it() {
        for s in [2usize, 8, 64, 256] {
            let u = sample(s);
            let br = bit_reversed(s);
            let u_br: Vec<Complex> = br.iter().map(|&i| u[i]).collect();
            let z = decode_direct(&u);
            let depths = s.trailing_zeros() as usize;
            for depth in 1..=depths {
                let s2c = slot_to_coeff(s, depth, 1.0).unwrap();
                assert_eq!(s2c.len(), depth);
                assert!(
                    max_diff(&apply_all(&s2c, &u_br), &z) < 1e-9,
                    "s {s} depth {depth}"
                );
                let c2s = coeff_to_slot(s, depth, 1.0).unwrap();
                assert!(
                    max_diff(&apply_all(&c2s, &z), &u_br) < 1e-9,
                    "s {s} depth {depth}"
                );
                // A factor scales the product.
                let scaled = coeff_to_slot(s, depth, -0.25).unwrap();
                let want: Vec<Complex> =
                    u_br.iter().map(|v| *v * Complex::new(-0.25, 0.0)).collect();
                assert!(max_diff(&apply_all(&scaled, &z), &want) < 1e-9);
            }
        }
    }

    #[test]
    fn merged_stages_have_few_diagonals_and_bsgs_splits_them() {
        let s = 1024;
        // Stages 1..=8, 16..=64, 128..=512; the last group's steps wrap
        // around (512 = -512): 2^(k+1) - 1 diagonals or fewer.
        let counts: Vec<usize> = slot_to_coeff(s, 3, 1.0)
            .unwrap()
            .iter()
            .map(|m| m.diagonals.len())
            .collect();
        assert_eq!(counts, [31, 15, 8]);
        let c2s: Vec<usize> = coeff_to_slot(s, 3, 1.0)
            .unwrap()
            .iter()
            .map(|m| m.diagonals.len())
            .collect();
        assert_eq!(c2s, [8, 15, 31]);
        let m = &slot_to_coeff(s, 3, 1.0).unwrap()[0];
        assert_eq!(m.giant_step(), Some(8)); // steps -15..=15: babies 0..8, giants -16..=8
        assert!(groups(s, 11).is_err() && groups(s, 0).is_err() && groups(6, 1).is_err());
    }

    #[test]
    fn homomorphic_dfts_match_the_plaintext_ones_and_invert_each_other() {
        use crate::{CkksParameters, Plaintext, SecretKey};
        let params = CkksParameters::new(
            "dft-test",
            1024,
            &[50, 40, 40, 40, 40, 40, 40, 40],
            &[50, 50, 50],
            40,
            3,
        )
        .allow_insecure();
        let ctx = CkksContext::new(params).unwrap();
        let s = ctx.slots();
        let top = ctx.max_level();
        let c2s = coeff_to_slot(s, 3, 1.0).unwrap();
        let s2c = slot_to_coeff(s, 3, 1.0).unwrap();
        let c2s_h = HomomorphicDft::new(&ctx, &c2s, top, 1.0).unwrap();
        let s2c_h = HomomorphicDft::new(&ctx, &s2c, top - 3, 0.5).unwrap();
        assert_eq!((c2s_h.depth(), s2c_h.depth()), (3, 3));
        let mut steps = c2s_h.rotation_steps();
        steps.extend(s2c_h.rotation_steps());
        let sk = SecretKey::generate(&ctx).unwrap();
        let gk = sk.galois_keys(&steps, false).unwrap();
        let z: Vec<Complex> = sample(s)
            .iter()
            .map(|v| *v * Complex::new(0.7, 0.0))
            .collect();
        let pt = Plaintext::encode(&ctx, &z, top, ctx.default_scale(), 1.0).unwrap();
        let ct = sk.encrypt(&pt).unwrap();
        let coeffs = c2s_h.apply(&ct, &gk).unwrap();
        assert_eq!(coeffs.level(), top - 3);
        let got = sk.decrypt(&coeffs).unwrap().decode().unwrap();
        let want = apply_all(&c2s, &z);
        assert!(max_diff(&got, &want) < 1e-7, "{}", max_diff(&got, &want));
        let back = s2c_h.apply(&coeffs, &gk).unwrap();
        assert_eq!(back.level(), top - 6);
        assert!((back.scale() / ct.scale() - 0.5).abs() < 1e-12);
        let got = sk.decrypt(&back).unwrap().decode().unwrap();
        assert!(max_diff(&got, &z) < 1e-6, "{}", max_diff(&got, &z));
        // Without a needed key: a clear error, no result.
        let few = sk.galois_keys(&[], false).unwrap();
        assert!(matches!(c2s_h.apply(&ct, &few), Err(Error::MissingKey(_))));
    }
}
