//! Values carry their parameter set, and keys of another set refuse them
//! with `Error::Mismatch` naming both sets: 1_1 and 2_2
//! values, a set and its multi-bit or 2^-64 variant, and the boolean set and
//! its multi-bit variant all have 2048-dimensional LWE ciphertexts, which a
//! key of the other set used to decrypt and compute to garbage with `Ok`.
//! Every refusal comes before any bootstrap, so the test costs the key
//! generation of three sets.

mod common;
use std::sync::OnceLock;

use common::{keys_2_2, radix_entries};
use triskel_ring::Prng;
use triskel_tfhe::{
    ClientKey, Comparison, CompressedRadixCiphertext, Error, Gate, RadixCiphertext, Result,
    ServerKey, TfheParameters,
};

fn keys_1_1() -> &'static (ClientKey, ServerKey) {
    static KEYS: OnceLock<(ClientKey, ServerKey)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut rng = Prng::from_seed([21; 32]);
        let ck = ClientKey::generate_with(&TfheParameters::message_1_carry_1(), &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng).unwrap();
        (ck, sk)
    })
}

/// A client key alone (cheap: no bootstrapping key).
fn client(params: TfheParameters, seed: u8) -> ClientKey {
    ClientKey::generate_with(&params, &mut Prng::from_seed([seed; 32])).unwrap()
}

/// `r` is a `Mismatch` saying `what` (e.g. "a block", the check that
/// refused it) of the set of `value` went to keys of the set of `key`.
#[track_caller]
fn refused<T>(what: &str, r: Result<T>, value: &ClientKey, key: &ClientKey) {
    let (value, key) = (value.parameters().name, key.parameters().name);
    match r.map(|_| ()) {
        Err(Error::Mismatch(m)) => assert!(
            m == format!("{what} of the parameter set {value} given to keys of {key}"),
            "the message names the value and both sets: {m}"
        ),
        other => panic!("{what} of {value} given to {key} keys: {other:?}"),
    }
}

const U8: &str = "a 8-bit integer";
const BLOCK: &str = "a block";
const LUT: &str = "a lookup table";
const BOOL: &str = "a boolean";

/// 1_1 integers (8 blocks per u8) given to 2_2 keys (4 per u8), alone and
/// mixed with 2_2 ones, in every radix operation and decryption, and a 2_2
/// integer given to 1_1 server keys.
#[test]
fn radix_integers_of_another_set_are_refused() {
    let (ck, sk) = keys_2_2();
    let (ck1, sk1) = keys_1_1();
    let a = ck.encrypt_u8(200).unwrap();
    let a1 = ck1.encrypt_u8(77).unwrap();
    assert_eq!(a1.blocks().len(), 8);
    assert_eq!(a1.set_name(), ck1.parameters().name);
    let cond = sk.compare(Comparison::Gt, &a, &a).unwrap();
    let cond1 = ck1.encrypt(1).unwrap();

    for r in radix_entries(ck, sk, &a, &a1, &cond) {
        refused(U8, r, ck1, ck);
    }
    refused(BLOCK, sk.select(&cond1, &a, &a), ck1, ck);
    // Refused as another set's, not as a condition above 1.
    refused(BLOCK, sk.select(&sk1.trivial(3).unwrap(), &a, &a), ck1, ck);
    // The audit's reverse case: 1_1 keys shifting a 2_2 integer.
    refused(U8, sk1.shl(&a, 2), ck, ck1);
    refused(U8, sk1.add(&a, &a), ck, ck1);
    refused(U8, ck1.decrypt_u8(&a), ck, ck1);
    // Blocks of another set do not make an integer.
    refused(
        BLOCK,
        sk.radix_from_blocks(a1.blocks()[..4].to_vec(), 8),
        ck1,
        ck,
    );

    // Values of the right set still compute.
    assert_eq!(ck.decrypt_u8(&sk.add(&a, &a).unwrap()).unwrap(), 144);
    assert_eq!(
        ck1.decrypt_u8(&sk1.scalar_add(&a1, 3).unwrap()).unwrap(),
        80
    );
}

/// Blocks and lookup tables of another set in every shortint operation.
#[test]
fn blocks_and_lookup_tables_of_another_set_are_refused() {
    let (ck, sk) = keys_2_2();
    let (ck1, sk1) = keys_1_1();
    let b = ck.encrypt(1).unwrap();
    let b1 = ck1.encrypt(1).unwrap();
    let lut = sk.lookup_table(|x| x).unwrap();
    let lut1 = sk1.lookup_table(|x| x).unwrap();
    let two = sk.two_lookup_tables(|x| x, |x| x).unwrap();
    let two1 = sk1.two_lookup_tables(|x| x, |x| x).unwrap();

    refused(BLOCK, ck.decrypt(&b1), ck1, ck);
    refused(BLOCK, ck.decrypt_with_carry(&b1), ck1, ck);
    refused(BLOCK, ck.noise(&b1), ck1, ck);
    refused(BLOCK, sk.apply_lookup_table(&b1, &lut), ck1, ck);
    refused(LUT, sk.apply_lookup_table(&b, &lut1), ck1, ck);
    refused(
        BLOCK,
        sk.apply_lookup_tables(&[&b, &b1], &[&lut, &lut]),
        ck1,
        ck,
    );
    refused(
        LUT,
        sk.apply_lookup_tables(&[&b, &b], &[&lut, &lut1]),
        ck1,
        ck,
    );
    refused(BLOCK, sk.apply_lookup_tables_shared(&b1, &[&lut]), ck1, ck);
    refused(
        LUT,
        sk.apply_lookup_tables_shared(&b, &[&lut, &lut1]),
        ck1,
        ck,
    );
    refused(BLOCK, sk.apply_two_lookup_tables(&b1, &two), ck1, ck);
    refused(LUT, sk.apply_two_lookup_tables(&b, &two1), ck1, ck);
    for (x, y) in [(&b1, &b), (&b, &b1)] {
        refused(BLOCK, sk.pack(x, y), ck1, ck);
        refused(BLOCK, sk.unchecked_add(x, y), ck1, ck);
        refused(BLOCK, sk.unchecked_sub_with_offset(x, y, 4), ck1, ck);
    }
    // Refused as another set's, not as a block holding a carry (2_2 blocks
    // reach 3, above 1_1's message space).
    refused(BLOCK, sk1.pack(&ck.encrypt(3).unwrap(), &b1), ck, ck1);
    refused(BLOCK, sk.unchecked_scalar_add(&b1, 1), ck1, ck);
    refused(BLOCK, sk.unchecked_scalar_mul(&b1, 2), ck1, ck);
    // A block or trivial made by 1_1 server keys, to 2_2 keys.
    refused(BLOCK, ck.decrypt(&sk1.trivial(1).unwrap()), ck1, ck);
    refused(
        BLOCK,
        sk.unchecked_add(&b, &sk1.trivial(1).unwrap()),
        ck1,
        ck,
    );

    // The right set's blocks and tables still compute.
    assert_eq!(
        ck.decrypt(&sk.apply_lookup_table(&b, &lut).unwrap())
            .unwrap(),
        1
    );
    assert_eq!(sk.trivial(3).unwrap().set_name(), ck.parameters().name);
}

/// Sets of one shape (2_2, its multi-bit and 2^-64 variants; 1_1 and its
/// multi-bit variant) refuse each other's values: different keys are
/// different secrets.
#[test]
fn sets_of_the_same_shape_refuse_each_other() {
    let (ck, sk) = keys_2_2();
    let (ck1, sk1) = keys_1_1();
    let multi_bit = client(TfheParameters::message_2_carry_2_multi_bit(), 22);
    let fast = client(TfheParameters::message_2_carry_2_2m64(), 23);
    let multi_bit_1 = client(TfheParameters::message_1_carry_1_multi_bit(), 24);
    let a = ck.encrypt_u8(200).unwrap();
    for other in [&multi_bit, &fast] {
        let x = other.encrypt_u8(77).unwrap();
        assert_eq!(x.blocks().len(), a.blocks().len());
        refused(U8, ck.decrypt_u8(&x), other, ck);
        refused(U8, sk.add(&a, &x), other, ck);
        refused(U8, other.decrypt_u8(&a), ck, other);
    }
    let x = multi_bit_1.encrypt_u8(77).unwrap();
    refused(U8, ck1.decrypt_u8(&x), &multi_bit_1, ck1);
    refused(U8, sk1.bitnot(&x), &multi_bit_1, ck1);
}

/// A compressed 1_1 integer, decompressed or loaded from its bytes as 1_1
/// (its header names 1_1, so loading it as 2_2 is refused), keeps its set:
/// 2_2 keys refuse it.
#[test]
fn compressed_and_loaded_values_keep_their_set() {
    let (ck, sk) = keys_2_2();
    let (ck1, _) = keys_1_1();
    let a = ck.encrypt_u8(200).unwrap();
    let c1 = ck1.encrypt_u8_compressed(77).unwrap();
    let bytes = c1.to_bytes();
    assert!(matches!(
        CompressedRadixCiphertext::from_bytes(&bytes, ck.parameters()),
        Err(Error::Malformed(_))
    ));
    let loaded = CompressedRadixCiphertext::from_bytes(&bytes, ck1.parameters()).unwrap();
    for x in [c1.decompress(), loaded.decompress()] {
        assert_eq!(ck1.decrypt_u8(&x).unwrap(), 77);
        refused(U8, ck.decrypt_u8(&x), ck1, ck);
        refused(U8, sk.add(&a, &x), ck1, ck);
        refused(U8, sk.bitnot(&x), ck1, ck);
        let bytes = x.to_bytes();
        let back = RadixCiphertext::from_bytes(&bytes, ck1.parameters()).unwrap();
        assert_eq!(back.set_name(), ck1.parameters().name);
        refused(U8, sk.shl(&back, 2), ck1, ck);
    }
    let block = ck1.encrypt_compressed(1).unwrap().decompress();
    refused(BLOCK, ck.decrypt(&block), ck1, ck);
}

/// Booleans of the multi-bit boolean set given to the boolean set's keys,
/// and booleans and 1_1 blocks (both 2048-dimensional) given to each
/// other's keys.
#[test]
fn booleans_of_another_set_are_refused() {
    let mut rng = Prng::from_seed([25; 32]);
    let ck = ClientKey::generate_with(&TfheParameters::boolean(), &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng).unwrap();
    let other = client(TfheParameters::boolean_multi_bit(), 26);
    let (ck1, _) = keys_1_1();
    let t = ck.encrypt_bool(true).unwrap();
    let x = other.encrypt_bool(true).unwrap();
    let xc = other.encrypt_bool_compressed(false).unwrap().decompress();
    assert_eq!(x.set_name(), other.parameters().name);
    for y in [&x, &xc] {
        refused(BOOL, ck.decrypt_bool(y), &other, &ck);
        refused(BOOL, sk.not(y), &other, &ck);
        refused(BOOL, sk.gate(Gate::Nand, &t, y), &other, &ck);
        refused(BOOL, sk.gate(Gate::Xor, y, &t), &other, &ck);
        refused(BOOL, sk.mux(y, &t, &t), &other, &ck);
        refused(BOOL, sk.mux(&t, &t, y), &other, &ck);
    }
    refused(BOOL, other.decrypt_bool(&t), &ck, &other);
    refused(BOOL, ck1.decrypt_bool(&t), &ck, ck1);
    refused(BLOCK, ck.decrypt(&ck1.encrypt(1).unwrap()), ck1, &ck);
    // The right set's booleans still compute.
    let f = ck.encrypt_bool(false).unwrap();
    assert!(ck
        .decrypt_bool(&sk.gate(Gate::Nand, &t, &f).unwrap())
        .unwrap());
}
