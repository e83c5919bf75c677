//! Decryption with noise flooding (IND-CPA-D): the trial-run noise estimate,
//! the flooded decryption's error and its noise's deviation, and the
//! refusals.

use std::sync::{Arc, OnceLock};

use triskel_ckks::{
    Ciphertext, CkksContext, CkksParameters, Complex, Error, Flooding, Plaintext, PublicKey,
    SecretKey,
};

struct Keys {
    ctx: Arc<CkksContext>,
    sk: SecretKey,
    pk: PublicKey,
}

fn keys(log_scale: u32) -> Keys {
    // Depth 1: q_0 of log_scale + 10 bits (at most 61), q_1 of log_scale bits.
    let integer_bits = 10.min(61 - log_scale);
    let params = CkksParameters::for_depth(8192, 1, log_scale, integer_bits).unwrap();
    let ctx = CkksContext::new(params).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    Keys {
        pk: sk.public_key().unwrap(),
        ctx,
        sk,
    }
}

/// Scale 2^50 (Q = 60 + 50 bits): where flooding leaves useful precision.
fn wide() -> &'static Keys {
    static K: OnceLock<Keys> = OnceLock::new();
    K.get_or_init(|| keys(50))
}

fn values(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i as f64 + 1.0) * 0.7548776662).fract() * 2.0 - 1.0)
        .collect()
}

fn encrypt(k: &Keys, v: &[f64]) -> Ciphertext {
    let pt = Plaintext::encode_real(&k.ctx, v, k.ctx.max_level(), k.ctx.default_scale(), 1.0);
    k.pk.encrypt(&pt.unwrap()).unwrap()
}

fn complex(v: &[f64]) -> Vec<Complex> {
    v.iter().map(|&x| Complex::from(x)).collect()
}

#[test]
fn the_estimate_is_the_injected_error() {
    let k = wide();
    let v = values(k.ctx.slots());
    let ct = encrypt(k, &v);
    let fresh = k.sk.noise_bound_log2(&ct, &complex(&v)).unwrap();
    // A public-key encryption's error is the rounding r0 + r1 s: a few
    // dozen units, never more than 2^10.
    assert!((2.0..10.0).contains(&fresh), "fresh error 2^{fresh}");
    // Add the known polynomial 2^20 X^7 (coefficient encoding): the
    // estimate is log2 |2^20 + e_7| or a larger |e_i|, within |e| of 2^20.
    let scale = ct.scale();
    let mut coeffs = vec![0.0; 8];
    coeffs[7] = f64::exp2(20.0) / scale;
    let known = Plaintext::from_coefficients(&k.ctx, &coeffs, ct.level(), scale, 1.0).unwrap();
    let injected = ct.add_plain(&known).unwrap();
    let got = k.sk.noise_bound_log2(&injected, &complex(&v)).unwrap();
    let slack = f64::exp2(fresh) / f64::exp2(20.0) / std::f64::consts::LN_2;
    assert!(
        (got - 20.0).abs() <= slack,
        "2^{got}, expected 2^20 within {slack}"
    );
    // Bad arguments: wrong length, another parameter set.
    for bad in [&complex(&v)[1..], &complex(&values(k.ctx.slots() + 1))[..]] {
        assert!(matches!(
            k.sk.noise_bound_log2(&ct, bad),
            Err(Error::Encoding(_))
        ));
    }
    let other = keys(40);
    assert_eq!(
        other.sk.noise_bound_log2(&ct, &complex(&v)),
        Err(Error::ParameterMismatch)
    );
}

/// Three flooded decryptions (alpha = 3) of a fresh encryption of `v`
/// under `k` at statistical security `s`, with the bound B measured on a
/// trial run under a separate key pair of the same parameters (`margin`
/// bits added): asserts the slots within 7 deviations of `v`, and returns
/// two decodings, the slots' deviation (per real or imaginary part) and
/// sigma.
fn flood_twice(
    k: &Keys,
    trial: &Keys,
    v: &[f64],
    s: u32,
    margin: f64,
) -> (Vec<Complex>, Vec<Complex>, f64, f64) {
    let n = k.ctx.n() as f64;
    let b = trial
        .sk
        .noise_bound_log2(&encrypt(trial, v), &complex(v))
        .unwrap();
    let flooding = Flooding {
        statistical_security: s,
        decryptions: 3,
        ..Flooding::new(b + margin)
    };
    let sigma = flooding.sigma(k.ctx.n()).unwrap();
    let expected = (24.0 * n * 3.0).sqrt() * f64::exp2(s as f64 / 2.0 + b + margin);
    assert!((sigma / expected - 1.0).abs() < 1e-12);
    let ct = encrypt(k, v);
    let a =
        k.sk.decrypt_flooded(&ct, &flooding)
            .unwrap()
            .decode()
            .unwrap();
    let c =
        k.sk.decrypt_flooded(&ct, &flooding)
            .unwrap()
            .decode()
            .unwrap();
    // Each part of a slot carries a Gaussian of deviation sqrt(N / 2) sigma
    // (N coefficients of variance sigma^2, half in each part).
    let sd = (n / 2.0).sqrt() * sigma / ct.scale();
    let err = a
        .iter()
        .zip(v)
        .map(|(z, &x)| (z.re - x).abs().max(z.im.abs()))
        .fold(0.0, f64::max);
    assert!(err < 7.0 * sd, "max error {err:e} >= 7 sd = {:e}", 7.0 * sd);
    // The real-valued variant decrypts the same way.
    let r = k.sk.decrypt_flooded_real(&ct, &flooding).unwrap();
    assert!(r.iter().zip(v).all(|(x, y)| (x - y).abs() < 7.0 * sd));
    eprintln!(
        "flooded N = {n}, scale 2^{}, B = 2^{:.2}, s = {s}, alpha = 3: sigma = 2^{:.2}, slot sd {sd:.2e}, \
         max slot error {err:.2e} ({:.2} sd) over {} slots",
        ct.scale().log2(),
        b + margin,
        sigma.log2(),
        err / sd,
        v.len()
    );
    (a, c, sd, sigma)
}

/// Two floods of one ciphertext differ by two independent Gaussians: the
/// difference's parts have deviation sqrt(2) sd. Its sample deviation over
/// the n real and imaginary parts has a relative standard error of
/// 1 / sqrt(2 n) = 0.8%: 4% is five of them.
fn assert_independent_floods(a: &[Complex], c: &[Complex], sd: f64) {
    let diffs: Vec<f64> = a
        .iter()
        .zip(c)
        .flat_map(|(x, y)| [x.re - y.re, x.im - y.im])
        .collect();
    assert!(diffs.iter().filter(|d| **d != 0.0).count() > diffs.len() / 2);
    let measured = (diffs.iter().map(|d| d * d).sum::<f64>() / diffs.len() as f64).sqrt();
    let ratio = measured / (2f64.sqrt() * sd);
    assert!((ratio - 1.0).abs() < 0.04, "deviation ratio {ratio}");
}

#[test]
fn flooded_decryption_is_within_its_deviation_and_fresh_each_time() {
    let k = wide();
    let v = values(k.ctx.slots());
    let (a, c, sd, _) = flood_twice(k, &keys(50), &v, 30, 1.0);
    // Useful precision at scale 2^50: about 2^-13 per slot.
    assert!(sd < 1e-3, "sd {sd:e}");
    assert_independent_floods(&a, &c, sd);
}

#[test]
fn flooding_beyond_2_46_decodes_at_scale_2_60() {
    // Scale 2^60 (Q = 61 + 60 bits), s = 50 (the largest N = 8192 allows
    // for alpha = 3) and B overstated by 7 bits (allowed: a larger B floods
    // more): sigma = 2^34.6 B, about 2^48 (B about 2^6.3), drawn as a fine
    // plus a coarse Gaussian; each slot keeps about 5 bits.
    let k = keys(60);
    let v = values(k.ctx.slots());
    let (a, c, sd, sigma) = flood_twice(&k, &keys(60), &v, 50, 7.0);
    assert!(sigma > f64::exp2(46.0), "sigma 2^{}", sigma.log2());
    assert!(sd < 0.05, "sd {sd:e}");
    assert_independent_floods(&a, &c, sd);
}

#[test]
fn flooding_at_the_default_scale_costs_its_precision() {
    // The named N = 8192 set (scale 2^40): the same rule leaves about 4 bits.
    let keys = || {
        let ctx = CkksContext::new(CkksParameters::n8192()).unwrap();
        let sk = SecretKey::generate(&ctx).unwrap();
        Keys {
            pk: sk.public_key().unwrap(),
            ctx,
            sk,
        }
    };
    let k = keys();
    let (_, _, sd, _) = flood_twice(&k, &keys(), &values(k.ctx.slots()), 30, 1.0);
    assert!(sd > 1e-2, "sd {sd:e}");
}

#[test]
fn flooding_is_refused_when_it_could_wrap_or_its_arguments_are_bad() {
    // Scale 2^30: Q_0 of 40 bits, Q_1 of 70 bits.
    let k = keys(30);
    let v = values(8);
    let top = encrypt(&k, &v);
    let low = top.drop_to_level(0).unwrap();
    // s = 40, B = 2^8, alpha = 3 (the floods this test makes): 9.5 sigma =
    // 2^40.8 reaches Q_0 / 2 = 2^39, not Q_1 / 2.
    let flooding = Flooding {
        noise_bound_log2: 8.0,
        statistical_security: 40,
        decryptions: 3,
    };
    assert!(matches!(
        k.sk.decrypt_flooded(&low, &flooding),
        Err(Error::MessageOverflow { .. })
    ));
    assert!(k.sk.decrypt_flooded(&top, &flooding).is_ok());
    // With B = 2^5 the level-0 flood fits.
    let fits = Flooding {
        noise_bound_log2: 5.0,
        ..flooding
    };
    assert!(k.sk.decrypt_flooded(&low, &fits).is_ok());
    // The same flood (9.5 sigma = 2^37.8) on a message declared up to 420
    // (2^38.7 at scale 2^30): together above Q_0 / 2, each alone below.
    let loud = Plaintext::encode_real(&k.ctx, &v, k.ctx.max_level(), k.ctx.default_scale(), 420.0);
    let loud =
        k.pk.encrypt(&loud.unwrap())
            .unwrap()
            .drop_to_level(0)
            .unwrap();
    assert!(matches!(
        k.sk.decrypt_flooded(&loud, &fits),
        Err(Error::MessageOverflow { .. })
    ));
    // Bad arguments.
    assert_eq!(k.ctx.n(), 8192);
    for ok in [(52, 1), (42, 1 << 10)] {
        let at_the_cap = Flooding {
            statistical_security: ok.0,
            decryptions: ok.1,
            ..fits
        };
        assert!(at_the_cap.sigma(k.ctx.n()).is_ok(), "{at_the_cap:?}");
    }
    for bad in [
        Flooding {
            statistical_security: 0,
            ..fits
        },
        Flooding {
            statistical_security: 129,
            ..fits
        },
        // The tail cut's 2^-64 per pair over N / 2 pairs and alpha floods
        // caps s at 65 - log2(N alpha) (the test set has N = 8192: 52, and
        // 42 for 2^10 floods).
        Flooding {
            statistical_security: 53,
            decryptions: 1,
            ..fits
        },
        Flooding {
            statistical_security: 43,
            decryptions: 1 << 10,
            ..fits
        },
        Flooding {
            decryptions: 0,
            ..fits
        },
        Flooding::new(f64::NAN),
        Flooding::new(f64::INFINITY),
        Flooding::new(-1.0),
    ] {
        assert!(bad.sigma(k.ctx.n()).is_err(), "{bad:?}");
        assert!(
            matches!(
                k.sk.decrypt_flooded(&top, &bad),
                Err(Error::InvalidParameters(_))
            ),
            "{bad:?}"
        );
    }
    // Q_1 = 70 bits leaves room for any sigma the sampler draws: 2^58.9 is
    // drawn (sigma = 2^24.6 B at s = 30, alpha = 3), 2^60.1 is refused by
    // its limit.
    let b = |log2| Flooding {
        decryptions: 3,
        ..Flooding::new(log2)
    };
    assert!(k.sk.decrypt_flooded(&top, &b(34.3)).is_ok());
    assert!(matches!(
        k.sk.decrypt_flooded(&top, &b(35.5)),
        Err(Error::InvalidParameters(_))
    ));
    // Another parameter set's ciphertext.
    assert_eq!(
        wide().sk.decrypt_flooded(&top, &fits).map(|_| ()),
        Err(Error::ParameterMismatch)
    );
}

/// A flooding at scale 2^50 with B = 2^8 and alpha = `alpha`.
fn alpha(alpha: u64) -> Flooding {
    Flooding {
        decryptions: alpha,
        ..Flooding::new(8.0)
    }
}

fn exhausted(done: u64, alpha: u64) -> Error {
    Error::FloodingExhausted {
        done,
        asked: 1,
        alpha,
    }
}

#[test]
fn a_key_floods_at_most_alpha_times_and_plain_decryptions_do_not_count() {
    let k = keys(50);
    let v = values(16);
    let ct = encrypt(&k, &v);
    let two = alpha(2);
    assert_eq!(k.sk.flooded_decryptions(), 0);
    assert_eq!(k.sk.flooded_decryptions_left(&two), 2);
    for done in 1..=2 {
        let got = k.sk.decrypt_flooded_real(&ct, &two).unwrap();
        assert!(got.iter().zip(&v).all(|(g, w)| (g - w).abs() < 1e-2));
        assert_eq!(k.sk.flooded_decryptions(), done);
        // Plain decryptions are the key holder's own: they do not count.
        k.sk.decrypt(&ct).unwrap();
        k.sk.decrypt_real(&ct).unwrap();
        assert_eq!(k.sk.flooded_decryptions(), done);
    }
    // The third is refused and decrypts nothing, through either entry.
    assert_eq!(k.sk.flooded_decryptions_left(&two), 0);
    assert_eq!(
        k.sk.decrypt_flooded(&ct, &two).map(|_| ()),
        Err(exhausted(2, 2))
    );
    assert_eq!(k.sk.decrypt_flooded_real(&ct, &two), Err(exhausted(2, 2)));
    let msg = exhausted(2, 2).to_string();
    assert!(
        msg.contains("2 flooded") && msg.contains("alpha = 2"),
        "{msg}"
    );
    // Refusals count nothing: the total stays 2, and a larger alpha now
    // allows what the floods so far leave (none: their alpha was 2).
    assert_eq!(k.sk.flooded_decryptions(), 2);
    assert_eq!(k.sk.flooded_decryptions_left(&alpha(10)), 0);
    assert_eq!(k.sk.decrypt_real(&ct).unwrap().len(), k.ctx.slots());
}

#[test]
fn floods_of_different_alphas_stay_within_the_least() {
    let k = keys(50);
    let ct = encrypt(&k, &values(16));
    // A flood made to be the key's only one (alpha = 1) ends its floods.
    k.sk.decrypt_flooded(&ct, &alpha(1)).unwrap();
    assert_eq!(k.sk.flooded_decryptions_left(&alpha(5)), 0);
    assert_eq!(
        k.sk.decrypt_flooded(&ct, &alpha(5)).map(|_| ()),
        Err(exhausted(1, 1))
    );
    // alpha 3, then 2: two floods, both within 2; a third is refused even
    // for alpha 3, and so is a first flood for alpha 1 after them.
    let k = keys(50);
    let ct = encrypt(&k, &values(16));
    assert_eq!(k.sk.flooded_decryptions_left(&alpha(3)), 3);
    k.sk.decrypt_flooded(&ct, &alpha(3)).unwrap();
    assert_eq!(k.sk.flooded_decryptions_left(&alpha(3)), 2);
    assert_eq!(k.sk.flooded_decryptions_left(&alpha(1)), 0);
    assert_eq!(
        k.sk.decrypt_flooded(&ct, &alpha(1)).map(|_| ()),
        Err(exhausted(1, 1))
    );
    k.sk.decrypt_flooded(&ct, &alpha(2)).unwrap();
    assert_eq!(
        k.sk.decrypt_flooded(&ct, &alpha(3)).map(|_| ()),
        Err(exhausted(2, 2))
    );
    assert_eq!(k.sk.flooded_decryptions(), 2);
}

#[test]
fn every_holder_of_a_key_shares_its_count_and_a_reload_starts_at_zero() {
    // Two threads flood with one key (alpha = 3), three times each:
    // exactly three floods pass.
    let k = keys(50);
    let ct = encrypt(&k, &values(16));
    let sk = Arc::new(k.sk);
    let passed: usize = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (sk, ct) = (sk.clone(), &ct);
                scope.spawn(move || {
                    (0..3)
                        .filter(|_| match sk.decrypt_flooded(ct, &alpha(3)) {
                            Ok(_) => true,
                            Err(e) => {
                                assert!(matches!(e, Error::FloodingExhausted { .. }), "{e}");
                                false
                            }
                        })
                        .count()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    });
    assert_eq!(passed, 3);
    assert_eq!(sk.flooded_decryptions(), 3);
    // The count is not in the bytes (the key holder's to carry).
    let reloaded = SecretKey::from_bytes(&sk.to_bytes(), &k.ctx).unwrap();
    assert_eq!(reloaded.flooded_decryptions(), 0);
    assert_eq!(sk.flooded_decryptions(), 3);
}
