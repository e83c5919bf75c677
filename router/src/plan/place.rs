//! Engine placement: capability first, then the cost of the TFHE
//! alternative for small integers; checks of transitions and round trips,
//! and which values share one plaintext product.

use super::*;

impl Planner<'_> {
    pub(super) fn kind(&self, i: usize) -> Kind {
        self.p.nodes[i].kind
    }

    /// Reals -> CKKS; bits -> TFHE; comparisons of u8..u64 and selects -> TFHE.
    pub(super) fn place_ckks_and_tfhe(&mut self) {
        for (i, node) in self.p.nodes.iter().enumerate() {
            let place = match (node.kind, &node.op) {
                (Kind::Real { .. }, _) => Placement::Ckks,
                (Kind::Bit { .. }, Op::Compare(a, ..) | Op::CompareScalar(a, ..)) => {
                    match self.kind(*a as usize) {
                        Kind::Uint { .. } => Placement::Tfhe,
                        _ => continue, // a transition, placed with its BFV part
                    }
                }
                (Kind::Bit { .. }, Op::ThresholdWithin { .. }) => continue,
                (Kind::Bit { .. }, Op::ThresholdReal { .. }) => Placement::CkksToTfhe,
                (Kind::Bit { .. }, _) => Placement::Tfhe,
                _ => continue,
            };
            self.placements[i] = Some(place);
        }
    }

    /// u8..u32 groups with only additions and scalar operations: BFV with
    /// coefficient encoding when cheaper; everything else of u8..u64: TFHE.
    pub(super) fn place_small_integers(&mut self) -> Result<()> {
        let count = self.p.nodes.len();
        let mut parent: Vec<usize> = (0..count).collect();
        for (i, node) in self.p.nodes.iter().enumerate() {
            if let Kind::Uint { .. } = node.kind {
                for a in node.op.operands() {
                    let (ra, ri) = (find(&mut parent, a as usize), find(&mut parent, i));
                    parent[ra] = ri;
                }
            }
        }
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for i in 0..count {
            if self.placements[i].is_some() {
                continue;
            }
            let r = find(&mut parent, i);
            match groups.iter_mut().find(|(k, _)| *k == r) {
                Some((_, g)) => g.push(i),
                None => groups.push((r, vec![i])),
            }
        }
        for (_, nodes) in groups {
            let linear = nodes.iter().all(|&i| {
                matches!(
                    self.p.nodes[i].op,
                    Op::Input { .. }
                        | Op::Add(..)
                        | Op::Sub(..)
                        | Op::AddScalar(..)
                        | Op::MulScalar(..)
                )
            });
            // A value from another engine's node (a lookup read through the
            // transition) arrives in TFHE.
            let fed_outside = nodes.iter().any(|&i| {
                self.p.nodes[i]
                    .op
                    .operands()
                    .iter()
                    .any(|a| !nodes.contains(&(*a as usize)))
            });
            // A consumer outside the group (a comparison, a select) needs TFHE values.
            let consumed_outside = self.p.nodes.iter().enumerate().any(|(j, n)| {
                !nodes.contains(&j)
                    && n.op
                        .operands()
                        .iter()
                        .any(|a| nodes.contains(&(*a as usize)))
            });
            let bits = match self.kind(nodes[0]) {
                Kind::Uint { bits, .. } => bits,
                _ => 64,
            };
            let mut place = Placement::Tfhe;
            let eligible = linear && !consumed_outside && !fed_outside && bits <= 32;
            if let (true, Some(given)) = (eligible, self.given) {
                // Refused later if the choice names no set this group fits.
                if given.engines[nodes[0]] == Engine::Bfv {
                    let part = self
                        .choose_bfv(&nodes, BfvEncoding::Coefficients, |_, _| Some(1u64 << bits))?;
                    place = Placement::Bfv(self.bfv.len());
                    self.bfv.push(part);
                }
            } else if eligible {
                let tfhe_cost = self.tfhe_cost(&nodes)?;
                if let Ok(part) =
                    self.choose_bfv(&nodes, BfvEncoding::Coefficients, |_, _| Some(1u64 << bits))
                {
                    let bfv_cost = nodes
                        .iter()
                        .map(|&i| {
                            self.costs.predict(
                                Engine::Bfv,
                                &part.base,
                                &bfv_counts(self.p, i, part.encoding),
                            )
                        })
                        .sum::<Result<f64>>()?;
                    if bfv_cost < tfhe_cost {
                        place = Placement::Bfv(self.bfv.len());
                        self.bfv.push(part);
                    }
                }
            }
            for &i in &nodes {
                self.placements[i] = Some(place);
            }
        }
        Ok(())
    }

    pub(super) fn tfhe_cost(&self, nodes: &[usize]) -> Result<f64> {
        let set = tfhe_set();
        nodes
            .iter()
            .map(|&i| {
                self.costs
                    .predict(Engine::Tfhe, set.name, &tfhe_counts(self.p, i))
            })
            .sum()
    }
}

/// Every value crossing engines does so through a BFV -> TFHE transition
/// node or a CKKS -> TFHE one reading coefficient-encoded values: any other
/// crossing (TFHE -> BFV, TFHE -> CKKS, CKKS slots -> TFHE, ...) is
/// refused, naming the operation and the direction. A run checks this
/// again before any work (plans are read-only outside the planner; the
/// check stays as a second line).
pub(crate) fn check_transitions(plan: &Plan) -> Result<()> {
    for (i, node) in plan.program.nodes.iter().enumerate() {
        if plan.round_trips.iter().any(|&(n, _)| n == i) {
            if !matches!(node.op, Op::ToSigned(..) | Op::ToReal { .. }) {
                return refuse(
                    node.op.name(),
                    "only conversions take a key-holder round trip",
                );
            }
            continue;
        }
        let (to, needs) = match plan.placements[i] {
            Placement::BfvToTfhe(k) => (Engine::Bfv, Some(Placement::Bfv(k))),
            Placement::CkksToTfhe => (Engine::Ckks, Some(Placement::Ckks)),
            place => (place.engine(), None),
        };
        for a in node.op.operands() {
            let operand = plan.placements[a as usize];
            let from = operand.engine();
            let coefficients = plan.packing.get(a as usize).is_some_and(|p| p.coefficients);
            if from == to
                && needs.is_none_or(|p| p == operand)
                && (plan.placements[i] != Placement::CkksToTfhe || coefficients)
            {
                continue;
            }
            let msg = match crate::transition::check_direction(from, to) {
                Err(e) => e.to_string(),
                Ok(()) => format!(
                    "v{a} on {} feeds an operation on {}: the router moves values between engines only by a comparison of BFV values (BFV -> TFHE) or a threshold on coefficient-encoded reals (CKKS -> TFHE)",
                    from.name(),
                    to.name()
                ),
            };
            return refuse(node.op.name(), msg);
        }
    }
    Ok(())
}

/// The conversions of a program: each crosses engines with no homomorphic
/// path (TFHE -> BFV/CKKS, BFV -> CKKS), so each takes a key-holder round
/// trip, refused unless `options` allow it.
pub(crate) fn round_trips(
    p: &Program,
    placements: &[Placement],
    options: PlanOptions,
) -> Result<Vec<(usize, Engine)>> {
    let mut trips = Vec::new();
    for (i, node) in p.nodes.iter().enumerate() {
        let (Op::ToSigned(a) | Op::ToReal { x: a, .. }) = node.op else {
            continue;
        };
        let (from, to) = (placements[a as usize].engine(), placements[i].engine());
        if from == to {
            return refuse(
                node.op.name(),
                format!("v{a} is already on {}: nothing to convert", to.name()),
            );
        }
        if !options.allow_round_trips {
            return refuse(
                node.op.name(),
                format!(
                    "{} -> {} has no homomorphic path; it needs a key-holder round trip (decrypt and re-encrypt), which the caller has not allowed (PlanOptions::allow_round_trips)",
                    from.name(),
                    to.name()
                ),
            );
        }
        trips.push((i, from));
    }
    Ok(trips)
}

/// The single-product placement: in a coefficient-encoded BFV
/// part, inner products of one vector x with plaintext weights whose
/// values only feed decisions (threshold comparisons, never an output or
/// arithmetic) share one product. With x(X) = sum x_i X^i and the weights
/// w_j of score j reversed at offset L j + L - 1 - i (L = len x),
/// coefficient L j + L - 1 of x(X) w(X) is sum_i x_i w_j,i: n / L scores
/// per plaintext product, no rotation.
pub(crate) fn single_products(
    p: &Program,
    placements: &[Placement],
    bfv: &[BfvPart],
) -> Vec<Option<ScoreSlot>> {
    let mut slots = vec![None; p.nodes.len()];
    let decides = |j: usize, i: usize| match &p.nodes[j].op {
        Op::CompareScalar(a, ..) | Op::ThresholdWithin { x: a, .. } | Op::Lookup { x: a, .. } => {
            *a as usize == i
        }
        Op::ArgmaxSigned { xs, .. } => xs.contains(&(i as u32)),
        _ => false,
    };
    let mut groups: Vec<((usize, u32), Vec<usize>)> = Vec::new();
    for (i, node) in p.nodes.iter().enumerate() {
        let (Placement::Bfv(part), Op::DotPlain(a, _)) = (placements[i], &node.op) else {
            continue;
        };
        let only_decisions = p
            .nodes
            .iter()
            .enumerate()
            .all(|(j, n)| !n.op.operands().contains(&(i as u32)) || decides(j, i))
            && !p.outputs.iter().any(|(_, v)| *v as usize == i);
        if bfv[part].encoding != BfvEncoding::Coefficients || !only_decisions {
            continue;
        }
        match groups.iter_mut().find(|(k, _)| *k == (part, *a)) {
            Some((_, g)) => g.push(i),
            None => groups.push(((part, *a), vec![i])),
        }
    }
    for ((part, a), members) in groups {
        let len = len_of(p, a);
        let per_product = bfv[part].params.n() / len;
        for chunk in members.chunks(per_product) {
            for (j, &i) in chunk.iter().enumerate() {
                slots[i] = Some(ScoreSlot {
                    leader: chunk[0],
                    coefficient: len * j + len - 1,
                });
            }
        }
    }
    slots
}

/// The arithmetic a coefficient encoding (BFV or CKKS) runs: inputs,
/// additions, scalar operations and inner products with plaintext weights
/// (one product with the weights reversed).
pub(crate) fn runs_on_coefficients(op: &Op) -> bool {
    matches!(
        op,
        Op::Input { .. }
            | Op::Add(..)
            | Op::Sub(..)
            | Op::AddScalar(..)
            | Op::MulScalar(..)
            | Op::DotPlain(..)
    )
}

/// The real nodes that use the coefficient encoding: every real connected
/// (through real operands) to a value a `threshold_real` reads. Refuses an
/// operation of such a group that the coefficient encoding cannot run.
pub(crate) fn coefficient_nodes(p: &Program) -> Result<Vec<bool>> {
    let count = p.nodes.len();
    let real = |i: usize| matches!(p.nodes[i].kind, Kind::Real { .. });
    let mut parent: Vec<usize> = (0..count).collect();
    for (i, node) in p.nodes.iter().enumerate() {
        for a in node.op.operands() {
            if real(i) && real(a as usize) {
                let (ra, ri) = (find(&mut parent, a as usize), find(&mut parent, i));
                parent[ra] = ri;
            }
        }
    }
    let mut read = vec![false; count];
    for node in &p.nodes {
        if let Op::ThresholdReal { x, .. } = node.op {
            let r = find(&mut parent, x as usize);
            read[r] = true;
        }
    }
    let mut coefficients = vec![false; count];
    for i in 0..count {
        if !real(i) || !read[find(&mut parent, i)] {
            continue;
        }
        let op = &p.nodes[i].op;
        if !runs_on_coefficients(op) {
            return refuse(
                op.name(),
                "reals decided through the CKKS -> TFHE transition use the coefficient encoding, which runs additions, scalar operations and inner products with plaintext weights only",
            );
        }
        coefficients[i] = true;
    }
    Ok(coefficients)
}

/// Per node: whether a slot-encoded BFV value may hold anything in the
/// slots past its length (a rotation tree's partial sums, or an operand's).
/// Inputs, constants and element-wise operations keep those slots 0.
pub(crate) fn slots_dirty(p: &Program) -> Vec<bool> {
    let mut dirty = vec![false; p.nodes.len()];
    for (i, node) in p.nodes.iter().enumerate() {
        dirty[i] = matches!(node.op, Op::Sum(..) | Op::Dot(..) | Op::DotPlain(..))
            || node.op.operands().iter().any(|&a| dirty[a as usize]);
    }
    dirty
}

/// Whether node `i`'s value is released to the key holder for decryption
/// (an output, or the operand of a round trip).
pub(crate) fn released(p: &Program, i: usize) -> bool {
    p.outputs.iter().any(|(_, v)| *v as usize == i)
        || p.nodes
            .iter()
            .any(|n| matches!(n.op, Op::ToSigned(a) | Op::ToReal { x: a, .. } if a as usize == i))
}
