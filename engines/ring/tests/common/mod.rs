//! Slow, obviously-correct references: big-integer CRT, schoolbook products.
#![allow(dead_code)]

use num_bigint::{BigInt, BigUint};
use num_traits::{One, Signed, Zero};
use triskel_ring::{Poly, Representation, RnsBasis};

/// Q, the product of the basis primes.
pub fn product(basis: &RnsBasis) -> BigUint {
    basis
        .primes()
        .iter()
        .fold(BigUint::one(), |a, &q| a * BigUint::from(q))
}

/// The coefficients of p (any representation) as integers in [0, Q), by CRT.
pub fn reconstruct(p: &Poly) -> Vec<BigUint> {
    let mut p = p.clone();
    p.to_coefficient().unwrap();
    let basis = p.basis().clone();
    let q = product(&basis);
    let primes = basis.primes();
    let weights: Vec<BigUint> = primes
        .iter()
        .map(|&qi| {
            let qi_big = BigUint::from(qi);
            let qhat = &q / &qi_big;
            let inv = (&qhat % &qi_big).modpow(&BigUint::from(qi - 2), &qi_big);
            qhat * inv
        })
        .collect();
    (0..basis.n())
        .map(|c| {
            let s = (0..primes.len()).fold(BigUint::zero(), |a, i| {
                a + &weights[i] * BigUint::from(p.limb(i)[c])
            });
            s % &q
        })
        .collect()
}

/// Centered representatives in [-Q/2, Q/2).
pub fn reconstruct_centered(p: &Poly) -> Vec<BigInt> {
    let q = BigInt::from(product(p.basis()));
    let half = &q / 2;
    reconstruct(p)
        .into_iter()
        .map(|x| {
            let x = BigInt::from(x);
            if x >= half {
                x - &q
            } else {
                x
            }
        })
        .collect()
}

/// The polynomial with the given integer coefficients (reduced mod each prime).
pub fn from_big(basis: &std::sync::Arc<RnsBasis>, coeffs: &[BigInt], repr: Representation) -> Poly {
    let n = basis.n();
    let mut data = Vec::with_capacity(basis.len() * n);
    for q in basis.primes() {
        let qb = BigInt::from(q);
        for c in coeffs {
            let r = ((c % &qb) + &qb) % &qb;
            data.push(u64::try_from(r).unwrap());
        }
    }
    let mut p = Poly::from_limbs(basis, Representation::Coefficient, data).unwrap();
    p.set_representation(repr).unwrap();
    p
}

/// Schoolbook negacyclic product of integer polynomials.
pub fn negacyclic(a: &[BigInt], b: &[BigInt]) -> Vec<BigInt> {
    let n = a.len();
    let mut out = vec![BigInt::zero(); n];
    for i in 0..n {
        if a[i].is_zero() {
            continue;
        }
        for j in 0..n {
            let t = &a[i] * &b[j];
            if i + j < n {
                out[i + j] += t;
            } else {
                out[i + j - n] -= t;
            }
        }
    }
    out
}

/// max |c|.
pub fn inf_norm(v: &[BigInt]) -> BigInt {
    v.iter().map(|c| c.abs()).max().unwrap_or_default()
}

/// Integer vector to BigInt.
pub fn big(v: &[i64]) -> Vec<BigInt> {
    v.iter().map(|&c| BigInt::from(c)).collect()
}
