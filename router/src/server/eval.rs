//! The evaluator's pass over a plan: readiness, dispatch by engine and
//! the release of values.

use super::*;

impl Evaluator<'_> {
    /// Computes every operation node of the plan whose operands are known
    /// (in step order), leaving `None` where a key-holder round trip has
    /// not been made yet.
    pub(crate) fn evaluate(&self, pass: &mut Pass) -> Result<()> {
        let plan = self.plan;
        let transforms = self.keys.transforms(plan)?;
        for step in &plan.steps {
            let (StepKind::Op(i) | StepKind::Transition { node: i, .. }) = step.kind else {
                continue;
            };
            if pass.vals[i].is_some() || !self.ready(i, &pass.vals) {
                continue;
            }
            let start = Instant::now();
            let v = self.op(plan, i, &pass.vals, transforms)?;
            pass.node_ns[i] += start.elapsed().as_nanos() as f64;
            pass.vals[i] = Some(v);
        }
        Ok(())
    }

    /// Node `i`'s value from its operands' values.
    pub(crate) fn op_at(&self, i: usize, vals: &[Option<Val>]) -> Result<Val> {
        self.op(self.plan, i, vals, self.keys.transforms(self.plan)?)
    }

    /// Whether node `i`'s operands (and its single product's leader) have values.
    pub(crate) fn ready(&self, i: usize, vals: &[Option<Val>]) -> bool {
        let leader = self.plan.scores[i].map(|s| s.leader).filter(|&l| l != i);
        self.plan.program.nodes[i]
            .op
            .operands()
            .iter()
            .map(|&a| a as usize)
            .chain(leader)
            .all(|a| vals[a].is_some())
    }

    /// The release of node `i`'s value `v` ([`Released`]).
    pub(crate) fn release(&self, i: usize, v: &Val) -> Result<Released> {
        let plan = self.plan;
        let len = plan.program.nodes[i].kind.len();
        match (v, plan.placements[i]) {
            (Val::Bfv(c), Placement::Bfv(part)) => self.release_bfv(
                self.keys.bfv(part)?,
                plan.bfv[part].encoding,
                c,
                len,
                slots_dirty(&plan.program)[i],
            ),
            (Val::Ckks(c, _), Placement::Ckks) => self.release_ckks(plan, i, c),
            (Val::Radix(r), _) => Ok(Released::Radix(r.clone())),
            (Val::Bits(b), _) => Ok(Released::Bits(b.clone())),
            _ => Err(wrong("output")),
        }
    }

    pub(crate) fn op(
        &self,
        plan: &Plan,
        i: usize,
        vals: &[Option<Val>],
        transforms: &HashMap<usize, LinearTransform>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
        let get = |k: &u32| {
            vals[*k as usize]
                .as_ref()
                .ok_or_else(|| wrong(node.op.name()))
        };
        match plan.placements[i] {
            Placement::Bfv(part) if plan.scores[i].is_some() => {
                self.single_product(plan, part, i, &get)
            }
            Placement::Bfv(part) => self.bfv_op(plan, part, i, &get),
            Placement::Ckks => self.ckks_op(plan, i, &get, transforms),
            Placement::Tfhe => self.tfhe_op(plan, i, &get),
            Placement::CkksToTfhe => {
                let Op::ThresholdReal {
                    x,
                    threshold,
                    tolerance,
                } = node.op
                else {
                    return Err(wrong("transition"));
                };
                let set = plan.ckks.as_ref().map_or("", |p| p.name());
                let key = self
                    .keys
                    .transition
                    .get(set)
                    .ok_or_else(|| wrong("transition key"))?;
                let Val::Ckks(c, _) = get(&x)? else {
                    return Err(wrong("transition"));
                };
                let coefficients: Vec<usize> = (0..node.kind.len()).collect();
                let (bits, _) = ckks_coefficients_above(
                    c,
                    &coefficients,
                    threshold,
                    tolerance,
                    key,
                    self.keys.tfhe()?,
                )
                .map_err(|e| Error::Refused {
                    op: node.op.name().to_string(),
                    msg: e.to_string(),
                })?;
                Ok(Val::Bits(bits))
            }
            Placement::BfvToTfhe(part) => {
                let key = self
                    .keys
                    .transition
                    .get(plan.bfv[part].params.name())
                    .ok_or_else(|| wrong("transition key"))?;
                let t = self.keys.tfhe()?;
                let bfv_of = |k: &u32| match get(k)? {
                    Val::Bfv(c) => Ok(c),
                    _ => Err(wrong("transition")),
                };
                // The values' ciphertext and the coefficients holding them.
                let values = |k: &u32| match get(k)? {
                    Val::Bfv(c) => Ok((c.clone(), (0..node.kind.len()).collect())),
                    Val::Score(c, at) => Ok((c.as_ref().clone(), vec![*at])),
                    _ => Err(wrong("transition")),
                };
                if let Op::ArgmaxSigned { xs, .. } = &node.op {
                    let mut sources = Sources::new();
                    for x in xs {
                        match get(x)? {
                            Val::Bfv(c) => {
                                sources.push(c, 0..plan.program.nodes[*x as usize].kind.len())
                            }
                            Val::Score(c, at) => sources.push(c.as_ref(), std::iter::once(*at)),
                            _ => return Err(wrong("argmax")),
                        }
                    }
                    let log_t = plan.bfv[part].params.plain_modulus().trailing_zeros();
                    let Kind::Uint { bits, .. } = node.kind else {
                        return Err(wrong("argmax"));
                    };
                    let r = read_tolerance(&node.op, log_t);
                    return Ok(Val::Radix(vec![signed_argmax(&sources, r, bits, key, t)?]));
                }
                if let Op::Lookup { x, table } = &node.op {
                    let (input, coefficients) = values(x)?;
                    // Decisions x >= c for every c in (-B, B].
                    let bound = (table.len() as i64 - 1) / 2;
                    let decisions = (1 - bound..=bound)
                        .map(|c| {
                            run_bfv_to_tfhe(&BfvToTfhe {
                                input: &input,
                                coefficients: &coefficients,
                                cmp: Cmp::Ge,
                                constant: c,
                                tolerance_bits: 0,
                                key,
                                tfhe_server: t,
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let out = (0..coefficients.len())
                        .map(|v| {
                            let bits: Vec<_> = decisions.iter().map(|d| d[v].clone()).collect();
                            triskel_tfhe::lookup::lookup_from_decisions(t, &bits, table)
                        })
                        .collect::<triskel_tfhe::Result<_>>()?;
                    return Ok(Val::Radix(out));
                }
                let ((input, coefficients), cmp, constant) = match &node.op {
                    Op::Compare(a, b, cmp) => (
                        (bfv_of(a)?.sub(bfv_of(b)?)?, (0..node.kind.len()).collect()),
                        *cmp,
                        0,
                    ),
                    Op::CompareScalar(a, c, cmp) => (values(a)?, *cmp, int(c)),
                    Op::ThresholdWithin { x, threshold, .. } => (values(x)?, Cmp::Ge, *threshold),
                    _ => return Err(wrong("transition")),
                };
                let bits = run_bfv_to_tfhe(&BfvToTfhe {
                    input: &input,
                    coefficients: &coefficients,
                    cmp,
                    constant,
                    tolerance_bits: read_tolerance(
                        &node.op,
                        input.context().plain_modulus().trailing_zeros(),
                    ),
                    key,
                    tfhe_server: t,
                })?;
                Ok(Val::Bits(bits))
            }
        }
    }

    /// Evaluates what it can, then releases: the operands of the round
    /// trips not made yet when there are any, else every output.
    pub(crate) fn finish(&self, pass: &mut Pass) -> Result<Vec<Release>> {
        self.evaluate(pass)?;
        let plan = self.plan;
        let released = |slot: Slot, i: usize, v: &Val| -> Result<Release> {
            Ok(Release {
                slot,
                value: self.release(i, v)?,
            })
        };
        let mut out = Vec::new();
        for &(i, _) in &plan.round_trips {
            let a = plan.program.nodes[i].op.operands()[0] as usize;
            if let (None, Some(v)) = (&pass.vals[i], &pass.vals[a]) {
                out.push(released(Slot::RoundTrip(i as u32), a, v)?);
            }
        }
        if !out.is_empty() {
            return Ok(out);
        }
        for (o, (_, i)) in plan.program.outputs.iter().enumerate() {
            let i = *i as usize;
            let v = pass.vals[i].as_ref().ok_or_else(|| wrong("output"))?;
            out.push(released(Slot::Output(o as u32), i, v)?);
        }
        Ok(out)
    }
}

pub(crate) fn int(s: &Scalar) -> i64 {
    match *s {
        Scalar::Int(i) => i,
        Scalar::Real(r) => r as i64,
    }
}

pub(crate) fn real(s: &Scalar) -> f64 {
    match *s {
        Scalar::Real(r) => r,
        Scalar::Int(i) => i as f64,
    }
}

/// What one pass of the evaluator left: the values of the nodes it could
/// compute, and per node the nanoseconds it took.
pub(crate) struct Pass {
    pub(crate) vals: Vec<Option<Val>>,
    pub(crate) node_ns: Vec<f64>,
}

/// The evaluator of one plan under one bundle of evaluation keys.
pub(crate) struct Evaluator<'a> {
    pub(crate) plan: &'a Plan,
    pub(crate) keys: &'a EvaluationKeys,
}

/// One value leaving the server and where it goes.
pub(crate) struct Release {
    pub(crate) slot: Slot,
    pub(crate) value: Released,
}
