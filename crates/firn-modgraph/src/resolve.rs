//! Name resolution, as far as it can go without types: a path is followed
//! segment by segment from where it is written (`crate`, `self`, `super`,
//! or a name in scope) through modules, `use` imports and their re-exports,
//! and globs, to the module that defines the item it names.
//!
//! A name is looked up in the blocks around the path (innermost first),
//! then in its module; in each scope the names declared explicitly come
//! before those of its globs, as in rustc. A name nothing declares is
//! outside the crate (an extern crate, the prelude, a primitive) or a local
//! variable, and draws no edge. Once a path reaches an item, the segments
//! after it (an enum's variant, an associated function or constant) belong
//! to that item's module. Visibility is not checked: the compiler has.

use crate::tree::{Binding, ModuleId, Names, Tree, WrittenPath, ROOT};

/// Where a path leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A module itself: a namespace, not a dependency; what is reached
    /// through it is.
    Module(ModuleId),
    /// An item, defined in `owner` (its name, for the variants of an enum).
    Item { owner: ModuleId, name: String },
    /// Another crate, the prelude, a local variable, or `Self`.
    Outside,
}

/// Where a path is written: its module and the blocks around it.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub module: ModuleId,
    pub blocks: &'a [Names],
}

impl<'a> Scope<'a> {
    pub fn module(module: ModuleId) -> Scope<'static> {
        Scope {
            module,
            blocks: &[],
        }
    }
}

/// Imports can name each other in a loop only in code rustc refuses, but
/// a glob of a parent that globs its child is legal; the lookups in
/// progress stop that, and this bound stops anything else.
const MAX_DEPTH: usize = 64;

/// The module lookups in progress, and how deep the imports go.
#[derive(Default)]
struct Busy {
    lookups: Vec<(ModuleId, String)>,
    depth: usize,
}

pub struct Resolver<'t> {
    tree: &'t Tree,
}

impl<'t> Resolver<'t> {
    pub fn new(tree: &'t Tree) -> Resolver<'t> {
        Resolver { tree }
    }

    /// Every target `path`, written in `scope`, may lead to (a name can be
    /// bound twice, by `cfg` alternatives or as a type and a function).
    pub fn resolve(&self, scope: Scope<'_>, path: &WrittenPath) -> Vec<Target> {
        self.resolve_from(scope, path, &mut Busy::default())
    }

    fn resolve_from(&self, scope: Scope<'_>, path: &WrittenPath, busy: &mut Busy) -> Vec<Target> {
        if path.global || path.segments.is_empty() || busy.depth > MAX_DEPTH {
            return vec![Target::Outside];
        }
        busy.depth += 1;
        let targets = self.follow(scope, path, busy);
        busy.depth -= 1;
        targets
    }

    fn follow(&self, scope: Scope<'_>, path: &WrittenPath, busy: &mut Busy) -> Vec<Target> {
        let first = path.segments[0].as_str();
        let mut targets = match first {
            "crate" | "$crate" => vec![Target::Module(ROOT)],
            "self" => vec![Target::Module(scope.module)],
            "super" => self.parent(scope.module),
            "Self" => vec![Target::Outside],
            name => {
                let found = self.lookup_scoped(scope, name, busy);
                if found.is_empty() {
                    vec![Target::Outside]
                } else {
                    found
                }
            }
        };
        for segment in &path.segments[1..] {
            let Some(module) = targets.iter().find_map(|target| match target {
                Target::Module(module) => Some(*module),
                _ => None,
            }) else {
                // An item's variant or associated name, or outside the crate.
                return targets;
            };
            targets = match segment.as_str() {
                "super" => self.parent(module),
                "self" => vec![Target::Module(module)],
                name => {
                    let found = self.lookup(module, name, busy);
                    if found.is_empty() {
                        // Nothing here declares it (a macro's output, say): it
                        // is still something of this module's.
                        vec![Target::Item {
                            owner: module,
                            name: name.to_string(),
                        }]
                    } else {
                        found
                    }
                }
            };
        }
        targets
    }

    fn parent(&self, module: ModuleId) -> Vec<Target> {
        match self.tree.modules[module].parent {
            Some(parent) => vec![Target::Module(parent)],
            None => vec![Target::Outside],
        }
    }

    /// `name` in the blocks of `scope`, innermost first, then its module.
    fn lookup_scoped(&self, scope: Scope<'_>, name: &str, busy: &mut Busy) -> Vec<Target> {
        for depth in (0..scope.blocks.len()).rev() {
            let inner = Scope {
                module: scope.module,
                blocks: &scope.blocks[..=depth],
            };
            let found = self.lookup_in(inner, &scope.blocks[depth], name, busy);
            if !found.is_empty() {
                return found;
            }
        }
        self.lookup(scope.module, name, busy)
    }

    /// `name` as module `module` declares it.
    fn lookup(&self, module: ModuleId, name: &str, busy: &mut Busy) -> Vec<Target> {
        let key = (module, name.to_string());
        if busy.lookups.contains(&key) {
            return Vec::new();
        }
        busy.lookups.push(key);
        let found = self.lookup_in(
            Scope::module(module),
            &self.tree.modules[module].scope,
            name,
            busy,
        );
        busy.lookups.pop();
        found
    }

    /// `name` in `names`, the names of `scope`'s innermost block (or of its
    /// module when it has no blocks): explicit names first, then globs.
    fn lookup_in(
        &self,
        scope: Scope<'_>,
        names: &Names,
        name: &str,
        busy: &mut Busy,
    ) -> Vec<Target> {
        if let Some(bindings) = names.names.get(name) {
            return bindings
                .iter()
                .flat_map(|binding| match binding {
                    Binding::Module(child) => vec![Target::Module(*child)],
                    Binding::Item => vec![Target::Item {
                        owner: scope.module,
                        name: name.to_string(),
                    }],
                    Binding::Import(path) => self.resolve_from(scope, path, busy),
                })
                .collect();
        }
        for glob in &names.globs {
            for target in self.resolve_from(scope, glob, busy) {
                let found = match &target {
                    Target::Module(module) => self.lookup(*module, name, busy),
                    Target::Item {
                        owner,
                        name: enum_name,
                    } => {
                        let variants = self.tree.modules[*owner].scope.enums.get(enum_name);
                        if variants.is_some_and(|variants| variants.iter().any(|v| v == name)) {
                            vec![target.clone()]
                        } else {
                            Vec::new()
                        }
                    }
                    Target::Outside => Vec::new(),
                };
                if !found.is_empty() {
                    return found;
                }
            }
        }
        Vec::new()
    }
}
