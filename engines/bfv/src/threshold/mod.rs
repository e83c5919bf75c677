//! Threshold BFV: collective keys made by N parties without a dealer, and
//! exact decryption by any t of them, over the protocols of
//! [`triskel_ring::threshold`] (whose documentation gives the design and the
//! trust model: passive, semi-honest parties).
//!
//! ```text
//! session   Session::new(N, t)                      (one party draws it, all hold it)
//! secrets   PartySecret::generate(&session, j, n)   (party j, alone)
//! keys      public_key_gen / relin_key_gen / galois_key_gen: share, aggregate, finish,
//!           then PublicKey / RelinKey / GaloisKeys ::from_collective
//! sharing   t < N: PartySecret::deal(share_basis(ctx)), ThresholdShare::from_deals
//!           t = N: ThresholdShare::additive(secret, share_basis(ctx))
//! decrypt   ThresholdDecryption::new(ct, ...): share (t parties), aggregate, finish
//! ```
//!
//! **Flooding.** Each decryption share is flooded ([`Smudging`]) for the
//! noise bound B = 10 sigma 2^margin, sigma the ciphertext's noise estimate
//! and the margin [`collective_noise_margin_log2`] for the larger secret and
//! key errors of a collective key (the engine's estimates assume one
//! ternary secret), so that the shares are within statistical distance
//! 2^-s per decryption (default s = 40) of shares computed from the result
//! alone. This needs room: the combined error must stay below Q_l / (2t),
//! checked before anything is computed. Releasing only the coefficients the
//! caller needs ([`ThresholdDecryption::new`]'s `released`) costs
//! log2(n / r) bits less.

use std::sync::Arc;

use triskel_ring::rlwe::{self, check_same_context};
use triskel_ring::threshold::{
    collective_noise_margin_log2, CiphertextId, Decryption, GaloisKeyGen, PublicKeyGen,
    PublicKeySwitch, RelinKeyGen, Session, Share, ThresholdShare,
};
use triskel_ring::{Flood, RnsBasis, Smudging};

use crate::ciphertext::{add_std, Ciphertext};
use crate::context::BfvContext;
use crate::encoding::Plaintext;
use crate::error::{Error, Result};
use crate::keys::{decode_phase, PublicKey};
#[cfg(doc)]
use crate::keys::{GaloisKeys, RelinKey};

/// Tail factor from the noise estimate (a standard deviation) to the bound
/// B that flooding hides: 10 sigma, exceeded with probability below 2^-75
/// per coefficient.
const FLOOD_TAIL: f64 = 10.0;

/// The basis the parties' threshold shares are made over (Q || P: every
/// level is a prefix of it).
pub fn share_basis(ctx: &BfvContext) -> &Arc<RnsBasis> {
    rlwe::threshold::share_basis(ctx)
}

/// The collective public key protocol for `ctx` (the top level's basis).
pub fn public_key_gen(ctx: &BfvContext, session: &Session) -> Result<PublicKeyGen> {
    Ok(rlwe::threshold::public_key_gen(ctx, session))
}

/// The collective relinearization key protocol for `ctx`.
pub fn relin_key_gen<'a>(ctx: &'a BfvContext, session: &Session) -> RelinKeyGen<'a> {
    rlwe::threshold::relin_key_gen(ctx, session)
}

/// The collective Galois key protocols for row rotations by each of
/// `steps` and, when `row_swap`, the row swap: one per distinct element,
/// with it. The keys they make assemble into [`GaloisKeys::from_collective`]
/// (and [`PublicKeyGen`]'s and [`RelinKeyGen`]'s into
/// [`PublicKey::from_collective`] and [`RelinKey::from_collective`]).
pub fn galois_key_gen<'a>(
    ctx: &'a BfvContext,
    session: &Session,
    steps: &[i64],
    row_swap: bool,
) -> Result<Vec<(usize, GaloisKeyGen<'a>)>> {
    Ok(rlwe::threshold::galois_key_gen(
        ctx, session, steps, row_swap,
    )?)
}

/// Exact threshold decryption of one BFV ciphertext by a set of at least t
/// parties (module documentation).
#[derive(Debug)]
pub struct ThresholdDecryption<'a> {
    ct: &'a Ciphertext,
    inner: Decryption<'a>,
}

impl<'a> ThresholdDecryption<'a> {
    /// The decryption of `ct` (2 components, under the session's collective
    /// key), named by `id` (the digest its holder already has, such as an
    /// attested output's, or [`CiphertextId::of`] its components), by the
    /// parties `set`, releasing the coefficients `released` (increasing;
    /// None: all, as slot decoding needs), for `decryptions` such releases
    /// per share (alpha) at `statistical_security` bits. Refused when the
    /// flooding leaves no room below Q_l / (2t).
    pub fn new(
        ct: &'a Ciphertext,
        session: &Session,
        set: &[u16],
        id: CiphertextId,
        released: Option<&[usize]>,
        statistical_security: u32,
        decryptions: u64,
    ) -> Result<ThresholdDecryption<'a>> {
        let (smudging, set) = flooding_for(
            ct,
            session,
            set,
            released,
            statistical_security,
            decryptions,
        )?;
        let inner = Decryption::new(
            session,
            &set,
            id,
            [&ct.polys[0], &ct.polys[1]],
            released,
            smudging,
        )?;
        Ok(ThresholdDecryption { ct, inner })
    }

    /// The decryption set, sorted.
    pub fn set(&self) -> &[u16] {
        self.inner.set()
    }

    /// Each party's flood (uniform on [-2^f, 2^f]).
    pub fn flood(&self) -> Flood {
        self.inner.flood()
    }

    /// One party's share (counts one release on its ledger).
    pub fn share(&self, share: &ThresholdShare) -> Result<Share> {
        Ok(self.inner.share(share)?)
    }

    /// The sum of the set's shares (each checked: session, key, this
    /// ciphertext, the set; no party twice, none missing).
    pub fn aggregate(&self, shares: &[Share]) -> Result<Share> {
        Ok(self.inner.aggregate(shares)?)
    }

    /// The released coefficients of the plaintext (mod t), in the order
    /// of `released`.
    pub fn finish_coefficients(&self, aggregate: &Share) -> Result<Vec<u64>> {
        let phase = self.inner.finish(aggregate)?;
        let limbs: Vec<&[u64]> = (0..phase.basis().len()).map(|i| phase.limb(i)).collect();
        Ok(decode_phase(&self.ct.ctx, self.ct.level, &limbs)?.to_vec())
    }

    /// The whole plaintext (every coefficient released).
    pub fn finish(&self, aggregate: &Share) -> Result<Plaintext> {
        if self.ct.ctx.n() != self.inner.released_count() {
            return Err(Error::InvalidParameters(
                "only some coefficients were released: use finish_coefficients".into(),
            ));
        }
        let coeffs = self.finish_coefficients(aggregate)?;
        Ok(Plaintext::from_reduced(&self.ct.ctx, coeffs))
    }
}

/// Re-encryption of one BFV ciphertext under the collective key as a
/// ciphertext under another public key (a client's), by a set of at least t
/// parties: the public-key switch of [`triskel_ring::threshold`], each
/// party flooding all n coefficients like [`ThresholdDecryption`].
#[derive(Debug)]
pub struct ThresholdReencryption<'a> {
    ct: &'a Ciphertext,
    to: &'a PublicKey,
    inner: PublicKeySwitch<'a>,
    noise_log2: f64,
}

impl<'a> ThresholdReencryption<'a> {
    /// The re-encryption of `ct` (2 components, under the session's key,
    /// named by `id`) under `to` by the parties `set`, for `decryptions`
    /// releases per share at `statistical_security` bits. Refused when the
    /// result would not decrypt (no room below Q_l / (2t) for the floods).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ct: &'a Ciphertext,
        session: &Session,
        set: &[u16],
        id: CiphertextId,
        to: &'a PublicKey,
        statistical_security: u32,
        decryptions: u64,
    ) -> Result<ThresholdReencryption<'a>> {
        check_same_context(&ct.ctx, to.context())?;
        let (smudging, set) =
            flooding_for(ct, session, set, None, statistical_security, decryptions)?;
        let inner = PublicKeySwitch::new(
            session,
            &set,
            id,
            [&ct.polys[0], &ct.polys[1]],
            to.key(),
            smudging,
            ct.ctx.noise(),
        )?;
        let Flood::Uniform { log2_bound: f } = inner.flood() else {
            return Err(Error::InvalidParameters(
                "a uniform flood is expected".into(),
            ));
        };
        // The floods' sum (uniform: deviation 2^f / sqrt(3) each), the
        // parties' u (b' + a' s') under the target and the input's noise.
        let parties = (set.len() as f64).log2();
        let floods = f as f64 - 0.5 * 3f64.log2() + 0.5 * parties;
        let sigma = ct.ctx.noise().variance().sqrt();
        let fresh = crate::params::public_fresh_noise_log2(ct.ctx.n(), sigma) + 0.5 * parties;
        let input = smudging.noise_bound_log2 - FLOOD_TAIL.log2();
        let noise_log2 = add_std(add_std(input, floods), fresh);
        Ok(ThresholdReencryption {
            ct,
            to,
            inner,
            noise_log2,
        })
    }

    /// One party's share (counts one release on its ledger).
    pub fn share(&self, share: &ThresholdShare) -> Result<Share> {
        Ok(self.inner.share(share)?)
    }

    /// The sum of the set's shares (each checked).
    pub fn aggregate(&self, shares: &[Share]) -> Result<Share> {
        Ok(self.inner.aggregate(shares)?)
    }

    /// The ciphertext under the target key.
    pub fn finish(&self, aggregate: &Share) -> Result<Ciphertext> {
        let polys = self.inner.finish(aggregate)?;
        Ciphertext::new(
            &self.ct.ctx,
            self.to.id(),
            polys.into(),
            self.ct.level,
            self.noise_log2,
            None,
        )
        .checked("re-encrypt")
    }
}

/// The smudging of a threshold decryption or re-encryption of `ct` (noise
/// bound from its estimate and the collective margin) and the checked set,
/// after checking the ciphertext and the modulus room for `released`
/// coefficients (None: all).
fn flooding_for(
    ct: &Ciphertext,
    session: &Session,
    set: &[u16],
    released: Option<&[usize]>,
    statistical_security: u32,
    decryptions: u64,
) -> Result<(Smudging, Vec<u16>)> {
    ct.check_threshold(session)?;
    let smudging = Smudging {
        noise_bound_log2: (ct.noise_estimate_log2()
            + FLOOD_TAIL.log2()
            + collective_noise_margin_log2(session.parties()))
        .max(0.0),
        statistical_security,
        decryptions,
    };
    let lv = ct.ctx.level(ct.level)?;
    let count = released.map_or(ct.ctx.n(), <[usize]>::len);
    // Correct while |error| < Q / (2t) - t (the rounding of the scaled
    // message), with a bit of margin.
    let room = lv.log2_q - (ct.ctx.plain_modulus() as f64).log2() - 1.1;
    let set = session.decryption_set(set)?;
    smudging.check_room(count, set.len(), room)?;
    Ok((smudging, set))
}

#[cfg(test)]
mod tests;
