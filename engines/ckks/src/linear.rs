//! Plaintext matrix times encrypted vector by the diagonal method with
//! baby-step giant-step rotations.
//!
//! The vector x (length dim, a power of two) is packed periodically: slot s
//! holds x[s mod dim] (see [`LinearTransform::pack`]). For a matrix M of at
//! most dim rows and columns, diagonal i is u_i[j] = M[j][(j + i) mod dim],
//! and M x = sum_i u_i * rot(x, i). With i = g n1 + b (b < n1):
//!
//! ```text
//! M x = sum_g rot( sum_b rot(u_(g n1 + b), -g n1) * rot(x, b),  g n1 )
//! ```
//!
//! The baby rotations rot(x, b) share one ModUp (hoisted); each giant
//! rotation is applied once to a partial sum. All-zero diagonals are skipped
//! (banded matrices cost fewer products and rotations). The result holds
//! (M x)[j] in slot j for j < rows (and periodically in every block of dim
//! slots), zero in the other slots of each block.
//!
//! Hybrid method, chosen when it needs fewer rotations (few rows): with r
//! the number of rows rounded up to a power of two, u'_i[s] = M[s mod r][(s +
//! i) mod dim] for i < r, z = sum_i u'_i * rot(x, i) (hoisted), and
//! y = z + rot(z, r) + ... folded log2(dim / r) times, so that slot s holds
//! sum_t z[s + r t] = (M x)[s mod r]: the result is periodic with period r
//! (a 64 -> 4 layer takes 3 hoisted and 4 plain rotations instead of 14). One level is used: the
//! diagonals are encoded once, at the level they will be applied at and the
//! scale q_l of its last prime, so the result keeps x's scale.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use triskel_ring::{Decomposition, LazyRlwe, Poly, Representation};

use crate::ciphertext::Ciphertext;
use crate::context::CkksContext;
use crate::encoder::Complex;
use crate::error::{Error, Result};
use crate::keys::{rotation_element, GaloisKeys};
use crate::noise::{digit_error, lazy_finish_error, rounding_error, Noise};
use crate::plaintext::{encode_in, Plaintext};

/// How a matrix's transform runs, decided from its entries alone (no
/// context, no encoding): the method, its non-zero diagonals and so the
/// rotations it needs keys for. The planner prices a transform and lists
/// its Galois keys by this, and [`LinearTransform::new`] builds by it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransformShape {
    dim: usize,
    baby: usize,
    /// Hybrid method: the power of two r of the fold.
    fold: Option<usize>,
    /// Indices of the non-zero diagonals of the chosen method.
    diagonals: Vec<usize>,
}

impl TransformShape {
    /// The shape of `matrix` on a packing of `dim` (a power of two) slots:
    /// the square diagonal method (`u_i[j] = M[j][(j + i) mod dim]`, i < dim,
    /// by baby-step giant-step) or, for fewer rows, the hybrid method
    /// (r = rows rounded up to a power of two:
    /// `u'_i[s] = M[s mod r][(s + i) mod dim]` for i < r, then a fold of
    /// log2(dim / r) rotations),
    /// whichever rotates less.
    pub fn of(matrix: &[Vec<f64>], dim: usize) -> TransformShape {
        let dim = dim.max(1);
        let entry =
            |j: usize, c: usize| matrix.get(j).and_then(|r| r.get(c)).copied().unwrap_or(0.0);
        let nonzero = |count: usize, u: &dyn Fn(usize, usize) -> f64| -> Vec<usize> {
            (0..count)
                .filter(|&i| (0..dim).any(|s| u(i, s) != 0.0))
                .collect()
        };
        let square = nonzero(dim, &|i, j| entry(j, (j + i) % dim));
        let r = matrix.len().next_power_of_two().min(dim);
        let hybrid = nonzero(r, &|i, s| entry(s % r, (s + i) % dim));
        let baby = 1usize << dim.trailing_zeros().div_ceil(2);
        let babies: BTreeSet<usize> = square.iter().map(|i| i % baby).collect();
        let giants: BTreeSet<usize> = square.iter().map(|i| i - i % baby).collect();
        let bsgs_rotations = babies.len() + giants.len();
        let hybrid_rotations = hybrid.len() + (dim / r).trailing_zeros() as usize;
        if r < dim && hybrid_rotations < bsgs_rotations {
            TransformShape {
                dim,
                baby: dim,
                fold: Some(r),
                diagonals: hybrid,
            }
        } else {
            TransformShape {
                dim,
                baby,
                fold: None,
                diagonals: square,
            }
        }
    }

    /// Number of non-zero diagonals: the plaintext products of one apply.
    pub fn diagonal_count(&self) -> usize {
        self.diagonals.len()
    }

    /// The rotation steps an apply needs keys for, ascending.
    pub fn rotation_steps(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self
            .diagonals
            .iter()
            .flat_map(|&i| [(i % self.baby) as i64, (i - i % self.baby) as i64])
            .chain(self.fold_shifts())
            .filter(|&s| s != 0)
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// The rotations of the hybrid method's fold: r, 2r, ... below dim.
    fn fold_shifts(&self) -> Vec<i64> {
        let Some(r) = self.fold else {
            return Vec::new();
        };
        (0..(self.dim / r).trailing_zeros())
            .map(|k| (r << k) as i64)
            .collect()
    }

    /// The period of the result's packing: r for the hybrid method, dim
    /// for the square one.
    pub fn output_period(&self) -> usize {
        self.fold.unwrap_or(self.dim)
    }
}

/// A matrix prepared for multiplication with packed encrypted vectors.
#[derive(Clone, Debug)]
pub struct LinearTransform {
    shape: TransformShape,
    rows: usize,
    level: usize,
    /// Non-zero diagonals by index i (already rotated by -g n1), encoded.
    diagonals: BTreeMap<usize, Plaintext>,
    /// The diagonals multiplied by rotations (all of the hybrid method's,
    /// those with a baby step of the square one) in Q_l P, for products
    /// with key switches before their ModDown.
    extended: BTreeMap<usize, Poly>,
}

impl LinearTransform {
    /// Prepares `matrix` (rows of equal length, at most `dim` rows and
    /// columns, `dim` a power of two dividing n/2) for ciphertexts at
    /// `level` (>= 1; ciphertexts above it are brought down to it).
    pub fn new(
        ctx: &Arc<CkksContext>,
        matrix: &[Vec<f64>],
        dim: usize,
        level: usize,
    ) -> Result<LinearTransform> {
        if level == 0 {
            return Err(Error::LowestLevel);
        }
        ctx.prime(level)?; // an error for a level the chain lacks
        let rows = matrix.len();
        let cols = matrix.first().map_or(0, Vec::len);
        if !dim.is_power_of_two() || dim > ctx.slots() {
            return Err(Error::Encoding(format!(
                "dimension {dim} is not a power of two up to {}",
                ctx.slots()
            )));
        }
        if rows == 0
            || rows > dim
            || cols == 0
            || cols > dim
            || matrix.iter().any(|r| r.len() != cols)
        {
            return Err(Error::Encoding(format!(
                "the matrix must have 1..={dim} rows of 1..={dim} equal-length columns"
            )));
        }
        if matrix.iter().flatten().any(|v| !v.is_finite()) {
            return Err(Error::Encoding("matrix entries must be finite".into()));
        }
        // A zero matrix has no diagonal to apply (`apply` would refuse it).
        if matrix.iter().flatten().all(|&v| v == 0.0) {
            return Err(Error::Encoding("the matrix is zero".into()));
        }
        let shape = TransformShape::of(matrix, dim);
        let (baby, fold) = (shape.baby, shape.fold);
        let entry =
            |j: usize, c: usize| matrix.get(j).and_then(|r| r.get(c)).copied().unwrap_or(0.0);
        // Square diagonal method: u_i[j] = M[j][(j + i) mod dim]; hybrid:
        // u'_i[s] = M[s mod r][(s + i) mod dim] ([`TransformShape::of`]).
        let diagonal = |i: usize| -> Vec<f64> {
            match fold {
                None => (0..dim).map(|j| entry(j, (j + i) % dim)).collect(),
                Some(r) => (0..dim).map(|s| entry(s % r, (s + i) % dim)).collect(),
            }
        };
        let chosen = shape.diagonals.iter().map(|&i| (i, diagonal(i)));
        let slots = ctx.slots();
        let mut diagonals = BTreeMap::new();
        let mut extended = BTreeMap::new();
        for (i, u) in chosen {
            // rot(u, -g n1) on the periodic packing, over all slots.
            let shift = i - i % baby;
            let rotated: Vec<Complex> = (0..slots)
                .map(|s| Complex::from(u[(s + dim - shift % dim) % dim]))
                .collect();
            let in_qp = fold.is_some() || i % baby != 0;
            let (pt, ext) = encode_diagonal(ctx, &rotated, level, 1.0, in_qp)?;
            diagonals.insert(i, pt);
            extended.extend(ext.map(|e| (i, e)));
        }
        Ok(LinearTransform {
            shape,
            rows,
            level,
            diagonals,
            extended,
        })
    }

    /// The periodic packing of a vector of length <= dim over all n/2 slots.
    pub fn pack(values: &[f64], dim: usize, slots: usize) -> Vec<f64> {
        (0..slots)
            .map(|s| values.get(s % dim.max(1)).copied().unwrap_or(0.0))
            .collect()
    }

    /// Number of non-zero diagonals.
    pub fn diagonal_count(&self) -> usize {
        self.diagonals.len()
    }

    /// The rotation steps [`apply`](Self::apply) needs keys for.
    pub fn rotation_steps(&self) -> Vec<i64> {
        self.shape.rotation_steps()
    }

    /// The period of the result's packing: r for the hybrid method, dim
    /// for the square one (whose rows beyond the matrix are zero). A next
    /// layer packs its input with this dimension.
    pub fn output_period(&self) -> usize {
        self.shape.output_period()
    }

    /// Number of output rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The level the diagonals are encoded at.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The dimension of the packing.
    pub fn dim(&self) -> usize {
        self.shape.dim
    }

    /// M x for a ciphertext packing x periodically (module documentation).
    pub fn apply(&self, ct: &Ciphertext, keys: &GaloisKeys) -> Result<Ciphertext> {
        keys.check(ct)?;
        let ct = &ct.drop_to_level(self.level)?;
        if self.shape.fold.is_some() {
            return self.hybrid_products(ct, keys)?.rotate_and_add(
                &self.shape.fold_shifts(),
                None,
                keys,
            );
        }
        self.bsgs_products(ct, keys)?.rescale()
    }

    /// The square method's sum_g rot(sum_b u_(g n1 + b) rot(x, b), g n1)
    /// (before the rescale), with double hoisting: the baby rotations share
    /// one ModUp of c1 and are never moved down (their inner products are
    /// multiplied by the diagonals in Q_l P); each giant's partial sum moves
    /// down only its second half (the next rotation decomposes it), and the
    /// first halves of everything meet in Q_l P for one ModDown (ring
    /// `LazyRlwe`). Noise: as the operations one by one, with a rounding
    /// per ModDown.
    fn bsgs_products(&self, ct: &Ciphertext, keys: &GaloisKeys) -> Result<Ciphertext> {
        ct.expect_size(2)?;
        let ctx = &ct.ctx;
        let ks = ctx.key_switch();
        let qlp = ks.level_qp(self.level + 1)?;
        let ql = ct.polys[0].basis();
        // Baby b != 0: its Galois element's c0(X^g) in Q_l and inner product
        // (x0, x1) in Q_l P, all from one decomposition of c1.
        let mut babies: BTreeMap<usize, [Poly; 3]> = BTreeMap::new();
        let mut dec = None;
        for b in self.diagonals.keys().map(|&i| i % self.shape.baby) {
            if b == 0 || babies.contains_key(&b) {
                continue;
            }
            let g = rotation_element(ctx, b as i64)?;
            let key = keys
                .get(g)
                .ok_or_else(|| Error::MissingKey(format!("Galois key for a rotation by {b}")))?;
            let dec = match &mut dec {
                Some(d) => d,
                None => dec.insert(ks.decompose(&ct.polys[1])?),
            };
            let (x0, x1) = ks.inner_product(key, dec, Some(g))?;
            babies.insert(b, [ct.polys[0].automorphism(g)?, x0, x1]);
        }
        let digits = digit_error(ctx, self.level);
        let mut total: Option<(LazyRlwe<'static>, Noise)> = None;
        for g in (0..self.shape.dim).step_by(self.shape.baby) {
            // a = sum_b u (c0(X^g_b), [b = 0] c1) in Q_l, x = sum_b u (x0_b, x1_b) in Q_l P.
            let mut a = [Representation::Ntt; 2].map(|r| Poly::zero(ql, r));
            let mut x: Option<[Poly; 2]> = None;
            let mut noise: Option<Noise> = None;
            for (&i, pt) in self.diagonals.range(g..g + self.shape.baby) {
                let term = match babies.get(&(i - g)) {
                    None => {
                        a[0].mul_acc(&ct.polys[0], &pt.poly)?;
                        a[1].mul_acc(&ct.polys[1], &pt.poly)?;
                        ct.noise * pt.noise
                    }
                    Some([c0g, x0, x1]) => {
                        let u = &self.extended[&i];
                        let x = x.get_or_insert_with(|| {
                            [Representation::Ntt; 2].map(|r| Poly::zero(qlp, r))
                        });
                        x[0].mul_acc(x0, u)?;
                        x[1].mul_acc(x1, u)?;
                        a[0].mul_acc(c0g, &pt.poly)?;
                        ct.noise.plus_error(digits) * pt.noise
                    }
                };
                noise = Some(noise.map_or(term, |n| n + term));
            }
            let Some(mut noise) = noise else { continue };
            let [a0, mut a1] = a;
            let x0 = match x {
                Some([x0, x1]) => {
                    a1.add_assign(&ks.mod_down_owned(x1)?)?;
                    noise = noise.plus_error(rounding_error(ctx, 2));
                    Some(x0)
                }
                None => None,
            };
            let part = LazyRlwe::with_pending(ks, a0, x0, a1)?;
            let (part, noise) = ct.rotated_lazy(&part, noise, g as i64, keys)?;
            total = Some(match total {
                None => (part, noise),
                Some((mut t, n)) => {
                    t.add_assign(ks, &part)?;
                    (t, n + noise)
                }
            });
        }
        let (total, mut noise) = total.ok_or(Error::Encoding("the matrix is zero".into()))?;
        if self.diagonals.keys().any(|&i| i >= self.shape.baby) {
            noise = noise.plus_error(lazy_finish_error(ctx));
        }
        let (c0, c1) = total.finish(ks)?;
        let scale = ct.scale * self.diagonals.values().next().map_or(1.0, |pt| pt.scale);
        ct.derived(vec![c0, c1], self.level, scale, noise)
    }

    /// The hybrid method's z = sum_i u_i rot(x, i), rescaled: [`hoisted_products`].
    fn hybrid_products(&self, ct: &Ciphertext, keys: &GaloisKeys) -> Result<Ciphertext> {
        hoisted_products(ct, None, self.level, &self.diagonals, &self.extended, keys)
    }
}

/// A sum of rotations of one ciphertext, each times a plaintext vector:
///
/// ```text
/// z = sum_k u_k * rot(x, k)        (rot(x, k): slots rotated left by k)
/// ```
///
/// for the caller's own steps k and vectors u_k (a linear transform of its
/// own design, a sum of shifted products), at the cost of one ModUp for all
/// the rotations and one division for everything: each rotation stops at
/// its key's inner product (x0_k, x1_k) in Q_l P, is multiplied there by
/// u_k (encoded at scale q_l in Q_l P as well as Q_l), and the sum is
/// divided by q_l P once, ModDown merged with the rescale:
///
/// ```text
/// z = round((P sum_k u_k (c0(X^g_k), [k = 0] c1) + sum_k u_k (x0_k, x1_k)) / (q_l P))
/// ```
///
/// (g_k the Galois element of step k). The result is one level below
/// [`level`](Self::level), at x's scale, and its noise estimate is that of
/// the rotations, products, sum and rescale done one by one, with one
/// rounding instead of one per rotation plus the rescale's: each rotation
/// adds its key switch's digit error (times |u_k|), and the products add the
/// encoding's rounding. It is the hybrid [`LinearTransform`]'s machinery
/// with the steps chosen by the caller. The vectors are given as values,
/// not [`Plaintext`]s: the products happen in Q_l P, where a plaintext of
/// Q_l has no residues. Every nonzero step needs its own Galois key
/// (hoisting has no power-of-two fallback).
///
/// With a giant step G ([`with_giant_step`](Self::with_giant_step)), each
/// step k (taken in (-n/4, n/4]) is split as k = g + b with g a multiple of
/// G and 0 <= b < G, and
///
/// ```text
/// z = sum_g rot( sum_b rot(u_(g+b), -g) * rot(x, b),  g )
/// ```
///
/// (baby-step giant-step): the baby rotations of every group share x's one
/// ModUp, each group is divided once, and each giant rotation is applied
/// once, to its group's sum, with lazy ModDown (the giant rotations' first
/// halves are summed in Q_l P and moved down once). A sparse transform whose steps are l c for
/// |c| < C then needs about 2 sqrt(2 C) keys and key switches instead of
/// 2 C (the homomorphic DFT's merged butterflies).
#[derive(Clone, Debug)]
pub struct RotationSum {
    level: usize,
    /// By giant step g in [0, n/2) (only 0 without giant steps).
    groups: BTreeMap<usize, Group>,
}

/// One giant step's vectors rot(u_(g+b), -g) by baby step b in [0, n/2).
#[derive(Clone, Debug)]
struct Group {
    /// Encoded at scale q_l in Q_l.
    diagonals: BTreeMap<usize, Plaintext>,
    /// The same in Q_l P, for b != 0.
    extended: BTreeMap<usize, Poly>,
}

impl RotationSum {
    /// Prepares sum_k u_k rot(x, k) for `terms` (k, u_k) (k any integer,
    /// taken modulo n/2 and each at most once; u_k at most n/2 finite
    /// values, zero-padded) and ciphertexts at `level` (>= 1; ciphertexts
    /// above it are brought down to it).
    pub fn new(
        ctx: &Arc<CkksContext>,
        terms: &[(i64, Vec<f64>)],
        level: usize,
    ) -> Result<RotationSum> {
        let terms: Vec<(i64, Vec<Complex>)> = terms
            .iter()
            .map(|(k, u)| (*k, u.iter().map(|&v| Complex::from(v)).collect()))
            .collect();
        RotationSum::with_giant_step(ctx, &terms, level, None, 1.0)
    }

    /// The same for complex vectors u_k, with `giant` = Some(G) by
    /// baby-step giant-step with giant steps of multiples of G (type
    /// documentation; G in 1..=n/2), and the vectors encoded at scale
    /// q_l `ratio` instead of q_l, so that the result's scale is x's times
    /// `ratio` (in (0, 2]; a smaller one leaves the vectors fewer bits:
    /// the bootstrap's SlotToCoeff lowers EvalMod's large scale to the
    /// default one over its levels).
    pub fn with_giant_step(
        ctx: &Arc<CkksContext>,
        terms: &[(i64, Vec<Complex>)],
        level: usize,
        giant: Option<usize>,
        ratio: f64,
    ) -> Result<RotationSum> {
        if !(ratio > 0.0 && ratio <= 2.0) {
            return Err(Error::Encoding(format!(
                "the scale ratio {ratio} must be in (0, 2]"
            )));
        }
        if level == 0 {
            return Err(Error::LowestLevel);
        }
        if terms.is_empty() {
            return Err(Error::Encoding("a rotation sum needs a term".into()));
        }
        ctx.prime(level)?; // an error for a level the chain lacks
        let slots = ctx.slots();
        if giant.is_some_and(|g| g == 0 || g > slots) {
            return Err(Error::Encoding(format!(
                "the giant step must be in 1..={slots}"
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut split: BTreeMap<usize, Vec<(usize, Vec<Complex>)>> = BTreeMap::new();
        for (step, u) in terms {
            if u.len() > slots || u.iter().any(|v| !v.re.is_finite() || !v.im.is_finite()) {
                return Err(Error::Encoding(format!(
                    "step {step}: the vector must hold at most {slots} finite values"
                )));
            }
            let k = step.rem_euclid(slots as i64) as usize;
            if !seen.insert(k) {
                return Err(Error::Encoding(format!(
                    "step {step} is given twice (modulo {slots})"
                )));
            }
            let (g, b) = split_step(k, slots, giant);
            // rot(u, -g) over all slots (u zero-padded).
            let v: Vec<Complex> = (0..slots)
                .map(|j| u.get((j + slots - g) % slots).copied().unwrap_or_default())
                .collect();
            split.entry(g).or_default().push((b, v));
        }
        let mut groups = BTreeMap::new();
        for (g, babies) in split {
            let mut diagonals = BTreeMap::new();
            let mut extended = BTreeMap::new();
            for (b, v) in babies {
                let (pt, ext) = encode_diagonal(ctx, &v, level, ratio, b != 0)?;
                diagonals.insert(b, pt);
                extended.extend(ext.map(|e| (b, e)));
            }
            groups.insert(
                g,
                Group {
                    diagonals,
                    extended,
                },
            );
        }
        Ok(RotationSum { level, groups })
    }

    /// The rotation steps [`apply`](Self::apply) needs keys for (in
    /// [1, n/2)): the baby steps and the giant steps.
    pub fn rotation_steps(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self
            .groups
            .iter()
            .flat_map(|(&g, group)| group.extended.keys().copied().chain([g]))
            .filter(|&k| k != 0)
            .map(|k| k as i64)
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// The level the vectors are encoded at.
    pub fn level(&self) -> usize {
        self.level
    }

    /// sum_k u_k rot(ct, k), rescaled (type documentation).
    pub fn apply(&self, ct: &Ciphertext, keys: &GaloisKeys) -> Result<Ciphertext> {
        keys.check(ct)?;
        let ct = &ct.drop_to_level(self.level)?;
        ct.expect_size(2)?;
        let hoisted = self.groups.values().any(|g| !g.extended.is_empty());
        let dec = match hoisted {
            true => Some(ct.ctx.key_switch().decompose(&ct.polys[1])?),
            false => None,
        };
        // The groups' sums, each rotated by its giant step with lazy ModDown
        // (the first halves summed in Q_l P and moved down once).
        let ks = ct.ctx.key_switch();
        let mut sum: Option<(Ciphertext, LazyRlwe<'static>, Noise)> = None;
        for (&g, group) in &self.groups {
            let mut z = hoisted_products(
                ct,
                dec.as_ref(),
                self.level,
                &group.diagonals,
                &group.extended,
                keys,
            )?;
            let mut polys = std::mem::take(&mut z.rlwe.polys).into_iter();
            let (Some(c0), Some(c1)) = (polys.next(), polys.next()) else {
                return Err(Error::CiphertextSize {
                    expected: 2,
                    got: 0,
                });
            };
            let part = LazyRlwe::with_pending(ks, c0, None, c1)?;
            let (part, noise) = z.rotated_lazy(&part, z.noise, g as i64, keys)?;
            sum = Some(match sum {
                None => (z, part, noise),
                Some((first, mut acc, n)) => {
                    acc.add_assign(ks, &part)?;
                    (first, acc, n + noise)
                }
            });
        }
        let (first, acc, mut noise) =
            sum.ok_or(Error::Encoding("a rotation sum needs a term".into()))?;
        if self.groups.keys().any(|&g| g != 0) {
            noise = noise.plus_error(lazy_finish_error(&ct.ctx));
        }
        let (c0, c1) = acc.finish(ks)?;
        first.derived(vec![c0, c1], first.level, first.scale, noise)
    }
}

/// The giant and baby parts (g, b) of a step k in [0, slots) (type
/// documentation of [`RotationSum`]): (0, k) without giant steps, else k
/// taken in (-slots/2, slots/2], g = floor(k / G) G (modulo slots) and
/// b = k - g in [0, G).
pub(crate) fn split_step(k: usize, slots: usize, giant: Option<usize>) -> (usize, usize) {
    let Some(big) = giant else {
        return (0, k);
    };
    let signed = if k > slots / 2 {
        k as i64 - slots as i64
    } else {
        k as i64
    };
    let g = signed.div_euclid(big as i64) * big as i64;
    (
        g.rem_euclid(slots as i64) as usize,
        (signed - g) as usize % slots,
    )
}

/// A diagonal (or any public vector) u encoded at scale q_l `ratio` for
/// products at `level`: in Q_l, and with `extended` also in Q_l P (for
/// products with key switches before their ModDown). The vector is the
/// evaluator's public operand: its largest entry is its declared bound.
fn encode_diagonal(
    ctx: &Arc<CkksContext>,
    u: &[Complex],
    level: usize,
    ratio: f64,
    extended: bool,
) -> Result<(Plaintext, Option<Poly>)> {
    let q = ctx.prime(level)? as f64 * ratio;
    let bound = u.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
    let pt = Plaintext::encode(ctx, u, level, q, bound)?;
    let ext = match extended {
        true => Some(encode_in(ctx, u, q, ctx.key_switch().level_qp(level + 1)?)?),
        false => None,
    };
    Ok((pt, ext))
}

/// z = sum_i u_i rot(x, i), rescaled, for ct at `level` and the
/// diagonals u_i by step i (encoded at scale q_l in Q_l, and in Q_l P for
/// i != 0), with double hoisting: one ModUp of c1 for every rotation (`dec`,
/// computed here when not given), each rotation's inner product (x0_i,
/// x1_i) multiplied by u_i in Q_l P before any ModDown, and one division by
/// q_l P for the whole sum (ModDown and rescale merged): z = round((P
/// sum_i u_i (c0(X^g_i), [i = 0] c1) + sum_i u_i (x0_i, x1_i)) / (q_l P)).
/// Noise: as rotations, products, sum and rescale one by one, with one
/// rounding for every ModDown and the rescale.
fn hoisted_products(
    ct: &Ciphertext,
    dec: Option<&Decomposition>,
    level: usize,
    diagonals: &BTreeMap<usize, Plaintext>,
    extended: &BTreeMap<usize, Poly>,
    keys: &GaloisKeys,
) -> Result<Ciphertext> {
    ct.expect_size(2)?;
    let ctx = &ct.ctx;
    let ks = ctx.key_switch();
    let div = ctx.level(level)?.mod_down_rescale.as_ref();
    let div = div.ok_or(Error::LowestLevel)?;
    let owned;
    let dec = match dec {
        Some(d) => d,
        None => {
            owned = ks.decompose(&ct.polys[1])?;
            &owned
        }
    };
    // The switches' rounding is the final division's, paid once.
    let switch = digit_error(ctx, level);
    let qlp = ks.level_qp(level + 1)?;
    // a = sum_i u_i (c0(X^g_i), [i = 0] c1) in Q_l; x = sum_i u_i (x0_i, x1_i) in Q_l P.
    let mut a = [
        Poly::zero(ct.polys[0].basis(), Representation::Ntt),
        Poly::zero(ct.polys[1].basis(), Representation::Ntt),
    ];
    let mut x = [
        Poly::zero(qlp, Representation::Ntt),
        Poly::zero(qlp, Representation::Ntt),
    ];
    let mut noise: Option<Noise> = None;
    for (&i, pt) in diagonals {
        let term = if i == 0 {
            a[0].mul_acc(&ct.polys[0], &pt.poly)?;
            a[1].mul_acc(&ct.polys[1], &pt.poly)?;
            ct.noise * pt.noise
        } else {
            let g = rotation_element(ctx, i as i64)?;
            let key = keys
                .get(g)
                .ok_or_else(|| Error::MissingKey(format!("Galois key for a rotation by {i}")))?;
            let (x0, x1) = ks.inner_product(key, dec, Some(g))?;
            let u = &extended[&i];
            x[0].mul_acc(&x0, u)?;
            x[1].mul_acc(&x1, u)?;
            a[0].mul_acc(&ct.polys[0].automorphism(g)?, &pt.poly)?;
            ct.noise.plus_error(switch) * pt.noise
        };
        noise = Some(noise.map_or(term, |n| n + term));
    }
    let noise = noise.ok_or(Error::Encoding("the matrix is zero".into()))?;
    let [x0, x1] = x;
    let (mut x0, mut x1) = (x0, x1);
    ks.add_scaled_by_p(&mut x0, &a[0])?;
    ks.add_scaled_by_p(&mut x1, &a[1])?;
    let q = ctx.prime(level)? as f64;
    let scale = ct.scale * diagonals.values().next().map_or(q, |pt| pt.scale) / q;
    let polys = vec![div.apply_joined_owned(x0)?, div.apply_joined_owned(x1)?];
    ct.derived(
        polys,
        level - 1,
        scale,
        noise.divide(q, rounding_error(ctx, 2)),
    )
}
