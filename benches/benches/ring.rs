//! Criterion bench of the ring layer (triskel-ring): NTT of a full RNS
//! polynomial, exact base extension Q -> B, one hybrid key switch, and the
//! wide Gaussian sampler.
//!
//! Parameter shapes within the 128-bit limits (`triskel_ring::HE_STANDARD_128`):
//! N = 8192 with Q = 4 x 42-bit primes and P = 1 (log QP ~ 210), N = 16384
//! with Q = 8 x 47-bit primes and P = 1 (log QP ~ 423), dnum = k (one prime
//! per digit), plus N = 16384 with Q = 7 x 47, P = 2, dnum = 4.
//!
//! Run (one core): `RAYON_NUM_THREADS=1 cargo bench -p triskel-benches --bench ring`

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use triskel_ring::sampling::{sample_uniform, sample_wide_gaussian};
use triskel_ring::{
    BaseConverter, KeySwitchContext, KeySwitchKey, NoiseDistribution, Prng, Representation,
    RnsBasis, SecretDistribution, SecretKey,
};

/// (n, bits, primes of Q, primes of P, dnum)
const SHAPES: [(usize, u32, usize, usize, usize); 3] = [
    (8192, 42, 4, 1, 4),
    (16384, 47, 8, 1, 8),
    (16384, 47, 7, 2, 4),
];

fn ring(c: &mut Criterion) {
    let mut group = c.benchmark_group("ring");
    group.sample_size(20);
    let mut rng = Prng::from_seed([7; 32]);
    for (n, bits, kq, kp, dnum) in SHAPES {
        let primes = triskel_kernels::ntt_primes(bits, n, 2 * kq + 2).expect("enough primes");
        let q = RnsBasis::new(n, &primes[..kq]).expect("basis Q");
        let p = RnsBasis::new(n, &primes[kq..kq + kp]).expect("basis P");
        let b = RnsBasis::new(n, &primes[kq + kp..2 * kq + 2]).expect("basis B");
        let label = format!("{n}/Q{kq}P{kp}d{dnum}");
        let qp = q.concat(&p).expect("QP");

        if dnum == kq {
            // NTT of a whole polynomial in Q || P, and BFV-style extension Q -> B.
            let x = sample_uniform(&qp, Representation::Coefficient, &mut rng);
            let id = BenchmarkId::new(format!("ntt_forward/{}primes", qp.len()), n);
            group.bench_function(id, |bn| {
                bn.iter_batched_ref(|| x.clone(), |x| x.to_ntt().unwrap(), BatchSize::LargeInput)
            });
            let xq = sample_uniform(&q, Representation::Coefficient, &mut rng);
            let conv = BaseConverter::new(&q, &b).expect("converter");
            let id = BenchmarkId::new(format!("exact_extend/{kq}to{}", b.len()), n);
            group.bench_function(id, |bn| bn.iter(|| conv.exact_extend(&xq).unwrap()));
            let id = BenchmarkId::new(format!("fast_extend/{kq}to{}", b.len()), n);
            group.bench_function(id, |bn| bn.iter(|| conv.fast_extend(&xq).unwrap()));
        }

        let ctx = KeySwitchContext::new(&q, &p, dnum, NoiseDistribution::default()).expect("ctx");
        let sk = SecretKey::generate(n, SecretDistribution::Ternary, &mut rng).expect("sk");
        let rlk = KeySwitchKey::relinearization(&ctx, &sk, &mut rng).expect("rlk");
        let c1 = sample_uniform(&q, Representation::Ntt, &mut rng);
        group.bench_function(BenchmarkId::new("key_switch", label), |bn| {
            bn.iter(|| ctx.switch(&rlk, &c1).unwrap())
        });
    }
    group.finish();
}

/// The wide Gaussian sampler, 8192 samples: sigma 2^31 (a CKKS flood at
/// N = 8192) is one normal per sample, 2^48.6 (TFHE's LWE key-switching
/// noise) a fine plus a coarse normal.
fn wide_gaussian(c: &mut Criterion) {
    let mut group = c.benchmark_group("ring/sample_wide_gaussian");
    let mut rng = Prng::from_seed([9; 32]);
    for log_sigma in [31.0, 48.6] {
        group.bench_function(BenchmarkId::new("8192", log_sigma), |bn| {
            bn.iter(|| sample_wide_gaussian(8192, f64::exp2(log_sigma), &mut rng).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, ring, wide_gaussian);
criterion_main!(benches);
