//! Side by side with tfhe-rs (the `tfhe` crate 1.8) in one process, on the
//! same inputs, interleaved round by round (`triskel_benches::interleaved_on`,
//! alternating which side runs first): a boolean NAND gate, one 2_2 key
//! switch + bootstrap (at 2^-128, at 2^-64, and ours multi-bit at 2^-128:
//! on several threads it combines the next pair's key on a second one,
//! tfhe-rs's classic PBS runs on one), FheUint8 greater-than and
//! add, FheUint64 add (ours on the multi-bit 2_2 set, the integer default,
//! and on the classic one; NAND on the classic and multi-bit boolean sets).
//! Failure probabilities per bootstrap: ours from the
//! crate README's analysis, tfhe-rs's from its parameter files.
//!
//! With `RAYON_NUM_THREADS=1` times are process CPU time (both libraries run
//! on the one rayon thread); otherwise wall time on all threads.
//!
//! A binary rather than a criterion bench: benches build with the
//! dev-dependencies, whose features change tfhe's dependency graph and force
//! a second full build of tfhe (over 45 minutes on this machine).
//!
//! Run: `RAYON_NUM_THREADS=1 cargo run --release -p triskel-benches --features peers-tfhe --bin peers_tfhe`
//! and again without RAYON_NUM_THREADS. With `--mul64`: FheUint64 mul
//! alone, one run of each side.

use std::hint::black_box;

use tfhe::prelude::*;
use triskel_benches::{interleaved_on, process_cpu_ns, wall_ns, AbTimes};
use triskel_tfhe::{ClientKey, Comparison, Gate, TfheParameters};

/// Our failure probability per bootstrap (the crate's analysis) and `what`.
fn failure(params: &TfheParameters, what: &str) -> &'static str {
    let p = params.noise().log2_failure;
    Box::leak(format!("2^{p:.1}{what}").into_boxed_str())
}

/// Rounds per comparison (each side once per round, after a warm-up).
const ROUNDS: usize = 9;

/// One timed operation of one side (its result kept from the optimizer).
type Op<'a> = Box<dyn FnMut() + 'a>;

/// Boxes an operation whose result is passed through `black_box`.
fn op<'a, T>(mut f: impl FnMut() -> T + 'a) -> Op<'a> {
    Box::new(move || {
        black_box(f());
    })
}

/// One line of the table: what is measured, each side's failure
/// probability per bootstrap, and the two operations.
struct Case<'a> {
    what: &'static str,
    ours: &'static str,
    theirs: &'static str,
    triskel: Op<'a>,
    tfhe_rs: Op<'a>,
}

/// Measures every case, interleaved round by round, and prints its line:
/// process CPU time on one thread, wall time otherwise.
fn measure(one_thread: bool, cases: Vec<Case>) {
    let clock = if one_thread { process_cpu_ns } else { wall_ns };
    for mut case in cases {
        let t: AbTimes = interleaved_on(ROUNDS, 1, clock, &mut case.triskel, &mut case.tfhe_rs);
        println!(
            "| {} | {} | {} | {} |",
            case.what,
            case.ours,
            case.theirs,
            t.ms_cells(2)
        );
    }
}

fn boolean(one_thread: bool) {
    use tfhe::boolean::prelude::{BinaryBooleanGates, ClientKey as Ck, ServerKey as Sk};
    let theirs: Vec<_> = [
        (
            "2^-165 KS-PBS",
            tfhe::boolean::parameters::PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS,
        ),
        (
            "2^-64 default",
            tfhe::boolean::parameters::DEFAULT_PARAMETERS,
        ),
    ]
    .into_iter()
    .map(|(name, params)| {
        let tck = Ck::new(&params);
        let tsk = Sk::new(&tck);
        let (ta, tb) = (tck.encrypt(true), tck.encrypt(false));
        assert!(tck.decrypt(&tsk.nand(&ta, &tb)));
        (name, tsk, ta, tb)
    })
    .collect();
    for (ours, params) in [
        ("", TfheParameters::boolean()),
        (" multi-bit", TfheParameters::boolean_multi_bit()),
    ] {
        let ours = failure(&params, ours);
        let ck = ClientKey::generate(&params).unwrap();
        let sk = ck.server_key().unwrap();
        let (a, b) = (
            ck.encrypt_bool(true).unwrap(),
            ck.encrypt_bool(false).unwrap(),
        );
        assert!(ck
            .decrypt_bool(&sk.gate(Gate::Nand, &a, &b).unwrap())
            .unwrap());
        for (theirs, tsk, ta, tb) in &theirs {
            let case = Case {
                what: "boolean NAND",
                ours,
                theirs,
                triskel: op(|| sk.gate(Gate::Nand, &a, &b).unwrap()),
                tfhe_rs: op(|| tsk.nand(ta, tb)),
            };
            measure(one_thread, vec![case]);
        }
    }
}

fn ks_pbs(one_thread: bool) {
    use tfhe::shortint::parameters::v1_1::classic::gaussian::p_fail_2_minus_64::ks_pbs::V1_1_PARAM_MESSAGE_2_CARRY_2_KS_PBS_GAUSSIAN_2M64 as TFHE_RS_2M64;
    use tfhe::shortint::parameters::PARAM_MESSAGE_2_CARRY_2_KS_PBS as TFHE_RS_2M128;
    for (ours, params, theirs, tparams) in [
        (
            "",
            TfheParameters::message_2_carry_2(),
            "2^-128 default",
            TFHE_RS_2M128,
        ),
        (
            " (2M64)",
            TfheParameters::message_2_carry_2_2m64(),
            "2^-64 gaussian",
            TFHE_RS_2M64,
        ),
        (
            " multi-bit",
            TfheParameters::message_2_carry_2_multi_bit(),
            "2^-128 default",
            TFHE_RS_2M128,
        ),
    ] {
        let ours = failure(&params, ours);
        let ck = ClientKey::generate(&params).unwrap();
        let sk = ck.server_key().unwrap();
        let lut = sk.lookup_table(|x| (x * x + 1) % 16).unwrap();
        let ct = ck.encrypt(3).unwrap();
        let out = sk.apply_lookup_table(&ct, &lut).unwrap();
        assert_eq!(ck.decrypt_with_carry(&out).unwrap(), 10);
        let (tck, tsk) = tfhe::shortint::gen_keys(tparams);
        let tlut = tsk.generate_lookup_table(|x| (x * x + 1) % 16);
        let tct = tck.encrypt(3);
        let tout = tsk.apply_lookup_table(&tct, &tlut);
        assert_eq!(tck.decrypt_message_and_carry(&tout), 10);
        let case = Case {
            what: "2_2 KS + PBS",
            ours,
            theirs,
            triskel: op(|| sk.apply_lookup_table(&ct, &lut).unwrap()),
            tfhe_rs: op(|| tsk.apply_lookup_table(&tct, &tlut)),
        };
        measure(one_thread, vec![case]);
    }
}

fn integers(one_thread: bool) {
    let (tck, tsk) = tfhe::generate_keys(tfhe::ConfigBuilder::default().build());
    tfhe::set_server_key(tsk);
    let (tx, ty) = (
        tfhe::FheUint8::encrypt(200u8, &tck),
        tfhe::FheUint8::encrypt(77u8, &tck),
    );
    let tgt: bool = tx.gt(&ty).decrypt(&tck);
    let tsum: u8 = (&tx + &ty).decrypt(&tck);
    assert!(tgt && tsum == 21);
    let (a, b) = (u64::MAX - 5, 1u64 << 40);
    let (tx64, ty64) = (
        tfhe::FheUint64::encrypt(a, &tck),
        tfhe::FheUint64::encrypt(b, &tck),
    );
    let tsum: u64 = (&tx64 + &ty64).decrypt(&tck);
    assert_eq!(tsum, a.wrapping_add(b));

    // The integer default (multi-bit) first, then the classic set.
    for (ours, params) in [
        (
            "2_2 multi-bit ",
            TfheParameters::message_2_carry_2_multi_bit(),
        ),
        ("2_2 classic ", TfheParameters::message_2_carry_2()),
    ] {
        let ours: &'static str =
            Box::leak(format!("{ours}{}", failure(&params, "")).into_boxed_str());
        let ck = ClientKey::generate(&params).unwrap();
        let sk = ck.server_key().unwrap();
        let (x, y) = (ck.encrypt_u8(200).unwrap(), ck.encrypt_u8(77).unwrap());
        let gt = sk.compare(Comparison::Gt, &x, &y).unwrap();
        assert_eq!(ck.decrypt(&gt).unwrap(), 1);
        assert_eq!(ck.decrypt_radix(&sk.add(&x, &y).unwrap()).unwrap(), 21);
        let (x64, y64) = (ck.encrypt_u64(a).unwrap(), ck.encrypt_u64(b).unwrap());
        let sum = ck.decrypt_radix(&sk.add(&x64, &y64).unwrap()).unwrap();
        assert_eq!(sum, a.wrapping_add(b));
        let case = |what, triskel, tfhe_rs| Case {
            what,
            ours,
            theirs: "default 2^-128",
            triskel,
            tfhe_rs,
        };
        measure(
            one_thread,
            vec![
                case(
                    "FheUint8 gt",
                    op(|| sk.compare(Comparison::Gt, &x, &y).unwrap()),
                    op(|| tx.gt(&ty)),
                ),
                case(
                    "FheUint8 add",
                    op(|| sk.add(&x, &y).unwrap()),
                    op(|| &tx + &ty),
                ),
                case(
                    "FheUint64 add",
                    op(|| sk.add(&x64, &y64).unwrap()),
                    op(|| &tx64 + &ty64),
                ),
            ],
        );
    }
}

/// FheUint64 mul, one run of each side (ours on the multi-bit 2_2 set, the
/// integer default): thousands of bootstraps, too long for the rounds above.
fn mul64(one_thread: bool) {
    let clock = if one_thread { process_cpu_ns } else { wall_ns };
    let (tck, tsk) = tfhe::generate_keys(tfhe::ConfigBuilder::default().build());
    tfhe::set_server_key(tsk);
    let (a, b) = (0x9e37_79b9_7f4a_7c15u64, 0xc2b2_ae3d_27d4_eb4fu64);
    let (tx, ty) = (
        tfhe::FheUint64::encrypt(a, &tck),
        tfhe::FheUint64::encrypt(b, &tck),
    );
    let ck = ClientKey::generate(&TfheParameters::message_2_carry_2_multi_bit()).unwrap();
    let sk = ck.server_key().unwrap();
    let (x, y) = (ck.encrypt_u64(a).unwrap(), ck.encrypt_u64(b).unwrap());
    let start = clock();
    let ours = sk.mul(&x, &y).unwrap();
    let ours_ns = clock() - start;
    let start = clock();
    let theirs = &tx * &ty;
    let theirs_ns = clock() - start;
    assert_eq!(ck.decrypt_radix(&ours).unwrap(), a.wrapping_mul(b));
    let theirs: u64 = theirs.decrypt(&tck);
    assert_eq!(theirs, a.wrapping_mul(b));
    println!(
        "| FheUint64 mul (one run each) | 2_2 multi-bit 2^-136 | default 2^-128 | {:.0} | {:.0} | {:.2} | {} |",
        ours_ns as f64 / 1e6,
        theirs_ns as f64 / 1e6,
        ours_ns as f64 / theirs_ns as f64,
        triskel_benches::load_average()
    );
}

fn main() {
    let one_thread = std::env::var("RAYON_NUM_THREADS").as_deref() == Ok("1");
    println!("cpu: {}", triskel_kernels::cpu_model());
    println!(
        "{} ({}), {ROUNDS} interleaved rounds; times in ms, fastest / median round",
        if one_thread {
            "one thread"
        } else {
            "all threads"
        },
        if one_thread {
            "process CPU time"
        } else {
            "wall time"
        },
    );
    println!(
        "| op | triskel p_fail | tfhe-rs p_fail | triskel | tfhe-rs | triskel / tfhe-rs (fastest / median ratio) | load |"
    );
    println!("|---|---|---|---|---|---|---|");
    if std::env::args().any(|a| a == "--mul64") {
        mul64(one_thread);
        return;
    }
    boolean(one_thread);
    ks_pbs(one_thread);
    integers(one_thread);
}
