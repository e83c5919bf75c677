//! BFV operations of the evaluator, and the release of BFV values.

use super::*;

impl Evaluator<'_> {
    /// An inner product of the single-product placement: at its group's
    /// leader, the one plaintext product with every member's weights
    /// reversed at offset L j + L - 1 - i; each member's value is its
    /// coefficient of that product.
    pub(crate) fn single_product<'v>(
        &self,
        plan: &Plan,
        part: usize,
        i: usize,
        get: &dyn Fn(&u32) -> Result<&'v Val>,
    ) -> Result<Val> {
        let slot = plan.scores[i].ok_or_else(|| wrong("dot_plain"))?;
        if slot.leader != i {
            return match get(&(slot.leader as u32))? {
                Val::Score(product, _) => Ok(Val::Score(product.clone(), slot.coefficient)),
                _ => Err(wrong("dot_plain")),
            };
        }
        let keys = self.keys.bfv(part)?;
        let Op::DotPlain(a, _) = plan.program.nodes[i].op else {
            return Err(wrong("dot_plain"));
        };
        let mut weights = vec![0i128; keys.ctx.n()];
        for (k, member) in plan.scores.iter().enumerate() {
            let (Some(m), Op::DotPlain(_, w)) = (member, &plan.program.nodes[k].op) else {
                continue;
            };
            if m.leader != i {
                continue;
            }
            for (idx, s) in w.iter().enumerate() {
                weights[m.coefficient - idx] = int(s) as i128;
            }
        }
        let x = match get(&a)? {
            Val::Bfv(c) => c,
            _ => return Err(wrong("dot_plain")),
        };
        let product = x.mul_plain(&bfv_plain(
            &self.keys.bfv(part)?.ctx,
            plan.bfv[part].encoding,
            &weights,
        )?)?;
        Ok(Val::Score(Arc::new(product), slot.coefficient))
    }

    pub(crate) fn bfv_op<'v>(
        &self,
        plan: &Plan,
        part: usize,
        i: usize,
        get: &dyn Fn(&u32) -> Result<&'v Val>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
        let keys = self.keys.bfv(part)?;
        let ct = |k: &u32| match get(k)? {
            Val::Bfv(c) => Ok(c),
            _ => Err(wrong(node.op.name())),
        };
        let rk = || keys.rk.as_ref().ok_or_else(|| wrong("relinearization key"));
        let mul = |a: &BfvCiphertext, b: &BfvCiphertext| -> Result<BfvCiphertext> {
            Ok(a.mul(b)?.relinearize(rk()?)?)
        };
        let t = keys.ctx.plain_modulus() as i128;
        let constant = |c: &Scalar| {
            BfvPlaintext::from_coeffs(&keys.ctx, &[(int(c) as i128).rem_euclid(t) as u64])
        };
        let repeat = |c: &Scalar, len: usize| {
            bfv_plain(
                &self.keys.bfv(part)?.ctx,
                plan.bfv[part].encoding,
                &vec![int(c) as i128; len],
            )
        };
        // x <- x + rotate(x, s) for s = len/2 .. 1, with one lazy ModDown.
        let tree = |x: BfvCiphertext, len: usize| -> Result<BfvCiphertext> {
            let steps: Vec<i64> =
                std::iter::successors(Some(len.next_power_of_two() / 2), |s| Some(s / 2))
                    .take_while(|&s| s >= 1)
                    .map(|s| s as i64)
                    .collect();
            if steps.is_empty() {
                return Ok(x);
            }
            let gk = keys.gk.as_ref().ok_or_else(|| wrong("galois keys"))?;
            Ok(x.rotation_tree_sum(&steps, gk)?)
        };
        let len = |k: &u32| plan.program.nodes[*k as usize].kind.len();
        let out = match &node.op {
            Op::Add(a, b) => ct(a)?.add(ct(b)?)?,
            Op::Sub(a, b) => ct(a)?.sub(ct(b)?)?,
            Op::Mul(a, b) => mul(ct(a)?, ct(b)?)?,
            Op::AddScalar(a, c) => ct(a)?.add_plain(&repeat(c, len(a))?)?,
            Op::MulScalar(a, c) => ct(a)?.mul_plain(&constant(c)?)?,
            Op::Dot(a, b) => tree(mul(ct(a)?, ct(b)?)?, len(a))?,
            Op::DotPlain(a, w) if plan.bfv[part].encoding == BfvEncoding::Coefficients => {
                // Weights reversed negacyclically (w_0 at X^0, -w_i at
                // X^(n-i)): coefficient 0 of the one product is sum x_i w_i.
                let n = keys.ctx.n();
                let mut reversed = vec![0i128; n];
                for (i, s) in w.iter().enumerate() {
                    let v = int(s) as i128;
                    if i == 0 {
                        reversed[0] = v;
                    } else {
                        reversed[n - i] = -v;
                    }
                }
                ct(a)?.mul_plain(&bfv_plain(
                    &self.keys.bfv(part)?.ctx,
                    plan.bfv[part].encoding,
                    &reversed,
                )?)?
            }
            Op::DotPlain(a, w) => {
                let w: Vec<i128> = w.iter().map(|s| int(s) as i128).collect();
                tree(
                    ct(a)?.mul_plain(&bfv_plain(
                        &self.keys.bfv(part)?.ctx,
                        plan.bfv[part].encoding,
                        &w,
                    )?)?,
                    len(a),
                )?
            }
            Op::Sum(a) => tree(ct(a)?.clone(), len(a))?,
            Op::Polynomial(a, cs) => {
                let x = ct(a)?;
                let top = cs.last().ok_or_else(|| wrong("polynomial"))?;
                // Horner; degree 0 is x * 0 + c0.
                let lead = if cs.len() == 1 { Scalar::Int(0) } else { *top };
                let mut acc = x.mul_plain(&constant(&lead)?)?;
                for (k, c) in cs.iter().enumerate().rev().skip(usize::from(cs.len() > 1)) {
                    acc = acc.add_plain(&repeat(c, len(a))?)?;
                    if k > 0 {
                        acc = mul(&acc, x)?;
                    }
                }
                acc
            }
            op => return Err(wrong(op.name())),
        };
        Ok(Val::Bfv(out))
    }

    pub(crate) fn release_bfv(
        &self,
        keys: &BfvEval,
        encoding: BfvEncoding,
        c: &BfvCiphertext,
        len: usize,
        dirty: bool,
    ) -> Result<Released> {
        let fresh = c.rerandomize(&keys.pk)?;
        Ok(match encoding {
            BfvEncoding::Slots if !dirty => Released::Slots(fresh),
            BfvEncoding::Slots => {
                let mask: Vec<u64> = (0..keys.ctx.n()).map(|s| u64::from(s < len)).collect();
                let mask = BfvPlaintext::from_slots(&keys.ctx, &mask)?;
                Released::Slots(fresh.mul_plain(&mask)?)
            }
            BfvEncoding::Coefficients => {
                let mut low = fresh;
                while low.level() > 0 {
                    low = low.mod_switch_to_next()?;
                }
                Released::Extracted(low.sample_extract(&(0..len).collect::<Vec<_>>())?)
            }
        })
    }
}

/// A BFV plaintext of `values` (slots 0..len or coefficients 0..len).
pub(crate) fn bfv_plain(
    ctx: &Arc<BfvContext>,
    encoding: BfvEncoding,
    values: &[i128],
) -> Result<BfvPlaintext> {
    let t = ctx.plain_modulus() as i128;
    // Inputs lie in (-t, t) (checked, and the planner's t covers their
    // range): one masked add, no division on them. Only public weights can
    // be larger.
    let reduced = Zeroizing::new(
        values
            .iter()
            .map(|&v| {
                if v.unsigned_abs() < t as u128 {
                    (v + (t & (v >> 127))) as u64
                } else {
                    v.rem_euclid(t) as u64
                }
            })
            .collect::<Vec<u64>>(),
    );
    Ok(match encoding {
        BfvEncoding::Slots => BfvPlaintext::from_slots(ctx, &reduced)?,
        BfvEncoding::Coefficients => BfvPlaintext::from_coeffs(ctx, &reduced)?,
    })
}
