//! Criterion bench of the threshold protocols, one thread, in CPU time of
//! the measuring thread (on a shared machine wall time mostly measures the
//! other processes).
//!
//! - `threshold/keygen/bfv-n16384/{3,5,10}`: the collective public key
//!   (`pk`), relinearization key (`rlk`, both rounds) and a public-key
//!   switch of one ciphertext by every party (`pcks`), each the whole
//!   protocol in one process: every party's share, the aggregation and the
//!   finish (the parties' work summed, as if run one after the other).
//! - `threshold/decrypt/<set>`: the biometric match's 64 score coefficients
//!   by 3 of 5 parties: one party's share (`partial`), the combination
//!   (`combine`), and the whole (`total`).
//!
//! The bytes each party sends per protocol are printed once per size.
//!
//! Run: `RAYON_NUM_THREADS=1 cargo bench -p triskel-benches --bench threshold`

#[path = "common/cpu_time.rs"]
mod cpu_time;

use cpu_time::ThreadCpuTime;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use triskel_bfv::biometric::{self, sample_embeddings, DIM};
use triskel_bfv::threshold::{public_key_gen, relin_key_gen, share_basis, ThresholdDecryption};
use triskel_bfv::{BfvContext, BfvParameters, Plaintext, PublicKey};
use triskel_ring::threshold::{
    CiphertextId, PartySecret, PublicKeySwitch, Session, Share, ThresholdShare,
};
use triskel_ring::{NoiseDistribution, Smudging};

fn secrets(session: &Session, n: usize) -> Vec<PartySecret> {
    (1..=session.parties())
        .map(|j| PartySecret::generate(session, j, n).unwrap())
        .collect()
}

fn keygen(c: &mut Criterion<ThreadCpuTime>) {
    let ctx = BfvContext::new(BfvParameters::n16384()).unwrap();
    let name = ctx.params().name().to_string();
    let mut g = c.benchmark_group(format!("threshold/keygen/{name}"));
    g.sample_size(10);
    for parties in [3u16, 5, 10] {
        let session = Session::new(parties, parties).unwrap();
        let secrets = secrets(&session, ctx.n());
        let gen = public_key_gen(&ctx, &session).unwrap();
        let rgen = relin_key_gen(&ctx, &session);
        let pk_share = gen.share(&secrets[0]).unwrap();
        let (eph, r1) = rgen.round1(&secrets[0]).unwrap();
        let all_r1: Vec<Share> = secrets.iter().map(|s| rgen.round1(s).unwrap().1).collect();
        let agg1 = rgen.aggregate_round1(&all_r1).unwrap();
        let _ = (&eph, &agg1);
        let pk = PublicKey::from_collective(
            &ctx,
            gen.finish(
                &gen.aggregate(
                    &secrets
                        .iter()
                        .map(|s| gen.share(s).unwrap())
                        .collect::<Vec<_>>(),
                )
                .unwrap(),
            )
            .unwrap(),
        )
        .unwrap();
        let shares: Vec<ThresholdShare> = secrets
            .iter()
            .map(|s| ThresholdShare::additive(s, share_basis(&ctx)).unwrap())
            .collect();
        let ct = pk
            .encrypt(&Plaintext::from_slots(&ctx, &[1, 2, 3]).unwrap())
            .unwrap();
        let q = triskel_ring::RnsBasis::new(ctx.n(), &ctx.q_primes()).unwrap();
        let target = triskel_ring::RlweSecret::generate(&q)
            .unwrap()
            .public_key(
                NoiseDistribution::default(),
                &mut triskel_ring::Prng::from_os().unwrap(),
            )
            .unwrap();
        let all = session.all_parties();
        let smudging = Smudging::new(ct.noise_estimate_log2() + 8.0);
        let id = CiphertextId::of(ct.polys());
        let pcks = PublicKeySwitch::new(
            &session,
            &all,
            id,
            [&ct.polys()[0], &ct.polys()[1]],
            &target,
            smudging,
            NoiseDistribution::default(),
        )
        .unwrap();
        let pcks_share = pcks.share(&shares[0]).unwrap();
        // A share releases once (alpha = 1): fresh shares for every run.
        let fresh = || {
            secrets
                .iter()
                .map(|s| ThresholdShare::additive(s, share_basis(&ctx)).unwrap())
                .collect::<Vec<_>>()
        };
        let r2 = rgen.round2(&secrets[0], &eph, &agg1).unwrap();
        eprintln!(
            "{name}, {parties} parties: bytes per party: pk {}, rlk round 1 {}, rlk round 2 {}, \
             pcks {}",
            pk_share.to_bytes().len(),
            r1.to_bytes().len(),
            r2.to_bytes().len(),
            pcks_share.to_bytes().len()
        );
        g.bench_function(format!("{parties}/pk"), |b| {
            b.iter(|| {
                let parts: Vec<Share> = secrets.iter().map(|s| gen.share(s).unwrap()).collect();
                gen.finish(&gen.aggregate(&parts).unwrap()).unwrap()
            })
        });
        g.bench_function(format!("{parties}/rlk"), |b| {
            b.iter(|| {
                let (eph, r1): (Vec<_>, Vec<_>) =
                    secrets.iter().map(|s| rgen.round1(s).unwrap()).unzip();
                let agg1 = rgen.aggregate_round1(&r1).unwrap();
                let r2: Vec<Share> = secrets
                    .iter()
                    .zip(&eph)
                    .map(|(s, e)| rgen.round2(s, e, &agg1).unwrap())
                    .collect();
                rgen.finish(&agg1, &rgen.aggregate_round2(&r2).unwrap())
                    .unwrap()
            })
        });
        g.bench_function(format!("{parties}/pcks"), |b| {
            b.iter_batched(
                fresh,
                |shares| {
                    let parts: Vec<Share> = shares.iter().map(|s| pcks.share(s).unwrap()).collect();
                    pcks.finish(&pcks.aggregate(&parts).unwrap()).unwrap()
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

fn decrypt(c: &mut Criterion<ThreadCpuTime>) {
    let ctx = BfvContext::new(biometric::threshold_match_parameters()).unwrap();
    let session = Session::new(5, 3).unwrap();
    let secrets = secrets(&session, ctx.n());
    let basis = share_basis(&ctx);
    let deals: Vec<Vec<Share>> = secrets.iter().map(|s| s.deal(basis).unwrap()).collect();
    // Each party's share, dealt again for every run: a share releases a
    // decryption alpha = 2^20 times (its ledger), criterion may run more.
    let share_of = |j: u16| {
        let mine: Vec<Share> = deals.iter().map(|d| d[j as usize - 1].clone()).collect();
        ThresholdShare::from_deals(&secrets[j as usize - 1], &mine).unwrap()
    };
    let gen = public_key_gen(&ctx, &session).unwrap();
    let parts: Vec<Share> = secrets.iter().map(|s| gen.share(s).unwrap()).collect();
    let pk = PublicKey::from_collective(&ctx, gen.finish(&gen.aggregate(&parts).unwrap()).unwrap())
        .unwrap();
    let count = ctx.n() / DIM;
    let templates = sample_embeddings(count, 2);
    let groups = biometric::encode_templates_coefficients(&ctx, &templates).unwrap();
    let probe = sample_embeddings(1, 1)[0];
    let ct = pk
        .encrypt(&biometric::encode_probe_coefficients(&ctx, &probe).unwrap())
        .unwrap();
    let score = biometric::compute_scores_coefficients(&ct, &groups, &pk).unwrap()[0].clone();
    let idx = biometric::score_coefficients(&ctx, count).unwrap();
    let id = CiphertextId::of(score.polys());
    let set = [1u16, 3, 5];
    let alpha = 1 << 20;
    let dec = ThresholdDecryption::new(&score, &session, &set, id, Some(&idx), 40, alpha).unwrap();
    let partials: Vec<Share> = set
        .iter()
        .map(|&j| dec.share(&share_of(j)).unwrap())
        .collect();
    eprintln!(
        "{}: decryption share {} bytes per party",
        ctx.params().name(),
        partials[0].to_bytes().len()
    );
    let mut g = c.benchmark_group(format!("threshold/decrypt/{}", ctx.params().name()));
    g.sample_size(20);
    g.bench_function("digest", |b| b.iter(|| CiphertextId::of(score.polys())));
    g.bench_function("partial", |b| {
        b.iter_batched(
            || share_of(1),
            |s| dec.share(&s).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("combine", |b| {
        b.iter(|| {
            dec.finish_coefficients(&dec.aggregate(&partials).unwrap())
                .unwrap()
        })
    });
    g.bench_function("total", |b| {
        b.iter_batched(
            || set.map(share_of),
            |shares| {
                let dec =
                    ThresholdDecryption::new(&score, &session, &set, id, Some(&idx), 40, alpha)
                        .unwrap();
                let parts: Vec<Share> = shares.iter().map(|s| dec.share(s).unwrap()).collect();
                dec.finish_coefficients(&dec.aggregate(&parts).unwrap())
                    .unwrap()
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = decrypt, keygen
}
criterion_main!(benches);
