//! The steps of a plan and their predicted times: primitive counts per
//! operation, priced by the cost model.

use super::*;

/// Primitive counts shared by BFV and CKKS: `tree` rotations (and
/// additions) of a reduction, `mask` extra plaintext products.
pub(crate) fn rlwe_counts(op: &Op, tree: f64, mask: f64) -> Vec<(Primitive, f64)> {
    // Plaintext vectors (inputs, added constants, weights, masks) are encoded first.
    match op {
        Op::Input { .. } | Op::ToSigned(..) | Op::ToReal { .. } => {
            vec![(Primitive::Encode, 1.0), (Primitive::Encrypt, 1.0)]
        }
        Op::Add(..) | Op::Sub(..) | Op::Compare(..) => vec![(Primitive::Add, 1.0)],
        Op::AddScalar(..) => vec![(Primitive::Encode, 1.0), (Primitive::Add, 1.0)],
        Op::MulScalar(..) => vec![(Primitive::MulPlain, 1.0)],
        Op::Mul(..) => vec![(Primitive::MulRelin, 1.0)],
        Op::Dot(..) => vec![
            (Primitive::MulRelin, 1.0),
            (Primitive::Encode, mask),
            (Primitive::MulPlain, mask),
            (Primitive::Rotate, tree),
            (Primitive::Add, tree),
        ],
        Op::DotPlain(..) => vec![
            (Primitive::Encode, 1.0),
            (Primitive::MulPlain, 1.0),
            (Primitive::Rotate, tree),
            (Primitive::Add, tree),
        ],
        Op::Sum(..) => vec![
            (Primitive::Encode, mask),
            (Primitive::MulPlain, mask),
            (Primitive::Rotate, tree),
            (Primitive::Add, tree),
        ],
        _ => vec![],
    }
}

/// BFV primitive counts of node `i` (one ciphertext per vector).
pub(crate) fn bfv_counts(p: &Program, i: usize, encoding: BfvEncoding) -> Vec<(Primitive, f64)> {
    let op = &p.nodes[i].op;
    match op {
        // Coefficient encoding: the weights reversed, one product, no rotation.
        Op::DotPlain(..) if encoding == BfvEncoding::Coefficients => rlwe_counts(op, 0.0, 0.0),
        Op::Polynomial(_, cs) => {
            let d = cs.len() as f64 - 1.0;
            vec![
                (Primitive::MulRelin, (d - 1.0).max(0.0)),
                (Primitive::MulPlain, 1.0),
                (Primitive::Encode, d.max(1.0)),
                (Primitive::Add, d.max(1.0)),
            ]
        }
        Op::Dot(a, _) | Op::DotPlain(a, _) | Op::Sum(a) => {
            rlwe_counts(op, log2_tree(len_of(p, *a)), 0.0)
        }
        op => rlwe_counts(op, 0.0, 0.0),
    }
}

/// TFHE primitive counts of node `i`: the u8 figures scaled by blocks
/// (linear operations) or blocks^2 (products).
pub(crate) fn tfhe_counts(p: &Program, i: usize) -> Vec<(Primitive, f64)> {
    let node = &p.nodes[i];
    let operand_kind = |k: u32| p.nodes[k as usize].kind;
    let width = |k: Kind| match k {
        Kind::Uint { bits, .. } => bits as f64 / 8.0,
        _ => 1.0,
    };
    let len = node.kind.len() as f64;
    match &node.op {
        Op::Input { kind, .. } => match *kind {
            Kind::Uint { bits, len } => {
                vec![(Primitive::EncryptBlock, len as f64 * bits as f64 / 2.0)]
            }
            k => vec![(Primitive::EncryptBlock, k.len() as f64)],
        },
        Op::Add(a, _) | Op::Sub(a, _) => vec![(Primitive::Add8, len * width(operand_kind(*a)))],
        Op::AddScalar(a, _) => vec![(Primitive::ScalarAdd8, len * width(operand_kind(*a)))],
        Op::MulScalar(a, _) => vec![(Primitive::ScalarMul8, len * width(operand_kind(*a)).powi(2))],
        Op::Mul(a, _) => vec![(Primitive::Mul8, len * width(operand_kind(*a)).powi(2))],
        Op::Dot(a, _) => {
            let (l, w) = (len_of(p, *a) as f64, width(operand_kind(*a)));
            vec![
                (Primitive::Mul8, l * w * w),
                (Primitive::Add8, (l - 1.0) * w),
            ]
        }
        Op::DotPlain(a, _) => {
            let (l, w) = (len_of(p, *a) as f64, width(operand_kind(*a)));
            vec![
                (Primitive::ScalarMul8, l * w * w),
                (Primitive::Add8, (l - 1.0) * w),
            ]
        }
        Op::Sum(a) => {
            let (l, w) = (len_of(p, *a) as f64, width(operand_kind(*a)));
            vec![(Primitive::Add8, (l - 1.0) * w)]
        }
        Op::Polynomial(a, cs) => {
            let (d, w) = (cs.len() as f64 - 1.0, width(operand_kind(*a)));
            vec![
                (Primitive::Mul8, len * (d - 1.0).max(0.0) * w * w),
                (Primitive::ScalarMul8, len * w * w),
                (Primitive::ScalarAdd8, len * d.max(1.0) * w),
            ]
        }
        Op::Compare(a, ..) => vec![(Primitive::Compare8, len * width(operand_kind(*a)))],
        Op::Any(bits) => {
            let count = bits.iter().map(|&b| len_of(p, b)).sum();
            let bootstraps = any_bootstraps(&tfhe_set(), count).unwrap_or(count);
            vec![(Primitive::Pbs, bootstraps as f64)]
        }
        Op::CompareScalar(a, ..) => {
            let w = width(operand_kind(*a));
            vec![
                (Primitive::Compare8, len * w),
                (Primitive::ScalarMul8, len * w * w),
                (Primitive::ScalarAdd8, len * w),
            ]
        }
        Op::Select { a, .. } => vec![(Primitive::Select8, len * width(operand_kind(*a)))],
        Op::Lookup { .. } => vec![(Primitive::Lookup8, len)],
        Op::Argmax(a) => {
            // Per challenger: a comparison and two selects (value, index),
            // the last one the index only.
            let (l, w) = (len_of(p, *a) as f64 - 1.0, width(operand_kind(*a)));
            vec![
                (Primitive::Compare8, l * w),
                (Primitive::Select8, (2.0 * l - 1.0).max(0.0) * w),
            ]
        }
        _ => vec![],
    }
}

/// CKKS primitive counts of node `i`.
pub(crate) fn ckks_counts(p: &Program, packing: &[Packing], i: usize) -> Vec<(Primitive, f64)> {
    let mask = packing[i].mask_operand as u8 as f64;
    match &p.nodes[i].op {
        op @ (Op::Polynomial(..) | Op::Chebyshev { .. }) => {
            // triskel-ckks' baby-step giant-step: T_2 .. T_(k-1) and the
            // giants T_k, T_2k, .. <= d (one product each), one product per
            // split of the coefficients by a giant, d scalar terms.
            let d = ckks_polynomial(op).ok().flatten().map_or(1, |c| c.degree());
            let m = (usize::BITS - d.leading_zeros()) as usize;
            let k = 1usize << m.div_ceil(2);
            let giants = std::iter::successors(Some(k), |g| Some(2 * g))
                .take_while(|&g| g <= d)
                .count();
            let products =
                k.saturating_sub(2).min(d.saturating_sub(1)) + giants + (d + 1).div_ceil(k) - 1;
            vec![
                (Primitive::MulRelin, products as f64),
                (Primitive::Add, d as f64),
            ]
        }
        Op::MatVec { x, rows } => {
            let dim = packing[*x as usize]
                .period
                .max(rows.len().next_power_of_two());
            let shape = ckks::TransformShape::of(rows, dim);
            let (rotations, products) = (shape.rotation_steps().len(), shape.diagonal_count());
            vec![
                (Primitive::Rotate, rotations as f64),
                (Primitive::MulPlain, products as f64),
                (Primitive::Add, products as f64),
            ]
        }
        op @ (Op::Dot(a, _) | Op::DotPlain(a, _) | Op::Sum(a)) => {
            rlwe_counts(op, log2_tree(packing[*a as usize].period), mask)
        }
        op => rlwe_counts(op, 0.0, mask),
    }
}

/// The CKKS readings of a plan's thresholds on reals, by node.
type Readings = Vec<Option<CkksReading>>;

fn step(kind: StepKind, engine: Engine, params: String, label: String, predicted_ns: f64) -> Step {
    Step {
        kind,
        engine,
        params,
        label,
        predicted_ns,
        measured_ns: None,
        bytes: None,
    }
}

/// The steps of `plan`: key generation per engine, one step per node, one
/// decryption per output.
pub(crate) fn steps(plan: &Plan, costs: &CostModel) -> Result<Vec<Step>> {
    let p = &plan.program;
    let readings = match &plan.ckks {
        Some(set) => ckks_readings(p, &plan.packing, set)?,
        None => vec![None; p.nodes.len()],
    };
    let mut steps = keygen_steps(plan, costs)?;
    for i in 0..p.nodes.len() {
        steps.push(node_step(plan, costs, &readings, i)?);
    }
    for (k, (name, v)) in p.outputs.iter().enumerate() {
        let i = *v as usize;
        let place = plan.placements[i];
        steps.push(step(
            StepKind::Decrypt(k),
            place.engine(),
            params_name(plan, place),
            format!("decrypt output {name:?} (v{v})"),
            decrypt_ns(plan, costs, i)?,
        ));
    }
    Ok(steps)
}

/// Key generation of each engine the plan uses, with exactly the keys
/// [`key_needs`] and [`ckks_rotations`] list.
fn keygen_steps(plan: &Plan, costs: &CostModel) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    for (k, part) in plan.bfv.iter().enumerate() {
        let rotations = bfv_rotations(plan, k).len() as f64;
        let ns = costs.predict(
            Engine::Bfv,
            &part.base,
            &[(Primitive::Keygen, 1.0), (Primitive::GaloisKey, rotations)],
        )?;
        let label =
            format!("keys ({:?} encoding, {rotations} rotations)", part.encoding).to_lowercase();
        steps.push(step(
            StepKind::Keygen(Engine::Bfv, k),
            Engine::Bfv,
            part.params.name().into(),
            label,
            ns,
        ));
    }
    if let Some(set) = &plan.ckks {
        // The Galois keys key generation makes; the linear transforms'
        // diagonals are encoded with the keys.
        let rotations = ckks_rotations(plan).len() as f64;
        let encodes: usize = ckks_matvecs(plan)
            .map(|(_, _, rows, dim)| ckks::TransformShape::of(rows, dim).diagonal_count())
            .sum();
        let ns = costs.predict(
            Engine::Ckks,
            set.name(),
            &[
                (Primitive::Keygen, 1.0),
                (Primitive::GaloisKey, rotations),
                (Primitive::Encode, encodes as f64),
            ],
        )?;
        steps.push(step(
            StepKind::Keygen(Engine::Ckks, 0),
            Engine::Ckks,
            set.name().into(),
            format!("keys ({rotations} rotations)"),
            ns,
        ));
    }
    if plan.tfhe.is_some() {
        steps.push(tfhe_keygen_step(plan, costs)?);
    }
    Ok(steps)
}

/// TFHE client and server keys, and the transition keys from BFV and CKKS.
fn tfhe_keygen_step(plan: &Plan, costs: &CostModel) -> Result<Step> {
    let tfhe = tfhe_set();
    let mut ns = costs.predict(Engine::Tfhe, tfhe.name, &[(Primitive::Keygen, 1.0)])?;
    for (k, part) in plan.bfv.iter().enumerate() {
        if plan.placements.contains(&Placement::BfvToTfhe(k)) {
            ns += costs.predict(Engine::Bfv, &part.base, &[(Primitive::TransitionKey, 1.0)])?;
        }
    }
    let from_ckks = plan.placements.contains(&Placement::CkksToTfhe);
    if let (true, Some(set)) = (from_ckks, &plan.ckks) {
        // A transition key's cost depends on the ring degree only: the
        // BFV set of the same degree's calibrated figure.
        if let Some(bfv) = bfv_sets().iter().find(|b| b.n() == set.n()) {
            ns += costs.predict(Engine::Bfv, bfv.name(), &[(Primitive::TransitionKey, 1.0)])?;
        }
    }
    let mut sources: Vec<&str> = Vec::new();
    if plan
        .placements
        .iter()
        .any(|p| matches!(p, Placement::BfvToTfhe(_)))
    {
        sources.push("bfv");
    }
    if from_ckks {
        sources.push("ckks");
    }
    let label = match sources.as_slice() {
        [] => "client and server keys".to_string(),
        s => format!(
            "client and server keys + transition keys ({} -> tfhe)",
            s.join(", ")
        ),
    };
    Ok(step(
        StepKind::Keygen(Engine::Tfhe, 0),
        Engine::Tfhe,
        tfhe.name.into(),
        label,
        ns,
    ))
}

/// The step of node `i`: its kind, label and predicted time.
fn node_step(plan: &Plan, costs: &CostModel, readings: &Readings, i: usize) -> Result<Step> {
    let p = &plan.program;
    let node = &p.nodes[i];
    let place = plan.placements[i];
    let (engine, params) = (place.engine(), params_name(plan, place));
    let round_trip = plan.round_trips.iter().find(|&&(n, _)| n == i);
    let kind = match (&node.op, place) {
        (Op::Input { .. }, _) => StepKind::Encrypt(i),
        _ if round_trip.is_some() => StepKind::RoundTrip {
            node: i,
            from: round_trip.map_or(engine, |r| r.1),
            to: engine,
        },
        (_, Placement::BfvToTfhe(_)) => StepKind::Transition {
            node: i,
            from: Engine::Bfv,
            to: Engine::Tfhe,
        },
        (_, Placement::CkksToTfhe) => StepKind::Transition {
            node: i,
            from: Engine::Ckks,
            to: Engine::Tfhe,
        },
        _ => StepKind::Op(i),
    };
    let mut label = describe_node(p, i);
    if plan.packing[i].mask_operand {
        label += " (operand masked first)";
    }
    let mut ns = node_ns(plan, costs, readings, i)?;
    match kind {
        StepKind::Transition { .. } => label += &transition_note(plan, readings, i)?,
        StepKind::RoundTrip { from, to, .. } => {
            label += &format!(
                " [KEY-HOLDER ROUND TRIP {} -> {}: decrypted by the key holder, encrypted again]",
                from.name(),
                to.name()
            );
            let a = node.op.operands()[0] as usize;
            ns += decrypt_ns(plan, costs, a)?;
        }
        _ => {}
    }
    if let Some(slot) = plan.scores[i] {
        if slot.leader == i {
            label += " [one plaintext product for its group's scores]";
        } else {
            label += &format!(
                " [coefficient {} of v{}'s product]",
                slot.coefficient, slot.leader
            );
            ns = 0.0;
        }
    }
    Ok(step(kind, engine, params, label, ns))
}

/// The predicted time of node `i` on its placement.
fn node_ns(plan: &Plan, costs: &CostModel, readings: &Readings, i: usize) -> Result<f64> {
    let p = &plan.program;
    let node = &p.nodes[i];
    let tfhe = tfhe_set();
    match plan.placements[i] {
        Placement::Bfv(k) => costs.predict(
            Engine::Bfv,
            &plan.bfv[k].base,
            &bfv_counts(p, i, plan.bfv[k].encoding),
        ),
        Placement::Ckks => {
            let set = plan.ckks.as_ref().map_or("", |s| s.name());
            Ok(
                costs.predict(Engine::Ckks, set, &ckks_counts(p, &plan.packing, i))?
                    * ckks_level_factor(plan, i),
            )
        }
        Placement::Tfhe => costs.predict(Engine::Tfhe, tfhe.name, &tfhe_counts(p, i)),
        Placement::CkksToTfhe => {
            let pbs = readings[i].map_or(0, |r| r.bootstraps) as f64;
            costs.predict(
                Engine::Tfhe,
                tfhe.name,
                &[(Primitive::Pbs, pbs * node.kind.len() as f64)],
            )
        }
        Placement::BfvToTfhe(k) if matches!(node.op, Op::ArgmaxSigned { .. }) => {
            let a = argmax_shape(plan, i, k)?;
            let (wv, wi) = (a.value_bits as f64 / 8.0, index_bits(node.kind) / 8.0);
            let challengers = a.values as f64 - 1.0;
            Ok(decisions_ns(
                costs,
                &plan.bfv[k].base,
                a.sources as f64,
                a.values as f64 / a.sources as f64,
                a.read as f64,
            )? + costs.predict(
                Engine::Tfhe,
                tfhe.name,
                &[
                    (Primitive::Pbs, (a.values * a.refreshes) as f64),
                    (Primitive::Compare8, challengers * wv),
                    (Primitive::Select8, challengers * (wv + wi)),
                ],
            )?)
        }
        Placement::BfvToTfhe(k) => {
            let part = &plan.bfv[k];
            let decision = decision_shape(plan, i, k)?.bootstraps as f64;
            // A lookup: one decision per table entry past the first, and a
            // u8 addition for each.
            let entries = match &node.op {
                Op::Lookup { table, .. } => table.len() as f64 - 1.0,
                _ => 0.0,
            };
            // Decisions per value, and bootstraps besides them (== / !=
            // combine two decisions by one).
            let (decisions, extra) = match &node.op {
                Op::Compare(_, _, Cmp::Eq | Cmp::Ne)
                | Op::CompareScalar(_, _, Cmp::Eq | Cmp::Ne) => (2.0, 1.0),
                Op::Lookup { .. } => (entries, 0.0),
                _ => (1.0, 0.0),
            };
            let len = node.kind.len() as f64;
            Ok(
                costs.predict(Engine::Bfv, &part.base, &bfv_counts(p, i, part.encoding))?
                    + decisions_ns(costs, &part.base, decisions, len, decision)?
                    + costs.predict(
                        Engine::Tfhe,
                        tfhe.name,
                        &[
                            (Primitive::Pbs, extra * len),
                            (Primitive::Add8, entries * len),
                        ],
                    )?,
            )
        }
    }
}

/// What a transition of node `i` runs, for its step's label.
fn transition_note(plan: &Plan, readings: &Readings, i: usize) -> Result<String> {
    let node = &plan.program.nodes[i];
    Ok(match plan.placements[i] {
        Placement::CkksToTfhe => match (readings[i], &node.op) {
            (Some(r), Op::ThresholdReal { tolerance, .. }) => format!(
                " [transition ckks -> tfhe: ring switch, extract, key switch, {} bootstraps per value; right when |x - threshold| > {:.3e} (asked {tolerance:.3e}), failure 2^{:.0}]",
                r.bootstraps,
                r.tolerance,
                r.log2_failure
            ),
            _ => String::new(),
        },
        Placement::BfvToTfhe(k) if matches!(node.op, Op::ArgmaxSigned { .. }) => {
            let a = argmax_shape(plan, i, k)?;
            let within = match a.tolerance {
                0 => "exact".to_string(),
                r => format!("within 2^{r}"),
            };
            format!(
                " [transition bfv -> tfhe: ring switch, extract, key switch, {} bootstraps per value (its bits, {within}), {} block refreshes, then a tournament of {} comparisons of u{} on tfhe; failure <= 2^{:.0} for all {} values]",
                a.read,
                a.refreshes,
                a.values.saturating_sub(1),
                a.value_bits,
                // Beyond it the tail's float underflows.
                a.log2_failure.max(-1000.0),
                a.values
            )
        }
        _ => " [transition bfv -> tfhe: ring switch, extract, key switch, bootstrap]".to_string(),
    })
}

/// Predicted time of decrypting node `i`'s value.
pub(crate) fn decrypt_ns(plan: &Plan, costs: &CostModel, i: usize) -> Result<f64> {
    let place = plan.placements[i];
    match place {
        // The release: a fresh encryption of zero, the mask's product (slots).
        Placement::Bfv(part) => {
            let mask = (plan.bfv[part].encoding == BfvEncoding::Slots
                && slots_dirty(&plan.program)[i]) as u8 as f64;
            costs.predict(
                Engine::Bfv,
                &plan.bfv[part].base,
                &[
                    (Primitive::Decrypt, 1.0),
                    (Primitive::Encrypt, 1.0),
                    (Primitive::Encode, mask),
                    (Primitive::MulPlain, mask),
                ],
            )
        }
        // The release: the mask's product, a fresh encryption of zero.
        Placement::Ckks => {
            let mask = (plan.packing[i].release == ReleaseMask::Product) as u8 as f64;
            Ok(costs.predict(
                Engine::Ckks,
                &params_name(plan, place),
                &[
                    (Primitive::Decrypt, 1.0),
                    (Primitive::Encrypt, 1.0),
                    (Primitive::Add, 1.0),
                    (Primitive::Encode, mask),
                    (Primitive::MulPlain, mask),
                ],
            )? * ckks_primes_left(plan, plan.packing[i].depth))
        }
        Placement::Tfhe | Placement::BfvToTfhe(_) | Placement::CkksToTfhe => {
            let blocks = match plan.program.nodes[i].kind {
                Kind::Uint { bits, len } => (bits / 2) as f64 * len as f64,
                k => k.len() as f64,
            };
            costs.predict(
                Engine::Tfhe,
                tfhe_set().name,
                &[(Primitive::DecryptBlock, blocks)],
            )
        }
    }
}
