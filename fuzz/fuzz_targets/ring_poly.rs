#![no_main]
//! `Poly::from_bytes`: an accepted polynomial round-trips byte for byte, and a
//! forward and inverse NTT give it back.

use libfuzzer_sys::fuzz_target;
use triskel_ring::{Poly, Representation};

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::ring();
    let Ok(p) = Poly::from_bytes(data, &f.q) else {
        return;
    };
    assert_eq!(p.to_bytes(), data, "polynomial encoding is canonical");
    let repr = p.representation();
    let mut q = p.clone();
    let other = match repr {
        Representation::Ntt => Representation::Coefficient,
        Representation::Coefficient => Representation::Ntt,
    };
    q.set_representation(other).expect("transform");
    q.set_representation(repr).expect("transform back");
    assert!(q == p, "NTT round trip changed the polynomial");
    let _ = p.add(&f.poly);
    let _ = p.automorphism(3);
});
