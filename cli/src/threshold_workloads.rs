//! The threshold workload: the coefficient-encoded biometric match's scores
//! decrypted by 3 of 5 parties, checked against the plaintext scores.
//!
//! Stages: `partial` is one party's partial decryption (its share of the
//! released score coefficients, flooded), `combine` the combination
//! (checking and summing the 3 shares, adding c0, decoding), `compute` and
//! `total` the whole threshold decryption (the 3 partials and the
//! combination). The
//! ciphertext's digest, which the shares carry, is the one its attested
//! output record already holds: computed once, outside the timings.
//! Setup (sessions, dealing, collective key, the match) is not timed.

use triskel::bfv::biometric::{self, sample_embeddings, DIM};
use triskel::bfv::threshold::{public_key_gen, share_basis, ThresholdDecryption};
use triskel::bfv::{BfvContext, PublicKey};
use triskel::calibrate::median;
use triskel_ring::threshold::{CiphertextId, PartySecret, Session, Share, ThresholdShare};

use crate::workloads::{now_us, us, StageMedians, WorkloadReport};

type Error = Box<dyn std::error::Error>;

/// Runs per stage before taking medians.
const RUNS: usize = 16;

/// The releases each party's share may make (alpha), which its flood is
/// sized for: a share that decrypts a million match results.
const RELEASES: u64 = 1 << 20;

/// `bfv.threshold_3of5` on [`biometric::threshold_match_parameters`].
pub fn threshold_3of5() -> Result<WorkloadReport, Error> {
    let ctx = BfvContext::new(biometric::threshold_match_parameters())?;
    let session = Session::new(5, 3)?;
    let secrets = (1..=5)
        .map(|j| PartySecret::generate(&session, j, ctx.n()))
        .collect::<Result<Vec<_>, _>>()?;
    let basis = share_basis(&ctx);
    let deals = secrets
        .iter()
        .map(|s| s.deal(basis))
        .collect::<Result<Vec<_>, _>>()?;
    let shares = secrets
        .iter()
        .map(|s| {
            let mine: Vec<Share> = deals
                .iter()
                .map(|d| d[s.party() as usize - 1].clone())
                .collect();
            ThresholdShare::from_deals(s, &mine)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let gen = public_key_gen(&ctx, &session)?;
    let parts = secrets
        .iter()
        .map(|s| gen.share(s))
        .collect::<Result<Vec<_>, _>>()?;
    let pk = PublicKey::from_collective(&ctx, gen.finish(&gen.aggregate(&parts)?)?)?;
    let count = ctx.n() / DIM;
    let templates = sample_embeddings(count, 2);
    let groups = biometric::encode_templates_coefficients(&ctx, &templates)?;
    let probe = sample_embeddings(1, 1)[0];
    let ct = pk.encrypt(&biometric::encode_probe_coefficients(&ctx, &probe)?)?;
    let scores = biometric::compute_scores_coefficients(&ct, &groups, &pk)?;
    let score = &scores[0];
    let idx = biometric::score_coefficients(&ctx, count)?;
    let expected = biometric::plaintext_scores(&probe, &templates);
    let id = CiphertextId::of(score.polys());
    let (set, t) = ([1u16, 3, 5], ctx.plain_modulus());
    let mut stages: [Vec<f64>; 3] = Default::default();
    let mut max_error = 0i64;
    for _ in 0..RUNS {
        let total = now_us();
        let dec = ThresholdDecryption::new(score, &session, &set, id, Some(&idx), 40, RELEASES)?;
        let mut partials = Vec::with_capacity(set.len());
        for &j in &set {
            let tm = now_us();
            partials.push(dec.share(&shares[j as usize - 1])?);
            stages[0].push(us(tm));
        }
        let tm = now_us();
        let values = dec.finish_coefficients(&dec.aggregate(&partials)?)?;
        let got: Vec<i64> = values
            .into_iter()
            .map(|m| biometric::centered_score(m, t))
            .collect();
        stages[1].push(us(tm));
        stages[2].push(us(total));
        let err = got.iter().zip(&expected).map(|(a, b)| (a - b).abs()).max();
        max_error = max_error.max(err.unwrap_or(i64::MAX));
        if got.len() != expected.len() {
            max_error = i64::MAX;
        }
    }
    let [partial, combine, total] = stages.map(|mut v| median(&mut v));
    Ok(WorkloadReport {
        name: "bfv.threshold_3of5",
        engine: "bfv",
        params: ctx.params().name().to_string(),
        median_us: StageMedians {
            partial: Some(partial),
            combine: Some(combine),
            encode: None,
            encrypt: None,
            compute: total,
            decrypt: None,
            total,
        },
        max_abs_error: max_error as f64,
        verified: max_error == 0,
        matches_per_second: None,
        workloads_per_second: None,
        baseline: None,
    })
}
