//! Argmax of signed BFV values through the BFV -> TFHE transition (every
//! bit of each value read, then a TFHE tournament): decrypted indices
//! against the plaintext argmax, the planner's placement, costs and
//! refusals.

use std::collections::BTreeMap;

use triskel::{
    CostModel, Error, Kind, Placement, PlainValue, Plan, Program, Scalar, Session, StepKind, Value,
};

fn costs() -> CostModel {
    CostModel::builtin()
}

fn signed(p: &mut Program, name: &str, len: usize, bound: u64) -> Value {
    p.input(name, Kind::Signed { len, bound }).unwrap()
}

fn ints(v: &[i128]) -> PlainValue {
    PlainValue::Ints(v.to_vec())
}

/// The plaintext argmax: the first index of the largest value.
fn first_max(values: &[i128]) -> usize {
    let max = values.iter().max().unwrap();
    values.iter().position(|v| v == max).unwrap()
}

/// Runs `p` on `inputs` and returns each output's decrypted integer.
fn run(p: &Program, inputs: BTreeMap<String, PlainValue>) -> (Plan, BTreeMap<String, i128>) {
    let mut plan = triskel::plan(p, &costs()).unwrap();
    let out = Session::with_costs(costs())
        .run(&mut plan, &inputs)
        .unwrap();
    let got = out
        .values
        .iter()
        .map(|(name, v)| match v {
            PlainValue::Ints(x) => (name.clone(), x[0]),
            other => panic!("output {name}: {other:?}"),
        })
        .collect();
    (plan, got)
}

/// Every weak ordering of three values (13: all orders, all ties), at the
/// extremes of the signed range and around zero: the first largest wins.
#[test]
fn exact_argmax_of_signed_values_over_every_ordering_of_three() {
    let bound = 3u64;
    let levels = [-(bound as i128), -1, bound as i128];
    let mut cases: Vec<[i128; 3]> = Vec::new();
    for a in 0..3 {
        for b in 0..3 {
            for c in 0..3 {
                let ranks = [a, b, c];
                // A weak ordering uses its ranks densely from 0.
                let used = (0..3).take_while(|r| ranks.contains(r)).count();
                if ranks.iter().all(|&r| r < used) {
                    cases.push(ranks.map(|r| levels[r]));
                }
            }
        }
    }
    assert_eq!(cases.len(), 13);
    let mut p = Program::new();
    let mut inputs = BTreeMap::new();
    for (k, case) in cases.iter().enumerate() {
        let x = signed(&mut p, &format!("x{k}"), 3, bound);
        let i = p.argmax(x).unwrap();
        p.output(&format!("i{k:02}"), i).unwrap();
        inputs.insert(format!("x{k}"), ints(case));
    }
    let (plan, got) = run(&p, inputs);
    assert!(plan
        .placements()
        .iter()
        .any(|pl| matches!(pl, Placement::BfvToTfhe(_))));
    for (k, case) in cases.iter().enumerate() {
        assert_eq!(
            got[&format!("i{k:02}")],
            first_max(case) as i128,
            "values {case:?}"
        );
    }
}

/// Random values over the match's score range (|score| <= 128 x 127^2, so
/// t = 2^23 as for the match): exactly, and within 2^14 over scores of
/// one plaintext product (the single-product placement), where the
/// winner must lie within 2^14 of the largest.
#[test]
fn argmax_over_the_match_score_range_exact_and_within_a_tolerance() {
    let bound = 128 * 127 * 127u64;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut random = |range: i128| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
        (state >> 20) as i128 % (2 * range + 1) - range
    };
    // Exact, with a tie at the top after a smaller value.
    let mut values: Vec<i128> = (0..4).map(|_| random(bound as i128)).collect();
    values.push(*values.iter().max().unwrap());
    let mut p = Program::new();
    let x = signed(&mut p, "x", values.len(), bound);
    let i = p.argmax(x).unwrap();
    p.output("i", i).unwrap();
    let (plan, got) = run(&p, BTreeMap::from([("x".to_string(), ints(&values))]));
    assert_eq!(
        plan.bfv()[0].params.plain_modulus(),
        1 << 23,
        "the match's t"
    );
    assert_eq!(got["i"], first_max(&values) as i128, "values {values:?}");

    // Six scores of one probe against six templates (dot products with
    // plaintext weights, one product), arg-maxed within 2^14; two scores
    // within the tolerance of each other at the top.
    let len = 16;
    let probe: Vec<i128> = (0..len).map(|_| random(127)).collect();
    let mut p = Program::new();
    let x = signed(&mut p, "probe", len, 127);
    let mut scores = Vec::new();
    let mut plain = Vec::new();
    for j in 0..6 {
        let mut w: Vec<i64> = (0..len).map(|_| random(127) as i64).collect();
        if j == 5 {
            // Within 2^14 of template 4's score, by design of the weights.
            w = plain_weights_near(&probe, &plain, 4);
        }
        let ws: Vec<Scalar> = w.iter().map(|&c| Scalar::Int(c)).collect();
        scores.push(p.dot_plain(x, &ws).unwrap());
        plain.push(w);
    }
    let r = 14;
    let i = p.argmax_within(&scores, r).unwrap();
    p.output("i", i).unwrap();
    let (plan, got) = run(&p, BTreeMap::from([("probe".to_string(), ints(&probe))]));
    assert!(
        plan.scores().iter().flatten().count() == 6,
        "one plaintext product"
    );
    let values: Vec<i128> = plain
        .iter()
        .map(|w| w.iter().zip(&probe).map(|(&a, b)| a as i128 * b).sum())
        .collect();
    let max = *values.iter().max().unwrap();
    let winner = values[got["i"] as usize];
    assert!(
        max - winner <= 1 << r,
        "index {} holds {winner}, the largest is {max} ({values:?})",
        got["i"]
    );
}

/// Weights whose score on `probe` is within a few units of template
/// `near`'s: its weights with one entry nudged.
fn plain_weights_near(probe: &[i128], plain: &[Vec<i64>], near: usize) -> Vec<i64> {
    let mut w = plain[near].clone();
    let k = probe.iter().position(|&v| v != 0).unwrap_or(0);
    w[k] = (w[k] + if w[k] < 127 { 1 } else { -1 }).clamp(-127, 127);
    w
}

/// The planner: an argmax of u8 values runs in TFHE, of signed values by
/// the BFV -> TFHE transition (its step's label names the bits read and
/// the failure bound of all readings); an argmax of reals, of mixed kinds,
/// of too many values, or of values wider than a transition reads is
/// refused before any work, naming the operation.
#[test]
fn the_planner_places_argmax_by_kind_and_refuses_what_cannot_run() {
    let mut p = Program::new();
    let u = p.input("u", Kind::Uint { len: 4, bits: 8 }).unwrap();
    let s = signed(&mut p, "s", 4, 1000);
    let iu = p.argmax(u).unwrap();
    let is = p.argmax(s).unwrap();
    let iw = p.argmax_within(&[s, s], 5).unwrap();
    for (name, v) in [("iu", iu), ("is", is), ("iw", iw)] {
        p.output(name, v).unwrap();
    }
    let plan = triskel::plan(&p, &costs()).unwrap();
    assert_eq!(plan.placements()[iu.index()], Placement::Tfhe);
    assert!(matches!(
        plan.placements()[is.index()],
        Placement::BfvToTfhe(_)
    ));
    assert_eq!(p.kind(is).unwrap(), Kind::Uint { len: 1, bits: 8 });
    let step = |v: Value| {
        plan.steps()
            .iter()
            .find(|st| matches!(st.kind, StepKind::Transition { node, .. } if node == v.index()))
            .unwrap()
    };
    // t = 4096 (values within a quarter of it): 12 bits, or 7 within 2^5.
    assert!(step(is)
        .label
        .contains("12 bootstraps per value (its bits, exact)"));
    assert!(step(iw)
        .label
        .contains("7 bootstraps per value (its bits, within 2^5)"));
    assert!(step(iw).label.contains("for all 8 values"));
    let explain = plan.explain();
    assert!(explain.contains("failure <= 2^"), "{explain}");
    assert!(step(is).predicted_ns > 0.0);

    let program_error = |r: triskel::Result<Value>| match r {
        Err(Error::Program { op, .. }) => op,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 4 }).unwrap();
    assert_eq!(program_error(p.argmax(x)), "argmax");
    let s = signed(&mut p, "s", 4, 10);
    assert_eq!(program_error(p.argmax_within(&[s, x], 0)), "argmax");
    assert_eq!(program_error(p.argmax_within(&[], 0)), "argmax");
    assert_eq!(program_error(p.argmax_within(&[s], 41)), "argmax");
    let wide = signed(&mut p, "wide", 32768, 1);
    assert_eq!(
        program_error(p.argmax_within(&[wide, wide, wide], 0)),
        "argmax"
    );
    // The widest signed values (2^40) read 43 bits (t = 2^43); wider ones
    // are refused when recorded.
    let mut p = Program::new();
    let big = signed(&mut p, "big", 2, 1 << 40);
    assert!(p.add(big, big).is_err());
    let i = p.argmax(big).unwrap();
    p.output("i", i).unwrap();
    let plan = triskel::plan(&p, &costs()).unwrap();
    let label = &plan
        .steps()
        .iter()
        .find(|st| matches!(st.kind, StepKind::Transition { .. }))
        .unwrap()
        .label;
    assert!(label.contains("43 bootstraps per value"), "{label}");
    assert!(label.contains("comparisons of u64"), "{label}");
}
