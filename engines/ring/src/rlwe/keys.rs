//! The keys of an RLWE scheme, generic over its context ([`Scheme`]):
//! public, relinearization and Galois keys, their generation from an
//! [`RlweSecret`], their identities and their serialized form.

use std::collections::BTreeMap;
use std::sync::Arc;

use zeroize::Zeroizing;

use crate::error::{Error, Result};
use crate::key_id::KeyId;
use crate::keyswitch::{KeySwitchKey, SecretKey};
use crate::rlwe::context::{check_same_context, Scheme};
use crate::rlwe::encryption::{RlwePublicKey, RlweSecret};
use crate::sampling::Prng;
use crate::serialize::{read_galois_keys, write_galois_keys, ObjectKind};

/// A value encrypted under a secret key of a context (a scheme's
/// ciphertext): what keys check before they are used on it.
pub trait Encrypted<C> {
    /// The context it belongs to.
    fn context(&self) -> &Arc<C>;
    /// The identity of the secret key it is under.
    fn key_id(&self) -> KeyId;
}

/// Ok when `ct` belongs to the parameter set of `ctx` and to the secret key
/// `id` (that of the key an operation uses); checked before any work.
pub fn check_encrypted<C: Scheme>(ctx: &Arc<C>, id: KeyId, ct: &impl Encrypted<C>) -> Result<()> {
    check_same_context(ctx, ct.context())?;
    id.check("ciphertext", ct.key_id())
}

/// A public key (b, a) = (e - a s, a) in NTT form over the scheme's
/// public-key basis ([`Scheme::public_key_basis`]).
pub struct PublicKey<C> {
    ctx: Arc<C>,
    key: RlwePublicKey,
}

/// The relinearization key (s^2 -> s).
pub struct RelinKey<C> {
    ctx: Arc<C>,
    key: KeySwitchKey,
}

/// Galois keys s(X^g) -> s for a set of Galois elements g, with the
/// identity of s (which every key of the set carries, and an empty set too).
pub struct GaloisKeys<C> {
    ctx: Arc<C>,
    id: KeyId,
    keys: BTreeMap<usize, KeySwitchKey>,
}

impl<C> Clone for PublicKey<C> {
    fn clone(&self) -> Self {
        PublicKey {
            ctx: self.ctx.clone(),
            key: self.key.clone(),
        }
    }
}

impl<C> Clone for RelinKey<C> {
    fn clone(&self) -> Self {
        RelinKey {
            ctx: self.ctx.clone(),
            key: self.key.clone(),
        }
    }
}

impl<C> Clone for GaloisKeys<C> {
    fn clone(&self) -> Self {
        GaloisKeys {
            ctx: self.ctx.clone(),
            id: self.id,
            keys: self.keys.clone(),
        }
    }
}

impl<C: std::fmt::Debug> std::fmt::Debug for PublicKey<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublicKey")
            .field("ctx", &self.ctx)
            .field("key", &self.key)
            .finish()
    }
}

impl<C: std::fmt::Debug> std::fmt::Debug for RelinKey<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelinKey")
            .field("ctx", &self.ctx)
            .field("key", &self.key)
            .finish()
    }
}

impl<C: std::fmt::Debug> std::fmt::Debug for GaloisKeys<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GaloisKeys")
            .field("ctx", &self.ctx)
            .field("id", &self.id)
            .field("keys", &self.keys)
            .finish()
    }
}

impl RlweSecret {
    /// A fresh uniform ternary secret for `ctx` (over its top basis), from
    /// the OS-seeded CSPRNG.
    pub fn generate_for<C: Scheme>(ctx: &C) -> Result<RlweSecret> {
        RlweSecret::generate(ctx.top_basis())
    }

    /// `secret` for `ctx` (with its NTT form over the top basis).
    pub fn for_context<C: Scheme>(ctx: &C, secret: SecretKey) -> Result<RlweSecret> {
        RlweSecret::new(secret, ctx.top_basis())
    }

    /// Versioned bytes of the secret for `ctx`: header | id | n x i8
    /// (keep them secret; wiped on drop).
    pub fn to_bytes<C: Scheme>(&self, ctx: &C) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(ctx.begin(ObjectKind::Secret));
        self.secret().write_ternary(&mut out);
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
    pub fn from_bytes<C: Scheme>(
        bytes: &[u8],
        ctx: &C,
    ) -> std::result::Result<RlweSecret, C::Error> {
        let mut r = ctx.open(bytes, ObjectKind::Secret)?;
        let secret = SecretKey::read_ternary(&mut r, ctx.n())?;
        r.finish()?;
        Ok(RlweSecret::for_context(ctx, secret)?)
    }
}

impl<C: Scheme> PublicKey<C> {
    /// A public key of `secret` for `ctx` over its public-key basis, with
    /// error from the context's noise, from the OS-seeded CSPRNG.
    pub fn generate(ctx: &Arc<C>, secret: &RlweSecret) -> Result<PublicKey<C>> {
        let key =
            secret.public_key_over(ctx.public_key_basis(), ctx.noise(), &mut Prng::from_os()?)?;
        Ok(PublicKey {
            ctx: ctx.clone(),
            key,
        })
    }

    /// The public key of a collective key (from the threshold protocol
    /// [`crate::threshold::PublicKeyGen`]'s `finish`), which must be over
    /// the context's public-key basis.
    pub fn from_collective(
        ctx: &Arc<C>,
        key: RlwePublicKey,
    ) -> std::result::Result<PublicKey<C>, C::Error> {
        if **key.basis() != **ctx.public_key_basis() {
            return Err(Error::ParameterMismatch.into());
        }
        Ok(PublicKey {
            ctx: ctx.clone(),
            key,
        })
    }

    /// Public-key encryption, the scheme's ([`Scheme::encrypt_public`]).
    pub fn encrypt(&self, pt: &C::Plaintext) -> std::result::Result<C::Ciphertext, C::Error> {
        C::encrypt_public(self, pt)
    }

    /// The ring key.
    pub fn key(&self) -> &RlwePublicKey {
        &self.key
    }

    /// The parameters this key belongs to.
    pub fn context(&self) -> &Arc<C> {
        &self.ctx
    }

    /// The identity of the secret key it encrypts under.
    pub fn id(&self) -> KeyId {
        self.key.id()
    }

    /// Ok when `ct` is under this key's secret (parameter set and identity).
    pub fn check(&self, ct: &impl Encrypted<C>) -> Result<()> {
        check_encrypted(&self.ctx, self.key.id(), ct)
    }

    /// Versioned bytes: header | id | seed of a | b.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.ctx.begin(ObjectKind::Public);
        self.key.write(&mut out);
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<C>) -> std::result::Result<PublicKey<C>, C::Error> {
        let mut r = ctx.open(bytes, ObjectKind::Public)?;
        let key = RlwePublicKey::read(&mut r, ctx.public_key_basis())?;
        r.finish()?;
        Ok(PublicKey {
            ctx: ctx.clone(),
            key,
        })
    }
}

impl<C: Scheme> RelinKey<C> {
    /// The relinearization key of `secret` for `ctx`, from the OS-seeded
    /// CSPRNG.
    pub fn generate(ctx: &Arc<C>, secret: &RlweSecret) -> Result<RelinKey<C>> {
        Ok(RelinKey {
            ctx: ctx.clone(),
            key: secret.relin_key(ctx.key_switch())?,
        })
    }

    /// A relinearization key assembled elsewhere (the threshold protocol
    /// [`crate::threshold::RelinKeyGen`]'s `finish`, bootstrapping keys),
    /// checked to belong to the context's key switching.
    pub fn from_collective(
        ctx: &Arc<C>,
        key: KeySwitchKey,
    ) -> std::result::Result<RelinKey<C>, C::Error> {
        ctx.key_switch().check_key(&key)?;
        Ok(RelinKey {
            ctx: ctx.clone(),
            key,
        })
    }

    /// The ring key-switching key.
    pub fn key(&self) -> &KeySwitchKey {
        &self.key
    }

    /// The parameters this key belongs to.
    pub fn context(&self) -> &Arc<C> {
        &self.ctx
    }

    /// The identity of the secret key it belongs to.
    pub fn id(&self) -> KeyId {
        self.key.id()
    }

    /// Ok when `ct` is under this key's secret (parameter set and identity).
    pub fn check(&self, ct: &impl Encrypted<C>) -> Result<()> {
        check_encrypted(&self.ctx, self.key.id(), ct)
    }

    /// Versioned, seed-compressed bytes: header | len: u32 | ring key.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.ctx.begin(ObjectKind::Relin);
        self.key.write_blob(&mut out);
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<C>) -> std::result::Result<RelinKey<C>, C::Error> {
        let mut r = ctx.open(bytes, ObjectKind::Relin)?;
        let key = KeySwitchKey::read_blob(&mut r, ctx.key_switch())?;
        r.finish()?;
        Ok(RelinKey {
            ctx: ctx.clone(),
            key,
        })
    }
}

impl<C: Scheme> GaloisKeys<C> {
    /// Galois keys of `secret` for `ctx`, one per distinct element of
    /// `elements` but 1, from the OS-seeded CSPRNG.
    pub fn generate(
        ctx: &Arc<C>,
        secret: &RlweSecret,
        elements: &[usize],
    ) -> Result<GaloisKeys<C>> {
        Ok(GaloisKeys {
            ctx: ctx.clone(),
            id: secret.id(),
            keys: secret.galois_keys(ctx.key_switch(), elements)?,
        })
    }

    /// Galois keys assembled elsewhere (the `finish` of each threshold
    /// [`crate::threshold::GaloisKeyGen`], bootstrapping keys), by element,
    /// each checked to belong to the context's key switching and to `id`.
    pub fn from_collective(
        ctx: &Arc<C>,
        id: KeyId,
        keys: impl IntoIterator<Item = (usize, KeySwitchKey)>,
    ) -> std::result::Result<GaloisKeys<C>, C::Error> {
        let keys = ctx.key_switch().check_galois_keys(id, keys)?;
        Ok(GaloisKeys {
            ctx: ctx.clone(),
            id,
            keys,
        })
    }

    /// The Galois elements covered.
    pub fn elements(&self) -> Vec<usize> {
        self.keys.keys().copied().collect()
    }

    /// The key of element `g`, if covered.
    pub fn get(&self, g: usize) -> Option<&KeySwitchKey> {
        self.keys.get(&g)
    }

    /// The keys by element.
    pub fn keys(&self) -> &BTreeMap<usize, KeySwitchKey> {
        &self.keys
    }

    /// The parameters these keys belong to.
    pub fn context(&self) -> &Arc<C> {
        &self.ctx
    }

    /// The identity of the secret key they belong to.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// Ok when `ct` is under these keys' secret (parameter set and
    /// identity).
    pub fn check(&self, ct: &impl Encrypted<C>) -> Result<()> {
        check_encrypted(&self.ctx, self.id, ct)
    }

    /// Versioned, seed-compressed bytes: header | id | count: u32 |
    /// count x (g: u32 | len: u32 | ring key), g increasing.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.ctx.begin(ObjectKind::Galois);
        write_galois_keys(&mut out, self.id, &self.keys);
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`: Galois elements
    /// must be odd, in 3..2n and increasing (one encoding per set of keys),
    /// every key of the set's identity.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<C>) -> std::result::Result<GaloisKeys<C>, C::Error> {
        let mut r = ctx.open(bytes, ObjectKind::Galois)?;
        let (id, keys) = read_galois_keys(&mut r, ctx.key_switch())?;
        r.finish()?;
        Ok(GaloisKeys {
            ctx: ctx.clone(),
            id,
            keys,
        })
    }
}
