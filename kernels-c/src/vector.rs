//! Element-wise modular arithmetic on slices of residues in [0, q).
//!
//! Each function runs the kernel of the modulus' backend. Inputs must be
//! reduced to [0, q): then outputs are too. Unreduced inputs are not
//! checked (a pass over the data would cost as much as `add` itself) and
//! give unspecified values, possibly >= q, never memory errors. Slices of
//! different lengths are an error.

use crate::error::{Error, Result};
use crate::modulus::Modulus;

fn same_len(expected: usize, got: usize) -> Result<()> {
    if expected != got {
        return Err(Error::LengthMismatch { expected, got });
    }
    Ok(())
}

fn scalar_companion(m: &Modulus, s: u64) -> Result<u64> {
    if s >= m.value() {
        return Err(Error::ScalarOutOfRange {
            value: s,
            q: m.value(),
        });
    }
    Ok(m.shoup(s))
}

macro_rules! binary_op {
    ($name:ident, $assign:ident, $kernel:ident, $doc:literal) => {
        #[doc = concat!("out\\[i\\] = ", $doc, " mod q.")]
        pub fn $name(m: &Modulus, out: &mut [u64], a: &[u64], b: &[u64]) -> Result<()> {
            same_len(out.len(), a.len())?;
            same_len(out.len(), b.len())?;
            // SAFETY: all three slices hold out.len() elements; out is a
            // distinct mutable borrow, so it cannot overlap a or b.
            unsafe {
                (m.kernels().$kernel)(out.as_mut_ptr(), a.as_ptr(), b.as_ptr(), out.len(), m.raw())
            };
            Ok(())
        }

        #[doc = concat!("a\\[i\\] = ", $doc, " mod q, in place.")]
        pub fn $assign(m: &Modulus, a: &mut [u64], b: &[u64]) -> Result<()> {
            same_len(a.len(), b.len())?;
            let ptr = a.as_mut_ptr();
            // SAFETY: the ABI allows out to alias an input exactly; both
            // slices hold a.len() elements.
            unsafe { (m.kernels().$kernel)(ptr, ptr, b.as_ptr(), a.len(), m.raw()) };
            Ok(())
        }
    };
}

binary_op!(add, add_assign, add, "a\\[i\\] + b\\[i\\]");
binary_op!(sub, sub_assign, sub, "a\\[i\\] - b\\[i\\]");
binary_op!(mul, mul_assign, mul, "a\\[i\\] * b\\[i\\]");

/// out\[i\] = -a\[i\] mod q.
pub fn neg(m: &Modulus, out: &mut [u64], a: &[u64]) -> Result<()> {
    same_len(out.len(), a.len())?;
    // SAFETY: both slices hold out.len() elements and do not overlap.
    unsafe { (m.kernels().neg)(out.as_mut_ptr(), a.as_ptr(), out.len(), m.raw()) };
    Ok(())
}

/// a\[i\] = -a\[i\] mod q, in place.
pub fn neg_assign(m: &Modulus, a: &mut [u64]) -> Result<()> {
    let ptr = a.as_mut_ptr();
    // SAFETY: exact aliasing is allowed by the ABI; a holds a.len() elements.
    unsafe { (m.kernels().neg)(ptr, ptr, a.len(), m.raw()) };
    Ok(())
}

/// out\[i\] = a\[i\] * s mod q for a scalar s in [0, q).
pub fn mul_scalar(m: &Modulus, out: &mut [u64], a: &[u64], s: u64) -> Result<()> {
    same_len(out.len(), a.len())?;
    let s_shoup = scalar_companion(m, s)?;
    // SAFETY: both slices hold out.len() elements and do not overlap.
    unsafe {
        (m.kernels().mul_scalar)(out.as_mut_ptr(), a.as_ptr(), s, s_shoup, out.len(), m.raw())
    };
    Ok(())
}

/// a\[i\] = a\[i\] * s mod q for a scalar s in [0, q), in place.
pub fn mul_scalar_assign(m: &Modulus, a: &mut [u64], s: u64) -> Result<()> {
    let s_shoup = scalar_companion(m, s)?;
    let ptr = a.as_mut_ptr();
    // SAFETY: exact aliasing is allowed by the ABI; a holds a.len() elements.
    unsafe { (m.kernels().mul_scalar)(ptr, ptr, s, s_shoup, a.len(), m.raw()) };
    Ok(())
}

/// acc\[i\] = acc\[i\] + a\[i\] * b\[i\] mod q (fused multiply-accumulate).
pub fn mul_acc(m: &Modulus, acc: &mut [u64], a: &[u64], b: &[u64]) -> Result<()> {
    same_len(acc.len(), a.len())?;
    same_len(acc.len(), b.len())?;
    // SAFETY: all three slices hold acc.len() elements; acc is a distinct
    // mutable borrow.
    unsafe { (m.kernels().mul_acc)(acc.as_mut_ptr(), a.as_ptr(), b.as_ptr(), acc.len(), m.raw()) };
    Ok(())
}

/// a\[i\] = (a\[i\] - b\[i\]) * s (+ c\[i\] when `c` is given) mod q, in
/// place, for a scalar s in [0, q): the finish of a division by rounding
/// (ModDown, rescale) in one pass, with an addend folded in.
pub fn sub_mul_scalar_add_assign(
    m: &Modulus,
    a: &mut [u64],
    b: &[u64],
    s: u64,
    c: Option<&[u64]>,
) -> Result<()> {
    same_len(a.len(), b.len())?;
    if let Some(c) = c {
        same_len(a.len(), c.len())?;
    }
    let s_shoup = scalar_companion(m, s)?;
    let ptr = a.as_mut_ptr();
    let c = c.map_or(std::ptr::null(), <[u64]>::as_ptr);
    // SAFETY: the ABI allows out to alias a exactly; b and c (or NULL) hold
    // a.len() elements and cannot overlap a (a distinct mutable borrow).
    unsafe {
        (m.kernels().sub_mul_scalar_add)(ptr, ptr, b.as_ptr(), c, s, s_shoup, a.len(), m.raw())
    };
    Ok(())
}
