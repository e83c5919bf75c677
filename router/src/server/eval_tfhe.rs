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
        let args = TfheOperands {
            sk: self.keys.tfhe()?,
            get,
            name: node.op.name(),
            // Constants of u8..u64 arithmetic wrap modulo 2^bits.
            bits: match node.kind {
                Kind::Uint { bits, .. } => bits,
                _ => 64,
            },
        };
        match &node.op {
            Op::Compare(..)
            | Op::CompareScalar(..)
            | Op::Select { .. }
            | Op::Any(..)
            | Op::Lookup { .. }
            | Op::Argmax(..) => args.decision(&node.op),
            op => args.arithmetic(op),
        }
    }
}

/// What the TFHE operation of one node reads: the server key, the values
/// computed so far, and the width its constants wrap at.
struct TfheOperands<'a, 'v> {
    sk: &'a ServerKey,
    get: &'a dyn Fn(&u32) -> Result<&'v Val>,
    /// The operation's name, for errors.
    name: &'static str,
    bits: u32,
}

type RadixResult = triskel_tfhe::Result<RadixCiphertext>;

impl<'v> TfheOperands<'_, 'v> {
    fn radix(&self, k: &u32) -> Result<&'v Vec<RadixCiphertext>> {
        match (self.get)(k)? {
            Val::Radix(v) => Ok(v),
            _ => Err(wrong(self.name)),
        }
    }

    /// A constant wrapped modulo 2^bits.
    fn word(&self, c: &Scalar) -> u64 {
        (int(c) as u64) & (u64::MAX >> (64 - self.bits))
    }

    /// `f` on the elements of `a` and `b`, pairwise.
    fn zip(
        &self,
        a: &u32,
        b: &u32,
        f: &dyn Fn(&RadixCiphertext, &RadixCiphertext) -> RadixResult,
    ) -> Result<Vec<RadixCiphertext>> {
        Ok(self
            .radix(a)?
            .iter()
            .zip(self.radix(b)?)
            .map(|(x, y)| f(x, y))
            .collect::<std::result::Result<_, _>>()?)
    }

    /// `f` on each element of `a`.
    fn map(
        &self,
        a: &u32,
        f: &dyn Fn(&RadixCiphertext) -> RadixResult,
    ) -> Result<Vec<RadixCiphertext>> {
        Ok(self
            .radix(a)?
            .iter()
            .map(f)
            .collect::<std::result::Result<_, _>>()?)
    }

    /// The sum of `terms`, as a vector of one.
    fn total(&self, terms: Vec<RadixCiphertext>) -> Result<Vec<RadixCiphertext>> {
        let mut it = terms.into_iter();
        let first = it.next().ok_or_else(|| wrong("sum"))?;
        Ok(vec![it.try_fold(first, |acc, x| self.sk.add(&acc, &x))?])
    }

    /// Additions, products, sums and polynomials of u8..u64 values.
    fn arithmetic(&self, op: &Op) -> Result<Val> {
        let sk = self.sk;
        Ok(Val::Radix(match op {
            Op::Add(a, b) => self.zip(a, b, &|x, y| sk.add(x, y))?,
            Op::Sub(a, b) => self.zip(a, b, &|x, y| sk.sub(x, y))?,
            Op::Mul(a, b) => self.zip(a, b, &|x, y| sk.mul(x, y))?,
            Op::AddScalar(a, c) => self.map(a, &|x| sk.scalar_add(x, self.word(c)))?,
            Op::MulScalar(a, c) => self.map(a, &|x| sk.scalar_mul(x, self.word(c)))?,
            Op::Dot(a, b) => self.total(self.zip(a, b, &|x, y| sk.mul(x, y))?)?,
            Op::DotPlain(a, w) => {
                let terms = self
                    .radix(a)?
                    .iter()
                    .zip(w)
                    .map(|(x, c)| sk.scalar_mul(x, self.word(c)))
                    .collect::<std::result::Result<_, _>>()?;
                self.total(terms)?
            }
            Op::Sum(a) => self.total(self.radix(a)?.clone())?,
            Op::Polynomial(a, cs) => {
                let top = cs.last().ok_or_else(|| wrong("polynomial"))?;
                self.map(a, &|x| {
                    let lead = if cs.len() == 1 { 0 } else { self.word(top) };
                    let mut acc = sk.scalar_mul(x, lead)?;
                    for (k, c) in cs.iter().enumerate().rev().skip(usize::from(cs.len() > 1)) {
                        acc = sk.scalar_add(&acc, self.word(c))?;
                        if k > 0 {
                            acc = sk.mul(&acc, x)?;
                        }
                    }
                    Ok(acc)
                })?
            }
            op => return Err(wrong(op.name())),
        }))
    }

    /// Comparisons, selections, lookups and argmax of u8..u64 values and
    /// bits.
    fn decision(&self, op: &Op) -> Result<Val> {
        let sk = self.sk;
        Ok(match op {
            Op::Compare(a, b, cmp) => Val::Bits(
                self.radix(a)?
                    .iter()
                    .zip(self.radix(b)?)
                    .map(|(x, y)| sk.compare(tfhe_cmp(*cmp), x, y))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Op::CompareScalar(a, c, cmp) => Val::Bits(
                self.radix(a)?
                    .iter()
                    .map(|x| {
                        // The constant as a ciphertext of x's width: x * 0 + c.
                        let k = sk.scalar_add(&sk.scalar_mul(x, 0)?, self.word(c))?;
                        sk.compare(tfhe_cmp(*cmp), x, &k)
                    })
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Op::Select { cond, a, b } => {
                let Val::Bits(conds) = (self.get)(cond)? else {
                    return Err(wrong("select"));
                };
                Val::Radix(
                    conds
                        .iter()
                        .zip(self.radix(a)?.iter().zip(self.radix(b)?))
                        .map(|(c, (x, y))| sk.select(c, x, y))
                        .collect::<std::result::Result<_, _>>()?,
                )
            }
            Op::Any(operands) => {
                let mut bits = Vec::new();
                for a in operands {
                    match (self.get)(a)? {
                        Val::Bits(b) => bits.extend(b.iter().cloned()),
                        _ => return Err(wrong("any")),
                    }
                }
                Val::Bits(vec![crate::transition::any(sk, &bits)?])
            }
            Op::Lookup { x, table } => Val::Radix(
                self.radix(x)?
                    .iter()
                    .map(|v| triskel_tfhe::lookup::lookup_u8(sk, v, table))
                    .collect::<triskel_tfhe::Result<_>>()?,
            ),
            Op::Argmax(a) => Val::Radix(vec![triskel_tfhe::argmax::tournament(
                sk,
                self.radix(a)?.clone(),
                self.bits,
            )?]),
            op => return Err(wrong(op.name())),
        })
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
