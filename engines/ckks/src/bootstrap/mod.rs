//! CKKS bootstrapping: a ciphertext at its last level back to a high level
//! with the same values (Cheon, Han, Kim, Kim and Song, EUROCRYPT 2018; the
//! sparse-secret encapsulation of Bossuat, Troncoso-Pastoriza and Hubaux,
//! ePrint 2022/024).
//!
//! ```text
//! ct at level 0 under s (modulo q_0, phase m + e, |m| well below q_0)
//!  0. times the integer k that brings its scale near q_0 / 2^ratio
//!  1. switch to the ephemeral secret s' (Hamming weight h), modulo q_0 p_0
//!  2. ModRaise: the centered residues modulo q_0 read modulo Q_L:
//!     phase t = m + q_0 I under s', |I| small because s' is sparse
//!  3. switch back to s modulo Q_L P
//!  4. CoeffToSlot: slots <- t's coefficients / (2 q_0 K) (bit-reversed)
//!  5. real and imaginary parts (a conjugation): y = t_i / (q_0 K) each
//!  6. EvalMod on both: sin(2 pi t_i / q_0) ~ 2 pi m_i / q_0 (optionally
//!     corrected by the arcsine: 6 z + z^3 ~ 6 arcsin(z))
//!  7. SlotToCoeff of re + i im, times 2^ratio / (2 pi) (/ 6 with the
//!     arcsine): the slots of m
//! ```
//!
//! Failure: step 6 is accurate only while |t_i / q_0| <= K. With
//! c' = (c0', c1') the ciphertext of step 1 in centered form, t_i / q_0 =
//! c0'_i / q_0 + sum_j (+-c1'_j / q_0) over the h non-zero coefficients of
//! s': a sum of h + 1 terms in [-1/2, 1/2], modelled as independent uniform
//! (c' is indistinguishable from uniform modulo q_0), so that t_i / q_0 +
//! (h + 1) / 2 follows the Irwin-Hall law of h + 1 uniforms on [0, 1]. A
//! bootstrap fails when some of the n coefficients has |t_i / q_0| > K:
//!
//! ```text
//! P(fail) <= n * 2 * P(IH_(h+1) <= (h + 1)/2 - K),
//! P(IH_m <= x) = (1 / m!) sum_(j <= x) (-1)^j C(m, j) (x - j)^m
//! ```
//!
//! For h = 32 and K = 16: x = 1/2, P = 2^-33 / 33! = 2^-155.8 per
//! coefficient side, 2^-138.8 per bootstrap at n = 2^16 (2^-139.8 at 2^15):
//! below the 2^-128 that [`Bootstrapper::new`] requires
//! ([`failure_probability_log2`]).
//!
//! Security: s' appears only as the secret of the level-0 switching key
//! (RLWE samples modulo q_0 p_0, a small modulus) and as the message of the
//! key back to s (samples under the dense s modulo Q P). The sparse secret
//! must therefore be secure at log2(q_0 p_0) only; see the `sparse` table.

pub(crate) mod dft;
pub(crate) mod eval_mod;
pub(crate) mod sparse;

use std::f64::consts::PI;
use std::sync::Arc;

use triskel_ring::{
    KeyId, KeySwitchContext, KeySwitchKey, Poly, Prng, Representation, RnsBasis,
    SecretDistribution, SecretKey as RingSecret,
};

use crate::ciphertext::Ciphertext;
use crate::context::CkksContext;
use crate::error::{Error, Result};
use crate::keys::{check_same_context, GaloisKeys, RelinKey, SecretKey};
use triskel_ring::max_log_qp_128;

use crate::noise::{key_switch_error, one_digit_switch_error, sum_bound, Noise};
use crate::params::CkksParameters;

use dft::{coeff_to_slot, slot_to_coeff, HomomorphicDft};
use eval_mod::EvalMod;

/// The shape of a bootstrapping circuit (module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootstrapParameters {
    /// Levels of CoeffToSlot (the FFT stages merged into this many
    /// sparse transforms).
    pub coeff_to_slot_depth: usize,
    /// Levels of SlotToCoeff.
    pub slot_to_coeff_depth: usize,
    /// K: EvalMod is accurate for |t / q_0| <= K.
    pub k: u32,
    /// Degree of EvalMod's cosine interpolant (at most 63).
    pub cosine_degree: usize,
    /// EvalMod's double-angle steps.
    pub double_angle: u32,
    /// Hamming weight h of the ephemeral secret.
    pub ephemeral_weight: usize,
    /// log2(q_0 / D_m): the input is brought to about the scale D_m, so
    /// that its coefficients stay well below q_0 (EvalMod linearizes the
    /// sine: a larger ratio, less error from it but more from EvalMod's
    /// own, which SlotToCoeff multiplies by 2^ratio / (2 pi)).
    pub log_message_ratio: u32,
    /// The arcsine correction after EvalMod: 6 z + z^3 = 6 arcsin(z) +
    /// O(z^5) for z = sin(2 pi k m / q_0), two more levels (the linearization
    /// error (2 pi eps)^2 B / 6 becomes (3 / 40) (2 pi eps)^4 B).
    pub arcsine: bool,
}

impl BootstrapParameters {
    /// The rotation steps the circuit needs keys for over `slots` slots
    /// (CoeffToSlot's and SlotToCoeff's, without conjugation), from the
    /// plaintext matrices alone: what [`Bootstrapper::rotation_steps`]
    /// returns, without encoding the transforms.
    pub fn rotation_steps(&self, slots: usize) -> Result<Vec<i64>> {
        let mut steps = Vec::new();
        for m in coeff_to_slot(slots, self.coeff_to_slot_depth, 1.0)?
            .iter()
            .chain(&slot_to_coeff(slots, self.slot_to_coeff_depth, 1.0)?)
        {
            steps.extend(m.rotation_steps());
        }
        steps.sort_unstable();
        steps.dedup();
        Ok(steps)
    }

    /// The levels a bootstrap uses: CoeffToSlot, EvalMod (the interpolant's
    /// ceil(log2(degree + 1)) and the double angles), SlotToCoeff.
    pub fn depth(&self) -> usize {
        let cosine = (usize::BITS - self.cosine_degree.leading_zeros()) as usize;
        self.coeff_to_slot_depth
            + cosine
            + self.double_angle as usize
            + 2 * usize::from(self.arcsine)
            + self.slot_to_coeff_depth
    }
}

/// A bootstrappable parameter set: the CKKS chain and the circuit's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootstrapSet {
    /// The chain, from q_0: the levels left after a bootstrap, then
    /// SlotToCoeff's, EvalMod's and CoeffToSlot's primes.
    pub ckks: CkksParameters,
    /// The circuit.
    pub bootstrap: BootstrapParameters,
}

impl BootstrapSet {
    /// `ckks-n65536-boot`: N = 2^16, 2^15 complex slots, scale 2^40.
    /// Q = 60 (q_0) + 9 x 40 (the levels left) + 3 x 40 (SlotToCoeff) + 11
    /// x 60 (EvalMod: a cosine of degree 47 in 6 levels, 3 double angles,
    /// the arcsine in 2) and 4 x 60 (CoeffToSlot) bits, P = 5 x 61 bits,
    /// dnum 6: log2 QP = 1745 of the 1747 that the ternary table allows.
    /// Ephemeral secret of weight 32 (estimated at 171.9 bits at log2(q_0
    /// p_0) = 121, the `sparse` table), K = 16: failure 2^-138.8 per
    /// bootstrap. Message ratio 2^7. 9 levels left, as Lattigo's
    /// N16QP1546H192H32.
    pub fn n65536() -> BootstrapSet {
        let mut q = vec![60];
        q.extend([40; 12]);
        q.extend([60; 15]);
        BootstrapSet {
            ckks: CkksParameters::new("ckks-n65536-boot", 1 << 16, &q, &[61; 5], 40, 6),
            bootstrap: BootstrapParameters {
                coeff_to_slot_depth: 4,
                slot_to_coeff_depth: 3,
                k: 16,
                cosine_degree: 47,
                double_angle: 3,
                ephemeral_weight: 32,
                log_message_ratio: 7,
                arcsine: true,
            },
        }
    }

    /// The fast insecure set of the tests (N = 1024, far above the 128-bit
    /// limit: its parameters are refused unless
    /// [`CkksParameters::allow_insecure`] is called): q_0 50 bits (scale
    /// 2^40), 2 levels left, SlotToCoeff 3 x 40, EvalMod 9 x 55 (degree 47,
    /// 3 double angles), CoeffToSlot 3 x 55; P 3 x 61; K = 16, weight 32,
    /// message ratio 2^10.
    pub fn insecure_n1024() -> BootstrapSet {
        let mut q = vec![50, 40, 40, 40, 40, 40];
        q.extend([55; 12]);
        BootstrapSet {
            ckks: CkksParameters::new("ckks-n1024-boot-insecure", 1024, &q, &[61; 3], 40, 6),
            bootstrap: BootstrapParameters {
                coeff_to_slot_depth: 3,
                slot_to_coeff_depth: 3,
                k: 16,
                cosine_degree: 47,
                double_angle: 3,
                ephemeral_weight: 32,
                log_message_ratio: 10,
                arcsine: false,
            },
        }
    }

    /// The same chain and circuit at ring degree `n` (2^10..=2^16; below
    /// 2^16 far above the 128-bit limit, so refused unless allowed): for
    /// measuring a set's precision and speed on a smaller ring.
    pub fn at_degree(mut self, n: usize) -> BootstrapSet {
        let name = format!("{}-at-n{n}", self.ckks.name());
        self.ckks = CkksParameters::new(
            &name,
            n,
            self.ckks.q_bits(),
            self.ckks.p_bits(),
            self.ckks.log_scale(),
            self.ckks.dnum(),
        );
        self
    }

    /// Every named secure set.
    pub fn named() -> Vec<BootstrapSet> {
        vec![BootstrapSet::n65536()]
    }
}

/// log2 of the probability that a bootstrap at ring degree n fails with an
/// ephemeral secret of Hamming weight h and EvalMod interval K (module
/// documentation): log2(2 n P(IH_(h+1) <= (h + 1)/2 - K)), or -infinity
/// when K >= (h + 1) / 2 (the sum cannot leave the interval). The
/// Irwin-Hall sum is exact for x = (h + 1)/2 - K < 3 (at most three terms,
/// no cancellation); further from the tail, where its alternating terms
/// would cancel in floating point, the Chernoff bound min_l (m ln(sinh(l /
/// 2) / (l / 2)) - l K) of a sum of m uniforms on [-1/2, 1/2] stands in
/// (an upper bound). Capped at 0.
pub fn failure_probability_log2(n: usize, h: usize, k: f64) -> f64 {
    let m = h + 1;
    let x = m as f64 / 2.0 - k;
    if x <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let ln_p = if x < 3.0 {
        irwin_hall_ln(m, x)
    } else {
        chernoff_ln(m, k)
    };
    ((2.0 * n as f64).log2() + ln_p / std::f64::consts::LN_2).min(0.0)
}

/// ln P(IH_m <= x) = ln((1 / m!) sum_(j <= x) (-1)^j C(m, j) (x - j)^m),
/// the terms summed in the log domain (accurate for small x: few terms).
fn irwin_hall_ln(m: usize, x: f64) -> f64 {
    let ln_fact: f64 = (2..=m).map(|i| (i as f64).ln()).sum();
    let mut ln_binom = 0.0f64;
    let mut terms = Vec::new();
    for j in 0..=(x.floor() as usize).min(m) {
        if j > 0 {
            ln_binom += ((m - j + 1) as f64).ln() - (j as f64).ln();
        }
        let d = x - j as f64;
        if d > 0.0 {
            let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
            terms.push((sign, ln_binom + m as f64 * d.ln() - ln_fact));
        }
    }
    let top = terms.iter().map(|t| t.1).fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = terms.iter().map(|(s, l)| s * (l - top).exp()).sum();
    top + sum.max(f64::MIN_POSITIVE).ln()
}

/// The Chernoff bound on ln P(S >= k) for S a sum of m uniforms on
/// [-1/2, 1/2]: min over l > 0 of m ln(sinh(l / 2) / (l / 2)) - l k (a
/// grid of l in (0, 40]), with ln(sinh(l/2) / (l/2)) = l/2 + ln(1 - e^-l) -
/// ln(l), stable for large l.
fn chernoff_ln(m: usize, k: f64) -> f64 {
    let exponent = |l: f64| m as f64 * (l / 2.0 + (-(-l).exp()).ln_1p() - l.ln()) - l * k;
    (1..=4000)
        .map(|i| exponent(i as f64 * 0.01))
        .fold(0.0, f64::min)
}

/// The failure probability a bootstrapping set may have at most: 2^-128.
pub const MAX_FAILURE_LOG2: f64 = -128.0;

/// A bootstrapping circuit prepared for one parameter set: the encoded
/// CoeffToSlot and SlotToCoeff transforms, EvalMod, and the level-0
/// key-switching context of the ephemeral secret.
#[derive(Debug)]
pub struct Bootstrapper {
    ctx: Arc<CkksContext>,
    params: BootstrapParameters,
    c2s: HomomorphicDft,
    s2c: HomomorphicDft,
    eval_mod: EvalMod,
    /// Q = q_0, P = p_0: the switch to the ephemeral secret.
    small: KeySwitchContext,
    /// The scale of the raised ciphertext (EvalMod's first prime).
    raised_scale: f64,
    /// q_0 / 2^log_message_ratio: the scale SlotToCoeff's factor assumes.
    message_scale: f64,
    /// SlotToCoeff's result scale over its input's.
    s2c_ratio: f64,
}

/// The evaluation keys of bootstrapping: relinearization, the rotations of
/// CoeffToSlot and SlotToCoeff and conjugation, and the two switching keys
/// of the sparse-secret encapsulation (s -> s' modulo q_0 p_0, s' -> s
/// modulo Q P). Public material.
#[derive(Clone, Debug)]
pub struct BootstrapKeys {
    pub(crate) id: KeyId,
    pub(crate) relin: RelinKey,
    pub(crate) galois: GaloisKeys,
    pub(crate) to_sparse: KeySwitchKey,
    pub(crate) to_dense: KeySwitchKey,
}

impl BootstrapKeys {
    /// The identity of the secret key they belong to.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// The relinearization key they include.
    pub fn relin_key(&self) -> &RelinKey {
        &self.relin
    }

    /// The Galois keys they include.
    pub fn galois_keys(&self) -> &GaloisKeys {
        &self.galois
    }
}

impl Bootstrapper {
    /// Prepares the circuit `params` for `ctx`. Refused: too few levels
    /// for the circuit, a message ratio below 2^4 or above q_0 over the
    /// scale, a DFT depth
    /// outside 1..=log2(n/2), an ephemeral weight outside 1..=n, and a
    /// failure probability above 2^-128 ([`failure_probability_log2`]).
    pub fn new(ctx: &Arc<CkksContext>, params: BootstrapParameters) -> Result<Bootstrapper> {
        let n = ctx.n();
        let top = ctx.max_level();
        let bad = |m: String| Err(Error::InvalidParameters(m));
        if params.depth() > top {
            return bad(format!(
                "bootstrapping takes {} levels and the chain has {top} above q_0",
                params.depth()
            ));
        }
        if params.ephemeral_weight == 0 || params.ephemeral_weight > n {
            return bad(format!(
                "the ephemeral secret's weight {} must be in 1..={n}",
                params.ephemeral_weight
            ));
        }
        let failure = failure_probability_log2(n, params.ephemeral_weight, params.k as f64);
        if failure > MAX_FAILURE_LOG2 {
            return bad(format!(
                "EvalMod's interval K = {} is too small for an ephemeral secret of weight {}: \
                 failure probability 2^{failure:.1}, above 2^{MAX_FAILURE_LOG2}",
                params.k, params.ephemeral_weight
            ));
        }
        // The ephemeral secret's samples live modulo q_0 p_0: covered by the
        // pinned sparse-secret table whenever the set itself is secure.
        let log_q0p0 = (ctx.prime(0)? as f64).log2() + (ctx.p_primes()[0] as f64).log2();
        let dense_secure = max_log_qp_128(n).is_some_and(|m| ctx.params().log_qp() <= m);
        if dense_secure {
            let bits = sparse::sparse_secret_security(n, params.ephemeral_weight, log_q0p0);
            if !bits.is_some_and(|b| b >= 128.0) {
                return bad(format!(
                    "no pinned estimate puts an ephemeral secret of weight {} at N = {n} and \
                     log2(q_0 p_0) = {log_q0p0:.1} at 128 bits (see bootstrap::sparse)",
                    params.ephemeral_weight
                ));
            }
        }
        let q0 = ctx.prime(0)? as f64;
        let ratio = params.log_message_ratio;
        if ratio < 4 || ratio as f64 > q0.log2() - ctx.params().log_scale() as f64 + 0.5 {
            return bad(format!(
                "the message ratio 2^{ratio} must be at least 2^4 and at most q_0 (2^{:.1}) \
                 over the scale 2^{}",
                q0.log2(),
                ctx.params().log_scale()
            ));
        }
        Bootstrapper::unchecked(ctx, params)
    }

    /// [`new`](Self::new) without the failure-probability check (for the
    /// test that shows what the check prevents).
    pub(crate) fn unchecked(
        ctx: &Arc<CkksContext>,
        params: BootstrapParameters,
    ) -> Result<Bootstrapper> {
        let slots = ctx.slots();
        let top = ctx.max_level();
        let k = params.k as f64;
        let eval_mod = EvalMod::new(k, params.cosine_degree, params.double_angle)?;
        let eval_level = top - params.coeff_to_slot_depth;
        let raised_scale = ctx.prime(eval_level)? as f64;
        let q0 = ctx.prime(0)? as f64;
        let c2s_factor = raised_scale / (2.0 * q0 * k);
        let c2s = coeff_to_slot(slots, params.coeff_to_slot_depth, c2s_factor)?;
        let c2s = HomomorphicDft::new(ctx, &c2s, top, 1.0)?;
        let message_scale = q0 / 2f64.powi(params.log_message_ratio as i32);
        // EvalMod's result is 2 pi k m / q_0, or 6 times that with the arcsine.
        let corrected = if params.arcsine { 6.0 } else { 1.0 };
        let s2c_factor = 2f64.powi(params.log_message_ratio as i32) / (2.0 * PI * corrected);
        let s2c = slot_to_coeff(slots, params.slot_to_coeff_depth, s2c_factor)?;
        // EvalMod lands near the scale of its last prime; SlotToCoeff
        // lowers it to the default scale over its levels.
        let s2c_level = eval_level - eval_mod.depth() - 2 * usize::from(params.arcsine);
        let s2c_ratio = ctx.default_scale() / ctx.prime(s2c_level + 1)? as f64;
        let s2c = HomomorphicDft::new(ctx, &s2c, s2c_level, s2c_ratio)?;
        let small = encapsulation_context(ctx)?;
        Ok(Bootstrapper {
            ctx: ctx.clone(),
            params,
            c2s,
            s2c,
            eval_mod,
            small,
            raised_scale,
            message_scale,
            s2c_ratio,
        })
    }

    /// The circuit's parameters.
    pub fn params(&self) -> &BootstrapParameters {
        &self.params
    }

    /// The level of a bootstrap's result: the levels left for computation.
    pub fn output_level(&self) -> usize {
        self.ctx.max_level() - self.params.depth()
    }

    /// log2 of the failure probability of one bootstrap.
    pub fn failure_probability_log2(&self) -> f64 {
        failure_probability_log2(
            self.ctx.n(),
            self.params.ephemeral_weight,
            self.params.k as f64,
        )
    }

    /// The rotation steps of CoeffToSlot and SlotToCoeff (the keys
    /// [`SecretKey::bootstrap_keys`] makes, with conjugation).
    pub fn rotation_steps(&self) -> Vec<i64> {
        let mut steps = self.c2s.rotation_steps();
        steps.extend(self.s2c.rotation_steps());
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// EvalMod's plaintext error: max |approximation - sin(2 pi y)| over
    /// |y| <= K.
    pub fn eval_mod_error(&self) -> f64 {
        self.eval_mod.max_error()
    }

    /// The same values as `ct` (any level; its primes above q_0 are
    /// dropped first) at [`output_level`](Self::output_level), with `ct`'s
    /// scale. The level-0 ciphertext is first multiplied by the integer k
    /// that brings its scale to about q_0 / 2^log_message_ratio (exact, no
    /// level). Refused: another parameter set or key, a size-3 ciphertext,
    /// and values whose declared bound times the scale times k exceeds q_0
    /// / 16 (EvalMod's linearization sin(x) ~ x needs |m| well below q_0).
    pub fn bootstrap(&self, ct: &Ciphertext, keys: &BootstrapKeys) -> Result<Ciphertext> {
        let ctx = &self.ctx;
        check_same_context(ctx, &ct.ctx)?;
        keys.id.check("ciphertext", ct.key_id)?;
        ct.expect_size(2)?;
        let q0 = ctx.prime(0)? as f64;
        let k_int = (self.message_scale / ct.scale)
            .floor()
            .clamp(1.0, 2f64.powi(40));
        let epsilon = ct.noise.message * k_int / q0; // |k m_i| / q_0 <= this
        if epsilon > 1.0 / 16.0 {
            return Err(Error::InvalidParameters(format!(
                "the values' bound times the scale (2^{:.1}) must be at most q_0 / 16 \
                 (2^{:.1}) to bootstrap",
                ct.noise.message.log2(),
                q0.log2() - 4.0
            )));
        }
        let top = ctx.max_level();
        let low = ct.drop_to_level(0)?;
        // 1. Times k, under s' modulo q_0 (through q_0 p_0).
        let mut c1 = low.polys[1].clone();
        c1.mul_small_assign(k_int as i64)?;
        let (u0, u1) = self.small.switch(&keys.to_sparse, &c1)?;
        let mut c0 = low.polys[0].clone();
        c0.mul_small_assign(k_int as i64)?;
        c0.add_assign(&u0)?;
        // 2. ModRaise.
        let basis = &ctx.level(top)?.basis;
        let [r0, r1] = [&c0, &u1].map(|p| mod_raise(basis, p));
        let (mut r0, r1) = (r0?, r1?);
        // 3. Back under s modulo Q_L.
        let (v0, v1) = ctx.key_switch().switch(&keys.to_dense, &r1)?;
        r0.add_assign(&v0)?;
        let small_error = one_digit_switch_error(ctx, q0.log2(), self.small.p().log2_product());
        // t's coefficients: q_0 times sums of h + 1 uniforms on [-1/2, 1/2]
        // (variance (h + 1) / 12 each), so its slots are bounded as a fresh
        // error of that variance is (average case, TAIL sqrt(n V)).
        let variance = (self.params.ephemeral_weight + 1) as f64 / 12.0;
        let message = sum_bound(ctx.n(), variance.sqrt() * q0);
        let error = ct.noise.error * k_int + small_error + key_switch_error(ctx, top);
        let raised = Ciphertext::new(
            ctx,
            ct.key_id,
            vec![r0, v1],
            top,
            self.raised_scale,
            Noise::new(message, error),
            None,
        );
        // 4. CoeffToSlot; 5. real and imaginary parts of t / (q_0 K).
        let y = self.c2s.apply(&raised, &keys.galois)?;
        let conj = y.conjugate(&keys.galois)?;
        let mut re = y.add(&conj)?;
        let mut im = times_i(&conj.sub(&y)?)?;
        // |t_i / (q_0 K)| <= 1 but with the failure probability.
        re.bound_message(1.0);
        im.bound_message(1.0);
        // 6. EvalMod, landing where SlotToCoeff's scale ratio r takes the
        // result to integers Delta x: its values are k Delta x / D_m (D_m =
        // q_0 / 2^ratio, the message scale its factor assumes), so the
        // scale after it must be D_m / k, and EvalMod's D_m / (k r).
        let landing = self.message_scale / (k_int * self.s2c_ratio);
        // With the arcsine, EvalMod lands on S with S^3 / (q_l q_(l-1)) = landing.
        let after = re.level() - self.eval_mod.depth();
        let mod_landing = match self.params.arcsine {
            false => landing,
            true => {
                let (q1, q2) = (ctx.prime(after)? as f64, ctx.prime(after - 1)? as f64);
                (landing * q1 * q2).cbrt()
            }
        };
        let mut re = self.eval_mod.evaluate(&re, &keys.relin, mod_landing)?;
        let mut im = self.eval_mod.evaluate(&im, &keys.relin, mod_landing)?;
        // sin(2 pi t_i / q_0) = sin(2 pi k m_i / q_0): at most 2 pi eps,
        // plus the approximation's error.
        let reduced = 2.0 * PI * epsilon + self.eval_mod.max_error();
        re.bound_message(reduced);
        im.bound_message(reduced);
        if self.params.arcsine {
            re = arcsine(&re, &keys.relin, reduced)?;
            im = arcsine(&im, &keys.relin, reduced)?;
        }
        // 7. SlotToCoeff of re + i im.
        let mut out = self.s2c.apply(&re.add(&times_i(&im)?)?, &keys.galois)?;
        // The integers are Delta x: relabelled at ct's scale Delta.
        let scale = ct.scale;
        // The approximation's error, in scaled units: the interpolant's (at
        // most max_error per coefficient in units of sin, the slots summing
        // n of them, average case, times SlotToCoeff's factor q_0 / (2 pi
        // D_m) and D_m / k to integers), and the linearization's: sin(x) -
        // x is at most x^3 / 6, and sum_i |m_i|^3 <= max |m_i| sum_i m_i^2
        // <= (B D)^3 by Parseval (B the values' bound), so the slots are
        // off by at most (2 pi)^2 B^3 D^2 / (6 q_0^2) = (2 pi eps)^2 B / 6
        // (with the factor k in eps) in value units.
        let interpolant = sum_bound(ctx.n(), self.eval_mod.max_error()) * q0 / (2.0 * PI * k_int);
        let linearization = match self.params.arcsine {
            false => (2.0 * PI * epsilon).powi(2) / 6.0,
            true => (2.0 * PI * epsilon).powi(4) * 3.0 / 40.0,
        } * ct.message_bound()
            * scale;
        let approximation = interpolant + linearization;
        let noise = Noise::new(
            ct.noise.message + out.noise.error + approximation,
            out.noise.error + approximation,
        );
        let polys = std::mem::take(&mut out.rlwe.polys);
        out.derived(polys, out.level, scale, noise)
    }
}

/// 6 z + z^3 = 6 arcsin(z) - (9 / 20) z^5 + ... for z at level l (|z| <=
/// `bound`), at level l - 2 with scale S^3 / (q_l q_(l-1)) (S z's scale):
/// z^2, then z^3 = z^2 z, and 6 z brought to z^3's level and scale.
fn arcsine(z: &Ciphertext, rk: &RelinKey, bound: f64) -> Result<Ciphertext> {
    let z2 = z.square_relin_rescale(rk)?;
    let mut z3 = z2.mul_relin_rescale(z, rk)?;
    z3.bound_message(bound.powi(3));
    let mut out = z.adjust(z3.level(), z3.scale())?.mul_int(6)?.add(&z3)?;
    out.bound_message(6.0 * bound + bound.powi(3));
    Ok(out)
}

/// The key-switching context of the ephemeral secret: Q = q_0, P = p_0
/// (the first special prime), one digit.
pub(crate) fn encapsulation_context(ctx: &CkksContext) -> Result<KeySwitchContext> {
    let ks = ctx.key_switch();
    Ok(KeySwitchContext::new(
        &ks.q().sub_basis(0..1)?,
        &ks.p().sub_basis(0..1)?,
        1,
        ctx.noise(),
    )?)
}

/// The centered residues of `p` (modulo q_0, any representation) as
/// integers, in `basis` (NTT form): the phase t = c0 + c1 s over the
/// integers becomes the phase modulo Q_L (the ciphertext is public).
fn mod_raise(basis: &Arc<RnsBasis>, p: &Poly) -> Result<Poly> {
    let mut c = p.clone();
    c.to_coefficient()?;
    let q = c.basis().modulus(0).value();
    let coeffs: Vec<i64> = c
        .limb(0)
        .iter()
        .map(|&x| {
            if x > q / 2 {
                x as i64 - q as i64
            } else {
                x as i64
            }
        })
        .collect();
    Ok(Poly::from_signed(basis, &coeffs, Representation::Ntt)?)
}

/// i times every slot: the product by X^(n/2) (zeta_j^(n/2) = i for every
/// slot), exact, no level.
fn times_i(ct: &Ciphertext) -> Result<Ciphertext> {
    let basis = ct.polys[0].basis();
    let n = basis.n();
    let mut coeffs = vec![0i64; n];
    coeffs[n / 2] = 1;
    let monomial = Poly::from_signed(basis, &coeffs, Representation::Ntt)?;
    let polys = ct
        .polys
        .iter()
        .map(|p| p.mul(&monomial))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    ct.derived(polys, ct.level, ct.scale, ct.noise)
}

impl SecretKey {
    /// The bootstrapping keys of `bootstrapper` for this secret: a fresh
    /// ephemeral secret of the circuit's Hamming weight from the OS-seeded
    /// CSPRNG (used for the two switching keys, then wiped), the
    /// relinearization key, the Galois keys of the rotations and of
    /// conjugation.
    pub fn bootstrap_keys(&self, bootstrapper: &Bootstrapper) -> Result<BootstrapKeys> {
        check_same_context(&self.ctx, &bootstrapper.ctx)?;
        BootstrapKeys::generate(
            self,
            &bootstrapper.rotation_steps(),
            bootstrapper.params.ephemeral_weight,
        )
    }
}

impl BootstrapKeys {
    /// Keys for the rotations `steps` (and conjugation) and an ephemeral
    /// secret of weight `h` (checked by [`Bootstrapper::new`], which is
    /// why this stays internal).
    pub(crate) fn generate(sk: &SecretKey, steps: &[i64], h: usize) -> Result<BootstrapKeys> {
        let ctx = &sk.ctx;
        let mut rng = Prng::from_os()?;
        let sparse = RingSecret::generate(
            ctx.n(),
            SecretDistribution::TernaryHammingWeight(h),
            &mut rng,
        )?;
        let small = encapsulation_context(ctx)?;
        let dense_small = sk
            .secret
            .secret()
            .to_poly(small.qp(), Representation::Ntt)?;
        let to_sparse = KeySwitchKey::generate(&small, &dense_small, &sparse, &mut rng)?;
        let ks = ctx.key_switch();
        let sparse_big = sparse.to_poly(ks.qp(), Representation::Ntt)?;
        let to_dense = KeySwitchKey::generate(ks, &sparse_big, sk.secret.secret(), &mut rng)?;
        Ok(BootstrapKeys {
            id: sk.id(),
            relin: sk.relin_key()?,
            galois: sk.galois_keys(steps, true)?,
            to_sparse,
            to_dense,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CkksParameters, Complex, Plaintext};

    #[test]
    fn failure_probability_matches_the_derivation() {
        // h = 32, K = 16: 2 n 2^-33 / 33! (module documentation).
        let p = failure_probability_log2(1 << 16, 32, 16.0);
        assert!((p + 138.8).abs() < 0.1, "{p}");
        assert!((failure_probability_log2(1 << 15, 32, 16.0) + 139.8).abs() < 0.1);
        // A larger interval can only be safer; K >= (h + 1) / 2 never fails.
        assert!(failure_probability_log2(1 << 16, 32, 15.0) > p);
        assert_eq!(
            failure_probability_log2(1 << 16, 32, 17.0),
            f64::NEG_INFINITY
        );
        // Symmetry: P(IH_5 <= 2.5) = 1/2 (three terms of the sum).
        assert!((irwin_hall_ln(5, 2.5) - 0.5f64.ln()).abs() < 1e-12);
        // P(IH_2 <= 1.5) = 1 - 0.5^2 / 2 (two terms).
        assert!((irwin_hall_ln(2, 1.5) - 0.875f64.ln()).abs() < 1e-12);
        // The Chernoff bound lies above the exact tail, not far above.
        for (m, k) in [(33, 14.0), (33, 14.5), (21, 8.0)] {
            let exact = irwin_hall_ln(m, m as f64 / 2.0 - k);
            let bound = chernoff_ln(m, k);
            assert!(
                bound >= exact && bound < exact / 2.0,
                "{m} {k}: {exact} {bound}"
            );
        }
        // A heavy secret in a small interval fails surely.
        assert_eq!(failure_probability_log2(1024, 512, 4.0), 0.0);
    }

    #[test]
    fn mod_raise_keeps_the_phase_modulo_q0_with_a_small_multiple() {
        let params =
            CkksParameters::new("raise", 1024, &[50, 40, 40], &[50, 50], 40, 3).allow_insecure();
        let ctx = CkksContext::new(params).unwrap();
        let sk = SecretKey::generate(&ctx).unwrap();
        let v: Vec<f64> = (0..512).map(|i| (i as f64 * 0.3).sin()).collect();
        let pt = Plaintext::encode_real(&ctx, &v, 0, ctx.default_scale(), 1.0).unwrap();
        let ct = sk.encrypt(&pt).unwrap();
        let top = ctx.max_level();
        let basis = &ctx.level(top).unwrap().basis;
        let raised: Vec<Poly> = ct
            .polys
            .iter()
            .map(|p| mod_raise(basis, p).unwrap())
            .collect();
        let big = Ciphertext::new(&ctx, ct.key_id, raised, top, ct.scale, ct.noise, None);
        let phase = |c: &Ciphertext| {
            let mut x = (*sk.phase(c).unwrap()).clone();
            x.to_coefficient().unwrap();
            ctx.level(c.level)
                .unwrap()
                .centered_coefficients(&x)
                .unwrap()
        };
        let (t, m) = (phase(&big), phase(&ct));
        let q0 = ctx.prime(0).unwrap() as f64;
        let l1 = sk.secret.secret().l1_norm() as f64;
        for (ti, mi) in t.iter().zip(m.iter()) {
            let i = (ti - mi) / q0;
            assert!((i - i.round()).abs() < 1e-6 && i.abs() <= (l1 + 1.0) / 2.0);
        }
        // Not the identity: some coefficient gained a multiple of q_0.
        assert!(t
            .iter()
            .zip(m.iter())
            .any(|(a, b)| (a - b).abs() > q0 / 2.0));
    }

    /// N = 1024 (insecure): q_0 50 bits (scale 2^40), 2 levels left, then
    /// SlotToCoeff 3 x 40, EvalMod 9 x 55, CoeffToSlot 3 x 55; P 3 x 61.
    fn test_context() -> Arc<CkksContext> {
        let set = BootstrapSet::insecure_n1024();
        assert!(CkksContext::new(set.ckks.clone()).is_err()); // refused unless asked for
        CkksContext::new(set.ckks.allow_insecure()).unwrap()
    }

    fn test_params() -> BootstrapParameters {
        BootstrapSet::insecure_n1024().bootstrap
    }

    #[test]
    fn rotation_steps_come_from_the_plaintext_matrices() {
        let f = fixture();
        let steps = test_params().rotation_steps(f.ctx.slots()).unwrap();
        assert_eq!(steps, f.bt.rotation_steps());
    }

    #[test]
    fn the_named_set_is_secure_and_fits_its_circuit() {
        let set = BootstrapSet::n65536();
        assert_eq!(set.ckks.log_qp(), 1745);
        set.ckks.validate().unwrap(); // the ternary 128-bit table
        assert_eq!(set.ckks.max_level() - set.bootstrap.depth(), 9);
        assert!(failure_probability_log2(1 << 16, 32, 16.0) <= MAX_FAILURE_LOG2);
        let q0p0 = 60.0 + 61.0;
        assert!(sparse::sparse_secret_security(1 << 16, 32, q0p0).unwrap() >= 128.0);
        // Another weight has no pinned estimate: refused at N = 2^16.
        assert!(sparse::sparse_secret_security(1 << 16, 48, q0p0).is_none());
        // The checks of Bootstrapper::new, on the real context (refused
        // before anything is encoded): a weight without a pinned estimate,
        // and an interval too small for the weight.
        let ctx = CkksContext::new(set.ckks.clone()).unwrap();
        for bad in [
            // K = 16 covers every sum of 25 terms: only the table refuses it.
            BootstrapParameters {
                ephemeral_weight: 24,
                ..set.bootstrap.clone()
            },
            BootstrapParameters {
                k: 12,
                ..set.bootstrap.clone()
            },
        ] {
            assert!(matches!(
                Bootstrapper::new(&ctx, bad),
                Err(Error::InvalidParameters(_))
            ));
        }
        assert_eq!(BootstrapSet::named(), vec![set]);
    }

    fn sample(s: usize, seed: f64) -> Vec<Complex> {
        (0..s)
            .map(|i| {
                let x = i as f64 + seed;
                Complex::new(
                    (x * 0.7548776662).fract() * 1.6 - 0.8,
                    (x * 0.5698402909).fract() - 0.5,
                )
            })
            .collect()
    }

    struct Fixture {
        ctx: Arc<CkksContext>,
        bt: Bootstrapper,
        sk: SecretKey,
        keys: BootstrapKeys,
    }

    fn fixture() -> &'static Fixture {
        static F: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();
        F.get_or_init(|| {
            let ctx = test_context();
            let bt = Bootstrapper::new(&ctx, test_params()).unwrap();
            let sk = SecretKey::generate(&ctx).unwrap();
            let keys = sk.bootstrap_keys(&bt).unwrap();
            Fixture { ctx, bt, sk, keys }
        })
    }

    /// Max and mean absolute error over all slots.
    fn errors(got: &[Complex], want: &[Complex]) -> (f64, f64) {
        let errs: Vec<f64> = got.iter().zip(want).map(|(a, b)| (*a - *b).abs()).collect();
        let max = errs.iter().cloned().fold(0.0, f64::max);
        (max, errs.iter().sum::<f64>() / errs.len() as f64)
    }

    /// The precision the insecure N = 1024 set reaches (measured: max error
    /// 2^-22.2 to 2^-22.6, mean 2^-23.9 over the 512 slots).
    const MIN_BITS_MAX: f64 = 21.0;
    const MIN_BITS_MEAN: f64 = 22.5;

    #[test]
    fn bootstrap_restores_levels_with_the_same_values() {
        let f = fixture();
        assert_eq!(f.bt.output_level(), 2);
        assert!(f.bt.failure_probability_log2() < -140.0);
        let z = sample(f.ctx.slots(), 0.0);
        let pt = Plaintext::encode(&f.ctx, &z, 0, f.ctx.default_scale(), 1.0).unwrap();
        let ct = f.sk.encrypt(&pt).unwrap();
        let out = f.bt.bootstrap(&ct, &f.keys).unwrap();
        assert_eq!(out.level(), 2);
        assert!((out.scale() / ct.scale() - 1.0).abs() < 1e-9);
        let (max, mean) = errors(&f.sk.decrypt(&out).unwrap().decode().unwrap(), &z);
        eprintln!(
            "max {max:e} ({:.1} bits), mean {:.1} bits, estimate {:.1} bits",
            -max.log2(),
            -mean.log2(),
            out.precision_bits()
        );
        assert!(-max.log2() >= MIN_BITS_MAX && -mean.log2() >= MIN_BITS_MEAN);
        // The estimate is a bound on the measured error.
        assert!(out.precision_bits() <= -max.log2());
    }

    #[test]
    fn a_product_at_its_last_level_bootstraps_and_computes_on() {
        let f = fixture();
        let (ctx, sk) = (&f.ctx, &f.sk);
        let rk = f.keys.relin_key();
        let x = sample(ctx.slots(), 3.0);
        let y = sample(ctx.slots(), 7.0);
        let enc = |v: &[Complex]| {
            let pt = Plaintext::encode(ctx, v, 1, ctx.default_scale(), 1.0).unwrap();
            sk.encrypt(&pt).unwrap()
        };
        let xy = enc(&x).mul_relin_rescale(&enc(&y), rk).unwrap();
        assert_eq!(xy.level(), 0);
        let want: Vec<Complex> = x.iter().zip(&y).map(|(a, b)| *a * *b).collect();
        let fresh = f.bt.bootstrap(&xy, &f.keys).unwrap();
        let (max, _) = errors(&sk.decrypt(&fresh).unwrap().decode().unwrap(), &want);
        assert!(max < 2f64.powf(-MIN_BITS_MAX), "{max:e}");
        // Two more levels: a square.
        let sq = fresh.square_relin_rescale(rk).unwrap();
        let want2: Vec<Complex> = want.iter().map(|v| *v * *v).collect();
        let (max2, _) = errors(&sk.decrypt(&sq).unwrap().decode().unwrap(), &want2);
        assert!(max2 < 2f64.powf(-MIN_BITS_MAX + 1.0), "{max2:e}");
        // Bootstrapping a ciphertext above level 0 drops it first.
        let again = f.bt.bootstrap(&sq, &f.keys).unwrap();
        let (max3, _) = errors(&sk.decrypt(&again).unwrap().decode().unwrap(), &want2);
        assert!(max3 < 2f64.powf(-MIN_BITS_MAX + 2.0), "{max3:e}");
    }

    #[test]
    fn bootstrapping_refuses_foreign_keys_and_oversized_values() {
        let f = fixture();
        let z = sample(f.ctx.slots(), 1.0);
        let pt = Plaintext::encode(&f.ctx, &z, 0, f.ctx.default_scale(), 1.0).unwrap();
        let ct = f.sk.encrypt(&pt).unwrap();
        let other = SecretKey::generate(&f.ctx).unwrap();
        let theirs = other.encrypt(&pt).unwrap();
        assert!(matches!(
            f.bt.bootstrap(&theirs, &f.keys),
            Err(Error::Ring(triskel_ring::Error::KeyMismatch { .. }))
        ));
        let their_keys = other.bootstrap_keys(&f.bt).unwrap();
        assert!(matches!(
            f.bt.bootstrap(&ct, &their_keys),
            Err(Error::Ring(triskel_ring::Error::KeyMismatch { .. }))
        ));
        // A bound times the scale above q_0 / 16.
        let big = Plaintext::encode(&f.ctx, &z, 0, f.ctx.default_scale(), 128.0).unwrap();
        let big = f.sk.encrypt(&big).unwrap();
        assert!(matches!(
            f.bt.bootstrap(&big, &f.keys),
            Err(Error::InvalidParameters(_))
        ));
        let pt1 = Plaintext::encode(&f.ctx, &z, 1, f.ctx.default_scale(), 1.0).unwrap();
        let ct1 = f.sk.encrypt(&pt1).unwrap();
        let three = ct1.mul(&ct1).unwrap();
        assert!(f.bt.bootstrap(&three, &f.keys).is_err());
        // Another parameter set.
        let ctx2 = CkksContext::new(CkksParameters::n8192()).unwrap();
        assert!(Bootstrapper::new(&ctx2, test_params()).is_err()); // too few levels
        let sk2 = SecretKey::generate(&ctx2).unwrap();
        assert!(matches!(
            sk2.bootstrap_keys(&f.bt),
            Err(Error::ParameterMismatch)
        ));
    }

    #[test]
    fn the_arcsine_correction_allows_a_smaller_message_ratio() {
        // The tests' chain with two more primes of 55 bits for the
        // arcsine (right below EvalMod's); ratio 2^7.
        let mut q = vec![50];
        q.extend([40; 5]);
        q.extend([55; 14]);
        let set = CkksParameters::new("boot-arcsine", 1024, &q, &[61; 3], 40, 7);
        let ctx = CkksContext::new(set.allow_insecure()).unwrap();
        let params = BootstrapParameters {
            arcsine: true,
            log_message_ratio: 7,
            ..test_params()
        };
        let bt = Bootstrapper::new(&ctx, params.clone()).unwrap();
        assert_eq!(bt.output_level(), 2);
        let plain = Bootstrapper::new(
            &ctx,
            BootstrapParameters {
                arcsine: false,
                ..params
            },
        )
        .unwrap();
        let sk = SecretKey::generate(&ctx).unwrap();
        let z = sample(ctx.slots(), 5.0);
        let pt = Plaintext::encode(&ctx, &z, 0, ctx.default_scale(), 1.0).unwrap();
        let ct = sk.encrypt(&pt).unwrap();
        let run = |bt: &Bootstrapper| {
            let out = bt.bootstrap(&ct, &sk.bootstrap_keys(bt).unwrap()).unwrap();
            let (max, mean) = errors(&sk.decrypt(&out).unwrap().decode().unwrap(), &z);
            eprintln!("max 2^{:.1}, mean 2^{:.1}", max.log2(), mean.log2());
            assert!(out.precision_bits() <= -max.log2());
            mean
        };
        let (with, without) = (run(&bt), run(&plain));
        assert!(-with.log2() >= MIN_BITS_MEAN + 1.0 && with < without / 4.0);
    }

    #[test]
    fn an_interval_too_small_for_the_weight_is_refused_and_fails() {
        let ctx = test_context();
        // K = 4 covers every |t / q_0| <= (h + 1) / 2 for h = 4.
        let small = BootstrapParameters {
            k: 4,
            cosine_degree: 23,
            ephemeral_weight: 4,
            ..test_params()
        };
        let heavy = BootstrapParameters {
            ephemeral_weight: 512,
            ..small.clone()
        };
        assert!(matches!(
            Bootstrapper::new(&ctx, heavy.clone()),
            Err(Error::InvalidParameters(_))
        ));
        let sk = SecretKey::generate(&ctx).unwrap();
        let z = sample(ctx.slots(), 2.0);
        let pt = Plaintext::encode(&ctx, &z, 0, ctx.default_scale(), 1.0).unwrap();
        let ct = sk.encrypt(&pt).unwrap();
        let run = |bt: &Bootstrapper| {
            let keys = sk.bootstrap_keys(bt).unwrap();
            let out = bt.bootstrap(&ct, &keys).unwrap();
            errors(&sk.decrypt(&out).unwrap().decode().unwrap(), &z).0
        };
        let good = run(&Bootstrapper::new(&ctx, small).unwrap());
        assert!(good < 1e-5, "{good:e}");
        // The same circuit with h = 512: |t / q_0| has a deviation of
        // sqrt(513 / 12) = 6.5, often far above K = 4.
        let bad = run(&Bootstrapper::unchecked(&ctx, heavy).unwrap());
        assert!(bad > 1e-2, "{bad:e}");
    }
}
