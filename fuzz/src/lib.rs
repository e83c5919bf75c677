//! Fixtures shared by the fuzz targets and the seed writer: one small context
//! per engine, built once per process, and the valid objects made from it.

use std::sync::{Arc, OnceLock};

use sha3::{Digest, Sha3_256};
use triskel_attest::{Batch, Computation, Digest32, Identity, Record, Route, VerifiedBatch};
use triskel_bfv::{
    BfvContext, BfvParameters, Ciphertext, GaloisKeys, Plaintext, PublicKey, RelinKey, SecretKey,
};
use triskel_ring::sampling::sample_uniform;
use triskel_ring::{
    KeySwitchContext, KeySwitchKey, NoiseDistribution, Poly, Prng, Representation, RnsBasis,
    SecretDistribution, SecretKey as RingSecret,
};

/// BFV on the named N = 4096 set (the cheapest set with relinearization and
/// rotations), with a key of every kind and two ciphertexts.
pub struct Bfv {
    pub ctx: Arc<BfvContext>,
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub rk: RelinKey,
    pub gk: GaloisKeys,
    pub pt: Plaintext,
    /// A public-key encryption of `pt` (two components).
    pub ct: Ciphertext,
    /// `ct * ct` before relinearization (three components).
    pub ct3: Ciphertext,
}

/// The process-wide BFV fixture.
pub fn bfv() -> &'static Bfv {
    static BFV: OnceLock<Bfv> = OnceLock::new();
    BFV.get_or_init(|| {
        let ctx = BfvContext::new(BfvParameters::n4096()).expect("n4096 context");
        let sk = SecretKey::generate(&ctx).expect("secret key");
        let pk = sk.public_key().expect("public key");
        let rk = sk.relin_key().expect("relinearization key");
        let gk = sk.galois_keys(&[1], true).expect("Galois keys");
        let pt = Plaintext::from_slots(&ctx, &[1, 2, 3, 65536]).expect("plaintext");
        let ct = pk.encrypt(&pt).expect("encryption");
        let ct3 = ct.mul(&ct).expect("tensor");
        Bfv {
            ctx,
            sk,
            pk,
            rk,
            gk,
            pt,
            ct,
            ct3,
        }
    })
}

/// The ring layer at N = 1024 (Q = 2 primes, P = 1 prime, 2 digits): small
/// enough that the fuzzer mutates whole polynomials quickly.
pub struct Ring {
    pub q: Arc<RnsBasis>,
    pub ks: KeySwitchContext,
    pub key: KeySwitchKey,
    /// A uniform polynomial in Q (coefficient form).
    pub poly: Poly,
}

/// The process-wide ring fixture.
pub fn ring() -> &'static Ring {
    static RING: OnceLock<Ring> = OnceLock::new();
    RING.get_or_init(|| {
        let n = 1024;
        let q = RnsBasis::generate(n, 40, 2).expect("Q basis");
        let p = RnsBasis::generate(n, 41, 1).expect("P basis");
        let noise = NoiseDistribution::Gaussian {
            sigma: 3.2,
            bound: 19,
        };
        let ks = KeySwitchContext::new(&q, &p, 2, noise).expect("key-switching context");
        let mut rng = Prng::from_os().expect("OS randomness");
        let sk = RingSecret::generate(n, SecretDistribution::Ternary, &mut rng).expect("secret");
        let key = KeySwitchKey::relinearization(&ks, &sk, &mut rng).expect("key");
        let poly = sample_uniform(&q, Representation::Coefficient, &mut rng);
        Ring { q, ks, key, poly }
    })
}

/// The threshold fixture: a fixed 2-of-3 session over the ring fixture's
/// bases (so that shares written by the seed writer, another process, fit
/// it), its parties' shares, a ciphertext under the collective key and a
/// batch of LWE ciphertexts under a dealt key.
pub struct Threshold {
    pub session: triskel_ring::threshold::Session,
    pub secrets: Vec<triskel_ring::threshold::PartySecret>,
    pub shares: Vec<triskel_ring::threshold::ThresholdShare>,
    /// (c0, c1) under the collective key, NTT form over the ring's Q.
    pub ct: [Poly; 2],
    pub lwe_key: triskel_ring::KeyId,
    pub lwe_shares: Vec<triskel_ring::threshold::LweKeyShare>,
    pub lwe_cts: Vec<triskel_ring::LweCiphertext>,
}

/// The process-wide threshold fixture.
pub fn threshold() -> &'static Threshold {
    use triskel_ring::threshold::*;
    static T: OnceLock<Threshold> = OnceLock::new();
    T.get_or_init(|| {
        let r = ring();
        let session = Session::from_parts([1; 16], [2; 32], 3, 2).expect("session");
        let secrets: Vec<PartySecret> = (1..=3)
            .map(|j| PartySecret::generate(&session, j, 1024).expect("secret"))
            .collect();
        let deals: Vec<Vec<Share>> = secrets
            .iter()
            .map(|s| s.deal(r.ks.qp()).expect("deal"))
            .collect();
        let shares = secrets
            .iter()
            .map(|s| {
                let mine: Vec<Share> = deals
                    .iter()
                    .map(|d| d[s.party() as usize - 1].clone())
                    .collect();
                ThresholdShare::from_deals(s, &mine).expect("share")
            })
            .collect();
        let gen = PublicKeyGen::new(&session, &r.q, NoiseDistribution::default());
        let parts: Vec<Share> = secrets
            .iter()
            .map(|s| gen.share(s).expect("share"))
            .collect();
        let pk = gen
            .finish(&gen.aggregate(&parts).expect("aggregate"))
            .expect("public key");
        let mut rng = Prng::from_os().expect("OS randomness");
        let ct = pk
            .encrypt(r.poly.clone(), NoiseDistribution::default(), &mut rng)
            .expect("encryption");
        let lwe_key = triskel_ring::KeyId::from_bytes([3; 16]);
        let key = triskel_ring::LweSecretKey::binary(64, lwe_key, &mut rng);
        let lwe_shares = LweKeyShare::deal(&session, &key).expect("LWE deal");
        let lwe_cts = (0..2)
            .map(|m| key.encrypt(m << 62, 2f64.powi(-60), &mut rng).expect("LWE"))
            .collect();
        Threshold {
            session,
            secrets,
            shares,
            ct,
            lwe_key,
            lwe_shares,
            lwe_cts,
        }
    })
}

impl Threshold {
    /// The fixture's decryption of `ct` by parties 1 and 3, releasing
    /// coefficients 0, 5 and 9.
    pub fn decryption(&self) -> triskel_ring::threshold::Decryption<'_> {
        use triskel_ring::threshold::*;
        Decryption::new(
            &self.session,
            &[1, 3],
            CiphertextId([4; 32]),
            [&self.ct[0], &self.ct[1]],
            Some(&[0, 5, 9]),
            triskel_ring::Smudging::new(8.0),
        )
        .expect("decryption")
    }

    /// The fixture's LWE decryption by parties 1 and 2.
    pub fn lwe_decryption(&self) -> triskel_ring::threshold::LweDecryption<'_> {
        use triskel_ring::threshold::*;
        let mut smudging = triskel_ring::Smudging::new(8.0);
        smudging.decryptions = u64::MAX;
        LweDecryption::new(
            &self.session,
            &[1, 2],
            self.lwe_key,
            CiphertextId([5; 32]),
            &self.lwe_cts,
            smudging,
        )
        .expect("LWE decryption")
    }
}

/// The TFHE client keys of `tfhe_objects` and of its seeds, boolean and
/// 2_2, from fixed seeds: values carry their key's identity, so seeded
/// values reach the target's decryption only under the keys they were made
/// with. (Server keys are not needed to decrypt, and cost seconds.)
pub fn tfhe_keys() -> &'static (triskel_tfhe::ClientKey, triskel_tfhe::ClientKey) {
    use triskel_tfhe::{ClientKey, TfheParameters};
    static KEYS: OnceLock<(ClientKey, ClientKey)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let key = |params, seed| {
            ClientKey::generate_with(&params, &mut Prng::from_seed([seed; 32])).expect("TFHE key")
        };
        (
            key(TfheParameters::boolean(), 1),
            key(TfheParameters::message_2_carry_2(), 2),
        )
    })
}

/// An attestation identity, a single record, a batch of three results and a
/// computation record (version 2) over two inputs.
pub struct Attest {
    pub identity: Identity,
    pub route: Route,
    pub context: Vec<u8>,
    pub result: Vec<u8>,
    pub record: Record,
    pub batch_results: Vec<Vec<u8>>,
    pub batch: Batch,
    pub verified_batch: VerifiedBatch,
    pub inputs: Vec<Digest32>,
    pub computation_record: Record,
}

impl Attest {
    /// The computation `computation_record` attests.
    pub fn computation(&self) -> Computation<'_> {
        computation(&self.inputs)
    }
}

fn computation(inputs: &[Digest32]) -> Computation<'_> {
    Computation {
        program: triskel_attest::program_digest(b"program"),
        key_set: [7; 32],
        inputs,
        output: triskel_attest::result_digest(b"output"),
    }
}

/// The process-wide attestation fixture.
pub fn attest() -> &'static Attest {
    static ATTEST: OnceLock<Attest> = OnceLock::new();
    ATTEST.get_or_init(|| {
        let identity = Identity::generate().expect("identity");
        let route = Route::new("bfv", "bfv-n4096");
        let context = b"fuzz".to_vec();
        let result = b"result".to_vec();
        let record = triskel_attest::attest(&identity, &result, &route, &context).expect("record");
        let batch_results: Vec<Vec<u8>> = (0u8..3).map(|i| vec![i; 5]).collect();
        let batch = triskel_attest::attest_batch(&identity, &batch_results, &route, &context)
            .expect("batch");
        let verified_batch =
            triskel_attest::verify_batch_record(identity.public(), &route, &context, &batch.record)
                .expect("batch record verifies");
        let inputs = vec![
            triskel_attest::result_digest(b"input 0"),
            triskel_attest::result_digest(b"input 1"),
        ];
        let computation_record =
            triskel_attest::attest_computation(&identity, &computation(&inputs), &route, &context)
                .expect("computation record");
        Attest {
            identity,
            route,
            context,
            result,
            record,
            batch_results,
            batch,
            verified_batch,
            inputs,
            computation_record,
        }
    })
}

/// Replaces the last 32 bytes of an identity file with the checksum of the
/// rest (SHA3-256 of the length-prefixed tag "triskel-attest/v1/key-file" and
/// the body, as the attestation crate documents), so the fuzzer reaches the
/// key bytes behind the checksum.
pub fn with_identity_checksum(bytes: &[u8]) -> Option<Vec<u8>> {
    const TAG: &[u8] = b"triskel-attest/v1/key-file";
    let body_len = bytes.len().checked_sub(32)?;
    let mut h = Sha3_256::new();
    h.update((TAG.len() as u64).to_le_bytes());
    h.update(TAG);
    h.update(&bytes[..body_len]);
    let mut out = bytes[..body_len].to_vec();
    out.extend_from_slice(&h.finalize());
    Some(out)
}

/// The programs of every format version, as seeds and as the programs the
/// `cost_cache` target plans.
pub fn router_programs() -> triskel::Result<Vec<triskel::Program>> {
    Ok(vec![
        router_program()?,
        router_program_v2()?,
        router_program_v3()?,
    ])
}

/// A program touching every engine: a threshold on a BFV dot product, a
/// CKKS layer with an activation, a TFHE comparison and select.
fn router_program() -> triskel::Result<triskel::Program> {
    use triskel::{Cmp, Kind, Program, Scalar};
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
    let d = p.dot_plain(
        x,
        &[
            Scalar::Int(1),
            Scalar::Int(-2),
            Scalar::Int(3),
            Scalar::Int(4),
        ],
    )?;
    let t = p.threshold(d, Scalar::Int(10))?;
    let r = p.input("r", Kind::Real { len: 4 })?;
    let h = p.matvec(&[vec![0.5, -0.5, 0.25, 1.0]], r)?;
    let a = p.chebyshev(h, &[0.5, 0.3, 0.0, -0.1], -4.0, 4.0)?;
    let u = p.input("u", Kind::Uint { len: 2, bits: 8 })?;
    let g = p.compare_scalar(u, Cmp::Gt, Scalar::Int(7))?;
    let s = p.select(g, u, u)?;
    p.output("t", t)?;
    p.output("a", a)?;
    p.output("s", s)?;
    Ok(p)
}

/// A program of format version 2: lookup tables (TFHE and through the
/// transition) and the conversions that take key-holder round trips.
fn router_program_v2() -> triskel::Result<triskel::Program> {
    use triskel::{Kind, Program};
    let mut p = Program::new();
    let u = p.input("u", Kind::Uint { len: 2, bits: 8 })?;
    let table: Vec<u8> = (0..=255u8).map(|v| v.rotate_left(3)).collect();
    let l = p.lookup(u, &table)?;
    let x = p.input("x", Kind::Signed { len: 3, bound: 2 })?;
    let lx = p.lookup(x, &[5, 4, 3, 2, 1])?;
    let s = p.to_signed(l)?;
    let r = p.to_real(x, 0.5)?;
    p.output("lx", lx)?;
    p.output("s", s)?;
    p.output("r", r)?;
    Ok(p)
}

/// A program of format version 3: a threshold on coefficient-encoded reals
/// (CKKS -> TFHE) after an inner product with plaintext weights.
fn router_program_v3() -> triskel::Result<triskel::Program> {
    use triskel::{Kind, Program, Scalar};
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 4 })?;
    let w = [0.5, -0.25, 1.0, 0.0].map(Scalar::Real);
    let d = p.dot_plain(x, &w)?;
    let t = p.threshold_real(d, 0.125, 1e-3)?;
    p.output("t", t)?;
    Ok(p)
}

/// One program run through the client/server split: the key holder, its
/// evaluation keys, one set of encrypted inputs and the server's outputs for
/// them, all valid, each also as bytes.
pub struct SplitCase {
    pub program: triskel::Program,
    pub choice: triskel::PlanChoice,
    pub client: triskel::Client,
    pub keys: triskel::EvaluationKeys,
    pub keys_bytes: Vec<u8>,
    pub inputs: triskel::EncryptedInputs,
    pub inputs_bytes: Vec<u8>,
    pub outputs_bytes: Vec<u8>,
}

/// The client/server fixture: a BFV-only and a CKKS-only program (each with
/// a multiplication and a slot sum, so its keys carry a relinearization key
/// and Galois keys), and the server that ran them. No TFHE case: a TFHE
/// server key takes seconds to make and tens of MiB.
pub struct Split {
    pub server: triskel::Server,
    pub cases: Vec<SplitCase>,
}

/// The process-wide client/server fixture.
pub fn split() -> &'static Split {
    static SPLIT: OnceLock<Split> = OnceLock::new();
    SPLIT.get_or_init(|| {
        use std::collections::BTreeMap;
        use triskel::{Kind, PlainValue, Program};
        let server = triskel::Server::new(Identity::generate().expect("identity"));
        let case = |kind: Kind, value: PlainValue| {
            let mut p = Program::new();
            let x = p.input("x", kind).expect("input");
            let y = p.mul(x, x).expect("mul");
            let s = p.sum(x).expect("sum");
            p.output("y", y).expect("output");
            p.output("s", s).expect("output");
            let costs = triskel::CostModel::builtin();
            let mut client =
                triskel::Client::with_costs(&p, triskel::PlanOptions::default(), &costs)
                    .expect("client");
            let keys_bytes = client.evaluation_keys().expect("keys").to_bytes();
            let keys = triskel::EvaluationKeys::from_bytes(&keys_bytes, u64::MAX).expect("keys");
            let choice = keys.choice().clone();
            let inputs = client
                .encrypt(&BTreeMap::from([("x".to_string(), value)]))
                .expect("encryption");
            let outputs = server.run(&p, &choice, &keys, &inputs).expect("run");
            client
                .decrypt(&outputs, server.identity().public())
                .expect("decryption");
            SplitCase {
                program: p,
                choice,
                client,
                keys_bytes,
                inputs_bytes: inputs.to_bytes(),
                inputs,
                outputs_bytes: outputs.to_bytes(),
                keys,
            }
        };
        let cases = vec![
            case(
                Kind::Modular {
                    len: 4,
                    modulus: 65537,
                },
                PlainValue::Ints(vec![1, 2, 3, 4]),
            ),
            case(
                Kind::Real { len: 4 },
                PlainValue::Reals(vec![0.5, -0.25, 0.125, 1.0]),
            ),
        ];
        Split { server, cases }
    })
}

/// Replaces the last 32 bytes of an evaluation-key bundle with the key-set id
/// of the rest (SHA3-256 of the length-prefixed tag
/// "triskel/evaluation-keys/v1" and the body, as the router's wire module
/// documents), so the fuzzer reaches the keys behind the id.
pub fn with_key_set_id(bytes: &[u8]) -> Option<Vec<u8>> {
    const TAG: &[u8] = b"triskel/evaluation-keys/v1";
    let body_len = bytes.len().checked_sub(32)?;
    let mut h = Sha3_256::new();
    h.update((TAG.len() as u64).to_le_bytes());
    h.update(TAG);
    h.update(&bytes[..body_len]);
    let mut out = bytes[..body_len].to_vec();
    out.extend_from_slice(&h.finalize());
    Some(out)
}

/// `inputs` (valid bytes of encrypted inputs) with their key-set id replaced
/// by `key_set` (bytes 8..40 of the format).
pub fn with_inputs_key_set(inputs: &[u8], key_set: &Digest32) -> Vec<u8> {
    let mut out = inputs.to_vec();
    out[8..40].copy_from_slice(key_set);
    out
}

/// `bytes` (encrypted outputs that parse) with every entry's record replaced
/// by one `identity` signs over the computation the bytes state (program,
/// key set, inputs and context as written, the entry's own digest) and
/// `route`: what a server that signs anything it sends could produce, so the
/// fuzzer reaches the decryption behind the record checks.
pub fn resigned_outputs(
    bytes: &[u8],
    identity: &Identity,
    route: &triskel_attest::Route,
) -> Option<Vec<u8>> {
    use triskel_attest::{BUNDLE_LEN, RECEIPT_LEN};
    let outputs = triskel::EncryptedOutputs::from_bytes(bytes, u64::MAX).ok()?;
    let u32_at = |at: usize| -> usize {
        u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize
    };
    let key_set: Digest32 = bytes[8..40].try_into().ok()?;
    let program: Digest32 = bytes[40..72].try_into().ok()?;
    let context_len = u32_at(72);
    let context = &bytes[76..76 + context_len];
    let mut at = 76 + context_len;
    let inputs: Vec<Digest32> = (0..u32_at(at))
        .map(|i| {
            bytes[at + 4 + 32 * i..at + 36 + 32 * i]
                .try_into()
                .expect("32")
        })
        .collect();
    at += 4 + 32 * inputs.len() + 4;
    let mut out = bytes.to_vec();
    for e in outputs.entries() {
        at += 1 + 4 + 1;
        let blobs = u32_at(at);
        at += 4;
        for _ in 0..blobs {
            at += 4 + u32_at(at);
        }
        let computation = Computation {
            program,
            key_set,
            inputs: &inputs,
            output: e.digest(),
        };
        let record =
            triskel_attest::attest_computation(identity, &computation, route, context).ok()?;
        out[at..at + RECEIPT_LEN + BUNDLE_LEN].copy_from_slice(&record.to_bytes());
        at += RECEIPT_LEN + BUNDLE_LEN;
    }
    Some(out)
}

/// The threshold fixture: a 2-of-3 BFV session (a product and a slot sum,
/// so its keys carry relinearization and Galois keys), its parties after
/// the key generation, a run of the server on their keys, party 0's
/// decryption share for the set {0, 1}, and a fourth party of a second
/// session of the same plan that has made its first round (for round-2
/// inputs).
pub struct Parties {
    pub session: triskel::PartySession,
    pub parties: Vec<triskel::Party>,
    pub server: triskel::Server,
    pub inputs: triskel::EncryptedInputs,
    pub outputs: triskel::EncryptedOutputs,
    pub share0: Vec<u8>,
    /// Party 0 of `session2`, after round 1.
    pub round2_party: std::sync::Mutex<triskel::Party>,
    pub round1: Vec<Vec<u8>>,
    pub deals: Vec<Vec<u8>>,
}

pub fn parties() -> &'static Parties {
    static P: OnceLock<Parties> = OnceLock::new();
    P.get_or_init(|| {
        use std::collections::BTreeMap;
        use triskel::{Kind, Party, PartySession, PlainValue, PlanOptions, Program};
        let mut p = Program::new();
        let x = p
            .input("x", Kind::Signed { len: 4, bound: 100 })
            .expect("input");
        let y = p.mul(x, x).expect("mul");
        let s = p.sum(x).expect("sum");
        p.output("y", y).expect("output");
        p.output("s", s).expect("output");
        let costs = triskel::CostModel::builtin();
        let options = PlanOptions::default().threshold(2, 3);
        let make = || PartySession::with_costs(&p, options, &costs).expect("session");
        let keygen = |session: &PartySession| {
            let mut parties: Vec<Party> = (0..3)
                .map(|i| Party::new(session, i).expect("party"))
                .collect();
            let round1: Vec<_> = parties
                .iter_mut()
                .map(|q| q.keygen_round1().expect("round 1"))
                .collect();
            (parties, round1)
        };
        let session = make();
        let (mut parties, round1) = keygen(&session);
        let public: Vec<Vec<u8>> = round1.iter().map(|r| r.public.clone()).collect();
        let round2: Vec<Vec<u8>> = parties
            .iter_mut()
            .enumerate()
            .map(|(j, q)| {
                let deals: Vec<Vec<u8>> = round1.iter().map(|r| r.deals[j].to_vec()).collect();
                q.keygen_round2(&public, &deals).expect("round 2")
            })
            .collect();
        for q in &mut parties {
            q.keygen_finish(&round2).expect("finish");
        }
        let keys = parties[0].evaluation_keys().expect("keys");
        let inputs = parties[1]
            .encrypt(
                &BTreeMap::from([("x".into(), PlainValue::Ints(vec![1, -2, 3, 4]))]),
                &[],
            )
            .expect("encrypt");
        let server = triskel::Server::new(Identity::generate().expect("identity"));
        let outputs = server
            .run(&p, keys.choice(), keys, &inputs)
            .expect("server run");
        let share0 = parties[0]
            .decryption_share(&outputs, &inputs, server.identity().public(), &[0, 1])
            .expect("share");
        let session2 = make();
        let (mut second, round1) = keygen(&session2);
        Parties {
            session,
            parties,
            server,
            inputs,
            outputs,
            share0,
            round2_party: std::sync::Mutex::new(second.swap_remove(0)),
            round1: round1.iter().map(|r| r.public.clone()).collect(),
            deals: round1.iter().map(|r| r.deals[0].to_vec()).collect(),
        }
    })
}
