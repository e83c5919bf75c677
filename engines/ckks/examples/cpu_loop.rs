//! A loop of one CKKS operation at N = 8192 (`ckks-n8192`, top level) for
//! profiles and old/new comparisons on a loaded host: prints the thread's
//! CPU time per operation (Linux `/proc/thread-self/schedstat`, which a
//! time-sliced run does not inflate) and the fastest round of 10.
//!
//! `RAYON_NUM_THREADS=1 cargo run --release -p triskel-ckks --example cpu_loop -- rotate|mul|sum [ITERS]`
//! (`sum`: the slot sum of 64; ITERS defaults to 2000, rounded down to a
//! multiple of 10). Under `perf record -e cpu-clock` it gives the time per kernel.

use triskel_ckks::{CkksContext, CkksParameters, Plaintext, SecretKey};

/// Nanoseconds this thread has run on a CPU.
fn cpu_ns() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").expect("Linux schedstat");
    s.split_whitespace()
        .next()
        .and_then(|t| t.parse().ok())
        .expect("schedstat's first field")
}

fn main() {
    let what = std::env::args().nth(1).unwrap_or_else(|| "rotate".into());
    let iters: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().expect("ITERS is a number"))
        .unwrap_or(2000);
    let ctx = CkksContext::new(CkksParameters::n8192()).unwrap();
    let sk = SecretKey::generate(&ctx).unwrap();
    let (pk, rk) = (sk.public_key().unwrap(), sk.relin_key().unwrap());
    let gk = sk.galois_keys(&[1, 2, 4, 8, 16, 32], false).unwrap();
    let v: Vec<f64> = (0..ctx.slots())
        .map(|i| (i as f64 * 0.618).fract())
        .collect();
    let x = pk
        .encrypt(&Plaintext::from_real(&ctx, &v).unwrap())
        .unwrap();
    let y = pk
        .encrypt(&Plaintext::from_real(&ctx, &v).unwrap())
        .unwrap();
    let rounds = (iters / 10).max(1);
    let c0 = cpu_ns();
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        for _ in 0..10 {
            let r = match what.as_str() {
                "rotate" => x.rotate(1, &gk).unwrap(),
                "mul" => x.mul_relin_rescale(&y, &rk).unwrap(),
                "sum" => x.slot_sum(64, &gk).unwrap(),
                other => panic!("unknown operation {other}: rotate, mul or sum"),
            };
            std::hint::black_box(r);
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e6 / 10.0);
    }
    let per = (cpu_ns() - c0) / 1e3 / (rounds * 10) as f64;
    eprintln!("{what}: {per:.1} us/iter of CPU time; {best:.1} us/iter in the fastest round of 10");
}
