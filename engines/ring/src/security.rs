//! The HomomorphicEncryption.org 128-bit security table, shared by every
//! RLWE engine (BFV and CKKS check their parameter sets against it).

/// Largest log2(QP) for 128-bit classical security with a ternary secret and
/// error sigma = 3.2, per ring degree (HomomorphicEncryption.org security
/// standard, Albrecht et al. 2018, table 1, "classical, uniform ternary",
/// which stops at 32768). N = 65536: 1747, from the standard's successor
/// tables, Bossuat et al., "Security Guidelines for Implementing
/// Homomorphic Encryption", IACR ePrint 2024/463 (128-bit classical,
/// uniform ternary secret; the same figure OpenFHE's `HEStd_128_classic`
/// ternary table uses in src/core/lib/lattice/stdlatticeparms.cpp).
pub const HE_STANDARD_128: [(usize, u32); 7] = [
    (1024, 27),
    (2048, 54),
    (4096, 109),
    (8192, 218),
    (16384, 438),
    (32768, 881),
    (65536, 1747),
];

/// The largest log2(QP) with 128-bit security at ring degree n, if tabulated.
pub fn max_log_qp_128(n: usize) -> Option<u32> {
    HE_STANDARD_128
        .iter()
        .find(|&&(d, _)| d == n)
        .map(|&(_, b)| b)
}
