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

use crate::error::{Error, Result};

mod builder;
mod kinds;
#[cfg(test)]
mod tests;

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
