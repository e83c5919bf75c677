//! The kind rules: the kind of each operation's result from its
//! operands', and every refusal of operands an operation cannot take.

use super::*;

impl Program {
    pub(crate) fn result_kind(&self, op: &Op) -> Result<Kind> {
        match op {
            Op::Input { .. } => self.input_kind(op),
            Op::Add(..)
            | Op::Sub(..)
            | Op::Mul(..)
            | Op::AddScalar(..)
            | Op::MulScalar(..)
            | Op::Dot(..)
            | Op::DotPlain(..)
            | Op::Sum(..) => self.arithmetic_kind(op),
            Op::Polynomial(..) | Op::Chebyshev { .. } | Op::MatVec { .. } => {
                self.polynomial_kind(op)
            }
            Op::ToSigned(..) | Op::ToReal { .. } => self.conversion_kind(op),
            _ => self.decision_kind(op),
        }
    }

    /// The kind of an input: a fresh name and a length and range the engines hold.
    pub(crate) fn input_kind(&self, op: &Op) -> Result<Kind> {
        let name = op.name();
        match op {
            Op::Input { name: n, kind } => {
                check_name(name, n)?;
                if self
                    .nodes
                    .iter()
                    .any(|nd| matches!(&nd.op, Op::Input { name: m, .. } if m == n))
                {
                    return op_err(name, format!("input {n:?} is declared twice"));
                }
                let len = kind.len();
                if !(1..=MAX_LEN).contains(&len) {
                    return op_err(name, format!("length {len} is outside 1..={MAX_LEN}"));
                }
                match *kind {
                    Kind::Modular { modulus, .. } if !(2..1 << 40).contains(&modulus) => {
                        op_err(name, format!("modulus {modulus} is outside 2..2^40"))
                    }
                    Kind::Signed { bound, .. } if bound == 0 || bound > MAX_SIGNED_BOUND => {
                        op_err(name, format!("bound {bound} is outside 1..=2^40"))
                    }
                    Kind::Uint { bits, .. } if !matches!(bits, 8 | 16 | 32 | 64) => {
                        op_err(name, format!("{bits}-bit integers: 8, 16, 32 or 64 bits"))
                    }
                    k => Ok(k),
                }
            }
            _ => op_err(name, "not an operation of this rule (a router bug)"),
        }
    }

    /// The kinds of arithmetic: additions, products, scalar operations, inner
    /// products and sums.
    pub(crate) fn arithmetic_kind(&self, op: &Op) -> Result<Kind> {
        let name = op.name();
        let c = Checks {
            program: self,
            name,
        };
        match op {
            &Op::Add(a, b) | &Op::Sub(a, b) => {
                let (ka, kb) = c.same(a, b)?;
                match (c.not_bit(ka)?, kb) {
                    (Kind::Signed { len, bound: x }, Kind::Signed { bound: y, .. }) => {
                        Ok(Kind::Signed {
                            len,
                            bound: grow(name, || x.checked_add(y))?,
                        })
                    }
                    (k, _) => Ok(k),
                }
            }
            &Op::Mul(a, b) => {
                let (ka, kb) = c.same(a, b)?;
                match (c.not_bit(ka)?, kb) {
                    (Kind::Signed { len, bound: x }, Kind::Signed { bound: y, .. }) => {
                        Ok(Kind::Signed {
                            len,
                            bound: grow(name, || x.checked_mul(y))?,
                        })
                    }
                    (k, _) => Ok(k),
                }
            }
            &Op::AddScalar(a, s) | &Op::MulScalar(a, s) => {
                let k = c.not_bit(self.kind_of(a))?;
                c.scalar_fits(k, s)?;
                match k {
                    Kind::Signed { len, bound } => {
                        let c = magnitude(s);
                        let b = if matches!(op, Op::AddScalar(..)) {
                            grow(name, || bound.checked_add(c))?
                        } else {
                            grow(name, || bound.checked_mul(c))?.max(1)
                        };
                        Ok(Kind::Signed { len, bound: b })
                    }
                    k => Ok(k),
                }
            }
            &Op::Dot(a, b) => {
                let (ka, kb) = c.same(a, b)?;
                match (c.not_bit(ka)?, kb) {
                    (Kind::Signed { len, bound: x }, Kind::Signed { bound: y, .. }) => {
                        let b = grow(name, || x.checked_mul(y)?.checked_mul(len as u64))?;
                        Ok(Kind::Signed { len: 1, bound: b })
                    }
                    (k, _) => Ok(k.with_len(1)),
                }
            }
            Op::DotPlain(a, w) => {
                let k = c.not_bit(self.kind_of(*a))?;
                if w.len() != k.len() {
                    return op_err(name, format!("{} weights for {}", w.len(), k.describe()));
                }
                for &s in w {
                    c.scalar_fits(k, s)?;
                }
                match k {
                    Kind::Signed { bound, .. } => {
                        let b = grow(name, || {
                            w.iter().try_fold(0u64, |acc, &s| {
                                acc.checked_add(bound.checked_mul(magnitude(s))?)
                            })
                        })?;
                        Ok(Kind::Signed {
                            len: 1,
                            bound: b.max(1),
                        })
                    }
                    k => Ok(k.with_len(1)),
                }
            }
            &Op::Sum(a) => match c.not_bit(self.kind_of(a))? {
                Kind::Signed { len, bound } => Ok(Kind::Signed {
                    len: 1,
                    bound: grow(name, || bound.checked_mul(len as u64))?,
                }),
                k => Ok(k.with_len(1)),
            },
            _ => op_err(name, "not an operation of this rule (a router bug)"),
        }
    }

    /// The kinds of polynomials on reals and of matrix-vector products.
    pub(crate) fn polynomial_kind(&self, op: &Op) -> Result<Kind> {
        let name = op.name();
        let c = Checks {
            program: self,
            name,
        };
        match op {
            Op::Polynomial(a, coeffs) => {
                let k = c.not_bit(self.kind_of(*a))?;
                if coeffs.is_empty() || coeffs.len() > MAX_DEGREE + 1 {
                    return op_err(
                        name,
                        format!("{} coefficients: degree 0..={MAX_DEGREE}", coeffs.len()),
                    );
                }
                for &s in coeffs {
                    c.scalar_fits(k, s)?;
                }
                match k {
                    Kind::Signed { len, bound } => {
                        // sum |c_i| bound^i, by Horner on the bounds.
                        let b = grow(name, || {
                            coeffs.iter().rev().try_fold(0u64, |acc, &c| {
                                acc.checked_mul(bound)?.checked_add(magnitude(c))
                            })
                        })?;
                        Ok(Kind::Signed {
                            len,
                            bound: b.max(1),
                        })
                    }
                    k => Ok(k),
                }
            }
            Op::Chebyshev { x, coeffs, lo, hi } => {
                let k = self.kind_of(*x);
                if !matches!(k, Kind::Real { .. }) {
                    return op_err(name, format!("needs reals, not {}", k.describe()));
                }
                if coeffs.is_empty()
                    || coeffs.len() > MAX_DEGREE + 1
                    || !(lo.is_finite() && hi.is_finite() && lo < hi)
                    || coeffs.iter().any(|c| !c.is_finite())
                {
                    return op_err(
                        name,
                        "1..=64 finite coefficients on a finite interval lo < hi",
                    );
                }
                Ok(k)
            }
            Op::MatVec { x, rows } => {
                let k = self.kind_of(*x);
                if !matches!(k, Kind::Real { .. }) {
                    return op_err(
                        name,
                        format!(
                            "needs reals, not {} (integer matrix products are not built)",
                            k.describe()
                        ),
                    );
                }
                if rows.is_empty() || rows.len() > MAX_LEN {
                    return op_err(name, format!("{} rows: 1..={MAX_LEN}", rows.len()));
                }
                if rows.iter().any(|r| r.len() != k.len()) {
                    return op_err(name, format!("every row needs {} columns", k.len()));
                }
                if rows.iter().flatten().any(|v| !v.is_finite()) {
                    return op_err(name, "matrix entries must be finite");
                }
                Ok(Kind::Real { len: rows.len() })
            }
            _ => op_err(name, "not an operation of this rule (a router bug)"),
        }
    }

    /// The kinds of comparisons and thresholds.
    pub(crate) fn decision_kind(&self, op: &Op) -> Result<Kind> {
        let name = op.name();
        let c = Checks {
            program: self,
            name,
        };
        match *op {
            Op::Compare(a, b, _) => {
                let (ka, _) = c.same(a, b)?;
                match ka {
                    Kind::Uint { len, .. } | Kind::Signed { len, .. } => Ok(Kind::Bit { len }),
                    k => op_err(
                        name,
                        format!("compares u8..u64 or signed integers, not {}", k.describe()),
                    ),
                }
            }
            Op::CompareScalar(a, s, _) => match self.kind_of(a) {
                k @ (Kind::Uint { len, .. } | Kind::Signed { len, .. }) => {
                    c.scalar_fits(k, s)?;
                    // Unsigned comparisons take constants of the values' width
                    // (a wrapped constant would change the comparison's meaning).
                    if let (Kind::Uint { bits, .. }, Scalar::Int(c)) = (k, s) {
                        if c < 0 || (bits < 64 && c >= 1i64 << bits) {
                            return op_err(name, format!("constant {c} is outside u{bits}"));
                        }
                    }
                    Ok(Kind::Bit { len })
                }
                Kind::Real { .. } => op_err(
                    name,
                    "reals are approximate: decide them with threshold_real, which states a tolerance",
                ),
                k => op_err(
                    name,
                    format!("compares u8..u64 or signed integers, not {}", k.describe()),
                ),
            },
            Op::ThresholdReal {
                x,
                threshold,
                tolerance,
            } => match self.kind_of(x) {
                Kind::Real { len } => {
                    if !(threshold.is_finite() && threshold.abs() <= MAX_SIGNED_BOUND as f64) {
                        return op_err(name, format!("threshold {threshold} outside +-2^40"));
                    }
                    if !(tolerance.is_finite() && tolerance > 0.0) {
                        return op_err(name, format!("tolerance {tolerance}: a positive real"));
                    }
                    Ok(Kind::Bit { len })
                }
                k => op_err(name, format!("decides on reals, not {}", k.describe())),
            },
            Op::ThresholdWithin {
                x,
                threshold,
                tolerance_bits,
            } => match self.kind_of(x) {
                Kind::Signed { len, .. } => {
                    if tolerance_bits > 40 {
                        return op_err(name, format!("tolerance 2^{tolerance_bits} above 2^40"));
                    }
                    if threshold.unsigned_abs() > MAX_SIGNED_BOUND {
                        return op_err(name, format!("threshold {threshold} outside +-2^40"));
                    }
                    Ok(Kind::Bit { len })
                }
                k => op_err(
                    name,
                    format!("decides on signed integers, not {}", k.describe()),
                ),
            },
            _ => self.selection_kind(op),
        }
    }

    /// The kinds of selections, argmaxes, any and lookups.
    pub(crate) fn selection_kind(&self, op: &Op) -> Result<Kind> {
        let name = op.name();
        let c = Checks {
            program: self,
            name,
        };
        match op {
            &Op::Select { cond, a, b } => {
                let (ka, _) = c.same(a, b)?;
                let kc = self.kind_of(cond);
                if kc != (Kind::Bit { len: ka.len() }) {
                    return op_err(
                        name,
                        format!(
                            "the condition must be {} bits, not {}",
                            ka.len(),
                            kc.describe()
                        ),
                    );
                }
                match ka {
                    Kind::Uint { .. } => Ok(ka),
                    k => op_err(
                        name,
                        format!("selects between u8..u64 values, not {}", k.describe()),
                    ),
                }
            }
            &Op::Argmax(a) => match self.kind_of(a) {
                Kind::Uint { len, bits } if bits >= 64 || len as u64 <= 1 << bits => {
                    Ok(Kind::Uint { len: 1, bits })
                }
                Kind::Real { .. } => op_err(name, REAL_ARGMAX),
                k => op_err(
                    name,
                    format!(
                        "takes u8..u64 values whose indices fit their width, not {}",
                        k.describe()
                    ),
                ),
            },
            Op::ArgmaxSigned { xs, tolerance_bits } => {
                if xs.is_empty() {
                    return op_err(name, "needs at least one value");
                }
                let mut count = 0usize;
                for &x in xs {
                    match self.kind_of(x) {
                        Kind::Signed { len, .. } => count += len,
                        Kind::Real { .. } => return op_err(name, REAL_ARGMAX),
                        k => {
                            return op_err(
                                name,
                                format!(
                                    "of several values takes signed integers, not {}",
                                    k.describe()
                                ),
                            )
                        }
                    }
                }
                if *tolerance_bits > 40 {
                    return op_err(name, format!("tolerance 2^{tolerance_bits} above 2^40"));
                }
                match count {
                    0..=256 => Ok(Kind::Uint { len: 1, bits: 8 }),
                    257..=65536 => Ok(Kind::Uint { len: 1, bits: 16 }),
                    _ => op_err(
                        name,
                        format!("the index of {count} values does not fit a u16"),
                    ),
                }
            }
            Op::Any(bits) => {
                if bits.is_empty() {
                    return op_err(name, "needs at least one bit value");
                }
                for &b in bits {
                    let k = self.kind_of(b);
                    if !matches!(k, Kind::Bit { .. }) {
                        return op_err(name, format!("takes bits, not {}", k.describe()));
                    }
                }
                Ok(Kind::Bit { len: 1 })
            }
            Op::Lookup { x, table } => {
                let (len, entries) = match self.kind_of(*x) {
                    Kind::Uint { len, bits: 8 } => (len, 256),
                    Kind::Signed { len, bound } if bound <= MAX_LOOKUP_BOUND => {
                        (len, 2 * bound as usize + 1)
                    }
                    k => {
                        return op_err(
                            name,
                            format!(
                            "takes u8 or signed integers of bound <= {MAX_LOOKUP_BOUND}, not {}",
                            k.describe()
                        ),
                        )
                    }
                };
                if table.len() != entries {
                    return op_err(
                        name,
                        format!("{} entries for a table of {entries}", table.len()),
                    );
                }
                Ok(Kind::Uint { len, bits: 8 })
            }
            _ => op_err(name, "not an operation of this rule (a router bug)"),
        }
    }

    /// The kinds of conversions between engines (key-holder round trips).
    pub(crate) fn conversion_kind(&self, op: &Op) -> Result<Kind> {
        let name = op.name();
        match *op {
            Op::ToSigned(a) => match self.kind_of(a) {
                Kind::Uint { len, bits } if bits <= 32 => Ok(Kind::Signed {
                    len,
                    bound: (1u64 << bits) - 1,
                }),
                Kind::Bit { len } => Ok(Kind::Signed { len, bound: 1 }),
                k => op_err(
                    name,
                    format!("converts u8..u32 values or bits, not {}", k.describe()),
                ),
            },
            Op::ToReal { x, scale } => {
                let k = self.kind_of(x);
                let largest = match k {
                    Kind::Modular { modulus, .. } => modulus - 1,
                    Kind::Signed { bound, .. } => bound,
                    Kind::Uint { bits, .. } => u64::MAX >> (64 - bits),
                    Kind::Bit { .. } => 1,
                    Kind::Real { .. } => return op_err(name, "the values are already reals"),
                };
                if !scale.is_finite() || largest as f64 * scale.abs() > 1.0 {
                    return op_err(
                        name,
                        format!(
                            "scale {scale}: {} times it must lie in [-1, 1]",
                            k.describe()
                        ),
                    );
                }
                Ok(Kind::Real { len: k.len() })
            }
            _ => op_err(name, "not an operation of this rule (a router bug)"),
        }
    }
}

/// The operand checks of the kind rules ([`Program::result_kind`]).
pub(crate) struct Checks<'a> {
    program: &'a Program,
    name: &'static str,
}

impl Checks<'_> {
    /// The kinds of two operands of the same shape.
    fn same(&self, a: u32, b: u32) -> Result<(Kind, Kind)> {
        let (ka, kb) = (self.program.kind_of(a), self.program.kind_of(b));
        if !ka.same_shape(&kb) {
            return op_err(
                self.name,
                format!("operands differ: {} and {}", ka.describe(), kb.describe()),
            );
        }
        Ok((ka, kb))
    }

    /// `k`, unless it is a bit: arithmetic on bits is refused.
    fn not_bit(&self, k: Kind) -> Result<Kind> {
        if let Kind::Bit { .. } = k {
            return op_err(
                self.name,
                "arithmetic on bits is not supported (use select)",
            );
        }
        Ok(k)
    }

    /// Whether the constant `s` fits values of kind `k`.
    fn scalar_fits(&self, k: Kind, s: Scalar) -> Result<()> {
        match (k.is_integer(), s) {
            (true, Scalar::Int(_)) => Ok(()),
            (false, Scalar::Real(r)) if r.is_finite() => Ok(()),
            _ => op_err(
                self.name,
                format!("constant {s:?} does not fit {}", k.describe()),
            ),
        }
    }
}

/// The magnitude of an integer constant (0 for a real).
pub(crate) fn magnitude(s: Scalar) -> u64 {
    match s {
        Scalar::Int(i) => i.unsigned_abs(),
        Scalar::Real(_) => 0,
    }
}
