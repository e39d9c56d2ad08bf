"""The process-wide registry of accelerators, filled by pluggy plugins on first use.

Loading order is fixed so the outcome never depends on install order: the built-in plugin first
(built-ins win every name clash), then entry-point plugins sorted by name. Each plugin is imported,
registered and asked in isolation; whatever goes wrong is recorded as a ``PluginFailure`` and warned
about, and the rest of the registry keeps working.
"""

from __future__ import annotations

import inspect
import os
import re
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from types import ModuleType
from typing import Any

import pluggy

from . import hookspecs
from .accelerator import NAME_PATTERN, Accelerator
from .errors import MisconfigurationException, PluginLoadWarning, did_you_mean
from .precision.base import Precision
from .strategies.base import Strategy

__all__ = [
    "AcceleratorEntry",
    "AcceleratorRegistry",
    "PluginFailure",
    "PluginInfo",
    "get_registry",
    "reset_registry",
]

BUILTIN_PLUGIN = "builtin"
DISABLE_AUTOLOAD_ENV = "ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD"
PLUGINS_ENV = "ACCELPLUG_PLUGINS"
_PRECISION_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
#: Not accelerator names: they are selection keywords.
RESERVED_NAMES = frozenset({"auto", "gpu"})


@dataclass(frozen=True)
class PluginInfo:
    """Where an accelerator came from: the plugin (entry-point name) and its distribution."""

    plugin: str
    distribution: str | None = None
    version: str | None = None

    def describe(self) -> str:
        if self.distribution is None:
            return f"plugin {self.plugin!r}"
        return f"plugin {self.plugin!r} (distribution {self.distribution} {self.version or ''})".rstrip()


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that was skipped, and why."""

    plugin: str
    error: str
    distribution: str | None = None
    version: str | None = None

    def __str__(self) -> str:
        return f"{PluginInfo(self.plugin, self.distribution, self.version).describe()}: {self.error}"


@dataclass(frozen=True)
class AcceleratorEntry:
    cls: type[Accelerator]
    source: PluginInfo


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def _selected_plugins() -> set[str] | None:
    raw = os.environ.get(PLUGINS_ENV)
    if raw is None:
        return None
    return {p.strip() for p in raw.split(",") if p.strip()}


def _describe_object(obj: object) -> str:
    return obj.__qualname__ if isinstance(obj, type) else f"{obj!r} ({type(obj).__name__})"


class AcceleratorRegistry:
    """Accelerators and strategies by name; see ``get_registry()``."""

    def __init__(self) -> None:
        self._accelerators: dict[str, AcceleratorEntry] = {}
        self._strategies: dict[str, tuple[type[Strategy], PluginInfo]] = {}
        self._precisions: dict[str, tuple[type[Precision], PluginInfo]] = {}
        self._failures: list[PluginFailure] = []
        self._plugins: list[PluginInfo] = []
        self.plugin_manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.plugin_manager.add_hookspecs(hookspecs)

    # ---- loading ---------------------------------------------------------------------------------
    def load(self) -> None:
        """Register the built-in plugin, then every selected entry-point plugin."""
        from . import builtin_plugin

        self._load_plugin(PluginInfo(BUILTIN_PLUGIN, "accelplug", _version("accelplug")), lambda: builtin_plugin)
        if _env_flag(DISABLE_AUTOLOAD_ENV):
            return
        wanted = _selected_plugins()
        entry_points = sorted(metadata.entry_points(group=hookspecs.PROJECT_NAME), key=lambda e: e.name)
        for ep in entry_points:
            if wanted is not None and ep.name not in wanted:
                continue
            dist = getattr(ep, "dist", None)
            info = PluginInfo(ep.name, dist.name if dist else None, dist.version if dist else None)
            self._load_plugin(info, ep.load)

    def _fail(self, info: PluginInfo, error: str) -> None:
        failure = PluginFailure(info.plugin, error, info.distribution, info.version)
        self._failures.append(failure)
        warnings.warn(f"accelplug skipped {failure}", PluginLoadWarning, stacklevel=4)

    def _load_plugin(self, info: PluginInfo, load: Callable[[], Any]) -> None:
        try:
            plugin = load()
        except Exception as exc:
            self._fail(info, f"import failed: {type(exc).__name__}: {exc}")
            return
        try:
            self.plugin_manager.register(plugin, name=info.plugin)
        except Exception as exc:
            self._fail(info, f"invalid plugin: {type(exc).__name__}: {exc}")
            return
        self._plugins.append(info)
        self._collect(info, plugin, "register_accelerators", self._add_accelerator)
        self._collect(info, plugin, "register_strategies", self._add_strategy)
        self._collect(info, plugin, "register_precisions", self._add_precision)

    def _collect(
        self, info: PluginInfo, plugin: ModuleType | object, hook: str, add: Callable[[object, PluginInfo], None]
    ) -> None:
        impls = [i for i in getattr(self.plugin_manager.hook, hook).get_hookimpls() if i.plugin is plugin]
        for impl in impls:
            try:
                result = impl.function()
            except Exception as exc:
                self._fail(info, f"its {hook}() hook raised {type(exc).__name__}: {exc}")
                continue
            if result is None:
                continue
            try:
                items = list(result)
            except TypeError:
                self._fail(info, f"its {hook}() hook returned {_describe_object(result)}, not a list")
                continue
            for item in items:
                try:
                    add(item, info)
                except MisconfigurationException as exc:
                    self._fail(info, str(exc))

    # ---- validation shared by the hook and register() ---------------------------------------------
    def _add_accelerator(self, cls: object, source: PluginInfo) -> None:
        if not (isinstance(cls, type) and issubclass(cls, Accelerator)):
            raise MisconfigurationException(
                f"{_describe_object(cls)} is not an accelplug.Accelerator subclass; "
                "register_accelerators() must return Accelerator subclasses"
            )
        if inspect.isabstract(cls):
            missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
            raise MisconfigurationException(f"accelerator class {cls.__qualname__} does not implement: {missing}")
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not NAME_PATTERN.match(name) or name in RESERVED_NAMES:
            raise MisconfigurationException(
                f"accelerator class {cls.__qualname__} has name={name!r}; a name is a lowercase "
                "identifier such as 'npu' (not 'auto' or 'gpu')"
            )
        if not isinstance(getattr(cls, "device_type", None), str):
            raise MisconfigurationException(f"accelerator class {cls.__qualname__} does not set device_type")
        if name in self._accelerators:
            owner = self._accelerators[name]
            if owner.cls is cls:
                return
            raise MisconfigurationException(
                f"accelerator name {name!r} of {cls.__qualname__} clashes with {owner.cls.__qualname__} "
                f"already registered by {owner.source.describe()}; the first registration is kept"
            )
        self._accelerators[name] = AcceleratorEntry(cls, source)

    def _add_strategy(self, cls: object, source: PluginInfo) -> None:
        if not (isinstance(cls, type) and issubclass(cls, Strategy)):
            raise MisconfigurationException(
                f"{_describe_object(cls)} is not an accelplug Strategy subclass; "
                "register_strategies() must return Strategy subclasses"
            )
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not NAME_PATTERN.match(name) or name == "auto":
            raise MisconfigurationException(f"strategy class {cls.__qualname__} has an invalid name {name!r}")
        if name in self._strategies and self._strategies[name][0] is not cls:
            raise MisconfigurationException(
                f"strategy name {name!r} of {cls.__qualname__} clashes with one already registered "
                f"by {self._strategies[name][1].describe()}; the first registration is kept"
            )
        self._strategies[name] = (cls, source)

    def _add_precision(self, cls: object, source: PluginInfo) -> None:
        if not (isinstance(cls, type) and issubclass(cls, Precision)):
            raise MisconfigurationException(
                f"{_describe_object(cls)} is not an accelplug Precision subclass; "
                "register_precisions() must return Precision subclasses"
            )
        name = getattr(cls, "name", None)
        aliases = getattr(cls, "aliases", ())
        if not isinstance(name, str) or not _PRECISION_NAME.match(name):
            raise MisconfigurationException(
                f"precision class {cls.__qualname__} has an invalid name {name!r}; a name is lowercase letters, "
                "digits and '-', such as 'bf16-mixed'"
            )
        if not isinstance(aliases, tuple) or not all(isinstance(a, str) for a in aliases):
            raise MisconfigurationException(f"precision class {cls.__qualname__} must give aliases as a tuple of str")
        taken = self.precision_aliases()
        for spelling in (name, *aliases):
            owner = taken.get(spelling.lower())
            if owner is not None and self._precisions[owner][0] is not cls:
                raise MisconfigurationException(
                    f"precision {spelling!r} of {cls.__qualname__} clashes with {owner!r} already registered "
                    f"by {self._precisions[owner][1].describe()}; the first registration is kept"
                )
        self._precisions[name] = (cls, source)

    # ---- queries ---------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(self._accelerators)

    def get(self, name: str) -> type[Accelerator]:
        """The accelerator class registered as ``name`` (case-insensitive)."""
        key = name.strip().lower() if isinstance(name, str) else name
        entry = self._accelerators.get(key) if isinstance(key, str) else None
        if entry is None:
            raise MisconfigurationException(
                f"accelerator={name!r} is not a registered accelerator. Registered: "
                f"{', '.join(repr(n) for n in self.names())}; also accepted: 'auto', 'gpu', an "
                f"Accelerator subclass or instance.{did_you_mean(name, [*self.names(), 'auto', 'gpu'])}"
            )
        return entry.cls

    def source(self, name: str) -> PluginInfo:
        """The plugin and distribution that registered accelerator ``name``."""
        self.get(name)
        return self._accelerators[name.strip().lower()].source

    def entries(self) -> list[AcceleratorEntry]:
        return [self._accelerators[n] for n in self.names()]

    def available(self) -> list[str]:
        """Names of the accelerators usable here, best first (the order ``"auto"`` uses)."""
        usable = []
        for entry in self._accelerators.values():
            try:
                ok = bool(entry.cls.is_available())
            except Exception as exc:
                warnings.warn(
                    f"accelplug: {entry.cls.name}.is_available() raised {type(exc).__name__}: {exc}",
                    PluginLoadWarning,
                    stacklevel=2,
                )
                ok = False
            if ok:
                usable.append(entry.cls)
        usable.sort(key=lambda c: (-c.auto_priority, c.name))
        return [c.name for c in usable]

    def failures(self) -> list[PluginFailure]:
        return list(self._failures)

    def plugins(self) -> list[PluginInfo]:
        """Plugins that loaded, built-in first."""
        return list(self._plugins)

    def register(self, cls: type[Accelerator]) -> type[Accelerator]:
        """Add an accelerator at run time; invalid classes raise ``MisconfigurationException``."""
        module = getattr(cls, "__module__", "unknown")
        self._add_accelerator(cls, PluginInfo(f"runtime:{module}"))
        return cls

    def strategy_names(self) -> list[str]:
        return sorted(self._strategies)

    def get_strategy(self, name: str) -> type[Strategy]:
        key = name.strip().lower()
        if key not in self._strategies:
            accepted = ["auto", *self.strategy_names()]
            raise MisconfigurationException(
                f"strategy={name!r} is not a registered strategy. Accepted: "
                f"{', '.join(repr(n) for n in accepted)}.{did_you_mean(name, accepted)}"
            )
        return self._strategies[key][0]

    def register_strategy(self, cls: type[Strategy]) -> type[Strategy]:
        self._add_strategy(cls, PluginInfo(f"runtime:{getattr(cls, '__module__', 'unknown')}"))
        return cls

    def precision_names(self) -> list[str]:
        """Canonical names of the registered precisions, in registration order (built-ins first)."""
        return list(self._precisions)

    def precision_aliases(self) -> dict[str, str]:
        """Every accepted spelling (lowercase) -> canonical precision name."""
        spellings: dict[str, str] = {}
        for name, (cls, _source) in self._precisions.items():
            for spelling in (name, *cls.aliases):
                spellings.setdefault(spelling.lower(), name)
        return spellings

    def get_precision(self, precision: object) -> type[Precision]:
        """The precision class for a name or alias (``"bf16"``, ``16``, ``"32-true"``...)."""
        from .precisions import normalize_precision

        return self._precisions[normalize_precision(precision, self.precision_aliases())][0]

    def register_precision(self, cls: type[Precision]) -> type[Precision]:
        self._add_precision(cls, PluginInfo(f"runtime:{getattr(cls, '__module__', 'unknown')}"))
        return cls


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


_registry: AcceleratorRegistry | None = None
_lock = threading.Lock()


def get_registry() -> AcceleratorRegistry:
    """The process-wide registry; plugins load on the first call, never at import."""
    global _registry
    if _registry is None:
        with _lock:
            if _registry is None:
                registry = AcceleratorRegistry()
                registry.load()
                _registry = registry
    return _registry


def reset_registry() -> None:
    """Forget the loaded registry so the next ``get_registry()`` reloads (tests, changed env vars)."""
    global _registry
    with _lock:
        _registry = None
