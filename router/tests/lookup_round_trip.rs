//! Lookup tables (u8 values in TFHE; small signed values computed in BFV,
//! through the BFV -> TFHE transition) and key-holder round trips
//! (refused unless allowed; then shown by the plan, `explain()` and the
//! attested route). Every result is decrypted and compared with the
//! plaintext computation.

use std::collections::BTreeMap;

use triskel::{
    attest_outputs, route, verify_output, CostModel, Engine, Error, Kind, Placement, PlainValue,
    PlanOptions, Program, Scalar, Session, StepKind,
};

fn ints(v: &[i128]) -> PlainValue {
    PlainValue::Ints(v.to_vec())
}

fn session() -> Session {
    Session::with_costs(CostModel::builtin())
}

/// A table with no structure a shortcut could exploit: a multiplicative
/// hash of the index.
fn scrambled() -> Vec<u8> {
    (0..256u32)
        .map(|x| (x.wrapping_mul(2_654_435_761) >> 13) as u8 ^ 0x5a)
        .collect()
}

#[test]
fn a_u8_lookup_in_tfhe_decrypts_to_the_table_entry() {
    let table = scrambled();
    let mut p = Program::new();
    let x = p.input("x", Kind::Uint { len: 2, bits: 8 }).unwrap();
    let y = p.lookup(x, &table).unwrap();
    let z = p.add_scalar(y, Scalar::Int(1)).unwrap();
    p.output("y", y).unwrap();
    p.output("z", z).unwrap();
    let mut plan = session().plan(&p).unwrap();
    assert_eq!(plan.placements()[y.index()], Placement::Tfhe);
    assert_eq!(plan.placements()[z.index()], Placement::Tfhe);
    // Two values whose nibbles all differ (164 bootstraps each).
    let values = [9i128, 250];
    let out = session()
        .run(
            &mut plan,
            &BTreeMap::from([("x".to_string(), ints(&values))]),
        )
        .unwrap();
    let want: Vec<i128> = values.iter().map(|&v| table[v as usize] as i128).collect();
    assert_eq!(out.get("y"), Some(&PlainValue::Ints(want.clone())));
    let plus: Vec<i128> = want.iter().map(|v| (v + 1) % 256).collect();
    assert_eq!(out.get("z"), Some(&PlainValue::Ints(plus)));
}

/// x = a - b computed in BFV (coefficient encoding), every value of
/// [-3, 3] looked up through the transition's decisions, none decrypted.
#[test]
fn a_lookup_of_a_bfv_value_runs_through_the_transition_exhaustively() {
    let table = [200u8, 3, 250, 0, 77, 77, 9];
    let mut p = Program::new();
    let a = p.input("a", Kind::Signed { len: 7, bound: 2 }).unwrap();
    let b = p.input("b", Kind::Signed { len: 7, bound: 1 }).unwrap();
    let x = p.sub(a, b).unwrap();
    assert_eq!(p.kind(x).unwrap(), Kind::Signed { len: 7, bound: 3 });
    let y = p.lookup(x, &table).unwrap();
    p.output("y", y).unwrap();
    let mut plan = session().plan(&p).unwrap();
    assert!(matches!(
        plan.placements()[y.index()],
        Placement::BfvToTfhe(_)
    ));
    assert!(plan.steps().iter().any(|s| matches!(
        s.kind,
        StepKind::Transition { node, from: Engine::Bfv, to: Engine::Tfhe } if node == y.index()
    )));
    let a_values = [-2i128, -2, -1, 0, 1, 2, 2];
    let b_values = [1i128, 0, 0, 0, 0, 0, -1];
    let out = session()
        .run(
            &mut plan,
            &BTreeMap::from([
                ("a".to_string(), ints(&a_values)),
                ("b".to_string(), ints(&b_values)),
            ]),
        )
        .unwrap();
    let want: Vec<i128> = a_values
        .iter()
        .zip(&b_values)
        .map(|(a, b)| table[(a - b + 3) as usize] as i128)
        .collect();
    assert_eq!(want.len(), 7);
    assert_eq!(out.get("y"), Some(&PlainValue::Ints(want)));
}

#[test]
fn lookups_of_unsupported_values_are_refused_naming_the_operation() {
    let mut p = Program::new();
    let wide = p.input("w", Kind::Uint { len: 1, bits: 16 }).unwrap();
    let big = p.input("b", Kind::Signed { len: 1, bound: 128 }).unwrap();
    let r = p.input("r", Kind::Real { len: 1 }).unwrap();
    let bad = |res: triskel::Result<triskel::Value>| matches!(res, Err(Error::Program { op, .. }) if op == "lookup");
    assert!(bad(p.lookup(wide, &[0; 256])));
    assert!(bad(p.lookup(big, &[0; 257])));
    assert!(bad(p.lookup(r, &[0; 256])));
}

/// max(a, b) chosen in TFHE, then used in BFV arithmetic: TFHE -> BFV has
/// no homomorphic path.
fn select_then_arithmetic() -> (Program, triskel::Value) {
    let mut p = Program::new();
    let a = p.input("a", Kind::Uint { len: 2, bits: 8 }).unwrap();
    let b = p.input("b", Kind::Uint { len: 2, bits: 8 }).unwrap();
    let w = p
        .input(
            "w",
            Kind::Signed {
                len: 2,
                bound: 1000,
            },
        )
        .unwrap();
    let gt = p.compare(a, triskel::Cmp::Gt, b).unwrap();
    let max = p.select(gt, a, b).unwrap();
    let s = p.to_signed(max).unwrap();
    let y = p.mul(s, w).unwrap();
    let y = p.add_scalar(y, Scalar::Int(-7)).unwrap();
    p.output("y", y).unwrap();
    (p, s)
}

#[test]
fn a_round_trip_is_refused_unless_allowed_and_then_shown_and_attested() {
    let (p, s) = select_then_arithmetic();
    // Refused by default, naming the operation and the direction.
    let err = session().plan(&p).unwrap_err();
    assert!(
        matches!(&err, Error::Refused { op, msg } if op == "to_signed" && msg.contains("tfhe -> bfv") && msg.contains("round trip")),
        "{err}"
    );
    let allow = PlanOptions {
        allow_round_trips: true,
        ..Default::default()
    };
    let mut keys = session();
    let mut plan = keys.plan_with(&p, allow).unwrap();
    assert_eq!(plan.round_trips(), vec![(s.index(), Engine::Tfhe)]);
    assert!(plan.steps().iter().any(|st| matches!(
        st.kind,
        StepKind::RoundTrip { node, from: Engine::Tfhe, to: Engine::Bfv } if node == s.index()
    )));
    let explained = plan.explain();
    assert!(
        explained.contains("KEY-HOLDER ROUND TRIP tfhe -> bfv"),
        "{explained}"
    );
    assert!(explained.contains(&format!("key-holder round trip at v{}", s.index())));
    let described = route(&plan);
    assert!(
        described
            .params
            .ends_with(&format!("round-trips:v{}(tfhe->bfv)", s.index())),
        "{}",
        described.params
    );
    let inputs = BTreeMap::from([
        ("a".to_string(), ints(&[17, 250])),
        ("b".to_string(), ints(&[99, 3])),
        ("w".to_string(), ints(&[-1000, 4])),
    ]);
    let out = keys.run(&mut plan, &inputs).unwrap();
    assert_eq!(out.get("y"), Some(&ints(&[99 * -1000 - 7, 250 * 4 - 7])));

    // The output's attestation record (its route names the round trip,
    // above) verifies.
    let identity = triskel::attest::Identity::generate().unwrap();
    let records = attest_outputs(&identity, &plan, &out, b"ctx").unwrap();
    let (name, value) = &out.values[0];
    verify_output(identity.public(), &plan, name, value, b"ctx", &records[0]).unwrap();
}

/// A signed BFV value used in CKKS arithmetic (BFV -> CKKS: a round trip).
#[test]
fn a_round_trip_from_bfv_to_ckks_decrypts_to_the_real_result() {
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 3, bound: 50 }).unwrap();
    let d = p.add_scalar(x, Scalar::Int(10)).unwrap();
    let r = p.to_real(d, 1.0 / 64.0).unwrap();
    let sq = p.mul(r, r).unwrap();
    p.output("sq", sq).unwrap();
    assert!(matches!(
        session().plan(&p),
        Err(Error::Refused { op, .. }) if op == "to_real"
    ));
    let mut keys = session();
    let mut plan = keys
        .plan_with(
            &p,
            PlanOptions {
                allow_round_trips: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(plan.round_trips(), vec![(r.index(), Engine::Bfv)]);
    assert_eq!(plan.placements()[sq.index()], Placement::Ckks);
    let values = [-40i128, 0, 50];
    let out = keys
        .run(
            &mut plan,
            &BTreeMap::from([("x".to_string(), ints(&values))]),
        )
        .unwrap();
    let PlainValue::Reals(got) = out.get("sq").unwrap() else {
        panic!("reals expected");
    };
    for (g, v) in got.iter().zip(values) {
        let want = ((v + 10) as f64 / 64.0).powi(2);
        assert!((g - want).abs() < 1e-4, "{g} vs {want}");
    }
}

/// Output privacy: a sum and an inner product computed in BFV slots (their
/// rotation trees leave partial sums in every other slot) are released
/// masked, and an inner product in coefficients (the other coefficients of
/// its product hold partial sums) releases only its coefficient.
#[test]
fn released_outputs_hold_nothing_but_the_asked_values() {
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 4, bound: 100 }).unwrap();
    let s = p.sum(x).unwrap();
    let w = [3, -1, 4, 1].map(Scalar::Int);
    let d = p.dot_plain(x, &w).unwrap();
    let y = p.add_scalar(x, Scalar::Int(5)).unwrap();
    p.output("s", s).unwrap();
    p.output("d", d).unwrap();
    p.output("y", y).unwrap();
    let mut keys = session();
    let mut plan = keys.plan(&p).unwrap();
    assert_eq!(
        plan.bfv()[0].encoding,
        triskel::BfvEncoding::Slots,
        "{}",
        plan.explain()
    );
    let values = [17i128, -100, 55, 3];
    let out = keys
        .run(
            &mut plan,
            &BTreeMap::from([("x".to_string(), ints(&values))]),
        )
        .unwrap();
    let t = plan.bfv()[0].params.plain_modulus() as i128;
    let m = |v: i128| v.rem_euclid(t);
    let sum: i128 = values.iter().sum();
    let dot: i128 = values.iter().zip([3, -1, 4, 1]).map(|(a, b)| a * b).sum();
    assert_eq!(out.get("s"), Some(&ints(&[sum])));
    assert_eq!(out.get("d"), Some(&ints(&[dot])));
    for (name, asked) in [
        ("s", vec![m(sum)]),
        ("d", vec![m(dot)]),
        ("y", values.iter().map(|&v| m(v + 5)).collect()),
    ] {
        let PlainValue::Ints(whole) = keys.released_whole(name).unwrap() else {
            panic!("{name}: not integers");
        };
        assert_eq!(whole.len(), plan.bfv()[0].params.n(), "every slot");
        assert_eq!(&whole[..asked.len()], &asked[..], "{name}");
        assert!(
            whole[asked.len()..].iter().all(|&v| v == 0),
            "{name}: other slots hold {:?}",
            whole
                .iter()
                .filter(|&&v| v != 0)
                .take(8)
                .collect::<Vec<_>>()
        );
    }

    // Coefficient encoding (the part has a decision): only coefficient 0
    // of the inner product's product is released.
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 4, bound: 100 }).unwrap();
    let d = p.dot_plain(x, &w).unwrap();
    let big = p.threshold(d, Scalar::Int(0)).unwrap();
    p.output("d", d).unwrap();
    p.output("big", big).unwrap();
    let mut plan = keys.plan(&p).unwrap();
    assert_eq!(plan.bfv()[0].encoding, triskel::BfvEncoding::Coefficients);
    let out = keys
        .run(
            &mut plan,
            &BTreeMap::from([("x".to_string(), ints(&values))]),
        )
        .unwrap();
    assert_eq!(out.get("d"), Some(&ints(&[dot])));
    assert_eq!(out.get("big"), Some(&PlainValue::Bits(vec![dot >= 0])));
    let t = plan.bfv()[0].params.plain_modulus() as i128;
    assert_eq!(
        keys.released_whole("d").unwrap(),
        ints(&[dot.rem_euclid(t)])
    );
    assert!(keys.released_whole("big").is_err(), "a TFHE output");
}
