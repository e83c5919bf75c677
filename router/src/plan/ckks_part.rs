//! The CKKS part: the set and packing, the readings of thresholds on
//! reals, polynomials and linear transforms.

use super::*;

/// x^k coefficients (power basis) as Chebyshev coefficients on [-1, 1]:
/// Horner with x T_0 = T_1 and x T_j = (T_{j+1} + T_{j-1}) / 2.
pub fn power_to_chebyshev(coeffs: &[f64]) -> Vec<f64> {
    let mut t = vec![0.0; coeffs.len()];
    for &c in coeffs.iter().rev() {
        let mut next = vec![0.0; coeffs.len()];
        for (j, &v) in t.iter().enumerate() {
            if v == 0.0 {
                continue;
            }
            if j == 0 {
                next[1] += v;
            } else {
                next[j + 1] += v / 2.0;
                next[j - 1] += v / 2.0;
            }
        }
        next[0] += c;
        t = next;
    }
    t
}

pub(crate) fn reals(cs: &[Scalar]) -> Vec<f64> {
    cs.iter()
        .map(|s| match *s {
            Scalar::Real(r) => r,
            Scalar::Int(i) => i as f64,
        })
        .collect()
}

/// The Chebyshev polynomial a CKKS node evaluates, if any.
pub fn ckks_polynomial(op: &Op) -> Result<Option<ChebyshevPolynomial>> {
    Ok(match op {
        Op::Polynomial(_, cs) => Some(ChebyshevPolynomial::new(
            power_to_chebyshev(&reals(cs)),
            -1.0,
            1.0,
        )?),
        Op::Chebyshev { coeffs, lo, hi, .. } => {
            Some(ChebyshevPolynomial::new(coeffs.clone(), *lo, *hi)?)
        }
        _ => None,
    })
}

/// The packing of the CKKS part: each node's, the levels each real node
/// needs (with its release's mask) and the operation, and the most slots a
/// value takes.
pub(crate) struct CkksShape {
    pub(crate) packing: Vec<Packing>,
    pub(crate) needs_of: Vec<(usize, &'static str)>,
    pub(crate) widest: usize,
}

/// CKKS packing and depth of every real node.
pub(crate) fn ckks_packing(p: &Program) -> Result<CkksShape> {
    let coefficients = coefficient_nodes(p)?;
    let mut packing = vec![Packing::default(); p.nodes.len()];
    let mut needs_of = Vec::new();
    let mut widest = 1;
    for (i, node) in p.nodes.iter().enumerate() {
        if !matches!(node.kind, Kind::Real { .. }) {
            continue;
        }
        let mut pk = node_packing(p, &packing, i, &mut widest)?;
        pk.coefficients = coefficients[i];
        pk.release = ReleaseMask::None;
        // Slots: the release zeroes the slots not asked for (module documentation).
        let mut needs = pk.depth;
        if released(p, i) && !pk.coefficients {
            pk.release = if matches!(node.op, Op::MulScalar(..)) {
                ReleaseMask::Folded
            } else {
                needs += 1;
                ReleaseMask::Product
            };
        }
        widest = widest.max(pk.period).max(node.kind.len());
        needs_of.push((needs, node.op.name()));
        packing[i] = pk;
    }
    Ok(CkksShape {
        packing,
        needs_of,
        widest,
    })
}

/// The packing of real node `i` from its operands' (a transform's
/// dimension widens `widest`).
fn node_packing(p: &Program, packing: &[Packing], i: usize, widest: &mut usize) -> Result<Packing> {
    let node = &p.nodes[i];
    let len = node.kind.len();
    let get = |k: &u32| packing[*k as usize];
    let binary = |a: &u32, b: &u32| -> Result<(Packing, Packing)> {
        let (x, y) = (get(a), get(b));
        if x.period != y.period {
            return refuse(
                node.op.name(),
                format!(
                    "operands are packed with periods {} and {}",
                    x.period, y.period
                ),
            );
        }
        Ok((x, y))
    };
    let padded = |dirty: bool, period: usize| dirty && len < period;
    Ok(match &node.op {
        Op::Input { .. } | Op::ToReal { .. } => Packing {
            period: len.next_power_of_two(),
            ..Default::default()
        },
        Op::Add(a, b) | Op::Sub(a, b) => {
            let (x, y) = binary(a, b)?;
            Packing {
                dirty: x.dirty || y.dirty,
                depth: x.depth.max(y.depth),
                ..x
            }
        }
        Op::Mul(a, b) => {
            let (x, y) = binary(a, b)?;
            Packing {
                dirty: x.dirty && y.dirty,
                depth: x.depth.max(y.depth) + 1,
                ..x
            }
        }
        Op::AddScalar(a, _) => get(a),
        Op::MulScalar(a, _) => Packing {
            depth: get(a).depth + 1,
            ..get(a)
        },
        Op::Dot(a, b) => {
            let (x, y) = binary(a, b)?;
            let mask = x.dirty && y.dirty;
            Packing {
                period: 1,
                dirty: false,
                depth: x.depth.max(y.depth) + 1 + mask as usize,
                mask_operand: mask,
                ..Default::default()
            }
        }
        Op::DotPlain(a, _) => Packing {
            period: 1,
            dirty: false,
            depth: get(a).depth + 1,
            ..Default::default()
        },
        Op::Sum(a) => {
            let mask = get(a).dirty;
            Packing {
                period: 1,
                dirty: false,
                depth: get(a).depth + mask as usize,
                mask_operand: mask,
                ..Default::default()
            }
        }
        Op::Polynomial(a, _) | Op::Chebyshev { x: a, .. } => {
            let poly = ckks_polynomial(&node.op)?
                .ok_or_else(|| Error::Internal("a polynomial node without one".into()))?;
            let x = get(a);
            Packing {
                dirty: padded(true, x.period) || x.dirty,
                depth: x.depth + poly.depth(),
                ..x
            }
        }
        Op::MatVec { x, rows } => {
            let input = get(x);
            let dim = input.period.max(rows.len().next_power_of_two());
            let period = ckks::TransformShape::of(rows, dim).output_period();
            *widest = (*widest).max(dim);
            Packing {
                period,
                dirty: false,
                depth: input.depth + 1,
                ..Default::default()
            }
        }
        op => return refuse(op.name(), "not available on reals"),
    })
}

/// Among the named sets of scale at least 2^`min_scale` deep and wide
/// enough for the program's packing ([`ckks_packing`]) on which every CKKS
/// -> TFHE decision fits its tolerance, the cheapest of the smallest scale.
pub(crate) fn choose_ckks(
    p: &Program,
    costs: &CostModel,
    min_scale: u32,
    given: Option<&str>,
) -> Result<(CkksParameters, Vec<Packing>)> {
    let CkksShape {
        packing,
        needs_of,
        widest,
    } = ckks_packing(p)?;
    let deepest = needs_of.iter().map(|n| n.0).max().unwrap_or(0);
    let decides = p
        .nodes
        .iter()
        .any(|n| matches!(n.op, Op::ThresholdReal { .. }));
    let mut best: Option<(u32, f64, CkksParameters)> = None;
    let mut failure = None;
    let sets: Vec<CkksParameters> = ckks_sets()
        .into_iter()
        .filter(|s| s.log_scale() >= min_scale && given.is_none_or(|name| name == s.name()))
        .collect();
    if let (true, Some(name)) = (sets.is_empty(), given) {
        return refuse(
            "plan choice",
            format!("{name:?} is no named CKKS set of scale 2^{min_scale} or more"),
        );
    }
    for set in sets.iter().cloned() {
        if set.max_level() < deepest || set.slots() < widest {
            continue;
        }
        if decides && set.n() > MAX_TRANSITION_DIMENSION {
            continue;
        }
        if let Err(e) = ckks_readings(p, &packing, &set) {
            failure = Some(e);
            continue;
        }
        let mut cost = 0.0;
        for i in 0..p.nodes.len() {
            if matches!(p.nodes[i].kind, Kind::Real { .. }) {
                cost += costs.predict(Engine::Ckks, set.name(), &ckks_counts(p, &packing, i))?;
            }
        }
        let scale = set.log_scale();
        if best
            .as_ref()
            .is_none_or(|(s, c, _)| (scale, cost) < (*s, *c))
        {
            best = Some((scale, cost, set));
        }
    }
    if sets.is_empty() {
        let most = ckks_sets().iter().map(|s| s.log_scale()).max().unwrap_or(0);
        return refuse(
            "plan",
            format!("no CKKS set has a scale of 2^{min_scale} or more (the largest is 2^{most})"),
        );
    }
    // The deepest set a decision's transition takes (all of them without one).
    let largest = sets
        .into_iter()
        .filter(|s| !decides || s.n() <= MAX_TRANSITION_DIMENSION)
        .max_by_key(|s| s.max_level());
    // The first operation deeper than the largest set names the refusal.
    let top = largest.as_ref().map_or(0, |s| s.max_level());
    let named = needs_of.iter().find(|n| n.0 > top).map_or("input", |n| n.1);
    match (best, failure) {
        (Some((_, _, set)), _) => Ok((set, packing)),
        (None, Some(err)) => Err(err),
        (None, None) => refuse(
            named,
            format!(
                "needs multiplicative depth {deepest} (a released value in slots takes one level for its mask) and {widest} slots; the deepest CKKS set{}{} has depth {} and {} slots",
                if min_scale > 0 { format!(" of scale 2^{min_scale} or more") } else { String::new() },
                if decides { " a CKKS -> TFHE transition takes" } else { "" },
                top,
                largest.as_ref().map_or(0, |s| s.slots())
            ),
        ),
    }
}

/// The reading of every `threshold_real` of the program on `set` (`None`
/// for other nodes), or a refusal naming the operation: the error bound
/// of the value it reads (the engine's formulas: fresh symmetric
/// encryption, additions, exact rounding of constants, rescale rounding)
/// leaves room for the reading within the tolerance, the values and
/// threshold stay inside what the torus holds, and the transition's
/// failure probability is at most 2^[`MAX_LOG2_FAILURE`]
/// ([`crate::transition::ckks_reading`]). The error names the operation.
pub fn ckks_readings(
    p: &Program,
    packing: &[Packing],
    set: &CkksParameters,
) -> Result<Vec<Option<CkksReading>>> {
    // The engine's own bounds and propagation (triskel-ckks' `Noise`).
    let bounds = ckks::error_bounds(set.n(), triskel_ring::NoiseDistribution::default());
    let (encoding, rounding) = (bounds.encoding, bounds.rounding);
    let scale = (set.log_scale() as f64).exp2();
    let prime = |level: usize| (set.q_bits()[level] as f64 - 0.05).exp2();
    let top = set.max_level();
    let mut b = vec![ckks::Noise::default(); p.nodes.len()];
    let mut readings = vec![None; p.nodes.len()];
    for (i, node) in p.nodes.iter().enumerate() {
        let at = |k: &u32| b[*k as usize];
        let level = |k: &u32| top - packing[*k as usize].depth;
        if let &Op::ThresholdReal {
            x,
            threshold,
            tolerance,
        } = &node.op
        {
            let v = b[x as usize];
            let reading = ckks_reading(
                set.n(),
                &tfhe_set(),
                v.error,
                scale,
                prime(0),
                v.message / scale,
                threshold,
                tolerance,
            )
            .map_err(|e| Error::Refused {
                op: node.op.name().to_string(),
                msg: format!("on {}: {e}", set.name()),
            })?;
            readings[i] = Some(reading);
            continue;
        }
        if !packing[i].coefficients {
            continue;
        }
        let len = node.kind.len() as f64;
        b[i] = match &node.op {
            // Inputs in [-1, 1], declared bound len (the sum of magnitudes).
            Op::Input { .. } => ckks::Noise::new(len * scale, encoding + bounds.symmetric),
            Op::Add(x, y) | Op::Sub(x, y) => at(x) + at(y),
            Op::AddScalar(x, c) => {
                let c = reals(&[*c])[0].abs();
                at(x) + ckks::Noise::new(c * len * scale, encoding)
            }
            // The constant at scale q (rounded by at most 1/2), rescaled by q.
            Op::MulScalar(x, c) => {
                let (c, v, q) = (reals(&[*c])[0].abs(), at(x), prime(level(x)));
                v.times(c * q)
                    .plus_error(v.message / 2.0)
                    .divide(q, rounding)
            }
            // The reversed weights at scale q (bound sum |w|), rescaled by q.
            Op::DotPlain(x, w) => {
                let sum = reals(w).iter().map(|w| w.abs()).sum::<f64>();
                let q = prime(level(x));
                (at(x) * ckks::Noise::new(sum * q, encoding)).divide(q, rounding)
            }
            _ => ckks::Noise::default(),
        };
    }
    Ok(readings)
}

/// The calibrated CKKS costs are at the top level; node `i` runs at its
/// operands' level, on (primes left) / (all primes) of the work.
pub(crate) fn ckks_level_factor(plan: &Plan, i: usize) -> f64 {
    let used = plan.program.nodes[i]
        .op
        .operands()
        .iter()
        .map(|&a| plan.packing[a as usize].depth)
        .max()
        .unwrap_or(0);
    ckks_primes_left(plan, used)
}

/// (primes left) / (all primes) of the CKKS set after `depth` levels.
pub(crate) fn ckks_primes_left(plan: &Plan, depth: usize) -> f64 {
    let primes = plan.ckks.as_ref().map_or(1, |c| c.q_bits().len()) as f64;
    ((primes - depth as f64) / primes).clamp(1.0 / primes, 1.0)
}
