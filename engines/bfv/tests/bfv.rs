//! Every operation decrypts to the plaintext computation; noise budgets,
//! errors and parameter checks behave as documented.

use std::sync::{Arc, OnceLock};

use triskel_bfv::*;

struct Fixture {
    ctx: Arc<BfvContext>,
    sk: SecretKey,
    pk: PublicKey,
    rk: RelinKey,
    gk: GaloisKeys,
}

/// One key set for the general N = 4096 parameters, shared by the tests.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let ctx = BfvContext::new(BfvParameters::n4096()).unwrap();
        let sk = SecretKey::generate(&ctx).unwrap();
        Fixture {
            pk: sk.public_key().unwrap(),
            rk: sk.relin_key().unwrap(),
            gk: sk.galois_keys_power_of_two().unwrap(),
            ctx,
            sk,
        }
    })
}

fn values(n: usize, t: u64, seed: u64) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) % t
        })
        .collect()
}

#[test]
fn batch_encoding_round_trips() {
    let f = fixture();
    let t = f.ctx.plain_modulus();
    let v = values(f.ctx.n(), t, 1);
    let pt = Plaintext::from_slots(&f.ctx, &v).unwrap();
    assert_eq!(pt.to_slots().unwrap(), v);
    let signed = vec![-5i64, 7, -32768, 32768];
    let pt = Plaintext::from_signed_slots(&f.ctx, &signed).unwrap();
    assert_eq!(pt.to_signed_slots().unwrap()[..4], signed[..]);
}

#[test]
fn encrypt_decrypt_public_and_symmetric() {
    let f = fixture();
    let v = values(f.ctx.n(), f.ctx.plain_modulus(), 2);
    let pt = Plaintext::from_slots(&f.ctx, &v).unwrap();
    for ct in [f.pk.encrypt(&pt).unwrap(), f.sk.encrypt(&pt).unwrap()] {
        assert_eq!(f.sk.decrypt(&ct).unwrap().to_slots().unwrap(), v);
        let measured = f.sk.noise_budget(&ct).unwrap();
        assert!(measured > 0.0);
        assert!(
            ct.estimated_noise_budget() <= measured,
            "estimate {} measured {measured}",
            ct.estimated_noise_budget()
        );
    }
}

#[test]
fn arithmetic_matches_plaintext() {
    let f = fixture();
    let (n, t) = (f.ctx.n(), f.ctx.plain_modulus());
    let (a, b) = (values(n, t, 3), values(n, t, 4));
    let ca =
        f.pk.encrypt(&Plaintext::from_slots(&f.ctx, &a).unwrap())
            .unwrap();
    let cb =
        f.pk.encrypt(&Plaintext::from_slots(&f.ctx, &b).unwrap())
            .unwrap();
    let pb = Plaintext::from_slots(&f.ctx, &b).unwrap();
    let dec = |c: &Ciphertext| f.sk.decrypt(c).unwrap().to_slots().unwrap();
    let zip = |op: fn(u64, u64, u64) -> u64| -> Vec<u64> {
        a.iter().zip(&b).map(|(&x, &y)| op(x, y, t)).collect()
    };
    assert_eq!(dec(&ca.add(&cb).unwrap()), zip(|x, y, t| (x + y) % t));
    assert_eq!(dec(&ca.sub(&cb).unwrap()), zip(|x, y, t| (x + t - y) % t));
    assert_eq!(
        dec(&ca.neg().unwrap()),
        a.iter().map(|&x| (t - x) % t).collect::<Vec<_>>()
    );
    assert_eq!(dec(&ca.add_plain(&pb).unwrap()), zip(|x, y, t| (x + y) % t));
    assert_eq!(
        dec(&ca.sub_plain(&pb).unwrap()),
        zip(|x, y, t| (x + t - y) % t)
    );
    let mul = |x: u64, y: u64, t: u64| x * y % t;
    assert_eq!(dec(&ca.mul_plain(&pb).unwrap()), zip(mul));
    let prod = ca.mul(&cb).unwrap();
    assert_eq!(prod.size(), 3);
    assert_eq!(dec(&prod), zip(mul), "3-component decryption");
    let relin = prod.relinearize(&f.rk).unwrap();
    assert_eq!(relin.size(), 2);
    assert_eq!(dec(&relin), zip(mul));
    let measured = f.sk.noise_budget(&relin).unwrap();
    assert!(relin.estimated_noise_budget() <= measured);
    let sq = ca.square().unwrap().relinearize(&f.rk).unwrap();
    assert_eq!(dec(&sq), a.iter().map(|&x| x * x % t).collect::<Vec<_>>());
}

#[test]
fn rotations_move_slots() {
    let f = fixture();
    let (n, t) = (f.ctx.n(), f.ctx.plain_modulus());
    let half = n / 2;
    let v = values(n, t, 5);
    let ct =
        f.pk.encrypt(&Plaintext::from_slots(&f.ctx, &v).unwrap())
            .unwrap();
    for steps in [1i64, 5, -3, 64, 2047] {
        let r = ct.rotate_rows(steps, &f.gk).unwrap();
        let got = f.sk.decrypt(&r).unwrap().to_slots().unwrap();
        for row in 0..2 {
            for c in 0..half {
                let src = (c as i64 + steps).rem_euclid(half as i64) as usize;
                assert_eq!(got[row * half + c], v[row * half + src], "steps {steps}");
            }
        }
        assert!(r.estimated_noise_budget() <= f.sk.noise_budget(&r).unwrap());
    }
    // Hoisted: one ModUp and one ModDown for the whole sum.
    let steps = [0i64, 1, 4, -2, 1];
    let r = ct.sum_of_rotations(&steps, &f.gk).unwrap();
    let got = f.sk.decrypt(&r).unwrap().to_slots().unwrap();
    for row in 0..2 {
        for c in 0..half {
            let want = steps.iter().fold(0, |acc, &s| {
                let src = (c as i64 + s).rem_euclid(half as i64) as usize;
                (acc + v[row * half + src]) % t
            });
            assert_eq!(got[row * half + c], want, "slot {c} of row {row}");
        }
    }
    assert!(r.estimated_noise_budget() <= f.sk.noise_budget(&r).unwrap());
    let few = f.sk.galois_keys(&[1], false).unwrap();
    assert!(matches!(
        ct.sum_of_rotations(&[1, 2], &few),
        Err(Error::MissingKey(_))
    ));
    assert!(matches!(
        ct.sum_of_rotations(&[], &few),
        Err(Error::InvalidParameters(_))
    ));
    let swapped =
        f.sk.decrypt(&ct.rotate_columns(&f.gk).unwrap())
            .unwrap()
            .to_slots()
            .unwrap();
    assert_eq!(swapped[..half], v[half..]);
    assert_eq!(swapped[half..], v[..half]);
    // The rotate-and-add tree with lazy ModDown (3 has no key of its own:
    // two rotations inside the step), against the same tree on the slots.
    let steps = [4i64, 2, 1, 3];
    let r = ct.rotation_tree_sum(&steps, &f.gk).unwrap();
    let mut want = v.clone();
    for &s in &steps {
        let prev = want.clone();
        for row in 0..2 {
            for c in 0..half {
                let src = (c as i64 + s).rem_euclid(half as i64) as usize;
                want[row * half + c] = (prev[row * half + c] + prev[row * half + src]) % t;
            }
        }
    }
    assert_eq!(f.sk.decrypt(&r).unwrap().to_slots().unwrap(), want);
    assert!(r.estimated_noise_budget() <= f.sk.noise_budget(&r).unwrap());
    assert!(matches!(
        ct.rotation_tree_sum(&[2], &few),
        Err(Error::MissingKey(_))
    ));
}

#[test]
fn mod_switch_keeps_the_message() {
    let f = fixture();
    let v = values(f.ctx.n(), f.ctx.plain_modulus(), 6);
    let ct =
        f.pk.encrypt(&Plaintext::from_slots(&f.ctx, &v).unwrap())
            .unwrap();
    let low = ct.mod_switch_to_next().unwrap();
    assert_eq!(low.level(), ct.level() - 1);
    assert_eq!(f.sk.decrypt(&low).unwrap().to_slots().unwrap(), v);
    assert!(low.estimated_noise_budget() <= f.sk.noise_budget(&low).unwrap());
    assert!(matches!(low.mod_switch_to_next(), Err(Error::LowestLevel)));
    assert!(matches!(low.add(&ct), Err(Error::LevelMismatch { .. })));
}

#[test]
fn noise_budget_shrinks_and_exhaustion_is_an_error() {
    let f = fixture();
    let ct =
        f.pk.encrypt(&Plaintext::from_slots(&f.ctx, &[3, 2, 1]).unwrap())
            .unwrap();
    let fresh = f.sk.noise_budget(&ct).unwrap();
    let once = ct.square().unwrap().relinearize(&f.rk).unwrap();
    let after = f.sk.noise_budget(&once).unwrap();
    assert!(
        after < fresh - 10.0,
        "multiplication costs budget: {fresh} -> {after}"
    );
    assert_eq!(
        f.sk.decrypt(&once).unwrap().to_slots().unwrap()[..3],
        [9, 4, 1]
    );
    // Squaring again needs more than the 72-bit Q of this set can give.
    let mut x = once;
    let err = loop {
        match x.square().and_then(|y| y.relinearize(&f.rk)) {
            Ok(y) => {
                assert!(y.estimated_noise_budget() > 0.0);
                assert!(
                    f.sk.noise_budget(&y).unwrap() > 0.0,
                    "an accepted result decrypts"
                );
                x = y;
            }
            Err(e) => break e,
        }
    };
    assert!(matches!(err, Error::NoiseBudgetExhausted { .. }), "{err}");
}

#[test]
fn keys_and_parameters_are_checked() {
    let f = fixture();
    let other = BfvContext::new(BfvParameters::n4096_shallow()).unwrap();
    let other_sk = SecretKey::generate(&other).unwrap();
    let pt = Plaintext::from_slots(&f.ctx, &[1]).unwrap();
    let ct = f.pk.encrypt(&pt).unwrap();
    assert_eq!(other_sk.decrypt(&ct).unwrap_err(), Error::ParameterMismatch);
    assert!(matches!(
        other_sk.public_key().unwrap().encrypt(&pt),
        Err(Error::ParameterMismatch)
    ));
    let other_ct = other_sk
        .encrypt(&Plaintext::from_slots(&other, &[1]).unwrap())
        .unwrap();
    assert!(matches!(ct.add(&other_ct), Err(Error::ParameterMismatch)));
    assert!(matches!(
        ct.relinearize(&f.rk),
        Err(Error::CiphertextSize {
            expected: 3,
            got: 2
        })
    ));
    let few = f.sk.galois_keys(&[1], false).unwrap();
    assert!(matches!(ct.rotate_columns(&few), Err(Error::MissingKey(_))));
    assert!(matches!(ct.rotate_rows(6, &few), Err(Error::MissingKey(_))));
    assert!(matches!(
        Plaintext::from_slots(&f.ctx, &[f.ctx.plain_modulus()]),
        Err(Error::Encoding(_))
    ));
    assert!(matches!(
        Plaintext::from_slots(&f.ctx, &vec![0; f.ctx.n() + 1]),
        Err(Error::Encoding(_))
    ));
    // Too large a modulus for n = 4096 is refused unless explicitly allowed.
    let big = BfvParameters::new("too-big", 4096, &[50, 50], &[50], 65537);
    assert!(matches!(
        BfvContext::new(big.clone()),
        Err(Error::Insecure {
            log_qp: 150,
            max_log_qp: 106,
            ..
        })
    ));
    assert!(BfvContext::new(big.allow_insecure()).is_ok());
    let no_batching = BfvContext::new(BfvParameters::n4096().with_plain_modulus(1 << 16)).unwrap();
    assert!(!no_batching.supports_batching());
    assert!(matches!(
        Plaintext::from_slots(&no_batching, &[1]),
        Err(Error::Encoding(_))
    ));
    for bad in [
        BfvParameters::new("n", 3000, &[36], &[37], 65537),
        BfvParameters::new("t", 4096, &[36], &[37], 1 << 40),
        BfvParameters::new("dnum", 4096, &[36], &[37], 65537).with_dnum(2),
    ] {
        assert!(matches!(
            BfvContext::new(bad),
            Err(Error::InvalidParameters(_))
        ));
    }
}

#[test]
fn coefficient_encoding_with_a_power_of_two_modulus() {
    let ctx = BfvContext::new(BfvParameters::n4096().with_plain_modulus(1 << 16)).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let rk = sk.relin_key().unwrap();
    // (1 + 2X) * (3 + X^4095) = 3 + 6X + X^4095 + 2 X^4096 = 1 + 6X + X^4095 (mod X^n + 1)
    let mut a = vec![0u64; 4096];
    a[0] = 1;
    a[1] = 2;
    let mut b = vec![0u64; 4096];
    b[0] = 3;
    b[4095] = 1;
    let ca = sk
        .encrypt(&Plaintext::from_coeffs(&ctx, &a).unwrap())
        .unwrap();
    let cb = sk
        .encrypt(&Plaintext::from_coeffs(&ctx, &b).unwrap())
        .unwrap();
    let got = sk
        .decrypt(&ca.mul(&cb).unwrap().relinearize(&rk).unwrap())
        .unwrap();
    let mut want = vec![0u64; 4096];
    want[0] = 1;
    want[1] = 6;
    want[4095] = 1;
    assert_eq!(got.coeffs(), &want[..]);
}

#[test]
fn serialization_round_trips_and_rejects_corruption() {
    let f = fixture();
    let v = values(f.ctx.n(), f.ctx.plain_modulus(), 9);
    let pt = Plaintext::from_slots(&f.ctx, &v).unwrap();
    let params = BfvParameters::from_bytes(&f.ctx.params().to_bytes()).unwrap();
    assert_eq!(&params, f.ctx.params());

    let sym = f.sk.encrypt(&pt).unwrap();
    let public = f.pk.encrypt(&pt).unwrap();
    let (sym_bytes, pub_bytes) = (sym.to_bytes(), public.to_bytes());
    assert!(
        sym_bytes.len() < pub_bytes.len() * 6 / 10,
        "seed compression halves a fresh ciphertext"
    );
    for bytes in [&sym_bytes, &pub_bytes] {
        let back = Ciphertext::from_bytes(bytes, &f.ctx).unwrap();
        assert_eq!(f.sk.decrypt(&back).unwrap().to_slots().unwrap(), v);
    }
    let sk = SecretKey::from_bytes(&f.sk.to_bytes(), &f.ctx).unwrap();
    assert_eq!(sk.decrypt(&sym).unwrap().to_slots().unwrap(), v);
    let pk = PublicKey::from_bytes(&f.pk.to_bytes(), &f.ctx).unwrap();
    assert_eq!(
        f.sk.decrypt(&pk.encrypt(&pt).unwrap())
            .unwrap()
            .to_slots()
            .unwrap(),
        v
    );
    let rk = RelinKey::from_bytes(&f.rk.to_bytes(), &f.ctx).unwrap();
    let sq = public.square().unwrap().relinearize(&rk).unwrap();
    assert_eq!(
        f.sk.decrypt(&sq).unwrap().to_slots().unwrap(),
        v.iter().map(|&x| x * x % 65537).collect::<Vec<_>>()
    );
    let gk =
        GaloisKeys::from_bytes(&f.sk.galois_keys(&[1], false).unwrap().to_bytes(), &f.ctx).unwrap();
    let rotated =
        f.sk.decrypt(&public.rotate_rows(1, &gk).unwrap())
            .unwrap()
            .to_slots()
            .unwrap();
    assert_eq!(rotated[0], v[1]);
    // Every key and ciphertext keeps its secret key's identity.
    let id = f.sk.id();
    assert_eq!((sk.id(), pk.id(), rk.id(), gk.id()), (id, id, id, id));
    for bytes in [&sym_bytes, &pub_bytes] {
        assert_eq!(Ciphertext::from_bytes(bytes, &f.ctx).unwrap().key_id(), id);
    }
    assert_eq!(sq.key_id(), id);
    // Version 2 predates key identities: its parameters still load, its
    // keys and ciphertexts are refused, saying why.
    let v2 = |mut b: Vec<u8>| {
        assert_eq!(b[4], triskel_bfv::FORMAT_VERSION);
        b[4] = 2;
        b
    };
    assert_eq!(
        BfvParameters::from_bytes(&v2(f.ctx.params().to_bytes())).unwrap(),
        *f.ctx.params()
    );
    let refusals = [
        Ciphertext::from_bytes(&v2(pub_bytes.clone()), &f.ctx).map(drop),
        SecretKey::from_bytes(&v2(f.sk.to_bytes().to_vec()), &f.ctx).map(drop),
        PublicKey::from_bytes(&v2(f.pk.to_bytes()), &f.ctx).map(drop),
        RelinKey::from_bytes(&v2(f.rk.to_bytes()), &f.ctx).map(drop),
        GaloisKeys::from_bytes(&v2(gk.to_bytes()), &f.ctx).map(drop),
    ];
    for refused in refusals {
        match refused {
            Err(Error::Malformed(m)) => assert!(m.contains("predates key identities"), "{m}"),
            other => panic!("a version-2 object loaded: {other:?}"),
        }
    }

    // Truncations, a trailing byte, bad headers and out-of-range residues.
    for cut in [0, 3, 5, 6, 20, pub_bytes.len() / 2, pub_bytes.len() - 1] {
        assert!(
            Ciphertext::from_bytes(&pub_bytes[..cut], &f.ctx).is_err(),
            "cut at {cut}"
        );
    }
    let mut longer = pub_bytes.clone();
    longer.push(0);
    assert!(matches!(
        Ciphertext::from_bytes(&longer, &f.ctx),
        Err(Error::Malformed(_))
    ));
    let mut bad = pub_bytes.clone();
    bad[0] ^= 1;
    assert!(matches!(
        Ciphertext::from_bytes(&bad, &f.ctx),
        Err(Error::Malformed(_))
    ));
    let mut bad = pub_bytes.clone();
    let last = bad.len() - 1;
    bad[last] = 0xff; // the top byte of the last residue: now above q
    assert!(matches!(
        Ciphertext::from_bytes(&bad, &f.ctx),
        Err(Error::Malformed(_))
    ));
    assert!(matches!(
        PublicKey::from_bytes(&pub_bytes, &f.ctx),
        Err(Error::Malformed(_))
    ));
    let other = BfvContext::new(BfvParameters::n4096_shallow()).unwrap();
    assert_eq!(
        Ciphertext::from_bytes(&pub_bytes, &other).unwrap_err(),
        Error::ParameterMismatch
    );
}

/// Runs the match and decrypts every slot: scores exact, everything else 0.
fn run_match(
    params: BfvParameters,
    templates: usize,
    privacy: biometric::MatchPrivacy,
) -> (SecretKey, Vec<Ciphertext>) {
    use biometric::*;
    let ctx = BfvContext::new(params).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let keys = match_keys(&sk).unwrap();
    let mut probe = biometric::sample_embeddings(1, 77)[0];
    let mut enrolled = biometric::sample_embeddings(templates, 78);
    // Extreme values: the largest possible scores in both signs.
    probe[..].fill(127);
    enrolled[0] = [127; DIM];
    enrolled[1] = [-127; DIM];
    let encoded = encode_templates(&ctx, &enrolled).unwrap();
    let ct = sk.encrypt(&encode_probe(&ctx, &probe).unwrap()).unwrap();
    let scores = compute_scores(&ct, &encoded, &keys, privacy).unwrap();
    let want = plaintext_scores(&probe, &enrolled);
    assert_eq!(want[0], 128 * 127 * 127);
    for (g, s) in scores.iter().enumerate() {
        let slots = sk.decrypt(s).unwrap().to_signed_slots().unwrap();
        for (i, &v) in slots.iter().enumerate() {
            let template = g * ctx.n() / DIM + i / DIM;
            let expected = match want.get(template) {
                Some(&score) if i % DIM == 0 => score,
                _ => 0,
            };
            assert_eq!(v, expected, "group {g}, slot {i}");
        }
        let measured = sk.noise_budget(s).unwrap();
        assert!(
            s.estimated_noise_budget() <= measured,
            "{} > {measured}",
            s.estimated_noise_budget()
        );
    }
    assert_eq!(decrypt_scores(&sk, &scores, templates).unwrap(), want);
    (sk, scores)
}

#[test]
fn biometric_match_returns_only_the_scores() {
    use biometric::*;
    run_match(match_parameters().unwrap(), 64, MatchPrivacy::Masked);
    run_match(match_parameters().unwrap(), 70, MatchPrivacy::Masked);
}

#[test]
fn biometric_match_at_n16384() {
    use biometric::*;
    let params = match_parameters_for(BfvParameters::n16384()).unwrap();
    run_match(params, 128, MatchPrivacy::Masked);
}

/// The N = 4096 sets have no room for the mask: a clear error, not garbage.
#[test]
fn biometric_match_without_noise_room_is_refused() {
    use biometric::*;
    let ctx =
        BfvContext::new(match_parameters_for(BfvParameters::n4096_shallow()).unwrap()).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let probe = sample_embeddings(1, 5)[0];
    let ct = sk.encrypt(&encode_probe(&ctx, &probe).unwrap()).unwrap();
    let encoded = encode_templates(&ctx, &sample_embeddings(3, 6)).unwrap();
    let got = compute_scores(
        &ct,
        &encoded,
        &match_keys(&sk).unwrap(),
        MatchPrivacy::Masked,
    );
    assert!(
        matches!(got, Err(Error::NoiseBudgetExhausted { .. })),
        "{got:?}"
    );
}

/// log2 of the largest |noise| coefficient, from the measured budget:
/// budget = log2 Q - log2 max|t e| - 1.
fn measured_noise_log2(sk: &SecretKey, ct: &Ciphertext) -> f64 {
    let ctx = sk.context();
    let log2_q: f64 = ctx.q_primes()[..=ct.level()]
        .iter()
        .map(|&q| (q as f64).log2())
        .sum();
    log2_q - 1.0 - sk.noise_budget(ct).unwrap() - (ctx.plain_modulus() as f64).log2()
}

/// Flooded outputs: scores exact, other slots 0, and the noise spread is the
/// flooding distribution's (uniform on [-2^f, 2^f], so its largest
/// coefficient is within a bit of 2^f in every run), far above what the
/// computation itself leaves.
#[test]
fn flooded_biometric_match_hides_the_computation_noise() {
    use biometric::*;
    let params = private_match_parameters().unwrap();
    let (sk, masked) = run_match(params.clone(), 8, MatchPrivacy::Masked);
    let n = sk.context().n() as f64;
    // The exponent flood() picks: 2^(f+1) >= n E 2^lambda, E = 10 sigma.
    let lambda = FLOODING_SECURITY as f64;
    let f = (masked[0].noise_estimate_log2() + 10f64.log2() + n.log2() + lambda - 1.0).ceil();
    let computation = measured_noise_log2(&sk, &masked[0]);
    assert!(computation < f - lambda, "{computation} vs 2^{f}");
    for _ in 0..6 {
        let (sk, flooded) = run_match(params.clone(), 8, MatchPrivacy::flooded());
        let spread = measured_noise_log2(&sk, &flooded[0]);
        assert!(
            (spread - f).abs() < 0.5,
            "largest noise 2^{spread}, flooding 2^{f}"
        );
    }
}

#[test]
fn biometric_match_rejects_bad_features() {
    use biometric::*;
    let ctx = BfvContext::new(match_parameters().unwrap()).unwrap();
    let mut probe = [0i8; DIM];
    probe[3] = i8::MIN;
    assert!(matches!(
        encode_probe(&ctx, &probe),
        Err(Error::Encoding(_))
    ));
    // A plaintext modulus the scores would wrap in (65537 < 2 x 128 x
    // 127^2) is refused by every entry, not answered with wrapped scores.
    let small = BfvContext::new(BfvParameters::n8192()).unwrap();
    assert_eq!(small.plain_modulus(), 65537);
    let sk = SecretKey::generate(&small).unwrap();
    let probe = sample_embeddings(1, 5)[0];
    let zero = sk
        .encrypt(&Plaintext::from_coeffs(&small, &[0]).unwrap())
        .unwrap();
    for err in [
        encode_probe(&small, &probe).err(),
        encode_templates(&small, &sample_embeddings(2, 6)).err(),
        decrypt_scores(&sk, &[], 1).err(),
        extract_scores(std::slice::from_ref(&zero), 1).err(),
    ] {
        assert!(
            matches!(&err, Some(Error::InvalidParameters(m)) if m.contains("too small for match scores")),
            "{err:?}"
        );
    }
    // A count far above the scores is an error, not an allocation.
    let enc = encode_probe(&ctx, &probe).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let ct = sk.encrypt(&enc).unwrap();
    assert!(decrypt_scores(&sk, &[ct], usize::MAX).is_err());
}

#[test]
fn every_named_set_is_secure_and_round_trips() {
    for params in BfvParameters::named() {
        let ctx = BfvContext::new(params.clone()).unwrap();
        let max = max_log_qp_128(ctx.n()).unwrap() as f64;
        assert!(
            ctx.log2_qp() <= max,
            "{}: log2 QP {} > {max}",
            params.name(),
            ctx.log2_qp()
        );
        assert!(ctx.supports_batching());
        let sk = SecretKey::generate(&ctx).unwrap();
        let v = values(ctx.n(), ctx.plain_modulus(), 11);
        let ct = sk
            .encrypt(&Plaintext::from_slots(&ctx, &v).unwrap())
            .unwrap();
        assert_eq!(
            sk.decrypt(&ct).unwrap().to_slots().unwrap(),
            v,
            "{}",
            params.name()
        );
    }
}

#[test]
fn large_plaintext_moduli_decrypt_exactly() {
    // t close to the 35-bit primes of the set: decryption's fixed-point sum
    // and its division-free reduction at their limits.
    let t = (1u64 << 33) + 27;
    let ctx = BfvContext::new(BfvParameters::n4096().with_plain_modulus(t)).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let mut coeffs = values(ctx.n(), t, 12);
    coeffs[..4].copy_from_slice(&[0, 1, t - 1, t / 2]);
    let pt = Plaintext::from_coeffs(&ctx, &coeffs).unwrap();
    assert_eq!(
        sk.decrypt(&sk.encrypt(&pt).unwrap()).unwrap().coeffs(),
        &coeffs[..]
    );
    // Below every prime, but 8 t >= 2^63 with six ciphertext primes.
    let too_big = BfvParameters::new("t", 4096, &[62; 6], &[62], (1 << 60) + 1).allow_insecure();
    match BfvContext::new(too_big) {
        Err(Error::InvalidParameters(m)) => assert!(m.contains("2^63"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// Bytes are evidence: an insecure set loads only through the explicit
/// `from_bytes_insecure`, and version-1 bytes (which carried a flag that
/// waived the check) are refused.
#[test]
fn loaded_parameters_never_waive_the_security_check() {
    let insecure = BfvParameters::new("too-big", 4096, &[50, 50], &[50], 65537).allow_insecure();
    let bytes = insecure.to_bytes();
    assert!(matches!(
        BfvParameters::from_bytes(&bytes),
        Err(Error::Insecure { .. })
    ));
    let loaded = BfvParameters::from_bytes_insecure(&bytes).unwrap();
    assert_eq!(loaded, insecure);
    assert!(BfvContext::new(loaded).is_ok());
    let mut v1 = BfvParameters::n4096().to_bytes();
    v1[4] = 1;
    v1.push(1); // the old allow_insecure byte
    assert!(matches!(
        BfvParameters::from_bytes(&v1),
        Err(Error::Malformed(m)) if m.contains("version 1")
    ));
}

/// The 538-byte denial of service (n = 32768 with 255 + 255 primes of 62
/// bits) is refused at once, even as an insecure set, and a set at the cap
/// builds: per-level tables no longer grow as k^3.
#[test]
fn huge_prime_counts_are_refused_before_any_work() {
    let dos = BfvParameters::new("dos", 32768, &[62; 255], &[62; 255], 65537).allow_insecure();
    let bytes = dos.to_bytes();
    assert!(bytes.len() < 600);
    match BfvParameters::from_bytes_insecure(&bytes) {
        Err(Error::InvalidParameters(m)) => assert!(m.contains("at most 64"), "{m}"),
        other => panic!("{other:?}"),
    }
    let many = BfvParameters::new("many", 4096, &[40; 60], &[40; 4], 65537)
        .with_dnum(15)
        .allow_insecure();
    let ctx = BfvContext::new(many).unwrap();
    assert_eq!(ctx.max_level(), 59);
    let sk = SecretKey::generate(&ctx).unwrap();
    let ct = sk
        .encrypt(&Plaintext::from_slots(&ctx, &[5, 6]).unwrap())
        .unwrap();
    let low = ct
        .mod_switch_to_next()
        .unwrap()
        .mod_switch_to_next()
        .unwrap();
    assert_eq!(sk.decrypt(&low).unwrap().to_slots().unwrap()[..2], [5, 6]);
}

/// A set whose Q cannot hold a fresh encryption at this t is refused up
/// front, instead of encrypting to garbage.
#[test]
fn sets_whose_fresh_encryptions_would_not_decrypt_are_refused() {
    let t = 1_032_193; // a 20-bit prime = 1 mod 8192
    let small = BfvParameters::new("small-q", 4096, &[30], &[30], t);
    match BfvContext::new(small) {
        Err(Error::InvalidParameters(m)) => assert!(m.contains("would not decrypt"), "{m}"),
        other => panic!("{other:?}"),
    }
    // A few bits more and it works.
    let ok = BfvParameters::new("ok-q", 4096, &[40], &[40], t);
    let ctx = BfvContext::new(ok).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let ct = sk
        .public_key()
        .unwrap()
        .encrypt(&Plaintext::from_slots(&ctx, &[t - 1]).unwrap());
    assert_eq!(
        sk.decrypt(&ct.unwrap()).unwrap().to_slots().unwrap()[0],
        t - 1
    );
}

/// The byte offset of a ciphertext's noise estimate: after the header and
/// parameters (which the parameter bytes give), the key id and level + size.
fn noise_offset(ct_bytes: &[u8], params: &BfvParameters) -> usize {
    let params_len = params.to_bytes().len();
    assert_eq!(ct_bytes[..4], params.to_bytes()[..4]);
    params_len + 16 + 2
}

/// A loaded ciphertext's noise estimate is never below a fresh
/// encryption's, and one that claims an exhausted budget is refused.
#[test]
fn loaded_noise_estimates_are_floored_and_checked() {
    let f = fixture();
    let pt = Plaintext::from_slots(&f.ctx, &[1, 2, 3]).unwrap();
    let fresh = f.sk.encrypt(&pt).unwrap();
    let lower = f.pk.encrypt(&pt).unwrap().mod_switch_to_next().unwrap();
    for ct in [&fresh, &lower] {
        let mut bytes = ct.to_bytes();
        let at = noise_offset(&bytes, f.ctx.params());
        assert_eq!(
            bytes[at..at + 8],
            ct.noise_estimate_log2().to_le_bytes(),
            "offset of the noise estimate"
        );
        bytes[at..at + 8].copy_from_slice(&(-8.0f64).to_le_bytes());
        let loaded = Ciphertext::from_bytes(&bytes, &f.ctx).unwrap();
        assert!(loaded.noise_estimate_log2() > 0.0);
        assert!(loaded.noise_estimate_log2() <= ct.noise_estimate_log2() + 1e-9);
        bytes[at..at + 8].copy_from_slice(&500.0f64.to_le_bytes());
        assert!(matches!(
            Ciphertext::from_bytes(&bytes, &f.ctx),
            Err(Error::NoiseBudgetExhausted { .. })
        ));
    }
    // The floor is a fresh symmetric encryption's at the top level.
    let mut bytes = fresh.to_bytes();
    let at = noise_offset(&bytes, f.ctx.params());
    bytes[at..at + 8].copy_from_slice(&0.0f64.to_le_bytes());
    let loaded = Ciphertext::from_bytes(&bytes, &f.ctx).unwrap();
    assert!((loaded.noise_estimate_log2() - fresh.noise_estimate_log2()).abs() < 1e-9);
}

/// Galois keys have one encoding: entries strictly increasing.
#[test]
fn galois_keys_load_only_in_canonical_order() {
    let f = fixture();
    let keys = f.sk.galois_keys(&[1, 2], false).unwrap();
    let bytes = keys.to_bytes();
    assert_eq!(
        GaloisKeys::from_bytes(&bytes, &f.ctx).unwrap().to_bytes(),
        bytes
    );
    // Split the entries (g: u32 | len: u32 | blob) and write them reversed.
    let head = f.ctx.params().to_bytes().len() + 16;
    let count = u32::from_le_bytes(bytes[head..head + 4].try_into().unwrap()) as usize;
    assert_eq!(count, 2);
    let mut entries = Vec::new();
    let mut at = head + 4;
    for _ in 0..count {
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        entries.push(&bytes[at..at + 8 + len]);
        at += 8 + len;
    }
    assert_eq!(at, bytes.len());
    let mut reversed = bytes[..head + 4].to_vec();
    reversed.extend_from_slice(entries[1]);
    reversed.extend_from_slice(entries[0]);
    assert!(matches!(
        GaloisKeys::from_bytes(&reversed, &f.ctx),
        Err(Error::Malformed(_))
    ));
    let mut doubled = bytes[..head].to_vec();
    doubled.extend_from_slice(&2u32.to_le_bytes());
    doubled.extend_from_slice(entries[0]);
    doubled.extend_from_slice(entries[0]);
    assert!(matches!(
        GaloisKeys::from_bytes(&doubled, &f.ctx),
        Err(Error::Malformed(_))
    ));
}

/// The coefficient-encoded match: one plaintext product per 32 templates,
/// the scores read from the extracted LWE ciphertexts only, exact at the
/// extremes; the full ciphertext does hold other (partial-sum) coefficients,
/// which is why only extraction leaves the server.
#[test]
fn coefficient_match_extracts_exact_scores() {
    use biometric::*;
    let ctx = BfvContext::new(coefficient_match_parameters()).unwrap();
    assert_eq!(ctx.n(), 4096);
    let sk = SecretKey::generate(&ctx).unwrap();
    let pk = sk.public_key().unwrap();
    let mut probe = sample_embeddings(1, 91)[0];
    let mut enrolled = sample_embeddings(40, 92);
    probe[..].fill(127);
    enrolled[0] = [127; DIM];
    enrolled[1] = [-127; DIM];
    enrolled[33] = [-127; DIM];
    let groups = encode_templates_coefficients(&ctx, &enrolled).unwrap();
    assert_eq!(groups.len(), 2);
    let ct = sk
        .encrypt(&encode_probe_coefficients(&ctx, &probe).unwrap())
        .unwrap();
    let scores = compute_scores_coefficients(&ct, &groups, &pk).unwrap();
    let lwes = extract_scores(&scores, 40).unwrap();
    assert_eq!(lwes.len(), 40);
    assert_eq!(lwes[0].dimension(), 4096);
    let want = plaintext_scores(&probe, &enrolled);
    assert_eq!(want[1], -128 * 127 * 127);
    assert_eq!(decrypt_extracted_scores(&sk, &lwes).unwrap(), want);
    // The same coefficients decrypt from the whole ciphertext, and the
    // others are not zero: the extraction is what keeps them back.
    let t = ctx.plain_modulus() as i64;
    let whole = sk.decrypt(&scores[0]).unwrap();
    let centered = |v: u64| {
        if v as i64 > t / 2 {
            v as i64 - t
        } else {
            v as i64
        }
    };
    let coeffs = score_coefficients(&ctx, 32).unwrap();
    for (j, &c) in coeffs.iter().enumerate() {
        assert_eq!(centered(whole.coeffs()[c]), want[j]);
    }
    assert!(whole.coeffs()[126] != 0 && whole.coeffs()[128] != 0);
    // Above level 0 or past n, extraction is refused.
    assert!(scores[0].sample_extract(&[4096]).is_err());
    assert!(score_coefficients(&ctx, 33).is_err());
    assert!(extract_scores(&scores, 65).is_err());
    let deep = BfvContext::new(BfvParameters::n4096()).unwrap();
    let dk = SecretKey::generate(&deep).unwrap();
    let ct = dk
        .encrypt(&Plaintext::from_coeffs(&deep, &[5]).unwrap())
        .unwrap();
    assert!(ct.sample_extract(&[0]).is_err());
    let low = ct.mod_switch_to_next().unwrap();
    assert_eq!(
        dk.decrypt_lwe(&low.sample_extract(&[0]).unwrap()[0])
            .unwrap(),
        5
    );
}

/// A set re-split into 31-bit primes (the bases `for_this_machine` builds
/// where the `neon` kernels are the fastest) computes exactly like the
/// original: products with relinearization, rotations, decryption.
#[test]
fn a_set_of_31_bit_primes_computes_exactly() {
    let params = BfvParameters::n4096().with_prime_bits(31).unwrap();
    assert_eq!(params.q_bits(), [24, 23, 23]);
    assert_eq!(params.p_bits(), [31]);
    assert_eq!(params.dnum(), 3);
    let ctx = BfvContext::new(params).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let (rk, gk) = (
        sk.relin_key().unwrap(),
        sk.galois_keys_power_of_two().unwrap(),
    );
    let (n, t) = (ctx.n(), ctx.plain_modulus());
    let (a, b) = (values(n, t, 7), values(n, t, 8));
    let pk = sk.public_key().unwrap();
    let ca = pk
        .encrypt(&Plaintext::from_slots(&ctx, &a).unwrap())
        .unwrap();
    let cb = pk
        .encrypt(&Plaintext::from_slots(&ctx, &b).unwrap())
        .unwrap();
    let prod = ca.mul(&cb).unwrap().relinearize(&rk).unwrap();
    let got = sk.decrypt(&prod).unwrap().to_slots().unwrap();
    let want: Vec<u64> = a.iter().zip(&b).map(|(&x, &y)| x * y % t).collect();
    assert_eq!(got, want);
    let half = n / 2;
    let rotated = sk
        .decrypt(&prod.rotate_rows(1, &gk).unwrap())
        .unwrap()
        .to_slots()
        .unwrap();
    assert_eq!(rotated[0], want[1]);
    assert_eq!(rotated[half - 1], want[0]);
    // Off AArch64-without-SVE the machine's width is the set's own.
    #[cfg(not(target_arch = "aarch64"))]
    assert_eq!(
        BfvParameters::n4096().for_this_machine().unwrap(),
        BfvParameters::n4096()
    );
}

/// A second key of the same parameter set: every entry that combines a
/// ciphertext with a key or with another ciphertext refuses the other key's
/// with `KeyMismatch`, before any work.
#[test]
fn values_and_keys_of_another_secret_key_are_refused() {
    use biometric::*;
    let f = fixture();
    let other = SecretKey::generate(&f.ctx).unwrap();
    assert_ne!(other.id(), f.sk.id());
    let (other_pk, other_rk) = (other.public_key().unwrap(), other.relin_key().unwrap());
    let other_gk = other.galois_keys(&[1, 2], true).unwrap();
    let pt = Plaintext::from_slots(&f.ctx, &[1, 2, 3]).unwrap();
    let ct = f.pk.encrypt(&pt).unwrap();
    let foreign = other.encrypt(&pt).unwrap();
    let foreign_pk = other_pk.encrypt(&pt).unwrap();
    assert_eq!(
        (foreign.key_id(), foreign_pk.key_id()),
        (other.id(), other.id())
    );
    let product = ct.mul(&ct).unwrap();
    // Extracted coefficients carry their ciphertext's key identity.
    let foreign_lwes = foreign
        .mod_switch_to_next()
        .unwrap()
        .sample_extract(&[0, 1])
        .unwrap();
    assert!(foreign_lwes.iter().all(|c| c.key_id == other.id()));
    // The slot match needs its own parameters (a larger t).
    let mctx = BfvContext::new(match_parameters().unwrap()).unwrap();
    let (msk, mother) = (
        SecretKey::generate(&mctx).unwrap(),
        SecretKey::generate(&mctx).unwrap(),
    );
    let (mkeys, mother_keys) = (match_keys(&msk).unwrap(), match_keys(&mother).unwrap());
    let probe = msk
        .encrypt(&Plaintext::from_slots(&mctx, &[1]).unwrap())
        .unwrap();
    let none = encode_templates(&mctx, &[]).unwrap();
    let mixed = [
        MatchKeys {
            galois: mother_keys.galois.clone(),
            public: mkeys.public.clone(),
        },
        MatchKeys {
            galois: mkeys.galois.clone(),
            public: mother_keys.public.clone(),
        },
    ];
    let mut cases: Vec<(&str, Result<()>)> = vec![
        ("decrypt", f.sk.decrypt(&foreign).map(drop)),
        ("decrypt public", f.sk.decrypt(&foreign_pk).map(drop)),
        ("noise_budget", f.sk.noise_budget(&foreign).map(drop)),
        ("add", ct.add(&foreign).map(drop)),
        ("sub", foreign.sub(&ct).map(drop)),
        ("mul", ct.mul(&foreign).map(drop)),
        ("relinearize", product.relinearize(&other_rk).map(drop)),
        ("rotate_rows", ct.rotate_rows(1, &other_gk).map(drop)),
        ("rotate_rows by 0", ct.rotate_rows(0, &other_gk).map(drop)),
        ("rotate_columns", ct.rotate_columns(&other_gk).map(drop)),
        (
            "rotation_tree_sum",
            ct.rotation_tree_sum(&[2, 1], &other_gk).map(drop),
        ),
        (
            "sum_of_rotations",
            ct.sum_of_rotations(&[0, 1], &other_gk).map(drop),
        ),
        ("rerandomize", ct.rerandomize(&other_pk).map(drop)),
        ("flood", ct.flood(&other_pk, 40).map(drop)),
        ("decrypt_lwe", f.sk.decrypt_lwe(&foreign_lwes[0]).map(drop)),
        (
            "decrypt_extracted_scores",
            decrypt_extracted_scores(&f.sk, &foreign_lwes).map(drop),
        ),
        (
            "compute_scores_coefficients",
            compute_scores_coefficients(&ct, &[], &other_pk).map(drop),
        ),
    ];
    cases.push((
        "decrypt_scores",
        decrypt_scores(&mother, std::slice::from_ref(&probe), 1).map(drop),
    ));
    for keys in &mixed {
        cases.push((
            "compute_scores",
            compute_scores(&probe, &none, keys, MatchPrivacy::Masked).map(drop),
        ));
    }
    for (name, got) in cases {
        assert!(
            matches!(
                got,
                Err(Error::Ring(triskel_ring::Error::KeyMismatch { .. }))
            ),
            "{name}: {got:?}"
        );
    }
    // The same entries with the matching keys work.
    assert!(other.decrypt(&foreign).is_ok());
    assert!(other.decrypt_lwe(&foreign_lwes[0]).is_ok());
    assert!(foreign.rotate_rows(1, &other_gk).is_ok());
    assert!(compute_scores(&probe, &none, &mkeys, MatchPrivacy::Masked).is_ok());
}
