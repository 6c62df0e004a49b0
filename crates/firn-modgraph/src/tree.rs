//! The module tree of one crate, read from its sources: every module (a
//! file, or an inline `mod x { }`), what each declares (items, child
//! modules, the names its `use` statements bring in) and the parsed file
//! the visitor of `uses.rs` walks next.
//!
//! Files are found as rustc finds them: `mod x;` in `lib.rs`, `main.rs` or
//! a `mod.rs` is `x.rs` or `x/mod.rs` beside it, in `a.rs` it is under
//! `a/`, in an inline `mod m { }` one directory deeper, and `#[path]`
//! names the file relative to the declaring file's directory. Every `cfg`
//! is taken as true, so test modules and both halves of a `cfg`/`not(cfg)`
//! pair are read.
//!
//! A node of the graph is a file: an inline module (a `#[cfg(test)] mod
//! tests { }` above all) belongs to the file it is written in, so a test
//! that imports from above is a dependency of the code beside it; a test
//! module in a file of its own is a node of its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Index of a module in [`Tree::modules`]; the crate root is 0.
pub type ModuleId = usize;

/// The crate root's id.
pub const ROOT: ModuleId = 0;

/// A path as written: its segments, and whether it began with `::` (an
/// extern crate in edition 2018 and later, never a module of this crate).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenPath {
    pub global: bool,
    pub segments: Vec<String>,
}

/// What a name declared in a module stands for.
#[derive(Clone, Debug)]
pub enum Binding {
    /// A child module.
    Module(ModuleId),
    /// An item defined here: a function, type, trait, const, static, macro.
    Item,
    /// A name a `use` brings in, to be resolved from the declaring module.
    Import(WrittenPath),
}

/// The names one scope declares: a module's, or a block's (`fn` bodies may
/// hold `use` statements and items of their own).
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// Name → what it stands for; a name may be bound twice (a type and a
    /// function, or two `cfg` alternatives).
    pub names: BTreeMap<String, Vec<Binding>>,
    /// The paths of `use path::*`.
    pub globs: Vec<WrittenPath>,
    /// Each enum's variants, for `use Enum::*`.
    pub enums: BTreeMap<String, Vec<String>>,
}

#[derive(Debug)]
pub struct Module {
    /// Segments from the crate root (empty for the root).
    pub path: Vec<String>,
    /// The file it is written in.
    pub file: PathBuf,
    pub parent: Option<ModuleId>,
    /// The node it belongs to: the file module it is written in.
    pub node: ModuleId,
    /// Where the files of its `mod x;` declarations are.
    child_dir: PathBuf,
    pub scope: Names,
}

impl Module {
    /// `crate::a::b`, or `crate` for the root.
    pub fn name(&self) -> String {
        if self.path.is_empty() {
            "crate".to_string()
        } else {
            self.path.join("::")
        }
    }
}

/// One parsed file and the module it is the body of.
pub struct SourceFile {
    pub module: ModuleId,
    pub path: PathBuf,
    pub ast: syn::File,
}

/// What went wrong reading a crate.
#[derive(Debug)]
pub enum LoadError {
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    Parse {
        path: PathBuf,
        error: syn::Error,
    },
    NoFile {
        module: String,
        tried: Vec<PathBuf>,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Read { path, error } => write!(f, "{}: {error}", path.display()),
            LoadError::Parse { path, error } => {
                let at = error.span().start();
                write!(
                    f,
                    "{}:{}:{}: {error}",
                    path.display(),
                    at.line,
                    at.column + 1
                )
            }
            LoadError::NoFile { module, tried } => {
                let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
                write!(f, "module {module}: no file (tried {})", tried.join(", "))
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// Reads a file's text; the tests give sources from memory.
pub type ReadSource<'a> = &'a dyn Fn(&Path) -> std::io::Result<String>;

pub struct Tree {
    pub modules: Vec<Module>,
    pub files: Vec<SourceFile>,
    /// The inline module declared at (file, line, column) of its name, for
    /// the visitor to enter the module the tree made of it.
    inline: BTreeMap<(PathBuf, usize, usize), ModuleId>,
}

impl Tree {
    /// Reads the crate whose root file is `root` (`src/lib.rs`).
    pub fn load(root: &Path, read: ReadSource<'_>) -> Result<Tree, LoadError> {
        let mut tree = Tree {
            modules: Vec::new(),
            files: Vec::new(),
            inline: BTreeMap::new(),
        };
        tree.add_file_module(Vec::new(), root.to_path_buf(), None, true, read)?;
        Ok(tree)
    }

    /// The inline module whose `mod` names it at `ident`'s place in `file`.
    pub fn inline_module(&self, file: &Path, ident: &syn::Ident) -> Option<ModuleId> {
        let at = ident.span().start();
        self.inline
            .get(&(file.to_path_buf(), at.line, at.column))
            .copied()
    }

    /// Every node (file module) id, in the order the files were read.
    pub fn nodes(&self) -> impl Iterator<Item = ModuleId> + '_ {
        self.modules
            .iter()
            .enumerate()
            .filter(|(id, m)| m.node == *id)
            .map(|(id, _)| id)
    }

    fn add_file_module(
        &mut self,
        path: Vec<String>,
        file: PathBuf,
        parent: Option<ModuleId>,
        owns_dir: bool,
        read: ReadSource<'_>,
    ) -> Result<ModuleId, LoadError> {
        let source = read(&file).map_err(|error| LoadError::Read {
            path: file.clone(),
            error,
        })?;
        let ast = syn::parse_file(&source).map_err(|error| LoadError::Parse {
            path: file.clone(),
            error,
        })?;
        let id = self.modules.len();
        self.modules.push(Module {
            path,
            child_dir: if owns_dir {
                parent_dir(&file)
            } else {
                child_dir_of(&file)
            },
            file: file.clone(),
            parent,
            node: id,
            scope: Names::default(),
        });
        self.collect(id, &ast.items, read)?;
        self.files.push(SourceFile {
            module: id,
            path: file,
            ast,
        });
        Ok(id)
    }

    /// Records what `items` declare in module `id`, reading the files of
    /// its child modules on the way.
    fn collect(
        &mut self,
        id: ModuleId,
        items: &[syn::Item],
        read: ReadSource<'_>,
    ) -> Result<(), LoadError> {
        for item in items {
            if let syn::Item::Mod(declared) = item {
                let child = self.add_child(id, declared, read)?;
                bind(
                    &mut self.modules[id].scope,
                    &declared.ident.to_string(),
                    Binding::Module(child),
                );
            } else {
                declare(&mut self.modules[id].scope, item);
            }
        }
        Ok(())
    }

    fn add_child(
        &mut self,
        id: ModuleId,
        declared: &syn::ItemMod,
        read: ReadSource<'_>,
    ) -> Result<ModuleId, LoadError> {
        let name = declared.ident.to_string();
        let parent = &self.modules[id];
        let mut path = parent.path.clone();
        path.push(name.clone());
        let Some((_, items)) = &declared.content else {
            let explicit = path_attribute(&declared.attrs);
            let tried = match &explicit {
                Some(explicit) => vec![parent_dir(&parent.file).join(explicit)],
                None => vec![
                    parent.child_dir.join(format!("{name}.rs")),
                    parent.child_dir.join(&name).join("mod.rs"),
                ],
            };
            let Some(file) = tried
                .iter()
                .find(|candidate| read(candidate).is_ok())
                .cloned()
            else {
                return Err(LoadError::NoFile {
                    module: path.join("::"),
                    tried,
                });
            };
            // A file named by `#[path]` owns its directory, as `mod.rs` does.
            return self.add_file_module(path, file, Some(id), explicit.is_some(), read);
        };
        let child = self.modules.len();
        let at = declared.ident.span().start();
        self.inline
            .insert((parent.file.clone(), at.line, at.column), child);
        self.modules.push(Module {
            path,
            file: parent.file.clone(),
            child_dir: parent.child_dir.join(&name),
            parent: Some(id),
            node: parent.node,
            scope: Names::default(),
        });
        self.collect(child, items, read)?;
        Ok(child)
    }
}

/// Records in `scope` the names `item` declares (a `mod` is the caller's:
/// only a module has child modules).
pub fn declare(scope: &mut Names, item: &syn::Item) {
    use syn::Item;
    let name = match item {
        Item::Use(used) => {
            for leaf in use_leaves(used) {
                match leaf {
                    UseLeaf::Name {
                        name: Some(name),
                        path,
                    } => bind(scope, &name, Binding::Import(path)),
                    UseLeaf::Name { name: None, .. } => {}
                    UseLeaf::Glob(path) => scope.globs.push(path),
                }
            }
            return;
        }
        Item::Enum(declared) => {
            let variants = declared
                .variants
                .iter()
                .map(|v| v.ident.to_string())
                .collect();
            scope.enums.insert(declared.ident.to_string(), variants);
            &declared.ident
        }
        Item::ForeignMod(block) => {
            for foreign in &block.items {
                let name = match foreign {
                    syn::ForeignItem::Fn(f) => &f.sig.ident,
                    syn::ForeignItem::Static(s) => &s.ident,
                    syn::ForeignItem::Type(t) => &t.ident,
                    _ => continue,
                };
                bind(scope, &name.to_string(), Binding::Item);
            }
            return;
        }
        Item::Const(c) => &c.ident,
        Item::Fn(f) => &f.sig.ident,
        Item::Macro(m) => match &m.ident {
            Some(ident) => ident,
            None => return,
        },
        Item::Static(s) => &s.ident,
        Item::Struct(s) => &s.ident,
        Item::Trait(t) => &t.ident,
        Item::TraitAlias(t) => &t.ident,
        Item::Type(t) => &t.ident,
        Item::Union(u) => &u.ident,
        _ => return,
    };
    bind(scope, &name.to_string(), Binding::Item);
}

fn bind(scope: &mut Names, name: &str, binding: Binding) {
    scope
        .names
        .entry(name.to_string())
        .or_default()
        .push(binding);
}

/// One name (or glob) a `use` item brings in.
#[derive(Debug, PartialEq, Eq)]
pub enum UseLeaf {
    /// `use a::b`, `use a::b as c`, `use a::{self}`; `name` is `None` for
    /// `as _`, which binds nothing but still names the item.
    Name {
        name: Option<String>,
        path: WrittenPath,
    },
    /// `use a::*`: the path of `a`.
    Glob(WrittenPath),
}

/// Every leaf of a `use` tree, with its whole path.
pub fn use_leaves(used: &syn::ItemUse) -> Vec<UseLeaf> {
    let mut leaves = Vec::new();
    let mut prefix = Vec::new();
    flatten(
        &used.tree,
        used.leading_colon.is_some(),
        &mut prefix,
        &mut leaves,
    );
    leaves
}

fn flatten(tree: &syn::UseTree, global: bool, prefix: &mut Vec<String>, out: &mut Vec<UseLeaf>) {
    let path = |prefix: &[String], last: Option<&syn::Ident>| {
        let mut segments = prefix.to_vec();
        segments.extend(last.map(|ident| ident.to_string()));
        WrittenPath { global, segments }
    };
    match tree {
        syn::UseTree::Path(step) => {
            prefix.push(step.ident.to_string());
            flatten(&step.tree, global, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(leaf) if leaf.ident == "self" => out.push(UseLeaf::Name {
            name: prefix.last().cloned(),
            path: path(prefix, None),
        }),
        syn::UseTree::Name(leaf) => out.push(UseLeaf::Name {
            name: Some(leaf.ident.to_string()),
            path: path(prefix, Some(&leaf.ident)),
        }),
        syn::UseTree::Rename(leaf) => {
            let last = (leaf.ident != "self").then_some(&leaf.ident);
            let name = (leaf.rename != "_").then(|| leaf.rename.to_string());
            out.push(UseLeaf::Name {
                name,
                path: path(prefix, last),
            })
        }
        syn::UseTree::Glob(_) => out.push(UseLeaf::Glob(path(prefix, None))),
        syn::UseTree::Group(group) => {
            for item in &group.items {
                flatten(item, global, prefix, out);
            }
        }
    }
}

/// The file a `#[path = "..."]` names.
fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs
        .iter()
        .find(|attr| attr.path().is_ident("path"))
        .and_then(|attr| match &attr.meta {
            syn::Meta::NameValue(syn::MetaNameValue {
                value:
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(file),
                        ..
                    }),
                ..
            }) => Some(file.value()),
            _ => None,
        })
}

fn parent_dir(file: &Path) -> PathBuf {
    file.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `mod.rs` (and `lib.rs`, `main.rs`) owns its directory; `a.rs` owns `a/`.
fn child_dir_of(file: &Path) -> PathBuf {
    let dir = parent_dir(file);
    match file.file_stem().and_then(|stem| stem.to_str()) {
        Some("lib" | "main" | "mod") | None => dir,
        Some(stem) => dir.join(stem),
    }
}
