//! Named parameter sets, their security sources and the noise analysis that
//! gives each its failure probability per bootstrap (see the crate README for
//! the derivation).

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

/// A published security estimate that a parameter set's LWE or GLWE problem
/// scales conservatively from: same or larger dimension, same or larger
/// relative noise deviation. [`TfheParameters::check`] accepts only the
/// estimates the named sets cite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SecuritySource {
    /// Where the estimate is published.
    pub source: &'static str,
    /// LWE dimension (n, or k N for GLWE) of the estimated set.
    pub dimension: usize,
    /// Noise deviation relative to the modulus in the estimated set.
    pub relative_std: f64,
    /// Estimated security in bits.
    pub bits: u32,
}

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
    /// The estimate the small LWE key's (n, noise) scales from.
    pub lwe_security: SecuritySource,
    /// The estimate the GLWE key's (k N, noise) scales from.
    pub glwe_security: SecuritySource,
    /// log2 of the largest failure probability per bootstrap the set
    /// promises: -128 for the default sets, -64 for the faster `_2M64`
    /// variants; never above -64.
    pub max_log2_failure: f64,
}

/// A tfhe-rs parameter set (tfhe/src/shortint/parameters, generated with the
/// lattice estimator for 128-bit security).
const fn tfhe_rs(source: &'static str, dimension: usize, relative_std: f64) -> SecuritySource {
    SecuritySource {
        source,
        dimension,
        relative_std,
        bits: 128,
    }
}

const LWE_OF_1_0: SecuritySource = tfhe_rs(
    "tfhe-rs PARAM_MESSAGE_1_CARRY_0_KS_PBS_GAUSSIAN_2M128, LWE",
    692,
    2.2726188072598936e-05,
);

const GLWE_2_X_1024: SecuritySource = tfhe_rs(
    "tfhe-rs PARAM_MESSAGE_1_CARRY_1_KS_PBS_GAUSSIAN_2M128, GLWE 2 x 1024",
    2048,
    3.1529322391500584e-16,
);

const LWE_OF_1_1: SecuritySource = tfhe_rs(
    "tfhe-rs PARAM_MESSAGE_1_CARRY_1_KS_PBS_GAUSSIAN_2M128, LWE",
    747,
    8.243822162983204e-06,
);

const LWE_OF_2_2: SecuritySource = tfhe_rs(
    "tfhe-rs PARAM_MESSAGE_2_CARRY_2_KS_PBS_GAUSSIAN_2M128, LWE",
    845,
    1.3533791553518106e-06,
);

const GLWE_1_X_2048: SecuritySource = tfhe_rs(
    "tfhe-rs PARAM_MESSAGE_2_CARRY_1_KS_PBS_GAUSSIAN_2M128, GLWE 1 x 2048",
    2048,
    3.1529322391500584e-16,
);

const LWE_OF_3_3: SecuritySource = tfhe_rs(
    "tfhe-rs PARAM_MESSAGE_3_CARRY_3_KS_PBS_GAUSSIAN_2M128, LWE",
    936,
    2.527906485727494e-07,
);

const GLWE_1_X_8192: SecuritySource = tfhe_rs(
    "tfhe-rs PARAM_MESSAGE_3_CARRY_2_KS_PBS_GAUSSIAN_2M128, GLWE 1 x 8192",
    8192,
    2.168404344971009e-19,
);

/// The published estimates the named sets scale from: [`TfheParameters::check`]
/// accepts no other source, so a caller cannot vouch for its own set.
const PUBLISHED_ESTIMATES: [SecuritySource; 7] = [
    LWE_OF_1_0,
    GLWE_2_X_1024,
    LWE_OF_1_1,
    LWE_OF_2_2,
    GLWE_1_X_2048,
    LWE_OF_3_3,
    GLWE_1_X_8192,
];

impl TfheParameters {
    /// Boolean gates, failure probability <= 2^-128 per gate. (tfhe-rs uses
    /// N = 512; the kernels' smallest NTT is 1024, so GLWE is 2 x 1024.)
    pub fn boolean() -> TfheParameters {
        TfheParameters {
            name: "TFHE_BOOLEAN_2M128",
            lwe_dimension: 692,
            glwe_dimension: 2,
            polynomial_size: 1024,
            lwe_noise_std: 2.2726188072598936e-05,
            glwe_noise_std: GLWE_STD_2048,
            modulus_bits: 50,
            pbs_base_log: 23,
            pbs_levels: 1,
            ks_base_log: 4,
            ks_levels: 3,
            grouping: 1,
            encoding: Encoding::Boolean,
            lwe_security: LWE_OF_1_0,
            glwe_security: GLWE_2_X_1024,
            max_log2_failure: -128.0,
        }
    }

    /// 1-bit message, 1-bit carry blocks.
    pub fn message_1_carry_1() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_1_CARRY_1_2M128",
            lwe_dimension: 747,
            glwe_dimension: 2,
            polynomial_size: 1024,
            lwe_noise_std: 8.243822162983204e-06,
            glwe_noise_std: GLWE_STD_2048,
            modulus_bits: 50,
            pbs_base_log: 23,
            pbs_levels: 1,
            ks_base_log: 4,
            ks_levels: 3,
            grouping: 1,
            encoding: Encoding::Integer {
                message_modulus: 2,
                carry_modulus: 2,
                max_noise_level: 3,
            },
            lwe_security: LWE_OF_1_1,
            glwe_security: GLWE_2_X_1024,
            max_log2_failure: -128.0,
        }
    }

    /// 2-bit message, 2-bit carry blocks: the radix integers' default.
    pub fn message_2_carry_2() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_2_CARRY_2_2M128",
            lwe_dimension: 845,
            glwe_dimension: 1,
            polynomial_size: 2048,
            lwe_noise_std: 1.3533791553518106e-06,
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
            lwe_security: LWE_OF_2_2,
            glwe_security: GLWE_1_X_2048,
            max_log2_failure: -128.0,
        }
    }

    /// 3-bit message, 3-bit carry blocks (N = 8192: large keys, slow bootstraps).
    pub fn message_3_carry_3() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_3_CARRY_3_2M128",
            lwe_dimension: 936,
            glwe_dimension: 1,
            polynomial_size: 8192,
            lwe_noise_std: 2.527906485727494e-07,
            glwe_noise_std: 1.0 / 35184372088832.0, // 2^-45
            modulus_bits: 50,
            pbs_base_log: 15,
            pbs_levels: 2,
            ks_base_log: 2,
            ks_levels: 10,
            grouping: 1,
            encoding: Encoding::Integer {
                message_modulus: 8,
                carry_modulus: 8,
                max_noise_level: 9,
            },
            lwe_security: LWE_OF_3_3,
            glwe_security: GLWE_1_X_8192,
            max_log2_failure: -128.0,
        }
    }

    /// The 2_2 set with failure probability <= 2^-64 per bootstrap (same
    /// keys' security): a 3-level key switch in base 2^5 instead of 5 levels
    /// in base 2^3, so a 40% smaller key-switching key and a faster key switch.
    pub fn message_2_carry_2_2m64() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_2_CARRY_2_2M64",
            ks_base_log: 5,
            ks_levels: 3,
            max_log2_failure: -64.0,
            ..Self::message_2_carry_2()
        }
    }

    /// The 3_3 set with failure probability <= 2^-64 per bootstrap (same
    /// keys' security): a 5-level key switch in base 2^4 instead of 10
    /// levels in base 2^2, halving its key-switching key (614 MB expanded).
    pub fn message_3_carry_3_2m64() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_3_CARRY_3_2M64",
            ks_base_log: 4,
            ks_levels: 5,
            max_log2_failure: -64.0,
            ..Self::message_3_carry_3()
        }
    }

    /// The 2_2 set with multi-bit blind rotation (grouping 2: one external
    /// product per pair of small-key bits, 3 GGSWs per pair), failure
    /// probability <= 2^-128. n = 846: the smallest even n at least 2_2's
    /// 845 (the same LWE estimate scales to it). The bootstrapping key is
    /// 1.5x the classic one; a lone bootstrap runs faster on two threads
    /// (the next pair's key is combined beside the current product).
    pub fn message_2_carry_2_multi_bit() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_2_CARRY_2_MULTI_BIT_2M128",
            lwe_dimension: 846,
            grouping: 2,
            ..Self::message_2_carry_2()
        }
    }

    /// The 1_1 set with multi-bit blind rotation: n = 748 (747 + 1, even
    /// for pairs; the same noise at a larger n keeps the LWE estimate's
    /// security), failure probability <= 2^-128.
    pub fn message_1_carry_1_multi_bit() -> TfheParameters {
        TfheParameters {
            name: "TFHE_MESSAGE_1_CARRY_1_MULTI_BIT_2M128",
            lwe_dimension: 748,
            grouping: 2,
            ..Self::message_1_carry_1()
        }
    }

    /// The boolean set with multi-bit blind rotation (n = 692 is even),
    /// failure probability <= 2^-128.
    pub fn boolean_multi_bit() -> TfheParameters {
        TfheParameters {
            name: "TFHE_BOOLEAN_MULTI_BIT_2M128",
            grouping: 2,
            ..Self::boolean()
        }
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

    /// The named set called `name`.
    pub fn by_name(name: &str) -> Result<TfheParameters> {
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

    /// Checks shape, security scaling and failure probability (at most the
    /// set's promise, which is at most 2^-64).
    pub fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidParameters(format!("{}: {m}", self.name)));
        let n = self.polynomial_size;
        if !n.is_power_of_two() || !(triskel_kernels::MIN_NTT_SIZE..=16384).contains(&n) {
            return bad(format!("polynomial size {n}"));
        }
        if self.glwe_dimension == 0 || self.lwe_dimension == 0 {
            return bad("empty key".into());
        }
        if !(self.grouping == 1 || self.grouping == 2 && self.lwe_dimension % 2 == 0) {
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
        let glwe_dim = self.glwe_dimension * n;
        for (what, dim, std, src) in [
            (
                "LWE",
                self.lwe_dimension,
                self.lwe_noise_std,
                self.lwe_security,
            ),
            ("GLWE", glwe_dim, self.glwe_noise_std, self.glwe_security),
        ] {
            // Negated comparisons: a NaN deviation is refused too.
            let scales = dim >= src.dimension && std >= src.relative_std;
            if !(scales && PUBLISHED_ESTIMATES.contains(&src) && src.bits >= 128) {
                return bad(format!(
                    "{what} (dimension {dim}, noise {std:e}) does not scale conservatively from {}",
                    src.source
                ));
            }
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
        Ok(())
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

    /// The noise analysis of a bootstrap whose input is a linear combination
    /// of bootstrapped outputs with squared 2-norm `input_norm2`.
    pub fn noise_for_input(&self, input_norm2: f64) -> NoiseAnalysis {
        let (k, big_n, n) = (
            self.glwe_dimension as f64,
            self.polynomial_size as f64,
            self.lwe_dimension as f64,
        );
        let b = 2f64.powi(self.pbs_base_log as i32);
        let l = self.pbs_levels as f64;
        let precision = 2f64.powi(-((self.pbs_base_log * self.pbs_levels) as i32));
        // Digits uniform in [-B/2, B/2): variance (B^2 + 2) / 12; rounding
        // error of the decomposition uniform: precision^2 / 12, multiplied by
        // the GGSW bit (E[m^2] = 1/2) and by (1, -S) (E[s^2] = 1/2 per coefficient).
        let key_term = l * (k + 1.0) * big_n * (b * b + 2.0) / 12.0 * self.glwe_noise_std.powi(2);
        let rounding = (1.0 + k * big_n / 2.0) * precision * precision / 12.0;
        let (steps, external_product) = if self.grouping == 2 {
            // One step per pair: the combined GGSW sum_p (X^e_p - 1) GGSW_p
            // carries 3 GGSWs' noise times |X^e - 1|^2 (2 on average over
            // e uniform mod 2N: 0 at e = 0, 4 at e = N), and its message
            // X^e - 1 (e = <s_pair, a_pair>) is nonzero for 3 of the 4 bit
            // patterns, |.|^2 = 2 on average: 3/4 * 2 on the rounding.
            (n / 2.0, 6.0 * key_term + 1.5 * rounding)
        } else {
            (n, key_term + 0.5 * rounding)
        };
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
        let margin = match self.encoding {
            Encoding::Boolean => big_n / 4.0,
            Encoding::Integer {
                message_modulus,
                carry_modulus,
                ..
            } => big_n / (2 * message_modulus * carry_modulus) as f64,
        };
        let scale = (2.0 * big_n).powi(2);
        let total = (norm2 * blind_rotation + key_switch) * scale + modulus_switch;
        NoiseAnalysis {
            external_product,
            blind_rotation,
            key_switch,
            modulus_switch,
            input_norm2: norm2,
            total,
            margin,
            log2_failure: log2_gaussian_tail(margin / total.sqrt()),
        }
    }
}

/// 2^-47 of q: the GLWE noise of the N k = 2048 sets (3.2 or more on a 50-bit prime).
const GLWE_STD_2048: f64 = 7.105427357601002e-15;

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
    /// Distance to the decision boundary, in units of 1/(2N).
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
