//! The noise analyses of transitions: decision windows, failure bounds
//! and tolerances, for BFV and CKKS sources (the planner's side).

use super::*;

/// The noise analysis of one decision (module documentation).
///
/// # Examples
///
/// The exact decision on the coefficient match's 23-bit values, before any
/// key exists:
///
/// ```
/// use triskel::bfv::{biometric, BfvContext};
/// use triskel::transition::{decision_analysis, MAX_LOG2_FAILURE};
///
/// let ctx = BfvContext::new(biometric::coefficient_match_parameters())?;
/// let q = ctx.q_primes()[0];
/// let a = decision_analysis(4096, &triskel::tfhe_set(), 10.0, q, 23, false);
/// assert_eq!((a.window_bits, a.bootstraps), (4, 6));
/// assert!(a.log2_failure_per_decision <= MAX_LOG2_FAILURE);
/// assert!(a.log2_failure_per_bootstrap < a.log2_failure_per_decision);
/// # Ok::<(), triskel::bfv::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecisionAnalysis {
    /// Bits per window above the lowest.
    pub window_bits: u32,
    /// Bootstraps per decision (windows).
    pub bootstraps: usize,
    /// Variance of the input phase error of the highest window (the
    /// largest), units of 1/(2N)^2.
    pub input_variance: f64,
    /// Of which the ring switch.
    pub ring_switch: f64,
    /// Distance of the highest window's reading from its boundaries, units
    /// of 1/(2N).
    pub margin: f64,
    /// log2 of the failure probability of the likeliest bootstrap to fail.
    pub log2_failure_per_bootstrap: f64,
    /// log2 of the failure probability of a decision (union bound).
    pub log2_failure_per_decision: f64,
}

/// The tops of the windows (bits, ascending, the last = k): W windows of
/// `d` bits above a lowest one of 1..=d + 1 bits.
pub(crate) fn window_tops(k: u32, d: u32) -> Vec<u32> {
    let mut tops = vec![k];
    while tops[0] > d + 1 {
        tops.insert(0, tops[0] - d);
    }
    tops
}

/// The analysis for a key, the source ciphertext's noise (log2 of its
/// deviation at the last prime, absolute) and a k-bit reading, in the
/// widest windows that meet the bound ([`decision_analysis`]).
pub fn analyse_decision(
    key: &TransitionKey,
    source_noise_log2: f64,
    last_prime: u64,
    k: u32,
    rounded: bool,
) -> DecisionAnalysis {
    decision_analysis(
        key.source.n(),
        &key.tfhe,
        source_noise_log2,
        last_prime,
        k,
        rounded,
    )
}

/// The analysis of a decision before any key exists (what the planner
/// checks): a source ring of degree `source_n` decided on the TFHE set `p`
/// in the widest windows ([`WINDOW_BITS`] down to 2 bits) whose failure
/// stays within 2^[`MAX_LOG2_FAILURE`], or in 2-bit windows when none does
/// (the caller refuses it). `rounded`: bits below the reading (a
/// tolerance, or a real's fraction) make the lowest window round.
pub fn decision_analysis(
    source_n: usize,
    p: &tfhe::TfheParameters,
    source_noise_log2: f64,
    last_prime: u64,
    k: u32,
    rounded: bool,
) -> DecisionAnalysis {
    let analysis = |d| analyse(source_n, p, source_noise_log2, last_prime, k, d, rounded);
    (2..=WINDOW_BITS)
        .rev()
        .map(analysis)
        .find(|a| a.log2_failure_per_decision <= MAX_LOG2_FAILURE)
        .unwrap_or_else(|| analysis(2))
}

/// The analysis of a k-bit reading in windows of `window_bits`.
pub fn analyse(
    source_n: usize,
    p: &tfhe::TfheParameters,
    source_noise_log2: f64,
    last_prime: u64,
    k: u32,
    window_bits: u32,
    rounded: bool,
) -> DecisionAnalysis {
    let tops = window_tops(k, window_bits);
    analyse_windows(
        source_n,
        p,
        source_noise_log2,
        last_prime,
        (&tops, window_bits, rounded),
        1,
    )
}

/// The analysis of reading the bits of k-bit values to within 2^r
/// ([`bfv_value_bits`], r = `tolerance_bits`): windows of one bit
/// (`bit_windows`), each previous reading entering the next window as a
/// block scaled by the set's `correction_gain`; with r > 0 the lowest
/// window rounds, which takes up to an eighth of a box from the next
/// windows' quarter-box margin.
pub fn analyse_bits(
    source_n: usize,
    p: &tfhe::TfheParameters,
    source_noise_log2: f64,
    last_prime: u64,
    k: u32,
    tolerance_bits: u32,
) -> DecisionAnalysis {
    let tops = bit_windows(k, tolerance_bits);
    let gain = correction_gain(p, 1).unwrap_or(u64::MAX);
    let rounded = tolerance_bits > 0;
    analyse_windows(
        source_n,
        p,
        source_noise_log2,
        last_prime,
        (&tops, 1, rounded),
        gain,
    )
}

/// The window tops (ascending) that read the bits of a k-bit value to
/// within 2^r: for r = 0 every bit, one window each from a 1-bit lowest;
/// for r > 0 a reading at 2^(r - 1) whose lowest window (2 bits) rounds and
/// whose bit 0 is not read, so that the k - r bits read are those of M
/// with |M 2^r - m| <= 3 2^(r - 2) ([`bfv_value_bits`]).
pub(crate) fn bit_windows(k: u32, tolerance_bits: u32) -> Vec<u32> {
    match tolerance_bits {
        0 => (1..=k).collect(),
        r => window_tops(k - r + 1, 1),
    }
}

/// The analysis of windows (tops ascending, bits per window above the
/// lowest, whether the lowest rounds a fraction), the previous reading
/// entering each higher window with its output noise multiplied by `gain`.
pub(crate) fn analyse_windows(
    source_n: usize,
    p: &tfhe::TfheParameters,
    source_noise_log2: f64,
    last_prime: u64,
    (tops, window_bits, rounded): (&[u32], u32, bool),
    gain: u64,
) -> DecisionAnalysis {
    let tfhe_noise = p.noise();
    let two_n = 2.0 * p.polynomial_size as f64;
    let scale = two_n * two_n;
    let ring = ring_switch::noise_variance(source_n, last_prime, p.glwe_noise_std) * scale;
    let k = tops.last().copied().unwrap_or(0);
    let lowest_top = tops.first().copied().unwrap_or(0);
    // The source noise (and the 1/2 per term of sample extraction's
    // rounding, well below it), amplified by the lowest window's shift.
    let relative = source_noise_log2.exp2() / last_prime as f64;
    let amplified = (relative * 2f64.powi((k - lowest_top) as i32)).powi(2) * scale;
    // Every window's input: the ring switch, the server's key switch (big
    // to small key) and the modulus switch to 2N.
    let lowest = ring + tfhe_noise.key_switch * scale + tfhe_noise.modulus_switch + amplified;
    // The lowest window's digit sits half a box from its boundaries; every
    // higher one a quarter box, with the previous reading's output (the
    // blind rotation's noise times the gain, added under the big key
    // before the key switch) in its input.
    let lowest_margin = two_n / 2f64.powi(lowest_top as i32 + 1);
    let mut failures = vec![tfhe::params::log2_gaussian_tail(
        lowest_margin / lowest.sqrt(),
    )];
    let (mut input_variance, mut margin) = (lowest, lowest_margin);
    if tops.len() > 1 {
        input_variance = lowest + (gain as f64).powi(2) * tfhe_noise.blind_rotation * scale;
        margin = two_n / 2f64.powi(window_bits as i32 + 2);
        // A rounding lowest window may carry half its last unit into the
        // next window's fraction.
        if rounded {
            margin -= two_n / 2f64.powi((window_bits + lowest_top) as i32 + 1);
        }
        let upper = tfhe::params::log2_gaussian_tail(margin / input_variance.sqrt());
        failures.extend(std::iter::repeat_n(upper, tops.len() - 1));
    }
    let per = failures.iter().copied().fold(f64::MIN, f64::max);
    // Union bound over the windows.
    let total = failures.iter().map(|f| f.exp2()).sum::<f64>().log2();
    DecisionAnalysis {
        window_bits,
        bootstraps: tops.len(),
        input_variance,
        ring_switch: ring,
        margin,
        log2_failure_per_bootstrap: per,
        log2_failure_per_decision: total,
    }
}

/// The factor g with which a reading kept as a block b (b Delta on the
/// torus) becomes the next window's correction c - g b Delta = +-c, c =
/// 1/2^(window_bits + 2) of the torus: g = 2c / Delta, an error when the
/// set's Delta does not divide 2c.
pub(crate) fn correction_gain(p: &tfhe::TfheParameters, window_bits: u32) -> Result<u64> {
    let (_, _, delta) = any_bounds(p)?;
    let twice_c = 1u128 << (65 - (window_bits + 2));
    if !twice_c.is_multiple_of(delta as u128) {
        return Err(Error::Mismatch(format!(
            "{}: a block cannot carry a {window_bits}-bit window's correction",
            p.name
        )));
    }
    Ok((twice_c / delta as u128) as u64)
}

/// The decision's analysis ([`analyse_decision`]), an error when even its
/// narrowest windows exceed the failure bound.
pub(crate) fn check_analysis(
    key: &TransitionKey,
    noise_log2: f64,
    last_prime: u64,
    k: u32,
    rounded: bool,
) -> Result<DecisionAnalysis> {
    let analysis = analyse_decision(key, noise_log2, last_prime, k, rounded);
    if analysis.log2_failure_per_decision > MAX_LOG2_FAILURE {
        return Err(Error::OutOfRange(format!(
            "a decision would fail with probability 2^{:.1}",
            analysis.log2_failure_per_decision
        )));
    }
    Ok(analysis)
}

/// The analysis of [`bfv_scores_above`]'s decisions on `ct` within
/// 2^`tolerance_bits`: windows, bootstraps and failure bound; an error
/// when no reading meets the bound.
pub fn bfv_decision_analysis(
    ct: &bfv::Ciphertext,
    tolerance_bits: u32,
    key: &TransitionKey,
    server: &tfhe::ServerKey,
) -> Result<DecisionAnalysis> {
    let (low, k) = bfv_source(ct, key, server)?;
    check_tolerance(k, tolerance_bits)?;
    let q = ct.context().q_primes()[0];
    check_analysis(
        key,
        low.noise_estimate_log2(),
        q,
        k - tolerance_bits,
        tolerance_bits > 0,
    )
}

pub(crate) fn check_tolerance(k: u32, tolerance_bits: u32) -> Result<()> {
    if tolerance_bits + 3 > k {
        return Err(Error::OutOfRange(format!(
            "a tolerance of 2^{tolerance_bits} leaves fewer than 3 of the {k} bits of t"
        )));
    }
    Ok(())
}

/// What a CKKS -> TFHE decision reads (module documentation).
///
/// # Examples
///
/// ```
/// use triskel::transition::{ckks_reading, Error, MAX_LOG2_FAILURE};
///
/// // N = 8192, scale 2^40, q_0 ~ 2^49, an error of 2^-29, values in [-1, 1]:
/// // is x >= 0.5, to within 2^-10?
/// let tfhe = triskel::tfhe_set();
/// let (error, scale, q0) = (2f64.powi(11), 2f64.powi(40), 2f64.powi(49));
/// let r = ckks_reading(8192, &tfhe, error, scale, q0, 1.0, 0.5, 2f64.powi(-10))?;
/// assert!(r.tolerance <= 2f64.powi(-10));
/// assert_eq!(r.read_bits, r.precision_bits + 9); // + log2(q_0 / scale)
/// assert!(r.log2_failure <= MAX_LOG2_FAILURE);
///
/// // Finer than the value's own error: refused.
/// let fine = ckks_reading(8192, &tfhe, error, scale, q0, 1.0, 0.5, 2f64.powi(-40));
/// assert!(matches!(fine, Err(Error::OutOfRange(_))));
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CkksReading {
    /// p: the reading rounds x - threshold to a multiple of 2^-p.
    pub precision_bits: u32,
    /// k = p + ceil(log2(q_0 / scale)) bits of the torus read (one
    /// bootstrap per window).
    pub read_bits: u32,
    /// Bits per window ([`WINDOW_BITS`], or fewer where the failure bound
    /// needs a wider margin).
    pub window_bits: u32,
    /// Bootstraps per decision (one per window).
    pub bootstraps: usize,
    /// 2^-p + E / scale: the bit is right whenever |x - threshold| exceeds it.
    pub tolerance: f64,
    /// log2 of the failure probability of one decision.
    pub log2_failure: f64,
}

/// The reading of a CKKS -> TFHE decision that meets `tolerance` on a
/// coefficient of error bound `error` (scaled units) at `scale`, values of
/// magnitude at most `message` (value units), the last prime `q0`, a ring
/// of degree `source_n` and the TFHE set `tfhe_params`; an error saying why
/// none does (module documentation). The planner checks programs with it,
/// and [`ckks_coefficients_above`] each ciphertext.
#[allow(clippy::too_many_arguments)]
pub fn ckks_reading(
    source_n: usize,
    tfhe_params: &tfhe::TfheParameters,
    error: f64,
    scale: f64,
    q0: f64,
    message: f64,
    threshold: f64,
    tolerance: f64,
) -> Result<CkksReading> {
    let range = q0 / scale;
    let noise = error / scale;
    if !(noise.is_finite() && tolerance.is_finite() && tolerance > noise) {
        return Err(Error::OutOfRange(format!(
            "a tolerance of {tolerance:.3e} is finer than the CKKS error bound of the value ({noise:.3e}): no reading is that precise"
        )));
    }
    let precision_bits = (-(tolerance - noise).log2()).ceil().max(0.0) as u32;
    let read_bits = precision_bits + range.log2().ceil().max(0.0) as u32;
    if !(1..60).contains(&read_bits) {
        return Err(Error::OutOfRange(format!(
            "a tolerance of {tolerance:.3e} on a range of {range:.3e} needs {read_bits} bits read (1..60)"
        )));
    }
    if !threshold.is_finite() || message + threshold.abs() + noise >= range / 2.0 {
        return Err(Error::OutOfRange(format!(
            "values up to {message:.3e} and the threshold {threshold} exceed the +-{:.3e} a reading at scale 2^{:.0} holds",
            range / 2.0,
            scale.log2()
        )));
    }
    // The reading always rounds: x - threshold has a fraction below 2^-p.
    let chosen = decision_analysis(
        source_n,
        tfhe_params,
        error.log2(),
        q0 as u64,
        read_bits,
        true,
    );
    if chosen.log2_failure_per_decision > MAX_LOG2_FAILURE {
        return Err(Error::OutOfRange(format!(
            "a decision reading {read_bits} bits would fail with probability 2^{:.1} (at most 2^{MAX_LOG2_FAILURE:.0} is accepted)",
            chosen.log2_failure_per_decision
        )));
    }
    Ok(CkksReading {
        precision_bits,
        read_bits,
        window_bits: chosen.window_bits,
        bootstraps: chosen.bootstraps,
        tolerance: (-(precision_bits as f64)).exp2() + noise,
        log2_failure: chosen.log2_failure_per_decision,
    })
}

/// What bounds [`any`]'s sums on `set`: (p = message x carry, the largest
/// squared 2-norm of a bootstrap's input, Delta = 1/(2p) of the torus).
pub(crate) fn any_bounds(set: &tfhe::TfheParameters) -> Result<(u64, u64, u64)> {
    let tfhe::Encoding::Integer {
        message_modulus,
        carry_modulus,
        max_noise_level,
    } = set.encoding
    else {
        return Err(Error::Mismatch("an integer TFHE set is needed".into()));
    };
    let p = message_modulus * carry_modulus;
    Ok((p, max_noise_level * max_noise_level, (1u64 << 63) / p))
}

/// Bootstraps [`any`] takes on `count` fresh decision bits (degree 1,
/// noise level 1) of `set`: what the planner predicts it from.
pub fn any_bootstraps(set: &tfhe::TfheParameters, count: usize) -> Result<usize> {
    let (p, norm2, _) = any_bounds(set)?;
    let group = p.min(norm2).max(2) as usize;
    let (mut level, mut total) = (count, 0);
    while level > 1 {
        level = level.div_ceil(group);
        total += level;
    }
    Ok(total)
}
