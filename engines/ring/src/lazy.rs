//! Lazy ModDown across consecutive key switches of one ciphertext.
//!
//! A rotation needs its input's c1 in Q_l (the next switch decomposes it),
//! but its first component can wait: (c0, x, c1) stands for the ciphertext
//! (c0 + round(x / P), c1) with x in Q_l P. Automorphisms and additions act
//! on x as on c0 (X -> X^g permutes coefficients and flips signs, so it
//! commutes with the division), and the first halves of all switches are
//! summed in Q_l P: r rotations cost r + 1 ModDowns of one polynomial
//! instead of 2r, for rotation trees, slot sums and chains of rotations.

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::keyswitch::{KeySwitchContext, KeySwitchKey};
use crate::poly::{Poly, Representation};

/// A ciphertext (c0 + round(x / P), c1) in Q_l, NTT form (module
/// documentation); c0 and c1 are borrowed until first changed.
#[derive(Clone, Debug)]
pub struct LazyRlwe<'a> {
    c0: Cow<'a, Poly>,
    x: Option<Poly>,
    c1: Cow<'a, Poly>,
}

impl<'a> LazyRlwe<'a> {
    /// The ciphertext (c0, c1) (NTT form, one basis Q_l), nothing pending.
    pub fn new(c0: &'a Poly, c1: &'a Poly) -> Result<LazyRlwe<'a>> {
        if c0.basis() != c1.basis() || c0.representation() != c1.representation() {
            return Err(Error::BasisMismatch);
        }
        Ok(LazyRlwe {
            c0: Cow::Borrowed(c0),
            x: None,
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
        Ok(LazyRlwe {
            c0: Cow::Owned(c0),
            x,
            c1: Cow::Owned(c1),
        })
    }

    /// X -> X^g and the switch of c1(X^g) back to s with `key` (the Galois
    /// key of g), whose first half joins x in Q_l P.
    pub fn rotated(
        &self,
        ks: &KeySwitchContext,
        key: &KeySwitchKey,
        g: usize,
    ) -> Result<LazyRlwe<'a>> {
        let (x0, c1) = ks.switch_lazy(key, &self.c1.automorphism(g)?)?;
        let x = match &self.x {
            None => x0,
            Some(x) => {
                let mut x = x.automorphism(g)?;
                x.add_assign(&x0)?;
                x
            }
        };
        Ok(LazyRlwe {
            c0: Cow::Owned(self.c0.automorphism(g)?),
            x: Some(x),
            c1: Cow::Owned(c1),
        })
    }

    /// self += other (same basis).
    pub fn add_assign(&mut self, other: &LazyRlwe<'_>) -> Result<()> {
        self.c0.to_mut().add_assign(&other.c0)?;
        self.c1.to_mut().add_assign(&other.c1)?;
        match (&mut self.x, &other.x) {
            (Some(x), Some(y)) => x.add_assign(y)?,
            (None, Some(y)) => self.x = Some(y.clone()),
            (_, None) => {}
        }
        Ok(())
    }

    /// The ciphertext (c0 + round(x / P), c1): one ModDown for everything
    /// pending.
    pub fn finish(self, ks: &KeySwitchContext) -> Result<(Poly, Poly)> {
        let mut c0 = self.c0.into_owned();
        if let Some(x) = self.x {
            c0.add_assign(&ks.mod_down_owned(x)?)?;
        }
        Ok((c0, self.c1.into_owned()))
    }
}
