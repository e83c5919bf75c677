//! Plaintexts and the two encoders: batching (n slots in 2 rows of n/2) and
//! coefficients.

use std::sync::{Arc, OnceLock};

use triskel_ring::{Poly, Representation};
use zeroize::{Zeroize, Zeroizing};

use crate::context::BfvContext;
use crate::error::{Error, Result};

/// A plaintext polynomial m in R_t: n coefficients in [0, t).
///
/// It caches, per level, its centered lift to R_Q in NTT form, so that
/// multiplying many ciphertexts by the same plaintext transforms it once.
pub struct Plaintext {
    pub(crate) ctx: Arc<BfvContext>,
    pub(crate) coeffs: Vec<u64>,
    lifted: Vec<OnceLock<Poly>>,
    l2: OnceLock<f64>,
}

/// Messages may be secret (a template, a decrypted result): the
/// coefficients and the cached lifts are wiped when a plaintext drops.
impl Drop for Plaintext {
    fn drop(&mut self) {
        self.coeffs.zeroize();
        for lift in &mut self.lifted {
            if let Some(p) = lift.get_mut() {
                p.zeroize();
            }
        }
    }
}

impl Clone for Plaintext {
    fn clone(&self) -> Self {
        Plaintext::from_reduced(&self.ctx, self.coeffs.clone())
    }
}

impl std::fmt::Debug for Plaintext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plaintext")
            .field("n", &self.coeffs.len())
            .field("t", &self.ctx.plain_modulus())
            .finish_non_exhaustive()
    }
}

impl PartialEq for Plaintext {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.ctx, &other.ctx) && self.coeffs == other.coeffs
    }
}

/// v mod t for v in [-t/2, t/2], without a division or a branch (v may be
/// secret).
fn reduce_signed(v: i64, t: u64) -> u64 {
    v.wrapping_add(t as i64 & (v >> 63)) as u64
}

/// v in (-t/2, t/2], branch-free (v is decrypted data).
fn centered(v: u64, t: u64) -> i64 {
    let above = 0u64.wrapping_sub((v > t / 2) as u64);
    v.wrapping_sub(t & above) as i64
}

impl Plaintext {
    pub(crate) fn from_reduced(ctx: &Arc<BfvContext>, coeffs: Vec<u64>) -> Plaintext {
        Plaintext {
            lifted: (0..=ctx.max_level()).map(|_| OnceLock::new()).collect(),
            l2: OnceLock::new(),
            ctx: ctx.clone(),
            coeffs,
        }
    }

    /// The plaintext with coefficients `coeffs` (at most n, each in [0, t);
    /// missing ones are zero): the coefficient encoder, for any t.
    pub fn from_coeffs(ctx: &Arc<BfvContext>, coeffs: &[u64]) -> Result<Plaintext> {
        let (n, t) = (ctx.n(), ctx.plain_modulus());
        if coeffs.len() > n {
            return Err(Error::Encoding(format!(
                "{} coefficients given, at most n = {n} fit",
                coeffs.len()
            )));
        }
        // Errors name the position, never the value (it may be secret).
        if let Some(i) = coeffs.iter().position(|&v| v >= t) {
            return Err(Error::Encoding(format!(
                "coefficient {i} is not below the plaintext modulus {t}"
            )));
        }
        let mut all = coeffs.to_vec();
        all.resize(n, 0);
        Ok(Plaintext::from_reduced(ctx, all))
    }

    /// The batch encoder: `values` (at most n, each in [0, t); missing ones
    /// are zero) fill the slots, row 0 (slots 0..n/2) then row 1. Additions
    /// and multiplications then act slot by slot, rotations move columns
    /// within each row, and the row swap exchanges the rows.
    pub fn from_slots(ctx: &Arc<BfvContext>, values: &[u64]) -> Result<Plaintext> {
        let batching = ctx.batching()?;
        let (n, t) = (ctx.n(), ctx.plain_modulus());
        if values.len() > n {
            return Err(Error::Encoding(format!(
                "{} values given, at most n = {n} slots",
                values.len()
            )));
        }
        if let Some(i) = values.iter().position(|&v| v >= t) {
            return Err(Error::Encoding(format!(
                "value {i} is not below the plaintext modulus {t}"
            )));
        }
        let mut evals = vec![0u64; n];
        for (&v, &j) in values.iter().zip(&batching.slot_index) {
            evals[j] = v;
        }
        batching.plan.inverse(&mut evals)?;
        Ok(Plaintext::from_reduced(ctx, evals))
    }

    /// [`from_slots`](Self::from_slots) for signed values in (-t/2, t/2].
    pub fn from_signed_slots(ctx: &Arc<BfvContext>, values: &[i64]) -> Result<Plaintext> {
        let t = ctx.plain_modulus();
        let half = (t / 2) as i64;
        if let Some(i) = values.iter().position(|&v| v > half || v < -half) {
            return Err(Error::Encoding(format!(
                "value {i} is outside the centered range of t = {t}"
            )));
        }
        let reduced = Zeroizing::new(
            values
                .iter()
                .map(|&v| reduce_signed(v, t))
                .collect::<Vec<u64>>(),
        );
        Plaintext::from_slots(ctx, &reduced)
    }

    /// The n coefficients in [0, t).
    pub fn coeffs(&self) -> &[u64] {
        &self.coeffs
    }

    /// The n slot values in [0, t) (row 0 then row 1).
    pub fn to_slots(&self) -> Result<Vec<u64>> {
        let batching = self.ctx.batching()?;
        let mut evals = Zeroizing::new(self.coeffs.clone());
        batching.plan.forward(&mut evals)?;
        Ok(batching.slot_index.iter().map(|&j| evals[j]).collect())
    }

    /// The slot values as centered integers in (-t/2, t/2].
    pub fn to_signed_slots(&self) -> Result<Vec<i64>> {
        let t = self.ctx.plain_modulus();
        Ok(self
            .to_slots()?
            .into_iter()
            .map(|v| centered(v, t))
            .collect())
    }

    /// The parameters this plaintext belongs to.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    /// The Euclidean norm of the centered coefficients, what multiplying by
    /// this plaintext does to noise (computed once).
    pub(crate) fn centered_l2(&self) -> f64 {
        *self.l2.get_or_init(|| {
            let t = self.ctx.plain_modulus();
            let sq: f64 = self
                .coeffs
                .iter()
                .map(|&v| (centered(v, t).unsigned_abs() as f64).powi(2))
                .sum();
            sq.sqrt()
        })
    }

    /// The centered lift of m to R_{Q_level} in NTT form (cached).
    pub(crate) fn lifted(&self, level: usize) -> Result<&Poly> {
        let cell = self.lifted.get(level).ok_or(Error::ParameterMismatch)?;
        if let Some(p) = cell.get() {
            return Ok(p);
        }
        let t = self.ctx.plain_modulus();
        let signed: Vec<i64> = self.coeffs.iter().map(|&v| centered(v, t)).collect();
        let basis = &self.ctx.level(level)?.basis;
        let poly = Poly::from_signed(basis, &signed, Representation::Ntt)?;
        Ok(cell.get_or_init(|| poly))
    }
}
