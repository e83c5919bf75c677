//! Boolean gates: exhaustive truth tables, NOT, MUX, and parameter mismatches.

use triskel_ring::Prng;
use triskel_tfhe::{ClientKey, Gate, TfheParameters};

#[test]
fn every_gate_on_every_input_and_mux() {
    let mut rng = Prng::from_seed([2; 32]);
    let ck = ClientKey::generate_with(&TfheParameters::boolean(), &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng).unwrap();
    let gates = [
        Gate::And,
        Gate::Nand,
        Gate::Or,
        Gate::Nor,
        Gate::Xor,
        Gate::Xnor,
    ];
    for a in [false, true] {
        let ca = ck.encrypt_bool(a).unwrap();
        assert_eq!(ck.decrypt_bool(&ca).unwrap(), a);
        assert_eq!(ck.decrypt_bool(&sk.not(&ca).unwrap()).unwrap(), !a);
        for b in [false, true] {
            let cb = ck.encrypt_bool(b).unwrap();
            for g in gates {
                let out = sk.gate(g, &ca, &cb).unwrap();
                assert_eq!(
                    ck.decrypt_bool(&out).unwrap(),
                    g.eval(a, b),
                    "{g:?} {a} {b}"
                );
                // Gate outputs feed further gates (bootstrapped noise, not fresh).
                let again = sk.gate(Gate::Xor, &out, &out).unwrap();
                assert!(!ck.decrypt_bool(&again).unwrap());
            }
            for c in [false, true] {
                let cc = ck.encrypt_bool(c).unwrap();
                let m = sk.mux(&cc, &ca, &cb).unwrap();
                assert_eq!(ck.decrypt_bool(&m).unwrap(), if c { a } else { b });
            }
        }
    }
    // Boolean keys refuse integer blocks and the other way round.
    assert!(ck.encrypt(1).is_err());
}
