//! The server-side TLS session cache (`tls-session-cache-size`,
//! `tls-session-cache-timeout`), as OpenSSL's SSL_SESS_CACHE_SERVER that
//! Redis turns on: sessions are kept by id, at most `size` of them (0: no
//! bound; the oldest go first), each resumable for `timeout`. rustls's own
//! ServerSessionMemoryCache has no expiry by time, hence this one.

use parking_lot::Mutex;
use rustls::server::StoresServerSessions;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct SessionCache {
    size: usize,
    timeout: Duration,
    inner: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    by_id: HashMap<Vec<u8>, (Vec<u8>, Instant)>,
    /// Ids in the order they were stored (some may be gone already).
    order: VecDeque<Vec<u8>>,
}

impl SessionCache {
    pub fn new(size: u64, timeout: Duration) -> SessionCache {
        SessionCache {
            size: usize::try_from(size).unwrap_or(usize::MAX),
            timeout,
            inner: Mutex::new(Entries::default()),
        }
    }
}

impl StoresServerSessions for SessionCache {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        let mut entries = self.inner.lock();
        let now = Instant::now();
        // Expired sessions at the front go first, then the oldest while
        // the cache is full.
        while let Some(oldest) = entries.order.front() {
            let expired = entries
                .by_id
                .get(oldest)
                .is_none_or(|(_, at)| now.duration_since(*at) >= self.timeout);
            let full = self.size > 0 && entries.by_id.len() >= self.size;
            if !expired && !full {
                break;
            }
            if let Some(id) = entries.order.pop_front() {
                entries.by_id.remove(&id);
            }
        }
        entries.order.push_back(key.clone());
        entries.by_id.insert(key, (value, now));
        // Ids taken (resumed once) stay in `order` until they reach its
        // front: compacted when they outnumber the live ones.
        if entries.order.len() > 2 * entries.by_id.len().max(1024) {
            let Entries { by_id, order } = &mut *entries;
            order.retain(|id| by_id.contains_key(id));
        }
        true
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        let entries = self.inner.lock();
        let (value, at) = entries.by_id.get(key)?;
        (at.elapsed() < self.timeout).then(|| value.clone())
    }

    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut entries = self.inner.lock();
        let (value, at) = entries.by_id.remove(key)?;
        (at.elapsed() < self.timeout).then_some(value)
    }

    fn can_cache(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_by_size_and_time() {
        let cache = SessionCache::new(2, Duration::from_secs(60));
        for id in [b"a", b"b", b"c"] {
            cache.put(id.to_vec(), id.to_vec());
        }
        assert_eq!(cache.get(b"a"), None);
        assert_eq!(cache.get(b"c"), Some(b"c".to_vec()));
        assert_eq!(cache.take(b"b"), Some(b"b".to_vec()));
        assert_eq!(cache.take(b"b"), None);
        let expired = SessionCache::new(0, Duration::ZERO);
        expired.put(b"x".to_vec(), b"x".to_vec());
        assert_eq!(expired.get(b"x"), None);
    }
}
