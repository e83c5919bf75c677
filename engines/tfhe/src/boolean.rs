//! Boolean gates: true = +1/8, false = -1/8 on the torus. Every binary gate
//! is one key switch + bootstrap of a linear combination of its inputs with
//! the sign test vector (+1/8 on [0, 1/2), -1/8 on [1/2, 1)); NOT is free.
//! A boolean carries the name of its parameter set and the identity of its
//! client key: keys of another set or another client refuse it.

use triskel_ring::LweCiphertext;

use crate::error::{Error, Result};
use crate::keys::{ClientKey, Owner, ServerKey};
use crate::params::{Encoding, TfheParameters};

/// 1/8 of the torus.
const EIGHTH: u64 = 1 << 61;

/// An encrypted boolean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoolCiphertext {
    pub(crate) lwe: LweCiphertext,
    /// The parameter set and client key it was made with.
    pub(crate) owner: Owner,
}

impl BoolCiphertext {
    /// The name of its parameter set: only keys of that set take it.
    pub fn set_name(&self) -> &'static str {
        self.owner.set
    }

    /// The identity of its client key: only that key and its server key
    /// take it.
    pub fn key_id(&self) -> triskel_ring::KeyId {
        self.owner.key
    }
}

/// The gates bootstrapped from a linear combination c_a a + c_b b + constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// a AND b
    And,
    /// NOT (a AND b)
    Nand,
    /// a OR b
    Or,
    /// NOT (a OR b)
    Nor,
    /// a XOR b
    Xor,
    /// NOT (a XOR b)
    Xnor,
}

impl Gate {
    /// (coefficient of a and b, constant) of the bootstrapped combination:
    /// its phase is in (0, 1/2) exactly when the gate is true, 1/8 from the edges.
    fn combination(self) -> (i64, u64) {
        match self {
            Gate::And => (1, EIGHTH.wrapping_neg()),
            Gate::Nand => (-1, EIGHTH),
            Gate::Or => (1, EIGHTH),
            Gate::Nor => (-1, EIGHTH.wrapping_neg()),
            Gate::Xor => (2, 2 * EIGHTH),
            Gate::Xnor => (-2, (2 * EIGHTH).wrapping_neg()),
        }
    }

    /// The gate on plain booleans.
    pub fn eval(self, a: bool, b: bool) -> bool {
        match self {
            Gate::And => a & b,
            Gate::Nand => !(a & b),
            Gate::Or => a | b,
            Gate::Nor => !(a | b),
            Gate::Xor => a ^ b,
            Gate::Xnor => !(a ^ b),
        }
    }
}

/// Refuses booleans of another set or client key than `owner`'s, then
/// integer parameters.
fn check_booleans(params: &TfheParameters, owner: Owner, cts: &[&BoolCiphertext]) -> Result<()> {
    cts.iter()
        .try_for_each(|c| owner.check("a boolean", c.owner))?;
    if params.encoding != Encoding::Boolean {
        return Err(Error::Mismatch(
            "integer parameters used for boolean gates".into(),
        ));
    }
    Ok(())
}

impl ClientKey {
    /// Encrypts a boolean.
    pub fn encrypt_bool(&self, b: bool) -> Result<BoolCiphertext> {
        Ok(BoolCiphertext {
            lwe: self.encrypt_torus(self.encode_bool(b)?)?,
            owner: self.owner(),
        })
    }

    /// The torus value of a boolean: +1/8 or -1/8.
    pub(crate) fn encode_bool(&self, b: bool) -> Result<u64> {
        check_booleans(&self.params, self.owner(), &[])?;
        // Chosen by a mask, not a branch on the secret bit.
        let mask = (b as u64).wrapping_neg();
        Ok((EIGHTH & mask) | (EIGHTH.wrapping_neg() & !mask))
    }

    /// Decrypts a boolean: true when the phase is in [0, 1/2).
    pub fn decrypt_bool(&self, ct: &BoolCiphertext) -> Result<bool> {
        check_booleans(&self.params, self.owner(), &[ct])?;
        Ok(self.phase(&ct.lwe)? >> 63 == 0)
    }
}

impl ServerKey {
    /// NOT a: negation, no bootstrap.
    pub fn not(&self, a: &BoolCiphertext) -> Result<BoolCiphertext> {
        check_booleans(&self.params, self.owner(), &[a])?;
        let mut lwe = a.lwe.clone();
        lwe.neg_assign();
        Ok(BoolCiphertext {
            lwe,
            owner: self.owner(),
        })
    }

    /// A two-input gate: one key switch and bootstrap.
    pub fn gate(
        &self,
        gate: Gate,
        a: &BoolCiphertext,
        b: &BoolCiphertext,
    ) -> Result<BoolCiphertext> {
        check_booleans(&self.params, self.owner(), &[a, b])?;
        let (coef, constant) = gate.combination();
        let mut lwe = a.lwe.clone();
        lwe.add_assign(&b.lwe)?;
        lwe.mul_scalar_assign(coef);
        lwe.add_constant(constant);
        let tv = self.constant_test_vector(EIGHTH);
        Ok(BoolCiphertext {
            lwe: self.bootstrap(&lwe, &tv)?,
            owner: self.owner(),
        })
    }

    /// if c then a else b: (c AND a) OR (NOT c AND b), the two ANDs in parallel.
    pub fn mux(
        &self,
        c: &BoolCiphertext,
        a: &BoolCiphertext,
        b: &BoolCiphertext,
    ) -> Result<BoolCiphertext> {
        let not_c = self.not(c)?;
        let (x, y) = rayon::join(
            || self.gate(Gate::And, c, a),
            || self.gate(Gate::And, &not_c, b),
        );
        self.gate(Gate::Or, &x?, &y?)
    }
}
