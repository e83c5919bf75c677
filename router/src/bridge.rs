//! The seam where a BFV value moves to TFHE: the one function the executor
//! calls for a `Transition { from: Bfv, to: Tfhe }` step.
//!
//! The homomorphic path (sample extraction of the values as LWE ciphertexts,
//! modulus switch, LWE key switch to the TFHE key, a programmable bootstrap
//! for the comparison) is being built in `router/src/transition*`; until it
//! is wired in here this returns [`Error::Unsupported`], never a result
//! computed any other way.

use triskel_bfv as bfv;
use triskel_tfhe as tfhe;

use crate::error::{Error, Result};
use crate::program::Cmp;

/// One BFV -> TFHE transition with its decision.
pub struct BfvToTfhe<'a> {
    /// BFV ciphertext (slot encoding) whose slots 0..count of row 0 hold the
    /// values, as signed integers centred modulo t.
    pub input: &'a bfv::Ciphertext,
    /// How many values (slots 0..count).
    pub count: usize,
    /// The decision per value: `value cmp constant`.
    pub cmp: Cmp,
    pub constant: i64,
    /// The key holder's keys: the transition keys are made from these (and
    /// may be cached by the implementation); the server key evaluates.
    pub bfv_secret: &'a bfv::SecretKey,
    pub tfhe_client: &'a tfhe::ClientKey,
    pub tfhe_server: &'a tfhe::ServerKey,
}

/// Returns one TFHE block per value holding 1 when `value cmp constant`
/// holds, else 0, without decrypting the BFV ciphertext.
pub fn run_bfv_to_tfhe(step: &BfvToTfhe<'_>) -> Result<Vec<tfhe::Ciphertext>> {
    let _ = step;
    Err(Error::Unsupported(
        "BFV -> TFHE transition: not built yet".into(),
    ))
}
