//! The error type of the CKKS engine: the variants every RLWE scheme has
//! ([`triskel_ring::rlwe_error!`]) and CKKS's own.

triskel_ring::rlwe_error! {
    /// Everything that can go wrong in the CKKS engine.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Error for "CKKS" {
        /// Operands are at levels that cannot be matched (the message says why).
        LevelMismatch {
            /// Level of the first operand.
            left: usize,
            /// Level of the second operand.
            right: usize,
        } => ("operands are at levels {left} and {right}, which cannot be matched"),
        /// Operands have different scales at the same level: adding them would
        /// return garbage, and matching them would need a level neither has.
        ScaleMismatch {
            /// log2 of the first operand's scale.
            left_log2: f64,
            /// log2 of the second operand's scale.
            right_log2: f64,
        } => (
            "operands have scales 2^{left_log2:.6} and 2^{right_log2:.6} at the same level; \
             rescale or adjust one first"
        ),
        /// The result's scale would leave no room for the message in Q_l.
        ScaleOverflow {
            /// log2 of the scale the operation would produce.
            scale_log2: f64,
            /// log2 of the largest scale the level allows.
            max_log2: f64,
        } => (
            "the result's scale 2^{scale_log2:.2} exceeds the level's limit 2^{max_log2:.2}; rescale first"
        ),
        /// An evaluation needs more levels than the ciphertext has left.
        NotEnoughLevels {
            /// Levels the evaluation consumes.
            needed: usize,
            /// Levels the ciphertext has left (its level).
            left: usize,
        } => (
            "the evaluation needs {needed} levels and the ciphertext has {left} left: \
             use a deeper parameter set or a lower degree"
        ),
        /// The result's estimated error would reach its scale: no precision left.
        NoiseExhausted {
            /// log2 of the estimated error bound (scaled units).
            noise_log2: f64,
            /// log2 of the result's scale.
            scale_log2: f64,
        } => (
            "the estimated error 2^{noise_log2:.1} would reach the scale 2^{scale_log2:.1}: \
             no precision left"
        ),
        /// The message bound plus the error bound would reach Q_l / 2: the
        /// decrypted values would wrap around the modulus.
        MessageOverflow {
            /// log2 of message bound + error bound (scaled units).
            needed_log2: f64,
            /// log2 of the level's modulus Q_l.
            q_log2: f64,
        } => (
            "message and error bounds 2^{needed_log2:.1} would reach Q/2 = 2^{:.1}: \
             decryption would wrap (declare a smaller bound or use a larger modulus)",
            q_log2 - 1.0
        ),
        /// Flooded decryptions under this key would exceed alpha, the number
        /// its floods are proven for (the least `Flooding::decryptions` of its
        /// floods and of the one asked): nothing was decrypted.
        FloodingExhausted {
            /// Flooded decryptions the key has made.
            done: u64,
            /// Flooded decryptions asked now.
            asked: u64,
            /// The alpha that bounds the total.
            alpha: u64,
        } => (
            "this secret key has made {done} flooded decryption(s): {asked} more would exceed \
             alpha = {alpha}, the number its noise flooding is proven for (use a new key pair)"
        ),
    }
}

/// Result of CKKS operations.
pub type Result<T> = std::result::Result<T, Error>;
