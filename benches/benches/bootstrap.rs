//! Criterion bench of CKKS bootstrapping, one thread: one full-slot
//! bootstrap of a level-0 ciphertext, on the chain and circuit of the named
//! set `ckks-n65536-boot` at ring degree 2^TRISKEL_BOOT_LOG_N (default 13;
//! 16 is the named set itself, below it the same shape on a smaller,
//! insecure ring). Key generation is timed once and printed, with the
//! keys' serialized size and the precision of the measured bootstraps.
//!
//! Run: `RAYON_NUM_THREADS=1 TRISKEL_BOOT_LOG_N=13 cargo bench -p triskel-benches --bench bootstrap
//! -- --warm-up-time 1 --measurement-time 20`

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use triskel_ckks::{BootstrapSet, Bootstrapper, CkksContext, Plaintext, SecretKey};

fn bootstrap(c: &mut Criterion) {
    let log_n: u32 = std::env::var("TRISKEL_BOOT_LOG_N")
        .ok()
        .map(|v| v.parse().expect("TRISKEL_BOOT_LOG_N is a number"))
        .unwrap_or(13);
    let set = BootstrapSet::n65536();
    let params = match log_n {
        16 => set.ckks.clone(),
        _ => set.clone().at_degree(1 << log_n).ckks.allow_insecure(),
    };
    let ctx = CkksContext::new(params).unwrap();
    let bt = Bootstrapper::new(&ctx, set.bootstrap).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let t = Instant::now();
    let keys = sk.bootstrap_keys(&bt).unwrap();
    println!(
        "{}: keygen {:.2} s, keys {:.1} MiB serialized, {} levels left",
        ctx.params().name(),
        t.elapsed().as_secs_f64(),
        keys.to_bytes().len() as f64 / (1 << 20) as f64,
        bt.output_level()
    );
    let v: Vec<f64> = (0..ctx.slots())
        .map(|i| (i as f64 * 0.618_033_988_7).fract() * 2.0 - 1.0)
        .collect();
    let pt = Plaintext::encode_real(&ctx, &v, 0, ctx.default_scale(), 1.0).unwrap();
    let ct = sk.encrypt(&pt).unwrap();
    let out = bt.bootstrap(&ct, &keys).unwrap();
    let got = sk.decrypt_real(&out).unwrap();
    let mean = got.iter().zip(&v).map(|(a, b)| (a - b).abs()).sum::<f64>() / v.len() as f64;
    println!(
        "precision {:.1} bits (-log2 of the mean error)",
        -mean.log2()
    );
    let mut g = c.benchmark_group(format!("ckks/{}", ctx.params().name()));
    g.sample_size(10);
    g.bench_function("bootstrap", |b| {
        b.iter(|| bt.bootstrap(&ct, &keys).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bootstrap);
criterion_main!(benches);
