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
from typing import NamedTuple

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


class Layer(NamedTuple):
    """One layer: what it is (a phrase for the architecture page) and its rooms, by top-level name."""

    what: str
    rooms: tuple[str, ...]


#: Lowest first. A module may import its own layer and the layers below it (by top-level name).
#: ``docs/architecture.md`` shows this table as :func:`layer_list` renders it (``tests/docs/test_architecture.py``).
LAYERS: list[Layer] = [
    Layer(
        "the basics: errors, variables, the machine, overrides, how import paths resolve",
        (
            "errors",
            "_version",
            "_record",
            "envvars",
            "enums",
            "hardware",
            "isolation",
            "overrides",
            "_import_paths",
            "_console",
            "_optional",
        ),
    ),
    Layer(
        "the plugin spine; hardware, precisions and strategies; processes, checkpoint files, data, measures",
        (
            "hookspecs",
            "builtin_plugin",
            "status",
            "registry",
            "accelerator",
            "accelerators",
            "environments",
            "precision",
            "strategies",
            "distributed",
            "checkpoint",
            "data",
            "measure",
            "profilers",
            "seed",
        ),
    ),
    Layer(
        "what a user's script subclasses or passes in, and the selection rules",
        ("core", "callbacks", "loggers", "selection", "config", "plugins", "backends", "registry_views"),
    ),
    Layer(
        "the Trainer and what sits beside it (Fabric never imports the Trainer)",
        (
            "trainer",
            "tuner",
            "fabric",
            "launcher",
            "lightning_cli",
            "bench",
            "testing",
            "demos",
            "utilities",
            "__init__",
        ),
    ),
    Layer(
        "the command line, the lightning.pytorch import paths, and Lightning interop",
        ("cli", "__main__", "pytorch", "interop"),
    ),
]


class Tier(NamedTuple):
    """One tier inside ``trainer/``: what it is, and its modules (a pattern ending in ``.*``: a sub-package)."""

    what: str
    modules: tuple[str, ...]


#: Inside ``trainer/``, lowest first: a module may import its own tier and the tiers below it.
#: ``docs/architecture.md`` shows this table as :func:`tier_list` renders it.
TIERS: list[Tier] = [
    Tier(
        "what a run is made of, none of it knowing a run (display.defaults: the callbacks a Trainer adds; "
        "display.device_info: its GPU/TPU lines)",
        (
            "trainer.state",
            "trainer.dispatch.*",
            "trainer.options.*",
            "trainer.logging.*",
            "trainer.display.progress",
            "trainer.display.defaults",
            "trainer.display.device_info",
            "trainer.checkpointing.format",
            "trainer.checkpointing.lightning_loops",
            "trainer.process.*",
        ),
    ),
    Tier("the record of one call", ("trainer._run",)),
    Tier(
        "what works on a run: setting it up, the loops, checkpoint contents, the summary",
        (
            "trainer._setup",
            "trainer.loops.*",
            "trainer.checkpointing.contents",
            "trainer.checkpointing.auto_resume",
            "trainer.checkpointing.saving",
            "trainer.display.summary",
        ),
    ),
    Tier(
        "the stages and the Trainer itself (and the paths kept for one release)",
        ("trainer._stages", "trainer.trainer", "trainer._tuning", "trainer.callbacks", "trainer.loggers"),
    ),
]


def _wrapped(names: list[str], indent: str, width: int = 104) -> list[str]:
    lines, line = [], indent
    for name in names:
        if len(line) + len(name) + 2 > width and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += name + "  "
    return [*lines, line.rstrip()]


def layer_list() -> str:
    """The layers, highest first, as ``docs/architecture.md`` shows them (a package's name ends in ``/``)."""
    package = REPO / "src" / "accelplug"
    out = []
    for index, layer in reversed(list(enumerate(LAYERS))):
        names = [f"{room}/" if (package / room).is_dir() else room for room in layer.rooms]
        out += [f"L{index}  {layer.what}", *_wrapped(names, "    ")]
    return "\n".join(out)


def tier_list() -> str:
    """The Trainer's tiers, highest first, as ``docs/architecture.md`` shows them (``trainer.`` left out)."""
    out = []
    for index, tier in reversed(list(enumerate(TIERS))):
        names = [m.removeprefix("trainer.").replace(".*", "/").replace(".", "/") for m in tier.modules]
        out += [f"T{index}  {tier.what}", *_wrapped(names, "    ")]
    return "\n".join(out)


@pytest.fixture(scope="module")
def graph() -> object:
    return graphs.build()


def _where(graph: object, source: str, target: str) -> str:
    edges = [e for e in graph.edges if e.source == source and e.target == target]  # type: ignore[attr-defined]
    found = dict.fromkeys(f"line {e.line} ({e.kind}{', implied' if e.implicit else ''})" for e in edges)
    return ", ".join(found)


def _layer(module: str) -> int:
    top = module.split(".")[0]
    for index, layer in enumerate(LAYERS):
        if top in layer.rooms:
            return index
    raise AssertionError(f"module accelplug.{module} is in no layer of this test; add it to LAYERS")


def _tier(module: str) -> int | None:
    """The tier of a module of ``trainer/`` (None for the sub-packages' ``__init__``, which import nothing)."""
    for index, tier in enumerate(TIERS):
        for pattern in tier.modules:
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
