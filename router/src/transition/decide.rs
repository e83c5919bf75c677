//! The transitions at run time: threshold decisions, the bits of
//! signed values, and their combination in TFHE.

use super::*;

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
pub(crate) fn read_windows(
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
pub(crate) fn top_bits(
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

pub(crate) fn check_keys(
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

/// A BFV ciphertext's set checked against the keys, its plaintext modulus
/// t = 2^k (k returned), and the ciphertext mod-switched to its last prime.
pub(crate) fn bfv_source(
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
