//! Signature suites, attestation identities (one key pair of each family) and their file
//! formats.

use fips205::slh_dsa_sha2_128f as slh;
use fips205::traits::{SerDes as _, Signer as _, Verifier as _};
use pqcrypto_falcon::falconpadded512 as falcon;
use pqcrypto_mldsa::mldsa65 as mldsa;
use pqcrypto_sphincsplus::sphincssha2128fsimple as sphincs;
use pqcrypto_traits::sign::{DetachedSignature as _, PublicKey as _, SecretKey as _};
use zeroize::Zeroizing;

use crate::encoding::{Digest32, Hasher, Reader, TAG_KEY_FILE, TAG_KEY_ID};
use crate::{Error, Result, FORMAT_VERSION};

/// The three signature algorithms of a record or identity, named by the suite byte that
/// every receipt, bundle and identity file carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Suite {
    /// Suite 1 (old records only): ML-DSA-65, Falcon-512 and SPHINCS+-SHA2-128f-simple
    /// round 3.1 (not FIPS 205). Its commitment does not contain the signer's key id.
    Sphincs31 = 1,
    /// Suite 2 (the default): ML-DSA-65 (FIPS 204), Falcon-512 (round 3) and
    /// SLH-DSA-SHA2-128f (FIPS 205), both standards in pure mode with an empty context.
    Fips205 = 2,
}

impl Suite {
    /// The suite new identities use.
    pub const DEFAULT: Suite = Suite::Fips205;

    /// The suite byte.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The suite of a suite byte, if known.
    pub fn from_id(id: u8) -> Option<Suite> {
        match id {
            1 => Some(Suite::Sphincs31),
            2 => Some(Suite::Fips205),
            _ => None,
        }
    }

    /// The exact algorithm of each family, in signing order (ML-DSA, Falcon, SLH-DSA).
    pub fn algorithms(self) -> [&'static str; 3] {
        let third = match self {
            Suite::Sphincs31 => "SPHINCS+-SHA2-128f-simple round 3.1 (not FIPS 205)",
            Suite::Fips205 => "SLH-DSA-SHA2-128f (FIPS 205, pure, empty context, deterministic)",
        };
        [
            "ML-DSA-65 (FIPS 204, pure, empty context, hedged)",
            "Falcon-512 (round 3, padded to 666-byte signatures)",
            third,
        ]
    }

    /// The family of each signature, in signing order.
    pub fn families(self) -> [&'static str; 3] {
        match self {
            Suite::Sphincs31 => ["ML-DSA", "Falcon", "SPHINCS+"],
            Suite::Fips205 => ["ML-DSA", "Falcon", "SLH-DSA"],
        }
    }

    /// The context string each family signs with, for the standards that have one (FIPS
    /// 204 and FIPS 205, pure mode): empty; `None` for round-3 Falcon and SPHINCS+ round 3.1 (not FIPS 205).
    pub fn contexts(self) -> [Option<&'static [u8]>; 3] {
        let third = match self {
            Suite::Sphincs31 => None,
            Suite::Fips205 => Some(&b""[..]),
        };
        [Some(&b""[..]), None, third]
    }

    /// One line for people: the suite number and its three algorithms.
    pub fn describe(self) -> String {
        let [a, b, c] = self.algorithms();
        format!("suite {}: {a}; {b}; {c}", self.id())
    }
}

/// Bytes of an ML-DSA-65 public key.
pub const MLDSA_PK_LEN: usize = mldsa::public_key_bytes();
/// Bytes of a Falcon-512 public key.
pub const FALCON_PK_LEN: usize = falcon::public_key_bytes();
/// Bytes of an SLH-DSA-SHA2-128f (or, in suite 1, SPHINCS+ round 3.1 (not FIPS 205)) public key.
pub const SLH_PK_LEN: usize = slh::PK_LEN;
/// Bytes of an ML-DSA-65 signature.
pub const MLDSA_SIG_LEN: usize = mldsa::signature_bytes();
/// Bytes of a (padded, fixed-size) Falcon-512 signature.
pub const FALCON_SIG_LEN: usize = falcon::signature_bytes();
/// Bytes of an SLH-DSA-SHA2-128f (or, in suite 1, SPHINCS+ round 3.1 (not FIPS 205)) signature.
pub const SLH_SIG_LEN: usize = slh::SIG_LEN;

const MLDSA_SK_LEN: usize = mldsa::secret_key_bytes();
const FALCON_SK_LEN: usize = falcon::secret_key_bytes();
const SLH_SK_LEN: usize = slh::SK_LEN;

// Both suites share one file and bundle layout: SPHINCS+ round 3.1 (not FIPS 205) and FIPS 205 use the
// same sizes for the same parameters.
const _: () = assert!(
    sphincs::public_key_bytes() == SLH_PK_LEN
        && sphincs::secret_key_bytes() == SLH_SK_LEN
        && sphincs::signature_bytes() == SLH_SIG_LEN
);

const PUBLIC_MAGIC: &[u8; 8] = b"TRSKATPK";
const SECRET_MAGIC: &[u8; 8] = b"TRSKATSK";
const HEADER_LEN: usize = 8 + 1 + 1;
const PKS_LEN: usize = MLDSA_PK_LEN + FALCON_PK_LEN + SLH_PK_LEN;
const SKS_LEN: usize = MLDSA_SK_LEN + FALCON_SK_LEN + SLH_SK_LEN;

/// Bytes of a public identity file.
pub const PUBLIC_FILE_LEN: usize = HEADER_LEN + PKS_LEN + 32;
/// Bytes of a secret identity file.
pub const SECRET_FILE_LEN: usize = HEADER_LEN + PKS_LEN + SKS_LEN + 32;

/// What a loaded secret identity signs to prove that each secret key matches its public key.
const KEY_CHECK_MESSAGE: &[u8] = b"triskel-attest/v1/key-check";

/// The three signatures over one commitment.
pub(crate) struct Signatures {
    pub(crate) mldsa: Vec<u8>,
    pub(crate) falcon: Vec<u8>,
    pub(crate) slh: Vec<u8>,
}

/// The public half of an identity: what a verifier needs.
#[derive(Clone, Debug)]
pub struct PublicIdentity {
    suite: Suite,
    mldsa: mldsa::PublicKey,
    falcon: falcon::PublicKey,
    slh: [u8; SLH_PK_LEN],
    key_id: Digest32,
}

impl PartialEq for PublicIdentity {
    fn eq(&self, other: &Self) -> bool {
        self.key_id == other.key_id
    }
}

impl Eq for PublicIdentity {}

impl PublicIdentity {
    fn new(
        suite: Suite,
        mldsa: mldsa::PublicKey,
        falcon: falcon::PublicKey,
        slh: [u8; SLH_PK_LEN],
    ) -> Self {
        let key_id = Hasher::new(TAG_KEY_ID)
            .fixed(&[suite.id()])
            .fixed(mldsa.as_bytes())
            .fixed(falcon.as_bytes())
            .fixed(&slh)
            .finish();
        PublicIdentity {
            suite,
            mldsa,
            falcon,
            slh,
            key_id,
        }
    }

    /// `H(tag "key-id", suite || ML-DSA pk || Falcon pk || SLH-DSA pk)`: names the identity
    /// and is carried in every bundle it signs (and, from suite 2 on, in the commitment).
    pub fn key_id(&self) -> &Digest32 {
        &self.key_id
    }

    /// The suite of the three keys.
    pub fn suite(&self) -> Suite {
        self.suite
    }

    /// The three public keys in their standard encodings, in the order of
    /// [`Suite::algorithms`].
    pub fn public_keys(&self) -> [&[u8]; 3] {
        [self.mldsa.as_bytes(), self.falcon.as_bytes(), &self.slh]
    }

    fn write_keys(&self, out: &mut Vec<u8>) {
        for key in self.public_keys() {
            out.extend_from_slice(key);
        }
    }

    fn read_keys(suite: Suite, r: &mut Reader<'_>) -> Result<Self> {
        let bad = |e: pqcrypto_traits::Error| Error::malformed("public key", e.to_string());
        let mldsa =
            mldsa::PublicKey::from_bytes(r.take(MLDSA_PK_LEN, "ML-DSA key")?).map_err(bad)?;
        let falcon =
            falcon::PublicKey::from_bytes(r.take(FALCON_PK_LEN, "Falcon key")?).map_err(bad)?;
        let slh = r.array32("SLH-DSA key")?;
        Ok(PublicIdentity::new(suite, mldsa, falcon, slh))
    }

    /// Serializes to the public identity file format (see the crate docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = header(PUBLIC_MAGIC, self.suite);
        self.write_keys(&mut out);
        seal_checksum(&mut out);
        out
    }

    /// Parses and validates a public identity file (length, magic, version, suite, checksum).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (suite, mut r) = open_file("public identity", bytes, PUBLIC_MAGIC, PUBLIC_FILE_LEN)?;
        let public = PublicIdentity::read_keys(suite, &mut r)?;
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
        let ok = match self.suite {
            Suite::Sphincs31 => {
                let pk = sphincs::PublicKey::from_bytes(&self.slh);
                let sig = sphincs::DetachedSignature::from_bytes(slh_sig);
                matches!((pk, sig), (Ok(pk), Ok(sig))
                    if sphincs::verify_detached_signature(&sig, msg, &pk).is_ok())
            }
            Suite::Fips205 => {
                let pk = slh::PublicKey::try_from_bytes(self.slh);
                let sig = <&[u8; SLH_SIG_LEN]>::try_from(slh_sig);
                matches!((pk, sig), (Ok(pk), Ok(sig)) if pk.verify(msg, sig, b""))
            }
        };
        if !ok {
            return Err(Error::BadSlhDsaSignature);
        }
        Ok(())
    }
}

/// A signing identity: one ML-DSA-65, one Falcon-512 and one SLH-DSA key pair.
///
/// The secret keys are held in buffers that are zeroized on drop. Each ML-DSA and Falcon
/// signature briefly rebuilds the `pqcrypto` library's own secret-key value on the stack,
/// which is not zeroized: the `pqcrypto` types offer no way to wipe it without `unsafe`.
/// The SLH-DSA key value (`fips205`) wipes itself on drop.
pub struct Identity {
    public: PublicIdentity,
    mldsa_sk: Zeroizing<Vec<u8>>,
    falcon_sk: Zeroizing<Vec<u8>>,
    slh_sk: Zeroizing<Vec<u8>>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("suite", &self.public.suite)
            .field("key_id", &crate::hex(self.public.key_id()))
            .finish_non_exhaustive()
    }
}

impl Identity {
    /// Generates a fresh identity of the default suite from the operating system's randomness.
    pub fn generate() -> Result<Self> {
        Identity::generate_suite(Suite::DEFAULT)
    }

    /// Generates a fresh identity of `suite`. Suite 1 exists to compare with and to test
    /// old records; new records should use [`Suite::DEFAULT`].
    pub fn generate_suite(suite: Suite) -> Result<Self> {
        let (mldsa_pk, mldsa_sk) = mldsa::keypair();
        let (falcon_pk, falcon_sk) = falcon::keypair();
        let (slh_pk, slh_sk) = match suite {
            Suite::Sphincs31 => {
                let (pk, sk) = sphincs::keypair();
                (array32(pk.as_bytes())?, sk.as_bytes().to_vec())
            }
            Suite::Fips205 => {
                let (pk, sk) = slh::try_keygen().map_err(|e| Error::Random(e.into()))?;
                (pk.into_bytes(), Zeroizing::new(sk.into_bytes()).to_vec())
            }
        };
        Ok(Identity {
            public: PublicIdentity::new(suite, mldsa_pk, falcon_pk, slh_pk),
            mldsa_sk: Zeroizing::new(mldsa_sk.as_bytes().to_vec()),
            falcon_sk: Zeroizing::new(falcon_sk.as_bytes().to_vec()),
            slh_sk: Zeroizing::new(slh_sk),
        })
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
        let slh = match self.public.suite {
            Suite::Sphincs31 => {
                let sk = sphincs::SecretKey::from_bytes(&self.slh_sk).map_err(bad)?;
                sphincs::detached_sign(msg, &sk).as_bytes().to_vec()
            }
            Suite::Fips205 => {
                let bad = |e| Error::malformed("secret key", format!("SLH-DSA secret key: {e}"));
                let bytes = Zeroizing::new(
                    <[u8; SLH_SK_LEN]>::try_from(&self.slh_sk[..]).map_err(|_| bad("length"))?,
                );
                let sk = slh::PrivateKey::try_from_bytes(*bytes).map_err(bad)?;
                // Deterministic (hedged = false): the signed commitment already holds a
                // fresh 32-byte nonce, and a fixed key and message give a fixed signature.
                sk.try_sign(msg, b"", false).map_err(bad)?.to_vec()
            }
        };
        if (mldsa.len(), falcon.len(), slh.len()) != (MLDSA_SIG_LEN, FALCON_SIG_LEN, SLH_SIG_LEN) {
            return Err(Error::malformed("signature", "unexpected signature length"));
        }
        Ok(Signatures { mldsa, falcon, slh })
    }

    /// Serializes to the secret identity file format (see the crate docs); the buffer is
    /// zeroized when dropped.
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(Vec::with_capacity(SECRET_FILE_LEN));
        out.extend_from_slice(&header(SECRET_MAGIC, self.public.suite));
        self.public.write_keys(&mut out);
        out.extend_from_slice(&self.mldsa_sk);
        out.extend_from_slice(&self.falcon_sk);
        out.extend_from_slice(&self.slh_sk);
        seal_checksum(&mut out);
        out
    }

    /// Parses and validates a secret identity file (length, magic, version, suite,
    /// checksum), then checks that each family's secret key matches its public key by
    /// signing a fixed message and verifying the signature (about one SLH-DSA signature).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let item = "secret identity";
        let (suite, mut r) = open_file(item, bytes, SECRET_MAGIC, SECRET_FILE_LEN)?;
        let public = PublicIdentity::read_keys(suite, &mut r)?;
        let mut secret = |len, what| -> Result<Zeroizing<Vec<u8>>> {
            Ok(Zeroizing::new(r.take(len, what)?.to_vec()))
        };
        let mldsa_sk = secret(MLDSA_SK_LEN, "ML-DSA secret key")?;
        let falcon_sk = secret(FALCON_SK_LEN, "Falcon secret key")?;
        let slh_sk = secret(SLH_SK_LEN, "SLH-DSA secret key")?;
        r.take(32, "checksum")?;
        r.finish()?;
        let identity = Identity {
            public,
            mldsa_sk,
            falcon_sk,
            slh_sk,
        };
        // Checked before signing: the Falcon signer may never return on a crafted key.
        if !crate::falcon_key::is_sound(&identity.falcon_sk) {
            return Err(Error::malformed(
                item,
                "the Falcon secret key is not a valid Falcon-512 key",
            ));
        }
        let mismatch = |family: &str| {
            Error::malformed(
                item,
                format!("the {family} secret key does not match its public key"),
            )
        };
        let sigs = identity.sign(KEY_CHECK_MESSAGE).map_err(|e| match e {
            Error::Malformed { problem, .. } => Error::malformed(item, problem),
            other => other,
        })?;
        let sigs = [&sigs.mldsa[..], &sigs.falcon[..], &sigs.slh[..]];
        match identity.public.verify(KEY_CHECK_MESSAGE, sigs) {
            Ok(()) => Ok(identity),
            Err(Error::BadMlDsaSignature) => Err(mismatch("ML-DSA")),
            Err(Error::BadFalconSignature) => Err(mismatch("Falcon")),
            Err(_) => Err(mismatch("SLH-DSA")),
        }
    }
}

fn array32(bytes: &[u8]) -> Result<[u8; 32]> {
    bytes
        .try_into()
        .map_err(|_| Error::malformed("public key", "expected 32 bytes"))
}

fn header(magic: &[u8; 8], suite: Suite) -> Vec<u8> {
    let mut out = Vec::with_capacity(PUBLIC_FILE_LEN);
    out.extend_from_slice(magic);
    out.extend_from_slice(&[FORMAT_VERSION, suite.id()]);
    out
}

fn checksum(body: &[u8]) -> Digest32 {
    Hasher::new(TAG_KEY_FILE).fixed(body).finish()
}

fn seal_checksum(out: &mut Vec<u8>) {
    let sum = checksum(out);
    out.extend_from_slice(&sum);
}

/// Checks length, checksum, magic, version and suite; returns the suite and a reader past
/// the header.
fn open_file<'a>(
    item: &'static str,
    bytes: &'a [u8],
    magic: &[u8; 8],
    len: usize,
) -> Result<(Suite, Reader<'a>)> {
    let mut r = Reader::new(item, bytes);
    r.expect_len(len)?;
    r.expect_magic(magic)?;
    r.expect_u8("version", FORMAT_VERSION)?;
    let suite = r.suite()?;
    let (body, sum) = bytes.split_at(len - 32);
    if checksum(body) != sum {
        return Err(r.error("checksum mismatch (file corrupted)".into()));
    }
    Ok((suite, r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::{Digest, Sha3_256};

    /// A fixed suite-2 identity made once for this test (test key, not a secret).
    const KAT_KEY: &[u8] = include_bytes!("../tests/data/kat-suite2.key");
    const KAT_MESSAGE: &[u8] = b"triskel-attest known-answer message";
    /// SHA3-256 of the SLH-DSA signature of `KAT_MESSAGE` under `KAT_KEY`.
    const KAT_SLH_SIGNATURE_SHA3: &str =
        "7a3f5cf71a3d6c02e3f906a11e9b5d47afcb8fe5308cb28773d2d11bc7970166";

    /// Fixed key and message give a fixed SLH-DSA signature (deterministic), the same as
    /// RustCrypto's independent FIPS 205 implementation signs; ML-DSA and Falcon are
    /// hedged, so their signatures differ each time and must verify.
    #[test]
    fn known_answer_signatures() {
        let identity = Identity::from_bytes(KAT_KEY).expect("fixture");
        assert_eq!(identity.public.suite, Suite::Fips205);
        let first = identity.sign(KAT_MESSAGE).expect("sign");
        let second = identity.sign(KAT_MESSAGE).expect("sign");
        assert_eq!(first.slh, second.slh);
        assert_ne!(first.mldsa, second.mldsa);
        assert_ne!(first.falcon, second.falcon);
        for sigs in [&first, &second] {
            let all = [&sigs.mldsa[..], &sigs.falcon[..], &sigs.slh[..]];
            assert!(identity.public.verify(KAT_MESSAGE, all).is_ok());
        }
        let digest: [u8; 32] = Sha3_256::digest(&first.slh).into();
        assert_eq!(crate::hex(&digest), KAT_SLH_SIGNATURE_SHA3);

        // RustCrypto `slh-dsa`, pure mode, empty context, deterministic (no randomizer).
        let sk = slh_dsa::SigningKey::<slh_dsa::Sha2_128f>::try_from(&identity.slh_sk[..])
            .expect("RustCrypto reads the key");
        let theirs = sk
            .try_sign_with_context(KAT_MESSAGE, &[], None)
            .expect("sign");
        assert_eq!(theirs.to_vec(), first.slh);
    }

    /// A secret identity file whose Falcon key is crafted so that the signer could loop
    /// forever, with its (unkeyed) checksum recomputed, is refused before any signing.
    #[test]
    fn a_degenerate_falcon_key_is_refused_before_signing() {
        let mut file = Identity::from_bytes(KAT_KEY).expect("fixture").to_bytes();
        let start = HEADER_LEN + PKS_LEN + MLDSA_SK_LEN;
        let range = start..start + FALCON_SK_LEN;
        let crafted = crate::falcon_key::degenerate(&file[range.clone()]);
        file[range].copy_from_slice(&crafted);
        let body = SECRET_FILE_LEN - 32;
        let sum = checksum(&file[..body]);
        file[body..].copy_from_slice(&sum);
        let got = Identity::from_bytes(&file);
        assert!(
            got.as_ref()
                .is_err_and(|e| e.to_string().contains("not a valid Falcon-512 key")),
            "{:?}",
            got.err()
        );
    }
}
