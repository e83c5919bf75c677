//! Serialization: round trips that still compute, and rejection of malformed bytes.

use triskel_ring::Prng;
use triskel_tfhe::{BoolCiphertext, Ciphertext, ClientKey, Error, Gate, ServerKey, TfheParameters};

fn rejected<T: std::fmt::Debug>(r: Result<T, Error>) {
    assert!(r.is_err(), "accepted: {r:?}");
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
            let _ = ServerKey::from_bytes(&m);
        }
    }
}
