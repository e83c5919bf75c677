//! Criterion bench of the kernels per backend: forward and inverse NTT,
//! element-wise multiply and multiply-accumulate, N = 2^12 .. 2^16, with a
//! 50-bit prime (every backend) and a 60-bit prime (backends that take it).
//!
//! The key-switching kernels per backend, N = 2^12 and 2^14, 50-bit primes:
//! the lazy dot product over 3 and 8 digits, base conversion from 8 primes
//! to one (exact) and from one prime (the exact lift), and the two
//! automorphisms.
//!
//! Run: `cargo bench -p triskel-benches --bench kernels`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use triskel_kernels::{
    automorphism_coeff, automorphism_ntt, available_backends, dot, mul, mul_acc, ntt_primes,
    BaseConversion, GaloisPermutation, Modulus, NttPlan,
};

fn residues(n: usize, q: u64, seed: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| (i.wrapping_add(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3) % q)
        .collect()
}

fn kernels(c: &mut Criterion) {
    for bits in [50u32, 60] {
        let mut group = c.benchmark_group(format!("kernels/{bits}bit"));
        group.sample_size(30);
        for log_n in 12..=16 {
            let n = 1usize << log_n;
            let q = ntt_primes(bits, n, 1).expect("NTT-friendly primes exist")[0];
            group.throughput(Throughput::Elements(n as u64));
            for backend in available_backends()
                .into_iter()
                .filter(|b| b.supports_modulus(q))
            {
                let m = Modulus::with_backend(q, backend).expect("usable backend");
                let plan = NttPlan::new(n, &m).expect("valid plan");
                let (a, b) = (residues(n, q, 1), residues(n, q, 2));
                let mut data = a.clone();
                let mut out = vec![0u64; n];
                let id = |op: &str| BenchmarkId::new(format!("{op}/{}", backend.name()), n);
                group.bench_function(id("ntt_forward"), |bench| {
                    bench.iter(|| plan.forward(&mut data).unwrap())
                });
                group.bench_function(id("ntt_inverse"), |bench| {
                    bench.iter(|| plan.inverse(&mut data).unwrap())
                });
                group.bench_function(id("mul"), |bench| {
                    bench.iter(|| mul(&m, &mut out, &a, &b).unwrap())
                });
                group.bench_function(id("mul_acc"), |bench| {
                    bench.iter(|| mul_acc(&m, &mut out, &a, &b).unwrap())
                });
            }
        }
        group.finish();
    }
}

fn keyswitch_kernels(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernels/keyswitch/50bit");
    group.sample_size(30);
    for log_n in [12, 14] {
        let n = 1usize << log_n;
        let primes = ntt_primes(50, n, 9).expect("NTT-friendly primes exist");
        let (q, src) = (primes[8], &primes[..8]);
        group.throughput(Throughput::Elements(n as u64));
        let vectors: Vec<Vec<u64>> = (0..16).map(|s| residues(n, q, s)).collect();
        let refs: Vec<&[u64]> = vectors.iter().map(|v| &v[..]).collect();
        let perm = GaloisPermutation::new(n, 5).expect("Galois element 5");
        for backend in available_backends()
            .into_iter()
            .filter(|b| b.supports_modulus(q))
        {
            let m = Modulus::with_backend(q, backend).expect("usable backend");
            let mut out = vec![0u64; n];
            let id = |op: &str| BenchmarkId::new(format!("{op}/{}", backend.name()), n);
            for terms in [3, 8] {
                let (a, b) = (&refs[..terms], &refs[8..8 + terms]);
                group.bench_function(id(&format!("dot{terms}")), |bench| {
                    bench.iter(|| dot(&m, &mut out, a, b).unwrap())
                });
            }
            let conv = BaseConversion::new(src, &m).expect("conversion");
            group.bench_function(id("base_convert_8to1"), |bench| {
                bench.iter(|| conv.convert(&mut out, &refs[..8], true).unwrap())
            });
            let lift = BaseConversion::new(&src[..1], &m).expect("conversion");
            group.bench_function(id("base_convert_1to1"), |bench| {
                bench.iter(|| lift.convert(&mut out, &refs[..1], true).unwrap())
            });
            group.bench_function(id("automorphism_coeff"), |bench| {
                bench.iter(|| automorphism_coeff(&m, &mut out, refs[0], 5).unwrap())
            });
            group.bench_function(id("automorphism_ntt"), |bench| {
                bench.iter(|| automorphism_ntt(&m, &mut out, refs[0], &perm).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, kernels, keyswitch_kernels);
criterion_main!(benches);
