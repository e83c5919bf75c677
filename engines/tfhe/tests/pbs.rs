//! Programmable bootstrapping: several LUTs on every value of the whole block
//! (message and carry) for the 1_1 and 2_2 sets and the 2_2 2^-64 variant;
//! the default 3_3 set on every value; parameter checks.

mod common;
use common::keys_2_2;
use triskel_ring::Prng;
use triskel_tfhe::params::{security_bits, SECURITY_CURVES};
use triskel_tfhe::{ClientKey, Comparison, Encoding, Error, TfheParameters};

type Lut = Box<dyn Fn(u64) -> u64>;

#[test]
fn every_lut_on_the_whole_block() {
    for params in [
        TfheParameters::message_1_carry_1(),
        TfheParameters::message_2_carry_2(),
        TfheParameters::message_2_carry_2_2m64(),
    ] {
        let Encoding::Integer {
            message_modulus: msg,
            carry_modulus: carry,
            ..
        } = params.encoding
        else {
            unreachable!()
        };
        let p = msg * carry;
        let own;
        let (ck, sk) = if params == TfheParameters::message_2_carry_2() {
            keys_2_2()
        } else {
            let mut rng = Prng::from_seed([1; 32]);
            let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
            let sk = ck.server_key_with(&mut rng).unwrap();
            own = (ck, sk);
            &own
        };
        let luts: [(&str, Lut); 3] = [
            ("square + 1", Box::new(move |x| (x * x + 1) % p)),
            ("carry", Box::new(move |x| x / msg)),
            ("reverse", Box::new(move |x| p - 1 - x)),
        ];
        for v in 0..p {
            // v = m + c with m a fresh message and c a constant (carries set).
            let ct = sk
                .unchecked_scalar_add(&ck.encrypt(v % msg).unwrap(), v - v % msg)
                .unwrap();
            assert_eq!(ck.decrypt_with_carry(&ct).unwrap(), v);
            for (name, f) in &luts {
                let lut = sk.lookup_table(f).unwrap();
                let out = sk.apply_lookup_table(&ct, &lut).unwrap();
                assert_eq!(
                    ck.decrypt_with_carry(&out).unwrap(),
                    f(v),
                    "{} {name} {v}",
                    params.name
                );
                assert_eq!(out.noise_level(), 1);
            }
        }
        // Two LUTs from one bootstrap on the lower half of the block.
        let two = sk
            .two_lookup_tables(|x| (3 * x + 1) % p, |x| p - 1 - x)
            .unwrap();
        for v in 0..p / 2 {
            let ct = sk
                .unchecked_scalar_add(&ck.encrypt(v % msg).unwrap(), v - v % msg)
                .unwrap();
            let (f, g) = sk.apply_two_lookup_tables(&ct, &two).unwrap();
            assert_eq!(
                ck.decrypt_with_carry(&f).unwrap(),
                (3 * v + 1) % p,
                "two LUTs f({v})"
            );
            assert_eq!(
                ck.decrypt_with_carry(&g).unwrap(),
                p - 1 - v,
                "two LUTs g({v})"
            );
        }
        // 8-bit comparisons (1_1: eight blocks, three rounds of signs).
        for (x, y, op) in [
            (0x96u64, 0x95u64, Comparison::Gt),
            (7, 200, Comparison::Ge),
            (77, 77, Comparison::Le),
        ] {
            let (a, b) = (
                ck.encrypt_radix(x, 8).unwrap(),
                ck.encrypt_radix(y, 8).unwrap(),
            );
            let c = sk.compare(op, &a, &b).unwrap();
            assert_eq!(
                ck.decrypt_with_carry(&c).unwrap(),
                op.eval(x, y) as u64,
                "{} {op:?} {x} {y}",
                params.name
            );
        }
        let high = sk
            .unchecked_scalar_add(&ck.encrypt(0).unwrap(), p / 2)
            .unwrap();
        assert!(matches!(
            sk.apply_two_lookup_tables(&high, &two),
            Err(Error::Budget(_))
        ));
        assert!(matches!(
            sk.lookup_table(|x| x + p),
            Err(Error::OutOfRange(_))
        ));
        assert!(matches!(ck.encrypt(msg), Err(Error::OutOfRange(_))));
    }
}

#[test]
fn named_sets_are_secure_and_fail_at_most_as_promised() {
    for params in TfheParameters::all() {
        params.check().unwrap();
        let a = params.noise();
        // Default sets 2^-128; the _2M64 variants 2^-64.
        let promise = if params.name.contains("_2M64") {
            -64.0
        } else {
            -128.0
        };
        assert_eq!(params.max_log2_failure, promise, "{}", params.name);
        assert!(
            a.log2_failure <= promise,
            "{} {}",
            params.name,
            a.log2_failure
        );
        eprintln!(
            "{}: ext 2^{:.1} br 2^{:.1} ks*(2N)^2 {:.2} ms {:.2} norm2 {} total {:.2} margin {} log2 p_fail {:.1}",
            params.name,
            a.external_product.log2(),
            a.blind_rotation.log2(),
            a.key_switch * (2.0 * params.polynomial_size as f64).powi(2),
            a.modulus_switch,
            a.input_norm2,
            a.total,
            a.margin,
            a.log2_failure
        );
        // Below 128 bits by the curves: refused, unless explicitly allowed.
        let mut weaker = params.clone();
        weaker.lwe_noise_std /= 2.0;
        assert!(weaker.security_bits() < 128.0, "{}", params.name);
        assert!(weaker.check().is_err());
        weaker = weaker.allow_insecure();
        assert!(weaker.check().is_ok(), "{}", params.name);
        let mut weaker = params.clone();
        weaker.lwe_dimension -= 40;
        weaker.lwe_dimension -= weaker.lwe_dimension % 2;
        assert!(weaker.check().is_err());
        let mut weaker = params.clone();
        let kn = params.glwe_dimension * params.polynomial_size;
        weaker.glwe_noise_std = (SECURITY_CURVES[0].min_log2_std(kn) - 0.5).exp2();
        assert!(weaker.glwe_security_bits() < 128.0, "{}", params.name);
        assert!(weaker.check().is_err());
        let mut small = params.clone();
        small.lwe_dimension = 64;
        assert_eq!(small.security_bits(), 0.0);
        assert!(small.check().is_err(), "{}", params.name);
        let mut noisy = params.clone();
        noisy.ks_levels = 1;
        assert!(noisy.check().is_err(), "{}", params.name);
        let mut lax = params.clone();
        lax.max_log2_failure = -32.0;
        assert!(lax.check().is_err(), "{}", params.name);
        let mut nan = params.clone();
        nan.lwe_noise_std = f64::NAN;
        assert!(nan.check().is_err(), "{}", params.name);
        let mut nan = params.clone();
        nan.glwe_noise_std = f64::NAN;
        assert!(nan.check().is_err(), "{}", params.name);
        assert!(nan.allow_insecure().check().is_err(), "{}", params.name);
    }
    // A 2^-64 variant does not pass as a 2^-128 set.
    let mut strict = TfheParameters::message_2_carry_2_2m64();
    strict.max_log2_failure = -128.0;
    assert!(strict.check().is_err());
    assert!(TfheParameters::by_name("nope").is_err());
}

/// Each named set's security by the lattice estimator's current curves
/// (LWE and GLWE parts, pinned), at least 132 bits; the superseded sets'
/// (n, sigma) pairs are about 125 bits and refused.
#[test]
fn named_sets_reach_132_bits_by_the_current_curves() {
    let pinned = [
        ("TFHE_BOOLEAN_2M128_V2", 132.006, 135.24),
        ("TFHE_MESSAGE_1_CARRY_1_2M128_V2", 132.001, 135.24),
        ("TFHE_MESSAGE_2_CARRY_2_2M128_V2", 132.005, 135.24),
        ("TFHE_MESSAGE_3_CARRY_3_2M128_V2", 132.004, 227.01),
        ("TFHE_MESSAGE_2_CARRY_2_2M64_V2", 132.006, 135.24),
        ("TFHE_MESSAGE_3_CARRY_3_2M64_V2", 132.000, 227.01),
        ("TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128_V2", 132.005, 135.24),
        ("TFHE_BOOLEAN_MULTI_BIT_2M128_V2", 132.006, 135.24),
        ("TFHE_MESSAGE_1_CARRY_1_MULTI_BIT_2M128_V2", 132.001, 135.24),
    ];
    assert_eq!(pinned.len(), TfheParameters::all().len());
    for (name, lwe, glwe) in pinned {
        let p = TfheParameters::by_name(name).unwrap();
        let (got_lwe, got_glwe) = (p.lwe_security_bits(), p.glwe_security_bits());
        eprintln!("{name}: LWE {got_lwe:.4} bits, GLWE {got_glwe:.2} bits");
        assert!((got_lwe - lwe).abs() < 0.001, "{name}: LWE {got_lwe}");
        assert!((got_glwe - glwe).abs() < 0.01, "{name}: GLWE {got_glwe}");
        assert!(p.security_bits() >= 132.0, "{name}");
        assert_eq!(p.security_bits(), got_lwe.min(got_glwe));
    }
    // On each curve, the curve's own level.
    for curve in SECURITY_CURVES {
        for n in [450, 700, 1000, 2048] {
            let bits = security_bits(n, curve.min_log2_std(n).exp2());
            assert!((bits - curve.bits).abs() < 1e-9, "{n}: {bits}");
        }
    }
    // The superseded sets' LWE pairs (on the 2022 curve): 125.1-125.6 bits.
    for (n, std) in [
        (692, 2.2726188072598936e-05),
        (747, 8.243822162983204e-06),
        (845, 1.3533791553518106e-06),
        (936, 2.527906485727494e-07),
    ] {
        let bits = security_bits(n, std);
        assert!((125.0..125.7).contains(&bits), "{n}: {bits}");
        let mut old = TfheParameters::message_2_carry_2();
        (old.lwe_dimension, old.lwe_noise_std) = (n, std);
        assert!(
            matches!(old.check(), Err(Error::InvalidParameters(m)) if m.contains("below 128")),
            "{n}"
        );
    }
    assert_eq!(security_bits(449, 0.01), 0.0);
    assert!(security_bits(700, f64::NAN).is_nan());
}

/// A superseded set's name, asked for or found in loaded bytes, is an
/// error naming it and its replacement.
#[test]
fn superseded_sets_are_refused_by_name() {
    for (old, new) in triskel_tfhe::params::SUPERSEDED {
        let e = TfheParameters::by_name(old).unwrap_err();
        assert_eq!(
            e,
            Error::Superseded {
                set: old.to_string(),
                replacement: new
            }
        );
        assert!(e.to_string().contains(old) && e.to_string().contains(new));
        assert!(TfheParameters::by_name(new).is_ok());
    }
}

/// A foreign ternary LWE key (as a BFV secret is) switched into the small
/// key, then the sign bootstrap as a 0/1 block: the top bit of the phase.
#[test]
fn sign_blocks_from_a_foreign_key() {
    use triskel_ring::LweSecretKey;
    let params = TfheParameters::message_2_carry_2();
    let (ck, sk) = keys_2_2();
    let mut rng = Prng::from_seed([9; 32]);
    let coeffs: Vec<i64> = (0..1024).map(|i| [0, 1, -1][(i * 7 % 5) % 3]).collect();
    let foreign = LweSecretKey::from_coefficients(&coeffs, triskel_ring::KeyId::sample(&mut rng));
    let ksk = ck.key_switching_key_from(&foreign, 3, 6).unwrap();
    assert_eq!(ksk.output_dimension(), params.lwe_dimension);
    for k in 0..32u64 {
        // Phases (2k + 1) / 64: 1/64 away from 0 and 1/2 at least.
        let ct = foreign
            .encrypt((2 * k + 1) << 58, 2f64.powi(-50), &mut rng)
            .unwrap();
        let small = ksk.switch(&ct).unwrap();
        let bit = sk.sign_block(&small).unwrap();
        assert_eq!(
            ck.decrypt_with_carry(&bit).unwrap(),
            (k >= 16) as u64,
            "{k}"
        );
        assert_eq!((bit.degree(), bit.noise_level()), (1, 1));
    }
    // A big-key ciphertext is not a small-key one.
    let big = ck.encrypt(1).unwrap();
    assert!(sk.sign_bootstrap(big.lwe(), 1 << 58).is_err());
    assert!(sk.sign_block(&sk.key_switch(big.lwe()).unwrap()).is_ok());
}

/// The default 3_3 set (N = 8192, failure <= 2^-128, 0.8 GB of expanded
/// server key) bootstraps every value of the block of 64 through one LUT.
#[test]
fn message_3_carry_3_bootstraps() {
    every_3_3_value(
        TfheParameters::message_3_carry_3(),
        |x| (5 * x + 3) % 64,
        33,
    );
}

/// The same for its faster 2^-64 variant (0.6 GB), with another LUT.
#[test]
fn message_3_carry_3_2m64_bootstraps() {
    every_3_3_value(TfheParameters::message_3_carry_3_2m64(), |x| 63 - x, 34);
}

/// Every value of a 3_3 block (message and carry) through the LUT `f`.
fn every_3_3_value(params: TfheParameters, f: fn(u64) -> u64, seed: u8) {
    let mut rng = Prng::from_seed([seed; 32]);
    let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng).unwrap();
    let lut = sk.lookup_table(f).unwrap();
    for v in 0..64u64 {
        let ct = sk
            .unchecked_scalar_add(&ck.encrypt(v % 8).unwrap(), v - v % 8)
            .unwrap();
        let out = sk.apply_lookup_table(&ct, &lut).unwrap();
        assert_eq!(
            ck.decrypt_with_carry(&out).unwrap(),
            f(v),
            "{}: {v}",
            params.name
        );
    }
}
