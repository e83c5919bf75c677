//! Homomorphic transitions from BFV to TFHE: a threshold decision on
//! coefficients of a BFV ciphertext, returned as TFHE-encrypted bits,
//! without anyone decrypting the values compared.
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

/// What can go wrong in a transition.
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
    if tfhe_params.glwe_dimension != 1 || source.n() % tfhe_params.polynomial_size != 0 {
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

/// The noise analysis of one decision (module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecisionAnalysis {
    /// Bits per window above the lowest.
    pub window_bits: u32,
    /// Bootstraps per decision (windows).
    pub bootstraps: usize,
    /// Variance of the input phase error of the highest window (the
    /// largest), units of 1/(2N)^2.
    pub input_variance: f64,
    /// Of which the ring switch.
    pub ring_switch: f64,
    /// Distance of the highest window's reading from its boundaries, units
    /// of 1/(2N).
    pub margin: f64,
    /// log2 of the failure probability of the likeliest bootstrap to fail.
    pub log2_failure_per_bootstrap: f64,
    /// log2 of the failure probability of a decision (union bound).
    pub log2_failure_per_decision: f64,
}

/// The tops of the windows (bits, ascending, the last = k): W windows of
/// `d` bits above a lowest one of 1..=d + 1 bits.
fn window_tops(k: u32, d: u32) -> Vec<u32> {
    let mut tops = vec![k];
    while tops[0] > d + 1 {
        tops.insert(0, tops[0] - d);
    }
    tops
}

/// The analysis for a key, the source ciphertext's noise (log2 of its
/// deviation at the last prime, absolute) and a k-bit reading, in the
/// widest windows that meet the bound ([`decision_analysis`]).
pub fn analyse_decision(
    key: &TransitionKey,
    source_noise_log2: f64,
    last_prime: u64,
    k: u32,
    rounded: bool,
) -> DecisionAnalysis {
    decision_analysis(
        key.source.n(),
        &key.tfhe,
        source_noise_log2,
        last_prime,
        k,
        rounded,
    )
}

/// The analysis of a decision before any key exists (what the planner
/// checks): a source ring of degree `source_n` decided on the TFHE set `p`
/// in the widest windows ([`WINDOW_BITS`] down to 2 bits) whose failure
/// stays within 2^[`MAX_LOG2_FAILURE`], or in 2-bit windows when none does
/// (the caller refuses it). `rounded`: bits below the reading (a
/// tolerance, or a real's fraction) make the lowest window round.
pub fn decision_analysis(
    source_n: usize,
    p: &tfhe::TfheParameters,
    source_noise_log2: f64,
    last_prime: u64,
    k: u32,
    rounded: bool,
) -> DecisionAnalysis {
    let analysis = |d| analyse(source_n, p, source_noise_log2, last_prime, k, d, rounded);
    (2..=WINDOW_BITS)
        .rev()
        .map(analysis)
        .find(|a| a.log2_failure_per_decision <= MAX_LOG2_FAILURE)
        .unwrap_or_else(|| analysis(2))
}

/// The analysis of a k-bit reading in windows of `window_bits`.
pub fn analyse(
    source_n: usize,
    p: &tfhe::TfheParameters,
    source_noise_log2: f64,
    last_prime: u64,
    k: u32,
    window_bits: u32,
    rounded: bool,
) -> DecisionAnalysis {
    let tops = window_tops(k, window_bits);
    analyse_windows(
        source_n,
        p,
        source_noise_log2,
        last_prime,
        (&tops, window_bits, rounded),
        1,
    )
}

/// The analysis of reading the bits of k-bit values to within 2^r
/// ([`bfv_value_bits`], r = `tolerance_bits`): windows of one bit
/// (`bit_windows`), each previous reading entering the next window as a
/// block scaled by the set's `correction_gain`; with r > 0 the lowest
/// window rounds, which takes up to an eighth of a box from the next
/// windows' quarter-box margin.
pub fn analyse_bits(
    source_n: usize,
    p: &tfhe::TfheParameters,
    source_noise_log2: f64,
    last_prime: u64,
    k: u32,
    tolerance_bits: u32,
) -> DecisionAnalysis {
    let tops = bit_windows(k, tolerance_bits);
    let gain = correction_gain(p, 1).unwrap_or(u64::MAX);
    let rounded = tolerance_bits > 0;
    analyse_windows(
        source_n,
        p,
        source_noise_log2,
        last_prime,
        (&tops, 1, rounded),
        gain,
    )
}

/// The window tops (ascending) that read the bits of a k-bit value to
/// within 2^r: for r = 0 every bit, one window each from a 1-bit lowest;
/// for r > 0 a reading at 2^(r - 1) whose lowest window (2 bits) rounds and
/// whose bit 0 is not read, so that the k - r bits read are those of M
/// with |M 2^r - m| <= 3 2^(r - 2) ([`bfv_value_bits`]).
fn bit_windows(k: u32, tolerance_bits: u32) -> Vec<u32> {
    match tolerance_bits {
        0 => (1..=k).collect(),
        r => window_tops(k - r + 1, 1),
    }
}

/// The analysis of windows (tops ascending, bits per window above the
/// lowest, whether the lowest rounds a fraction), the previous reading
/// entering each higher window with its output noise multiplied by `gain`.
fn analyse_windows(
    source_n: usize,
    p: &tfhe::TfheParameters,
    source_noise_log2: f64,
    last_prime: u64,
    (tops, window_bits, rounded): (&[u32], u32, bool),
    gain: u64,
) -> DecisionAnalysis {
    let tfhe_noise = p.noise();
    let two_n = 2.0 * p.polynomial_size as f64;
    let scale = two_n * two_n;
    let ring = ring_switch::noise_variance(source_n, last_prime, p.glwe_noise_std) * scale;
    let k = tops.last().copied().unwrap_or(0);
    let lowest_top = tops.first().copied().unwrap_or(0);
    // The source noise (and the 1/2 per term of sample extraction's
    // rounding, well below it), amplified by the lowest window's shift.
    let relative = source_noise_log2.exp2() / last_prime as f64;
    let amplified = (relative * 2f64.powi((k - lowest_top) as i32)).powi(2) * scale;
    // Every window's input: the ring switch, the server's key switch (big
    // to small key) and the modulus switch to 2N.
    let lowest = ring + tfhe_noise.key_switch * scale + tfhe_noise.modulus_switch + amplified;
    // The lowest window's digit sits half a box from its boundaries; every
    // higher one a quarter box, with the previous reading's output (the
    // blind rotation's noise times the gain, added under the big key
    // before the key switch) in its input.
    let lowest_margin = two_n / 2f64.powi(lowest_top as i32 + 1);
    let mut failures = vec![tfhe::params::log2_gaussian_tail(
        lowest_margin / lowest.sqrt(),
    )];
    let (mut input_variance, mut margin) = (lowest, lowest_margin);
    if tops.len() > 1 {
        input_variance = lowest + (gain as f64).powi(2) * tfhe_noise.blind_rotation * scale;
        margin = two_n / 2f64.powi(window_bits as i32 + 2);
        // A rounding lowest window may carry half its last unit into the
        // next window's fraction.
        if rounded {
            margin -= two_n / 2f64.powi((window_bits + lowest_top) as i32 + 1);
        }
        let upper = tfhe::params::log2_gaussian_tail(margin / input_variance.sqrt());
        failures.extend(std::iter::repeat_n(upper, tops.len() - 1));
    }
    let per = failures.iter().copied().fold(f64::MIN, f64::max);
    // Union bound over the windows.
    let total = failures.iter().map(|f| f.exp2()).sum::<f64>().log2();
    DecisionAnalysis {
        window_bits,
        bootstraps: tops.len(),
        input_variance,
        ring_switch: ring,
        margin,
        log2_failure_per_bootstrap: per,
        log2_failure_per_decision: total,
    }
}

/// The factor g with which a reading kept as a block b (b Delta on the
/// torus) becomes the next window's correction c - g b Delta = +-c, c =
/// 1/2^(window_bits + 2) of the torus: g = 2c / Delta, an error when the
/// set's Delta does not divide 2c.
fn correction_gain(p: &tfhe::TfheParameters, window_bits: u32) -> Result<u64> {
    let (_, _, delta) = any_bounds(p)?;
    let twice_c = 1u128 << (65 - (window_bits + 2));
    if twice_c % delta as u128 != 0 {
        return Err(Error::Mismatch(format!(
            "{}: a block cannot carry a {window_bits}-bit window's correction",
            p.name
        )));
    }
    Ok((twice_c / delta as u128) as u64)
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
struct Source2Lwe<'a> {
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

/// Reads bits of m for each coefficient of `src` whose phase (plus the
/// offset) is m 2^(64 - k) with m in [0, 2^k), k the last of `tops`:
/// window by window from the bottom (module documentation), each window's
/// copy scaled by 2^(k - w) in the source ring, ring-switched to the big
/// key, the previous reading's output added, then key-switched to the
/// small key (in passes over the TFHE key shared by [`SWITCH_BATCH`] of
/// them) and bootstrapped, all values of a window together. Returns the
/// top bit of m alone (`every` false: the readings below it are sign
/// bootstraps to the correction +-c) or the readings of every window
/// (bit w - 1 of m for a window of top w), as blocks, each also turned
/// into the next window's correction ([`correction_gain`]); indexed
/// [window][value].
fn read_windows(
    src: &Source2Lwe<'_>,
    tops: &[u32],
    window_bits: u32,
    every: bool,
    key: &TransitionKey,
    server: &tfhe::ServerKey,
) -> Result<Vec<Vec<EncryptedBit>>> {
    let k = *tops
        .last()
        .ok_or_else(|| Error::OutOfRange("no window to read".into()))?;
    let c = 1u64 << (64 - (window_bits + 2));
    let gain = if every {
        correction_gain(server.parameters(), window_bits)? as i64
    } else {
        0
    };
    let windows = tops
        .par_iter()
        .map(|&w| {
            let scale = 1u64 << (k - w);
            let mut lwes = key.extract(src.c0, src.c1, scale, src.indices)?;
            lwes.iter_mut()
                .for_each(|lwe| lwe.add_constant(src.offset.wrapping_mul(scale)));
            Ok(lwes)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut previous: Vec<LweCiphertext> = Vec::new();
    let mut kept = Vec::new();
    for (j, (&w, window)) in tops.iter().zip(windows).enumerate() {
        let inputs: Vec<LweCiphertext> = window
            .into_iter()
            .enumerate()
            .map(|(v, mut z)| {
                match previous.get(v) {
                    None => z.add_constant(1u64 << (63 - w)),
                    Some(out) => z.add_assign(out)?,
                }
                Ok(z)
            })
            .collect::<Result<_>>()?;
        let small: Vec<LweCiphertext> = inputs
            .par_chunks(SWITCH_BATCH)
            .map(|chunk| server.key_switch_many(&chunk.iter().collect::<Vec<_>>()))
            .collect::<std::result::Result<Vec<_>, _>>()?
            .into_iter()
            .flatten()
            .collect();
        let last = j + 1 == tops.len();
        if !every && !last {
            previous = small
                .par_iter()
                .map(|z| server.sign_bootstrap(z, c))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            continue;
        }
        let bits: Vec<EncryptedBit> = small
            .par_iter()
            .map(|z| server.sign_block(z))
            .collect::<std::result::Result<_, _>>()?;
        if !last {
            // c - g b Delta: +c for a 0, -c for a 1.
            previous = bits
                .iter()
                .map(|b| {
                    let mut out = b.lwe().clone();
                    out.mul_scalar_assign(-gain);
                    out.add_constant(c);
                    out
                })
                .collect();
        }
        kept.push(bits);
    }
    Ok(kept)
}

/// The top bit of m for each coefficient of `src` ([`read_windows`] in
/// windows of `window_bits`).
fn top_bits(
    src: &Source2Lwe<'_>,
    k: u32,
    window_bits: u32,
    key: &TransitionKey,
    server: &tfhe::ServerKey,
) -> Result<Vec<EncryptedBit>> {
    let tops = window_tops(k, window_bits);
    read_windows(src, &tops, window_bits, false, key, server)?
        .pop()
        .ok_or_else(|| Error::OutOfRange("no window to read".into()))
}

fn check_keys(
    source: &Source,
    source_key: KeyId,
    key: &TransitionKey,
    server: &tfhe::ServerKey,
) -> Result<()> {
    if source != &key.source {
        return Err(Error::Mismatch(format!(
            "ciphertext of {}, transition key for {}",
            source.name(),
            key.source.name()
        )));
    }
    if server.parameters() != &key.tfhe {
        return Err(Error::Mismatch(format!(
            "server key of {}, transition key for {}",
            server.parameters().name,
            key.tfhe.name
        )));
    }
    // The ring switch lands under the big key of one TFHE client key: its
    // readings decrypt under no other key's server key.
    key.tfhe_key.check("a TFHE server key", server.key_id())?;
    // Its switching key reads the phase under one source secret key only.
    key.source_key.check("the ciphertext", source_key)?;
    Ok(())
}

/// The decision's analysis ([`analyse_decision`]), an error when even its
/// narrowest windows exceed the failure bound.
fn check_analysis(
    key: &TransitionKey,
    noise_log2: f64,
    last_prime: u64,
    k: u32,
    rounded: bool,
) -> Result<DecisionAnalysis> {
    let analysis = analyse_decision(key, noise_log2, last_prime, k, rounded);
    if analysis.log2_failure_per_decision > MAX_LOG2_FAILURE {
        return Err(Error::OutOfRange(format!(
            "a decision would fail with probability 2^{:.1}",
            analysis.log2_failure_per_decision
        )));
    }
    Ok(analysis)
}

/// For each coefficient index of a BFV ciphertext (plaintext modulus
/// t = 2^k, values read as signed in [-t/2, t/2)), an encrypted bit: is the
/// coefficient >= `threshold`? The coefficients must lie in [-t/4, t/4)
/// (the caller's promise, which the coefficient match keeps).
///
/// With `tolerance_bits` r = 0 the decision is exact (k bits read, one
/// bootstrap per [`WINDOW_BITS`]); with r > 0 only the top k - r bits are
/// read (the lowest window's offset rounds away the r bits below it), so
/// the bit is `value + e >= threshold` for some |e| <= 2^r: exact whenever
/// the value is more than 2^r from the threshold, with fewer bootstraps
/// ([`bfv_decision_analysis`]). r must leave at least 3 bits
/// (r <= k - 3) and the threshold must lie in [-t/4 + 2^r, t/4 - 2^r] (so
/// that no rounding wraps around t; with r = 0 it is [-t/4, t/4]): an
/// error otherwise. The ciphertext is mod-switched to its last prime first.
/// Runs the coefficients in parallel (rayon).
pub fn bfv_scores_above(
    ct: &bfv::Ciphertext,
    coefficients: &[usize],
    threshold: i64,
    tolerance_bits: u32,
    key: &TransitionKey,
    server: &tfhe::ServerKey,
) -> Result<Vec<EncryptedBit>> {
    let (low, k) = bfv_source(ct, key, server)?;
    let t = 1u64 << k;
    check_tolerance(k, tolerance_bits)?;
    let margin = if tolerance_bits == 0 {
        0
    } else {
        1i64 << tolerance_bits
    };
    let quarter = (t / 4) as i64 - margin;
    if !(-quarter..=quarter).contains(&threshold) {
        return Err(Error::OutOfRange(format!(
            "threshold {threshold} outside [-{quarter}, {quarter}]"
        )));
    }
    let q = ct.context().q_primes()[0];
    let read = k - tolerance_bits;
    let analysis = check_analysis(key, low.noise_estimate_log2(), q, read, tolerance_bits > 0)?;
    // m = value - threshold + t/2 in [0, t): its top bit is value >= threshold.
    let offset = (t / 2).wrapping_sub(threshold as u64) & (t - 1);
    // The phase m 2^(64 - k) is (m / 2^r) 2^(64 - read): reading `read`
    // bits treats the r bits below as a fraction the first window rounds.
    let src = Source2Lwe::new(low.polys(), coefficients, offset << (64 - k))?;
    top_bits(&src, read, analysis.window_bits, key, server)
}

/// The analysis of [`bfv_scores_above`]'s decisions on `ct` within
/// 2^`tolerance_bits`: windows, bootstraps and failure bound; an error
/// when no reading meets the bound.
pub fn bfv_decision_analysis(
    ct: &bfv::Ciphertext,
    tolerance_bits: u32,
    key: &TransitionKey,
    server: &tfhe::ServerKey,
) -> Result<DecisionAnalysis> {
    let (low, k) = bfv_source(ct, key, server)?;
    check_tolerance(k, tolerance_bits)?;
    let q = ct.context().q_primes()[0];
    check_analysis(
        key,
        low.noise_estimate_log2(),
        q,
        k - tolerance_bits,
        tolerance_bits > 0,
    )
}

fn check_tolerance(k: u32, tolerance_bits: u32) -> Result<()> {
    if tolerance_bits + 3 > k {
        return Err(Error::OutOfRange(format!(
            "a tolerance of 2^{tolerance_bits} leaves fewer than 3 of the {k} bits of t"
        )));
    }
    Ok(())
}

/// A BFV ciphertext's set checked against the keys, its plaintext modulus
/// t = 2^k (k returned), and the ciphertext mod-switched to its last prime.
fn bfv_source(
    ct: &bfv::Ciphertext,
    key: &TransitionKey,
    server: &tfhe::ServerKey,
) -> Result<(bfv::Ciphertext, u32)> {
    check_keys(
        &Source::Bfv(ct.context().params().clone()),
        ct.key_id(),
        key,
        server,
    )?;
    let t = ct.context().plain_modulus();
    if !t.is_power_of_two() {
        return Err(Error::OutOfRange(format!(
            "plaintext modulus {t}: the decision needs a power of two"
        )));
    }
    let mut low = ct.clone();
    while low.level() > 0 {
        low = low.mod_switch_to_next()?;
    }
    Ok((low, t.trailing_zeros()))
}

/// For each coefficient index of a BFV ciphertext (plaintext modulus
/// t = 2^k, values read as signed), the bits of the value as an unsigned
/// number: M, whose k - r bits (r = `tolerance_bits`) come least
/// significant first, each a TFHE block holding 0 or 1, with
/// |M 2^r - (value + t/2)| <= 3 2^(r - 2) (M = value + t/2 for r = 0; for
/// r > 0 the bits above bit 0 of round((value + t/2) / 2^(r - 1))). Signed
/// values order as their M (the offset t/2 makes them unsigned), so the
/// index of a largest M holds a value within 2^r of the largest. The
/// coefficients must lie in [-t/4, t/4) (the caller's promise, which the
/// planner's choice of t keeps), so that the rounding never wraps.
///
/// One bootstrap per bit read: windows of one bit from the bottom (module
/// documentation, `bit_windows`), each reading kept as a block and also, scaled by the
/// set's gain (8 on 2_2), the next window's quarter-box correction. All
/// values' failure probability together (union bound, [`analyse_bits`])
/// must stay within 2^[`MAX_LOG2_FAILURE`]: an error otherwise, as for r
/// leaving no bit to read.
pub fn bfv_value_bits(
    ct: &bfv::Ciphertext,
    coefficients: &[usize],
    tolerance_bits: u32,
    key: &TransitionKey,
    server: &tfhe::ServerKey,
) -> Result<Vec<Vec<EncryptedBit>>> {
    let (low, k) = bfv_source(ct, key, server)?;
    if tolerance_bits >= k {
        return Err(Error::OutOfRange(format!(
            "a tolerance of 2^{tolerance_bits} leaves none of the {k} bits of t to read"
        )));
    }
    let q = ct.context().q_primes()[0];
    let analysis = analyse_bits(
        key.source.n(),
        &key.tfhe,
        low.noise_estimate_log2(),
        q,
        k,
        tolerance_bits,
    );
    let failure = analysis.log2_failure_per_decision + (coefficients.len().max(1) as f64).log2();
    if failure > MAX_LOG2_FAILURE {
        return Err(Error::OutOfRange(format!(
            "reading {} bits of {} values would fail with probability 2^{failure:.1}",
            k - tolerance_bits,
            coefficients.len()
        )));
    }
    // m = value + t/2 in [0, t), its phase m 2^(64 - k) read as (m / 2^s)
    // 2^(64 - (k - s)) at s = max(r - 1, 0) ([`bit_windows`]).
    let src = Source2Lwe::new(low.polys(), coefficients, (1u64 << (k - 1)) << (64 - k))?;
    let tops = bit_windows(k, tolerance_bits);
    let windows = read_windows(&src, &tops, 1, true, key, server)?;
    Ok((0..coefficients.len())
        .map(|v| windows.iter().map(|bits| bits[v].clone()).collect())
        .collect())
}

/// What a CKKS -> TFHE decision reads (module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CkksReading {
    /// p: the reading rounds x - threshold to a multiple of 2^-p.
    pub precision_bits: u32,
    /// k = p + ceil(log2(q_0 / scale)) bits of the torus read (one
    /// bootstrap per window).
    pub read_bits: u32,
    /// Bits per window ([`WINDOW_BITS`], or fewer where the failure bound
    /// needs a wider margin).
    pub window_bits: u32,
    /// Bootstraps per decision (one per window).
    pub bootstraps: usize,
    /// 2^-p + E / scale: the bit is right whenever |x - threshold| exceeds it.
    pub tolerance: f64,
    /// log2 of the failure probability of one decision.
    pub log2_failure: f64,
}

/// The reading of a CKKS -> TFHE decision that meets `tolerance` on a
/// coefficient of error bound `error` (scaled units) at `scale`, values of
/// magnitude at most `message` (value units), the last prime `q0`, a ring
/// of degree `source_n` and the TFHE set `tfhe_params`; an error saying why
/// none does (module documentation). The planner checks programs with it,
/// and [`ckks_coefficients_above`] each ciphertext.
#[allow(clippy::too_many_arguments)]
pub fn ckks_reading(
    source_n: usize,
    tfhe_params: &tfhe::TfheParameters,
    error: f64,
    scale: f64,
    q0: f64,
    message: f64,
    threshold: f64,
    tolerance: f64,
) -> Result<CkksReading> {
    let range = q0 / scale;
    let noise = error / scale;
    if !(noise.is_finite() && tolerance.is_finite() && tolerance > noise) {
        return Err(Error::OutOfRange(format!(
            "a tolerance of {tolerance:.3e} is finer than the CKKS error bound of the value ({noise:.3e}): no reading is that precise"
        )));
    }
    let precision_bits = (-(tolerance - noise).log2()).ceil().max(0.0) as u32;
    let read_bits = precision_bits + range.log2().ceil().max(0.0) as u32;
    if !(1..60).contains(&read_bits) {
        return Err(Error::OutOfRange(format!(
            "a tolerance of {tolerance:.3e} on a range of {range:.3e} needs {read_bits} bits read (1..60)"
        )));
    }
    if !threshold.is_finite() || message + threshold.abs() + noise >= range / 2.0 {
        return Err(Error::OutOfRange(format!(
            "values up to {message:.3e} and the threshold {threshold} exceed the +-{:.3e} a reading at scale 2^{:.0} holds",
            range / 2.0,
            scale.log2()
        )));
    }
    // The reading always rounds: x - threshold has a fraction below 2^-p.
    let chosen = decision_analysis(
        source_n,
        tfhe_params,
        error.log2(),
        q0 as u64,
        read_bits,
        true,
    );
    if chosen.log2_failure_per_decision > MAX_LOG2_FAILURE {
        return Err(Error::OutOfRange(format!(
            "a decision reading {read_bits} bits would fail with probability 2^{:.1} (at most 2^{MAX_LOG2_FAILURE:.0} is accepted)",
            chosen.log2_failure_per_decision
        )));
    }
    Ok(CkksReading {
        precision_bits,
        read_bits,
        window_bits: chosen.window_bits,
        bootstraps: chosen.bootstraps,
        tolerance: (-(precision_bits as f64)).exp2() + noise,
        log2_failure: chosen.log2_failure_per_decision,
    })
}

/// For each coefficient index of a coefficient-encoded CKKS ciphertext
/// ([`ckks::Plaintext::from_coefficients`]), an encrypted bit: is the real
/// coefficient x >= `threshold`? Right whenever |x - threshold| >
/// `tolerance`; an error when the ciphertext's own error bound, its message
/// bound or the failure analysis leave no reading that meets it
/// ([`ckks_reading`]). Returns the reading with the bits.
pub fn ckks_coefficients_above(
    ct: &ckks::Ciphertext,
    coefficients: &[usize],
    threshold: f64,
    tolerance: f64,
    key: &TransitionKey,
    server: &tfhe::ServerKey,
) -> Result<(Vec<EncryptedBit>, CkksReading)> {
    check_keys(
        &Source::Ckks(ct.context().params().clone()),
        ct.key_id(),
        key,
        server,
    )?;
    let q = ct.context().q_primes()[0];
    let reading = ckks_reading(
        key.source.n(),
        &key.tfhe,
        ct.noise_estimate_log2().exp2(),
        ct.scale(),
        q as f64,
        ct.message_bound_log2().exp2() / ct.scale(),
        threshold,
        tolerance,
    )?;
    let (k, range) = (reading.read_bits, q as f64 / ct.scale());
    // phi - threshold' + 1/2: its top bit is x >= threshold.
    let shift = (threshold / range * 2f64.powi(64)).round() as i128;
    let offset = ((1i128 << 63) - shift) as u64;
    let low = ct.drop_to_level(0)?;
    let src = Source2Lwe::new(low.polys(), coefficients, offset)?;
    Ok((
        top_bits(&src, k, reading.window_bits, key, server)?,
        reading,
    ))
}

/// What bounds [`any`]'s sums on `set`: (p = message x carry, the largest
/// squared 2-norm of a bootstrap's input, Delta = 1/(2p) of the torus).
fn any_bounds(set: &tfhe::TfheParameters) -> Result<(u64, u64, u64)> {
    let tfhe::Encoding::Integer {
        message_modulus,
        carry_modulus,
        max_noise_level,
    } = set.encoding
    else {
        return Err(Error::Mismatch("an integer TFHE set is needed".into()));
    };
    let p = message_modulus * carry_modulus;
    Ok((p, max_noise_level * max_noise_level, (1u64 << 63) / p))
}

/// Bootstraps [`any`] takes on `count` fresh decision bits (degree 1,
/// noise level 1) of `set`: what the planner predicts it from.
pub fn any_bootstraps(set: &tfhe::TfheParameters, count: usize) -> Result<usize> {
    let (p, norm2, _) = any_bounds(set)?;
    let group = p.min(norm2).max(2) as usize;
    let (mut level, mut total) = (count, 0);
    while level > 1 {
        level = level.div_ceil(group);
        total += level;
    }
    Ok(total)
}

/// One encrypted bit: is any of `bits` (blocks of 0 or 1) nonzero? Blocks
/// are summed in groups, and each sum s read by one key switch and sign
/// bootstrap of Delta (1/2 - s), negative exactly when s >= 1. A group
/// holds blocks while their degrees sum to at most p (so Delta (1/2 - s)
/// stays above -1/2 of the torus) and their noise levels' squares to at
/// most the set's analysed input norm (independent noises: the failure
/// probability stays the set's own per bootstrap): 16 fresh decision bits
/// per bootstrap on 2_2, against 5 for a lookup table of the sum.
pub fn any(server: &tfhe::ServerKey, bits: &[EncryptedBit]) -> Result<EncryptedBit> {
    let (p, norm2, delta) = any_bounds(server.parameters())?;
    // Fresh bits pair up (every round after the first shrinks the level).
    if norm2 < 2 {
        return Err(Error::Mismatch(
            "`any` needs a set that adds two blocks before a bootstrap".into(),
        ));
    }
    if bits.is_empty() {
        return Err(Error::OutOfRange("no bits to combine".into()));
    }
    let mut level: Vec<EncryptedBit> = bits.to_vec();
    while level.len() > 1 {
        let mut groups: Vec<&[EncryptedBit]> = Vec::new();
        let (mut start, mut degree, mut noise) = (0, 0, 0);
        for (i, b) in level.iter().enumerate() {
            let nl2 = b.noise_level() * b.noise_level();
            if i > start && (degree + b.degree() > p || noise + nl2 > norm2) {
                groups.push(&level[start..i]);
                (start, degree, noise) = (i, 0, 0);
            }
            degree += b.degree();
            noise += nl2;
        }
        groups.push(&level[start..]);
        level = groups
            .par_iter()
            .map(|group| {
                let mut z = group[0].lwe().clone();
                for b in &group[1..] {
                    z.add_assign(b.lwe())?;
                }
                z.neg_assign();
                z.add_constant(delta / 2);
                Ok(server.sign_block(&server.key_switch(&z)?)?)
            })
            .collect::<Result<Vec<_>>>()?;
    }
    Ok(level.remove(0))
}
