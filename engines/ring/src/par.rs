//! Limb-parallel loops: rayon with feature `parallel`, a plain loop without.
//!
//! Every closure writes only its own limb, so results never depend on the
//! number of threads.

use crate::error::Result;

/// Runs `f(i, limb_i)` for every limb (chunk of n values) of `data`.
pub(crate) fn try_limbs<F>(data: &mut [u64], n: usize, f: F) -> Result<()>
where
    F: Fn(usize, &mut [u64]) -> Result<()> + Sync + Send,
{
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        data.par_chunks_mut(n)
            .enumerate()
            .try_for_each(|(i, l)| f(i, l))
    }
    #[cfg(not(feature = "parallel"))]
    {
        data.chunks_mut(n)
            .enumerate()
            .try_for_each(|(i, l)| f(i, l))
    }
}

/// Runs `f(i, limb_i)` for every limb of `data` (infallible closures).
pub(crate) fn limbs<F>(data: &mut [u64], n: usize, f: F)
where
    F: Fn(usize, &mut [u64]) + Sync + Send,
{
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        data.par_chunks_mut(n)
            .enumerate()
            .for_each(|(i, l)| f(i, l))
    }
    #[cfg(not(feature = "parallel"))]
    {
        data.chunks_mut(n).enumerate().for_each(|(i, l)| f(i, l))
    }
}
