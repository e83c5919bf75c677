//! A structural check of a Falcon-512 secret key before the signer sees it.
//!
//! The signer (PQClean through `pqcrypto-falcon`) rebuilds `G` from `f`, `g`, `F` assuming
//! the NTRU equation `f G - g F = q` holds; for a crafted key where it does not (say
//! `F = k f`), its basis is singular and signing may loop forever. A secret identity file's
//! checksum has no key, so such a file can be made: it must be refused before signing.

/// Ring degree of Falcon-512.
const N: usize = 512;
const Q: u32 = 12289;
/// Secret key layout (PQClean): header `0x50 + log2(N)`, then `f` and `g` with 6 bits per
/// coefficient and `F` with 8, in two's complement, most significant bit first.
const HEADER: u8 = 0x59;
const FG_BITS: u32 = 6;
const BIG_F_BITS: u32 = 8;

fn mul_mod(a: u32, b: u32) -> u32 {
    ((u64::from(a) * u64::from(b)) % u64::from(Q)) as u32
}

fn pow_mod(mut base: u32, mut exp: u32) -> u32 {
    let mut out = 1;
    while exp > 0 {
        if exp & 1 == 1 {
            out = mul_mod(out, base);
        }
        base = mul_mod(base, base);
        exp >>= 1;
    }
    out
}

/// Decodes `N` signed coefficients of `bits` bits each from `bytes`; the most negative
/// value is not a valid encoding.
fn decode(bytes: &[u8], bits: u32) -> Option<Vec<i64>> {
    let mut out = Vec::with_capacity(N);
    let (mut acc, mut acc_bits) = (0u32, 0u32);
    let mut bytes = bytes.iter();
    while out.len() < N {
        while acc_bits < bits {
            acc = (acc << 8) | u32::from(*bytes.next()?);
            acc_bits += 8;
        }
        acc_bits -= bits;
        let raw = (acc >> acc_bits) & ((1 << bits) - 1);
        let value = i64::from(raw) - if raw >> (bits - 1) == 1 { 1 << bits } else { 0 };
        if value == -(1 << (bits - 1)) {
            return None;
        }
        out.push(value);
    }
    Some(out)
}

/// Values of `poly` at the odd powers of `psi` (a primitive 2N-th root of unity mod q):
/// its image in the product of fields that Z_q[x]/(x^N + 1) splits into.
fn evaluate(poly: &[i64], powers: &[u32]) -> Vec<u32> {
    (0..N)
        .map(|i| {
            poly.iter().enumerate().fold(0, |acc, (j, &c)| {
                let c = c.rem_euclid(i64::from(Q)) as u32;
                (acc + mul_mod(c, powers[(2 * i + 1) * j % (2 * N)])) % Q
            })
        })
        .collect()
}

/// `a * b` in Z[x]/(x^N + 1), exactly.
fn negacyclic_product(a: &[i64], b: &[i64]) -> Vec<i64> {
    let mut out = vec![0i64; N];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            if i + j < N {
                out[i + j] += x * y;
            } else {
                out[i + j - N] -= x * y;
            }
        }
    }
    out
}

/// Whether `sk` is a Falcon-512 secret key whose `f`, `g`, `F` and the `G` the signer
/// derives from them (`g F / f mod q`, coefficients within +-127) satisfy `f G - g F = q`.
pub(crate) fn is_sound(sk: &[u8]) -> bool {
    let fg_len = N * FG_BITS as usize / 8;
    if sk.len() != 1 + 2 * fg_len + N * BIG_F_BITS as usize / 8 || sk[0] != HEADER {
        return false;
    }
    let parts = (
        decode(&sk[1..], FG_BITS),
        decode(&sk[1 + fg_len..], FG_BITS),
        decode(&sk[1 + 2 * fg_len..], BIG_F_BITS),
    );
    let (Some(f), Some(g), Some(big_f)) = parts else {
        return false;
    };
    // 11 generates the units mod q, so 11^((q - 1) / 2N) is a primitive 2N-th root of unity.
    let psi = pow_mod(11, (Q - 1) / (2 * N as u32));
    let powers: Vec<u32> = (0..2 * N as u32).map(|k| pow_mod(psi, k)).collect();
    let (fe, ge, big_fe) = (
        evaluate(&f, &powers),
        evaluate(&g, &powers),
        evaluate(&big_f, &powers),
    );
    if fe.contains(&0) {
        return false;
    }
    let big_ge: Vec<u32> = (0..N)
        .map(|i| mul_mod(mul_mod(ge[i], big_fe[i]), pow_mod(fe[i], Q - 2)))
        .collect();
    // Back from the evaluations: G_j = N^-1 sum_i G(psi^(2i+1)) psi^-(2i+1)j.
    let n_inv = pow_mod(N as u32, Q - 2);
    let mut big_g = Vec::with_capacity(N);
    for j in 0..N {
        let sum = (0..N).fold(0, |acc, i| {
            let k = (2 * N - (2 * i + 1) * j % (2 * N)) % (2 * N);
            (acc + mul_mod(big_ge[i], powers[k])) % Q
        });
        let centred = i64::from(mul_mod(sum, n_inv));
        let centred = if centred > i64::from(Q / 2) {
            centred - i64::from(Q)
        } else {
            centred
        };
        if centred.abs() > 127 {
            return false;
        }
        big_g.push(centred);
    }
    let (fg, gf) = (
        negacyclic_product(&f, &big_g),
        negacyclic_product(&g, &big_f),
    );
    (0..N).all(|i| fg[i] - gf[i] == if i == 0 { i64::from(Q) } else { 0 })
}

/// `sk` with `F` replaced by `2 f`: `G` comes out as `2 g`, small, but `f G - g F = 0`.
#[cfg(test)]
pub(crate) fn degenerate(sk: &[u8]) -> Vec<u8> {
    let fg_len = N * FG_BITS as usize / 8;
    let f = decode(&sk[1..], FG_BITS).expect("f");
    let mut out = sk[..1 + 2 * fg_len].to_vec();
    let (mut acc, mut acc_bits) = (0u64, 0u32);
    for v in f.iter().map(|x| 2 * x) {
        acc = (acc << BIG_F_BITS) | (v.rem_euclid(1 << BIG_F_BITS) as u64);
        acc_bits += BIG_F_BITS;
        while acc_bits >= 8 {
            acc_bits -= 8;
            out.push((acc >> acc_bits) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pqcrypto_falcon::falconpadded512 as falcon;
    use pqcrypto_traits::sign::SecretKey as _;

    #[test]
    fn real_keys_pass_and_crafted_ones_fail() {
        let (_, sk) = falcon::keypair();
        let sk = sk.as_bytes();
        assert!(is_sound(sk));
        let crafted = degenerate(sk);
        assert_eq!(crafted.len(), sk.len());
        assert!(!is_sound(&crafted));
        // f and g from another key: G no longer small.
        let fg_len = N * FG_BITS as usize / 8;
        let (_, other) = falcon::keypair();
        let mut mixed = sk.to_vec();
        mixed[1..1 + fg_len].copy_from_slice(&other.as_bytes()[1..1 + fg_len]);
        assert!(!is_sound(&mixed));
        assert!(!is_sound(&sk[1..]));
        let mut bad_header = sk.to_vec();
        bad_header[0] ^= 1;
        assert!(!is_sound(&bad_header));
    }
}
