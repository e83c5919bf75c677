//! Argmax of signed BFV values: each value read bit by bit through the
//! BFV -> TFHE transition ([`crate::transition::bfv_value_bits`]), the bits
//! assembled into radix integers and compared in a TFHE tournament
//! ([`tfhe::argmax`]).

use triskel_bfv as bfv;
use triskel_tfhe as tfhe;

use crate::error::Result;
use crate::transition::{bfv_value_bits, EncryptedBit, TransitionKey};

/// The values of an argmax of signed BFV values: where they are read from.
pub(crate) struct Sources<'a> {
    /// Each source ciphertext and the coefficients read from it.
    pub groups: Vec<(&'a bfv::Ciphertext, Vec<usize>)>,
    /// For each value in order, (group, position in the group).
    pub order: Vec<(usize, usize)>,
}

impl<'a> Sources<'a> {
    pub fn new() -> Self {
        Sources {
            groups: Vec::new(),
            order: Vec::new(),
        }
    }

    /// Appends the values at `coefficients` of `ct` (the same ciphertext,
    /// e.g. a match's plaintext product, is read once for all its values).
    pub fn push(&mut self, ct: &'a bfv::Ciphertext, coefficients: impl Iterator<Item = usize>) {
        let g = match self.groups.iter().position(|(c, _)| std::ptr::eq(*c, ct)) {
            Some(g) => g,
            None => {
                self.groups.push((ct, Vec::new()));
                self.groups.len() - 1
            }
        };
        for c in coefficients {
            self.order.push((g, self.groups[g].1.len()));
            self.groups[g].1.push(c);
        }
    }
}

/// The index (`index_bits`) of a largest of the signed values of
/// `sources`, each read to within 2^`tolerance_bits`
/// ([`bfv_value_bits`]), compared in a [`tfhe::argmax::tournament`].
pub(crate) fn signed_argmax(
    sources: &Sources<'_>,
    tolerance_bits: u32,
    index_bits: u32,
    key: &TransitionKey,
    sk: &tfhe::ServerKey,
) -> Result<tfhe::RadixCiphertext> {
    let mut read = sources
        .groups
        .iter()
        .map(|(ct, coefficients)| Ok(bfv_value_bits(ct, coefficients, tolerance_bits, key, sk)?))
        .collect::<Result<Vec<_>>>()?;
    let bits: Vec<Vec<EncryptedBit>> = sources
        .order
        .iter()
        .map(|&(g, v)| std::mem::take(&mut read[g][v]))
        .collect();
    let values = tfhe::argmax::radix_from_bits(sk, &bits)?;
    Ok(tfhe::argmax::tournament(sk, values, index_bits)?)
}
