//! Serialization: round trips that still compute, and rejection of malformed bytes;
//! seed-compressed fresh encryptions (fresh seeds, one stream per block).

mod common;
use common::keys_2_2;
use triskel_ring::{KeyId, Prng};
use triskel_tfhe::CompressedServerKey;
use triskel_tfhe::{
    BoolCiphertext, Ciphertext, ClientKey, CompressedBoolCiphertext, CompressedCiphertext,
    CompressedGgswCiphertext, CompressedGlweCiphertext, CompressedRadixCiphertext, Error, Gate,
    GgswCiphertext, GlweCiphertext, GlweSecretKey, RadixCiphertext, ServerKey, TfheParameters,
};

/// Loads a server key by both loaders, which must agree: the checked,
/// unexpanded [`CompressedServerKey`] accepts exactly what the expanding
/// loader accepts, keeps the bytes, and decompresses to the same key.
#[track_caller]
fn server_key(bytes: &[u8]) -> Result<ServerKey, Error> {
    let compressed = CompressedServerKey::from_bytes(bytes);
    let full = ServerKey::from_bytes(bytes);
    match (&compressed, &full) {
        (Ok(c), Ok(f)) => {
            assert_eq!(c.as_bytes(), bytes);
            assert_eq!(c.key_id(), f.key_id());
            assert_eq!(c.parameters(), f.parameters());
            assert_eq!(c.decompress().unwrap().to_bytes(), f.to_bytes());
        }
        (Err(c), Err(f)) => assert_eq!(c, f, "both loaders name the same fault"),
        _ => panic!(
            "the loaders disagree: {compressed:?} against {:?}",
            full.as_ref().err()
        ),
    }
    full
}

/// The caller's line names the case (the loaded value is too large to print).
#[track_caller]
fn rejected<T>(r: Result<T, Error>) {
    assert!(r.is_err(), "malformed bytes accepted");
}

/// A loaded value used with a key of identity `key`: refused as another
/// key's exactly when (a mutation made) its identity `found` differs, else
/// it must succeed.
#[track_caller]
fn used<T>(key: KeyId, found: KeyId, r: Result<T, Error>) {
    if found == key {
        assert!(r.is_ok(), "a loaded value of the key's identity is used");
    } else {
        assert!(
            matches!(r, Err(Error::Ring(triskel_ring::Error::KeyMismatch { .. }))),
            "a loaded value of another identity is refused"
        );
    }
}

#[test]
fn keys_and_booleans_round_trip_and_malformed_bytes_are_rejected() {
    let params = TfheParameters::boolean();
    let mut rng = Prng::from_seed([4; 32]);
    let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng).unwrap();

    let ck_bytes = ck.to_bytes();
    let sk_bytes = sk.to_bytes();
    assert_eq!(sk_bytes.len(), sk.compressed_size());
    eprintln!(
        "{}: server key {} bytes compressed, {} expanded",
        params.name,
        sk.compressed_size(),
        sk.expanded_size()
    );
    let ck2 = ClientKey::from_bytes(&ck_bytes).unwrap();
    let sk2 = server_key(&sk_bytes).unwrap();
    let (a, b) = (
        ck.encrypt_bool(true).unwrap(),
        ck.encrypt_bool(false).unwrap(),
    );
    let a2 = BoolCiphertext::from_bytes(&a.to_bytes(), &params).unwrap();
    assert_eq!(a2, a);
    let out = sk2.gate(Gate::Nand, &a2, &b).unwrap();
    assert!(ck2.decrypt_bool(&out).unwrap());
    assert!(!ck2
        .decrypt_bool(&sk2.gate(Gate::And, &a, &b).unwrap())
        .unwrap());

    // Truncation anywhere, trailing bytes, bad magic/version/kind/name.
    for cut in [0, 3, 5, 6, 10, ck_bytes.len() - 1] {
        rejected(ClientKey::from_bytes(&ck_bytes[..cut]));
    }
    for cut in [0, 40, 1000, sk_bytes.len() - 1] {
        rejected(server_key(&sk_bytes[..cut]));
    }
    let mut long = ck_bytes.clone();
    long.push(0);
    rejected(ClientKey::from_bytes(&long));
    for (i, v) in [(0usize, b'X'), (4, 9), (5, 2), (7, b'Z')] {
        let mut bad = ck_bytes.clone();
        bad[i] = v;
        rejected(ClientKey::from_bytes(&bad));
    }
    // A key coefficient that is not a bit.
    let mut bad = ck_bytes.clone();
    let last = bad.len() - 1;
    bad[last] = 2;
    rejected(ClientKey::from_bytes(&bad));
    // A bootstrapping key residue >= q.
    let mut bad = sk_bytes.clone();
    let header = 7 + params.name.len() + KeyId::LEN + 32;
    bad[header..header + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    rejected(server_key(&bad));
    // A key-switching key body that is not a multiple of 2^32.
    let mut bad = sk_bytes.clone();
    let last = bad.len() - 8;
    bad[last] ^= 1;
    rejected(server_key(&bad));
    // The compressed form writes the bytes it was made from.
    assert_eq!(sk.compress().as_bytes(), &sk_bytes[..]);
    // A boolean loaded as another set, or as a block.
    rejected(BoolCiphertext::from_bytes(
        &a.to_bytes(),
        &TfheParameters::message_2_carry_2(),
    ));
    rejected(Ciphertext::from_bytes(&a.to_bytes(), &params));
}

/// Keys and values written under a superseded set's name (the layout is
/// unchanged: only the set is) are refused with an error naming the set and
/// its replacement, by every loader.
#[test]
fn keys_and_values_of_superseded_sets_are_refused() {
    let params = TfheParameters::boolean();
    let ck = ClientKey::generate_with(&params, &mut Prng::from_seed([21; 32])).unwrap();
    let block_params = TfheParameters::message_2_carry_2();
    let block = common::keys_2_2().0.encrypt(1).unwrap().to_bytes();
    // The same bytes under another set's name.
    let renamed = |bytes: &[u8], from: &str, to: &str| {
        let mut out = bytes[..6].to_vec();
        out.push(to.len() as u8);
        out.extend_from_slice(to.as_bytes());
        out.extend_from_slice(&bytes[7 + from.len()..]);
        out
    };
    for (old, new) in triskel_tfhe::params::SUPERSEDED {
        let want = Error::Superseded {
            set: old.to_string(),
            replacement: new,
        };
        let key = renamed(&ck.to_bytes(), params.name, old);
        assert_eq!(ClientKey::from_bytes(&key).unwrap_err(), want);
        assert_eq!(server_key(&key).unwrap_err(), want);
        let bytes = renamed(&block, block_params.name, old);
        assert_eq!(
            Ciphertext::from_bytes(&bytes, &block_params).unwrap_err(),
            want
        );
        assert_eq!(
            RadixCiphertext::from_bytes(&bytes, &block_params).unwrap_err(),
            want
        );
        assert_eq!(
            BoolCiphertext::from_bytes(&bytes, &params).unwrap_err(),
            want
        );
        assert!(want.to_string().contains(old));
    }
    // The current names still load.
    let key = renamed(&ck.to_bytes(), params.name, params.name);
    assert!(ClientKey::from_bytes(&key).is_ok());
}

#[test]
fn blocks_round_trip_and_claims_are_checked() {
    let params = TfheParameters::message_1_carry_1();
    let mut rng = Prng::from_seed([5; 32]);
    let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
    let ct = ck.encrypt(1).unwrap();
    let bytes = ct.to_bytes();
    let back = Ciphertext::from_bytes(&bytes, &params).unwrap();
    assert_eq!(back, ct);
    assert_eq!(ck.decrypt(&back).unwrap(), 1);
    let header = 7 + params.name.len() + KeyId::LEN;
    // Degree outside the block; noise level below a fresh one or above the maximum.
    for (offset, value) in [(0, 4u64), (8, 0), (8, 4)] {
        let mut bad = bytes.clone();
        bad[header + offset..header + offset + 8].copy_from_slice(&value.to_le_bytes());
        rejected(Ciphertext::from_bytes(&bad, &params));
    }
    rejected(Ciphertext::from_bytes(&bytes[..bytes.len() - 1], &params));
    rejected(Ciphertext::from_bytes(
        &bytes,
        &TfheParameters::message_2_carry_2(),
    ));
}

/// u8 and u64 integers (fresh and computed) load back equal and still
/// compute; truncation, trailing bytes, a wrong kind, version or set, a width
/// that is not one, a block count that does not match the width and a block
/// that holds a carry or claims too little noise are rejected.
#[test]
fn radix_integers_round_trip_and_malformed_bytes_are_rejected() {
    let (ck, sk) = keys_2_2();
    let params = ck.parameters();
    let load = |bytes: &[u8]| RadixCiphertext::from_bytes(bytes, params);
    for (x, bits) in [(200u64, 8u32), (u64::MAX - 5, 64)] {
        let mask = u64::MAX >> (64 - bits);
        let a = ck.encrypt_radix(x, bits).unwrap();
        let b = ck.encrypt_radix(7, bits).unwrap();
        let a2 = load(&a.to_bytes()).unwrap();
        let b2 = load(&b.to_bytes()).unwrap();
        assert_eq!((&a2, &b2), (&a, &b));
        let sum = sk.add(&a2, &b2).unwrap();
        let sum2 = load(&sum.to_bytes()).unwrap();
        assert_eq!(sum2, sum);
        assert_eq!(ck.decrypt_radix(&sum2).unwrap(), x.wrapping_add(7) & mask);
        // A loaded result computes on: (x + 7) - 7.
        let back = sk.sub(&sum2, &b2).unwrap();
        assert_eq!(ck.decrypt_radix(&back).unwrap(), x);
    }

    let a = ck.encrypt_u8(200).unwrap();
    let bytes = a.to_bytes();
    let header = 7 + params.name.len() + KeyId::LEN;
    // A block: degree, noise level, the LWE dimension (u32) and k N + 1 words.
    let block = 16 + 4 + 8 * 2049;
    assert_eq!(bytes.len(), header + 2 + 4 * block);
    for cut in [
        0,
        6,
        header,
        header + 1,
        header + 2,
        header + 20,
        bytes.len() - 1,
    ] {
        rejected(load(&bytes[..cut]));
    }
    let mut long = bytes.clone();
    long.push(0);
    rejected(load(&long));
    // Version, kind; a block or a boolean is not an integer and back.
    for (i, v) in [(4usize, 3u8), (5, 3)] {
        let mut bad = bytes.clone();
        bad[i] = v;
        rejected(load(&bad));
    }
    rejected(load(&ck.encrypt(1).unwrap().to_bytes()));
    rejected(Ciphertext::from_bytes(&bytes, params));
    // Another set's integer (1_1 has the same N k but 8 blocks per u8).
    rejected(RadixCiphertext::from_bytes(
        &bytes,
        &TfheParameters::message_1_carry_1(),
    ));
    // Widths that are not 8/16/32/64, widths that need more blocks than
    // there are, and counts that do not match the width (with and without
    // the bytes to back them).
    let edit = |at: usize, value: u8| {
        let mut bad = bytes.clone();
        bad[at] = value;
        bad
    };
    for bits in [0u8, 4, 12, 16, 64, 255] {
        rejected(load(&edit(header, bits)));
    }
    for count in [0u8, 3, 5, 32, 255] {
        rejected(load(&edit(header + 1, count)));
    }
    let mut five = bytes.clone();
    five[header + 1] = 5;
    five.extend_from_slice(&bytes[header + 2..header + 2 + block]);
    rejected(load(&five));
    // The last block claims a carry (degree 4 >= msg) or is outside the
    // block (16), or claims no noise or more than the set allows.
    let last = bytes.len() - block;
    for (offset, value) in [(0, 4u64), (0, 16), (8, 0), (8, 100)] {
        let mut bad = bytes.clone();
        bad[last + offset..last + offset + 8].copy_from_slice(&value.to_le_bytes());
        rejected(load(&bad));
    }
}

/// Message modulus of the GLWE tests: 16 levels on the whole of Z_q.
const P: u64 = 16;

fn random_messages(rng: &mut Prng, n: usize) -> Vec<u64> {
    (0..n).map(|_| rng.below(P).unwrap()).collect()
}

/// `bytes` with `word` written at `at`.
fn with_word(bytes: &[u8], at: usize, word: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out[at..at + word.len()].copy_from_slice(word);
    out
}

/// GLWE keys, GLWE ciphertexts and GGSWs of the 2_2 set (k = 1, N = 2048),
/// the boolean set (k = 2, N = 1024) and the 3_3 set (two decomposition
/// levels) load back to the same bytes and still compute: a loaded key
/// decrypts what the original encrypted and the reverse, a loaded GLWE
/// decrypts to its messages, a loaded GGSW's external product and CMux give
/// the right messages.
#[test]
fn glwe_objects_round_trip_and_still_compute() {
    let mut rng = Prng::from_seed([13; 32]);
    for params in [
        TfheParameters::message_2_carry_2(),
        TfheParameters::boolean(),
        TfheParameters::message_3_carry_3(),
    ] {
        let (k, n) = (params.glwe_dimension, params.polynomial_size);
        let levels = params.pbs_levels as usize;
        let header = 7 + params.name.len() + KeyId::LEN;
        let key = GlweSecretKey::generate(&params).unwrap();
        let key_bytes = key.to_bytes();
        assert_eq!(key_bytes.len(), header + 8 + k * n);
        let key2 = GlweSecretKey::from_bytes(&key_bytes).unwrap();
        assert_eq!(key2.to_bytes(), key_bytes);
        assert_eq!(key2.lwe_key().coefficients(), key.lwe_key().coefficients());

        let (m0, m1) = (random_messages(&mut rng, n), random_messages(&mut rng, n));
        let c0 = key.encrypt(&m0, P).unwrap();
        let bytes = c0.to_bytes();
        assert_eq!(bytes.len(), header + 8 + (k + 1) * n * 8);
        let c0 = GlweCiphertext::from_bytes(&bytes, &params).unwrap();
        assert_eq!(c0.to_bytes(), bytes);
        assert_eq!(key2.decrypt(&c0, P).unwrap(), m0);
        let c1 = key2.encrypt(&m1, P).unwrap();
        let c1 = GlweCiphertext::from_bytes(&c1.to_bytes(), &params).unwrap();
        assert_eq!(key.decrypt(&c1, P).unwrap(), m1);

        for (message, bit_branch) in [(0i64, &m0), (1, &m1)] {
            let ggsw = key.encrypt_ggsw(message).unwrap();
            let bytes = ggsw.to_bytes();
            assert_eq!(
                bytes.len(),
                header + 16 + (k + 1) * levels * (k + 1) * n * 8
            );
            let ggsw = GgswCiphertext::from_bytes(&bytes, &params).unwrap();
            assert_eq!(ggsw.to_bytes(), bytes);
            let cmux = ggsw.cmux(&c0, &c1).unwrap();
            assert_eq!(&key.decrypt(&cmux, P).unwrap(), bit_branch, "bit {message}");
        }
        let ggsw = key2.encrypt_ggsw(-3).unwrap();
        let ggsw = GgswCiphertext::from_bytes(&ggsw.to_bytes(), &params).unwrap();
        let product = ggsw.external_product(&c0).unwrap();
        let want: Vec<u64> = m0.iter().map(|&v| (P * 3 - 3 * v) % P).collect();
        assert_eq!(key.decrypt(&product, P).unwrap(), want);
        eprintln!(
            "{}: GLWE key {} bytes, GLWE {} bytes, GGSW {} bytes",
            params.name,
            key_bytes.len(),
            c0.to_bytes().len(),
            ggsw.to_bytes().len()
        );
    }
}

/// Seed-compressed GLWEs and GGSWs of the 2_2, boolean and 3_3 sets: the
/// bytes hold the seed and the bodies only, load back to the same bytes and
/// decompress to objects that compute (decryption, CMux on both bits, an
/// external product by -3); two encryptions have different seeds.
#[test]
fn compressed_glwe_objects_round_trip_and_still_compute() {
    let mut rng = Prng::from_seed([14; 32]);
    for params in [
        TfheParameters::message_2_carry_2(),
        TfheParameters::boolean(),
        TfheParameters::message_3_carry_3(),
    ] {
        let (k, n) = (params.glwe_dimension, params.polynomial_size);
        let rows = (k + 1) * params.pbs_levels as usize;
        let header = 7 + params.name.len() + KeyId::LEN;
        let key = GlweSecretKey::generate(&params).unwrap();
        let (m0, m1) = (random_messages(&mut rng, n), random_messages(&mut rng, n));
        let glwe = |m: &[u64]| {
            let bytes = key.encrypt_compressed(m, P).unwrap().to_bytes();
            assert_eq!(bytes.len(), header + 8 + 32 + n * 8);
            let loaded = CompressedGlweCiphertext::from_bytes(&bytes, &params).unwrap();
            assert_eq!(loaded.to_bytes(), bytes);
            (bytes, loaded.decompress().unwrap())
        };
        let ((b0, c0), (b1, c1)) = (glwe(&m0), glwe(&m1));
        assert_ne!(b0[header + 8..header + 40], b1[header + 8..header + 40]);
        assert_eq!(key.decrypt(&c0, P).unwrap(), m0);
        assert_eq!(key.decrypt(&c1, P).unwrap(), m1);

        let ggsw = |message: i64| {
            let bytes = key.encrypt_ggsw_compressed(message).unwrap().to_bytes();
            assert_eq!(bytes.len(), header + 16 + 32 + rows * n * 8);
            let loaded = CompressedGgswCiphertext::from_bytes(&bytes, &params).unwrap();
            assert_eq!(loaded.to_bytes(), bytes);
            (bytes, loaded.decompress().unwrap())
        };
        for (message, branch) in [(0i64, &m0), (1, &m1)] {
            let cmux = ggsw(message).1.cmux(&c0, &c1).unwrap();
            assert_eq!(&key.decrypt(&cmux, P).unwrap(), branch, "bit {message}");
        }
        let (bytes, minus_three) = ggsw(-3);
        let product = minus_three.external_product(&c0).unwrap();
        let want: Vec<u64> = m0.iter().map(|&v| (P * 3 - 3 * v) % P).collect();
        assert_eq!(key.decrypt(&product, P).unwrap(), want);
        eprintln!(
            "{}: compressed GLWE {} bytes, compressed GGSW {} bytes",
            params.name,
            b0.len(),
            bytes.len()
        );
    }
}

/// Compressed GLWE and GGSW bytes: truncation, trailing bytes, the other
/// kinds, another set, a body residue >= q and another decomposition are
/// rejected.
#[test]
fn malformed_compressed_glwe_objects_are_rejected() {
    let params = TfheParameters::message_2_carry_2();
    let key = GlweSecretKey::generate(&params).unwrap();
    let n = params.polynomial_size;
    let header = 7 + params.name.len() + KeyId::LEN;
    let q = key.modulus().to_le_bytes();
    let glwe = key.encrypt_compressed(&vec![1; n], P).unwrap().to_bytes();
    let ggsw = key.encrypt_ggsw_compressed(1).unwrap().to_bytes();
    let load_glwe = |b: &[u8]| CompressedGlweCiphertext::from_bytes(b, &params);
    let load_ggsw = |b: &[u8]| CompressedGgswCiphertext::from_bytes(b, &params);
    load_glwe(&glwe).unwrap();
    load_ggsw(&ggsw).unwrap();
    for cut in [
        0,
        header,
        header + 8,
        header + 39,
        header + 40,
        glwe.len() - 1,
    ] {
        rejected(load_glwe(&glwe[..cut]));
    }
    for cut in [0, header + 8, header + 16, header + 47, ggsw.len() - 1] {
        rejected(load_ggsw(&ggsw[..cut]));
    }
    let (mut long_glwe, mut long_ggsw) = (glwe.clone(), ggsw.clone());
    long_glwe.push(0);
    long_ggsw.push(0);
    rejected(load_glwe(&long_glwe));
    rejected(load_ggsw(&long_ggsw));
    rejected(load_glwe(&ggsw));
    rejected(load_ggsw(&glwe));
    rejected(GlweCiphertext::from_bytes(&glwe, &params));
    rejected(GgswCiphertext::from_bytes(&ggsw, &params));
    rejected(load_glwe(&key.encrypt(&vec![1; n], P).unwrap().to_bytes()));
    rejected(load_ggsw(&key.encrypt_ggsw(1).unwrap().to_bytes()));
    let other = TfheParameters::message_1_carry_1();
    rejected(CompressedGlweCiphertext::from_bytes(&glwe, &other));
    rejected(CompressedGgswCiphertext::from_bytes(&ggsw, &other));
    // A body residue q (the last word), a shape or decomposition not the set's.
    rejected(load_glwe(&with_word(&glwe, glwe.len() - 8, &q)));
    rejected(load_ggsw(&with_word(&ggsw, ggsw.len() - 8, &q)));
    rejected(load_glwe(&with_word(&glwe, header, &2u32.to_le_bytes())));
    rejected(load_ggsw(&with_word(
        &ggsw,
        header + 8,
        &22u32.to_le_bytes(),
    )));
    rejected(load_ggsw(&with_word(
        &ggsw,
        header + 12,
        &2u32.to_le_bytes(),
    )));
}

/// Truncation, trailing bytes, a wrong version, kind, set or shape, a
/// residue >= q (in a GLWE and in a GGSW, q itself), a key coefficient
/// that is not a bit and a GGSW decomposition that is not the set's are
/// rejected.
#[test]
fn malformed_glwe_objects_are_rejected() {
    let params = TfheParameters::message_2_carry_2();
    let key = GlweSecretKey::generate(&params).unwrap();
    let n = params.polynomial_size;
    let q = key.modulus();
    let header = 7 + params.name.len() + KeyId::LEN;
    let key_bytes = key.to_bytes().to_vec();
    let glwe = key.encrypt(&vec![3; n], P).unwrap().to_bytes();
    let ggsw = key.encrypt_ggsw(1).unwrap().to_bytes();
    let load_key = |b: &[u8]| GlweSecretKey::from_bytes(b);
    let load_glwe = |b: &[u8]| GlweCiphertext::from_bytes(b, &params);
    let load_ggsw = |b: &[u8]| GgswCiphertext::from_bytes(b, &params);
    for bytes in [&key_bytes, &glwe, &ggsw] {
        for cut in [
            0,
            5,
            header,
            header + 4,
            header + 8,
            header + 20,
            bytes.len() - 1,
        ] {
            rejected(load_key(&bytes[..cut]));
            rejected(load_glwe(&bytes[..cut]));
            rejected(load_ggsw(&bytes[..cut]));
        }
        let mut long = bytes.clone();
        long.push(0);
        rejected(load_key(&long));
        rejected(load_glwe(&long));
        rejected(load_ggsw(&long));
        // Version; k = 2 or N = 1024, with the set's body, twice it or half.
        let mut bad = bytes.clone();
        bad[4] = 3;
        rejected(load_key(&bad));
        rejected(load_glwe(&bad));
        rejected(load_ggsw(&bad));
        let body = &bytes[header + 8..];
        for (at, value) in [(header, 2u32), (header + 4, 1024)] {
            let shape = with_word(&bytes[..header + 8], at, &value.to_le_bytes());
            for body in [
                body.to_vec(),
                body.repeat(2),
                body[..body.len() / 2].to_vec(),
            ] {
                let bad = [shape.clone(), body].concat();
                rejected(load_key(&bad));
                rejected(load_glwe(&bad));
                rejected(load_ggsw(&bad));
            }
        }
    }
    // Each kind is only itself, and a client key is not a GLWE key.
    rejected(load_glwe(&key_bytes));
    rejected(load_ggsw(&key_bytes));
    rejected(load_key(&glwe));
    rejected(load_ggsw(&glwe));
    rejected(load_key(&ggsw));
    rejected(load_glwe(&ggsw));
    let ck = ClientKey::generate(&TfheParameters::boolean()).unwrap();
    rejected(load_key(&ck.to_bytes()));
    // Another set's objects: the boolean set has the 1_1 set's shape.
    let boolean = TfheParameters::boolean();
    let other = GlweSecretKey::generate(&boolean).unwrap();
    let other_glwe = other.encrypt(&vec![1; 1024], P).unwrap().to_bytes();
    let other_ggsw = other.encrypt_ggsw(1).unwrap().to_bytes();
    rejected(load_glwe(&other_glwe));
    rejected(load_ggsw(&other_ggsw));
    let one_one = TfheParameters::message_1_carry_1();
    rejected(GlweCiphertext::from_bytes(&other_glwe, &one_one));
    rejected(GgswCiphertext::from_bytes(&other_ggsw, &one_one));
    assert!(GlweCiphertext::from_bytes(&other_glwe, &boolean).is_ok());
    // A key coefficient that is not a bit (first and last).
    for (at, value) in [(header + 8, 2u8), (key_bytes.len() - 1, 0xff)] {
        let mut bad = key_bytes.clone();
        bad[at] = value;
        rejected(load_key(&bad));
    }
    // Residues q and 2^64 - 1, first and last, in a GLWE and a GGSW; q - 1 is one.
    let (glwe_last, ggsw_last) = (glwe.len() - 8, ggsw.len() - 8);
    for (at, value) in [(header + 8, q), (glwe_last, q), (glwe_last, u64::MAX)] {
        rejected(load_glwe(&with_word(&glwe, at, &value.to_le_bytes())));
    }
    for (at, value) in [(header + 16, q), (ggsw_last, q), (ggsw_last, u64::MAX)] {
        rejected(load_ggsw(&with_word(&ggsw, at, &value.to_le_bytes())));
    }
    let top = (q - 1).to_le_bytes();
    assert!(load_glwe(&with_word(&glwe, glwe_last, &top)).is_ok());
    assert!(load_ggsw(&with_word(&ggsw, ggsw_last, &top)).is_ok());
    // The GGSW's decomposition: another base, or two levels (with the
    // bytes of the second level's rows).
    let mut bad = ggsw.clone();
    bad[header + 8..header + 12].copy_from_slice(&22u32.to_le_bytes());
    rejected(load_ggsw(&bad));
    let mut bad = ggsw.clone();
    bad[header + 12..header + 16].copy_from_slice(&2u32.to_le_bytes());
    bad.extend_from_slice(&ggsw[header + 16..]);
    rejected(load_ggsw(&bad));
}

/// Random byte flips and truncations of every serialized kind never panic:
/// each load returns a value or an error, and an accepted GLWE object,
/// integer or compressed value re-encodes to its bytes and is used.
#[test]
fn mutated_bytes_never_panic() {
    let params = TfheParameters::message_1_carry_1();
    let mut rng = Prng::from_seed([12; 32]);
    let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
    let glwe_key = ck.glwe_key();
    let n = params.polynomial_size;
    let glwe = glwe_key.encrypt(&random_messages(&mut rng, n), P).unwrap();
    let inputs = [
        ck.to_bytes().to_vec(),
        ck.encrypt(1).unwrap().to_bytes(),
        ck.encrypt_u8(0xa5).unwrap().to_bytes(),
        glwe_key.to_bytes().to_vec(),
        glwe.to_bytes(),
        glwe_key.encrypt_ggsw(1).unwrap().to_bytes(),
        ck.encrypt_compressed(1).unwrap().to_bytes(),
        ck.encrypt_u8_compressed(0xa5).unwrap().to_bytes(),
        glwe_key
            .encrypt_compressed(&vec![3; n], P)
            .unwrap()
            .to_bytes(),
        glwe_key.encrypt_ggsw_compressed(1).unwrap().to_bytes(),
    ];
    for bytes in &inputs {
        for _ in 0..300 {
            let mut m = bytes.clone();
            match rng.below(3).unwrap() {
                0 => m.truncate(rng.below(m.len() as u64).unwrap() as usize),
                1 => {
                    let i = rng.below(m.len() as u64).unwrap() as usize;
                    m[i] ^= 1 << rng.below(8).unwrap();
                }
                _ => {
                    // Mostly the header and the claims after it.
                    let i = rng.below(m.len().min(64) as u64).unwrap() as usize;
                    m[i] = rng.next_u64() as u8;
                }
            }
            let _ = ClientKey::from_bytes(&m);
            let _ = Ciphertext::from_bytes(&m, &params);
            let _ = BoolCiphertext::from_bytes(&m, &params);
            if let Ok(x) = RadixCiphertext::from_bytes(&m, &params) {
                assert_eq!(x.to_bytes(), m, "radix encoding is canonical");
                used(ck.key_id(), x.key_id(), ck.decrypt_radix(&x));
            }
            let _ = server_key(&m);
            let _ = CompressedBoolCiphertext::from_bytes(&m, &params);
            if let Ok(x) = CompressedCiphertext::from_bytes(&m, &params) {
                assert_eq!(x.to_bytes(), m, "compressed block encoding is canonical");
                used(
                    ck.key_id(),
                    x.key_id(),
                    ck.decrypt_with_carry(&x.decompress()),
                );
            }
            if let Ok(x) = CompressedRadixCiphertext::from_bytes(&m, &params) {
                assert_eq!(x.to_bytes(), m, "compressed radix encoding is canonical");
                used(ck.key_id(), x.key_id(), ck.decrypt_radix(&x.decompress()));
            }
            if let Ok(key) = GlweSecretKey::from_bytes(&m) {
                assert_eq!(key.to_bytes()[..], m, "GLWE key encoding is canonical");
                used(key.key_id(), glwe.key_id(), key.phase(&glwe));
            }
            if let Ok(ct) = GlweCiphertext::from_bytes(&m, &params) {
                assert_eq!(ct.to_bytes(), m, "GLWE encoding is canonical");
                used(glwe_key.key_id(), ct.key_id(), glwe_key.decrypt(&ct, P));
            }
            if let Ok(ggsw) = GgswCiphertext::from_bytes(&m, &params) {
                assert_eq!(ggsw.to_bytes(), m, "GGSW encoding is canonical");
                used(ggsw.key_id(), glwe.key_id(), ggsw.external_product(&glwe));
            }
            if let Ok(ct) = CompressedGlweCiphertext::from_bytes(&m, &params) {
                assert_eq!(ct.to_bytes(), m, "compressed GLWE encoding is canonical");
                let r = glwe_key.decrypt(&ct.decompress().unwrap(), P);
                used(glwe_key.key_id(), ct.key_id(), r);
            }
            if let Ok(ggsw) = CompressedGgswCiphertext::from_bytes(&m, &params) {
                assert_eq!(ggsw.to_bytes(), m, "compressed GGSW encoding is canonical");
                let r = ggsw.decompress().unwrap().external_product(&glwe);
                used(ggsw.key_id(), glwe.key_id(), r);
            }
        }
    }
}

/// Blocks, u8 and u64 integers: the loaded compressed value re-encodes to
/// its bytes, decompresses to a ciphertext with the plain encryption's
/// degree and noise level that decrypts to the value, and an addition of
/// decompressed integers decrypts to the sum. Prints the sizes of the
/// README's table.
#[test]
fn compressed_values_round_trip_decompress_and_compute() {
    let (ck, sk) = keys_2_2();
    let params = ck.parameters();
    for m in 0..4 {
        let c = ck.encrypt_compressed(m).unwrap();
        let bytes = c.to_bytes();
        let loaded = CompressedCiphertext::from_bytes(&bytes, params).unwrap();
        assert_eq!(loaded, c);
        assert_eq!(loaded.to_bytes(), bytes);
        let block = loaded.decompress();
        let plain = ck.encrypt(m).unwrap();
        assert_eq!(
            (block.degree(), block.noise_level()),
            (plain.degree(), plain.noise_level())
        );
        assert_eq!(ck.decrypt_with_carry(&block).unwrap(), m);
        assert!(ck.noise(&block).unwrap().abs() < 1e-9);
    }
    for (x, y, bits) in [(200u64, 100u64, 8u32), (u64::MAX - 5, 7, 64)] {
        let load = |v: u64| {
            let c = ck.encrypt_radix_compressed(v, bits).unwrap();
            let bytes = c.to_bytes();
            let loaded = CompressedRadixCiphertext::from_bytes(&bytes, params).unwrap();
            assert_eq!(loaded.to_bytes(), bytes);
            assert_eq!(loaded.bits(), bits);
            loaded.decompress()
        };
        let (a, b) = (load(x), load(y));
        assert_eq!(ck.decrypt_radix(&a).unwrap(), x);
        let plain = ck.encrypt_radix(x, bits).unwrap();
        for (got, want) in a.blocks().iter().zip(plain.blocks()) {
            assert_eq!(
                (got.degree(), got.noise_level()),
                (want.degree(), want.noise_level())
            );
        }
        let sum = sk.add(&a, &b).unwrap();
        assert_eq!(
            ck.decrypt_radix(&sum).unwrap(),
            x.wrapping_add(y) & (u64::MAX >> (64 - bits))
        );
    }
    assert_eq!(
        ck.decrypt_u8(&ck.encrypt_u8_compressed(77).unwrap().decompress())
            .unwrap(),
        77
    );
    assert_eq!(
        ck.decrypt_u64(&ck.encrypt_u64_compressed(1 << 40).unwrap().decompress())
            .unwrap(),
        1 << 40
    );

    let block = (
        ck.encrypt_compressed(1).unwrap().to_bytes().len(),
        ck.encrypt(1).unwrap().to_bytes().len(),
    );
    let radix = |bits| {
        (
            ck.encrypt_radix_compressed(1, bits)
                .unwrap()
                .to_bytes()
                .len(),
            ck.encrypt_radix(1, bits).unwrap().to_bytes().len(),
        )
    };
    eprintln!(
        "{}: compressed / plain bytes: block {block:?}, u8 {:?}, u64 {:?}",
        params.name,
        radix(8),
        radix(64)
    );
}

/// Booleans of the boolean set round trip and decrypt; their sizes.
#[test]
fn compressed_booleans_round_trip_and_decrypt() {
    let params = TfheParameters::boolean();
    let ck = ClientKey::generate_with(&params, &mut Prng::from_seed([11; 32])).unwrap();
    for b in [false, true] {
        let c = ck.encrypt_bool_compressed(b).unwrap();
        let bytes = c.to_bytes();
        let loaded = CompressedBoolCiphertext::from_bytes(&bytes, &params).unwrap();
        assert_eq!(loaded.to_bytes(), bytes);
        assert_eq!(ck.decrypt_bool(&loaded.decompress()).unwrap(), b);
        rejected(CompressedBoolCiphertext::from_bytes(
            &bytes[..bytes.len() - 1],
            &params,
        ));
        let mut long = bytes.clone();
        long.push(0);
        rejected(CompressedBoolCiphertext::from_bytes(&long, &params));
        rejected(CompressedBoolCiphertext::from_bytes(
            &bytes,
            &TfheParameters::message_2_carry_2(),
        ));
        rejected(BoolCiphertext::from_bytes(&bytes, &params));
    }
    eprintln!(
        "{}: compressed / plain boolean bytes: {} / {}",
        params.name,
        ck.encrypt_bool_compressed(true).unwrap().to_bytes().len(),
        ck.encrypt_bool(true).unwrap().to_bytes().len()
    );
}

/// Each value has a fresh seed (two encryptions of the same value differ in
/// seed, mask and body) and each block of an integer its own stream (no two
/// blocks share a mask).
#[test]
fn seeds_are_fresh_and_blocks_have_their_own_streams() {
    let (ck, _) = keys_2_2();
    let (a, b) = (
        ck.encrypt_compressed(2).unwrap(),
        ck.encrypt_compressed(2).unwrap(),
    );
    let (a, b) = (a.decompress(), b.decompress());
    assert_ne!(a.lwe().a, b.lwe().a);
    assert_ne!(a.lwe().b, b.lwe().b);
    let x = ck.encrypt_u16_compressed(0).unwrap().decompress();
    let y = ck.encrypt_u16_compressed(0).unwrap().decompress();
    let masks: Vec<&Vec<u64>> = x
        .blocks()
        .iter()
        .chain(y.blocks())
        .map(|c| &c.lwe().a)
        .collect();
    for i in 0..masks.len() {
        for j in 0..i {
            assert_ne!(masks[i], masks[j], "blocks {i} and {j} share a mask");
        }
    }
}

/// Truncation, trailing bytes, another kind or set, a width or block count
/// that does not fit, and degree or noise claims outside the block are refused.
#[test]
fn malformed_compressed_bytes_are_rejected() {
    let (ck, _) = keys_2_2();
    let params = ck.parameters();
    let other = TfheParameters::message_1_carry_1();
    let header = 7 + params.name.len() + KeyId::LEN;

    let block = ck.encrypt_compressed(3).unwrap().to_bytes();
    assert_eq!(block.len(), header + 32 + 24);
    let load = |bytes: &[u8]| CompressedCiphertext::from_bytes(bytes, params);
    load(&block).unwrap();
    for cut in [0, 6, header, header + 31, header + 40, block.len() - 1] {
        rejected(load(&block[..cut]));
    }
    let mut long = block.clone();
    long.push(0);
    rejected(load(&long));
    rejected(CompressedCiphertext::from_bytes(&block, &other));
    rejected(Ciphertext::from_bytes(&block, params));
    rejected(load(&ck.encrypt(3).unwrap().to_bytes()));
    // Kind byte, degree outside the block, noise level 0 or above the maximum.
    let mut bad = block.clone();
    bad[5] = 3;
    rejected(load(&bad));
    for (offset, value) in [(32, 16u64), (40, 0), (40, 100)] {
        let mut bad = block.clone();
        bad[header + offset..header + offset + 8].copy_from_slice(&value.to_le_bytes());
        rejected(load(&bad));
    }

    let radix = ck.encrypt_u8_compressed(200).unwrap().to_bytes();
    assert_eq!(radix.len(), header + 2 + 32 + 4 * 24);
    let load = |bytes: &[u8]| CompressedRadixCiphertext::from_bytes(bytes, params);
    load(&radix).unwrap();
    for cut in [
        0,
        header,
        header + 1,
        header + 2,
        header + 33,
        radix.len() - 1,
    ] {
        rejected(load(&radix[..cut]));
    }
    let mut long = radix.clone();
    long.push(0);
    rejected(load(&long));
    rejected(CompressedRadixCiphertext::from_bytes(&radix, &other));
    rejected(RadixCiphertext::from_bytes(&radix, params));
    rejected(load(&block));
    let edit = |at: usize, value: u8| {
        let mut bad = radix.clone();
        bad[at] = value;
        bad
    };
    for bits in [0u8, 4, 12, 16, 255] {
        rejected(load(&edit(header, bits)));
    }
    for count in [0u8, 3, 5, 32, 255] {
        rejected(load(&edit(header + 1, count)));
    }
    // One block more with its bytes: the count no longer fits the width.
    let mut five = edit(header + 1, 5);
    five.extend_from_slice(&radix[radix.len() - 24..]);
    rejected(load(&five));
    // The last block holds a carry (degree 4) or claims no noise.
    let last = radix.len() - 24;
    for (offset, value) in [(0, 4u64), (8, 0)] {
        let mut bad = radix.clone();
        bad[last + offset..last + offset + 8].copy_from_slice(&value.to_le_bytes());
        rejected(load(&bad));
    }
}
