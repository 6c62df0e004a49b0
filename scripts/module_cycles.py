#!/usr/bin/env python3
"""Import cycles between the modules of each workspace library.

Reads `cargo modules dependencies` (cargo-modules: its "uses" edges between
modules), leaves out the crate root (lib.rs only declares modules and
re-exports), and finds the strongly connected components of what is left.
A module in a cycle cannot be read, tested or moved on its own.

The modules that are still in a cycle are listed in
scripts/module_cycles.allowed, one `crate::path` per line. The check fails
when a module not listed is in a cycle (a cycle came back or grew), and
when a listed one no longer is (take it off the list: it only shrinks).

    scripts/module_cycles.py          # check every library of the workspace
    scripts/module_cycles.py --show   # print the cycles
"""

import argparse
import json
import os
import re
import subprocess
import sys

EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)" \[label="uses"')
HERE = os.path.dirname(os.path.abspath(__file__))
ALLOWED = os.path.join(HERE, "module_cycles.allowed")


def libraries():
    """Every workspace package with a library target, from cargo metadata."""
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--no-deps", "--format-version", "1"],
        cwd=os.path.dirname(HERE), check=True, capture_output=True, text=True,
    ).stdout)
    return sorted(
        package["name"] for package in meta["packages"]
        if any("lib" in target["kind"] for target in package["targets"])
    )


def edges_of(package):
    """The module-to-module "uses" edges of `package`'s library."""
    out = subprocess.run(
        ["cargo", "modules", "dependencies", "--lib", "-p", package,
         "--no-externs", "--no-sysroot", "--no-fns", "--no-types", "--no-traits", "--no-owns"],
        cwd=os.path.dirname(HERE), check=True, capture_output=True, text=True,
    ).stdout
    root = package.replace("-", "_")
    edges = {}
    for line in out.splitlines():
        found = EDGE.match(line)
        if not found:
            continue
        source, target = found.groups()
        if root in (source, target) or source == target:
            continue
        edges.setdefault(source, set()).add(target)
        edges.setdefault(target, set())
    return edges


def cycles(edges):
    """Strongly connected components of more than one module (Tarjan's)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--show", action="store_true", help="print every cycle and its edges")
    options = parser.parse_args()
    allowed = set()
    if os.path.exists(ALLOWED):
        with open(ALLOWED) as listed:
            allowed = {line.strip() for line in listed if line.strip() and not line.startswith("#")}
    in_cycles = set()
    for package in libraries():
        edges = edges_of(package)
        for component in cycles(edges):
            in_cycles.update(component)
            if options.show:
                print("%s: a cycle of %d modules" % (package, len(component)))
                members = set(component)
                for module in component:
                    inside = sorted(members & edges[module])
                    print("  %s -> %s" % (module, ", ".join(inside)))
    new = sorted(in_cycles - allowed)
    gone = sorted(allowed - in_cycles)
    for module in new:
        print("module in an import cycle (not in %s): %s" % (os.path.basename(ALLOWED), module))
    for module in gone:
        print("no longer in a cycle, take it off %s: %s" % (os.path.basename(ALLOWED), module))
    if new or gone:
        return 1
    print("module cycles: %d modules still listed, no new cycle" % len(in_cycles))
    return 0


if __name__ == "__main__":
    sys.exit(main())
