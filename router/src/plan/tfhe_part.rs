//! The TFHE side of transitions: what an argmax of signed values and a
//! threshold decision run.

use super::*;

/// What an argmax of signed values (node `i`, of BFV part `part`) runs.
pub(crate) struct ArgmaxShape {
    /// Values compared.
    pub values: usize,
    /// Ciphertexts they are read from (one ring switch per window each).
    pub sources: usize,
    /// Bits read per value (one bootstrap each) and the tolerance.
    pub read: u32,
    pub tolerance: u32,
    /// Bootstraps per value that refresh its two-bit blocks (b0 + 2 b1).
    pub refreshes: usize,
    /// Width of the radix integers compared ([`radix_width`] of `read`).
    pub value_bits: u32,
    /// log2 of the failure probability of all the readings together.
    pub log2_failure: f64,
}

/// The analysis of the decisions of node `i` (a BFV -> TFHE transition
/// other than an argmax, of BFV part `part`): its windows and bootstraps.
pub(crate) fn decision_shape(plan: &Plan, i: usize, part: usize) -> Result<DecisionAnalysis> {
    let p = &plan.program;
    let op = &p.nodes[i].op;
    let params = &plan.bfv[part].params;
    let noise = part_noise(plan, i, part)?;
    transition_analysis(op, noise, params)
        .map_or_else(|| refuse(op.name(), "not a decision on BFV values"), Ok)
}

/// The noise of node `i` of BFV part `part` (log2, at the full modulus).
pub(crate) fn part_noise(plan: &Plan, i: usize, part: usize) -> Result<f64> {
    let p = &plan.program;
    let nodes: Vec<usize> = (0..=i)
        .filter(|&j| {
            matches!(plan.placements[j], Placement::Bfv(k) | Placement::BfvToTfhe(k) if k == part)
        })
        .collect();
    let part_of = &plan.bfv[part];
    let noise = Planner::bfv_noise(
        p,
        &nodes,
        &part_of.params,
        part_of.encoding,
        plan.options.threshold,
    )
    .or_else(|(op, msg)| refuse(op, msg))?;
    Ok(noise[i])
}

pub(crate) fn argmax_shape(plan: &Plan, i: usize, part: usize) -> Result<ArgmaxShape> {
    let p = &plan.program;
    let op = &p.nodes[i].op;
    let Op::ArgmaxSigned { xs, .. } = op else {
        return refuse(op.name(), "not an argmax of signed values");
    };
    let params = &plan.bfv[part].params;
    let log_t = params.plain_modulus().trailing_zeros();
    let tolerance = read_tolerance(op, log_t);
    let read = log_t - tolerance;
    let mut sources: Vec<usize> = xs
        .iter()
        .map(|&x| plan.scores[x as usize].map_or(x as usize, |s| s.leader))
        .collect();
    sources.sort_unstable();
    sources.dedup();
    let noise = part_noise(plan, i, part)?;
    Ok(ArgmaxShape {
        values: xs.iter().map(|&x| len_of(p, x)).sum(),
        sources: sources.len(),
        read,
        tolerance,
        refreshes: (read / 2) as usize,
        value_bits: radix_width(read),
        log2_failure: transition_log2_failure(p, op, noise, params).unwrap_or(f64::NEG_INFINITY),
    })
}

/// The narrowest radix integer (8, 16, 32 or 64 bits) holding `bits`.
pub(crate) use triskel_tfhe::argmax::radix_width;

/// Bits of a u8..u64 kind.
pub(crate) fn index_bits(kind: Kind) -> f64 {
    match kind {
        Kind::Uint { bits, .. } => bits as f64,
        _ => 8.0,
    }
}

/// Predicted time of `calls` threshold decisions on `values` coefficients
/// each, of `windows` bootstraps per value, from BFV set `base`
/// (`transition::bfv_scores_above`): per call one ring switch per window,
/// per value and window one key switch and one sign bootstrap.
pub(crate) fn decisions_ns(
    costs: &CostModel,
    base: &str,
    calls: f64,
    values: f64,
    windows: f64,
) -> Result<f64> {
    let readings = calls * values * windows;
    Ok(
        calls * windows * costs.get(Engine::Bfv, base, Primitive::RingSwitch)?
            + costs.predict(
                Engine::Tfhe,
                tfhe_set().name,
                &[
                    (Primitive::SignBootstrap, readings),
                    (Primitive::KeySwitch, readings),
                ],
            )?,
    )
}
