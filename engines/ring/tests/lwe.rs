//! LWE pieces: encryption, sample extraction against a schoolbook negacyclic
//! product, modulus switching error statistics, key switching and its serialization.

use triskel_ring::{Error, KeyId, LweCiphertext, LweKeySwitchKey, LweSecretKey, Prng, Reader};

fn rng() -> Prng {
    Prng::from_seed([7; 32])
}

/// A binary key of its own identity.
fn binary(n: usize, r: &mut Prng) -> LweSecretKey {
    let id = KeyId::sample(r);
    LweSecretKey::binary(n, id, r)
}

fn is_key_mismatch<T: std::fmt::Debug>(r: Result<T, Error>) -> bool {
    matches!(r, Err(Error::KeyMismatch { .. }))
}

/// Signed distance between two torus values.
fn dist(x: u64, y: u64) -> i64 {
    x.wrapping_sub(y) as i64
}

#[test]
fn encrypt_then_phase_is_message_plus_small_noise() {
    let mut r = rng();
    let sk = binary(600, &mut r);
    for m in [0u64, 1 << 60, u64::MAX - 5] {
        let ct = sk.encrypt(m, 2f64.powi(-40), &mut r).unwrap();
        assert!(dist(sk.phase(&ct).unwrap(), m).abs() < 1 << 28);
    }
    let other = binary(599, &mut r);
    let ct = sk.encrypt(0, 0.0, &mut r).unwrap();
    assert!(other.phase(&ct).is_err());
}

#[test]
fn sample_extraction_matches_schoolbook_phase() {
    let (q, n, k) = (1_125_899_906_826_241u64, 16usize, 2usize); // prime, 50 bits
    let mut r = rng();
    let s: Vec<Vec<i64>> = (0..k)
        .map(|_| (0..n).map(|_| (r.next_u64() & 1) as i64).collect())
        .collect();
    let masks: Vec<Vec<u64>> = (0..k)
        .map(|_| (0..n).map(|_| r.below(q).unwrap()).collect())
        .collect();
    let body: Vec<u64> = (0..n).map(|_| r.below(q).unwrap()).collect();
    // Schoolbook phase B - sum A_i S_i in Z_q[X]/(X^n + 1).
    let mut phase: Vec<i128> = body.iter().map(|&b| b as i128).collect();
    for (a, si) in masks.iter().zip(&s) {
        for i in 0..n {
            for j in 0..n {
                let prod = a[i] as i128 * si[j] as i128;
                if i + j < n {
                    phase[i + j] -= prod;
                } else {
                    phase[i + j - n] += prod;
                }
            }
        }
    }
    let flat: Vec<i64> = s.concat();
    let key = LweSecretKey::from_coefficients(&flat, KeyId::sample(&mut r));
    let mrefs: Vec<&[u64]> = masks.iter().map(|m| m.as_slice()).collect();
    for idx in [0, 1, 7, n - 1] {
        let ct = LweCiphertext::sample_extract(&mrefs, &body, q, idx, key.id()).unwrap();
        let want = phase[idx].rem_euclid(q as i128) as u128;
        let want = (((want << 64) + q as u128 / 2) / q as u128) as u64;
        // Each of the k n + 1 scaled terms is off by at most 1/2.
        assert!(dist(key.phase(&ct).unwrap(), want).abs() <= (k * n) as i64 + 1);
    }
    assert!(LweCiphertext::sample_extract(&mrefs, &body, q, n, key.id()).is_err());
    assert!(LweCiphertext::sample_extract(&mrefs, &body, q + 1, 0, key.id()).is_err());
    let unreduced = vec![q; n];
    assert!(LweCiphertext::sample_extract(&mrefs, &unreduced, q, 0, key.id()).is_err());
}

/// Mean square of the modulus switching error, in units of the new modulus.
fn switch_error_variance(binary_key_mean: bool) -> f64 {
    let (n, log) = (512usize, 12u32);
    let mut r = rng();
    let sk = binary(n, &mut r);
    let s = sk.coefficients().to_vec();
    let trials = 3000;
    let mut acc = 0.0;
    for _ in 0..trials {
        let ct = sk.encrypt(r.next_u64(), 0.0, &mut r).unwrap();
        let exact = sk.phase(&ct).unwrap() as f64 / 2f64.powi(64 - log as i32);
        let sw = ct.switch_modulus(log, binary_key_mean).unwrap();
        let dot = sw.a.iter().zip(&s).map(|(&a, &k)| a * k).sum::<u64>();
        let got = sw.b.wrapping_sub(dot) & ((1 << log) - 1);
        let mut e = got as f64 - exact;
        let m = (1u64 << log) as f64;
        e -= (e / m).round() * m;
        acc += e * e;
    }
    acc / trials as f64
}

#[test]
fn modulus_switching_error_variance_matches_the_analysis() {
    let n = 512.0;
    let plain = switch_error_variance(false);
    let centered = switch_error_variance(true);
    let (want_plain, want_centered) = (1.0 / 12.0 + n / 24.0, 1.0 / 12.0 + n / 48.0);
    assert!(
        (plain / want_plain - 1.0).abs() < 0.12,
        "{plain} vs {want_plain}"
    );
    assert!(
        (centered / want_centered - 1.0).abs() < 0.12,
        "{centered} vs {want_centered}"
    );
    assert!(LweCiphertext::trivial(4, 0, KeyId::sample(&mut rng()))
        .switch_modulus(64, false)
        .is_err());
}

#[test]
fn key_switching_keeps_the_phase_and_round_trips() {
    let mut r = rng();
    let big = binary(1024, &mut r);
    let small = binary(300, &mut r);
    let ksk = LweKeySwitchKey::generate(&big, &small, 4, 4, 2f64.powi(-35), &mut r).unwrap();
    let m = 3u64 << 60;
    let ct = big.encrypt(m, 2f64.powi(-40), &mut r).unwrap();
    let out = ksk.switch(&ct).unwrap();
    assert_eq!(out.dimension(), 300);
    // Rounding: 1024 * 2^-17 / 2; key noise: sqrt(1024 * 4 * 128 / 12) * 2^-35.
    assert!(dist(small.phase(&out).unwrap(), m).abs() < 1 << 54);
    assert!(ksk.switch(&LweCiphertext::trivial(3, 0, big.id())).is_err());

    let mut bytes = Vec::new();
    ksk.write_body(&mut bytes);
    assert_eq!(bytes.len(), 16 + 32 + 1024 * 4 * 8);
    // The key keeps the top 32 bits of each word (the decomposition uses at
    // most 32 bits): bodies are multiples of 2^32, and a wider one is refused.
    assert!(bytes[48..].chunks_exact(8).all(|w| w[..4] == [0; 4]));
    assert!(bytes[48..].chunks_exact(8).any(|w| w[4..] != [0; 4]));
    assert!(LweKeySwitchKey::generate(&big, &small, 11, 3, 2f64.powi(-35), &mut r).is_err());
    let (dims, ids) = ((1024, 300), (big.id(), small.id()));
    let read = |b: &[u8], base_log| {
        LweKeySwitchKey::read_body(&mut Reader::new(b), base_log, 4, dims, ids)
    };
    let back = read(&bytes, 4).unwrap();
    assert_eq!((back.input_id(), back.output_id()), ids);
    assert_eq!(back.switch(&ct).unwrap(), out);
    assert!(read(&bytes, 3).is_err());
    assert!(read(&bytes[..100], 4).is_err());
    // A body with a nonzero low half would load rounded and re-encode to
    // other bytes: refused.
    let mut low = bytes.clone();
    low[48 + 8 * 7] = 1;
    assert!(read(&low, 4).is_err());

    let mut cbytes = Vec::new();
    ct.write_body(&mut cbytes);
    assert_eq!(
        LweCiphertext::read_body(&mut Reader::new(&cbytes), 1024, big.id()).unwrap(),
        ct
    );
    assert!(LweCiphertext::read_body(&mut Reader::new(&cbytes), 1023, big.id()).is_err());
}

/// Several ciphertexts in one pass over the key: bit for bit what one
/// switch each gives.
#[test]
fn switching_many_at_once_equals_switching_each() {
    let mut r = rng();
    let big = binary(512, &mut r);
    let small = binary(200, &mut r);
    let ksk = LweKeySwitchKey::generate(&big, &small, 2, 8, 2f64.powi(-30), &mut r).unwrap();
    let cts: Vec<LweCiphertext> = (0..5u64)
        .map(|m| big.encrypt(m << 60, 2f64.powi(-40), &mut r).unwrap())
        .collect();
    let refs: Vec<&LweCiphertext> = cts.iter().collect();
    let many = ksk.switch_many(&refs).unwrap();
    assert_eq!(many.len(), 5);
    for (ct, got) in cts.iter().zip(&many) {
        assert_eq!(&ksk.switch(ct).unwrap(), got);
    }
    assert!(ksk.switch_many(&[]).unwrap().is_empty());
    let wrong = LweCiphertext::trivial(3, 0, big.id());
    assert!(ksk.switch_many(&[&cts[0], &wrong]).is_err());
}

/// Keys carry identities and ciphertexts the identity of their key: a twin
/// key (same dimension, another identity) refuses another key's ciphertext
/// in decryption, in addition and subtraction, in key switching (one and
/// many) with KeyMismatch; key switching gives a ciphertext of the output
/// key's identity, sample extraction one of the identity it is given, and
/// a compressed ciphertext and a loaded body keep theirs.
#[test]
fn another_key_of_the_same_dimension_is_refused() {
    let mut r = rng();
    let (big, twin) = (binary(512, &mut r), binary(512, &mut r));
    let small = binary(200, &mut r);
    assert_ne!(big.id(), twin.id());
    let twin_same_bits = LweSecretKey::from_coefficients(
        &big.coefficients()
            .iter()
            .map(|&c| c as i64)
            .collect::<Vec<_>>(),
        twin.id(),
    );
    let ct = big.encrypt(1 << 62, 2f64.powi(-40), &mut r).unwrap();
    assert_eq!(ct.key_id, big.id());
    big.phase(&ct).unwrap();
    // Even the same secret under another identity is another key.
    assert!(is_key_mismatch(twin_same_bits.phase(&ct)));
    assert!(is_key_mismatch(twin.phase(&ct)));

    let other = twin.encrypt(1 << 62, 2f64.powi(-40), &mut r).unwrap();
    assert!(is_key_mismatch(ct.clone().add_assign(&other)));
    assert!(is_key_mismatch(ct.clone().sub_assign(&other)));
    let mut sum = ct.clone();
    sum.add_assign(&ct).unwrap();
    sum.sub_assign(&ct).unwrap();
    assert_eq!(sum, ct);

    let ksk = LweKeySwitchKey::generate(&big, &small, 2, 8, 2f64.powi(-30), &mut r).unwrap();
    assert_eq!((ksk.input_id(), ksk.output_id()), (big.id(), small.id()));
    let out = ksk.switch(&ct).unwrap();
    assert_eq!(out.key_id, small.id());
    small.phase(&out).unwrap();
    assert!(is_key_mismatch(big.phase(&out)));
    assert!(is_key_mismatch(ksk.switch(&other)));
    let many = ksk.switch_many(&[&ct, &ct]).unwrap();
    assert!(many.iter().all(|c| c.key_id == small.id()));
    assert!(is_key_mismatch(ksk.switch_many(&[&ct, &other])));
    assert!(is_key_mismatch(ksk.switch_many(&[&other, &ct])));

    let compressed = big.encrypt_compressed(0, 0.0, [1; 32], 0, &mut r).unwrap();
    assert_eq!(compressed.key_id, big.id());
    assert_eq!(compressed.decompress().key_id, big.id());
    let extracted = LweCiphertext::sample_extract(&[&[1, 2]], &[3, 4], 5, 1, twin.id()).unwrap();
    assert_eq!(extracted.key_id, twin.id());
}
