//! Key switching in thread CPU time (on a shared,
//! loaded machine wall time mostly measures the other processes): one key
//! switch at N = 16384 (Q = 8 x 47-bit primes, P = 1, dnum = 8), one BFV
//! rotation at N = 4096 (`bfv-n4096`), one BFV multiply + relinearize at
//! N = 8192 (`bfv-n8192`); and the key-switching kernels per backend
//! (N = 2^12 and 2^14, 50-bit and 62-bit primes): the lazy dot product over 3 and 8
//! digits, base conversion from 8 primes to one (exact) and from one prime
//! (the exact lift), and the two automorphisms. Also the biometric match's
//! server-side compute (N = 8192 match set), whose rotations are key switches.
//!
//! Run: `RAYON_NUM_THREADS=1 cargo bench -p triskel-benches --bench keyswitch`

use std::time::Duration;

#[path = "common/cpu_time.rs"]
mod cpu_time;
use cpu_time::ThreadCpuTime;

use criterion::BenchmarkId;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use triskel_bfv::biometric::{self, sample_embeddings, MatchPrivacy, DIM};
use triskel_bfv::{BfvContext, BfvParameters, Plaintext, SecretKey as BfvSecretKey};
use triskel_kernels::{
    automorphism_coeff, automorphism_ntt, available_backends, dot, ntt_primes, BaseConversion,
    GaloisPermutation, Modulus,
};
use triskel_ring::sampling::sample_uniform;
use triskel_ring::{
    KeySwitchContext, KeySwitchKey, NoiseDistribution, Prng, Representation, RnsBasis,
    SecretDistribution, SecretKey,
};

fn keyswitch(c: &mut Criterion<ThreadCpuTime>) {
    let mut group = c.benchmark_group("keyswitch_cpu");
    group.sample_size(10);

    let (n, kq) = (16384, 8);
    let primes = triskel_kernels::ntt_primes(47, n, kq + 1).expect("primes");
    let q = RnsBasis::new(n, &primes[..kq]).expect("Q");
    let p = RnsBasis::new(n, &primes[kq..]).expect("P");
    let ctx = KeySwitchContext::new(&q, &p, kq, NoiseDistribution::default()).expect("context");
    let mut rng = Prng::from_seed([3; 32]);
    let sk = SecretKey::generate(n, SecretDistribution::Ternary, &mut rng).expect("sk");
    let key = KeySwitchKey::relinearization(&ctx, &sk, &mut rng).expect("key");
    let c1 = sample_uniform(&q, Representation::Ntt, &mut rng);
    group.bench_function("ring_key_switch_16384_Q8P1d8", |b| {
        b.iter(|| ctx.switch(&key, &c1).unwrap())
    });
    let bound = ctx.noise_bound(kq, 2 * n as u64 / 3).log2();
    eprintln!("Q8 P1 dnum 8: key-switch noise bound 2^{bound:.1}");
    // Smaller dnum at the same log QP (9 primes of 47 bits): fewer NTTs and
    // a shorter key, a P as large as the largest digit. The noise bound of
    // each (log2, ternary secret of l1-norm 2n/3) goes to stderr.
    for (kq, kp, dnum) in [(7, 2, 4), (6, 3, 2)] {
        let q = RnsBasis::new(n, &primes[..kq]).expect("Q");
        let p = RnsBasis::new(n, &primes[kq..]).expect("P");
        let ctx = KeySwitchContext::new(&q, &p, dnum, NoiseDistribution::default()).expect("ctx");
        let key = KeySwitchKey::relinearization(&ctx, &sk, &mut rng).expect("key");
        let c1 = sample_uniform(&q, Representation::Ntt, &mut rng);
        let bound = ctx.noise_bound(kq, 2 * n as u64 / 3).log2();
        eprintln!("Q{kq} P{kp} dnum {dnum}: key-switch noise bound 2^{bound:.1}");
        group.bench_function(
            format!("ring_key_switch_16384_Q{kq}P{kp}d{dnum}_shape"),
            |b| b.iter(|| ctx.switch(&key, &c1).unwrap()),
        );
    }

    for params in [BfvParameters::n4096(), BfvParameters::n8192()] {
        let ctx = BfvContext::new(params).expect("BFV context");
        let name = ctx.params().name().to_string();
        let sk = BfvSecretKey::generate(&ctx).expect("sk");
        let t = ctx.plain_modulus();
        let v: Vec<u64> = (0..ctx.n() as u64).map(|i| i * 31 % t).collect();
        let ct = sk
            .encrypt(&Plaintext::from_slots(&ctx, &v).expect("pt"))
            .expect("ct");
        if ctx.n() == 4096 {
            let gk = sk.galois_keys(&[1], false).expect("galois keys");
            group.bench_function(format!("bfv_rotate_rows_1/{name}"), |b| {
                b.iter(|| ct.rotate_rows(1, &gk).unwrap())
            });
            // Keys for 1 and 2 only: the rotation by 3 is two in a row.
            let gk = sk.galois_keys(&[1, 2], false).expect("galois keys");
            group.bench_function(format!("bfv_rotate_rows_3_by_1_2/{name}"), |b| {
                b.iter(|| ct.rotate_rows(3, &gk).unwrap())
            });
        } else {
            let rk = sk.relin_key().expect("relin key");
            group.bench_function(format!("bfv_mul_relin_square/{name}"), |b| {
                b.iter(|| ct.mul(&ct).unwrap().relinearize(&rk).unwrap())
            });
            // Two different operands, as in `triskel bench workloads`.
            let other = ct.add(&ct).expect("sum");
            group.bench_function(format!("bfv_mul_relin/{name}"), |b| {
                b.iter(|| ct.mul(&other).unwrap().relinearize(&rk).unwrap())
            });
        }
    }

    // The biometric match's server side (one plaintext product, the rotation
    // sums, the score mask, re-randomization), whose rotations are key switches.
    let ctx = BfvContext::new(biometric::match_parameters().expect("match set")).expect("ctx");
    let sk = BfvSecretKey::generate(&ctx).expect("sk");
    let keys = biometric::match_keys(&sk).expect("match keys");
    let templates = sample_embeddings(ctx.n() / DIM, 2);
    let groups = biometric::encode_templates(&ctx, &templates).expect("templates");
    let probe = biometric::encode_probe(&ctx, &sample_embeddings(1, 1)[0]).expect("probe");
    let ct = sk.encrypt(&probe).expect("ct");
    group.bench_function(format!("bfv_match_compute/{}", ctx.params().name()), |b| {
        b.iter(|| biometric::compute_scores(&ct, &groups, &keys, MatchPrivacy::Masked).unwrap())
    });
    group.finish();
}

/// The pieces of one BFV rotation (`bfv-n4096`), one multiply +
/// relinearize (`bfv-n8192`) and one key switch at N = 16384 (`bfv-n16384`
/// has the shape of `ring.keyswitch_16384`: Q8 P1 dnum 8) at those sets'
/// own primes, so that the time of
/// each operation can be split into counted calls: forward and inverse
/// NTT, the single-prime lift and the 4-prime base conversion, the dot
/// product over the digits, an NTT-domain automorphism, one element-wise
/// product and a limb copy; and the multiplication (tensor) and the
/// relinearization on their own.
fn pieces(c: &mut Criterion<ThreadCpuTime>) {
    let mut group = c.benchmark_group("keyswitch_cpu/pieces");
    group.sample_size(10);
    let sets = [
        BfvParameters::n4096(),
        BfvParameters::n8192(),
        BfvParameters::n16384(),
    ];
    for params in sets {
        let ctx = BfvContext::new(params).expect("BFV context");
        let name = ctx.params().name().to_string();
        let (n, primes) = (ctx.n(), ctx.q_primes());
        let m = Modulus::new(primes[0]).expect("modulus");
        let plan = triskel_kernels::NttPlan::new(n, &m).expect("plan");
        let vectors: Vec<Vec<u64>> = (0..16u64)
            .map(|s| triskel_benches::residues(n, primes[0], s))
            .collect();
        let refs: Vec<&[u64]> = vectors.iter().map(|v| &v[..]).collect();
        let mut out = vectors[0].clone();
        let id = |op: &str| format!("{name}/{op}");
        group.bench_function(id("ntt_forward"), |b| {
            b.iter(|| plan.forward(&mut out).unwrap())
        });
        group.bench_function(id("ntt_inverse"), |b| {
            b.iter(|| plan.inverse(&mut out).unwrap())
        });
        let digits = primes.len();
        group.bench_function(id(&format!("dot{digits}")), |b| {
            b.iter(|| dot(&m, &mut out, &refs[..digits], &refs[8..8 + digits]).unwrap())
        });
        let lift = BaseConversion::new(&primes[1..2], &m).expect("lift");
        group.bench_function(id("lift_1to1"), |b| {
            b.iter(|| lift.convert(&mut out, &refs[..1], true).unwrap())
        });
        if digits > 1 {
            let aux = ntt_primes(50, n, 1).expect("aux prime")[0];
            let conv =
                BaseConversion::new(&primes, &Modulus::new(aux).expect("aux")).expect("conversion");
            group.bench_function(id(&format!("base_convert_{digits}to1")), |b| {
                b.iter(|| conv.convert(&mut out, &refs[..digits], true).unwrap())
            });
        }
        let perm = GaloisPermutation::new(n, 3).expect("Galois element 3");
        group.bench_function(id("automorphism_ntt"), |b| {
            b.iter(|| automorphism_ntt(&m, &mut out, refs[1], &perm).unwrap())
        });
        group.bench_function(id("mul"), |b| {
            b.iter(|| triskel_kernels::mul_assign(&m, &mut out, refs[1]).unwrap())
        });
        group.bench_function(id("copy"), |b| b.iter(|| out.copy_from_slice(refs[1])));
        let sk = BfvSecretKey::generate(&ctx).expect("sk");
        let t = ctx.plain_modulus();
        let v: Vec<u64> = (0..n as u64).map(|i| i * 31 % t).collect();
        let ct = sk
            .encrypt(&Plaintext::from_slots(&ctx, &v).expect("pt"))
            .expect("ct");
        let other = ct.add(&ct).expect("sum");
        let rk = sk.relin_key().expect("relin key");
        let tensor = ct.mul(&other).expect("tensor");
        group.bench_function(id("mul_tensor"), |b| b.iter(|| ct.mul(&other).unwrap()));
        group.bench_function(id("relinearize"), |b| {
            b.iter(|| tensor.relinearize(&rk).unwrap())
        });
    }
    group.finish();
}

fn kernels(c: &mut Criterion<ThreadCpuTime>) {
    for bits in [50, 62] {
        kernels_at(c, bits);
    }
}

fn kernels_at(c: &mut Criterion<ThreadCpuTime>, bits: u32) {
    let mut group = c.benchmark_group(format!("keyswitch_cpu/kernels/{bits}bit"));
    group.sample_size(10);
    for log_n in [12, 14] {
        let n = 1usize << log_n;
        let primes = ntt_primes(bits, n, 9).expect("NTT-friendly primes exist");
        let (q, src) = (primes[8], &primes[..8]);
        group.throughput(Throughput::Elements(n as u64));
        // Residues below q, the smallest of the nine primes.
        let vectors: Vec<Vec<u64>> = (0..16u64)
            .map(|s| {
                (0..n as u64)
                    .map(|i| (i + s).wrapping_mul(0x9e37_79b9_7f4a_7c15) % q)
                    .collect()
            })
            .collect();
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

criterion_group! {
    name = benches;
    config = Criterion::default()
        .with_measurement(ThreadCpuTime)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = keyswitch, pieces, kernels
}
criterion_main!(benches);
