//! Criterion bench of the CKKS engine, one thread: encode, encrypt,
//! decrypt, the multiply pipeline (fused and step by step), one rotation,
//! eight hoisted rotations, the 64-slot sum, the 64-dimensional dot product,
//! x^2, and the dense layer 64 -> 4, at N = 8192 ({50, 40, 40} + 50), and the
//! pipeline at N = 16384 (same shape, and the depth-7 named set).
//!
//! Run: `RAYON_NUM_THREADS=1 cargo bench -p triskel-benches --bench ckks --
//! --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, Criterion};
use triskel_ckks::{
    CkksContext, CkksParameters, LinearTransform, Plaintext, RotationSum, SecretKey,
};

fn values(len: usize, seed: f64) -> Vec<f64> {
    (0..len)
        .map(|i| ((i as f64 + seed) * 0.618_033_988_7).fract() * 2.0 - 1.0)
        .collect()
}

fn pipeline(c: &mut Criterion, params: CkksParameters, all: bool) {
    let ctx = CkksContext::new(params).unwrap();
    let name = ctx.params().name().to_string();
    let sk = SecretKey::generate(&ctx).unwrap();
    let (pk, rk) = (sk.public_key().unwrap(), sk.relin_key().unwrap());
    let v = values(ctx.slots(), 1.0);
    let pt = Plaintext::from_real(&ctx, &v).unwrap();
    let x = pk.encrypt(&pt).unwrap();
    let y = pk
        .encrypt(&Plaintext::from_real(&ctx, &values(ctx.slots(), 2.0)).unwrap())
        .unwrap();
    let mut g = c.benchmark_group(format!("ckks/{name}"));
    g.sample_size(20);
    g.bench_function("mul_pipeline", |b| {
        b.iter(|| x.mul_relin_rescale(&y, &rk).unwrap())
    });
    if !all {
        g.finish();
        return;
    }
    g.bench_function("mul_relin_rescale_steps", |b| {
        b.iter(|| {
            x.mul(&y)
                .unwrap()
                .relinearize(&rk)
                .unwrap()
                .rescale()
                .unwrap()
        })
    });
    g.bench_function("square_x2", |b| {
        b.iter(|| x.square_relin_rescale(&rk).unwrap())
    });
    g.bench_function("encode", |b| {
        b.iter(|| Plaintext::from_real(&ctx, &v).unwrap())
    });
    g.bench_function("encrypt_public", |b| b.iter(|| pk.encrypt(&pt).unwrap()));
    g.bench_function("encrypt_symmetric", |b| b.iter(|| sk.encrypt(&pt).unwrap()));
    g.bench_function("decrypt_decode", |b| {
        b.iter(|| sk.decrypt_real(&x).unwrap())
    });
    let sum_steps = [1, 2, 4, 8, 16, 32];
    let gk = sk.galois_keys(&sum_steps, false).unwrap();
    g.bench_function("rotate_1", |b| b.iter(|| x.rotate(1, &gk).unwrap()));
    let hoist_keys = sk.galois_keys(&[1, 2, 3, 4, 5, 6, 7, 8], false).unwrap();
    let steps = [1, 2, 3, 4, 5, 6, 7, 8];
    g.bench_function("rotate_hoisted_8", |b| {
        b.iter(|| x.rotate_hoisted(&steps, &hoist_keys).unwrap())
    });
    // The same 8 rotations, each times a vector and summed: one ModUp and
    // one division by q_l P (RotationSum).
    let terms: Vec<(i64, Vec<f64>)> = steps
        .iter()
        .map(|&k| (k, values(ctx.slots(), 1.0 + k as f64)))
        .collect();
    let rotation_sum = RotationSum::new(&ctx, &terms, x.level()).unwrap();
    g.bench_function("rotation_sum_8", |b| {
        b.iter(|| rotation_sum.apply(&x, &hoist_keys).unwrap())
    });
    g.bench_function("slot_sum64", |b| b.iter(|| x.slot_sum(64, &gk).unwrap()));
    g.bench_function("dot64", |b| {
        b.iter(|| {
            x.mul_relin_rescale(&y, &rk)
                .unwrap()
                .slot_sum(64, &gk)
                .unwrap()
        })
    });
    let w: Vec<Vec<f64>> = (0..4).map(|r| values(64, 3.0 + r as f64)).collect();
    let layer = LinearTransform::new(&ctx, &w, 64, ctx.max_level()).unwrap();
    let lk = sk.galois_keys(&layer.rotation_steps(), false).unwrap();
    let packed = pk
        .encrypt(
            &Plaintext::from_real(&ctx, &LinearTransform::pack(&v[..64], 64, ctx.slots())).unwrap(),
        )
        .unwrap();
    g.bench_function("dense_64x4", |b| {
        b.iter(|| layer.apply(&packed, &lk).unwrap())
    });
    g.finish();
}

fn ckks(c: &mut Criterion) {
    pipeline(c, CkksParameters::n8192(), true);
    // The same {50, 40, 40} + 50 shape at N = 16384, and the depth-7 named set.
    let shallow = CkksParameters::n16384_depth2();
    pipeline(c, shallow, false);
    pipeline(c, CkksParameters::n16384(), false);
}

criterion_group!(benches, ckks);
criterion_main!(benches);
