//! One full-slot bootstrap, measured: key generation and bootstrap time
//! (this thread's CPU time), the error over all slots (max, and precision
//! = -log2 of the mean absolute error), the noise estimate, the levels
//! left, the number of keys and their serialized (seed-compressed) size.
//!
//! `RAYON_NUM_THREADS=1 cargo run --release -p triskel-ckks --example bootstrap -- [LOG_N] [REPS]`
//!
//! LOG_N = 16 runs the named set `ckks-n65536-boot`; a smaller one runs
//! the same chain and circuit at that degree (insecure: for measuring on a
//! smaller machine); `insecure` runs the tests' N = 1024 set. The values
//! are reals uniform in [-1, 1] in every slot.

use std::time::Instant;

use triskel_ckks::{BootstrapSet, Bootstrapper, CkksContext, Plaintext, SecretKey};

/// Nanoseconds this thread has run on a CPU.
fn cpu_ns() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").expect("Linux schedstat");
    s.split_whitespace()
        .next()
        .and_then(|t| t.parse().ok())
        .expect("schedstat's first field")
}

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_else(|| "13".into());
    let reps: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().expect("REPS is a number"))
        .unwrap_or(1);
    let set = match arg.as_str() {
        "insecure" => BootstrapSet::insecure_n1024(),
        "16" => BootstrapSet::n65536(),
        log_n => {
            let log_n: u32 = log_n.parse().expect("LOG_N is a number");
            BootstrapSet::n65536().at_degree(1 << log_n)
        }
    };
    let params = match arg.as_str() {
        "16" => set.ckks.clone(),
        _ => set.ckks.clone().allow_insecure(),
    };
    println!("set {} (log2 QP = {})", params.name(), params.log_qp());
    let ctx = CkksContext::new(params).expect("context");
    let t = Instant::now();
    let bt = Bootstrapper::new(&ctx, set.bootstrap.clone()).expect("bootstrapper");
    println!(
        "circuit prepared in {:.2} s (wall)",
        t.elapsed().as_secs_f64()
    );
    let sk = SecretKey::generate(&ctx).expect("key");
    let c = cpu_ns();
    let keys = sk.bootstrap_keys(&bt).expect("bootstrapping keys");
    let keygen = (cpu_ns() - c) / 1e9;
    let bytes = keys.to_bytes().len();
    println!(
        "keygen {keygen:.2} s CPU; {} Galois keys + relinearization + 2 encapsulation keys, {:.1} MiB serialized",
        keys.galois_keys().elements().len(),
        bytes as f64 / (1 << 20) as f64
    );
    // The named set's keys, from its circuit's rotations: each key stores
    // dnum digits of one polynomial over Q P (seed-compressed).
    let named = BootstrapSet::n65536();
    let count = named
        .bootstrap
        .rotation_steps(1 << 15)
        .expect("steps")
        .len()
        + 3;
    let per_key =
        named.ckks.dnum() * (named.ckks.q_bits().len() + named.ckks.p_bits().len()) * (1 << 16) * 8;
    println!(
        "ckks-n65536-boot: {} Galois keys + relinearization + sparse-to-dense = {count} keys of \
         {:.1} MiB, {:.2} GiB serialized",
        count - 2,
        per_key as f64 / (1 << 20) as f64,
        (count * per_key) as f64 / (1u64 << 30) as f64
    );
    let slots = ctx.slots();
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    for rep in 0..reps {
        let v: Vec<f64> = (0..slots).map(|_| next()).collect();
        let pt = Plaintext::encode_real(&ctx, &v, 0, ctx.default_scale(), 1.0).expect("encode");
        let ct = sk.encrypt(&pt).expect("encrypt");
        let c = cpu_ns();
        let out = bt.bootstrap(&ct, &keys).expect("bootstrap");
        let secs = (cpu_ns() - c) / 1e9;
        let got = sk.decrypt(&out).expect("decrypt").decode().expect("decode");
        let errs: Vec<f64> = got
            .iter()
            .zip(&v)
            .map(|(g, w)| (g.re - w).hypot(g.im))
            .collect();
        let max = errs.iter().cloned().fold(0.0, f64::max);
        let mean = errs.iter().sum::<f64>() / errs.len() as f64;
        println!(
            "rep {rep}: bootstrap {secs:.2} s CPU, level {} -> {}, max error {max:.2e} ({:.1} bits), \
             precision {:.1} bits (mean), estimate {:.1} bits",
            ct.level(),
            out.level(),
            -max.log2(),
            -mean.log2(),
            out.precision_bits()
        );
    }
}
