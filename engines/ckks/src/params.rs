//! CKKS parameters: named sets checked against the ePrint 2024/463
//! 128-bit table, a helper that builds a chain for a depth and precision, and
//! the checks every set goes through.
//!
//! A chain is Q = q_0 q_1 ... q_L: q_0 holds the integer part of the final
//! result (its bits minus the scale's bound the magnitude of decrypted
//! values), each q_l (l >= 1) is close to the scale 2^log_scale and is
//! dropped by one rescale. P (special primes) only serves key switching.
//!
//! Every named set of scale 2^40 keeps each prime at or below 50 bits, so
//! every NTT runs on the AVX-512 IFMA kernels where the CPU has them. The
//! sets of scale 2^50 (for noise-flooded decryptions, which need the larger
//! scale) have a 60-bit first prime and 60-bit special primes: those NTTs run
//! on the 64-bit AVX-512 or portable kernels. [`CkksParameters::for_depth`]
//! uses a first prime of log_scale + integer_bits bits, which exceeds 50 bits
//! (and runs on the 64-bit AVX-512 or portable kernels) when log_scale is
//! above 50 - integer_bits.

use crate::error::{Error, Result};
use triskel_ring::RlweSet;

/// A CKKS parameter set: the RLWE set ([`RlweSet`]: ring degree, prime
/// sizes of Q and P, key-switching digits), whose accessors it derefs to,
/// and the default scale. The primes are derived deterministically from the
/// bit sizes (the largest NTT-friendly primes of each size), so the fields
/// describe the set completely. Two sets are equal when they describe the
/// same instance, whether or not either [allows being
/// insecure](Self::allow_insecure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CkksParameters {
    pub(crate) set: RlweSet,
    pub(crate) log_scale: u32,
}

triskel_ring::rlwe_deref!(CkksParameters => RlweSet, set);

impl CkksParameters {
    /// A custom set: ring degree n, bit sizes of q_0..q_L and of the special
    /// primes, default scale 2^log_scale, and `dnum` key-switching digits.
    /// Checked when the context is built (see [`validate`](Self::validate)).
    pub fn new(
        name: &str,
        n: usize,
        q_bits: &[u32],
        p_bits: &[u32],
        log_scale: u32,
        dnum: usize,
    ) -> CkksParameters {
        CkksParameters {
            set: RlweSet::new(name, n, q_bits, p_bits, dnum),
            log_scale,
        }
    }

    /// N = 8192, Q = 50 + 40 + 40 bits, P = 50 bits (log QP = 180), scale
    /// 2^40, dnum = 3: depth 2. The {60, 40, 40} + 60 shape of SEAL's
    /// examples with 50-bit outer primes, so every NTT runs on IFMA; values
    /// up to 2^9 in magnitude decrypt at level 0.
    pub fn n8192() -> CkksParameters {
        CkksParameters::new("ckks-n8192", 8192, &[50, 40, 40], &[50], 40, 3)
    }

    /// N = 8192, Q = 49 + 3 x 40 bits, P = 45 bits (log QP = 214, the
    /// 128-bit limit), scale 2^40, dnum = 4: depth 3; values up to 2^8 in
    /// magnitude decrypt at level 0. P is 4 bits below q_0, so a key switch
    /// at level 0 adds about 2^-21 relative error to each slot.
    pub fn n8192_depth3() -> CkksParameters {
        CkksParameters::new("ckks-n8192-d3", 8192, &[49, 40, 40, 40], &[45], 40, 4)
    }

    /// N = 16384 with the shape of [`n8192`](Self::n8192) (Q = 50 + 40 + 40
    /// bits, P = 50 bits, dnum = 3): the multiply pipeline at N = 16384, for
    /// comparisons with peers (not among [`named`](Self::named), whose
    /// deeper N = 16384 set the planner picks).
    pub fn n16384_depth2() -> CkksParameters {
        CkksParameters::new("ckks-n16384-d2", 16384, &[50, 40, 40], &[50], 40, 3)
    }

    /// N = 16384, Q = 50 + 7 x 40 bits, P = 2 x 50 bits (log QP = 430),
    /// scale 2^40, dnum = 4: depth 7.
    pub fn n16384() -> CkksParameters {
        let mut q = vec![50];
        q.extend([40; 7]);
        CkksParameters::new("ckks-n16384", 16384, &q, &[50, 50], 40, 4)
    }

    /// N = 32768, Q = 50 + 16 x 40 bits, P = 3 x 50 bits (log QP = 840),
    /// scale 2^40, dnum = 6: depth 16.
    pub fn n32768() -> CkksParameters {
        let mut q = vec![50];
        q.extend([40; 16]);
        CkksParameters::new("ckks-n32768", 32768, &q, &[50, 50, 50], 40, 6)
    }

    /// N = 65536, Q = 50 + 36 x 40 bits, P = 5 x 50 bits (log QP = 1740
    /// of the 1747 that the 128-bit table allows at this degree, see
    /// [`HE_STANDARD_128`](triskel_ring::HE_STANDARD_128) for the source),
    /// scale 2^40, dnum = 8: depth 36.
    pub fn n65536() -> CkksParameters {
        let mut q = vec![50];
        q.extend([40; 36]);
        CkksParameters::new("ckks-n65536", 65536, &q, &[50; 5], 40, 8)
    }

    /// N = 16384, Q = 60 + 5 x 50 bits, P = 2 x 60 bits (log QP = 430, the
    /// 128-bit limit), scale 2^50, dnum = 3: depth 5; values up to 2^9 in
    /// magnitude decrypt at level 0. For decryptions with noise flooding,
    /// which costs about 2^(log2 B + 31) of the scale (the README's
    /// "Security: shared decryptions and noise flooding").
    pub fn n16384_scale50() -> CkksParameters {
        let mut q = vec![60];
        q.extend([50; 5]);
        CkksParameters::new("ckks-n16384-s50", 16384, &q, &[60, 60], 50, 3)
    }

    /// N = 32768, Q = 60 + 12 x 50 bits, P = 3 x 60 bits (log QP = 840),
    /// scale 2^50, dnum = 5: depth 12; values up to 2^9 in magnitude decrypt
    /// at level 0. The deeper set for flooded decryptions.
    pub fn n32768_scale50() -> CkksParameters {
        let mut q = vec![60];
        q.extend([50; 12]);
        CkksParameters::new("ckks-n32768-s50", 32768, &q, &[60, 60, 60], 50, 5)
    }

    /// Every named set: those of scale 2^40 by N, then those of scale 2^50.
    pub fn named() -> Vec<CkksParameters> {
        vec![
            CkksParameters::n8192(),
            CkksParameters::n8192_depth3(),
            CkksParameters::n16384(),
            CkksParameters::n32768(),
            CkksParameters::n65536(),
            CkksParameters::n16384_scale50(),
            CkksParameters::n32768_scale50(),
        ]
    }

    /// The chain for multiplicative depth `depth` at ring degree n with scale
    /// 2^log_scale and values up to 2^(integer_bits - 1) in magnitude:
    /// q_0 of log_scale + integer_bits bits, `depth` primes of log_scale bits,
    /// one digit per prime and P = one prime as large as the largest q_i.
    /// Refused (as any set) when above the 128-bit limit.
    pub fn for_depth(
        n: usize,
        depth: usize,
        log_scale: u32,
        integer_bits: u32,
    ) -> Result<CkksParameters> {
        if depth >= 64 || log_scale > 61 || integer_bits > 61 {
            return Err(Error::InvalidParameters(format!(
                "depth {depth}, log_scale {log_scale}, integer_bits {integer_bits}: \
                 at most 63 levels and 61-bit primes"
            )));
        }
        let first = log_scale + integer_bits;
        let mut q_bits = vec![first];
        q_bits.extend(std::iter::repeat_n(log_scale, depth));
        let p = first.max(log_scale);
        let params = CkksParameters::new(
            &format!("ckks-n{n}-depth{depth}-s{log_scale}"),
            n,
            &q_bits,
            &[p],
            log_scale,
            depth + 1,
        );
        params.validate()?;
        Ok(params)
    }

    /// The same set with `dnum` key-switching digits.
    pub fn with_dnum(mut self, dnum: usize) -> CkksParameters {
        self.set = self.set.with_dnum(dnum);
        self
    }

    /// Accepts a set above the 128-bit limit, for tests and experiments in
    /// memory only: such a set never loads from bytes.
    pub fn allow_insecure(mut self) -> CkksParameters {
        self.set = self.set.allow_insecure();
        self
    }

    /// Number of complex slots, n / 2.
    pub fn slots(&self) -> usize {
        self.n() / 2
    }

    /// log2 of the default scale.
    pub fn log_scale(&self) -> u32 {
        self.log_scale
    }

    /// Checks the set: n a power of two in [2^10, 2^16] (the range of the
    /// security table), at least one Q and one P prime, primes of 20..=61
    /// bits, 10 <= log_scale < 61 and every q_l (l >= 1) at least as large
    /// as the scale minus 2 bits, q_0 larger than the scale, 1 <= dnum <=
    /// number of Q primes, and log2(QP) within the 128-bit bound unless
    /// [`allow_insecure`](Self::allow_insecure) was called.
    pub fn validate(&self) -> Result<()> {
        let bad = |msg: String| Err(Error::InvalidParameters(msg));
        self.set.check(61)?;
        if !(10..61).contains(&self.log_scale) {
            return bad(format!("log_scale {} is outside 10..61", self.log_scale));
        }
        if self.q_bits()[0] <= self.log_scale {
            return bad(format!(
                "the first prime ({} bits) must be larger than the scale (2^{})",
                self.q_bits()[0],
                self.log_scale
            ));
        }
        if let Some(b) = self.q_bits()[1..].iter().find(|&&b| b + 2 < self.log_scale) {
            return bad(format!(
                "a rescaling prime of {b} bits is too small for the scale 2^{}",
                self.log_scale
            ));
        }
        Ok(())
    }
}
