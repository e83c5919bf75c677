//! What several test binaries share.

use std::sync::OnceLock;

use triskel_ring::Prng;
use triskel_tfhe::{
    Bitwise, Ciphertext, ClientKey, Comparison, RadixCiphertext, Result, ServerKey, TfheParameters,
};

/// One 2_2 key pair for every test of a binary (key generation is a large
/// share of a short test).
pub fn keys_2_2() -> &'static (ClientKey, ServerKey) {
    static KEYS: OnceLock<(ClientKey, ServerKey)> = OnceLock::new();
    KEYS.get_or_init(|| seeded_keys_2_2(6))
}

/// A 2_2 key pair from a generator seeded with `seed` bytes.
pub fn seeded_keys_2_2(seed: u8) -> (ClientKey, ServerKey) {
    let mut rng = Prng::from_seed([seed; 32]);
    let ck = ClientKey::generate_with(&TfheParameters::message_2_carry_2(), &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng).unwrap();
    (ck, sk)
}

/// Every radix entry of `ck` and `sk` given the 8-bit integer `x` of other
/// keys: its decryptions; each binary operation on `x` alone and beside `a`
/// (of `ck`) on either side, `select` under `cond` (a block of `ck`) among
/// them; each unary and scalar operation (`scalar_mul` by 1 moves blocks
/// without a bootstrap); shifts and rotations by 0, 2 and 3. Each result
/// must be a refusal of "a 8-bit integer", before any bootstrap.
#[allow(dead_code)] // used by the binaries that refuse integers
pub fn radix_entries(
    ck: &ClientKey,
    sk: &ServerKey,
    a: &RadixCiphertext,
    x: &RadixCiphertext,
    cond: &Ciphertext,
) -> Vec<Result<()>> {
    let mut out = vec![ck.decrypt_u8(x).map(drop), ck.decrypt_radix(x).map(drop)];
    for (p, q) in [(x, x), (a, x), (x, a)] {
        out.extend([
            sk.add(p, q).map(drop),
            sk.sub(p, q).map(drop),
            sk.mul(p, q).map(drop),
            sk.bitwise(Bitwise::Xor, p, q).map(drop),
            sk.compare(Comparison::Eq, p, q).map(drop),
            sk.min(p, q).map(drop),
            sk.max(p, q).map(drop),
            sk.select(cond, p, q).map(drop),
        ]);
    }
    out.extend([
        sk.neg(x).map(drop),
        sk.bitnot(x).map(drop),
        sk.scalar_add(x, 3).map(drop),
        sk.scalar_sub(x, 3).map(drop),
        sk.scalar_mul(x, 1).map(drop),
        sk.scalar_mul(x, 5).map(drop),
    ]);
    for amount in [0, 2, 3] {
        out.extend([
            sk.shl(x, amount).map(drop),
            sk.shr(x, amount).map(drop),
            sk.rotate_left(x, amount).map(drop),
            sk.rotate_right(x, amount).map(drop),
        ]);
    }
    out
}
