//! Interleaved A/B of the avx2 backend against portable (the goal: avx2 at
//! least 2x portable on the NTT and on mul / mul_acc; the key-switching
//! kernels: dot over 3 and 8 digits, base conversion from 8 primes and the
//! single-prime lift, both automorphisms), alternated round by round in one
//! process (`triskel_benches::interleaved`), at N = 4096 and 16384 with
//! primes of 50 bits (avx2's double-precision path) and 62 bits (its
//! integer path). Prints the fastest and the median round of each
//! side (ns per call), the speed-up portable / avx2 from the fastest rounds
//! and as the median of the per-round ratios, and the load average.
//!
//! Run: `cargo bench -p triskel-benches --bench backends_ab`

use std::hint::black_box;
use triskel_benches::{interleaved, load_average, residues};
use triskel_kernels::{
    automorphism_coeff, automorphism_ntt, dot, mul, mul_acc, ntt_primes, Backend, BaseConversion,
    GaloisPermutation, Modulus, NttPlan,
};

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
            let primes = ntt_primes(bits, n, 9).expect("NTT-friendly primes exist");
            // q the smallest of the nine, so that every vector holds residues of all.
            let (q, src) = (primes[8], &primes[..8]);
            let slow = Modulus::with_backend(q, Backend::Portable).expect("portable");
            let fast = Modulus::with_backend(q, Backend::Avx2).expect("usable avx2");
            let (ps, pf) = (
                NttPlan::new(n, &slow).expect("valid plan"),
                NttPlan::new(n, &fast).expect("valid plan"),
            );
            let (a, b) = (residues(n, q, 1), residues(n, q, 2));
            let (mut x, mut y) = (a.clone(), a.clone());
            let vectors: Vec<Vec<u64>> = (0..16).map(|s| residues(n, q, 10 + s)).collect();
            let refs: Vec<&[u64]> = vectors.iter().map(|v| &v[..]).collect();
            let conv = |m: &Modulus, k: usize| BaseConversion::new(&src[..k], m).expect("conv");
            let (conv8, conv8_fast) = (conv(&slow, 8), conv(&fast, 8));
            let (lift, lift_fast) = (conv(&slow, 1), conv(&fast, 1));
            let perm = GaloisPermutation::new(n, 5).expect("Galois element 5");
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
                (
                    "dot3",
                    interleaved(
                        || dot(&slow, black_box(&mut x), &refs[..3], &refs[8..11]).unwrap(),
                        || dot(&fast, black_box(&mut y), &refs[..3], &refs[8..11]).unwrap(),
                    ),
                ),
                (
                    "dot8",
                    interleaved(
                        || dot(&slow, black_box(&mut x), &refs[..8], &refs[8..]).unwrap(),
                        || dot(&fast, black_box(&mut y), &refs[..8], &refs[8..]).unwrap(),
                    ),
                ),
                (
                    "base_convert_8to1",
                    interleaved(
                        || conv8.convert(black_box(&mut x), &refs[..8], true).unwrap(),
                        || {
                            conv8_fast
                                .convert(black_box(&mut y), &refs[..8], true)
                                .unwrap()
                        },
                    ),
                ),
                (
                    "base_convert_1to1 (lift)",
                    interleaved(
                        || lift.convert(black_box(&mut x), &refs[..1], true).unwrap(),
                        || {
                            lift_fast
                                .convert(black_box(&mut y), &refs[..1], true)
                                .unwrap()
                        },
                    ),
                ),
                (
                    "automorphism_coeff",
                    interleaved(
                        || automorphism_coeff(&slow, black_box(&mut x), &a, 5).unwrap(),
                        || automorphism_coeff(&fast, black_box(&mut y), &a, 5).unwrap(),
                    ),
                ),
                (
                    "automorphism_ntt",
                    interleaved(
                        || automorphism_ntt(&slow, black_box(&mut x), &a, &perm).unwrap(),
                        || automorphism_ntt(&fast, black_box(&mut y), &a, &perm).unwrap(),
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
