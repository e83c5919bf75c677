//! The BFV parts: the planner's noise model, the choice of set and
//! plaintext modulus, and the analysis of decisions read through the
//! BFV -> TFHE transition.

use super::*;

impl Planner<'_> {
    /// Modular and signed integers -> BFV slots, one part per plaintext
    /// modulus; comparisons of them -> a transition to TFHE. A part with a
    /// transition uses the coefficient encoding with t a power of two (what
    /// the transition reads), sized so that every compared value and
    /// constant lies in [-t/4, t/4); its inner products with plaintext
    /// weights are then one plaintext product with the weights reversed, no
    /// rotation.
    pub(super) fn place_bfv_slots(&mut self) -> Result<()> {
        let mut groups: Vec<(Option<u64>, Vec<usize>)> = Vec::new();
        for (i, node) in self.p.nodes.iter().enumerate() {
            let key = match (node.kind, &node.op) {
                (Kind::Signed { .. }, _) => None,
                (Kind::Modular { modulus, .. }, _) => Some(modulus),
                (Kind::Bit { .. }, Op::ThresholdWithin { .. }) => None,
                (Kind::Uint { .. }, Op::Lookup { x, .. })
                    if matches!(self.kind(*x as usize), Kind::Signed { .. }) =>
                {
                    None
                }
                (Kind::Uint { .. }, Op::ArgmaxSigned { .. }) => None,
                (Kind::Bit { .. }, Op::Compare(a, ..) | Op::CompareScalar(a, ..))
                    if self.placements[i].is_none() =>
                {
                    match self.kind(*a as usize) {
                        Kind::Modular { modulus, .. } => Some(modulus),
                        _ => None,
                    }
                }
                _ => continue,
            };
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, nodes)) => nodes.push(i),
                None => groups.push((key, vec![i])),
            }
        }
        for (modulus, nodes) in groups {
            let part = self.bfv.len();
            let chosen = match self.transition_range(&nodes, modulus)? {
                Some(range) => {
                    let t = (4 * (range + 1)).next_power_of_two();
                    self.choose_bfv(&nodes, BfvEncoding::Coefficients, |_, _| Some(t))?
                }
                None => self.choose_bfv(&nodes, BfvEncoding::Slots, |n, bound| match modulus {
                    Some(t) => {
                        (triskel_kernels::is_prime(t) && t % (2 * n as u64) == 1).then_some(t)
                    }
                    None => smallest_batching_prime(n, 2 * bound + 1),
                })?,
            };
            self.bfv.push(chosen);
            for &i in &nodes {
                self.placements[i] = Some(match (self.p.nodes[i].kind, &self.p.nodes[i].op) {
                    (Kind::Bit { .. }, _) | (_, Op::Lookup { .. } | Op::ArgmaxSigned { .. }) => {
                        Placement::BfvToTfhe(part)
                    }
                    _ => Placement::Bfv(part),
                });
            }
        }
        Ok(())
    }

    /// For a BFV group with comparisons (transitions to TFHE): the largest
    /// absolute value a decision reads (compared values, differences,
    /// constants and the constant + 1 of a strict comparison); `None`
    /// without comparisons. Refuses what the coefficient encoding cannot
    /// run, naming the operation.
    pub(super) fn transition_range(
        &self,
        nodes: &[usize],
        modulus: Option<u64>,
    ) -> Result<Option<u64>> {
        let bound = |k: &u32| match self.kind(*k as usize) {
            Kind::Signed { bound, .. } => bound,
            _ => 0,
        };
        let (mut range, mut decision) = (None, "compare");
        for &i in nodes {
            let r = match &self.p.nodes[i].op {
                Op::Compare(a, b, _) => bound(a).saturating_add(bound(b)).saturating_add(1),
                Op::CompareScalar(a, c, _) => {
                    let c = match c {
                        Scalar::Int(c) => c.unsigned_abs().saturating_add(1),
                        Scalar::Real(_) => u64::MAX,
                    };
                    bound(a).max(c)
                }
                // The threshold leaves room for the rounding of the tolerance.
                Op::ThresholdWithin {
                    x,
                    threshold,
                    tolerance_bits,
                } => bound(x).max(threshold.unsigned_abs().saturating_add(1 << tolerance_bits)),
                // Decisions x >= c for c up to the bound.
                Op::Lookup { x, .. } => bound(x).saturating_add(1),
                // Every value read as a number in [-t/4, t/4).
                Op::ArgmaxSigned { xs, .. } => xs.iter().map(bound).max().unwrap_or(0),
                _ => continue,
            };
            if range.is_none() {
                decision = self.p.nodes[i].op.name();
            }
            range = Some(range.unwrap_or(0).max(r));
        }
        let Some(range) = range else {
            return Ok(None);
        };
        if let Some(m) = modulus {
            return refuse(
                decision,
                format!(
                    "comparing integers modulo {m}: the BFV -> TFHE transition needs signed integers (coefficient encoding, t a power of two)"
                ),
            );
        }
        if range > MAX_SIGNED_BOUND {
            return refuse(
                decision,
                format!("values up to {range} exceed what a transition reads (2^40)"),
            );
        }
        for &i in nodes {
            let op = &self.p.nodes[i].op;
            let coefficient_ready = runs_on_coefficients(op)
                || matches!(
                    op,
                    Op::Compare(..)
                        | Op::CompareScalar(..)
                        | Op::ThresholdWithin { .. }
                        | Op::Lookup { .. }
                        | Op::ArgmaxSigned { .. }
                        | Op::ToSigned(..)
                );
            if !coefficient_ready {
                return refuse(
                    op.name(),
                    "values compared through a BFV -> TFHE transition use the coefficient encoding, which runs additions, scalar operations and inner products with plaintext weights only",
                );
            }
        }
        Ok(Some(range))
    }

    /// The cheapest named BFV set (with the plaintext modulus `modulus(n,
    /// largest bound)` gives) on which `nodes` keep a noise budget, or a
    /// refusal naming the operation that exhausts the largest set.
    pub(super) fn choose_bfv(
        &self,
        nodes: &[usize],
        encoding: BfvEncoding,
        modulus: impl Fn(usize, u64) -> Option<u64>,
    ) -> Result<BfvPart> {
        let bound = nodes
            .iter()
            .map(|&i| match self.kind(i) {
                Kind::Signed { bound, .. } => bound,
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        let len = nodes.iter().map(|&i| self.kind(i).len()).max().unwrap_or(1);
        let mut best: Option<(f64, BfvPart)> = None;
        let mut failure = None;
        // Bits, lookups and argmaxes of a BFV part are its transitions to TFHE.
        let decides = nodes.iter().any(|&i| decides(self.p, i));
        let given = self
            .given
            .map(|g| g.bfv.get(self.bfv.len()).map_or("", |s| s.as_str()));
        for base in bfv_sets() {
            if given.is_some_and(|name| name != base.name()) {
                continue;
            }
            let n = base.n();
            // Sets a transition key cannot take are no candidates for a part
            // with decisions (the reason of an earlier set is kept).
            if decides && n > MAX_TRANSITION_DIMENSION {
                continue;
            }
            let room = if encoding == BfvEncoding::Slots {
                n / 2
            } else {
                n
            };
            if len > room {
                failure = Some(refuse(
                    self.p.nodes[nodes[0]].op.name(),
                    format!("{len} values exceed the {room} of the largest BFV set"),
                ));
                continue;
            }
            let Some(t) = modulus(n, bound) else {
                failure = Some(refuse(
                    "input",
                    format!(
                        "no prime plaintext modulus = 1 mod {} fits the program",
                        2 * n
                    ),
                ));
                continue;
            };
            let min_q = *base.q_bits().iter().min().unwrap_or(&0);
            if 64 - t.leading_zeros() >= min_q
                || (t as u128) * (base.q_bits().len() as u128 + 2) >= 1 << 63
            {
                failure = Some(refuse(
                    "input",
                    format!("plaintext modulus {t} does not fit {}", base.name()),
                ));
                continue;
            }
            let params = base.clone().with_plain_modulus(t);
            if let Err((op, msg)) =
                Self::bfv_noise(self.p, nodes, &params, encoding, self.threshold)
            {
                failure = Some(refuse(op, msg));
                continue;
            }
            let mut cost = 0.0;
            for &i in nodes {
                cost += self.costs.predict(
                    Engine::Bfv,
                    base.name(),
                    &bfv_counts(self.p, i, encoding),
                )?;
            }
            if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                best = Some((
                    cost,
                    BfvPart {
                        encoding,
                        base: base.name().to_string(),
                        params,
                    },
                ));
            }
        }
        match (best, failure, given) {
            (Some((_, part)), _, _) => Ok(part),
            (None, Some(err), _) => err,
            (None, None, Some(name)) => refuse(
                "plan choice",
                format!(
                    "BFV part {}: {name:?} is no named BFV set this part can take",
                    self.bfv.len()
                ),
            ),
            (None, None, None) => refuse("input", "no BFV set"),
        }
    }

    /// Walks `nodes` (in order) with the noise model; the first operation
    /// that leaves less than the margin, or a decision whose transition
    /// (after the mod switch to the last prime) the noise analysis of
    /// [`crate::transition`] would not pass, is the error: (operation,
    /// why); else the noise (log2) of every node. After the transition nothing accumulates: every TFHE
    /// operation bootstraps, and `any` sums only as many bits as the set's
    /// noise level allows before its bootstrap.
    pub(super) fn bfv_noise(
        p: &Program,
        nodes: &[usize],
        params: &BfvParameters,
        encoding: BfvEncoding,
        threshold: Option<Threshold>,
    ) -> std::result::Result<Vec<f64>, (&'static str, String)> {
        let m = BfvNoise::new(params);
        let t = params.plain_modulus() as i128;
        let scalar_bits = |s: &Scalar| match *s {
            Scalar::Int(c) => {
                let c = (c as i128).rem_euclid(t);
                (c.min(t - c).max(1) as f64).log2()
            }
            Scalar::Real(_) => 0.0,
        };
        let mut noise = vec![0.0f64; p.nodes.len()];
        let dirty = slots_dirty(p);
        for &i in nodes {
            let op = &p.nodes[i].op;
            let x = |k: &u32| noise[*k as usize];
            let tree = |v: f64, len: usize| {
                (0..log2_tree(len) as usize).fold(v, |v, _| m.key_switch(v) + 1.0)
            };
            let len_of = |k: &u32| p.nodes[*k as usize].kind.len();
            let v = match op {
                Op::Input { .. } | Op::ToSigned(..) => m.fresh(),
                Op::Add(a, b) | Op::Sub(a, b) | Op::Compare(a, b, _) => x(a).max(x(b)) + 1.0,
                Op::AddScalar(a, _)
                | Op::CompareScalar(a, _, _)
                | Op::ThresholdWithin { x: a, .. }
                | Op::Lookup { x: a, .. } => x(a),
                Op::MulScalar(a, c) => x(a) + scalar_bits(c),
                Op::ArgmaxSigned { xs, .. } => xs.iter().map(x).fold(f64::MIN, f64::max),
                Op::Mul(a, b) => m.mul(x(a), x(b)),
                Op::Dot(a, b) => tree(m.mul(x(a), x(b)), len_of(a)),
                Op::DotPlain(a, _) if encoding == BfvEncoding::Coefficients => {
                    m.mul_slots_plain(x(a))
                }
                Op::DotPlain(a, _) => tree(m.mul_slots_plain(x(a)), len_of(a)),
                Op::Sum(a) => tree(x(a), len_of(a)),
                Op::Polynomial(a, cs) => {
                    let top = cs.last().map_or(0.0, scalar_bits);
                    (2..cs.len()).fold(x(a) + top, |acc, _| m.mul(acc, x(a)))
                }
                _ => return Err((op.name(), "not available on BFV".into())),
            };
            if m.budget(v) < BFV_MARGIN {
                return Err((
                    op.name(),
                    format!(
                        "the BFV noise budget of {} is exhausted (multiplicative depth too large)",
                        params.name()
                    ),
                ));
            }
            // A release re-randomizes (fresh noise), then masks the slots
            // (a plaintext product) or extracts coefficients at the last prime.
            if released(p, i) {
                let fresh = (v.exp2() + m.fresh().exp2()).log2();
                let left = match encoding {
                    BfvEncoding::Slots if dirty[i] => m.budget(m.mul_slots_plain(fresh)),
                    BfvEncoding::Slots => m.budget(fresh),
                    BfvEncoding::Coefficients => {
                        let q0 = params.q_bits().first().map_or(0.0, |&b| b as f64 - 0.05);
                        q0 - m.log_t - 1.0 - 3.0 - at_last_prime(fresh, params)
                    }
                };
                if left < BFV_MARGIN {
                    return Err((
                        op.name(),
                        format!(
                            "the BFV noise budget of {} leaves no room to release the value (mask or extraction)",
                            params.name()
                        ),
                    ));
                }
                // Extracted coefficients and decisions are refused or
                // decided by TFHE; only slot releases are decrypted by parties.
                let by_parties = encoding == BfvEncoding::Slots && !decides(p, i);
                if let Some(t) = threshold.filter(|_| by_parties) {
                    let floods = threshold_flood_bits(t, params.n());
                    if left - floods < BFV_MARGIN {
                        return Err((
                            op.name(),
                            format!(
                                "the BFV noise budget of {} ({left:.0} bits at the release) leaves no room for the floods of a {} of {} threshold decryption ({floods:.0} bits)",
                                params.name(),
                                t.k,
                                t.n
                            ),
                        ));
                    }
                }
            }
            if let Some(failure) = transition_failure(p, op, v, params) {
                return Err((
                    op.name(),
                    format!(
                        "the BFV -> TFHE decision on {} would fail with probability 2^{failure:.0} (noise of the value, the ring switch and the key switch; at most 2^{MAX_LOG2_FAILURE:.0} is accepted)",
                        params.name()
                    ),
                ));
            }
            noise[i] = v;
        }
        Ok(noise)
    }
}

/// Whether BFV node `i` is a decision: its value leaves BFV for TFHE.
fn decides(p: &Program, i: usize) -> bool {
    matches!(p.nodes[i].kind, Kind::Bit { .. })
        || matches!(p.nodes[i].op, Op::Lookup { .. } | Op::ArgmaxSigned { .. })
}

/// Bits of budget the floods of a threshold decryption take: each of the k
/// shares adds a uniform flood of about alpha r B 2^s for r = n released
/// coefficients, alpha releases per share and s bits of statistical
/// security, over the output's noise B (the engine checks the exact room).
fn threshold_flood_bits(t: Threshold, n: usize) -> f64 {
    f64::from(t.k).log2()
        + (crate::party::THRESHOLD_RELEASES as f64).log2()
        + (n as f64).log2()
        + f64::from(crate::party::BFV_STATISTICAL_SECURITY)
}

/// Bits of noise a BFV budget must keep at the end (the planner's model is
/// an estimate; the engine checks its own at run time).
pub(crate) const BFV_MARGIN: f64 = 6.0;

/// The BFV noise model of the planner (log2 standard deviations, the
/// engine's heuristic with a margin): fresh public-key noise, and growth per
/// operation; `budget` as the engine counts it.
pub(crate) struct BfvNoise {
    n: f64,
    log_t: f64,
    log_q: f64,
}

impl BfvNoise {
    fn new(p: &BfvParameters) -> BfvNoise {
        BfvNoise {
            n: p.n() as f64,
            log_t: (p.plain_modulus() as f64).log2(),
            log_q: p.q_bits().iter().map(|&b| b as f64 - 0.05).sum(),
        }
    }
    fn fresh(&self) -> f64 {
        0.5 * (3.2f64 * 3.2 * (4.0 * self.n / 3.0 + 1.0)).log2()
    }
    fn budget(&self, noise: f64) -> f64 {
        self.log_q - self.log_t - 1.0 - 3.0 - noise
    }
    /// Key switching (relinearization, rotation) adds a small fixed term.
    fn key_switch(&self, noise: f64) -> f64 {
        noise.max(self.n.log2() + 8.0) + 1.0
    }
    fn mul(&self, a: f64, b: f64) -> f64 {
        let cross = self.log_t + 0.5 * (self.n * self.n / 18.0).log2() + a.max(b) + 1.0;
        self.key_switch(cross + 1.5)
    }
    /// Product with a plaintext whose coefficients are uniform mod t.
    fn mul_slots_plain(&self, a: f64) -> f64 {
        a + self.log_t + 0.5 * (self.n / 12.0).log2()
    }
}

/// The smallest prime = 1 mod 2n above `above`.
pub(crate) fn smallest_batching_prime(n: usize, above: u64) -> Option<u64> {
    let step = 2 * n as u64;
    let mut t = (above / step + 1) * step + 1;
    while !triskel_kernels::is_prime(t) {
        t = t.checked_add(step)?;
    }
    Some(t)
}

/// For a decision (a BFV -> TFHE transition) on a value of noise `noise`
/// (log2, at the full modulus of `params`): log2 of its failure
/// probability when above [`MAX_LOG2_FAILURE`], by the transition's own
/// analysis after the mod switch to the last prime (the noise divided by
/// the dropped primes, plus the rounding of the switch).
pub(crate) fn transition_failure(
    p: &Program,
    op: &Op,
    noise: f64,
    params: &BfvParameters,
) -> Option<f64> {
    let failure = transition_log2_failure(p, op, noise, params)?;
    (failure > MAX_LOG2_FAILURE).then_some(failure)
}

/// log2 of the failure probability of a BFV -> TFHE transition node (an
/// argmax: all its values' readings together), `None` for other nodes.
pub(crate) fn transition_log2_failure(
    p: &Program,
    op: &Op,
    noise: f64,
    params: &BfvParameters,
) -> Option<f64> {
    match op {
        Op::ArgmaxSigned { xs, .. } => {
            let (at_q0, q0, log_t, r) = last_prime_reading(op, noise, params)?;
            let analysis = analyse_bits(params.n(), &tfhe_set(), at_q0, q0, log_t, r);
            let count: usize = xs.iter().map(|&x| len_of(p, x)).sum();
            Some(analysis.log2_failure_per_decision + (count.max(1) as f64).log2())
        }
        op => Some(transition_analysis(op, noise, params)?.log2_failure_per_decision),
    }
}

/// The analysis of one decision of a BFV -> TFHE transition node other
/// than an argmax (in the widest windows that meet the bound), `None` for
/// other nodes.
pub(crate) fn transition_analysis(
    op: &Op,
    noise: f64,
    params: &BfvParameters,
) -> Option<DecisionAnalysis> {
    match op {
        Op::Compare(..)
        | Op::CompareScalar(..)
        | Op::ThresholdWithin { .. }
        | Op::Lookup { .. } => {
            let (at_q0, q0, log_t, r) = last_prime_reading(op, noise, params)?;
            Some(decision_analysis(
                params.n(),
                &tfhe_set(),
                at_q0,
                q0,
                log_t - r,
                r > 0,
            ))
        }
        _ => None,
    }
}

/// A transition's source noise at the last prime (log2), the last prime,
/// log2 t and the bits left unread (the tolerance).
pub(crate) fn last_prime_reading(
    op: &Op,
    noise: f64,
    params: &BfvParameters,
) -> Option<(f64, u64, u32, u32)> {
    let q0_bits = *params.q_bits().first()?;
    let log_t = params.plain_modulus().trailing_zeros();
    // Named sets' primes lie just below 2^b (as in the budget model).
    let q0 = (q0_bits as f64 - 0.05).exp2() as u64;
    Some((
        at_last_prime(noise, params),
        q0,
        log_t,
        read_tolerance(op, log_t),
    ))
}

/// A noise (log2, at the full modulus of `params`) after the mod switch to
/// the last prime: divided by the dropped primes, plus the switch's
/// rounding.
pub(crate) fn at_last_prime(noise: f64, params: &BfvParameters) -> f64 {
    let bits = params.q_bits();
    let dropped: f64 = bits.iter().skip(1).map(|&b| b as f64).sum();
    if dropped == 0.0 {
        return noise;
    }
    let n = params.n() as f64;
    let rounding = 0.5 * ((1.0 + 2.0 * n / 3.0) / 12.0).log2();
    let scaled = noise - dropped;
    let (hi, lo) = (scaled.max(rounding), scaled.min(rounding));
    hi + 0.5 * (1.0 + (2.0 * (lo - hi)).exp2()).log2()
}

/// The tolerance (bits) a decision or an argmax on a t = 2^`log_t` part
/// rounds away: the operation's, capped where the transition needs 3 bits
/// (1 for an argmax) left.
pub fn read_tolerance(op: &Op, log_t: u32) -> u32 {
    match op {
        Op::ThresholdWithin { tolerance_bits, .. } => (*tolerance_bits).min(log_t - 3),
        // At least one bit of each value is read.
        Op::ArgmaxSigned { tolerance_bits, .. } => (*tolerance_bits).min(log_t - 1),
        _ => 0,
    }
}
