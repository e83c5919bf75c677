//! The coefficient-encoded biometric match (BFV) with homomorphic threshold
//! decisions (BFV -> TFHE), on one core, next to the baseline the router
//! issue sets: the same match plus one 2_2 key switch and bootstrap,
//! measured in the same run (interleaved), both on the process CPU clock
//! with `TRISKEL_BENCH_CLOCK=cpu` (else wall time).
//!
//! - `router.match_decision`: 1:1 verification, the probe against one
//!   claimed template: one score, decided within [`VERIFY_TOLERANCE_BITS`]
//!   by ONE bootstrap (transition + sign bootstrap).
//! - `router.match_identify`: 1:N identification against 32 templates (one
//!   N = 4096 product): 32 decisions within [`IDENTIFY_TOLERANCE_BITS`] (two
//!   bootstraps each) and "is the best score above the threshold?" (`any`).

use std::sync::Arc;

use triskel::bfv::biometric::{self, sample_embeddings, Embedding, DIM};
use triskel::bfv::{BfvContext, PublicKey, SecretKey};
use triskel::calibrate::median;
use triskel::tfhe::{ClientKey, ServerKey};
use triskel::transition::{self, TransitionKey, WINDOW_BITS};

use crate::workloads::now_us;
use crate::workloads::{Baseline, StageMedians, WorkloadReport};

type Error = Box<dyn std::error::Error>;

/// Runs per stage before taking medians.
const RUNS: usize = 5;

/// The identification's stated tolerance: scores within 2^14 (0.8% of the
/// 2^21 score range) of the threshold may be decided either way, which
/// reads 9 of t's 23 bits: two bootstraps per score instead of six.
pub const IDENTIFY_TOLERANCE_BITS: u32 = 14;

/// The verification's tolerance: the largest reading one bootstrap decides
/// at failure <= 2^-128 is WINDOW_BITS + 1 = 5 bits of t = 2^23 (the
/// transition module's analysis: a 6-bit reading has half the margin), so
/// scores within 2^18 of the threshold may be decided either way.
pub const VERIFY_TOLERANCE_BITS: u32 = biometric::COEFFICIENT_MATCH_LOG_T - (WINDOW_BITS + 1);

fn single_thread<T: Send>(f: impl FnOnce() -> Result<T, String> + Send) -> Result<T, Error> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    pool.install(f).map_err(Error::from)
}

/// The keys of both engines and the transition key between them.
struct Keys {
    ctx: Arc<BfvContext>,
    bfv: SecretKey,
    public: PublicKey,
    tfhe: ClientKey,
    server: ServerKey,
    transition: TransitionKey,
}

impl Keys {
    fn generate() -> Result<Keys, Error> {
        let ctx = BfvContext::new(biometric::coefficient_match_parameters())?;
        let bfv = SecretKey::generate(&ctx)?;
        let public = bfv.public_key()?;
        let tfhe = ClientKey::generate(&triskel::tfhe_set())?;
        let server = tfhe.server_key()?;
        let transition = TransitionKey::generate(&bfv, &tfhe)?;
        Ok(Keys {
            ctx,
            bfv,
            public,
            tfhe,
            server,
            transition,
        })
    }
}

/// Medians of one workload's interleaved stages, in microseconds.
#[derive(Default)]
struct Timings {
    encrypt: Vec<f64>,
    compute: Vec<f64>,
    decrypt: Vec<f64>,
    total: Vec<f64>,
    /// The match alone.
    matching: Vec<f64>,
    /// The match + one key switch and bootstrap.
    baseline: Vec<f64>,
}

/// The coefficient match of a freshly encrypted probe (outside the timings).
fn match_product(
    keys: &Keys,
    probe: &Embedding,
    groups: &[triskel::bfv::Plaintext],
) -> Result<Vec<triskel::bfv::Ciphertext>, Error> {
    let ct = keys
        .bfv
        .encrypt(&biometric::encode_probe_coefficients(&keys.ctx, probe)?)?;
    Ok(biometric::compute_scores_coefficients(
        &ct,
        groups,
        &keys.public,
    )?)
}

/// Runs `decide` (the match and its decisions on an encrypted probe, the
/// bits decrypted and counted wrong against `expected`, None = either)
/// interleaved with the match alone and the baseline, `RUNS` times.
fn measure(
    keys: &Keys,
    probe: &Embedding,
    groups: &[triskel::bfv::Plaintext],
    expected: &[Option<u64>],
    decide: impl Fn(&[triskel::bfv::Ciphertext]) -> Result<Vec<transition::EncryptedBit>, Error>,
) -> Result<(Timings, usize), Error> {
    let lut = keys.server.lookup_table(|x| (x * x + 1) % 16)?;
    let mut m = Timings::default();
    let mut errors = 0usize;
    for run in 0..RUNS {
        let total = now_us();
        let t = now_us();
        let ct = keys
            .bfv
            .encrypt(&biometric::encode_probe_coefficients(&keys.ctx, probe)?)?;
        m.encrypt.push(now_us() - t);
        let t = now_us();
        let product = biometric::compute_scores_coefficients(&ct, groups, &keys.public)?;
        let bits = decide(&product)?;
        m.compute.push(now_us() - t);
        let t = now_us();
        let got = bits
            .iter()
            .map(|b| keys.tfhe.decrypt_with_carry(b))
            .collect::<Result<Vec<_>, _>>()?;
        m.decrypt.push(now_us() - t);
        m.total.push(now_us() - total);
        errors += (got.len() != expected.len()) as usize;
        errors += got
            .iter()
            .zip(expected)
            .filter(|(a, b)| b.is_some_and(|b| **a != b))
            .count();

        let t = now_us();
        let product = biometric::compute_scores_coefficients(&ct, groups, &keys.public)?;
        m.matching.push(now_us() - t);
        errors += (product.len() != groups.len()) as usize;
        // The baseline: the same match, then one 2_2 key switch + bootstrap.
        let v = run as u64 % 4;
        let block = keys.tfhe.encrypt(v)?;
        let t = now_us();
        let product = biometric::compute_scores_coefficients(&ct, groups, &keys.public)?;
        let out = keys.server.apply_lookup_table(&block, &lut)?;
        m.baseline.push(now_us() - t);
        errors += (keys.tfhe.decrypt_with_carry(&out)? != (v * v + 1) % 16) as usize;
        errors += (product.len() != groups.len()) as usize;
    }
    Ok((m, errors))
}

fn report(
    name: &'static str,
    keys: &Keys,
    (tolerance_bits, bootstraps): (u32, usize),
    decisions: usize,
    mut m: Timings,
    errors: usize,
) -> WorkloadReport {
    let compute = median(&mut m.compute);
    let total = median(&mut m.total);
    let matching = median(&mut m.matching);
    let baseline = median(&mut m.baseline);
    WorkloadReport {
        name,
        engine: "bfv+tfhe",
        params: format!(
            "{} -> {}, tolerance 2^{tolerance_bits}, {} bootstrap(s) per score",
            keys.ctx.params().name(),
            keys.server.parameters().name,
            bootstraps
        ),
        median_us: StageMedians {
            partial: None,
            combine: None,
            encode: None,
            encrypt: Some(median(&mut m.encrypt)),
            compute,
            decrypt: Some(median(&mut m.decrypt)),
            total,
        },
        max_abs_error: errors as f64,
        verified: errors == 0,
        matches_per_second: Some(decisions as f64 / (total * 1e-6)),
        workloads_per_second: None,
        baseline: Some(Baseline {
            what:
                "coefficient match + one 2_2 key switch and bootstrap (compute, same run, one core)",
            median_us: baseline,
            compute_ratio: compute / baseline,
            decisions,
            per_decision_us: (compute - matching) / decisions as f64,
        }),
    }
}

/// The plaintext answer of `score >= threshold` decided within 2^r: None
/// (either bit) inside the band.
fn expected_bit(score: i64, threshold: i64, tolerance_bits: u32) -> Option<u64> {
    ((score - threshold).abs() > 1i64 << tolerance_bits).then_some((score >= threshold) as u64)
}

/// 1:1 verification: a probe against its claimed template (one score of a
/// one-template coefficient product), decided by one bootstrap. The timed
/// runs decide against a threshold twice the tolerance below the score
/// (answer 1); one more run, untimed, against one as far above (answer 0).
pub fn match_decision() -> Result<WorkloadReport, Error> {
    single_thread(|| match_decision_on_this_thread().map_err(|e| e.to_string()))
}

fn match_decision_on_this_thread() -> Result<WorkloadReport, Error> {
    let keys = Keys::generate()?;
    let template = sample_embeddings(1, 12)[0];
    let probe = sample_embeddings(1, 11)[0];
    let groups = biometric::encode_templates_coefficients(&keys.ctx, &[template])?;
    let coefficient = biometric::score_coefficients(&keys.ctx, 1)?;
    let score = biometric::plaintext_scores(&probe, &[template])[0];
    let r = VERIFY_TOLERANCE_BITS;
    let decide_at = |threshold: i64| {
        let coefficient = coefficient.clone();
        let keys = &keys;
        move |product: &[triskel::bfv::Ciphertext]| -> Result<_, Error> {
            Ok(transition::bfv_scores_above(
                &product[0],
                &coefficient,
                threshold,
                r,
                &keys.transition,
                &keys.server,
            )?)
        }
    };
    // Twice the tolerance from the score, on each side: both answers checked.
    let (below, above) = (score - (2 << r), score + (2 << r));
    let (m, mut errors) = measure(
        &keys,
        &probe,
        &groups,
        &[expected_bit(score, below, r)],
        decide_at(below),
    )?;
    let product = match_product(&keys, &probe, &groups)?;
    let no = decide_at(above)(&product)?;
    errors += (keys.tfhe.decrypt_with_carry(&no[0])? != 0) as usize;
    let bootstraps =
        transition::bfv_decision_analysis(&product[0], r, &keys.transition, &keys.server)?
            .bootstraps;
    Ok(report(
        "router.match_decision",
        &keys,
        (r, bootstraps),
        1,
        m,
        errors,
    ))
}

/// 1:N identification: 32 templates (one N = 4096 product), a threshold at
/// the median score: per-template decisions within
/// [`IDENTIFY_TOLERANCE_BITS`] and "is the best score above the
/// threshold?" as TFHE bits, decrypted and compared with the plaintext
/// comparisons (a score within the tolerance of the threshold accepts
/// either bit, and the OR either bit only when no score is above the band
/// but one is inside it).
pub fn match_identify() -> Result<WorkloadReport, Error> {
    single_thread(|| match_identify_on_this_thread().map_err(|e| e.to_string()))
}

fn match_identify_on_this_thread() -> Result<WorkloadReport, Error> {
    let keys = Keys::generate()?;
    let templates = keys.ctx.n() / DIM;
    let enrolled = sample_embeddings(templates, 12);
    let groups = biometric::encode_templates_coefficients(&keys.ctx, &enrolled)?;
    let coefficients = biometric::score_coefficients(&keys.ctx, templates)?;
    let probe = sample_embeddings(1, 11)[0];
    let scores = biometric::plaintext_scores(&probe, &enrolled);
    let mut sorted = scores.clone();
    sorted.sort_unstable();
    let threshold = sorted[templates / 2];
    let r = IDENTIFY_TOLERANCE_BITS;
    let mut expected: Vec<Option<u64>> = scores
        .iter()
        .map(|&s| expected_bit(s, threshold, r))
        .collect();
    let best = scores.iter().copied().max().unwrap_or(0);
    expected.push(expected_bit(best, threshold, r));
    let product = match_product(&keys, &probe, &groups)?;
    let bootstraps =
        transition::bfv_decision_analysis(&product[0], r, &keys.transition, &keys.server)?
            .bootstraps;
    let (m, errors) = measure(&keys, &probe, &groups, &expected, |product| {
        let mut bits = transition::bfv_scores_above(
            &product[0],
            &coefficients,
            threshold,
            r,
            &keys.transition,
            &keys.server,
        )?;
        bits.push(transition::any(&keys.server, &bits)?);
        Ok(bits)
    })?;
    Ok(report(
        "router.match_identify",
        &keys,
        (r, bootstraps),
        templates,
        m,
        errors,
    ))
}

/// 1:N identification by argmax through the router (`Program::argmax_within`):
/// which of 32 templates (one N = 4096 coefficient product) matches best,
/// to within 2^[`IDENTIFY_TOLERANCE_BITS`]: every score's 9 bits read
/// through the BFV -> TFHE transition, then a tournament of 31 u16
/// comparisons in TFHE. One run (about 1300 bootstraps: a median of
/// several would take minutes), its stages summed from the plan's measured
/// steps (key generation left out); verified when the decrypted index's score is within the tolerance of
/// the largest.
pub fn match_argmax() -> Result<WorkloadReport, Error> {
    single_thread(|| match_argmax_on_this_thread().map_err(|e| e.to_string()))
}

fn match_argmax_on_this_thread() -> Result<WorkloadReport, Error> {
    use std::collections::BTreeMap;
    use triskel::{CostModel, Kind, PlainValue, Program, Scalar, Session, StepKind};
    let params = biometric::coefficient_match_parameters();
    let templates = params.n() / DIM;
    let enrolled = sample_embeddings(templates, 12);
    let probe = sample_embeddings(1, 11)[0];
    let scores = biometric::plaintext_scores(&probe, &enrolled);
    let r = IDENTIFY_TOLERANCE_BITS;
    let mut p = Program::new();
    let x = p.input(
        "probe",
        Kind::Signed {
            len: DIM,
            bound: 127,
        },
    )?;
    let values = enrolled
        .iter()
        .map(|t| {
            let w: Vec<Scalar> = t.iter().map(|&c| Scalar::Int(c as i64)).collect();
            p.dot_plain(x, &w)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let best = p.argmax_within(&values, r)?;
    p.output("best", best)?;
    let costs = CostModel::load().0;
    let mut plan = triskel::plan(&p, &costs)?;
    let inputs = BTreeMap::from([(
        "probe".to_string(),
        PlainValue::Ints(probe.iter().map(|&v| v as i128).collect()),
    )]);
    let out = Session::with_costs(costs).run(&mut plan, &inputs)?;
    let stage = |f: &dyn Fn(&StepKind) -> bool| -> f64 {
        plan.steps()
            .iter()
            .filter(|s| f(&s.kind))
            .filter_map(|s| s.measured_ns)
            .sum::<f64>()
            / 1e3
    };
    let encrypt = stage(&|k| matches!(k, StepKind::Encrypt(_)));
    let compute = stage(&|k| matches!(k, StepKind::Op(_) | StepKind::Transition { .. }));
    let decrypt = stage(&|k| matches!(k, StepKind::Decrypt(_)));
    let index = match out.get("best") {
        Some(PlainValue::Ints(v)) if v.len() == 1 => v[0] as usize,
        other => return Err(format!("argmax output {other:?}").into()),
    };
    let largest = scores.iter().copied().max().unwrap_or(0);
    let error = largest - scores.get(index).copied().unwrap_or(i64::MIN / 2);
    let total = encrypt + compute + decrypt;
    Ok(WorkloadReport {
        name: "router.match_argmax",
        engine: "bfv+tfhe",
        params: format!(
            "{} -> {}, argmax of {templates} scores within 2^{r}",
            plan.bfv()[0].params.name(),
            plan.tfhe().as_ref().map_or("", |t| t.name)
        ),
        median_us: StageMedians {
            partial: None,
            combine: None,
            encode: None,
            encrypt: Some(encrypt),
            compute,
            decrypt: Some(decrypt),
            total,
        },
        max_abs_error: error as f64,
        verified: (0..=1i64 << r).contains(&error),
        matches_per_second: Some(templates as f64 / (total * 1e-6)),
        workloads_per_second: None,
        baseline: None,
    })
}
