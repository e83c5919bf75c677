//! `triskel info`.

use triskel::kernels::{self, Backend};

use crate::CliResult;

pub fn run() -> CliResult {
    println!("cpu:      {}", kernels::cpu_model());
    println!("features: {}", kernels::cpu_features().join(" "));
    match kernels::forced_backend() {
        Ok(Some(b)) => println!("forced:   {} (TRISKEL_KERNELS)", b.name()),
        Ok(None) => println!("forced:   no (set TRISKEL_KERNELS to force a backend)"),
        Err(e) => println!("forced:   invalid: {e}"),
    }
    println!("backends:");
    for b in Backend::ALL {
        let status = match b.check_usable() {
            Ok(()) => "usable".to_string(),
            Err(e) => format!("unusable: {e}"),
        };
        let native = b.native_ops();
        let fallback: Vec<&str> = kernels::OPS
            .iter()
            .copied()
            .filter(|op| b.is_compiled() && !native.contains(op))
            .collect();
        print!(
            "  {:<11} q < 2^{:<2}  {status}",
            b.name(),
            b.max_modulus_bits()
        );
        if !fallback.is_empty() {
            print!("; falls back to portable for: {}", fallback.join(", "));
        }
        println!();
    }
    // One width per backend range: neon takes primes below 2^31,
    // avx512ifma below 2^50, the others up to 2^62.
    println!("chosen:");
    for bits in [31, 50, 62] {
        let q = kernels::ntt_primes(bits, 4096, 1)?[0];
        match kernels::select_backend(q) {
            Ok(b) => println!("  {bits}-bit primes: {}", b.name()),
            Err(e) => println!("  {bits}-bit primes: error: {e}"),
        }
    }
    Ok(())
}
