//! Named parameter sets, their security by the lattice estimator's curves
//! and the noise analysis that gives each its failure probability per
//! bootstrap (see the crate README for the derivation).

use crate::error::{Error, Result};

/// What a ciphertext encodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Booleans as +-1/8 on the torus; gates take linear combinations of
    /// 2-norm at most sqrt(8) (XOR: 2 (a + b)).
    Boolean,
    /// A message in [0, message_modulus) with carry space carry_modulus and a
    /// padding bit: m * 2^64 / (2 message_modulus carry_modulus).
    Integer {
        /// Size of the message space.
        message_modulus: u64,
        /// Size of the carry space above it.
        carry_modulus: u64,
        /// Largest noise level (sum of |coefficients| of a linear combination
        /// of bootstrapped ciphertexts) before a bootstrap is required.
        max_noise_level: u64,
    },
}

/// One security curve of the lattice estimator: (n, sigma) reaches `bits`
/// when log2 sigma >= slope n + bias, for a uniform binary secret of
/// dimension n >= `min_dimension` and Gaussian noise of deviation sigma
/// relative to the modulus.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SecurityCurve {
    /// The security level the curve is drawn for.
    pub bits: f64,
    /// Slope of log2 sigma in n.
    pub slope: f64,
    /// log2 sigma at n = 0 of the line.
    pub bias: f64,
    /// Smallest dimension the curve covers.
    pub min_dimension: usize,
}

impl SecurityCurve {
    /// The smallest log2 of the relative deviation that reaches the curve's
    /// level at dimension `n`.
    pub fn min_log2_std(&self, n: usize) -> f64 {
        self.slope * n as f64 + self.bias
    }
}

/// The curves of the lattice estimator (commit 60808bd, MATZOV cost model
/// for the dual attacks; all attacks considered) for modulus 2^64, binary
/// secrets and Gaussian noise: Zama's parameter-curves of June 2024, used by
/// Concrete and tfhe-rs since then (tfhe-rs's defaults sit on the 132-bit
/// one). They replace the 2022 curve the sets of this crate used to sit on,
/// log2 sigma = -0.026599 n + 2.981543 (128 bits then, about 125 now).
pub const SECURITY_CURVES: [SecurityCurve; 2] = [
    SecurityCurve {
        bits: 128.0,
        slope: -0.025696778711484593,
        bias: 2.675931372549016,
        min_dimension: 450,
    },
    SecurityCurve {
        bits: 132.0,
        slope: -0.024891456582633045,
        bias: 2.65734593837534,
        min_dimension: 450,
    },
];

/// The least security every set must reach unless explicitly allowed below
/// it ([`TfheParameters::allow_insecure`]).
pub const MIN_SECURITY_BITS: f64 = 128.0;

/// The security level, in bits, of LWE with a binary secret of dimension
/// `dimension` and Gaussian noise of deviation `relative_std` relative to the
/// modulus: interpolated linearly in log2 sigma between the two curves of
/// [`SECURITY_CURVES`] at that dimension (extrapolated beyond them: a level
/// above 132 bits says only that the problem is harder than the 132-bit
/// curve asks). 0 below the curves' smallest dimension; NaN for a NaN
/// deviation. The curves are drawn for a modulus 2^64 and are applied to the
/// relative deviation for the NTT prime of the GLWE keys too.
pub fn security_bits(dimension: usize, relative_std: f64) -> f64 {
    let [low, high] = SECURITY_CURVES;
    if dimension < low.min_dimension.max(high.min_dimension) {
        return 0.0;
    }
    let (at_low, at_high) = (low.min_log2_std(dimension), high.min_log2_std(dimension));
    low.bits + (high.bits - low.bits) * (relative_std.log2() - at_low) / (at_high - at_low)
}

/// A superseded set's name and the set that replaces it. The superseded
/// sets' LWE (n, sigma) lay on the 2022 curve: 125.1-125.6 bits by
/// [`SECURITY_CURVES`]. Their keys and values are refused by name
/// ([`Error::Superseded`]).
pub const SUPERSEDED: [(&str, &str); 9] = [
    ("TFHE_BOOLEAN_2M128", "TFHE_BOOLEAN_2M128_V2"),
    (
        "TFHE_MESSAGE_1_CARRY_1_2M128",
        "TFHE_MESSAGE_1_CARRY_1_2M128_V2",
    ),
    (
        "TFHE_MESSAGE_2_CARRY_2_2M128",
        "TFHE_MESSAGE_2_CARRY_2_2M128_V2",
    ),
    (
        "TFHE_MESSAGE_3_CARRY_3_2M128",
        "TFHE_MESSAGE_3_CARRY_3_2M128_V2",
    ),
    (
        "TFHE_MESSAGE_2_CARRY_2_2M64",
        "TFHE_MESSAGE_2_CARRY_2_2M64_V2",
    ),
    (
        "TFHE_MESSAGE_3_CARRY_3_2M64",
        "TFHE_MESSAGE_3_CARRY_3_2M64_V2",
    ),
    (
        "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128",
        "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128_V2",
    ),
    (
        "TFHE_BOOLEAN_MULTI_BIT_2M128",
        "TFHE_BOOLEAN_MULTI_BIT_2M128_V2",
    ),
    (
        "TFHE_MESSAGE_1_CARRY_1_MULTI_BIT_2M128",
        "TFHE_MESSAGE_1_CARRY_1_MULTI_BIT_2M128_V2",
    ),
];

/// A TFHE parameter set. Ciphertexts at rest are LWE modulo 2^64 under the
/// big key (the k N GLWE key coefficients); a bootstrap key switches to the
/// small key of dimension n, switches modulus to 2N and blind-rotates over the
/// NTT prime q.
#[derive(Clone, Debug, PartialEq)]
pub struct TfheParameters {
    /// The set's name.
    pub name: &'static str,
    /// n, the small LWE key's dimension.
    pub lwe_dimension: usize,
    /// k, polynomials in a GLWE mask.
    pub glwe_dimension: usize,
    /// N, the ring degree.
    pub polynomial_size: usize,
    /// Deviation of the small-key (key-switching) noise, relative to 2^64.
    pub lwe_noise_std: f64,
    /// Deviation of the GLWE (bootstrapping key) noise, relative to q.
    pub glwe_noise_std: f64,
    /// Bits of the NTT prime q.
    pub modulus_bits: u32,
    /// log2 of the bootstrapping key's decomposition base.
    pub pbs_base_log: u32,
    /// Levels of the bootstrapping key's decomposition.
    pub pbs_levels: u32,
    /// log2 of the key-switching key's decomposition base.
    pub ks_base_log: u32,
    /// Levels of the key-switching key's decomposition.
    pub ks_levels: u32,
    /// Small-key bits per blind-rotation step: 1 (one CMux per bit) or 2
    /// (multi-bit: one external product per pair of bits, with 3 GGSWs per
    /// pair in the key; n must be even).
    pub grouping: usize,
    /// What ciphertexts encode.
    pub encoding: Encoding,
    /// log2 of the largest failure probability per bootstrap the set
    /// promises: -128 for the default sets, -64 for the faster `_2M64`
    /// variants; never above -64.
    pub max_log2_failure: f64,
    /// Whether [`check`](Self::check) accepts a security level below
    /// [`MIN_SECURITY_BITS`]: set only by [`allow_insecure`](Self::allow_insecure),
    /// never by a name or by loaded bytes.
    insecure_allowed: bool,
}

/// 2^-47 of q: the GLWE noise of the N k = 2048 sets (3.2 or more on a 50-bit prime).
const GLWE_STD_2048: f64 = 7.105427357601002e-15;

impl TfheParameters {
    /// Boolean gates, failure probability <= 2^-128 per gate. (tfhe-rs uses
    /// N = 512; the kernels' smallest NTT is 1024, so GLWE is 2 x 1024.)
    pub fn boolean() -> TfheParameters {
        TfheParameters {
            name: "TFHE_BOOLEAN_2M128_V2",
            lwe_dimension: 690,
            glwe_dimension: 2,
            polynomial_size: 1024,
            lwe_noise_std: 4.26528006546346e-05, // 2^-14.517
            glwe_noise_std: GLWE_STD_2048,
            modulus_bits: 50,
            pbs_base_log: 22,
            pbs_levels: 1,
            ks_base_log: 3,
            ks_levels: 4,
            grouping: 1,
            encoding: Encoding::Boolean,
            max_log2_failure: -128.0,
            insecure_allowed: false,
        }
    }

    /// 1-bit message, 1-bit carry blocks.
    pub fn message_1_carry_1() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_1_CARRY_1_2M128_V2",
            lwe_dimension: 742,
            lwe_noise_std: 1.7382558856538626e-05, // 2^-15.812
            encoding: Encoding::Integer {
                message_modulus: 2,
                carry_modulus: 2,
                max_noise_level: 3,
            },
            ..Self::boolean()
        }
    }

    /// 2-bit message, 2-bit carry blocks: the radix integers' default.
    pub fn message_2_carry_2() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_2_CARRY_2_2M128_V2",
            lwe_dimension: 873,
            glwe_dimension: 1,
            polynomial_size: 2048,
            lwe_noise_std: 1.8144956137310024e-06, // 2^-19.072
            glwe_noise_std: GLWE_STD_2048,
            modulus_bits: 50,
            pbs_base_log: 23,
            pbs_levels: 1,
            ks_base_log: 3,
            ks_levels: 5,
            grouping: 1,
            encoding: Encoding::Integer {
                message_modulus: 4,
                carry_modulus: 4,
                max_noise_level: 5,
            },
            max_log2_failure: -128.0,
            insecure_allowed: false,
        }
    }

    /// 3-bit message, 3-bit carry blocks (N = 8192: large keys, slow bootstraps).
    pub fn message_3_carry_3() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_3_CARRY_3_2M128_V2",
            lwe_dimension: 1012,
            glwe_dimension: 1,
            polynomial_size: 8192,
            lwe_noise_std: 1.6488917219769535e-07,  // 2^-22.532
            glwe_noise_std: 1.0 / 35184372088832.0, // 2^-45
            modulus_bits: 50,
            pbs_base_log: 14,
            pbs_levels: 2,
            ks_base_log: 3,
            ks_levels: 7,
            grouping: 1,
            encoding: Encoding::Integer {
                message_modulus: 8,
                carry_modulus: 8,
                max_noise_level: 9,
            },
            max_log2_failure: -128.0,
            insecure_allowed: false,
        }
    }

    /// The 2_2 blocks with failure probability <= 2^-64 per bootstrap: the
    /// looser bound buys a smaller key (n = 808 against 873, at the same
    /// security), so a shorter blind rotation and key switch.
    pub fn message_2_carry_2_2m64() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_2_CARRY_2_2M64_V2",
            lwe_dimension: 808,
            lwe_noise_std: 5.569580118768772e-06, // 2^-17.454
            max_log2_failure: -64.0,
            ..Self::message_2_carry_2()
        }
    }

    /// The 3_3 blocks with failure probability <= 2^-64 per bootstrap:
    /// n = 936 against 1012 and a 6-level key switch against 7.
    pub fn message_3_carry_3_2m64() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_3_CARRY_3_2M64_V2",
            lwe_dimension: 936,
            lwe_noise_std: 6.115611089526413e-07, // 2^-20.641
            ks_levels: 6,
            max_log2_failure: -64.0,
            ..Self::message_3_carry_3()
        }
    }

    /// The 2_2 blocks with multi-bit blind rotation (grouping 2: one
    /// external product per pair of small-key bits, 3 GGSWs per pair),
    /// failure probability <= 2^-128. Its rotation adds 2.5x the classic
    /// one's noise per bit, so the set takes n = 882, base 2^22 and a
    /// 6-level key switch (the classic set: 873, 2^23, 5 levels). The
    /// bootstrapping key is 1.5x the classic one; a lone bootstrap runs
    /// faster on two threads (the next pair's key is combined beside the
    /// current product).
    pub fn message_2_carry_2_multi_bit() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128_V2",
            lwe_dimension: 882,
            lwe_noise_std: 1.553549886837417e-06, // 2^-19.296
            pbs_base_log: 22,
            ks_levels: 6,
            grouping: 2,
            ..Self::message_2_carry_2()
        }
    }

    /// The 1_1 set with multi-bit blind rotation (n = 742 is even),
    /// failure probability <= 2^-128.
    pub fn message_1_carry_1_multi_bit() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_1_CARRY_1_MULTI_BIT_2M128_V2",
            grouping: 2,
            ..Self::message_1_carry_1()
        }
    }

    /// The boolean set with multi-bit blind rotation (n = 690 is even),
    /// failure probability <= 2^-128.
    pub fn boolean_multi_bit() -> TfheParameters {
        TfheParameters {
            name: "TFHE_BOOLEAN_MULTI_BIT_2M128_V2",
            grouping: 2,
            ..Self::boolean()
        }
    }

    /// This set, accepted by [`check`](Self::check) below
    /// [`MIN_SECURITY_BITS`] (experiments only: no named set needs it, and
    /// a loaded key or value always takes the named set of its name).
    pub fn allow_insecure(mut self) -> TfheParameters {
        self.insecure_allowed = true;
        self
    }

    /// The security level of the small LWE key (n, sigma_LWE) by
    /// [`security_bits`].
    pub fn lwe_security_bits(&self) -> f64 {
        security_bits(self.lwe_dimension, self.lwe_noise_std)
    }

    /// The security level of the GLWE key (k N, sigma_GLWE relative to q)
    /// by [`security_bits`].
    pub fn glwe_security_bits(&self) -> f64 {
        security_bits(
            self.glwe_dimension * self.polynomial_size,
            self.glwe_noise_std,
        )
    }

    /// The set's security level: the lower of its LWE and GLWE levels
    /// (NaN when a deviation is NaN).
    pub fn security_bits(&self) -> f64 {
        let (lwe, glwe) = (self.lwe_security_bits(), self.glwe_security_bits());
        if lwe.is_nan() || glwe.is_nan() {
            return f64::NAN;
        }
        lwe.min(glwe)
    }

    /// Every named set.
    pub fn all() -> Vec<TfheParameters> {
        vec![
            Self::boolean(),
            Self::message_1_carry_1(),
            Self::message_2_carry_2(),
            Self::message_3_carry_3(),
            Self::message_2_carry_2_2m64(),
            Self::message_3_carry_3_2m64(),
            Self::message_2_carry_2_multi_bit(),
            Self::boolean_multi_bit(),
            Self::message_1_carry_1_multi_bit(),
        ]
    }

    /// GGSWs in the bootstrapping key: n, or 3 per pair of bits (3 n / 2)
    /// for multi-bit sets.
    pub fn bootstrapping_ggsws(&self) -> usize {
        if self.grouping == 2 {
            self.lwe_dimension / 2 * 3
        } else {
            self.lwe_dimension
        }
    }

    /// The named set called `name`; a superseded set's name is
    /// [`Error::Superseded`].
    pub fn by_name(name: &str) -> Result<TfheParameters> {
        if let Some(&(set, replacement)) = SUPERSEDED.iter().find(|(old, _)| *old == name) {
            return Err(Error::Superseded {
                set: set.to_string(),
                replacement,
            });
        }
        Self::all()
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| Error::InvalidParameters(format!("no parameter set named {name:?}")))
    }

    /// Refuses `what` (e.g. "a lookup table"), made for the set named
    /// `set`, when it is not this set ([`check_set`]).
    pub(crate) fn check_set(&self, what: &str, set: &str) -> Result<()> {
        check_set(what, set, self.name)
    }

    /// Checks shape, security (at least [`MIN_SECURITY_BITS`] for the LWE and
    /// GLWE keys unless [`allow_insecure`](Self::allow_insecure) was called)
    /// and failure probability (at most the set's promise, which is at most
    /// 2^-64, for the set's own inputs and for a comparison's first input).
    pub fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidParameters(format!("{}: {m}", self.name)));
        let n = self.polynomial_size;
        if !n.is_power_of_two() || !(triskel_kernels::MIN_NTT_SIZE..=16384).contains(&n) {
            return bad(format!("polynomial size {n}"));
        }
        if self.glwe_dimension == 0 || self.lwe_dimension == 0 {
            return bad("empty key".into());
        }
        if !(self.grouping == 1 || self.grouping == 2 && self.lwe_dimension.is_multiple_of(2)) {
            return bad(format!(
                "grouping {} of {} key bits (1, or 2 with n even)",
                self.grouping, self.lwe_dimension
            ));
        }
        // The decomposition rounds x B^l / q in f64: q must be exact there.
        if !(30..=52).contains(&self.modulus_bits)
            || self.pbs_base_log * self.pbs_levels + 2 > self.modulus_bits
            || self.ks_base_log * self.ks_levels > 32
            || self.pbs_base_log == 0
            || self.ks_base_log == 0
        {
            return bad("decomposition does not fit the modulus".into());
        }
        if let Encoding::Integer {
            message_modulus,
            carry_modulus,
            max_noise_level,
        } = self.encoding
        {
            let p = message_modulus.saturating_mul(carry_modulus);
            if !p.is_power_of_two() || p < 2 || p as usize > n / 2 || max_noise_level == 0 {
                return bad(format!("block space {p} (message x carry) for N = {n}"));
            }
        }
        // Negated comparisons: a NaN deviation is refused too.
        let (lwe, glwe) = (self.lwe_security_bits(), self.glwe_security_bits());
        if !(lwe >= MIN_SECURITY_BITS && glwe >= MIN_SECURITY_BITS || self.insecure_allowed) {
            return bad(format!(
                "security {lwe:.1} bits (LWE, n = {}, noise {:e}) and {glwe:.1} bits (GLWE, k N = {}, noise {:e}) by the lattice estimator's curves, below {MIN_SECURITY_BITS}: call allow_insecure() to use it anyway",
                self.lwe_dimension,
                self.lwe_noise_std,
                self.glwe_dimension * n,
                self.glwe_noise_std
            ));
        }
        if lwe.is_nan() || glwe.is_nan() {
            return bad("NaN noise deviation".into());
        }
        // The discrete noise must not collapse to zero on the prime.
        if self.glwe_noise_std * 2f64.powi(self.modulus_bits as i32 - 1) < 3.2 {
            return bad("GLWE noise below 3.2 on the prime".into());
        }
        let bound = self.max_log2_failure;
        // NaN or anything above -64 is refused.
        if bound.is_nan() || bound > -64.0 {
            return bad(format!(
                "promised failure probability 2^{bound} above 2^-64"
            ));
        }
        let p = self.noise().log2_failure;
        if p > bound {
            return bad(format!("failure probability 2^{p:.1} exceeds 2^{bound}"));
        }
        if let Some(norm2) = self.comparison_norm2() {
            let p = self.noise_for_input(norm2).log2_failure;
            if p > bound {
                return bad(format!(
                    "a comparison's packed difference (squared norm {norm2}) fails with 2^{p:.1}, above 2^{bound}"
                ));
            }
        }
        Ok(())
    }

    /// Squared 2-norm of the input a comparison bootstraps first: the
    /// difference of two packed pairs of fresh blocks, (a_0 - b_0) +
    /// msg (a_1 - b_1), 2 (msg^2 + 1); None for sets without comparisons
    /// (booleans, and blocks whose carry space is below their message space).
    pub fn comparison_norm2(&self) -> Option<f64> {
        match self.encoding {
            Encoding::Integer {
                message_modulus,
                carry_modulus,
                ..
            } if carry_modulus >= message_modulus => {
                Some(2.0 * (message_modulus * message_modulus + 1) as f64)
            }
            _ => None,
        }
    }

    /// The set's noise analysis (see the crate README), for the largest
    /// input its noise levels allow.
    pub fn noise(&self) -> NoiseAnalysis {
        let norm2 = match self.encoding {
            Encoding::Boolean => 8.0,
            Encoding::Integer {
                max_noise_level, ..
            } => (max_noise_level * max_noise_level) as f64,
        };
        self.noise_for_input(norm2)
    }

    /// The two parts of one blind-rotation step's variance, relative to q^2,
    /// for an average key: the bootstrapping key's noise (key term) and the
    /// decomposition's rounding multiplied by the step's message (rounding
    /// term). See the crate README.
    pub fn step_variance_parts(&self) -> (f64, f64) {
        let (k, big_n) = (self.glwe_dimension as f64, self.polynomial_size as f64);
        let b = 2f64.powi(self.pbs_base_log as i32);
        let l = self.pbs_levels as f64;
        let precision = 2f64.powi(-((self.pbs_base_log * self.pbs_levels) as i32));
        // Digits uniform in [-B/2, B/2): variance (B^2 + 2) / 12; rounding
        // error of the decomposition uniform: precision^2 / 12, multiplied by
        // (1, -S) (E[s^2] = 1/2 per coefficient) and by the step's message.
        let key_term = l * (k + 1.0) * big_n * (b * b + 2.0) / 12.0 * self.glwe_noise_std.powi(2);
        let rounding = (1.0 + k * big_n / 2.0) * precision * precision / 12.0;
        if self.grouping == 2 {
            // One step per pair: the combined GGSW sum_p (X^e_p - 1) GGSW_p
            // carries 3 GGSWs' noise times |X^e - 1|^2 (2 on average over
            // e uniform mod 2N: 0 at e = 0, 4 at e = N), and its message
            // X^e - 1 (e = <s_pair, a_pair>) is nonzero for 3 of the 4 bit
            // patterns, |.|^2 = 2 on average: 3/4 * 2 on the rounding.
            (6.0 * key_term, 1.5 * rounding)
        } else {
            // The CMux's message is the key bit: E[m^2] = 1/2.
            (key_term, 0.5 * rounding)
        }
    }

    /// The noise analysis of a bootstrap whose input is a linear combination
    /// of bootstrapped outputs with squared 2-norm `input_norm2`.
    pub fn noise_for_input(&self, input_norm2: f64) -> NoiseAnalysis {
        let (k, big_n, n) = (
            self.glwe_dimension as f64,
            self.polynomial_size as f64,
            self.lwe_dimension as f64,
        );
        let (key_part, rounding_part) = self.step_variance_parts();
        let external_product = key_part + rounding_part;
        let steps = n / self.grouping as f64;
        let blind_rotation = steps * external_product;
        let bk = 2f64.powi(self.ks_base_log as i32);
        let lk = self.ks_levels as f64;
        let ks_precision = 2f64.powi(-((self.ks_base_log * self.ks_levels) as i32));
        // The key's words are kept to their top 32 bits (triskel-ring): each
        // row's noise gains the rounding of its body and of n mask words.
        let ks_row_variance = self.lwe_noise_std.powi(2) + (n / 2.0 + 1.0) / 12.0 * 2f64.powi(-64);
        let key_switch = k * big_n * lk * (bk * bk + 2.0) / 12.0 * ks_row_variance
            + k * big_n * 0.5 * ks_precision * ks_precision / 12.0;
        let modulus_switch = 1.0 / 12.0 + n / 48.0;
        let norm2 = input_norm2;
        let scale = (2.0 * big_n).powi(2);
        let total = (norm2 * blind_rotation + key_switch) * scale + modulus_switch;
        let sigma = total.sqrt();
        // The phase after the modulus switch is an integer, read by boxes of
        // integers: a message's box is [-margin, margin - 1] around it
        // (half-box rotation of the test vector), so with a continuous
        // error the decision fails beyond margin - 1/2 above and
        // margin + 1/2 below. A boolean (+-1/8, or +-3/8, or +-1/4 for XOR
        // at twice the margin) has one boundary N / 4 away, at the upper
        // side at worst; the other is 3 N / 4 away.
        let (margin, log2_failure) = match self.encoding {
            Encoding::Boolean => {
                let margin = big_n / 4.0;
                (margin, log2_gaussian_tail((margin - 0.5) / sigma) - 1.0)
            }
            Encoding::Integer {
                message_modulus,
                carry_modulus,
                ..
            } => {
                let margin = big_n / (2 * message_modulus * carry_modulus) as f64;
                let above = log2_gaussian_tail((margin - 0.5) / sigma) - 1.0;
                let below = log2_gaussian_tail((margin + 0.5) / sigma) - 1.0;
                (margin, log2_sum(above, below))
            }
        };
        NoiseAnalysis {
            external_product,
            blind_rotation,
            key_switch,
            modulus_switch,
            input_norm2: norm2,
            total,
            margin,
            log2_failure,
        }
    }
}

/// Variances of each step of a bootstrap (see the crate README).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseAnalysis {
    /// One blind-rotation step (a CMux, or a multi-bit pair's external
    /// product), relative to q^2.
    pub external_product: f64,
    /// The blind rotation's output (n / grouping steps), relative to q^2
    /// (and to 2^128 after sample extraction).
    pub blind_rotation: f64,
    /// Key switching, relative to 2^128.
    pub key_switch: f64,
    /// Modulus switching to 2N, in units of 1/(2N).
    pub modulus_switch: f64,
    /// Squared 2-norm of the largest linear combination allowed before a bootstrap.
    pub input_norm2: f64,
    /// Variance of the phase error entering the blind rotation, in units of 1/(2N).
    pub total: f64,
    /// Distance to the decision boundary, half a box (N / (2 p) for a
    /// block space p, N / 4 for booleans), in units of 1/(2N); the failure
    /// probability counts the boxes' half-unit asymmetry on top.
    pub margin: f64,
    /// log2 of the probability that a bootstrap decodes wrongly.
    pub log2_failure: f64,
}

/// log2 Pr[|X| >= z sigma] for a centered Gaussian X of deviation sigma:
/// log2 erfc(z / sqrt 2), by the asymptotic series for large z and the
/// Abramowitz-Stegun 7.1.26 approximation below 3.
pub fn log2_gaussian_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let ln_erfc = if x < 3.0 {
        let t = 1.0 / (1.0 + 0.3275911 * x);
        let poly = t
            * (0.254829592
                + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
        (poly * (-x * x).exp()).ln()
    } else {
        let x2 = x * x;
        let series = 1.0 - 1.0 / (2.0 * x2) + 3.0 / (4.0 * x2 * x2) - 15.0 / (8.0 * x2 * x2 * x2);
        -x2 - (x * std::f64::consts::PI.sqrt()).ln() + series.ln()
    };
    ln_erfc / std::f64::consts::LN_2
}

/// log2 (2^a + 2^b), without underflow.
fn log2_sum(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    hi + (1.0 + (lo - hi).exp2()).log2()
}

/// Refuses `what` (e.g. "a block"), made for the set named `found`, when it
/// is not the set `expected`: sets of equal LWE dimension (1_1 and 2_2, a
/// set and its multi-bit or `_2M64` variant) would otherwise decrypt and
/// compute garbage. Sets are told apart by name, the identity the
/// serialized header carries; two sets are never compatible, as their keys
/// are different secrets.
pub(crate) fn check_set(what: &str, found: &str, expected: &str) -> Result<()> {
    if found != expected {
        return Err(Error::Mismatch(format!(
            "{what} of the parameter set {found} given to keys of {expected}"
        )));
    }
    Ok(())
}
