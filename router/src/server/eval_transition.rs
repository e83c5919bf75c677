//! The transitions of the evaluator: BFV and CKKS values read into TFHE.

use super::*;

impl Evaluator<'_> {
    /// A threshold on reals: CKKS -> TFHE.
    pub(crate) fn ckks_transition<'v>(
        &self,
        plan: &Plan,
        i: usize,
        get: &dyn Fn(&u32) -> Result<&'v Val>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
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

    /// A decision, lookup or argmax on BFV values: BFV -> TFHE.
    pub(crate) fn bfv_transition<'v>(
        &self,
        plan: &Plan,
        part: usize,
        i: usize,
        get: &dyn Fn(&u32) -> Result<&'v Val>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
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
                    Val::Bfv(c) => sources.push(c, 0..plan.program.nodes[*x as usize].kind.len()),
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
