//! RNS bases: ordered sets of NTT-friendly primes with their plans and CRT constants.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use triskel_kernels::{Modulus, NttPlan};

use crate::error::{invalid, Result};

/// The most primes one basis may hold. Bases of secure parameter sets hold
/// far fewer (log2 QP <= 881 bits at n = 32768 is at most 45 primes of 20 bits
/// or more, and an auxiliary basis B || Q of multiplication twice that); the
/// cap keeps per-basis precomputation, whose cost grows as k^2, bounded for
/// any input, and every per-prime count within a byte.
pub const MAX_PRIMES: usize = 128;

/// An ordered RNS basis {q_0, ..., q_{k-1}} of distinct NTT-friendly primes for
/// the ring Z_Q\[X\]/(X^n + 1), Q = q_0 * ... * q_{k-1}.
///
/// Each prime carries its NTT plan (shared through `Arc` with every sub-basis,
/// so taking sub-bases is cheap) and the CRT constant
/// `qhat_inv[i] = (Q / q_i)^-1 mod q_i`, with which x = sum_i [x_i * qhat_inv_i]_{q_i} * Q/q_i mod Q.
pub struct RnsBasis {
    n: usize,
    plans: Vec<Arc<NttPlan>>,
    qhat_inv: Vec<u64>,
}

impl std::fmt::Debug for RnsBasis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RnsBasis")
            .field("n", &self.n)
            .field("primes", &self.primes())
            .finish()
    }
}

impl PartialEq for RnsBasis {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n
            && self.plans.len() == other.plans.len()
            && self
                .plans
                .iter()
                .zip(&other.plans)
                .all(|(a, b)| a.modulus().value() == b.modulus().value())
    }
}
impl Eq for RnsBasis {}

impl RnsBasis {
    /// Builds the basis of the given primes for ring degree n (a power of two
    /// in [2^10, 2^17]); every prime must be distinct, < 2^62 and 1 mod 2n.
    pub fn new(n: usize, primes: &[u64]) -> Result<Arc<RnsBasis>> {
        let plans = primes
            .iter()
            .map(|&q| Ok(Arc::new(NttPlan::new(n, &Modulus::new(q)?)?)))
            .collect::<Result<Vec<_>>>()?;
        RnsBasis::from_plans(n, plans)
    }

    /// The basis of the `count` largest NTT-friendly primes of `bits` bits.
    pub fn generate(n: usize, bits: u32, count: usize) -> Result<Arc<RnsBasis>> {
        RnsBasis::new(n, &triskel_kernels::ntt_primes(bits, n, count)?)
    }

    /// Builds a basis from existing plans (all of size n, distinct primes).
    pub fn from_plans(n: usize, plans: Vec<Arc<NttPlan>>) -> Result<Arc<RnsBasis>> {
        RnsBasis::check_plans(n, &plans)?;
        let qhat_inv = (0..plans.len())
            .map(|i| {
                let m = plans[i].modulus();
                let qhat = plans
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .fold(1, |acc, (_, p)| m.mul_mod(acc, p.modulus().value()));
                // Distinct primes: Q/q_i is a unit mod q_i.
                m.inv_mod(qhat).unwrap_or(0)
            })
            .collect();
        Ok(Arc::new(RnsBasis { n, plans, qhat_inv }))
    }

    /// Checks what every basis needs: 1..=[`MAX_PRIMES`] distinct primes,
    /// every plan of size n.
    fn check_plans(n: usize, plans: &[Arc<NttPlan>]) -> Result<()> {
        if plans.is_empty() || plans.len() > MAX_PRIMES {
            return invalid(format!(
                "an RNS basis holds 1 to {MAX_PRIMES} primes, not {}",
                plans.len()
            ));
        }
        for (i, p) in plans.iter().enumerate() {
            if p.n() != n {
                return invalid(format!("plan {i} has size {} instead of {n}", p.n()));
            }
            let q = p.modulus().value();
            if plans[..i].iter().any(|o| o.modulus().value() == q) {
                return invalid(format!("prime {q} appears twice in the basis"));
            }
        }
        Ok(())
    }

    /// Ring degree n.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of primes k.
    pub fn len(&self) -> usize {
        self.plans.len()
    }

    /// Always false (a basis has at least one prime); for clippy's sake.
    pub fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }

    /// The i-th modulus (panics if i >= [`len`](Self::len)).
    pub fn modulus(&self, i: usize) -> &Modulus {
        self.plans[i].modulus()
    }

    /// The NTT plan of the i-th prime (panics if i >= [`len`](Self::len)).
    pub fn plan(&self, i: usize) -> &NttPlan {
        &self.plans[i]
    }

    /// Shared handles on the plans (for building related bases).
    pub fn plans(&self) -> &[Arc<NttPlan>] {
        &self.plans
    }

    /// The primes in order.
    pub fn primes(&self) -> Vec<u64> {
        self.plans.iter().map(|p| p.modulus().value()).collect()
    }

    /// log2(Q), the bit size of the product of the primes.
    pub fn log2_product(&self) -> f64 {
        self.plans
            .iter()
            .map(|p| (p.modulus().value() as f64).log2())
            .sum()
    }

    /// CRT constant (Q/q_i)^-1 mod q_i (panics if i >= [`len`](Self::len)).
    pub fn qhat_inv(&self, i: usize) -> u64 {
        self.qhat_inv[i]
    }

    /// Q mod m for a modulus m (not necessarily in the basis).
    pub fn product_mod(&self, m: &Modulus) -> u64 {
        self.plans
            .iter()
            .fold(1 % m.value(), |acc, p| m.mul_mod(acc, p.modulus().value()))
    }

    /// The sub-basis of primes `range` (in order).
    pub fn sub_basis(&self, range: Range<usize>) -> Result<Arc<RnsBasis>> {
        if range.start >= range.end || range.end > self.len() {
            return invalid(format!(
                "sub-basis {range:?} is empty or outside 0..{}",
                self.len()
            ));
        }
        RnsBasis::from_plans(self.n, self.plans[range].to_vec())
    }

    /// The basis without its last prime (the next level down), in O(k):
    /// (Q'/q_i)^-1 = (Q/q_i)^-1 * q_last mod q_i, with Q' = Q / q_last.
    pub fn drop_last(&self) -> Result<Arc<RnsBasis>> {
        let k = self.len();
        if k < 2 {
            return invalid("cannot drop the only prime of a basis");
        }
        let last = self.modulus(k - 1).value();
        let qhat_inv = (0..k - 1)
            .map(|i| {
                let m = self.modulus(i);
                m.mul_mod(self.qhat_inv[i], m.reduce(last))
            })
            .collect();
        Ok(Arc::new(RnsBasis {
            n: self.n,
            plans: self.plans[..k - 1].to_vec(),
            qhat_inv,
        }))
    }

    /// Every prefix basis q_0 .. q_l, from the shortest (one prime) to this
    /// one: the levels of a modulus chain, in O(k^2) in all.
    pub fn prefixes(self: &Arc<Self>) -> Result<Vec<Arc<RnsBasis>>> {
        let mut out = vec![self.clone()];
        while out[out.len() - 1].len() > 1 {
            let next = out[out.len() - 1].drop_last()?;
            out.push(next);
        }
        out.reverse();
        Ok(out)
    }

    /// The `dnum` digit sub-bases of [`digit_ranges`].
    pub fn digits(&self, dnum: usize) -> Result<Vec<Arc<RnsBasis>>> {
        digit_ranges(self.len(), dnum)?
            .into_iter()
            .map(|r| self.sub_basis(r))
            .collect()
    }

    /// The concatenation `self || other` (e.g. Q || P); primes must stay distinct.
    pub fn concat(&self, other: &RnsBasis) -> Result<Arc<RnsBasis>> {
        if self.n != other.n {
            return invalid("cannot concatenate bases of different ring degrees");
        }
        let plans = self.plans.iter().chain(&other.plans).cloned().collect();
        RnsBasis::from_plans(self.n, plans)
    }
}

/// Splits k primes into `dnum` consecutive digits of alpha = ceil(k / dnum)
/// primes each (the last digits may be shorter; empty ones are left out).
pub fn digit_ranges(k: usize, dnum: usize) -> Result<Vec<Range<usize>>> {
    if dnum == 0 || dnum > k {
        return invalid(format!("dnum = {dnum} must be in 1..={k}"));
    }
    let alpha = k.div_ceil(dnum);
    Ok((0..k)
        .step_by(alpha)
        .map(|s| s..(s + alpha).min(k))
        .collect())
}

/// The width of the narrow primes: the `neon` kernels take primes below 2^31.
pub const NARROW_PRIME_BITS: u32 = 31;

/// The widest primes a basis should use on this machine, by the kernels'
/// dispatcher: [`NARROW_PRIME_BITS`] where the backend chosen for a 62-bit
/// prime is the scalar `aarch64` one while 31-bit primes get `neon` (AArch64
/// without SVE, such as Neoverse N1: twice the modulus bits per cycle there,
/// by llvm-mca's estimates), or when `TRISKEL_KERNELS` forces a
/// backend that takes no wider prime; otherwise `wide_bits`. On SVE cores
/// (Neoverse V1, V2) the 62-bit `sve` kernels carry more bits per cycle than
/// `neon`, so wide primes stay.
pub fn machine_prime_bits(wide_bits: u32) -> u32 {
    use triskel_kernels::{select_backend, Backend};
    let narrow = select_backend((1 << NARROW_PRIME_BITS) - 1);
    let wide = select_backend((1 << 62) - 1);
    match (wide, narrow) {
        (Ok(Backend::Aarch64) | Err(_), Ok(b)) if b.max_modulus_bits() <= NARROW_PRIME_BITS => {
            NARROW_PRIME_BITS.min(wide_bits)
        }
        _ => wide_bits,
    }
}

/// Bit sizes of primes of at most `max_bits` bits (and at least 20) for a
/// modulus of about `total_bits` bits: ceil(total / max) primes of equal
/// sizes (differing by at most one bit) summing to `total_bits`, or, when
/// those would fall below 20 bits, one prime fewer of `max_bits` bits (a
/// smaller modulus, never a larger one).
pub fn split_modulus_bits(total_bits: u32, max_bits: u32) -> Result<Vec<u32>> {
    if !(20..=62).contains(&max_bits) || total_bits < 20 {
        return invalid(format!(
            "cannot split {total_bits} bits into primes of 20..={max_bits} bits"
        ));
    }
    let count = total_bits.div_ceil(max_bits);
    if total_bits / count < 20 {
        return Ok(vec![max_bits; (count - 1).max(1) as usize]);
    }
    let (base, extra) = (total_bits / count, total_bits % count);
    Ok((0..count).map(|i| base + u32::from(i < extra)).collect())
}

/// Distinct NTT-friendly primes for ring degree n with the given bit sizes,
/// in order: the largest primes of each size, handed out in turn (so a
/// parameter set described by bit sizes always gets the same primes).
pub fn allocate_primes(n: usize, bits: &[u32]) -> Result<Vec<u64>> {
    let mut counts = BTreeMap::new();
    for &b in bits {
        *counts.entry(b).or_insert(0usize) += 1;
    }
    let mut pools = BTreeMap::new();
    for (&b, &count) in &counts {
        pools.insert(b, triskel_kernels::ntt_primes(b, n, count)?.into_iter());
    }
    bits.iter()
        .map(|b| {
            pools
                .get_mut(b)
                .and_then(Iterator::next)
                .map_or_else(|| invalid("prime pool exhausted"), Ok)
        })
        .collect()
}
