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
    let swapped =
        f.sk.decrypt(&ct.rotate_columns(&f.gk).unwrap())
            .unwrap()
            .to_slots()
            .unwrap();
    assert_eq!(swapped[..half], v[half..]);
    assert_eq!(swapped[half..], v[..half]);
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
            max_log_qp: 109,
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

/// Galois key entries as `(g, whole entry bytes)`, after the header and count.
fn galois_entries(bytes: &[u8], prefix: usize) -> Vec<(u32, Vec<u8>)> {
    let le32 = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let mut at = prefix + 4;
    let mut entries = Vec::new();
    while at < bytes.len() {
        let end = at + 8 + le32(at + 4) as usize;
        entries.push((le32(at), bytes[at..end].to_vec()));
        at = end;
    }
    entries
}

#[test]
fn galois_keys_load_only_in_strictly_increasing_order() {
    // The bfv_galois_keys fuzz target asserts canonical bytes: out-of-order
    // entries used to load and re-serialize sorted, so bytes did not round-trip.
    let f = fixture();
    let bytes = f.gk.to_bytes();
    let prefix = f.ctx.params().to_bytes().len();
    let entries = galois_entries(&bytes, prefix);
    assert!(entries.len() >= 2);
    assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
    assert_eq!(
        GaloisKeys::from_bytes(&bytes, &f.ctx).unwrap().to_bytes(),
        bytes
    );

    let with = |order: &[usize]| {
        let mut out = bytes[..prefix].to_vec();
        out.extend_from_slice(&(order.len() as u32).to_le_bytes());
        for &i in order {
            out.extend_from_slice(&entries[i].1);
        }
        GaloisKeys::from_bytes(&out, &f.ctx)
    };
    assert!(with(&[0, 1]).is_ok());
    for order in [&[1, 0][..], &[0, 0], &[1, 1]] {
        assert!(
            matches!(with(order), Err(Error::Malformed(_))),
            "entries in order {order:?}"
        );
    }
}

fn run_match(params: BfvParameters, templates: usize) {
    use biometric::*;
    let ctx = BfvContext::new(match_parameters(params).unwrap()).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let keys = match_galois_keys(&sk).unwrap();
    let mut probe = biometric::sample_embeddings(1, 77)[0];
    let mut enrolled = biometric::sample_embeddings(templates, 78);
    // Extreme values: the largest possible scores in both signs.
    probe[..].fill(127);
    enrolled[0] = [127; DIM];
    enrolled[1] = [-127; DIM];
    let groups = encode_templates(&ctx, &enrolled).unwrap();
    let ct = sk.encrypt(&encode_probe(&ctx, &probe).unwrap()).unwrap();
    let scores = compute_scores(&ct, &groups, &keys).unwrap();
    let got = decrypt_scores(&sk, &scores, templates).unwrap();
    let want = plaintext_scores(&probe, &enrolled);
    assert_eq!(got, want);
    assert_eq!(want[0], 128 * 127 * 127);
    for s in &scores {
        let measured = sk.noise_budget(s).unwrap();
        assert!(
            s.estimated_noise_budget() <= measured,
            "{} > {measured}",
            s.estimated_noise_budget()
        );
    }
}

#[test]
fn biometric_match_is_exact_on_the_shallow_and_general_sets() {
    run_match(BfvParameters::n4096_shallow(), 32);
    run_match(BfvParameters::n4096(), 40);
}

#[test]
fn biometric_match_at_n16384() {
    run_match(BfvParameters::n16384(), 128);
}

#[test]
fn biometric_match_rejects_bad_features() {
    use biometric::*;
    let ctx = BfvContext::new(match_parameters(BfvParameters::n4096_shallow()).unwrap()).unwrap();
    let mut probe = [0i8; DIM];
    probe[3] = i8::MIN;
    assert!(matches!(
        encode_probe(&ctx, &probe),
        Err(Error::Encoding(_))
    ));
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
    // t close to the 36-bit primes of the set: decryption's fixed-point sum
    // and its division-free reduction at their limits.
    let t = (1u64 << 34) + 27;
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
