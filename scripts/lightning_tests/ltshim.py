"""The tool's placeholder mode: Lightning's test files import on accelplug even where a name is missing.

Installed over ``builtins.__import__`` in the test process (and, through ``sitecustomize.py``, in the Python
processes it starts), it acts only on ``import``/``from ... import`` statements of Lightning's names written in
Lightning's test tree (the file doing the import is under the tests folder) or in a borrowed demo file. For
such a statement:

1. a *fact* about this machine (``_TORCH_GREATER_EQUAL_2_4``, ``_RICH_AVAILABLE``) that accelplug lacks is
   computed (``standins.fact``), so ``skipif`` conditions decide as they do under Lightning;
2. in a harness file (``conftest.py``, ``helpers/``), a private helper accelplug lacks is the tool's stand-in
   (``standins.HARNESS``);
3. a name whose *module path* accelplug lacks (``lightning.pytorch.callbacks.lr_finder.LearningRateFinder``) is
   taken from the nearest package above it that has it (``accelplug.pytorch.callbacks.LearningRateFinder``);
4. a module of ``lightning.pytorch.demos`` that accelplug lacks (``boring_classes``: ``BoringModel`` and
   friends, the classes of nearly every test) is *borrowed*: the installed Lightning's file is executed with the
   redirect on, so its classes subclass accelplug's ``LightningModule``;
5. any other missing name becomes a placeholder that raises :class:`MissingInAccelplug` when used (called,
   instantiated, an attribute read), so the rest of the file still runs.

With ``LT_PLACEHOLDERS=harness`` (the tool's plain mode) only step 2 applies, and only to the harness files: the
test files import exactly what the redirect gives them.

Every substitution is appended to ``$LT_SUBSTITUTIONS`` (JSON lines) so the report lists what was filled in.
Nothing here changes an accelplug module: the missing names are handed to the importing statement only.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import standins  # noqa: E402

LIGHTNING_ROOTS = ("lightning", "pytorch_lightning", "lightning_fabric")
#: Lightning's spellings of the same module, normalised to ``lightning.pytorch`` / ``lightning.fabric``.
_SPELLINGS = (("pytorch_lightning", "lightning.pytorch"), ("lightning_fabric", "lightning.fabric"))


class MissingInAccelplug(AttributeError):
    """A Lightning name accelplug lacks was used (the tool's placeholder). An AttributeError, as Python's own is."""


def _canonical(module: str) -> str:
    for spelling, canonical in _SPELLINGS:
        if module == spelling or module.startswith(spelling + "."):
            return canonical + module[len(spelling) :]
    return module


def _record(kind: str, name: str, importer: str) -> None:
    path = os.environ.get("LT_SUBSTITUTIONS")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps({"kind": kind, "name": name, "file": importer}) + "\n")


class _PlaceholderMeta(type):
    """Placeholders: a file imports and defines its tests; a test fails where it *uses* the missing name.

    Reading an UPPER_CASE attribute gives a placeholder for it (``EarlyStoppingReason.PATIENCE_EXHAUSTED`` in a
    ``parametrize`` list at import); any other attribute, and calling, instantiating, comparing or formatting one,
    raises :class:`MissingInAccelplug`.
    """

    _lt_name: str

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise MissingInAccelplug(f"{cls._lt_name} is missing in accelplug (placeholder used)")

    def __getattr__(cls, item: str) -> Any:
        # Only an enum-like member (UPPER_CASE) of a placeholder is itself a placeholder, one level deep: code that
        # walks attributes (jsonargparse, typing helpers, hasattr probes) must see them missing, or it would follow
        # an endless chain of new placeholders (it did: test_cli's collection grew to 23 GB).
        if not item.isupper() or "." in cls.__name__:
            raise MissingInAccelplug(f"{cls._lt_name} is missing in accelplug (placeholder used: .{item})")
        member = placeholder(f"{cls._lt_name}.{item}")
        member.__name__ = member.__qualname__ = f"{cls.__name__}.{item}"  # pytest ids: "Enum.MEMBER", as str(member)
        return member

    def __eq__(cls, other: object) -> bool:
        if isinstance(other, _PlaceholderMeta):
            return cls._lt_name == other._lt_name
        raise MissingInAccelplug(f"{cls._lt_name} is missing in accelplug (placeholder compared)")

    def __hash__(cls) -> int:
        return hash(cls._lt_name)

    def __str__(cls) -> str:  # an f-string or str() uses the value (Lightning's enums are str-valued)
        raise MissingInAccelplug(f"{cls._lt_name} is missing in accelplug (placeholder formatted)")

    def __format__(cls, spec: str) -> str:
        raise MissingInAccelplug(f"{cls._lt_name} is missing in accelplug (placeholder formatted)")

    def __getitem__(cls, item: Any) -> Any:  # a generic used in an annotation evaluated at import
        return cls

    def __iter__(cls) -> Any:  # without it, iterating falls back on __getitem__(0), (1)... and never ends
        raise MissingInAccelplug(f"{cls._lt_name} is missing in accelplug (placeholder iterated)")

    def __or__(cls, other: Any) -> Any:
        return cls

    def __ror__(cls, other: Any) -> Any:
        return cls


def placeholder(full_name: str) -> type:
    """A class standing for the missing ``full_name``: subclassable, failing when instantiated or asked anything."""
    return _PlaceholderMeta(full_name.rsplit(".", 1)[-1], (), {"_lt_name": full_name, "__module__": "ltshim"})


class _ModuleView(types.ModuleType):
    """What one ``from module import a, b`` statement sees: the real module, plus the names filled in for it."""

    def __init__(self, real: types.ModuleType, filled: dict[str, Any]) -> None:
        super().__init__(real.__name__)
        self._lt_real = real
        self._lt_filled = filled

    def __getattr__(self, item: str) -> Any:
        if item in self._lt_filled:
            return self._lt_filled[item]
        return getattr(self._lt_real, item)


_TESTS_DIR = Path(os.environ.get("LT_TESTS_DIR", "/nonexistent")).resolve()
_HARNESS_ONLY = os.environ.get("LT_PLACEHOLDERS") == "harness"
_real_import = builtins.__import__
_borrowed_files: set[str] = set()


def _importer_file(globals_: dict[str, Any] | None) -> str | None:
    if not globals_:
        return None
    file = globals_.get("__file__")
    if not file:
        return None
    if file in _borrowed_files:
        return file
    try:
        resolved = Path(file).resolve()
    except OSError:
        return None
    return str(resolved) if resolved.is_relative_to(_TESTS_DIR) else None


def _is_harness(file: str) -> bool:
    path = Path(file)
    return path.name in ("conftest.py", "__init__.py") or "helpers" in path.parts


def _borrow_demo(module_name: str) -> types.ModuleType | None:
    """Execute the installed Lightning's ``demos/<x>.py`` under the redirect, registered under ``module_name``."""
    canonical = _canonical(module_name)
    if not canonical.startswith("lightning.pytorch.demos.") or canonical.count(".") != 3:
        return None
    if canonical in sys.modules:
        return sys.modules[canonical]
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        source = Path(str(distribution("lightning").locate_file(canonical.replace(".", "/") + ".py")))
    except PackageNotFoundError:
        return None
    if not source.is_file():
        return None
    spec = importlib.util.spec_from_file_location(canonical, source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    _borrowed_files.add(str(source))
    sys.modules[canonical] = module
    if module_name != canonical:
        sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(canonical, None)
        sys.modules.pop(module_name, None)
        raise
    _record("borrowed", canonical, str(source))
    return module


def _nearest_package_value(module_name: str, item: str) -> tuple[bool, Any]:
    """``item`` looked up in the closest importable package above the missing ``module_name``."""
    parts = module_name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        parent = ".".join(parts[:cut])
        try:
            module = importlib.import_module(parent)
        except ImportError:
            continue
        if hasattr(module, item):
            return True, getattr(module, item)
        return False, None
    return False, None


def _fill(module_name: str, item: str, importer: str, module: types.ModuleType | None) -> Any:
    """The value a statement of ``importer`` gets for the missing ``module_name.item``; records which kind."""
    full = f"{module_name}.{item}"
    canonical = _canonical(module_name)
    if _HARNESS_ONLY:
        if (canonical, item) in standins.HARNESS:
            _record("harness", full, importer)
            return standins.HARNESS[(canonical, item)]
        known, value = standins.fact(item)
        if known:
            _record("fact", full, importer)
            return value
        raise ImportError(f"cannot import name {item!r} from {module_name!r} (plain redirect)", name=module_name)
    known, value = standins.fact(item)
    if known:
        _record("fact", full, importer)
        return value
    if _is_harness(importer) and (canonical, item) in standins.HARNESS:
        _record("harness", full, importer)
        return standins.HARNESS[(canonical, item)]
    if module is None:
        found, value = _nearest_package_value(module_name, item)
        if found:
            _record("module-path", full, importer)
            return value
    _record("placeholder", full, importer)
    return placeholder(_canonical(module_name) + "." + item)


def _import(
    name: str,
    globals: dict[str, Any] | None = None,
    locals: dict[str, Any] | None = None,
    fromlist: tuple[str, ...] | list[str] | None = (),
    level: int = 0,
) -> Any:
    if level != 0 or name.split(".")[0] not in LIGHTNING_ROOTS:
        return _real_import(name, globals, locals, fromlist, level)
    importer = _importer_file(globals)
    if importer is None or (_HARNESS_ONLY and not _is_harness(importer)):
        return _real_import(name, globals, locals, fromlist, level)
    try:
        module = _real_import(name, globals, locals, fromlist, level)
    except ImportError as error:
        borrowed = None if _HARNESS_ONLY else _borrow_demo(name)
        if borrowed is not None:
            return borrowed if fromlist else _real_import(name.split(".")[0], globals, locals, (), 0)
        if not fromlist:
            raise
        _record("module", name, importer)
        filled = {item: _fill(name, item, importer, None) for item in fromlist if item != "*"}
        view = types.ModuleType(name, f"placeholder for {name}: {error}")
        view.__dict__.update(filled)
        return view
    if not fromlist:
        return module
    filled = {}
    for item in fromlist:
        if item == "*" or hasattr(module, item):
            continue
        borrowed = None if _HARNESS_ONLY else _borrow_demo(f"{name}.{item}")
        filled[item] = borrowed if borrowed is not None else _fill(name, item, importer, module)
    return _ModuleView(module, filled) if filled else module


def install() -> None:
    """Put the placeholder import in place (idempotent)."""
    if builtins.__import__ is not _import:
        builtins.__import__ = _import
