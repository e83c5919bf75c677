//! Ciphertexts and homomorphic operations.
//!
//! A ciphertext at level l is (c0, c1[, c2]) in R_{Q_l}, NTT form, with
//! c0 + c1 s (+ c2 s^2) = D(m) + e (mod Q_l). It carries an estimate of the
//! standard deviation of e's coefficients (as log2), propagated with the
//! usual heuristic that error coefficients behave as independent random
//! variables (a product with a fixed polynomial p multiplies the variance by
//! ||p||_2^2; fresh, independent noise such as key switching or rounding adds
//! variances). Two ciphertexts may carry correlated noise (a rotation of a
//! ciphertext added to itself does), so their sum gets the safe
//! sigma1 + sigma2. An operation refuses to return a ciphertext
//! whose bound 8 sigma (exceeded with probability below 2^-40 per
//! coefficient) reaches Q_l / (2t), where decryption would fail. The
//! measured budget ([`SecretKey::noise_budget`](crate::SecretKey::noise_budget))
//! stays above the estimated one, which the tests check.

use std::sync::Arc;

use triskel_ring::{KeyId, LazyRlwe, LweCiphertext, Poly, Representation, Seed};

use crate::context::BfvContext;
use crate::encoding::Plaintext;
use crate::error::{Error, Result};
use crate::keys::{GaloisKeys, PublicKey, RelinKey};
use triskel_ring::rlwe::{check_same_context, RlweCiphertext};

/// Tail factor of the heuristic bound: 8 standard deviations.
pub(crate) const TAIL: f64 = 8.0;

/// Tail factor of the noise bound E that flooding hides: a Gaussian exceeds
/// 10 standard deviations with probability below 2^-75 per coefficient, so
/// below 2^-58 over all coefficients of any supported ring.
const FLOOD_TAIL: f64 = 10.0;

/// The weakest statistical security [`Ciphertext::flood`] accepts, in bits.
pub const MIN_FLOODING_SECURITY: u32 = 40;

/// A BFV ciphertext (see the module documentation), with the identity of
/// the secret key it is encrypted under: operations refuse to combine it
/// with a ciphertext or key of another secret key
/// ([`triskel_ring::Error::KeyMismatch`]), and results carry it on.
/// Dereferences to its [`RlweCiphertext`]: components, level, key identity.
#[derive(Clone, Debug)]
pub struct Ciphertext {
    pub(crate) rlwe: RlweCiphertext<BfvContext>,
    pub(crate) noise_log2: f64,
}

impl std::ops::Deref for Ciphertext {
    type Target = RlweCiphertext<BfvContext>;

    fn deref(&self) -> &Self::Target {
        &self.rlwe
    }
}

/// The log2 of a bound on the standard deviation of a sum of any two terms
/// with log2 standard deviations a and b: log2(2^a + 2^b).
pub(crate) fn add_correlated(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (1.0 + (lo - hi).exp2()).log2()
}

/// The log2 standard deviation of a sum of independent terms with log2
/// standard deviations a and b: log2(sqrt(4^a + 4^b)).
pub(crate) fn add_std(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + 0.5 * (1.0 + (2.0 * (lo - hi)).exp2()).log2()
}

/// The noise after dividing by q_last (see [`Ciphertext::mod_switch_to_next`]).
pub(crate) fn mod_switched_noise_log2(noise_log2: f64, q_last: u64, n: usize) -> f64 {
    let rounding = 0.5 * ((1.0 + 2.0 * n as f64 / 3.0) / 12.0).log2();
    add_std(add_std(noise_log2 - (q_last as f64).log2(), rounding), -1.0)
}

impl Ciphertext {
    pub(crate) fn new(
        ctx: &Arc<BfvContext>,
        key_id: KeyId,
        polys: Vec<Poly>,
        level: usize,
        noise_log2: f64,
        seed: Option<Seed>,
    ) -> Ciphertext {
        let rlwe = RlweCiphertext::new(ctx, key_id, polys, level, seed);
        Ciphertext { rlwe, noise_log2 }
    }

    /// Refuses a result whose estimated budget is gone.
    pub(crate) fn checked(self, operation: &'static str) -> Result<Ciphertext> {
        if self.estimated_noise_budget() <= 0.0 {
            return Err(Error::NoiseBudgetExhausted { operation });
        }
        Ok(self)
    }

    fn derived(&self, polys: Vec<Poly>, noise_log2: f64) -> Ciphertext {
        Ciphertext::new(&self.ctx, self.key_id, polys, self.level, noise_log2, None)
    }

    /// log2 of the estimated standard deviation of the noise coefficients
    /// (the module documentation says how it is propagated).
    pub fn noise_estimate_log2(&self) -> f64 {
        self.noise_log2
    }

    /// The estimated noise budget in bits: log2(Q_l / (2t)) - log2(8 sigma).
    /// Operations fail with [`Error::NoiseBudgetExhausted`] rather than
    /// return a ciphertext where this is <= 0.
    pub fn estimated_noise_budget(&self) -> f64 {
        let log2_q = self.ctx.level(self.level).map(|l| l.log2_q).unwrap_or(0.0);
        log2_q - (self.ctx.plain_modulus() as f64).log2() - 1.0 - TAIL.log2() - self.noise_log2
    }

    /// Ok when `other` belongs to this ciphertext's parameter set, secret
    /// key and level: checked before any work by operations on two.
    fn check_pair(&self, other: &Ciphertext) -> Result<()> {
        self.rlwe.check_pair(other)?;
        if self.level != other.level {
            return Err(Error::LevelMismatch {
                left: self.level,
                right: other.level,
            });
        }
        Ok(())
    }

    /// Component-wise combination of two ciphertexts of any sizes.
    fn combine(&self, other: &Ciphertext, subtract: bool) -> Result<Ciphertext> {
        self.check_pair(other)?;
        let size = self.size().max(other.size());
        let polys = (0..size)
            .map(|i| match (self.polys.get(i), other.polys.get(i)) {
                (Some(a), Some(b)) if subtract => a.sub(b),
                (Some(a), Some(b)) => a.add(b),
                (Some(a), None) => Ok(a.clone()),
                (None, Some(b)) if subtract => b.neg(),
                (None, Some(b)) => Ok(b.clone()),
                (None, None) => unreachable!("i < the larger size"),
            })
            .collect::<triskel_ring::Result<Vec<_>>>()?;
        let noise = add_correlated(self.noise_log2, other.noise_log2);
        self.derived(polys, noise)
            .checked(if subtract { "sub" } else { "add" })
    }

    /// Encrypts m1 + m2. Noise: e1 + e2.
    pub fn add(&self, other: &Ciphertext) -> Result<Ciphertext> {
        self.combine(other, false)
    }

    /// Encrypts m1 - m2. Noise: e1 - e2.
    pub fn sub(&self, other: &Ciphertext) -> Result<Ciphertext> {
        self.combine(other, true)
    }

    /// Encrypts -m. Noise unchanged.
    pub fn neg(&self) -> Result<Ciphertext> {
        let polys = self
            .polys
            .iter()
            .map(Poly::neg)
            .collect::<triskel_ring::Result<Vec<_>>>()?;
        Ok(self.derived(polys, self.noise_log2))
    }

    /// D(m') at this ciphertext's level, NTT form.
    fn scaled_plain(&self, pt: &Plaintext) -> Result<Poly> {
        let mut d = crate::keys::scaled_message(&self.ctx, pt, self.level)?;
        d.to_ntt()?;
        Ok(d)
    }

    /// Encrypts m + m'. Noise: e plus the rounding of D(m') (|r| <= 1/2).
    pub fn add_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        check_same_context(&self.ctx, &pt.ctx)?;
        let mut polys = self.polys.clone();
        polys[0].add_assign(&self.scaled_plain(pt)?)?;
        self.derived(polys, add_std(self.noise_log2, -1.0))
            .checked("add_plain")
    }

    /// Encrypts m - m'. Noise as for [`add_plain`](Self::add_plain).
    pub fn sub_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        check_same_context(&self.ctx, &pt.ctx)?;
        let mut polys = self.polys.clone();
        polys[0].sub_assign(&self.scaled_plain(pt)?)?;
        self.derived(polys, add_std(self.noise_log2, -1.0))
            .checked("sub_plain")
    }

    /// Encrypts m * m' (slot-wise under batching). Each component is
    /// multiplied by the centered lift of m'. Noise: (e + r) m' with r the
    /// rounding of D(m): sigma' = ||m'||_2 sqrt(sigma^2 + 1/4).
    pub fn mul_plain(&self, pt: &Plaintext) -> Result<Ciphertext> {
        check_same_context(&self.ctx, &pt.ctx)?;
        let lifted = pt.lifted(self.level)?;
        let polys = self
            .polys
            .iter()
            .map(|c| c.mul(lifted))
            .collect::<triskel_ring::Result<Vec<_>>>()?;
        let noise = pt.centered_l2().max(1.0).log2() + add_std(self.noise_log2, -1.0);
        self.derived(polys, noise).checked("mul_plain")
    }

    /// Encrypts m1 * m2 as a 3-component ciphertext (relinearize next).
    ///
    /// "HPS over P" (Kim, Polyakov and Zucca, ePrint 2021/204, Algorithm 2)
    /// with an auxiliary basis A > n Q_l: the first operand c is extended
    /// exactly from Q_l to Q_l || A; the second, c', is switched to A,
    /// c'' = round(A c' / Q_l), and extended exactly back to Q_l || A. The
    /// tensor x = c (x) c'' (about (A / Q_l) c (x) c') is taken there, and
    /// round(t x / A) lands in Q_l directly, with no conversion back. x may
    /// wrap modulo Q_l A: a multiple Q_l A w of it adds t Q_l w to t x / A,
    /// which is 0 modulo Q_l.
    ///
    /// Noise: the dominant terms are t (e1 r2 + e2 r1), where r_i = (c(s) -
    /// D(m) - e) / Q has coefficients of variance about n/18 (c1 uniform times
    /// a ternary s), plus rounding terms of variance about n t^2 / 12:
    /// sigma'^2 = t^2 n (sigma1^2 + sigma2^2) (n/18 + 1/12) + n t^2 / 12, and
    /// the switch's rounding u (|u_i| <= 1/2): (t / A) c(s) u(s), about
    /// (t Q_l / A) r u(s), of variance (t Q_l / A)^2 n (n/18 + 1/12) (1 + 2n/3) / 12.
    pub fn mul(&self, other: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair(other)?;
        self.expect_size(2)?;
        other.expect_size(2)?;
        let lv = self.ctx.level(self.level)?;
        let tables = lv.mul_tables(&self.ctx)?;
        let t = self.ctx.plain_modulus();
        let coefficients = |c: &Poly| -> Result<Poly> {
            let mut coef = c.clone();
            coef.to_coefficient()?;
            Ok(coef)
        };
        // The first operand's part in A: its exact extension (its part in
        // Q_l is the ciphertext itself).
        let extend = |coef: &Poly| -> Result<Poly> {
            let mut aux = tables.q_to_aux.exact_extend(coef)?;
            aux.to_ntt()?;
            Ok(aux)
        };
        // The second operand switched to A, round(A c / Q_l) = round((A c) / Q_l)
        // (A c is 0 modulo A), and its exact extension back to Q_l; then
        // times t, which the tensor carries into t x (fewer limbs to scale
        // than in the tensor's three components, and the same residues).
        let switch = |mut scaled: Poly| -> Result<(Poly, Poly)> {
            scaled.mul_rns_scalar_assign(&tables.aux_mod_q)?;
            let zero = Poly::zero(&tables.aux, Representation::Coefficient);
            let mut in_aux = tables.switch_to_aux.apply_owned(zero, scaled)?;
            let mut in_q = tables.aux_to_q.exact_extend(&in_aux)?;
            for part in [&mut in_q, &mut in_aux] {
                part.mul_small_assign(t as i64)?;
                part.to_ntt()?;
            }
            Ok((in_q, in_aux))
        };
        let tensor = |u0: &Poly, u1: &Poly, v0: &Poly, v1: &Poly| -> Result<[Poly; 3]> {
            let d0 = u0.mul(v0)?;
            let mut d1 = u0.mul(v1)?;
            d1.mul_acc(u1, v0)?;
            Ok([d0, d1, u1.mul(v1)?])
        };
        let (x0, x1) = (&self.polys[0], &self.polys[1]);
        let x_coef = [coefficients(x0)?, coefficients(x1)?];
        let (a0, a1) = (extend(&x_coef[0])?, extend(&x_coef[1])?);
        let [y0_coef, y1_coef] = if std::ptr::eq(self, other) {
            x_coef
        } else {
            [
                coefficients(&other.polys[0])?,
                coefficients(&other.polys[1])?,
            ]
        };
        let ((y0, b0), (y1, b1)) = (switch(y0_coef)?, switch(y1_coef)?);
        let in_q = tensor(x0, x1, &y0, &y1)?;
        let in_aux = tensor(&a0, &a1, &b0, &b1)?;
        let polys = in_q
            .into_iter()
            .zip(in_aux)
            .map(|(d_q, mut d_aux)| -> Result<Poly> {
                d_aux.to_coefficient()?;
                Ok(tables.scale_down.apply_owned(d_q, d_aux)?)
            })
            .collect::<Result<Vec<_>>>()?;
        let n = self.ctx.n() as f64;
        let log_t = (t as f64).log2();
        let cross = log_t
            + 0.5 * (n * (n / 18.0 + 1.0 / 12.0)).log2()
            + add_correlated(self.noise_log2, other.noise_log2);
        let rounding = log_t + 0.5 * (n / 12.0).log2();
        let switch = log_t
            + tables.log2_q_over_aux
            + 0.5 * (n * (n / 18.0 + 1.0 / 12.0) * (1.0 + 2.0 * n / 3.0) / 12.0).log2();
        // Empirical margin: in squaring chains the measured growth exceeds
        // this independent-coefficient model by up to about 1 bit per
        // multiplication (the demo prints both), so one bit is added.
        let noise = add_std(add_std(cross, rounding), switch) + 1.0;
        self.derived(polys, noise).checked("mul")
    }

    /// Encrypts m^2 as a 3-component ciphertext (relinearize next).
    pub fn square(&self) -> Result<Ciphertext> {
        self.mul(self)
    }

    /// Key-switching noise at this level as a standard deviation: the ring
    /// layer's worst-case bound (with the expected l1-norm 2n/3 of a ternary
    /// secret) taken as 8 sigma, which overestimates it.
    fn key_switch_noise_log2(&self) -> f64 {
        let n = self.ctx.n() as u64;
        self.ctx
            .key_switch()
            .noise_bound(self.level + 1, 2 * n / 3)
            .max(1.0)
            .log2()
            - TAIL.log2()
    }

    /// Turns (c0, c1, c2) into (c0, c1) + switch(c2 : s^2 -> s).
    /// Noise: e plus the key-switching bound.
    pub fn relinearize(&self, rk: &RelinKey) -> Result<Ciphertext> {
        let polys = self.relinearized(rk)?;
        let noise = add_std(self.noise_log2, self.key_switch_noise_log2());
        self.derived(polys, noise).checked("relinearize")
    }

    /// The Galois elements that rotate the rows left by `steps` with the
    /// keys at hand: the key of `steps` itself when there is one, otherwise a
    /// sequence of power-of-two rotations (empty for a multiple of n/2).
    fn rotation_elements(&self, steps: i64, keys: &GaloisKeys) -> Vec<usize> {
        let half = (self.ctx.n() / 2) as i64;
        let steps = steps.rem_euclid(half);
        if steps == 0 {
            return Vec::new();
        }
        let g = self.ctx.galois_element_for_rotation(steps);
        if keys.keys().contains_key(&g) {
            return vec![g];
        }
        (0..half.trailing_zeros())
            .filter(|bit| steps >> bit & 1 == 1)
            .map(|bit| self.ctx.galois_element_for_rotation(1 << bit))
            .collect()
    }

    /// Applies X -> X^g for every g of `elements` in turn, with lazy ModDown.
    fn apply_galois(&self, elements: &[usize], keys: &GaloisKeys) -> Result<Ciphertext> {
        keys.check(self)?;
        self.expect_size(2)?;
        let mut lazy = LazyCiphertext::new(self)?;
        for &g in elements {
            lazy = lazy.rotated(g, keys)?;
        }
        lazy.finish()?.checked("rotate")
    }

    /// Rotates both rows of slots left by `steps` (right when negative):
    /// X -> X^(3^steps). Uses the key for `steps` when there is one,
    /// otherwise a sequence of power-of-two rotations whose keys exist
    /// (with lazy ModDown: one more ModDown in all, not one per rotation).
    pub fn rotate_rows(&self, steps: i64, keys: &GaloisKeys) -> Result<Ciphertext> {
        keys.check(self)?;
        let elements = self.rotation_elements(steps, keys);
        if elements.is_empty() {
            return Ok(self.clone());
        }
        self.apply_galois(&elements, keys)
    }

    /// The rotate-and-add tree: for each s of `steps` in turn, x <- x +
    /// rotate_rows(x, s) (so steps n/4, ..., 2, 1 sum every slot of a row
    /// into each). Same result as that loop, with lazy ModDown: the first
    /// components of all key switches are added in Q_l P and moved down
    /// once at the end, so r rotations cost r + 1 ModDowns instead of 2r.
    /// Noise: as for the loop.
    pub fn rotation_tree_sum(&self, steps: &[i64], keys: &GaloisKeys) -> Result<Ciphertext> {
        keys.check(self)?;
        self.expect_size(2)?;
        let mut lazy = LazyCiphertext::new(self)?;
        for &s in steps {
            let mut rotated = lazy.clone();
            for g in self.rotation_elements(s, keys) {
                rotated = rotated.rotated(g, keys)?;
            }
            lazy.add_assign(&rotated)?;
        }
        lazy.finish()?.checked("rotation_tree_sum")
    }

    /// The sum of the rotations of the rows left by each of `steps` (0 is
    /// the ciphertext itself), each step with its own Galois key. The
    /// switches share one ModUp of c1 (hoisting) and one ModDown (their inner
    /// products are summed in Q_l P first), so k rotations cost about one
    /// key switch plus k inner products. Noise: as if each rotation were
    /// done on its own and the results added (an overestimate: the ModDown
    /// rounding is paid once).
    pub fn sum_of_rotations(&self, steps: &[i64], keys: &GaloisKeys) -> Result<Ciphertext> {
        keys.check(self)?;
        self.expect_size(2)?;
        if steps.is_empty() {
            return Err(Error::InvalidParameters(
                "a sum of rotations needs at least one step".into(),
            ));
        }
        let half = (self.ctx.n() / 2) as i64;
        let ks = self.ctx.key_switch();
        let (c0, c1) = (&self.polys[0], &self.polys[1]);
        let dec = ks.decompose(c1)?;
        let mut sum = [
            Poly::zero(c0.basis(), c0.representation()),
            Poly::zero(c1.basis(), c1.representation()),
        ];
        let mut inner: Option<(Poly, Poly)> = None;
        let mut noise: Option<f64> = None;
        for &s in steps {
            let term_noise = if s.rem_euclid(half) == 0 {
                sum[0].add_assign(c0)?;
                sum[1].add_assign(c1)?;
                self.noise_log2
            } else {
                let g = self.ctx.galois_element_for_rotation(s.rem_euclid(half));
                let key = keys.get(g).ok_or_else(|| {
                    Error::MissingKey(format!(
                        "Galois key for a rotation by {s} (element {g}; hoisted sums have no \
                         power-of-two fallback)"
                    ))
                })?;
                let (ip0, ip1) = ks.inner_product(key, &dec, Some(g))?;
                match &mut inner {
                    None => inner = Some((ip0, ip1)),
                    Some((acc0, acc1)) => {
                        acc0.add_assign(&ip0)?;
                        acc1.add_assign(&ip1)?;
                    }
                }
                sum[0].add_assign(&c0.automorphism(g)?)?;
                add_std(self.noise_log2, self.key_switch_noise_log2())
            };
            noise = Some(noise.map_or(term_noise, |n| add_correlated(n, term_noise)));
        }
        if let Some((acc0, acc1)) = inner {
            sum[0].add_assign(&ks.mod_down_owned(acc0)?)?;
            sum[1].add_assign(&ks.mod_down_owned(acc1)?)?;
        }
        let [u0, u1] = sum;
        self.derived(vec![u0, u1], noise.unwrap_or(self.noise_log2))
            .checked("rotate")
    }

    /// Swaps the two rows of slots (SEAL's "rotate columns"): X -> X^-1.
    pub fn rotate_columns(&self, keys: &GaloisKeys) -> Result<Ciphertext> {
        self.apply_galois(&[self.ctx.galois_element_for_row_swap()], keys)
    }

    /// Re-randomizes: adds a fresh public-key encryption of zero, so that the
    /// result's randomness (its c1 in particular) no longer depends on how
    /// it was computed. Its noise still does; see [`flood`](Self::flood).
    pub fn rerandomize(&self, pk: &PublicKey) -> Result<Ciphertext> {
        pk.check(self)?;
        self.expect_size(2)?;
        self.add(&crate::keys::encrypt_zero(pk, self.level, None)?)
    }

    /// Noise flooding with `statistical_security` = lambda bits (at least
    /// `MIN_FLOODING_SECURITY`): re-randomizes with an encryption of zero
    /// whose c0 carries noise uniform in [-B, B], B = 2^f with
    /// 2^(f + 1) >= n E 2^lambda, where E = 10 sigma bounds the current noise
    /// (sigma: this ciphertext's noise estimate, which the tests check stays
    /// above the measured noise). The output noise is then within
    /// statistical distance 2^-lambda of the same distribution for any
    /// computation with noise below E: it hides how the result was computed.
    /// Costs about f bits of noise budget; an error when they are not there.
    pub fn flood(&self, pk: &PublicKey, statistical_security: u32) -> Result<Ciphertext> {
        pk.check(self)?;
        self.expect_size(2)?;
        if !(MIN_FLOODING_SECURITY..=128).contains(&statistical_security) {
            return Err(Error::InvalidParameters(format!(
                "statistical security {statistical_security} bits is outside {MIN_FLOODING_SECURITY}..=128"
            )));
        }
        let log2_e = self.noise_log2 + FLOOD_TAIL.log2();
        let f = (log2_e + (self.ctx.n() as f64).log2() + statistical_security as f64 - 1.0).ceil();
        if f > 120.0 {
            return Err(Error::NoiseBudgetExhausted { operation: "flood" });
        }
        let zero = crate::keys::encrypt_zero(pk, self.level, Some(f.max(0.0) as u32))?;
        let noise = add_std(self.noise_log2, zero.noise_log2);
        let polys = vec![
            self.polys[0].add(&zero.polys[0])?,
            self.polys[1].add(&zero.polys[1])?,
        ];
        self.derived(polys, noise).checked("flood")
    }

    /// Sample extraction at the last level (one prime q): coefficient
    /// `index` of the plaintext as an LWE ciphertext modulo 2^64 under
    /// [`SecretKey::lwe_key`](crate::SecretKey::lwe_key), with phase
    /// m 2^64 / t + (e + rounding) 2^64 / q. Only the coefficients asked for
    /// leave the ciphertext; the key holder can decrypt nothing else from
    /// them (see [`crate::biometric`] for why the ciphertext is re-randomized
    /// first). Errors above level 0 (mod-switch down first) or on a
    /// 3-component ciphertext.
    pub fn sample_extract(&self, indices: &[usize]) -> Result<Vec<LweCiphertext>> {
        self.expect_size(2)?;
        if self.level != 0 {
            return Err(Error::InvalidParameters(format!(
                "sample extraction needs level 0 (one prime); this ciphertext is at level {}",
                self.level
            )));
        }
        Ok(self.rlwe.sample_extract(indices)?)
    }

    /// Modulus switching to the next level: c -> round(c / q_last) in
    /// Q_{l-1}, which divides the noise by q_last and adds the rounding
    /// r0 + r1 s (variance (1 + 2n/3) / 12) and the change from
    /// round(Q m / t) / q_last to round(Q_{l-1} m / t) (below 1/2).
    pub fn mod_switch_to_next(&self) -> Result<Ciphertext> {
        let lv = self.ctx.level(self.level)?;
        let down = lv.switch_down.as_ref().ok_or(Error::LowestLevel)?;
        let polys = self.divided_components(down)?;
        let q_last = lv.basis.modulus(lv.basis.len() - 1).value();
        let noise = mod_switched_noise_log2(self.noise_log2, q_last, self.ctx.n());
        let mut ct = self.derived(polys, noise);
        ct.rlwe.level -= 1;
        ct.checked("mod_switch")
    }
}

/// A ciphertext during a run of rotations with lazy ModDown (ring's
/// [`LazyRlwe`]: the first halves of its key switches stay in Q_l P and
/// are moved down once), and its noise.
#[derive(Clone)]
struct LazyCiphertext<'a> {
    ct: &'a Ciphertext,
    inner: LazyRlwe<'a>,
    noise_log2: f64,
}

impl<'a> LazyCiphertext<'a> {
    fn new(ct: &'a Ciphertext) -> Result<LazyCiphertext<'a>> {
        Ok(LazyCiphertext {
            ct,
            inner: LazyRlwe::new(&ct.polys[0], &ct.polys[1])?,
            noise_log2: ct.noise_log2,
        })
    }

    /// X -> X^g with its Galois key: (c0(X^g), 0) + switch(c1(X^g)).
    fn rotated(&self, g: usize, keys: &GaloisKeys) -> Result<LazyCiphertext<'a>> {
        let key = keys
            .get(g)
            .ok_or_else(|| Error::MissingKey(format!("Galois key for element {g}")))?;
        Ok(LazyCiphertext {
            ct: self.ct,
            inner: self.inner.rotated(self.ct.ctx.key_switch(), key, g)?,
            noise_log2: add_std(self.noise_log2, self.ct.key_switch_noise_log2()),
        })
    }

    /// self += other (noise: correlated, as rotations of one ciphertext are).
    fn add_assign(&mut self, other: &LazyCiphertext<'_>) -> Result<()> {
        self.inner
            .add_assign(self.ct.ctx.key_switch(), &other.inner)?;
        self.noise_log2 = add_correlated(self.noise_log2, other.noise_log2);
        Ok(())
    }

    /// The ciphertext (c0 + round(x / P), c1): the one ModDown of x.
    fn finish(self) -> Result<Ciphertext> {
        let (c0, c1) = self.inner.finish(self.ct.ctx.key_switch())?;
        Ok(self.ct.derived(vec![c0, c1], self.noise_log2))
    }
}

#[cfg(test)]
mod tests {
    //! The tensor of [`Ciphertext::mul`] against big integers, then the rest
    //! of a multiplication pipeline, on every named set.

    use num_bigint::{BigInt, Sign};
    use num_traits::{One, Signed, Zero};

    use super::*;
    use crate::{BfvParameters, Plaintext, SecretKey};

    /// Coefficients of p as integers in (-Q/2, Q/2], by CRT.
    fn centered(p: &Poly) -> (Vec<BigInt>, BigInt) {
        let mut p = p.clone();
        p.to_coefficient().unwrap();
        let primes = p.basis().primes();
        let q: BigInt = primes.iter().map(|&x| BigInt::from(x)).product();
        let weights: Vec<BigInt> = primes
            .iter()
            .map(|&qi| {
                let qi_big = BigInt::from(qi);
                let qhat = &q / &qi_big;
                let inv = (&qhat % &qi_big).modpow(&BigInt::from(qi - 2), &qi_big);
                qhat * inv
            })
            .collect();
        let half = &q / 2;
        let coeffs = (0..p.n())
            .map(|j| {
                let mut v = BigInt::zero();
                for (i, w) in weights.iter().enumerate() {
                    v += w * p.limb(i)[j];
                }
                v %= &q;
                if v > half {
                    v -= &q;
                }
                v
            })
            .collect();
        (coeffs, q)
    }

    /// Coefficient j of a * b in Z[X]/(X^n + 1).
    fn negacyclic(a: &[BigInt], b: &[BigInt], j: usize) -> BigInt {
        let n = a.len();
        let mut acc = BigInt::zero();
        for (i, ai) in a.iter().enumerate() {
            if i <= j {
                acc += ai * &b[j - i];
            } else {
                acc -= ai * &b[n + j - i];
            }
        }
        acc
    }

    /// round(x / d) for d > 0 (halves away from zero do not occur here).
    fn round_div(x: &BigInt, d: &BigInt) -> BigInt {
        let two = BigInt::from(2);
        let (num, den) = (x * &two + d, d * &two);
        let q = &num / &den;
        // Floor division for negative numerators.
        if num.sign() == Sign::Minus && &q * &den != num {
            q - BigInt::one()
        } else {
            q
        }
    }

    #[test]
    fn mul_relin_rotate_mod_switch_on_every_named_set() {
        for params in BfvParameters::named() {
            let name = params.name().to_string();
            let ctx = BfvContext::new(params).unwrap();
            let (n, t) = (ctx.n(), ctx.plain_modulus());
            let sk = SecretKey::generate(&ctx).unwrap();
            let x: Vec<u64> = (0..n as u64).map(|i| (i * 7 + 1) % t).collect();
            let y: Vec<u64> = (0..n as u64).map(|i| (i * i + 3) % t).collect();
            let cx = sk.public_key().unwrap();
            let cx = cx
                .encrypt(&Plaintext::from_slots(&ctx, &x).unwrap())
                .unwrap();
            let cy = sk
                .encrypt(&Plaintext::from_slots(&ctx, &y).unwrap())
                .unwrap();
            let tensor = match cx.mul(&cy) {
                Ok(c) => c,
                Err(e) => panic!("{name}: {e}"),
            };
            // The tensor is round(t (x (*) y) / Q) for the centered lifts, up
            // to the modulus switch of the second operand to A: y'' = A y / Q
            // + u with |u_i| <= 1/2 adds (t / A) x (*) u, at most
            // t n (Q / 2) (1 / 2) / A < t / 4 since A > n Q, plus one rounding.
            let (x0, q) = centered(&cx.polys[0]);
            let (x1, _) = centered(&cx.polys[1]);
            let (y0, _) = centered(&cy.polys[0]);
            let (y1, _) = centered(&cy.polys[1]);
            let got: Vec<Vec<BigInt>> = tensor.polys.iter().map(|p| centered(p).0).collect();
            let tb = BigInt::from(t);
            for j in [0, 1, n / 2, n - 1] {
                let d = [
                    negacyclic(&x0, &y0, j),
                    negacyclic(&x0, &y1, j) + negacyclic(&x1, &y0, j),
                    negacyclic(&x1, &y1, j),
                ];
                for (k, dk) in d.iter().enumerate() {
                    let half: BigInt = &q / 2;
                    let mut diff = (&got[k][j] - round_div(&(dk * &tb), &q)) % &q;
                    if diff > half {
                        diff -= &q;
                    } else if diff <= -half {
                        diff += &q;
                    }
                    assert!(
                        diff.abs() <= BigInt::from(t / 4 + 1),
                        "{name}: tensor component {k}, coefficient {j} is {diff} off"
                    );
                }
            }
            let expected: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % t).collect();
            let rk = sk.relin_key().unwrap();
            let gk = sk.galois_keys(&[1], false).unwrap();
            let product = tensor.relinearize(&rk).unwrap();
            assert_eq!(
                sk.decrypt(&product).unwrap().to_slots().unwrap(),
                expected,
                "{name}"
            );
            let rotated = product.rotate_rows(1, &gk).unwrap();
            let slots = sk.decrypt(&rotated).unwrap().to_slots().unwrap();
            let half = n / 2;
            for (s, &got) in slots.iter().enumerate() {
                let (row, col) = (s / half, s % half);
                assert_eq!(
                    got,
                    expected[row * half + (col + 1) % half],
                    "{name}: slot {s}"
                );
            }
            if ctx.max_level() == 0 {
                assert_eq!(
                    rotated.mod_switch_to_next().unwrap_err(),
                    Error::LowestLevel
                );
                continue;
            }
            let down = rotated.mod_switch_to_next().unwrap();
            assert_eq!(
                sk.decrypt(&down).unwrap().to_slots().unwrap(),
                slots,
                "{name}"
            );
            assert!(down.estimated_noise_budget() <= sk.noise_budget(&down).unwrap());
        }
    }
}
