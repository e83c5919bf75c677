use super::*;
use crate::keys::{GaloisKeys, PublicKey, RelinKey};
use crate::params::CkksParameters;
use triskel_ring::threshold::PartySecret;

#[test]
fn collective_keys_multiply_rotate_and_3_of_5_decrypt_within_the_reported_precision() {
    // N = 8192, Q = 61 + 58 bits, P = 61 bits, scale 2^58: one product.
    // The flood of 30-bit security for B = 2^22 costs about 56 bits of the
    // scale (module documentation), so a large scale is needed.
    let params = CkksParameters::new("ckks-threshold-test", 8192, &[61, 58], &[61], 58, 2);
    let ctx = CkksContext::new(params).unwrap();
    let session = Session::new(5, 3).unwrap();
    let secrets: Vec<PartySecret> = (1..=5)
        .map(|j| PartySecret::generate(&session, j, ctx.n()).unwrap())
        .collect();
    let basis = share_basis(&ctx);
    let deals: Vec<Vec<Share>> = secrets.iter().map(|s| s.deal(basis).unwrap()).collect();
    let shares: Vec<ThresholdShare> = secrets
        .iter()
        .map(|s| {
            let mine: Vec<Share> = deals
                .iter()
                .map(|d| d[s.party() as usize - 1].clone())
                .collect();
            ThresholdShare::from_deals(s, &mine).unwrap()
        })
        .collect();
    let gen = public_key_gen(&ctx, &session);
    let parts: Vec<Share> = secrets.iter().map(|s| gen.share(s).unwrap()).collect();
    let pk = PublicKey::from_collective(&ctx, gen.finish(&gen.aggregate(&parts).unwrap()).unwrap())
        .unwrap();
    let rgen = relin_key_gen(&ctx, &session);
    let (eph, r1): (Vec<_>, Vec<_>) = secrets.iter().map(|s| rgen.round1(s).unwrap()).unzip();
    let agg1 = rgen.aggregate_round1(&r1).unwrap();
    let r2: Vec<Share> = secrets
        .iter()
        .zip(&eph)
        .map(|(s, e)| rgen.round2(s, e, &agg1).unwrap())
        .collect();
    let rk = RelinKey::from_collective(
        &ctx,
        rgen.finish(&agg1, &rgen.aggregate_round2(&r2).unwrap())
            .unwrap(),
    )
    .unwrap();
    let gk = GaloisKeys::from_collective(
        &ctx,
        session.key_id(),
        galois_key_gen(&ctx, &session, &[1], false)
            .unwrap()
            .into_iter()
            .map(|(g, gen)| {
                let parts: Vec<Share> = secrets.iter().map(|s| gen.share(s).unwrap()).collect();
                (g, gen.finish(&gen.aggregate(&parts).unwrap()).unwrap())
            }),
    )
    .unwrap();
    let slots = ctx.slots();
    let x: Vec<f64> = (0..slots).map(|i| ((i % 17) as f64 - 8.0) / 8.0).collect();
    let y: Vec<f64> = (0..slots).map(|i| ((i % 5) as f64 - 2.0) / 2.0).collect();
    let cx = pk
        .encrypt(&Plaintext::from_real(&ctx, &x).unwrap())
        .unwrap();
    let cy = pk
        .encrypt(&Plaintext::from_real(&ctx, &y).unwrap())
        .unwrap();
    let z = cx
        .mul_relin_rescale(&cy, &rk)
        .unwrap()
        .rotate(1, &gk)
        .unwrap();
    let expected: Vec<f64> = (0..slots)
        .map(|i| x[(i + 1) % slots] * y[(i + 1) % slots])
        .collect();
    // A fresh encryption, then the product's rotation (whose error bound
    // is some 2^11 larger: the flood grows with it).
    let runs = [
        (&cx, &x, [2u16, 3, 4]),
        (&z, &expected, [1, 2, 3]),
        (&z, &expected, [2, 4, 5]),
        (&z, &expected, [1, 3, 5]),
    ];
    for (ct, expected, set) in runs {
        let dec = ThresholdDecryption::new(ct, &session, &set, CiphertextId::of(&ct.polys), 30, 3)
            .unwrap();
        let parts: Vec<Share> = set
            .iter()
            .map(|&j| dec.share(&shares[j as usize - 1]).unwrap())
            .collect();
        let got = dec
            .finish(&dec.aggregate(&parts).unwrap())
            .unwrap()
            .decode_real()
            .unwrap();
        let err = got
            .iter()
            .zip(expected.iter())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let precision = dec.precision_bits();
        eprintln!(
            "{set:?}: error 2^{:.1}, reported precision {precision:.1} bits",
            err.log2()
        );
        assert!(precision > 1.0, "precision {precision}");
        assert!(
            err <= (-precision).exp2(),
            "{set:?}: error 2^{:.1} above the reported 2^-{precision:.1}",
            err.log2()
        );
    }
    // Below 30 bits, a 3-component ciphertext, fewer than t: refused.
    assert!(
        ThresholdDecryption::new(&z, &session, &[1, 2, 3], CiphertextId([0; 32]), 20, 1).is_err()
    );
    let z3 = cx.mul(&cy).unwrap();
    assert!(
        ThresholdDecryption::new(&z3, &session, &[1, 2, 3], CiphertextId([0; 32]), 30, 1).is_err()
    );
    assert!(ThresholdDecryption::new(&z, &session, &[1, 2], CiphertextId([0; 32]), 30, 1).is_err());
}
