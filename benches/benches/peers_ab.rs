//! Interleaved A/B against `tfhe-ntt` 0.7 (`prime64::Plan`): the same
//! forward and inverse transforms, alternated round by round in one process
//! so that a loaded, shared machine slows both sides alike. Prints, per
//! configuration, the median time per transform of each side and the median
//! of the per-round ratios triskel / tfhe-ntt, with the load average.
//!
//! triskel: avx512ifma for the 50-bit prime, avx512 for the 62-bit one.
//! tfhe-ntt's inverse leaves out the factor n^-1; triskel's includes it.
//!
//! Run: `cargo bench -p triskel-benches --features peers --bench peers_ab`

use std::hint::black_box;
use std::time::Instant;
use triskel_kernels::{ntt_primes, Backend, Modulus, NttPlan};

const ROUNDS: usize = 41;
const CALLS: usize = 40;

fn residues(n: usize, q: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3) % q)
        .collect()
}

/// Nanoseconds per call of `f`, over CALLS calls.
fn time(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..CALLS {
        f();
    }
    start.elapsed().as_nanos() as f64 / CALLS as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

fn main() {
    println!("cpu: {}", triskel_kernels::cpu_model());
    println!("| N | bits | backend | op | triskel ns | tfhe-ntt ns | triskel / tfhe-ntt | load |");
    println!("|---|---|---|---|---|---|---|---|");
    for (bits, backend) in [(50u32, Backend::Avx512Ifma), (62, Backend::Avx512)] {
        if !backend.is_usable() {
            eprintln!("skipping {}: not usable on this machine", backend.name());
            continue;
        }
        for n in [4096usize, 16384, 65536] {
            let q = ntt_primes(bits, n, 1).expect("NTT-friendly primes exist")[0];
            let m = Modulus::with_backend(q, backend).expect("usable backend");
            let ours = NttPlan::new(n, &m).expect("valid plan");
            let theirs = tfhe_ntt::prime64::Plan::try_new(n, q).expect("tfhe-ntt accepts q");
            for op in ["forward", "inverse"] {
                let (mut a, mut b) = (residues(n, q), residues(n, q));
                let mut run_ours = || {
                    if op == "forward" {
                        ours.forward(black_box(&mut a)).unwrap()
                    } else {
                        ours.inverse(black_box(&mut a)).unwrap()
                    }
                };
                let mut run_theirs = || {
                    if op == "forward" {
                        theirs.fwd(black_box(&mut b))
                    } else {
                        theirs.inv(black_box(&mut b))
                    }
                };
                // Warm-up, then rounds in alternating order.
                time(&mut run_ours);
                time(&mut run_theirs);
                let (mut t_ours, mut t_theirs, mut ratios) = (vec![], vec![], vec![]);
                for round in 0..ROUNDS {
                    let (x, y) = if round % 2 == 0 {
                        let x = time(&mut run_ours);
                        (x, time(&mut run_theirs))
                    } else {
                        let y = time(&mut run_theirs);
                        (time(&mut run_ours), y)
                    };
                    t_ours.push(x);
                    t_theirs.push(y);
                    ratios.push(x / y);
                }
                println!(
                    "| {n} | {bits} | {} | {op} | {:.0} | {:.0} | {:.3} | {} |",
                    backend.name(),
                    median(t_ours),
                    median(t_theirs),
                    median(ratios),
                    load_average()
                );
            }
        }
    }
}
