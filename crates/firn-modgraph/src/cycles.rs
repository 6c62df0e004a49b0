//! The cycles of a graph: its strongly connected components of more than
//! one node (Tarjan's algorithm), and in each the shortest way round, so
//! that a report can show the few edges to cut.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::tree::ModuleId;
use crate::uses::Graph;

/// Every strongly connected component of more than one node, each sorted,
/// in the order of their smallest node.
pub fn components(graph: &Graph, nodes: &[ModuleId]) -> Vec<Vec<ModuleId>> {
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for &node in nodes {
        if !tarjan.index.contains_key(&node) {
            tarjan.visit(node);
        }
    }
    let mut found = tarjan.found;
    for component in &mut found {
        component.sort_unstable();
    }
    found.sort();
    found
}

struct Tarjan<'g> {
    graph: &'g Graph,
    index: BTreeMap<ModuleId, usize>,
    low: BTreeMap<ModuleId, usize>,
    stack: Vec<ModuleId>,
    found: Vec<Vec<ModuleId>>,
}

impl Tarjan<'_> {
    /// A module graph is a few hundred nodes deep at most: recursion is fine.
    fn visit(&mut self, node: ModuleId) {
        let order = self.index.len();
        self.index.insert(node, order);
        self.low.insert(node, order);
        self.stack.push(node);
        for next in self.graph.successors(node) {
            if !self.index.contains_key(&next) {
                self.visit(next);
                let low = self.low[&node].min(self.low[&next]);
                self.low.insert(node, low);
            } else if self.stack.contains(&next) {
                let low = self.low[&node].min(self.index[&next]);
                self.low.insert(node, low);
            }
        }
        if self.low[&node] == self.index[&node] {
            let mut component = Vec::new();
            while let Some(member) = self.stack.pop() {
                component.push(member);
                if member == node {
                    break;
                }
            }
            if component.len() > 1 {
                self.found.push(component);
            }
        }
    }
}

/// The shortest cycle through `start` inside `component`, as the nodes in
/// order (the edge back to `start` closes it).
pub fn shortest_cycle(graph: &Graph, component: &[ModuleId], start: ModuleId) -> Vec<ModuleId> {
    let inside: BTreeSet<ModuleId> = component.iter().copied().collect();
    let mut came_from: BTreeMap<ModuleId, ModuleId> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for next in graph.successors(node).filter(|next| inside.contains(next)) {
            if next == start {
                let mut cycle = vec![node];
                while let Some(&before) = came_from.get(cycle.last().unwrap()) {
                    cycle.push(before);
                }
                cycle.reverse();
                return cycle;
            }
            if let std::collections::btree_map::Entry::Vacant(entry) = came_from.entry(next) {
                entry.insert(node);
                queue.push_back(next);
            }
        }
    }
    vec![start]
}
