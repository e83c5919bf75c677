//! Helpers shared by the router's test binaries.

use triskel::{Kind, Program};

/// x^(depth + 1) + x on an input of `kind`.
pub fn mul_chain(kind: Kind, depth: usize) -> Program {
    let mut p = Program::new();
    let x = p.input("x", kind).unwrap();
    let mut v = x;
    for _ in 0..depth {
        v = p.mul(v, x).unwrap();
    }
    let out = p.add(v, x).unwrap();
    p.output("y", out).unwrap();
    p
}
