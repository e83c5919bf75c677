use super::*;
use crate::keys::{GaloisKeys, RelinKey, SecretKey};
use crate::params::BfvParameters;
use triskel_ring::threshold::{collective_noise_margin_log2, PartySecret};
use triskel_ring::SecretKey as RingSecret;

struct Parties {
    ctx: Arc<BfvContext>,
    session: Session,
    secrets: Vec<PartySecret>,
    shares: Vec<ThresholdShare>,
}

fn parties(params: BfvParameters, n: u16, t: u16) -> Parties {
    let ctx = BfvContext::new(params).unwrap();
    let session = Session::new(n, t).unwrap();
    let secrets: Vec<PartySecret> = (1..=n)
        .map(|j| PartySecret::generate(&session, j, ctx.n()).unwrap())
        .collect();
    let basis = share_basis(&ctx);
    let shares = if t == n {
        secrets
            .iter()
            .map(|s| ThresholdShare::additive(s, basis).unwrap())
            .collect()
    } else {
        let deals: Vec<Vec<Share>> = secrets.iter().map(|s| s.deal(basis).unwrap()).collect();
        secrets
            .iter()
            .map(|s| {
                let mine: Vec<Share> = deals
                    .iter()
                    .map(|d| d[s.party() as usize - 1].clone())
                    .collect();
                ThresholdShare::from_deals(s, &mine).unwrap()
            })
            .collect()
    };
    Parties {
        ctx,
        session,
        secrets,
        shares,
    }
}

struct Keys {
    pk: PublicKey,
    rk: RelinKey,
    gk: GaloisKeys,
}

/// Every collective key, each protocol run to the end by all parties.
fn collective_keys(p: &Parties, steps: &[i64]) -> Keys {
    let gen = public_key_gen(&p.ctx, &p.session).unwrap();
    let shares: Vec<Share> = p.secrets.iter().map(|s| gen.share(s).unwrap()).collect();
    let pk = gen.finish(&gen.aggregate(&shares).unwrap()).unwrap();
    let pk = PublicKey::from_collective(&p.ctx, pk).unwrap();
    let rgen = relin_key_gen(&p.ctx, &p.session);
    let (eph, r1): (Vec<_>, Vec<_>) = p.secrets.iter().map(|s| rgen.round1(s).unwrap()).unzip();
    let agg1 = rgen.aggregate_round1(&r1).unwrap();
    let r2: Vec<Share> = p
        .secrets
        .iter()
        .zip(&eph)
        .map(|(s, e)| rgen.round2(s, e, &agg1).unwrap())
        .collect();
    let rk = rgen
        .finish(&agg1, &rgen.aggregate_round2(&r2).unwrap())
        .unwrap();
    let rk = RelinKey::from_collective(&p.ctx, rk).unwrap();
    let gens = galois_key_gen(&p.ctx, &p.session, steps, false).unwrap();
    let keys = gens.into_iter().map(|(g, gen)| {
        let shares: Vec<Share> = p.secrets.iter().map(|s| gen.share(s).unwrap()).collect();
        (g, gen.finish(&gen.aggregate(&shares).unwrap()).unwrap())
    });
    let gk = GaloisKeys::from_collective(&p.ctx, p.session.key_id(), keys).unwrap();
    Keys { pk, rk, gk }
}

/// The collective secret as one key (tests only: to measure noise).
fn collective_secret(p: &Parties) -> SecretKey {
    let mut sum = vec![0i64; p.ctx.n()];
    for s in &p.secrets {
        sum.iter_mut()
            .zip(s.secret().coeffs())
            .for_each(|(a, b)| *a += b);
    }
    SecretKey::from_ring(
        &p.ctx,
        RingSecret::from_coeffs(sum, p.session.key_id()).unwrap(),
    )
    .unwrap()
}

fn threshold_decrypt(p: &Parties, ct: &Ciphertext, set: &[u16]) -> Result<Vec<u64>> {
    let dec = ThresholdDecryption::new(
        ct,
        &p.session,
        set,
        CiphertextId::of(ct.polys()),
        None,
        40,
        100,
    )?;
    let parts = set
        .iter()
        .map(|&j| dec.share(&p.shares[j as usize - 1]))
        .collect::<Result<Vec<_>>>()?;
    dec.finish(&dec.aggregate(&parts)?)?.to_slots()
}

fn subsets_of_3_of_5() -> Vec<[u16; 3]> {
    let mut out = Vec::new();
    for a in 1..=5 {
        for b in a + 1..=5 {
            for c in b + 1..=5 {
                out.push([a, b, c]);
            }
        }
    }
    out
}

#[test]
fn collective_keys_multiply_relinearize_rotate_and_any_3_of_5_decrypt() {
    let p = parties(BfvParameters::n8192(), 5, 3);
    let keys = collective_keys(&p, &[1, -2]);
    let (n, t) = (p.ctx.n(), p.ctx.plain_modulus());
    let a: Vec<u64> = (0..n as u64).map(|i| (i * 7919 + 3) % t).collect();
    let b: Vec<u64> = (0..n as u64).map(|i| (i * 104729 + 11) % t).collect();
    let ca = keys
        .pk
        .encrypt(&Plaintext::from_slots(&p.ctx, &a).unwrap())
        .unwrap();
    let cb = keys
        .pk
        .encrypt(&Plaintext::from_slots(&p.ctx, &b).unwrap())
        .unwrap();
    let prod = ca.mul(&cb).unwrap().relinearize(&keys.rk).unwrap();
    let rot = prod.rotate_rows(1, &keys.gk).unwrap();
    let half = n / 2;
    let expected: Vec<u64> = (0..n)
        .map(|s| {
            let j = s / half * half + (s % half + 1) % half;
            a[j] * b[j] % t
        })
        .collect();
    for set in subsets_of_3_of_5() {
        assert_eq!(
            threshold_decrypt(&p, &rot, &set).unwrap(),
            expected,
            "{set:?}"
        );
    }
    // The other collective Galois key: right by 2.
    let back = prod.rotate_rows(-2, &keys.gk).unwrap();
    let expected_back: Vec<u64> = (0..n)
        .map(|s| {
            let j = s / half * half + (s % half + half - 2) % half;
            a[j] * b[j] % t
        })
        .collect();
    assert_eq!(
        threshold_decrypt(&p, &back, &[2, 3, 4]).unwrap(),
        expected_back
    );
    // The engine's noise estimates plus the collective margin bound the
    // measured noise (the bound the flooding is sized from).
    let sk = collective_secret(&p);
    assert_eq!(sk.decrypt(&rot).unwrap().to_slots().unwrap(), expected);
    let margin = collective_noise_margin_log2(5);
    for (what, ct) in [("fresh", &ca), ("product", &prod), ("rotation", &rot)] {
        let lv = p.ctx.level(ct.level()).unwrap();
        let measured = lv.log2_q - sk.noise_budget(ct).unwrap() - 1.0 - (t as f64).log2();
        let bound = ct.noise_estimate_log2() + FLOOD_TAIL.log2() + margin;
        assert!(
            measured < bound,
            "{what}: noise 2^{measured:.1} above the bound 2^{bound:.1}"
        );
    }
    // Fewer than t parties: refused.
    let e = threshold_decrypt(&p, &rot, &[1, 2]).unwrap_err();
    assert!(
        matches!(e, Error::Ring(triskel_ring::Error::Protocol(_))),
        "{e}"
    );
}

#[test]
fn additive_keys_and_released_coefficients_decrypt_exactly() {
    let p = parties(BfvParameters::n8192(), 3, 3);
    let keys = collective_keys(&p, &[]);
    let t = p.ctx.plain_modulus();
    let coeffs: Vec<u64> = (0..p.ctx.n() as u64).map(|i| (i * i + 5) % t).collect();
    let ct = keys
        .pk
        .encrypt(&Plaintext::from_coeffs(&p.ctx, &coeffs).unwrap())
        .unwrap();
    let idx = [0usize, 17, 4000, 8191];
    let dec = ThresholdDecryption::new(
        &ct,
        &p.session,
        &[1, 2, 3],
        CiphertextId::of(ct.polys()),
        Some(&idx),
        40,
        1,
    )
    .unwrap();
    let parts: Vec<Share> = p.shares.iter().map(|s| dec.share(s).unwrap()).collect();
    let agg = dec.aggregate(&parts).unwrap();
    let got = dec.finish_coefficients(&agg).unwrap();
    assert_eq!(got, idx.iter().map(|&i| coeffs[i]).collect::<Vec<_>>());
    assert!(dec.finish(&agg).is_err());
    // A share released once per key (alpha = 1): the next is refused.
    assert!(dec.share(&p.shares[0]).is_err());
}

#[test]
fn no_room_for_flooding_is_an_error_and_a_ciphertext_of_another_key_is_refused() {
    let p = parties(BfvParameters::n4096(), 5, 3);
    let keys = collective_keys(&p, &[]);
    let x = keys
        .pk
        .encrypt(&Plaintext::from_slots(&p.ctx, &[3, 4]).unwrap())
        .unwrap();
    let prod = x.mul(&x).unwrap().relinearize(&keys.rk).unwrap();
    let e = ThresholdDecryption::new(
        &prod,
        &p.session,
        &[1, 2, 3],
        CiphertextId([0; 32]),
        None,
        40,
        1,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("no modulus room"), "{e}");
    let other = SecretKey::generate(&p.ctx).unwrap();
    let y = other
        .encrypt(&Plaintext::from_slots(&p.ctx, &[1]).unwrap())
        .unwrap();
    let e = ThresholdDecryption::new(
        &y,
        &p.session,
        &[1, 2, 3],
        CiphertextId([0; 32]),
        Some(&[0]),
        40,
        1,
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::Ring(triskel_ring::Error::KeyMismatch { .. })),
        "{e}"
    );
}

/// The coefficient match's scores under a collective key, and the
/// coefficients that hold them.
fn match_scores(p: &Parties) -> (Ciphertext, Vec<usize>, Vec<i64>) {
    use crate::biometric::*;
    let keys = collective_keys(p, &[]);
    let count = p.ctx.n() / DIM;
    let templates = sample_embeddings(count, 2);
    let groups = encode_templates_coefficients(&p.ctx, &templates).unwrap();
    let probe = sample_embeddings(1, 1)[0];
    let ct = keys
        .pk
        .encrypt(&encode_probe_coefficients(&p.ctx, &probe).unwrap())
        .unwrap();
    let scores = compute_scores_coefficients(&ct, &groups, &keys.pk).unwrap();
    let idx = score_coefficients(&p.ctx, count).unwrap();
    (scores[0].clone(), idx, plaintext_scores(&probe, &templates))
}

#[test]
fn the_biometric_match_scores_decrypt_by_3_of_5_and_n4096_has_no_room() {
    let p = parties(crate::biometric::threshold_match_parameters(), 5, 3);
    let (ct, idx, expected) = match_scores(&p);
    let t = p.ctx.plain_modulus();
    for set in [[1u16, 2, 3], [3, 4, 5], [1, 2, 5]] {
        let dec = ThresholdDecryption::new(
            &ct,
            &p.session,
            &set,
            CiphertextId::of(ct.polys()),
            Some(&idx),
            40,
            16,
        )
        .unwrap();
        let parts: Vec<Share> = set
            .iter()
            .map(|&j| dec.share(&p.shares[j as usize - 1]).unwrap())
            .collect();
        let got: Vec<i64> = dec
            .finish_coefficients(&dec.aggregate(&parts).unwrap())
            .unwrap()
            .into_iter()
            .map(|m| crate::biometric::centered_score(m, t))
            .collect();
        assert_eq!(got, expected, "{set:?}");
    }
    let small = parties(crate::biometric::coefficient_match_parameters(), 5, 3);
    let (ct, idx, _) = match_scores(&small);
    let e = ThresholdDecryption::new(
        &ct,
        &small.session,
        &[1, 2, 3],
        CiphertextId([0; 32]),
        Some(&idx),
        40,
        1,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("no modulus room"), "{e}");
}

#[test]
fn re_encryption_under_a_client_key_decrypts_with_the_client_key_only() {
    let p = parties(BfvParameters::n8192(), 5, 3);
    let keys = collective_keys(&p, &[]);
    let t = p.ctx.plain_modulus();
    let v: Vec<u64> = (0..p.ctx.n() as u64).map(|i| (i * 31 + 7) % t).collect();
    let ct = keys
        .pk
        .encrypt(&Plaintext::from_slots(&p.ctx, &v).unwrap())
        .unwrap();
    let prod = ct.mul(&ct).unwrap().relinearize(&keys.rk).unwrap();
    let client = SecretKey::generate(&p.ctx).unwrap();
    let client_pk = client.public_key().unwrap();
    let set = [1u16, 4, 5];
    let re = ThresholdReencryption::new(
        &prod,
        &p.session,
        &set,
        CiphertextId::of(prod.polys()),
        &client_pk,
        40,
        1,
    )
    .unwrap();
    let parts: Vec<Share> = set
        .iter()
        .map(|&j| re.share(&p.shares[j as usize - 1]).unwrap())
        .collect();
    let out = re.finish(&re.aggregate(&parts).unwrap()).unwrap();
    assert_eq!(out.key_id(), client.id());
    let expected: Vec<u64> = v.iter().map(|x| x * x % t).collect();
    assert_eq!(client.decrypt(&out).unwrap().to_slots().unwrap(), expected);
    // The estimate covers the measured noise.
    let measured = p.ctx.level(out.level()).unwrap().log2_q
        - client.noise_budget(&out).unwrap()
        - 1.0
        - (t as f64).log2();
    assert!(
        measured < out.noise_estimate_log2() + FLOOD_TAIL.log2(),
        "{measured} {}",
        out.noise_estimate_log2()
    );
    // The collective key no longer decrypts it.
    assert!(threshold_decrypt(&p, &out, &[1, 2, 3]).is_err());
}
