//! The builder of a program: one method per operation, each checking its
//! operands and recording the node with the kind of its result.

use std::sync::atomic::{AtomicU64, Ordering};

use super::*;

static NEXT_TAG: AtomicU64 = AtomicU64::new(1);

impl Program {
    /// An empty program.
    pub fn new() -> Program {
        Program {
            tag: NEXT_TAG.fetch_add(1, Ordering::Relaxed),
            nodes: Vec::new(),
            outputs: Vec::new(),
        }
    }

    /// The nodes in order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The named outputs (name, node index).
    pub fn outputs(&self) -> impl Iterator<Item = (&str, usize)> {
        self.outputs.iter().map(|(n, i)| (n.as_str(), *i as usize))
    }

    /// The kind of a value.
    pub fn kind(&self, v: Value) -> Result<Kind> {
        Ok(self.nodes[self.check(v, "kind")? as usize].kind)
    }

    fn check(&self, v: Value, op: &str) -> Result<u32> {
        if v.program != self.tag || v.id as usize >= self.nodes.len() {
            return op_err(op, "the value belongs to another program");
        }
        Ok(v.id)
    }

    pub(super) fn kind_of(&self, id: u32) -> Kind {
        self.nodes[id as usize].kind
    }

    fn push(&mut self, op: Op, kind: Kind) -> Result<Value> {
        if self.nodes.len() >= MAX_NODES {
            return op_err(
                op.name(),
                format!("a program has at most {MAX_NODES} nodes"),
            );
        }
        self.nodes.push(Node { op, kind });
        Ok(Value {
            program: self.tag,
            id: self.nodes.len() as u32 - 1,
        })
    }

    /// Records `op` after checking it against the earlier nodes; used by the
    /// builder methods and by the loader, so both check the same rules.
    pub(crate) fn record(&mut self, op: Op) -> Result<Value> {
        let name = op.name();
        for id in op.operands() {
            if id as usize >= self.nodes.len() {
                return op_err(name, format!("operand {id} is not an earlier value"));
            }
        }
        let kind = self.result_kind(&op)?;
        self.push(op, kind)
    }

    /// Declares an encrypted input named `name` of kind `kind`.
    pub fn input(&mut self, name: &str, kind: Kind) -> Result<Value> {
        self.record(Op::Input {
            name: name.to_string(),
            kind,
        })
    }

    /// Marks `v` as an output under `name`: it is decrypted for the key holder.
    pub fn output(&mut self, name: &str, v: Value) -> Result<()> {
        let id = self.check(v, "output")?;
        check_name("output", name)?;
        if self.outputs.iter().any(|(n, _)| n == name) {
            return op_err("output", format!("output {name:?} is declared twice"));
        }
        self.outputs.push((name.to_string(), id));
        Ok(())
    }

    fn unary(&mut self, name: &str, a: Value, f: impl FnOnce(u32) -> Op) -> Result<Value> {
        let a = self.check(a, name)?;
        self.record(f(a))
    }

    fn binary(
        &mut self,
        name: &str,
        a: Value,
        b: Value,
        f: impl FnOnce(u32, u32) -> Op,
    ) -> Result<Value> {
        let (a, b) = (self.check(a, name)?, self.check(b, name)?);
        self.record(f(a, b))
    }

    pub fn add(&mut self, a: Value, b: Value) -> Result<Value> {
        self.binary("add", a, b, Op::Add)
    }

    pub fn sub(&mut self, a: Value, b: Value) -> Result<Value> {
        self.binary("sub", a, b, Op::Sub)
    }

    /// Element-wise product.
    pub fn mul(&mut self, a: Value, b: Value) -> Result<Value> {
        self.binary("mul", a, b, Op::Mul)
    }

    pub fn add_scalar(&mut self, a: Value, c: Scalar) -> Result<Value> {
        self.unary("add_scalar", a, |a| Op::AddScalar(a, c))
    }

    pub fn mul_scalar(&mut self, a: Value, c: Scalar) -> Result<Value> {
        self.unary("mul_scalar", a, |a| Op::MulScalar(a, c))
    }

    /// Inner product of two encrypted vectors.
    pub fn dot(&mut self, a: Value, b: Value) -> Result<Value> {
        self.binary("dot", a, b, Op::Dot)
    }

    /// Inner product with plaintext weights.
    pub fn dot_plain(&mut self, a: Value, weights: &[Scalar]) -> Result<Value> {
        self.unary("dot_plain", a, |a| Op::DotPlain(a, weights.to_vec()))
    }

    /// Sum of a vector's values.
    pub fn sum(&mut self, a: Value) -> Result<Value> {
        self.unary("sum", a, Op::Sum)
    }

    /// sum_i coeffs_i x^i element-wise.
    pub fn polynomial(&mut self, a: Value, coeffs: &[Scalar]) -> Result<Value> {
        self.unary("polynomial", a, |a| Op::Polynomial(a, coeffs.to_vec()))
    }

    /// A Chebyshev series on [lo, hi] element-wise (activations on reals).
    pub fn chebyshev(&mut self, a: Value, coeffs: &[f64], lo: f64, hi: f64) -> Result<Value> {
        self.unary("chebyshev", a, |x| Op::Chebyshev {
            x,
            coeffs: coeffs.to_vec(),
            lo,
            hi,
        })
    }

    /// `rows` (plaintext) times the encrypted real vector `a`.
    pub fn matvec(&mut self, rows: &[Vec<f64>], a: Value) -> Result<Value> {
        self.unary("matvec", a, |x| Op::MatVec {
            x,
            rows: rows.to_vec(),
        })
    }

    /// Element-wise comparison: bits.
    pub fn compare(&mut self, a: Value, cmp: Cmp, b: Value) -> Result<Value> {
        self.binary("compare", a, b, |a, b| Op::Compare(a, b, cmp))
    }

    /// Element-wise comparison with a constant: bits.
    pub fn compare_scalar(&mut self, a: Value, cmp: Cmp, c: Scalar) -> Result<Value> {
        self.unary("compare_scalar", a, |a| Op::CompareScalar(a, c, cmp))
    }

    /// Element-wise `a >= threshold`.
    pub fn threshold(&mut self, a: Value, threshold: Scalar) -> Result<Value> {
        self.compare_scalar(a, Cmp::Ge, threshold)
    }

    /// Element-wise `a >= threshold` on signed integers, decided only to
    /// within 2^`tolerance_bits`: a value more than that from the threshold
    /// gets the exact answer, one closer may get either. Each 4 bits of
    /// tolerance save one bootstrap per value of the BFV -> TFHE decision.
    pub fn threshold_within(
        &mut self,
        a: Value,
        threshold: i64,
        tolerance_bits: u32,
    ) -> Result<Value> {
        self.unary("threshold_within", a, |x| Op::ThresholdWithin {
            x,
            threshold,
            tolerance_bits,
        })
    }

    /// Element-wise `a >= threshold` on reals, decided right whenever
    /// |a - threshold| > `tolerance` ([`Op::ThresholdReal`]). The planner
    /// refuses a tolerance finer than the CKKS -> TFHE path reads.
    pub fn threshold_real(&mut self, a: Value, threshold: f64, tolerance: f64) -> Result<Value> {
        self.unary("threshold_real", a, |x| Op::ThresholdReal {
            x,
            threshold,
            tolerance,
        })
    }

    /// The index of the largest value (the first on ties): of u8..u64
    /// values as a value of the vector's width, of signed integers as
    /// [`argmax_within`](Self::argmax_within) with no tolerance.
    pub fn argmax(&mut self, a: Value) -> Result<Value> {
        let id = self.check(a, "argmax")?;
        match self.kind_of(id) {
            Kind::Signed { .. } => self.argmax_within(&[a], 0),
            _ => self.record(Op::Argmax(id)),
        }
    }

    /// The index, as a u8 (up to 256 values) or u16, of a largest of the
    /// signed values of `values` (concatenated, e.g. the scores of a
    /// match), where values within 2^`tolerance_bits` of the largest may
    /// win; with 0 the first largest wins. Each bit of tolerance saves one
    /// bootstrap per value of the BFV -> TFHE reading
    /// ([`crate::transition::bfv_value_bits`]).
    pub fn argmax_within(&mut self, values: &[Value], tolerance_bits: u32) -> Result<Value> {
        let xs = values
            .iter()
            .map(|&v| self.check(v, "argmax"))
            .collect::<Result<Vec<u32>>>()?;
        self.record(Op::ArgmaxSigned { xs, tolerance_bits })
    }

    /// One bit: 1 when any bit of `bits` is 1 (e.g. "does any template
    /// match?" over per-template threshold decisions).
    pub fn any(&mut self, bits: &[Value]) -> Result<Value> {
        let ids = bits
            .iter()
            .map(|&b| self.check(b, "any"))
            .collect::<Result<Vec<u32>>>()?;
        self.record(Op::Any(ids))
    }

    /// Element-wise `table[x]` as u8 ([`Op::Lookup`]): any function of a u8,
    /// or of a small signed integer computed in BFV.
    pub fn lookup(&mut self, a: Value, table: &[u8]) -> Result<Value> {
        self.unary("lookup", a, |x| Op::Lookup {
            x,
            table: table.to_vec(),
        })
    }

    /// u8..u32 values or bits as signed integers, for BFV arithmetic (a
    /// key-holder round trip: no homomorphic path leads from TFHE to BFV).
    pub fn to_signed(&mut self, a: Value) -> Result<Value> {
        self.unary("to_signed", a, Op::ToSigned)
    }

    /// Integer values or bits times `scale` as reals, for CKKS arithmetic
    /// (a key-holder round trip: no homomorphic path leads there).
    pub fn to_real(&mut self, a: Value, scale: f64) -> Result<Value> {
        self.unary("to_real", a, |x| Op::ToReal { x, scale })
    }

    /// Element-wise `if cond then a else b`.
    pub fn select(&mut self, cond: Value, a: Value, b: Value) -> Result<Value> {
        let c = self.check(cond, "select")?;
        self.binary("select", a, b, |a, b| Op::Select { cond: c, a, b })
    }
}
