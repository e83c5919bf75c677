//! The evaluator's pass over a plan: readiness, dispatch by engine and
//! the release of values.

use std::sync::atomic::Ordering;

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
            self.check_cancel()?;
            let start = Instant::now();
            let v = self.op(plan, i, &pass.vals, transforms)?;
            pass.node_ns[i] += start.elapsed().as_nanos() as f64;
            pass.vals[i] = Some(v);
        }
        Ok(())
    }

    /// [`Error::Cancelled`] once the caller has raised the cancel flag.
    pub(crate) fn check_cancel(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
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
            Placement::CkksToTfhe => self.ckks_transition(plan, i, &get),
            Placement::BfvToTfhe(part) => self.bfv_transition(plan, part, i, &get),
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
    /// Checked before each operation: once raised, the pass stops with
    /// [`Error::Cancelled`].
    pub(crate) cancel: &'a AtomicBool,
}

/// One value leaving the server and where it goes.
pub(crate) struct Release {
    pub(crate) slot: Slot,
    pub(crate) value: Released,
}
