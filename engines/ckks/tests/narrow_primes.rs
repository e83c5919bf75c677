//! CKKS on primes below 2^31 (the width the `neon` kernels serve on
//! AArch64 cores without SVE): `for_depth` with a 28-bit scale and a 31-bit first prime builds such a
//! chain, and a multiply pipeline on it decrypts within the precision the
//! smaller scale leaves.

use triskel_ckks::{CkksContext, CkksParameters, Plaintext, SecretKey};

#[test]
fn a_28_bit_scale_chain_has_only_31_bit_primes_and_multiplies() {
    let params = CkksParameters::for_depth(8192, 2, 28, 3).unwrap();
    assert!(params
        .q_bits()
        .iter()
        .chain(params.p_bits())
        .all(|&b| b <= 31));
    let ctx = CkksContext::new(params).unwrap();
    assert!(ctx.q_primes().iter().all(|&q| q < 1 << 31));
    let sk = SecretKey::generate(&ctx).unwrap();
    let (pk, rk) = (sk.public_key().unwrap(), sk.relin_key().unwrap());
    let a: Vec<f64> = (0..64).map(|i| (i as f64 * 0.37).sin()).collect();
    let b: Vec<f64> = (0..64).map(|i| (i as f64 * 0.11).cos()).collect();
    let encrypt = |v: &[f64]| pk.encrypt(&Plaintext::from_real(&ctx, v).unwrap()).unwrap();
    let (ca, cb) = (encrypt(&a), encrypt(&b));
    let ab = ca.mul_relin_rescale(&cb, &rk).unwrap();
    let abb = ab.mul_relin_rescale(&cb, &rk).unwrap();
    let got = sk.decrypt_real(&abb).unwrap();
    let err = a
        .iter()
        .zip(&b)
        .zip(&got)
        .map(|((x, y), g)| (x * y * y - g).abs())
        .fold(0.0, f64::max);
    // A public-key encryption's noise is about 2^15 in the slots: at a 2^28
    // scale that is ~2^-13 of error per value, which two products amplify.
    assert!(err < 2e-3, "max error {err}");
}
