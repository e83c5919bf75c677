//! Criterion bench of attestation: sign and verify one record, and sign and verify a
//! batch of 1,024 results (reported per result through the element throughput).
//! Results are 1 KiB each.
//!
//! Run: `cargo bench -p triskel-benches --bench attest`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use triskel_attest::{attest, attest_batch, verify, verify_batch_record, Identity, Route};

const RESULT_LEN: usize = 1024;
const BATCH: usize = 1024;

fn result(i: usize) -> Vec<u8> {
    (0..RESULT_LEN)
        .map(|j| (i.wrapping_mul(31).wrapping_add(j) % 251) as u8)
        .collect()
}

fn attestation(c: &mut Criterion) {
    let identity = Identity::generate();
    let public = identity.public().clone();
    let route = Route::new("bfv", "bfv-n8192-128");
    let context = b"bench: caller=alice purpose=biometric-match";

    let mut group = c.benchmark_group("attest/record");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(4));
    let one = result(0);
    group.bench_function("sign", |b| {
        b.iter(|| attest(&identity, &one, &route, context).expect("attest"))
    });
    let record = attest(&identity, &one, &route, context).expect("attest");
    group.bench_function("verify", |b| {
        b.iter(|| verify(&public, &one, &route, context, &record).expect("verify"))
    });
    group.finish();

    let mut group = c.benchmark_group("attest/batch1024");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(BATCH as u64));
    let results: Vec<Vec<u8>> = (0..BATCH).map(result).collect();
    group.bench_function("sign", |b| {
        b.iter(|| attest_batch(&identity, &results, &route, context).expect("attest"))
    });
    let batch = attest_batch(&identity, &results, &route, context).expect("attest");
    group.bench_function("verify_all", |b| {
        b.iter(|| {
            let verified =
                verify_batch_record(&public, &route, context, &batch.record).expect("verify");
            for (r, proof) in results.iter().zip(&batch.proofs) {
                verified.check(r, proof).expect("check");
            }
        })
    });
    group.throughput(Throughput::Elements(1));
    let verified = verify_batch_record(&public, &route, context, &batch.record).expect("verify");
    group.bench_function("check_one", |b| {
        b.iter(|| {
            verified
                .check(&results[700], &batch.proofs[700])
                .expect("check")
        })
    });
    group.finish();
}

criterion_group!(benches, attestation);
criterion_main!(benches);
