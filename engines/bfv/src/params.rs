//! BFV parameters: named sets checked against the 128-bit table
//! of ePrint 2024/463, and the checks every custom set goes through.

use crate::error::{Error, Result};

use triskel_ring::RlweSet;
pub use triskel_ring::{max_log_qp_128, HE_STANDARD_128};

/// log2 of the standard deviation of the noise of a fresh public-key
/// encryption, e u + e0 - s e1 plus the rounding of D(m): each product
/// coefficient sums n terms of variance sigma^2 * 2/3, so
/// sigma^2 (4n/3 + 1) + 1/12 in all.
pub(crate) fn public_fresh_noise_log2(n: usize, sigma: f64) -> f64 {
    0.5 * (sigma * sigma * (4.0 * n as f64 / 3.0 + 1.0) + 1.0 / 12.0).log2()
}

/// log2 of the standard deviation of the noise of a fresh symmetric
/// encryption: e plus the rounding of D(m), sigma^2 + 1/12.
pub(crate) fn symmetric_fresh_noise_log2(sigma: f64) -> f64 {
    0.5 * (sigma * sigma + 1.0 / 12.0).log2()
}

/// The plaintext modulus every named set uses unless told otherwise: prime
/// and 1 mod 2n for every n up to 32768, so batching works.
pub const DEFAULT_PLAIN_MODULUS: u64 = 65537;

/// A BFV parameter set: the RLWE set ([`RlweSet`]: ring degree n, the bit
/// sizes of the ciphertext primes Q = q_0 ... q_{k-1} and of the special
/// primes P used only by key switching, the number of key-switching digits),
/// whose accessors it derefs to, and the plaintext modulus t.
///
/// The primes themselves are derived deterministically from the bit sizes
/// (the largest NTT-friendly primes of each size), so a set is fully
/// described by these fields.
///
/// Two sets are equal when they describe the same instance; the permission
/// [`allow_insecure`](Self::allow_insecure) is not part of that, and it is
/// never serialized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BfvParameters {
    pub(crate) set: RlweSet,
    pub(crate) plain_modulus: u64,
}

triskel_ring::rlwe_deref!(BfvParameters => RlweSet, set);

impl BfvParameters {
    /// A custom set. Checked when the context is built: n a power of two in
    /// [1024, 32768], primes of 20..=62 bits, t >= 2 and smaller than every
    /// ciphertext prime, 1 <= dnum <= number of Q primes, and log2(QP) within
    /// the 128-bit bound of [`HE_STANDARD_128`] unless
    /// [`allow_insecure`](Self::allow_insecure) was called.
    pub fn new(
        name: &str,
        n: usize,
        q_bits: &[u32],
        p_bits: &[u32],
        plain_modulus: u64,
    ) -> BfvParameters {
        BfvParameters {
            set: RlweSet::new(name, n, q_bits, p_bits, q_bits.len().max(1)),
            plain_modulus,
        }
    }

    /// N = 4096, Q = 2 x 35 bits, P = 36 bits (log QP = 106), t = 65537:
    /// depth-1 multiplication, rotations.
    pub fn n4096() -> BfvParameters {
        BfvParameters::new("bfv-n4096", 4096, &[35, 35], &[36], DEFAULT_PLAIN_MODULUS)
    }

    /// N = 4096 with one 62-bit data prime and one 44-bit special prime
    /// (log QP = 106): the cheapest set for depth-0 circuits (plaintext
    /// products, additions, rotations) such as the biometric match.
    pub fn n4096_shallow() -> BfvParameters {
        BfvParameters::new(
            "bfv-n4096-shallow",
            4096,
            &[62],
            &[44],
            DEFAULT_PLAIN_MODULUS,
        )
    }

    /// N = 8192, Q = 42 + 42 + 43 + 43 bits, P = 44 bits (log QP = 214), t = 65537.
    pub fn n8192() -> BfvParameters {
        BfvParameters::new(
            "bfv-n8192",
            8192,
            &[42, 42, 43, 43],
            &[44],
            DEFAULT_PLAIN_MODULUS,
        )
    }

    /// N = 16384, Q = 8 primes of 47-48 bits, P = 49 bits (log QP = 430), t = 65537.
    pub fn n16384() -> BfvParameters {
        BfvParameters::new(
            "bfv-n16384",
            16384,
            &[47, 47, 47, 48, 48, 48, 48, 48],
            &[49],
            DEFAULT_PLAIN_MODULUS,
        )
    }

    /// N = 32768, Q = 16 primes of 49 bits, P = 2 x 42 bits (log QP = 868), t = 65537.
    pub fn n32768() -> BfvParameters {
        BfvParameters::new(
            "bfv-n32768",
            32768,
            &[49; 16],
            &[42, 42],
            DEFAULT_PLAIN_MODULUS,
        )
        .with_dnum(8)
    }

    /// Every named set.
    pub fn named() -> Vec<BfvParameters> {
        vec![
            BfvParameters::n4096(),
            BfvParameters::n4096_shallow(),
            BfvParameters::n8192(),
            BfvParameters::n16384(),
            BfvParameters::n32768(),
        ]
    }

    /// The same set with another plaintext modulus (the name records it).
    pub fn with_plain_modulus(mut self, t: u64) -> BfvParameters {
        if t != self.plain_modulus {
            let name = format!("{}-t{t}", self.name().split("-t").next().unwrap_or(""));
            self.set = self.set.with_name(name);
        }
        self.plain_modulus = t;
        self
    }

    /// The same set with `dnum` key-switching digits.
    pub fn with_dnum(mut self, dnum: usize) -> BfvParameters {
        self.set = self.set.with_dnum(dnum);
        self
    }

    /// The same set with Q and P each re-split into primes of at most
    /// `max_bits` bits ([`RlweSet::with_prime_bits`]).
    pub fn with_prime_bits(mut self, max_bits: u32) -> Result<BfvParameters> {
        self.set = self.set.with_prime_bits(max_bits)?;
        Ok(self)
    }

    /// The same set with primes of the width the kernels run fastest on this
    /// machine ([`triskel_ring::machine_prime_bits`]): 31-bit primes on AArch64
    /// cores without SVE, where the `neon` kernels win; unchanged elsewhere.
    pub fn for_this_machine(self) -> Result<BfvParameters> {
        let widest = self.q_bits().iter().chain(self.p_bits()).max().copied();
        let bits = triskel_ring::machine_prime_bits(widest.unwrap_or(62));
        self.with_prime_bits(bits)
    }

    /// Accepts a set below 128-bit security (for tests and experiments only).
    pub fn allow_insecure(mut self) -> BfvParameters {
        self.set = self.set.allow_insecure();
        self
    }

    /// Plaintext modulus t.
    pub fn plain_modulus(&self) -> u64 {
        self.plain_modulus
    }

    /// Validates everything but the primes themselves (which the context
    /// derives): see [`BfvParameters::new`].
    pub(crate) fn validate(&self) -> Result<()> {
        self.set.check(62)?;
        let bad = |msg: String| Err(Error::InvalidParameters(msg));
        let t = self.plain_modulus;
        let min_q_bits = *self.q_bits().iter().min().unwrap_or(&0);
        if t < 2 || 64 - t.leading_zeros() >= min_q_bits {
            return bad(format!(
                "plaintext modulus {t} must be at least 2 and below every ciphertext prime ({min_q_bits} bits)"
            ));
        }
        // Decryption sums k terms below t in 64 bits (and reduces them with a
        // one-correction Barrett step, exact below 2^63).
        if (t as u128) * (self.q_bits().len() as u128 + 2) >= 1 << 63 {
            return bad(format!(
                "plaintext modulus {t} is too large for {} ciphertext primes: t (k + 2) must stay below 2^63",
                self.q_bits().len()
            ));
        }
        // A fresh public-key encryption must decrypt: a b-bit prime is at
        // least 2^(b-1), so log2(Q) >= sum(b - 1) and the budget of the
        // ciphertext module's rule (8 sigma below Q / 2t) must stay positive.
        let log_q_min: f64 = self.q_bits().iter().map(|&b| f64::from(b - 1)).sum();
        let fresh = public_fresh_noise_log2(self.n(), triskel_ring::sampling::DEFAULT_SIGMA);
        let budget = log_q_min - (t as f64).log2() - 1.0 - crate::ciphertext::TAIL.log2() - fresh;
        if budget <= 0.0 {
            return bad(format!(
                "Q of {log_q_min:.0}+ bits is too small for t = {t}: a fresh encryption would not decrypt"
            ));
        }
        Ok(())
    }
}
