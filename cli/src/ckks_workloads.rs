//! The CKKS workloads of `triskel bench workloads` and `triskel demo`: each
//! measured stage by stage and checked against the float64 computation.

use std::sync::Arc;

use triskel::calibrate::median;
use triskel::ckks::{
    ChebyshevPolynomial, Ciphertext, CkksContext, CkksParameters, LinearTransform, Plaintext,
    SecretKey,
};

use crate::workloads::{now_us, us, StageMedians, WorkloadReport};

type Error = Box<dyn std::error::Error>;

/// Runs per stage before taking medians.
const RUNS: usize = 10;

/// The error target: a workload is verified when its decrypted
/// result is within this of the float64 computation.
pub const ERROR_BOUND: f64 = 2e-6;

/// Interval and degree of the activation of `ckks.poly_deg7` and `ckks.mlp_64_4_1`.
const ACTIVATION: (f64, f64, usize) = (-8.0, 8.0, 7);

/// Deterministic inputs in [-1, 1].
fn inputs(seed: u64, len: usize) -> Vec<f64> {
    (0..len)
        .map(|i| {
            ((i as f64 + 1.0) * 0.618_033_988_7 + seed as f64 * 0.414_213_562_3).fract() * 2.0 - 1.0
        })
        .collect()
}

fn max_error(got: &[f64], want: &[f64]) -> f64 {
    if got.len() < want.len() {
        return f64::INFINITY;
    }
    got.iter()
        .zip(want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

/// The computation of a workload on its encrypted inputs.
type Compute<'a> = dyn Fn(&[Ciphertext]) -> triskel::ckks::Result<Ciphertext> + 'a;

/// Times `RUNS` runs of: encode `inputs` (real, top level, default scale,
/// under the public `bound` on their magnitudes), encrypt them with the public key, `compute`, decrypt; and compares every
/// decrypted result with `want` (its first `want.len()` slots).
fn measure(
    name: &'static str,
    sk: &SecretKey,
    inputs: &[Vec<f64>],
    bound: f64,
    compute: &Compute<'_>,
    want: &[f64],
) -> Result<WorkloadReport, Error> {
    let ctx = sk.context();
    let pk = sk.public_key()?;
    let mut times: [Vec<f64>; 5] = Default::default();
    let mut max_abs_error = 0f64;
    for _ in 0..RUNS {
        let total = now_us();
        let t = now_us();
        let pts = inputs
            .iter()
            .map(|v| Plaintext::encode_real(ctx, v, ctx.max_level(), ctx.default_scale(), bound))
            .collect::<Result<Vec<_>, _>>()?;
        times[0].push(us(t));
        let t = now_us();
        let cts = pts
            .iter()
            .map(|p| pk.encrypt(p))
            .collect::<Result<Vec<_>, _>>()?;
        times[1].push(us(t));
        let t = now_us();
        let out = compute(&cts)?;
        times[2].push(us(t));
        let t = now_us();
        let got = sk.decrypt_real(&out)?;
        times[3].push(us(t));
        times[4].push(us(total));
        max_abs_error = max_abs_error.max(max_error(&got, want));
    }
    let [encode, encrypt, compute, decrypt, total] = times.map(|mut v| median(&mut v));
    Ok(WorkloadReport {
        name,
        engine: "ckks",
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
        verified: max_abs_error <= ERROR_BOUND,
        matches_per_second: None,
        workloads_per_second: None,
        baseline: None,
    })
}

/// A context and a fresh secret key for `params`.
fn setup(params: CkksParameters) -> Result<(Arc<CkksContext>, SecretKey), Error> {
    let ctx = CkksContext::new(params)?;
    let sk = SecretKey::generate(&ctx)?;
    Ok((ctx, sk))
}

/// x * y over all n/2 slots: tensor, relinearize, rescale (fused, NTT form),
/// reported as `name`.
pub fn mul_pipeline(name: &'static str, params: CkksParameters) -> Result<WorkloadReport, Error> {
    let (ctx, sk) = setup(params)?;
    let rk = sk.relin_key()?;
    let (a, b) = (inputs(1, ctx.slots()), inputs(2, ctx.slots()));
    let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    let compute = |c: &[Ciphertext]| c[0].mul_relin_rescale(&c[1], &rk);
    measure(name, &sk, &[a, b], 1.0, &compute, &want)
}

/// x^2 over all slots (the fused pipeline on one ciphertext).
pub fn poly_x2(params: CkksParameters) -> Result<WorkloadReport, Error> {
    let (ctx, sk) = setup(params)?;
    let rk = sk.relin_key()?;
    let a = inputs(3, ctx.slots());
    let want: Vec<f64> = a.iter().map(|x| x * x).collect();
    let compute = |c: &[Ciphertext]| c[0].square_relin_rescale(&rk);
    measure("ckks.poly_x2", &sk, &[a], 1.0, &compute, &want)
}

/// One rotation by one slot (key switching with a Galois key).
pub fn rotate(params: CkksParameters) -> Result<WorkloadReport, Error> {
    let (ctx, sk) = setup(params)?;
    let gk = sk.galois_keys(&[1], false)?;
    let s = ctx.slots();
    let a = inputs(4, s);
    let want: Vec<f64> = (0..s).map(|i| a[(i + 1) % s]).collect();
    let compute = |c: &[Ciphertext]| c[0].rotate(1, &gk);
    measure("ckks.rotate", &sk, &[a], 1.0, &compute, &want)
}

/// The sum of 64 encrypted values by a tree of 6 rotations (slot 0 checked).
pub fn slot_sum64(params: CkksParameters) -> Result<WorkloadReport, Error> {
    let (_, sk) = setup(params)?;
    let gk = sk.galois_keys(&[1, 2, 4, 8, 16, 32], false)?;
    let a = inputs(5, 64);
    let want = [a.iter().sum::<f64>()];
    let compute = |c: &[Ciphertext]| c[0].slot_sum(64, &gk);
    measure("ckks.slot_sum64", &sk, &[a], 1.0, &compute, &want)
}

/// The dot product of two encrypted 64-dimensional vectors: multiply
/// pipeline, then the rotation tree (slot 0 checked).
pub fn dot64(params: CkksParameters) -> Result<WorkloadReport, Error> {
    let (_, sk) = setup(params)?;
    let rk = sk.relin_key()?;
    let gk = sk.galois_keys(&[1, 2, 4, 8, 16, 32], false)?;
    let (a, b) = (inputs(6, 64), inputs(7, 64));
    let want = [a.iter().zip(&b).map(|(x, y)| x * y).sum::<f64>()];
    let compute = |c: &[Ciphertext]| c[0].mul_relin_rescale(&c[1], &rk)?.slot_sum(64, &gk);
    measure("ckks.dot64", &sk, &[a, b], 1.0, &compute, &want)
}

/// The activation: sigmoid approximated by a degree-7 Chebyshev
/// interpolant on [-8, 8] (its own approximation error is printed by the
/// demo; the workloads' errors are against this polynomial in float64).
pub fn activation() -> Result<ChebyshevPolynomial, Error> {
    let (a, b, d) = ACTIVATION;
    Ok(ChebyshevPolynomial::sigmoid(a, b, d)?)
}

/// The activation's coefficients on [-1, 1]: the same function of
/// y = x / 8, for inputs whose change of variable is folded into what
/// precedes (the client encrypts y, or a layer's weights are divided by 8),
/// which saves a level (3 instead of 4).
fn unit_activation() -> Result<ChebyshevPolynomial, Error> {
    Ok(ChebyshevPolynomial::new(
        activation()?.coeffs().to_vec(),
        -1.0,
        1.0,
    )?)
}

/// The degree-7 activation on every slot: x in [-8, 8] encrypted as
/// y = x / 8, three levels.
pub fn poly_deg7(params: CkksParameters) -> Result<WorkloadReport, Error> {
    let (ctx, sk) = setup(params)?;
    let rk = sk.relin_key()?;
    let (p, unit) = (activation()?, unit_activation()?);
    let y = inputs(8, ctx.slots());
    let want: Vec<f64> = y.iter().map(|&y| p.eval(8.0 * y)).collect();
    let compute = |c: &[Ciphertext]| unit.evaluate(&c[0], &rk);
    measure("ckks.poly_deg7", &sk, &[y], 1.0, &compute, &want)
}

/// A deterministic rows x cols weight matrix with entries in [-max, max].
fn weights(seed: u64, rows: usize, cols: usize, max: f64) -> Vec<Vec<f64>> {
    (0..rows)
        .map(|r| {
            inputs(seed + r as u64, cols)
                .iter()
                .map(|w| w * max)
                .collect()
        })
        .collect()
}

fn mat_vec(m: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
    m.iter()
        .map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum())
        .collect()
}

/// A dense layer 64 -> 4: the input packed periodically over all slots,
/// the hybrid diagonal method (4 extended diagonals encoded once at setup,
/// 3 hoisted rotations, a fold of 4 rotations).
pub fn dense_64x4(params: CkksParameters) -> Result<WorkloadReport, Error> {
    let (ctx, sk) = setup(params)?;
    let w = weights(100, 4, 64, 0.5);
    let layer = LinearTransform::new(&ctx, &w, 64, ctx.max_level())?;
    let gk = sk.galois_keys(&layer.rotation_steps(), false)?;
    let x = inputs(9, 64);
    let want = mat_vec(&w, &x);
    let compute = |c: &[Ciphertext]| layer.apply(&c[0], &gk);
    let packed = LinearTransform::pack(&x, 64, ctx.slots());
    measure("ckks.dense_64x4", &sk, &[packed], 1.0, &compute, &want)
}

/// The same network 64 -> 4 -> 1 with the square activation h^2 (as in
/// CryptoNets): 1 + 1 + 1 levels, so it runs on the depth-3 N = 8192 set,
/// where the degree-7 activation's 1 + 3 + 1 levels do not: 5 primes of 40
/// bits, q_0 and P exceed the 214 bits that 128-bit security allows there,
/// and a scale small enough to fit (2^29) misses the 2e-6 error target.
pub fn mlp_64_4_1_square(params: CkksParameters) -> Result<WorkloadReport, Error> {
    let (ctx, sk) = setup(params)?;
    let rk = sk.relin_key()?;
    let (w1, w2) = (weights(200, 4, 64, 0.125), weights(300, 1, 4, 0.5));
    let top = ctx.max_level();
    let l1 = LinearTransform::new(&ctx, &w1, 64, top)?;
    let l2 = LinearTransform::new(&ctx, &w2, l1.output_period(), top - 2)?;
    let mut steps = l1.rotation_steps();
    steps.extend(l2.rotation_steps());
    let gk = sk.galois_keys(&steps, false)?;
    let x = inputs(10, 64);
    let hidden: Vec<f64> = mat_vec(&w1, &x).iter().map(|&h| h * h).collect();
    let want = mat_vec(&w2, &hidden);
    let compute =
        |c: &[Ciphertext]| l2.apply(&l1.apply(&c[0], &gk)?.square_relin_rescale(&rk)?, &gk);
    let packed = LinearTransform::pack(&x, 64, ctx.slots());
    measure(
        "ckks.mlp_64_4_1_square",
        &sk,
        &[packed],
        1.0,
        &compute,
        &want,
    )
}

/// A two-layer network 64 -> 4 -> 1 with the degree-7 activation between
/// the layers (layer 2 reads layer 1's output, periodic with period 4).
pub fn mlp_64_4_1(params: CkksParameters) -> Result<WorkloadReport, Error> {
    let (ctx, sk) = setup(params)?;
    let rk = sk.relin_key()?;
    // |w1| <= 1/8 and |x| <= 1 keep the hidden values inside the
    // activation's interval [-8, 8]; layer 1 runs with w1 / 8, so that the
    // activation reads y = h / 8 on [-1, 1] (one level saved).
    let (w1, w2) = (weights(200, 4, 64, 0.125), weights(300, 1, 4, 0.5));
    let (p, unit) = (activation()?, unit_activation()?);
    let w1_unit: Vec<Vec<f64>> = w1
        .iter()
        .map(|row| row.iter().map(|w| w / 8.0).collect())
        .collect();
    let top = ctx.max_level();
    let l1 = LinearTransform::new(&ctx, &w1_unit, 64, top)?;
    let l2 = LinearTransform::new(&ctx, &w2, l1.output_period(), top - 1 - unit.depth())?;
    let mut steps = l1.rotation_steps();
    steps.extend(l2.rotation_steps());
    let gk = sk.galois_keys(&steps, false)?;
    let x = inputs(10, 64);
    let hidden: Vec<f64> = mat_vec(&w1, &x).iter().map(|&h| p.eval(h)).collect();
    let want = mat_vec(&w2, &hidden);
    let compute = |c: &[Ciphertext]| l2.apply(&unit.evaluate(&l1.apply(&c[0], &gk)?, &rk)?, &gk);
    let packed = LinearTransform::pack(&x, 64, ctx.slots());
    measure("ckks.mlp_64_4_1", &sk, &[packed], 1.0, &compute, &want)
}
