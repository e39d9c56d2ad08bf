"""Imports flow one way: no cycle of any kind, nothing imports a layer above its own, and inside the Trainer
the tiers are kept too.

Read from the source with ``ast`` by ``scripts/import_graph.py`` (nothing is imported), counting every
import: at module level, inside functions and under ``TYPE_CHECKING``, and the package ``__init__`` each
import runs first. A type-only or lazy import is still a dependency a reader follows, and the one that
closes a circle becomes a partially initialised module the day it moves to the top. The script prints
the same graph's figures, so what ``docs/architecture.md`` reports and what this test checks are one.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load_graph_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", REPO / "scripts" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("import_graph", module)
    spec.loader.exec_module(module)
    return module


graphs = _load_graph_script()

#: Lowest first. A module may import its own layer and the layers below it (by top-level name).
LAYERS: list[tuple[str, ...]] = [
    # torch-free basics
    ("errors", "envvars", "devices", "_nvml", "cuda_visible", "isolation", "overrides", "torch_backends"),
    # hardware, precisions, strategies, the plugin spine, data handling, the shared preparation path
    (
        "accelerator",
        "accelerators",
        "device_capabilities",
        "device_runtime",
        "environments",
        "precision",
        "precision_names",
        "strategies",
        "optimizers",
        "data",
        "profilers",
        "preparation",
        "hookspecs",
        "checkpoint_io",
        "checkpoint_plugins",
        "seed",
        "builtin_plugin",
        "status",
        "registry",
    ),
    # what a user's script subclasses or passes in, and the selection rules
    (
        "module",
        "module_hooks",
        "module_steps",
        "module_saving",
        "datamodule",
        "datamodule_datasets",
        "callbacks",
        "loggers",
        "selection",
        "config",
        "plugins",
    ),
    # the Trainer and what sits beside it
    (
        "trainer",
        "tuner",
        "fabric",
        "launcher",
        "demo",
        "bench",
        "testing",
        "utilities",
        "lightning_cli",
        "demos",
        "__init__",
    ),
    ("cli", "__main__", "pytorch", "interop"),
]

#: Inside ``trainer/``, lowest first: a module may import its own tier and the tiers below it. Patterns
#: ending in ``.*`` cover a sub-package's modules.
TIERS: list[tuple[str, ...]] = [
    # T0: what the run is made of, none of which knows a run (display.defaults: the callbacks a Trainer adds)
    (
        "trainer.state",
        "trainer.dispatch.*",
        "trainer.options.*",
        "trainer.logging.*",
        "trainer.display.progress",
        "trainer.display.defaults",
        "trainer.checkpointing.format",
        "trainer.checkpointing.lightning_loops",
        "trainer.process.*",
    ),
    # T1: the record of one call
    ("trainer.run",),
    # T2: what works on a run: setting it up, the loops, checkpoint contents, the summary
    (
        "trainer.setup",
        "trainer.loops.*",
        "trainer.checkpointing.contents",
        "trainer.checkpointing.auto_resume",
        "trainer.checkpointing.saving",
        "trainer.display.summary",
    ),
    # T3: the stages and the Trainer itself (and the paths kept for one release)
    (
        "trainer.stages",
        "trainer.trainer",
        "trainer.properties",
        "trainer.views",
        "trainer.tuning",
        "trainer.callbacks",
        "trainer.loggers",
    ),
]


@pytest.fixture(scope="module")
def graph() -> object:
    return graphs.build()


def _where(graph: object, source: str, target: str) -> str:
    edges = [e for e in graph.edges if e.source == source and e.target == target]  # type: ignore[attr-defined]
    found = dict.fromkeys(f"line {e.line} ({e.kind}{', implied' if e.implicit else ''})" for e in edges)
    return ", ".join(found)


def _layer(module: str) -> int:
    top = module.split(".")[0]
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise AssertionError(f"module accelplug.{module} is in no layer of this test; add it to LAYERS")


def _tier(module: str) -> int | None:
    """The tier of a module of ``trainer/`` (None for the sub-packages' ``__init__``, which import nothing)."""
    for index, patterns in enumerate(TIERS):
        for pattern in patterns:
            if module == pattern or (pattern.endswith(".*") and module.startswith(pattern[:-1])):
                return index
    return None


def test_no_import_cycle_of_any_kind(graph: object) -> None:
    groups = graph.strongly_connected()  # type: ignore[attr-defined]
    shown = []
    for group in groups:
        members = set(group)
        edges = [
            f"  accelplug.{s} -> accelplug.{t}: {_where(graph, s, t)}"
            for s, targets in graph.targets().items()  # type: ignore[attr-defined]
            if s in members
            for t in sorted(targets)
            if t in members
        ]
        shown.append(" ".join(group) + "\n" + "\n".join(edges))
    assert not groups, "modules that reach each other through imports:\n" + "\n".join(shown)


def test_no_import_cycle_between_packages(graph: object) -> None:
    groups = [g for g in graphs._tarjan(graph.package_targets()) if len(g) > 1]  # type: ignore[attr-defined]
    assert not groups, f"packages that import each other: {groups}"


def test_no_module_imports_a_layer_above_its_own(graph: object) -> None:
    upward = [
        f"accelplug.{source} imports accelplug.{target} ({_where(graph, source, target)})"
        for source, targets in graph.targets().items()  # type: ignore[attr-defined]
        for target in sorted(targets)
        if target != "__init__" and _layer(target) > _layer(source)
    ]
    assert not upward, "imports that reach up a layer:\n" + "\n".join(upward)


def test_nothing_below_the_trainer_imports_it(graph: object) -> None:
    trainer_layer = _layer("trainer")
    reached = [
        f"accelplug.{source} imports accelplug.{target} ({_where(graph, source, target)})"
        for source, targets in graph.targets().items()  # type: ignore[attr-defined]
        if _layer(source) < trainer_layer or source.split(".")[0] == "launcher"
        for target in sorted(targets)
        if target.split(".")[0] == "trainer"
    ]
    assert not reached, "below the Trainer, yet importing it:\n" + "\n".join(reached)


def test_every_trainer_module_has_a_tier(graph: object) -> None:
    missing = [
        m
        for m, path in graph.modules.items()  # type: ignore[attr-defined]
        if m.split(".")[0] == "trainer" and path.name != "__init__.py" and _tier(m) is None
    ]
    assert not missing, f"modules of trainer/ in no tier of this test (add them to TIERS): {missing}"


def test_inside_the_trainer_no_module_imports_a_higher_tier(graph: object) -> None:
    upward = []
    for source, targets in graph.targets().items():  # type: ignore[attr-defined]
        mine = _tier(source)
        if mine is None:
            continue
        for target in sorted(targets):
            theirs = _tier(target)
            if theirs is not None and theirs > mine:
                upward.append(f"accelplug.{source} (T{mine}) imports accelplug.{target} (T{theirs})")
    assert not upward, "imports that reach up a tier inside trainer/:\n" + "\n".join(upward)


def test_the_trainer_holds_few_modules_directly_and_none_is_long() -> None:
    folder = REPO / "src" / "accelplug" / "trainer"
    direct = sorted(p.name for p in folder.glob("*.py"))
    assert len(direct) <= 12, f"trainer/ holds {len(direct)} modules directly; put the rest in sub-packages: {direct}"
    long = {
        str(p.relative_to(folder)): n
        for p in folder.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300
    }
    assert not long, f"modules of trainer/ over 300 lines: {long}"


# ---- the checker itself ---------------------------------------------------------------------------
def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "accelplug" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "accelplug"


@pytest.mark.parametrize(
    "closing_import",
    [
        "from .a import A\n",  # at import time
        "def f():\n    from .a import A\n",  # inside a function
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n",  # for types only
    ],
)
def test_a_cycle_is_found_whatever_kind_of_import_closes_it(tmp_path: Path, closing_import: str) -> None:
    package = _package(tmp_path, {"__init__.py": "", "a.py": "from .b import B\n", "b.py": closing_import})
    assert graphs.build(package).strongly_connected() == [["a", "b"]]


def test_a_cycle_through_a_package_init_is_found(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "low.py": "from .high.parts import thing\n",  # runs high/__init__ first
        "high/__init__.py": "from .top import Top\n",
        "high/parts.py": "",
        "high/top.py": "from ..low import x\n",
    }
    package = _package(tmp_path, files)
    assert graphs.build(package).strongly_connected() == [["high", "high.top", "low"]]


def test_fabric_never_imports_the_trainer(graph: object) -> None:
    """Lightning's wall between ``fabric`` and ``pytorch``: Fabric shares only what lies below the Trainer."""
    reached = [
        f"accelplug.{source} imports accelplug.{target} ({_where(graph, source, target)})"
        for source, targets in graph.targets().items()  # type: ignore[attr-defined]
        if source.split(".")[0] == "fabric"
        for target in sorted(targets)
        if target.split(".")[0] in ("trainer", "cli")
    ]
    assert not reached, "\n".join(reached)
