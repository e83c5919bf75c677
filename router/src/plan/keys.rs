//! Which evaluation keys a plan needs: key generation, the cost
//! prediction and the server's check of a bundle all read these.

use super::*;

/// The evaluation keys of one BFV part: a relinearization key when it
/// multiplies ciphertexts, and the Galois keys of its rotations.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BfvKeyNeeds {
    pub(crate) relin: bool,
    pub(crate) rotations: Vec<i64>,
}

/// Which evaluation keys a plan needs, except the CKKS rotations (which
/// come from its linear transforms: [`ckks_needs`]). Key generation and
/// the server's check of a bundle both read it.
pub(crate) struct KeyNeeds {
    pub(crate) bfv: Vec<BfvKeyNeeds>,
    pub(crate) ckks_relin: bool,
}

pub(crate) fn key_needs(plan: &Plan) -> KeyNeeds {
    let multiplies = |place: Placement| {
        plan.program.nodes.iter().enumerate().any(|(i, n)| {
            plan.placements[i] == place
                && matches!(
                    &n.op,
                    Op::Mul(..) | Op::Dot(..) | Op::Polynomial(..) | Op::Chebyshev { .. }
                )
        })
    };
    KeyNeeds {
        bfv: (0..plan.bfv.len())
            .map(|part| BfvKeyNeeds {
                relin: multiplies(Placement::Bfv(part)),
                rotations: bfv_rotations(plan, part),
            })
            .collect(),
        ckks_relin: multiplies(Placement::Ckks),
    }
}

/// The CKKS part's linear transforms (by node) and every rotation it
/// makes: slot sums of inner products, and the transforms' steps.
pub(crate) struct CkksNeeds {
    pub(crate) transforms: std::collections::HashMap<usize, ckks::LinearTransform>,
    pub(crate) rotations: BTreeSet<i64>,
}

pub(crate) fn ckks_needs(
    plan: &Plan,
    ctx: &std::sync::Arc<ckks::CkksContext>,
) -> Result<CkksNeeds> {
    let mut transforms = std::collections::HashMap::new();
    for (i, x, rows, dim) in ckks_matvecs(plan) {
        let level = ctx.max_level() - plan.packing[x].depth;
        transforms.insert(i, ckks::LinearTransform::new(ctx, rows, dim, level)?);
    }
    Ok(CkksNeeds {
        transforms,
        rotations: ckks_rotations(plan),
    })
}

/// The CKKS part's matrix-vector products: (node, input node, rows, the
/// packing dimension of its transform).
pub(crate) fn ckks_matvecs(
    plan: &Plan,
) -> impl Iterator<Item = (usize, usize, &[Vec<f64>], usize)> {
    plan.program
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, node)| match (plan.placements[i], &node.op) {
            (Placement::Ckks, Op::MatVec { x, rows }) => {
                let x = *x as usize;
                let dim = plan.packing[x].period.max(rows.len().next_power_of_two());
                Some((i, x, rows.as_slice(), dim))
            }
            _ => None,
        })
}

/// Every rotation of the CKKS part: the slot sums of its inner products and
/// the steps of its linear transforms ([`ckks::TransformShape`], what
/// [`ckks::LinearTransform::new`] builds by).
pub(crate) fn ckks_rotations(plan: &Plan) -> BTreeSet<i64> {
    let mut rotations: BTreeSet<i64> = ckks_matvecs(plan)
        .flat_map(|(_, _, rows, dim)| ckks::TransformShape::of(rows, dim).rotation_steps())
        .collect();
    for (i, node) in plan.program.nodes.iter().enumerate() {
        if plan.placements[i] != Placement::Ckks || plan.packing[i].coefficients {
            continue;
        }
        // Coefficient-encoded inner products rotate nothing.
        if let Op::Sum(a) | Op::Dot(a, _) | Op::DotPlain(a, _) = &node.op {
            let mut s = 1;
            while s < plan.packing[*a as usize].period {
                rotations.insert(s as i64);
                s *= 2;
            }
        }
    }
    rotations
}

/// The names of the sets (BFV parts, the CKKS set) whose values a plan
/// moves to TFHE by a transition.
pub(crate) fn transition_sets(plan: &Plan) -> Vec<String> {
    let mut names: Vec<String> = (0..plan.bfv.len())
        .filter(|&k| plan.placements.contains(&Placement::BfvToTfhe(k)))
        .map(|k| plan.bfv[k].params.name().to_string())
        .collect();
    if let (true, Some(set)) = (
        plan.placements.contains(&Placement::CkksToTfhe),
        plan.ckks.as_ref(),
    ) {
        names.push(set.name().to_string());
    }
    names
}

/// Rotation steps of a BFV slots part (for its Galois keys).
pub fn bfv_rotations(plan: &Plan, part: usize) -> Vec<i64> {
    let p = &plan.program;
    let mut steps = BTreeSet::new();
    for (i, node) in p.nodes.iter().enumerate() {
        if plan.placements[i] != Placement::Bfv(part)
            || plan.bfv[part].encoding == BfvEncoding::Coefficients
        {
            continue;
        }
        if let Op::Dot(a, _) | Op::DotPlain(a, _) | Op::Sum(a) = node.op {
            let w = len_of(p, a).next_power_of_two();
            let mut s = w / 2;
            while s >= 1 {
                steps.insert(s as i64);
                s /= 2;
            }
        }
    }
    steps.into_iter().collect()
}
