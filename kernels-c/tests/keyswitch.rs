//! The key-switching kernels against slow, obviously-correct references on
//! every backend this machine can run: u128 sums for the dot product,
//! big-integer CRT for base conversion, the definition of X -> X^g for the
//! automorphisms.

use num_bigint::BigInt;
mod common;

use common::moduli;
use proptest::prelude::*;
use triskel_kernels::*;

fn residues(q: u64, n: usize) -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(prop_oneof![3 => 0..q, 1 => Just(0u64), 1 => Just(q - 1)], n)
}

/// A prime of `bits` bits (NTT-friendly up to n = 4096) picked by `pick`.
fn prime(bits: u32, pick: usize) -> u64 {
    ntt_primes(bits, 4096, 8).unwrap()[pick % 8]
}

/// The integer of residues `x` (one per prime) in [0, Q), by CRT.
fn crt(x: &[u64], primes: &[u64]) -> (BigInt, BigInt) {
    let q: BigInt = primes.iter().map(|&p| BigInt::from(p)).product();
    let mut sum = BigInt::from(0);
    for (&xi, &qi) in x.iter().zip(primes) {
        let qi_big = BigInt::from(qi);
        let qhat = &q / &qi_big;
        let inv = (&qhat % &qi_big).modpow(&BigInt::from(qi - 2), &qi_big);
        sum += BigInt::from(xi) * inv % &qi_big * qhat;
    }
    (sum % &q, q)
}

fn mod_u64(x: &BigInt, p: u64) -> u64 {
    let p = BigInt::from(p);
    let r = ((x % &p) + &p) % &p;
    r.try_into().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn dot_equals_u128_sum(
        (q, count, len, data) in (20u32..=62, 0usize..8, 1usize..=24, 1usize..70)
            .prop_map(|(bits, pick, count, len)| (prime(bits.min(61), pick), count, len))
            .prop_flat_map(|(q, count, len)| {
                (Just(q), Just(count), Just(len), residues(q, 2 * count * len))
            })
    ) {
        let expected: Vec<u64> = (0..len)
            .map(|i| {
                (0..count).fold(0u128, |acc, j| {
                    let (a, b) = (data[j * len + i] as u128, data[(count + j) * len + i] as u128);
                    (acc + a * b % q as u128) % q as u128
                }) as u64
            })
            .collect();
        let a: Vec<&[u64]> = data[..count * len].chunks(len).collect();
        let b: Vec<&[u64]> = data[count * len..].chunks(len).collect();
        for m in moduli(q) {
            let mut out = vec![0; len];
            dot(&m, &mut out, &a, &b).unwrap();
            prop_assert_eq!(&out, &expected, "backend {:?}", m.backend());
        }
    }

    #[test]
    fn base_conversion_equals_big_integer_crt(
        src_bits in prop::collection::vec(20u32..=61, 1..6),
        p_bits in 20u32..=61,
        seeds in prop::collection::vec(any::<u64>(), 64 * 6),
    ) {
        // Distinct source primes, and a target prime outside them.
        let src: Vec<u64> = src_bits.iter().enumerate().map(|(i, &b)| prime(b, i)).collect();
        let mut src_dedup = src.clone();
        src_dedup.dedup();
        prop_assume!(src_dedup.len() == src.len() && !src.contains(&prime(p_bits, 7)));
        let p = prime(p_bits, 7);
        let len = 64;
        // x_i residues of random integers, y_i = [x_i (Q/q_i)^-1]_{q_i}.
        let x: Vec<Vec<u64>> = src
            .iter()
            .enumerate()
            .map(|(i, &q)| (0..len).map(|c| seeds[i * len + c] % q).collect())
            .collect();
        let y: Vec<Vec<u64>> = src
            .iter()
            .enumerate()
            .map(|(i, &q)| {
                let m = Modulus::with_backend(q, Backend::Portable).unwrap();
                let qhat = src.iter().filter(|&&o| o != q).fold(1, |a, &o| m.mul_mod(a, o));
                let inv = m.inv_mod(qhat).unwrap();
                x[i].iter().map(|&v| m.mul_mod(v, inv)).collect()
            })
            .collect();
        let ys: Vec<&[u64]> = y.iter().map(|v| &v[..]).collect();
        for m in moduli(p) {
            let conv = BaseConversion::new(&src, &m).unwrap();
            let (mut fast, mut exact) = (vec![0; len], vec![0; len]);
            conv.convert(&mut fast, &ys, false).unwrap();
            conv.convert(&mut exact, &ys, true).unwrap();
            for c in 0..len {
                let xc: Vec<u64> = x.iter().map(|l| l[c]).collect();
                let (value, q) = crt(&xc, &src);
                // Fast: x + v Q for some 0 <= v < k.
                let overflow = (0..src.len() as u64)
                    .any(|v| mod_u64(&(&value + &q * v), p) == fast[c]);
                prop_assert!(overflow, "fast conversion is not x + vQ ({:?})", m.backend());
                // Exact: the centered representative (random x is far from +-Q/2).
                let centered = if &value * 2 >= q { &value - &q } else { value.clone() };
                prop_assert_eq!(exact[c], mod_u64(&centered, p), "backend {:?}", m.backend());
            }
        }
    }

    #[test]
    fn automorphisms_follow_the_definition(
        (q, log_n, g, a) in (20u32..=61, 10u32..=11, any::<u64>())
            .prop_map(|(bits, log_n, g)| (prime(bits, 0), log_n, g | 1))
            .prop_flat_map(|(q, log_n, g)| (Just(q), Just(log_n), Just(g), residues(q, 1 << log_n)))
    ) {
        let n = 1usize << log_n;
        let mut expected = vec![0u64; n];
        for (j, &v) in a.iter().enumerate() {
            let e = (j as u128 * g as u128 % (2 * n as u128)) as usize;
            if e < n { expected[e] = v } else { expected[e - n] = (q - v) % q }
        }
        let perm = GaloisPermutation::new(n, g).unwrap();
        for m in moduli(q) {
            let mut out = vec![0; n];
            automorphism_coeff(&m, &mut out, &a, g).unwrap();
            prop_assert_eq!(&out, &expected, "backend {:?}", m.backend());
            // In NTT form: forward(a(X^g)) = the slot permutation of forward(a).
            let plan = NttPlan::new(n, &m).unwrap();
            let mut a_ntt = a.clone();
            plan.forward(&mut a_ntt).unwrap();
            plan.forward(&mut out).unwrap();
            let mut permuted = vec![0; n];
            automorphism_ntt(&m, &mut permuted, &a_ntt, &perm).unwrap();
            prop_assert_eq!(&permuted, &out, "backend {:?}", m.backend());
        }
    }
}

/// The exact conversion from one prime is the exact centered lift, right at
/// the boundary q/2 too (where a floating-point estimate could misround).
#[test]
fn single_prime_exact_lift_is_exact_at_half() {
    let q = prime(61, 0);
    let p = Modulus::new(prime(40, 0)).unwrap();
    let conv = BaseConversion::new(&[q], &p).unwrap();
    let y = [0, 1, q / 2 - 1, q / 2, q / 2 + 1, q - 1];
    let mut out = [0; 6];
    conv.convert(&mut out, &[&y], true).unwrap();
    let lift = |x: u64| {
        if x > q / 2 {
            x as i128 - q as i128
        } else {
            x as i128
        }
    };
    let expected: Vec<u64> = y
        .iter()
        .map(|&x| lift(x).rem_euclid(p.value() as i128) as u64)
        .collect();
    assert_eq!(out.to_vec(), expected);
    // Large multiples of a small target prime (where a one-word Barrett
    // quotient estimate falls one short), on every backend.
    let small = prime(20, 0);
    let y: Vec<u64> = (1..64).map(|k| q / small / k * small).collect();
    for m in moduli(small) {
        let conv = BaseConversion::new(&[q], &m).unwrap();
        let mut out = vec![0; y.len()];
        conv.convert(&mut out, &[&y], true).unwrap();
        let expected: Vec<u64> = y
            .iter()
            .map(|&x| lift(x).rem_euclid(small as i128) as u64)
            .collect();
        assert_eq!(out, expected, "backend {:?}", m.backend());
    }
}

#[test]
fn bad_arguments_are_errors() {
    let m = Modulus::new(prime(50, 0)).unwrap();
    let v = vec![1u64; 8];
    let mut out = vec![0u64; 8];
    assert!(dot(&m, &mut out, &[], &[]).is_err());
    assert!(dot(&m, &mut out, &[&v], &[&v, &v]).is_err());
    assert!(dot(&m, &mut out, &[&v[..7]], &[&v]).is_err());
    let many: Vec<&[u64]> = vec![&v; MAX_TERMS + 1];
    assert!(dot(&m, &mut out, &many, &many).is_err());
    assert!(BaseConversion::new(&[], &m).is_err());
    assert!(BaseConversion::new(&[1], &m).is_err());
    assert!(BaseConversion::new(&[1 << 62], &m).is_err());
    let q = prime(40, 0);
    assert!(BaseConversion::new(&[q, q], &m).is_err());
    let conv = BaseConversion::new(&[q], &m).unwrap();
    assert!(conv.convert(&mut out, &[&v, &v], true).is_err());
    assert!(conv.convert(&mut out, &[&v[..3]], true).is_err());
    // Unreduced inputs: unspecified values, but no out-of-range table read.
    let conv = BaseConversion::new(&[q, prime(40, 1)], &m).unwrap();
    let big = vec![u64::MAX; 8];
    assert!(conv.convert(&mut out, &[&big, &big], true).is_ok());
    assert!(GaloisPermutation::new(1000, 5).is_err());
    assert!(GaloisPermutation::new(1024, 4).is_err());
    assert!(automorphism_coeff(&m, &mut out, &v, 2).is_err());
    assert!(automorphism_coeff(&m, &mut out[..4], &v, 3).is_err());
    let perm = GaloisPermutation::new(16, 5).unwrap();
    assert!(automorphism_ntt(&m, &mut out, &v, &perm).is_err());
}

/// The largest term count the ABI allows (MAX_TERMS, several reduction
/// periods of 16), on all-maximal inputs (the largest lazy sums) and mixed
/// edges, for primes up to 62 bits: `dot` against u128 sums, the fast
/// conversion against sum_i y_i (Q/q_i) mod p in u128, and the exact one
/// bit for bit against portable, on every backend.
#[test]
fn lazy_sums_at_the_largest_term_count() {
    let len = 21;
    for bits in [62, 50, 31] {
        let primes = ntt_primes(bits, 1024, MAX_TERMS + 1).unwrap();
        let (p, src) = (primes[MAX_TERMS], &primes[..MAX_TERMS]);
        let edge = |q: u64, j: usize, i: usize| match (i + j) % 5 {
            0 => 0,
            1 => 1,
            2 => ((j as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i as u64) % q,
            _ => q - 1,
        };
        for all_max in [true, false] {
            let value = |q: u64, j: usize, i: usize| if all_max { q - 1 } else { edge(q, j, i) };
            let a: Vec<Vec<u64>> = (0..MAX_TERMS)
                .map(|j| (0..len).map(|i| value(p, j, i)).collect())
                .collect();
            let b: Vec<Vec<u64>> = (0..MAX_TERMS)
                .map(|j| (0..len).map(|i| value(p, j + 1, i)).collect())
                .collect();
            let y: Vec<Vec<u64>> = src
                .iter()
                .enumerate()
                .map(|(j, &q)| (0..len).map(|i| value(q, j, i)).collect())
                .collect();
            let (ar, br): (Vec<&[u64]>, Vec<&[u64]>) = (
                a.iter().map(|v| &v[..]).collect(),
                b.iter().map(|v| &v[..]).collect(),
            );
            let yr: Vec<&[u64]> = y.iter().map(|v| &v[..]).collect();
            let sum = |f: &dyn Fn(usize, usize) -> u128, i: usize| {
                (0..MAX_TERMS).fold(0u128, |acc, j| (acc + f(j, i) % p as u128) % p as u128) as u64
            };
            let dot_expected: Vec<u64> = (0..len)
                .map(|i| sum(&|j, i| a[j][i] as u128 * b[j][i] as u128, i))
                .collect();
            let pm = Modulus::with_backend(p, Backend::Portable).unwrap();
            let qhat: Vec<u128> = (0..MAX_TERMS)
                .map(|j| {
                    src.iter()
                        .enumerate()
                        .filter(|&(l, _)| l != j)
                        .fold(1, |acc, (_, &q)| pm.mul_mod(acc, q)) as u128
                })
                .collect();
            let fast_expected: Vec<u64> = (0..len)
                .map(|i| sum(&|j, i| y[j][i] as u128 * qhat[j], i))
                .collect();
            let mut exact_portable = vec![0; len];
            BaseConversion::new(src, &pm)
                .unwrap()
                .convert(&mut exact_portable, &yr, true)
                .unwrap();
            for m in moduli(p) {
                let mut out = vec![0; len];
                dot(&m, &mut out, &ar, &br).unwrap();
                assert_eq!(out, dot_expected, "dot, {bits} bits, {:?}", m.backend());
                let conv = BaseConversion::new(src, &m).unwrap();
                conv.convert(&mut out, &yr, false).unwrap();
                assert_eq!(out, fast_expected, "fast, {bits} bits, {:?}", m.backend());
                conv.convert(&mut out, &yr, true).unwrap();
                assert_eq!(out, exact_portable, "exact, {bits} bits, {:?}", m.backend());
            }
        }
    }
}
