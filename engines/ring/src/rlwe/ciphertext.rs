//! The RLWE part of a scheme's ciphertext, which a scheme's ciphertext holds
//! with its noise bookkeeping (BFV: a log2 standard deviation; CKKS: the
//! scale and bounds on the message and the error) and dereferences to.

use std::sync::Arc;

use crate::conversion::DivRound;
use crate::error::{Error, Result};
use crate::key_id::KeyId;
use crate::lwe::LweCiphertext;
use crate::poly::Poly;
use crate::rlwe::context::{check_same_context, Scheme};
use crate::rlwe::encryption::write_components;
use crate::rlwe::keys::RelinKey;
use crate::sampling::Seed;
use crate::threshold::Session;

/// Components (c0, c1[, c2]) in NTT form over the level's basis Q_l, with
/// phase c0 + c1 s (+ c2 s^2), the level, the identity of the secret key
/// they are under and, for a fresh symmetric encryption, the seed c1 was
/// drawn from (which serialization stores instead of c1).
///
/// Holders of a scheme's ciphertext read these through it; only the scheme
/// makes or changes one, keeping its noise bookkeeping in step.
pub struct RlweCiphertext<C> {
    /// The context the ciphertext belongs to.
    pub ctx: Arc<C>,
    /// The identity of the secret key it is under.
    pub key_id: KeyId,
    /// The components, NTT form, over the level's basis.
    pub polys: Vec<Poly>,
    /// The level: number of ciphertext primes - 1.
    pub level: usize,
    /// For a fresh symmetric encryption, the seed c1 was drawn from.
    pub seed: Option<Seed>,
}

impl<C> Clone for RlweCiphertext<C> {
    fn clone(&self) -> Self {
        RlweCiphertext {
            ctx: self.ctx.clone(),
            key_id: self.key_id,
            polys: self.polys.clone(),
            level: self.level,
            seed: self.seed,
        }
    }
}

impl<C: std::fmt::Debug> std::fmt::Debug for RlweCiphertext<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RlweCiphertext")
            .field("ctx", &self.ctx)
            .field("key_id", &self.key_id)
            .field("polys", &self.polys)
            .field("level", &self.level)
            .field("seed", &self.seed)
            .finish()
    }
}

impl<C: Scheme> RlweCiphertext<C> {
    /// The ciphertext of `polys` at `level` under the secret `key_id` in
    /// `ctx`; `seed` for a fresh symmetric encryption's c1.
    pub fn new(
        ctx: &Arc<C>,
        key_id: KeyId,
        polys: Vec<Poly>,
        level: usize,
        seed: Option<Seed>,
    ) -> RlweCiphertext<C> {
        RlweCiphertext {
            ctx: ctx.clone(),
            key_id,
            polys,
            level,
            seed,
        }
    }

    /// The polynomials (c0, c1[, c2]) over the level's primes, phase
    /// c0 + c1 s (+ c2 s^2): what a transition reads.
    pub fn polys(&self) -> &[Poly] {
        &self.polys
    }

    /// The level: number of ciphertext primes - 1.
    pub fn level(&self) -> usize {
        self.level
    }

    /// Number of components (2, or 3 after a multiplication before
    /// relinearization).
    pub fn size(&self) -> usize {
        self.polys.len()
    }

    /// The parameters this ciphertext belongs to.
    pub fn context(&self) -> &Arc<C> {
        &self.ctx
    }

    /// The identity of the secret key this ciphertext is under.
    pub fn key_id(&self) -> KeyId {
        self.key_id
    }

    /// The ciphertext's bytes: the head ([`Scheme::begin_ciphertext`]),
    /// the scheme's `fields` (its noise bookkeeping), then the components
    /// ([`write_components`](crate::rlwe::write_components): the seed of c1
    /// in place of c1 for a fresh symmetric encryption).
    pub fn to_bytes_with(&self, fields: &[u8]) -> Vec<u8> {
        let mut out = self
            .ctx
            .begin_ciphertext(self.key_id, self.level, self.polys.len());
        out.extend_from_slice(fields);
        write_components(&mut out, &self.polys, self.seed.as_ref());
        out
    }

    /// Ok when the ciphertext has `size` components
    /// ([`Error::CiphertextSize`] otherwise).
    pub fn expect_size(&self, size: usize) -> Result<()> {
        if self.polys.len() != size {
            return Err(Error::CiphertextSize {
                expected: size,
                got: self.polys.len(),
            });
        }
        Ok(())
    }

    /// (c0, c1) + switch(c2 : s^2 -> s): the two components of a product
    /// (c0, c1, c2) under s again, after checking `rk` against this
    /// ciphertext and its size; the scheme adds the key switch's noise.
    pub fn relinearized(&self, rk: &RelinKey<C>) -> Result<Vec<Poly>> {
        rk.check(self)?;
        self.expect_size(3)?;
        let [c0, c1, c2] = [0, 1, 2].map(|i| &self.polys[i]);
        let (u0, u1) = self.ctx.key_switch().relinearize(rk.key(), [c0, c1, c2])?;
        Ok(vec![u0, u1])
    }

    /// Ok when the parties of `session` can decrypt this ciphertext
    /// together: two components, under the session's collective key.
    pub fn check_threshold(&self, session: &Session) -> Result<()> {
        self.expect_size(2)?;
        session
            .key_id()
            .check("the ciphertext to decrypt", self.key_id)
    }

    /// Every component divided by `div` (rounded: [`DivRound::apply_joined`]),
    /// towards the level below: modulus switching or rescaling.
    pub fn divided_components(&self, div: &DivRound) -> Result<Vec<Poly>> {
        self.polys.iter().map(|c| div.apply_joined(c)).collect()
    }

    /// Sample extraction: coefficients `indices` of the phase c0 + c1 s as
    /// LWE ciphertexts modulo 2^64 under the secret's LWE key
    /// ([`RlweSecret::lwe_key`](crate::RlweSecret::lwe_key)), with this
    /// ciphertext's identity. Needs two components over one prime (the
    /// scheme brings the ciphertext to level 0 first).
    pub fn sample_extract(&self, indices: &[usize]) -> Result<Vec<LweCiphertext>> {
        let [c0, c1] = &self.polys[..] else {
            return Err(Error::InvalidParameter(format!(
                "sample extraction needs 2 components, not {}",
                self.polys.len()
            )));
        };
        LweCiphertext::sample_extract_rlwe(c0, c1, indices, self.key_id)
    }

    /// Ok when `other` belongs to this ciphertext's parameter set and
    /// secret key: checked before any work by operations on two.
    pub fn check_pair(&self, other: &RlweCiphertext<C>) -> Result<()> {
        check_same_context(&self.ctx, &other.ctx)?;
        self.key_id.check("second operand", other.key_id)
    }
}
