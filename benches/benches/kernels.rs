//! Criterion bench of the kernels per backend: forward and inverse NTT,
//! element-wise multiply and multiply-accumulate, N = 2^12 .. 2^16, with a
//! 50-bit prime (every backend) and a 60-bit prime (backends that take it).
//!
//! Run: `cargo bench -p triskel-benches --bench kernels`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use triskel_kernels::{available_backends, mul, mul_acc, ntt_primes, Modulus, NttPlan};

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

criterion_group!(benches, kernels);
criterion_main!(benches);
