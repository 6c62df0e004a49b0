//! The checker on crates built to fail (tests/fixtures/fn_cycle, a cycle
//! through functions; type_cycle, through types) and on one built to pass
//! (clean): through the library, and through the binary CI runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use firn_modgraph::{check, Report, Rules, NO_CYCLE};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn rules() -> Rules {
    let text = std::fs::read_to_string(fixture("layers.md")).expect("layers.md");
    Rules::parse(&text).expect("the fixtures' rules parse")
}

fn report(crate_name: &str, dir: &str, with_rules: bool) -> Report {
    let rules = rules();
    let layers = if with_rules {
        rules.crates.get(crate_name)
    } else {
        None
    };
    let root = fixture(dir).join("src/lib.rs");
    check(crate_name, &root, layers, &|path: &Path| {
        std::fs::read_to_string(path)
    })
    .expect("the fixture reads")
}

/// The edges of a report as `from -> to` lines.
fn edges(report: &Report) -> Vec<String> {
    report
        .all_edges
        .iter()
        .map(|step| format!("{} -> {}", step.from, step.to))
        .collect()
}

#[test]
fn a_cycle_through_functions_fails_and_is_named() {
    let report = report("fn-cycle", "fn_cycle", false);
    assert!(!report.passed());
    assert_eq!(report.cycles.len(), 1);
    assert_eq!(report.cycles[0].members, ["billing", "orders"]);
    let text = report.to_string();
    assert!(text.contains(NO_CYCLE), "{text}");
    assert!(text.contains("billing -> orders"), "{text}");
    assert!(
        text.contains("fn_cycle/src/billing.rs:1: crate::orders::total"),
        "{text}"
    );
    assert!(text.contains("orders -> billing"), "{text}");
    assert!(
        text.contains("fn_cycle/src/orders.rs:6: crate::billing::charge"),
        "{text}"
    );
}

#[test]
fn a_cycle_through_types_fails_and_is_named() {
    let report = report("type-cycle", "type_cycle", false);
    assert!(!report.passed());
    assert_eq!(report.cycles.len(), 1);
    assert_eq!(report.cycles[0].members, ["shapes", "style"]);
    let text = report.to_string();
    assert!(text.contains("shapes -> style"), "{text}");
    assert!(
        text.contains("type_cycle/src/shapes.rs:3: super::style::Stroke"),
        "{text}"
    );
    // Through the root's re-export, to the module that defines `Shape`.
    assert!(text.contains("style -> shapes"), "{text}");
    assert!(
        text.contains("type_cycle/src/style.rs:6: crate::Shape"),
        "{text}"
    );
    assert!(
        !edges(&report).iter().any(|edge| edge.contains("crate")),
        "{:?}",
        edges(&report)
    );
}

#[test]
fn with_layers_a_cycle_also_names_the_layer_rule_it_breaks() {
    let functions = report("fn-cycle", "fn_cycle", true);
    assert_eq!(functions.upward.len(), 1);
    assert_eq!(
        (
            functions.upward[0].from.as_str(),
            functions.upward[0].to.as_str()
        ),
        ("billing", "orders")
    );
    let text = functions.to_string();
    assert!(
        text.contains("breaks: layer `lower` (the lowest) may use only its own modules"),
        "{text}"
    );
    let text = report("type-cycle", "type_cycle", true).to_string();
    assert!(text.contains("up the layers: style -> shapes"), "{text}");
}

#[test]
fn the_clean_fixture_passes_with_exactly_its_edges() {
    let report = report("clean", "clean", true);
    assert!(report.passed(), "{report}");
    // A re-export draws nothing of its own: `server` depends on the module
    // that defines `Listener`, not on `net`, and the root on nothing. The
    // test module's import is the listener's own dependency.
    assert_eq!(
        edges(&report),
        [
            "net::listener -> config",
            "server -> config",
            "server -> net::listener"
        ]
    );
}

#[test]
fn the_binary_fails_on_each_cycle_and_passes_the_clean_crate() {
    let run = |name: &str, dir: &str| {
        let root = fixture(dir).join("src/lib.rs");
        let output = Command::new(env!("CARGO_BIN_EXE_firn-modgraph"))
            .arg("--rules")
            .arg(fixture("layers.md"))
            .arg("--crate")
            .arg(format!("{name}={}", root.display()))
            .output()
            .expect("the binary runs");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    for (name, dir, members) in [
        ("fn-cycle", "fn_cycle", "billing, orders"),
        ("type-cycle", "type_cycle", "shapes, style"),
    ] {
        let (code, out) = run(name, dir);
        assert_eq!(code, Some(1), "{out}");
        assert!(
            out.contains(&format!("cycle of 2 modules: {members}")),
            "{out}"
        );
        assert!(out.contains(NO_CYCLE), "{out}");
    }
    let (code, out) = run("clean", "clean");
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("clean: 5 modules, 3 edges, no cycle, no layer broken"),
        "{out}"
    );
}

#[test]
fn rules_that_name_no_module_or_miss_one_fail() {
    let rules =
        Rules::parse("```layers\nclean\n  leaves config gone\n  top server\n```\n").expect("parse");
    let root = fixture("clean").join("src/lib.rs");
    let report = check("clean", &root, rules.crates.get("clean"), &|path: &Path| {
        std::fs::read_to_string(path)
    })
    .expect("reads");
    assert_eq!(report.stale, ["leaves: gone"]);
    assert_eq!(report.unplaced, ["crate", "net", "net::listener"]);
    assert!(!report.passed());
}
