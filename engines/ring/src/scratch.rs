//! A per-thread pool of 64-byte-aligned buffers: polynomial storage and the
//! temporaries of the hot paths (key switching, base conversion, division
//! with rounding).
//!
//! Fresh limb-sized allocations cost page faults (glibc hands large freed
//! blocks back to the operating system and maps them again), 10-25 % of a
//! key switch once. A buffer given back to the pool serves the next taker
//! while it is still mapped.
//!
//! Secrecy is in the types, not in a convention:
//! - [`Scratch`] holds public data (ciphertext components, their
//!   transforms, digits, inner products): it goes back as it is, unwiped;
//! - [`SecretScratch`] holds secret-derived data (key material, plaintexts
//!   before encryption): it is wiped when dropped, before it goes back;
//! - a [`Poly`](crate::Poly) gives its storage back when dropped, unwiped: a
//!   secret polynomial is wiped by its owner first (`Zeroizing<Poly>`, as
//!   [`SecretKey::to_poly`](crate::SecretKey::to_poly) returns it).
//!
//! A pooled buffer holds what its last user left there, so a taker either
//! asks for zeros ([`take_zeroed`]) or overwrites every value before reading
//! any ([`take_for_overwrite`], crate-internal, used only where a kernel
//! writes the whole buffer).

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

use zeroize::Zeroize;

use crate::aligned::{self, AlignedVec};

/// At most this many idle buffers are kept per thread ...
const POOL_BUFFERS: usize = 24;
/// ... holding at most this many values in all (64 MiB).
const POOL_VALUES: usize = 8 << 20;

thread_local! {
    /// Idle buffers, each holding initialized (stale) values up to its length.
    static POOL: RefCell<Vec<AlignedVec>> = const { RefCell::new(Vec::new()) };
}

/// A buffer of `len` initialized values, of unspecified content: the
/// smallest idle buffer that is large enough, else a new one.
fn take(len: usize) -> AlignedVec {
    let pooled = POOL
        .try_with(|p| {
            let mut p = p.borrow_mut();
            let best = (0..p.len())
                .filter(|&i| p[i].capacity() >= len)
                .min_by_key(|&i| p[i].capacity());
            best.map(|i| p.swap_remove(i))
        })
        .ok()
        .flatten();
    let mut v = pooled.unwrap_or_else(|| AlignedVec::with_capacity(aligned::CACHE_LINE, len));
    if v.len() >= len {
        v.truncate(len);
    } else {
        v.resize(len, 0);
    }
    v
}

/// `len` zeros in a pooled buffer.
pub(crate) fn take_zeroed(len: usize) -> AlignedVec {
    let mut v = take(len);
    v.fill(0);
    v
}

/// `len` values of unspecified (public or zero) content in a pooled buffer,
/// for a caller that writes every value before it reads any.
pub(crate) fn take_for_overwrite(len: usize) -> AlignedVec {
    take(len)
}

/// A copy of `src` in a pooled buffer.
pub(crate) fn take_copy(src: &[u64]) -> AlignedVec {
    let mut v = take(src.len());
    v.copy_from_slice(src);
    v
}

/// Gives `v` back to this thread's pool as it is (public data, or data its
/// owner wiped). When the pool is full the smallest buffer is freed.
pub(crate) fn give_back(v: AlignedVec) {
    if v.capacity() == 0 {
        return;
    }
    // During thread teardown the pool may be gone: then `v` is just freed.
    let _ = POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        p.push(v);
        let mut total: usize = p.iter().map(|b| b.capacity()).sum();
        while p.len() > POOL_BUFFERS || total > POOL_VALUES {
            let smallest = (0..p.len()).min_by_key(|&i| p[i].capacity());
            let Some(i) = smallest else { break };
            total -= p.swap_remove(i).capacity();
        }
    });
}

/// A pooled temporary of public values (see the module documentation),
/// given back unwiped when dropped.
pub(crate) struct Scratch(AlignedVec);

impl Scratch {
    /// `len` values for a caller that writes every one before reading it.
    pub(crate) fn for_overwrite(len: usize) -> Scratch {
        Scratch(take_for_overwrite(len))
    }

    /// A copy of `src`.
    pub(crate) fn copy_of(src: &[u64]) -> Scratch {
        Scratch(take_copy(src))
    }

    /// The buffer itself, which no longer goes back on drop (it becomes a
    /// polynomial's storage, which does).
    pub(crate) fn into_inner(mut self) -> AlignedVec {
        std::mem::replace(&mut self.0, aligned::empty())
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
        give_back(std::mem::replace(&mut self.0, aligned::empty()));
    }
}

/// A pooled temporary of secret-derived values (see the module
/// documentation), wiped when dropped.
pub(crate) struct SecretScratch(AlignedVec);

impl SecretScratch {
    /// A copy of `src`.
    pub(crate) fn copy_of(src: &[u64]) -> SecretScratch {
        SecretScratch(take_copy(src))
    }
}

impl Deref for SecretScratch {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        &self.0
    }
}

impl DerefMut for SecretScratch {
    fn deref_mut(&mut self) -> &mut [u64] {
        &mut self.0
    }
}

impl Drop for SecretScratch {
    fn drop(&mut self) {
        let mut v = std::mem::replace(&mut self.0, aligned::empty());
        v.as_mut_slice().zeroize();
        give_back(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool hands back the buffer it was given; secret temporaries come
    /// back wiped, public ones as they were; zeroed takers see zeros.
    #[test]
    fn secret_buffers_come_back_wiped_public_ones_unwiped() {
        let len = 3 * 1024 + 64;
        let mut s = SecretScratch::copy_of(&vec![7; len]);
        s[0] = 9;
        let addr = s.as_ptr() as usize;
        drop(s);
        let v = take_for_overwrite(len);
        assert_eq!(v.as_ptr() as usize, addr, "the pooled buffer is reused");
        assert!(v.iter().all(|&x| x == 0), "a secret buffer is wiped");
        give_back(v);
        let mut p = Scratch::for_overwrite(len);
        p.fill(5);
        let addr = p.as_ptr() as usize;
        drop(p);
        let v = take_for_overwrite(len);
        assert_eq!(v.as_ptr() as usize, addr);
        assert!(v.iter().all(|&x| x == 5), "a public buffer is not wiped");
        give_back(v);
        assert!(take_zeroed(len).iter().all(|&x| x == 0));
    }

    /// The pool keeps a bounded number of buffers and values.
    #[test]
    fn the_pool_is_bounded() {
        for len in [1 << 12, POOL_VALUES / 3] {
            for _ in 0..2 * POOL_BUFFERS {
                give_back(AlignedVec::with_capacity(aligned::CACHE_LINE, len));
            }
        }
        let (count, values) = POOL.with(|p| {
            let p = p.borrow();
            (p.len(), p.iter().map(|b| b.capacity()).sum::<usize>())
        });
        assert!(count <= POOL_BUFFERS && values <= POOL_VALUES);
    }
}
