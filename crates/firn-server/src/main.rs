//! `firn [config-file] [--name value ...]`: a Redis-compatible server whose
//! data lives in RocksDB. See README.md and docs/configuration.md.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version" || a == "-v") {
        println!("firn {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("Usage: firn [/path/to/firn.conf] [--option value ...]\n\nOptions are those of docs/configuration.md, e.g. --port 6379 --dir ./firn-data.");
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
