//! `Client` and `Server` through their byte formats: a round trip made as a
//! protocol step, and refusals of keys, choices and inputs that do not
//! belong together.

use std::collections::BTreeMap;

use triskel::attest::Identity;
use triskel::{
    Client, CostModel, EncryptedInputs, EncryptedOutputs, Error, EvaluationKeys, Kind, PlainValue,
    PlanOptions, Program, Scalar, Server,
};

const LIMIT: u64 = 1 << 30;

fn client(p: &Program, options: PlanOptions) -> Client {
    Client::with_costs(p, options, &CostModel::builtin()).unwrap()
}

/// Serialized and loaded again, as between two processes.
fn over_the_wire(
    keys: &EvaluationKeys,
    inputs: &EncryptedInputs,
) -> (EvaluationKeys, EncryptedInputs) {
    (
        EvaluationKeys::from_bytes(&keys.to_bytes(), LIMIT).unwrap(),
        EncryptedInputs::from_bytes(&inputs.to_bytes(), LIMIT).unwrap(),
    )
}

fn ints(v: &[i128]) -> PlainValue {
    PlainValue::Ints(v.to_vec())
}

/// A BFV value used in CKKS arithmetic: BFV -> CKKS has no homomorphic
/// path, so the server hands the value to the key holder, who converts it
/// and sends it back.
#[test]
fn a_round_trip_is_a_protocol_step() {
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 3, bound: 50 }).unwrap();
    let d = p.add_scalar(x, Scalar::Int(10)).unwrap();
    let r = p.to_real(d, 1.0 / 64.0).unwrap();
    let sq = p.mul(r, r).unwrap();
    p.output("sq", sq).unwrap();
    let options = PlanOptions {
        allow_round_trips: true,
        ..Default::default()
    };
    let mut c = client(&p, options);
    let values = [-40i128, 0, 50];
    let sent = c
        .encrypt_with_context(&BTreeMap::from([("x".into(), ints(&values))]), b"ctx")
        .unwrap();
    let server = Server::new(Identity::generate().unwrap());
    let public = server.identity().public().clone();
    let (keys, inputs) = over_the_wire(c.evaluation_keys().unwrap(), &sent);
    let first = server.run(&p, keys.choice(), &keys, &inputs).unwrap();
    assert!(!first.is_final());
    assert!(matches!(
        c.decrypt(&first, &public),
        Err(Error::Refused { .. })
    ));
    let first = EncryptedOutputs::from_bytes(&first.to_bytes(), LIMIT).unwrap();
    let next = c.continue_round_trips(&sent, &first, &public).unwrap();
    let next = EncryptedInputs::from_bytes(&next.to_bytes(), LIMIT).unwrap();
    let done = server.run(&p, keys.choice(), &keys, &next).unwrap();
    assert!(done.is_final());
    let out = c.decrypt(&done, &public).unwrap();
    let PlainValue::Reals(got) = out.get("sq").unwrap() else {
        panic!("reals expected");
    };
    for (g, v) in got.iter().zip(values) {
        let want = ((v + 10) as f64 / 64.0).powi(2);
        assert!((g - want).abs() < 1e-4, "{g} vs {want}");
    }
    // Another server's identity does not verify.
    let other = Identity::generate().unwrap();
    assert!(c.decrypt(&done, other.public()).is_err());
}

fn dot_program() -> Program {
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 8, bound: 100 }).unwrap();
    let y = p.input("y", Kind::Signed { len: 8, bound: 100 }).unwrap();
    let d = p.dot(x, y).unwrap();
    p.output("d", d).unwrap();
    p
}

#[test]
fn a_server_refuses_what_does_not_belong_together() {
    let p = dot_program();
    let mut a = client(&p, PlanOptions::default());
    let mut b = client(&p, PlanOptions::default());
    let values = BTreeMap::from([
        ("x".to_string(), ints(&[1, -2, 3, -4, 5, -6, 7, -8])),
        ("y".to_string(), ints(&[8, 7, 6, 5, 4, 3, 2, 1])),
    ]);
    let server = Server::new(Identity::generate().unwrap());
    let keys = a.evaluation_keys().unwrap().clone();
    let inputs = a.encrypt(&values).unwrap();
    let out = server.run(&p, keys.choice(), &keys, &inputs).unwrap();
    let got = a.decrypt(&out, server.identity().public()).unwrap();
    assert_eq!(
        got.get("d"),
        Some(&ints(&[8 - 14 + 18 - 20 + 20 - 18 + 14 - 8]))
    );
    // A raised cancel flag stops the run; a lowered one changes nothing.
    let raised = std::sync::atomic::AtomicBool::new(true);
    assert!(matches!(
        server.run_cancellable(&p, keys.choice(), &keys, &inputs, &raised),
        Err(Error::Cancelled)
    ));
    let lowered = std::sync::atomic::AtomicBool::new(false);
    let again = server
        .run_cancellable(&p, keys.choice(), &keys, &inputs, &lowered)
        .unwrap();
    assert_eq!(a.decrypt(&again, server.identity().public()).unwrap(), got);

    let refused = |r: triskel::Result<EncryptedOutputs>, needle: &str| match r {
        Err(e) => assert!(
            e.to_string().contains(needle),
            "{e} does not say {needle:?}"
        ),
        Ok(_) => panic!("accepted; expected a refusal naming {needle:?}"),
    };
    // Another client's inputs under these keys.
    let theirs = b.encrypt(&values).unwrap();
    refused(
        server.run(&p, keys.choice(), &keys, &theirs),
        "another key set",
    );
    // Another program.
    let mut q = dot_program();
    let z = q.input("z", Kind::Signed { len: 8, bound: 100 }).unwrap();
    q.output("z", z).unwrap();
    refused(server.run(&q, keys.choice(), &keys, &inputs), "another");
    // A choice naming another BFV set than the keys were made for.
    let mut choice = keys.choice().clone();
    choice.bfv[0] = "bfv-n32768-128".into();
    refused(
        server.run(&p, &choice, &keys, &inputs),
        "another plan choice",
    );
    // Another client's outputs are not this client's to decrypt.
    assert!(b.decrypt(&out, server.identity().public()).is_err());
    // A truncated or oversized file is refused before it is used.
    let bytes = keys.to_bytes();
    assert!(EvaluationKeys::from_bytes(&bytes[..bytes.len() - 1], LIMIT).is_err());
    assert!(EvaluationKeys::from_bytes(&bytes, bytes.len() as u64 - 1).is_err());
    let bytes = inputs.to_bytes();
    assert!(EncryptedInputs::from_bytes(&bytes[..bytes.len() - 3], LIMIT).is_err());
    assert!(EncryptedInputs::from_bytes(&bytes, 16).is_err());
}

#[test]
fn a_choice_the_rules_do_not_give_is_refused() {
    let p = dot_program();
    let plan = triskel::plan(&p, &CostModel::builtin()).unwrap();
    let mut choice = plan.choice();
    assert!(triskel::plan_chosen(&p, &choice).is_ok());
    // The product on TFHE instead of BFV: not what the capability rules give.
    choice.engines[2] = triskel::Engine::Tfhe;
    assert!(matches!(
        triskel::plan_chosen(&p, &choice),
        Err(Error::Refused { op, .. }) if op == "plan choice"
    ));
    // A set that is no named set.
    let mut choice = plan.choice();
    choice.bfv[0] = "bfv-n1024-toy".into();
    assert!(triskel::plan_chosen(&p, &choice).is_err());
    // The bytes of a choice load to the same choice.
    let choice = plan.choice();
    assert_eq!(
        triskel::PlanChoice::from_bytes(&choice.to_bytes(), 1 << 20).unwrap(),
        choice
    );
}

#[test]
fn a_client_saves_and_loads_its_secret_state() {
    let p = dot_program();
    let mut c = client(&p, PlanOptions::default());
    let values = BTreeMap::from([
        ("x".to_string(), ints(&[1, 2, 3, 4, 5, 6, 7, 8])),
        ("y".to_string(), ints(&[1, 1, 1, 1, 1, 1, 1, 1])),
    ]);
    let inputs = c.encrypt(&values).unwrap();
    let server = Server::new(Identity::generate().unwrap());
    let keys = c.evaluation_keys().unwrap();
    let out = server.run(&p, keys.choice(), keys, &inputs).unwrap();
    let dir = std::env::temp_dir().join(format!("triskel-client-state-{}", std::process::id()));
    c.save(&dir).unwrap();
    let loaded = Client::load(&dir).unwrap();
    std::fs::remove_file(&dir).unwrap();
    assert_eq!(loaded.key_set(), c.key_set());
    let got = loaded.decrypt(&out, server.identity().public()).unwrap();
    assert_eq!(got.get("d"), Some(&ints(&[36])));
    assert!(loaded.evaluation_keys().is_err());
    let bytes = c.to_bytes();
    assert!(Client::from_bytes(&bytes[..bytes.len() - 1], LIMIT).is_err());
}
