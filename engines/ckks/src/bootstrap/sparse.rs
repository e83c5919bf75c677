//! The security of sparse secrets: the ephemeral secret of bootstrapping.
//!
//! The 128-bit table of ePrint 2024/463 ([`triskel_ring::HE_STANDARD_128`])
//! covers uniform ternary secrets only. A secret of Hamming weight h is
//! easier to attack (hybrid and meet-in-the-middle attacks guess its few
//! non-zero positions), so its security is taken from estimates of the
//! lattice estimator made for exactly that weight, pinned here:
//!
//! Source: the HomomorphicEncryption.org SparseLWEkit,
//! `src/data/lattice_estimator_estimates.csv` (github.com/
//! HomomorphicEncryption/SparseLWEkit), lattice-estimator commit 6019056,
//! sigma = 3.2, attacks usvp, bdd, bdd_hybrid, bdd_mitm_hybrid, dual and
//! dual_hybrid; the figure kept is the smallest over the attacks (log2 of
//! the cost in operations):
//!
//! | log2 N | h | log2 q | usvp | bdd_hybrid | bdd_mitm_hybrid | dual_hybrid | kept |
//! |---|---|---|---|---|---|---|---|
//! | 16 | 32 | 117 | inf | 199.5 | 172.9 | inf | 172.9 |
//! | 16 | 32 | 121 | inf | 198.2 | 171.9 | inf | 171.9 |
//! | 16 | 128 | 300 | inf | 381.2 | 326.9 | inf | 326.9 |
//! | 16 | 192 | 1555 | 144.3 | 139.5 | 133.8 | 145.0 | 133.8 |
//! | 15 | 192 | 777 | 143.3 | 138.4 | 132.6 | 143.8 | 132.6 |
//!
//! The same kit's earlier run (lattice-estimator commit 5ba00f56, with the
//! CHHS19 meet-in-the-middle attack) puts N = 2^16, h = 32, log2 q = 117
//! at 164.6 bits. A modulus smaller than a row's is at least as secure as
//! the row, so a set is checked against the row of its N and h with the
//! smallest log2 q at or above its own. Nothing else is covered: a sparse
//! secret of another weight, or at another degree, is refused.

/// (log2 N, h, log2 q, estimated security in bits): the rows above.
pub const SPARSE_SECRET_ESTIMATES: [(u32, usize, u32, f64); 5] = [
    (16, 32, 117, 172.9),
    (16, 32, 121, 171.9),
    (16, 128, 300, 326.9),
    (16, 192, 1555, 133.8),
    (15, 192, 777, 132.6),
];

/// The pinned security estimate for a secret of Hamming weight `h` at ring
/// degree `n` and modulus log2 q = `log_q` (module documentation), if a
/// row covers it.
pub fn sparse_secret_security(n: usize, h: usize, log_q: f64) -> Option<f64> {
    SPARSE_SECRET_ESTIMATES
        .iter()
        .filter(|&&(log_n, weight, q, _)| 1usize << log_n == n && weight == h && q as f64 >= log_q)
        .min_by_key(|&&(_, _, q, _)| q)
        .map(|&(_, _, _, bits)| bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_cover_smaller_moduli_of_their_degree_and_weight_only() {
        assert_eq!(sparse_secret_security(1 << 16, 32, 121.0), Some(171.9));
        assert_eq!(sparse_secret_security(1 << 16, 32, 110.0), Some(172.9));
        assert_eq!(sparse_secret_security(1 << 16, 32, 121.5), None);
        assert_eq!(sparse_secret_security(1 << 16, 64, 100.0), None);
        assert_eq!(sparse_secret_security(1 << 15, 32, 100.0), None);
        assert_eq!(sparse_secret_security(1 << 15, 192, 777.0), Some(132.6));
        assert!(SPARSE_SECRET_ESTIMATES.iter().all(|r| r.3 >= 128.0));
    }
}
