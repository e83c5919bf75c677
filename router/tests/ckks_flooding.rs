//! Noise flooding of the CKKS outputs a session releases
//! (`Session::flood_ckks_releases`): B from a trial run under another
//! session's keys, the flooded outputs within their deviation, and the
//! refusals.

mod common;

use std::collections::BTreeMap;

use common::mul_chain;

use triskel::ckks::{CkksParameters, Flooding};
use triskel::{CostModel, Error, Kind, PlainValue, PlanOptions, Program, Scalar, Session};

const REAL8: Kind = Kind::Real { len: 8 };

fn session() -> Session {
    Session::with_costs(CostModel::builtin())
}

const XS: [f64; 5] = [0.5, -0.25, 0.75, 0.125, -0.5];

/// x / 2 (released at the level below the top) and the sum of x^2 (a
/// product and a masked sum: released at level 0).
fn program() -> Program {
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 5 }).unwrap();
    let half = p.mul_scalar(x, Scalar::Real(0.5)).unwrap();
    let sq = p.mul(x, x).unwrap();
    let norm = p.sum(sq).unwrap();
    p.output("half", half).unwrap();
    p.output("norm", norm).unwrap();
    p
}

fn inputs() -> BTreeMap<String, PlainValue> {
    BTreeMap::from([("x".to_string(), PlainValue::Reals(XS.to_vec()))])
}

fn expected() -> [(&'static str, Vec<f64>); 2] {
    [
        ("half", XS.iter().map(|v| v / 2.0).collect()),
        ("norm", vec![XS.iter().map(|v| v * v).sum()]),
    ]
}

/// The deviation of each slot's real part under `flooding` in `params`: a
/// Gaussian of deviation sqrt(N / 2) sigma / scale.
fn slot_deviation(params: &CkksParameters, flooding: &Flooding) -> f64 {
    let n = 2 * params.slots();
    (n as f64 / 2.0).sqrt() * flooding.sigma(n).unwrap() / f64::exp2(params.log_scale() as f64)
}

fn reals(v: Option<&PlainValue>) -> Vec<f64> {
    match v {
        Some(PlainValue::Reals(r)) => r.clone(),
        other => panic!("not reals: {other:?}"),
    }
}

/// Plans the program with `options`, floods its releases with B from a
/// trial run, and checks them against their deviation; returns the set's
/// name and the slot deviation. Its keys flood six times (two runs of two
/// outputs, and one audit of each output): alpha = 6.
fn flooded_releases(options: PlanOptions) -> (String, f64) {
    let p = program();
    // B from a trial run under a separate session's keys, plus one bit.
    let mut trial = session();
    let mut plan = trial.plan_with(&p, options).unwrap();
    trial.run(&mut plan, &inputs()).unwrap();
    let b = expected()
        .iter()
        .map(|(name, want)| trial.release_noise_bound_log2(name, want).unwrap())
        .fold(0.0, f64::max)
        + 1.0;
    assert!((3.0..30.0).contains(&b), "B = 2^{b}");
    let flooding = Flooding {
        decryptions: 6,
        ..Flooding::new(b)
    };
    let params = plan.ckks().unwrap().clone();
    let sigma = flooding.sigma(2 * params.slots()).unwrap();
    let sd = slot_deviation(&params, &flooding);

    eprintln!(
        "{}: B = 2^{b:.2}, sigma = 2^{:.2}, slot deviation {sd:.2e}",
        params.name(),
        sigma.log2()
    );
    let mut keys = session();
    keys.flood_ckks_releases(Some(flooding));
    let mut plan = keys.plan_with(&p, options).unwrap();
    let first = keys.run(&mut plan, &inputs()).unwrap();
    let second = keys.run(&mut plan, &inputs()).unwrap();
    for (name, want) in expected() {
        let (a, c) = (reals(first.get(name)), reals(second.get(name)));
        for (k, (g, w)) in a.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() < 7.0 * sd,
                "{name}[{k}]: {g} vs {w}, sd {sd:e}"
            );
        }
        // A fresh flood each run.
        assert_ne!(a, c, "{name}");
        // Every other slot of the release decrypts to 0 plus the flood:
        // its deviation over the n/2 - len slots, within 6% (five relative
        // standard errors of 1 / sqrt(2 x 4091)).
        let PlainValue::Reals(whole) = keys.released_whole(name).unwrap() else {
            panic!("{name}");
        };
        let rest = &whole[want.len()..];
        let measured = (rest.iter().map(|v| v * v).sum::<f64>() / rest.len() as f64).sqrt();
        assert!(
            (measured / sd - 1.0).abs() < 0.06,
            "{name}: deviation {measured:e}, flooding's {sd:e}"
        );
    }
    // Turned off again: plain decryptions, within 1e-5.
    keys.flood_ckks_releases(None);
    let plain = keys.run(&mut plan, &inputs()).unwrap();
    for (name, want) in expected() {
        let got = reals(plain.get(name));
        assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-5));
    }
    (params.name().to_string(), sd)
}

#[test]
fn flooded_releases_decode_within_their_deviation() {
    let (set, sd) = flooded_releases(PlanOptions::default());
    assert_eq!(set, "ckks-n8192");
    // Flooding at scale 2^40 leaves about 7 bits.
    assert!(sd > 1e-3, "{sd:e}");
}

#[test]
fn a_larger_scale_floods_two_orders_of_magnitude_tighter() {
    let (_, sd40) = flooded_releases(PlanOptions::default());
    let (set, sd50) = flooded_releases(PlanOptions {
        ckks_scale_log2: Some(50),
        ..Default::default()
    });
    assert_eq!(set, "ckks-n16384-s50");
    // 2^10 of scale, less a factor 2 for N (sigma grows with sqrt(N), the
    // slot deviation with sqrt(N) sigma) and what B gains: about 2^8.5.
    assert!(sd50 * 100.0 < sd40, "2^50: {sd50:e}, 2^40: {sd40:e}");
    // sqrt(6) times a single decryption's deviation (about 6e-4): 1.6e-3.
    assert!(sd50 < 3e-3, "{sd50:e}");
}

#[test]
fn a_scale_request_takes_the_smallest_set_that_holds_it_or_is_refused() {
    let scale = |s: u32| PlanOptions {
        ckks_scale_log2: Some(s),
        ..Default::default()
    };
    let set = |p: &Program, options| {
        session()
            .plan_with(p, options)
            .map(|pl| pl.ckks().unwrap().clone())
    };
    // The released value takes one more level for its mask.
    for (depth, want) in [
        (0, "ckks-n16384-s50"),
        (4, "ckks-n16384-s50"),
        (5, "ckks-n32768-s50"),
        (11, "ckks-n32768-s50"),
    ] {
        let got = set(&mul_chain(REAL8, depth), scale(50)).unwrap();
        assert_eq!(got.name(), want, "depth {depth}");
        assert!(got.log_scale() >= 50);
    }
    // A request the default sets meet keeps them, though the set of scale
    // 2^50 at N = 16384 holds the program too and has fewer primes.
    for options in [scale(40), PlanOptions::default()] {
        assert_eq!(
            set(&mul_chain(REAL8, 3), options).unwrap().name(),
            "ckks-n16384"
        );
    }
    match set(&mul_chain(REAL8, 12), scale(50)) {
        Err(Error::Refused { msg, .. }) => {
            assert!(
                msg.contains("depth 13") && msg.contains("scale 2^50"),
                "{msg}"
            )
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    match set(&mul_chain(REAL8, 0), scale(51)) {
        Err(Error::Refused { msg, .. }) => {
            assert!(
                msg.contains("2^51") && msg.contains("largest is 2^50"),
                "{msg}"
            )
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_flood_the_level_cannot_hold_is_an_error() {
    let p = program();
    let mut keys = session();
    // alpha = 4 (two runs of two outputs): sigma = 2^24.8 B.
    let flooding = |b| Flooding {
        decryptions: 4,
        ..Flooding::new(b)
    };
    // sigma = 2^49.8: 9.5 sigma reaches Q_0 / 2 = 2^49 at the level "norm"
    // is released at.
    keys.flood_ckks_releases(Some(flooding(25.0)));
    let mut plan = keys.plan(&p).unwrap();
    match keys.run(&mut plan, &inputs()) {
        Err(Error::Ckks(e)) => assert!(e.to_string().contains("would wrap"), "{e}"),
        other => panic!("expected the overflow error, got {other:?}"),
    }
    // Above the sampler's 2^59: refused whatever the level.
    keys.flood_ckks_releases(Some(flooding(36.0)));
    match keys.run(&mut plan, &inputs()) {
        Err(Error::Ckks(e)) => assert!(e.to_string().contains("2^59"), "{e}"),
        other => panic!("expected the sampler's limit, got {other:?}"),
    }
    // A trial bound for an output that was not released in slots.
    assert!(matches!(
        keys.release_noise_bound_log2("missing", &[0.0]),
        Err(Error::Input(_))
    ));
}

#[test]
fn coefficient_encoded_outputs_are_not_flooded_silently() {
    // A real read by a threshold runs in coefficient encoding and leaves as
    // extracted LWE values: flooding them is refused, not skipped.
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 5 }).unwrap();
    let d = p.mul_scalar(x, Scalar::Real(2.0)).unwrap();
    let above = p.threshold_real(d, 0.0, 2f64.powi(-10)).unwrap();
    p.output("d", d).unwrap();
    p.output("above", above).unwrap();
    let mut keys = session();
    keys.flood_ckks_releases(Some(Flooding::new(8.0)));
    let mut plan = keys.plan(&p).unwrap();
    assert!(plan.packing()[d.index()].coefficients);
    assert!(matches!(
        keys.run(&mut plan, &inputs()),
        Err(Error::Unsupported(_))
    ));
}

/// Flooding with alpha = 3 lets the session's CKKS key open three values:
/// a run of two outputs, then a run of one; a run that would pass alpha
/// fails before it decrypts anything, and so does an audit beyond it.
#[test]
fn the_session_refuses_the_flooded_release_beyond_alpha() {
    let exhausted = |r: Result<(), Error>, done: u64, asked: u64| match r {
        Err(Error::Ckks(e)) => {
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("made {done} flooded"))
                    && msg.contains(&format!("{asked} more would exceed alpha = 3")),
                "{msg}"
            )
        }
        other => panic!("expected the count's refusal, got {other:?}"),
    };
    let p = program();
    let mut half = Program::new();
    let x = half.input("x", Kind::Real { len: 5 }).unwrap();
    let h = half.mul_scalar(x, Scalar::Real(0.5)).unwrap();
    half.output("half", h).unwrap();
    let flooding = Flooding {
        decryptions: 3,
        ..Flooding::new(8.0)
    };
    let mut keys = session();
    keys.flood_ckks_releases(Some(flooding));
    let mut plan = keys.plan(&p).unwrap();
    let mut half_plan = keys.plan(&half).unwrap();
    assert_eq!(plan.ckks(), half_plan.ckks());
    // Plain runs do not count.
    keys.flood_ckks_releases(None);
    keys.run(&mut plan, &inputs()).unwrap();
    keys.flood_ckks_releases(Some(flooding));
    keys.run(&mut plan, &inputs()).unwrap();
    // Two more would make four: refused, and nothing is released.
    exhausted(keys.run(&mut plan, &inputs()).map(drop), 2, 2);
    assert!(matches!(keys.released_whole("half"), Err(Error::Input(_))));
    // The third flood (the same keys: no new rotation or relinearization).
    let third = keys.run(&mut half_plan, &inputs()).unwrap();
    let got = reals(third.get("half"));
    // Within 7 slot deviations of the flood (as in `flooded_releases`): at B = 2^8 the
    // deviation is about 0.35, so a fixed bound of 1.0 failed about 3 % of runs.
    let sd = slot_deviation(half_plan.ckks().unwrap(), &flooding);
    assert!(
        got.iter()
            .zip(&expected()[0].1)
            .all(|(g, w)| (g - w).abs() < 7.0 * sd),
        "{got:?}, sd {sd:e}"
    );
    // An audit of it would be the fourth.
    exhausted(keys.released_whole("half").map(drop), 3, 1);
    exhausted(keys.run(&mut half_plan, &inputs()).map(drop), 3, 1);
}
