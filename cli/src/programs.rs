//! The demo programs, built through the router API: the biometric match
//! with its threshold decision, the CKKS network 64 -> 4 -> 1 and an 8-bit
//! TFHE comparison; each with its inputs and the plaintext check.

use std::collections::BTreeMap;

use triskel::bfv::biometric::{plaintext_scores, sample_embeddings, DIM, MAX_FEATURE};
use triskel::ckks::ChebyshevPolynomial;
use triskel::{Cmp, Kind, Outputs, PlainValue, Program, Scalar};

type Error = Box<dyn std::error::Error>;

/// Checks decrypted outputs: the worst error against plaintext.
pub type Check = Box<dyn Fn(&Outputs) -> Result<f64, Error> + Send + Sync>;

/// A program, its inputs and a check of its decrypted outputs (the worst
/// error against the plaintext computation, 0 when exact).
pub struct Demo {
    pub name: &'static str,
    pub program: Program,
    pub inputs: BTreeMap<String, PlainValue>,
    pub check: Check,
}

/// Templates in the match demo.
pub const TEMPLATES: usize = 8;
/// The match threshold on the score.
pub const THRESHOLD: i64 = 100_000;
/// Scores within 2^14 of the threshold may be decided either way.
pub const TOLERANCE_BITS: u32 = 14;

/// The biometric match with the homomorphic decision "is the best score
/// above the threshold?": the scores of a 128-feature probe against the
/// templates (BFV, one plaintext product for all), each score >= threshold
/// (within 2^[`TOLERANCE_BITS`]) by a BFV -> TFHE transition, then `any` on
/// TFHE: one output bit, the only thing decrypted.
pub fn biometric_match() -> Result<Demo, Error> {
    let embeddings = sample_embeddings(TEMPLATES + 1, 7);
    let (probe, templates) = (embeddings[0], embeddings[1..].to_vec());
    let mut p = Program::new();
    let x = p.input(
        "probe",
        Kind::Signed {
            len: DIM,
            bound: MAX_FEATURE as u64,
        },
    )?;
    let mut decisions = Vec::new();
    for t in &templates {
        let w: Vec<Scalar> = t.iter().map(|&v| Scalar::Int(v as i64)).collect();
        let score = p.dot_plain(x, &w)?;
        decisions.push(p.threshold_within(score, THRESHOLD, TOLERANCE_BITS)?);
    }
    let any = p.any(&decisions)?;
    p.output("match", any)?;
    let inputs = BTreeMap::from([(
        "probe".to_string(),
        PlainValue::Ints(probe.iter().map(|&v| v as i128).collect()),
    )]);
    let (scores, want) = match_plaintext();
    // Within the tolerance of the threshold, either answer is right.
    let best = scores.iter().copied().max().unwrap_or(0);
    let either = (best - THRESHOLD).abs() <= 1 << TOLERANCE_BITS;
    let check = move |out: &Outputs| -> Result<f64, Error> {
        let ok = either || out.get("match") == Some(&PlainValue::Bits(vec![want]));
        Ok(f64::from(u8::from(!ok)))
    };
    Ok(Demo {
        name: "biometric match + threshold decision",
        program: p,
        inputs,
        check: Box::new(check),
    })
}

/// The plaintext scores of the match demo and whether the best reaches the
/// threshold (what the homomorphic decision must equal).
pub fn match_plaintext() -> (Vec<i64>, bool) {
    let embeddings = sample_embeddings(TEMPLATES + 1, 7);
    let scores = plaintext_scores(&embeddings[0], &embeddings[1..]);
    let decision = scores.iter().any(|&s| s >= THRESHOLD);
    (scores, decision)
}

/// Deterministic values in [-1, 1].
fn values(seed: u64, len: usize) -> Vec<f64> {
    (0..len)
        .map(|i| {
            ((i as f64 + 1.0) * 0.618_033_988_7 + seed as f64 * 0.414_213_562_3).fract() * 2.0 - 1.0
        })
        .collect()
}

fn mat_vec(m: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
    m.iter()
        .map(|r| r.iter().zip(x).map(|(a, b)| a * b).sum())
        .collect()
}

/// The CKKS network 64 -> 4 -> 1 with a degree-7 sigmoid between the layers.
pub fn mlp() -> Result<Demo, Error> {
    let w1: Vec<Vec<f64>> = (0..4)
        .map(|r| values(200 + r, 64).iter().map(|v| v * 0.125).collect())
        .collect();
    let w2: Vec<Vec<f64>> = vec![values(300, 4).iter().map(|v| v * 0.5).collect()];
    let sigmoid = ChebyshevPolynomial::sigmoid(-8.0, 8.0, 7)?;
    let mut p = Program::new();
    let x = p.input("x", Kind::Real { len: 64 })?;
    let h = p.matvec(&w1, x)?;
    let a = p.chebyshev(h, sigmoid.coeffs(), -8.0, 8.0)?;
    let y = p.matvec(&w2, a)?;
    p.output("y", y)?;
    let xs = values(10, 64);
    let hidden: Vec<f64> = mat_vec(&w1, &xs).iter().map(|&h| sigmoid.eval(h)).collect();
    let want = mat_vec(&w2, &hidden);
    let check = move |out: &Outputs| -> Result<f64, Error> {
        match out.get("y") {
            Some(PlainValue::Reals(v)) if v.len() == want.len() => Ok(v
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)),
            other => Err(format!("output y: {other:?}").into()),
        }
    };
    Ok(Demo {
        name: "CKKS network 64 -> 4 -> 1",
        program: p,
        inputs: BTreeMap::from([("x".to_string(), PlainValue::Reals(xs))]),
        check: Box::new(check),
    })
}

/// An 8-bit comparison a > b in TFHE.
pub fn compare8(a: u8, b: u8) -> Result<Demo, Error> {
    let mut p = Program::new();
    let x = p.input("a", Kind::Uint { len: 1, bits: 8 })?;
    let y = p.input("b", Kind::Uint { len: 1, bits: 8 })?;
    let gt = p.compare(x, Cmp::Gt, y)?;
    p.output("a>b", gt)?;
    let check = move |out: &Outputs| -> Result<f64, Error> {
        Ok(f64::from(u8::from(
            out.get("a>b") != Some(&PlainValue::Bits(vec![a > b])),
        )))
    };
    Ok(Demo {
        name: "TFHE 8-bit comparison",
        program: p,
        inputs: BTreeMap::from([
            ("a".to_string(), PlainValue::Ints(vec![a as i128])),
            ("b".to_string(), PlainValue::Ints(vec![b as i128])),
        ]),
        check: Box::new(check),
    })
}

/// The three demo programs as `triskel explain` shows them.
pub fn all() -> Result<Vec<Demo>, Error> {
    Ok(vec![biometric_match()?, mlp()?, compare8(200, 13)?])
}
