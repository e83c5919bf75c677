//! The radix integer operations (u8 add, u8 greater-than, u64 add) on the
//! classic and the multi-bit 2_2 sets, on one- and two-thread rayon pools,
//! interleaved round by round (`triskel_benches::interleaved_on`, wall
//! time): two threads against one on each set, then the multi-bit set
//! against the classic one on each pool. Every result is checked first.
//!
//! Run: `cargo run --release -p triskel-benches --bin tfhe_sets`

use std::hint::black_box;

use rayon::{ThreadPool, ThreadPoolBuilder};
use triskel_benches::{interleaved_on, wall_ns, AbTimes};
use triskel_tfhe::{ClientKey, Comparison, RadixCiphertext, ServerKey, TfheParameters};

/// One set's keys and inputs: u8 200 and 77, u64 2^64 - 6 and 2^40.
struct Set {
    name: &'static str,
    sk: ServerKey,
    x8: RadixCiphertext,
    y8: RadixCiphertext,
    x64: RadixCiphertext,
    y64: RadixCiphertext,
}

fn set(name: &'static str, params: TfheParameters) -> Set {
    let ck = ClientKey::generate(&params).unwrap();
    let sk = ck.server_key().unwrap();
    let (a, b) = (u64::MAX - 5, 1u64 << 40);
    let s = Set {
        name,
        x8: ck.encrypt_u8(200).unwrap(),
        y8: ck.encrypt_u8(77).unwrap(),
        x64: ck.encrypt_u64(a).unwrap(),
        y64: ck.encrypt_u64(b).unwrap(),
        sk,
    };
    assert_eq!(ck.decrypt_u8(&s.sk.add(&s.x8, &s.y8).unwrap()).unwrap(), 21);
    let gt = s.sk.compare(Comparison::Gt, &s.x8, &s.y8).unwrap();
    assert_eq!(ck.decrypt(&gt).unwrap(), 1);
    let sum = s.sk.add(&s.x64, &s.y64).unwrap();
    assert_eq!(ck.decrypt_u64(&sum).unwrap(), a.wrapping_add(b));
    s
}

const OPS: [&str; 3] = ["u8 add", "u8 gt", "u64 add"];

/// Runs operation `op` of `s` on `pool`.
fn run(s: &Set, op: &str, pool: &ThreadPool) {
    pool.install(|| match op {
        "u8 add" => drop(black_box(s.sk.add(&s.x8, &s.y8).unwrap())),
        "u8 gt" => drop(black_box(
            s.sk.compare(Comparison::Gt, &s.x8, &s.y8).unwrap(),
        )),
        _ => drop(black_box(s.sk.add(&s.x64, &s.y64).unwrap())),
    })
}

fn line(what: String, t: AbTimes) {
    println!("| {what} | {} |", t.ms_cells(1));
}

fn main() {
    let pools: Vec<ThreadPool> = [1, 2]
        .iter()
        .map(|&t| ThreadPoolBuilder::new().num_threads(t).build().unwrap())
        .collect();
    let sets = [
        set("classic", TfheParameters::message_2_carry_2()),
        set("multi-bit", TfheParameters::message_2_carry_2_multi_bit()),
    ];
    let rounds = |op: &str| if op == "u64 add" { 5 } else { 9 };
    println!("wall time in ms, fastest / median round; ratio A / B, fastest / median");
    println!("| A vs B | A | B | A / B | load |");
    println!("|---|---|---|---|---|");
    for s in &sets {
        for op in OPS {
            let t = interleaved_on(
                rounds(op),
                1,
                wall_ns,
                || run(s, op, &pools[1]),
                || run(s, op, &pools[0]),
            );
            line(format!("{} {op}: 2 threads vs 1", s.name), t);
        }
    }
    for (threads, pool) in [1, 2].iter().zip(&pools) {
        for op in OPS {
            let t = interleaved_on(
                rounds(op),
                1,
                wall_ns,
                || run(&sets[1], op, pool),
                || run(&sets[0], op, pool),
            );
            line(
                format!("{op}, {threads} thread(s): multi-bit vs classic"),
                t,
            );
        }
    }
}
