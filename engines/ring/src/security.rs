//! The 128-bit security table of ePrint 2024/463, shared by every
//! RLWE engine (BFV and CKKS check their parameter sets against it).

use crate::error::{invalid, Error, Result};

/// Largest log2(QP) for 128-bit classical security with a uniform ternary
/// secret and error sigma = 3.2, per ring degree: Bossuat et al., "Security
/// Guidelines for Implementing Homomorphic Encryption", IACR ePrint 2024/463
/// (128-bit classical, uniform ternary). It supersedes the 2018
/// HomomorphicEncryption.org standard's table 1, whose limits are 1-13 bits
/// higher at N <= 32768 (27, 54, 109, 218, 438, 881): the lattice estimator
/// puts a 218-bit set at N = 8192 near 2^122 operations (dual hybrid attack),
/// below 128 bits, so the newer, stricter figures are the ones enforced.
pub const HE_STANDARD_128: [(usize, u32); 7] = [
    (1024, 26),
    (2048, 53),
    (4096, 106),
    (8192, 214),
    (16384, 430),
    (32768, 868),
    (65536, 1747),
];

/// The largest log2(QP) with 128-bit security at ring degree n, if tabulated.
pub fn max_log_qp_128(n: usize) -> Option<u32> {
    HE_STANDARD_128
        .iter()
        .find(|&&(d, _)| d == n)
        .map(|&(_, b)| b)
}

/// Most primes in one parameter set, Q and P together (bounds the work and
/// memory a loaded set can ask for).
pub const MAX_SET_PRIMES: usize = 64;

/// Checks what every RLWE parameter set shares: n one of the degrees of the
/// 128-bit table (even for a set allowed to be insecure), at least one
/// ciphertext (Q) and one special (P) prime and at most [`MAX_SET_PRIMES`] in
/// all, prime sizes in 20..=`max_prime_bits`, `dnum` in 1..=|Q|, and log2(QP)
/// within the 128-bit limit unless `allow_insecure` (never set by loaded
/// bytes).
pub fn check_rlwe_set(
    n: usize,
    q_bits: &[u32],
    p_bits: &[u32],
    dnum: usize,
    max_prime_bits: u32,
    allow_insecure: bool,
) -> Result<()> {
    if max_log_qp_128(n).is_none() {
        let degrees: Vec<String> = HE_STANDARD_128.iter().map(|(d, _)| d.to_string()).collect();
        return invalid(format!(
            "ring degree {n} is not one that the 128-bit security table covers ({})",
            degrees.join(", ")
        ));
    }
    if q_bits.is_empty() || p_bits.is_empty() {
        return invalid("at least one ciphertext prime and one special prime are needed");
    }
    if q_bits.len() + p_bits.len() > MAX_SET_PRIMES {
        return invalid(format!(
            "{} primes in all; a set has at most {MAX_SET_PRIMES}",
            q_bits.len() + p_bits.len()
        ));
    }
    if let Some(b) = q_bits
        .iter()
        .chain(p_bits)
        .find(|b| !(20..=max_prime_bits).contains(*b))
    {
        return invalid(format!(
            "prime size {b} bits is outside 20..={max_prime_bits}"
        ));
    }
    if dnum == 0 || dnum > q_bits.len() {
        return invalid(format!("dnum = {dnum} must be in 1..={}", q_bits.len()));
    }
    let log_qp: u32 = q_bits.iter().chain(p_bits).sum();
    match max_log_qp_128(n) {
        Some(max) if log_qp <= max => Ok(()),
        _ if allow_insecure => Ok(()),
        max => Err(Error::Insecure {
            n,
            log_qp,
            max_log_qp: max.unwrap_or(0),
        }),
    }
}
