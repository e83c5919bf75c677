//! `router.match_decision`: the coefficient-encoded biometric match (BFV)
//! with its homomorphic threshold decision (BFV -> TFHE), on one core, next
//! to the baseline the router issue sets: the same match plus one 2_2 key
//! switch and bootstrap, measured in the same run.

use std::time::Instant;

use triskel::bfv::biometric::{self, sample_embeddings, DIM};
use triskel::bfv::{BfvContext, SecretKey};
use triskel::measure::median;
use triskel::tfhe::{ClientKey, TfheParameters};
use triskel::transition::{self, TransitionKey};

use super::workloads::{Baseline, StageMedians, WorkloadReport};

type Error = Box<dyn std::error::Error>;

/// Runs per stage before taking medians.
const RUNS: usize = 3;

/// The decision's stated tolerance: scores within 2^14 (0.8% of the 2^21
/// score range) of the threshold may be decided either way, which reads 9
/// of t's 23 bits: two bootstraps per score instead of six.
pub const TOLERANCE_BITS: u32 = 14;

fn us(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e6
}

/// 32 templates (one N = 4096 product), a threshold at the median score:
/// per-template decisions within [`TOLERANCE_BITS`] and "is the best score
/// above the threshold?" as TFHE bits, decrypted and compared with the
/// plaintext comparisons (a score within the tolerance of the threshold
/// accepts either bit, and the OR either bit only when no score is above
/// the band but one is inside it).
pub fn match_decision() -> Result<WorkloadReport, Error> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    pool.install(|| match_decision_on_this_thread().map_err(|e| e.to_string()))
        .map_err(Error::from)
}

fn match_decision_on_this_thread() -> Result<WorkloadReport, Error> {
    let ctx = BfvContext::new(biometric::coefficient_match_parameters())?;
    let templates = ctx.n() / DIM;
    let bfv_key = SecretKey::generate(&ctx)?;
    let public = bfv_key.public_key()?;
    let tfhe_params = TfheParameters::message_2_carry_2();
    let tfhe_key = ClientKey::generate(&tfhe_params)?;
    let server = tfhe_key.server_key()?;
    let key = TransitionKey::generate(&bfv_key, &tfhe_key)?;
    let enrolled = sample_embeddings(templates, 12);
    let groups = biometric::encode_templates_coefficients(&ctx, &enrolled)?;
    let coefficients = biometric::score_coefficients(&ctx, templates)?;
    let probe = sample_embeddings(1, 11)[0];
    let scores = biometric::plaintext_scores(&probe, &enrolled);
    let mut sorted = scores.clone();
    sorted.sort_unstable();
    let threshold = sorted[templates / 2];
    let band = 1i64 << TOLERANCE_BITS;
    // Per bit: the only answer, or None inside the band.
    let decide = |s: i64| ((s - threshold).abs() > band).then_some((s >= threshold) as u64);
    let mut expected: Vec<Option<u64>> = scores.iter().map(|&s| decide(s)).collect();
    let best = scores.iter().copied().max().unwrap_or(0);
    expected.push(decide(best));

    let lut = server.lookup_table(|x| (x * x + 1) % 16)?;
    let mut stages: [Vec<f64>; 4] = Default::default();
    let mut baseline = Vec::new();
    let mut errors = 0usize;
    for run in 0..RUNS {
        let total = Instant::now();
        let t = Instant::now();
        let ct = bfv_key.encrypt(&biometric::encode_probe_coefficients(&ctx, &probe)?)?;
        stages[0].push(us(t));
        let t = Instant::now();
        let product = biometric::compute_scores_coefficients(&ct, &groups, &public)?;
        let mut bits = transition::bfv_scores_above(
            &product[0],
            &coefficients,
            threshold,
            TOLERANCE_BITS,
            &key,
            &server,
        )?;
        bits.push(transition::any(&server, &bits)?);
        stages[1].push(us(t));
        let t = Instant::now();
        let got = bits
            .iter()
            .map(|b| tfhe_key.decrypt_with_carry(b))
            .collect::<Result<Vec<_>, _>>()?;
        stages[2].push(us(t));
        stages[3].push(us(total));
        errors += got
            .iter()
            .zip(&expected)
            .filter(|(a, b)| b.is_some_and(|b| **a != b))
            .count();

        // The baseline: the same match, then one 2_2 key switch + bootstrap.
        let block = tfhe_key.encrypt(run as u64 % 4)?;
        let t = Instant::now();
        let product = biometric::compute_scores_coefficients(&ct, &groups, &public)?;
        let out = server.apply_lookup_table(&block, &lut)?;
        baseline.push(us(t));
        let m = run as u64 % 4;
        errors += (tfhe_key.decrypt_with_carry(&out)? != (m * m + 1) % 16) as usize;
        errors += (product.len() != 1) as usize;
    }
    let [encrypt, compute, decrypt, total] = stages.map(|mut v| median(&mut v));
    let baseline_us = median(&mut baseline);
    Ok(WorkloadReport {
        name: "router.match_decision",
        engine: "bfv+tfhe",
        params: format!(
            "{} -> {}, tolerance 2^{TOLERANCE_BITS}",
            ctx.params().name(),
            tfhe_params.name
        ),
        median_us: StageMedians {
            encode: None,
            encrypt: Some(encrypt),
            compute,
            decrypt: Some(decrypt),
            total,
        },
        max_abs_error: errors as f64,
        verified: errors == 0,
        matches_per_second: Some(templates as f64 / (total * 1e-6)),
        workloads_per_second: None,
        baseline: Some(Baseline {
            what:
                "coefficient match + one 2_2 key switch and bootstrap (compute, same run, one core)",
            median_us: baseline_us,
            compute_ratio: compute / baseline_us,
        }),
    })
}
