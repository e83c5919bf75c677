//! Interleaved A/B of the avx2 backend against portable (the goal: avx2 at
//! least 2x portable on the NTT and on mul / mul_acc), alternated round by
//! round in one process (`triskel_benches::interleaved`), at N = 4096 and
//! 16384 with a 50-bit prime (avx2's double-precision path) and a 62-bit
//! prime (its integer path). Prints the fastest and the median round of each
//! side (ns per call), the speed-up portable / avx2 from the fastest rounds
//! and as the median of the per-round ratios, and the load average.
//!
//! Run: `cargo bench -p triskel-benches --bench backends_ab`

use std::hint::black_box;
use triskel_benches::{interleaved, load_average, residues};
use triskel_kernels::{mul, mul_acc, ntt_primes, Backend, Modulus, NttPlan};

fn main() {
    if !Backend::Avx2.is_usable() {
        eprintln!("skipping: the avx2 backend is not usable on this machine");
        return;
    }
    println!("cpu: {}", triskel_kernels::cpu_model());
    println!(
        "| N | bits | op | portable ns (min / median) | avx2 ns (min / median) \
         | portable / avx2 (min / median ratio) | load |"
    );
    println!("|---|---|---|---|---|---|---|");
    for bits in [50u32, 62] {
        for n in [4096usize, 16384] {
            let q = ntt_primes(bits, n, 1).expect("NTT-friendly primes exist")[0];
            let slow = Modulus::with_backend(q, Backend::Portable).expect("portable");
            let fast = Modulus::with_backend(q, Backend::Avx2).expect("usable avx2");
            let (ps, pf) = (
                NttPlan::new(n, &slow).expect("valid plan"),
                NttPlan::new(n, &fast).expect("valid plan"),
            );
            let (a, b) = (residues(n, q, 1), residues(n, q, 2));
            let (mut x, mut y) = (a.clone(), a.clone());
            let rows = [
                (
                    "ntt_forward",
                    interleaved(
                        || ps.forward(black_box(&mut x)).unwrap(),
                        || pf.forward(black_box(&mut y)).unwrap(),
                    ),
                ),
                (
                    "ntt_inverse",
                    interleaved(
                        || ps.inverse(black_box(&mut x)).unwrap(),
                        || pf.inverse(black_box(&mut y)).unwrap(),
                    ),
                ),
                (
                    "mul",
                    interleaved(
                        || mul(&slow, black_box(&mut x), &a, &b).unwrap(),
                        || mul(&fast, black_box(&mut y), &a, &b).unwrap(),
                    ),
                ),
                (
                    "mul_acc",
                    interleaved(
                        || mul_acc(&slow, black_box(&mut x), &a, &b).unwrap(),
                        || mul_acc(&fast, black_box(&mut y), &a, &b).unwrap(),
                    ),
                ),
            ];
            for (op, t) in rows {
                println!(
                    "| {n} | {bits} | {op} | {:.0} / {:.0} | {:.0} / {:.0} | {:.2}x / {:.2}x | {} |",
                    t.a_min,
                    t.a_median,
                    t.b_min,
                    t.b_median,
                    t.min_ratio(),
                    t.median_ratio,
                    load_average()
                );
            }
        }
    }
}
