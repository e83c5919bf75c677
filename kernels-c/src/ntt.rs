//! The negacyclic number-theoretic transform over Z_q[X]/(X^n + 1).

use std::ptr::NonNull;

use crate::bindings as ffi;
use crate::error::{Error, Result};
use crate::modulus::Modulus;
use crate::Backend;

/// Precomputed tables of the negacyclic NTT of size n modulo q, for the
/// backend of the modulus.
///
/// With psi the smallest primitive 2n-th root of unity mod q,
/// [`forward`](NttPlan::forward) maps coefficients a_0..a_{n-1} (natural
/// order) to evaluations A\[j\] = a(psi^(2 brv(j) + 1)) in bit-reversed order
/// (brv reverses log2(n) bits); [`inverse`](NttPlan::inverse) undoes it,
/// n^-1 included. A product in Z_q\[X\]/(X^n + 1) is therefore
/// `inverse(forward(a) .* forward(b))`.
pub struct NttPlan {
    raw: NonNull<ffi::triskel_ntt_plan>,
    modulus: Modulus,
    n: usize,
}

// SAFETY: the C plan is immutable after construction and only freed in Drop,
// so sharing references across threads and moving it between threads is sound.
unsafe impl Send for NttPlan {}
// SAFETY: as above; the kernels only read the plan.
unsafe impl Sync for NttPlan {}

impl std::fmt::Debug for NttPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NttPlan")
            .field("n", &self.n)
            .field("modulus", &self.modulus)
            .finish()
    }
}

impl NttPlan {
    /// Builds the plan of size n (a power of two in [2^10, 2^17]) for a
    /// modulus with 2n | q - 1.
    pub fn new(n: usize, modulus: &Modulus) -> Result<NttPlan> {
        if !n.is_power_of_two() || !(crate::MIN_NTT_SIZE..=crate::MAX_NTT_SIZE).contains(&n) {
            return Err(Error::InvalidSize(n));
        }
        let q = modulus.value();
        if !(q - 1).is_multiple_of(2 * n as u64) {
            return Err(Error::NotNttFriendly { q, n });
        }
        let backend = modulus
            .backend()
            .table()
            .expect("a Modulus is only built for a compiled backend");
        // SAFETY: pure function of its integer arguments.
        let psi = unsafe { ffi::triskel_min_root_2n(q, n as u64) };
        // SAFETY: backend points to a static table; the C side validates the
        // integers again and returns NULL on failure.
        let raw = unsafe { ffi::triskel_ntt_plan_new(backend, n as u64, q, psi) };
        let raw = NonNull::new(raw).ok_or(Error::OutOfMemory)?;
        Ok(NttPlan {
            raw,
            modulus: modulus.clone(),
            n,
        })
    }

    /// The transform size n.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The modulus.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// The backend whose kernels run this plan.
    pub fn backend(&self) -> Backend {
        self.modulus.backend()
    }

    /// The primitive 2n-th root of unity psi the transform evaluates at.
    pub fn psi(&self) -> u64 {
        // SAFETY: raw is a live plan owned by self.
        unsafe { self.raw.as_ref().psi }
    }

    fn check_len(&self, a: &[u64]) -> Result<()> {
        if a.len() != self.n {
            return Err(Error::LengthMismatch {
                expected: self.n,
                got: a.len(),
            });
        }
        Ok(())
    }

    /// In-place forward transform of n residues in [0, q): natural order in,
    /// bit-reversed evaluations out, all in [0, q). (Unreduced input gives
    /// unspecified values, possibly >= q, never memory errors.)
    pub fn forward(&self, a: &mut [u64]) -> Result<()> {
        self.check_len(a)?;
        // SAFETY: the plan is live and a has exactly n elements, as the
        // kernel requires; it writes only a[0..n].
        unsafe { (self.modulus.kernels().ntt_forward)(self.raw.as_ptr(), a.as_mut_ptr()) };
        Ok(())
    }

    /// In-place inverse transform: bit-reversed evaluations in [0, q) in,
    /// natural-order coefficients in [0, q) out, including the factor n^-1.
    pub fn inverse(&self, a: &mut [u64]) -> Result<()> {
        self.check_len(a)?;
        // SAFETY: as in forward.
        unsafe { (self.modulus.kernels().ntt_inverse)(self.raw.as_ptr(), a.as_mut_ptr()) };
        Ok(())
    }

    /// Out-of-place [`inverse`](NttPlan::inverse): `out` = the inverse
    /// transform of `input`, which is only read (no copy first on the
    /// AVX-512 backends: their first pass reads `input`).
    pub fn inverse_to(&self, out: &mut [u64], input: &[u64]) -> Result<()> {
        self.check_len(out)?;
        self.check_len(input)?;
        // SAFETY: the plan is live, both slices hold exactly n elements and
        // cannot overlap (out is a distinct mutable borrow); the kernel reads
        // input[0..n] and writes only out[0..n].
        unsafe {
            (self.modulus.kernels().ntt_inverse_to)(
                self.raw.as_ptr(),
                out.as_mut_ptr(),
                input.as_ptr(),
            )
        };
        Ok(())
    }
}

impl Drop for NttPlan {
    fn drop(&mut self) {
        // SAFETY: raw came from triskel_ntt_plan_new and is freed exactly once.
        unsafe { ffi::triskel_ntt_plan_free(self.raw.as_ptr()) };
    }
}
