//! The part of a scheme's context that every RLWE scheme shares: its
//! parameter set, the key-switching context (Q, P, digits, noise) and one
//! table per level, and the [`Scheme`] a context implements for the shared
//! keys and formats.

use std::sync::{Arc, Mutex, Weak};

use crate::basis::RnsBasis;
use crate::error::{Error, Result};
use crate::key_id::KeyId;
use crate::keyswitch::KeySwitchContext;
use crate::poly::galois_power;
use crate::rlwe::keys::PublicKey;
use crate::sampling::NoiseDistribution;
use crate::serialize::{ObjectKind, Reader};

/// The parameters, levels and key switching of an RLWE context. A
/// scheme's context holds one (with the scheme's parameter set `P` and
/// per-level tables `L`) and dereferences to it, so that its accessors
/// answer for the scheme too.
pub struct RlweContext<P, L> {
    params: P,
    key_switch: KeySwitchContext,
    levels: Vec<L>,
}

impl<P, L> RlweContext<P, L> {
    /// The context of `params` with `key_switch`, level l's tables built
    /// by `level` over the prefix q_0..q_l of Q (level 0 first; the last
    /// basis is Q itself).
    pub fn new<E: From<Error>>(
        params: P,
        key_switch: KeySwitchContext,
        level: impl FnMut(Arc<RnsBasis>) -> std::result::Result<L, E>,
    ) -> std::result::Result<RlweContext<P, L>, E> {
        let levels = key_switch
            .q()
            .prefixes()?
            .into_iter()
            .map(level)
            .collect::<std::result::Result<Vec<_>, E>>()?;
        Ok(RlweContext {
            params,
            key_switch,
            levels,
        })
    }

    /// The parameter set.
    pub fn params(&self) -> &P {
        &self.params
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
        self.key_switch.q()
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
    pub fn fmt_debug(&self, name: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result
    where
        P: std::fmt::Debug,
    {
        f.debug_struct(name)
            .field("params", &self.params)
            .field("q", &self.q_primes())
            .field("p", &self.p_primes())
            .finish_non_exhaustive()
    }
}

/// What a scheme's context (BFV, CKKS) gives the shared RLWE layer: its
/// parameters, levels, error type, the basis of its public keys, its
/// format's header and its public-key encryption. The keys of
/// [`crate::rlwe`] are generic over it.
pub trait Scheme: std::ops::Deref<Target = RlweContext<Self::Params, Self::Level>> + Sized {
    /// The scheme's parameter set: contexts of equal sets are
    /// interchangeable.
    type Params: PartialEq;
    /// The tables of one level.
    type Level;
    /// The scheme's error, which every ring error converts into.
    type Error: From<Error>;
    /// What public-key encryption takes.
    type Plaintext;
    /// What public-key encryption returns.
    type Ciphertext;

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

    /// The head of a ciphertext's bytes: the header, then
    /// id | level: u8 | size: u8; the scheme's fields and the components
    /// ([`write_components`](crate::rlwe::write_components)) follow.
    fn begin_ciphertext(&self, id: KeyId, level: usize, size: usize) -> Vec<u8> {
        let mut out = self.begin(ObjectKind::Ciphertext);
        id.write(&mut out);
        out.push(level as u8);
        out.push(size as u8);
        out
    }

    /// Reads [`begin_ciphertext`](Self::begin_ciphertext) output (through
    /// [`open`](Self::open)): the identity, a level of this context and a
    /// size of 2 or 3; the reader is left at the scheme's fields.
    fn open_ciphertext<'a>(
        &self,
        bytes: &'a [u8],
    ) -> std::result::Result<(Reader<'a>, KeyId, usize, usize), Self::Error> {
        let mut r = self.open(bytes, ObjectKind::Ciphertext)?;
        let id = KeyId::read(&mut r)?;
        let level = r.u8()? as usize;
        if level > self.max_level() {
            return Err(Error::Malformed(format!(
                "level {level} above the maximum {}",
                self.max_level()
            ))
            .into());
        }
        let size = r.u8()? as usize;
        if !(2..=3).contains(&size) {
            return Err(Error::Malformed(format!("{size} components; 2 or 3 expected")).into());
        }
        Ok((r, id, level, size))
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

/// The contexts of one scheme alive in a process, one per parameter set.
/// Building a context precomputes the NTT tables of every prime, which
/// costs more than reading a key; loading keys or ciphertexts again under
/// an equal set reuses the live context. A context is freed when its last
/// user drops it.
pub struct Contexts<C>(Mutex<Vec<Weak<C>>>);

impl<C: Scheme> Contexts<C> {
    /// An empty registry (for a `static`).
    pub const fn new() -> Contexts<C> {
        Contexts(Mutex::new(Vec::new()))
    }

    /// The live context of `params`, or a new one from `build`. The caller
    /// validates `params` first: equal sets may differ in whether they
    /// allow being insecure.
    pub fn get_or_build<E>(
        &self,
        params: &C::Params,
        build: impl FnOnce() -> std::result::Result<Arc<C>, E>,
    ) -> std::result::Result<Arc<C>, E> {
        // Held while building, so that equal sets are built once.
        let mut live = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        live.retain(|c| c.strong_count() > 0);
        if let Some(ctx) = live
            .iter()
            .filter_map(Weak::upgrade)
            .find(|c| c.params() == params)
        {
            return Ok(ctx);
        }
        let ctx = build()?;
        live.push(Arc::downgrade(&ctx));
        Ok(ctx)
    }
}

impl<C: Scheme> Default for Contexts<C> {
    fn default() -> Contexts<C> {
        Contexts::new()
    }
}
