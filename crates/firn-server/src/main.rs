//! `firn [config-file] [--name value ...]`: a Redis-compatible server whose
//! data lives in RocksDB. See README.md and docs/configuration.md.
//! `firn import-rdb <file.rdb> [config-file] [--name value ...]` loads a
//! Redis RDB file into the data directory and exits.

use std::process::ExitCode;
use std::time::Instant;

const IMPORT_USAGE: &str = "Usage: firn import-rdb <file.rdb> [/path/to/firn.conf] [--option value ...]\n\nLoads the RDB file (Redis 7.0 or older) into the data directory (--dir) and exits; existing keys of the same names are replaced.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "import-rdb") {
        return import_rdb(&args[1..]);
    }
    if args.iter().any(|a| a == "--version" || a == "-v") {
        println!("firn {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("Usage: firn [/path/to/firn.conf] [--option value ...]\n       firn import-rdb <file.rdb> [/path/to/firn.conf] [--option value ...]\n\nOptions are those of docs/configuration.md, e.g. --port 6379 --dir ./firn-data.");
        return ExitCode::SUCCESS;
    }
    let mut config = match firn_server::config::Config::from_args(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("*** FATAL CONFIG FILE ERROR ***\n{e}");
            return ExitCode::from(1);
        }
    };
    if config.daemonize {
        // Before any thread exists (none has been started yet: the runtime,
        // RocksDB and the pools all start in `run`), as Redis does.
        if let Err(e) = firn_server::daemonize() {
            eprintln!("firn: cannot daemonize: {e}");
            return ExitCode::from(1);
        }
        if config.pidfile.is_empty() {
            config.pidfile = "/var/run/redis.pid".into();
        }
    }
    match firn_server::run(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("firn: {e}");
            ExitCode::from(1)
        }
    }
}

/// `firn import-rdb <file.rdb> [config-file] [--option value ...]`.
fn import_rdb(args: &[String]) -> ExitCode {
    let Some((file, options)) = args.split_first() else {
        eprintln!("{IMPORT_USAGE}");
        return ExitCode::from(1);
    };
    if file == "--help" || file == "-h" {
        println!("{IMPORT_USAGE}");
        return ExitCode::SUCCESS;
    }
    let config = match firn_server::config::Config::from_args(options) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("*** FATAL CONFIG FILE ERROR ***\n{e}");
            return ExitCode::from(1);
        }
    };
    let started = Instant::now();
    match firn_server::import_rdb_file(config, std::path::Path::new(file)) {
        Ok(stats) => {
            println!(
                "imported {} keys, {} functions in {:.2} s",
                stats.keys,
                stats.functions,
                started.elapsed().as_secs_f64()
            );
            if stats.expired > 0 {
                println!("skipped {} keys whose expiry had passed", stats.expired);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("firn import-rdb: {e}");
            ExitCode::from(1)
        }
    }
}
