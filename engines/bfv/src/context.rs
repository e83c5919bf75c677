//! The BFV context: everything derived from a parameter set, computed once
//! and shared (through `Arc`) by keys, plaintexts and ciphertexts.

use std::sync::{Arc, OnceLock};

use num_bigint::BigUint;
use num_traits::ToPrimitive;
use triskel_kernels::{ntt_primes, Modulus, NttPlan};
use triskel_ring::rlwe::{Contexts, RlweContext, Scheme};
use triskel_ring::{BaseConverter, DivRound, NoiseDistribution, RnsBasis};

use crate::error::{Error, Result};
use crate::params::BfvParameters;

/// Bit size of the auxiliary primes of multiplication: below 2^50, so the
/// AVX-512 IFMA kernels serve them where the CPU has them.
const AUX_PRIME_BITS: u32 = 50;

/// Precomputed parameters of one BFV instance: the ciphertext bases at every
/// level, key switching, batching and the constants of encryption,
/// decryption and multiplication. Answers every question about the set.
/// Dereferences to its [`RlweContext`]: parameters, levels, primes and key
/// switching.
pub struct BfvContext {
    rlwe: RlweContext<BfvParameters, Level>,
    batching: Option<Batching>,
}

triskel_ring::rlwe_deref!(BfvContext => RlweContext<BfvParameters, Level>, rlwe);

/// The tables of one level: the first `level + 1` primes of Q.
pub struct Level {
    pub(crate) basis: Arc<RnsBasis>,
    /// floor(Q_l / t) mod q_i.
    pub(crate) delta: Vec<u64>,
    /// round((Q_l mod t) m / t) for messages m < t.
    pub(crate) q_mod_t_scaling: RoundedRatio,
    /// floor(t * 2^128 / q_i), the fixed-point fractions of decryption.
    pub(crate) t_over_q: Vec<u128>,
    /// Division by the last prime, towards the level below (none at level 0).
    pub(crate) switch_down: Option<DivRound>,
    /// Multiplication tables, built on first use.
    mul: OnceLock<std::result::Result<MulTables, Error>>,
    pub(crate) log2_q: f64,
}

/// Tables of multiplication at one level (the "HPS over P" variant of
/// Kim, Polyakov and Zucca, ePrint 2021/204): an auxiliary basis A with
/// A > n Q_l, the exact extension Q_l -> A, the modulus switch
/// round(A x / Q_l) from Q_l to A, the extension back A -> Q_l, and the
/// final round(x / A) from Q_l || A into Q_l.
pub(crate) struct MulTables {
    pub aux: Arc<RnsBasis>,
    pub q_to_aux: BaseConverter,
    /// round(x / Q_l) from A || Q_l to A (applied to A y).
    pub switch_to_aux: DivRound,
    pub aux_to_q: BaseConverter,
    /// round(x / A) from Q_l || A to Q_l.
    pub scale_down: DivRound,
    /// A mod q_i.
    pub aux_mod_q: Vec<u64>,
    /// log2(Q_l / A), the weight of the modulus-switching rounding in the noise.
    pub log2_q_over_aux: f64,
}

/// Slot layout of the batch encoder.
pub(crate) struct Batching {
    pub plan: NttPlan,
    /// slot s (row s / (n/2), column s % (n/2)) lives at NTT index slot_index[s].
    pub slot_index: Vec<usize>,
}

fn product(primes: &[u64]) -> BigUint {
    primes.iter().fold(BigUint::from(1u32), |acc, &q| acc * q)
}

fn big_mod(x: &BigUint, m: u64) -> u64 {
    (x % m).to_u64().expect("a residue fits in u64")
}

impl BfvContext {
    /// Validates the parameters (including 128-bit security, unless allowed
    /// otherwise) and precomputes everything.
    /// An equal set's context still alive in the process is shared.
    pub fn new(params: BfvParameters) -> Result<Arc<BfvContext>> {
        static LIVE: Contexts<BfvContext> = Contexts::new();
        params.validate()?;
        LIVE.get_or_build(&params.clone(), || {
            let key_switch = params.key_switch_context(NoiseDistribution::default())?;
            let t = params.plain_modulus;
            let batching = Batching::new(params.n(), t);
            // Bases of every level derived from the top one, O(k) each.
            let rlwe = RlweContext::new(params, key_switch, |basis| Level::new(basis, t))?;
            Ok(Arc::new(BfvContext { rlwe, batching }))
        })
    }

    /// Plaintext modulus t.
    pub fn plain_modulus(&self) -> u64 {
        self.params().plain_modulus()
    }

    /// True when t supports the batch encoder (t prime and 2n | t - 1).
    pub fn supports_batching(&self) -> bool {
        self.batching.is_some()
    }

    /// The least noise (log2 standard deviation) a ciphertext at `level` can
    /// carry: a fresh symmetric encryption's at the top level, what modulus
    /// switching leaves of it below. Loaded ciphertexts never claim less.
    pub(crate) fn fresh_noise_floor_log2(&self, level: usize) -> Result<f64> {
        self.level(level)?;
        let mut noise = crate::params::symmetric_fresh_noise_log2(self.noise().variance().sqrt());
        for l in (level + 1..=self.max_level()).rev() {
            let basis = &self.level(l)?.basis;
            let q_last = basis.modulus(basis.len() - 1).value();
            noise = crate::ciphertext::mod_switched_noise_log2(noise, q_last, self.n());
        }
        Ok(noise)
    }

    pub(crate) fn batching(&self) -> Result<&Batching> {
        self.batching.as_ref().ok_or_else(|| {
            Error::Encoding(format!(
                "plaintext modulus {} does not support batching: it must be a prime = 1 mod {}",
                self.plain_modulus(),
                2 * self.n()
            ))
        })
    }

    /// The Galois element of a row rotation by `steps` (left when positive):
    /// 3^steps mod 2n, with 3 of order n/2.
    pub fn galois_element_for_rotation(&self, steps: i64) -> usize {
        self.rotation_element(Self::ROTATION_GENERATOR, steps)
            .expect("a context's ring degree is a checked power of two")
    }

    /// The Galois element that swaps the two rows: 2n - 1 (X -> X^-1).
    pub fn galois_element_for_row_swap(&self) -> usize {
        self.inverse_element()
    }
}

/// x -> round(r x / t) for a fixed r < t < 2^63 and any x < t, in constant
/// time (no division, no branch): with r' = floor(r 2^64 / t), the estimate
/// floor(x r' / 2^64) of floor(r x / t) is at most one short, because
/// x (r / t - r' / 2^64) < x / 2^64 < 1 (Shoup's method).
pub(crate) struct RoundedRatio {
    r: u64,
    t: u64,
    r_shoup: u64,
}

impl RoundedRatio {
    fn new(r: u64, t: u64) -> RoundedRatio {
        // Public values: dividing here is fine. r < t, so r' < 2^64.
        let r_shoup = (((r as u128) << 64) / t as u128) as u64;
        RoundedRatio { r, t, r_shoup }
    }

    /// round(r x / t) = floor((r x + floor(t / 2)) / t), for x < t.
    pub(crate) fn round_product(&self, x: u64) -> u64 {
        let (r, t) = (self.r as u128, self.t as u128);
        let exact = r * x as u128;
        let mut quotient = ((x as u128 * self.r_shoup as u128) >> 64) as u64;
        let mut rem = exact - quotient as u128 * t; // in [0, 2t)
        let short = (rem >= t) as u64;
        quotient += short;
        rem -= t * short as u128;
        // + floor(t/2), then one more step of the quotient if it carries.
        quotient + (rem + t / 2 >= t) as u64
    }
}

impl Level {
    fn new(basis: Arc<RnsBasis>, t: u64) -> Result<Level> {
        let len = basis.len();
        let primes = basis.primes();
        let big_q = product(&primes);
        let delta_big = &big_q / t;
        let t_over_q = primes
            .iter()
            .map(|&qi| {
                // floor(t 2^128 / q) by two steps of long division (t < q).
                let hi = ((t as u128) << 64) / qi as u128;
                let rem = ((t as u128) << 64) % qi as u128;
                let lo = (rem << 64) / qi as u128;
                (hi << 64) | lo
            })
            .collect();
        Ok(Level {
            delta: primes.iter().map(|&qi| big_mod(&delta_big, qi)).collect(),
            q_mod_t_scaling: RoundedRatio::new(big_mod(&big_q, t), t),
            t_over_q,
            switch_down: if len > 1 {
                Some(DivRound::by_last_prime(&basis)?)
            } else {
                None
            },
            mul: OnceLock::new(),
            log2_q: basis.log2_product(),
            basis,
        })
    }

    /// The multiplication tables, built on first use.
    pub(crate) fn mul_tables(&self, ctx: &BfvContext) -> Result<&MulTables> {
        self.mul
            .get_or_init(|| MulTables::new(ctx, &self.basis))
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl MulTables {
    fn new(ctx: &BfvContext, q: &Arc<RnsBasis>) -> Result<MulTables> {
        let n = ctx.n();
        // A > n Q_l keeps the rounding of the modulus switch, (t Q_l / A)
        // times a product with c(s), below the other terms of the product's
        // noise by a factor of about sqrt(n) (see `Ciphertext::mul`).
        // Exactness needs nothing more: the result is only needed modulo Q_l,
        // and the tensor's multiples of Q_l A vanish there after the division.
        let need = q.log2_product() + (n as f64).log2();
        let used: Vec<u64> = ctx.q_primes().into_iter().chain(ctx.p_primes()).collect();
        let mut aux = Vec::new();
        let mut bits = 0.0;
        let candidates = ntt_primes(AUX_PRIME_BITS, n, used.len() + 64)?;
        for c in candidates.into_iter().filter(|c| !used.contains(c)) {
            if bits >= need {
                break;
            }
            bits += (c as f64).log2();
            aux.push(c);
        }
        if bits < need {
            return Err(Error::InvalidParameters(
                "not enough auxiliary primes for multiplication".into(),
            ));
        }
        let aux = RnsBasis::new(n, &aux)?;
        let aux_mod_q = (0..q.len())
            .map(|i| aux.product_mod(q.modulus(i)))
            .collect();
        Ok(MulTables {
            q_to_aux: BaseConverter::new(q, &aux)?,
            switch_to_aux: DivRound::new(&aux, q)?,
            aux_to_q: BaseConverter::new(&aux, q)?,
            scale_down: DivRound::new(q, &aux)?,
            aux_mod_q,
            log2_q_over_aux: q.log2_product() - aux.log2_product(),
            aux,
        })
    }
}

impl std::fmt::Debug for BfvContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.rlwe.fmt_debug("BfvContext", f)
    }
}

impl Batching {
    /// The slot layout: slot (row r, column c) holds m(psi^e) with
    /// e = 3^c mod 2n for r = 0 and e = -3^c mod 2n for r = 1, which the NTT
    /// stores at index brv((e - 1) / 2). Rotating columns is then X -> X^3,
    /// swapping rows X -> X^-1.
    /// `None` when t is not a prime = 1 mod 2n.
    fn new(n: usize, t: u64) -> Option<Batching> {
        let plan = NttPlan::new(n, &Modulus::new(t).ok()?).ok()?;
        let two_n = 2 * n;
        let log_n = n.trailing_zeros();
        let brv = |j: usize| j.reverse_bits() >> (usize::BITS - log_n);
        let half = n / 2;
        let mut slot_index = vec![0usize; n];
        let mut e = 1usize;
        for c in 0..half {
            slot_index[c] = brv((e - 1) / 2);
            slot_index[half + c] = brv((two_n - e - 1) / 2);
            e = e * 3 % two_n;
        }
        Some(Batching { plan, slot_index })
    }
}

#[cfg(test)]
mod tests {
    use super::RoundedRatio;

    /// Against exact 128-bit division, at the edges and on a spread of values.
    #[test]
    fn rounded_ratio_matches_division() {
        for t in [
            2u64,
            3,
            65537,
            1_032_193,
            (1 << 34) + 27,
            (1 << 62) - 57,
            (1 << 63) - 25,
        ] {
            let picks = [0, 1, 2, t / 3, t / 2, t / 2 + 1, t - 2, t - 1];
            for &r in picks.iter().filter(|&&r| r < t) {
                let ratio = RoundedRatio::new(r, t);
                let mut x = 0x9e37_79b9_7f4a_7c15u64 % t;
                for &m in picks.iter().filter(|&&m| m < t) {
                    for m in [m, x] {
                        let want = (r as u128 * m as u128 + (t / 2) as u128) / t as u128;
                        assert_eq!(ratio.round_product(m) as u128, want, "r={r} m={m} t={t}");
                    }
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1) % t;
                }
            }
        }
    }
}
