//! TFHE operations of the evaluator.

use super::*;

impl Evaluator<'_> {
    pub(crate) fn tfhe_op<'v>(
        &self,
        plan: &Plan,
        i: usize,
        get: &dyn Fn(&u32) -> Result<&'v Val>,
    ) -> Result<Val> {
        let node = &plan.program.nodes[i];
        let sk = self.keys.tfhe()?;
        let radix = |k: &u32| match get(k)? {
            Val::Radix(v) => Ok(v),
            _ => Err(wrong(node.op.name())),
        };
        // Constants of u8..u64 arithmetic wrap modulo 2^bits.
        let bits = match node.kind {
            Kind::Uint { bits, .. } => bits,
            _ => 64,
        };
        let word = |c: &Scalar| (int(c) as u64) & (u64::MAX >> (64 - bits));
        let zip = |a: &u32,
                   b: &u32,
                   f: &dyn Fn(
            &RadixCiphertext,
            &RadixCiphertext,
        ) -> triskel_tfhe::Result<RadixCiphertext>|
         -> Result<Vec<RadixCiphertext>> {
            Ok(radix(a)?
                .iter()
                .zip(radix(b)?)
                .map(|(x, y)| f(x, y))
                .collect::<std::result::Result<_, _>>()?)
        };
        let map = |a: &u32,
                   f: &dyn Fn(&RadixCiphertext) -> triskel_tfhe::Result<RadixCiphertext>|
         -> Result<Vec<RadixCiphertext>> {
            Ok(radix(a)?
                .iter()
                .map(f)
                .collect::<std::result::Result<_, _>>()?)
        };
        let total = |terms: Vec<RadixCiphertext>| -> Result<Vec<RadixCiphertext>> {
            let mut it = terms.into_iter();
            let first = it.next().ok_or_else(|| wrong("sum"))?;
            Ok(vec![it.try_fold(first, |acc, x| sk.add(&acc, &x))?])
        };
        let out = match &node.op {
            Op::Add(a, b) => Val::Radix(zip(a, b, &|x, y| sk.add(x, y))?),
            Op::Sub(a, b) => Val::Radix(zip(a, b, &|x, y| sk.sub(x, y))?),
            Op::Mul(a, b) => Val::Radix(zip(a, b, &|x, y| sk.mul(x, y))?),
            Op::AddScalar(a, c) => Val::Radix(map(a, &|x| sk.scalar_add(x, word(c)))?),
            Op::MulScalar(a, c) => Val::Radix(map(a, &|x| sk.scalar_mul(x, word(c)))?),
            Op::Dot(a, b) => Val::Radix(total(zip(a, b, &|x, y| sk.mul(x, y))?)?),
            Op::DotPlain(a, w) => {
                let terms = radix(a)?
                    .iter()
                    .zip(w)
                    .map(|(x, c)| sk.scalar_mul(x, word(c)))
                    .collect::<std::result::Result<_, _>>()?;
                Val::Radix(total(terms)?)
            }
            Op::Sum(a) => Val::Radix(total(radix(a)?.clone())?),
            Op::Polynomial(a, cs) => {
                let top = cs.last().ok_or_else(|| wrong("polynomial"))?;
                Val::Radix(map(a, &|x| {
                    let lead = if cs.len() == 1 { 0 } else { word(top) };
                    let mut acc = sk.scalar_mul(x, lead)?;
                    for (k, c) in cs.iter().enumerate().rev().skip(usize::from(cs.len() > 1)) {
                        acc = sk.scalar_add(&acc, word(c))?;
                        if k > 0 {
                            acc = sk.mul(&acc, x)?;
                        }
                    }
                    Ok(acc)
                })?)
            }
            Op::Compare(a, b, cmp) => Val::Bits(
                radix(a)?
                    .iter()
                    .zip(radix(b)?)
                    .map(|(x, y)| sk.compare(tfhe_cmp(*cmp), x, y))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Op::CompareScalar(a, c, cmp) => Val::Bits(
                radix(a)?
                    .iter()
                    .map(|x| {
                        // The constant as a ciphertext of x's width: x * 0 + c.
                        let k = sk.scalar_add(&sk.scalar_mul(x, 0)?, word(c))?;
                        sk.compare(tfhe_cmp(*cmp), x, &k)
                    })
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Op::Select { cond, a, b } => {
                let Val::Bits(conds) = get(cond)? else {
                    return Err(wrong("select"));
                };
                Val::Radix(
                    conds
                        .iter()
                        .zip(radix(a)?.iter().zip(radix(b)?))
                        .map(|(c, (x, y))| sk.select(c, x, y))
                        .collect::<std::result::Result<_, _>>()?,
                )
            }
            Op::Any(operands) => {
                let mut bits = Vec::new();
                for a in operands {
                    match get(a)? {
                        Val::Bits(b) => bits.extend(b.iter().cloned()),
                        _ => return Err(wrong("any")),
                    }
                }
                Val::Bits(vec![crate::transition::any(sk, &bits)?])
            }
            Op::Lookup { x, table } => Val::Radix(
                radix(x)?
                    .iter()
                    .map(|v| triskel_tfhe::lookup::lookup_u8(sk, v, table))
                    .collect::<triskel_tfhe::Result<_>>()?,
            ),
            Op::Argmax(a) => Val::Radix(vec![triskel_tfhe::argmax::tournament(
                sk,
                radix(a)?.clone(),
                bits,
            )?]),
            op => return Err(wrong(op.name())),
        };
        Ok(out)
    }
}

fn tfhe_cmp(c: Cmp) -> Comparison {
    match c {
        Cmp::Eq => Comparison::Eq,
        Cmp::Ne => Comparison::Ne,
        Cmp::Lt => Comparison::Lt,
        Cmp::Le => Comparison::Le,
        Cmp::Gt => Comparison::Gt,
        Cmp::Ge => Comparison::Ge,
    }
}
