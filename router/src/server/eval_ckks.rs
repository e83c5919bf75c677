//! CKKS operations of the evaluator, and the release of CKKS values.

use super::*;

impl Evaluator<'_> {
    pub(crate) fn ckks_op<'v>(
        &self,
        plan: &Plan,
        i: usize,
        get: &dyn Fn(&u32) -> Result<&'v Val>,
        transforms: &HashMap<usize, LinearTransform>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
        let keys = self.keys.ckks()?;
        let ct = |k: &u32| match get(k)? {
            Val::Ckks(c, p) => Ok((c, *p)),
            _ => Err(wrong(node.op.name())),
        };
        let rk = || keys.rk.as_ref().ok_or_else(|| wrong("relinearization key"));
        let gk = || keys.gk.as_ref().ok_or_else(|| wrong("galois keys"));
        let len = |k: &u32| plan.program.nodes[*k as usize].kind.len();
        // A product with a plaintext of `values` at scale q_level, rescaled: one level.
        let mul_plain =
            |c: &CkksCiphertext, values: &[f64], period: usize| -> Result<CkksCiphertext> {
                let q = keys.ctx.prime(c.level())? as f64;
                let pt = ckks_plain(&self.keys.ckks()?.ctx, values, period, c.level(), q, None)?;
                Ok(c.mul_plain(&pt)?.rescale()?)
            };
        let sum = |c: CkksCiphertext, period: usize| -> Result<CkksCiphertext> {
            if period == 1 {
                return Ok(c);
            }
            Ok(c.slot_sum(period, gk()?)?)
        };
        let mask = |c: CkksCiphertext, n: usize, period: usize| -> Result<CkksCiphertext> {
            if plan.packing[i].mask_operand {
                return mul_plain(&c, &vec![1.0; n], period);
            }
            Ok(c)
        };
        let period = plan.packing[i].period;
        let coefficients = plan.packing[i].coefficients;
        // A plaintext of `values` in coefficients 0..len at the ciphertext's
        // level and `scale` (bound: the sum of their magnitudes).
        let coefficient_plain =
            |c: &CkksCiphertext, values: &[f64], scale: f64| -> Result<CkksPlaintext> {
                let bound = values.iter().map(|v| v.abs()).sum::<f64>();
                Ok(CkksPlaintext::from_coefficients(
                    &keys.ctx,
                    values,
                    c.level(),
                    scale,
                    bound.max(f64::MIN_POSITIVE),
                )?)
            };
        let out = match &node.op {
            Op::AddScalar(a, c) if coefficients => {
                let x = ct(a)?.0;
                x.add_plain(&coefficient_plain(x, &vec![real(c); len(a)], x.scale())?)?
            }
            Op::DotPlain(a, w) if coefficients => {
                // Weights reversed negacyclically (w_0 at X^0, -w_i at
                // X^(n-i)): coefficient 0 of the product is sum x_i w_i.
                let x = ct(a)?.0;
                let n = keys.ctx.n();
                let mut reversed = vec![0.0; n];
                for (k, s) in w.iter().enumerate() {
                    reversed[(n - k) % n] = if k == 0 { real(s) } else { -real(s) };
                }
                let q = keys.ctx.prime(x.level())? as f64;
                x.mul_plain(&coefficient_plain(x, &reversed, q)?)?
                    .rescale()?
            }
            // The release's 0/1 mask rides on the constant's plaintext.
            Op::MulScalar(a, c) if plan.packing[i].release == ReleaseMask::Folded => {
                let x = ct(a)?.0;
                mul_plain(x, &vec![real(c); len(a)], keys.ctx.slots())?
            }
            Op::Add(a, b) => ct(a)?.0.add(ct(b)?.0)?,
            Op::Sub(a, b) => ct(a)?.0.sub(ct(b)?.0)?,
            Op::Mul(a, b) => ct(a)?.0.mul_relin_rescale(ct(b)?.0, rk()?)?,
            Op::AddScalar(a, c) => {
                let (x, p) = ct(a)?;
                x.add_plain(&ckks_plain(
                    &keys.ctx,
                    &vec![real(c); len(a)],
                    p,
                    x.level(),
                    x.scale(),
                    None,
                )?)?
            }
            Op::MulScalar(a, c) => ct(a)?.0.mul_const_rescale(real(c))?,
            Op::Dot(a, b) => {
                let (x, p) = ct(a)?;
                sum(mask(x.mul_relin_rescale(ct(b)?.0, rk()?)?, len(a), p)?, p)?
            }
            Op::DotPlain(a, w) => {
                let (x, p) = ct(a)?;
                let w: Vec<f64> = w.iter().map(real).collect();
                sum(mul_plain(x, &w, p)?, p)?
            }
            Op::Sum(a) => {
                let (x, p) = ct(a)?;
                sum(mask(x.clone(), len(a), p)?, p)?
            }
            op @ (Op::Polynomial(a, _) | Op::Chebyshev { x: a, .. }) => {
                let poly = ckks_polynomial(op)?.ok_or_else(|| wrong("polynomial"))?;
                poly.evaluate(ct(a)?.0, rk()?)?
            }
            Op::MatVec { x, .. } => {
                let lt = transforms.get(&i).ok_or_else(|| wrong("matvec"))?;
                if lt.output_period() != period {
                    return Err(Error::Internal(format!(
                        "matvec: the transform's output period {} differs from the planned {period}",
                        lt.output_period()
                    )));
                }
                lt.apply(ct(x)?.0, gk()?)?
            }
            op => return Err(wrong(op.name())),
        };
        Ok(Val::Ckks(out, period))
    }

    /// The asked values of CKKS node `i` (the first `len`), as they leave
    /// the server: slots masked as planned ([`ReleaseMask`]) or
    /// coefficients extracted, after a fresh public-key encryption of zero
    /// is added.
    pub(crate) fn release_ckks(
        &self,
        plan: &Plan,
        i: usize,
        c: &CkksCiphertext,
    ) -> Result<Released> {
        let keys = self.keys.ckks()?;
        let len = plan.program.nodes[i].kind.len();
        let masked = match plan.packing[i].release {
            ReleaseMask::Product => {
                let mask = vec![1.0; len];
                let q = keys.ctx.prime(c.level())? as f64;
                let pt = ckks_plain(
                    &self.keys.ckks()?.ctx,
                    &mask,
                    keys.ctx.slots(),
                    c.level(),
                    q,
                    None,
                )?;
                c.mul_plain(&pt)?.rescale()?
            }
            ReleaseMask::Folded | ReleaseMask::None => c.clone(),
        };
        let fresh = masked.rerandomize(&keys.pk)?;
        if plan.packing[i].coefficients {
            let lwes = fresh.sample_extract(&(0..len).collect::<Vec<_>>())?;
            return Ok(Released::CkksExtracted(lwes, fresh.scale()));
        }
        Ok(Released::CkksSlots(fresh))
    }
}

/// A CKKS plaintext of `values` repeated with `period` (zeros in
/// len..period) at `level` and `scale`, under the declared `bound`
/// (`None`: a public operand, bounded by its own largest value).
pub(crate) fn ckks_plain(
    ctx: &Arc<CkksContext>,
    values: &[f64],
    period: usize,
    level: usize,
    scale: f64,
    bound: Option<f64>,
) -> Result<CkksPlaintext> {
    let mut padded = values.to_vec();
    padded.resize(period, 0.0);
    let packed = LinearTransform::pack(&padded, period, ctx.slots());
    let bound =
        bound.unwrap_or_else(|| values.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs())));
    Ok(CkksPlaintext::encode_real(
        ctx, &packed, level, scale, bound,
    )?)
}
