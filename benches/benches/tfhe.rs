//! Criterion bench of the TFHE engine in process CPU time (every thread's):
//! a boolean NAND gate, one 2_2 key switch + bootstrap and its parts (the
//! key switch; modulus switch + blind rotation + sample extraction), u8 add
//! and greater-than, u64 add.
//!
//! Run: `RAYON_NUM_THREADS=1 cargo bench -p triskel-benches --bench tfhe`
//! (one thread: CPU time is the time; with more threads it is their sum).

use std::time::Duration;

#[path = "common/cpu_time.rs"]
mod cpu_time;
use cpu_time::ProcessCpuTime;

use criterion::{criterion_group, criterion_main, Criterion};
use triskel_tfhe::{ClientKey, Comparison, Gate, TfheParameters};

fn boolean(c: &mut Criterion<ProcessCpuTime>) {
    let ck = ClientKey::generate(&TfheParameters::boolean()).unwrap();
    let sk = ck.server_key().unwrap();
    let (a, b) = (
        ck.encrypt_bool(true).unwrap(),
        ck.encrypt_bool(false).unwrap(),
    );
    let mut g = c.benchmark_group("tfhe/boolean");
    g.sample_size(10);
    g.bench_function("nand", |bch| {
        bch.iter(|| sk.gate(Gate::Nand, &a, &b).unwrap())
    });
    g.finish();
}

fn shortint_and_integers(c: &mut Criterion<ProcessCpuTime>) {
    let ck = ClientKey::generate(&TfheParameters::message_2_carry_2()).unwrap();
    let sk = ck.server_key().unwrap();
    let lut = sk.lookup_table(|x| (x * x + 1) % 16).unwrap();
    let ct = ck.encrypt(3).unwrap();
    let mut g = c.benchmark_group("tfhe/2_2");
    g.sample_size(10);
    g.bench_function("ks_pbs", |b| {
        b.iter(|| sk.apply_lookup_table(&ct, &lut).unwrap())
    });
    g.bench_function("key_switch", |b| {
        b.iter(|| sk.key_switch(ct.lwe()).unwrap())
    });
    let small = sk.key_switch(ct.lwe()).unwrap();
    g.bench_function("blind_rotation", |b| {
        b.iter(|| sk.sign_bootstrap(&small, 1 << 60).unwrap())
    });
    let (x, y) = (ck.encrypt_u8(200).unwrap(), ck.encrypt_u8(77).unwrap());
    g.bench_function("uint8_add", |b| b.iter(|| sk.add(&x, &y).unwrap()));
    g.bench_function("uint8_gt", |b| {
        b.iter(|| sk.compare(Comparison::Gt, &x, &y).unwrap())
    });
    let (x, y) = (
        ck.encrypt_u64(u64::MAX - 5).unwrap(),
        ck.encrypt_u64(1 << 40).unwrap(),
    );
    g.bench_function("uint64_add", |b| b.iter(|| sk.add(&x, &y).unwrap()));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .with_measurement(ProcessCpuTime)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = boolean, shortint_and_integers
}
criterion_main!(benches);
