//! Criterion bench of attestation, suite 2 (SLH-DSA per FIPS 205, the default) against
//! suite 1 (SPHINCS+ round 3.1 (not FIPS 205)) in the same run: sign and verify one record, and sign and
//! verify a batch of 1,024 results (reported per result through the element throughput).
//! Results are 1 KiB each.
//!
//! Run: `cargo bench -p triskel-benches --bench attest`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use triskel_attest::{attest, attest_batch, verify, verify_batch_record, Identity, Route, Suite};

const RESULT_LEN: usize = 1024;
const BATCH: usize = 1024;

fn result(i: usize) -> Vec<u8> {
    (0..RESULT_LEN)
        .map(|j| (i.wrapping_mul(31).wrapping_add(j) % 251) as u8)
        .collect()
}

fn attestation(c: &mut Criterion) {
    let route = Route::new("bfv", "bfv-n8192-128");
    let context = b"bench: caller=alice purpose=biometric-match";
    let one = result(0);
    let results: Vec<Vec<u8>> = (0..BATCH).map(result).collect();
    for suite in [Suite::Fips205, Suite::Sphincs31] {
        let identity = Identity::generate_suite(suite).expect("generate");
        let public = identity.public().clone();
        let name = format!("suite{}", suite.id());

        let mut group = c.benchmark_group(format!("attest/{name}/record"));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(4));
        group.bench_function("sign", |b| {
            b.iter(|| attest(&identity, &one, &route, context).expect("attest"))
        });
        let record = attest(&identity, &one, &route, context).expect("attest");
        group.bench_function("verify", |b| {
            b.iter(|| verify(&public, &one, &route, context, &record).expect("verify"))
        });
        group.finish();

        let mut group = c.benchmark_group(format!("attest/{name}/batch1024"));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(4));
        group.throughput(Throughput::Elements(BATCH as u64));
        group.bench_function("sign", |b| {
            b.iter(|| attest_batch(&identity, &results, &route, context).expect("attest"))
        });
        let batch = attest_batch(&identity, &results, &route, context).expect("attest");
        group.bench_function("verify_all", |b| {
            b.iter(|| {
                let verified =
                    verify_batch_record(&public, &route, context, &batch.record).expect("verify");
                for (i, (r, proof)) in results.iter().zip(&batch.proofs).enumerate() {
                    verified.check(i as u64, r, proof).expect("check");
                }
            })
        });
        group.throughput(Throughput::Elements(1));
        let verified =
            verify_batch_record(&public, &route, context, &batch.record).expect("verify");
        group.bench_function("check_one", |b| {
            b.iter(|| {
                verified
                    .check(700, &results[700], &batch.proofs[700])
                    .expect("check")
            })
        });
        group.finish();
    }
}

criterion_group!(benches, attestation);
criterion_main!(benches);
