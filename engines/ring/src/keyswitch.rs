//! Secret keys and hybrid (GHS) key switching, the one mechanism behind
//! relinearization and Galois (rotation) keys of every RLWE scheme.
//!
//! Notation: Q = q_0...q_{k-1} the ciphertext modulus, P = p_0...p_{kp-1} the
//! special primes, Q split into digits Q_0, ..., Q_{D-1} of alpha consecutive
//! primes ([`digit_ranges`]), and the gadget
//! g_j = (Q/Q_j) * [(Q/Q_j)^-1]_{Q_j}, so that sum_j [c]_{Q_j} g_j = c mod Q.
//!
//! A key for the switch s' -> s is, for each digit j, a pair in R_{QP} (NTT form)
//!
//! ```text
//! (b_j, a_j) = (-a_j s + e_j + P g_j s',  a_j),   a_j uniform (from a seed), e_j small.
//! ```
//!
//! Switching c (which multiplies s') at a level with Q_l = q_0...q_{l}:
//!
//! 1. ModUp: d_j = the exact extension of [c]_{Q_j} (centered, |d_j| <= Q_j/2)
//!    from Q_j to Q_l P;
//! 2. inner product in NTT form: (c0, c1) = sum_j d_j (b_j, a_j) mod Q_l P, so that
//!    c0 + c1 s = P c s' + sum_j d_j e_j  (mod Q_l P);
//! 3. ModDown: (u0, u1) = (round(c0 / P), round(c1 / P)) in Q_l.
//!
//! Then u0 + u1 s = c s' + E with
//! ||E||_inf <= N B_e sum_j Q_j / (2P) + (1 + ||s||_1) / 2
//! where B_e bounds the key errors ([`KeySwitchContext::noise_bound`]).

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use triskel_kernels as k;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::basis::{digit_ranges, RnsBasis};
use crate::conversion::{BaseConverter, DivRound};
use crate::error::{invalid, Error, Result};
use crate::key_id::KeyId;
use crate::par;
use crate::poly::{cached_galois_permutation, same_basis, Poly, Representation};
use crate::sampling::{
    sample_ternary, sample_ternary_hw, sample_uniform, NoiseDistribution, Prng, Seed,
};
use crate::scratch::{Scratch, SecretScratch};

/// How secret keys are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretDistribution {
    /// Uniform in {-1, 0, 1}.
    Ternary,
    /// Ternary with exactly this many non-zero coefficients.
    TernaryHammingWeight(usize),
}

/// A secret polynomial s with small integer coefficients, kept as integers so
/// it can be reduced to any basis (CRT-consistent), and its public identity
/// ([`KeyId`]), which every key derived from it carries. The coefficients
/// are zeroized on drop; `Debug` prints only the size.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SecretKey {
    coeffs: Vec<i64>,
    #[zeroize(skip)]
    id: KeyId,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey {{ n: {}, .. }}", self.coeffs.len())
    }
}

impl SecretKey {
    /// Samples a secret of degree n, then its identity, from `rng`.
    pub fn generate(n: usize, dist: SecretDistribution, rng: &mut Prng) -> Result<SecretKey> {
        let coeffs = match dist {
            SecretDistribution::Ternary => sample_ternary(n, rng),
            SecretDistribution::TernaryHammingWeight(h) => sample_ternary_hw(n, h, rng)?,
        };
        let id = KeyId::sample(rng);
        Ok(SecretKey { coeffs, id })
    }

    /// Wraps given coefficients (each |s_i| <= 2^20) with the identity they
    /// were stored with.
    pub fn from_coeffs(coeffs: Vec<i64>, id: KeyId) -> Result<SecretKey> {
        // Wrapped first, so that a refused key is wiped when it drops.
        let key = SecretKey { coeffs, id };
        if key.coeffs.iter().any(|c| c.unsigned_abs() > 1 << 20) {
            return invalid("secret coefficients must be small (|s_i| <= 2^20)");
        }
        Ok(key)
    }

    /// Ring degree n.
    pub fn n(&self) -> usize {
        self.coeffs.len()
    }

    /// The identity of this key, carried by the keys and ciphertexts made
    /// with it.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// The integer coefficients.
    pub fn coeffs(&self) -> &[i64] {
        &self.coeffs
    }

    /// ||s||_1, the sum of |s_i|.
    pub fn l1_norm(&self) -> u64 {
        self.coeffs.iter().map(|c| c.unsigned_abs()).sum()
    }

    /// s in `basis`, in representation `repr` (zeroized when dropped).
    pub fn to_poly(&self, basis: &Arc<RnsBasis>, repr: Representation) -> Result<Zeroizing<Poly>> {
        Ok(Zeroizing::new(Poly::from_signed(
            basis,
            &self.coeffs,
            repr,
        )?))
    }
}

/// Tables for one level (Q_l = the first `ql` primes of Q).
struct LevelTables {
    q: Arc<RnsBasis>,
    qp: Arc<RnsBasis>,
    /// Per digit: its primes within Q_l and the converter digit -> the
    /// complement (the other limbs of Q_l P, in order).
    digits: Vec<(Range<usize>, BaseConverter)>,
    mod_down: DivRound,
}

/// Precomputed hybrid key-switching parameters: bases Q, P, Q || P, the digits,
/// and ModUp / ModDown tables for every level.
pub struct KeySwitchContext {
    q: Arc<RnsBasis>,
    p: Arc<RnsBasis>,
    qp: Arc<RnsBasis>,
    digits: Vec<Range<usize>>,
    noise: NoiseDistribution,
    /// levels[ql - 1] for ql = 1..=k primes of Q.
    levels: Vec<LevelTables>,
}

impl std::fmt::Debug for KeySwitchContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeySwitchContext")
            .field("q", &self.q)
            .field("p", &self.p)
            .field("digits", &self.digits)
            .field("noise", &self.noise)
            .finish_non_exhaustive()
    }
}

impl KeySwitchContext {
    /// Key switching for ciphertext basis `q`, special primes `p` and `dnum`
    /// digits (alpha = ceil(k / dnum) primes each; [`digit_ranges`]), with key
    /// errors from `noise`. For the usual noise growth P should be at least as
    /// large as the largest digit product Q_j.
    pub fn new(
        q: &Arc<RnsBasis>,
        p: &Arc<RnsBasis>,
        dnum: usize,
        noise: NoiseDistribution,
    ) -> Result<KeySwitchContext> {
        let qp = q.concat(p)?;
        let digits = digit_ranges(q.len(), dnum)?;
        let levels = (1..=q.len())
            .map(|ql| level_tables(q, p, &digits, ql))
            .collect::<Result<Vec<_>>>()?;
        Ok(KeySwitchContext {
            q: q.clone(),
            p: p.clone(),
            qp,
            digits,
            noise,
            levels,
        })
    }

    /// The ciphertext basis Q.
    pub fn q(&self) -> &Arc<RnsBasis> {
        &self.q
    }

    /// The special primes P.
    pub fn p(&self) -> &Arc<RnsBasis> {
        &self.p
    }

    /// Q || P, the basis of the keys.
    pub fn qp(&self) -> &Arc<RnsBasis> {
        &self.qp
    }

    /// The digits (prime ranges of Q); their number is the key's length.
    pub fn digits(&self) -> &[Range<usize>] {
        &self.digits
    }

    /// The key error distribution.
    pub fn noise(&self) -> NoiseDistribution {
        self.noise
    }

    /// The bound of the module documentation on ||u0 + u1 s - c s'||_inf for
    /// a switch at the level with `ql` primes, for a secret s of l1-norm
    /// `s_l1`: N B_e sum_j Q_j / (2P) + (1 + ||s||_1) / 2 (as f64).
    pub fn noise_bound(&self, ql: usize, s_l1: u64) -> f64 {
        let log_p = self.p.log2_product();
        let sum: f64 = self
            .digits
            .iter()
            .filter(|r| r.start < ql)
            .map(|r| {
                let log_qj: f64 = (r.start..r.end.min(ql))
                    .map(|i| (self.q.modulus(i).value() as f64).log2())
                    .sum();
                (log_qj - log_p).exp2()
            })
            .sum();
        self.q.n() as f64 * self.noise.bound() as f64 * sum / 2.0 + (1.0 + s_l1 as f64) / 2.0
    }

    fn level(&self, c: &Poly) -> Result<&LevelTables> {
        let ql = c.basis().len();
        match self.levels.get(ql.wrapping_sub(1)) {
            Some(t) if same_basis(&t.q, c.basis()) => Ok(t),
            _ => Err(Error::BasisMismatch),
        }
    }

    /// The switch of module documentation: for c in a prefix Q_l of Q (any
    /// representation) and a key for s' -> s, returns (u0, u1) in Q_l, NTT
    /// form, with u0 + u1 s = c s' + E, ||E||_inf <= [`noise_bound`](Self::noise_bound).
    ///
    /// ModUp and the inner product run limb by limb of Q_l P: every digit's
    /// limb is extended, transformed and used by the dot product while it is
    /// in cache, and the digits are never stored whole (for one switch of c;
    /// [`decompose`](Self::decompose) keeps them for several).
    pub fn switch(&self, key: &KeySwitchKey, c: &Poly) -> Result<(Poly, Poly)> {
        self.switch_adding(key, c, [None, None])
    }

    /// [`switch`](Self::switch) with a polynomial of c's basis (NTT form)
    /// added to each half: (u0 + y_0, u1 + y_1), each sum made in the
    /// ModDown's last pass (a relinearization adds its c0 and c1, a rotation
    /// its c0(X^g), without a pass of their own).
    ///
    /// The ModDown runs limb by limb right after the inner product of the
    /// limb (the P limbs first): each limb of both halves, and of an
    /// addend (an [`Addend::Automorphism`] is mapped limb by limb there), is
    /// finished while it is in cache.
    pub fn switch_adding(
        &self,
        key: &KeySwitchKey,
        c: &Poly,
        addends: [Option<Addend<'_>>; 2],
    ) -> Result<(Poly, Poly)> {
        let mut halves = [Half::Divide, Half::Divide];
        for (addend, h) in addends.into_iter().zip(&mut halves) {
            let Some(Addend::Poly(y) | Addend::Automorphism(y, _)) = addend else {
                continue;
            };
            if !same_basis(y.basis(), c.basis()) {
                return Err(Error::BasisMismatch);
            }
            y.expect_representation(Representation::Ntt)?;
            *h = match addend {
                Some(Addend::Automorphism(_, g)) if g % 2 == 0 => {
                    return invalid(format!("Galois element {g} must be odd"));
                }
                Some(Addend::Automorphism(_, g)) => {
                    Half::DivideAddingMapped(y, cached_galois_permutation(c.n(), g)?)
                }
                _ => Half::DivideAdding(y),
            };
        }
        let (t, acc0, acc1) = self.switch_raw(key, c, NO_PRODUCTS, halves, None)?;
        Ok((
            Poly::from_scratch(&t.q, Representation::Ntt, acc0),
            Poly::from_scratch(&t.q, Representation::Ntt, acc1),
        ))
    }

    /// The relinearization of (d0, d1, d2) (NTT form, c's basis) with the
    /// key of s^2: (d0 + u0, d1 + u1) for (u0, u1) the switch of d2, the
    /// sums made in the ModDown ([`switch_adding`](Self::switch_adding)).
    pub fn relinearize(&self, key: &KeySwitchKey, d: [&Poly; 3]) -> Result<(Poly, Poly)> {
        let [d0, d1, d2] = d;
        self.switch_adding(key, d2, [Some(Addend::Poly(d0)), Some(Addend::Poly(d1))])
    }

    /// [`switch`](Self::switch) with only the second half moded down: returns
    /// (x0, u1) with x0 in Q_l P (NTT form) and u1 in Q_l, so that
    /// round(x0 / P) + u1 s = c s' + E. A caller that keeps its first
    /// component scaled by P in Q_l P (see [`scale_by_p`](Self::scale_by_p))
    /// adds x0 to it and moves down once after several switches (lazy
    /// ModDown across consecutive rotations); u1 is needed in Q_l at once,
    /// since the next switch decomposes it.
    pub fn switch_lazy(&self, key: &KeySwitchKey, c: &Poly) -> Result<(Poly, Poly)> {
        let (t, acc0, acc1) =
            self.switch_raw(key, c, NO_PRODUCTS, [Half::Keep, Half::Divide], None)?;
        Ok((
            Poly::from_scratch(&t.qp, Representation::Ntt, acc0),
            Poly::from_scratch(&t.q, Representation::Ntt, acc1),
        ))
    }

    /// [`switch`](Self::switch) without the ModDown: (x0, x1) in Q_l P (NTT
    /// form) with round(x0 / P) + round(x1 / P) s = c s' + E. ModUp and the
    /// inner product run limb by limb as in `switch` (no digit is stored
    /// whole); a caller adds P y ([`add_scaled_by_p`](Self::add_scaled_by_p))
    /// and divides by P and more primes at once (CKKS fuses ModDown with
    /// rescaling).
    pub fn switch_unreduced(&self, key: &KeySwitchKey, c: &Poly) -> Result<(Poly, Poly)> {
        self.switch_unreduced_plus(key, c, NO_PRODUCTS)
    }

    /// [`switch_unreduced`](Self::switch_unreduced) with products of
    /// polynomials of Q_l (c's basis, NTT form) added to the Q_l limbs of
    /// each half: x_h += sum a b over the pairs (a, b) of `products[h]`, in
    /// the same pass as the inner product (the dot kernel takes them as
    /// extra terms). CKKS passes its tensor's (a_0, P b_0) and so on: the
    /// tensor's d0 and d1, scaled by P, never exist as polynomials.
    pub fn switch_unreduced_plus(
        &self,
        key: &KeySwitchKey,
        c: &Poly,
        products: [&[(&Poly, &Poly)]; 2],
    ) -> Result<(Poly, Poly)> {
        let (t, acc0, acc1) = self.switch_raw(key, c, products, [Half::Keep, Half::Keep], None)?;
        Ok((
            Poly::from_scratch(&t.qp, Representation::Ntt, acc0),
            Poly::from_scratch(&t.qp, Representation::Ntt, acc1),
        ))
    }

    /// [`switch_unreduced_plus`](Self::switch_unreduced_plus) divided at
    /// once by `div`, whose kept primes followed by its dropped ones must be
    /// Q_l P (CKKS: Q_{l-1}, then q_l and P: ModDown and rescale in one
    /// division): round(x_h / D) in the kept basis, limb by limb right after
    /// each limb's inner product (the dropped limbs first), as in
    /// [`switch`](Self::switch).
    pub fn switch_divided(
        &self,
        key: &KeySwitchKey,
        c: &Poly,
        products: [&[(&Poly, &Poly)]; 2],
        div: &DivRound,
    ) -> Result<(Poly, Poly)> {
        let (t, acc0, acc1) =
            self.switch_raw(key, c, products, [Half::Divide, Half::Divide], Some(div))?;
        debug_assert!(t.qp.len() > div.keep().len());
        Ok((
            Poly::from_scratch(div.keep(), Representation::Ntt, acc0),
            Poly::from_scratch(div.keep(), Representation::Ntt, acc1),
        ))
    }

    /// P y in Q_l P for y in Q_l (NTT form): the first component of a
    /// ciphertext made ready for [`switch_lazy`](Self::switch_lazy)
    /// accumulation; [`mod_down`](Self::mod_down) gives y back exactly.
    pub fn scale_by_p(&self, y: &Poly) -> Result<Poly> {
        let mut x = Poly::zero(self.level_qp(y.basis().len())?, Representation::Ntt);
        self.add_scaled_by_p(&mut x, y)?;
        Ok(x)
    }

    /// ModUp fused with the inner product: the two halves in Q_l P, in
    /// pooled buffers (fresh ones of this size would page-fault). The
    /// halves that `halves` does not keep are also divided (by P, or by
    /// `div`'s dropped primes), limb by limb: the dropped limbs first, then
    /// each kept limb i finished right after its inner product, plus limb i
    /// of the addend if any (mapped there by its permutation); their kept
    /// limbs are then the results.
    fn switch_raw(
        &self,
        key: &KeySwitchKey,
        c: &Poly,
        products: [&[(&Poly, &Poly)]; 2],
        halves: [Half; 2],
        div: Option<&DivRound>,
    ) -> Result<(&LevelTables, Scratch, Scratch)> {
        let t = self.level(c)?;
        // The division of the halves moved down: by P (the level's ModDown)
        // unless the caller gives one whose kept then dropped primes are Q_l P.
        let div = match div {
            None => &t.mod_down,
            Some(d) => {
                let joined = d.keep().primes().into_iter().chain(d.drop_basis().primes());
                if d.keep().n() != self.q.n() || !joined.eq(t.qp.primes()) {
                    return Err(Error::BasisMismatch);
                }
                d
            }
        };
        let kept = div.keep().len();
        self.check_key(key)?;
        for &(a, b) in products.iter().copied().flatten() {
            for p in [a, b] {
                if !same_basis(p.basis(), c.basis()) {
                    return Err(Error::BasisMismatch);
                }
                p.expect_representation(Representation::Ntt)?;
            }
        }
        if t.digits.len() + products[0].len().max(products[1].len()) > k::MAX_TERMS {
            return invalid("too many products for one inner product");
        }
        let (n, ql, kq) = (self.q.n(), c.basis().len(), self.q.len());
        let (other, other_is_ntt) = other_representation(c)?;
        let (c_coef, c_ntt): (&[u64], &[u64]) = match other_is_ntt {
            true => (c.data(), &other),
            false => (&other, c.data()),
        };
        // y_i of each digit's conversion (multi-prime digits only).
        let scaled = t
            .digits
            .iter()
            .map(|(range, conv)| conv.scale_inputs(&c_coef[range.start * n..range.end * n]))
            .collect::<Result<Vec<_>>>()?;
        let lp = t.qp.len();
        // Limb i of both halves: the inner product of the digits' limbs i
        // (every limb of `ext`, the per-worker extension buffer, is written
        // by a conversion first).
        let limb = |ext: &mut Scratch, i: usize, out0: &mut [u64], out1: &mut [u64]| {
            // Limb i of d_j: c's own (NTT form) on the digit's primes,
            // else the exact extension of [c]_{Q_j}, transformed.
            for ((range, conv), (slot, y)) in t.digits.iter().zip(ext.chunks_mut(n).zip(&scaled)) {
                if !range.contains(&i) {
                    let ys = y
                        .as_deref()
                        .unwrap_or(&c_coef[range.start * n..range.end * n]);
                    let o = if i < range.start { i } else { i - range.len() };
                    conv.convert_limb(o, ys, slot, true)?;
                    t.qp.plan(i).forward(slot)?;
                }
            }
            let d: Vec<&[u64]> = t
                .digits
                .iter()
                .zip(ext.chunks(n))
                .map(|((range, _), slot)| match range.contains(&i) {
                    true => &c_ntt[i * n..(i + 1) * n],
                    false => slot,
                })
                .collect();
            let ki = if i < ql { i } else { kq + i - ql };
            let limb_products = products.map(|pairs| match i < ql {
                true => pairs.iter().map(|(a, b)| (a.limb(i), b.limb(i))).collect(),
                false => Vec::new(),
            });
            key_dot(key, ki, t.qp.modulus(i), &d, limb_products, out0, out1)
        };
        let ext = || Scratch::for_overwrite(t.digits.len() * n);
        // Every limb of both is written by `key_dot`.
        let mut acc0 = Scratch::for_overwrite(lp * n);
        let mut acc1 = Scratch::for_overwrite(lp * n);
        if halves.iter().all(|h| matches!(h, Half::Keep)) {
            par::try_limb_pairs_with(&mut acc0, &mut acc1, n, ext, |e, i, o0, o1| {
                limb(e, i, o0, o1)
            })?;
            return Ok((t, acc0, acc1));
        }
        let (q0, p0) = acc0.split_at_mut(kept * n);
        let (q1, p1) = acc1.split_at_mut(kept * n);
        par::try_limb_pairs_with(p0, p1, n, ext, |e, j, o0, o1| limb(e, kept + j, o0, o1))?;
        let prepare = |h: usize, p: &mut [u64]| match halves[h] {
            Half::Keep => Ok(None),
            _ => div.prepare_drop(p, true),
        };
        let (s0, s1) = (prepare(0, p0)?, prepare(1, p1)?);
        let ys = [s0.as_deref().unwrap_or(p0), s1.as_deref().unwrap_or(p1)];
        par::try_limb_pairs_with(
            q0,
            q1,
            n,
            // The extension buffer, x_c and an addend limb.
            || (ext(), Scratch::for_overwrite(n), Scratch::for_overwrite(n)),
            |(e, x_c, tmp), i, o0, o1| {
                limb(e, i, o0, o1)?;
                for (h, out) in [o0, o1].into_iter().enumerate() {
                    let y = match &halves[h] {
                        Half::Keep => continue,
                        Half::Divide => None,
                        Half::DivideAdding(y) => Some(y.limb(i)),
                        Half::DivideAddingMapped(y, perm) => {
                            k::automorphism_ntt(div.keep().modulus(i), tmp, y.limb(i), perm)?;
                            Some(&tmp[..])
                        }
                    };
                    div.finish_limb(i, ys[h], x_c, out, true, y)?;
                }
                Ok(())
            },
        )?;
        Ok((t, acc0, acc1))
    }

    /// An error unless `key` has this context's digit count and basis Q P
    /// (a key assembled elsewhere, e.g. by the threshold protocols).
    pub fn check_key(&self, key: &KeySwitchKey) -> Result<()> {
        // A seeded key's a_j are regenerated over the basis of its b_j.
        let a = key.a.get().map_or(&[][..], |a| a.as_slice());
        let belongs = key
            .b
            .iter()
            .chain(a)
            .all(|p| same_basis(p.basis(), &self.qp));
        let halves = key.seed.is_some() || a.len() == key.b.len();
        if !belongs || key.b.len() != self.digits.len() || !halves {
            return invalid("key-switching key does not belong to this context");
        }
        Ok(())
    }

    /// Galois keys assembled elsewhere (by element), each checked by
    /// [`check_key`](Self::check_key) and to belong to the secret `id`.
    pub fn check_galois_keys(
        &self,
        id: KeyId,
        keys: impl IntoIterator<Item = (usize, KeySwitchKey)>,
    ) -> Result<BTreeMap<usize, KeySwitchKey>> {
        let keys: BTreeMap<usize, KeySwitchKey> = keys.into_iter().collect();
        for key in keys.values() {
            self.check_key(key)?;
            id.check("a Galois key", key.id())?;
        }
        Ok(keys)
    }

    /// [`switch`](Self::switch) of c(X^g) (with `galois = Some(g)`) or of c
    /// itself, from c's [`Decomposition`]: the ModUp is done once and shared
    /// by every switch of c and of its automorphic images (hoisting).
    pub fn switch_decomposed(
        &self,
        key: &KeySwitchKey,
        dec: &Decomposition,
        galois: Option<usize>,
    ) -> Result<(Poly, Poly)> {
        let (t, acc0, acc1) = self.inner_product_raw(key, dec, galois)?;
        Ok((self.mod_down_raw(t, acc0)?, self.mod_down_raw(t, acc1)?))
    }

    /// Step 1 of the module documentation (ModUp): for c in a prefix Q_l of
    /// Q (any representation), the digits d_j in Q_l P, NTT form.
    pub fn decompose(&self, c: &Poly) -> Result<Decomposition> {
        let t = self.level(c)?;
        let (n, ql) = (self.q.n(), c.basis().len());
        let lp = t.qp.len();
        let (other, other_is_ntt) = other_representation(c)?;
        let (c_coef, c_ntt): (&[u64], &[u64]) = match other_is_ntt {
            true => (c.data(), &other),
            false => (&other, c.data()),
        };
        let mut digits = Vec::with_capacity(t.digits.len());
        for (range, conv) in &t.digits {
            // d_j is c itself (NTT form) on the digit's own primes and the
            // exact extension of [c]_{Q_j}, then NTT, on the complement,
            // whose limb i is conversion target i (before the digit) or
            // i - width (after).
            let src = &c_coef[range.start * n..range.end * n];
            let scaled = conv.scale_inputs(src)?;
            let ys = scaled.as_deref().unwrap_or(src);
            // Every limb is copied or converted.
            let mut d = Scratch::for_overwrite(lp * n);
            par::try_limbs(&mut d, n, |i, l| {
                if range.contains(&i) {
                    l.copy_from_slice(&c_ntt[i * n..(i + 1) * n]);
                    return Ok(());
                }
                let o = if i < range.start { i } else { i - range.len() };
                conv.convert_limb(o, ys, l, true)?;
                Ok(t.qp.plan(i).forward(l)?)
            })?;
            digits.push(d);
        }
        Ok(Decomposition { ql, digits })
    }

    /// Step 2 of the module documentation: sum_j d_j (b_j, a_j) in Q_l P
    /// (NTT form), with every d_j first mapped by X -> X^g when `galois` is
    /// `Some(g)` (then the key must be the Galois key of g). ModDown
    /// ([`mod_down`](Self::mod_down)) of both halves finishes the switch;
    /// a caller may instead add P x to them and divide by P and more primes
    /// at once (CKKS fuses ModDown with rescaling this way).
    pub fn inner_product(
        &self,
        key: &KeySwitchKey,
        dec: &Decomposition,
        galois: Option<usize>,
    ) -> Result<(Poly, Poly)> {
        let (t, acc0, acc1) = self.inner_product_raw(key, dec, galois)?;
        Ok((
            Poly::from_scratch(&t.qp, Representation::Ntt, acc0),
            Poly::from_scratch(&t.qp, Representation::Ntt, acc1),
        ))
    }

    /// [`inner_product`](Self::inner_product) into pooled buffers, with the
    /// level's tables.
    fn inner_product_raw(
        &self,
        key: &KeySwitchKey,
        dec: &Decomposition,
        galois: Option<usize>,
    ) -> Result<(&LevelTables, Scratch, Scratch)> {
        self.check_key(key)?;
        let t = self
            .levels
            .get(dec.ql.wrapping_sub(1))
            .ok_or(Error::BasisMismatch)?;
        let (n, ql, kq) = (self.q.n(), dec.ql, self.q.len());
        let lp = t.qp.len();
        // Limb i of Q_l P is limb key_idx(i) of the key (in Q P).
        let key_idx = |i: usize| if i < ql { i } else { kq + i - ql };
        let perm = match galois {
            Some(g) if g % 2 == 0 => return invalid(format!("Galois element {g} must be odd")),
            Some(g) => Some(cached_galois_permutation(n, g)?),
            None => None,
        };
        // Every limb of both is written by `key_dot`, every limb of the
        // per-worker `permuted` by an automorphism.
        let mut acc0 = Scratch::for_overwrite(lp * n);
        let mut acc1 = Scratch::for_overwrite(lp * n);
        // Per limb i: both halves are lazy dot products over the digits,
        // sum_j d_j (b_j, a_j), of the digits' limbs i (first mapped by
        // X -> X^g when rotating: the NTT-domain slot permutation).
        let permuted_len = if perm.is_some() {
            dec.digits.len() * n
        } else {
            0
        };
        par::try_limb_pairs_with(
            &mut acc0,
            &mut acc1,
            n,
            || Scratch::for_overwrite(permuted_len),
            |permuted, i, out0, out1| {
                let m = t.qp.modulus(i);
                let range = i * n..(i + 1) * n;
                let d: Vec<&[u64]> = match &perm {
                    Some(perm) => {
                        for (dst, digit) in permuted.chunks_mut(n).zip(&dec.digits) {
                            k::automorphism_ntt(m, dst, &digit[range.clone()], perm)?;
                        }
                        permuted.chunks(n).collect()
                    }
                    None => dec.digits.iter().map(|d| &d[range.clone()]).collect(),
                };
                key_dot(key, key_idx(i), m, &d, [Vec::new(), Vec::new()], out0, out1)
            },
        )?;
        Ok((t, acc0, acc1))
    }

    /// Step 3 of the module documentation (ModDown): round(x / P) in Q_l for
    /// x in Q_l P, NTT form in and out.
    pub fn mod_down(&self, x: &Poly) -> Result<Poly> {
        let t = self.mod_down_tables(x)?;
        self.mod_down_raw(t, Scratch::copy_of(x.data()))
    }

    /// [`mod_down`](Self::mod_down) of an owned x, in place: its first limbs
    /// become the result (no copy).
    pub fn mod_down_owned(&self, mut x: Poly) -> Result<Poly> {
        let t = self.mod_down_tables(&x)?;
        let split = t.q.len() * self.q.n();
        let (keep, drop) = x.data_mut().split_at_mut(split);
        t.mod_down.apply_raw_in_place(keep, true, drop, true)?;
        Ok(x.truncate_to(&t.q))
    }

    /// The tables of the level whose Q_l P is x's basis (x in NTT form).
    fn mod_down_tables(&self, x: &Poly) -> Result<&LevelTables> {
        let ql = x.basis().len().wrapping_sub(self.p.len());
        let t = match self.levels.get(ql.wrapping_sub(1)) {
            Some(t) if same_basis(&t.qp, x.basis()) => t,
            _ => return Err(Error::BasisMismatch),
        };
        x.expect_representation(Representation::Ntt)?;
        Ok(t)
    }

    /// ModDown of the limbs of Q_l P in `x` (NTT form), in place: its
    /// first limbs become the polynomial of Q_l (no copy).
    fn mod_down_raw(&self, t: &LevelTables, mut x: Scratch) -> Result<Poly> {
        let split = t.q.len() * self.q.n();
        let (keep, drop) = x.split_at_mut(split);
        t.mod_down.apply_raw_in_place(keep, true, drop, true)?;
        Ok(Poly::from_scratch(&t.q, Representation::Ntt, x))
    }

    /// The basis Q_l P of the level with `ql` primes (that of
    /// [`inner_product`](Self::inner_product)'s results).
    pub fn level_qp(&self, ql: usize) -> Result<&Arc<RnsBasis>> {
        self.levels
            .get(ql.wrapping_sub(1))
            .map(|t| &t.qp)
            .ok_or_else(|| Error::InvalidParameter(format!("no level with {ql} primes")))
    }

    /// P y for y in Q_l (NTT form), still in Q_l: the factor of the products
    /// given to [`switch_unreduced_plus`](Self::switch_unreduced_plus).
    pub fn times_p(&self, y: &Poly) -> Result<Poly> {
        let ql = y.basis().len();
        if ql == 0 || ql > self.levels.len() || !same_basis(y.basis(), &self.levels[ql - 1].q) {
            return Err(Error::BasisMismatch);
        }
        y.expect_representation(Representation::Ntt)?;
        // Every limb is written.
        let mut x = Poly::for_overwrite(y.basis(), Representation::Ntt);
        par::try_limbs(x.data_mut(), self.q.n(), |i, l| {
            let m = y.basis().modulus(i);
            Ok(k::mul_scalar(m, l, y.limb(i), self.p.product_mod(m))?)
        })?;
        Ok(x)
    }

    /// x += P y for x in Q_l P and y in Q_l, both in NTT form (P y is 0
    /// modulo P, so only the Q_l limbs change). Lets a caller add y to a
    /// switch result before dividing by P (and possibly more primes) once.
    pub fn add_scaled_by_p(&self, x: &mut Poly, y: &Poly) -> Result<()> {
        let ql = y.basis().len();
        let qp = self.level_qp(ql)?;
        if !same_basis(x.basis(), qp) || !same_basis(y.basis(), &self.levels[ql - 1].q) {
            return Err(Error::BasisMismatch);
        }
        x.expect_representation(Representation::Ntt)?;
        y.expect_representation(Representation::Ntt)?;
        let n = self.q.n();
        let p = &self.p;
        par::try_limbs(&mut x.data_mut()[..ql * n], n, |i, l| {
            let m = qp.modulus(i);
            let mut t = Scratch::for_overwrite(n);
            k::mul_scalar(m, &mut t, y.limb(i), p.product_mod(m))?;
            Ok(k::add_assign(m, l, &t)?)
        })
    }
}

/// A polynomial that [`KeySwitchContext::switch_adding`] adds to one half
/// of a switch.
#[derive(Debug, Clone, Copy)]
pub enum Addend<'a> {
    /// y itself.
    Poly(&'a Poly),
    /// y(X^g), for the Galois element g (odd).
    Automorphism(&'a Poly, usize),
}

/// What `switch_raw` does with one half after its inner products.
enum Half<'a> {
    /// Keeps it in Q_l P.
    Keep,
    /// Divides it (ModDown, or the caller's division).
    Divide,
    /// Divides it and adds y.
    DivideAdding(&'a Poly),
    /// Divides it and adds y mapped by the NTT-domain permutation of an
    /// automorphism.
    DivideAddingMapped(&'a Poly, Arc<k::GaloisPermutation>),
}

/// No extra products (see [`KeySwitchContext::switch_unreduced_plus`]).
const NO_PRODUCTS: [&[(&Poly, &Poly)]; 2] = [&[], &[]];

/// Limb `ki` (in Q P) of both halves of the key dotted with the digits'
/// limbs `d`, plus the limb's extra products: out0 = sum_j d_j b_j +
/// sum x y over products[0], out1 = sum_j d_j a_j + sum x y over products[1].
fn key_dot(
    key: &KeySwitchKey,
    ki: usize,
    m: &k::Modulus,
    d: &[&[u64]],
    products: [Vec<(&[u64], &[u64])>; 2],
    out0: &mut [u64],
    out1: &mut [u64],
) -> Result<()> {
    for ((half, out), extra) in [&key.b[..], key.uniform()]
        .into_iter()
        .zip([out0, out1])
        .zip(products)
    {
        let (mut x, mut y) = (d.to_vec(), Vec::with_capacity(d.len() + extra.len()));
        y.extend(half[..d.len()].iter().map(|p| p.limb(ki)));
        for (u, v) in extra {
            x.push(u);
            y.push(v);
        }
        k::dot(m, out, &x, &y)?;
    }
    Ok(())
}

/// c in its other representation (a pooled, transformed copy), and
/// whether that is the NTT form. The inverse transform reads c's limbs
/// directly (out of place, no copy first).
fn other_representation(c: &Poly) -> Result<(Scratch, bool)> {
    let to_ntt = c.representation() == Representation::Coefficient;
    let mut other = match to_ntt {
        true => Scratch::copy_of(c.data()),
        // Every limb is written by the transform.
        false => Scratch::for_overwrite(c.data().len()),
    };
    par::try_limbs(&mut other, c.n(), |i, l| match to_ntt {
        true => Ok(c.basis().plan(i).forward(l)?),
        false => Ok(c.basis().plan(i).inverse_to(l, c.limb(i))?),
    })?;
    Ok((other, to_ntt))
}

/// The ModUp of one polynomial c at a level (Q_l): its digits d_j in Q_l P,
/// NTT form ([`KeySwitchContext::decompose`]). Computed once, it serves the
/// switches of c and of every c(X^g) (hoisted rotations).
pub struct Decomposition {
    ql: usize,
    /// Pooled buffers: hoisting makes one per rotation batch, and fresh
    /// allocations of this size page-fault.
    digits: Vec<Scratch>,
}

impl std::fmt::Debug for Decomposition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decomposition")
            .field("ql", &self.ql)
            .field("digits", &self.digits.len())
            .finish()
    }
}

impl Decomposition {
    /// Number of primes of the level it was made at.
    pub fn level_primes(&self) -> usize {
        self.ql
    }
}

fn level_tables(
    q: &Arc<RnsBasis>,
    p: &Arc<RnsBasis>,
    digits: &[Range<usize>],
    ql: usize,
) -> Result<LevelTables> {
    let q_l = q.sub_basis(0..ql)?;
    let qp = q_l.concat(p)?;
    let digits = digits
        .iter()
        .filter(|r| r.start < ql)
        .map(|r| {
            let range = r.start..r.end.min(ql);
            let complement: Vec<usize> = (0..qp.len()).filter(|i| !range.contains(i)).collect();
            let plans = complement.iter().map(|&i| qp.plans()[i].clone()).collect();
            let target = RnsBasis::from_plans(q.n(), plans)?;
            let conv = BaseConverter::new(&q_l.sub_basis(range.clone())?, &target)?;
            Ok((range, conv))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(LevelTables {
        mod_down: DivRound::new(&q_l, p)?,
        q: q_l,
        qp,
        digits,
    })
}

/// A hybrid key-switching key s' -> s: per digit j, (b_j, a_j) in R_{QP}, NTT
/// form (module documentation). The a_j are regenerated from `seed`
/// (stream j) when the key is first used, so only the b_j and the seed are
/// serialized and loading a key costs no more than reading its bytes; a key
/// made by the two-round threshold protocol ([`crate::threshold`]) has no
/// seed (its a_j are sums of the parties' shares) and stores them. It
/// carries the identity of s, the key its results are under; the engine
/// that uses it checks that identity against the ciphertext's.
#[derive(Clone, Debug)]
pub struct KeySwitchKey {
    pub(crate) id: KeyId,
    pub(crate) seed: Option<Seed>,
    pub(crate) b: Vec<Poly>,
    a: OnceLock<Vec<Poly>>,
}

impl PartialEq for KeySwitchKey {
    /// Equal keys have equal a_j: regenerated from equal seeds, or stored.
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.seed == other.seed
            && self.b == other.b
            && (self.seed.is_some() || self.uniform() == other.uniform())
    }
}

impl Eq for KeySwitchKey {}

/// The uniform halves a_j of a key with `digits` digits over `qp`, from its
/// seed.
fn uniform_part(qp: &Arc<RnsBasis>, digits: usize, seed: Seed) -> Vec<Poly> {
    (0..digits)
        .map(|j| {
            let mut rng = Prng::from_seed_stream(seed, j as u64);
            sample_uniform(qp, Representation::Ntt, &mut rng)
        })
        .collect()
}

/// The uniform halves a_j of a key of `ctx`, from its seed.
pub(crate) fn key_uniform_part(ctx: &KeySwitchContext, seed: Seed) -> Vec<Poly> {
    uniform_part(&ctx.qp, ctx.digits.len(), seed)
}

impl KeySwitchKey {
    /// The key for switching from s' = `from` (a polynomial in `ctx.qp()`,
    /// any representation) to s = `to`; the seed of the a_j and the errors
    /// are drawn from `rng`.
    pub fn generate(
        ctx: &KeySwitchContext,
        from: &Poly,
        to: &SecretKey,
        rng: &mut Prng,
    ) -> Result<KeySwitchKey> {
        let seed = rng.gen_seed();
        KeySwitchKey::generate_with_seed(ctx, from, to, seed, rng)
    }

    /// [`generate`](Self::generate) with the a_j from `seed` (a common
    /// reference string in the threshold protocols); the errors from `rng`.
    pub(crate) fn generate_with_seed(
        ctx: &KeySwitchContext,
        from: &Poly,
        to: &SecretKey,
        seed: Seed,
        rng: &mut Prng,
    ) -> Result<KeySwitchKey> {
        let a = key_uniform_part(ctx, seed);
        let b = KeySwitchKey::bodies(ctx, from, to, &a, rng)?;
        Ok(KeySwitchKey {
            id: to.id,
            seed: Some(seed),
            b,
            a: OnceLock::from(a),
        })
    }

    /// The b_j = -a_j s + e_j + P g_j s' of a key s' = `from` -> s = `to`
    /// for the given a_j, errors from `rng`.
    pub(crate) fn bodies(
        ctx: &KeySwitchContext,
        from: &Poly,
        to: &SecretKey,
        a: &[Poly],
        rng: &mut Prng,
    ) -> Result<Vec<Poly>> {
        if !same_basis(from.basis(), &ctx.qp) || to.n() != ctx.q.n() || a.len() != ctx.digits.len()
        {
            return Err(Error::BasisMismatch);
        }
        let n = ctx.q.n();
        let mut s_from = Zeroizing::new(from.clone());
        s_from.to_ntt()?;
        let s = to.to_poly(&ctx.qp, Representation::Ntt)?;
        let mut b = Vec::with_capacity(a.len());
        for (j, range) in ctx.digits.iter().enumerate() {
            let e = Zeroizing::new(ctx.noise.sample(n, rng)?);
            // b_j = e_j - a_j s
            let mut bj = Poly::from_signed(&ctx.qp, &e, Representation::Ntt)?;
            let mut a_s = a[j].mul(&s)?;
            bj.sub_assign(&a_s)?;
            a_s.zeroize();
            // + P g_j s': P g_j = P mod q_i on digit j's primes, 0 elsewhere.
            for i in range.clone() {
                let m = ctx.qp.modulus(i);
                let pm = ctx.p.product_mod(m);
                let (lo, hi) = (i * n, (i + 1) * n);
                let mut term = SecretScratch::copy_of(&s_from.data()[lo..hi]);
                k::mul_scalar_assign(m, &mut term, pm)?;
                k::add_assign(m, &mut bj.data_mut()[lo..hi], &term)?;
            }
            b.push(bj);
        }
        Ok(b)
    }

    /// The relinearization key: s' = s^2 -> s.
    pub fn relinearization(
        ctx: &KeySwitchContext,
        sk: &SecretKey,
        rng: &mut Prng,
    ) -> Result<KeySwitchKey> {
        let s = sk.to_poly(&ctx.qp, Representation::Ntt)?;
        let s2 = Zeroizing::new(s.mul(&s)?);
        KeySwitchKey::generate(ctx, &s2, sk, rng)
    }

    /// The Galois key for X -> X^g: s' = s(X^g) -> s. A ciphertext (c0, c1)
    /// under s maps to (c0(X^g), c1(X^g)) under s(X^g), and switching
    /// c1(X^g) with this key brings it back under s.
    pub fn galois(
        ctx: &KeySwitchContext,
        sk: &SecretKey,
        g: usize,
        rng: &mut Prng,
    ) -> Result<KeySwitchKey> {
        let s = sk.to_poly(&ctx.qp, Representation::Ntt)?;
        let sg = Zeroizing::new(s.automorphism(g)?);
        KeySwitchKey::generate(ctx, &sg, sk, rng)
    }

    /// Galois keys for every distinct element of `elements` (the identity
    /// 1 left out), by element.
    pub fn galois_set(
        ctx: &KeySwitchContext,
        sk: &SecretKey,
        elements: &[usize],
        rng: &mut Prng,
    ) -> Result<BTreeMap<usize, KeySwitchKey>> {
        let mut keys = BTreeMap::new();
        for &g in elements.iter().filter(|&&g| g != 1) {
            if let std::collections::btree_map::Entry::Vacant(slot) = keys.entry(g) {
                slot.insert(KeySwitchKey::galois(ctx, sk, g, rng)?);
            }
        }
        Ok(keys)
    }

    /// The identity of the secret key s this key switches to.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// The seed of the uniform halves (None for a key whose halves are
    /// stored, from the threshold relinearization protocol).
    pub fn seed(&self) -> Option<&Seed> {
        self.seed.as_ref()
    }

    /// Number of digits.
    pub fn len(&self) -> usize {
        self.b.len()
    }

    /// Never true for a generated key.
    pub fn is_empty(&self) -> bool {
        self.b.is_empty()
    }

    /// The pair (b_j, a_j) of digit j.
    pub fn digit(&self, j: usize) -> Option<(&Poly, &Poly)> {
        Some((self.b.get(j)?, self.uniform().get(j)?))
    }

    /// A key whose a_j are regenerated from `seed` when first used.
    pub(crate) fn seeded(id: KeyId, seed: Seed, b: Vec<Poly>) -> KeySwitchKey {
        KeySwitchKey {
            id,
            seed: Some(seed),
            b,
            a: OnceLock::new(),
        }
    }

    /// A key whose a_j are given (no seed).
    pub(crate) fn stored(id: KeyId, b: Vec<Poly>, a: Vec<Poly>) -> KeySwitchKey {
        KeySwitchKey {
            id,
            seed: None,
            b,
            a: OnceLock::from(a),
        }
    }

    /// The a_j, regenerated from the seed on the first call (a key without
    /// a seed holds them from its making).
    pub(crate) fn uniform(&self) -> &[Poly] {
        self.a.get_or_init(|| match (self.seed, self.b.first()) {
            (Some(seed), Some(b0)) => uniform_part(b0.basis(), self.b.len(), seed),
            // A key without a seed, or without digits, is made with its a_j.
            _ => Vec::new(),
        })
    }
}
