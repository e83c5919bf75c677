//! Lazy ModDown across consecutive key switches of one ciphertext.
//!
//! A rotation needs its input's c1 in Q_l (the next switch decomposes it),
//! but its first component can wait: (x, c1) with x in Q_l P stands for the
//! ciphertext (round(x / P), c1). Automorphisms and additions act on x as on
//! a first component (X -> X^g permutes coefficients and flips signs, so it
//! commutes with the division), and the first halves of all switches are
//! summed in Q_l P: r rotations cost r + 1 ModDowns of one polynomial
//! instead of 2r, for rotation trees, slot sums and chains of rotations.
//!
//! A first component c0 of Q_l joins x as P c0 (exact: P c0 is 0 modulo P,
//! so round((P c0 + x) / P) = c0 + round(x / P) bit for bit), after which
//! each rotation permutes and each addition adds one polynomial of Q_l P
//! instead of c0 and x apart.

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::keyswitch::{KeySwitchContext, KeySwitchKey};
use crate::poly::{Poly, Representation};

/// The first component of a [`LazyRlwe`].
#[derive(Clone, Debug)]
enum First<'a> {
    /// c0 in Q_l, nothing pending (borrowed until first changed).
    Plain(Cow<'a, Poly>),
    /// x in Q_l P, standing for round(x / P).
    Pending(Poly),
}

/// A ciphertext (c0, c1) or (round(x / P), c1) in Q_l, NTT form (module
/// documentation); c0 and c1 are borrowed until first changed.
#[derive(Clone, Debug)]
pub struct LazyRlwe<'a> {
    first: First<'a>,
    c1: Cow<'a, Poly>,
}

impl<'a> LazyRlwe<'a> {
    /// The ciphertext (c0, c1) (NTT form, one basis Q_l), nothing pending.
    pub fn new(c0: &'a Poly, c1: &'a Poly) -> Result<LazyRlwe<'a>> {
        if c0.basis() != c1.basis() || c0.representation() != c1.representation() {
            return Err(Error::BasisMismatch);
        }
        Ok(LazyRlwe {
            first: First::Plain(Cow::Borrowed(c0)),
            c1: Cow::Borrowed(c1),
        })
    }

    /// The ciphertext (c0 + round(x / P), c1) from owned parts: c0 and c1
    /// in Q_l, x (when some) in Q_l P of `ks`, all in NTT form; e.g. a sum of
    /// hoisted inner products whose first halves have not been moved down.
    pub fn with_pending(
        ks: &KeySwitchContext,
        c0: Poly,
        x: Option<Poly>,
        c1: Poly,
    ) -> Result<LazyRlwe<'static>> {
        let qlp = ks.level_qp(c0.basis().len())?;
        let x_fits = x
            .as_ref()
            .is_none_or(|x| x.basis() == qlp && x.representation() == Representation::Ntt);
        if c0.basis() != c1.basis() || c0.representation() != Representation::Ntt || !x_fits {
            return Err(Error::BasisMismatch);
        }
        c1.expect_representation(Representation::Ntt)?;
        let first = match x {
            None => First::Plain(Cow::Owned(c0)),
            Some(mut x) => {
                ks.add_scaled_by_p(&mut x, &c0)?;
                First::Pending(x)
            }
        };
        Ok(LazyRlwe {
            first,
            c1: Cow::Owned(c1),
        })
    }

    /// X -> X^g and the switch of c1(X^g) back to s with `key` (the Galois
    /// key of g), whose first half joins the first component in Q_l P.
    pub fn rotated(
        &self,
        ks: &KeySwitchContext,
        key: &KeySwitchKey,
        g: usize,
    ) -> Result<LazyRlwe<'a>> {
        let (mut x, c1) = ks.switch_lazy(key, &self.c1.automorphism(g)?)?;
        match &self.first {
            First::Plain(c0) => ks.add_scaled_by_p(&mut x, &c0.automorphism(g)?)?,
            First::Pending(y) => x.add_assign(&y.automorphism(g)?)?,
        }
        Ok(LazyRlwe {
            first: First::Pending(x),
            c1: Cow::Owned(c1),
        })
    }

    /// self += other (same basis; `ks` scales a plain first component by P
    /// when the other's is pending).
    pub fn add_assign(&mut self, ks: &KeySwitchContext, other: &LazyRlwe<'_>) -> Result<()> {
        self.c1.to_mut().add_assign(&other.c1)?;
        match (&mut self.first, &other.first) {
            (First::Plain(c0), First::Plain(d0)) => c0.to_mut().add_assign(d0)?,
            (First::Pending(x), First::Pending(y)) => x.add_assign(y)?,
            (First::Pending(x), First::Plain(d0)) => ks.add_scaled_by_p(x, d0)?,
            (First::Plain(c0), First::Pending(y)) => {
                let mut x = y.clone();
                ks.add_scaled_by_p(&mut x, c0)?;
                self.first = First::Pending(x);
            }
        }
        Ok(())
    }

    /// The ciphertext in Q_l: one ModDown for everything pending.
    pub fn finish(self, ks: &KeySwitchContext) -> Result<(Poly, Poly)> {
        let c0 = match self.first {
            First::Plain(c0) => c0.into_owned(),
            First::Pending(x) => ks.mod_down_owned(x)?,
        };
        Ok((c0, self.c1.into_owned()))
    }
}
