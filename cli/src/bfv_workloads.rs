//! The BFV workloads: the encrypted biometric match and multiply +
//! relinearize, measured stage by stage and checked against the plaintext.

use triskel::bfv::biometric::{self, sample_embeddings, MatchPrivacy, DIM};
use triskel::bfv::{BfvContext, BfvParameters, Plaintext, SecretKey};
use triskel::calibrate::median;

use crate::workloads::{now_us, us, StageMedians, WorkloadReport};

type Error = Box<dyn std::error::Error>;

/// Runs per stage before taking medians.
const RUNS: usize = 15;

/// The match (`bfv.biometric_match`, or `bfv.biometric_match_private` when
/// flooded) on `params` with n / 128 templates (one ciphertext), `RUNS`
/// times; medians per stage. Setup (keys, template encoding) is not timed.
pub fn biometric_match(
    params: BfvParameters,
    privacy: MatchPrivacy,
) -> Result<(WorkloadReport, f64), Error> {
    let ctx = BfvContext::new(params)?;
    let templates = ctx.n() / DIM;
    let sk = SecretKey::generate(&ctx)?;
    let keys = biometric::match_keys(&sk)?;
    let enrolled = sample_embeddings(templates, 2);
    let groups = biometric::encode_templates(&ctx, &enrolled)?;
    let probe = sample_embeddings(1, 1)[0];
    let expected = biometric::plaintext_scores(&probe, &enrolled);
    let mut stages: [Vec<f64>; 5] = Default::default();
    let mut max_error = 0i64;
    for _ in 0..RUNS {
        let total = now_us();
        let t = now_us();
        let pt = biometric::encode_probe(&ctx, &probe)?;
        stages[0].push(us(t));
        let t = now_us();
        let ct = sk.encrypt(&pt)?;
        stages[1].push(us(t));
        let t = now_us();
        let scores = biometric::compute_scores(&ct, &groups, &keys, privacy)?;
        stages[2].push(us(t));
        let t = now_us();
        let got = biometric::decrypt_scores(&sk, &scores, templates)?;
        stages[3].push(us(t));
        stages[4].push(us(total));
        let err = got.iter().zip(&expected).map(|(a, b)| (a - b).abs()).max();
        max_error = max_error.max(err.unwrap_or(i64::MAX));
        if got.len() != expected.len() {
            max_error = i64::MAX;
        }
    }
    let name = match privacy {
        MatchPrivacy::Masked => "bfv.biometric_match",
        MatchPrivacy::Flooded { .. } => "bfv.biometric_match_private",
    };
    let mut report = report(name, &ctx, stages, max_error as f64);
    report.matches_per_second = Some(templates as f64 / (report.median_us.total * 1e-6));
    Ok((report, templates as f64))
}

/// Encrypt two vectors (public key), multiply and relinearize, decrypt.
pub fn mul_relin(params: BfvParameters) -> Result<WorkloadReport, Error> {
    let ctx = BfvContext::new(params)?;
    let (n, t) = (ctx.n(), ctx.plain_modulus());
    let sk = SecretKey::generate(&ctx)?;
    let pk = sk.public_key()?;
    let rk = sk.relin_key()?;
    let a: Vec<u64> = (0..n as u64).map(|i| (i * 7919 + 3) % t).collect();
    let b: Vec<u64> = (0..n as u64).map(|i| (i * 104729 + 11) % t).collect();
    let expected: Vec<u64> = a.iter().zip(&b).map(|(x, y)| x * y % t).collect();
    let mut stages: [Vec<f64>; 5] = Default::default();
    let mut max_error = 0u64;
    for _ in 0..RUNS {
        let total = now_us();
        let tm = now_us();
        let (pa, pb) = (
            Plaintext::from_slots(&ctx, &a)?,
            Plaintext::from_slots(&ctx, &b)?,
        );
        stages[0].push(us(tm));
        let tm = now_us();
        let (ca, cb) = (pk.encrypt(&pa)?, pk.encrypt(&pb)?);
        stages[1].push(us(tm));
        let tm = now_us();
        let prod = ca.mul(&cb)?.relinearize(&rk)?;
        stages[2].push(us(tm));
        let tm = now_us();
        let got = sk.decrypt(&prod)?.to_slots()?;
        stages[3].push(us(tm));
        stages[4].push(us(total));
        let err = got.iter().zip(&expected).map(|(x, y)| x.abs_diff(*y)).max();
        max_error = max_error.max(err.unwrap_or(u64::MAX));
    }
    Ok(report("bfv.mul_relin", &ctx, stages, max_error as f64))
}

/// Encrypt a vector (public key), rotate both rows of slots left by one
/// (one key switch), decrypt.
pub fn rotate(params: BfvParameters) -> Result<WorkloadReport, Error> {
    let ctx = BfvContext::new(params)?;
    let (n, t) = (ctx.n(), ctx.plain_modulus());
    let sk = SecretKey::generate(&ctx)?;
    let pk = sk.public_key()?;
    let gk = sk.galois_keys(&[1], false)?;
    let a: Vec<u64> = (0..n as u64).map(|i| (i * 7919 + 3) % t).collect();
    let half = n / 2;
    let expected: Vec<u64> = (0..n)
        .map(|s| a[s / half * half + (s % half + 1) % half])
        .collect();
    let mut stages: [Vec<f64>; 5] = Default::default();
    let mut max_error = 0u64;
    for _ in 0..RUNS {
        let total = now_us();
        let tm = now_us();
        let pa = Plaintext::from_slots(&ctx, &a)?;
        stages[0].push(us(tm));
        let tm = now_us();
        let ca = pk.encrypt(&pa)?;
        stages[1].push(us(tm));
        let tm = now_us();
        let rotated = ca.rotate_rows(1, &gk)?;
        stages[2].push(us(tm));
        let tm = now_us();
        let got = sk.decrypt(&rotated)?.to_slots()?;
        stages[3].push(us(tm));
        stages[4].push(us(total));
        let err = got.iter().zip(&expected).map(|(x, y)| x.abs_diff(*y)).max();
        max_error = max_error.max(err.unwrap_or(u64::MAX));
    }
    Ok(report("bfv.rotate", &ctx, stages, max_error as f64))
}

/// The report of a workload with the five stages encode, encrypt, compute,
/// decrypt, total (samples in microseconds).
fn report(
    name: &'static str,
    ctx: &BfvContext,
    stages: [Vec<f64>; 5],
    max_abs_error: f64,
) -> WorkloadReport {
    let [encode, encrypt, compute, decrypt, total] = stages.map(|mut v| median(&mut v));
    WorkloadReport {
        name,
        engine: "bfv",
        params: ctx.params().name().to_string(),
        median_us: StageMedians {
            partial: None,
            combine: None,
            encode: Some(encode),
            encrypt: Some(encrypt),
            compute,
            decrypt: Some(decrypt),
            total,
        },
        max_abs_error,
        verified: max_abs_error == 0.0,
        matches_per_second: None,
        workloads_per_second: None,
        baseline: None,
    }
}
