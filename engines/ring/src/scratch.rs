//! Reused temporary buffers for the hot paths (key switching, base
//! conversion, division with rounding).
//!
//! Every call of those used to allocate several limb-sized vectors; glibc
//! hands large freed blocks back to the operating system and then
//! page-faults them in again, which cost 10-25 % of a key switch. A
//! [`Scratch`] takes a buffer from a small per-thread pool and gives it back,
//! zeroed, when dropped, so the same (already mapped) memory serves the next
//! call. Buffers are 64-byte aligned, like polynomials, and never leave the
//! crate: results are still fresh vectors.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

use crate::aligned::{self, AlignedVec};

/// At most this many idle buffers are kept per thread.
const POOL_SIZE: usize = 12;

thread_local! {
    /// Idle buffers; every element of each is 0.
    static POOL: RefCell<Vec<AlignedVec>> = const { RefCell::new(Vec::new()) };
}

/// A zero-initialized temporary of `len` values, returned to the pool
/// (zeroed again, so no data outlives its use) when dropped.
pub(crate) struct Scratch(AlignedVec);

impl Scratch {
    /// `len` zeros: the smallest idle buffer that is large enough, else the
    /// largest one grown, else a new one.
    pub(crate) fn zeroed(len: usize) -> Scratch {
        let mut v = POOL
            .with(|p| {
                let mut p = p.borrow_mut();
                let best = (0..p.len())
                    .filter(|&i| p[i].capacity() >= len)
                    .min_by_key(|&i| p[i].capacity())
                    .or_else(|| (0..p.len()).max_by_key(|&i| p[i].capacity()));
                best.map(|i| p.swap_remove(i))
            })
            .unwrap_or_else(|| aligned::zeroed(0));
        if v.len() >= len {
            v.truncate(len);
        } else {
            v.resize(len, 0);
        }
        Scratch(v)
    }

    /// A copy of `src` in a pooled buffer.
    pub(crate) fn copy_of(src: &[u64]) -> Scratch {
        let mut s = Scratch::zeroed(src.len());
        s.copy_from_slice(src);
        s
    }
}

impl Deref for Scratch {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        &self.0
    }
}

impl DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut [u64] {
        &mut self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let mut v = std::mem::replace(&mut self.0, aligned::zeroed(0));
        v.fill(0);
        // During thread teardown the pool may be gone: then just free.
        let _ = POOL.try_with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < POOL_SIZE {
                p.push(v);
            }
        });
    }
}
