//! Every use of an item, drawn as an edge from the node (file) that writes
//! it to the node that defines the item: `use` statements (each leaf of a
//! tree, renames and globs included), and every path in code, types,
//! patterns, `impl` headers, bounds and generic arguments, in items, test
//! modules and blocks alike. Attributes are skipped (`derive` names traits
//! of other crates; `cfg`, `allow` and docs name nothing).
//!
//! A re-export (`pub use`, `pub(crate) use`) draws no edge of its own: it
//! forwards a name, and every use of that name is drawn to the module that
//! defines the item. A facade `mod.rs` does not depend on what it
//! re-exports; the modules that name the item through it do, on its owner.
//!
//! A macro's arguments are read as Rust when they parse as comma-separated
//! expressions or as statements (`format!`, `assert_eq!`, `vec!`,
//! `thread_local!`...); otherwise, and in the bodies of `macro_rules!`
//! (counted for the module that defines the macro, with `$crate` as
//! `crate`), every `a::b::c` run of tokens is taken as a path.
//!
//! What cannot be seen without types: which `impl` a method call lands in
//! (`x.f()`, and `Type::f` where `f` comes from a trait). The receiver's type
//! and the trait are named somewhere (a signature, a `use`, a binding's
//! annotation) and those names are edges; a method whose type is never
//! named where it is called, reached through a value handed over, is not.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::parse::Parser;
use syn::visit::Visit;

use crate::resolve::{Resolver, Scope, Target};
use crate::tree::{declare, use_leaves, ModuleId, Names, Tree, UseLeaf, WrittenPath};

/// Where an edge was seen: the file, the line and the path as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    pub file: PathBuf,
    pub line: usize,
    pub path: String,
}

/// Node → node → every place the first uses the second.
#[derive(Debug, Default)]
pub struct Graph {
    pub edges: BTreeMap<ModuleId, BTreeMap<ModuleId, Vec<Evidence>>>,
}

impl Graph {
    /// Every place `from` uses `to` (empty when it does not).
    pub fn evidence(&self, from: ModuleId, to: ModuleId) -> &[Evidence] {
        self.edges
            .get(&from)
            .and_then(|targets| targets.get(&to))
            .map_or(&[], Vec::as_slice)
    }

    pub fn successors(&self, from: ModuleId) -> impl Iterator<Item = ModuleId> + '_ {
        self.edges
            .get(&from)
            .into_iter()
            .flat_map(|targets| targets.keys().copied())
    }

    pub fn edge_count(&self) -> usize {
        self.edges.values().map(BTreeMap::len).sum()
    }
}

/// The graph of every use of an item in `tree`.
pub fn graph(tree: &Tree) -> Graph {
    let resolver = Resolver::new(tree);
    let mut graph = Graph::default();
    for file in &tree.files {
        let mut visitor = Visitor {
            tree,
            resolver: &resolver,
            file: &file.path,
            module: file.module,
            blocks: Vec::new(),
            graph: &mut graph,
        };
        visitor.visit_file(&file.ast);
    }
    graph
}

struct Visitor<'a> {
    tree: &'a Tree,
    resolver: &'a Resolver<'a>,
    file: &'a Path,
    /// The module the code being read is in (inline modules included).
    module: ModuleId,
    /// The names of the blocks around it, outermost first.
    blocks: Vec<Names>,
    graph: &'a mut Graph,
}

impl Visitor<'_> {
    /// Draws the edges of `path`, written at `line`.
    fn draw(&mut self, path: &WrittenPath, line: usize) {
        let scope = Scope {
            module: self.module,
            blocks: &self.blocks,
        };
        let from = self.tree.modules[self.module].node;
        for target in self.resolver.resolve(scope, path) {
            // A module is a namespace: what is reached through it counts.
            let Target::Item { owner, .. } = target else {
                continue;
            };
            let to = self.tree.modules[owner].node;
            if to != from {
                let text = format!(
                    "{}{}",
                    if path.global { "::" } else { "" },
                    path.segments.join("::")
                );
                let evidence = Evidence {
                    file: self.file.to_path_buf(),
                    line,
                    path: text,
                };
                let places = self
                    .graph
                    .edges
                    .entry(from)
                    .or_default()
                    .entry(to)
                    .or_default();
                if !places.contains(&evidence) {
                    places.push(evidence);
                }
            }
        }
    }

    fn draw_path(&mut self, path: &syn::Path) {
        let written = WrittenPath {
            global: path.leading_colon.is_some(),
            segments: path
                .segments
                .iter()
                .map(|segment| segment.ident.to_string())
                .collect(),
        };
        let line = path
            .segments
            .first()
            .map_or(0, |segment| segment.ident.span().start().line);
        self.draw(&written, line);
    }

    /// An expression or type path, maybe qualified: `<T>::f` is relative to
    /// `T` alone, `<T as a::Trait>::f` names the trait.
    fn visit_qualified(&mut self, qself: Option<&syn::QSelf>, path: &syn::Path) {
        match qself {
            Some(qself) if qself.position == 0 => {
                self.visit_type(&qself.ty);
                for segment in &path.segments {
                    self.visit_path_arguments(&segment.arguments);
                }
            }
            Some(qself) => {
                self.visit_type(&qself.ty);
                self.visit_path(path);
            }
            None => self.visit_path(path),
        }
    }

    /// Statements read as a block of their own (a macro's body).
    fn visit_statements(&mut self, statements: &[syn::Stmt]) {
        self.blocks.push(block_names(statements));
        for statement in statements {
            self.visit_stmt(statement);
        }
        self.blocks.pop();
    }

    /// A macro's arguments: as Rust when they parse, else as tokens.
    fn visit_macro_body(&mut self, tokens: &TokenStream) {
        let expressions =
            syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(list) = expressions.parse2(tokens.clone()) {
            for expression in &list {
                self.visit_expr(expression);
            }
        } else if let Ok(statements) = syn::Block::parse_within.parse2(tokens.clone()) {
            self.visit_statements(&statements);
        } else {
            self.scan(tokens.clone());
        }
    }

    /// Every `a::b::c` run in `tokens` (and in their groups), as a path.
    fn scan(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut at = 0;
        while at < trees.len() {
            if let TokenTree::Group(group) = &trees[at] {
                self.scan(group.stream());
                at += 1;
                continue;
            }
            let Some((path, line, end)) = path_at(&trees, at) else {
                at += 1;
                continue;
            };
            // After `.` a field or a method; after `'` a lifetime; after `$`
            // a macro's variable; after `::` the tail of a longer path
            // (`Vec::<T>::new`, `::std::x`); a lone name before `:` is a
            // field or a named argument, before `!` a macro.
            let before = at.checked_sub(1).and_then(|i| punct(&trees[i]));
            let after = trees.get(end).and_then(punct);
            let tail = at >= 2 && colon2(&trees, at - 2);
            let skip = matches!(before, Some('.' | '\'' | '$'))
                || tail
                || (path.segments.len() == 1
                    && matches!(after, Some(':' | '!'))
                    && !colon2(&trees, end));
            if !skip {
                self.draw(&path, line);
            }
            at = end;
        }
    }
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    fn visit_item_mod(&mut self, declared: &'ast syn::ItemMod) {
        let Some((_, items)) = &declared.content else {
            return; // a file of its own, read with its own module
        };
        let inner = self
            .tree
            .inline_module(self.file, &declared.ident)
            .unwrap_or(self.module);
        let outer = std::mem::replace(&mut self.module, inner);
        let blocks = std::mem::take(&mut self.blocks);
        for item in items {
            self.visit_item(item);
        }
        self.module = outer;
        self.blocks = blocks;
    }

    fn visit_item_use(&mut self, used: &'ast syn::ItemUse) {
        if !matches!(used.vis, syn::Visibility::Inherited) {
            return; // a re-export: each use of it is drawn to the item's owner
        }
        let line = used.use_token.span.start().line;
        for leaf in use_leaves(used) {
            let (UseLeaf::Name { path, .. } | UseLeaf::Glob(path)) = leaf;
            self.draw(&path, line);
        }
    }

    fn visit_block(&mut self, block: &'ast syn::Block) {
        self.visit_statements(&block.stmts);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.draw_path(path);
        syn::visit::visit_path(self, path);
    }

    fn visit_expr_path(&mut self, expression: &'ast syn::ExprPath) {
        self.visit_qualified(expression.qself.as_ref(), &expression.path);
    }

    fn visit_type_path(&mut self, path: &'ast syn::TypePath) {
        self.visit_qualified(path.qself.as_ref(), &path.path);
    }

    fn visit_macro(&mut self, invocation: &'ast syn::Macro) {
        self.visit_path(&invocation.path);
        self.visit_macro_body(&invocation.tokens);
    }

    fn visit_item_macro(&mut self, item: &'ast syn::ItemMacro) {
        if item.ident.is_some() {
            // `macro_rules! name { (...) => { ... } }`: templates, not Rust.
            self.scan(item.mac.tokens.clone());
        } else {
            self.visit_macro(&item.mac);
        }
    }
}

/// The names a block's items declare (its `use` statements among them).
fn block_names(statements: &[syn::Stmt]) -> Names {
    let mut names = Names::default();
    for statement in statements {
        if let syn::Stmt::Item(item) = statement {
            declare(&mut names, item);
        }
    }
    names
}

/// The path that starts at `trees[at]`, its line and the index after it:
/// `name (:: name)*`, where `$crate` is `crate`; `$x` is a macro's
/// variable, not a path.
fn path_at(trees: &[TokenTree], at: usize) -> Option<(WrittenPath, usize, usize)> {
    let mut segments = Vec::new();
    let mut line = 0;
    let mut next = at;
    loop {
        match trees.get(next) {
            Some(TokenTree::Ident(ident)) => {
                if segments.is_empty() {
                    line = ident.span().start().line;
                }
                segments.push(ident.to_string());
                next += 1;
            }
            Some(TokenTree::Punct(dollar)) if dollar.as_char() == '$' => {
                match trees.get(next + 1) {
                    Some(TokenTree::Ident(ident)) if ident == "crate" => {
                        if segments.is_empty() {
                            line = ident.span().start().line;
                        }
                        segments.push("$crate".to_string());
                        next += 2;
                    }
                    _ => break,
                }
            }
            _ => break,
        }
        if !colon2(trees, next) {
            break;
        }
        next += 2;
    }
    if segments.is_empty() {
        return None;
    }
    Some((
        WrittenPath {
            global: false,
            segments,
        },
        line,
        next,
    ))
}

fn punct(tree: &TokenTree) -> Option<char> {
    match tree {
        TokenTree::Punct(punct) => Some(punct.as_char()),
        _ => None,
    }
}

/// Whether `trees[at..]` starts with `::`.
fn colon2(trees: &[TokenTree], at: usize) -> bool {
    matches!(
        (trees.get(at), trees.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && b.as_char() == ':' && a.spacing() == proc_macro2::Spacing::Joint
    )
}
