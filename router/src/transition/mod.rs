//! Homomorphic transitions from BFV to TFHE: a threshold decision on
//! coefficients of a BFV ciphertext, returned as TFHE-encrypted bits,
//! without anyone decrypting the values compared.
//!
//! # Examples
//!
//! ```
//! use triskel::bfv::{self, biometric, BfvContext, Plaintext};
//! use triskel::tfhe::ClientKey;
//! use triskel::transition::{bfv_scores_above, TransitionKey};
//!
//! // The key holder: a BFV key (coefficient encoding, t = 2^23), a TFHE key
//! // and the transition key between them.
//! let ctx = BfvContext::new(biometric::coefficient_match_parameters())?;
//! let bfv_key = bfv::SecretKey::generate(&ctx)?;
//! let tfhe_key = ClientKey::generate(&triskel::tfhe_set())?;
//! let key = TransitionKey::generate(&bfv_key, &tfhe_key)?;
//! let server = tfhe_key.server_key()?;
//!
//! // Signed values in coefficients 0..4 of one BFV ciphertext.
//! let values = [-1000i64, 999, 1000, 1_000_000];
//! let t = ctx.plain_modulus() as i64;
//! let coeffs: Vec<u64> = values.iter().map(|v| v.rem_euclid(t) as u64).collect();
//! let ct = bfv_key.encrypt(&Plaintext::from_coeffs(&ctx, &coeffs)?)?;
//!
//! // value >= 1000, decided in TFHE: the values are never decrypted.
//! let bits = bfv_scores_above(&ct, &[0, 1, 2, 3], 1000, 0, &key, &server)?;
//! let decided: Vec<u64> = bits.iter().map(|b| tfhe_key.decrypt_with_carry(b)).collect::<Result<_, _>>()?;
//! assert_eq!(decided, [0, 0, 1, 1]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Path
//!
//! 1. The BFV ciphertext is mod-switched down to its last prime q (phase
//!    m q / t + e, m the plaintext coefficients).
//! 2. A [`TransitionKey`] (a ring switching key, [`triskel_ring::ring_switch`],
//!    made by the key holder) switches it, in its own ring modulo q, to the
//!    key u(X^(N / N')) with u the TFHE set's GLWE key (degree N' = 2048),
//!    and the needed coefficients are sample-extracted: LWE ciphertexts
//!    modulo 2^64 under the TFHE big key (dimension N'), phase
//!    m 2^64 / t + e 2^64 / q. Only those coefficients leave the ciphertext.
//!    This costs a few NTTs of degree N per window; the LWE key switch
//!    from dimension N to the small key of format version 1 streamed N x 8
//!    rows (110 MB for N = 4096) per decision.
//! 3. The TFHE server's own key switch takes them to the small key, and
//!    sign bootstraps decide the top bit of m + t/2 - threshold, i.e.
//!    whether score >= threshold, as a TFHE block holding 0 or 1: one
//!    decision window is exactly a TFHE key switch and bootstrap.
//!
//! # Why several bootstraps, and how many
//!
//! A blind rotation reads its input after a modulus switch to 2N = 4096 with
//! a noise of about 4.6 units of 1/(2N): one bootstrap resolves about 5 bits,
//! while a score difference needs k = log2 t = 23. The decision therefore
//! reads m in windows of D = 4 bits from the bottom, each from its own copy
//! m 2^(k - w) of the source ciphertext (w the window's top bit; scaled in
//! the source ring before the ring switch, so that only the source noise
//! is scaled), which holds (m mod 2^w) / 2^w exactly, the BFV noise
//! multiplied by 2^(k - w) (still below 2^-17 of a unit here). Window j's
//! reading is the sign bootstrap of
//!
//! ```text
//! z_j = (m mod 2^w_j) / 2^w_j + c_j,   c_0 = 1 / 2^(w_0 + 1),
//!                                      c_j = +-1 / 2^(D + 2) (the previous reading)
//! ```
//!
//! which gives bit w_j - 1 of m. The lowest window (w_0 <= D + 1 bits) has
//! nothing below it: its digit sits half a box from every boundary. In a
//! higher window the bits below form a fraction f in [0, 1) of a digit,
//! whose top bit b is the previous window's reading; the previous bootstrap
//! outputs +1/2^(D+2) when b = 0 and -1/2^(D+2) when b = 1, which replaces f
//! by f - b/2 + 1/4 in [1/4, 3/4): the digit is a quarter box (1/2^(D+2) of
//! the torus, 2N / 2^(D+2) = 64 units) from every boundary. The last window
//! ends at bit k - 1, the sign of m - t/2. Precision is never lost to the
//! bootstraps' own output noise (2^-13.9 of the torus, 0.26 units): outputs
//! only ever shift a reading by a quarter box. This is the iterative
//! large-precision sign of Liu, Micciancio and Wang (and OpenFHE's scheme
//! switching) in its most frugal form: one bootstrap per 4 bits, because
//! only the top bit of each window has to come out, which a sign
//! (negacyclic) test vector gives without a padding bit.
//!
//! # Decisions within a tolerance
//!
//! A caller who states that values within 2^r of the threshold may be
//! decided either way ([`bfv_scores_above`]'s `tolerance_bits`,
//! `Program::threshold_within`) gets k - r bits read instead of k: the
//! phase m 2^(64 - k) is read as (m / 2^r) 2^(64 - (k - r)), the r low bits
//! become a fraction of the lowest window's digit that its half-box offset
//! rounds, and the decision is m + e >= t/2 for some |e| <= 2^r. The
//! rounding is done by the scaling of the LWE copies (no BFV operation):
//! for the match's t = 2^23, r = 14 reads 9 bits in 2 windows, r = 18 one.
//! The lowest window then rounds: a value whose unread bits put it within
//! half a unit of the lowest window's boundary may be read either way,
//! which moves the next window's fraction by up to 2N / 2^(D + w_0 + 1)
//! units (4 of the 64 for r = 14: 5 + 4 bits). The analysis counts it
//! ([`analyse`]'s `rounded`) and narrows the windows where the bound needs
//! it ([`decision_analysis`]); r = 14 keeps 2 windows at 2^-129.
//!
//! # Noise and failure probability
//!
//! [`DecisionAnalysis`] computes it for a key and a ciphertext; for the
//! coefficient match (t = 2^23, the multi-bit 2_2 TFHE set, n = 882, 2N = 4096), in
//! units of 1/(2N)^2 of variance:
//!
//! - ring switch N l (B^2 + 2) / 12 sigma_glwe^2 = 2^-18 (l = 3 digits of
//!   21 bits of the 62-bit q, sigma_glwe = 2^-47; [`triskel_ring::ring_switch`]);
//! - the TFHE key switch (big key to small key) 2.76, its rows rounded to
//!   32-bit words included (`TfheParameters::noise`);
//! - modulus switch to 2N 1/12 + n/48 = 18.46 (binary-key mean correction);
//! - in windows above the lowest, the previous reading's output (blind
//!   rotation, 0.06), added under the big key before the key switch;
//! - the BFV noise amplified by the window's shift, below 2^-30.
//!
//! The lowest window's digit lies half a box from its boundaries (2N /
//! 2^(w_0 + 1) units: 64 for a 5-bit reading), every higher one a quarter
//! box (2N / 2^(D + 2) = 64). So a single-window decision (k - r <= 5 bits
//! read) has variance 21.2 against 64: 2^-143 per decision, and a 6-bit
//! reading in one bootstrap would have half the margin (2^-38): ONE
//! bootstrap decides a sign to t / 2^5, i.e. within 2^18 for t = 2^23 (the
//! 1:1 verification's tolerance). Higher windows: 21.3 against 64,
//! 2^-143 each; the exact 23-bit decision (6 windows) 2^-140.6 (union
//! bound). Every decision, BFV or CKKS, is held to 2^[`MAX_LOG2_FAILURE`]
//! = 2^-128. The decision is exact for every score in [-t/4, t/4) and
//! threshold in [-t/4, t/4], whose difference stays in [-t/2, t/2) (scores
//! lie in [-128 127^2, 128 127^2], inside 2^21 = t/4).
//!
//! # CKKS -> TFHE
//!
//! The same path from a CKKS ciphertext's lowest prime q_0: a
//! coefficient-encoded real x sits on the torus at scale x / q_0 (plus
//! error / q_0), and [`ckks_coefficients_above`] reads k = p + ceil(log2(q_0
//! / scale)) bits of it: the decision is the sign of x + e - threshold
//! rounded to a multiple of 2^-p, with |e| <= E / scale, E the
//! ciphertext's own error bound ([`ckks::Ciphertext::noise_estimate_log2`],
//! a bound on every slot and so on every coefficient, which are averages of
//! the slots). So the bit is right whenever
//!
//! ```text
//! |x - threshold| > 2^-p + E / scale      (the tolerance the path gives)
//! ```
//!
//! and |x| + |threshold| < q_0 / (2 scale) (beyond it the torus wraps).
//! A caller states the tolerance it needs; [`ckks_reading`] picks the
//! smallest p that meets it and refuses a tolerance at or below E / scale
//! (no reading can be that precise), a range the torus cannot hold, and a
//! reading whose failure probability (the analysis above, with the CKKS
//! error as the source noise) exceeds 2^[`MAX_LOG2_FAILURE`] = 2^-128
//! (narrowing the windows, down to 2 bits, where a wider margin is needed:
//! with the ring switch none of the named sets needs it, its variance at
//! N = 8192 being twice the match's 2^-18). On the named N = 8192 sets
//! (q_0 of 49-50 bits, scale 2^40) the reading holds |x| + |threshold| <
//! 2^8..2^9, a fresh input's E / scale is about 2^-29 and a rescale adds
//! about 2^-25: a tolerance of 2^-10 reads p = 11 and k = 21 bits in 5
//! bootstraps (`tests/ckks_decisions.rs`; 7 when the LWE key switch of
//! format version 1 forced 3-bit windows).
//!
//! # Other directions
//!
//! TFHE -> BFV/CKKS is not supported: there is no homomorphic path (it would
//! need a ring packing key switch), and [`check_direction`] names it in its
//! error, as it does BFV <-> CKKS; a plan must then take a key-holder round
//! trip.

use rayon::prelude::*;
use triskel_bfv as bfv;
use triskel_ckks as ckks;
use triskel_ring::{KeyId, LweCiphertext, LweSecretKey, Poly, Prng, Reader, RnsBasis};
use triskel_tfhe as tfhe;

use triskel_ring::ring_switch::{self, RingSwitchKey};

/// A TFHE block holding 0 or 1 (message space of the TFHE set, degree 1).
///
/// # Examples
///
/// The decisions of [`bfv_scores_above`] (the module's example) are such
/// blocks, decrypted by the TFHE client key:
///
/// ```
/// use triskel::tfhe::ClientKey;
/// use triskel::transition::EncryptedBit;
///
/// let tfhe_key = ClientKey::generate(&triskel::tfhe_set())?;
/// let bit: EncryptedBit = tfhe_key.encrypt(1)?;
/// assert_eq!(tfhe_key.decrypt_with_carry(&bit)?, 1);
/// assert_eq!(bit.key_id(), tfhe_key.key_id());
/// # Ok::<(), triskel::tfhe::Error>(())
/// ```
pub type EncryptedBit = tfhe::Ciphertext;

/// Bits per window of the sign decomposition (BFV decisions; a CKKS
/// decision narrows its windows where its failure bound needs it,
/// [`ckks_reading`]).
pub const WINDOW_BITS: u32 = 4;
/// Largest BFV/CKKS ring degree a transition key is made or loaded for.
pub const MAX_TRANSITION_DIMENSION: usize = 8192;
/// The serialization format version written by this build (4: the source
/// and TFHE keys' identities; version 3 had only the TFHE one, version 2
/// none, version 1 held an LWE key switch from the source dimension: this
/// build reads none of them).
pub const FORMAT_VERSION: u8 = 4;
const MAGIC: &[u8; 4] = b"TKTR";
const KIND_BFV_TO_TFHE: u8 = 1;
const KIND_CKKS_TO_TFHE: u8 = 2;

/// The engines a value can live in (the router's).
pub use crate::plan::Engine;

mod analysis;
mod decide;

pub use self::analysis::*;
pub use self::decide::*;

/// What can go wrong in a transition.
///
/// # Examples
///
/// ```
/// use triskel::transition::{check_direction, Engine, Error, TransitionKey};
///
/// assert!(check_direction(Engine::Bfv, Engine::Tfhe).is_ok());
/// let err = check_direction(Engine::Tfhe, Engine::Bfv).unwrap_err();
/// assert_eq!(err, Error::Unsupported { transition: "TFHE -> BFV".into() });
/// assert!(matches!(TransitionKey::from_bytes(b"TKTR"), Err(Error::Malformed(_))));
/// assert!(matches!(TransitionKey::from_bytes(b"TKTR\x09"), Err(Error::UnsupportedVersion(9))));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// From the BFV engine.
    Bfv(bfv::Error),
    /// From the CKKS engine.
    Ckks(ckks::Error),
    /// From the TFHE engine.
    Tfhe(tfhe::Error),
    /// Keys, ciphertexts or sets that do not belong together.
    Mismatch(String),
    /// A value outside what the decision supports.
    OutOfRange(String),
    /// Bytes that are not a valid transition key.
    Malformed(String),
    /// A format version this build cannot read.
    UnsupportedVersion(u8),
    /// A transition with no homomorphic path.
    Unsupported {
        /// The direction, e.g. "TFHE -> BFV".
        transition: String,
    },
}

/// Result of transitions.
///
/// # Examples
///
/// ```
/// use triskel::transition::{self, check_direction, Engine};
///
/// fn both_ways(a: Engine, b: Engine) -> transition::Result<()> {
///     check_direction(a, b)?;
///     check_direction(b, a)
/// }
/// assert!(both_ways(Engine::Ckks, Engine::Ckks).is_ok());
/// assert!(both_ways(Engine::Ckks, Engine::Tfhe).is_err()); // TFHE -> CKKS has no path
/// ```
pub type Result<T> = std::result::Result<T, Error>;

impl From<bfv::Error> for Error {
    fn from(e: bfv::Error) -> Self {
        Error::Bfv(e)
    }
}

impl From<ckks::Error> for Error {
    fn from(e: ckks::Error) -> Self {
        Error::Ckks(e)
    }
}

impl From<tfhe::Error> for Error {
    fn from(e: tfhe::Error) -> Self {
        Error::Tfhe(e)
    }
}

impl From<triskel_ring::Error> for Error {
    fn from(e: triskel_ring::Error) -> Self {
        match e {
            triskel_ring::Error::Malformed(m) => Error::Malformed(m),
            e => Error::Tfhe(tfhe::Error::Ring(e)),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Bfv(e) => write!(f, "BFV: {e}"),
            Error::Ckks(e) => write!(f, "CKKS: {e}"),
            Error::Tfhe(e) => write!(f, "TFHE: {e}"),
            Error::Mismatch(m) => write!(f, "mismatch: {m}"),
            Error::OutOfRange(m) => write!(f, "out of range: {m}"),
            Error::Malformed(m) => write!(f, "malformed transition key: {m}"),
            Error::UnsupportedVersion(v) => write!(
                f,
                "transition key format version {v}: this build reads version {FORMAT_VERSION} only (older keys, without key identities, must be generated again by the key holder)"
            ),
            Error::Unsupported { transition } => write!(
                f,
                "the transition {transition} has no homomorphic path; it needs a key-holder round trip"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// Ok for the directions built here (BFV -> TFHE, CKKS -> TFHE); an error
/// naming any other.
pub fn check_direction(from: Engine, to: Engine) -> Result<()> {
    match (from, to) {
        (Engine::Bfv | Engine::Ckks, Engine::Tfhe) => Ok(()),
        _ if from == to => Ok(()),
        _ => Err(Error::Unsupported {
            transition: format!("{from:?} -> {to:?}").to_uppercase(),
        }),
    }
}

/// The set whose ciphertexts a transition key takes coefficients of.
///
/// # Examples
///
/// ```
/// use triskel::bfv::biometric;
/// use triskel::transition::Source;
///
/// let source = Source::Bfv(biometric::coefficient_match_parameters());
/// assert_eq!(source.n(), 4096);
/// assert!(source.name().starts_with("bfv-n4096"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A BFV set.
    Bfv(bfv::BfvParameters),
    /// A CKKS set.
    Ckks(ckks::CkksParameters),
}

impl Source {
    /// Ring degree: the dimension of extracted LWE ciphertexts.
    pub fn n(&self) -> usize {
        match self {
            Source::Bfv(p) => p.n(),
            Source::Ckks(p) => p.n(),
        }
    }

    /// The set's name.
    pub fn name(&self) -> &str {
        match self {
            Source::Bfv(p) => p.name(),
            Source::Ckks(p) => p.name(),
        }
    }
}

/// The key that moves coefficients of one BFV or CKKS set's ciphertexts
/// to one TFHE set's big key (a ring switching key, [`triskel_ring::ring_switch`]),
/// where the TFHE server's key switch and bootstrap take them. Public (an
/// evaluation key); made by the holder of both secret keys.
///
/// # Examples
///
/// Making one needs only the two secret keys (the module's example decides
/// with it):
///
/// ```
/// use triskel::bfv::{self, biometric, BfvContext};
/// use triskel::tfhe::ClientKey;
/// use triskel::transition::{Source, TransitionKey};
///
/// let params = biometric::coefficient_match_parameters();
/// let bfv_key = bfv::SecretKey::generate(&BfvContext::new(params.clone())?)?;
/// let tfhe_key = ClientKey::generate(&triskel::tfhe_set())?;
/// let key = TransitionKey::generate(&bfv_key, &tfhe_key)?;
/// assert_eq!(key.source(), &Source::Bfv(params));
/// assert_eq!(key.tfhe_key_id(), tfhe_key.key_id());
///
/// // Public: it travels to the server as versioned bytes.
/// let bytes = key.to_bytes();
/// let loaded = TransitionKey::from_bytes(&bytes)?;
/// assert_eq!(loaded.to_bytes(), bytes);
/// assert_eq!(loaded.source_key_id(), key.source_key_id());
/// assert!(TransitionKey::from_bytes(&bytes[..bytes.len() - 1]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TransitionKey {
    source: Source,
    tfhe: tfhe::TfheParameters,
    /// The identity of the TFHE client key it delivers to: only that key's
    /// server key takes its values.
    tfhe_key: KeyId,
    /// The identity of the BFV or CKKS secret key whose phases it reads.
    source_key: KeyId,
    ring: RingSwitchKey,
}

impl std::fmt::Debug for TransitionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TransitionKey {{ {} -> {}, {:?} }}",
            self.source.name(),
            self.tfhe.name,
            self.ring
        )
    }
}

fn check_sizes(source: &Source, tfhe_params: &tfhe::TfheParameters) -> Result<()> {
    if source.n() > MAX_TRANSITION_DIMENSION {
        return Err(Error::OutOfRange(format!(
            "ring degree {} above the transition's {MAX_TRANSITION_DIMENSION}",
            source.n()
        )));
    }
    if !matches!(tfhe_params.encoding, tfhe::Encoding::Integer { .. }) {
        return Err(Error::Mismatch(
            "a transition needs an integer TFHE set (its decisions are blocks)".into(),
        ));
    }
    // The ring switch lands in the TFHE set's GLWE ring (its security
    // argument, triskel_ring::ring_switch).
    if tfhe_params.glwe_dimension != 1 || !source.n().is_multiple_of(tfhe_params.polynomial_size) {
        return Err(Error::Mismatch(format!(
            "a transition from ring degree {} needs a TFHE set with one GLWE polynomial of a degree dividing it ({} has {} of degree {})",
            source.n(),
            tfhe_params.name,
            tfhe_params.glwe_dimension,
            tfhe_params.polynomial_size
        )));
    }
    Ok(())
}

/// The source ring over its last prime, where transitions read.
fn last_prime_basis(n: usize, q: u64) -> Result<std::sync::Arc<RnsBasis>> {
    Ok(RnsBasis::new(n, &[q])?)
}

impl TransitionKey {
    /// Made by the key holder from the BFV secret key and the TFHE client key.
    pub fn generate(bfv_key: &bfv::SecretKey, tfhe_key: &tfhe::ClientKey) -> Result<TransitionKey> {
        let source = Source::Bfv(bfv_key.context().params().clone());
        let q = bfv_key.context().q_primes()[0];
        Self::from_lwe_key(source, q, &bfv_key.lwe_key(), tfhe_key)
    }

    /// Made by the key holder from the CKKS secret key and the TFHE client key.
    pub fn generate_for_ckks(
        ckks_key: &ckks::SecretKey,
        tfhe_key: &tfhe::ClientKey,
    ) -> Result<TransitionKey> {
        let source = Source::Ckks(ckks_key.context().params().clone());
        let q = ckks_key.context().q_primes()[0];
        Self::from_lwe_key(source, q, &ckks_key.lwe_key(), tfhe_key)
    }

    fn from_lwe_key(
        source: Source,
        q: u64,
        lwe_key: &LweSecretKey,
        tfhe_key: &tfhe::ClientKey,
    ) -> Result<TransitionKey> {
        let params = tfhe_key.parameters();
        check_sizes(&source, params)?;
        let basis = last_prime_basis(source.n(), q)?;
        let ring = RingSwitchKey::generate(
            &basis,
            lwe_key,
            tfhe_key.big_key(),
            params.glwe_noise_std,
            &mut Prng::from_os()?,
        )?;
        Ok(TransitionKey {
            source,
            tfhe: params.clone(),
            tfhe_key: tfhe_key.key_id(),
            source_key: lwe_key.id(),
            ring,
        })
    }

    /// LWE ciphertexts under the TFHE big key (carrying its identity) of the
    /// coefficients `indices` of `scale` times the phase of a source
    /// ciphertext (c0, c1) at its last prime.
    pub(crate) fn extract(
        &self,
        c0: &Poly,
        c1: &Poly,
        scale: u64,
        indices: &[usize],
    ) -> Result<Vec<LweCiphertext>> {
        Ok(self.ring.extract(c0, c1, scale, indices)?)
    }

    /// The set it takes ciphertexts of.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The TFHE set it delivers to.
    pub fn tfhe_parameters(&self) -> &tfhe::TfheParameters {
        &self.tfhe
    }

    /// The identity of the TFHE client key it delivers to.
    pub fn tfhe_key_id(&self) -> KeyId {
        self.tfhe_key
    }

    /// The identity of the BFV or CKKS secret key whose ciphertexts it takes.
    pub fn source_key_id(&self) -> KeyId {
        self.source_key
    }

    /// `"TKTR" | version: u8 | kind: u8 (1 = from BFV, 2 = from CKKS) |
    /// source parameters (u32 length + their engine's own versioned bytes) |
    /// TFHE set name (u8 length + UTF-8) | TFHE key identity (16 bytes) |
    /// source key identity (16 bytes) |
    /// ring switching key body (seed,
    /// then its rows' bodies, [`triskel_ring::ring_switch`])`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.push(FORMAT_VERSION);
        let (kind, params) = match &self.source {
            Source::Bfv(p) => (KIND_BFV_TO_TFHE, p.to_bytes()),
            Source::Ckks(p) => (KIND_CKKS_TO_TFHE, p.to_bytes()),
        };
        out.push(kind);
        out.extend_from_slice(&(params.len() as u32).to_le_bytes());
        out.extend_from_slice(&params);
        out.push(self.tfhe.name.len() as u8);
        out.extend_from_slice(self.tfhe.name.as_bytes());
        self.tfhe_key.write(&mut out);
        self.source_key.write(&mut out);
        self.ring.write_body(&mut out);
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output: both sets must pass their
    /// engines' checks (128-bit security included; nothing in the bytes can
    /// waive it), the key's shape must be exactly the one this build makes
    /// for them, and no byte may be left over.
    pub fn from_bytes(bytes: &[u8]) -> Result<TransitionKey> {
        let mut r = Reader::new(bytes);
        if r.take(4)? != MAGIC {
            return Err(Error::Malformed("bad magic: not a transition key".into()));
        }
        let version = r.u8()?;
        if version == 2 || version == 3 {
            return Err(Error::Malformed(format!(
                "a transition key of format version {version} predates key identities: the key \
                 holder must generate it again"
            )));
        }
        if version != FORMAT_VERSION {
            return Err(Error::UnsupportedVersion(version));
        }
        let kind = r.u8()?;
        let len = r.u32()? as usize;
        let params = r.take(len)?;
        let source = match kind {
            KIND_BFV_TO_TFHE => Source::Bfv(bfv::BfvParameters::from_bytes(params)?),
            KIND_CKKS_TO_TFHE => Source::Ckks(ckks::CkksParameters::from_bytes(params)?),
            _ => return Err(Error::Malformed(format!("transition kind {kind}"))),
        };
        let len = r.u8()? as usize;
        let name = std::str::from_utf8(r.take(len)?)
            .map_err(|_| Error::Malformed("TFHE set name".into()))?;
        let tfhe_params = tfhe::TfheParameters::by_name(name)?;
        tfhe_params.check()?;
        let tfhe_key = KeyId::read(&mut r)?;
        let source_key = KeyId::read(&mut r)?;
        // The sizes are capped before a context (every prime and its NTT
        // plan) is built for the source set; the build runs its checks.
        check_sizes(&source, &tfhe_params)?;
        let q = match &source {
            Source::Bfv(p) => bfv::BfvContext::new(p.clone())?.q_primes()[0],
            Source::Ckks(p) => ckks::CkksContext::new(p.clone())?.q_primes()[0],
        };
        let basis = last_prime_basis(source.n(), q)?;
        let ring = RingSwitchKey::read_body(&mut r, &basis, tfhe_params.polynomial_size, tfhe_key)?;
        r.finish()?;
        Ok(TransitionKey {
            source,
            tfhe: tfhe_params,
            tfhe_key,
            source_key,
            ring,
        })
    }
}

/// The failure bound of every decision (BFV and CKKS): a BFV decision
/// beyond it is refused, a CKKS one narrows its windows until it holds.
pub const MAX_LOG2_FAILURE: f64 = -128.0;

/// Ciphertexts per pass over the TFHE key-switching key
/// ([`tfhe::ServerKey::key_switch_many`]): enough to share the key's memory
/// traffic, few enough that their accumulators stay in cache.
const SWITCH_BATCH: usize = 16;

/// A source ciphertext at its last prime, the coefficients to decide and
/// the torus offset to add to each (threshold and half-range shifts).
pub(crate) struct Source2Lwe<'a> {
    c0: &'a Poly,
    c1: &'a Poly,
    indices: &'a [usize],
    offset: u64,
}

impl<'a> Source2Lwe<'a> {
    /// The two polynomials of a ciphertext at its last prime and the
    /// coefficient indices, checked before any work.
    fn new(polys: &'a [Poly], indices: &'a [usize], offset: u64) -> Result<Self> {
        let [c0, c1] = polys else {
            return Err(Error::Mismatch(format!(
                "a transition reads a 2-component ciphertext, not {} components (relinearize first)",
                polys.len()
            )));
        };
        if let Some(i) = indices.iter().find(|&&i| i >= c0.n()) {
            return Err(Error::OutOfRange(format!(
                "coefficient {i} outside a degree-{} ring",
                c0.n()
            )));
        }
        Ok(Source2Lwe {
            c0,
            c1,
            indices,
            offset,
        })
    }
}
