mod common;

use common::*;
use num_bigint::BigInt;
use triskel_ring::sampling::{sample_gaussian, sample_uniform};
use triskel_ring::{
    galois_element, galois_permutation, Error, Poly, Prng, Representation, RnsBasis,
};

const N: usize = 1024;

#[test]
fn small_polynomials_are_crt_consistent() {
    let basis = RnsBasis::generate(N, 50, 3).unwrap();
    let mut rng = Prng::from_seed([1; 32]);
    let e = sample_gaussian(N, 3.2, 19, &mut rng).unwrap();
    let p = Poly::from_signed(&basis, &e, Representation::Ntt).unwrap();
    assert_eq!(reconstruct_centered(&p), big(&e));
}

#[test]
fn arithmetic_matches_big_integer_reference() {
    let basis = RnsBasis::generate(N, 55, 3).unwrap();
    let mut rng = Prng::from_seed([2; 32]);
    let a = sample_uniform(&basis, Representation::Coefficient, &mut rng);
    let b = sample_uniform(&basis, Representation::Coefficient, &mut rng);
    let q = BigInt::from(product(&basis));
    let (ab, bb) = (reconstruct_centered(&a), reconstruct_centered(&b));
    let modq =
        |v: Vec<BigInt>| -> Vec<BigInt> { v.into_iter().map(|x| ((x % &q) + &q) % &q).collect() };
    let expect = |v: Vec<BigInt>| modq(v);
    let got = |p: &Poly| modq(reconstruct(p).into_iter().map(BigInt::from).collect());

    let sum = a.add(&b).unwrap();
    assert_eq!(
        got(&sum),
        expect(ab.iter().zip(&bb).map(|(x, y)| x + y).collect())
    );
    let diff = a.sub(&b).unwrap();
    assert_eq!(
        got(&diff),
        expect(ab.iter().zip(&bb).map(|(x, y)| x - y).collect())
    );
    let neg = a.neg().unwrap();
    assert_eq!(got(&neg), expect(ab.iter().map(|x| -x).collect()));
    let mut small = a.clone();
    small.mul_small_assign(-7).unwrap();
    assert_eq!(got(&small), expect(ab.iter().map(|x| x * -7).collect()));

    // Product with a small polynomial (keeps the schoolbook reference cheap).
    let s: Vec<i64> = (0..N as i64).map(|i| (i * 7 % 5) - 2).collect();
    let sp = Poly::from_signed(&basis, &s, Representation::Ntt).unwrap();
    let mut an = a.clone();
    an.to_ntt().unwrap();
    let prod = an.mul(&sp).unwrap();
    assert_eq!(got(&prod), expect(negacyclic(&big(&s), &ab)));
    let mut acc = prod.clone();
    acc.mul_acc(&an, &sp).unwrap();
    assert_eq!(
        got(&acc),
        expect(
            negacyclic(&big(&s), &ab)
                .into_iter()
                .map(|x| x * 2)
                .collect()
        )
    );
}

#[test]
fn mismatches_are_errors() {
    let basis = RnsBasis::generate(N, 50, 2).unwrap();
    let other = RnsBasis::generate(N, 45, 2).unwrap();
    let a = Poly::zero(&basis, Representation::Coefficient);
    let b = Poly::zero(&basis, Representation::Ntt);
    let c = Poly::zero(&other, Representation::Coefficient);
    assert!(matches!(
        a.add(&b),
        Err(Error::RepresentationMismatch { .. })
    ));
    assert_eq!(a.add(&c), Err(Error::BasisMismatch));
    assert!(matches!(
        a.mul(&a),
        Err(Error::RepresentationMismatch { .. })
    ));
    assert!(a.automorphism(4).is_err());
    assert!(Poly::from_limbs(&basis, Representation::Ntt, vec![0; 3]).is_err());
    let q0 = basis.primes()[0];
    let mut bad = vec![0; 2 * N];
    bad[5] = q0;
    assert!(Poly::from_limbs(&basis, Representation::Ntt, bad).is_err());
    assert!(RnsBasis::new(N, &[basis.primes()[0], basis.primes()[0]]).is_err());
    assert!(RnsBasis::new(N, &[97]).is_err());
    assert!(basis.digits(3).is_err());
}

#[test]
fn automorphism_forms_agree_with_reference() {
    let basis = RnsBasis::generate(N, 50, 2).unwrap();
    let mut rng = Prng::from_seed([3; 32]);
    let a = sample_uniform(&basis, Representation::Coefficient, &mut rng);
    let ab = reconstruct_centered(&a);
    let q = BigInt::from(product(&basis));
    for g in [3usize, 5, 2 * N - 1, 25, 2 * N + 3] {
        // Reference: a_i X^(i g) with X^N = -1.
        let mut expect = vec![BigInt::from(0); N];
        for (i, c) in ab.iter().enumerate() {
            let t = (i * g) % (2 * N);
            if t < N {
                expect[t] = ((c % &q) + &q) % &q;
            } else {
                expect[t - N] = ((-c % &q) + &q) % &q;
            }
        }
        let coef = a.automorphism(g).unwrap();
        let got: Vec<BigInt> = reconstruct(&coef).into_iter().map(BigInt::from).collect();
        assert_eq!(got, expect, "g = {g}");
        let mut an = a.clone();
        an.to_ntt().unwrap();
        let mut via_ntt = an.automorphism(g).unwrap();
        via_ntt.to_coefficient().unwrap();
        assert_eq!(via_ntt, coef, "g = {g}");
    }
    let perm = galois_permutation(N, 5).unwrap();
    let mut seen = vec![false; N];
    perm.iter().for_each(|&p| seen[p] = true);
    assert!(seen.iter().all(|&s| s));
}

#[test]
fn sub_bases_and_restriction() {
    let basis = RnsBasis::generate(N, 50, 5).unwrap();
    let digits = basis.digits(2).unwrap();
    assert_eq!(
        digits.iter().map(|d| d.len()).collect::<Vec<_>>(),
        vec![3, 2]
    );
    let joined = digits[0].concat(&digits[1]).unwrap();
    assert_eq!(*joined, *basis);
    let mut rng = Prng::from_seed([4; 32]);
    let a = sample_uniform(&basis, Representation::Ntt, &mut rng);
    let parts: Vec<Poly> = digits.iter().map(|d| a.restrict(d).unwrap()).collect();
    let back = Poly::join(&joined, &[&parts[0], &parts[1]]).unwrap();
    assert_eq!(back.data(), a.data());
    let lower = basis.drop_last().unwrap();
    assert_eq!(a.restrict(&lower).unwrap().limb(3), a.limb(3));
    assert_eq!(lower.len(), 4);
}

#[test]
fn galois_elements() {
    assert_eq!(galois_element(N, 0).unwrap(), 1);
    assert_eq!(galois_element(N, 1).unwrap(), 5);
    assert_eq!(galois_element(N, 2).unwrap(), 25);
    // g(-1) * 5 = 1 mod 2N.
    let inv = galois_element(N, -1).unwrap();
    assert_eq!(inv * 5 % (2 * N), 1);
    assert_eq!(galois_element(N, N as i64 / 2).unwrap(), 1);
    assert!(galois_element(1000, 1).is_err());
}

#[test]
fn galois_elements_of_huge_rings_do_not_overflow() {
    // 2n above 2^32: products of two residues no longer fit in 64 bits.
    let n = 1usize << 40;
    for step in [1i64, 12_345_678_901, -987_654_321, i64::MIN] {
        let g = galois_element(n, step).unwrap() as u128;
        let inv = galois_element(n, step.wrapping_neg()).unwrap() as u128;
        assert_eq!(g % 2, 1);
        if step != i64::MIN {
            assert_eq!(g * inv % (2 * n as u128), 1, "step {step}");
        }
    }
}

#[test]
fn bases_are_capped_and_levels_derive_their_constants() {
    let n = 1024;
    let primes = triskel_kernels::ntt_primes(40, n, triskel_ring::MAX_PRIMES + 1).unwrap();
    assert!(RnsBasis::new(n, &primes).is_err());
    let top = RnsBasis::new(n, &primes[..20]).unwrap();
    let levels = top.prefixes().unwrap();
    assert_eq!(levels.len(), 20);
    for (l, basis) in levels.iter().enumerate() {
        let fresh = RnsBasis::new(n, &primes[..=l]).unwrap();
        assert_eq!(**basis, *fresh);
        for i in 0..=l {
            assert_eq!(basis.qhat_inv(i), fresh.qhat_inv(i), "level {l}, prime {i}");
        }
    }
}
