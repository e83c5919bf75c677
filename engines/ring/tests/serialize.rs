use triskel_ring::sampling::sample_uniform;
use triskel_ring::{
    read_galois_keys, write_galois_keys, Error, KeySwitchContext, KeySwitchKey, NoiseDistribution,
    Poly, Prng, Reader, Representation, RnsBasis, SecretDistribution, SecretKey,
};

const N: usize = 1024;

#[test]
fn poly_round_trip_and_rejections() {
    let basis = RnsBasis::generate(N, 50, 3).unwrap();
    let mut rng = Prng::from_seed([21; 32]);
    for repr in [Representation::Coefficient, Representation::Ntt] {
        let p = sample_uniform(&basis, repr, &mut rng);
        let bytes = p.to_bytes();
        assert_eq!(Poly::from_bytes(&bytes, &basis).unwrap(), p);
        for cut in [0, 3, 5, 6, 10, 15, 30, bytes.len() - 1] {
            assert!(matches!(
                Poly::from_bytes(&bytes[..cut], &basis),
                Err(Error::Malformed(_))
            ));
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(Poly::from_bytes(&long, &basis).is_err());
        // A residue >= q.
        let mut bad = bytes.clone();
        let off = bytes.len() - 8;
        bad[off..].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            Poly::from_bytes(&bad, &basis),
            Err(Error::Malformed(_))
        ));
        let mut version = bytes.clone();
        version[4] = 99;
        assert_eq!(
            Poly::from_bytes(&version, &basis),
            Err(Error::UnsupportedVersion(99))
        );
        // Version 1 (before key identities) laid polynomials out the same.
        let mut v1 = bytes.clone();
        v1[4] = 1;
        assert_eq!(Poly::from_bytes(&v1, &basis).unwrap(), p);
        let mut tag = bytes.clone();
        tag[10] = 7;
        assert!(Poly::from_bytes(&tag, &basis).is_err());
        let other = RnsBasis::generate(N, 45, 3).unwrap();
        assert!(Poly::from_bytes(&bytes, &other).is_err());
        assert!(Poly::from_bytes(&bytes, &basis.drop_last().unwrap()).is_err());
    }
}

#[test]
fn key_round_trip_is_seed_compressed() {
    let q = RnsBasis::generate(N, 50, 3).unwrap();
    let p = RnsBasis::generate(N, 55, 1).unwrap();
    let ctx = KeySwitchContext::new(&q, &p, 3, NoiseDistribution::default()).unwrap();
    let mut rng = Prng::from_seed([22; 32]);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let key = KeySwitchKey::galois(&ctx, &sk, 3, &mut rng).unwrap();
    let bytes = key.to_bytes();
    // Only the b half plus a seed: about half of the full key.
    assert!(bytes.len() < 3 * 4 * N * 8 + 200);
    let loaded = KeySwitchKey::from_bytes(&bytes, &ctx).unwrap();
    assert_eq!(loaded, key);
    assert_eq!(loaded.id(), sk.id());
    // The a_j, regenerated from the seed on first use, are the generated ones.
    for j in 0..key.len() {
        assert_eq!(loaded.digit(j), key.digit(j), "digit {j}");
    }
    assert_eq!(loaded.to_bytes(), bytes);
    // A key of version 1 has no identity: refused, saying why.
    let mut v1 = bytes.clone();
    v1[4] = 1;
    match KeySwitchKey::from_bytes(&v1, &ctx) {
        Err(Error::Malformed(m)) => assert!(m.contains("predates key identities"), "{m}"),
        other => panic!("version-1 key: {other:?}"),
    }
    assert!(KeySwitchKey::from_bytes(&bytes[..bytes.len() - 1], &ctx).is_err());
    let other = KeySwitchContext::new(&q, &p, 1, NoiseDistribution::default()).unwrap();
    assert!(KeySwitchKey::from_bytes(&bytes, &other).is_err());
    let mut kind = bytes.clone();
    kind[5] = 1;
    assert!(KeySwitchKey::from_bytes(&kind, &ctx).is_err());
}

/// A set of Galois keys loads only in its one encoding (g odd, in 3..2n,
/// increasing; BFV's tests cover the order): neither the identity, nor an
/// even element, nor one of 2n or more.
#[test]
fn galois_key_sets_refuse_elements_outside_the_group() {
    let q = RnsBasis::generate(N, 50, 2).unwrap();
    let p = RnsBasis::generate(N, 55, 1).unwrap();
    let ctx = KeySwitchContext::new(&q, &p, 2, NoiseDistribution::default()).unwrap();
    let mut rng = Prng::from_seed([23; 32]);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let keys = KeySwitchKey::galois_set(&ctx, &sk, &[5, 1, 3, 5], &mut rng).unwrap();
    assert_eq!(keys.keys().copied().collect::<Vec<_>>(), [3, 5]);
    let mut bytes = Vec::new();
    write_galois_keys(&mut bytes, sk.id(), &keys);
    let read = |bytes: &[u8]| {
        let mut r = Reader::new(bytes);
        let keys = read_galois_keys(&mut r, &ctx)?;
        r.finish().map(|()| keys)
    };
    assert_eq!(read(&bytes).unwrap(), (sk.id(), keys.clone()));
    // The first entry (id: 16 bytes | count: u32 | g: u32 | ...) with
    // another element.
    for g in [1, 4, 2 * N as u32 + 1] {
        let mut bad = bytes.clone();
        bad[20..24].copy_from_slice(&g.to_le_bytes());
        assert!(matches!(read(&bad), Err(Error::Malformed(_))), "g = {g}");
    }
    // A set whose identity is not that of its keys.
    let other = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let mut bad = bytes.clone();
    bad[..16].copy_from_slice(&other.id().to_bytes());
    assert!(matches!(read(&bad), Err(Error::Malformed(_))));
    // An empty set keeps its identity.
    let mut empty = Vec::new();
    write_galois_keys(&mut empty, other.id(), &Default::default());
    assert_eq!(read(&empty).unwrap(), (other.id(), Default::default()));
}
