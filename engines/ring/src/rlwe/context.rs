//! The part of a scheme's context that every RLWE scheme shares: the
//! key-switching context (Q, P, digits, noise) and one table per level, and
//! the [`Scheme`] a context implements for the shared keys and formats.

use std::sync::Arc;

use crate::basis::RnsBasis;
use crate::error::{Error, Result};
use crate::keyswitch::KeySwitchContext;
use crate::poly::galois_power;
use crate::rlwe::keys::PublicKey;
use crate::sampling::NoiseDistribution;
use crate::serialize::{ObjectKind, Reader};

/// The tables of one level of a scheme: built over the first `level + 1`
/// primes of Q.
pub trait LevelTables {
    /// The level's ciphertext basis Q_l.
    fn basis(&self) -> &Arc<RnsBasis>;
}

/// The levels and the key switching of an RLWE context. A scheme's context
/// holds one and dereferences to it, so that its accessors answer for the
/// scheme too.
pub struct RlweContext<L> {
    key_switch: KeySwitchContext,
    levels: Vec<L>,
}

impl<L: LevelTables> RlweContext<L> {
    /// The context of `key_switch` with `levels` (level l at index l, the
    /// last over all of Q); an error when there is none.
    pub fn new(key_switch: KeySwitchContext, levels: Vec<L>) -> Result<RlweContext<L>> {
        if levels.is_empty() {
            return Err(Error::InvalidParameter("a context without levels".into()));
        }
        Ok(RlweContext { key_switch, levels })
    }

    /// Ring degree n.
    pub fn n(&self) -> usize {
        self.key_switch.q().n()
    }

    /// The ciphertext primes q_0..q_L.
    pub fn q_primes(&self) -> Vec<u64> {
        self.key_switch.q().primes()
    }

    /// The special (key-switching) primes.
    pub fn p_primes(&self) -> Vec<u64> {
        self.key_switch.p().primes()
    }

    /// log2(Q P), the figure the security standard bounds.
    pub fn log2_qp(&self) -> f64 {
        self.key_switch.qp().log2_product()
    }

    /// The highest level L (fresh ciphertexts): number of ciphertext primes - 1.
    pub fn max_level(&self) -> usize {
        self.levels.len() - 1
    }

    /// The tables of `level`; an error above the highest.
    pub fn level(&self, level: usize) -> Result<&L> {
        self.levels.get(level).ok_or_else(|| {
            Error::InvalidParameter(format!(
                "level {level} does not exist (max {})",
                self.max_level()
            ))
        })
    }

    /// The basis of the highest level (all of Q), which secret keys are
    /// held over.
    pub fn top_basis(&self) -> &Arc<RnsBasis> {
        self.levels[self.max_level()].basis()
    }

    /// Key switching: relinearization and Galois keys live here.
    pub fn key_switch(&self) -> &KeySwitchContext {
        &self.key_switch
    }

    /// The error distribution of encryption and keys.
    pub fn noise(&self) -> NoiseDistribution {
        self.key_switch.noise()
    }

    /// The Galois element of a rotation by `step` with `generator` (3 for
    /// BFV's rows, 5 for CKKS's slots; [`galois_power`]).
    pub fn rotation_element(&self, generator: u64, step: i64) -> Result<usize> {
        galois_power(self.n(), generator, step)
    }

    /// The Galois element 2n - 1 (X -> X^-1): BFV's row swap, CKKS's
    /// conjugation.
    pub fn inverse_element(&self) -> usize {
        2 * self.n() - 1
    }

    /// The elements of rotations by each of `steps` with `generator` and,
    /// when `inverse`, of X -> X^-1, in that order.
    pub fn galois_elements(
        &self,
        generator: u64,
        steps: &[i64],
        inverse: bool,
    ) -> Result<Vec<usize>> {
        let mut elements = steps
            .iter()
            .map(|&s| self.rotation_element(generator, s))
            .collect::<Result<Vec<_>>>()?;
        if inverse {
            elements.push(self.inverse_element());
        }
        Ok(elements)
    }

    /// Debug output of a scheme's context `name`: its parameters, Q and P.
    pub fn fmt_debug(
        &self,
        name: &str,
        params: &dyn std::fmt::Debug,
        f: &mut std::fmt::Formatter<'_>,
    ) -> std::fmt::Result {
        f.debug_struct(name)
            .field("params", params)
            .field("q", &self.q_primes())
            .field("p", &self.p_primes())
            .finish_non_exhaustive()
    }
}

/// What a scheme's context (BFV, CKKS) gives the shared RLWE layer: its
/// parameters, levels, error type, the basis of its public keys, its
/// format's header and its public-key encryption. The keys of
/// [`crate::rlwe`] are generic over it.
pub trait Scheme: std::ops::Deref<Target = RlweContext<Self::Level>> + Sized {
    /// The scheme's parameter set: contexts of equal sets are
    /// interchangeable.
    type Params: PartialEq;
    /// The tables of one level.
    type Level: LevelTables;
    /// The scheme's error, which every ring error converts into.
    type Error: From<Error>;
    /// What public-key encryption takes.
    type Plaintext;
    /// What public-key encryption returns.
    type Ciphertext;

    /// The parameter set.
    fn params(&self) -> &Self::Params;

    /// The basis of public keys: Q (BFV) or Q P (CKKS, which encrypts
    /// modulo Q_l P and divides by P).
    fn public_key_basis(&self) -> &Arc<RnsBasis>;

    /// The generator of rotations (3 for BFV's rows, 5 for CKKS's slots).
    const ROTATION_GENERATOR: u64;

    /// Appends the header of an object of `kind` (magic, version, kind)
    /// and the parameter set.
    fn write_header(params: &Self::Params, kind: ObjectKind, out: &mut Vec<u8>);

    /// Reads the header of an object of `kind` and its parameter set, with
    /// the scheme's version rules and checks.
    fn read_header(
        bytes: &[u8],
        kind: ObjectKind,
    ) -> std::result::Result<(Reader<'_>, Self::Params), Self::Error>;

    /// Public-key encryption of `pt` under `pk`.
    fn encrypt_public(
        pk: &PublicKey<Self>,
        pt: &Self::Plaintext,
    ) -> std::result::Result<Self::Ciphertext, Self::Error>;

    /// The header and the parameter set of an object of `kind` made in this
    /// context.
    fn begin(&self, kind: ObjectKind) -> Vec<u8> {
        let mut out = Vec::new();
        Self::write_header(self.params(), kind, &mut out);
        out
    }

    /// Reads the header of an object of `kind`, whose parameter set must be
    /// this context's ([`Error::ParameterMismatch`] otherwise); the reader
    /// is left at the object's body.
    fn open<'a>(
        &self,
        bytes: &'a [u8],
        kind: ObjectKind,
    ) -> std::result::Result<Reader<'a>, Self::Error> {
        let (r, params) = Self::read_header(bytes, kind)?;
        if params != *self.params() {
            return Err(Error::ParameterMismatch.into());
        }
        Ok(r)
    }
}

/// Ok when both contexts belong to the same parameter set.
pub fn check_same_context<C: Scheme>(a: &Arc<C>, b: &Arc<C>) -> Result<()> {
    if Arc::ptr_eq(a, b) || a.params() == b.params() {
        Ok(())
    } else {
        Err(Error::ParameterMismatch)
    }
}
