"""The package's data flows one way: nothing imports a layer above it, and no modules import each other in a circle.

Read from the source with ``ast`` (nothing is imported), so the test states the architecture of
``docs/architecture.md`` and fails on the commit that breaks it. Imports under ``TYPE_CHECKING`` are
for type hints only and do not count; imports inside functions count for the layering (a lower layer
may not even lazily reach up) but not for cycles (they run after both modules exist).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "accelplug"

#: Lowest first. A module may import its own layer and the layers below it.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "envvars", "devices", "precisions", "_nvml", "cuda_visible", "isolation", "hookspecs"),
    (
        "accelerator",
        "accelerators",
        "precision",
        "strategies",
        "loaders",
        "batches",
        "optimizers",
        "checkpoint_io",
        "seed",
        "builtin_plugin",
        "status",
        "registry",
    ),
    ("selection", "_request", "config", "module", "datamodule"),
    ("trainer", "fabric", "launch", "demo", "bench", "testing", "__init__", "pytorch"),
    ("cli", "__main__"),
]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__") or "__init__"


def _layer(module: str) -> int:
    top = module.split(".")[0]
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise AssertionError(f"module accelplug.{module} is in no layer of this test; add it to LAYERS")


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        if not (node.module or "").startswith("accelplug"):
            return []
        base = (node.module or "").removeprefix("accelplug").lstrip(".")
    else:
        parts = current.split(".") if current != "__init__" else []
        keep = len(parts) - node.level + (1 if is_package else 0)
        base = ".".join(parts[: max(keep, 0)] + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" if base else alias.name for alias in node.names]


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported accelplug module, at module level?) for every import outside TYPE_CHECKING blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    current, is_package = _module_name(path), path.name == "__init__.py"
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top_level: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for inner in child.orelse:
                    visit(inner, top_level)
                continue
            if isinstance(child, ast.ImportFrom):
                found.extend((name, top_level) for name in _resolve(current, is_package, child))
            elif isinstance(child, ast.Import):
                found.extend(
                    (a.name.removeprefix("accelplug").lstrip("."), top_level)
                    for a in child.names
                    if a.name.startswith("accelplug.")
                )
            inner_top = top_level and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, inner_top)

    visit(tree, True)
    return [(name, top) for name, top in found if name]


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _owner(name: str, sources: dict[str, Path]) -> str:
    """The module a dotted name lives in: ``trainer.callbacks.ModelCheckpoint`` -> ``trainer.callbacks``."""
    target = name
    while target and target not in sources:
        target = target.rpartition(".")[0]
    return target or "__init__"


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = []
    sources = _sources()
    for module, path in sources.items():
        for name, _top in _imports(path):
            imported = _owner(name, sources)
            if _layer(imported) > _layer(module):
                upward.append(f"accelplug.{module} imports accelplug.{imported}")
    assert not upward, "imports that reach up a layer:\n" + "\n".join(upward)


def test_no_import_cycle_between_modules() -> None:
    sources = _sources()
    graph: dict[str, set[str]] = {m: set() for m in sources}
    for module, path in sources.items():
        for name, top_level in _imports(path):
            target = _owner(name, sources)
            ancestor = target == "__init__" or module.startswith(f"{target}.")  # a package's own parts
            if top_level and target != module and not ancestor:
                graph[module].add(target)
    cycle = _find_cycle(graph)
    assert cycle is None, "modules importing each other at import time: " + " -> ".join(cycle or [])


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if state.get(nxt) is None:
                found = dfs(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if state.get(node) is None:
            found = dfs(node)
            if found:
                return found
    return None


@pytest.mark.parametrize("module", ["accelerator", "registry", "selection", "strategies.base", "precision.base"])
def test_layers_below_the_trainer_do_not_know_it(module: str) -> None:
    sources = _sources()
    reached = [n for n, _top in _imports(sources[module]) if _owner(n, sources).split(".")[0] in ("trainer", "cli")]
    assert not reached, f"accelplug.{module} imports {reached}"


def test_fabric_never_imports_the_trainer() -> None:
    """Lightning's wall between ``fabric`` and ``pytorch``: Fabric shares only what lies below the Trainer."""
    sources = _sources()
    reached = [
        f"accelplug.{module} imports accelplug.{_owner(name, sources)}"
        for module, path in sources.items()
        if module.split(".")[0] == "fabric"
        for name, _top in _imports(path)
        if _owner(name, sources).split(".")[0] in ("trainer", "cli")
    ]
    assert not reached, "\n".join(reached)
