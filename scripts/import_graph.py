"""accelplug's import graph, read from the source with ``ast`` (nothing is imported).

Every import counts: at module level, inside functions, and under ``if TYPE_CHECKING:``. A type-only
or function-level import is still a dependency a reader has to follow, and the one that closes a
circle is the one that turns into a partially initialised module the day someone moves it up.

    python scripts/import_graph.py            # figures: modules, edges by kind, cycles, largest group
    python scripts/import_graph.py --cycles   # also list every strongly connected group
    python scripts/import_graph.py --rooms    # also modules and lines per room (top-level package or module)

``tests/foundation/test_layering.py`` loads this file and asserts on the same graph, so the figures
this prints and what the test checks cannot drift apart.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "accelplug"

#: How an import is reached: at import time, when a function runs, or only by a type checker.
KINDS = ("module", "function", "type")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: str
    line: int
    #: True for a package ``__init__`` that importing the target runs first (not written in the source).
    implicit: bool = False


@dataclass
class Graph:
    """Modules by dotted name relative to ``accelplug`` (``"__init__"`` is the package itself)."""

    modules: dict[str, Path]
    edges: list[Edge] = field(default_factory=list)
    #: The package folder the modules were read from.
    root: Path = PACKAGE

    def targets(self, kinds: Iterable[str] = KINDS, *, implicit: bool = True) -> dict[str, set[str]]:
        """Module -> modules it imports (a module importing itself left out).

        Importing a name from one's own package (``from .. import Trainer``) counts: it reads the
        package's ``__init__``, which may still be running.
        """
        chosen = set(kinds)
        found: dict[str, set[str]] = {m: set() for m in self.modules}
        for edge in self.edges:
            if edge.kind not in chosen or (edge.implicit and not implicit):
                continue
            if edge.target != edge.source:
                found[edge.source].add(edge.target)
        return found

    def strongly_connected(self, kinds: Iterable[str] = KINDS, *, implicit: bool = True) -> list[list[str]]:
        """Groups of modules that reach each other (each a cycle or several), largest first."""
        return [g for g in _tarjan(self.targets(kinds, implicit=implicit)) if len(g) > 1]

    def package_targets(self) -> dict[str, set[str]]:
        """The same edges between packages: a module stands for its package, a top-level module for itself.

        An edge between a package and one of its own sub-packages is left out (``trainer/_stages.py``
        using ``trainer/loops/`` and ``trainer/loops/`` using ``trainer/state.py``): the order inside
        a package is checked by tiers instead.
        """
        found: dict[str, set[str]] = {}
        for source, targets in self.targets().items():
            unit = package_of(source, self.modules)
            found.setdefault(unit, set())
            for target in targets:
                other = package_of(target, self.modules)
                if other != unit and not is_ancestor(other, unit) and not is_ancestor(unit, other):
                    found[unit].add(other)
                    found.setdefault(other, set())
        return found


def is_ancestor(package: str, module: str) -> bool:
    """Whether ``package`` contains ``module`` (the root ``__init__`` contains everything)."""
    return package == "__init__" or module.startswith(f"{package}.")


def package_of(module: str, modules: dict[str, Path]) -> str:
    """The package a module belongs to; a top-level module (``registry``) is a unit of its own."""
    if modules.get(module, Path()).name == "__init__.py" or "." not in module:
        return module
    return module.rpartition(".")[0]


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__") or "__init__"


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        if (node.module or "") != "accelplug" and not (node.module or "").startswith("accelplug."):
            return []
        base = (node.module or "").removeprefix("accelplug").lstrip(".")
    else:
        parts = current.split(".") if current != "__init__" else []
        keep = len(parts) - node.level + (1 if is_package else 0)
        base = ".".join(parts[: max(keep, 0)] + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" if base else alias.name for alias in node.names]


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def imported_names(path: Path, root: Path = PACKAGE) -> list[tuple[str, str, int]]:
    """``(dotted name, kind, line)`` for every accelplug import in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    current, is_package = module_name(path, root), path.name == "__init__.py"
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for inner in child.body:
                    found.extend(_names(inner, "type"))
                    visit(inner, "type")
                for inner in child.orelse:
                    found.extend(_names(inner, kind))
                    visit(inner, kind)
                continue
            found.extend(_names(child, kind))
            inner_kind = "function" if kind == "module" and isinstance(child, _SCOPES) else kind
            visit(child, inner_kind)

    def _names(node: ast.AST, kind: str) -> list[tuple[str, str, int]]:
        if isinstance(node, ast.ImportFrom):
            return [(name, kind, node.lineno) for name in _resolve(current, is_package, node)]
        if isinstance(node, ast.Import):
            return [
                (a.name.removeprefix("accelplug").lstrip("."), kind, node.lineno)
                for a in node.names
                if a.name.startswith("accelplug.")
            ]
        return []

    visit(tree, "module")
    return [(name, kind, line) for name, kind, line in found if name]


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def owner(name: str, modules: dict[str, Path]) -> str:
    """The module a dotted name lives in: ``callbacks.ModelCheckpoint`` -> ``callbacks``."""
    target = name
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or "__init__"


def build(root: Path = PACKAGE) -> Graph:
    modules = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph = Graph(modules, root=root)
    for source, path in modules.items():
        for name, kind, line in imported_names(path, root):
            target = owner(name, modules)
            graph.edges.append(Edge(source, target, kind, line))
            # Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first: those count too.
            parts = target.split(".")
            for depth in range(1, len(parts)):
                package = ".".join(parts[:depth])
                if is_ancestor(package, source):
                    continue  # one's own package is already running: no new import happens
                if package in modules and modules[package].name == "__init__.py":
                    graph.edges.append(Edge(source, package, kind, line, implicit=True))
    return graph


def _tarjan(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (iterative, so a deep graph cannot hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop(0)
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(sorted(group))
    return sorted(groups, key=lambda g: (-len(g), g))


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def top_level_modules(graph: Graph) -> list[str]:
    """The files directly in the package folder (``registry.py``, ``__init__.py``...), by module name."""
    return sorted(m for m, p in graph.modules.items() if p.parent == graph.root)


def rooms(graph: Graph) -> dict[str, tuple[int, int, bool]]:
    """Room (a top-level package, or a top-level module) -> (modules, lines, whether it is a package)."""
    found: dict[str, tuple[int, int, bool]] = {}
    for module, path in graph.modules.items():
        room = module.split(".")[0]
        count, lines, _ = found.get(room, (0, 0, False))
        found[room] = (count + 1, lines + _lines(path), path.parent != graph.root)
    return dict(sorted(found.items()))


def summary(graph: Graph) -> dict[str, object]:
    written = [e for e in graph.edges if not e.implicit]
    by_kind = {kind: sum(1 for e in written if e.kind == kind) for kind in KINDS}
    pairs = {(s, t) for s, targets in graph.targets(implicit=False).items() for t in targets}
    groups = graph.strongly_connected(implicit=False)
    with_inits = graph.strongly_connected()
    package_groups = [g for g in _tarjan(graph.package_targets()) if len(g) > 1]
    lines = sum(_lines(p) for p in graph.modules.values())
    return {
        "modules": len(graph.modules),
        "lines": lines,
        "top-level modules (files directly in the package, __init__ included)": len(top_level_modules(graph)),
        "rooms (top-level packages)": sum(1 for _, (_, _, is_package) in rooms(graph).items() if is_package),
        "imported names (edges, every kind)": len(written),
        "  by kind (module-level, function-level, TYPE_CHECKING)": tuple(by_kind.values()),
        "distinct module pairs": len(pairs),
        "cycles (strongly connected groups)": len(groups),
        "  largest group, modules": len(groups[0]) if groups else 0,
        "cycles counting the package __init__ each import runs": len(with_inits),
        "  largest such group, modules": len(with_inits[0]) if with_inits else 0,
        "cycles between packages": len(package_groups),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", action="store_true", help="list every strongly connected group")
    parser.add_argument("--rooms", action="store_true", help="modules and lines per room")
    parser.add_argument("--root", type=Path, default=PACKAGE, help="the package folder (default: src/accelplug)")
    args = parser.parse_args(argv)
    graph = build(args.root)
    for key, value in summary(graph).items():
        print(f"{key}: {value}")
    if args.rooms:
        print("rooms (modules, lines):")
        for room, (count, lines, is_package) in rooms(graph).items():
            print(f"  {room + ('/' if is_package else '.py'):<24} {count:>4} {lines:>7}")
    if args.cycles:
        for group in graph.strongly_connected(implicit=False):
            print("module group:", " ".join(group))
        for group in graph.strongly_connected():
            print("module group with package __init__ runs:", " ".join(group))
        for group in _tarjan(graph.package_targets()):
            if len(group) > 1:
                print("package group:", " ".join(group))
    return 0


if __name__ == "__main__":
    sys.exit(main())
