//! Polynomials of R_Q = Z_Q[X]/(X^n + 1) in RNS form.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use triskel_kernels as k;
use zeroize::Zeroize;

use crate::aligned::{self, AlignedVec};
use crate::basis::RnsBasis;
use crate::error::{invalid, Error, Result};
use crate::par;
use crate::scratch::{self, Scratch};

/// How a polynomial's limbs are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Representation {
    /// Coefficients a_0..a_{n-1} modulo each prime, natural order.
    Coefficient,
    /// NTT evaluations A\[j\] = a(psi^(2 brv(j) + 1)) modulo each prime, bit-reversed order.
    Ntt,
}

/// A polynomial a in R_Q stored as its k residue polynomials \[a\]_{q_i} ("limbs"),
/// limb-major in one 64-byte-aligned vector of k * n values in [0, q_i), tagged with its basis
/// and representation. Operations check both and return an error on mismatch.
///
/// `Debug` prints only the shape, never the values (a polynomial may be secret);
/// call [`Zeroize::zeroize`] (or wrap in `zeroize::Zeroizing`) for secret ones:
/// a dropped polynomial's storage goes back, unwiped, to a per-thread pool of
/// buffers that later results are written into.
pub struct Poly {
    basis: Arc<RnsBasis>,
    repr: Representation,
    data: AlignedVec,
}

impl std::fmt::Debug for Poly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poly")
            .field("basis", &self.basis)
            .field("repr", &self.repr)
            .finish_non_exhaustive()
    }
}

impl Clone for Poly {
    fn clone(&self) -> Poly {
        Poly {
            basis: self.basis.clone(),
            repr: self.repr,
            data: scratch::take_copy(&self.data),
        }
    }
}

impl Drop for Poly {
    fn drop(&mut self) {
        scratch::give_back(std::mem::replace(&mut self.data, aligned::empty()));
    }
}

impl PartialEq for Poly {
    fn eq(&self, other: &Self) -> bool {
        same_basis(&self.basis, &other.basis)
            && self.repr == other.repr
            && self.data[..] == other.data[..]
    }
}
impl Eq for Poly {}

impl Zeroize for Poly {
    fn zeroize(&mut self) {
        self.data.as_mut_slice().zeroize();
    }
}

pub(crate) fn same_basis(a: &Arc<RnsBasis>, b: &Arc<RnsBasis>) -> bool {
    Arc::ptr_eq(a, b) || **a == **b
}

impl Poly {
    /// The zero polynomial.
    pub fn zero(basis: &Arc<RnsBasis>, repr: Representation) -> Poly {
        Poly {
            basis: basis.clone(),
            repr,
            data: scratch::take_zeroed(basis.len() * basis.n()),
        }
    }

    /// A polynomial whose every value the caller writes before any is read
    /// (crate-internal: the storage holds stale public values until then).
    pub(crate) fn for_overwrite(basis: &Arc<RnsBasis>, repr: Representation) -> Poly {
        Poly {
            basis: basis.clone(),
            repr,
            data: scratch::take_for_overwrite(basis.len() * basis.n()),
        }
    }

    /// The first limbs of `buffer` (at least those of `basis`) as a
    /// polynomial of `basis`, without a copy (crate-internal).
    pub(crate) fn from_scratch(
        basis: &Arc<RnsBasis>,
        repr: Representation,
        buffer: Scratch,
    ) -> Poly {
        let mut data = buffer.into_inner();
        debug_assert!(data.len() >= basis.len() * basis.n());
        data.truncate(basis.len() * basis.n());
        Poly {
            basis: basis.clone(),
            repr,
            data,
        }
    }

    /// Wraps limb-major data (k * n values, limb i reduced modulo q_i),
    /// copied into aligned storage (`data` is wiped: it may be secret).
    pub fn from_limbs(
        basis: &Arc<RnsBasis>,
        repr: Representation,
        mut data: Vec<u64>,
    ) -> Result<Poly> {
        let n = basis.n();
        if data.len() != basis.len() * n {
            return invalid(format!(
                "{} values given, {} limbs of {n} expected",
                data.len(),
                basis.len()
            ));
        }
        for (i, limb) in data.chunks(n).enumerate() {
            let q = basis.modulus(i).value();
            if let Some(v) = limb.iter().find(|&&v| v >= q) {
                return invalid(format!("value {v} of limb {i} is not reduced modulo {q}"));
            }
        }
        let p = Poly::from_raw(basis, repr, &data);
        data.zeroize();
        Ok(p)
    }

    /// A copy of data known to be valid (crate-internal fast path).
    pub(crate) fn from_raw(basis: &Arc<RnsBasis>, repr: Representation, data: &[u64]) -> Poly {
        debug_assert_eq!(data.len(), basis.len() * basis.n());
        Poly {
            basis: basis.clone(),
            repr,
            data: scratch::take_copy(data),
        }
    }

    /// The first limbs, those of `prefix` (a prefix of this basis), kept in
    /// place: no copy (crate-internal, the caller knows the bases).
    pub(crate) fn truncate_to(mut self, prefix: &Arc<RnsBasis>) -> Poly {
        debug_assert_eq!(prefix.primes()[..], self.basis.primes()[..prefix.len()]);
        self.data.truncate(prefix.len() * self.n());
        self.basis = prefix.clone();
        self
    }

    /// The polynomial with small signed integer coefficients `coeffs` (length n),
    /// reduced once to every prime (CRT-consistent), in representation `repr`.
    pub fn from_signed(
        basis: &Arc<RnsBasis>,
        coeffs: &[i64],
        repr: Representation,
    ) -> Result<Poly> {
        let n = basis.n();
        if coeffs.len() != n {
            return invalid(format!("{} coefficients given, n = {n}", coeffs.len()));
        }
        // Every value is written below.
        let mut p = Poly::for_overwrite(basis, Representation::Coefficient);
        // Small values (|c| < every q_i, the usual case) need no division:
        // c, or q_i + c for c < 0, branch-free.
        let max_abs = coeffs.iter().map(|c| c.unsigned_abs()).max().unwrap_or(0);
        let small = (0..basis.len()).all(|i| max_abs < basis.modulus(i).value());
        par::limbs(&mut p.data, n, |i, limb| {
            let m = basis.modulus(i);
            if small {
                let q = m.value();
                for (o, &c) in limb.iter_mut().zip(coeffs) {
                    *o = (c as u64).wrapping_add(q & (c >> 63) as u64);
                }
            } else {
                for (o, &c) in limb.iter_mut().zip(coeffs) {
                    *o = m.reduce_i64(c);
                }
            }
        });
        p.set_representation(repr)?;
        Ok(p)
    }

    /// The basis.
    pub fn basis(&self) -> &Arc<RnsBasis> {
        &self.basis
    }

    /// The representation.
    pub fn representation(&self) -> Representation {
        self.repr
    }

    /// Ring degree n.
    pub fn n(&self) -> usize {
        self.basis.n()
    }

    /// The residues modulo q_i. Panics if i >= the number of primes (like slice indexing).
    pub fn limb(&self, i: usize) -> &[u64] {
        let n = self.n();
        &self.data[i * n..(i + 1) * n]
    }

    /// All limbs, limb-major.
    pub fn data(&self) -> &[u64] {
        &self.data
    }

    /// All limbs, mutable. Callers must keep limb i reduced modulo q_i.
    pub fn data_mut(&mut self) -> &mut [u64] {
        &mut self.data
    }

    /// An error unless the polynomial is in representation `expected`.
    pub fn expect_representation(&self, expected: Representation) -> Result<()> {
        if self.repr != expected {
            return Err(Error::RepresentationMismatch {
                expected,
                got: self.repr,
            });
        }
        Ok(())
    }

    fn check_compatible(&self, other: &Poly) -> Result<()> {
        if !same_basis(&self.basis, &other.basis) {
            return Err(Error::BasisMismatch);
        }
        other.expect_representation(self.repr)
    }

    /// Converts to NTT form in place (nothing to do if already there).
    pub fn to_ntt(&mut self) -> Result<()> {
        self.set_representation(Representation::Ntt)
    }

    /// Converts to coefficient form in place (nothing to do if already there).
    pub fn to_coefficient(&mut self) -> Result<()> {
        self.set_representation(Representation::Coefficient)
    }

    /// Converts to `repr` in place by forward / inverse NTT of every limb.
    pub fn set_representation(&mut self, repr: Representation) -> Result<()> {
        if self.repr == repr {
            return Ok(());
        }
        let basis = &self.basis;
        par::try_limbs(&mut self.data, basis.n(), |i, limb| match repr {
            Representation::Ntt => Ok(basis.plan(i).forward(limb)?),
            Representation::Coefficient => Ok(basis.plan(i).inverse(limb)?),
        })?;
        self.repr = repr;
        Ok(())
    }

    fn zip_assign<F>(&mut self, other: &Poly, f: F) -> Result<()>
    where
        F: Fn(&k::Modulus, &mut [u64], &[u64]) -> k::Result<()> + Sync + Send,
    {
        self.check_compatible(other)?;
        let (basis, n) = (&self.basis, self.basis.n());
        par::try_limbs(&mut self.data, n, |i, limb| {
            Ok(f(basis.modulus(i), limb, other.limb(i))?)
        })
    }

    /// self += other (both in the same representation).
    pub fn add_assign(&mut self, other: &Poly) -> Result<()> {
        self.zip_assign(other, k::add_assign)
    }

    /// self -= other (both in the same representation).
    pub fn sub_assign(&mut self, other: &Poly) -> Result<()> {
        self.zip_assign(other, k::sub_assign)
    }

    /// self *= other, coefficient-wise in NTT form (the ring product).
    pub fn mul_assign(&mut self, other: &Poly) -> Result<()> {
        self.expect_representation(Representation::Ntt)?;
        self.zip_assign(other, k::mul_assign)
    }

    /// self += a * b for a, b in NTT form (the ring product accumulated).
    pub fn mul_acc(&mut self, a: &Poly, b: &Poly) -> Result<()> {
        self.expect_representation(Representation::Ntt)?;
        self.check_compatible(a)?;
        self.check_compatible(b)?;
        let (basis, n) = (&self.basis, self.basis.n());
        par::try_limbs(&mut self.data, n, |i, limb| {
            Ok(k::mul_acc(basis.modulus(i), limb, a.limb(i), b.limb(i))?)
        })
    }

    /// f(self, other) limb by limb into a new polynomial (one pass, no
    /// copy of self first).
    fn zip_new<F>(&self, other: &Poly, f: F) -> Result<Poly>
    where
        F: Fn(&k::Modulus, &mut [u64], &[u64], &[u64]) -> k::Result<()> + Sync + Send,
    {
        self.check_compatible(other)?;
        let mut out = Poly::for_overwrite(&self.basis, self.repr);
        let basis = &self.basis;
        par::try_limbs(&mut out.data, basis.n(), |i, limb| {
            Ok(f(basis.modulus(i), limb, self.limb(i), other.limb(i))?)
        })?;
        Ok(out)
    }

    /// self + other.
    pub fn add(&self, other: &Poly) -> Result<Poly> {
        self.zip_new(other, k::add)
    }

    /// self - other.
    pub fn sub(&self, other: &Poly) -> Result<Poly> {
        self.zip_new(other, k::sub)
    }

    /// self * other (both in NTT form).
    pub fn mul(&self, other: &Poly) -> Result<Poly> {
        self.expect_representation(Representation::Ntt)?;
        self.zip_new(other, k::mul)
    }

    /// self = -self.
    pub fn neg_assign(&mut self) -> Result<()> {
        let (basis, n) = (&self.basis, self.basis.n());
        par::try_limbs(&mut self.data, n, |i, limb| {
            Ok(k::neg_assign(basis.modulus(i), limb)?)
        })
    }

    /// -self.
    pub fn neg(&self) -> Result<Poly> {
        let mut out = Poly::for_overwrite(&self.basis, self.repr);
        let basis = &self.basis;
        par::try_limbs(&mut out.data, basis.n(), |i, limb| {
            Ok(k::neg(basis.modulus(i), limb, self.limb(i))?)
        })?;
        Ok(out)
    }

    /// self *= c for a signed integer c (any representation): limb i is
    /// multiplied by \[c\]_{q_i}.
    pub fn mul_small_assign(&mut self, c: i64) -> Result<()> {
        let s: Vec<u64> = (0..self.basis.len())
            .map(|i| self.basis.modulus(i).reduce_i64(c))
            .collect();
        self.mul_rns_scalar_assign(&s)
    }

    /// self *= s for an RNS scalar s = (s_0, ..., s_{k-1}), s_i in [0, q_i)
    /// (any representation): limb i is multiplied by s_i.
    pub fn mul_rns_scalar_assign(&mut self, s: &[u64]) -> Result<()> {
        if s.len() != self.basis.len() {
            return invalid(format!(
                "RNS scalar has {} residues for {} primes",
                s.len(),
                self.basis.len()
            ));
        }
        let (basis, n) = (&self.basis, self.basis.n());
        par::try_limbs(&mut self.data, n, |i, limb| {
            Ok(k::mul_scalar_assign(basis.modulus(i), limb, s[i])?)
        })
    }

    /// The automorphism a(X) -> a(X^g) of R_Q for odd g (taken modulo 2n), in
    /// the polynomial's own representation.
    ///
    /// Coefficient form: a_i X^i goes to a_i X^(i g mod 2n), with X^n = -1.
    /// NTT form: since A\[j\] = a(psi^(2 brv(j)+1)), the image has
    /// A'\[j\] = A\[j'\] with 2 brv(j') + 1 = (2 brv(j) + 1) g mod 2n: a permutation
    /// of slots ([`galois_permutation`]), the same for every prime.
    pub fn automorphism(&self, g: usize) -> Result<Poly> {
        let n = self.n();
        if g.is_multiple_of(2) {
            return invalid(format!("Galois element {g} must be odd"));
        }
        // Into a buffer of the final size: the image of a secret never
        // passes through a growing (and reallocating) vector. Both kernels
        // write every value.
        let mut out = Poly::for_overwrite(&self.basis, self.repr);
        let basis = &self.basis;
        match self.repr {
            Representation::Ntt => {
                let perm = cached_galois_permutation(n, g)?;
                par::try_limbs(&mut out.data, n, |i, limb| {
                    Ok(k::automorphism_ntt(
                        basis.modulus(i),
                        limb,
                        self.limb(i),
                        &perm,
                    )?)
                })?;
            }
            Representation::Coefficient => {
                par::try_limbs(&mut out.data, n, |i, limb| {
                    Ok(k::automorphism_coeff(
                        basis.modulus(i),
                        limb,
                        self.limb(i),
                        g as u64,
                    )?)
                })?;
            }
        }
        Ok(out)
    }

    /// The same polynomial in `target`, whose primes must all be primes of
    /// this polynomial's basis (in any order): keeps the matching limbs.
    /// Used to drop primes (levels) or to pick a digit.
    pub fn restrict(&self, target: &Arc<RnsBasis>) -> Result<Poly> {
        if target.n() != self.n() {
            return Err(Error::BasisMismatch);
        }
        let own = self.basis.primes();
        let n = self.n();
        let mut out = Poly::for_overwrite(target, self.repr);
        for (q, limb) in target.primes().into_iter().zip(out.data.chunks_mut(n)) {
            let i = own
                .iter()
                .position(|&p| p == q)
                .ok_or(Error::BasisMismatch)?;
            limb.copy_from_slice(self.limb(i));
        }
        Ok(out)
    }

    /// Joins polynomials in the same representation whose bases concatenate
    /// to `target` (e.g. a part in Q and a part in P into Q || P).
    pub fn join(target: &Arc<RnsBasis>, parts: &[&Poly]) -> Result<Poly> {
        let first = parts.first().ok_or(Error::BasisMismatch)?;
        let mut primes = Vec::with_capacity(target.len());
        for p in parts {
            p.expect_representation(first.repr)?;
            primes.extend(p.basis.primes());
        }
        if primes != target.primes() || parts.iter().any(|p| p.n() != target.n()) {
            return Err(Error::BasisMismatch);
        }
        let mut out = Poly::for_overwrite(target, first.repr);
        let mut at = 0;
        for p in parts {
            out.data[at..at + p.data.len()].copy_from_slice(&p.data);
            at += p.data.len();
        }
        Ok(out)
    }
}

/// The NTT-domain slot permutation of X -> X^g (g odd) for ring degree n:
/// `perm[j] = j'` with 2 brv(j') + 1 = (2 brv(j) + 1) g mod 2n, so that the
/// image of A is A'\[j\] = A\[perm\[j\]\].
pub fn galois_permutation(n: usize, g: usize) -> Result<Vec<usize>> {
    let perm = k::GaloisPermutation::new(n, g as u64)?;
    Ok(perm.indices().iter().map(|&p| p as usize).collect())
}

/// Permutations already computed, per (n, g mod 2n): a rotation applies
/// the same one to both ciphertext components, over and over.
type PermutationCache = Mutex<HashMap<(usize, usize), Arc<k::GaloisPermutation>>>;

/// The kernels' [`k::GaloisPermutation`], computed once per (n, g mod 2n).
pub(crate) fn cached_galois_permutation(n: usize, g: usize) -> Result<Arc<k::GaloisPermutation>> {
    static CACHE: OnceLock<PermutationCache> = OnceLock::new();
    let key = (n, g % (2 * n));
    let cache = CACHE.get_or_init(Default::default);
    // A panic elsewhere cannot leave the map half-updated: ignore poisoning.
    let lock = || cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = lock().get(&key) {
        return Ok(p.clone());
    }
    let perm = Arc::new(k::GaloisPermutation::new(n, key.1 as u64)?);
    lock().insert(key, perm.clone());
    Ok(perm)
}
/// The rotation steps +-1, +-2, +-4, ... below `row` (the slots of a row,
/// a power of two), whose keys compose into any rotation of the row.
pub fn power_of_two_steps(row: usize) -> Vec<i64> {
    (0..row.trailing_zeros())
        .flat_map(|b| [1i64 << b, -(1i64 << b)])
        .collect()
}

/// The Galois element of a slot rotation by `step` for ring degree n:
/// 5^step mod 2n ([`galois_power`]). Rotating the other row (BFV) or
/// conjugating (CKKS) is 2n - 1.
pub fn galois_element(n: usize, step: i64) -> Result<usize> {
    galois_power(n, 5, step)
}

/// generator^step mod 2n for ring degree n, the step taken modulo n/2 (the
/// order of 3 and of 5 modulo 2n, so negative steps rotate the other way):
/// CKKS's slots rotate with 5, BFV's rows with 3.
pub fn galois_power(n: usize, generator: u64, step: i64) -> Result<usize> {
    if !n.is_power_of_two() || n < 4 {
        return invalid(format!("ring degree {n} is not a power of two >= 4"));
    }
    // 128-bit products: 2n may exceed 2^32 on 64-bit targets.
    let two_n = 2 * n as u128;
    let order = (n / 2) as u128;
    let mut e = (step as i128).rem_euclid(order as i128) as u128;
    let (mut g, mut base) = (1u128, generator as u128 % two_n);
    while e != 0 {
        if e & 1 == 1 {
            g = g * base % two_n;
        }
        base = base * base % two_n;
        e >>= 1;
    }
    Ok(g as usize)
}
