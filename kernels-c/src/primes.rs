//! Primality and NTT-friendly prime generation.

use crate::bindings as ffi;
use crate::error::{Error, Result};

/// Deterministic primality test for any 64-bit integer (Miller-Rabin with the
/// first twelve primes as bases, which is exact below 2^64).
pub fn is_prime(q: u64) -> bool {
    // SAFETY: pure function of its integer argument.
    unsafe { ffi::triskel_is_prime(q) == 1 }
}

/// Most primes one [`ntt_primes`] call returns (the largest named set uses
/// 41).
pub const MAX_PRIMES: usize = 4096;

/// The `count` largest primes of exactly `bits` bits (2^(bits-1) < q < 2^bits)
/// with q = 1 mod 2n, in descending order: the moduli that support a
/// negacyclic NTT of size n (a power of two). `bits` may be at most 62,
/// `count` at most [`MAX_PRIMES`].
pub fn ntt_primes(bits: u32, n: usize, count: usize) -> Result<Vec<u64>> {
    let not_enough = Error::NotEnoughPrimes { bits, n, count };
    if !n.is_power_of_two() || n > crate::MAX_NTT_SIZE {
        return Err(Error::InvalidSize(n));
    }
    let step = 2 * n as u64;
    if bits > crate::MAX_MODULUS_BITS || (1u64 << bits.max(1)) <= step * 2 {
        return Err(not_enough);
    }
    let low = 1u64 << (bits - 1);
    // More than there are candidates, or than any parameter set uses, is
    // refused before the search (which would otherwise scan up to 2^50
    // candidates or allocate without bound).
    if count > MAX_PRIMES || count as u64 > low / step {
        return Err(not_enough);
    }
    let mut primes = Vec::with_capacity(count);
    // Largest q = 1 mod step below 2^bits, then downwards in steps.
    let mut q = (1u64 << bits) - step + 1;
    while primes.len() < count && q > low {
        if is_prime(q) {
            primes.push(q);
        }
        q -= step;
    }
    if primes.len() < count {
        return Err(not_enough);
    }
    Ok(primes)
}
