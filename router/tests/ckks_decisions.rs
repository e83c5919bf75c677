//! CKKS -> TFHE decisions planned by the router (coefficient-encoded reals,
//! `threshold_real`), and the masking of released CKKS outputs.

use std::collections::BTreeMap;

use triskel::{
    CostModel, Engine, Error, Kind, Placement, PlainValue, Program, ReleaseMask, Scalar, Session,
    StepKind,
};

fn session() -> Session {
    Session::with_costs(CostModel::builtin())
}

fn reals(v: &[f64]) -> PlainValue {
    PlainValue::Reals(v.to_vec())
}

/// Deterministic pseudo-random reals in [-1, 1] (xorshift).
fn random_reals(count: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn refused_op<T: std::fmt::Debug>(r: triskel::Result<T>) -> String {
    match r {
        Err(Error::Refused { op, .. }) => op,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Reals thresholded on TFHE without decrypting them: the inputs, a
/// difference of two inputs and an inner product with plaintext weights
/// plus a constant, all in coefficient encoding. Values farther than the
/// tolerance from the threshold are decided right; the closest ones sit
/// inside it and may get either bit.
#[test]
fn thresholds_on_reals_are_decided_through_tfhe() {
    let len = 12;
    let tolerance = 2f64.powi(-10);
    let threshold = 0.25;
    let weights: Vec<f64> = random_reals(len, 7).iter().map(|w| w / 2.0).collect();
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len }).unwrap();
    let y = p.input("y", Kind::Real { len }).unwrap();
    let above = p.threshold_real(x, threshold, tolerance).unwrap();
    let d = p.sub(x, y).unwrap();
    let x_ge_y = p.threshold_real(d, 0.0, tolerance).unwrap();
    let w: Vec<Scalar> = weights.iter().map(|&w| Scalar::Real(w)).collect();
    let score = p.dot_plain(x, &w).unwrap();
    let shifted = p.add_scalar(score, Scalar::Real(0.125)).unwrap();
    let scaled = p.mul_scalar(shifted, Scalar::Real(-2.0)).unwrap();
    let score_high = p.threshold_real(scaled, -0.5, tolerance).unwrap();
    p.output("above", above).unwrap();
    p.output("x>=y", x_ge_y).unwrap();
    p.output("score_high", score_high).unwrap();
    p.output("scaled", scaled).unwrap();
    let mut keys = session();
    let mut plan = keys.plan(&p).unwrap();
    let explained = plan.explain();
    println!("{explained}");
    assert_eq!(plan.placements()[above.index()], Placement::CkksToTfhe);
    assert_eq!(plan.placements()[score_high.index()], Placement::CkksToTfhe);
    for v in [x, y, d, score, shifted, scaled] {
        assert!(plan.packing()[v.index()].coefficients, "{explained}");
    }
    assert!(explained.contains("transition ckks -> tfhe"), "{explained}");
    assert!(plan.steps().iter().any(|s| matches!(
        s.kind,
        StepKind::Transition {
            from: Engine::Ckks,
            to: Engine::Tfhe,
            ..
        }
    )));
    assert!(plan
        .route()
        .contains("(transition ckks->tfhe, homomorphic)"));

    // Coefficient-encoded inner products rotate nothing: no Galois keys.
    let ckks_keys = plan
        .steps()
        .iter()
        .find(|s| matches!(s.kind, StepKind::Keygen(Engine::Ckks, _)))
        .unwrap();
    assert!(
        ckks_keys.label.contains("keys (0 rotations)"),
        "{explained}"
    );

    // Values on both sides of the threshold, some within the tolerance.
    let mut xs = random_reals(len, 1);
    xs[0] = threshold + 3.0 * tolerance;
    xs[1] = threshold - 3.0 * tolerance;
    xs[2] = threshold + tolerance / 4.0;
    xs[3] = threshold;
    let mut ys = random_reals(len, 2);
    ys[4] = xs[4] - 2.0 * tolerance;
    ys[5] = xs[5] + 2.0 * tolerance;
    ys[6] = xs[6];
    let out = keys
        .run(
            &mut plan,
            &BTreeMap::from([("x".to_string(), reals(&xs)), ("y".to_string(), reals(&ys))]),
        )
        .unwrap();
    let bits = |name: &str| match out.get(name) {
        Some(PlainValue::Bits(b)) => b.clone(),
        other => panic!("{name}: {other:?}"),
    };
    let check = |name: &str, got: &[bool], values: &[f64], t: f64| {
        let mut decided = 0;
        for (k, (&bit, &v)) in got.iter().zip(values).enumerate() {
            if (v - t).abs() > tolerance {
                assert_eq!(bit, v >= t, "{name}[{k}]: {v} against {t}");
                decided += 1;
            }
        }
        decided
    };
    let diffs: Vec<f64> = xs.iter().zip(&ys).map(|(a, b)| a - b).collect();
    assert!(check("above", &bits("above"), &xs, threshold) >= len - 2);
    assert!(check("x>=y", &bits("x>=y"), &diffs, 0.0) >= len - 1);
    let dot: f64 = xs.iter().zip(&weights).map(|(a, b)| a * b).sum();
    let want = -2.0 * (dot + 0.125);
    check("score_high", &bits("score_high"), &[want], -0.5);
    // The real output is extracted from its coefficient: only it leaves.
    let Some(PlainValue::Reals(got)) = out.get("scaled") else {
        panic!("scaled: {:?}", out.get("scaled"));
    };
    assert!((got[0] - want).abs() < 1e-6, "{} vs {want}", got[0]);
    assert_eq!(
        keys.released_whole("scaled").unwrap(),
        PlainValue::Reals(got.clone())
    );
}

/// A tolerance finer than the CKKS error bound, values the torus cannot
/// hold, and operations the coefficient encoding cannot run are refused
/// at plan time, naming the operation.
#[test]
fn real_decisions_the_path_cannot_give_are_refused() {
    let keys = session();
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 4 }).unwrap();
    let t = p.threshold_real(x, 0.0, 1e-12).unwrap();
    p.output("t", t).unwrap();
    let err = keys.plan(&p).unwrap_err();
    assert!(
        err.to_string().contains("finer than the CKKS error bound"),
        "{err}"
    );
    assert_eq!(refused_op(keys.plan(&p)), "threshold_real");

    // A weight sum of 4096 takes values beyond what the reading holds.
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 4 }).unwrap();
    let s = p.dot_plain(x, &[Scalar::Real(1024.0); 4]).unwrap();
    let t = p.threshold_real(s, 0.0, 0.01).unwrap();
    p.output("t", t).unwrap();
    assert_eq!(refused_op(keys.plan(&p)), "threshold_real");

    // A product has no coefficient-encoded form.
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 4 }).unwrap();
    let sq = p.mul(x, x).unwrap();
    let t = p.threshold_real(sq, 0.5, 0.01).unwrap();
    p.output("t", t).unwrap();
    assert_eq!(refused_op(keys.plan(&p)), "mul");

    // Nor a rotation-tree sum, even one only feeding the decision's group.
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 4 }).unwrap();
    let s = p.sum(x).unwrap();
    let t = p.threshold_real(x, 0.5, 0.01).unwrap();
    p.output("t", t).unwrap();
    p.output("s", s).unwrap();
    assert_eq!(refused_op(keys.plan(&p)), "sum");

    // Exact comparisons of reals do not exist.
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 4 }).unwrap();
    assert!(p
        .compare_scalar(x, triskel::Cmp::Ge, Scalar::Real(0.5))
        .is_err());
    assert!(p.threshold_real(x, 0.5, 0.0).is_err());
    assert!(p.threshold_real(x, f64::NAN, 0.1).is_err());
}

/// CKKS outputs in slots are released masked: the whole released
/// ciphertext decrypts to the asked values and ~0 everywhere else, whether
/// the value's other slots held copies (periodic packing), a rotation
/// tree's partial sums or a linear transform's output. A scalar product
/// carries the mask in its own plaintext (no extra level).
#[test]
fn released_ckks_outputs_hold_only_the_asked_slots() {
    let xs = [0.5, -0.25, 0.75, 0.125, -0.5];
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 5 }).unwrap();
    let s = p.sum(x).unwrap();
    let m = p.mul_scalar(x, Scalar::Real(0.5)).unwrap();
    let a = p.add_scalar(x, Scalar::Real(0.25)).unwrap();
    let rows = vec![vec![0.5, 0.25, 0.0, -1.0, 0.5], vec![1.0; 5]];
    let mv = p.matvec(&rows, x).unwrap();
    for (name, v) in [("s", s), ("m", m), ("a", a), ("mv", mv)] {
        p.output(name, v).unwrap();
    }
    let mut keys = session();
    let mut plan = keys.plan(&p).unwrap();
    assert_eq!(plan.packing()[m.index()].release, ReleaseMask::Folded);
    assert_eq!(plan.packing()[s.index()].release, ReleaseMask::Product);
    assert_eq!(plan.packing()[x.index()].release, ReleaseMask::None);
    let out = keys
        .run(&mut plan, &BTreeMap::from([("x".to_string(), reals(&xs))]))
        .unwrap();
    let slots = plan.ckks().as_ref().unwrap().slots();
    let sum: f64 = xs.iter().sum();
    let mv_want: Vec<f64> = rows
        .iter()
        .map(|r| r.iter().zip(&xs).map(|(a, b)| a * b).sum())
        .collect();
    for (name, asked) in [
        ("s", vec![sum]),
        ("m", xs.iter().map(|v| v * 0.5).collect()),
        ("a", xs.iter().map(|v| v + 0.25).collect()),
        ("mv", mv_want),
    ] {
        let Some(PlainValue::Reals(got)) = out.get(name) else {
            panic!("{name}");
        };
        let PlainValue::Reals(whole) = keys.released_whole(name).unwrap() else {
            panic!("{name}: not reals");
        };
        assert_eq!(whole.len(), slots, "{name}: every slot");
        assert_eq!(&whole[..asked.len()], &got[..], "{name}");
        for (k, (g, w)) in got.iter().zip(&asked).enumerate() {
            assert!((g - w).abs() < 1e-5, "{name}[{k}]: {g} vs {w}");
        }
        let worst = whole[asked.len()..]
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(worst < 1e-5, "{name}: another slot holds {worst}");
    }
}
