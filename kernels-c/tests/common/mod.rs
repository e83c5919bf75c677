//! Helpers shared by the integration tests.

use triskel_kernels::{available_backends, Modulus};

/// Every usable backend that accepts q, bound to q.
pub fn moduli(q: u64) -> Vec<Modulus> {
    available_backends()
        .into_iter()
        .filter(|b| b.supports_modulus(q))
        .map(|b| Modulus::with_backend(q, b).unwrap())
        .collect()
}
