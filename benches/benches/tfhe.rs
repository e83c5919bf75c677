//! Criterion bench of the TFHE engine in process CPU time (every thread's):
//! a boolean NAND gate, one 2_2 key switch + bootstrap and its parts (the
//! key switch; modulus switch + blind rotation + sample extraction), u8 add
//! and greater-than, u64 add, a u64's plain and seed-compressed encryption
//! and its decompression; the multi-bit 2_2 set's KS + PBS against the
//! classic one (wall time; `tfhe/2_2_multi_bit`).
//!
//! Run: `RAYON_NUM_THREADS=1 cargo bench -p triskel-benches --bench tfhe`
//! (one thread: CPU time is the time; with more threads it is their sum).

use std::time::Duration;

#[path = "common/cpu_time.rs"]
mod cpu_time;
use cpu_time::ProcessCpuTime;

use criterion::{criterion_group, criterion_main, Criterion};
use triskel_benches::residues;
use triskel_kernels::{add_assign, dot, mul_acc, ntt_primes, Modulus, NttPlan};
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
    // The client's side of a FheUint64: plain against seed-compressed
    // encryption, and the server's expansion of a compressed one.
    g.bench_function("encrypt_u64", |b| {
        b.iter(|| ck.encrypt_u64(u64::MAX - 5).unwrap())
    });
    g.bench_function("encrypt_u64_compressed", |b| {
        b.iter(|| ck.encrypt_u64_compressed(u64::MAX - 5).unwrap())
    });
    let compressed = ck.encrypt_u64_compressed(u64::MAX - 5).unwrap();
    g.bench_function("decompress_u64", |b| b.iter(|| compressed.decompress()));
    g.finish();
}

/// A lone 2_2 KS + PBS with the multi-bit set (`ks_pbs`) against the
/// classic 2_2 set (`classic_ks_pbs`), and their blind rotations alone
/// (modulus switch + rotation + extraction of a small-key ciphertext). The
/// multi-bit rotation uses a second thread when the rayon pool has one (run
/// with RAYON_NUM_THREADS=1 and =2): `tfhe/2_2_multi_bit` is wall time,
/// `tfhe/2_2_multi_bit_cpu` process CPU time (every thread's: the work).
fn multi_bit<M: criterion::measurement::Measurement>(c: &mut Criterion<M>, group: &str) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    for (prefix, params) in [
        ("classic_", TfheParameters::message_2_carry_2()),
        ("", TfheParameters::message_2_carry_2_multi_bit()),
    ] {
        let ck = ClientKey::generate(&params).unwrap();
        let sk = ck.server_key().unwrap();
        let lut = sk.lookup_table(|x| (x * x + 1) % 16).unwrap();
        let ct = ck.encrypt(3).unwrap();
        let out = sk.apply_lookup_table(&ct, &lut).unwrap();
        assert_eq!(ck.decrypt_with_carry(&out).unwrap(), 10);
        g.bench_function(format!("{prefix}ks_pbs"), |b| {
            b.iter(|| sk.apply_lookup_table(&ct, &lut).unwrap())
        });
        let small = sk.key_switch(ct.lwe()).unwrap();
        g.bench_function(format!("{prefix}blind_rotation"), |b| {
            b.iter(|| sk.sign_bootstrap(&small, 1 << 60).unwrap())
        });
    }
    g.finish();
}

/// The kernel parts of one CMux of the 2_2 set (k = 1, N = 2048, l = 1,
/// the 50-bit prime): 2 forward and 2 inverse NTTs, 2 `dot`s of 2 terms
/// against the key and 2 accumulations. The key rows come from a buffer
/// the size of the bootstrapping key (845 GGSWs of 4 polynomials, 55 MB),
/// a new GGSW per iteration as in a blind rotation ("streamed"), or from
/// one GGSW again ("cached"): the difference is the memory traffic. The
/// decomposition and rotation are the blind rotation's time per CMux minus
/// these parts. `monomial_mul_acc` is the unit of a multi-bit pattern
/// combination (a key polynomial times the NTT of X^m - 1, accumulated).
/// Wall time: the parts are shorter than the CPU clocks' tick.
fn cmux_parts(c: &mut Criterion) {
    const N: usize = 2048;
    const GGSWS: usize = 845;
    let q = ntt_primes(50, N, 1).unwrap()[0];
    let m = Modulus::new(q).unwrap();
    let plan = NttPlan::new(N, &m).unwrap();
    let key = residues(GGSWS * 4 * N, q, 1);
    let digits = residues(2 * N, q, 2);
    let mut poly = residues(N, q, 3);
    let mut out = vec![0u64; N];
    let mut acc = residues(N, q, 4);
    let mut g = c.benchmark_group("tfhe/cmux_parts");
    g.bench_function("forward_ntt_2048", |b| {
        b.iter(|| plan.forward(&mut poly).unwrap())
    });
    g.bench_function("inverse_ntt_2048", |b| {
        b.iter(|| plan.inverse(&mut poly).unwrap())
    });
    g.bench_function("add_assign_2048", |b| {
        b.iter(|| add_assign(&m, &mut acc, &out).unwrap())
    });
    let (d0, d1) = digits.split_at(N);
    let rows: [&[u64]; 2] = [d0, d1];
    // One CMux's two dots: output polynomial c reads poly c of rows 0 and 1.
    let ggsw_dots = |ggsw: &[u64], out: &mut [u64]| {
        for c in 0..2 {
            let keys = [&ggsw[c * N..(c + 1) * N], &ggsw[(2 + c) * N..(3 + c) * N]];
            dot(&m, out, &rows, &keys).unwrap();
        }
    };
    g.bench_function("two_dots_cached", |b| {
        b.iter(|| ggsw_dots(&key[..4 * N], &mut out))
    });
    let mut next = 0;
    g.bench_function("two_dots_streamed", |b| {
        b.iter(|| {
            ggsw_dots(&key[next * 4 * N..(next + 1) * 4 * N], &mut out);
            next = (next + 1) % GGSWS;
        })
    });
    // The same key on 2 MB pages (as the engine allocates it): an aligned
    // allocation advised as a huge-page region before it is written.
    #[cfg(target_os = "linux")]
    {
        let layout = std::alloc::Layout::from_size_align(key.len() * 8, 1 << 21).unwrap();
        // SAFETY: the layout has a nonzero size; the pointer is checked for
        // null, advised over exactly its allocation, used as key.len()
        // initialized (zeroed, then copied) u64s, and freed with the same layout.
        unsafe {
            let ptr = std::alloc::alloc_zeroed(layout);
            assert!(!ptr.is_null());
            libc::madvise(ptr.cast(), layout.size(), libc::MADV_HUGEPAGE);
            let huge = std::slice::from_raw_parts_mut(ptr.cast::<u64>(), key.len());
            huge.copy_from_slice(&key);
            let mut next = 0;
            g.bench_function("two_dots_streamed_huge_pages", |b| {
                b.iter(|| {
                    ggsw_dots(&huge[next * 4 * N..(next + 1) * 4 * N], &mut out);
                    next = (next + 1) % GGSWS;
                })
            });
            std::alloc::dealloc(ptr, layout);
        }
    }
    let mut next = 0;
    g.bench_function("monomial_mul_acc_streamed", |b| {
        b.iter(|| {
            mul_acc(&m, &mut acc, &key[next * N..(next + 1) * N], d0).unwrap();
            next = (next + 1) % (4 * GGSWS);
        })
    });
    g.finish();
}

fn multi_bit_wall(c: &mut Criterion) {
    multi_bit(c, "tfhe/2_2_multi_bit");
}

fn multi_bit_cpu(c: &mut Criterion<ProcessCpuTime>) {
    multi_bit(c, "tfhe/2_2_multi_bit_cpu");
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .with_measurement(ProcessCpuTime)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = boolean, shortint_and_integers, multi_bit_cpu
}
criterion_group! {
    name = parts;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = cmux_parts, multi_bit_wall
}
criterion_main!(benches, parts);
