//! Multi-bit blind rotation (grouping 2): every LUT of the multi-bit 2_2 and 1_1 sets
//! on the whole block, integer operations and boolean gates through it, one
//! and two threads giving the same ciphertexts, and its server key's
//! serialization (round trip and rejection).

use std::sync::OnceLock;

use triskel_ring::{KeyId, Prng};
use triskel_tfhe::{Ciphertext, ClientKey, Comparison, Gate, ServerKey, TfheParameters};

fn keys() -> &'static (ClientKey, ServerKey) {
    static KEYS: OnceLock<(ClientKey, ServerKey)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut rng = Prng::from_seed([7; 32]);
        let params = TfheParameters::message_2_carry_2_multi_bit();
        let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng).unwrap();
        (ck, sk)
    })
}

/// v in [0, 16) as a block: a fresh message plus a constant (carries set).
fn block(ck: &ClientKey, sk: &ServerKey, v: u64) -> Ciphertext {
    sk.unchecked_scalar_add(&ck.encrypt(v % 4).unwrap(), v - v % 4)
        .unwrap()
}

type Lut = fn(u64) -> u64;

/// Every LUT on every block value v < `values` (message v mod `msg`, the
/// rest as carries), applied twice in a row (bootstrapped outputs feed
/// further bootstraps).
fn every_lut_twice(ck: &ClientKey, sk: &ServerKey, msg: u64, values: u64, luts: &[(&str, Lut)]) {
    for v in 0..values {
        let ct = sk
            .unchecked_scalar_add(&ck.encrypt(v % msg).unwrap(), v - v % msg)
            .unwrap();
        for &(name, f) in luts {
            let lut = sk.lookup_table(f).unwrap();
            let out = sk.apply_lookup_table(&ct, &lut).unwrap();
            assert_eq!(ck.decrypt_with_carry(&out).unwrap(), f(v), "{name} {v}");
            let again = sk.apply_lookup_table(&out, &lut).unwrap();
            assert_eq!(
                ck.decrypt_with_carry(&again).unwrap(),
                f(f(v)),
                "{name} {v}"
            );
        }
    }
}

#[test]
fn every_lut_on_the_whole_block() {
    let (ck, sk) = keys();
    let luts: [(&str, Lut); 3] = [
        ("square + 1", |x| (x * x + 1) % 16),
        ("carry", |x| x / 4),
        ("reverse", |x| 15 - x),
    ];
    every_lut_twice(ck, sk, 4, 16, &luts);
}

/// The multi-bit 1_1 set: every LUT on the whole block (message and carry
/// bit).
#[test]
fn every_lut_of_the_multi_bit_1_1_set() {
    let mut rng = Prng::from_seed([11; 32]);
    let params = TfheParameters::message_1_carry_1_multi_bit();
    let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng).unwrap();
    let luts: [(&str, Lut); 3] = [
        ("not", |x| 3 - x),
        ("carry", |x| x / 2),
        ("double", |x| (2 * x) % 4),
    ];
    every_lut_twice(&ck, &sk, 2, 4, &luts);
}

#[test]
fn integer_operations_through_multi_bit_bootstraps() {
    let (ck, sk) = keys();
    for (x, y) in [(200u8, 77u8), (255, 1), (0, 255), (93, 93)] {
        let (a, b) = (ck.encrypt_u8(x).unwrap(), ck.encrypt_u8(y).unwrap());
        let sum = sk.add(&a, &b).unwrap();
        assert_eq!(ck.decrypt_radix(&sum).unwrap(), x.wrapping_add(y) as u64);
        let gt = sk.compare(Comparison::Gt, &a, &b).unwrap();
        assert_eq!(ck.decrypt(&gt).unwrap(), (x > y) as u64, "{x} > {y}");
        let eq = sk.compare(Comparison::Eq, &a, &b).unwrap();
        assert_eq!(ck.decrypt(&eq).unwrap(), (x == y) as u64, "{x} == {y}");
    }
    let (a, b) = (ck.encrypt_u8(93).unwrap(), ck.encrypt_u8(19).unwrap());
    let product = sk.mul(&a, &b).unwrap();
    assert_eq!(ck.decrypt_radix(&product).unwrap(), 93 * 19 % 256);
}

/// The same bootstrap in a one-thread and a two-thread rayon pool (the
/// second combines the next pair's GGSW beside the external product), and
/// called from outside any pool (the global pool's, entered once for the
/// rotation when it has several threads): identical ciphertexts, which
/// decrypt to the LUT's value.
#[test]
fn one_and_two_threads_give_the_same_ciphertexts() {
    let (ck, sk) = keys();
    let lut = sk.lookup_table(|x| (3 * x + 5) % 16).unwrap();
    let run = |threads: usize, ct: &Ciphertext| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| sk.apply_lookup_table(ct, &lut).unwrap())
    };
    for v in [0, 6, 15] {
        let ct = block(ck, sk, v);
        let (one, two) = (run(1, &ct), run(2, &ct));
        assert_eq!(one, two, "{v}");
        assert_eq!(one, sk.apply_lookup_table(&ct, &lut).unwrap(), "{v}");
        assert_eq!(ck.decrypt_with_carry(&two).unwrap(), (3 * v + 5) % 16);
    }
}

#[test]
fn every_gate_with_the_multi_bit_boolean_set() {
    let mut rng = Prng::from_seed([9; 32]);
    let ck = ClientKey::generate_with(&TfheParameters::boolean_multi_bit(), &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng).unwrap();
    for a in [false, true] {
        let ca = ck.encrypt_bool(a).unwrap();
        for b in [false, true] {
            let cb = ck.encrypt_bool(b).unwrap();
            for g in [
                Gate::And,
                Gate::Nand,
                Gate::Or,
                Gate::Nor,
                Gate::Xor,
                Gate::Xnor,
            ] {
                let out = sk.gate(g, &ca, &cb).unwrap();
                assert_eq!(
                    ck.decrypt_bool(&out).unwrap(),
                    g.eval(a, b),
                    "{g:?} {a} {b}"
                );
            }
        }
    }
}

#[test]
fn multi_bit_server_key_round_trips_and_bad_bytes_are_rejected() {
    let (ck, sk) = keys();
    let params = sk.parameters();
    let bytes = sk.to_bytes();
    assert_eq!(bytes.len(), sk.compressed_size());
    eprintln!(
        "{}: server key {} bytes compressed, {} expanded",
        params.name,
        sk.compressed_size(),
        sk.expanded_size()
    );
    let loaded = ServerKey::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.to_bytes(), bytes);
    let lut = sk.lookup_table(|x| 15 - x).unwrap();
    let ct = ck.encrypt(2).unwrap();
    let out = loaded.apply_lookup_table(&ct, &lut).unwrap();
    assert_eq!(out, sk.apply_lookup_table(&ct, &lut).unwrap());
    assert_eq!(ck.decrypt_with_carry(&out).unwrap(), 13);

    // The classic kind byte with a multi-bit set, truncation, trailing bytes,
    // an unreduced residue in the last pair's GGSWs.
    let mut bad = bytes.clone();
    assert_eq!(bad[5], 6);
    bad[5] = 2;
    assert!(ServerKey::from_bytes(&bad).is_err());
    for cut in [0, 6, 100, bytes.len() / 2, bytes.len() - 1] {
        assert!(ServerKey::from_bytes(&bytes[..cut]).is_err(), "cut {cut}");
    }
    let mut long = bytes.clone();
    long.push(0);
    assert!(ServerKey::from_bytes(&long).is_err());
    // Header, seed, then (k + 1) l = 2 bodies of N = 2048 words per GGSW.
    let bsk_end =
        7 + params.name.len() + KeyId::LEN + 32 + params.bootstrapping_ggsws() * 2 * 2048 * 8;
    let mut bad = bytes.clone();
    bad[bsk_end - 8..bsk_end].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(ServerKey::from_bytes(&bad).is_err());
}

/// A classic key's bytes relabelled as multi-bit (kind 6) are refused: the
/// kind must match the named set's grouping.
#[test]
fn classic_bytes_with_the_multi_bit_kind_are_rejected() {
    let params = TfheParameters::message_1_carry_1();
    let mut rng = Prng::from_seed([10; 32]);
    let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
    let mut bytes = ck.server_key_with(&mut rng).unwrap().to_bytes();
    assert!(ServerKey::from_bytes(&bytes).is_ok());
    bytes[5] = 6;
    assert!(ServerKey::from_bytes(&bytes).is_err());
}
