//! Programs as bytes, so that a client can build one and a server run it.
//!
//! Format versions 1 to 4, little-endian throughout; version 2 adds tags
//! 18..=20, version 3 tag 21, version 4 tag 22, and a program is written in the oldest
//! version that holds its tags (so older builds read it). A program with a
//! tag newer than its version is refused.
//!
//! ```text
//! program  = "TRSKPRG" version:u8(1 to 4) nodes:u32 node* outputs:u32 output*
//! node     = tag:u8 fields            (tags below; operands are u32 indices
//!                                      of earlier nodes)
//!   0 input          name kind
//!   1 add / 2 sub / 3 mul / 6 dot / 12 compare(+cmp)   a:u32 b:u32
//!   4 add_scalar / 5 mul_scalar                        a:u32 scalar
//!   7 dot_plain / 9 polynomial                         a:u32 count:u32 scalar*
//!   8 sum                                              a:u32
//!   10 chebyshev     x:u32 lo:f64 hi:f64 count:u32 f64*
//!   11 matvec        x:u32 rows:u32 cols:u32 f64*(rows*cols, row-major)
//!   13 compare_scalar a:u32 scalar cmp
//!   14 select        cond:u32 a:u32 b:u32
//!   15 argmax        a:u32
//!   16 any           count:u32 bits:u32* (at least one)
//!   17 threshold_within x:u32 scalar(i64 only) tolerance_bits:u8
//!   18 lookup        x:u32 count:u32 u8*            (version 2)
//!   19 to_signed     a:u32                          (version 2)
//!   20 to_real       x:u32 scale:f64                (version 2)
//!   21 threshold_real x:u32 threshold:f64 tolerance:f64 (version 3)
//!   22 argmax (signed) count:u32 xs:u32* (at least one) tolerance_bits:u8
//!                                                   (version 4)
//! kind     = 0 modular len:u32 modulus:u64 | 1 signed len:u32 bound:u64
//!          | 2 real len:u32 | 3 uint len:u32 bits:u8 | 4 bit len:u32
//! scalar   = 0 i64 | 1 f64
//! cmp      = 0 eq | 1 ne | 2 lt | 3 le | 4 gt | 5 ge
//! name     = len:u8 bytes (1..=64 printable ASCII)
//! output   = name node:u32
//! ```
//!
//! Loading is validation: every count is checked against the bytes left
//! before anything is allocated, and every node is recorded through the same
//! checks as the builder (operands must be earlier nodes, so a loaded program
//! is acyclic; kinds, shapes, bounds and names as when built). Trailing bytes
//! are an error. The encoding is canonical: an accepted program re-encodes to
//! the same bytes.

use crate::error::{Error, Result};
use crate::program::{Cmp, Kind, Op, Program, Scalar, MAX_NODES};

const MAGIC: &[u8; 7] = b"TRSKPRG";
/// The newest format version written and read (older ones still load).
pub const PROGRAM_FORMAT_VERSION: u8 = 4;

/// The operation's tag (module documentation).
fn op_tag(op: &Op) -> u8 {
    match op {
        Op::Input { .. } => 0,
        Op::Add(..) => 1,
        Op::Sub(..) => 2,
        Op::Mul(..) => 3,
        Op::AddScalar(..) => 4,
        Op::MulScalar(..) => 5,
        Op::Dot(..) => 6,
        Op::DotPlain(..) => 7,
        Op::Sum(..) => 8,
        Op::Polynomial(..) => 9,
        Op::Chebyshev { .. } => 10,
        Op::MatVec { .. } => 11,
        Op::Compare(..) => 12,
        Op::CompareScalar(..) => 13,
        Op::Select { .. } => 14,
        Op::Argmax(..) => 15,
        Op::Any(..) => 16,
        Op::ThresholdWithin { .. } => 17,
        Op::Lookup { .. } => 18,
        Op::ToSigned(..) => 19,
        Op::ToReal { .. } => 20,
        Op::ThresholdReal { .. } => 21,
        Op::ArgmaxSigned { .. } => 22,
    }
}

/// The format version that introduced operation tag `tag`.
fn tag_version(tag: u8) -> u8 {
    match tag {
        0..=17 => 1,
        18..=20 => 2,
        21 => 3,
        _ => 4,
    }
}

const CMPS: [Cmp; 6] = [Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge];

fn bad<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Format(format!("program: {}", msg.into())))
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: usize) {
        self.0.extend_from_slice(&(v as u32).to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn name(&mut self, s: &str) {
        self.u8(s.len() as u8);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn scalar(&mut self, s: &Scalar) {
        match *s {
            Scalar::Int(i) => {
                self.u8(0);
                self.u64(i as u64);
            }
            Scalar::Real(r) => {
                self.u8(1);
                self.f64(r);
            }
        }
    }
    fn scalars(&mut self, v: &[Scalar]) {
        self.u32(v.len());
        v.iter().for_each(|s| self.scalar(s));
    }
    fn u32s(&mut self, v: &[u32]) {
        self.u32(v.len());
        v.iter().for_each(|&x| self.u32(x as usize));
    }
    fn cmp(&mut self, c: Cmp) {
        self.u8(CMPS.iter().position(|&x| x == c).unwrap_or(0) as u8);
    }
    fn kind(&mut self, k: &Kind) {
        match *k {
            Kind::Modular { len, modulus } => {
                self.u8(0);
                self.u32(len);
                self.u64(modulus);
            }
            Kind::Signed { len, bound } => {
                self.u8(1);
                self.u32(len);
                self.u64(bound);
            }
            Kind::Real { len } => {
                self.u8(2);
                self.u32(len);
            }
            Kind::Uint { len, bits } => {
                self.u8(3);
                self.u32(len);
                self.u8(bits as u8);
            }
            Kind::Bit { len } => {
                self.u8(4);
                self.u32(len);
            }
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if self.0.len() < n {
            return bad(format!(
                "truncated: {n} bytes needed, {} left",
                self.0.len()
            ));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// A count of items of at least `item` bytes each, checked against the
    /// bytes left (so no allocation exceeds the input's size).
    fn count(&mut self, item: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(item) > self.0.len() {
            return bad(format!("count {n} exceeds the bytes left"));
        }
        Ok(n)
    }
    /// A count and that many u32 operands.
    fn u32s(&mut self) -> Result<Vec<u32>> {
        let count = self.count(4)?;
        (0..count).map(|_| self.u32()).collect()
    }
    fn len(&mut self) -> Result<usize> {
        Ok(self.u32()? as usize)
    }
    fn name(&mut self) -> Result<String> {
        let n = self.u8()? as usize;
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| Error::Format("program: a name is not UTF-8".into()))
    }
    fn scalar(&mut self) -> Result<Scalar> {
        match self.u8()? {
            0 => Ok(Scalar::Int(self.u64()? as i64)),
            1 => Ok(Scalar::Real(self.f64()?)),
            t => bad(format!("scalar tag {t}")),
        }
    }
    fn scalars(&mut self) -> Result<Vec<Scalar>> {
        let n = self.count(9)?;
        (0..n).map(|_| self.scalar()).collect()
    }
    fn f64s(&mut self, n: usize) -> Result<Vec<f64>> {
        if n.saturating_mul(8) > self.0.len() {
            return bad(format!("{n} reals exceed the bytes left"));
        }
        (0..n).map(|_| self.f64()).collect()
    }
    fn cmp(&mut self) -> Result<Cmp> {
        let t = self.u8()? as usize;
        CMPS.get(t)
            .copied()
            .ok_or_else(|| Error::Format(format!("program: comparison tag {t}")))
    }
    fn kind(&mut self) -> Result<Kind> {
        Ok(match self.u8()? {
            0 => Kind::Modular {
                len: self.len()?,
                modulus: self.u64()?,
            },
            1 => Kind::Signed {
                len: self.len()?,
                bound: self.u64()?,
            },
            2 => Kind::Real { len: self.len()? },
            3 => Kind::Uint {
                len: self.len()?,
                bits: self.u8()? as u32,
            },
            4 => Kind::Bit { len: self.len()? },
            t => return bad(format!("kind tag {t}")),
        })
    }

    /// The operands of the operation of `tag` (its version already
    /// checked).
    fn op(&mut self, tag: u8) -> Result<Op> {
        Ok(match tag {
            0 => Op::Input {
                name: self.name()?,
                kind: self.kind()?,
            },
            1 => Op::Add(self.u32()?, self.u32()?),
            2 => Op::Sub(self.u32()?, self.u32()?),
            3 => Op::Mul(self.u32()?, self.u32()?),
            4 => Op::AddScalar(self.u32()?, self.scalar()?),
            5 => Op::MulScalar(self.u32()?, self.scalar()?),
            6 => Op::Dot(self.u32()?, self.u32()?),
            7 => Op::DotPlain(self.u32()?, self.scalars()?),
            8 => Op::Sum(self.u32()?),
            9 => Op::Polynomial(self.u32()?, self.scalars()?),
            10 => {
                let (x, lo, hi) = (self.u32()?, self.f64()?, self.f64()?);
                let n = self.count(8)?;
                Op::Chebyshev {
                    x,
                    coeffs: self.f64s(n)?,
                    lo,
                    hi,
                }
            }
            11 => {
                let (x, rows, cols) = (self.u32()?, self.len()?, self.len()?);
                let all = self.f64s(rows.saturating_mul(cols))?;
                let rows = all.chunks(cols.max(1)).map(<[f64]>::to_vec).collect();
                Op::MatVec { x, rows }
            }
            12 => Op::Compare(self.u32()?, self.u32()?, self.cmp()?),
            13 => Op::CompareScalar(self.u32()?, self.scalar()?, self.cmp()?),
            15 => Op::Argmax(self.u32()?),
            14 => Op::Select {
                cond: self.u32()?,
                a: self.u32()?,
                b: self.u32()?,
            },
            16 => Op::Any(self.u32s()?),
            22 => Op::ArgmaxSigned {
                xs: self.u32s()?,
                tolerance_bits: self.u8()? as u32,
            },
            17 => {
                let x = self.u32()?;
                let Scalar::Int(threshold) = self.scalar()? else {
                    return bad("threshold_within: a real threshold");
                };
                Op::ThresholdWithin {
                    x,
                    threshold,
                    tolerance_bits: self.u8()? as u32,
                }
            }
            18 => {
                let x = self.u32()?;
                let n = self.count(1)?;
                Op::Lookup {
                    x,
                    table: self.take(n)?.to_vec(),
                }
            }
            19 => Op::ToSigned(self.u32()?),
            20 => Op::ToReal {
                x: self.u32()?,
                scale: self.f64()?,
            },
            21 => Op::ThresholdReal {
                x: self.u32()?,
                threshold: self.f64()?,
                tolerance: self.f64()?,
            },
            t => return bad(format!("operation tag {t}")),
        })
    }

    /// The outputs (name and value) of `p`, whose nodes are read.
    fn outputs(&mut self, p: &mut Program) -> Result<()> {
        let outputs = self.count(6)?;
        for _ in 0..outputs {
            let name = self.name()?;
            let id = self.u32()?;
            if id as usize >= p.nodes.len() {
                return bad(format!(
                    "output {name:?} names value {id}, which does not exist"
                ));
            }
            let v = crate::program::Value { program: p.tag, id };
            p.output(&name, v)?;
        }
        Ok(())
    }
}

impl Program {
    /// The program's bytes (format above).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer(MAGIC.to_vec());
        let version = self
            .nodes
            .iter()
            .map(|n| tag_version(op_tag(&n.op)))
            .max()
            .unwrap_or(1);
        w.u8(version);
        w.u32(self.nodes.len());
        for node in &self.nodes {
            w.u8(op_tag(&node.op));
            match &node.op {
                Op::Input { name, kind } => {
                    w.name(name);
                    w.kind(kind);
                }
                &Op::Add(a, b) | &Op::Sub(a, b) | &Op::Mul(a, b) | &Op::Dot(a, b) => {
                    w.u32(a as usize);
                    w.u32(b as usize);
                }
                Op::AddScalar(a, s) | Op::MulScalar(a, s) => {
                    w.u32(*a as usize);
                    w.scalar(s);
                }
                Op::DotPlain(a, v) | Op::Polynomial(a, v) => {
                    w.u32(*a as usize);
                    w.scalars(v);
                }
                Op::Sum(a) | Op::Argmax(a) => {
                    w.u32(*a as usize);
                }
                Op::Chebyshev { x, coeffs, lo, hi } => {
                    w.u32(*x as usize);
                    w.f64(*lo);
                    w.f64(*hi);
                    w.u32(coeffs.len());
                    coeffs.iter().for_each(|&c| w.f64(c));
                }
                Op::MatVec { x, rows } => {
                    w.u32(*x as usize);
                    w.u32(rows.len());
                    w.u32(rows.first().map_or(0, Vec::len));
                    rows.iter().flatten().for_each(|&v| w.f64(v));
                }
                &Op::Compare(a, b, c) => {
                    w.u32(a as usize);
                    w.u32(b as usize);
                    w.cmp(c);
                }
                Op::CompareScalar(a, s, c) => {
                    w.u32(*a as usize);
                    w.scalar(s);
                    w.cmp(*c);
                }
                &Op::ThresholdWithin {
                    x,
                    threshold,
                    tolerance_bits,
                } => {
                    w.u32(x as usize);
                    w.scalar(&Scalar::Int(threshold));
                    w.u8(tolerance_bits as u8);
                }
                &Op::Select { cond, a, b } => {
                    w.u32(cond as usize);
                    w.u32(a as usize);
                    w.u32(b as usize);
                }
                Op::Any(bits) => w.u32s(bits),
                Op::ArgmaxSigned { xs, tolerance_bits } => {
                    w.u32s(xs);
                    w.u8(*tolerance_bits as u8);
                }
                Op::Lookup { x, table } => {
                    w.u32(*x as usize);
                    w.u32(table.len());
                    w.0.extend_from_slice(table);
                }
                Op::ToSigned(a) => {
                    w.u32(*a as usize);
                }
                Op::ToReal { x, scale } => {
                    w.u32(*x as usize);
                    w.f64(*scale);
                }
                &Op::ThresholdReal {
                    x,
                    threshold,
                    tolerance,
                } => {
                    w.u32(x as usize);
                    w.f64(threshold);
                    w.f64(tolerance);
                }
            }
        }
        w.u32(self.outputs.len());
        for (name, v) in &self.outputs {
            w.name(name);
            w.u32(*v as usize);
        }
        w.0
    }

    /// Loads and validates a program (see the module documentation).
    pub fn from_bytes(bytes: &[u8]) -> Result<Program> {
        let mut r = Reader(bytes);
        if r.take(MAGIC.len())? != MAGIC {
            return bad("not a triskel program (magic)");
        }
        let version = r.u8()?;
        if !(1..=PROGRAM_FORMAT_VERSION).contains(&version) {
            return bad(format!(
                "format version {version}; this build reads 1..={PROGRAM_FORMAT_VERSION}"
            ));
        }
        let count = r.count(5)?;
        if count > MAX_NODES {
            return bad(format!("{count} nodes; at most {MAX_NODES}"));
        }
        let mut p = Program::new();
        let mut needed = 1;
        for _ in 0..count {
            let tag = r.u8()?;
            if tag_version(tag) > version {
                return bad(format!(
                    "operation tag {tag} needs format version {}, the bytes say {version}",
                    tag_version(tag)
                ));
            }
            needed = needed.max(tag_version(tag));
            let op = r.op(tag)?;
            if matches!(&op, Op::MatVec { rows, .. } if rows.is_empty()) {
                return bad("matvec: a matrix without entries");
            }
            p.record(op)?;
        }
        r.outputs(&mut p)?;
        if !r.0.is_empty() {
            return bad(format!("{} trailing bytes", r.0.len()));
        }
        // Canonical: the oldest version that holds the program's tags.
        if version != needed {
            return bad(format!(
                "format version {version} for a program version {needed} encodes"
            ));
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Program {
        let mut p = Program::new();
        let x = p.input("x", Kind::Signed { len: 3, bound: 9 }).unwrap();
        let y = p
            .input(
                "y",
                Kind::Modular {
                    len: 2,
                    modulus: 65537,
                },
            )
            .unwrap();
        let r = p.input("r", Kind::Real { len: 4 }).unwrap();
        let u = p.input("u", Kind::Uint { len: 2, bits: 16 }).unwrap();
        let d = p
            .dot_plain(x, &[Scalar::Int(1), Scalar::Int(-2), Scalar::Int(3)])
            .unwrap();
        let t = p.threshold(d, Scalar::Int(4)).unwrap();
        let tw = p.threshold_within(d, -7, 3).unwrap();
        p.output("tw", tw).unwrap();
        let yy = p.mul(y, y).unwrap();
        let ys = p.add_scalar(yy, Scalar::Int(5)).unwrap();
        let m = p
            .matvec(&[vec![0.5, 1.0, -1.0, 2.0], vec![0.0; 4]], r)
            .unwrap();
        let c = p.chebyshev(m, &[0.5, 0.25], -2.0, 2.0).unwrap();
        let s = p.sum(c).unwrap();
        let pr = p
            .polynomial(r, &[Scalar::Real(1.0), Scalar::Real(-0.5)])
            .unwrap();
        let g = p.compare(u, Cmp::Le, u).unwrap();
        let sel = p.select(g, u, u).unwrap();
        let ms = p.mul_scalar(sel, Scalar::Int(3)).unwrap();
        let am = p.argmax(ms).unwrap();
        p.output("am", am).unwrap();
        let any = p.any(&[t, g]).unwrap();
        p.output("any", any).unwrap();
        for (n, v) in [("t", t), ("ys", ys), ("s", s), ("pr", pr), ("ms", ms)] {
            p.output(n, v).unwrap();
        }
        p
    }

    fn same(a: &Program, b: &Program) -> bool {
        a.nodes == b.nodes && a.outputs == b.outputs
    }

    #[test]
    fn programs_round_trip_byte_for_byte() {
        let p = sample();
        let bytes = p.to_bytes();
        let q = Program::from_bytes(&bytes).unwrap();
        assert!(same(&p, &q));
        assert_eq!(q.to_bytes(), bytes);
    }

    #[test]
    fn version_2_operations_round_trip_and_need_version_2() {
        // A program without them keeps version 1 bytes.
        assert_eq!(sample().to_bytes()[7], 1);
        let mut p = Program::new();
        let u = p.input("u", Kind::Uint { len: 2, bits: 8 }).unwrap();
        let x = p.input("x", Kind::Signed { len: 1, bound: 3 }).unwrap();
        let table: Vec<u8> = (0..=255u8).map(|v| v.wrapping_mul(7)).collect();
        let l = p.lookup(u, &table).unwrap();
        let ls = p.lookup(x, &[9, 8, 7, 6, 5, 4, 3]).unwrap();
        let s = p.to_signed(l).unwrap();
        let r = p.to_real(x, 0.25).unwrap();
        for (n, v) in [("l", l), ("ls", ls), ("s", s), ("r", r)] {
            p.output(n, v).unwrap();
        }
        let bytes = p.to_bytes();
        assert_eq!(bytes[7], 2);
        let q = Program::from_bytes(&bytes).unwrap();
        assert!(same(&p, &q));
        assert_eq!(q.to_bytes(), bytes);
        let mut old = bytes.clone();
        old[7] = 1;
        assert!(
            matches!(Program::from_bytes(&old), Err(Error::Format(m)) if m.contains("needs format version 2"))
        );
        let mut future = bytes.clone();
        future[7] = 3;
        assert!(matches!(
            Program::from_bytes(&future),
            Err(Error::Format(_))
        ));
        // A table of the wrong size is refused naming the operation.
        let mut p = Program::new();
        let x = p.input("x", Kind::Signed { len: 1, bound: 3 }).unwrap();
        assert!(matches!(p.lookup(x, &[1, 2]), Err(Error::Program { op, .. }) if op == "lookup"));
    }

    #[test]
    fn threshold_real_needs_version_3() {
        let mut p = Program::new();
        let x = p.input("x", Kind::Real { len: 3 }).unwrap();
        let t = p.threshold_real(x, 0.25, 1e-3).unwrap();
        p.output("t", t).unwrap();
        let bytes = p.to_bytes();
        assert_eq!(bytes[7], 3);
        let q = Program::from_bytes(&bytes).unwrap();
        assert!(same(&p, &q));
        assert_eq!(q.to_bytes(), bytes);
        let mut old = bytes.clone();
        old[7] = 2;
        assert!(
            matches!(Program::from_bytes(&old), Err(Error::Format(m)) if m.contains("needs format version 3"))
        );
        let mut future = bytes.clone();
        future[7] = PROGRAM_FORMAT_VERSION + 1;
        assert!(matches!(
            Program::from_bytes(&future),
            Err(Error::Format(_))
        ));
        // A loaded tolerance is checked as a built one.
        let mut zero = bytes.clone();
        let tolerance_at = bytes.len() - 4 - (1 + 1) - 4 - 8;
        zero[tolerance_at..tolerance_at + 8].copy_from_slice(&0f64.to_bits().to_le_bytes());
        assert!(
            matches!(Program::from_bytes(&zero), Err(Error::Program { op, .. }) if op == "threshold_real")
        );
    }

    #[test]
    fn signed_argmax_needs_version_4() {
        let mut p = Program::new();
        let x = p.input("x", Kind::Signed { len: 3, bound: 9 }).unwrap();
        let y = p.input("y", Kind::Signed { len: 2, bound: 9 }).unwrap();
        let i = p.argmax_within(&[x, y, x], 2).unwrap();
        p.output("i", i).unwrap();
        let bytes = p.to_bytes();
        assert_eq!(bytes[7], 4);
        let q = Program::from_bytes(&bytes).unwrap();
        assert!(same(&p, &q));
        assert_eq!(q.to_bytes(), bytes);
        let mut old = bytes.clone();
        old[7] = 3;
        assert!(Program::from_bytes(&old).is_err());
        // A loaded tolerance is checked as a built one (at most 2^40).
        let mut wide = bytes.clone();
        let tolerance_at = bytes.len() - 4 - (1 + 1) - 4 - 1;
        assert_eq!(wide[tolerance_at], 2);
        wide[tolerance_at] = 41;
        assert!(
            matches!(Program::from_bytes(&wide), Err(Error::Program { op, .. }) if op == "argmax")
        );
        // So are its operands' kinds: a u8 vector is no signed argmax.
        let mut p = Program::new();
        let u = p.input("u", Kind::Uint { len: 3, bits: 8 }).unwrap();
        let i = p.argmax(u).unwrap();
        p.output("i", i).unwrap();
        let mut bytes = p.to_bytes();
        let tag_at = bytes.len() - 4 - (1 + 1) - 4 - 4 - 1;
        assert_eq!(bytes[tag_at], 15);
        bytes[tag_at] = 22;
        bytes[7] = 4;
        let count = 1u32.to_le_bytes();
        bytes.splice(tag_at + 1..tag_at + 1, count);
        bytes.insert(bytes.len() - 4 - (1 + 1) - 4, 0);
        assert!(
            matches!(Program::from_bytes(&bytes), Err(Error::Program { op, .. }) if op == "argmax")
        );
    }

    #[test]
    fn malformed_bytes_are_refused() {
        let bytes = sample().to_bytes();
        for cut in 0..bytes.len() {
            assert!(Program::from_bytes(&bytes[..cut]).is_err(), "prefix {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(Program::from_bytes(&long).is_err());
        let mut version = bytes.clone();
        version[7] = 2;
        assert!(
            matches!(Program::from_bytes(&version), Err(Error::Format(m)) if m.contains("version"))
        );
        // An operand that is not an earlier node (a cycle or a forward
        // reference): node 4 (dot_plain) pointing at itself.
        let mut p = Program::new();
        let x = p.input("x", Kind::Real { len: 2 }).unwrap();
        let s = p.sum(x).unwrap();
        p.output("s", s).unwrap();
        let mut b = p.to_bytes();
        let sum_operand = b.len() - 4 - 1 - 1 - 4 - 4;
        b[sum_operand..sum_operand + 4].copy_from_slice(&1u32.to_le_bytes());
        assert!(matches!(Program::from_bytes(&b), Err(Error::Program { op, .. }) if op == "sum"));
        // Huge counts are refused before any allocation.
        let mut huge = MAGIC.to_vec();
        huge.push(PROGRAM_FORMAT_VERSION);
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(Program::from_bytes(&huge).is_err());
        // A loaded kind is checked as a built one: 7-bit integers.
        let mut p = Program::new();
        let u = p.input("u", Kind::Uint { len: 1, bits: 8 }).unwrap();
        p.output("u", u).unwrap();
        let mut b = p.to_bytes();
        let bits_at = 7 + 1 + 4 + 1 + 1 + 1 + 1 + 4;
        assert_eq!(b[bits_at], 8);
        b[bits_at] = 7;
        assert!(matches!(Program::from_bytes(&b), Err(Error::Program { op, .. }) if op == "input"));
        // Non-finite reals never load.
        let mut p = Program::new();
        let r = p.input("r", Kind::Real { len: 1 }).unwrap();
        let m = p.mul_scalar(r, Scalar::Real(2.0)).unwrap();
        p.output("m", m).unwrap();
        let mut b = p.to_bytes();
        let real_at = b.len() - 4 - (1 + 1) - 4 - 8;
        b[real_at..real_at + 8].copy_from_slice(&f64::NAN.to_bits().to_le_bytes());
        assert!(Program::from_bytes(&b).is_err());
    }
}
