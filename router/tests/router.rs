//! The router: engine and parameter choice over a table of programs (with a
//! fixed cost table), refusals before any work, and end-to-end runs that
//! decrypt and compare with the plaintext computation.

mod common;

use std::collections::BTreeMap;

use common::mul_chain;
use triskel::{
    attest_outputs, verify_output, BfvEncoding, Cmp, CostModel, Engine, Error, Kind, Placement,
    PlainValue, Plan, PlanOptions, Program, Scalar, Session, StepKind,
};

fn costs() -> CostModel {
    CostModel::builtin()
}

fn plan_of(p: &Program) -> Plan {
    triskel::plan(p, &costs()).expect("plans")
}

fn refused_at(p: &Program, costs: &CostModel) -> String {
    match triskel::plan(p, costs) {
        Err(Error::Refused { op, .. }) => op,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// (engine, parameter set) of the step computing output 0.
fn output_route(plan: &Plan) -> (Engine, String) {
    let (_, v) = plan.program().outputs().next().unwrap();
    let step = plan
        .steps()
        .iter()
        .find(
            |s| matches!(s.kind, StepKind::Op(i) | StepKind::Transition { node: i, .. } if i == v),
        )
        .unwrap();
    (step.engine, step.params.clone())
}

fn signed(p: &mut Program, name: &str, len: usize, bound: u64) -> triskel::Value {
    p.input(name, Kind::Signed { len, bound }).unwrap()
}

#[test]
fn explain_names_the_inputs_no_output_reads() {
    let mut p = Program::new();
    let x = signed(&mut p, "x", 2, 5);
    let _u = p.input("u", Kind::Real { len: 2 }).unwrap();
    let w = p.input("w", Kind::Uint { len: 1, bits: 8 }).unwrap();
    let _dead = p.add_scalar(w, Scalar::Int(1)).unwrap();
    let y = p.add_scalar(x, Scalar::Int(1)).unwrap();
    p.output("y", y).unwrap();
    let plan = plan_of(&p);
    assert_eq!(plan.unused_inputs(), vec!["u", "w"]);
    assert!(plan
        .explain()
        .contains("inputs no output reads: u, w (keyed and encrypted all the same)"));
    assert!(plan_of(&mul_chain(Kind::Real { len: 2 }, 1))
        .unused_inputs()
        .is_empty());
}

#[test]
fn capability_rules_pick_the_engine_and_the_smallest_set_that_fits() {
    let real = Kind::Real { len: 8 };
    let int = Kind::Signed { len: 8, bound: 10 };
    let cases: Vec<(Program, Engine, &str)> = vec![
        (mul_chain(real, 0), Engine::Ckks, "ckks-n8192"),
        // The released sum takes one more level for its mask.
        (mul_chain(real, 2), Engine::Ckks, "ckks-n8192-d3"),
        (mul_chain(real, 3), Engine::Ckks, "ckks-n16384"),
        (mul_chain(real, 5), Engine::Ckks, "ckks-n16384"),
        (mul_chain(real, 12), Engine::Ckks, "ckks-n32768"),
        (mul_chain(int, 0), Engine::Bfv, "bfv-n4096-shallow"),
        (mul_chain(int, 1), Engine::Bfv, "bfv-n4096"),
        (
            mul_chain(Kind::Uint { len: 1, bits: 8 }, 1),
            Engine::Tfhe,
            "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128_V2",
        ),
    ];
    for (p, engine, set) in cases {
        let plan = plan_of(&p);
        let (e, s) = output_route(&plan);
        assert_eq!(e, engine, "{}", plan.explain());
        assert!(
            s.starts_with(set) && !s[set.len()..].starts_with("-d"),
            "{s} for {set}\n{}",
            plan.explain()
        );
    }
    // The plaintext modulus comes from the program's bounds: a prime = 1 mod 2n above 2 * bound.
    let plan = plan_of(&mul_chain(int, 0));
    let t = plan.bfv()[0].params.plain_modulus();
    assert!(t > 2 * 20 && t % (2 * plan.bfv()[0].params.n() as u64) == 1);

    // Comparisons need TFHE; a comparison of BFV values is a transition.
    let mut p = Program::new();
    let x = signed(&mut p, "x", 4, 100);
    let w = vec![Scalar::Int(3); 4];
    let score = p.dot_plain(x, &w).unwrap();
    let decision = p.threshold(score, Scalar::Int(50)).unwrap();
    p.output("d", decision).unwrap();
    let plan = plan_of(&p);
    assert_eq!(plan.placements()[score.index()], Placement::Bfv(0));
    assert_eq!(plan.placements()[decision.index()], Placement::BfvToTfhe(0));
    // The value goes to TFHE: coefficient encoding with t a power of two
    // holding +-(scores and threshold) within t/4, the inner product as one
    // plaintext product (no rotation keys).
    assert_eq!(plan.bfv()[0].encoding, BfvEncoding::Coefficients);
    let t = plan.bfv()[0].params.plain_modulus();
    assert!(
        t.is_power_of_two() && t / 4 > 1200 && t / 8 <= 1201,
        "t = {t}"
    );
    assert!(plan
        .steps()
        .iter()
        .any(|s| s.kind == StepKind::Keygen(Engine::Bfv, 0)
            && s.label == "keys (coefficients encoding, 0 rotations)"));
    assert!(plan.steps().iter().any(|s| s.kind
        == StepKind::Transition {
            node: decision.index(),
            from: Engine::Bfv,
            to: Engine::Tfhe
        }));
    assert!(plan.route().contains("transition bfv->tfhe"));

    // A 64-bit addition cannot use BFV coefficients (t = 2^64 does not fit).
    let mut p = Program::new();
    let a = p.input("a", Kind::Uint { len: 2, bits: 64 }).unwrap();
    let s = p.add(a, a).unwrap();
    p.output("s", s).unwrap();
    assert_eq!(plan_of(&p).placements()[s.index()], Placement::Tfhe);
}

fn u8_sum_program() -> (Program, triskel::Value) {
    let mut p = Program::new();
    let a = p.input("a", Kind::Uint { len: 16, bits: 8 }).unwrap();
    let b = p.input("b", Kind::Uint { len: 16, bits: 8 }).unwrap();
    let s = p.add(a, b).unwrap();
    let s = p.add_scalar(s, Scalar::Int(200)).unwrap();
    p.output("s", s).unwrap();
    (p, s)
}

#[test]
fn cost_rules_choose_between_engines_and_sets() {
    // u8 additions: BFV with coefficient encoding is far cheaper than TFHE...
    let (p, s) = u8_sum_program();
    let plan = plan_of(&p);
    assert!(
        matches!(plan.placements()[s.index()], Placement::Bfv(_)),
        "{}",
        plan.explain()
    );
    assert_eq!(plan.bfv()[0].params.plain_modulus(), 256);
    // ... unless the table says otherwise.
    let mut expensive = costs();
    for (k, v) in expensive.costs.iter_mut() {
        if k.starts_with("bfv/") {
            *v *= 1e9;
        }
    }
    assert_eq!(
        triskel::plan(&p, &expensive).unwrap().placements()[s.index()],
        Placement::Tfhe
    );
    // Between sets: when the smallest CKKS set is measured slow, the next one wins.
    let p = mul_chain(Kind::Real { len: 8 }, 1);
    assert_eq!(output_route(&plan_of(&p)).1, "ckks-n8192");
    let mut slow = costs();
    for (k, v) in slow.costs.iter_mut() {
        if k.starts_with("ckks/ckks-n8192/") {
            *v *= 1e6;
        }
    }
    assert_eq!(
        output_route(&triskel::plan(&p, &slow).unwrap()).1,
        "ckks-n8192-d3"
    );
    // Predictions are the table's arithmetic: doubling every cost doubles the plan.
    let mut double = costs();
    double.costs.values_mut().for_each(|v| *v *= 2.0);
    let (a, b) = (
        plan_of(&p).predicted_ns(),
        triskel::plan(&p, &double).unwrap().predicted_ns(),
    );
    assert!((b / a - 2.0).abs() < 1e-9);
}

#[test]
fn programs_that_cannot_run_are_refused_before_any_work() {
    let c = costs();
    assert_eq!(refused_at(&mul_chain(Kind::Real { len: 4 }, 17), &c), "mul");
    assert_eq!(
        refused_at(&mul_chain(Kind::Signed { len: 4, bound: 2 }, 20), &c),
        "mul"
    );
    let mut p = Program::new();
    // 65539 is prime but not 1 mod 2n for any set: no batching.
    let x = p
        .input(
            "x",
            Kind::Modular {
                len: 4,
                modulus: 65539,
            },
        )
        .unwrap();
    p.output("x", x).unwrap();
    assert_eq!(refused_at(&p, &c), "input");
    let p = Program::new();
    assert_eq!(refused_at(&p, &c), "output");
    // A few nodes of long u64 vectors would hold ~17 GB of ciphertexts:
    // refused by the planner, unless the caller raises the limit.
    let mut p = Program::new();
    let x = p
        .input(
            "x",
            Kind::Uint {
                len: 32768,
                bits: 64,
            },
        )
        .unwrap();
    let y = p.add_scalar(x, Scalar::Int(1)).unwrap();
    p.output("y", y).unwrap();
    let err = triskel::plan(&p, &c).unwrap_err();
    assert!(
        matches!(&err, Error::Refused { op, msg } if op == "program" && msg.contains("MiB")),
        "{err}"
    );
    let roomy = PlanOptions {
        max_ciphertext_bytes: Some(u64::MAX),
        ..Default::default()
    };
    let plan = triskel::plan_with(&p, &c, roomy).unwrap();
    // 2 nodes x 32768 values x 32 blocks x (2048 + 1) words of 8 bytes.
    assert_eq!(plan.ciphertext_bytes(), 2 * 32768 * 32 * 2049 * 8);
    assert!(plan
        .explain()
        .contains("ciphertexts held: at most 32784.0 MiB"));
    // Unsupported operations never enter a program.
    let mut p = Program::new();
    let x = signed(&mut p, "x", 4, 3);
    assert!(
        matches!(p.matvec(&[vec![1.0; 4]], x), Err(Error::Program { op, .. }) if op == "matvec")
    );

    // Bad inputs are refused before keys or ciphertexts exist.
    let mut p = Program::new();
    let x = signed(&mut p, "x", 2, 5);
    p.output("x", x).unwrap();
    let mut plan = plan_of(&p);
    let mut session = Session::with_costs(costs());
    for bad in [
        BTreeMap::new(),
        BTreeMap::from([("x".to_string(), PlainValue::Ints(vec![1, 6]))]),
        BTreeMap::from([("x".to_string(), PlainValue::Reals(vec![1.0, 2.0]))]),
        BTreeMap::from([
            ("x".to_string(), PlainValue::Ints(vec![1, 2])),
            ("y".to_string(), PlainValue::Ints(vec![1])),
        ]),
    ] {
        assert!(matches!(session.run(&mut plan, &bad), Err(Error::Input(_))));
        assert!(
            plan.steps().iter().all(|s| s.measured_ns.is_none()),
            "no step ran"
        );
    }
    // Reals outside [-1, 1] (the encoding's bound) too, naming the input.
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 2 }).unwrap();
    p.output("x", x).unwrap();
    let mut plan = plan_of(&p);
    for bad in [1.5, -1.01, f64::NAN, f64::INFINITY] {
        let inputs = BTreeMap::from([("x".to_string(), PlainValue::Reals(vec![0.0, bad]))]);
        let err = session.run(&mut plan, &inputs).unwrap_err();
        assert!(
            matches!(&err, Error::Input(m) if m.contains("\"x\"") && m.contains("[-1, 1]")),
            "{err}"
        );
        assert!(plan.steps().iter().all(|s| s.measured_ns.is_none()));
    }
}

fn ints(v: &[i128]) -> PlainValue {
    PlainValue::Ints(v.to_vec())
}

#[test]
fn bfv_programs_decrypt_to_the_plaintext_results() {
    let xs: Vec<i128> = (0..5).map(|i| i * 7 - 13).collect();
    let ys: Vec<i128> = (0..5).map(|i| 20 - i * 9).collect();
    let mut p = Program::new();
    let x = signed(&mut p, "x", 5, 30);
    let y = signed(&mut p, "y", 5, 30);
    let dot = p.dot(x, y).unwrap();
    let cubic = [7, 5, 2, 3].map(Scalar::Int);
    let poly = p.polynomial(x, &cubic).unwrap();
    let sum = p.add(x, y).unwrap();
    let sum = p.mul_scalar(sum, Scalar::Int(-3)).unwrap();
    let sum = p.add_scalar(sum, Scalar::Int(4)).unwrap();
    let total = p.sum(sum).unwrap();
    let constant = p.polynomial(y, &[Scalar::Int(-9)]).unwrap();
    for (name, v) in [
        ("dot", dot),
        ("poly", poly),
        ("total", total),
        ("constant", constant),
    ] {
        p.output(name, v).unwrap();
    }
    let mut plan = plan_of(&p);
    assert!(plan.placements().iter().all(|pl| *pl == Placement::Bfv(0)));
    let mut session = Session::with_costs(costs());
    let inputs = BTreeMap::from([("x".to_string(), ints(&xs)), ("y".to_string(), ints(&ys))]);
    let out = session.run(&mut plan, &inputs).unwrap();
    let want_dot: i128 = xs.iter().zip(&ys).map(|(a, b)| a * b).sum();
    let want_poly: Vec<i128> = xs
        .iter()
        .map(|x| 3 * x * x * x + 2 * x * x + 5 * x + 7)
        .collect();
    let want_total: i128 = xs.iter().zip(&ys).map(|(a, b)| -3 * (a + b) + 4).sum();
    assert_eq!(out.get("dot"), Some(&ints(&[want_dot])));
    assert_eq!(out.get("poly"), Some(&ints(&want_poly)));
    assert_eq!(out.get("total"), Some(&ints(&[want_total])));
    assert_eq!(out.get("constant"), Some(&ints(&[-9; 5])));
    assert!(plan.steps().iter().all(|s| s.measured_ns.is_some()));
    println!("{}", plan.explain());

    // The deepest chain the planner allows on bfv-n4096 runs there.
    let mut plan = plan_of(&mul_chain(Kind::Signed { len: 8, bound: 10 }, 1));
    assert_eq!(plan.bfv()[0].params.n(), 4096);
    let x: Vec<i128> = (0..8).map(|i| i - 4).collect();
    let out = session
        .run(&mut plan, &BTreeMap::from([("x".to_string(), ints(&x))]))
        .unwrap();
    let want: Vec<i128> = x.iter().map(|v| v * v + v).collect();
    assert_eq!(out.get("y"), Some(&ints(&want)));

    // Integers modulo a batching prime wrap around.
    let mut p = Program::new();
    let x = p
        .input(
            "x",
            Kind::Modular {
                len: 3,
                modulus: 65537,
            },
        )
        .unwrap();
    let sq = p.mul(x, x).unwrap();
    let y = p.add_scalar(sq, Scalar::Int(65000)).unwrap();
    p.output("y", y).unwrap();
    let mut plan = plan_of(&p);
    let out = session
        .run(
            &mut plan,
            &BTreeMap::from([("x".to_string(), ints(&[1000, 65536, 3]))]),
        )
        .unwrap();
    let want: Vec<i128> = [1000i128, 65536, 3]
        .iter()
        .map(|v| (v * v + 65000) % 65537)
        .collect();
    assert_eq!(out.get("y"), Some(&ints(&want)));

    // u8 additions on BFV coefficients wrap modulo 256.
    let (p, _) = u8_sum_program();
    let mut plan = plan_of(&p);
    let a: Vec<i128> = (0..16).map(|i| i * 17 % 256).collect();
    let b: Vec<i128> = (0..16).map(|i| 255 - i * 3).collect();
    let out = session
        .run(
            &mut plan,
            &BTreeMap::from([("a".to_string(), ints(&a)), ("b".to_string(), ints(&b))]),
        )
        .unwrap();
    let want: Vec<i128> = a.iter().zip(&b).map(|(x, y)| (x + y + 200) % 256).collect();
    assert_eq!(out.get("s"), Some(&ints(&want)));
}

fn reals(p: &PlainValue) -> &[f64] {
    match p {
        PlainValue::Reals(v) => v,
        other => panic!("expected reals, got {other:?}"),
    }
}

fn close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < tol, "{got:?} vs {want:?}");
    }
}

#[test]
fn ckks_programs_decrypt_within_the_error_bound() {
    let xs: Vec<f64> = (0..6).map(|i| (i as f64 * 0.7).sin()).collect();
    let ys: Vec<f64> = (0..6).map(|i| (i as f64 * 0.3).cos() - 0.5).collect();
    let rows: Vec<Vec<f64>> = (0..3)
        .map(|r| (0..6).map(|c| ((r * 6 + c) as f64 * 0.37).sin()).collect())
        .collect();
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 6 }).unwrap();
    let y = p.input("y", Kind::Real { len: 6 }).unwrap();
    let dot = p.dot(x, y).unwrap();
    // p(x) = 3x^3 + 2x^2 + 5x + 7 leaves 7 in the padding slots: the sum masks them.
    let cubic = [7.0, 5.0, 2.0, 3.0].map(Scalar::Real);
    let poly = p.polynomial(x, &cubic).unwrap();
    let poly_sum = p.sum(poly).unwrap();
    let mv = p.matvec(&rows, x).unwrap();
    let scaled = p.mul_scalar(y, Scalar::Real(0.25)).unwrap();
    let shifted = p.add_scalar(scaled, Scalar::Real(-1.5)).unwrap();
    let weights: Vec<Scalar> = (0..6).map(|i| Scalar::Real(i as f64 - 2.5)).collect();
    let wdot = p.dot_plain(shifted, &weights).unwrap();
    for (name, v) in [
        ("dot", dot),
        ("poly_sum", poly_sum),
        ("mv", mv),
        ("shifted", shifted),
        ("wdot", wdot),
    ] {
        p.output(name, v).unwrap();
    }
    let mut plan = plan_of(&p);
    assert!(
        plan.packing()[poly_sum.index()].mask_operand,
        "{}",
        plan.explain()
    );
    let mut session = Session::with_costs(costs());
    let inputs = BTreeMap::from([
        ("x".to_string(), PlainValue::Reals(xs.clone())),
        ("y".to_string(), PlainValue::Reals(ys.clone())),
    ]);
    let out = session.run(&mut plan, &inputs).unwrap();
    let cub = |x: f64| 3.0 * x * x * x + 2.0 * x * x + 5.0 * x + 7.0;
    let shifted_plain: Vec<f64> = ys.iter().map(|y| 0.25 * y - 1.5).collect();
    close(
        reals(out.get("dot").unwrap()),
        &[xs.iter().zip(&ys).map(|(a, b)| a * b).sum()],
        1e-4,
    );
    close(
        reals(out.get("poly_sum").unwrap()),
        &[xs.iter().map(|&x| cub(x)).sum()],
        1e-3,
    );
    let mv_plain: Vec<f64> = rows
        .iter()
        .map(|r| r.iter().zip(&xs).map(|(a, b)| a * b).sum())
        .collect();
    close(reals(out.get("mv").unwrap()), &mv_plain, 1e-4);
    close(reals(out.get("shifted").unwrap()), &shifted_plain, 1e-4);
    let wdot_plain: f64 = shifted_plain
        .iter()
        .enumerate()
        .map(|(i, v)| v * (i as f64 - 2.5))
        .sum();
    close(reals(out.get("wdot").unwrap()), &[wdot_plain], 1e-4);
}

#[test]
fn tfhe_programs_decrypt_and_outputs_are_attested() {
    let mut p = Program::new();
    let a = p.input("a", Kind::Uint { len: 1, bits: 8 }).unwrap();
    let b = p.input("b", Kind::Uint { len: 1, bits: 8 }).unwrap();
    let gt = p.compare(a, Cmp::Gt, b).unwrap();
    let max = p.select(gt, a, b).unwrap();
    p.output("gt", gt).unwrap();
    p.output("max", max).unwrap();
    let mut plan = plan_of(&p);
    assert!(plan.placements()[2..]
        .iter()
        .all(|pl| *pl == Placement::Tfhe));
    let mut session = Session::with_costs(costs());
    let inputs = BTreeMap::from([
        ("a".to_string(), ints(&[37])),
        ("b".to_string(), ints(&[201])),
    ]);
    let out = session.run(&mut plan, &inputs).unwrap();
    assert_eq!(out.get("gt"), Some(&PlainValue::Bits(vec![false])));
    assert_eq!(out.get("max"), Some(&ints(&[201])));

    let identity = triskel::attest::Identity::generate().unwrap();
    let records = attest_outputs(&identity, &plan, &out, b"test context").unwrap();
    let public = identity.public();
    for ((name, value), record) in out.values.iter().zip(&records) {
        verify_output(public, &plan, name, value, b"test context", record).unwrap();
        assert!(verify_output(public, &plan, name, value, b"other context", record).is_err());
        assert!(verify_output(
            public,
            &plan,
            name,
            &PlainValue::Bits(vec![true]),
            b"test context",
            record
        )
        .is_err());
    }
    // The record binds the plan: another routing decision (the same
    // program with one more output) does not verify.
    let mut q = p.clone();
    let min = q.select(gt, b, a).unwrap();
    q.output("min", min).unwrap();
    let other = plan_of(&q);
    assert_ne!(other.route(), plan.route());
    let (name, value) = &out.values[0];
    verify_output(public, &plan, name, value, b"test context", &records[0]).unwrap();
    assert!(verify_output(public, &other, name, value, b"test context", &records[0]).is_err());
    // And the operations: the same placements computing a < b instead.
    let mut r = Program::new();
    let a = r.input("a", Kind::Uint { len: 1, bits: 8 }).unwrap();
    let b = r.input("b", Kind::Uint { len: 1, bits: 8 }).unwrap();
    let lt = r.compare(a, Cmp::Lt, b).unwrap();
    let max = r.select(lt, a, b).unwrap();
    r.output("gt", lt).unwrap();
    r.output("max", max).unwrap();
    let other = plan_of(&r);
    assert_eq!(other.placements(), plan.placements());
    assert!(verify_output(public, &other, name, value, b"test context", &records[0]).is_err());
}

/// A match (inner products of an encrypted probe with plaintext templates)
/// and threshold decisions on its scores: decisions around each score, every
/// comparison, a comparison of two encrypted scores and "any", all decrypted
/// as bits and compared with the plaintext decisions. One session: the keys
/// (BFV, TFHE, transition) are made once.
/// Runs `plan` on the input "probe" and checks each named bit output.
fn run_probe_checking_bits(
    plan: &mut Plan,
    probe: &[i128],
    cases: &[(String, bool)],
) -> triskel::Outputs {
    let mut session = Session::with_costs(costs());
    let inputs = BTreeMap::from([("probe".to_string(), ints(probe))]);
    let out = session.run(plan, &inputs).unwrap();
    for (name, want) in cases {
        assert_eq!(
            out.get(name),
            Some(&PlainValue::Bits(vec![*want])),
            "{name}"
        );
    }
    out
}

#[test]
fn bfv_to_tfhe_decisions_decrypt_to_the_plaintext_decisions() {
    let probe: [i128; 8] = [100, -37, 5, 0, -100, 64, 12, -9];
    let templates: [[i64; 8]; 2] = [[3, 1, -2, 7, 0, 1, 1, 2], [-1, 4, 0, 0, 2, -3, 5, 1]];
    let scores: Vec<i64> = templates
        .iter()
        .map(|t| t.iter().zip(&probe).map(|(&w, &x)| w * x as i64).sum())
        .collect();
    assert_eq!(scores, [311, -589]);
    let mut p = Program::new();
    let x = signed(&mut p, "probe", 8, 100);
    let mut cases: Vec<(String, bool)> = Vec::new();
    let mut score_values = Vec::new();
    for (j, t) in templates.iter().enumerate() {
        let w: Vec<Scalar> = t.iter().map(|&v| Scalar::Int(v)).collect();
        let score = p.dot_plain(x, &w).unwrap();
        score_values.push(score);
        let s = scores[j];
        for c in [s - 1, s, s + 1] {
            for cmp in [Cmp::Ge, Cmp::Gt, Cmp::Le, Cmp::Lt, Cmp::Eq, Cmp::Ne] {
                let d = p.compare_scalar(score, cmp, Scalar::Int(c)).unwrap();
                let name = format!("s{j}_{cmp:?}_{c}");
                p.output(&name, d).unwrap();
                cases.push((name, cmp.eval(s as i128, c as i128)));
            }
        }
    }
    let above = p.threshold(score_values[0], Scalar::Int(312)).unwrap();
    let below = p
        .compare_scalar(score_values[1], Cmp::Ge, Scalar::Int(-588))
        .unwrap();
    let none = p.any(&[above, below]).unwrap();
    p.output("any_none", none).unwrap();
    cases.push(("any_none".into(), false));
    let first_wins = p
        .compare(score_values[0], Cmp::Gt, score_values[1])
        .unwrap();
    let some = p.any(&[below, first_wins]).unwrap();
    p.output("any_some", some).unwrap();
    cases.push(("any_some".into(), true));
    p.output("s0_gt_s1", first_wins).unwrap();
    cases.push(("s0_gt_s1".into(), true));

    let mut plan = plan_of(&p);
    assert_eq!(plan.bfv().len(), 1);
    assert_eq!(plan.bfv()[0].encoding, BfvEncoding::Coefficients);
    let t = plan.bfv()[0].params.plain_modulus();
    // The compared difference s0 - s1 is bounded by 100 * (17 + 16).
    assert!(t.is_power_of_two() && t / 4 > 3300, "t = {t}");
    run_probe_checking_bits(&mut plan, &probe, &cases);
}

/// Transition noise at plan time: 5000 values need N = 8192. Before ring
/// switching its LWE key switch (8192 terms) left a decision above the
/// failure bound and the plan was refused; the ring switch's noise is
/// 2^-17 units there, so it plans on N = 8192, exact or within a
/// tolerance, and 4096 values on N = 4096.
#[test]
fn decisions_plan_on_n8192_since_the_ring_switch() {
    let build = |len: usize, tolerance: Option<u32>| {
        let mut p = Program::new();
        let x = signed(&mut p, "x", len, 1 << 20);
        let d = match tolerance {
            None => p.threshold(x, Scalar::Int(0)).unwrap(),
            Some(r) => p.threshold_within(x, 0, r).unwrap(),
        };
        p.output("d", d).unwrap();
        p
    };
    for tolerance in [None, Some(12)] {
        assert_eq!(plan_of(&build(5000, tolerance)).bfv()[0].params.n(), 8192);
        assert_eq!(plan_of(&build(4096, tolerance)).bfv()[0].params.n(), 4096);
    }
}

/// Inner products of one probe whose scores only feed decisions share ONE
/// plaintext product (score j at coefficient L j + L - 1); decisions within
/// a tolerance read fewer bits. Every decision more than the tolerance from
/// its threshold decrypts to the plaintext decision; an inner product that
/// is an output keeps its own product.
#[test]
fn single_product_scores_and_decisions_within_a_tolerance() {
    let probe: [i128; 8] = [100, -37, 5, 0, -100, 64, 12, -9];
    let templates: [[i64; 8]; 3] = [
        [3, 1, -2, 7, 0, 1, 1, 2],
        [-1, 4, 0, 0, 2, -3, 5, 1],
        [9, 9, 9, 9, -9, 9, 9, 9],
    ];
    let scores: Vec<i64> = templates
        .iter()
        .map(|t| t.iter().zip(&probe).map(|(&w, &x)| w * x as i64).sum())
        .collect();
    assert_eq!(scores, [311, -589, 2115]);
    let mut p = Program::new();
    let x = signed(&mut p, "probe", 8, 100);
    let (tolerance, band) = (5u32, 32i64);
    let mut cases: Vec<(String, bool)> = Vec::new();
    let mut values = Vec::new();
    let mut decisions = Vec::new();
    for (j, t) in templates.iter().enumerate() {
        let w: Vec<Scalar> = t.iter().map(|&v| Scalar::Int(v)).collect();
        let score = p.dot_plain(x, &w).unwrap();
        values.push(score);
        let s = scores[j];
        for c in [s - band - 1, s + band + 1, s + 3 * band, -s] {
            let d = p.threshold_within(score, c, tolerance).unwrap();
            let name = format!("s{j}_within_{c}");
            p.output(&name, d).unwrap();
            cases.push((name, s >= c));
            decisions.push(d);
        }
        let exact = p.threshold(score, Scalar::Int(s)).unwrap();
        p.output(&format!("s{j}_exact"), exact).unwrap();
        cases.push((format!("s{j}_exact"), true));
    }
    let any = p.any(&decisions[1..2]).unwrap();
    p.output("any", any).unwrap();
    cases.push(("any".into(), false));
    let own = p.dot_plain(x, &[Scalar::Int(1); 8]).unwrap();
    p.output("own", own).unwrap();

    let mut plan = plan_of(&p);
    assert_eq!(plan.bfv()[0].encoding, BfvEncoding::Coefficients);
    let leader = values[0].index();
    for (j, v) in values.iter().enumerate() {
        assert_eq!(
            plan.scores()[v.index()],
            Some(triskel::ScoreSlot {
                leader,
                coefficient: 8 * j + 7
            })
        );
    }
    assert_eq!(plan.scores()[own.index()], None);
    // One product: the other members' steps cost nothing.
    assert!(plan
        .steps()
        .iter()
        .any(|s| s.kind == StepKind::Op(values[1].index()) && s.predicted_ns == 0.0));
    let out = run_probe_checking_bits(&mut plan, &probe, &cases);
    let sum: i128 = probe.iter().sum();
    assert_eq!(out.get("own"), Some(&ints(&[sum])));
}

/// The planner refuses a comparison of a value computed by an operation the
/// coefficient encoding (what the BFV -> TFHE transition reads) does not
/// run. (TFHE -> BFV refusals: `transition.rs`, `lookup_round_trip.rs`;
/// a plan's parts are read-only, so `Session::run` gets only what the
/// planner made.)
#[test]
fn a_comparison_of_an_uncoded_product_is_refused() {
    let mut p = Program::new();
    let x = signed(&mut p, "x", 2, 100);
    let sq = p.mul(x, x).unwrap();
    let d = p.threshold(sq, Scalar::Int(3)).unwrap();
    p.output("d", d).unwrap();
    assert_eq!(refused_at(&p, &costs()), "mul");
}

#[test]
fn argmax_and_thresholds_run_on_tfhe() {
    let mut p = Program::new();
    let v = p.input("v", Kind::Uint { len: 3, bits: 8 }).unwrap();
    let i = p.argmax(v).unwrap();
    p.output("i", i).unwrap();
    let big = p.threshold(v, Scalar::Int(100)).unwrap();
    p.output("big", big).unwrap();
    let mut plan = plan_of(&p);
    assert_eq!(plan.placements()[i.index()], Placement::Tfhe);
    let mut session = Session::with_costs(costs());
    let out = session
        .run(
            &mut plan,
            &BTreeMap::from([("v".to_string(), ints(&[17, 250, 250]))]),
        )
        .unwrap();
    assert_eq!(out.get("i"), Some(&ints(&[1])));
    assert_eq!(
        out.get("big"),
        Some(&PlainValue::Bits(vec![false, true, true]))
    );
    // An index must fit the values' width.
    let mut p = Program::new();
    let v = p.input("v", Kind::Uint { len: 257, bits: 8 }).unwrap();
    assert!(matches!(p.argmax(v), Err(Error::Program { op, .. }) if op == "argmax"));
}

/// The cost model's arithmetic, independent of the machine's speed: with a
/// table in which one primitive costs 1 ns and every other 0, each step's
/// prediction is the number of times the step runs that primitive. The
/// match demo's shape (8 scores of one product, each decided within 2^14
/// on t = 2^23, then `any`): per decision 2 windows = 2 ring switches,
/// 2 key switches and 2 sign bootstraps;
/// `any` of 8 fresh bits 1 bootstrap; one plaintext product for all
/// scores; and the plan's total is the sum of its steps.
#[test]
fn predictions_count_the_primitives_each_step_runs() {
    let mut p = Program::new();
    let x = signed(&mut p, "probe", 128, 127);
    let mut decisions = Vec::new();
    for j in 0..8i64 {
        let w: Vec<Scalar> = (0..128)
            .map(|i| Scalar::Int((i * 7 + j) % 255 - 127))
            .collect();
        let score = p.dot_plain(x, &w).unwrap();
        decisions.push(p.threshold_within(score, 100_000, 14).unwrap());
    }
    let any = p.any(&decisions).unwrap();
    p.output("match", any).unwrap();
    let builtin = CostModel::builtin();
    let only = |key: &str| {
        let costs = builtin
            .costs
            .keys()
            .map(|k| (k.clone(), f64::from(u8::from(k.ends_with(key)))))
            .collect();
        let plan = triskel::plan(&p, &CostModel::from_costs("cpu", "x", costs)).unwrap();
        let per_kind = |f: &dyn Fn(&StepKind) -> bool| -> f64 {
            plan.steps()
                .iter()
                .filter(|s| f(&s.kind))
                .map(|s| s.predicted_ns)
                .sum()
        };
        let transitions = per_kind(&|k| matches!(k, StepKind::Transition { .. }));
        let ops = per_kind(&|k| matches!(k, StepKind::Op(_)));
        assert_eq!(
            plan.predicted_ns(),
            plan.steps().iter().map(|s| s.predicted_ns).sum::<f64>()
        );
        (transitions, ops)
    };
    let counts = |key: &str, want: (f64, f64)| {
        let got = only(key);
        assert!(
            (got.0 - want.0).abs() < 1e-9 && (got.1 - want.1).abs() < 1e-9,
            "{key}: {got:?}, expected {want:?}"
        );
    };
    // t = 2^22 read to within 2^14: 8 bits. Two 4-bit windows would lose 8
    // of their 64 units of margin to the lowest window's rounding (failure
    // above 2^-128), so the decisions run in three 3-bit windows.
    counts("/sign_bootstrap", (24.0, 0.0));
    counts("/key_switch", (24.0, 0.0));
    counts("/ring_switch", (24.0, 0.0));
    counts("/pbs", (0.0, 1.0));
    counts("/mul_plain", (0.0, 1.0));
}
