use triskel_ring::sampling::*;
use triskel_ring::{Prng, Representation, RnsBasis};

const N: usize = 1 << 14;

fn mean_var(v: &[i64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
    (mean, var)
}

#[test]
fn gaussian_range_and_variance() {
    let mut rng = Prng::from_os().unwrap();
    let v = sample_gaussian(N, 3.2, 19, &mut rng).unwrap();
    assert!(v.iter().all(|x| x.abs() <= 19));
    let (mean, var) = mean_var(&v);
    assert!(mean.abs() < 0.15, "mean {mean}");
    assert!((var - 3.2 * 3.2).abs() < 0.6, "variance {var}");
    assert!(sample_gaussian(N, -1.0, 19, &mut rng).is_err());
}

#[test]
fn binomial_range_and_variance() {
    let mut rng = Prng::from_os().unwrap();
    let v = sample_cbd(N, 21, &mut rng).unwrap();
    assert!(v.iter().all(|x| x.abs() <= 21));
    let (mean, var) = mean_var(&v);
    assert!(mean.abs() < 0.15, "mean {mean}");
    assert!((var - 10.5).abs() < 0.6, "variance {var}");
    assert!(sample_cbd(N, 0, &mut rng).is_err());
}

#[test]
fn ternary_distributions() {
    let mut rng = Prng::from_os().unwrap();
    let t = sample_ternary(N, &mut rng);
    assert!(t.iter().all(|x| x.abs() <= 1));
    for val in -1..=1 {
        let frac = t.iter().filter(|&&x| x == val).count() as f64 / N as f64;
        assert!((frac - 1.0 / 3.0).abs() < 0.03, "{val}: {frac}");
    }
    let h = sample_ternary_hw(N, 64, &mut rng).unwrap();
    assert_eq!(h.iter().filter(|&&x| x != 0).count(), 64);
    assert!(h.iter().all(|x| x.abs() <= 1));
    assert!(sample_ternary_hw(N, N + 1, &mut rng).is_err());
}

#[test]
fn uniform_is_reduced_and_seeded_sampling_is_deterministic() {
    let basis = RnsBasis::generate(1024, 40, 2).unwrap();
    let a = sample_uniform(&basis, Representation::Ntt, &mut Prng::from_seed([9; 32]));
    let b = sample_uniform(&basis, Representation::Ntt, &mut Prng::from_seed([9; 32]));
    assert_eq!(a, b);
    let c = sample_uniform(
        &basis,
        Representation::Ntt,
        &mut Prng::from_seed_stream([9; 32], 1),
    );
    assert_ne!(a, c);
    for i in 0..2 {
        let q = basis.modulus(i).value();
        assert!(a.limb(i).iter().all(|&v| v < q));
        // Mean of uniform [0, q) is q/2; the top bit is set about half the time.
        let high = a.limb(i).iter().filter(|&&v| v >= q / 2).count() as f64 / 1024.0;
        assert!((high - 0.5).abs() < 0.07, "{high}");
    }
}

#[test]
fn below_is_uniform_and_refuses_an_empty_range() {
    let mut rng = Prng::from_seed([9; 32]);
    assert!(rng.below(0).is_err());
    assert_eq!(rng.below(1).unwrap(), 0);
    let mut counts = [0usize; 3];
    for _ in 0..30_000 {
        counts[rng.below(3).unwrap() as usize] += 1;
    }
    assert!(
        counts.iter().all(|&c| (9_400..10_600).contains(&c)),
        "{counts:?}"
    );
}

#[test]
fn flooding_is_uniform_on_its_interval() {
    let basis = RnsBasis::generate(1024, 50, 3).unwrap();
    let mut rng = Prng::from_seed([10; 32]);
    assert!(sample_flooding(&basis, 121, &mut rng).is_err());
    let f = 100;
    let p = sample_flooding(&basis, f, &mut rng).unwrap();
    // Back to integers by CRT (centered), then the spread of a uniform law.
    let q: Vec<u64> = basis.primes();
    let big_q: num_bigint::BigInt = q.iter().map(|&x| num_bigint::BigInt::from(x)).product();
    let values: Vec<f64> = (0..1024)
        .map(|j| {
            let mut v = num_bigint::BigInt::from(0);
            for (i, &qi) in q.iter().enumerate() {
                let qi_big = num_bigint::BigInt::from(qi);
                let qhat = &big_q / &qi_big;
                let inv = (&qhat % &qi_big).modpow(&num_bigint::BigInt::from(qi - 2), &qi_big);
                v += qhat * inv * p.limb(i)[j];
            }
            v %= &big_q;
            if v > &big_q / 2 {
                v -= &big_q;
            }
            v.to_string().parse::<f64>().unwrap() / 2f64.powi(f as i32)
        })
        .collect();
    assert!(values.iter().all(|v| v.abs() <= 1.0));
    let mean = values.iter().sum::<f64>() / 1024.0;
    let var = values.iter().map(|v| v * v).sum::<f64>() / 1024.0;
    assert!(mean.abs() < 0.1, "mean {mean}");
    assert!(
        (var - 1.0 / 3.0).abs() < 0.05,
        "variance {var} (uniform: 1/3)"
    );
}

#[test]
fn wide_gaussian_moments_tail_and_range() {
    let mut rng = Prng::from_os().unwrap();
    // Both sides of 2^46, where one f64 sample gives way to a fine plus a
    // coarse part, up to the largest accepted deviation.
    for log2_sigma in [1.0, 3.0, 20.0, 40.0, 46.0, 46.5, 50.0, 55.0, 59.0] {
        let sigma = f64::exp2(log2_sigma);
        let v = sample_wide_gaussian(N, sigma, &mut rng).unwrap();
        assert!(v
            .iter()
            .all(|&x| (x as f64).abs() <= WIDE_GAUSSIAN_TAIL * sigma + 1.0));
        let (mean, var) = mean_var(&v);
        // Standard errors over 2^14 samples: sigma / 128 for the mean, a
        // relative 1.1% for the variance (+1/12 from rounding; the coarse
        // part's 4^33 / 12 is a relative 2^-29.6 at most), 0.038 for the
        // kurtosis (3 for a Gaussian: 1.8 for a uniform, 6 for a Laplace).
        assert!(
            mean.abs() < 5.0 * sigma / 128.0,
            "2^{log2_sigma}: mean {mean}"
        );
        let ratio = var / (sigma * sigma + 1.0 / 12.0);
        assert!(
            (ratio - 1.0).abs() < 0.06,
            "2^{log2_sigma}: variance ratio {ratio}"
        );
        let kurtosis = v
            .iter()
            .map(|&x| ((x as f64 - mean).powi(2) / var).powi(2))
            .sum::<f64>()
            / N as f64;
        if sigma >= 8.0 {
            assert!(
                (kurtosis - 3.0).abs() < 0.25,
                "2^{log2_sigma}: kurtosis {kurtosis}"
            );
        }
        if sigma >= 1024.0 {
            // Tail mass: P(|x| > 2 sigma) = 0.0455 for a Gaussian, 745
            // of 2^14 expected, standard error 27 (a uniform of the same
            // variance has none there, a Laplace 0.059). Narrower
            // deviations would need the rounding's shift of the cut.
            let beyond = v
                .iter()
                .filter(|&&x| (x as f64).abs() > 2.0 * sigma)
                .count();
            assert!(
                beyond.abs_diff(745) < 135,
                "2^{log2_sigma}: {beyond} samples beyond 2 sigma"
            );
        }
        // The two samples of a Box-Muller pair are independent: their
        // correlation over 2^13 pairs has a standard error of 0.011.
        let corr =
            v.chunks(2).map(|p| p[0] as f64 * p[1] as f64).sum::<f64>() / (N / 2) as f64 / var;
        assert!(corr.abs() < 0.06, "2^{log2_sigma}: pair correlation {corr}");
        // Odd counts keep their last sample.
        assert_eq!(sample_wide_gaussian(3, sigma, &mut rng).unwrap().len(), 3);
    }
    // The low bits are random too: no coarse grid of one f64 at 2^46, and
    // above it the fine part fills the coarse part's steps of 2^33 evenly
    // (16 bins of x mod 2^33, 1024 expected per bin, standard error 31).
    for log2_sigma in [46.0, 47.0, 52.0, 59.0] {
        let v = sample_wide_gaussian(N, f64::exp2(log2_sigma), &mut rng).unwrap();
        let odd = v.iter().filter(|&&x| x & 1 == 1).count() as f64 / N as f64;
        assert!(
            (odd - 0.5).abs() < 0.03,
            "2^{log2_sigma}: odd fraction {odd}"
        );
        let mut bins = [0usize; 16];
        for &x in v.iter() {
            bins[(x.rem_euclid(1 << 33) >> 29) as usize] += 1;
        }
        assert!(
            bins.iter().all(|&b| b.abs_diff(N / 16) < 160),
            "2^{log2_sigma}: x mod 2^33 in 16 bins {bins:?}"
        );
    }
    assert!(sample_wide_gaussian(N, 0.0, &mut rng)
        .unwrap()
        .iter()
        .all(|&x| x == 0));
    for bad in [-1.0, f64::NAN, f64::INFINITY, f64::exp2(59.01)] {
        assert!(sample_wide_gaussian(N, bad, &mut rng).is_err(), "{bad}");
    }
}

/// The fixed-weight sampler's positions are uniform (each of n positions is
/// non-zero in h / n of the draws, within 5 %) and its signs balanced, with
/// exactly h non-zero coefficients every time.
#[test]
fn ternary_hw_positions_are_uniform() {
    let mut rng = Prng::from_seed([21; 32]);
    let (n, h, draws) = (16usize, 5usize, 20_000usize);
    let mut hits = vec![0usize; n];
    let mut negatives = 0usize;
    for _ in 0..draws {
        let s = sample_ternary_hw(n, h, &mut rng).unwrap();
        assert_eq!(s.iter().filter(|&&x| x != 0).count(), h);
        for (k, &x) in s.iter().enumerate() {
            hits[k] += (x != 0) as usize;
            negatives += (x == -1) as usize;
        }
    }
    let expected = (draws * h) as f64 / n as f64;
    for (k, &c) in hits.iter().enumerate() {
        assert!(
            (c as f64 / expected - 1.0).abs() < 0.05,
            "position {k}: {c} of {expected}"
        );
    }
    let half = (draws * h) as f64 / 2.0;
    assert!(
        (negatives as f64 / half - 1.0).abs() < 0.03,
        "{negatives} of {half}"
    );
}
