//! Serialization: round trips that still compute, and rejection of malformed bytes.

mod common;
use common::keys_2_2;
use triskel_ring::Prng;
use triskel_tfhe::{
    BoolCiphertext, Ciphertext, ClientKey, Error, Gate, RadixCiphertext, ServerKey, TfheParameters,
};

/// The caller's line names the case (the loaded value is too large to print).
#[track_caller]
fn rejected<T>(r: Result<T, Error>) {
    assert!(r.is_err(), "malformed bytes accepted");
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
    let sk2 = ServerKey::from_bytes(&sk_bytes).unwrap();
    let (a, b) = (
        ck.encrypt_bool(true).unwrap(),
        ck.encrypt_bool(false).unwrap(),
    );
    let a2 = BoolCiphertext::from_bytes(&a.to_bytes(&params), &params).unwrap();
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
        rejected(ServerKey::from_bytes(&sk_bytes[..cut]));
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
    let header = 7 + params.name.len() + 32;
    bad[header..header + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    rejected(ServerKey::from_bytes(&bad));
    // A boolean loaded as another set, or as a block.
    rejected(BoolCiphertext::from_bytes(
        &a.to_bytes(&params),
        &TfheParameters::message_2_carry_2(),
    ));
    rejected(Ciphertext::from_bytes(&a.to_bytes(&params), &params));
}

#[test]
fn blocks_round_trip_and_claims_are_checked() {
    let params = TfheParameters::message_1_carry_1();
    let mut rng = Prng::from_seed([5; 32]);
    let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
    let ct = ck.encrypt(1).unwrap();
    let bytes = ct.to_bytes(&params);
    let back = Ciphertext::from_bytes(&bytes, &params).unwrap();
    assert_eq!(back, ct);
    assert_eq!(ck.decrypt(&back).unwrap(), 1);
    let header = 7 + params.name.len();
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
        let a2 = load(&a.to_bytes(params)).unwrap();
        let b2 = load(&b.to_bytes(params)).unwrap();
        assert_eq!((&a2, &b2), (&a, &b));
        let sum = sk.add(&a2, &b2).unwrap();
        let sum2 = load(&sum.to_bytes(params)).unwrap();
        assert_eq!(sum2, sum);
        assert_eq!(ck.decrypt_radix(&sum2).unwrap(), x.wrapping_add(7) & mask);
        // A loaded result computes on: (x + 7) - 7.
        let back = sk.sub(&sum2, &b2).unwrap();
        assert_eq!(ck.decrypt_radix(&back).unwrap(), x);
    }

    let a = ck.encrypt_u8(200).unwrap();
    let bytes = a.to_bytes(params);
    let header = 7 + params.name.len();
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
    for (i, v) in [(4usize, 2u8), (5, 3)] {
        let mut bad = bytes.clone();
        bad[i] = v;
        rejected(load(&bad));
    }
    rejected(load(&ck.encrypt(1).unwrap().to_bytes(params)));
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

/// Random byte flips and truncations of every serialized kind never panic:
/// each load returns a value or an error.
#[test]
fn mutated_bytes_never_panic() {
    let params = TfheParameters::message_1_carry_1();
    let mut rng = Prng::from_seed([12; 32]);
    let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
    let inputs = [
        ck.to_bytes().to_vec(),
        ck.encrypt(1).unwrap().to_bytes(&params),
        ck.encrypt_u8(0xa5).unwrap().to_bytes(&params),
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
                assert_eq!(x.to_bytes(&params), m, "radix encoding is canonical");
                ck.decrypt_radix(&x).unwrap();
            }
            let _ = ServerKey::from_bytes(&m);
        }
    }
}
