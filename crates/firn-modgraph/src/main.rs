//! `firn-modgraph`: checks every library of the workspace (from `cargo
//! metadata`), or the crates named with `--crate`, against the rules:
//! no import cycle, and the layers of the ```` ```layers ```` blocks in
//! docs/architecture.md. Exits 0 when every rule holds, 1 when one is
//! broken, 2 when the sources or the rules cannot be read.
//!
//! ```text
//! cargo run -p firn-modgraph                      # the workspace, as CI does
//! cargo run -p firn-modgraph -- --graph           # and print every edge
//! firn-modgraph --crate demo=path/src/lib.rs --rules path/layers.md
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use firn_modgraph::{check, Rules};

#[derive(Parser)]
#[command(about = "Import cycles and layer rules of the workspace's libraries")]
struct Options {
    /// The Markdown file whose ```layers blocks hold the rules (default:
    /// docs/architecture.md of the workspace; none with --crate).
    #[arg(long)]
    rules: Option<PathBuf>,
    /// A crate to check instead of the workspace's libraries, as
    /// NAME=ROOT_FILE (repeatable).
    #[arg(long = "crate", value_name = "NAME=ROOT")]
    crates: Vec<String>,
    /// Print every edge of each crate and where it was seen.
    #[arg(long)]
    graph: bool,
}

fn main() -> ExitCode {
    match run(Options::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("firn-modgraph: {error}");
            ExitCode::from(2)
        }
    }
}

/// Whether every crate keeps every rule.
fn run(options: Options) -> Result<bool, String> {
    let (base, crates, default_rules) = if options.crates.is_empty() {
        let (root, libraries) = workspace_libraries()?;
        let rules = root.join("docs/architecture.md");
        (root, libraries, Some(rules))
    } else {
        let named = options.crates.iter().map(|named| {
            let (name, root) = named
                .split_once('=')
                .ok_or(format!("--crate {named}: NAME=ROOT expected"))?;
            Ok((name.to_string(), PathBuf::from(root)))
        });
        (PathBuf::new(), named.collect::<Result<_, String>>()?, None)
    };
    let rules = match options.rules.or(default_rules) {
        Some(file) => {
            let text =
                std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            Rules::parse(&text).map_err(|e| format!("{}: {e}", file.display()))?
        }
        None => Rules::default(),
    };
    // A crate of the rules that the workspace does not have is a typo or a
    // crate renamed: its rules would hold nothing.
    let whole_workspace = options.crates.is_empty();
    for name in rules.crates.keys() {
        if whole_workspace && !crates.iter().any(|(checked, _)| checked == name) {
            return Err(format!(
                "the rules name {name}, which is not a library of the workspace"
            ));
        }
    }
    let read = |path: &Path| std::fs::read_to_string(base.join(path));
    let mut passed = true;
    for (name, root) in &crates {
        let report = check(name, root, rules.crates.get(name), &read).map_err(|e| e.to_string())?;
        if options.graph {
            for step in &report.all_edges {
                println!("{name}: {step}");
            }
        }
        println!("{report}");
        passed &= report.passed();
    }
    Ok(passed)
}

/// The workspace's root and every package with a library, with its root
/// file relative to the workspace (so the report's paths are short).
fn workspace_libraries() -> Result<(PathBuf, Vec<(String, PathBuf)>), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let root = PathBuf::from(
        metadata["workspace_root"]
            .as_str()
            .ok_or("cargo metadata: no workspace_root")?,
    );
    let mut libraries = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        for target in package["targets"].as_array().into_iter().flatten() {
            let is_library = target["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|kind| kind == "lib");
            if let (true, Some(name), Some(file)) = (
                is_library,
                package["name"].as_str(),
                target["src_path"].as_str(),
            ) {
                let file = Path::new(file);
                libraries.push((
                    name.to_string(),
                    file.strip_prefix(&root).unwrap_or(file).to_path_buf(),
                ));
            }
        }
    }
    libraries.sort();
    Ok((root, libraries))
}
