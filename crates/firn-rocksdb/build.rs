//! Compiles RocksDB's C++ into `$OUT_DIR/librocksdb.a` as librocksdb-sys
//! 0.19's build script does (`build_rocksdb`, for Linux with lz4 and zstd,
//! the features Firn's Cargo.toml enables), from librocksdb-sys's own copy
//! of the sources, leaving out the files in `unlinked.txt` on x86_64 Linux
//! (where that list was taken; other targets compile every file).
//!
//! The compiler runs in librocksdb-sys's directory with the same flags in
//! the same order, so every command line is the one librocksdb-sys would
//! run: objects are the same, and ccache serves one build from the other.
//!
//! Only when `ROCKSDB_LIB_DIR` is set (scripts/env.sh sets it): then
//! librocksdb-sys links `-lrocksdb` instead of building it, and this
//! archive is the one found. Without it librocksdb-sys builds the whole
//! library itself and this script does nothing.

use std::collections::BTreeSet;
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=unlinked.txt");
    println!("cargo:rerun-if-env-changed=ROCKSDB_LIB_DIR");
    println!("cargo:rerun-if-env-changed=ROCKSDB_CXX_STD");
    for compiler_env in ["CC", "CXX", "CFLAGS", "CXXFLAGS", "CRATE_CC_NO_DEFAULTS"] {
        println!("cargo:rerun-if-env-changed={compiler_env}");
    }
    if env::var_os("ROCKSDB_LIB_DIR").is_none() {
        println!(
            "cargo:warning=ROCKSDB_LIB_DIR is not set (source scripts/env.sh): librocksdb-sys builds all of RocksDB itself"
        );
        return;
    }
    let sources_dir = PathBuf::from(
        env::var("DEP_ROCKSDB_CARGO_MANIFEST_DIR").expect("librocksdb-sys names its directory"),
    );
    let target = env::var("TARGET").unwrap();
    let target_arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap();
    assert!(
        target.contains("linux"),
        "firn-rocksdb builds RocksDB for Linux only (target {target})"
    );

    let listed = std::fs::read_to_string(sources_dir.join("rocksdb_lib_sources.txt"))
        .expect("librocksdb-sys's rocksdb_lib_sources.txt");
    let listed: Vec<&str> = listed.trim().lines().map(str::trim).collect();
    let unlinked = unlinked(&listed, target_arch == "x86_64");

    // Relative paths as librocksdb-sys gives them, from its directory.
    env::set_current_dir(&sources_dir).expect("librocksdb-sys's directory");
    let mut config = cc::Build::new();
    config.include("rocksdb/include/");
    config.include("rocksdb/");
    config.include("rocksdb/third-party/gtest-1.8.1/fused-src/");
    config.define("LZ4", Some("1"));
    if let Some(path) = env::var_os("DEP_LZ4_INCLUDE") {
        config.include(path);
    }
    config.define("ZSTD", Some("1"));
    if let Some(path) = env::var_os("DEP_ZSTD_INCLUDE") {
        config.include(path);
    }
    config.include(".");
    config.define("NDEBUG", Some("1"));
    config.define("HAVE_ALIGNED_NEW", None);
    config.define("HAVE_UINT128_EXTENSION", None);

    pass_through_target_cpu(&mut config);
    let features_env = env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let features: Vec<&str> = features_env.split(',').collect();
    if target_arch == "x86_64" {
        for (feature, flag) in [
            ("sse2", "-msse2"),
            ("sse4.1", "-msse4.1"),
            ("sse4.2", "-msse4.2"),
            ("avx2", "-mavx2"),
            ("bmi1", "-mbmi"),
            ("lzcnt", "-mlzcnt"),
            ("pclmulqdq", "-mpclmul"),
        ] {
            if features.contains(&feature) {
                config.flag_if_supported(flag);
            }
        }
    } else if target_arch == "aarch64"
        && features.contains(&"crc")
        && features.contains(&"aes")
        && target_cpu().is_none()
    {
        config.flag_if_supported("-march=armv8-a+crc+aes+crypto");
    }

    config.define("OS_LINUX", None);
    config.define("ROCKSDB_PLATFORM_POSIX", None);
    config.define("ROCKSDB_LIB_IO_POSIX", None);
    config.define("ROCKSDB_SCHED_GETCPU_PRESENT", None);
    config.define("ROCKSDB_AUXV_GETAUXVAL_PRESENT", None);
    config.define("ROCKSDB_FALLOCATE_PRESENT", None);
    config.define("ROCKSDB_RANGESYNC_PRESENT", None);
    if env::var("CARGO_CFG_TARGET_POINTER_WIDTH").unwrap() != "64" {
        config.define("_FILE_OFFSET_BITS", Some("64"));
        config.define("_LARGEFILE64_SOURCE", Some("1"));
    }

    let std = env::var("ROCKSDB_CXX_STD").map_or("-std=c++20".to_owned(), |std| {
        if std.starts_with("-std=") {
            std
        } else {
            format!("-std={std}")
        }
    });
    config.flag(std);
    for flag in [
        "-Wsign-compare",
        "-Wshadow",
        "-Wno-unused-parameter",
        "-Wno-unused-variable",
        "-Woverloaded-virtual",
        "-Wnon-virtual-dtor",
        "-Wno-missing-field-initializers",
        "-Wno-strict-aliasing",
        "-Wno-invalid-offsetof",
    ] {
        config.flag(flag);
    }
    if target.contains("riscv64gc") {
        println!("cargo:rustc-link-lib=atomic");
    }
    for file in &listed {
        // librocksdb-sys compiles its own pre-generated build_version.cc.
        if *file == "util/build_version.cc" || unlinked.contains(file) {
            continue;
        }
        config.file(format!("rocksdb/{file}"));
    }
    config.file("build_version.cc");
    config.cpp(true);
    config.flag("-include").flag("cstdint");
    // No link directives of cc's own: librocksdb-sys asks for -lrocksdb,
    // and the search path below makes it this archive.
    config.cargo_metadata(false);
    // RocksDB's own -Wextra warnings stay in the compiler's output, unshown,
    // as they are for librocksdb-sys (a registry crate).
    config.cargo_warnings(false);
    config.compile("librocksdb.a");
    let out_dir = env::var("OUT_DIR").unwrap();
    println!("cargo:rustc-link-search=native={out_dir}");
}

/// The files of unlinked.txt (none off x86_64); each must be in the
/// source list, so that the list cannot go stale unnoticed.
fn unlinked<'a>(listed: &[&'a str], x86_64: bool) -> BTreeSet<&'a str> {
    let text = include_str!("unlinked.txt");
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let found = listed
            .iter()
            .find(|file| **file == line)
            .unwrap_or_else(|| panic!("unlinked.txt names {line}, which RocksDB's source list does not have: delete the line"));
        if x86_64 {
            out.insert(*found);
        }
    }
    out
}

/// `-C target-cpu=...` of the Rust flags, if any.
fn target_cpu() -> Option<String> {
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let flags: Vec<&str> = flags.split('\x1f').collect();
    flags.iter().enumerate().find_map(|(i, flag)| {
        let value = flag.strip_prefix("-C").map(str::trim_start)?;
        let value = if value.is_empty() {
            flags.get(i + 1)?
        } else {
            value
        };
        value.strip_prefix("target-cpu=").map(str::to_owned)
    })
}

/// Passes `-C target-cpu` on to the C++ compiler, as librocksdb-sys does.
fn pass_through_target_cpu(config: &mut cc::Build) {
    let Some(cpu) = target_cpu() else {
        return;
    };
    match env::var("CARGO_CFG_TARGET_ARCH")
        .unwrap_or_default()
        .as_str()
    {
        "x86_64" => {
            config.flag_if_supported(format!("-march={cpu}"));
        }
        "aarch64" => {
            config.flag_if_supported(format!("-mcpu={cpu}"));
        }
        _ => {}
    }
}
