//! The key-switching hot loops: the lazy dot product over digits, RNS base
//! conversion with the exact (HPS) correction, and the automorphisms
//! X -> X^g in coefficient and NTT form.

use crate::bindings as ffi;
use crate::error::{Error, Result};
use crate::modulus::Modulus;

/// Most terms of one [`dot`] or [`BaseConversion`].
pub const MAX_TERMS: usize = ffi::TRISKEL_MAX_TERMS as usize;

fn invalid<T>(what: impl Into<String>) -> Result<T> {
    Err(Error::InvalidArgument(what.into()))
}

/// Pointers to the starts of `slices`, each of which must hold `len` values.
fn pointers(slices: &[&[u64]], len: usize) -> Result<Vec<*const u64>> {
    if slices.is_empty() || slices.len() > MAX_TERMS {
        return invalid(format!(
            "{} terms given, 1 to {MAX_TERMS} allowed",
            slices.len()
        ));
    }
    slices
        .iter()
        .map(|s| {
            if s.len() != len {
                return Err(Error::LengthMismatch {
                    expected: len,
                    got: s.len(),
                });
            }
            Ok(s.as_ptr())
        })
        .collect()
}

/// out\[i\] = sum_j a_j\[i\] * b_j\[i\] mod q, summed unreduced and reduced once
/// (per 16 terms): the key-switching inner product over digits. 1 to
/// [`MAX_TERMS`] pairs, every slice as long as `out`.
pub fn dot(m: &Modulus, out: &mut [u64], a: &[&[u64]], b: &[&[u64]]) -> Result<()> {
    if a.len() != b.len() {
        return Err(Error::LengthMismatch {
            expected: a.len(),
            got: b.len(),
        });
    }
    let (pa, pb) = (pointers(a, out.len())?, pointers(b, out.len())?);
    // SAFETY: every pointer addresses out.len() readable values (checked
    // above); out is a distinct mutable borrow of out.len() values; the
    // count is within 1..=MAX_TERMS.
    unsafe {
        (m.kernels().dot)(
            out.as_mut_ptr(),
            pa.as_ptr(),
            pb.as_ptr(),
            pa.len(),
            out.len(),
            m.raw(),
        )
    };
    Ok(())
}

/// The constants of an RNS base conversion from Q = q_0 ... q_{k-1} to one
/// prime p: with y_i = [x_i * (Q/q_i)^-1]_{q_i},
/// s = sum_i y_i * (Q/q_i) = x + v Q for x in [0, Q) and 0 <= v < k.
/// [`convert`](Self::convert) returns \[s\]_p (fast) or \[s - v' Q\]_p with v'
/// estimated in floating point (exact, Halevi-Polyakov-Shoup): the residue
/// of x's centered representative, except within k 2^-52 Q of +-Q/2; for
/// k = 1, v' = [y_0 > q_0 / 2] is exact.
#[derive(Clone, Debug)]
pub struct BaseConversion {
    target: Modulus,
    src_q: Vec<u64>,
    inv_q: Vec<f64>,
    qhat_mod_p: Vec<u64>,
    vq_mod_p: Vec<u64>,
}

impl BaseConversion {
    /// The conversion from the distinct primes `src` (1 to [`MAX_TERMS`],
    /// each in [2, 2^62); primality is the caller's to ensure, as bases are
    /// built from checked [`Modulus`] values) to `target` (which may be one
    /// of them).
    pub fn new(src: &[u64], target: &Modulus) -> Result<BaseConversion> {
        if src.is_empty() || src.len() > MAX_TERMS {
            return invalid(format!(
                "{} source primes, 1 to {MAX_TERMS} allowed",
                src.len()
            ));
        }
        for (i, &q) in src.iter().enumerate() {
            if q < 2 || q >> crate::MAX_MODULUS_BITS != 0 {
                return Err(Error::ModulusOutOfRange {
                    q,
                    max_bits: crate::MAX_MODULUS_BITS,
                });
            }
            if src[..i].contains(&q) {
                return invalid(format!("source prime {q} appears twice"));
            }
        }
        let qhat_mod_p = (0..src.len())
            .map(|i| {
                src.iter()
                    .enumerate()
                    .filter(|&(l, _)| l != i)
                    .fold(1 % target.value(), |a, (_, &q)| target.mul_mod(a, q))
            })
            .collect();
        let q_mod_p = src
            .iter()
            .fold(1 % target.value(), |a, &q| target.mul_mod(a, q));
        Ok(BaseConversion {
            target: target.clone(),
            src_q: src.to_vec(),
            inv_q: src.iter().map(|&q| 1.0 / q as f64).collect(),
            qhat_mod_p,
            vq_mod_p: (0..=src.len() as u64)
                .map(|v| target.mul_mod(v, q_mod_p))
                .collect(),
        })
    }

    /// The target prime p.
    pub fn target(&self) -> &Modulus {
        &self.target
    }

    /// The source primes.
    pub fn source(&self) -> &[u64] {
        &self.src_q
    }

    /// out = [sum_i y_i (Q/q_i) - v Q]_p, v = 0 unless `exact` (see the type).
    /// One slice y_i per source prime, reduced modulo q_i (unreduced values
    /// give unspecified results, never memory errors), each as long as `out`.
    pub fn convert(&self, out: &mut [u64], y: &[&[u64]], exact: bool) -> Result<()> {
        if y.len() != self.src_q.len() {
            return Err(Error::LengthMismatch {
                expected: self.src_q.len(),
                got: y.len(),
            });
        }
        let py = pointers(y, out.len())?;
        let table = ffi::triskel_convert_table {
            count: py.len() as u64,
            src_q: self.src_q.as_ptr(),
            inv_q: self.inv_q.as_ptr(),
            qhat_mod_p: self.qhat_mod_p.as_ptr(),
            vq_mod_p: if exact {
                self.vq_mod_p.as_ptr()
            } else {
                std::ptr::null()
            },
        };
        // SAFETY: the table's arrays hold count (vq: count + 1) entries and
        // outlive the call; every y pointer addresses out.len() values; out is
        // a distinct mutable borrow, so it overlaps no input.
        unsafe {
            (self.target.kernels().base_convert)(
                out.as_mut_ptr(),
                py.as_ptr(),
                out.len(),
                &table,
                self.target.raw(),
            )
        };
        Ok(())
    }
}

fn check_ring_size(n: usize) -> Result<()> {
    if !n.is_power_of_two() || !(2..=1 << 31).contains(&n) {
        return invalid(format!("{n} is not a power of two in 2..=2^31"));
    }
    Ok(())
}

fn check_galois(g: u64) -> Result<()> {
    if g.is_multiple_of(2) {
        return invalid(format!("Galois element {g} must be odd"));
    }
    Ok(())
}

/// The NTT-domain slot permutation of X -> X^g (g odd) for size n: the image
/// of A (bit-reversed evaluations, the kernels' NTT order) is A'\[j\] = A\[perm\[j\]\].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GaloisPermutation {
    g: u64,
    perm: Vec<u32>,
}

impl GaloisPermutation {
    /// The permutation for size n (a power of two, 2..=2^31) and odd g
    /// (taken modulo 2n).
    pub fn new(n: usize, g: u64) -> Result<GaloisPermutation> {
        check_ring_size(n)?;
        check_galois(g)?;
        let g = g % (2 * n as u64);
        let mut perm = vec![0u32; n];
        // SAFETY: perm holds n writable entries; n and g were checked.
        let status = unsafe { ffi::triskel_galois_permutation(perm.as_mut_ptr(), n as u64, g) };
        debug_assert_eq!(status, 0);
        Ok(GaloisPermutation { g, perm })
    }

    /// g modulo 2n.
    pub fn element(&self) -> u64 {
        self.g
    }

    /// Size n.
    pub fn len(&self) -> usize {
        self.perm.len()
    }

    /// Never true (n >= 2).
    pub fn is_empty(&self) -> bool {
        self.perm.is_empty()
    }

    /// The indices: perm\[j\] is the source slot of slot j.
    pub fn indices(&self) -> &[u32] {
        &self.perm
    }
}

/// out = a(X^g) for a in coefficient form modulo q (n = a.len() a power of
/// two, g odd): a_j X^j goes to a_j X^(j g mod 2n), with X^n = -1.
pub fn automorphism_coeff(m: &Modulus, out: &mut [u64], a: &[u64], g: u64) -> Result<()> {
    check_ring_size(a.len())?;
    check_galois(g)?;
    if out.len() != a.len() {
        return Err(Error::LengthMismatch {
            expected: a.len(),
            got: out.len(),
        });
    }
    // SAFETY: out and a hold n values (a power of two, so every index
    // j g mod 2n folded below n is in range) and do not overlap.
    unsafe { (m.kernels().automorphism_coeff)(out.as_mut_ptr(), a.as_ptr(), g, a.len(), m.raw()) };
    Ok(())
}

/// out\[j\] = a\[perm\[j\]\]: a(X^g) for a in NTT form (any modulus; the
/// permutation is the same for every prime). `m` picks the backend.
pub fn automorphism_ntt(
    m: &Modulus,
    out: &mut [u64],
    a: &[u64],
    perm: &GaloisPermutation,
) -> Result<()> {
    for len in [a.len(), out.len()] {
        if len != perm.len() {
            return Err(Error::LengthMismatch {
                expected: perm.len(),
                got: len,
            });
        }
    }
    // SAFETY: out and a hold n values and do not overlap; perm is a
    // permutation of 0..n built by triskel_galois_permutation, so every
    // index is in range.
    unsafe {
        (m.kernels().automorphism_ntt)(out.as_mut_ptr(), a.as_ptr(), perm.perm.as_ptr(), a.len())
    };
    Ok(())
}
