//! Key identities: values and keys carry the identity of their client key,
//! and a second client key of the same set refuses them with
//! `KeyMismatch` naming the check (`what`) and both identities, at every
//! entry, before any bootstrap. Values of the right key still compute, a
//! lookup table (public, no key in it) serves every key of its set, and
//! identities survive compression and serialization; bytes of the format
//! before identities are refused with the reason.

mod common;
use std::sync::OnceLock;

use common::{keys_2_2, radix_entries, seeded_keys_2_2};
use triskel_ring::{KeyId, Prng};
use triskel_tfhe::{
    BoolCiphertext, Ciphertext, ClientKey, CompressedBoolCiphertext, CompressedCiphertext,
    CompressedGgswCiphertext, CompressedGlweCiphertext, CompressedRadixCiphertext, Error, Gate,
    GgswCiphertext, GlweCiphertext, GlweSecretKey, RadixCiphertext, Result, ServerKey,
    TfheParameters,
};

/// A second 2_2 key pair (the twin of `keys_2_2`).
fn twin_2_2() -> &'static (ClientKey, ServerKey) {
    static KEYS: OnceLock<(ClientKey, ServerKey)> = OnceLock::new();
    KEYS.get_or_init(|| seeded_keys_2_2(31))
}

/// `r` is a `KeyMismatch` of the check `what`: a value of identity `found`
/// given to a key (or with a value) of identity `expected`.
#[track_caller]
fn refused<T>(what: &str, r: Result<T>, expected: KeyId, found: KeyId) {
    match r.map(|_| ()) {
        Err(Error::Ring(triskel_ring::Error::KeyMismatch {
            what: w,
            expected: e,
            found: f,
        })) => assert_eq!((w.as_str(), e, f), (what, expected, found)),
        other => panic!("{what} of key {found} given to key {expected}: {other:?}"),
    }
}

const U8: &str = "a 8-bit integer";
const BLOCK: &str = "a block";
const BOOL: &str = "a boolean";
const GLWE: &str = "a GLWE ciphertext";

#[test]
fn keys_of_one_set_have_their_own_identities() {
    let (ck, sk) = keys_2_2();
    let (ck2, sk2) = twin_2_2();
    assert_ne!(ck.key_id(), ck2.key_id());
    assert_eq!(sk.key_id(), ck.key_id());
    assert_eq!(sk2.key_id(), ck2.key_id());
    assert_eq!(ck.glwe_key().key_id(), ck.key_id());
    // A seeded generator gives the same identity again.
    let mut rng = Prng::from_seed([31; 32]);
    let again = ClientKey::generate_with(&TfheParameters::message_2_carry_2(), &mut rng).unwrap();
    assert_eq!(again.key_id(), ck2.key_id());
    let x = ck.encrypt_u8(5).unwrap();
    assert_eq!(x.key_id(), ck.key_id());
    assert!(x.blocks().iter().all(|b| b.key_id() == ck.key_id()));
    assert_eq!(sk.trivial(2).unwrap().key_id(), sk.key_id());
    assert_eq!(sk.add(&x, &x).unwrap().key_id(), ck.key_id());
}

/// Radix integers of the twin key in every radix entry of the other key
/// (alone and mixed), and the other way round.
#[test]
fn radix_integers_of_another_key_are_refused() {
    let (ck, sk) = keys_2_2();
    let (ck2, sk2) = twin_2_2();
    let (id, id2) = (ck.key_id(), ck2.key_id());
    let a = ck.encrypt_u8(200).unwrap();
    let a2 = ck2.encrypt_u8(77).unwrap();
    let cond = ck.encrypt(1).unwrap();
    let cond2 = ck2.encrypt(1).unwrap();

    for r in radix_entries(ck, sk, &a, &a2, &cond) {
        refused(U8, r, id, id2);
    }
    refused(BLOCK, sk.select(&cond2, &a, &a), id, id2);
    refused(BLOCK, sk.select(&sk2.trivial(1).unwrap(), &a, &a), id, id2);
    refused(U8, ck2.decrypt_u8(&a), id2, id);
    refused(U8, sk2.add(&a, &a), id2, id);
    // Blocks of two keys do not make an integer.
    let mut mixed = a.blocks().to_vec();
    mixed[3] = a2.blocks()[3].clone();
    refused(BLOCK, sk.radix_from_blocks(mixed, 8), id, id2);

    // The right key's integers still compute.
    assert_eq!(ck.decrypt_u8(&sk.add(&a, &a).unwrap()).unwrap(), 144);
    assert_eq!(
        ck2.decrypt_u8(&sk2.scalar_add(&a2, 3).unwrap()).unwrap(),
        80
    );
}

/// Blocks of the twin key in every shortint entry; lookup tables are
/// public, so the twin server's tables serve the other key.
#[test]
fn blocks_of_another_key_are_refused_and_tables_are_shared() {
    let (ck, sk) = keys_2_2();
    let (ck2, sk2) = twin_2_2();
    let (id, id2) = (ck.key_id(), ck2.key_id());
    let b = ck.encrypt(2).unwrap();
    let b2 = ck2.encrypt(1).unwrap();
    let lut = sk.lookup_table(|x| (x + 1) % 4).unwrap();
    let two = sk.two_lookup_tables(|x| x, |x| x ^ 1).unwrap();

    refused(BLOCK, ck.decrypt(&b2), id, id2);
    refused(BLOCK, ck.decrypt_with_carry(&b2), id, id2);
    refused(BLOCK, ck.noise(&b2), id, id2);
    refused(BLOCK, ck.decrypt(&sk2.trivial(1).unwrap()), id, id2);
    refused(BLOCK, sk.apply_lookup_table(&b2, &lut), id, id2);
    refused(
        BLOCK,
        sk.apply_lookup_tables(&[&b, &b2], &[&lut, &lut]),
        id,
        id2,
    );
    refused(BLOCK, sk.apply_lookup_tables_shared(&b2, &[&lut]), id, id2);
    refused(BLOCK, sk.apply_two_lookup_tables(&b2, &two), id, id2);
    for (x, y) in [(&b2, &b), (&b, &b2)] {
        refused(BLOCK, sk.pack(x, y), id, id2);
        refused(BLOCK, sk.unchecked_add(x, y), id, id2);
        refused(BLOCK, sk.unchecked_sub_with_offset(x, y, 4), id, id2);
    }
    // Refused as another key's, not as a block holding a carry.
    let carried = sk2.unchecked_scalar_add(&b2, 3).unwrap();
    refused(BLOCK, sk.pack(&carried, &b), id, id2);
    refused(BLOCK, sk.unchecked_scalar_add(&b2, 1), id, id2);
    refused(BLOCK, sk.unchecked_scalar_mul(&b2, 2), id, id2);
    refused(
        BLOCK,
        sk.unchecked_add(&b, &sk2.trivial(1).unwrap()),
        id,
        id2,
    );

    // A table built by the twin server computes on this key's block.
    let lut2 = sk2.lookup_table(|x| (x + 1) % 4).unwrap();
    let out = sk.apply_lookup_table(&b, &lut2).unwrap();
    assert_eq!(out.key_id(), id);
    assert_eq!(ck.decrypt(&out).unwrap(), 3);
}

/// Booleans of a second boolean key in every gate and decryption.
#[test]
fn booleans_of_another_key_are_refused() {
    let params = TfheParameters::boolean();
    let mut rng = Prng::from_seed([32; 32]);
    let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng).unwrap();
    let ck2 = ClientKey::generate_with(&params, &mut Prng::from_seed([33; 32])).unwrap();
    let (id, id2) = (ck.key_id(), ck2.key_id());
    let t = ck.encrypt_bool(true).unwrap();
    let f = ck.encrypt_bool(false).unwrap();
    let x = ck2.encrypt_bool(true).unwrap();
    let xc = ck2.encrypt_bool_compressed(true).unwrap().decompress();
    assert_eq!((x.key_id(), xc.key_id()), (id2, id2));
    for y in [&x, &xc] {
        refused(BOOL, ck.decrypt_bool(y), id, id2);
        refused(BOOL, sk.not(y), id, id2);
        for gate in [Gate::And, Gate::Nand, Gate::Xor] {
            refused(BOOL, sk.gate(gate, &t, y), id, id2);
            refused(BOOL, sk.gate(gate, y, &t), id, id2);
        }
        refused(BOOL, sk.mux(y, &t, &f), id, id2);
        refused(BOOL, sk.mux(&t, y, &f), id, id2);
        refused(BOOL, sk.mux(&t, &f, y), id, id2);
    }
    refused(BOOL, ck2.decrypt_bool(&t), id2, id);
    let out = sk.gate(Gate::Nand, &t, &f).unwrap();
    assert_eq!(out.key_id(), id);
    assert!(ck.decrypt_bool(&out).unwrap());
}

/// GLWE and GGSW ciphertexts of two GLWE keys of one set: decryption,
/// sums, external products and CMuxes refuse the mixture; a trivial GLWE
/// made for a key combines with that key's GGSW.
#[test]
fn glwe_objects_of_another_key_are_refused() {
    let params = TfheParameters::message_2_carry_2();
    let key = GlweSecretKey::generate(&params).unwrap();
    let key2 = GlweSecretKey::generate(&params).unwrap();
    let (id, id2) = (key.key_id(), key2.key_id());
    assert_ne!(id, id2);
    let n = key.polynomial_size();
    let m: Vec<u64> = (0..n as u64).map(|i| i % 16).collect();
    let c = key.encrypt(&m, 16).unwrap();
    let c2 = key2.encrypt(&m, 16).unwrap();
    assert_eq!((c.key_id(), c2.key_id()), (id, id2));
    refused(GLWE, key.phase(&c2), id, id2);
    refused(GLWE, key.decrypt(&c2, 16), id, id2);
    refused(GLWE, c.add(&c2), id, id2);
    refused(GLWE, c.sub(&c2), id, id2);
    refused(GLWE, c2.add(&c), id2, id);
    let ggsw = key.encrypt_ggsw(1).unwrap();
    assert_eq!(ggsw.key_id(), id);
    refused(GLWE, ggsw.external_product(&c2), id, id2);
    refused(GLWE, ggsw.cmux(&c2, &c), id, id2);
    refused(GLWE, ggsw.cmux(&c, &c2), id, id2);
    let mut acc = c2.clone();
    refused(GLWE, ggsw.cmux_rotate_assign(&mut acc, 3), id, id2);
    assert_eq!(acc.polynomials(), c2.polynomials(), "nothing written");
    // Compressed forms keep the identity.
    let cc = key2
        .encrypt_compressed(&m, 16)
        .unwrap()
        .decompress()
        .unwrap();
    refused(GLWE, key.decrypt(&cc, 16), id, id2);
    let g2 = key2
        .encrypt_ggsw_compressed(1)
        .unwrap()
        .decompress()
        .unwrap();
    refused(GLWE, g2.external_product(&c), id2, id);
    // The right key's objects compute; a trivial GLWE made for the key too.
    assert_eq!(key.decrypt(&c.add(&c).unwrap(), 16).unwrap().len(), n);
    let plaintext: Vec<u64> = (0..n as u64).collect();
    let trivial = GlweCiphertext::trivial(&params, id, &plaintext).unwrap();
    assert_eq!(ggsw.external_product(&trivial).unwrap().key_id(), id);
    refused(GLWE, g2.external_product(&trivial), id2, id);
}

/// `r` is a ring `KeyMismatch` of the check `what` (an entry of
/// `triskel_ring` itself: LWE keys and key-switching keys).
#[track_caller]
fn refused_by_ring<T>(what: &str, r: triskel_ring::Result<T>, expected: KeyId, found: KeyId) {
    refused(what, r.map_err(Error::Ring), expected, found);
}

const SWITCH: &str = "an LWE ciphertext to key-switch";
const SMALL: &str = "a small-key ciphertext";

/// Raw LWE values (a block's LWE ciphertext, a key switch's output, a GLWE
/// sample extraction, a foreign key's ciphertext) carry their key's
/// identity: the twin key's are refused by the key switches (one and many),
/// the sign bootstrap and block, decryption under the big key, and a
/// key-switching key from a foreign key refuses a ciphertext of a twin of
/// that foreign key (same coefficients, another identity).
#[test]
fn raw_lwe_values_of_another_key_are_refused() {
    use triskel_ring::LweSecretKey;
    let (ck, sk) = keys_2_2();
    let (ck2, sk2) = twin_2_2();
    let (id, id2) = (ck.key_id(), ck2.key_id());
    let b = ck.encrypt(1).unwrap();
    let b2 = ck2.encrypt(1).unwrap();
    let raw2 = b2.lwe();
    assert_eq!((b.lwe().key_id, raw2.key_id), (id, id2));
    refused(SWITCH, sk.key_switch(raw2), id, id2);
    refused(SWITCH, sk.key_switch_many(&[b.lwe(), raw2]), id, id2);
    refused_by_ring(
        "an LWE ciphertext to decrypt",
        ck.big_key().phase(raw2),
        id,
        id2,
    );
    let small2 = sk2.key_switch(raw2).unwrap();
    assert_eq!(small2.key_id, id2);
    refused(SMALL, sk.sign_bootstrap(&small2, 1 << 58), id, id2);
    refused(SMALL, sk.sign_block(&small2), id, id2);
    let small = sk.key_switch_many(&[b.lwe()]).unwrap();
    assert_eq!(small[0].key_id, id);

    // Sample extraction keeps the GLWE ciphertext's identity.
    let n = ck.glwe_key().polynomial_size();
    let g2 = ck2.glwe_key().encrypt(&vec![1; n], 16).unwrap();
    let e2 = g2.sample_extract(3).unwrap();
    assert_eq!(e2.key_id, id2);
    refused_by_ring(
        "an LWE ciphertext to decrypt",
        ck.big_key().phase(&e2),
        id,
        id2,
    );
    ck2.big_key().phase(&e2).unwrap();

    // A key-switching key from a foreign key takes only that key's values
    // and gives this client's.
    let mut rng = Prng::from_seed([36; 32]);
    let coeffs: Vec<i64> = (0..1024).map(|i| [0, 1, -1][i % 3]).collect();
    let (fid, tid) = (KeyId::sample(&mut rng), KeyId::sample(&mut rng));
    let foreign = LweSecretKey::from_coefficients(&coeffs, fid);
    let twin = LweSecretKey::from_coefficients(&coeffs, tid);
    let ksk = ck.key_switching_key_from(&foreign, 3, 6).unwrap();
    assert_eq!((ksk.input_id(), ksk.output_id()), (fid, id));
    let from_twin = twin.encrypt(1 << 61, 2f64.powi(-50), &mut rng).unwrap();
    refused_by_ring(SWITCH, ksk.switch(&from_twin), fid, tid);
    refused_by_ring(SWITCH, ksk.switch_many(&[&from_twin]), fid, tid);
    let ct = foreign.encrypt(1 << 61, 2f64.powi(-50), &mut rng).unwrap();
    assert_eq!(ksk.switch(&ct).unwrap().key_id, id);
    let ksk2 = ck2.key_switching_key_from(&foreign, 3, 6).unwrap();
    refused(SMALL, sk.sign_block(&ksk2.switch(&ct).unwrap()), id, id2);
}

/// Every serialized kind keeps its identity through a round trip, and a
/// loaded value is refused by the other key.
#[test]
fn serialization_keeps_identities() {
    let (ck, sk) = keys_2_2();
    let (ck2, _) = twin_2_2();
    let params = ck.parameters();
    let (id, id2) = (ck.key_id(), ck2.key_id());
    let loaded = ClientKey::from_bytes(&ck.to_bytes()).unwrap();
    assert_eq!(loaded.key_id(), id);
    assert_eq!(loaded.glwe_key().key_id(), id);
    let loaded_sk = ServerKey::from_bytes(&sk.to_bytes()).unwrap();
    assert_eq!(loaded_sk.key_id(), id);
    // The loaded key-switching key takes the header's identity.
    let b2 = ck2.encrypt(1).unwrap();
    refused(SWITCH, loaded_sk.key_switch(b2.lwe()), id, id2);
    let b = ck.encrypt(1).unwrap();
    assert_eq!(loaded_sk.key_switch(b.lwe()).unwrap().key_id, id);

    let x2 = ck2.encrypt_u8(9).unwrap();
    let back = RadixCiphertext::from_bytes(&x2.to_bytes(), params).unwrap();
    assert_eq!(back.key_id(), id2);
    refused(U8, ck.decrypt_u8(&back), id, id2);
    assert_eq!(ck2.decrypt_u8(&back).unwrap(), 9);
    let b2 = ck2.encrypt(3).unwrap();
    let back = Ciphertext::from_bytes(&b2.to_bytes(), params).unwrap();
    refused(BLOCK, ck.decrypt(&back), id, id2);
    let c2 = ck2.encrypt_compressed(3).unwrap();
    let back = CompressedCiphertext::from_bytes(&c2.to_bytes(), params).unwrap();
    assert_eq!(back.key_id(), id2);
    refused(BLOCK, ck.decrypt(&back.decompress()), id, id2);
    let r2 = ck2.encrypt_u16_compressed(300).unwrap();
    let back = CompressedRadixCiphertext::from_bytes(&r2.to_bytes(), params).unwrap();
    assert_eq!(back.key_id(), id2);
    refused(
        "a 16-bit integer",
        ck.decrypt_u16(&back.decompress()),
        id,
        id2,
    );
    assert_eq!(ck2.decrypt_u16(&back.decompress()).unwrap(), 300);

    let boolean = TfheParameters::boolean();
    let bk = ClientKey::generate_with(&boolean, &mut Prng::from_seed([34; 32])).unwrap();
    let bk2 = ClientKey::generate_with(&boolean, &mut Prng::from_seed([35; 32])).unwrap();
    let t2 = bk2.encrypt_bool(true).unwrap();
    let back = BoolCiphertext::from_bytes(&t2.to_bytes(), &boolean).unwrap();
    refused(BOOL, bk.decrypt_bool(&back), bk.key_id(), bk2.key_id());
    let tc2 = bk2.encrypt_bool_compressed(true).unwrap();
    let back = CompressedBoolCiphertext::from_bytes(&tc2.to_bytes(), &boolean).unwrap();
    assert_eq!(back.key_id(), bk2.key_id());

    let glwe = ck.glwe_key();
    let n = glwe.polynomial_size();
    let c = glwe.encrypt(&vec![1; n], 16).unwrap();
    assert_eq!(
        GlweSecretKey::from_bytes(&glwe.to_bytes())
            .unwrap()
            .key_id(),
        id
    );
    assert_eq!(
        GlweCiphertext::from_bytes(&c.to_bytes(), params)
            .unwrap()
            .key_id(),
        id
    );
    let g = glwe.encrypt_ggsw(1).unwrap();
    assert_eq!(
        GgswCiphertext::from_bytes(&g.to_bytes(), params)
            .unwrap()
            .key_id(),
        id
    );
    let cg = glwe.encrypt_compressed(&vec![1; n], 16).unwrap();
    let back = CompressedGlweCiphertext::from_bytes(&cg.to_bytes(), params).unwrap();
    assert_eq!(back.key_id(), id);
    let cgg = glwe.encrypt_ggsw_compressed(1).unwrap();
    let back = CompressedGgswCiphertext::from_bytes(&cgg.to_bytes(), params).unwrap();
    assert_eq!(back.key_id(), id);
}

/// Bytes of format version 1 (no identities: the header ended at the set
/// name) are refused with an error that says they predate identities.
#[test]
fn bytes_before_key_identities_are_refused_with_the_reason() {
    let (ck, _) = keys_2_2();
    let params = ck.parameters();
    let bytes = ck.encrypt(1).unwrap().to_bytes();
    let header = 7 + params.name.len();
    let mut old = bytes[..header].to_vec();
    old[4] = 1;
    old.extend_from_slice(&bytes[header + KeyId::LEN..]);
    let e = Ciphertext::from_bytes(&old, params).unwrap_err();
    assert!(
        matches!(&e, Error::Malformed(m) if m.contains("predates key identities")),
        "{e}"
    );
    let mut old_key = ck.to_bytes().to_vec();
    old_key[4] = 1;
    let e = ClientKey::from_bytes(&old_key).unwrap_err();
    assert!(e.to_string().contains("predates key identities"), "{e}");
}
