//! The public GLWE / GGSW API: encryption round trips, external products,
//! CMux, monomial products, sample extraction, the gadget decomposition and
//! the errors on mismatched operands. Each test decrypts and compares with
//! the plaintext computation.

use triskel_ring::Prng;
use triskel_tfhe::{
    ClientKey, Decomposer, Error, GgswCiphertext, GlweCiphertext, GlweSecretKey, TfheParameters,
};

/// Message modulus of the tests: 16 levels on the whole of Z_q.
const P: u64 = 16;

fn random_messages(rng: &mut Prng, n: usize) -> Vec<u64> {
    (0..n).map(|_| rng.below(P).unwrap()).collect()
}

/// The 2_2 set's shape (k = 1, N = 2048) and the boolean set's (k = 2, N = 1024).
fn keys() -> [GlweSecretKey; 2] {
    [
        GlweSecretKey::generate(&TfheParameters::message_2_carry_2()).unwrap(),
        GlweSecretKey::generate(&TfheParameters::boolean()).unwrap(),
    ]
}

#[test]
fn encryption_round_trip() {
    let mut rng = Prng::from_seed([1; 32]);
    for key in keys() {
        let n = key.polynomial_size();
        for _ in 0..4 {
            let m = random_messages(&mut rng, n);
            let ct = key.encrypt(&m, P).unwrap();
            assert_eq!(ct.polynomials().len(), (key.glwe_dimension() + 1) * n);
            assert_eq!(key.decrypt(&ct, P).unwrap(), m);
        }
        // Another message modulus, with its largest message.
        let m: Vec<u64> = (0..n as u64).map(|i| (i * 37) % 1024).collect();
        let ct = key.encrypt(&m, 1024).unwrap();
        assert_eq!(key.decrypt(&ct, 1024).unwrap(), m);
    }
}

#[test]
fn a_trivial_ciphertext_has_its_plaintext_as_phase() {
    for (params, key) in [
        TfheParameters::message_2_carry_2(),
        TfheParameters::boolean(),
    ]
    .into_iter()
    .zip(keys())
    {
        let n = key.polynomial_size();
        let plaintext: Vec<u64> = (0..n as u64).map(|i| i * 7919 % key.modulus()).collect();
        let ct = GlweCiphertext::trivial(&params, key.key_id(), &plaintext).unwrap();
        assert_eq!(*key.phase(&ct).unwrap(), plaintext);
        let short = GlweCiphertext::trivial(&params, key.key_id(), &plaintext[1..]);
        assert!(matches!(short, Err(Error::OutOfRange(_))));
    }
}

#[test]
fn sums_and_differences_decrypt_to_the_messages_mod_p() {
    let mut rng = Prng::from_seed([2; 32]);
    for key in keys() {
        let n = key.polynomial_size();
        let (a, b) = (random_messages(&mut rng, n), random_messages(&mut rng, n));
        let (ca, cb) = (key.encrypt(&a, P).unwrap(), key.encrypt(&b, P).unwrap());
        let sum: Vec<u64> = a.iter().zip(&b).map(|(x, y)| (x + y) % P).collect();
        let diff: Vec<u64> = a.iter().zip(&b).map(|(x, y)| (x + P - y) % P).collect();
        assert_eq!(key.decrypt(&ca.add(&cb).unwrap(), P).unwrap(), sum);
        assert_eq!(key.decrypt(&ca.sub(&cb).unwrap(), P).unwrap(), diff);
    }
}

#[test]
fn external_product_multiplies_by_the_ggsw_message() {
    let mut rng = Prng::from_seed([2; 32]);
    for key in keys() {
        let m = random_messages(&mut rng, key.polynomial_size());
        let ct = key.encrypt(&m, P).unwrap();
        for factor in [0i64, 1, -1, 2, -3] {
            let ggsw = key.encrypt_ggsw(factor).unwrap();
            let product = ggsw.external_product(&ct).unwrap();
            let want: Vec<u64> = m
                .iter()
                .map(|&v| (v as i64 * factor).rem_euclid(P as i64) as u64)
                .collect();
            assert_eq!(key.decrypt(&product, P).unwrap(), want, "factor {factor}");
        }
    }
}

#[test]
fn cmux_picks_the_branch_of_the_bit() {
    let mut rng = Prng::from_seed([3; 32]);
    for key in keys() {
        let n = key.polynomial_size();
        let (m0, m1) = (random_messages(&mut rng, n), random_messages(&mut rng, n));
        let (c0, c1) = (key.encrypt(&m0, P).unwrap(), key.encrypt(&m1, P).unwrap());
        for (bit, want) in [(0, &m0), (1, &m1)] {
            let ggsw = key.encrypt_ggsw(bit).unwrap();
            let out = ggsw.cmux(&c0, &c1).unwrap();
            assert_eq!(&key.decrypt(&out, P).unwrap(), want, "bit {bit}");
            // The blind rotation's fused step is CMux(acc, X^e acc), bit for bit.
            for e in [0, 1, 517, n as u64, 2 * n as u64 - 1] {
                let mut acc = c0.clone();
                ggsw.cmux_rotate_assign(&mut acc, e).unwrap();
                let separate = ggsw.cmux(&c0, &c0.mul_monomial(e)).unwrap();
                assert_eq!(acc.polynomials(), separate.polynomials(), "e = {e}");
            }
        }
    }
}

/// X^e m in Z_p[X]/(X^N + 1), term by term.
fn negacyclic_rotation(m: &[u64], e: u64) -> Vec<u64> {
    let n = m.len() as u64;
    let mut out = vec![0u64; m.len()];
    for (i, &v) in m.iter().enumerate() {
        // X^(i + e) = (-1)^((i + e) / N) X^((i + e) mod N).
        let t = i as u64 + e;
        let negative = (t / n) % 2 == 1;
        out[(t % n) as usize] = if negative { (P - v) % P } else { v };
    }
    out
}

#[test]
fn monomial_product_is_the_negacyclic_rotation() {
    let mut rng = Prng::from_seed([4; 32]);
    for key in keys() {
        let n = key.polynomial_size() as u64;
        let m = random_messages(&mut rng, n as usize);
        let ct = key.encrypt(&m, P).unwrap();
        for e in [0, 1, 3, n - 1, n, n + 7, 2 * n - 1, 2 * n, 5 * n + 11] {
            let rotated = ct.mul_monomial(e);
            let want = negacyclic_rotation(&m, e);
            assert_eq!(key.decrypt(&rotated, P).unwrap(), want, "e = {e}");
        }
    }
}

#[test]
fn sample_extract_decrypts_under_the_lwe_view() {
    let mut rng = Prng::from_seed([5; 32]);
    for key in keys() {
        let n = key.polynomial_size();
        let m = random_messages(&mut rng, n);
        let ct = key.encrypt(&m, P).unwrap();
        for index in [0, 1, n / 2, n - 1] {
            let lwe = ct.sample_extract(index).unwrap();
            assert_eq!(lwe.dimension(), key.glwe_dimension() * n);
            let phase = key.lwe_key().phase(&lwe).unwrap();
            // Torus phase (mod 2^64) to a message: round(phase P / 2^64).
            let got = ((phase as u128 * P as u128 + (1u128 << 63)) >> 64) as u64 % P;
            assert_eq!(got, m[index], "index {index}");
        }
        assert!(ct.sample_extract(n).is_err());
    }
}

/// A client key's GLWE key is the one its bootstraps rest under: its LWE
/// view is the big key, and a bootstrapped block extracts under it.
#[test]
fn the_client_keys_glwe_key_is_the_big_key() {
    let mut rng = Prng::from_seed([6; 32]);
    let ck = ClientKey::generate_with(&TfheParameters::boolean(), &mut rng).unwrap();
    let glwe = ck.glwe_key();
    assert_eq!(glwe.lwe_key().coefficients(), ck.big_key().coefficients());
    let m = random_messages(&mut rng, glwe.polynomial_size());
    let ct = glwe.encrypt(&m, P).unwrap();
    let lwe = ct.sample_extract(3).unwrap();
    let phase = ck.big_key().phase(&lwe).unwrap();
    assert_eq!(
        ((phase as u128 * P as u128 + (1u128 << 63)) >> 64) as u64 % P,
        m[3]
    );
}

/// sum_j d_j g_j is within q / (2 B^l) (rounding) plus the gadget's own
/// rounding (l B / 4) plus one unit at ties of x, digits in [-B/2, B/2),
/// for random and edge values.
#[test]
fn decomposition_reconstructs_within_its_precision() {
    let key = GlweSecretKey::generate(&TfheParameters::message_2_carry_2()).unwrap();
    let q = key.modulus();
    assert_eq!(key.decomposer().modulus(), q);
    let mut rng = Prng::from_seed([7; 32]);
    for (base_log, levels) in [(23u32, 1u32), (15, 2), (8, 3), (2, 20)] {
        let d = Decomposer::new(q, base_log, levels).unwrap();
        assert_eq!((d.base_log(), d.levels()), (base_log, levels as usize));
        let mut xs: Vec<u64> = (0..200).map(|_| rng.below(q).unwrap()).collect();
        xs.extend([0, 1, q - 1, q / 2, q / 2 + 1]);
        let b = 1i128 << base_log;
        let step = q as f64 / 2f64.powi((base_log * levels) as i32);
        let bound = step / 2.0 + step + (levels as i128 * b / 4) as f64;
        for &x in &xs {
            let digits = d.signed_digits(x).unwrap();
            assert_eq!(digits.len(), levels as usize);
            let mut sum: i128 = 0;
            for (&digit, &g) in digits.iter().zip(d.gadget()) {
                let digit = digit as i128;
                assert!(-b / 2 <= digit && digit < b / 2, "digit {digit}");
                sum += digit * g as i128;
            }
            let diff = (x as i128 - sum).rem_euclid(q as i128);
            let diff = diff.min(q as i128 - diff) as f64;
            assert!(diff <= bound, "x = {x}: off by {diff}, bound {bound}");
        }
        assert!(matches!(d.signed_digits(q), Err(Error::OutOfRange(_))));
    }
    // Shapes the decomposition cannot hold.
    for (q, base_log, levels) in [
        (q, 0, 1),
        (q, 8, 0),
        (q, 26, 2),
        (q, 17, 3),
        (q, 32, 2),
        (q, 1, u32::MAX),
        (q + 1, 8, 1),
    ] {
        assert!(
            matches!(
                Decomposer::new(q, base_log, levels),
                Err(Error::InvalidParameters(_))
            ),
            "q = {q}, B = 2^{base_log}, l = {levels}"
        );
    }
    assert!(Decomposer::new(1 << 53 | 1, 8, 1).is_err());
}

#[test]
fn mismatched_operands_are_errors() {
    let [key, other] = keys();
    let n = key.polynomial_size();
    let ct = key.encrypt(&vec![1; n], P).unwrap();
    let foreign: GlweCiphertext = other.encrypt(&vec![1; other.polynomial_size()], P).unwrap();
    let ggsw: GgswCiphertext = key.encrypt_ggsw(1).unwrap();
    let foreign_ggsw = other.encrypt_ggsw(1).unwrap();
    let mismatch = |r: Result<GlweCiphertext, Error>| matches!(r, Err(Error::Mismatch(_)));
    assert!(mismatch(ggsw.external_product(&foreign)));
    assert!(mismatch(foreign_ggsw.external_product(&ct)));
    assert!(mismatch(ggsw.cmux(&ct, &foreign)));
    assert!(mismatch(ggsw.cmux(&foreign, &ct)));
    assert!(mismatch(ct.add(&foreign)));
    assert!(mismatch(foreign.sub(&ct)));
    let mut acc = foreign.clone();
    assert!(matches!(
        ggsw.cmux_rotate_assign(&mut acc, 3),
        Err(Error::Mismatch(_))
    ));
    assert!(matches!(key.phase(&foreign), Err(Error::Mismatch(_))));
    assert!(matches!(key.decrypt(&foreign, P), Err(Error::Mismatch(_))));
    // Plaintexts and messages of the wrong length or range.
    let out_of_range = |r: Result<GlweCiphertext, Error>| matches!(r, Err(Error::OutOfRange(_)));
    assert!(out_of_range(key.encrypt(&vec![1; n - 1], P)));
    assert!(out_of_range(key.encrypt(&vec![P; n], P)));
    assert!(out_of_range(key.encrypt(&vec![0; n], 1)));
    assert!(out_of_range(key.encrypt(&vec![0; n], key.modulus())));
    assert!(out_of_range(key.encrypt_plaintext(&vec![key.modulus(); n])));
    assert!(out_of_range(key.encrypt_plaintext(&vec![0; n + 1])));
    assert!(matches!(key.decrypt(&ct, 1), Err(Error::OutOfRange(_))));
    let q = key.modulus() as i64;
    for m in [q, -q, i64::MIN, i64::MAX] {
        assert!(
            matches!(key.encrypt_ggsw(m), Err(Error::OutOfRange(_))),
            "{m}"
        );
    }
}
