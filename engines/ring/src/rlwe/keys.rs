//! The keys of an RLWE scheme, generic over its context ([`Scheme`]):
//! public, relinearization and Galois keys, their generation from an
//! [`RlweSecret`], their identities and their serialized form.

use std::collections::BTreeMap;
use std::sync::Arc;

use zeroize::Zeroizing;

use crate::error::{Error, Result};
use crate::key_id::KeyId;
use crate::keyswitch::{KeySwitchKey, SecretKey};
use crate::rlwe::ciphertext::RlweCiphertext;
use crate::rlwe::context::{check_same_context, Scheme};
use crate::rlwe::encryption::{RlwePublicKey, RlweSecret};
use crate::sampling::Prng;
use crate::serialize::{read_galois_keys, write_galois_keys, ObjectKind, Reader};

/// Ok when `ct` belongs to the parameter set of `ctx` and to the secret key
/// `id` (that of the key an operation uses); checked before any work.
pub fn check_encrypted<C: Scheme>(ctx: &Arc<C>, id: KeyId, ct: &RlweCiphertext<C>) -> Result<()> {
    check_same_context(ctx, &ct.ctx)?;
    id.check("ciphertext", ct.key_id)
}

/// The ring part of a scheme's key: what [`Key`] holds, checks and
/// serializes after the scheme's header.
pub trait KeyBody: Clone + std::fmt::Debug + Sized {
    /// The kind of object its bytes are.
    const KIND: ObjectKind;
    /// The name of the key type, for `Debug`.
    const NAME: &'static str;
    /// The identity of the secret key it belongs to.
    fn id(&self) -> KeyId;
    /// Appends its bytes.
    fn write_body(&self, out: &mut Vec<u8>);
    /// Reads [`write_body`](Self::write_body) output for `ctx`.
    fn read_body<C: Scheme>(r: &mut Reader<'_>, ctx: &C) -> Result<Self>;
    /// Regenerates now what a loaded key regenerates from its seeds on
    /// first use.
    fn expand(&self) {}
}

/// A set of Galois keys s(X^g) -> s by element g, with the identity of s
/// (which every key of the set carries, and an empty set too).
#[derive(Clone, Debug)]
pub struct GaloisSet {
    id: KeyId,
    keys: BTreeMap<usize, KeySwitchKey>,
}

impl KeyBody for RlwePublicKey {
    const KIND: ObjectKind = ObjectKind::Public;
    const NAME: &'static str = "PublicKey";

    fn id(&self) -> KeyId {
        RlwePublicKey::id(self)
    }

    /// id | seed of a | b.
    fn write_body(&self, out: &mut Vec<u8>) {
        self.write(out);
    }

    fn read_body<C: Scheme>(r: &mut Reader<'_>, ctx: &C) -> Result<Self> {
        RlwePublicKey::read(r, ctx.public_key_basis())
    }
}

impl KeyBody for KeySwitchKey {
    const KIND: ObjectKind = ObjectKind::Relin;
    const NAME: &'static str = "RelinKey";

    fn id(&self) -> KeyId {
        KeySwitchKey::id(self)
    }

    /// len: u32 | ring key (seed-compressed).
    fn write_body(&self, out: &mut Vec<u8>) {
        self.write_blob(out);
    }

    fn read_body<C: Scheme>(r: &mut Reader<'_>, ctx: &C) -> Result<Self> {
        KeySwitchKey::read_blob(r, ctx.key_switch())
    }

    fn expand(&self) {
        self.uniform();
    }
}

impl KeyBody for GaloisSet {
    const KIND: ObjectKind = ObjectKind::Galois;
    const NAME: &'static str = "GaloisKeys";

    fn id(&self) -> KeyId {
        self.id
    }

    /// id | count: u32 | count x (g: u32 | len: u32 | ring key), g
    /// increasing.
    fn write_body(&self, out: &mut Vec<u8>) {
        write_galois_keys(out, self.id, &self.keys);
    }

    /// Galois elements must be odd, in 3..2n and increasing (one encoding
    /// per set of keys), every key of the set's identity.
    fn read_body<C: Scheme>(r: &mut Reader<'_>, ctx: &C) -> Result<Self> {
        let (id, keys) = read_galois_keys(r, ctx.key_switch())?;
        Ok(GaloisSet { id, keys })
    }

    fn expand(&self) {
        self.keys.values().for_each(KeyBody::expand);
    }
}

/// A key of a scheme: its ring part `K` with the context it belongs to.
pub struct Key<C, K> {
    ctx: Arc<C>,
    key: K,
}

/// A public key (b, a) = (e - a s, a) in NTT form over the scheme's
/// public-key basis ([`Scheme::public_key_basis`]).
pub type PublicKey<C> = Key<C, RlwePublicKey>;

/// The relinearization key: a key-switching key from s^2 to s.
pub type RelinKey<C> = Key<C, KeySwitchKey>;

/// Galois keys s(X^g) -> s for a set of Galois elements g.
pub type GaloisKeys<C> = Key<C, GaloisSet>;

impl<C, K: Clone> Clone for Key<C, K> {
    fn clone(&self) -> Self {
        Key {
            ctx: self.ctx.clone(),
            key: self.key.clone(),
        }
    }
}

impl<C: std::fmt::Debug, K: KeyBody> std::fmt::Debug for Key<C, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(K::NAME)
            .field("ctx", &self.ctx)
            .field("key", &self.key)
            .finish()
    }
}

impl<C: Scheme, K: KeyBody> Key<C, K> {
    /// The ring part.
    pub fn key(&self) -> &K {
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

    /// Regenerates now the parts that a loaded key regenerates from their
    /// seeds on first use (so that its first use costs no more than the
    /// next).
    pub fn expand(&self) {
        self.key.expand();
    }

    /// Ok when `ct` is under this key's secret (parameter set and identity).
    pub fn check(&self, ct: &RlweCiphertext<C>) -> Result<()> {
        check_encrypted(&self.ctx, self.key.id(), ct)
    }

    /// Versioned bytes: the scheme's header, then the ring part
    /// (seed-compressed; module documentation).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }

    /// Appends [`to_bytes`](Self::to_bytes) output (to embed the key in a
    /// larger object without a copy).
    pub fn write(&self, out: &mut Vec<u8>) {
        C::write_header(self.ctx.params(), K::KIND, out);
        self.key.write_body(out);
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<C>) -> std::result::Result<Self, C::Error> {
        let mut r = ctx.open(bytes, K::KIND)?;
        let key = K::read_body(&mut r, &**ctx)?;
        r.finish()?;
        Ok(Key {
            ctx: ctx.clone(),
            key,
        })
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
        Ok(Key {
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
        Ok(Key {
            ctx: ctx.clone(),
            key,
        })
    }

    /// Public-key encryption, the scheme's ([`Scheme::encrypt_public`]).
    pub fn encrypt(&self, pt: &C::Plaintext) -> std::result::Result<C::Ciphertext, C::Error> {
        C::encrypt_public(self, pt)
    }
}

impl<C: Scheme> RelinKey<C> {
    /// The relinearization key of `secret` for `ctx`, from the OS-seeded
    /// CSPRNG.
    pub fn generate(ctx: &Arc<C>, secret: &RlweSecret) -> Result<RelinKey<C>> {
        Ok(Key {
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
        Ok(Key {
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
        let keys = secret.galois_keys(ctx.key_switch(), elements)?;
        Ok(Key {
            ctx: ctx.clone(),
            key: GaloisSet {
                id: secret.id(),
                keys,
            },
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
        Ok(Key {
            ctx: ctx.clone(),
            key: GaloisSet { id, keys },
        })
    }

    /// The Galois elements covered.
    pub fn elements(&self) -> Vec<usize> {
        self.key.keys.keys().copied().collect()
    }

    /// The key of element `g`, if covered.
    pub fn get(&self, g: usize) -> Option<&KeySwitchKey> {
        self.key.keys.get(&g)
    }

    /// The keys by element.
    pub fn keys(&self) -> &BTreeMap<usize, KeySwitchKey> {
        &self.key.keys
    }
}
