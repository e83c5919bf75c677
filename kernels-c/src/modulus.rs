//! A checked prime modulus bound to its backend, with scalar arithmetic.

use crate::backend::{select_backend, Backend, Kernels};
use crate::bindings as ffi;
use crate::error::{Error, Result};

/// A prime q < 2^62 with its reduction constants and the backend whose
/// kernels serve it (chosen once, at construction).
#[derive(Clone)]
pub struct Modulus {
    raw: ffi::triskel_modulus,
    backend: Backend,
}

impl std::fmt::Debug for Modulus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Modulus")
            .field("q", &self.raw.q)
            .field("backend", &self.backend)
            .finish()
    }
}

impl PartialEq for Modulus {
    fn eq(&self, other: &Self) -> bool {
        self.raw.q == other.raw.q
    }
}
impl Eq for Modulus {}

impl Modulus {
    /// Checks that q is a prime below 2^62 and binds it to the backend
    /// [`select_backend`] picks for it.
    pub fn new(q: u64) -> Result<Modulus> {
        check_prime(q)?;
        Modulus::with_backend(q, select_backend(q)?)
    }

    /// Like [`Modulus::new`] but with a given backend: an error when the
    /// backend cannot run here or does not accept q.
    pub fn with_backend(q: u64, backend: Backend) -> Result<Modulus> {
        check_prime(q)?;
        backend.check_usable()?;
        if !backend.supports_modulus(q) {
            return Err(Error::ModulusOutOfRange {
                q,
                max_bits: backend.max_modulus_bits(),
            });
        }
        let mut raw = ffi::triskel_modulus {
            q: 0,
            barrett_hi: 0,
            barrett_lo: 0,
            two_q: 0,
        };
        // SAFETY: raw is a valid, writable triskel_modulus; q was range-checked.
        let status = unsafe { ffi::triskel_modulus_init(&mut raw, q) };
        debug_assert_eq!(status, 0);
        Ok(Modulus { raw, backend })
    }

    /// The prime q.
    pub fn value(&self) -> u64 {
        self.raw.q
    }

    /// Bit length of q.
    pub fn bits(&self) -> u32 {
        64 - self.raw.q.leading_zeros()
    }

    /// The backend whose kernels serve this modulus.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub(crate) fn raw(&self) -> &ffi::triskel_modulus {
        &self.raw
    }

    pub(crate) fn kernels(&self) -> &'static Kernels {
        self.backend
            .kernels()
            .expect("a Modulus is only built for a compiled backend")
    }

    /// x mod q for any 128-bit x, by Barrett reduction with floor(2^128 / q):
    /// the quotient estimate floor(x * floor(2^128/q) / 2^128) is exact or one
    /// short, and only its low 64 bits matter because the remainder is < 2q.
    pub fn reduce_u128(&self, x: u128) -> u64 {
        let (x0, x1) = (x as u64, (x >> 64) as u64);
        let (hi, lo) = (self.raw.barrett_hi, self.raw.barrett_lo);
        let carry = ((x0 as u128 * lo as u128) >> 64) as u64;
        let mid1 = x0 as u128 * hi as u128 + carry as u128;
        let mid2 = x1 as u128 * lo as u128;
        let low_sum = (mid1 as u64) as u128 + (mid2 as u64) as u128;
        let quotient = x1
            .wrapping_mul(hi)
            .wrapping_add((mid1 >> 64) as u64)
            .wrapping_add((mid2 >> 64) as u64)
            .wrapping_add((low_sum >> 64) as u64);
        self.sub_if_at_least_q(x0.wrapping_sub(quotient.wrapping_mul(self.raw.q)))
    }

    // The helpers below are branch-free (masks from the sign bit, valid as
    // q < 2^62): keys, noise and messages go through them, and a branch on
    // such a value could leak it through timing.

    /// r - q if r >= q, else r, for r < 2q.
    fn sub_if_at_least_q(&self, r: u64) -> u64 {
        self.add_q_if_negative(r.wrapping_sub(self.raw.q))
    }

    /// d + q if d, read as signed, is negative (d in (-q, q)).
    fn add_q_if_negative(&self, d: u64) -> u64 {
        d.wrapping_add(self.raw.q & ((d as i64 >> 63) as u64))
    }

    /// x mod q.
    pub fn reduce(&self, x: u64) -> u64 {
        self.reduce_u128(x as u128)
    }

    /// x mod q for any signed x: |x| mod q, negated or not by a mask (no
    /// branch: noise and secret keys go through it).
    pub fn reduce_i64(&self, x: i64) -> u64 {
        let r = self.reduce(x.unsigned_abs());
        let negative = 0u64.wrapping_sub((x < 0) as u64);
        r ^ ((r ^ self.neg_mod(r)) & negative)
    }

    /// a * b mod q for any a, b.
    pub fn mul_mod(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }

    /// a + b mod q for a, b in [0, q).
    pub fn add_mod(&self, a: u64, b: u64) -> u64 {
        self.sub_if_at_least_q(a + b)
    }

    /// a - b mod q for a, b in [0, q).
    pub fn sub_mod(&self, a: u64, b: u64) -> u64 {
        self.add_q_if_negative(a.wrapping_sub(b))
    }

    /// -a mod q for a in [0, q).
    pub fn neg_mod(&self, a: u64) -> u64 {
        self.sub_mod(0, a)
    }

    /// base^exp mod q.
    pub fn pow_mod(&self, base: u64, mut exp: u64) -> u64 {
        let (mut result, mut base) = (1 % self.raw.q, self.reduce(base));
        while exp != 0 {
            if exp & 1 == 1 {
                result = self.mul_mod(result, base);
            }
            base = self.mul_mod(base, base);
            exp >>= 1;
        }
        result
    }

    /// a^-1 mod q, or `None` when a = 0 mod q.
    pub fn inv_mod(&self, a: u64) -> Option<u64> {
        let a = self.reduce(a);
        (a != 0).then(|| self.pow_mod(a, self.raw.q - 2))
    }

    /// Shoup companion floor(w * 2^64 / q) of a constant w in [0, q), for
    /// [`Modulus::mul_shoup`] (uses a division: precompute it).
    pub fn shoup(&self, w: u64) -> u64 {
        (((w as u128) << 64) / self.raw.q as u128) as u64
    }

    /// a * w mod q with w's Shoup companion: no division, any 64-bit a.
    pub fn mul_shoup(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        let quotient = ((a as u128 * w_shoup as u128) >> 64) as u64;
        self.sub_if_at_least_q(
            a.wrapping_mul(w)
                .wrapping_sub(quotient.wrapping_mul(self.raw.q)),
        )
    }
}

fn check_prime(q: u64) -> Result<()> {
    if q < 2 || q >> crate::MAX_MODULUS_BITS != 0 {
        return Err(Error::ModulusOutOfRange {
            q,
            max_bits: crate::MAX_MODULUS_BITS,
        });
    }
    if !crate::is_prime(q) {
        return Err(Error::NotPrime(q));
    }
    Ok(())
}
