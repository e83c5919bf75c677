//! The seam where a BFV value moves to TFHE: the one function the executor
//! calls for a `Transition { from: Bfv, to: Tfhe }` step. The homomorphic
//! path is [`crate::transition::bfv_scores_above`] (sample extraction of the
//! values' coefficients as LWE ciphertexts, modulus switch, LWE key switch to
//! the TFHE key, a programmable bootstrap for the sign); this maps each
//! comparison onto it.

use triskel_bfv as bfv;
use triskel_tfhe as tfhe;

use crate::error::{Error, Result};
use crate::program::Cmp;
use crate::transition::{bfv_scores_above, TransitionKey};

/// One BFV -> TFHE transition with its decision.
///
/// # Examples
///
/// ```
/// use triskel::bfv::{self, biometric, BfvContext, Plaintext};
/// use triskel::bridge::{run_bfv_to_tfhe, BfvToTfhe};
/// use triskel::tfhe::ClientKey;
/// use triskel::transition::TransitionKey;
/// use triskel::Cmp;
///
/// let ctx = BfvContext::new(biometric::coefficient_match_parameters())?;
/// let bfv_key = bfv::SecretKey::generate(&ctx)?;
/// let tfhe_key = ClientKey::generate(&triskel::tfhe_set())?;
/// let key = TransitionKey::generate(&bfv_key, &tfhe_key)?;
/// let tfhe_server = tfhe_key.server_key()?;
///
/// let values = [-7i64, 41, 42, 43];
/// let t = ctx.plain_modulus() as i64;
/// let coeffs: Vec<u64> = values.iter().map(|v| v.rem_euclid(t) as u64).collect();
/// let input = bfv_key.encrypt(&Plaintext::from_coeffs(&ctx, &coeffs)?)?;
/// let step = BfvToTfhe {
///     input: &input,
///     coefficients: &[0, 1, 2, 3],
///     cmp: Cmp::Eq,
///     constant: 42,
///     tolerance_bits: 0,
///     key: &key,
///     tfhe_server: &tfhe_server,
/// };
/// let bits = run_bfv_to_tfhe(&step)?;
/// let equal: Vec<u64> = bits.iter().map(|b| tfhe_key.decrypt(b)).collect::<Result<_, _>>()?;
/// assert_eq!(equal, [0, 0, 1, 0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BfvToTfhe<'a> {
    /// BFV ciphertext (coefficient encoding, t a power of two) whose
    /// `coefficients` hold the values, as signed integers centred modulo t,
    /// each in [-t/4, t/4) (the planner sizes t for that). Only those
    /// coefficients leave it (sample extraction).
    pub input: &'a bfv::Ciphertext,
    pub coefficients: &'a [usize],
    /// The decision per value: `value cmp constant`.
    pub cmp: Cmp,
    pub constant: i64,
    /// Bits of the values the decision may round away (0: exact).
    pub tolerance_bits: u32,
    /// The key holder's transition key (BFV secret -> TFHE LWE key) and the
    /// TFHE server key that evaluates.
    pub key: &'a TransitionKey,
    pub tfhe_server: &'a tfhe::ServerKey,
}

/// Returns one TFHE block per value holding 1 when `value cmp constant`
/// holds, else 0, without decrypting the BFV ciphertext.
///
/// On integers every comparison is one or two `x >= c` decisions:
/// a > c is a >= c + 1, a <= c is -a >= -c, a < c is -a >= -c + 1, and
/// a == c is (a >= c) and (-a >= -c) (a != c its negation), the two bits
/// combined by one more bootstrap.
pub fn run_bfv_to_tfhe(step: &BfvToTfhe<'_>) -> Result<Vec<tfhe::Ciphertext>> {
    let at_least = |ct: &bfv::Ciphertext, c: i64| -> Result<Vec<tfhe::Ciphertext>> {
        Ok(bfv_scores_above(
            ct,
            step.coefficients,
            c,
            step.tolerance_bits,
            step.key,
            step.tfhe_server,
        )?)
    };
    let c = step.constant;
    let plus_one = |c: i64| {
        c.checked_add(1)
            .ok_or_else(|| Error::Input(format!("comparison constant {c} overflows")))
    };
    let negated = || -> Result<bfv::Ciphertext> { Ok(step.input.neg()?) };
    match step.cmp {
        Cmp::Ge => at_least(step.input, c),
        Cmp::Gt => at_least(step.input, plus_one(c)?),
        Cmp::Le => at_least(&negated()?, -c),
        Cmp::Lt => at_least(&negated()?, plus_one(-c)?),
        Cmp::Eq | Cmp::Ne => {
            let above = at_least(step.input, c)?;
            let below = at_least(&negated()?, -c)?;
            let want_equal = step.cmp == Cmp::Eq;
            let server = step.tfhe_server;
            let both = server.lookup_table(|x| u64::from((x == 2) == want_equal))?;
            above
                .iter()
                .zip(&below)
                .map(|(a, b)| Ok(server.apply_lookup_table(&server.unchecked_add(a, b)?, &both)?))
                .collect()
        }
    }
}
