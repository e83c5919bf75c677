//! `triskel demo`: runs what triskel can do and checks every result.

use std::time::{Duration, Instant};

use triskel::kernels::{self, Backend, Modulus, NttPlan};
use triskel::measure::median_ns;

use super::bench::sample_residues;
use super::CliResult;

pub fn run() -> CliResult {
    println!("triskel demo on {}", kernels::cpu_model());
    println!(
        "usable kernel backends: {}",
        names(&kernels::available_backends())
    );
    println!();
    for bits in [50, 60] {
        negacyclic_product(4096, bits)?;
    }
    Ok(())
}

fn names(backends: &[Backend]) -> String {
    backends
        .iter()
        .map(|b| b.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Multiplies two random polynomials of Z_q[X]/(X^n + 1) through the NTT on
/// every backend, checks each product against the schoolbook product and
/// reports the timings.
fn negacyclic_product(n: usize, bits: u32) -> CliResult {
    let q = kernels::ntt_primes(bits, n, 1)?[0];
    let a = sample_residues(n, q, 11);
    let b = sample_residues(n, q, 12);
    let reference = Modulus::with_backend(q, Backend::Portable)?;

    let start = Instant::now();
    let expected = schoolbook(&reference, &a, &b);
    let schoolbook_time = start.elapsed();
    println!(
        "negacyclic product in Z_q[X]/(X^{n} + 1), q = {q} ({bits} bits); schoolbook: {:.1} ms",
        ms(schoolbook_time)
    );
    for backend in kernels::available_backends() {
        if !backend.supports_modulus(q) {
            println!(
                "  {:<11} skipped: primes below 2^{} only",
                backend.name(),
                backend.max_modulus_bits()
            );
            continue;
        }
        let m = Modulus::with_backend(q, backend)?;
        let plan = NttPlan::new(n, &m)?;
        let product = |out: &mut Vec<u64>| -> kernels::Result<()> {
            let mut fb = b.clone();
            out.copy_from_slice(&a);
            plan.forward(out)?;
            plan.forward(&mut fb)?;
            kernels::mul_assign(&m, out, &fb)?;
            plan.inverse(out)
        };
        let mut c = vec![0u64; n];
        product(&mut c)?;
        let correct = c == expected;
        let ns = median_ns(21, Duration::from_millis(2), || {
            product(&mut c).expect("lengths are n")
        });
        println!(
            "  {:<11} NTT product {:>8.1} us  ({:.0}x faster than schoolbook)  equals schoolbook: {}",
            backend.name(),
            ns / 1e3,
            schoolbook_time.as_nanos() as f64 / ns,
            if correct { "yes" } else { "NO" }
        );
        if !correct {
            return Err(format!("backend {} computed a wrong product", backend.name()).into());
        }
    }
    println!();
    Ok(())
}

fn schoolbook(m: &Modulus, a: &[u64], b: &[u64]) -> Vec<u64> {
    let n = a.len();
    let mut c = vec![0u64; n];
    for (i, &ai) in a.iter().enumerate() {
        for (j, &bj) in b.iter().enumerate() {
            let p = m.mul_mod(ai, bj);
            let k = (i + j) % n;
            c[k] = if i + j < n {
                m.add_mod(c[k], p)
            } else {
                m.sub_mod(c[k], p)
            };
        }
    }
    c
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
