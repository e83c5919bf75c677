//! The safe API against obviously-correct references: schoolbook negacyclic
//! products and u128 arithmetic, on every backend this machine can run.

mod common;

use common::moduli;
use proptest::prelude::*;
use triskel_kernels::*;

fn schoolbook(a: &[u64], b: &[u64], q: u64) -> Vec<u64> {
    let n = a.len();
    let mut c = vec![0u128; n];
    let q128 = q as u128;
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            let p = x as u128 * y as u128 % q128;
            let k = i + j;
            if k < n {
                c[k] = (c[k] + p) % q128;
            } else {
                c[k - n] = (c[k - n] + q128 - p) % q128;
            }
        }
    }
    c.into_iter().map(|x| x as u64).collect()
}

/// Random residues with edge values (0, 1, q-1) mixed in.
fn residues(q: u64, n: usize) -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(
        prop_oneof![
            3 => 0..q,
            1 => Just(0u64),
            1 => Just(1u64),
            1 => Just(q - 1),
        ],
        n,
    )
}

fn prime_and_size() -> impl Strategy<Value = (u64, usize)> {
    (20u32..=61, 10u32..=12, 0usize..4).prop_map(|(bits, log_n, pick)| {
        let n = 1usize << log_n;
        let primes = ntt_primes(bits, n, 4).unwrap();
        (primes[pick], n)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn ntt_product_equals_schoolbook(
        (q, n, a, b) in prime_and_size().prop_flat_map(|(q, n)| (Just(q), Just(n), residues(q, n), residues(q, n)))
    ) {
        let expected = schoolbook(&a, &b, q);
        for m in moduli(q) {
            let plan = NttPlan::new(n, &m).unwrap();
            let (mut fa, mut fb) = (a.clone(), b.clone());
            plan.forward(&mut fa).unwrap();
            plan.forward(&mut fb).unwrap();
            prop_assert!(fa.iter().chain(&fb).all(|&x| x < q));
            mul_assign(&m, &mut fa, &fb).unwrap();
            plan.inverse(&mut fa).unwrap();
            prop_assert_eq!(&fa, &expected, "backend {:?}", m.backend());
        }
    }

    #[test]
    fn elementwise_ops_match_u128(
        (q, a, b, s) in (20u32..=61).prop_flat_map(|bits| {
            let q = ntt_primes(bits, 1024, 1).unwrap()[0];
            (Just(q), residues(q, 77), residues(q, 77), 0..q)
        })
    ) {
        let q128 = q as u128;
        for m in moduli(q) {
            let mut out = vec![0; a.len()];
            add(&m, &mut out, &a, &b).unwrap();
            prop_assert!(out.iter().zip(a.iter().zip(&b)).all(|(&o, (&x, &y))| o as u128 == (x as u128 + y as u128) % q128));
            sub(&m, &mut out, &a, &b).unwrap();
            prop_assert!(out.iter().zip(a.iter().zip(&b)).all(|(&o, (&x, &y))| o as u128 == (x as u128 + q128 - y as u128) % q128));
            mul(&m, &mut out, &a, &b).unwrap();
            prop_assert!(out.iter().zip(a.iter().zip(&b)).all(|(&o, (&x, &y))| o as u128 == x as u128 * y as u128 % q128));
            neg(&m, &mut out, &a).unwrap();
            prop_assert!(out.iter().zip(&a).all(|(&o, &x)| o as u128 == (q128 - x as u128) % q128));
            mul_scalar(&m, &mut out, &a, s).unwrap();
            prop_assert!(out.iter().zip(&a).all(|(&o, &x)| o as u128 == x as u128 * s as u128 % q128));
            let mut acc = b.clone();
            mul_acc(&m, &mut acc, &a, &a).unwrap();
            prop_assert!(acc.iter().zip(a.iter().zip(&b)).all(|(&o, (&x, &y))| o as u128 == (x as u128 * x as u128 + y as u128) % q128));
            // (a - b) s + c with c = a reversed, and without c.
            let c: Vec<u64> = a.iter().rev().copied().collect();
            let fused = |x: u64, y: u64| (x as u128 + q128 - y as u128) % q128 * s as u128 % q128;
            out.copy_from_slice(&a);
            sub_mul_scalar_add_assign(&m, &mut out, &b, s, Some(&c)).unwrap();
            prop_assert!(out.iter().zip(a.iter().zip(&b)).zip(&c).all(|((&o, (&x, &y)), &z)| o as u128 == (fused(x, y) + z as u128) % q128));
            out.copy_from_slice(&a);
            sub_mul_scalar_add_assign(&m, &mut out, &b, s, None).unwrap();
            prop_assert!(out.iter().zip(a.iter().zip(&b)).all(|(&o, (&x, &y))| o as u128 == fused(x, y)));

            // The in-place forms agree with the out-of-place ones.
            let mut inplace = a.clone();
            add_assign(&m, &mut inplace, &b).unwrap();
            sub_assign(&m, &mut inplace, &b).unwrap();
            prop_assert_eq!(&inplace, &a);
            mul_assign(&m, &mut inplace, &b).unwrap();
            mul(&m, &mut out, &a, &b).unwrap();
            prop_assert_eq!(&inplace, &out);
            neg_assign(&m, &mut inplace).unwrap();
            neg_assign(&m, &mut inplace).unwrap();
            prop_assert_eq!(&inplace, &out);
            mul_scalar_assign(&m, &mut inplace, s).unwrap();
            mul_scalar(&m, &mut acc, &out, s).unwrap();
            prop_assert_eq!(&inplace, &acc);
        }
    }

    #[test]
    fn scalar_arithmetic_matches_u128(bits in 2u32..=62, x in any::<u128>(), a in any::<u64>(), b in any::<u64>()) {
        let q = (2..1u64 << bits).rev().find(|&q| is_prime(q) && q >> 62 == 0).unwrap();
        let m = Modulus::new(q).unwrap();
        prop_assert_eq!(m.reduce_u128(x) as u128, x % q as u128);
        prop_assert_eq!(m.mul_mod(a, b) as u128, a as u128 * b as u128 % q as u128);
        let (ra, rb) = (a % q, b % q);
        prop_assert_eq!(m.mul_shoup(a, rb, m.shoup(rb)) as u128, a as u128 * rb as u128 % q as u128);
        if let Some(inv) = m.inv_mod(ra) {
            prop_assert_eq!(m.mul_mod(inv, ra), 1);
        }
        prop_assert_eq!(m.add_mod(ra, rb) as u128, (ra as u128 + rb as u128) % q as u128);
        prop_assert_eq!(m.sub_mod(ra, m.neg_mod(rb)), m.add_mod(ra, rb));
    }
}

/// The branch-free helpers at their edges (0, q - 1, q - 1 + q - 1), which
/// random operands rarely reach, for the largest prime of several sizes.
#[test]
fn scalar_arithmetic_at_the_edges() {
    for bits in [2u32, 31, 50, 62] {
        let q = (2..1u64 << bits)
            .rev()
            .find(|&q| is_prime(q) && q >> 62 == 0)
            .unwrap();
        let m = Modulus::new(q).unwrap();
        let top = q - 1;
        assert_eq!(m.neg_mod(0), 0);
        assert_eq!(m.neg_mod(1), top);
        assert_eq!(m.neg_mod(top), 1);
        assert_eq!(m.add_mod(top, top), q - 2);
        assert_eq!(m.add_mod(top, 1), 0);
        assert_eq!(m.sub_mod(0, top), 1);
        assert_eq!(m.sub_mod(top, 0), top);
        assert_eq!(m.sub_mod(5 % q, 5 % q), 0);
        assert_eq!(m.reduce_u128(q as u128), 0);
        assert_eq!(m.reduce_u128(2 * q as u128 - 1), top);
        assert_eq!(m.reduce_u128(u128::MAX) as u128, u128::MAX % q as u128);
        for x in [
            0i64,
            1,
            -1,
            q as i64 - 1,
            1 - q as i64,
            i64::MAX,
            i64::MIN,
            -(q as i64),
        ] {
            let want = (x as i128).rem_euclid(q as i128) as u64;
            assert_eq!(m.reduce_i64(x), want, "{x} mod {q}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// The sizes the x86 kernels run depth-first (N >= 2^13: chunks of 4096
    /// coefficients) give portable's outputs bit for bit.
    #[test]
    fn large_transforms_match_portable(
        (q, n, a) in (30u32..=62, 13u32..=16).prop_flat_map(|(bits, log_n)| {
            let n = 1usize << log_n;
            let q = ntt_primes(bits, n, 1).unwrap()[0];
            (Just(q), Just(n), residues(q, n))
        })
    ) {
        let reference = NttPlan::new(n, &Modulus::with_backend(q, Backend::Portable).unwrap()).unwrap();
        let (mut fwd, mut inv) = (a.clone(), a.clone());
        reference.forward(&mut fwd).unwrap();
        reference.inverse(&mut inv).unwrap();
        for m in moduli(q) {
            let plan = NttPlan::new(n, &m).unwrap();
            let (mut f, mut i, mut to) = (a.clone(), a.clone(), vec![0; n]);
            plan.forward(&mut f).unwrap();
            plan.inverse(&mut i).unwrap();
            plan.inverse_to(&mut to, &a).unwrap();
            prop_assert!(f == fwd, "forward, backend {:?}, n = {n}, q = {q}", m.backend());
            prop_assert!(i == inv, "inverse, backend {:?}, n = {n}, q = {q}", m.backend());
            prop_assert!(to == inv, "inverse_to, backend {:?}, n = {n}, q = {q}", m.backend());
        }
    }
}

#[test]
fn round_trip_every_size_and_backend() {
    for log_n in 10..=17 {
        let n = 1usize << log_n;
        for bits in [30, 50, 60, 62] {
            let q = ntt_primes(bits, n, 1).unwrap()[0];
            let input: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q)
                .collect();
            for m in moduli(q) {
                let plan = NttPlan::new(n, &m).unwrap();
                let mut a = input.clone();
                plan.forward(&mut a).unwrap();
                assert_ne!(a, input);
                let mut back = vec![0; n];
                plan.inverse_to(&mut back, &a).unwrap();
                plan.inverse(&mut a).unwrap();
                assert_eq!(a, input, "n={n} q={q} backend={:?}", m.backend());
                assert_eq!(
                    back,
                    input,
                    "inverse_to, n={n} q={q} backend={:?}",
                    m.backend()
                );
            }
        }
    }
}

#[test]
fn forward_evaluates_at_odd_powers_of_psi_in_bit_reversed_order() {
    let n = 1024;
    let q = ntt_primes(40, n, 1).unwrap()[0];
    let m = Modulus::new(q).unwrap();
    let plan = NttPlan::new(n, &m).unwrap();
    let coeffs: Vec<u64> = (0..n as u64).map(|i| (i * i + 7) % q).collect();
    let mut eval = coeffs.clone();
    plan.forward(&mut eval).unwrap();
    let psi = plan.psi();
    assert_eq!(
        m.pow_mod(psi, n as u64),
        q - 1,
        "psi is a primitive 2n-th root"
    );
    for j in [0usize, 1, 2, 511, 1023] {
        let brv = j.reverse_bits() >> (usize::BITS - 10);
        let x = m.pow_mod(psi, 2 * brv as u64 + 1);
        let value = coeffs
            .iter()
            .rev()
            .fold(0, |acc, &c| m.add_mod(m.mul_mod(acc, x), c));
        assert_eq!(eval[j], value, "slot {j}");
    }
}

/// Element-wise products modulo primes that are not NTT-friendly, on every
/// backend that takes them: the smallest (2, the one even prime, which has no
/// inverse modulo 2^32 for neon's Montgomery products, and 3) and the top of
/// neon's range (2^31 - 1).
#[test]
fn elementwise_products_with_tiny_and_edge_primes() {
    for q in [2u64, 3, 5, 65537, (1 << 31) - 1] {
        let a: Vec<u64> = (0..37u64).map(|i| (i * 0x9e37_79b9) % q).collect();
        let b: Vec<u64> = (0..37u64).map(|i| (q - 1 - i % q) % q).collect();
        let mulmod = |x: u64, y: u64| (x as u128 * y as u128 % q as u128) as u64;
        for m in moduli(q) {
            let mut out = vec![0u64; a.len()];
            mul(&m, &mut out, &a, &b).unwrap();
            let want: Vec<u64> = a.iter().zip(&b).map(|(&x, &y)| mulmod(x, y)).collect();
            assert_eq!(out, want, "mul q={q} {:?}", m.backend());
            mul_acc(&m, &mut out, &a, &a).unwrap();
            let want: Vec<u64> = want
                .iter()
                .zip(&a)
                .map(|(&c, &x)| (c + mulmod(x, x)) % q)
                .collect();
            assert_eq!(out, want, "mul_acc q={q} {:?}", m.backend());
            mul_scalar(&m, &mut out, &a, q - 1).unwrap();
            let want: Vec<u64> = a.iter().map(|&x| mulmod(x, q - 1)).collect();
            assert_eq!(out, want, "mul_scalar q={q} {:?}", m.backend());
        }
    }
}

#[test]
fn primes_are_ntt_friendly_and_exact_size() {
    for (bits, n) in [
        (20, 1024),
        (31, 1 << 17),
        (50, 4096),
        (61, 65536),
        (62, 1 << 17),
    ] {
        let primes = ntt_primes(bits, n, 3).unwrap();
        assert_eq!(primes.len(), 3);
        assert!(primes.windows(2).all(|w| w[0] > w[1]));
        for q in primes {
            assert!(is_prime(q));
            assert_eq!(64 - q.leading_zeros(), bits);
            assert_eq!((q - 1) % (2 * n as u64), 0);
        }
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    assert_eq!(Modulus::new(1 << 20).unwrap_err(), Error::NotPrime(1 << 20));
    assert!(matches!(
        Modulus::new(0),
        Err(Error::ModulusOutOfRange { .. })
    ));
    assert!(matches!(
        Modulus::new(u64::MAX),
        Err(Error::ModulusOutOfRange { .. })
    ));
    let big = (1u64 << 62) + 135; // a prime above the limit
    assert!(matches!(
        Modulus::new(big),
        Err(Error::ModulusOutOfRange { .. })
    ));
    assert!(matches!(
        Backend::from_name("sse9"),
        Err(Error::UnknownBackend(_))
    ));

    let q = ntt_primes(30, 1024, 1).unwrap()[0];
    let m = Modulus::new(q).unwrap();
    assert_eq!(
        NttPlan::new(1000, &m).unwrap_err(),
        Error::InvalidSize(1000)
    );
    assert_eq!(NttPlan::new(512, &m).unwrap_err(), Error::InvalidSize(512));
    assert_eq!(
        NttPlan::new(1 << 18, &m).unwrap_err(),
        Error::InvalidSize(1 << 18)
    );
    // 2^17 * 2 divides q - 1 only for special primes: 12289 = 3 * 2^12 + 1 does not.
    let small = Modulus::new(12289).unwrap();
    assert_eq!(
        NttPlan::new(1 << 13, &small).unwrap_err(),
        Error::NotNttFriendly {
            q: 12289,
            n: 1 << 13
        }
    );
    let plan = NttPlan::new(1024, &m).unwrap();
    let mut short = vec![0u64; 1023];
    assert_eq!(
        plan.forward(&mut short).unwrap_err(),
        Error::LengthMismatch {
            expected: 1024,
            got: 1023
        }
    );
    assert!(plan.inverse(&mut short).is_err());
    let full = vec![0u64; 1024];
    assert!(plan.inverse_to(&mut short, &full).is_err());
    assert!(plan.inverse_to(&mut full.clone(), &short).is_err());
    let (a, mut out) = (vec![1u64; 8], vec![0u64; 9]);
    assert!(sub_mul_scalar_add_assign(&m, &mut out, &a, 1, None).is_err());
    let nine = out.clone();
    assert!(sub_mul_scalar_add_assign(&m, &mut out[..8], &a, 1, Some(&nine)).is_err());
    assert!(matches!(
        sub_mul_scalar_add_assign(&m, &mut out[..8], &a, q, None),
        Err(Error::ScalarOutOfRange { .. })
    ));
    assert!(add(&m, &mut out, &a, &a).is_err());
    assert!(mul_acc(&m, &mut out, &a, &a).is_err());
    assert!(matches!(
        mul_scalar_assign(&m, &mut out, q),
        Err(Error::ScalarOutOfRange { .. })
    ));
    assert!(matches!(
        ntt_primes(12, 4096, 1),
        Err(Error::NotEnoughPrimes { .. })
    ));
    assert!(matches!(
        ntt_primes(63, 4096, 1),
        Err(Error::NotEnoughPrimes { .. })
    ));
    assert!(matches!(
        ntt_primes(40, 3000, 1),
        Err(Error::InvalidSize(3000))
    ));
    // Counts beyond the candidates, or beyond MAX_PRIMES, are refused before
    // any allocation or search.
    for count in [1 << 40, usize::MAX, MAX_PRIMES + 1] {
        assert!(matches!(
            ntt_primes(62, 1024, count),
            Err(Error::NotEnoughPrimes { .. })
        ));
    }
    assert!(matches!(
        ntt_primes(20, 4096, 65),
        Err(Error::NotEnoughPrimes { .. })
    ));
    assert_eq!(ntt_primes(50, 1024, MAX_PRIMES).unwrap().len(), MAX_PRIMES);
    for b in Backend::ALL {
        if !b.supports_modulus(1u64 << 61) {
            assert!(Modulus::with_backend(ntt_primes(61, 1024, 1).unwrap()[0], b).is_err());
        }
    }
}

/// The CPU flags the kernel reports, independently of `is_x86_feature_detected`.
fn cpuinfo_flags() -> Option<Vec<String>> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return None;
    }
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("flags"))?;
    Some(
        line.split(':')
            .nth(1)?
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    )
}

/// What each backend needs, per its documentation (x86-64 only).
fn cpu_can_run(b: Backend, flags: &[String]) -> bool {
    let has = |names: &[&str]| names.iter().all(|n| flags.iter().any(|f| f == n));
    match b.name() {
        "portable" => true,
        "avx512" => has(&["avx512f", "avx512dq", "bmi2"]),
        "avx512ifma" => has(&["avx512f", "avx512dq", "avx512ifma", "bmi2"]),
        "avx2" => has(&["avx2", "fma", "bmi2"]),
        _ => false,
    }
}

/// `ci/test.sh` lists in `TRISKEL_EXPECT_BACKENDS` the backends the CPU can
/// run (from /proc/cpuinfo): each must be usable here, so that the property
/// tests, which run every usable backend, exercise it.
#[test]
fn every_backend_the_cpu_can_run_is_exercised() {
    let Ok(expected) = std::env::var("TRISKEL_EXPECT_BACKENDS") else {
        return;
    };
    let usable = available_backends();
    for name in expected.split_whitespace() {
        let b = Backend::from_name(name).unwrap();
        assert!(
            usable.contains(&b),
            "the CPU can run {name}, but no test used it"
        );
    }
    eprintln!("kernel backends exercised: {usable:?}");
}

#[test]
fn dispatch_lists_and_selects_usable_backends() {
    let usable = available_backends();
    assert!(usable.contains(&Backend::Portable));
    for b in Backend::ALL {
        assert_eq!(Backend::from_name(b.name()).unwrap(), b);
        if let Some(flags) = cpuinfo_flags() {
            assert_eq!(
                b.cpu_supports(),
                cpu_can_run(b, &flags),
                "{b:?}: run-time detection disagrees with /proc/cpuinfo"
            );
        }
        if b.is_compiled() {
            assert!(!b.native_ops().is_empty());
        } else {
            assert!(Modulus::with_backend(65537, b).is_err());
        }
    }
    assert_eq!(Backend::Portable.native_ops(), OPS.to_vec());
    // Both AVX-512 backends implement every op (none falls back to portable).
    for b in [Backend::Avx512, Backend::Avx512Ifma] {
        if b.is_compiled() {
            assert_eq!(b.native_ops(), OPS.to_vec(), "{b:?}");
        }
    }
    if forced_backend().unwrap().is_none() {
        for bits in [30, 49, 55, 61] {
            let q = ntt_primes(bits, 1024, 1).unwrap()[0];
            let chosen = select_backend(q).unwrap();
            assert!(chosen.is_usable() && chosen.supports_modulus(q));
            // Nothing faster that also accepts q was passed over.
            if Backend::Avx512Ifma.is_usable() && q < 1 << 50 {
                assert_eq!(chosen, Backend::Avx512Ifma);
            }
            // On AArch64: neon for primes below 2^31, then sve, then aarch64.
            if Backend::Neon.is_usable() && q < 1 << 31 {
                assert_eq!(chosen, Backend::Neon);
            } else if Backend::Sve.is_usable() && !Backend::Avx512.is_usable() {
                assert_eq!(chosen, Backend::Sve);
            }
        }
    }
}

/// Every SIMD backend equals portable bit for bit with the largest primes it
/// accepts (2^31 - small for neon, 2^50 - small for avx512ifma, 2^62 - small
/// for avx512, avx2, aarch64 and sve; also 2^50 - small for avx2, the top of its
/// double-precision range),
/// on random data and on the edge values 0, 1, q - 1, at two sizes.
#[test]
fn top_of_range_primes_match_portable() {
    for backend in available_backends()
        .into_iter()
        .filter(|&b| b != Backend::Portable)
    {
        let mut tops = vec![backend.max_modulus_bits()];
        if backend == Backend::Avx2 {
            tops.push(50);
        }
        for (bits, n) in tops
            .into_iter()
            .flat_map(|bits| [(bits, 4096usize), (bits, 1 << 17)])
        {
            for q in ntt_primes(bits, n, 2).unwrap() {
                let (fast, slow) = (
                    Modulus::with_backend(q, backend).unwrap(),
                    Modulus::with_backend(q, Backend::Portable).unwrap(),
                );
                let (pf, ps) = (
                    NttPlan::new(n, &fast).unwrap(),
                    NttPlan::new(n, &slow).unwrap(),
                );
                let edges = [0, 1, q - 1];
                let a: Vec<u64> = (0..n as u64)
                    .map(|i| match i % 5 {
                        0..=2 => edges[(i % 3) as usize],
                        _ => i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q,
                    })
                    .collect();
                let b: Vec<u64> = a
                    .iter()
                    .rev()
                    .map(|&x| (q - 1 - x) ^ 1)
                    .map(|x| x % q)
                    .collect();
                let s = q - 2;
                let run = |m: &Modulus, plan: &NttPlan| {
                    let mut out = Vec::new();
                    let mut x = a.clone();
                    plan.forward(&mut x).unwrap();
                    out.push(x.clone());
                    plan.inverse(&mut x).unwrap();
                    out.push(x);
                    let mut y = b.clone();
                    plan.inverse(&mut y).unwrap();
                    out.push(y);
                    let mut r = vec![0u64; n];
                    mul(m, &mut r, &a, &b).unwrap();
                    out.push(r.clone());
                    mul_acc(m, &mut r, &a, &a).unwrap();
                    out.push(r.clone());
                    mul_scalar(m, &mut r, &b, s).unwrap();
                    out.push(r.clone());
                    add(m, &mut r, &a, &b).unwrap();
                    out.push(r.clone());
                    sub(m, &mut r, &a, &b).unwrap();
                    out.push(r.clone());
                    neg(m, &mut r, &b).unwrap();
                    out.push(r);
                    out
                };
                let (got, want) = (run(&fast, &pf), run(&slow, &ps));
                assert_eq!(got[1], a, "round trip, {backend:?} q={q} n={n}");
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(g == w, "output {i} differs: {backend:?} q={q} n={n}");
                }
            }
        }
    }
}
