//! glibc malloc settings that keep freed memory from staying resident, so
//! that the process stays within `maxmemory` (docs/configuration.md).
//!
//! The caches are bounded, but they churn: block-cache blocks, memtable
//! arenas and hot-tier records are freed and reallocated all the time, by
//! many threads. With glibc's defaults every thread may get its own arena
//! and large blocks move from mmap to the heap once the dynamic mmap
//! threshold has grown, so freed memory piles up in holes the kernel still
//! counts (measured in bench/memory.md: tens of MB at a 64 MB budget).
//! Hence: one arena (measured: 2 arenas peaked 8 MB higher at a 64 MB
//! budget, with no throughput difference above the noise on 2 cores), a
//! fixed mmap threshold (big blocks go back to the kernel when freed), and
//! a periodic `malloc_trim` that returns the free pages inside the heap.

use std::time::Duration;

/// How often free heap pages are handed back to the kernel.
pub const TRIM_INTERVAL: Duration = Duration::from_secs(2);

/// Sets the allocator parameters. Call before any thread is started.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn configure() {
    // SAFETY: mallopt only changes glibc's allocator parameters; it is
    // called at start-up, before other threads allocate.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn configure() {}

/// Returns free pages of every malloc arena to the kernel.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn release_free_pages() {
    // SAFETY: malloc_trim takes the arena locks itself; it frees nothing
    // that is in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_free_pages() {}
