//! The collective key protocols of [`crate::threshold`] set up for a
//! scheme's context: the bases, key-switching context and Galois elements
//! each protocol takes come from the context, so that a scheme only names
//! its keys.

use std::sync::Arc;

use crate::basis::RnsBasis;
use crate::error::Result;
use crate::rlwe::context::Scheme;
use crate::threshold::{GaloisKeyGen, PublicKeyGen, RelinKeyGen, Session};

/// The basis the parties' threshold shares are made over (Q || P: every
/// level is a prefix of it).
pub fn share_basis<C: Scheme>(ctx: &C) -> &Arc<RnsBasis> {
    ctx.key_switch().qp()
}

/// The collective public key protocol for `ctx`, over the scheme's
/// public-key basis ([`Scheme::public_key_basis`]).
pub fn public_key_gen<C: Scheme>(ctx: &C, session: &Session) -> PublicKeyGen {
    PublicKeyGen::new(session, ctx.public_key_basis(), ctx.noise())
}

/// The collective relinearization key protocol for `ctx`.
pub fn relin_key_gen<'a, C: Scheme>(ctx: &'a C, session: &Session) -> RelinKeyGen<'a> {
    RelinKeyGen::new(session, ctx.key_switch())
}

/// The collective Galois key protocols for rotations by each of `steps`
/// with the scheme's generator and, when `inverse`, X -> X^-1: one per
/// distinct element, with it.
pub fn galois_key_gen<'a, C: Scheme>(
    ctx: &'a C,
    session: &Session,
    steps: &[i64],
    inverse: bool,
) -> Result<Vec<(usize, GaloisKeyGen<'a>)>> {
    let elements = ctx.galois_elements(C::ROTATION_GENERATOR, steps, inverse)?;
    GaloisKeyGen::for_elements(session, ctx.key_switch(), elements)
}
