//! Side by side with tfhe-rs (the `tfhe` crate 1.8) in one process, on the
//! same inputs: a boolean NAND gate, one 2_2 key switch + bootstrap (at
//! 2^-128 and at 2^-64), FheUint8 greater-than and add, FheUint64 add.
//! Failure probabilities per bootstrap: ours from the crate README's
//! analysis, tfhe-rs's from its parameter files.
//!
//! With `RAYON_NUM_THREADS=1` the figures are process CPU time (both
//! libraries run on the one rayon thread); otherwise wall time on all threads.
//!
//! Run: `RAYON_NUM_THREADS=1 cargo bench -p triskel-benches --features peers --bench peers_tfhe`
//! and again without RAYON_NUM_THREADS.

use std::time::Duration;

#[path = "common/cpu_time.rs"]
mod cpu_time;
use cpu_time::ProcessCpuTime;

use criterion::measurement::{Measurement, WallTime};
use criterion::Criterion;
use tfhe::prelude::*;
use triskel_tfhe::{ClientKey, Comparison, Gate, TfheParameters};

fn boolean<M: Measurement>(c: &mut Criterion<M>) {
    let mut g = c.benchmark_group("peers_tfhe/nand");
    let ck = ClientKey::generate(&TfheParameters::boolean()).unwrap();
    let sk = ck.server_key().unwrap();
    let (a, b) = (
        ck.encrypt_bool(true).unwrap(),
        ck.encrypt_bool(false).unwrap(),
    );
    g.bench_function("triskel 2^-151", |bch| {
        bch.iter(|| sk.gate(Gate::Nand, &a, &b).unwrap())
    });
    use tfhe::boolean::prelude::{BinaryBooleanGates, ClientKey as Ck, ServerKey as Sk};
    for (name, params) in [
        (
            "tfhe-rs 2^-165 (KS-PBS)",
            tfhe::boolean::parameters::PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS,
        ),
        (
            "tfhe-rs 2^-64 (default)",
            tfhe::boolean::parameters::DEFAULT_PARAMETERS,
        ),
    ] {
        let ck = Ck::new(&params);
        let sk = Sk::new(&ck);
        let (a, b) = (ck.encrypt(true), ck.encrypt(false));
        assert!(ck.decrypt(&sk.nand(&a, &b)));
        g.bench_function(name, |bch| bch.iter(|| sk.nand(&a, &b)));
    }
    g.finish();
}

fn ks_pbs<M: Measurement>(c: &mut Criterion<M>) {
    let mut g = c.benchmark_group("peers_tfhe/pbs_2_2");
    for (name, params) in [
        ("triskel 2^-142", TfheParameters::message_2_carry_2()),
        (
            "triskel 2^-86 (2M64)",
            TfheParameters::message_2_carry_2_2m64(),
        ),
    ] {
        let ck = ClientKey::generate(&params).unwrap();
        let sk = ck.server_key().unwrap();
        let lut = sk.lookup_table(|x| (x * x + 1) % 16).unwrap();
        let ct = ck.encrypt(3).unwrap();
        g.bench_function(name, |b| {
            b.iter(|| sk.apply_lookup_table(&ct, &lut).unwrap())
        });
    }
    use tfhe::shortint::parameters::v1_1::classic::gaussian::p_fail_2_minus_64::ks_pbs::V1_1_PARAM_MESSAGE_2_CARRY_2_KS_PBS_GAUSSIAN_2M64 as TFHE_RS_2M64;
    use tfhe::shortint::parameters::PARAM_MESSAGE_2_CARRY_2_KS_PBS as TFHE_RS_2M128;
    for (name, params) in [
        ("tfhe-rs 2^-128 (default)", TFHE_RS_2M128),
        ("tfhe-rs 2^-64", TFHE_RS_2M64),
    ] {
        let (ck, sk) = tfhe::shortint::gen_keys(params);
        let lut = sk.generate_lookup_table(|x| (x * x + 1) % 16);
        let ct = ck.encrypt(3);
        assert_eq!(
            ck.decrypt_message_and_carry(&sk.apply_lookup_table(&ct, &lut)),
            10
        );
        g.bench_function(name, |b| b.iter(|| sk.apply_lookup_table(&ct, &lut)));
    }
    g.finish();
}

fn integers<M: Measurement>(c: &mut Criterion<M>) {
    let ck = ClientKey::generate(&TfheParameters::message_2_carry_2()).unwrap();
    let sk = ck.server_key().unwrap();
    let config = tfhe::ConfigBuilder::default().build();
    let (tck, tsk) = tfhe::generate_keys(config);
    tfhe::set_server_key(tsk);

    let mut g = c.benchmark_group("peers_tfhe/uint8");
    let (x, y) = (ck.encrypt_u8(200).unwrap(), ck.encrypt_u8(77).unwrap());
    let (tx, ty) = (
        tfhe::FheUint8::encrypt(200u8, &tck),
        tfhe::FheUint8::encrypt(77u8, &tck),
    );
    let gt: bool = tx.gt(&ty).decrypt(&tck);
    let sum: u8 = (&tx + &ty).decrypt(&tck);
    assert!(gt && sum == 21);
    g.bench_function("gt/triskel", |b| {
        b.iter(|| sk.compare(Comparison::Gt, &x, &y).unwrap())
    });
    g.bench_function("gt/tfhe-rs", |b| b.iter(|| tx.gt(&ty)));
    g.bench_function("add/triskel", |b| b.iter(|| sk.add(&x, &y).unwrap()));
    g.bench_function("add/tfhe-rs", |b| b.iter(|| &tx + &ty));
    g.finish();

    let mut g = c.benchmark_group("peers_tfhe/uint64");
    let (a, b) = (u64::MAX - 5, 1u64 << 40);
    let (x, y) = (ck.encrypt_u64(a).unwrap(), ck.encrypt_u64(b).unwrap());
    let (tx, ty) = (
        tfhe::FheUint64::encrypt(a, &tck),
        tfhe::FheUint64::encrypt(b, &tck),
    );
    let sum: u64 = (&tx + &ty).decrypt(&tck);
    assert_eq!(sum, a.wrapping_add(b));
    g.bench_function("add/triskel", |bch| bch.iter(|| sk.add(&x, &y).unwrap()));
    g.bench_function("add/tfhe-rs", |bch| bch.iter(|| &tx + &ty));
    g.finish();
}

fn run<M: Measurement>(mut c: Criterion<M>) {
    eprintln!(
        "load average {}, RAYON_NUM_THREADS={:?}",
        triskel_benches::load_average(),
        std::env::var("RAYON_NUM_THREADS").ok()
    );
    boolean(&mut c);
    ks_pbs(&mut c);
    integers(&mut c);
    c.final_summary();
}

fn main() {
    let configure = |c: Criterion| {
        c.sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3))
            .configure_from_args()
    };
    if std::env::var("RAYON_NUM_THREADS").as_deref() == Ok("1") {
        run(configure(Criterion::default()).with_measurement(ProcessCpuTime));
    } else {
        run(configure(Criterion::default()).with_measurement(WallTime));
    }
}
