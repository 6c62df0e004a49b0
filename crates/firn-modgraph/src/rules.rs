//! The layer rules, read from the ```` ```layers ```` blocks of a Markdown
//! file (docs/architecture.md, "Dependency rules"), where people read them
//! too. A block lists, per crate, its layers lowest first:
//!
//! ```text
//! firn-example
//!   leaves     errors keys
//!   state      state
//!   commands   commands::*
//!              replies     (a deeper indent continues the layer above)
//! ```
//!
//! A module may use the modules of its own layer and of the layers listed
//! before it, never one listed after. A pattern is a module's path from the
//! crate root (`commands::client`, `crate` for the root itself) or a
//! subtree (`commands::*`: `commands` and every module under it); the most
//! specific pattern that matches a module places it. In a crate that has
//! layers every module must be placed, so a new file is given its layer
//! where the rules are written down.

use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Rules {
    /// Crate (package) name → its layers.
    pub crates: BTreeMap<String, Layers>,
}

#[derive(Debug, Default)]
pub struct Layers {
    /// Lowest first.
    pub layers: Vec<Layer>,
}

#[derive(Debug)]
pub struct Layer {
    pub name: String,
    pub patterns: Vec<String>,
}

impl Rules {
    /// The rules in every ```` ```layers ```` block of `markdown`.
    pub fn parse(markdown: &str) -> Result<Rules, String> {
        let mut rules = Rules::default();
        let mut in_block = false;
        let mut current: Option<String> = None;
        for (number, line) in markdown.lines().enumerate() {
            let number = number + 1;
            let trimmed = line.trim();
            if !in_block {
                in_block = trimmed == "```layers";
                continue;
            }
            if trimmed == "```" {
                in_block = false;
                current = None;
                continue;
            }
            if trimmed.is_empty() {
                continue;
            }
            let indent = line.len() - line.trim_start().len();
            let words: Vec<String> = trimmed.split_whitespace().map(str::to_string).collect();
            if indent == 0 {
                if words.len() != 1 {
                    return Err(format!("line {number}: a crate's name alone was expected"));
                }
                rules.crates.entry(words[0].clone()).or_default();
                current = Some(words[0].clone());
                continue;
            }
            let Some(crate_name) = &current else {
                return Err(format!("line {number}: a layer before any crate's name"));
            };
            let layers = &mut rules
                .crates
                .get_mut(crate_name)
                .expect("entered above")
                .layers;
            if indent == 2 {
                let (name, patterns) = words.split_first().expect("not empty");
                if layers.iter().any(|layer| &layer.name == name) {
                    return Err(format!(
                        "line {number}: layer `{name}` is listed twice in {crate_name}"
                    ));
                }
                layers.push(Layer {
                    name: name.clone(),
                    patterns: patterns.to_vec(),
                });
            } else {
                let Some(layer) = layers.last_mut() else {
                    return Err(format!("line {number}: a continuation before any layer"));
                };
                layer.patterns.extend(words);
            }
        }
        if in_block {
            return Err("a ```layers block is not closed".to_string());
        }
        Ok(rules)
    }
}

impl Layers {
    /// The layer of `module` (`a::b`, or `crate`): its most specific match.
    pub fn layer_of(&self, module: &str) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None;
        for (index, layer) in self.layers.iter().enumerate() {
            for pattern in &layer.patterns {
                let Some(strength) = strength(pattern, module) else {
                    continue;
                };
                if best.is_none_or(|(_, held)| strength > held) {
                    best = Some((index, strength));
                }
            }
        }
        best.map(|(index, _)| index)
    }

    /// The patterns that match none of `modules`, as `layer: pattern`.
    pub fn stale_patterns(&self, modules: &[String]) -> Vec<String> {
        let mut stale = Vec::new();
        for layer in &self.layers {
            for pattern in &layer.patterns {
                if !modules
                    .iter()
                    .any(|module| strength(pattern, module).is_some())
                {
                    stale.push(format!("{}: {pattern}", layer.name));
                }
            }
        }
        stale
    }

    /// The rule a module of `layer` keeps, in words.
    pub fn rule(&self, layer: usize) -> String {
        let name = &self.layers[layer].name;
        if layer == 0 {
            return format!("layer `{name}` (the lowest) may use only its own modules");
        }
        let below: Vec<String> = self.layers[..layer]
            .iter()
            .map(|l| format!("`{}`", l.name))
            .collect();
        format!(
            "layer `{name}` may use its own modules and those of {}",
            below.join(", ")
        )
    }
}

/// How specifically `pattern` matches `module`: an exact name beats any
/// subtree, a deeper subtree a shallower one; `None` when it does not.
fn strength(pattern: &str, module: &str) -> Option<usize> {
    if pattern == module {
        return Some(usize::MAX);
    }
    let subtree = pattern.strip_suffix("::*")?;
    let inside = module == subtree
        || module
            .strip_prefix(subtree)
            .is_some_and(|rest| rest.starts_with("::"));
    inside.then(|| subtree.split("::").count())
}
