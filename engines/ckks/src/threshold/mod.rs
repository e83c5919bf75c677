//! Threshold CKKS: collective keys made by N parties without a dealer, and
//! decryption by any t of them, over the protocols of
//! [`triskel_ring::threshold`] (whose documentation gives the design and the
//! trust model: passive, semi-honest parties).
//!
//! The collective public key is modulo Q P like the engine's own
//! ([`public_key_gen`]); relinearization and Galois keys are those of the
//! ring protocols.
//!
//! **Flooding.** Each party floods its decryption share with the engine's
//! shared-decryption flood ([`Flooding`]: a Gaussian of deviation
//! sqrt(24 N alpha) 2^(s / 2) B, the IND-CPA-D bound of Li, Micciancio,
//! Schultz and Sorrell that the engine's own flooded decryption uses), for
//! B = the ciphertext's error bound times 2^[`collective_noise_margin_log2`]
//! (the engine's bounds assume one ternary secret). One honest party's flood
//! alone meets the bound. The uniform statistical smudging of BFV
//! ([`triskel_ring::Smudging`], 2^-s in statistical distance) would need a
//! flood of n B 2^s, which no CKKS scale leaves any precision above. The
//! price here is precision too: every slot gains an error of deviation
//! sqrt(n t) sigma / scale (t parties), which the returned plaintext's noise
//! bound includes ([`ThresholdDecryption::precision_bits`]).

use std::sync::Arc;

use triskel_ring::rlwe;
use triskel_ring::threshold::{
    collective_noise_margin_log2, CiphertextId, Decryption, GaloisKeyGen, PublicKeyGen,
    RelinKeyGen, Session, Share, ThresholdShare,
};
use triskel_ring::{Flood, RnsBasis};

use crate::ciphertext::Ciphertext;
use crate::context::CkksContext;
use crate::error::{Error, Result};
use crate::flooding::Flooding;
#[cfg(doc)]
use crate::keys::{GaloisKeys, PublicKey, RelinKey};
use crate::noise::{Noise, TAIL};
use crate::plaintext::Plaintext;

/// The basis the parties' threshold shares are made over (Q || P).
pub fn share_basis(ctx: &CkksContext) -> &Arc<RnsBasis> {
    rlwe::threshold::share_basis(ctx)
}

/// The collective public key protocol for `ctx`: modulo Q P, like the
/// engine's public keys.
pub fn public_key_gen(ctx: &CkksContext, session: &Session) -> PublicKeyGen {
    rlwe::threshold::public_key_gen(ctx, session)
}

/// The collective relinearization key protocol for `ctx`.
pub fn relin_key_gen<'a>(ctx: &'a CkksContext, session: &Session) -> RelinKeyGen<'a> {
    rlwe::threshold::relin_key_gen(ctx, session)
}

/// The collective Galois key protocols for left rotations by each of
/// `steps` and, when `conjugate`, complex conjugation: one per distinct
/// element, with it. The keys they make assemble into
/// [`GaloisKeys::from_collective`] (and [`PublicKeyGen`]'s and
/// [`RelinKeyGen`]'s into [`PublicKey::from_collective`] and
/// [`RelinKey::from_collective`]).
pub fn galois_key_gen<'a>(
    ctx: &'a CkksContext,
    session: &Session,
    steps: &[i64],
    conjugate: bool,
) -> Result<Vec<(usize, GaloisKeyGen<'a>)>> {
    Ok(rlwe::threshold::galois_key_gen(
        ctx, session, steps, conjugate,
    )?)
}

/// The weakest statistical security a threshold decryption accepts, in
/// bits (OpenFHE's floor for flooded CKKS decryptions).
pub const MIN_STATISTICAL_SECURITY: u32 = 30;

/// Threshold decryption of one CKKS ciphertext by a set of at least t
/// parties (module documentation).
#[derive(Debug)]
pub struct ThresholdDecryption<'a> {
    ct: &'a Ciphertext,
    inner: Decryption<'a>,
    flood_error: f64,
}

impl<'a> ThresholdDecryption<'a> {
    /// The decryption of `ct` (2 components, under the session's collective
    /// key), named by `id`, by the parties `set`, each party flooding with
    /// the engine's [`Flooding`] for B = the ciphertext's error bound times
    /// 2^[`collective_noise_margin_log2`], `statistical_security` bits (at
    /// least 30, OpenFHE's minimum; the engine's default [`crate::DEFAULT_STATISTICAL_SECURITY`])
    /// and `decryptions` releases per share (alpha). Refused when the
    /// message, B and the floods' tails could reach Q_l / 2, or when the
    /// deviation is above the sampler's 2^59.
    pub fn new(
        ct: &'a Ciphertext,
        session: &Session,
        set: &[u16],
        id: CiphertextId,
        statistical_security: u32,
        decryptions: u64,
    ) -> Result<ThresholdDecryption<'a>> {
        ct.check_threshold(session)?;
        if statistical_security < MIN_STATISTICAL_SECURITY {
            return Err(Error::InvalidParameters(format!(
                "statistical security {statistical_security} is below \
                 {MIN_STATISTICAL_SECURITY} bits"
            )));
        }
        let n = ct.ctx.n();
        let bound_log2 =
            (ct.noise.error.log2() + collective_noise_margin_log2(session.parties())).max(0.0);
        let flooding = Flooding {
            noise_bound_log2: bound_log2,
            statistical_security,
            decryptions,
        };
        let flood = Flood::Gaussian {
            sigma: flooding.sigma(n)?,
        };
        flood.check()?;
        let set = session.decryption_set(set)?;
        let lv = ct.ctx.level(ct.level)?;
        let needed =
            ct.noise.message + bound_log2.exp2() + set.len() as f64 * flood.bound_log2().exp2();
        if needed >= (lv.log2_q - 1.0).exp2() {
            return Err(Error::MessageOverflow {
                needed_log2: needed.log2(),
                q_log2: lv.log2_q,
            });
        }
        let inner = Decryption::with_flood(
            session,
            &set,
            id,
            [&ct.polys[0], &ct.polys[1]],
            None,
            flood,
            decryptions,
        )?;
        // Each slot: the sum of t floods' embeddings, of deviation
        // sqrt(n t) sigma, bounded like the engine's fresh errors.
        let flood_error = TAIL * (n as f64 * set.len() as f64).sqrt() * flood.deviation();
        Ok(ThresholdDecryption {
            ct,
            inner,
            flood_error,
        })
    }

    /// The bound on every slot's error after decryption, in bits of
    /// precision: log2(scale) - log2(the ciphertext's error bound plus the
    /// floods' 6 standard deviations).
    pub fn precision_bits(&self) -> f64 {
        self.ct.scale.log2() - (self.ct.noise.error + self.flood_error).log2()
    }

    /// One party's share (counts one release on its ledger).
    pub fn share(&self, share: &ThresholdShare) -> Result<Share> {
        Ok(self.inner.share(share)?)
    }

    /// The sum of the set's shares (each checked).
    pub fn aggregate(&self, shares: &[Share]) -> Result<Share> {
        Ok(self.inner.aggregate(shares)?)
    }

    /// The plaintext, whose noise bound includes the floods.
    pub fn finish(&self, aggregate: &Share) -> Result<Plaintext> {
        let phase = self.inner.finish(aggregate)?;
        let mut poly = phase.to_poly()?;
        poly.to_ntt()?;
        let ct = self.ct;
        Ok(Plaintext {
            ctx: ct.ctx.clone(),
            poly: (*poly).clone(),
            level: ct.level,
            scale: ct.scale,
            noise: Noise::new(ct.noise.message, ct.noise.error + self.flood_error),
        })
    }
}

#[cfg(test)]
mod tests;
