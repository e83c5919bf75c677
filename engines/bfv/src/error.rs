//! The error type of the BFV engine: the variants every RLWE scheme has
//! ([`triskel_ring::rlwe_error!`]) and BFV's own.

triskel_ring::rlwe_error! {
    /// Everything that can go wrong in the BFV engine.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Error for "BFV" {
        /// Operands are at different levels (numbers of ciphertext primes).
        LevelMismatch {
            /// Level of the first operand.
            left: usize,
            /// Level of the second operand.
            right: usize,
        } => ("operands are at different levels ({left} and {right}); mod-switch one first"),
        /// The ciphertext's estimated noise would exceed what decryption tolerates.
        NoiseBudgetExhausted {
            /// The operation that was refused.
            operation: &'static str,
        } => (
            "{operation} would exhaust the noise budget: the result could not be decrypted correctly"
        ),
    }
}

/// Result of BFV operations.
pub type Result<T> = std::result::Result<T, Error>;
