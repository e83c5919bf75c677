//! Deserialized evaluation keys kept in memory, least recently used first
//! out, bounded in bytes (of their serialized form, which is what they
//! take in memory to within the engines' small per-key overheads).

use std::collections::HashMap;
use std::sync::Arc;

/// A cache of `Arc<T>` by 32-byte id.
pub struct KeyCache<T> {
    budget: u64,
    used: u64,
    tick: u64,
    entries: HashMap<[u8; 32], Entry<T>>,
}

struct Entry<T> {
    keys: Arc<T>,
    bytes: u64,
    last: u64,
}

impl<T> KeyCache<T> {
    pub fn new(budget: u64) -> KeyCache<T> {
        KeyCache {
            budget,
            used: 0,
            tick: 0,
            entries: HashMap::new(),
        }
    }

    pub fn used(&self) -> u64 {
        self.used
    }

    pub fn get(&mut self, id: &[u8; 32]) -> Option<Arc<T>> {
        self.tick += 1;
        let e = self.entries.get_mut(id)?;
        e.last = self.tick;
        Some(e.keys.clone())
    }

    /// Keeps `keys` (of `bytes` bytes), evicting the least recently used
    /// until they fit; keys larger than the whole budget are not kept.
    pub fn insert(&mut self, id: [u8; 32], keys: Arc<T>, bytes: u64) {
        if bytes > self.budget {
            return;
        }
        self.remove(&id);
        while self.used + bytes > self.budget {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last)
                .map(|(k, _)| *k)
                .expect("used > 0 means an entry");
            self.remove(&oldest);
        }
        self.tick += 1;
        self.used += bytes;
        self.entries.insert(
            id,
            Entry {
                keys,
                bytes,
                last: self.tick,
            },
        );
    }

    pub fn remove(&mut self, id: &[u8; 32]) {
        if let Some(e) = self.entries.remove(id) {
            self.used -= e.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used_within_the_budget() {
        let mut c = KeyCache::new(100);
        c.insert([1; 32], Arc::new(1), 40);
        c.insert([2; 32], Arc::new(2), 40);
        assert!(c.get(&[1; 32]).is_some());
        c.insert([3; 32], Arc::new(3), 40);
        assert!(c.get(&[2; 32]).is_none(), "2 was the least recently used");
        assert_eq!(c.get(&[1; 32]).as_deref(), Some(&1));
        assert_eq!(c.get(&[3; 32]).as_deref(), Some(&3));
        assert_eq!(c.used(), 80);
        c.insert([4; 32], Arc::new(4), 101);
        assert!(c.get(&[4; 32]).is_none(), "larger than the budget");
        c.remove(&[1; 32]);
        assert_eq!(c.used(), 40);
    }
}
