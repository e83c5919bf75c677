//! Interleaved A/B against `tfhe-ntt` 0.7 (`prime64::Plan`): the same
//! forward and inverse transforms, alternated round by round in one process
//! (`triskel_benches::interleaved`). Prints, per configuration, the fastest
//! and the median round of each side (ns per transform), triskel / tfhe-ntt
//! from the fastest rounds and as the median of the per-round ratios, and
//! the load average.
//!
//! triskel: avx512ifma for the 50-bit prime, avx512 for the 62-bit one, and
//! avx2 for both (the backend of CPUs without AVX-512; tfhe-ntt then runs its
//! own AVX2 path).
//! tfhe-ntt's inverse leaves out the factor n^-1; triskel's includes it.
//!
//! Run: `cargo bench -p triskel-benches --features peers --bench peers_ab`

use std::hint::black_box;
use triskel_benches::{interleaved, load_average, residues};
use triskel_kernels::{ntt_primes, Backend, Modulus, NttPlan};

fn main() {
    println!("cpu: {}", triskel_kernels::cpu_model());
    println!(
        "| N | bits | backend | op | triskel ns (min / median) | tfhe-ntt ns (min / median) \
         | triskel / tfhe-ntt (min / median ratio) | load |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (bits, backend) in [
        (50u32, Backend::Avx512Ifma),
        (62, Backend::Avx512),
        (50, Backend::Avx2),
        (62, Backend::Avx2),
    ] {
        if !backend.is_usable() {
            eprintln!("skipping {}: not usable on this machine", backend.name());
            continue;
        }
        for n in [4096usize, 16384, 65536] {
            let q = ntt_primes(bits, n, 1).expect("NTT-friendly primes exist")[0];
            let m = Modulus::with_backend(q, backend).expect("usable backend");
            let ours = NttPlan::new(n, &m).expect("valid plan");
            let theirs = tfhe_ntt::prime64::Plan::try_new(n, q).expect("tfhe-ntt accepts q");
            let (mut a, mut b) = (residues(n, q, 0), residues(n, q, 0));
            let forward = interleaved(
                || ours.forward(black_box(&mut a)).unwrap(),
                || theirs.fwd(black_box(&mut b)),
            );
            let inverse = interleaved(
                || ours.inverse(black_box(&mut a)).unwrap(),
                || theirs.inv(black_box(&mut b)),
            );
            for (op, t) in [("forward", forward), ("inverse", inverse)] {
                println!(
                    "| {n} | {bits} | {} | {op} | {:.0} / {:.0} | {:.0} / {:.0} | {:.3} / {:.3} | {} |",
                    backend.name(),
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
