//! Threshold keys: n parties generate a BFV and CKKS program's keys
//! together, an unchanged server runs it, and any k parties decrypt.

use std::collections::BTreeMap;

use triskel::attest::{Identity, PublicIdentity};
use triskel::{
    Client, Cmp, CostModel, EncryptedInputs, EncryptedOutputs, Encryptor, Error, EvaluationKeys,
    Kind, Party, PartySession, PlainValue, PlanOptions, Program, Scalar, Server, Session,
};

const LIMIT: u64 = 1 << 30;
const WEIGHTS: [i64; 8] = [3, -1, 4, 1, -5, 9, 2, -6];

/// Match scores (a dot product with public weights, which needs rotation
/// keys) and an element-wise product (which needs a relinearization key).
fn scores() -> Program {
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 8, bound: 100 }).unwrap();
    let y = p.input("y", Kind::Signed { len: 8, bound: 100 }).unwrap();
    let s = p.dot_plain(x, &WEIGHTS.map(Scalar::Int)).unwrap();
    let m = p.mul(x, y).unwrap();
    p.output("score", s).unwrap();
    p.output("product", m).unwrap();
    p
}

fn session(p: &Program, k: u16, n: u16) -> triskel::Result<PartySession> {
    PartySession::with_costs(
        p,
        PlanOptions::default().threshold(k, n),
        &CostModel::builtin(),
    )
}

/// Every party of `session` through the key generation rounds, the
/// messages passed as bytes.
fn keygen(session: &PartySession) -> Vec<Party> {
    let n = session.plan().choice().options.threshold.unwrap().n;
    // The session travels as bytes too.
    let session = PartySession::from_bytes(&session.to_bytes(), LIMIT).unwrap();
    let mut parties: Vec<Party> = (0..n).map(|i| Party::new(&session, i).unwrap()).collect();
    let round1: Vec<_> = parties
        .iter_mut()
        .map(|q| q.keygen_round1().unwrap())
        .collect();
    let public: Vec<Vec<u8>> = round1.iter().map(|r| r.public.clone()).collect();
    let round2: Vec<Vec<u8>> = parties
        .iter_mut()
        .enumerate()
        .map(|(j, q)| {
            let deals: Vec<Vec<u8>> = round1.iter().map(|r| r.deals[j].to_vec()).collect();
            q.keygen_round2(&public, &deals).unwrap()
        })
        .collect();
    for q in &mut parties {
        q.keygen_finish(&round2).unwrap();
    }
    parties
}

fn ints(v: &[i128]) -> PlainValue {
    PlainValue::Ints(v.to_vec())
}

struct Run {
    inputs: EncryptedInputs,
    outputs: EncryptedOutputs,
    server: PublicIdentity,
}

/// A fresh server's run of `p` on `inputs`.
fn served(p: &Program, keys: &EvaluationKeys, inputs: EncryptedInputs) -> Run {
    let server = Server::new(Identity::generate().unwrap());
    let outputs = server.run(p, keys.choice(), keys, &inputs).unwrap();
    Run {
        inputs,
        outputs,
        server: server.identity().public().clone(),
    }
}

/// An outside encryptor encrypts `x` and `y`; the server sees the keys
/// and the inputs as bytes.
fn run(p: &Program, keys: &EvaluationKeys, x: &[i128], y: &[i128]) -> Run {
    let keys = EvaluationKeys::from_bytes(&keys.to_bytes(), LIMIT).unwrap();
    let inputs = Encryptor::new(p, &keys)
        .unwrap()
        .encrypt(
            &BTreeMap::from([("x".into(), ints(x)), ("y".into(), ints(y))]),
            b"ctx",
        )
        .unwrap();
    let server = Server::new(Identity::generate().unwrap());
    let wire = EncryptedInputs::from_bytes(&inputs.to_bytes(), LIMIT).unwrap();
    let outputs = server.run(p, keys.choice(), &keys, &wire).unwrap();
    let outputs = EncryptedOutputs::from_bytes(&outputs.to_bytes(), LIMIT).unwrap();
    Run {
        inputs,
        outputs,
        server: server.identity().public().clone(),
    }
}

fn shares(parties: &[Party], r: &Run, set: &[u16]) -> Vec<Vec<u8>> {
    set.iter()
        .map(|&j| {
            parties[j as usize]
                .decryption_share(&r.outputs, &r.inputs, &r.server, set)
                .unwrap()
        })
        .collect()
}

fn decrypt(
    parties: &[Party],
    r: &Run,
    set: &[u16],
    by: usize,
) -> triskel::Result<triskel::Outputs> {
    parties[by].combine(
        &r.outputs,
        &r.inputs,
        &r.server,
        set,
        &shares(parties, r, set),
    )
}

fn refused_with(e: Error, words: &str) {
    assert!(e.to_string().contains(words), "{e}");
}

const X: [i128; 8] = [12, -7, 100, 0, 55, -100, 3, 9];
const Y: [i128; 8] = [-4, 8, 1, 99, -2, 7, 0, -100];

fn expected() -> (i128, Vec<i128>) {
    let score = X.iter().zip(&WEIGHTS).map(|(a, &b)| a * b as i128).sum();
    (score, X.iter().zip(&Y).map(|(a, b)| a * b).collect())
}

#[test]
fn three_of_five_generate_keys_and_any_three_decrypt() {
    let p = scores();
    let s = session(&p, 3, 5).unwrap();
    let explained = s.plan().explain();
    assert!(
        explained.contains("threshold keys: 3 of 5 parties")
            && explained.contains("a private Shamir deal to each party"),
        "{explained}"
    );
    let parties = keygen(&s);
    let keys = parties[0].evaluation_keys().unwrap();
    for q in &parties[1..] {
        assert_eq!(q.evaluation_keys().unwrap().id(), keys.id());
    }
    let r = run(&p, keys, &X, &Y);
    let (score, product) = expected();
    for (set, by) in [([0u16, 2, 4], 2), ([1, 2, 3], 1), ([4, 1, 0], 0)] {
        let out = decrypt(&parties, &r, &set, by).unwrap();
        assert_eq!(out.get("score"), Some(&ints(&[score])), "{set:?}");
        assert_eq!(out.get("product"), Some(&ints(&product)), "{set:?}");
    }
    // A party encrypts too.
    let inputs = parties[3]
        .encrypt(
            &BTreeMap::from([("x".into(), ints(&Y)), ("y".into(), ints(&X))]),
            &[],
        )
        .unwrap();
    let r2 = served(&p, keys, inputs);
    let out = decrypt(&parties, &r2, &[0, 1, 4], 4).unwrap();
    let score2: i128 = Y.iter().zip(&WEIGHTS).map(|(a, &b)| a * b as i128).sum();
    assert_eq!(out.get("score"), Some(&ints(&[score2])));
    assert_eq!(out.get("product"), Some(&ints(&product)));

    // k - 1 parties are refused, as a set and as shares.
    let e = parties[0]
        .decryption_share(&r.outputs, &r.inputs, &r.server, &[0, 2])
        .unwrap_err();
    refused_with(e, "2 parties given; 3 of the 5 are needed");
    let three = shares(&parties, &r, &[0, 2, 4]);
    let e = parties[0]
        .combine(&r.outputs, &r.inputs, &r.server, &[0, 2], &three[..2])
        .unwrap_err();
    refused_with(e, "2 parties given");
    let e = parties[0]
        .combine(&r.outputs, &r.inputs, &r.server, &[0, 2, 4], &three[..2])
        .unwrap_err();
    refused_with(e, "2 decryption shares for 3 parties");
    // The same share twice in place of a third party's.
    let twice = vec![three[0].clone(), three[1].clone(), three[1].clone()];
    assert!(parties[0]
        .combine(&r.outputs, &r.inputs, &r.server, &[0, 2, 4], &twice)
        .is_err());
    // Shares made for another set.
    let other = shares(&parties, &r, &[1, 2, 3]);
    let mixed = vec![three[0].clone(), other[1].clone(), three[2].clone()];
    assert!(parties[0]
        .combine(&r.outputs, &r.inputs, &r.server, &[0, 2, 4], &mixed)
        .is_err());

    // Duplicate and unknown parties.
    let e = parties[0]
        .decryption_share(&r.outputs, &r.inputs, &r.server, &[0, 0, 2])
        .unwrap_err();
    refused_with(e, "party 0 appears twice");
    let e = parties[0]
        .decryption_share(&r.outputs, &r.inputs, &r.server, &[0, 2, 5])
        .unwrap_err();
    refused_with(e, "party 5 is not one of the parties 0..5");
    // A party outside the set it is asked to decrypt for.
    assert!(parties[1]
        .decryption_share(&r.outputs, &r.inputs, &r.server, &[0, 2, 4])
        .is_err());

    // Shares of another ciphertext: made for the second run's outputs.
    let foreign = shares(&parties, &r2, &[0, 2, 4]);
    let e = parties[0]
        .combine(&r.outputs, &r.inputs, &r.server, &[0, 2, 4], &foreign)
        .unwrap_err();
    refused_with(e, "about another ciphertext");
    // Outputs on inputs the parties were not shown, or signed by another
    // server, are refused before any share is made.
    let e = parties[0]
        .decryption_share(&r.outputs, &r2.inputs, &r.server, &[0, 2, 4])
        .unwrap_err();
    refused_with(e, "did not send");
    let e = parties[0]
        .decryption_share(&r.outputs, &r.inputs, &r2.server, &[0, 2, 4])
        .unwrap_err();
    assert!(matches!(e, Error::Attest(_)), "{e}");

    // Malformed share bytes are errors, never panics.
    for cut in [0, 7, 20, three[0].len() / 2, three[0].len() - 1] {
        let mut bad = three.clone();
        bad[0].truncate(cut);
        assert!(parties[0]
            .combine(&r.outputs, &r.inputs, &r.server, &[0, 2, 4], &bad)
            .is_err());
    }
    let mut flipped = three.clone();
    let last = flipped[1].len() - 3;
    flipped[1][last] ^= 0x55;
    let wrong = parties[0].combine(&r.outputs, &r.inputs, &r.server, &[0, 2, 4], &flipped);
    assert!(wrong.map_or(true, |o| o.get("product") != Some(&ints(&product))));
}

#[test]
fn shares_and_messages_of_another_session_are_refused() {
    let p = scores();
    let a = keygen(&session(&p, 2, 3).unwrap());
    let b = keygen(&session(&p, 2, 3).unwrap());
    let r = run(&p, a[0].evaluation_keys().unwrap(), &X, &Y);
    let (score, product) = expected();
    let out = decrypt(&a, &r, &[2, 0], 0).unwrap();
    assert_eq!(out.get("score"), Some(&ints(&[score])));
    assert_eq!(out.get("product"), Some(&ints(&product)));
    // Session b's parties did not make these keys: their records' key set
    // is not theirs.
    assert!(b[0]
        .decryption_share(&r.outputs, &r.inputs, &r.server, &[0, 1])
        .is_err());
    // A share of session b in a decryption of session a.
    let mut mixed = shares(&a, &r, &[0, 1]);
    let rb = run(&p, b[0].evaluation_keys().unwrap(), &X, &Y);
    mixed[1] = shares(&b, &rb, &[0, 1]).swap_remove(1);
    let e = a[0]
        .combine(&r.outputs, &r.inputs, &r.server, &[0, 1], &mixed)
        .unwrap_err();
    refused_with(e, "another session");

    // Key generation messages of another session.
    let sa = session(&p, 2, 3).unwrap();
    let sb = session(&p, 2, 3).unwrap();
    let mut qa: Vec<Party> = (0..3).map(|i| Party::new(&sa, i).unwrap()).collect();
    let mut qb = Party::new(&sb, 1).unwrap();
    let mut round1: Vec<_> = qa.iter_mut().map(|q| q.keygen_round1().unwrap()).collect();
    round1[1] = qb.keygen_round1().unwrap();
    let public: Vec<Vec<u8>> = round1.iter().map(|r| r.public.clone()).collect();
    let deals: Vec<Vec<u8>> = round1.iter().map(|r| r.deals[0].to_vec()).collect();
    let e = qa[0].keygen_round2(&public, &deals).unwrap_err();
    refused_with(e, "another session");
    // Messages out of party order, or a deal addressed to another party.
    let round1: Vec<_> = qa.iter_mut().map(|q| q.keygen_round1().unwrap()).collect();
    let mut public: Vec<Vec<u8>> = round1.iter().map(|r| r.public.clone()).collect();
    let deals: Vec<Vec<u8>> = round1.iter().map(|r| r.deals[0].to_vec()).collect();
    let mut wrong_deals = deals.clone();
    wrong_deals[2] = round1[2].deals[1].to_vec();
    refused_with(
        qa[0].keygen_round2(&public, &wrong_deals).unwrap_err(),
        "addressed to another party",
    );
    public.swap(0, 1);
    refused_with(
        qa[0].keygen_round2(&public, &deals).unwrap_err(),
        "from party 1 where party 0's belongs",
    );
}

#[test]
fn out_of_range_thresholds_and_parties_are_refused() {
    let p = scores();
    for (k, n) in [(6, 5), (0, 5), (1, 1), (2, 2000)] {
        let e = session(&p, k, n).unwrap_err();
        assert!(matches!(e, Error::Refused { .. }), "{k} of {n}: {e}");
    }
    let s = session(&p, 3, 5).unwrap();
    refused_with(Party::new(&s, 5).unwrap_err(), "party 5 is not one of");
    // Without the option there are no parties; with it there is no client.
    let e = PartySession::with_costs(&p, PlanOptions::default(), &CostModel::builtin());
    refused_with(e.unwrap_err(), "PlanOptions::threshold");
    let e = Client::with_costs(
        &p,
        PlanOptions::default().threshold(3, 5),
        &CostModel::builtin(),
    );
    refused_with(e.unwrap_err(), "made by parties");
    let mut session = Session::with_costs(CostModel::builtin());
    let mut plan = session
        .plan_with(&p, PlanOptions::default().threshold(3, 5))
        .unwrap();
    let inputs = BTreeMap::from([("x".into(), ints(&X)), ("y".into(), ints(&Y))]);
    let e = session.run(&mut plan, &inputs).unwrap_err();
    refused_with(e, "made by parties");
    // Keys are not there before the rounds.
    assert!(Party::new(&s, 0).unwrap().evaluation_keys().is_err());
}

#[test]
fn plans_that_need_keys_no_protocol_makes_are_refused_by_name() {
    // The match decision on a score: BFV -> TFHE, a transition key.
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 8, bound: 100 }).unwrap();
    let s = p.dot_plain(x, &WEIGHTS.map(Scalar::Int)).unwrap();
    let c = p.compare_scalar(s, Cmp::Gt, Scalar::Int(5)).unwrap();
    p.output("c", c).unwrap();
    let e = session(&p, 3, 5).unwrap_err();
    assert!(
        matches!(&e, Error::NotCollective { piece } if piece.contains("transition key")),
        "{e}"
    );
    // u64 arithmetic: TFHE keys.
    let mut p = Program::new();
    let u = p.input("u", Kind::Uint { len: 2, bits: 64 }).unwrap();
    let v = p.mul(u, u).unwrap();
    p.output("v", v).unwrap();
    let e = session(&p, 3, 5).unwrap_err();
    assert!(
        matches!(&e, Error::NotCollective { piece } if piece.contains("TFHE keys")),
        "{e}"
    );
    // u8 arithmetic runs on BFV coefficients, whose outputs leave as
    // extracted LWE ciphertexts.
    let mut p = Program::new();
    let u = p.input("u", Kind::Uint { len: 2, bits: 8 }).unwrap();
    let v = p.add_scalar(u, Scalar::Int(1)).unwrap();
    p.output("v", v).unwrap();
    let e = session(&p, 3, 5).unwrap_err();
    assert!(
        matches!(&e, Error::NotCollective { piece } if piece.contains("extracted coefficients")),
        "{e}"
    );
    // A round trip (BFV -> CKKS), even when allowed.
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 3, bound: 50 }).unwrap();
    let r = p.to_real(x, 1.0 / 64.0).unwrap();
    let sq = p.mul(r, r).unwrap();
    p.output("sq", sq).unwrap();
    let options = PlanOptions {
        allow_round_trips: true,
        ..PlanOptions::default()
    };
    let e = PartySession::with_costs(&p, options.threshold(3, 5), &CostModel::builtin());
    let e = e.unwrap_err();
    assert!(
        matches!(&e, Error::NotCollective { piece } if piece.contains("round trip")),
        "{e}"
    );
}

/// CKKS keys are made collectively and the server runs on them; the
/// floods of a threshold decryption leave no precision at the largest CKKS
/// scale of the named sets (2^50), so the decryption is refused before any
/// share is made.
#[test]
fn ckks_keys_are_collective_and_decryptions_without_precision_are_refused() {
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 4 }).unwrap();
    let y = p.input("y", Kind::Real { len: 4 }).unwrap();
    let s = p.add(x, y).unwrap();
    let m = p.mul(x, y).unwrap();
    p.output("s", s).unwrap();
    p.output("m", m).unwrap();
    let options = PlanOptions {
        ckks_scale_log2: Some(50),
        ..PlanOptions::default()
    };
    let s = PartySession::with_costs(&p, options.threshold(2, 3), &CostModel::builtin()).unwrap();
    let parties = keygen(&s);
    let keys = parties[0].evaluation_keys().unwrap();
    let (xs, ys) = ([0.5, -0.25, 0.125, -1.0], [0.75, 0.5, -1.0, 0.25]);
    let inputs = Encryptor::new(&p, keys)
        .unwrap()
        .encrypt(
            &BTreeMap::from([
                ("x".into(), PlainValue::Reals(xs.to_vec())),
                ("y".into(), PlainValue::Reals(ys.to_vec())),
            ]),
            &[],
        )
        .unwrap();
    let r = served(&p, keys, inputs);
    // Every party's keys are the same bundle, which the server ran on.
    assert_eq!(parties[2].evaluation_keys().unwrap().id(), keys.id());
    let e = parties[1]
        .decryption_share(&r.outputs, &r.inputs, &r.server, &[0, 1])
        .unwrap_err();
    refused_with(e, "bits of precision, fewer than 10");
}

/// A party's state after the key generation travels as bytes: the loaded
/// party decrypts, keeps its release counts across a reload, refuses other
/// keys and further key generation rounds.
#[test]
fn party_states_reload_with_their_keys_and_release_counts() {
    let p = scores();
    let s = session(&p, 2, 3).unwrap();
    let parties = keygen(&s);
    let keys = parties[0].evaluation_keys().unwrap();
    let r = run(&p, keys, &X, &Y);
    let reload = |q: &Party| Party::from_bytes(&q.to_bytes().unwrap(), LIMIT, keys).unwrap();
    let mut loaded: Vec<Party> = parties.iter().map(reload).collect();
    let (score, product) = expected();
    let out = decrypt(&loaded, &r, &[0, 2], 1).unwrap();
    assert_eq!(out.get("score"), Some(&ints(&[score])));
    assert_eq!(out.get("product"), Some(&ints(&product)));
    // Each decryption share counts one release per output (2 here): after
    // THRESHOLD_RELEASES / 2 shares the reloaded party refuses.
    for _ in 1..triskel::THRESHOLD_RELEASES / 2 {
        loaded[0]
            .decryption_share(&r.outputs, &r.inputs, &r.server, &[0, 1])
            .unwrap();
    }
    loaded[0] = reload(&loaded[0]);
    let e = loaded[0]
        .decryption_share(&r.outputs, &r.inputs, &r.server, &[0, 1])
        .unwrap_err();
    assert!(e.to_string().contains("flooded release(s) made"), "{e}");
    // Other keys, damaged bytes, and key generation rounds are refused.
    let other = keygen(&session(&p, 2, 3).unwrap());
    let state = parties[1].to_bytes().unwrap();
    let e = Party::from_bytes(&state, LIMIT, other[0].evaluation_keys().unwrap()).unwrap_err();
    refused_with(e, "not the ones this party made");
    for cut in [0, 9, state.len() / 2, state.len() - 1] {
        assert!(Party::from_bytes(&state[..cut], LIMIT, keys).is_err());
    }
    assert!(Party::from_bytes(&state, 100, keys).is_err());
    refused_with(
        loaded[2].keygen_round1().err().unwrap(),
        "key generation of a loaded party is over",
    );
}

/// A threshold plan takes a BFV set with room for the decryption floods:
/// a product that a one-holder plan keeps at N = 4096 moves to a larger
/// set, and any 2 of 3 parties decrypt it.
#[test]
fn threshold_plans_leave_room_for_the_floods() {
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 4, bound: 100 }).unwrap();
    let y = p.mul(x, x).unwrap();
    let s = p.sum(x).unwrap();
    p.output("y", y).unwrap();
    p.output("s", s).unwrap();
    let costs = CostModel::builtin();
    let single = triskel::plan_with(&p, &costs, PlanOptions::default()).unwrap();
    let s = session(&p, 2, 3).unwrap();
    let (n1, n2) = (single.bfv()[0].params.n(), s.plan().bfv()[0].params.n());
    assert!(n2 > n1, "one holder N = {n1}, threshold N = {n2}");
    let parties = keygen(&s);
    let keys = parties[0].evaluation_keys().unwrap();
    let xs = [7i128, -100, 0, 42];
    let inputs = Encryptor::new(&p, keys)
        .unwrap()
        .encrypt(&BTreeMap::from([("x".into(), ints(&xs))]), &[])
        .unwrap();
    let r = served(&p, keys, inputs);
    let out = decrypt(&parties, &r, &[1, 2], 0).unwrap();
    let squares: Vec<i128> = xs.iter().map(|v| v * v).collect();
    assert_eq!(out.get("y"), Some(&ints(&squares)));
    assert_eq!(out.get("s"), Some(&ints(&[xs.iter().sum()])));
}
