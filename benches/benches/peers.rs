//! Peer comparison: triskel's forward and inverse NTT against `tfhe-ntt` 0.7
//! (`prime64::Plan`, which takes its AVX-512 and AVX-512 IFMA paths at run
//! time on stable Rust with its default `avx512` feature) at N = 4096 and
//! 16384, for a 50-bit prime (triskel: avx512ifma) and a 62-bit prime
//! (triskel: avx512), plus portable for scale. Same primes, same inputs,
//! same process.
//!
//! tfhe-ntt's inverse leaves out the factor n^-1 (its `normalize` is a
//! separate pass); triskel's inverse includes it.
//!
//! Run: `cargo bench -p triskel-benches --features peers --bench peers`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use triskel_kernels::{ntt_primes, Backend, Modulus, NttPlan};

fn residues(n: usize, q: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3) % q)
        .collect()
}

fn peers(c: &mut Criterion) {
    for (bits, fast) in [(50u32, Backend::Avx512Ifma), (62, Backend::Avx512)] {
        let mut group = c.benchmark_group(format!("peers/{bits}bit"));
        group.sample_size(50);
        for n in [4096usize, 16384] {
            let q = ntt_primes(bits, n, 1).expect("NTT-friendly primes exist")[0];
            group.throughput(Throughput::Elements(n as u64));
            let input = residues(n, q);
            for backend in [fast, Backend::Portable] {
                if !backend.is_usable() {
                    eprintln!("skipping {}: not usable on this machine", backend.name());
                    continue;
                }
                let m = Modulus::with_backend(q, backend).expect("usable backend");
                let plan = NttPlan::new(n, &m).expect("valid plan");
                let mut data = input.clone();
                let name = format!("triskel-{}", backend.name());
                group.bench_function(BenchmarkId::new(format!("ntt_forward/{name}"), n), |b| {
                    b.iter(|| plan.forward(&mut data).unwrap())
                });
                group.bench_function(BenchmarkId::new(format!("ntt_inverse/{name}"), n), |b| {
                    b.iter(|| plan.inverse(&mut data).unwrap())
                });
            }
            let plan = tfhe_ntt::prime64::Plan::try_new(n, q).expect("tfhe-ntt accepts q");
            let mut data = input.clone();
            group.bench_function(BenchmarkId::new("ntt_forward/tfhe-ntt", n), |b| {
                b.iter(|| plan.fwd(&mut data))
            });
            group.bench_function(BenchmarkId::new("ntt_inverse/tfhe-ntt", n), |b| {
                b.iter(|| plan.inv(&mut data))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, peers);
criterion_main!(benches);
