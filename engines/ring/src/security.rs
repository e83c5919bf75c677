//! The 128-bit security table of ePrint 2024/463, shared by every
//! RLWE engine (BFV and CKKS check their parameter sets against it).

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
