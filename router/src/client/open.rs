//! Opening released values: decryption, flooding checks and decoding
//! to plaintext values.

use super::*;

impl KeyStore {
    /// With flooding on: refuses a run whose CKKS outputs cannot all be
    /// flooded, before any is decrypted: a coefficient-encoded one, or more
    /// than the CKKS key has left of alpha.
    pub(crate) fn check_floods(
        &self,
        plan: &Plan,
        flooding: Option<&ckks::Flooding>,
    ) -> Result<()> {
        let Some(flooding) = flooding else {
            return Ok(());
        };
        let mut floods = 0;
        for &(_, i) in &plan.program.outputs {
            if plan.placements[i as usize] == Placement::Ckks {
                if plan.packing[i as usize].coefficients {
                    return Err(unflooded_coefficients());
                }
                floods += 1;
            }
        }
        if floods == 0 {
            return Ok(());
        }
        let sk = &self.ckks_part(plan)?.sk;
        let (done, left) = (
            sk.flooded_decryptions(),
            sk.flooded_decryptions_left(flooding),
        );
        if floods > left {
            return Err(ckks::Error::FloodingExhausted {
                done,
                asked: floods,
                // The least alpha of the key's floods and of this one.
                alpha: flooding.decryptions.min(done + left),
            }
            .into());
        }
        Ok(())
    }

    /// Everything in a release, decrypted with the keys of `set`: every
    /// slot, or every extracted coefficient (BFV values mod t).
    pub(crate) fn open_whole(
        &self,
        set: &str,
        released: &Released,
        flooding: Option<&ckks::Flooding>,
    ) -> Result<PlainValue> {
        let bfv_keys = || self.bfv.get(set).ok_or_else(|| wrong("bfv keys"));
        let ckks_keys = || self.ckks.get(set).ok_or_else(|| wrong("ckks keys"));
        Ok(match released {
            Released::Slots(c) => PlainValue::Ints(
                bfv_keys()?
                    .sk
                    .decrypt(c)?
                    .to_slots()?
                    .into_iter()
                    .map(i128::from)
                    .collect(),
            ),
            Released::Extracted(lwes) => {
                let keys = bfv_keys()?;
                PlainValue::Ints(
                    lwes.iter()
                        .map(|l| Ok(i128::from(keys.sk.decrypt_lwe(l)?)))
                        .collect::<Result<_>>()?,
                )
            }
            Released::CkksSlots(c) => PlainValue::Reals(match flooding {
                Some(flooding) => ckks_keys()?.sk.decrypt_flooded_real(c, flooding)?,
                None => ckks_keys()?.sk.decrypt_real(c)?,
            }),
            Released::CkksExtracted(..) if flooding.is_some() => {
                return Err(unflooded_coefficients())
            }
            Released::CkksExtracted(lwes, scale) => {
                let keys = ckks_keys()?;
                let key = keys.sk.lwe_key();
                let q0 = keys.ctx.q_primes()[0];
                // The phase (scale x + e) 2^64 / q_0 as a signed torus value.
                let unit = q0 as f64 / 2f64.powi(64) / scale;
                PlainValue::Reals(
                    lwes.iter()
                        .map(|l| {
                            let phase = key.phase(l)?;
                            Ok(phase as i64 as f64 * unit)
                        })
                        .collect::<Result<_>>()?,
                )
            }
            Released::Radix(r) => {
                let ck = &self.tfhe_part()?.ck;
                PlainValue::Ints(
                    r.iter()
                        .map(|x| Ok(ck.decrypt_radix(x)? as i128))
                        .collect::<Result<_>>()?,
                )
            }
            Released::Bits(b) => {
                let ck = &self.tfhe_part()?.ck;
                PlainValue::Bits(
                    b.iter()
                        .map(|x| Ok(ck.decrypt(x)? == 1))
                        .collect::<Result<_>>()?,
                )
            }
        })
    }

    /// Node `i`'s value from its release ([`shape_output`]).
    pub(crate) fn open(
        &self,
        plan: &Plan,
        i: usize,
        released: &Released,
        flooding: Option<&ckks::Flooding>,
    ) -> Result<PlainValue> {
        let set = set_of(plan, i).unwrap_or_default();
        shape_output(plan, i, self.open_whole(&set, released, flooding)?)
    }

    /// Parses an entry's value as node `i`'s release under these keys.
    pub(crate) fn decode_released(
        &self,
        plan: &Plan,
        i: usize,
        e: &crate::wire::Encoded,
    ) -> Result<Released> {
        const WHAT: &str = "encrypted outputs";
        let kind = plan.program.nodes[i].kind;
        let len = kind.len();
        Ok(match plan.placements[i] {
            Placement::Bfv(part) => {
                let k = self.bfv_part(plan, part)?;
                let id = k.sk.id();
                match (e.tag, plan.bfv[part].encoding) {
                    (1, BfvEncoding::Slots) => {
                        let c = bfv::Ciphertext::from_bytes(e.single(1, WHAT)?, &k.ctx)?;
                        if c.key_id() != id {
                            return bad(WHAT, "a BFV value under another key");
                        }
                        Released::Slots(c)
                    }
                    (2, BfvEncoding::Coefficients) => Released::Extracted(
                        e.many(2, len, WHAT)?
                            .iter()
                            .map(|b| read_lwe(b, k.ctx.n(), id, WHAT))
                            .collect::<Result<_>>()?,
                    ),
                    (t, _) => return bad(WHAT, format!("value tag {t} for a BFV value")),
                }
            }
            Placement::Ckks if plan.packing[i].coefficients => {
                let k = self.ckks_part(plan)?;
                let blobs = e.many(4, len + 1, WHAT)?;
                let scale = match <[u8; 8]>::try_from(blobs[0].as_slice()) {
                    Ok(b) => f64::from_bits(u64::from_le_bytes(b)),
                    Err(_) => return bad(WHAT, "a scale of 8 bytes expected"),
                };
                if !(scale.is_finite() && scale >= 1.0) {
                    return bad(WHAT, "the scale of extracted values is out of range");
                }
                let lwes = blobs[1..]
                    .iter()
                    .map(|b| read_lwe(b, k.ctx.n(), k.sk.id(), WHAT))
                    .collect::<Result<_>>()?;
                Released::CkksExtracted(lwes, scale)
            }
            Placement::Ckks => {
                let k = self.ckks_part(plan)?;
                let c = ckks::Ciphertext::from_bytes(e.single(3, WHAT)?, &k.ctx)?;
                if c.key_id() != k.sk.id() {
                    return bad(WHAT, "a CKKS value under another key");
                }
                Released::CkksSlots(c)
            }
            _ => {
                let ck = &self.tfhe_part()?.ck;
                match decode_tfhe(e, kind, ck.parameters(), ck.key_id(), WHAT)? {
                    Val::Radix(r) => Released::Radix(r),
                    Val::Bits(b) => Released::Bits(b),
                    _ => return Err(wrong("output")),
                }
            }
        })
    }
}

/// Node `i`'s value from everything its release decrypts to (`raw`): the
/// asked values, BFV signed values centred.
pub(crate) fn shape_output(plan: &Plan, i: usize, raw: PlainValue) -> Result<PlainValue> {
    let kind = plan.program.nodes[i].kind;
    let len = kind.len();
    Ok(match (raw, plan.placements[i]) {
        (PlainValue::Ints(raw), Placement::Bfv(part)) => {
            let t = plan.bfv[part].params.plain_modulus() as i128;
            let centred = matches!(kind, Kind::Signed { .. });
            PlainValue::Ints(
                raw.get(..len)
                    .ok_or_else(|| wrong("output"))?
                    .iter()
                    // Decrypted data: centred by a product, not a branch.
                    .map(|&x| x - t * i128::from(centred & (x > t / 2)))
                    .collect(),
            )
        }
        (PlainValue::Reals(all), Placement::Ckks) => {
            PlainValue::Reals(all.get(..len).ok_or_else(|| wrong("output"))?.to_vec())
        }
        (v, _) => v,
    })
}

/// The set whose keys open node `i`'s release (BFV and CKKS nodes).
pub(crate) fn set_of(plan: &Plan, i: usize) -> Option<String> {
    match plan.placements[i] {
        Placement::Bfv(part) => Some(plan.bfv[part].params.name().to_string()),
        Placement::Ckks => plan.ckks.as_ref().map(|p| p.name().to_string()),
        _ => None,
    }
}

/// The key holder's conversion at round-trip node `i` of its operand's
/// decrypted value.
pub(crate) fn convert(plan: &Plan, i: usize, value: PlainValue) -> Result<PlainValue> {
    let op = &plan.program.nodes[i].op;
    let ints = match value {
        PlainValue::Ints(v) => v,
        PlainValue::Bits(b) => b.into_iter().map(i128::from).collect(),
        PlainValue::Reals(_) => return Err(wrong(op.name())),
    };
    Ok(match op {
        Op::ToReal { scale, .. } => {
            PlainValue::Reals(ints.iter().map(|&x| x as f64 * scale).collect())
        }
        _ => PlainValue::Ints(ints),
    })
}
