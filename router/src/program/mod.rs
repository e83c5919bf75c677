//! Programs: encrypted inputs by kind and the operations on them, recorded as
//! a DAG (every operation reads only values recorded before it, so a program
//! is acyclic by construction). Shapes and kinds are checked as each
//! operation is recorded; the error names the operation.
//!
//! # Examples
//!
//! ```
//! use triskel::{Kind, Program, Scalar};
//!
//! let mut p = Program::new();
//! let x = p.input("x", Kind::Signed { len: 3, bound: 10 })?;
//! let y = p.mul_scalar(x, Scalar::Int(3))?;
//! p.output("y", y)?;
//! assert_eq!(p.kind(y)?, Kind::Signed { len: 3, bound: 30 }); // bounds grow with the work
//! # Ok::<(), triskel::Error>(())
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

mod kinds;

/// Most values in one vector, and most nodes in one program: bounds that
/// keep a program (and a loaded one) small.
pub const MAX_LEN: usize = 1 << 15;
/// Most nodes in a program.
pub const MAX_NODES: usize = 1 << 16;
/// Highest polynomial degree.
pub const MAX_DEGREE: usize = 63;
/// Largest bound of a signed value: products stay exact in i64 arithmetic
/// and below every BFV plaintext modulus the planner can pick.
pub const MAX_SIGNED_BOUND: u64 = 1 << 40;
/// Largest bound of a signed value read by a lookup table: the table has
/// 2 bound + 1 entries, and each entry past the first costs one decision of
/// the BFV -> TFHE transition.
pub const MAX_LOOKUP_BOUND: u64 = 127;

/// Why reals have no argmax.
const REAL_ARGMAX: &str = "reals are approximate (CKKS values carry an error): an argmax of reals is not built; decide them with threshold_real, which states a tolerance";

/// What an encrypted value holds.
///
/// The kind decides the engine: reals run on CKKS, modular and signed
/// integers on BFV, unsigned integers and bits on TFHE (u8..u32 values
/// touched only by additions and scalars may run on BFV).
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Engine, Kind, Program};
///
/// let k = Kind::Signed { len: 4, bound: 100 };
/// assert_eq!((k.len(), k.describe()), (4, "4 signed integers |v| <= 100".to_string()));
///
/// let mut p = Program::new();
/// let r = p.input("r", Kind::Real { len: 4 })?;
/// let u = p.input("u", Kind::Uint { len: 4, bits: 64 })?;
/// let x = p.input("x", k)?;
/// p.output("r", r)?;
/// p.output("u", u)?;
/// p.output("x", x)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// assert_eq!(plan.choice().engines, [Engine::Ckks, Engine::Tfhe, Engine::Bfv]);
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `len` integers modulo a prime `modulus` (exact, wraps around). The
    /// planner runs a modulus only as the plaintext modulus of a BFV set,
    /// which needs a prime = 1 mod 2N (e.g. 65537 for N up to 32768);
    /// other moduli are refused when planned.
    Modular { len: usize, modulus: u64 },
    /// `len` signed integers, each of absolute value at most `bound` (exact).
    Signed { len: usize, bound: u64 },
    /// `len` real numbers in [-1, 1] (approximate): the CKKS encoding's
    /// declared bound; scale larger data into it.
    Real { len: usize },
    /// `len` unsigned integers of `bits` bits (8, 16, 32 or 64; wraps around).
    Uint { len: usize, bits: u32 },
    /// `len` bits (results of comparisons).
    Bit { len: usize },
}

impl Kind {
    /// Number of values.
    pub fn len(&self) -> usize {
        match *self {
            Kind::Modular { len, .. }
            | Kind::Signed { len, .. }
            | Kind::Real { len }
            | Kind::Uint { len, .. }
            | Kind::Bit { len } => len,
        }
    }

    /// Never true for a value of a program (lengths are at least 1).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn with_len(self, len: usize) -> Kind {
        match self {
            Kind::Modular { modulus, .. } => Kind::Modular { len, modulus },
            Kind::Signed { bound, .. } => Kind::Signed { len, bound },
            Kind::Real { .. } => Kind::Real { len },
            Kind::Uint { bits, .. } => Kind::Uint { len, bits },
            Kind::Bit { .. } => Kind::Bit { len },
        }
    }

    fn same_shape(&self, other: &Kind) -> bool {
        match (self, other) {
            (Kind::Signed { len: a, .. }, Kind::Signed { len: b, .. }) => a == b,
            _ => self == other,
        }
    }

    fn is_integer(&self) -> bool {
        !matches!(self, Kind::Real { .. })
    }

    /// The kind's name in messages.
    pub fn describe(&self) -> String {
        match *self {
            Kind::Modular { len, modulus } => format!("{len} integers mod {modulus}"),
            Kind::Signed { len, bound } => format!("{len} signed integers |v| <= {bound}"),
            Kind::Real { len } => format!("{len} reals in [-1, 1]"),
            Kind::Uint { len, bits } => format!("{len} u{bits}"),
            Kind::Bit { len } => format!("{len} bits"),
        }
    }
}

/// A constant operand: integers for integer kinds, reals for real ones.
///
/// # Examples
///
/// ```
/// use triskel::{Error, Kind, Program, Scalar};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 2, bound: 10 })?;
/// let r = p.input("r", Kind::Real { len: 2 })?;
/// p.add_scalar(x, Scalar::Int(5))?;
/// p.mul_scalar(r, Scalar::Real(0.5))?;
/// // A real constant on integers is refused as it is recorded.
/// let refused = p.add_scalar(x, Scalar::Real(0.5));
/// assert!(matches!(refused, Err(Error::Program { op, .. }) if op == "add_scalar"));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// An integer (for `Uint`, taken modulo 2^bits).
    Int(i64),
    /// A finite real.
    Real(f64),
}

/// Comparisons.
///
/// # Examples
///
/// ```
/// use triskel::{plan, Cmp, CostModel, Kind, Placement, Program, Scalar};
///
/// assert!(Cmp::Gt.eval(3, 2) && !Cmp::Eq.eval(3, 2));
///
/// // A comparison of BFV values runs by the BFV -> TFHE transition.
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
/// let big = p.compare_scalar(x, Cmp::Gt, Scalar::Int(50))?;
/// p.output("big", big)?;
/// let plan = plan(&p, &CostModel::builtin())?;
/// assert!(matches!(plan.placements()[big.index()], Placement::BfvToTfhe(_)));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    /// The comparison on plain integers.
    pub fn eval(self, a: i128, b: i128) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
}

/// A handle to a value of one program (typed by its [`Kind`]).
///
/// # Examples
///
/// ```
/// use triskel::{Error, Kind, Program};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Real { len: 2 })?;
/// let y = p.add(x, x)?;
/// assert_eq!((x.index(), y.index()), (0, 1));
///
/// // A value of one program is refused by another.
/// let mut other = Program::new();
/// assert!(matches!(other.output("y", y), Err(Error::Program { .. })));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    pub(crate) program: u64,
    pub(crate) id: u32,
}

impl Value {
    /// The value's index in its program.
    pub fn index(&self) -> usize {
        self.id as usize
    }
}

/// One recorded operation. Operands are indices of earlier nodes.
///
/// # Examples
///
/// ```
/// use triskel::{Kind, Op, Program, Scalar};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 2, bound: 10 })?;
/// let y = p.add_scalar(x, Scalar::Int(1))?;
/// let z = p.mul(x, y)?;
/// let op = &p.nodes()[z.index()].op;
/// assert_eq!(*op, Op::Mul(0, 1));
/// assert_eq!((op.name(), op.operands()), ("mul", vec![0, 1]));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// An encrypted input supplied at run time under `name`.
    Input {
        name: String,
        kind: Kind,
    },
    Add(u32, u32),
    Sub(u32, u32),
    /// Element-wise product.
    Mul(u32, u32),
    AddScalar(u32, Scalar),
    MulScalar(u32, Scalar),
    /// Inner product of two encrypted vectors.
    Dot(u32, u32),
    /// Inner product with plaintext weights.
    DotPlain(u32, Vec<Scalar>),
    /// Sum of all values of a vector.
    Sum(u32),
    /// sum_i coeffs_i x^i, element-wise.
    Polynomial(u32, Vec<Scalar>),
    /// sum_i coeffs_i T_i((2x - lo - hi) / (hi - lo)), element-wise (reals).
    Chebyshev {
        x: u32,
        coeffs: Vec<f64>,
        lo: f64,
        hi: f64,
    },
    /// Matrix (rows of plaintext reals) times an encrypted real vector.
    MatVec {
        x: u32,
        rows: Vec<Vec<f64>>,
    },
    /// Element-wise comparison of two encrypted vectors.
    Compare(u32, u32, Cmp),
    /// Element-wise comparison with a constant (a threshold is `Ge`).
    CompareScalar(u32, Scalar, Cmp),
    /// Element-wise `x >= threshold` on signed integers, where values within
    /// 2^`tolerance_bits` of the threshold may be decided either way (a
    /// cheaper decision: fewer bits read through the transition).
    ThresholdWithin {
        x: u32,
        threshold: i64,
        tolerance_bits: u32,
    },
    /// Element-wise `x >= threshold` on reals, decided right whenever
    /// |x - threshold| > `tolerance`; closer values may get either bit
    /// (CKKS values are approximate: a real decision states its tolerance).
    ThresholdReal {
        x: u32,
        threshold: f64,
        tolerance: f64,
    },
    /// Element-wise `if cond then a else b`.
    Select {
        cond: u32,
        a: u32,
        b: u32,
    },
    /// Index of the largest value (the first one on ties) of u8..u64 values.
    Argmax(u32),
    /// Index of the largest of signed values (BFV; the values of `xs`
    /// concatenated), as a u8 (up to 256 values) or u16: a value within
    /// 2^`tolerance_bits` of the largest may win (a cheaper reading: fewer
    /// bits read through the transition); with 0 the first largest wins.
    ArgmaxSigned {
        xs: Vec<u32>,
        tolerance_bits: u32,
    },
    /// One bit: is any bit of the operands (bit vectors) 1?
    Any(Vec<u32>),
    /// Element-wise `table[x]` as u8: for u8 values the table has 256
    /// entries; for signed values of bound B it has 2 B + 1, entry `x + B`
    /// for x (B at most [`MAX_LOOKUP_BOUND`]).
    Lookup {
        x: u32,
        table: Vec<u8>,
    },
    /// u8..u32 values or bits as signed integers (BFV).
    ToSigned(u32),
    /// Integers or bits times `scale` as reals (CKKS); |values| * scale <= 1.
    ToReal {
        x: u32,
        scale: f64,
    },
}

impl Op {
    /// The operation's name in plans and errors.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Input { .. } => "input",
            Op::Add(..) => "add",
            Op::Sub(..) => "sub",
            Op::Mul(..) => "mul",
            Op::AddScalar(..) => "add_scalar",
            Op::MulScalar(..) => "mul_scalar",
            Op::Dot(..) => "dot",
            Op::DotPlain(..) => "dot_plain",
            Op::Sum(..) => "sum",
            Op::Polynomial(..) => "polynomial",
            Op::Chebyshev { .. } => "chebyshev",
            Op::MatVec { .. } => "matvec",
            Op::Compare(..) => "compare",
            Op::CompareScalar(..) => "compare_scalar",
            Op::ThresholdWithin { .. } => "threshold_within",
            Op::ThresholdReal { .. } => "threshold_real",
            Op::Select { .. } => "select",
            Op::Argmax(..) | Op::ArgmaxSigned { .. } => "argmax",
            Op::Any(..) => "any",
            Op::Lookup { .. } => "lookup",
            Op::ToSigned(..) => "to_signed",
            Op::ToReal { .. } => "to_real",
        }
    }

    /// The encrypted operands.
    pub fn operands(&self) -> Vec<u32> {
        match *self {
            Op::Input { .. } => vec![],
            Op::Add(a, b)
            | Op::Sub(a, b)
            | Op::Mul(a, b)
            | Op::Dot(a, b)
            | Op::Compare(a, b, _) => {
                vec![a, b]
            }
            Op::AddScalar(a, _)
            | Op::MulScalar(a, _)
            | Op::DotPlain(a, _)
            | Op::Sum(a)
            | Op::Argmax(a)
            | Op::ToSigned(a)
            | Op::Polynomial(a, _)
            | Op::CompareScalar(a, _, _) => vec![a],
            Op::Chebyshev { x, .. }
            | Op::MatVec { x, .. }
            | Op::ThresholdWithin { x, .. }
            | Op::ThresholdReal { x, .. }
            | Op::Lookup { x, .. }
            | Op::ToReal { x, .. } => vec![x],
            Op::Select { cond, a, b } => vec![cond, a, b],
            Op::Any(ref bits) | Op::ArgmaxSigned { xs: ref bits, .. } => bits.clone(),
        }
    }
}

/// A node: the operation and the kind of the value it produces.
///
/// # Examples
///
/// ```
/// use triskel::{Kind, Node, Op, Program};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Real { len: 4 })?;
/// p.sum(x)?;
/// let node: &Node = &p.nodes()[1];
/// assert_eq!(node.op, Op::Sum(0));
/// assert_eq!(node.kind, Kind::Real { len: 1 });
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub op: Op,
    pub kind: Kind,
}

/// A program under construction or loaded: nodes in order and named outputs.
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Error, Kind, Program, Scalar};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
/// let s = p.dot_plain(x, &[1, -2, 3, 4].map(Scalar::Int))?;
/// p.output("s", s)?;
/// assert_eq!(p.outputs().collect::<Vec<_>>(), [("s", 1)]);
///
/// // Versioned bytes: a loaded program re-encodes to the same bytes.
/// let loaded = Program::from_bytes(&p.to_bytes())?;
/// assert_eq!(loaded.to_bytes(), p.to_bytes());
/// assert!(matches!(Program::from_bytes(b"not a program"), Err(Error::Format(_))));
///
/// // A program with no outputs is refused by the planner.
/// let empty = Program::new();
/// assert!(matches!(plan(&empty, &CostModel::builtin()), Err(Error::Refused { .. })));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub(crate) tag: u64,
    pub(crate) nodes: Vec<Node>,
    pub(crate) outputs: Vec<(String, u32)>,
}

impl Default for Program {
    fn default() -> Self {
        Program::new()
    }
}

static NEXT_TAG: AtomicU64 = AtomicU64::new(1);

fn op_err<T>(op: &str, msg: impl Into<String>) -> Result<T> {
    Err(Error::Program {
        op: op.to_string(),
        msg: msg.into(),
    })
}

fn check_name(op: &str, name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 64 || !name.bytes().all(|b| b.is_ascii_graphic()) {
        return op_err(
            op,
            format!("name {name:?}: 1..=64 printable ASCII characters"),
        );
    }
    Ok(())
}

/// Applies `f` to a signed bound, refusing results above [`MAX_SIGNED_BOUND`].
fn grow(op: &str, f: impl FnOnce() -> Option<u64>) -> Result<u64> {
    match f() {
        Some(b) if b <= MAX_SIGNED_BOUND => Ok(b),
        _ => op_err(
            op,
            "the result's bound exceeds 2^40 (declare inputs with smaller bounds)",
        ),
    }
}

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

    fn kind_of(&self, id: u32) -> Kind {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn err_op(r: Result<Value>) -> String {
        match r {
            Err(Error::Program { op, .. }) => op,
            other => panic!("expected a program error, got {other:?}"),
        }
    }

    #[test]
    fn kinds_flow_through_operations() {
        let mut p = Program::new();
        let x = p.input("x", Kind::Signed { len: 4, bound: 10 }).unwrap();
        let y = p.input("y", Kind::Signed { len: 4, bound: 3 }).unwrap();
        let s = p.add(x, y).unwrap();
        assert_eq!(p.kind(s).unwrap(), Kind::Signed { len: 4, bound: 13 });
        let m = p.mul(x, y).unwrap();
        assert_eq!(p.kind(m).unwrap(), Kind::Signed { len: 4, bound: 30 });
        let d = p.dot(x, y).unwrap();
        assert_eq!(p.kind(d).unwrap(), Kind::Signed { len: 1, bound: 120 });
        let poly = p
            .polynomial(x, &[Scalar::Int(7), Scalar::Int(5), Scalar::Int(-2)])
            .unwrap();
        assert_eq!(
            p.kind(poly).unwrap(),
            Kind::Signed {
                len: 4,
                bound: 7 + 50 + 200
            }
        );
        let t = p.threshold(d, Scalar::Int(5)).unwrap();
        assert_eq!(p.kind(t).unwrap(), Kind::Bit { len: 1 });
        let u = p.input("u", Kind::Uint { len: 3, bits: 8 }).unwrap();
        let g = p.compare(u, Cmp::Gt, u).unwrap();
        let any = p.any(&[t, g]).unwrap();
        assert_eq!(p.kind(any).unwrap(), Kind::Bit { len: 1 });
        assert_eq!(err_op(p.any(&[t, d])), "any");
        assert_eq!(err_op(p.any(&[])), "any");
        let r = p.input("r", Kind::Real { len: 8 }).unwrap();
        let h = p.matvec(&vec![vec![0.5; 8]; 3], r).unwrap();
        assert_eq!(p.kind(h).unwrap(), Kind::Real { len: 3 });
    }

    #[test]
    fn shape_and_kind_errors_name_the_operation() {
        let mut p = Program::new();
        let x = p.input("x", Kind::Real { len: 4 }).unwrap();
        let y = p.input("y", Kind::Real { len: 5 }).unwrap();
        let u = p.input("u", Kind::Uint { len: 4, bits: 8 }).unwrap();
        assert_eq!(err_op(p.add(x, y)), "add");
        assert_eq!(err_op(p.mul(x, u)), "mul");
        assert_eq!(err_op(p.add_scalar(u, Scalar::Real(0.5))), "add_scalar");
        assert_eq!(
            err_op(p.compare_scalar(x, Cmp::Gt, Scalar::Real(0.0))),
            "compare_scalar"
        );
        assert_eq!(err_op(p.matvec(&[vec![1.0; 3]], x)), "matvec");
        assert_eq!(err_op(p.matvec(&[vec![1.0; 4]], u)), "matvec");
        assert_eq!(err_op(p.dot_plain(x, &[Scalar::Real(1.0)])), "dot_plain");
        assert_eq!(err_op(p.select(u, u, u)), "select");
        assert_eq!(
            err_op(p.compare_scalar(u, Cmp::Lt, Scalar::Int(256))),
            "compare_scalar"
        );
        assert_eq!(
            err_op(p.compare_scalar(u, Cmp::Lt, Scalar::Int(-1))),
            "compare_scalar"
        );
        assert_eq!(err_op(p.input("x", Kind::Real { len: 1 })), "input");
        assert_eq!(
            err_op(p.input("z", Kind::Uint { len: 1, bits: 7 })),
            "input"
        );
        let big = p
            .input(
                "b",
                Kind::Signed {
                    len: 2,
                    bound: 1 << 30,
                },
            )
            .unwrap();
        assert_eq!(err_op(p.mul(big, big)), "mul");
        let mut other = Program::new();
        assert_eq!(err_op(other.sum(x)), "sum");
    }
}
