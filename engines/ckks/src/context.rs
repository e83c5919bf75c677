//! The CKKS context: everything derived from a parameter set, computed once
//! and shared (through `Arc`) by keys, plaintexts and ciphertexts.

use std::sync::Arc;

use triskel_kernels as kernels;
use triskel_ring::rlwe::{Contexts, RlweContext};
use triskel_ring::{DivRound, NoiseDistribution, Poly, RnsBasis};
use zeroize::Zeroizing;

use crate::encoder::Encoder;
use crate::error::Result;
use crate::params::CkksParameters;

/// Precomputed parameters of one CKKS instance. Dereferences to its
/// [`RlweContext`]: parameters, levels, primes and key switching.
pub struct CkksContext {
    rlwe: RlweContext<CkksParameters, Level>,
    pub(crate) encoder: Encoder,
}

triskel_ring::rlwe_deref!(CkksContext => RlweContext<CkksParameters, Level>, rlwe);

/// The tables of one level: the first `level + 1` primes of Q.
pub struct Level {
    pub(crate) basis: Arc<RnsBasis>,
    /// round(x / q_l) into the level below (none at level 0).
    pub(crate) rescale: Option<DivRound>,
    /// round(x / (q_l P)) from Q_l P into the level below: ModDown and
    /// rescale in one division (none at level 0).
    pub(crate) mod_down_rescale: Option<DivRound>,
    /// Exact centered CRT: (Q/q_i) mod 2^128, Q mod 2^128 and 1/q_i.
    qhat_wrapped: Vec<u128>,
    q_wrapped: u128,
    inv_q: Vec<f64>,
    pub(crate) log2_q: f64,
}

impl CkksContext {
    /// Validates the parameters (including 128-bit security, unless allowed
    /// otherwise) and precomputes everything.
    /// An equal set's context still alive in the process is shared.
    pub fn new(params: CkksParameters) -> Result<Arc<CkksContext>> {
        static LIVE: Contexts<CkksContext> = Contexts::new();
        params.validate()?;
        LIVE.get_or_build(&params.clone(), || {
            let encoder = Encoder::new(params.n());
            let key_switch = params.key_switch_context(NoiseDistribution::default())?;
            let p = key_switch.p().clone();
            let rlwe = RlweContext::new(params, key_switch, |basis| Level::new(basis, &p))?;
            Ok(Arc::new(CkksContext { rlwe, encoder }))
        })
    }

    /// Number of complex slots, n / 2.
    pub fn slots(&self) -> usize {
        self.params().slots()
    }

    /// The default scale 2^log_scale.
    pub fn default_scale(&self) -> f64 {
        2f64.powi(self.params().log_scale as i32)
    }

    /// The prime q_l dropped by rescaling at level l.
    pub fn prime(&self, level: usize) -> Result<u64> {
        Ok(self.level(level)?.basis.modulus(level).value())
    }

    /// The largest scale a value may have at `level`: Q_l / 4, so that a
    /// message of magnitude below 1 still decrypts (values of magnitude up
    /// to M need a scale below Q_l / (4 M)).
    pub fn max_scale(&self, level: usize) -> Result<f64> {
        Ok((self.level(level)?.log2_q - 2.0).exp2())
    }
}

impl std::fmt::Debug for CkksContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.rlwe.fmt_debug("CkksContext", f)
    }
}

impl Level {
    fn new(basis: Arc<RnsBasis>, p: &Arc<RnsBasis>) -> Result<Level> {
        let len = basis.len();
        let primes = basis.primes();
        let wrapped = |skip: Option<usize>| {
            primes
                .iter()
                .enumerate()
                .filter(|&(i, _)| Some(i) != skip)
                .fold(1u128, |acc, (_, &q)| acc.wrapping_mul(q as u128))
        };
        let (rescale, mod_down_rescale) = if len > 1 {
            let below = basis.drop_last()?;
            let dropped = basis.sub_basis(len - 1..len)?.concat(p)?;
            (
                Some(DivRound::by_last_prime(&basis)?),
                Some(DivRound::new(&below, &dropped)?),
            )
        } else {
            (None, None)
        };
        Ok(Level {
            qhat_wrapped: (0..len).map(|i| wrapped(Some(i))).collect(),
            q_wrapped: wrapped(None),
            inv_q: primes.iter().map(|&q| 1.0 / q as f64).collect(),
            log2_q: basis.log2_product(),
            rescale,
            mod_down_rescale,
            basis,
        })
    }

    /// The centered integer of every coefficient of x (coefficient form, in
    /// this level's basis), as f64.
    ///
    /// With y_i = [x_i (Q/q_i)^-1]_{q_i} and v = round(sum_i y_i / q_i), the
    /// centered value is sum_i y_i (Q/q_i) - v Q, computed modulo 2^128: exact
    /// whenever it lies within +-2^127 (any decryptable message), and v is
    /// exact unless x / Q is within k 2^-52 of 1/2 (no room for a message).
    /// Wiped on drop, like its scratch: x may be a secret phase.
    pub(crate) fn centered_coefficients(&self, x: &Poly) -> Result<Zeroizing<Vec<f64>>> {
        let n = self.basis.n();
        let mut acc = Zeroizing::new(vec![0u128; n]);
        let mut frac = Zeroizing::new(vec![0f64; n]);
        let mut y = Zeroizing::new(vec![0u64; n]);
        for i in 0..self.basis.len() {
            let m = self.basis.modulus(i);
            kernels::mul_scalar(m, &mut y, x.limb(i), self.basis.qhat_inv(i))?;
            let (w, inv) = (self.qhat_wrapped[i], self.inv_q[i]);
            for ((a, f), &yj) in acc.iter_mut().zip(frac.iter_mut()).zip(y.iter()) {
                *a = a.wrapping_add((yj as u128).wrapping_mul(w));
                *f += yj as f64 * inv;
            }
        }
        Ok(Zeroizing::new(
            acc.iter()
                .zip(frac.iter())
                .map(|(&a, &f)| {
                    let v = f.round() as u128;
                    a.wrapping_sub(v.wrapping_mul(self.q_wrapped)) as i128 as f64
                })
                .collect(),
        ))
    }
}
