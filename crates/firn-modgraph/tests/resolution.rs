//! How paths resolve to the module that owns their item, one rule a test,
//! on small crates held in memory.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use firn_modgraph::check;

/// The edges of the crate whose files are `files` (`src/lib.rs` first), as
/// `from -> to` lines.
fn edges(files: &[(&str, &str)]) -> Vec<String> {
    let sources: HashMap<PathBuf, String> = files
        .iter()
        .map(|(path, text)| (PathBuf::from(path), text.to_string()))
        .collect();
    let read = |path: &Path| {
        sources
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))
    };
    let report = check("demo", Path::new("src/lib.rs"), None, &read).expect("the crate reads");
    report
        .all_edges
        .iter()
        .map(|step| format!("{} -> {}", step.from, step.to))
        .collect()
}

#[test]
fn use_groups_renames_and_self_name_the_module_of_the_item() {
    let found = edges(&[
        ("src/lib.rs", "mod a; mod b;"),
        ("src/a.rs", "pub fn f() {} pub struct T;"),
        (
            "src/b.rs",
            "use crate::a::{self as alias, T as Renamed}; fn x(_: Renamed) { alias::f() }",
        ),
    ]);
    assert_eq!(found, ["b -> a"]);
}

#[test]
fn super_climbs_from_nested_files() {
    let found = edges(&[
        ("src/lib.rs", "mod outer;"),
        ("src/outer.rs", "mod inner; pub fn helper() {}"),
        ("src/outer/inner.rs", "mod deep;"),
        (
            "src/outer/inner/deep.rs",
            "fn f() { super::super::helper() }",
        ),
    ]);
    assert_eq!(found, ["outer::inner::deep -> outer"]);
}

#[test]
fn an_explicit_name_shadows_a_glob_and_a_glob_alone_draws_nothing() {
    let found = edges(&[
        ("src/lib.rs", "mod a; mod b; mod c;"),
        ("src/a.rs", "pub fn f() {} pub fn g() {}"),
        ("src/b.rs", "pub fn f() {}"),
        (
            "src/c.rs",
            "use crate::a::*; use crate::b::f; fn x() { f() }",
        ),
    ]);
    assert_eq!(found, ["c -> b"]);
    let found = edges(&[
        ("src/lib.rs", "mod a; mod c;"),
        ("src/a.rs", "pub fn f() {} pub fn g() {}"),
        ("src/c.rs", "use crate::a::*; fn x() { g() }"),
    ]);
    assert_eq!(found, ["c -> a"]);
}

#[test]
fn re_exports_are_followed_to_the_owner_and_draw_nothing_themselves() {
    let found = edges(&[
        ("src/lib.rs", "mod a; mod b; pub use a::deep::Thing;"),
        ("src/a.rs", "pub mod deep; pub use deep::Thing as Renamed;"),
        ("src/a/deep.rs", "pub struct Thing;"),
        ("src/b.rs", "fn x(_: crate::Thing, _: crate::a::Renamed) {}"),
    ]);
    assert_eq!(found, ["b -> a::deep"]);
}

#[test]
fn macro_bodies_are_read_as_rust_or_as_tokens() {
    let found = edges(&[
        ("src/lib.rs", "mod a; mod b; mod c; mod d;"),
        ("src/a.rs", "pub fn f() -> u8 { 1 } pub const N: u8 = 2;"),
        // Arguments that parse as expressions.
        (
            "src/b.rs",
            "fn x() { assert_eq!(crate::a::f(), 1, \"{}\", 2); }",
        ),
        // A macro_rules! template, with `$crate`.
        (
            "src/c.rs",
            "macro_rules! call { () => { $crate::a::f() }; }",
        ),
        // Tokens that are not Rust: every `a::b` run is a path.
        ("src/d.rs", "fn y() { select! { n = crate::a::N => {}, } }"),
    ]);
    assert_eq!(found, ["b -> a", "c -> a", "d -> a"]);
}

#[test]
fn names_of_other_crates_locals_and_the_prelude_draw_nothing() {
    let found = edges(&[
        ("src/lib.rs", "mod server; mod user;"),
        ("src/server.rs", "pub struct Server;"),
        (
            "src/user.rs",
            "use std::collections::HashMap; use firn_storage::Engine; \
             fn x(server: u8) -> Option<u8> { let _ = server; ::std::mem::drop(1); Some(server) }",
        ),
    ]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_path_attribute_names_the_file() {
    let found = edges(&[
        ("src/lib.rs", "#[path = \"other/place.rs\"] mod a; mod b;"),
        ("src/other/place.rs", "pub fn f() {}"),
        ("src/b.rs", "fn x() { crate::a::f() }"),
    ]);
    assert_eq!(found, ["b -> a"]);
}

#[test]
fn an_inline_test_module_is_its_files_a_test_file_is_its_own() {
    let found = edges(&[
        ("src/lib.rs", "mod a; mod b; #[cfg(test)] mod tests;"),
        (
            "src/a.rs",
            "pub fn f() {} #[cfg(test)] mod tests { use crate::b::g; }",
        ),
        ("src/b.rs", "pub fn g() {}"),
        ("src/tests.rs", "use crate::a::f;"),
    ]);
    assert_eq!(found, ["a -> b", "tests -> a"]);
}

#[test]
fn blocks_scope_their_imports_and_items() {
    let found = edges(&[
        ("src/lib.rs", "mod a; mod b;"),
        ("src/a.rs", "pub fn f() {} pub fn g() {}"),
        // `g` inside the function is its own item, not a::g.
        ("src/b.rs", "use crate::a::f; fn x() { use crate::a as alias; alias::f(); } fn y() { fn g() {} g(); }"),
    ]);
    assert_eq!(found, ["b -> a"]);
    let found = edges(&[
        ("src/lib.rs", "mod a; mod b;"),
        ("src/a.rs", "pub fn g() {}"),
        ("src/b.rs", "fn y() { fn g() {} g(); }"),
    ]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn variants_associated_items_and_qualified_paths_belong_to_their_type() {
    let found = edges(&[
        ("src/lib.rs", "mod a; mod b; mod c; mod d;"),
        ("src/a.rs", "pub enum E { V } pub struct T; impl T { pub fn new() -> T { T } } pub trait Tr { fn f(); }"),
        ("src/b.rs", "fn x() { let _ = crate::a::E::V; }"),
        ("src/c.rs", "use crate::a::T; fn x() { let _ = T::new(); }"),
        ("src/d.rs", "fn x<U: Default>() { <U as crate::a::Tr>::f() }"),
    ]);
    assert_eq!(found, ["b -> a", "c -> a", "d -> a"]);
}

#[test]
fn a_method_call_is_not_seen_only_the_names_written() {
    // `c` calls `T::m` through a value `b` hands it, and never names `T`:
    // without types the call cannot be placed (uses.rs says so).
    let found = edges(&[
        ("src/lib.rs", "mod a; mod b; mod c;"),
        ("src/a.rs", "pub struct T; impl T { pub fn m(&self) {} }"),
        ("src/b.rs", "pub fn make() -> crate::a::T { crate::a::T }"),
        ("src/c.rs", "fn x() { crate::b::make().m(); }"),
    ]);
    assert_eq!(found, ["b -> a", "c -> b"]);
}

#[test]
fn a_missing_module_file_is_an_error_naming_what_was_tried() {
    let sources = |path: &Path| match path.to_str() {
        Some("src/lib.rs") => Ok("mod gone;".to_string()),
        _ => Err(io::Error::new(io::ErrorKind::NotFound, "no such file")),
    };
    let error = check("demo", Path::new("src/lib.rs"), None, &sources).expect_err("no file");
    assert_eq!(
        error.to_string(),
        "module gone: no file (tried src/gone.rs, src/gone/mod.rs)"
    );
}
