"""The process-wide registry of accelerators, filled by pluggy plugins on first use.

Loading order is fixed so the outcome never depends on install order: the built-in plugin first
(built-ins win every name clash), then entry-point plugins sorted by name. Each entry-point plugin is
imported, registered and asked in isolation (see :mod:`accelplug.isolation`): an exception, a
``sys.exit()``, a wrong answer, an unknown hook name or a call that does not return within
``ACCELPLUG_PLUGIN_TIMEOUT_S`` is recorded as a ``PluginFailure`` and warned about, and the rest of the
registry keeps working. An entry-point accelerator's answers (available? how many devices?) are
asked once per registry, all plugins at once, so one slow plugin costs its time once, not at every
``available()``; built-in accelerators and classes a program registers itself are asked directly,
every time, because they are trusted and cheap and may depend on the environment of the moment
(``CUDA_VISIBLE_DEVICES``).
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import replace
from importlib import metadata
from pathlib import PurePath

# perf_counter bound once: code that patches time.perf_counter (a test timing its own callback with a mocked
# clock) must not feed the plugin calls' timings, nor have them use up its values.
from time import perf_counter as _clock
from typing import Any

import pluggy

from . import hookspecs, isolation
from ._record import record
from ._version import __version__
from .accelerator import NAME_PATTERN, Accelerator
from .environments.base import ClusterEnvironment
from .envvars import env_flag, env_names
from .errors import MisconfigurationException, PluginLoadWarning, closest_match, did_you_mean
from .hookspecs import Deferred
from .precision.base import NumericPrecision
from .status import AcceleratorStatus, ContractBreach, ask, broken
from .strategies.base import Strategy

__all__ = [
    "AcceleratorEntry",
    "AcceleratorRegistry",
    "AcceleratorStatus",
    "PluginFailure",
    "PluginInfo",
    "get_registry",
    "reset_registry",
]

BUILTIN_PLUGIN = "builtin"
DISABLE_AUTOLOAD_ENV = "ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD"
PLUGINS_ENV = "ACCELPLUG_PLUGINS"
TRACE_ENV = "ACCELPLUG_TRACE_PLUGINS"
#: A plugin whose import and hooks take longer than this is shown with its time by ``accelplug list``.
SLOW_PLUGIN_S = 1.0
_HOOKS = ("register_accelerators", "register_strategies", "register_precisions", "register_cluster_environments")
_PRECISION_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
#: Not accelerator names: they are selection keywords.
RESERVED_NAMES = frozenset({"auto", "gpu"})


@record(frozen=True)
class PluginInfo:
    """Where an accelerator came from: the plugin (entry-point name) and its distribution."""

    plugin: str
    distribution: str | None = None
    version: str | None = None
    #: Loaded from an entry point, so untrusted: called in isolation, with a time bound.
    entry_point: bool = False
    #: Seconds its import and hooks took (None for the built-in plugin and run-time registrations).
    load_seconds: float | None = None

    def describe(self) -> str:
        if self.distribution is None:
            return f"plugin {self.plugin!r}"
        return f"plugin {self.plugin!r} (distribution {self.distribution} {self.version or ''})".rstrip()


@record(frozen=True)
class PluginFailure:
    """A plugin that was skipped or whose accelerator misbehaved, and why."""

    plugin: str
    error: str
    distribution: str | None = None
    version: str | None = None

    def __str__(self) -> str:
        return f"{PluginInfo(self.plugin, self.distribution, self.version).describe()}: {self.error}"


@record(frozen=True)
class AcceleratorEntry:
    cls: type[Accelerator]
    source: PluginInfo


def _describe_object(obj: object) -> str:
    if isinstance(obj, type):
        return obj.__qualname__
    try:
        text = repr(obj)
    except Exception:  # a plugin's broken __repr__ must not hide the real problem
        text = f"<{type(obj).__name__} object>"
    return f"{text} ({type(obj).__name__})"


def _timeout_hint(timeout: float) -> str:
    return (
        f" (the bound is ACCELPLUG_PLUGIN_TIMEOUT_S={timeout:g} s); it is no longer waited for. "
        "Raise the bound if the plugin is merely slow."
    )


def _stderr_trace(line: str) -> None:
    print(f"accelplug trace: {line}", file=sys.stderr, flush=True)


class AcceleratorRegistry:
    """Accelerators and strategies by name; see ``get_registry()``."""

    def __init__(self) -> None:
        self._accelerators: dict[str, AcceleratorEntry] = {}
        #: A strategy or environment registered as a ``Deferred`` declaration is imported on first use (see
        #: ``_resolved``), so a run loads only the one it uses.
        self._strategies: dict[str, tuple[type[Strategy] | Deferred, PluginInfo]] = {}
        self._precisions: dict[str, tuple[type[NumericPrecision], PluginInfo]] = {}
        self._environments: dict[str, tuple[type[ClusterEnvironment] | Deferred, PluginInfo]] = {}
        #: Environments whose detect() raised, answered nonsense or hung: reported once, then skipped.
        self._broken_environments: set[str] = set()
        self._failures: list[PluginFailure] = []
        self._plugins: list[PluginInfo] = []
        #: Answers of entry-point accelerators, asked once (see the module docstring).
        self._statuses: dict[str, AcceleratorStatus] = {}
        self._status_lock = threading.Lock()
        self._timeout = isolation.DEFAULT_TIMEOUT_S
        self._trace: Callable[[str], None] | None = None
        self.plugin_manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.plugin_manager.add_hookspecs(hookspecs)

    # ---- loading ---------------------------------------------------------------------------------
    def load(self) -> None:
        """Register the built-in plugin, then every selected entry-point plugin.

        The ``ACCELPLUG_*`` variables are read here; a value that is not clearly on or off, or a
        timeout that is not a positive number, raises ``MisconfigurationException``.
        """
        from . import builtin_plugin

        self._timeout = isolation.plugin_timeout()
        if env_flag(TRACE_ENV):
            self._start_tracing()
        self._load_plugin(PluginInfo(BUILTIN_PLUGIN, "accelplug", __version__), lambda: builtin_plugin)
        if env_flag(DISABLE_AUTOLOAD_ENV):
            return
        entry_points = sorted(_plugin_entry_points(), key=lambda e: e.name)
        self._block_unselected([ep.name for ep in entry_points])
        for ep in entry_points:
            if self.plugin_manager.is_blocked(ep.name):
                continue
            dist = getattr(ep, "dist", None)
            info = PluginInfo(ep.name, dist.name if dist else None, dist.version if dist else None, entry_point=True)
            self._load_plugin(info, ep.load)

    def _block_unselected(self, installed: list[str]) -> None:
        """Apply ``ACCELPLUG_PLUGINS`` with pluggy's ``set_blocked``; warn about names nobody installed."""
        wanted = env_names(PLUGINS_ENV)
        if wanted is None:
            return
        for name in installed:
            if name not in wanted:
                self.plugin_manager.set_blocked(name)
        for name in wanted:
            if name in installed or name == BUILTIN_PLUGIN:
                continue
            match = closest_match(name, installed)
            hint = f" Did you mean {match!r}?" if match else ""
            listed = ", ".join(repr(n) for n in installed) or "none"
            self._fail(
                PluginInfo(name),
                f"{PLUGINS_ENV} names {name!r}, but no installed distribution has an 'accelplug' entry point "
                f"of that name. Installed plugins: {listed}.{hint}",
            )

    def _start_tracing(self) -> None:
        """``ACCELPLUG_TRACE_PLUGINS=1``: every hook call (pluggy's monitoring) and query answer on stderr."""
        self._trace = _stderr_trace

        def before(hook: str, impls: list[pluggy.HookImpl], kwargs: dict[str, object]) -> None:
            _stderr_trace(f"{hook}() called on plugin(s) {', '.join(i.plugin_name for i in impls)}")

        def after(outcome: pluggy.Result[object], hook: str, impls: list[pluggy.HookImpl], kwargs: object) -> None:
            plugins = ", ".join(i.plugin_name for i in impls)
            if outcome.exception is not None:
                _stderr_trace(f"{hook}() of {plugins} {isolation.describe_exception(outcome.exception)}")
            else:
                _stderr_trace(f"{hook}() of {plugins} -> {outcome.get_result()!r}")

        self.plugin_manager.add_hookcall_monitoring(before, after)  # type: ignore[arg-type]

    def _fail(self, info: PluginInfo, error: str) -> None:
        failure = PluginFailure(info.plugin, error, info.distribution, info.version)
        if failure in self._failures:
            return
        self._failures.append(failure)
        warnings.warn(f"accelplug skipped {failure}", PluginLoadWarning, stacklevel=4)

    def _call(self, info: PluginInfo, fn: Callable[[], Any], what: str) -> isolation.CallOutcome[Any]:
        """Call plugin code: isolated with the time bound for an entry point, directly for the built-ins."""
        timeout = self._timeout if info.entry_point else None
        outcome = isolation.call(fn, f"{info.plugin}:{what}", timeout)
        if outcome.timed_out:
            outcome = replace(outcome, error=f"{outcome.error}{_timeout_hint(self._timeout)}")
        return outcome

    def _load_plugin(self, info: PluginInfo, load: Callable[[], Any]) -> None:
        begin = _clock()
        imported = self._call(info, load, "import")
        if not imported.ok:
            if imported.timed_out:
                self._fail(info, f"import {imported.error}")
            elif isinstance(imported.exception, SystemExit):
                self._fail(info, f"import failed: the module {imported.error} while being imported")
            else:
                self._fail(info, f"import failed: {(imported.error or '').removeprefix('raised ')}")
            return
        plugin = imported.value
        try:
            self.plugin_manager.register(plugin, name=info.plugin)
        except Exception as exc:
            self._fail(info, f"invalid plugin: {type(exc).__name__}: {exc}")
            return
        problem = self._unknown_hooks(plugin)
        if problem is not None:
            self.plugin_manager.unregister(plugin, name=info.plugin)
            self._fail(info, problem)
            return
        adders = (self._add_accelerator, self._add_strategy, self._add_precision, self._add_environment)
        for hook, add in zip(_HOOKS, adders, strict=True):
            self._collect(info, plugin, hook, add)
        seconds = _clock() - begin
        loaded = replace(info, load_seconds=seconds) if info.entry_point else info
        self._plugins.append(loaded)
        for name, entry in self._accelerators.items():
            if entry.source == info:
                self._accelerators[name] = AcceleratorEntry(entry.cls, loaded)

    def _unknown_hooks(self, plugin: object) -> str | None:
        """pluggy's ``check_pending()`` for one plugin, as a sentence naming the hooks that exist."""
        try:
            self.plugin_manager.check_pending()
        except pluggy.PluginValidationError as exc:
            unknown = re.search(r"unknown hook '([^']+)'", str(exc))
            name = unknown.group(1) if unknown else str(exc)
            return (
                f"it implements a hook named {name!r}, which accelplug does not have, so it would never be "
                f"called. Hooks that exist: {', '.join(_HOOKS)}.{did_you_mean(name, list(_HOOKS))}"
            )
        if not any(impl.plugin is plugin for hook in _HOOKS for impl in self._hook(hook).get_hookimpls()):
            return (
                "it implements no hook, so it registers nothing: mark its functions with @accelplug.hookimpl "
                f"(hooks that exist: {', '.join(_HOOKS)})"
            )
        return None

    def _hook(self, name: str) -> pluggy.HookCaller:
        hook: pluggy.HookCaller = getattr(self.plugin_manager.hook, name)
        return hook

    def _collect(self, info: PluginInfo, plugin: object, hook: str, add: Callable[[object, PluginInfo], None]) -> None:
        if not any(impl.plugin is plugin for impl in self._hook(hook).get_hookimpls()):
            return
        others = [p for p in self.plugin_manager.get_plugins() if p is not plugin]
        caller = self.plugin_manager.subset_hook_caller(hook, remove_plugins=others)

        def call_and_list() -> list[list[object] | str | None]:
            # Iterating a returned generator runs plugin code too, so it happens inside the bound.
            results: list[list[object] | str | None] = []
            for result in caller():
                if result is None or isinstance(result, (str, bytes)):
                    results.append(None if result is None else _describe_object(result))
                    continue
                try:
                    results.append(list(result))
                except TypeError:
                    results.append(_describe_object(result))
            return results

        outcome = self._call(info, call_and_list, hook)
        if not outcome.ok:
            self._fail(info, f"its {hook}() hook {outcome.error}")
            return
        for result in outcome.value or []:
            if isinstance(result, str):
                self._fail(info, f"its {hook}() hook returned {result}, not a list")
                continue
            for item in result or []:
                try:
                    add(item, info)
                except MisconfigurationException as exc:
                    self._fail(info, str(exc))

    # ---- validation shared by the hook and register() ---------------------------------------------
    def _add_accelerator(self, cls: object, source: PluginInfo) -> None:
        if isinstance(cls, Accelerator):
            kind = type(cls).__qualname__
            raise MisconfigurationException(
                f"{_describe_object(cls)} is an instance; accelerators are registered as classes: "
                f"register({kind}), and register_accelerators() returns [{kind}]"
            )
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
        priority = getattr(cls, "auto_priority", None)
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise MisconfigurationException(
                f"accelerator class {cls.__qualname__} has auto_priority={priority!r}; expected an int "
                "(CUDA is 100, MPS 90, the CPU 0)"
            )
        expected: dict[str, type] = {"is_gpu": bool, "description": str}
        for attribute, wanted in expected.items():
            if not isinstance(getattr(cls, attribute, None), wanted):
                raise MisconfigurationException(
                    f"accelerator class {cls.__qualname__} has {attribute}={getattr(cls, attribute, None)!r}; "
                    f"expected a {wanted.__name__}"
                )
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
        if isinstance(cls, Deferred):
            self._declare(self._strategies, cls, source, "strategy")
            return
        self._check_strategy(cls)
        assert isinstance(cls, type) and issubclass(cls, Strategy)
        self._add_class(self._strategies, cls, source, "strategy", self._strategy)

    @staticmethod
    def _check_strategy(cls: object) -> None:
        if not (isinstance(cls, type) and issubclass(cls, Strategy)):
            raise MisconfigurationException(
                f"{_describe_object(cls)} is not an accelplug Strategy subclass; "
                "register_strategies() must return Strategy subclasses"
            )
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not NAME_PATTERN.match(name) or name == "auto":
            raise MisconfigurationException(f"strategy class {cls.__qualname__} has an invalid name {name!r}")

    def _add_precision(self, cls: object, source: PluginInfo) -> None:
        if not (isinstance(cls, type) and issubclass(cls, NumericPrecision)):
            raise MisconfigurationException(
                f"{_describe_object(cls)} is not an accelplug NumericPrecision subclass; "
                "register_precisions() must return NumericPrecision subclasses"
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

    def _add_environment(self, cls: object, source: PluginInfo) -> None:
        if isinstance(cls, Deferred):
            priority = cls.detect_priority
            if isinstance(priority, bool) or not isinstance(priority, int):
                raise MisconfigurationException(
                    f"{cls!r} declares detect_priority={priority!r}; a cluster environment declared by name needs "
                    "an int (torchrun is 400, Slurm 300, LSF 200, MPI 100)"
                )
            self._declare(self._environments, cls, source, "cluster environment")
            return
        self._check_environment(cls)
        assert isinstance(cls, type) and issubclass(cls, ClusterEnvironment)
        self._add_class(self._environments, cls, source, "cluster environment", self._environment)

    @staticmethod
    def _check_environment(cls: object) -> None:
        if isinstance(cls, ClusterEnvironment):
            kind = type(cls).__qualname__
            raise MisconfigurationException(
                f"{_describe_object(cls)} is an instance; cluster environments are registered as classes: "
                f"register_cluster_environments() returns [{kind}]"
            )
        if not (isinstance(cls, type) and issubclass(cls, ClusterEnvironment)):
            raise MisconfigurationException(
                f"{_describe_object(cls)} is not an accelplug ClusterEnvironment subclass; "
                "register_cluster_environments() must return ClusterEnvironment subclasses"
            )
        if inspect.isabstract(cls):
            missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
            raise MisconfigurationException(
                f"cluster environment class {cls.__qualname__} does not implement: {missing}"
            )
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not NAME_PATTERN.match(name) or name == "auto":
            raise MisconfigurationException(
                f"cluster environment class {cls.__qualname__} has name={name!r}; a name is a lowercase "
                "identifier such as 'slurm'"
            )
        if not isinstance(getattr(cls, "description", None), str) or not cls.description.strip():
            raise MisconfigurationException(
                f"cluster environment class {cls.__qualname__} has description={getattr(cls, 'description', None)!r}; "
                "expected one line saying what starts the processes"
            )
        priority = getattr(cls, "detect_priority", None)
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise MisconfigurationException(
                f"cluster environment class {cls.__qualname__} has detect_priority={priority!r}; expected an int "
                "(torchrun is 400, Slurm 300, LSF 200, MPI 100)"
            )

    @staticmethod
    def _add_class(
        table: dict[str, tuple[Any, PluginInfo]],
        cls: type[Strategy] | type[ClusterEnvironment],
        source: PluginInfo,
        kind: str,
        resolve: Callable[[str], type],
    ) -> None:
        """Register a checked class under its name: the same class again changes nothing, another one clashes
        (``resolve`` imports a name's declared class to tell)."""
        name = cls.name
        if name in table and (owner := resolve(name)) is not cls:
            raise MisconfigurationException(
                f"{kind} name {name!r} of {cls.__qualname__} clashes with {owner.__qualname__} already registered "
                f"by {table[name][1].describe()}; the first registration is kept"
            )
        table[name] = (cls, source)

    # ---- declarations imported on first use (``Deferred``) -----------------------------------------
    def _declare(
        self, table: dict[str, tuple[Any, PluginInfo]], declared: Deferred, source: PluginInfo, kind: str
    ) -> None:
        """Register ``declared`` under its name without importing it; a name taken by another class clashes."""
        name = declared.name
        if not isinstance(name, str) or not NAME_PATTERN.match(name) or name == "auto":
            raise MisconfigurationException(f"{kind} {declared!r} has an invalid name {name!r}")
        if name in table:
            owner, owner_source = table[name]
            if isinstance(owner, Deferred) and owner.target == declared.target:
                return
            raise MisconfigurationException(
                f"{kind} name {name!r} of {declared.target} clashes with one already registered by "
                f"{owner_source.describe()}; the first registration is kept"
            )
        table[name] = (declared, source)

    def _resolved(
        self, table: dict[str, tuple[Any, PluginInfo]], name: str, kind: str, check: Callable[[object], None]
    ) -> Any:
        """The class registered as ``name``, imported now if it was declared (``Deferred``), and kept.

        The import runs as the plugin's other code does (isolated, with the time bound, for an entry point);
        a class that fails to import, is not the kind the hook registers, or names itself otherwise than the
        declaration is reported as the plugin's failure and raises ``MisconfigurationException``.
        """
        found, source = table[name]
        if not isinstance(found, Deferred):
            return found
        outcome = self._call(source, found.load, f"import {found.target}")
        problem = None if outcome.ok else f"import {outcome.error}"
        if problem is None:
            try:
                check(outcome.value)
            except MisconfigurationException as exc:
                problem = str(exc)
        cls: Any = outcome.value
        priority = found.detect_priority  # declared for an environment only
        if problem is None and (cls.name != name or (priority is not None and cls.detect_priority != priority)):
            declared = "" if priority is None else f", detect_priority={priority!r}"
            actual = "" if priority is None else f", detect_priority={cls.detect_priority!r}"
            problem = f"{found.target} has name={cls.name!r}{actual}, not the declared name={name!r}{declared}"
        if problem is not None:
            message = f"{kind} {name!r} declared as {found!r} cannot be used: {problem}"
            self._fail(source, message)
            raise MisconfigurationException(f"{message} (registered by {source.describe()})")
        table[name] = (cls, source)
        return cls

    def _strategy(self, name: str) -> type[Strategy]:
        cls: type[Strategy] = self._resolved(self._strategies, name, "strategy", self._check_strategy)
        return cls

    def _environment(self, name: str) -> type[ClusterEnvironment]:
        cls: type[ClusterEnvironment] = self._resolved(
            self._environments, name, "cluster environment", self._check_environment
        )
        return cls

    def _detect_priority(self, name: str) -> int:
        found = self._environments[name][0]
        priority: int = found.detect_priority  # type: ignore[assignment]  # an int: checked at registration
        return priority

    # ---- queries ---------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(self._accelerators)

    def get(self, name: str) -> type[Accelerator]:
        """The accelerator class registered as ``name`` (case-insensitive)."""
        key = name.strip().lower() if isinstance(name, str) else name
        entry = self._accelerators.get(key) if isinstance(key, str) else None
        if entry is None:
            raise MisconfigurationException(
                f"You selected an invalid accelerator name: `accelerator={name!r}`. It is not a registered "
                "accelerator. Registered: "
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

    def status(self, accelerator: str | type[Accelerator]) -> AcceleratorStatus:
        """The accelerator's checked answers to the class-level queries (never raises for a broken plugin).

        An entry-point accelerator is asked once, in isolation, and the answer is kept; a built-in or
        a class registered by the program (or not registered at all) is asked now, directly.
        """
        if isinstance(accelerator, str):
            entry = self._accelerators.get(accelerator.strip().lower())
            cls = self.get(accelerator) if entry is None else entry.cls
        else:
            cls = accelerator
            entry = self._accelerators.get(getattr(cls, "name", ""))
        if entry is not None and entry.cls is cls and entry.source.entry_point:
            self._probe_entry_points()
            return self._statuses[entry.cls.name]
        source = entry.source if entry is not None and entry.cls is cls else PluginInfo(f"runtime:{cls.__module__}")
        return self._probe_directly(cls, source)

    def statuses(self) -> list[AcceleratorStatus]:
        """Every registered accelerator's status, sorted by name."""
        self._probe_entry_points()
        return [self.status(entry.cls) for entry in self.entries()]

    def misbehaving(self) -> list[AcceleratorStatus]:
        """The entry-point accelerators whose answers broke the contract (what ``"auto"`` skipped)."""
        self._probe_entry_points()
        return [status for status in self._statuses.values() if status.problem is not None]

    def _asker(self, cls: type[Accelerator], progress: list[str]) -> Callable[[], AcceleratorStatus]:
        return lambda: ask(cls, progress, self._trace)

    def _probe_directly(self, cls: type[Accelerator], source: PluginInfo) -> AcceleratorStatus:
        progress: list[str] = []
        outcome = isolation.call(self._asker(cls, progress), f"{cls.name}:probe", None)
        return self._checked(cls, source, outcome, progress)

    def _probe_entry_points(self) -> None:
        """Ask every entry-point accelerator not yet asked, all at once, each in its own worker thread.

        One deadline covers them all, so N hung plugins cost one bound, not N.
        """
        with self._status_lock:
            todo = [e for e in self._accelerators.values() if e.source.entry_point and e.cls.name not in self._statuses]
            if not todo:
                return
            progresses: list[list[str]] = [[] for _ in todo]
            pending = [
                isolation.start(self._asker(entry.cls, progress), f"{entry.cls.name}:probe")
                for entry, progress in zip(todo, progresses, strict=True)
            ]
            deadline = _clock() + self._timeout
            for entry, progress, call in zip(todo, progresses, pending, strict=True):
                outcome = call.outcome(deadline)
                if outcome.timed_out:
                    outcome = replace(outcome, error=f"{outcome.error}{_timeout_hint(self._timeout)}")
                self._statuses[entry.cls.name] = self._checked(entry.cls, entry.source, outcome, progress)

    def _checked(
        self,
        cls: type[Accelerator],
        source: PluginInfo,
        outcome: isolation.CallOutcome[AcceleratorStatus],
        progress: list[str],
    ) -> AcceleratorStatus:
        """The status from a probe's outcome; a broken contract becomes a failure and an unavailable status."""
        if outcome.ok and outcome.value is not None:
            return outcome.value.timed(outcome.seconds)
        if isinstance(outcome.exception, ContractBreach):
            problem = f"{cls.name}.{outcome.exception}"
        else:
            query = progress[-1] if progress else "is_available"
            problem = f"{cls.name}.{query}() {outcome.error}"
        self._fail(source, f"accelerator {cls.name!r} is treated as unavailable: {problem}")
        return broken(cls.name, f"{source.describe()} misbehaved: {problem}", outcome.seconds)

    def available(self) -> list[str]:
        """Names of the accelerators usable here, best first (the order ``"auto"`` uses).

        An accelerator whose plugin raises, answers nonsense or hangs is left out (and listed by
        :meth:`failures`), so ``"auto"`` falls back to the next one, the CPU at worst.
        """
        self._probe_entry_points()
        usable = [entry.cls for entry in self._accelerators.values() if self._usable(entry)]
        usable.sort(key=lambda c: (-c.auto_priority, c.name))
        return [c.name for c in usable]

    def _usable(self, entry: AcceleratorEntry) -> bool:
        if entry.source.plugin == BUILTIN_PLUGIN:
            # accelplug's own accelerators answer correctly and cheaply: the common path stays a few
            # microseconds. Anything unexpected still goes through the checked status.
            try:
                answer = entry.cls.is_available()
            except Exception:
                answer = None
            if isinstance(answer, bool):
                return answer
        return self.status(entry.cls).available

    def failures(self) -> list[PluginFailure]:
        """Plugins that could not be loaded, and those whose accelerators broke the contract when asked."""
        self._probe_entry_points()
        return list(self._failures)

    def plugins(self) -> list[PluginInfo]:
        """Plugins that loaded, built-in first."""
        return list(self._plugins)

    def register(self, cls: type[Accelerator]) -> type[Accelerator]:
        """Add an accelerator at run time; invalid classes (or an instance) raise ``MisconfigurationException``."""
        module = getattr(cls, "__module__", None) if isinstance(cls, type) else None
        self._add_accelerator(cls, PluginInfo(f"runtime:{module or 'unknown'}"))
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
        return self._strategy(key)

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

    def get_precision(self, precision: object) -> type[NumericPrecision]:
        """The precision class for a name or alias (``"bf16"``, ``16``, ``"32-true"``...)."""
        from .precision.names import normalize_precision

        return self._precisions[normalize_precision(precision, self.precision_aliases())][0]

    def can_train_in(self, precision: str, accelerator: type[Accelerator], listed: tuple[str, ...]) -> bool:
        """Whether ``accelerator`` trains in the registered ``precision``: the precision's own ``supports()``
        verdict, else whether the accelerator lists it (``listed``, its checked ``supported_precisions()``).

        A plugin precision whose ``supports()`` raises or answers something other than a bool or None
        counts as unsupported, so it cannot take a listing or a selection down with it.
        """
        try:
            verdict = self._precisions[precision][0].supports(accelerator)
        except Exception:
            return False
        if verdict is None:
            return precision in listed
        return verdict is True

    def trainable_precisions(self, accelerator: type[Accelerator], listed: tuple[str, ...]) -> tuple[str, ...]:
        """Every registered precision ``accelerator`` trains in (``bf16-true`` on the CPU, say, which the
        CPU does not list itself), in registration order."""
        return tuple(name for name in self._precisions if self.can_train_in(name, accelerator, listed))

    def register_precision(self, cls: type[NumericPrecision]) -> type[NumericPrecision]:
        self._add_precision(cls, PluginInfo(f"runtime:{getattr(cls, '__module__', 'unknown')}"))
        return cls

    # ---- cluster environments --------------------------------------------------------------------
    def environment_names(self) -> list[str]:
        """Registered cluster environments in the order :meth:`detect_environment` asks them:
        ``detect_priority``, highest first, then registration order (built-ins first)."""
        order = {name: index for index, name in enumerate(self._environments)}
        return sorted(self._environments, key=lambda n: (-self._detect_priority(n), order[n]))

    def get_environment(self, name: str) -> type[ClusterEnvironment]:
        """The cluster environment class registered as ``name`` (case-insensitive)."""
        key = name.strip().lower() if isinstance(name, str) else name
        if not isinstance(key, str) or key not in self._environments:
            names = self.environment_names()
            raise MisconfigurationException(
                f"cluster environment {name!r} is not registered. Registered: "
                f"{', '.join(repr(n) for n in names)}.{did_you_mean(name, names)}"
            )
        return self._environment(key)

    def environment_source(self, name: str) -> PluginInfo:
        """The plugin and distribution that registered cluster environment ``name``."""
        return self._environments[self.get_environment(name).name][1]

    def register_environment(self, cls: type[ClusterEnvironment]) -> type[ClusterEnvironment]:
        """Add a cluster environment at run time (trusted: its ``detect()`` is called directly)."""
        self._add_environment(cls, PluginInfo(f"runtime:{getattr(cls, '__module__', 'unknown')}"))
        return cls

    def detect_environment(self) -> type[ClusterEnvironment] | None:
        """The cluster environment that started this process, or None when none did (then the Trainer
        starts its processes itself).

        Each registered environment's ``detect()`` is asked in :meth:`environment_names` order and the
        first that answers True wins. It is asked anew on every call (the answer is the environment
        variables of the moment). An entry-point plugin's ``detect()`` runs in isolation with the
        ``ACCELPLUG_PLUGIN_TIMEOUT_S`` bound; one that raises, answers anything but a bool or does not
        return is reported (:meth:`failures`, a ``PluginLoadWarning``) and not asked again, and
        detection goes on with the next.
        """
        for name in self.environment_names():
            if name in self._broken_environments:
                continue
            declared, source = self._environments[name]
            if isinstance(declared, Deferred) and not declared.may_detect():
                continue  # none of the variables its detect() reads is set: it cannot answer True
            try:
                cls = self._environment(name)
            except MisconfigurationException:
                self._broken_environments.add(name)  # reported as the plugin's failure by _resolved
                continue
            outcome = self._call(source, cls.detect, f"{name}.detect")
            problem = outcome.error
            if problem is None and not isinstance(outcome.value, bool):
                problem = f"returned {_describe_object(outcome.value)}; expected a bool"
            if problem is not None:
                self._broken_environments.add(name)
                self._fail(source, f"cluster environment {name!r} is skipped: {name}.detect() {problem}")
                continue
            if outcome.value:
                return cls
        return None


def _plugin_entry_points() -> list[metadata.EntryPoint]:
    """The installed ``accelplug`` entry points: what ``metadata.entry_points(group="accelplug")`` returns, cheaper.

    That call parses every distribution's ``entry_points.txt`` and works out every distribution's name to skip
    a second copy of one (the first on ``sys.path`` wins), about 12 ms for 200 distributions, on every
    ``get_registry()``. Here a file without the word ``accelplug`` is skipped unparsed (a group of that name
    cannot be in it), and names are worked out only when a plugin is found, to check that no earlier copy of
    its distribution hides it, as the stdlib does.
    """
    found: list[metadata.EntryPoint] = []
    earlier: list[metadata.Distribution] = []
    for dist in metadata.distributions():
        if _mentions_project(dist) and not _hidden_by(dist, earlier):
            found.extend(dist.entry_points.select(group=hookspecs.PROJECT_NAME))
        earlier.append(dist)
    return found


_GROUP_HEADER_END = f"{hookspecs.PROJECT_NAME}]"


def _mentions_project(dist: metadata.Distribution) -> bool:
    """Whether the distribution's ``entry_points.txt`` may hold the ``[accelplug]`` group: whether it holds
    ``accelplug]``, which every line that the stdlib's parser reads as that group's header ends with. (The word
    alone is in every file that names a console script ``accelplug``, accelplug's own first, whose distribution
    name then had to be checked against every earlier one's.)

    A distribution found on ``sys.path`` (a ``PathDistribution``, nearly all of them) is a folder: its file is
    looked for with one ``stat`` and read as bytes, about half the time of ``read_text``'s ``pathlib`` path and
    its ``FileNotFoundError`` for the two thirds of distributions that have none. Other kinds are asked.
    """
    folder = getattr(dist, "_path", None)
    if not isinstance(folder, PurePath):  # a zip file's (zipfile.Path) or another finder's
        text = dist.read_text("entry_points.txt")
        return text is not None and _GROUP_HEADER_END in text
    path = os.path.join(folder, "entry_points.txt")
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as file:
            return _GROUP_HEADER_END.encode() in file.read()
    except OSError:
        return False


def _hidden_by(dist: metadata.Distribution, earlier: list[metadata.Distribution]) -> bool:
    """Whether a distribution of the same (normalized) name comes earlier on ``sys.path``."""
    name = _normalized_name(dist)
    return any(_normalized_name(other) == name for other in earlier)


def _normalized_name(dist: metadata.Distribution) -> str:
    # The stdlib's own key for "the same distribution" (read from the folder's name where it can); the
    # public name, normalized as PEP 503 says, where a Distribution lacks it.
    name = getattr(dist, "_normalized_name", None)
    return name if isinstance(name, str) else re.sub(r"[-_.]+", "-", dist.name).lower().replace("-", "_")


_registry: AcceleratorRegistry | None = None
#: The registry being loaded, for plugin code that asks for it while it loads (see get_registry).
_loading: AcceleratorRegistry | None = None
_lock = threading.Lock()


def get_registry() -> AcceleratorRegistry:
    """The process-wide registry; plugins load on the first call, never at import.

    A plugin that calls ``get_registry()`` while it is being loaded (at import, or in its hook, e.g. to
    look at what is already registered) gets the registry being built instead of waiting for it
    forever.
    """
    global _registry, _loading
    if _registry is None:
        if _loading is not None and isolation.in_plugin_call():
            return _loading
        with _lock:
            if _registry is None:
                registry = AcceleratorRegistry()
                _loading = registry
                try:
                    registry.load()
                finally:
                    _loading = None
                _registry = registry
    return _registry


def reset_registry() -> None:
    """Forget the loaded registry so the next ``get_registry()`` reloads (tests, changed env vars)."""
    global _registry
    with _lock:
        _registry = None
