//! Threshold decryption of a run's outputs: each party's decryption
//! share, and their combination into the outputs, after the records are
//! verified.

use triskel_attest::PublicIdentity;
use triskel_bfv as bfv;
use triskel_ckks as ckks;
use triskel_ring::threshold::{CiphertextId, Share};

use super::set_keys::SetKeys;
use super::state::Party;
use super::{
    BFV_STATISTICAL_SECURITY, KIND_DECRYPTION, MAGIC, MIN_CKKS_PRECISION_BITS, THRESHOLD_RELEASES,
    WHAT,
};
use crate::client::{check_final, shape_output, verify_outputs};
use crate::error::{Error, Result};
use crate::exec::{Outputs, PlainValue};
use crate::plan::Placement;
use crate::server::wrong;
use crate::wire::{bad, EncryptedInputs, EncryptedOutputs, Reader};

impl Party {
    /// The ciphertexts of `outputs` (checked first: the records, signed by
    /// `server`, must bind this key set, the program, the plan's route and
    /// `inputs`), with their identities.
    fn released(
        &self,
        outputs: &EncryptedOutputs,
        inputs: &EncryptedInputs,
        server: &PublicIdentity,
    ) -> Result<Vec<Released>> {
        let keys = self.evaluation_keys()?;
        let plan = &self.session.plan;
        verify_outputs(
            plan,
            &keys.program,
            &keys.id(),
            &[inputs.digests()],
            outputs,
            server,
        )?;
        check_final(plan, outputs)?;
        const OUT: &str = "encrypted outputs";
        outputs
            .entries
            .iter()
            .zip(&plan.program.outputs)
            .map(|(e, &(_, i))| {
                let id = CiphertextId(e.value.digest());
                Ok(match plan.placements[i as usize] {
                    Placement::Bfv(part) => {
                        let ctx = &self.bfv[part].ctx;
                        let c = bfv::Ciphertext::from_bytes(e.value.single(1, OUT)?, ctx)?;
                        Released::Bfv(part, c, id)
                    }
                    Placement::Ckks => {
                        let ctx = &self.ckks.as_ref().ok_or_else(|| wrong("ckks keys"))?.ctx;
                        let c = ckks::Ciphertext::from_bytes(e.value.single(3, OUT)?, ctx)?;
                        Released::Ckks(c, id)
                    }
                    _ => return Err(wrong("threshold output")),
                })
            })
            .collect()
    }

    /// This party's decryption share of every output, for the decryption
    /// set `set` (at least k distinct parties of 0..n, this one among
    /// them), after the checks of [`Party::combine`]. Each counts one
    /// flooded release on the party's key share.
    pub fn decryption_share(
        &self,
        outputs: &EncryptedOutputs,
        inputs: &EncryptedInputs,
        server: &PublicIdentity,
        set: &[u16],
    ) -> Result<Vec<u8>> {
        let ring_set = self.session.decryption_set(set)?;
        let released = self.released(outputs, inputs, server)?;
        let mut w = self.writer(KIND_DECRYPTION);
        w.u32(released.len());
        for r in &released {
            let share = match r {
                Released::Bfv(part, c, id) => {
                    let keys = &self.bfv[*part];
                    bfv_decryption(c, keys, &ring_set, *id)?.share(keys.threshold_share()?)?
                }
                Released::Ckks(c, id) => {
                    let keys = self.ckks.as_ref().ok_or_else(|| wrong("ckks keys"))?;
                    ckks_decryption(c, keys, &ring_set, *id)?.share(keys.threshold_share()?)?
                }
            };
            w.blob(&share.to_bytes());
        }
        Ok(w.0)
    }

    /// The outputs of a run from the decryption shares of the parties of
    /// `set` (`shares`, one per party, in any order), after verifying
    /// every record against `server` as [`Client::decrypt`](crate::Client::decrypt)
    /// does, with `inputs` the inputs sent. A share of another session,
    /// key, ciphertext or set, a party twice or missing, or fewer than k
    /// parties are refused.
    pub fn combine(
        &self,
        outputs: &EncryptedOutputs,
        inputs: &EncryptedInputs,
        server: &PublicIdentity,
        set: &[u16],
        shares: &[Vec<u8>],
    ) -> Result<Outputs> {
        let ring_set = self.session.decryption_set(set)?;
        let released = self.released(outputs, inputs, server)?;
        if shares.len() != ring_set.len() {
            return bad(
                WHAT,
                format!(
                    "{} decryption shares for {} parties",
                    shares.len(),
                    ring_set.len()
                ),
            );
        }
        let mut readers = Vec::with_capacity(shares.len());
        for bytes in shares {
            let mut r = Reader::new(WHAT, MAGIC, bytes)?;
            if r.u8()? != KIND_DECRYPTION {
                return bad(WHAT, "not a decryption share");
            }
            if r.take(16)? != self.session.id {
                return bad(WHAT, "a decryption share from another session");
            }
            r.take(2)?;
            if r.u32()? != released.len() {
                return bad(WHAT, "another number of outputs than the run's");
            }
            readers.push(r);
        }
        let plan = &self.session.plan;
        let mut values = Vec::with_capacity(released.len());
        for (r, (name, i)) in released.iter().zip(&plan.program.outputs) {
            let raw = match r {
                Released::Bfv(part, c, id) => {
                    let dec = bfv_decryption(c, &self.bfv[*part], &ring_set, *id)?;
                    let basis = c.polys()[1].basis();
                    let parts = readers
                        .iter_mut()
                        .map(|r| Ok(Share::from_bytes(r.blob()?, basis)?))
                        .collect::<Result<Vec<_>>>()?;
                    let pt = dec.finish(&dec.aggregate(&parts)?)?;
                    PlainValue::Ints(pt.to_slots()?.into_iter().map(i128::from).collect())
                }
                Released::Ckks(c, id) => {
                    let keys = self.ckks.as_ref().ok_or_else(|| wrong("ckks keys"))?;
                    let dec = ckks_decryption(c, keys, &ring_set, *id)?;
                    let basis = c.polys()[1].basis();
                    let parts = readers
                        .iter_mut()
                        .map(|r| Ok(Share::from_bytes(r.blob()?, basis)?))
                        .collect::<Result<Vec<_>>>()?;
                    PlainValue::Reals(dec.finish(&dec.aggregate(&parts)?)?.decode_real()?)
                }
            };
            values.push((name.clone(), shape_output(plan, *i as usize, raw)?));
        }
        for r in &readers {
            r.finish()?;
        }
        Ok(Outputs { values })
    }
}

/// An output's ciphertext for a threshold decryption.
pub(super) enum Released {
    Bfv(usize, bfv::Ciphertext, CiphertextId),
    Ckks(ckks::Ciphertext, CiphertextId),
}

pub(super) fn bfv_decryption<'a>(
    c: &'a bfv::Ciphertext,
    keys: &SetKeys<bfv::BfvContext>,
    set: &[u16],
    id: CiphertextId,
) -> Result<bfv::threshold::ThresholdDecryption<'a>> {
    Ok(bfv::threshold::ThresholdDecryption::new(
        c,
        &keys.session,
        set,
        id,
        None,
        BFV_STATISTICAL_SECURITY,
        THRESHOLD_RELEASES,
    )?)
}

/// Refused when the floods leave fewer than [`MIN_CKKS_PRECISION_BITS`].
pub(super) fn ckks_decryption<'a>(
    c: &'a ckks::Ciphertext,
    keys: &SetKeys<ckks::CkksContext>,
    set: &[u16],
    id: CiphertextId,
) -> Result<ckks::threshold::ThresholdDecryption<'a>> {
    let dec = ckks::threshold::ThresholdDecryption::new(
        c,
        &keys.session,
        set,
        id,
        ckks::DEFAULT_STATISTICAL_SECURITY,
        THRESHOLD_RELEASES,
    )?;
    let bits = dec.precision_bits();
    if bits < MIN_CKKS_PRECISION_BITS {
        return Err(Error::Refused {
            op: "threshold decryption".into(),
            msg: format!(
                "the floods of a CKKS output (scale 2^{:.0}) would leave {bits:.1} bits of \
                 precision, fewer than {MIN_CKKS_PRECISION_BITS}",
                c.scale().log2()
            ),
        });
    }
    Ok(dec)
}
