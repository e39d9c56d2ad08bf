"""How accelplug's import paths resolve: sub-packages loaded when first used, and modules that moved.

Two small pieces of import machinery, both for paths users write:

- :func:`lazy_submodules` builds the module ``__getattr__`` that makes ``import accelplug.pytorch as pl;
  pl.callbacks`` work without importing every sub-package up front (Lightning imports them eagerly; accelplug
  keeps ``import`` cheap). A package at one of Lightning's import paths assigns it instead of writing code.
- :data:`MOVED` maps a module path accelplug had before its rooms were rearranged by meaning to the module
  that holds the same code now. :func:`install` (run by ``import accelplug``) puts a finder on
  ``sys.meta_path`` that answers an import of an old path with the module at the new one: the same module
  object, so ``isinstance`` checks and monkeypatching agree on both paths. Importing an old path warns
  (``DeprecationWarning``) with the new one. Lightning's own paths (``accelplug.pytorch``, ``.plugins``,
  ``.utilities``...) are real modules of re-exports instead, and never warn.
- :func:`when_imported` runs a callback once another package's module has loaded, whenever that happens:
  accelplug shares state with such a module (``lightning_utilities``' ``rank_zero_only``) without importing
  it at start-up.
- :func:`seen_at` reads a name as code written for Lightning sees it at Lightning's module path, where tests and
  users replace it (``mock.patch("lightning.pytorch.callbacks.progress.rich_progress.CustomBarColumn")``): the
  room that holds the code looks the name up there, so the replacement takes effect.
- :func:`is_instance_if_loaded` is an ``isinstance`` check that imports nothing: where a module was never
  loaded, no instance of its classes can exist, so a one-device ``Trainer()`` need not import DDP to learn that
  its strategy is not DDP's.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeGuard, cast

if TYPE_CHECKING:
    import importlib.abc  # importing it at run time would load importlib.resources: tens of ms on every start

__all__ = ["MOVED", "install", "is_instance_if_loaded", "lazy_submodules", "seen_at", "when_imported"]

#: Old module path -> the module that holds its code now (both relative to ``accelplug``).
MOVED: Mapping[str, str] = {
    "cuda_visible": "hardware.cuda_visible",
    "device_runtime": "hardware.runtime",
    "devices": "hardware.devices",
    "module": "core.module",
    "module_hooks": "core.hooks",
    "module_steps": "core.steps",
    "module_saving": "core.saving",
    "datamodule": "core.datamodule",
    "datamodule_datasets": "core.from_datasets",
    "optimizers": "strategies.optimizers",
    "preparation": "strategies.preparation",
    "precision_names": "precision.names",
    "checkpoint_io": "checkpoint.file",
    "checkpoint_plugins": "checkpoint",
    "checkpoint_plugins.base": "checkpoint.io",
    "checkpoint_plugins.asynchronous": "checkpoint.asynchronous",
    "checkpoint_plugins.wrapping": "checkpoint.wrapping",
    "callbacks.throughput": "measure.throughput",
    "strategies.collectives": "distributed.collectives",
    "fabric.init": "strategies.init_contexts",
    "demo": "demos.classifier",
}


def lazy_submodules(
    package: str, submodules: Iterable[str], attributes: Mapping[str, str] | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each of ``submodules`` is imported when first read as an
    attribute, and each of ``attributes`` (name -> submodule) is read from its submodule then; a module given
    as ``accelplug.x.y`` is that module rather than a submodule of ``package`` (a name whose room is elsewhere).

    Any other submodule the package has on disk is imported when read too: ``import lightning`` loads nearly all of
    Lightning's, so scripts write ``L.pytorch.utilities.model_summary.ModelSummary`` without importing it."""
    names = frozenset(submodules)
    elsewhere = dict(attributes or {})

    def __getattr__(name: str) -> Any:
        if name in names:
            return importlib.import_module(f"{package}.{name}")
        if name in elsewhere:
            module = elsewhere[name]
            return getattr(
                importlib.import_module(module if module.startswith("accelplug.") else f"{package}.{module}"), name
            )
        if _is_submodule(package, name):
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def _is_submodule(package: str, name: str) -> bool:
    """Whether ``package`` has a module or package ``name`` on its path (dunder and private names never: they are
    what ``hasattr`` probes, and no Lightning path is private)."""
    if name.startswith("_"):
        return False
    search = getattr(sys.modules.get(package), "__path__", None)
    return (
        search is not None and importlib.machinery.PathFinder.find_spec(f"{package}.{name}", list(search)) is not None
    )


class _Alias:
    """Loads an old path by importing the new one and putting that very module in ``sys.modules`` (a loader by
    protocol, as the import system asks it: ``create_module``, ``exec_module``)."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module, replaced in exec_module

    def exec_module(self, module: ModuleType) -> None:
        warnings.warn(f"{self.old} moved to {self.new}; import it from there.", DeprecationWarning, stacklevel=2)
        sys.modules[self.old] = importlib.import_module(self.new)  # the import system returns this one


#: Module name -> what runs once it has loaded (:func:`when_imported`).
_AFTER_IMPORT: dict[str, list[Callable[[ModuleType], None]]] = {}


class _ThenCall:
    """The loader another finder chose, and then the callbacks of :func:`when_imported` on the loaded module;
    anything else a loader offers (``get_source``, ``is_package``...) is the wrapped loader's."""

    def __init__(self, loader: Any, callbacks: list[Callable[[ModuleType], None]]) -> None:
        self.loader, self.callbacks = loader, callbacks

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.loader.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        for callback in self.callbacks:
            callback(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


class _MovedFinder:
    """Finds the old paths of :data:`MOVED`, and the modules :func:`when_imported` waits for (a meta path finder
    by protocol: ``find_spec``); every other name is left to the finders after it."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname in _AFTER_IMPORT:
            return self._watched(fullname, path, target)
        if not fullname.startswith("accelplug."):
            return None
        new = MOVED.get(fullname[len("accelplug.") :])
        if new is None:
            return None
        loader = cast("importlib.abc.Loader", _Alias(fullname, f"accelplug.{new}"))
        return importlib.machinery.ModuleSpec(fullname, loader)

    def _watched(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec the finders after this one give, its loader followed by the waiting callbacks."""
        later = sys.meta_path[sys.meta_path.index(self) + 1 :] if self in sys.meta_path else sys.meta_path
        for finder in later:
            find = getattr(finder, "find_spec", None)
            spec = None if find is None else find(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = cast("importlib.abc.Loader", _ThenCall(spec.loader, _AFTER_IMPORT[fullname]))
                return cast("importlib.machinery.ModuleSpec", spec)
        return None


def is_instance_if_loaded(obj: object, module: str, name: str) -> TypeGuard[Any]:
    """``isinstance(obj, module.name)``, False without importing ``module`` when it is not loaded (a type checker
    then lets the caller use the class's attributes, as after ``isinstance``)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(obj, getattr(loaded, name))


def seen_at(module: str, name: str, default: Any) -> Any:
    """``module.name`` when ``module`` (one of Lightning's import paths) is loaded and has it, else ``default``.

    A path module re-exports the room's objects, so the two agree until someone replaces the name at the path
    (``mock.patch``, ``monkeypatch.setattr``); the room's code reads the name through this each time it uses it,
    so the replacement is what runs. Looked up, never imported: that path stands above the room."""
    loaded = sys.modules.get(module)
    return getattr(loaded, name, default) if loaded is not None else default


def when_imported(name: str, callback: Callable[[ModuleType], None]) -> None:
    """Call ``callback(module)`` once the module ``name`` has loaded: now if it already has, else right after its
    import runs, whoever imports it. Importing it here instead would cost every start-up what it costs."""
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
        return
    _AFTER_IMPORT.setdefault(name, []).append(callback)
    install()


def install() -> None:
    """Put the finder of moved paths first on ``sys.meta_path`` (once per process)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
