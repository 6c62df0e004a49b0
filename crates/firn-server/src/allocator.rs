//! Two allocators. Rust's allocations (every command's buffers, the
//! overlay, the hot tier) go to jemalloc; RocksDB's C++ and Lua's C keep
//! glibc's malloc, with one arena, a fixed mmap threshold and a periodic
//! `malloc_trim`, so that freed block-cache memory does not stay resident
//! (docs/configuration.md, "Memory").
//!
//! The caches are bounded, but they churn: block-cache blocks, memtable
//! arenas and hot-tier records are freed and reallocated all the time, by
//! many threads. glibc with an arena per thread lets freed memory pile up
//! in holes the kernel still counts (tens of MB at a 64 MB budget,
//! bench/memory.md); with one arena, every thread takes its lock, and
//! under `SET -P 16` a sixth of the CPU went to that lock's futex wake-ups
//! and to `malloc` called from Rust (bench/profiles/). jemalloc for
//! everything removed both costs but held 18 MB more at the 64 MB budget
//! (118.7 MB peak, against the 100.4 MB target), its per-thread caches and
//! decaying pages beside RocksDB's churn. Split, the commands' allocations
//! take no shared lock and RocksDB's blocks are trimmed as before.

use std::time::Duration;

/// How often free heap pages are handed back to the kernel (glibc's
/// `malloc_trim`, jemalloc's purge; jemalloc's background thread also
/// returns pages as they decay).
pub const TRIM_INTERVAL: Duration = Duration::from_secs(2);

#[cfg(all(target_os = "linux", not(target_env = "msvc")))]
mod jemalloc {
    use libc::c_char;

    #[global_allocator]
    static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

    /// Read by jemalloc before `main`. Two arenas for two cores keep the
    /// per-arena slack small; dirty pages go back after a second, and
    /// muzzy ones at once, so resident memory follows the caches.
    #[allow(non_upper_case_globals)]
    #[export_name = "_rjem_malloc_conf"]
    pub static malloc_conf: Option<&'static c_char> = Some(
        // SAFETY: a pointer to the first byte of a static, NUL-terminated
        // string, read by jemalloc as a C string.
        unsafe {
            &*c"background_thread:true,narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0".as_ptr()
        },
    );

    /// `malloc_stats_print`'s text.
    pub fn stats() -> String {
        unsafe extern "C" fn append(out: *mut libc::c_void, text: *const c_char) {
            // SAFETY: `out` is the `String` passed below and `text` a C
            // string jemalloc keeps valid for the call.
            unsafe {
                let out = &mut *(out as *mut String);
                out.push_str(&std::ffi::CStr::from_ptr(text).to_string_lossy());
            }
        }
        let mut out = String::new();
        // SAFETY: the callback only appends to `out`, which outlives the
        // call; a null option string prints everything.
        unsafe {
            tikv_jemalloc_sys::malloc_stats_print(
                Some(append),
                &mut out as *mut String as *mut libc::c_void,
                std::ptr::null(),
            );
        }
        out
    }

    /// Returns the free pages of every arena to the kernel.
    pub fn purge() {
        // "arena.<MALLCTL_ARENAS_ALL>.purge"
        let name = c"arena.4096.purge";
        // SAFETY: a void mallctl: no old or new value is read or written.
        unsafe {
            tikv_jemalloc_sys::mallctl(
                name.as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            );
        }
    }
}

/// jemalloc's statistics as text (MEMORY MALLOC-STATS), as Redis built
/// with jemalloc answers.
pub fn stats_text() -> Option<String> {
    #[cfg(all(target_os = "linux", not(target_env = "msvc")))]
    return Some(jemalloc::stats());
    #[cfg(not(all(target_os = "linux", not(target_env = "msvc"))))]
    None
}

/// Sets glibc's parameters (jemalloc reads its own before `main`). Call
/// before any thread is started.
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

/// Returns free pages of both allocators to the kernel (MEMORY PURGE, the
/// trimmer thread).
pub fn release_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes the arena locks itself; it frees nothing
    // that is in use.
    unsafe {
        libc::malloc_trim(0);
    }
    #[cfg(all(target_os = "linux", not(target_env = "msvc")))]
    jemalloc::purge();
}
