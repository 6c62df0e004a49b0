//! One crate's check: its graph, its cycles, the edges that go up its
//! layers and the modules no layer places, and the report that says which
//! rule each breaks and where.

use std::fmt;
use std::path::Path;

use crate::cycles::{components, shortest_cycle};
use crate::rules::Layers;
use crate::tree::{LoadError, ModuleId, ReadSource, Tree};
use crate::uses::{graph, Evidence, Graph};

/// The one rule every crate keeps, layers or not.
pub const NO_CYCLE: &str = "no module may join an import cycle";

/// An edge and what it breaks.
#[derive(Clone, Debug)]
pub struct Step {
    pub from: String,
    pub to: String,
    /// The first place `from` uses `to`.
    pub evidence: Evidence,
    /// The layer rule the edge breaks, if any.
    pub broken: Option<String>,
}

#[derive(Debug)]
pub struct Cycle {
    /// Every module of the strongly connected component, by name.
    pub members: Vec<String>,
    /// The shortest way round from its first member.
    pub way_round: Vec<Step>,
}

#[derive(Debug)]
pub struct Report {
    pub crate_name: String,
    pub modules: usize,
    pub edges: usize,
    pub cycles: Vec<Cycle>,
    /// Edges up the layers, inside cycles or not.
    pub upward: Vec<Step>,
    /// Modules no layer places (only in a crate with layers).
    pub unplaced: Vec<String>,
    /// Patterns of the rules that match no module (a file renamed or gone).
    pub stale: Vec<String>,
    /// Every edge, for `--graph`.
    pub all_edges: Vec<Step>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.cycles.is_empty()
            && self.upward.is_empty()
            && self.unplaced.is_empty()
            && self.stale.is_empty()
    }
}

/// Checks the crate `crate_name` whose root file is `root`.
pub fn check(
    crate_name: &str,
    root: &Path,
    layers: Option<&Layers>,
    read: ReadSource<'_>,
) -> Result<Report, LoadError> {
    let tree = Tree::load(root, read)?;
    let graph = graph(&tree);
    let nodes: Vec<ModuleId> = tree.nodes().collect();
    let name = |id: ModuleId| tree.modules[id].name();
    let layer_of = |id: ModuleId| layers.and_then(|layers| layers.layer_of(&name(id)));
    let step = |from: ModuleId, to: ModuleId| {
        let broken = match (layers, layer_of(from), layer_of(to)) {
            (Some(layers), Some(low), Some(high)) if high > low => Some(format!(
                "{}, and {} is in `{}`",
                layers.rule(low),
                name(to),
                layers.layers[high].name
            )),
            _ => None,
        };
        let evidence = graph.evidence(from, to)[0].clone();
        Step {
            from: name(from),
            to: name(to),
            evidence,
            broken,
        }
    };
    let cycles = components(&graph, &nodes)
        .into_iter()
        .map(|component| {
            let way = shortest_cycle(&graph, &component, component[0]);
            let way_round = (0..way.len())
                .map(|i| step(way[i], way[(i + 1) % way.len()]))
                .collect();
            Cycle {
                members: component.iter().map(|&id| name(id)).collect(),
                way_round,
            }
        })
        .collect();
    let all_edges: Vec<Step> = edges(&graph).map(|(from, to)| step(from, to)).collect();
    let upward = all_edges
        .iter()
        .filter(|s| s.broken.is_some())
        .cloned()
        .collect();
    let unplaced = match layers {
        Some(_) => nodes
            .iter()
            .filter(|&&id| layer_of(id).is_none())
            .map(|&id| name(id))
            .collect(),
        None => Vec::new(),
    };
    let names: Vec<String> = nodes.iter().map(|&id| name(id)).collect();
    let stale = layers.map_or_else(Vec::new, |layers| layers.stale_patterns(&names));
    Ok(Report {
        crate_name: crate_name.to_string(),
        modules: nodes.len(),
        edges: graph.edge_count(),
        cycles,
        upward,
        unplaced,
        stale,
        all_edges,
    })
}

fn edges(graph: &Graph) -> impl Iterator<Item = (ModuleId, ModuleId)> + '_ {
    graph
        .edges
        .iter()
        .flat_map(|(&from, targets)| targets.keys().map(move |&to| (from, to)))
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Evidence { file, line, path } = &self.evidence;
        write!(
            f,
            "{} -> {}    ({}:{line}: {path})",
            self.from,
            self.to,
            file.display()
        )?;
        if let Some(rule) = &self.broken {
            write!(f, "\n        breaks: {rule}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.passed() {
            return write!(
                f,
                "{}: {} modules, {} edges, no cycle, no layer broken",
                self.crate_name, self.modules, self.edges
            );
        }
        let counts = [
            (self.cycles.len(), "cycle", "cycles"),
            (
                self.upward.len(),
                "edge up the layers",
                "edges up the layers",
            ),
            (
                self.unplaced.len(),
                "module in no layer",
                "modules in no layer",
            ),
            (
                self.stale.len(),
                "pattern matching no module",
                "patterns matching no module",
            ),
        ];
        let found: Vec<String> = counts
            .iter()
            .filter(|(count, ..)| *count > 0)
            .map(|&(count, one, many)| format!("{count} {}", if count == 1 { one } else { many }))
            .collect();
        writeln!(f, "{}: {}", self.crate_name, found.join(", "))?;
        for cycle in &self.cycles {
            writeln!(
                f,
                "  cycle of {} modules: {}",
                cycle.members.len(),
                cycle.members.join(", ")
            )?;
            writeln!(f, "    breaks: {NO_CYCLE}; the shortest way round:")?;
            for step in &cycle.way_round {
                writeln!(f, "      {step}")?;
            }
        }
        for step in &self.upward {
            writeln!(f, "  up the layers: {step}")?;
        }
        for module in &self.unplaced {
            writeln!(f, "  in no layer: {module} (give it one in the rules)")?;
        }
        for pattern in &self.stale {
            writeln!(f, "  in the rules but no module: {pattern}")?;
        }
        Ok(())
    }
}
