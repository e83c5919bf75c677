//! Criterion bench of the BFV engine, one thread: encrypt, decrypt,
//! multiply + relinearize, one rotation, the biometric match compute on the
//! shallow and general N = 4096 sets, and multiply + relinearize at N = 8192.
//!
//! Run: `RAYON_NUM_THREADS=1 cargo bench -p triskel-benches --bench bfv`

use criterion::{criterion_group, criterion_main, Criterion};
use triskel_bfv::biometric::{self, sample_embeddings, MatchPrivacy, DIM};
use triskel_bfv::{BfvContext, BfvParameters, Plaintext, SecretKey};

fn primitives(c: &mut Criterion, params: BfvParameters) {
    let ctx = BfvContext::new(params).unwrap();
    let name = ctx.params().name().to_string();
    let sk = SecretKey::generate(&ctx).unwrap();
    let pk = sk.public_key().unwrap();
    let rk = sk.relin_key().unwrap();
    let gk = sk.galois_keys(&[1], false).unwrap();
    let t = ctx.plain_modulus();
    let v: Vec<u64> = (0..ctx.n() as u64).map(|i| i * 31 % t).collect();
    let pt = Plaintext::from_slots(&ctx, &v).unwrap();
    let ct = pk.encrypt(&pt).unwrap();
    let mut g = c.benchmark_group(format!("bfv/{name}"));
    g.sample_size(20);
    g.bench_function("encrypt_public", |b| b.iter(|| pk.encrypt(&pt).unwrap()));
    g.bench_function("encrypt_symmetric", |b| b.iter(|| sk.encrypt(&pt).unwrap()));
    g.bench_function("decrypt", |b| b.iter(|| sk.decrypt(&ct).unwrap()));
    g.bench_function("mul_plain", |b| b.iter(|| ct.mul_plain(&pt).unwrap()));
    g.bench_function("mul_relin", |b| {
        b.iter(|| ct.mul(&ct).unwrap().relinearize(&rk).unwrap())
    });
    g.bench_function("rotate_rows_1", |b| {
        b.iter(|| ct.rotate_rows(1, &gk).unwrap())
    });
    g.finish();
}

fn biometric_match(c: &mut Criterion, params: BfvParameters, privacy: MatchPrivacy) {
    let ctx = BfvContext::new(params).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let keys = biometric::match_keys(&sk).unwrap();
    let groups = biometric::encode_templates(&ctx, &sample_embeddings(ctx.n() / DIM, 2)).unwrap();
    let probe = sample_embeddings(1, 1)[0];
    let ct = sk
        .encrypt(&biometric::encode_probe(&ctx, &probe).unwrap())
        .unwrap();
    let mut g = c.benchmark_group(format!("bfv/match/{}", ctx.params().name()));
    g.sample_size(20);
    g.bench_function("compute", |b| {
        b.iter(|| biometric::compute_scores(&ct, &groups, &keys, privacy).unwrap())
    });
    g.bench_function("whole", |b| {
        b.iter(|| {
            let pt = biometric::encode_probe(&ctx, &probe).unwrap();
            let ct = sk.encrypt(&pt).unwrap();
            let scores = biometric::compute_scores(&ct, &groups, &keys, privacy).unwrap();
            biometric::decrypt_scores(&sk, &scores, groups.len()).unwrap()
        })
    });
    g.finish();
}

fn bfv(c: &mut Criterion) {
    biometric_match(
        c,
        biometric::match_parameters().unwrap(),
        MatchPrivacy::Masked,
    );
    biometric_match(
        c,
        biometric::private_match_parameters().unwrap(),
        MatchPrivacy::flooded(),
    );
    primitives(c, BfvParameters::n4096());
    primitives(c, BfvParameters::n8192());
}

criterion_group!(benches, bfv);
criterion_main!(benches);
