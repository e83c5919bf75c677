//! What several test binaries share.

use std::sync::OnceLock;

use triskel_ring::Prng;
use triskel_tfhe::{ClientKey, ServerKey, TfheParameters};

/// One 2_2 key pair for every test of a binary (key generation is a large
/// share of a short test).
pub fn keys_2_2() -> &'static (ClientKey, ServerKey) {
    static KEYS: OnceLock<(ClientKey, ServerKey)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut rng = Prng::from_seed([6; 32]);
        let ck = ClientKey::generate_with(&TfheParameters::message_2_carry_2(), &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng).unwrap();
        (ck, sk)
    })
}
