//! Multi-bit blind rotation, grouping factor 2: one external product per pair
//! of small-key bits instead of one CMux per bit.
//!
//! For the pair (s_i, s_j) = (s_2t, s_2t+1) with switched mask words
//! (a_i, a_j), exactly one of the four bit patterns p in {0, 1}^2 holds, so
//!
//! ```text
//! X^(a_i s_i + a_j s_j) = 1 + sum_{p != (0,0)} [s = p] (X^e_p - 1),  e_p = <p, (a_i, a_j)> mod 2N
//! ACC <- ACC + G (x) ACC,  G = sum_p (X^e_p - 1) GGSW([s = p])
//! ```
//!
//! The key holds, per pair, GGSWs of s_i s_j, s_i (1 - s_j) and
//! (1 - s_i) s_j (NTT form, like the classic key). G is formed in the NTT
//! domain: NTT(X^e - 1)[j] = psi^(e (2 brv(j) + 1) mod 2N) - 1 is a lookup in
//! a table of psi^t - 1 (the "- 1" folded into the table), and each of G's
//! (k + 1) l x (k + 1) polynomials is one 3-term lazy `dot` of these against
//! the three GGSWs. Then one external product (decompose ACC, (k + 1) l
//! forward NTTs, `dot`, k + 1 inverse NTTs, add) replaces two CMuxes.
//!
//! On more than one rayon thread, the G's of the next batch of pairs are
//! formed beside the current batch's external products (`rayon::join`, two
//! alternating sets of buffers); on one thread the same steps run pair by
//! pair in sequence, with the same result.

use triskel_kernels::dot;
use triskel_ring::aligned_zeros;
use zeroize::Zeroizing;

use crate::error::Result;
use crate::glwe::{add_external_product, GlweContext, Scratch};

/// GGSWs per pair of bits: the three nonzero patterns.
pub(crate) const PATTERNS: usize = 3;

/// The GGSW messages of the multi-bit key, 3 per pair of small-key bits:
/// s_i s_j, s_i (1 - s_j), (1 - s_i) s_j (arithmetic, no branch on the
/// secret). `bits` has even length (checked with the parameter set).
pub(crate) fn pattern_bits(bits: &[u64]) -> Zeroizing<Vec<u64>> {
    let mut out = Zeroizing::new(Vec::with_capacity(bits.len() / 2 * PATTERNS));
    for pair in bits.chunks_exact(2) {
        let (si, sj) = (pair[0], pair[1]);
        out.extend([si * sj, si * (1 - sj), (1 - si) * sj]);
    }
    out
}

/// The NTT images of X^e - 1 for every e in [0, 2N), from 3 N words.
#[derive(Debug)]
pub(crate) struct Monomials {
    /// psi^t - 1 mod q for t in [0, 2N).
    psi_minus_one: Vec<u64>,
    /// 2 brv(j) + 1 for each NTT slot j: the slot evaluates at psi^(2 brv(j) + 1).
    odd: Vec<u32>,
}

impl Monomials {
    pub(crate) fn new(ctx: &GlweContext) -> Monomials {
        let m = &ctx.modulus;
        let (n, psi) = (ctx.n, ctx.plan.psi());
        let mut power = 1u64;
        let psi_minus_one = (0..2 * n)
            .map(|_| {
                let v = m.sub_mod(power, 1);
                power = m.mul_mod(power, psi);
                v
            })
            .collect();
        let bits = n.trailing_zeros();
        let odd = (0..n as u32)
            .map(|j| 2 * (j.reverse_bits() >> (32 - bits)) + 1)
            .collect();
        Monomials { psi_minus_one, odd }
    }

    /// out = NTT(X^e - 1), for e in [0, 2N).
    pub(crate) fn write(&self, e: usize, out: &mut [u64]) {
        let mask = self.psi_minus_one.len() - 1;
        for (o, &w) in out.iter_mut().zip(&self.odd) {
            *o = self.psi_minus_one[(e * w as usize) & mask];
        }
    }
}

/// G = sum_p (X^e_p - 1) GGSW_p (NTT form) from the pair's three GGSWs
/// (`key`, consecutive) and exponents; `monomials` is 3 N words of scratch.
fn combine(
    ctx: &GlweContext,
    table: &Monomials,
    key: &[u64],
    exponents: [usize; PATTERNS],
    monomials: &mut [u64],
    out: &mut [u64],
) -> Result<()> {
    let n = ctx.n;
    let per = out.len();
    for (chunk, &e) in monomials.chunks_mut(n).zip(&exponents) {
        table.write(e, chunk);
    }
    // Arrays, not vectors: no allocation per pair in the blind rotation.
    let terms: [&[u64]; PATTERNS] = std::array::from_fn(|p| &monomials[p * n..(p + 1) * n]);
    for (w, o) in out.chunks_mut(n).enumerate() {
        let rows: [&[u64]; PATTERNS] =
            std::array::from_fn(|p| &key[p * per + w * n..p * per + (w + 1) * n]);
        dot(&ctx.modulus, o, &terms, &rows)?;
    }
    Ok(())
}

/// Pairs handed over between the two threads at once: a join per pair pays
/// a worker's wake-up (a futex, and on a busy host a wait for a core) every
/// ~60 us, which measured slower than one thread; a batch pays it once per `BATCH` pairs.
const BATCH: usize = 8;

/// acc <- X^(sum_i a_i s_i) acc with the multi-bit key `bsk` (3 GGSWs per
/// pair of `a`). When `parallel`, the combined GGSWs of the next batch of
/// pairs are formed beside the current batch's external products (two
/// alternating sets of buffers); otherwise pair by pair in sequence. The
/// result is the same. Pairs with a_i = a_j = 0 are skipped (G = 0).
pub(crate) fn blind_rotate(
    ctx: &GlweContext,
    table: &Monomials,
    bsk: &[u64],
    a: &[u64],
    acc: &mut [u64],
    parallel: bool,
) -> Result<()> {
    if parallel {
        // The whole rotation on a pool thread: from outside the pool each
        // batch's join would be a round trip through the pool.
        return triskel_ring::in_pool(|| rotate_pairs(ctx, table, bsk, a, acc, true));
    }
    rotate_pairs(ctx, table, bsk, a, acc, false)
}

/// [`blind_rotate`] on the calling thread (its joins included).
fn rotate_pairs(
    ctx: &GlweContext,
    table: &Monomials,
    bsk: &[u64],
    a: &[u64],
    acc: &mut [u64],
    parallel: bool,
) -> Result<()> {
    let per = ctx.ggsw_rows() * ctx.glwe_len();
    let two_n = 2 * ctx.n as u64;
    let steps: Vec<(usize, [usize; PATTERNS])> = a
        .chunks_exact(2)
        .enumerate()
        .filter(|(_, pair)| pair[0] != 0 || pair[1] != 0)
        .map(|(t, pair)| {
            let (ai, aj) = (pair[0] % two_n, pair[1] % two_n);
            (t, [((ai + aj) % two_n) as usize, ai as usize, aj as usize])
        })
        .collect();
    let batch = if parallel { BATCH } else { 1 };
    let batches: Vec<_> = steps.chunks(batch).collect();
    let key = |t: usize| &bsk[t * PATTERNS * per..(t + 1) * PATTERNS * per];
    let combine_batch = |pairs: &[(usize, [usize; PATTERNS])],
                         monomials: &mut [u64],
                         out: &mut [u64]|
     -> Result<()> {
        for (&(t, e), g) in pairs.iter().zip(out.chunks_mut(per)) {
            combine(ctx, table, key(t), e, monomials, g)?;
        }
        Ok(())
    };
    let mut scratch = Scratch::new(ctx);
    let mut monomials = aligned_zeros(PATTERNS * ctx.n);
    let (mut current, mut next) = (aligned_zeros(batch * per), aligned_zeros(batch * per));
    if let Some(first) = batches.first() {
        combine_batch(first, &mut monomials, &mut current)?;
    }
    for (i, pairs) in batches.iter().enumerate() {
        let g = &current;
        let mut product = || {
            g.chunks(per)
                .take(pairs.len())
                .try_for_each(|g| add_external_product(ctx, g, acc, &mut scratch, parallel))
        };
        let mut prepare = || match batches.get(i + 1) {
            Some(following) => combine_batch(following, &mut monomials, &mut next),
            None => Ok(()),
        };
        let (done, prepared) = if parallel {
            rayon::join(product, prepare)
        } else {
            (product(), prepare())
        };
        done?;
        prepared?;
        std::mem::swap(&mut current, &mut next);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's NTT(X^e - 1) against the forward NTT of X^e - 1's
    /// coefficients, for every e in [0, 2N) at N = 1024 (signs past N included).
    #[test]
    fn monomials_are_the_transforms_of_x_e_minus_one() {
        let ctx = GlweContext::new("test", 1, 1024, 50, (23, 1), 1e-14).unwrap();
        let table = Monomials::new(&ctx);
        let (n, q) = (ctx.n, ctx.q());
        let mut got = vec![0u64; n];
        for e in 0..2 * n {
            let mut want = vec![0u64; n];
            want[e % n] = if e < n { 1 } else { q - 1 };
            want[0] = ctx.modulus.sub_mod(want[0], 1);
            ctx.plan.forward(&mut want).unwrap();
            table.write(e, &mut got);
            assert_eq!(got, want, "e = {e}");
        }
    }

    /// The patterns are the indicators of (1,1), (1,0), (0,1).
    #[test]
    fn pattern_bits_are_the_indicators() {
        let bits = [1, 1, 1, 0, 0, 1, 0, 0];
        let want = [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0];
        assert_eq!(&pattern_bits(&bits)[..], &want);
    }
}
