//! Attestation identities: one key pair of each family, and their file formats.

use pqcrypto_falcon::falconpadded512 as falcon;
use pqcrypto_mldsa::mldsa65 as mldsa;
use pqcrypto_sphincsplus::sphincssha2128fsimple as slh;
use pqcrypto_traits::sign::{DetachedSignature as _, PublicKey as _, SecretKey as _};
use zeroize::Zeroizing;

use crate::encoding::{Digest32, Hasher, Reader, TAG_KEY_FILE, TAG_KEY_ID};
use crate::{Error, Result, FORMAT_VERSION, SUITE_ID};

/// Bytes of an ML-DSA-65 public key.
pub const MLDSA_PK_LEN: usize = mldsa::public_key_bytes();
/// Bytes of a Falcon-512 public key.
pub const FALCON_PK_LEN: usize = falcon::public_key_bytes();
/// Bytes of an SLH-DSA (SPHINCS+-SHA2-128f) public key.
pub const SLH_PK_LEN: usize = slh::public_key_bytes();
/// Bytes of an ML-DSA-65 signature.
pub const MLDSA_SIG_LEN: usize = mldsa::signature_bytes();
/// Bytes of a (padded, fixed-size) Falcon-512 signature.
pub const FALCON_SIG_LEN: usize = falcon::signature_bytes();
/// Bytes of an SLH-DSA (SPHINCS+-SHA2-128f) signature.
pub const SLH_SIG_LEN: usize = slh::signature_bytes();

const MLDSA_SK_LEN: usize = mldsa::secret_key_bytes();
const FALCON_SK_LEN: usize = falcon::secret_key_bytes();
const SLH_SK_LEN: usize = slh::secret_key_bytes();

const PUBLIC_MAGIC: &[u8; 8] = b"TRSKATPK";
const SECRET_MAGIC: &[u8; 8] = b"TRSKATSK";
const HEADER_LEN: usize = 8 + 1 + 1;
const PKS_LEN: usize = MLDSA_PK_LEN + FALCON_PK_LEN + SLH_PK_LEN;
const SKS_LEN: usize = MLDSA_SK_LEN + FALCON_SK_LEN + SLH_SK_LEN;

/// Bytes of a public identity file.
pub const PUBLIC_FILE_LEN: usize = HEADER_LEN + PKS_LEN + 32;
/// Bytes of a secret identity file.
pub const SECRET_FILE_LEN: usize = HEADER_LEN + PKS_LEN + SKS_LEN + 32;

/// The three signatures over one commitment.
pub(crate) struct Signatures {
    pub(crate) mldsa: Vec<u8>,
    pub(crate) falcon: Vec<u8>,
    pub(crate) slh: Vec<u8>,
}

/// The public half of an identity: what a verifier needs.
#[derive(Clone, Debug)]
pub struct PublicIdentity {
    mldsa: mldsa::PublicKey,
    falcon: falcon::PublicKey,
    slh: slh::PublicKey,
    key_id: Digest32,
}

impl PartialEq for PublicIdentity {
    fn eq(&self, other: &Self) -> bool {
        self.key_id == other.key_id
    }
}

impl Eq for PublicIdentity {}

impl PublicIdentity {
    fn new(mldsa: mldsa::PublicKey, falcon: falcon::PublicKey, slh: slh::PublicKey) -> Self {
        let key_id = Hasher::new(TAG_KEY_ID)
            .fixed(&[SUITE_ID])
            .fixed(mldsa.as_bytes())
            .fixed(falcon.as_bytes())
            .fixed(slh.as_bytes())
            .finish();
        PublicIdentity {
            mldsa,
            falcon,
            slh,
            key_id,
        }
    }

    /// `H(tag "key-id", suite || ML-DSA pk || Falcon pk || SLH-DSA pk)`: names the identity
    /// and is carried in every bundle it signs.
    pub fn key_id(&self) -> &Digest32 {
        &self.key_id
    }

    fn write_keys(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.mldsa.as_bytes());
        out.extend_from_slice(self.falcon.as_bytes());
        out.extend_from_slice(self.slh.as_bytes());
    }

    fn read_keys(r: &mut Reader<'_>) -> Result<Self> {
        let item = "public key";
        let bad = |e: pqcrypto_traits::Error| Error::malformed(item, e.to_string());
        let mldsa =
            mldsa::PublicKey::from_bytes(r.take(MLDSA_PK_LEN, "ML-DSA key")?).map_err(bad)?;
        let falcon =
            falcon::PublicKey::from_bytes(r.take(FALCON_PK_LEN, "Falcon key")?).map_err(bad)?;
        let slh = slh::PublicKey::from_bytes(r.take(SLH_PK_LEN, "SLH-DSA key")?).map_err(bad)?;
        Ok(PublicIdentity::new(mldsa, falcon, slh))
    }

    /// Serializes to the public identity file format (see the crate docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = header(PUBLIC_MAGIC);
        self.write_keys(&mut out);
        seal_checksum(&mut out);
        out
    }

    /// Parses and validates a public identity file (length, magic, version, suite, checksum).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = open_file("public identity", bytes, PUBLIC_MAGIC, PUBLIC_FILE_LEN)?;
        let public = PublicIdentity::read_keys(&mut r)?;
        r.take(32, "checksum")?;
        r.finish()?;
        Ok(public)
    }

    /// Verifies the ML-DSA, Falcon and SLH-DSA signatures over `msg`, in that order,
    /// reporting the first family that fails.
    pub(crate) fn verify(
        &self,
        msg: &[u8],
        [mldsa_sig, falcon_sig, slh_sig]: [&[u8]; 3],
    ) -> Result<()> {
        let ok = mldsa::DetachedSignature::from_bytes(mldsa_sig)
            .is_ok_and(|s| mldsa::verify_detached_signature(&s, msg, &self.mldsa).is_ok());
        if !ok {
            return Err(Error::BadMlDsaSignature);
        }
        let ok = falcon::DetachedSignature::from_bytes(falcon_sig)
            .is_ok_and(|s| falcon::verify_detached_signature(&s, msg, &self.falcon).is_ok());
        if !ok {
            return Err(Error::BadFalconSignature);
        }
        let ok = slh::DetachedSignature::from_bytes(slh_sig)
            .is_ok_and(|s| slh::verify_detached_signature(&s, msg, &self.slh).is_ok());
        if !ok {
            return Err(Error::BadSlhDsaSignature);
        }
        Ok(())
    }
}

/// A signing identity: one ML-DSA-65, one Falcon-512 and one SLH-DSA key pair.
///
/// The secret keys are held in buffers that are zeroized on drop. Each signature briefly
/// rebuilds the library's own secret-key value on the stack, which is not zeroized: the
/// `pqcrypto` types offer no way to wipe it without `unsafe`.
pub struct Identity {
    public: PublicIdentity,
    mldsa_sk: Zeroizing<Vec<u8>>,
    falcon_sk: Zeroizing<Vec<u8>>,
    slh_sk: Zeroizing<Vec<u8>>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("key_id", &crate::hex(self.public.key_id()))
            .finish_non_exhaustive()
    }
}

impl Identity {
    /// Generates a fresh identity from the operating system's randomness.
    pub fn generate() -> Self {
        let (mldsa_pk, mldsa_sk) = mldsa::keypair();
        let (falcon_pk, falcon_sk) = falcon::keypair();
        let (slh_pk, slh_sk) = slh::keypair();
        Identity {
            public: PublicIdentity::new(mldsa_pk, falcon_pk, slh_pk),
            mldsa_sk: Zeroizing::new(mldsa_sk.as_bytes().to_vec()),
            falcon_sk: Zeroizing::new(falcon_sk.as_bytes().to_vec()),
            slh_sk: Zeroizing::new(slh_sk.as_bytes().to_vec()),
        }
    }

    /// The public half, to hand to verifiers.
    pub fn public(&self) -> &PublicIdentity {
        &self.public
    }

    /// Signs `msg` with all three schemes.
    pub(crate) fn sign(&self, msg: &[u8]) -> Result<Signatures> {
        let bad = |e: pqcrypto_traits::Error| Error::malformed("secret key", e.to_string());
        let sk = mldsa::SecretKey::from_bytes(&self.mldsa_sk).map_err(bad)?;
        let mldsa = mldsa::detached_sign(msg, &sk).as_bytes().to_vec();
        let sk = falcon::SecretKey::from_bytes(&self.falcon_sk).map_err(bad)?;
        let falcon = falcon::detached_sign(msg, &sk).as_bytes().to_vec();
        let sk = slh::SecretKey::from_bytes(&self.slh_sk).map_err(bad)?;
        let slh = slh::detached_sign(msg, &sk).as_bytes().to_vec();
        if (mldsa.len(), falcon.len(), slh.len()) != (MLDSA_SIG_LEN, FALCON_SIG_LEN, SLH_SIG_LEN) {
            return Err(Error::malformed("signature", "unexpected signature length"));
        }
        Ok(Signatures { mldsa, falcon, slh })
    }

    /// Serializes to the secret identity file format (see the crate docs); the buffer is
    /// zeroized when dropped.
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(header(SECRET_MAGIC));
        out.reserve(SECRET_FILE_LEN);
        self.public.write_keys(&mut out);
        out.extend_from_slice(&self.mldsa_sk);
        out.extend_from_slice(&self.falcon_sk);
        out.extend_from_slice(&self.slh_sk);
        seal_checksum(&mut out);
        out
    }

    /// Parses and validates a secret identity file (length, magic, version, suite, checksum).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = open_file("secret identity", bytes, SECRET_MAGIC, SECRET_FILE_LEN)?;
        let public = PublicIdentity::read_keys(&mut r)?;
        let mut secret = |len, what| -> Result<Zeroizing<Vec<u8>>> {
            Ok(Zeroizing::new(r.take(len, what)?.to_vec()))
        };
        let mldsa_sk = secret(MLDSA_SK_LEN, "ML-DSA secret key")?;
        let falcon_sk = secret(FALCON_SK_LEN, "Falcon secret key")?;
        let slh_sk = secret(SLH_SK_LEN, "SLH-DSA secret key")?;
        r.take(32, "checksum")?;
        r.finish()?;
        Ok(Identity {
            public,
            mldsa_sk,
            falcon_sk,
            slh_sk,
        })
    }
}

fn header(magic: &[u8; 8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(PUBLIC_FILE_LEN);
    out.extend_from_slice(magic);
    out.extend_from_slice(&[FORMAT_VERSION, SUITE_ID]);
    out
}

fn checksum(body: &[u8]) -> Digest32 {
    Hasher::new(TAG_KEY_FILE).fixed(body).finish()
}

fn seal_checksum(out: &mut Vec<u8>) {
    let sum = checksum(out);
    out.extend_from_slice(&sum);
}

/// Checks length, checksum, magic, version and suite; returns a reader past the header.
fn open_file<'a>(
    item: &'static str,
    bytes: &'a [u8],
    magic: &[u8; 8],
    len: usize,
) -> Result<Reader<'a>> {
    let mut r = Reader::new(item, bytes);
    r.expect_len(len)?;
    r.expect_magic(magic)?;
    r.expect_u8("version", FORMAT_VERSION)?;
    r.expect_u8("suite", SUITE_ID)?;
    let (body, sum) = bytes.split_at(len - 32);
    if checksum(body) != sum {
        return Err(r.error("checksum mismatch (file corrupted)".into()));
    }
    Ok(r)
}
