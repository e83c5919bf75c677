//! Limb-parallel loops: rayon with feature `parallel`, a plain loop without.
//!
//! Every closure writes only its own limb, so results never depend on the
//! number of threads. Small polynomials stay on the calling thread: handing
//! a few microseconds of work to the pool costs more (two context switches)
//! than it saves.

use crate::error::Result;

/// Below this many values (all limbs together) loops run sequentially.
pub const PARALLEL_MIN_VALUES: usize = 1 << 15;

/// True when the rayon pool has more than one thread (never without feature
/// `parallel`). Work forked with `join` then goes to a second thread only
/// when one is idle: inside a parallel loop that already occupies every
/// thread (`bootstrap_many`, the integer operations) nobody steals the
/// second half and the calling thread runs both.
pub fn several_threads() -> bool {
    #[cfg(feature = "parallel")]
    return rayon::current_num_threads() > 1;
    #[cfg(not(feature = "parallel"))]
    false
}

/// `(a(), b())`: side by side (`rayon::join`) when [`several_threads`],
/// else in sequence on the calling thread.
pub(crate) fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    #[cfg(feature = "parallel")]
    if several_threads() {
        return rayon::join(a, b);
    }
    (a(), b())
}

/// `f()` on a thread of the rayon pool when [`several_threads`]. Called
/// from outside the pool (a program's main thread), each `rayon::join` in
/// `f` is handed to the pool while the caller sleeps until it returns: two
/// wake-ups per join. Inside the pool a join only pushes its second half
/// where the other worker steals it.
pub fn in_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    #[cfg(feature = "parallel")]
    if several_threads() && rayon::current_thread_index().is_none() {
        return rayon::scope(|_| f());
    }
    f()
}

/// True when a loop over `len` values should go to the rayon pool.
#[cfg(feature = "parallel")]
fn worth_parallel(len: usize, n: usize) -> bool {
    len >= PARALLEL_MIN_VALUES && len > n && several_threads()
}

/// Runs `f(i, limb_i)` for every limb (chunk of n values) of `data`.
pub(crate) fn try_limbs<F>(data: &mut [u64], n: usize, f: F) -> Result<()>
where
    F: Fn(usize, &mut [u64]) -> Result<()> + Sync + Send,
{
    try_limbs_with(data, n, || (), |_, i, l| f(i, l))
}

/// Runs `f(i, limb_i)` for every limb of `data` (infallible closures).
pub(crate) fn limbs<F>(data: &mut [u64], n: usize, f: F)
where
    F: Fn(usize, &mut [u64]) + Sync + Send,
{
    #[cfg(feature = "parallel")]
    if worth_parallel(data.len(), n) {
        use rayon::prelude::*;
        data.par_chunks_mut(n)
            .enumerate()
            .for_each(|(i, l)| f(i, l));
        return;
    }
    data.chunks_mut(n).enumerate().for_each(|(i, l)| f(i, l))
}

/// [`try_limbs`] with a per-worker temporary made by `init` (once per
/// thread that takes part, once in all when sequential), for loops that
/// need a limb-sized buffer per limb.
pub(crate) fn try_limbs_with<T, I, F>(data: &mut [u64], n: usize, init: I, f: F) -> Result<()>
where
    I: Fn() -> T + Sync + Send,
    F: Fn(&mut T, usize, &mut [u64]) -> Result<()> + Sync + Send,
{
    #[cfg(feature = "parallel")]
    if worth_parallel(data.len(), n) {
        use rayon::prelude::*;
        return data
            .par_chunks_mut(n)
            .enumerate()
            .try_for_each_init(&init, |t, (i, l)| f(t, i, l));
    }
    let mut t = init();
    data.chunks_mut(n)
        .enumerate()
        .try_for_each(|(i, l)| f(&mut t, i, l))
}

/// Runs `f(t, i, a_i, b_i)` for every pair of limbs i of `a` and `b` (as
/// long as each other), with a per-worker temporary t (see
/// [`try_limbs_with`]): loops that produce two outputs from the same inputs.
/// Their work per limb is a key switch's (transforms and inner products),
/// so they run in parallel whenever there are several limbs and threads,
/// however short the limbs (3 limbs of 8192 in a fused ModDown).
pub(crate) fn try_limb_pairs_with<T, I, F>(
    a: &mut [u64],
    b: &mut [u64],
    n: usize,
    init: I,
    f: F,
) -> Result<()>
where
    I: Fn() -> T + Sync + Send,
    F: Fn(&mut T, usize, &mut [u64], &mut [u64]) -> Result<()> + Sync + Send,
{
    debug_assert_eq!(a.len(), b.len());
    #[cfg(feature = "parallel")]
    if a.len() > n && several_threads() {
        use rayon::prelude::*;
        return a
            .par_chunks_mut(n)
            .zip(b.par_chunks_mut(n))
            .enumerate()
            .try_for_each_init(&init, |t, (i, (x, y))| f(t, i, x, y));
    }
    let mut t = init();
    a.chunks_mut(n)
        .zip(b.chunks_mut(n))
        .enumerate()
        .try_for_each(|(i, (x, y))| f(&mut t, i, x, y))
}

#[cfg(all(test, feature = "parallel"))]
mod tests {
    use super::*;

    /// From outside any pool (a test thread), `in_pool` runs its closure on
    /// a worker of the global pool exactly when that pool has several
    /// threads; inside a worker it stays on that worker.
    #[test]
    fn in_pool_runs_on_a_worker_when_the_pool_has_threads() {
        assert_eq!(rayon::current_thread_index(), None);
        let entered = in_pool(|| rayon::current_thread_index().is_some());
        assert_eq!(entered, several_threads());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| {
            let worker = rayon::current_thread_index();
            assert_eq!(in_pool(rayon::current_thread_index), worker);
        });
    }
}
