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
    assert_eq!(KeySwitchKey::from_bytes(&bytes, &ctx).unwrap(), key);
    assert!(KeySwitchKey::from_bytes(&bytes[..bytes.len() - 1], &ctx).is_err());
    let other = KeySwitchContext::new(&q, &p, 1, NoiseDistribution::default()).unwrap();
    assert!(KeySwitchKey::from_bytes(&bytes, &other).is_err());
    let mut kind = bytes.clone();
    kind[5] = 1;
    assert!(KeySwitchKey::from_bytes(&kind, &ctx).is_err());
}

/// A set of Galois keys has one encoding: elements odd, in 3..2n, strictly
/// increasing; anything else is malformed.
#[test]
fn galois_key_sets_load_only_in_canonical_form() {
    let q = RnsBasis::generate(N, 50, 2).unwrap();
    let p = RnsBasis::generate(N, 55, 1).unwrap();
    let ctx = KeySwitchContext::new(&q, &p, 2, NoiseDistribution::default()).unwrap();
    let mut rng = Prng::from_seed([23; 32]);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let keys = KeySwitchKey::galois_set(&ctx, &sk, &[5, 3, 2 * N - 1, 1, 5], &mut rng).unwrap();
    assert_eq!(keys.keys().copied().collect::<Vec<_>>(), [3, 5, 2 * N - 1]);
    let mut bytes = Vec::new();
    write_galois_keys(&mut bytes, &keys);
    let read = |bytes: &[u8]| {
        let mut r = Reader::new(bytes);
        let keys = read_galois_keys(&mut r, &ctx)?;
        r.finish().map(|()| keys)
    };
    assert_eq!(read(&bytes).unwrap(), keys);
    // Entries are g: u32 | len: u32 | key bytes, after the count.
    let mut entries = Vec::new();
    let mut at = 4;
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        entries.push(bytes[at..at + 8 + len].to_vec());
        at += 8 + len;
    }
    let set = |gs: &[(usize, u32)]| {
        let mut out = (gs.len() as u32).to_le_bytes().to_vec();
        for &(i, g) in gs {
            out.extend_from_slice(&g.to_le_bytes());
            out.extend_from_slice(&entries[i][4..]);
        }
        out
    };
    let two_n = 2 * N as u32;
    assert_eq!(set(&[(0, 3), (1, 5), (2, two_n - 1)]), bytes);
    for bad in [
        set(&[(1, 5), (0, 3)]), // decreasing
        set(&[(0, 3), (0, 3)]), // repeated
        set(&[(0, 1)]),         // the identity
        set(&[(0, 4)]),         // even
        set(&[(0, two_n + 1)]), // not below 2n
    ] {
        assert!(
            matches!(read(&bad), Err(Error::Malformed(_))),
            "{:?}",
            &bad[..8]
        );
    }
    assert!(read(&bytes[..bytes.len() - 1]).is_err());
}
