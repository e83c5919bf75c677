//! BFV -> TFHE transitions: threshold decisions on BFV coefficients as TFHE
//! bits, decrypted and compared with the plaintext comparison.

use std::sync::{Arc, OnceLock};

use triskel::bfv::{self, biometric, BfvContext, Plaintext};
use triskel::tfhe::{self, ClientKey, TfheParameters};
use triskel::transition::{self, Engine, Error, TransitionKey};

struct Fixture {
    ctx: Arc<BfvContext>,
    bfv_key: bfv::SecretKey,
    tfhe_key: ClientKey,
    server: tfhe::ServerKey,
    key: TransitionKey,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let ctx = BfvContext::new(biometric::coefficient_match_parameters()).unwrap();
        let bfv_key = bfv::SecretKey::generate(&ctx).unwrap();
        let tfhe_key = ClientKey::generate(&triskel::tfhe_set()).unwrap();
        let server = tfhe_key.server_key().unwrap();
        let key = TransitionKey::generate(&bfv_key, &tfhe_key).unwrap();
        Fixture {
            ctx,
            bfv_key,
            tfhe_key,
            server,
            key,
        }
    })
}

/// Signed `values` in the coefficients of one BFV ciphertext.
fn encrypt_coefficients(f: &Fixture, values: &[i64]) -> bfv::Ciphertext {
    let t = f.ctx.plain_modulus() as i64;
    let coeffs: Vec<u64> = values.iter().map(|v| v.rem_euclid(t) as u64).collect();
    f.bfv_key
        .encrypt(&Plaintext::from_coeffs(&f.ctx, &coeffs).unwrap())
        .unwrap()
}

/// The encrypted decisions `value >= threshold` (within 2^tolerance_bits)
/// of `values` placed in the coefficients of one BFV ciphertext.
fn decision_bits(
    f: &Fixture,
    values: &[i64],
    threshold: i64,
    tolerance_bits: u32,
) -> Vec<transition::EncryptedBit> {
    let ct = encrypt_coefficients(f, values);
    let indices: Vec<usize> = (0..values.len()).collect();
    transition::bfv_scores_above(&ct, &indices, threshold, tolerance_bits, &f.key, &f.server)
        .unwrap()
}

fn decide(f: &Fixture, values: &[i64], threshold: i64, tolerance_bits: u32) -> Vec<u64> {
    decision_bits(f, values, threshold, tolerance_bits)
        .iter()
        .map(|b| f.tfhe_key.decrypt_with_carry(b).unwrap())
        .collect()
}

/// Values around the threshold, at the ends of the range, and with carries
/// through every window (all-ones low bits), plus seeded random ones.
#[test]
fn threshold_decisions_are_exact_on_edges_and_at_random() {
    let f = fixture();
    let quarter = (f.ctx.plain_modulus() / 4) as i64;
    // Values in [-t/4, t/4), thresholds in [-t/4, t/4]: the difference
    // stays in [-t/2, t/2).
    for threshold in [1_234_567i64, -quarter] {
        let mut values = vec![
            threshold - 1,
            threshold,
            threshold + 1,
            quarter - 1,
            -quarter,
        ];
        for w in [3, 7, 11, 15, 19] {
            values.extend([threshold + (1 << w) - 1, threshold - (1 << w)]);
        }
        let mut state = threshold as u64 ^ 0x9e37_79b9_7f4a_7c15;
        for _ in 0..5 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            values.push((state >> 20) as i64 % (quarter + 1) * if state & 1 == 0 { 1 } else { -1 });
        }
        values.retain(|v| (-quarter..quarter).contains(v));
        let got = decide(f, &values, threshold, 0);
        for (v, bit) in values.iter().zip(got) {
            assert_eq!(
                bit,
                (*v >= threshold) as u64,
                "value {v}, threshold {threshold}"
            );
        }
    }
}

/// With a tolerance of 2^r the decision reads k - r bits: exact for every
/// value more than 2^r from the threshold (edges, carries through every
/// window, the ends of the range), whatever it says inside the band.
#[test]
fn threshold_decisions_within_a_tolerance() {
    let f = fixture();
    let quarter = (f.ctx.plain_modulus() / 4) as i64;
    for (r, threshold) in [(14u32, 123_457i64), (18, -quarter + (1 << 18))] {
        let band = 1i64 << r;
        let mut values = vec![
            threshold + band + 1,
            threshold - band - 1,
            threshold + band + 2,
            threshold - band - 2,
            quarter - 1,
            -quarter,
        ];
        for w in [r + 1, r + 3, r + 5, 20] {
            values.extend([threshold + (1 << w) - 1, threshold - (1 << w) - 1]);
        }
        let mut state = threshold as u64 ^ 0x2545_f491_4f6c_dd1d;
        for _ in 0..6 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            values.push((state >> 20) as i64 % quarter * if state & 1 == 0 { 1 } else { -1 });
        }
        values.retain(|v| (-quarter..quarter).contains(v) && (v - threshold).abs() > band);
        let got = decide(f, &values, threshold, r);
        for (v, bit) in values.iter().zip(got) {
            assert_eq!(
                bit,
                (*v >= threshold) as u64,
                "value {v}, threshold {threshold}, r {r}"
            );
        }
    }
    // One window for r = 18 (23-bit t); for r = 14 two 4-bit windows lose
    // 4 of their 64 units of margin to the lowest window's rounding, which
    // the analysis counts (and narrows the windows if the bound needs it).
    let q = f.ctx.q_primes()[0];
    let verify = transition::analyse_decision(&f.key, 12.0, q, 23 - 18, true);
    assert_eq!((verify.bootstraps, verify.margin), (1, 64.0));
    let p = f.tfhe_key.parameters();
    let wide = transition::analyse(f.ctx.n(), p, 12.0, q, 23 - 14, 4, true);
    assert_eq!((wide.bootstraps, wide.margin), (2, 60.0));
    let identify = transition::analyse_decision(&f.key, 12.0, q, 23 - 14, true);
    assert!(identify.log2_failure_per_decision <= -128.0, "{identify:?}");
    // A tolerance that leaves fewer than 3 bits, or a threshold whose
    // rounding could wrap around t, is refused.
    let ct = f
        .bfv_key
        .encrypt(&Plaintext::from_coeffs(&f.ctx, &[1]).unwrap())
        .unwrap();
    let run =
        |threshold, r| transition::bfv_scores_above(&ct, &[0], threshold, r, &f.key, &f.server);
    assert!(matches!(run(0, 21), Err(Error::OutOfRange(_))));
    assert!(matches!(
        run(quarter - (1 << 14) + 1, 14),
        Err(Error::OutOfRange(_))
    ));
    assert!(matches!(
        run(-quarter + (1 << 14) - 1, 14),
        Err(Error::OutOfRange(_))
    ));
}

/// The match end to end: 32 scores from one plaintext product, decided
/// within a tolerance and OR-ed, then single scores exactly against
/// thresholds one below, at and one above them.
#[test]
fn match_decision_end_to_end() {
    use biometric::*;
    let f = fixture();
    let pk = f.bfv_key.public_key().unwrap();
    let probe = [127i8; DIM];
    let mut enrolled = sample_embeddings(32, 5);
    enrolled[0] = [127; DIM];
    enrolled[1] = [-127; DIM];
    let want = plaintext_scores(&probe, &enrolled);
    let groups = encode_templates_coefficients(&f.ctx, &enrolled).unwrap();
    let ct = f
        .bfv_key
        .encrypt(&encode_probe_coefficients(&f.ctx, &probe).unwrap())
        .unwrap();
    let scores = compute_scores_coefficients(&ct, &groups, &pk).unwrap();
    let coefficients = score_coefficients(&f.ctx, 32).unwrap();
    // All 32 within a tolerance of 2^18 (one bootstrap each; the exact
    // reading is tested on edges above and on single scores below): every
    // score further than that from the threshold gets the exact answer.
    let (threshold, r) = (want[2], 18);
    let bits =
        transition::bfv_scores_above(&scores[0], &coefficients, threshold, r, &f.key, &f.server)
            .unwrap();
    let mut checked = 0;
    for (j, b) in bits.iter().enumerate() {
        if (want[j] - threshold).abs() > 1 << r {
            let expected = (want[j] >= threshold) as u64;
            assert_eq!(f.tfhe_key.decrypt_with_carry(b).unwrap(), expected, "{j}");
            checked += 1;
        }
    }
    assert!(checked >= 2, "templates 0 and 1 lie far from any threshold");
    let any = transition::any(&f.server, &bits).unwrap();
    assert_eq!(f.tfhe_key.decrypt_with_carry(&any).unwrap(), 1);
    // One template, thresholds around its score and the largest one.
    for (j, threshold, expected) in [
        (2, want[2] - 1, 1),
        (2, want[2] + 1, 0),
        (0, want[0], 1),
        (0, want[0] + 1, 0),
        (1, want[1], 1),
    ] {
        let bits = transition::bfv_scores_above(
            &scores[0],
            &coefficients[j..=j],
            threshold,
            0,
            &f.key,
            &f.server,
        )
        .unwrap();
        assert_eq!(
            f.tfhe_key.decrypt_with_carry(&bits[0]).unwrap(),
            expected,
            "template {j}, threshold {threshold}"
        );
    }
    // Nobody above the largest score + 1: the OR is 0.
    let none = transition::bfv_scores_above(
        &scores[0],
        &coefficients[..3],
        want[0] + 1,
        0,
        &f.key,
        &f.server,
    )
    .unwrap();
    let any = transition::any(&f.server, &none).unwrap();
    assert_eq!(f.tfhe_key.decrypt_with_carry(&any).unwrap(), 0);
}

#[test]
fn the_analysis_supports_the_decision() {
    let f = fixture();
    let a = transition::analyse_decision(&f.key, 12.0, f.ctx.q_primes()[0], 23, false);
    assert_eq!(a.bootstraps, 6);
    assert!(a.log2_failure_per_decision < -128.0, "{a:?}");
    // Key switch 2.76 + modulus switch 18.46 + the previous reading 0.06
    // (the ring switch adds 2^-18): 2^-140.6 for the exact decision.
    assert!((a.input_variance - 21.3).abs() < 0.1, "{a:?}");
    assert!(a.log2_failure_per_decision < -140.0, "{a:?}");
}

#[test]
fn bad_inputs_are_refused() {
    let f = fixture();
    let quarter = (f.ctx.plain_modulus() / 4) as i64;
    let ct = f
        .bfv_key
        .encrypt(&Plaintext::from_coeffs(&f.ctx, &[1]).unwrap())
        .unwrap();
    let run = |threshold| transition::bfv_scores_above(&ct, &[0], threshold, 0, &f.key, &f.server);
    assert!(matches!(run(quarter + 1), Err(Error::OutOfRange(_))));
    assert!(matches!(run(-quarter - 1), Err(Error::OutOfRange(_))));
    assert!(matches!(
        transition::bfv_scores_above(&ct, &[4096], 0, 0, &f.key, &f.server),
        Err(Error::OutOfRange(_))
    ));
    // Another BFV set, another TFHE set.
    let other = BfvContext::new(bfv::BfvParameters::n4096_shallow()).unwrap();
    let other_ct = bfv::SecretKey::generate(&other)
        .unwrap()
        .encrypt(&Plaintext::from_coeffs(&other, &[1]).unwrap())
        .unwrap();
    assert!(matches!(
        transition::bfv_scores_above(&other_ct, &[0], 0, 0, &f.key, &f.server),
        Err(Error::Mismatch(_))
    ));
    let small = ClientKey::generate(&TfheParameters::message_1_carry_1()).unwrap();
    let small_server = small.server_key().unwrap();
    assert!(matches!(
        transition::bfv_scores_above(&ct, &[0], 0, 0, &f.key, &small_server),
        Err(Error::Mismatch(_))
    ));
    // Another TFHE client key of the same set: the transition key delivers
    // under its own TFHE key, so another key's server key is refused.
    let twin = ClientKey::generate(f.tfhe_key.parameters()).unwrap();
    let twin_server = twin.server_key().unwrap();
    match transition::bfv_scores_above(&ct, &[0], 0, 0, &f.key, &twin_server) {
        Err(Error::Tfhe(tfhe::Error::Ring(triskel_ring::Error::KeyMismatch {
            expected,
            found,
            ..
        }))) => assert_eq!((expected, found), (f.tfhe_key.key_id(), twin.key_id())),
        other => panic!("another TFHE key's server key: {other:?}"),
    }
    // Another BFV secret key of the same set: the key reads only its own
    // secret's phases.
    let twin_bfv = bfv::SecretKey::generate(&f.ctx).unwrap();
    let twin_ct = twin_bfv
        .encrypt(&Plaintext::from_coeffs(&f.ctx, &[1]).unwrap())
        .unwrap();
    assert_eq!(f.key.source_key_id(), f.bfv_key.id());
    match transition::bfv_scores_above(&twin_ct, &[0], 0, 0, &f.key, &f.server) {
        Err(Error::Tfhe(tfhe::Error::Ring(triskel_ring::Error::KeyMismatch {
            expected,
            found,
            ..
        }))) => assert_eq!((expected, found), (f.bfv_key.id(), twin_bfv.id())),
        other => panic!("another BFV key's ciphertext: {other:?}"),
    }
    // TFHE -> BFV / CKKS has no homomorphic path: an error that names it.
    let err = transition::check_direction(Engine::Tfhe, Engine::Bfv).unwrap_err();
    assert!(err.to_string().contains("TFHE -> BFV"), "{err}");
    assert!(transition::check_direction(Engine::Tfhe, Engine::Ckks).is_err());
    assert!(transition::check_direction(Engine::Bfv, Engine::Tfhe).is_ok());
    assert!(transition::check_direction(Engine::Ckks, Engine::Tfhe).is_ok());
    assert!(transition::check_direction(Engine::Bfv, Engine::Ckks).is_err());
}

#[test]
fn transition_keys_serialize_and_loading_validates() {
    let f = fixture();
    let bytes = f.key.to_bytes();
    let loaded = TransitionKey::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.to_bytes(), bytes);
    assert_eq!(loaded.source(), f.key.source());
    assert_eq!(loaded.tfhe_key_id(), f.tfhe_key.key_id());
    assert_eq!(loaded.source_key_id(), f.bfv_key.id());
    // The loaded key decides like the original.
    let ct = f
        .bfv_key
        .encrypt(&Plaintext::from_coeffs(&f.ctx, &[7, (1 << 23) - 7]).unwrap())
        .unwrap();
    let bits = transition::bfv_scores_above(&ct, &[0, 1], 0, 0, &loaded, &f.server).unwrap();
    let got: Vec<u64> = bits
        .iter()
        .map(|b| f.tfhe_key.decrypt_with_carry(b).unwrap())
        .collect();
    assert_eq!(got, [1, 0]);

    let reject = |b: &[u8]| TransitionKey::from_bytes(b).unwrap_err();
    assert!(matches!(
        reject(&bytes[..bytes.len() - 1]),
        Error::Malformed(_)
    ));
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(reject(&longer), Error::Malformed(_)));
    let mut bad = bytes.clone();
    bad[0] ^= 1;
    assert!(matches!(reject(&bad), Error::Malformed(_)));
    let mut bad = bytes.clone();
    bad[4] = 9;
    assert_eq!(reject(&bad), Error::UnsupportedVersion(9));
    // Version 1 (an LWE key switch from dimension N) is refused by name.
    bad[4] = 1;
    assert_eq!(reject(&bad), Error::UnsupportedVersion(1));
    assert!(reject(&bad).to_string().contains("generated again"));
    // Versions 2 (no key identities) and 3 (the TFHE one only) are refused
    // with the reason.
    for version in [2, 3] {
        bad[4] = version;
        let e = reject(&bad);
        assert!(
            matches!(&e, Error::Malformed(m) if m.contains("predates key identities")),
            "{e}"
        );
    }
    let mut bad = bytes.clone();
    bad[5] = 3;
    assert!(matches!(reject(&bad), Error::Malformed(_)));
    // BFV parameter bytes announced as CKKS ones.
    let mut bad = bytes.clone();
    bad[5] = 2;
    assert!(matches!(reject(&bad), Error::Ckks(_)));
    // An insecure BFV set in the bytes is refused (nothing waives the check).
    let insecure = bfv::BfvParameters::new("weak", 4096, &[60, 60], &[60], 1 << 23)
        .allow_insecure()
        .to_bytes();
    let mut forged = bytes[..6].to_vec();
    forged.extend_from_slice(&(insecure.len() as u32).to_le_bytes());
    forged.extend_from_slice(&insecure);
    let params_len = u32::from_le_bytes(bytes[6..10].try_into().unwrap()) as usize;
    forged.extend_from_slice(&bytes[10 + params_len..]);
    assert!(
        matches!(reject(&forged), Error::Bfv(_)),
        "{:?}",
        reject(&forged)
    );
    // An unknown TFHE set.
    let mut bad = bytes.clone();
    bad[10 + params_len + 1] ^= 0x20;
    assert!(TransitionKey::from_bytes(&bad).is_err());
    // Mutations of the header and the key's shape (not its seed, which
    // would load: a valid key of other masks) never panic.
    let header = 10 + params_len + 1 + bytes[10 + params_len] as usize + 16 + 16 + 16;
    let mut state = 17u64;
    for _ in 0..300 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut m = bytes.clone();
        let at = (state >> 33) as usize % header;
        m[at] = m[at].wrapping_add(1 + (state >> 8) as u8 % 255);
        let _ = TransitionKey::from_bytes(&m);
        let _ = TransitionKey::from_bytes(&bytes[..(state >> 40) as usize % 200]);
    }
}

/// CKKS -> TFHE: real coefficients against a threshold, on a depth-0
/// N = 4096 set (one 60-bit prime, scale 2^40: values in (-2^19, 2^19)),
/// a tolerance of 2^-13: right for |x - threshold| >= 2^-12.
#[test]
fn ckks_threshold_decisions() {
    use triskel::ckks::{self, CkksContext, CkksParameters};
    let f = fixture();
    let ctx = CkksContext::new(CkksParameters::new(
        "ckks-n4096-d0",
        4096,
        &[60],
        &[46],
        40,
        1,
    ))
    .unwrap();
    let sk = ckks::SecretKey::generate(&ctx).unwrap();
    let key = TransitionKey::generate_for_ckks(&sk, &f.tfhe_key).unwrap();
    let threshold = 0.75;
    let eps = 2f64.powi(-12);
    let values = [
        threshold + eps,
        threshold - eps,
        threshold + 2.0 * eps,
        threshold - 0.5,
        threshold + 100.5,
        -250_000.0,
        250_000.0,
        0.0,
        -0.75,
        1.0 / 3.0,
    ];
    // The declared bound on sum |v_i| (every slot's bound), below 2^19.
    let bound = 500_200.0;
    let pt =
        ckks::Plaintext::from_coefficients(&ctx, &values, 0, ctx.default_scale(), bound).unwrap();
    let ct = sk.encrypt(&pt).unwrap();
    let indices: Vec<usize> = (0..values.len()).collect();
    // Another CKKS secret key's ciphertext of the same set is refused.
    let twin_ct = ckks::SecretKey::generate(&ctx)
        .unwrap()
        .encrypt(&pt)
        .unwrap();
    assert!(matches!(
        transition::ckks_coefficients_above(
            &twin_ct,
            &indices,
            threshold,
            eps / 2.0,
            &key,
            &f.server
        ),
        Err(Error::Tfhe(tfhe::Error::Ring(
            triskel_ring::Error::KeyMismatch { .. }
        )))
    ));
    let (bits, reading) =
        transition::ckks_coefficients_above(&ct, &indices, threshold, eps / 2.0, &key, &f.server)
            .unwrap();
    assert!(reading.tolerance <= eps / 2.0 && reading.log2_failure <= -128.0);
    for (v, b) in values.iter().zip(&bits) {
        assert_eq!(
            f.tfhe_key.decrypt_with_carry(b).unwrap(),
            (*v >= threshold) as u64,
            "{v}"
        );
    }
    // A BFV key does not take CKKS ciphertexts; too much precision is refused.
    assert!(matches!(
        transition::ckks_coefficients_above(&ct, &[0], 0.0, eps, &f.key, &f.server),
        Err(Error::Mismatch(_))
    ));
    // Finer than the ciphertext's error bound; a threshold the torus wraps.
    assert!(transition::ckks_coefficients_above(&ct, &[0], 0.0, 1e-15, &key, &f.server).is_err());
    assert!(transition::ckks_coefficients_above(&ct, &[0], 1e6, eps, &key, &f.server).is_err());
    let loaded = TransitionKey::from_bytes(&key.to_bytes()).unwrap();
    assert_eq!(loaded.source(), key.source());
}

/// `any` over more bits than one bootstrap reads (16 fresh bits on 2_2):
/// 0 when all are 0, 1 when one is 1 wherever it sits, and 1 when all are
/// (a full group of 16 ones, the largest sum a group can hold); encrypted
/// blocks (degree 3) are grouped by their degrees.
#[test]
fn any_over_several_groups() {
    let f = fixture();
    assert_eq!(
        transition::any_bootstraps(f.server.parameters(), 32).unwrap(),
        3
    );
    assert_eq!(
        transition::any_bootstraps(f.server.parameters(), 16).unwrap(),
        1
    );
    // Fresh decision bits (degree 1): one value per coefficient.
    let n = 20usize;
    let far = 1i64 << 20;
    // 17 ones from the start: a group of 17 would wrap to 0 and miss them.
    let all = (0..n).collect::<Vec<_>>();
    for ones in [vec![], vec![0], vec![15], vec![19], all[..17].to_vec(), all] {
        let values: Vec<i64> = (0..n)
            .map(|i| if ones.contains(&i) { far } else { -far })
            .collect();
        let any = transition::any(&f.server, &decision_bits(f, &values, 0, 18)).unwrap();
        assert_eq!(
            f.tfhe_key.decrypt_with_carry(&any).unwrap(),
            !ones.is_empty() as u64,
            "ones at {ones:?}"
        );
    }
    for ones in [vec![], vec![6], (0..7).collect::<Vec<_>>()] {
        let bits: Vec<_> = (0..7)
            .map(|i| f.tfhe_key.encrypt(ones.contains(&i) as u64).unwrap())
            .collect();
        let any = transition::any(&f.server, &bits).unwrap();
        assert_eq!(
            f.tfhe_key.decrypt_with_carry(&any).unwrap(),
            !ones.is_empty() as u64,
            "encrypted ones at {ones:?}"
        );
    }
    assert!(transition::any(&f.server, &[]).is_err());
}

/// One bootstrap decides a 5-bit reading (the 1:1 verification's, t = 2^23
/// within 2^18) at failure <= 2^-128; a 6-bit reading takes two windows,
/// and the exact 23-bit reading (6 windows) stays within 2^-128 too.
#[test]
fn one_bootstrap_decides_five_bits() {
    let f = fixture();
    let q = f.ctx.q_primes()[0];
    let one = transition::analyse_decision(&f.key, 12.0, q, 5, true);
    assert_eq!(one.bootstraps, 1);
    assert!(one.log2_failure_per_decision < -128.0, "{one:?}");
    assert_eq!(one.margin, 64.0);
    assert_eq!(
        transition::analyse_decision(&f.key, 12.0, q, 6, false).bootstraps,
        2
    );
    // The ring switch: N l (B^2 + 2) / 12 sigma^2 (2N)^2 = 2^-18 units
    // (l = 3 digits of 21 bits for the 62-bit prime).
    let ring = 4096.0 * 3.0 * (2f64.powi(42) + 2.0) / 12.0
        * f.tfhe_key.parameters().glwe_noise_std.powi(2)
        * 4096f64.powi(2);
    assert!((one.ring_switch / ring - 1.0).abs() < 1e-12, "{one:?}");
    assert!(one.ring_switch < 2f64.powi(-17));
    let exact = transition::analyse_decision(&f.key, 12.0, q, 23, false);
    assert_eq!(exact.bootstraps, 6);
    assert!(exact.log2_failure_per_decision < -128.0, "{exact:?}");
}

/// The bits of `values` (coefficients of one ciphertext) read to within
/// 2^r, decrypted and assembled into the unsigned M of each.
fn read_values(f: &Fixture, values: &[i64], r: u32) -> Vec<i64> {
    let ct = encrypt_coefficients(f, values);
    let indices: Vec<usize> = (0..values.len()).collect();
    let bits = transition::bfv_value_bits(&ct, &indices, r, &f.key, &f.server).unwrap();
    bits.iter()
        .map(|value| {
            assert_eq!(value.len() as u32, 23 - r);
            value.iter().enumerate().fold(0i64, |m, (j, b)| {
                let bit = f.tfhe_key.decrypt_with_carry(b).unwrap();
                assert!(bit <= 1, "a bit block holds {bit}");
                m | (bit as i64) << j
            })
        })
        .collect()
}

/// Every bit of signed values read exactly (r = 0: M = value + t/2, the
/// extremes of [-t/4, t/4), carries through every bit, random values),
/// and to within 2^r (|M 2^r - (value + t/2)| <= 3 2^(r - 2), values at
/// the rounding's edges).
#[test]
fn value_bits_exact_and_within_a_tolerance() {
    let f = fixture();
    let t = f.ctx.plain_modulus() as i64;
    let quarter = t / 4;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
        (state >> 30) as i64 % (2 * quarter) - quarter
    };
    let exact = [
        -quarter,
        quarter - 1,
        0,
        -1,
        (1 << 20) - 1,
        random(),
        random(),
    ];
    assert_eq!(
        read_values(f, &exact, 0),
        exact.iter().map(|v| v + t / 2).collect::<Vec<_>>()
    );
    for r in [1u32, 14, 19] {
        let unit = 1i64 << r;
        let mut values = vec![-quarter, quarter - 1, 0, -1, random(), random()];
        // Around the rounding of the reading at 2^(r - 1).
        for base in [unit, -2 * unit, 3 * unit] {
            values.extend([base - 1, base, base + 1, base + unit / 2, base + unit / 4]);
        }
        values.retain(|v| (-quarter..quarter).contains(v));
        if r == 1 {
            // 22 bootstraps a value: the edges only.
            values.truncate(4);
        }
        let got = read_values(f, &values, r);
        for (v, m) in values.iter().zip(got) {
            let error = (m << r) - (v + t / 2);
            assert!(
                error.abs() <= 3 * unit / 4,
                "value {v}, r {r}: read {m} ({error} off)"
            );
        }
    }
    // Nothing left to read.
    let ct = f
        .bfv_key
        .encrypt(&Plaintext::from_coeffs(&f.ctx, &[1]).unwrap())
        .unwrap();
    assert!(matches!(
        transition::bfv_value_bits(&ct, &[0], 23, &f.key, &f.server),
        Err(Error::OutOfRange(_))
    ));
}
