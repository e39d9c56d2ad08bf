"""Lightning's dict-shaped registries of names (``StrategyRegistry``, ``AcceleratorRegistry``), over accelplug's.

Lightning keeps ``strategy=``/``accelerator=`` names in dicts: ``StrategyRegistry["ddp_spawn"]`` is
``{"strategy": DDPStrategy, "init_params": {"start_method": "spawn"}, "description": ...}``, ``register(name, cls,
description, override, **init_params)`` adds a name that ``Trainer(strategy=name)`` builds as
``cls(**init_params)``, and ``get(name)`` builds one. accelplug's names live in its plugin registry
(:mod:`accelplug.registry`), one class per name; these views show that registry in Lightning's shape, and
registering through them adds the name to accelplug's registry (a subclass named after it whose constructor
starts from ``init_params``), so the Trainer and Fabric accept it as they accept a plugin's.

The back ends' names (``deepspeed_stage_2``, ``xla``...) are listed with Lightning's arguments even where their
plugin is not installed, each standing for :mod:`accelplug.backends`' class (building one names the plugin).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from . import backends
from .accelerator import Accelerator
from .errors import MisconfigurationException
from .registry import get_registry
from .strategies.base import Strategy
from .strategies.ddp import DDPStrategy

__all__ = [
    "ACCELERATOR_REGISTRY",
    "STRATEGY_REGISTRY",
    "AcceleratorRegistry",
    "LightningAcceleratorRegistry",
    "LightningStrategyRegistry",
    "StrategyRegistry",
]


def _entry(kind: str, cls: type, description: str | None, init_params: dict[str, Any]) -> dict[str, Any]:
    return {kind: cls, "description": description if description is not None else cls.__name__,
            "init_params": init_params}  # fmt: skip


def _already(name: str) -> MisconfigurationException:
    return MisconfigurationException(f"'{name}' is already present in the registry. HINT: Use `override=True`.")


class _NameView(dict[str, dict[str, Any]]):
    """A dict of names kept in step with accelplug's registry: read afresh whenever it is looked at."""

    kind: ClassVar[str]

    def __init__(self) -> None:
        super().__init__()
        #: names registered through this view, with what Lightning's registry would hold for them
        self._own: dict[str, dict[str, Any]] = {}

    def _entries(self) -> dict[str, dict[str, Any]]:
        raise NotImplementedError

    def _refresh(self) -> None:
        dict.clear(self)
        dict.update(self, self._entries())
        dict.update(self, self._own)

    def __getitem__(self, name: str) -> dict[str, Any]:
        self._refresh()
        return dict.__getitem__(self, name)

    def __contains__(self, name: object) -> bool:
        self._refresh()
        return dict.__contains__(self, name)

    def __iter__(self) -> Iterator[str]:
        self._refresh()
        return iter(list(dict.keys(self)))

    def __len__(self) -> int:
        self._refresh()
        return dict.__len__(self)

    def keys(self) -> Any:
        self._refresh()
        return dict.keys(self)

    def values(self) -> Any:
        self._refresh()
        return dict.values(self)

    def items(self) -> Any:
        self._refresh()
        return dict.items(self)

    def __repr__(self) -> str:
        self._refresh()
        return dict.__repr__(self)

    def __str__(self) -> str:
        return f"Registered {self.kind.title()}s: {', '.join(self.keys())}"

    def _build(self, name: str, default: Any, **kwargs: Any) -> Any:
        self._refresh()
        if name not in dict.keys(self):
            if default is not None:
                return default
            raise KeyError(f"{self.kind.title()} {name!r} is not registered; registered: {', '.join(self)}.")
        entry = dict.__getitem__(self, name)
        return entry[self.kind](**{**entry["init_params"], **kwargs})


def _registered_subclass(base: type, name: str, init_params: dict[str, Any], description: str | None) -> type:
    """``base`` under a new registered ``name``, its constructor starting from ``init_params``; a strategy runs
    wherever ``base`` does (an accelerator lists the names of the strategies it supports, not this new one)."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        base.__init__(self, *args, **{**init_params, **kwargs})  # type: ignore[misc]

    namespace: dict[str, Any] = {"name": name, "__init__": __init__, "__module__": base.__module__,
                                 "__doc__": base.__doc__}  # fmt: skip
    if issubclass(base, Strategy):
        namespace["supports"] = classmethod(lambda cls, accelerator: _base_supports(base, accelerator))
    if description is not None:
        namespace["description"] = description
    return type(base.__name__, (base,), namespace)


def _base_supports(base: type[Strategy], accelerator: type[Accelerator]) -> bool:
    verdict = base.supports(accelerator)
    return base.name in accelerator.supported_strategies() if verdict is None else verdict


class LightningStrategyRegistry(_NameView):
    """Lightning's ``StrategyRegistry``: every ``strategy=`` name with its class and arguments."""

    kind = "strategy"

    def _entries(self) -> dict[str, dict[str, Any]]:
        registry = get_registry()
        found: dict[str, dict[str, Any]] = {}
        for name in registry.strategy_names():
            found[name] = self._describe(registry.get_strategy(name))
        for name, (class_name, init_params) in backends.BACKEND_STRATEGY_NAMES.items():
            if name not in found:
                found[name] = _entry("strategy", getattr(backends, class_name), None, dict(init_params))
        return found

    @staticmethod
    def _describe(cls: type[Strategy]) -> dict[str, Any]:
        """A registered class as Lightning lists it: a DDP preset is ``DDPStrategy`` with the preset's arguments."""
        description = getattr(cls, "description", None) or cls.__name__
        if issubclass(cls, DDPStrategy) and cls.__module__ == DDPStrategy.__module__:
            params: dict[str, Any] = {}
            if cls.preset_find_unused is not None:
                params["find_unused_parameters"] = cls.preset_find_unused
            params["start_method"] = cls.preset_start_method
            return _entry("strategy", DDPStrategy, description, params)
        return _entry("strategy", cls, description, {})

    def register(
        self,
        name: str,
        strategy: Any = None,
        description: str | None = None,
        override: bool = False,
        **init_params: Any,
    ) -> Any:
        """Add ``name`` (``Trainer(strategy=name)`` then builds ``strategy(**init_params)``); as a decorator when
        ``strategy`` is left out."""
        if not (override or name not in self):
            raise _already(name)

        def add(cls: type[Strategy]) -> type[Strategy]:
            if not (isinstance(cls, type) and issubclass(cls, Strategy)):
                raise MisconfigurationException(f"StrategyRegistry.register({name!r}, {cls!r}): not a Strategy class.")
            get_registry().register_strategy(_registered_subclass(cls, name, dict(init_params), description))
            self._own[name] = _entry("strategy", cls, description, dict(init_params))
            return cls

        return add(strategy) if strategy is not None else add

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        """A strategy built from the arguments registered with ``name`` (``default`` when not registered)."""
        return self._build(name, default)

    def available_strategies(self) -> list[str]:
        return list(self.keys())

    def remove(self, name: str) -> None:
        """Forget a name registered through this view."""
        self._own.pop(name, None)


class LightningAcceleratorRegistry(_NameView):
    """Lightning's ``AcceleratorRegistry``: every ``accelerator=`` name with its class."""

    kind = "accelerator"

    def _entries(self) -> dict[str, dict[str, Any]]:
        registry = get_registry()
        found = {name: self._describe(registry.get(name)) for name in registry.names()}
        if "tpu" not in found:  # Lightning lists its XLA accelerator as "tpu"
            found["tpu"] = _entry("accelerator", backends.XLAAccelerator, None, {})
        return found

    @staticmethod
    def _describe(cls: type[Accelerator]) -> dict[str, Any]:
        return _entry("accelerator", cls, getattr(cls, "description", None) or cls.__name__, {})

    def register(
        self,
        name: str,
        accelerator: Any = None,
        description: str = "",
        override: bool = False,
        **init_params: Any,
    ) -> Callable[[type[Accelerator]], type[Accelerator]] | type[Accelerator]:
        """Add ``name`` for ``accelerator``; as a decorator when ``accelerator`` is left out."""
        if not (override or name not in self):
            raise _already(name)

        def add(cls: type[Accelerator]) -> type[Accelerator]:
            if not (isinstance(cls, type) and issubclass(cls, Accelerator)):
                raise MisconfigurationException(
                    f"AcceleratorRegistry.register({name!r}, {cls!r}): not an Accelerator class."
                )
            registered = cls if getattr(cls, "name", None) == name else _registered_subclass(cls, name, {}, None)
            get_registry().register(registered)
            self._own[name] = _entry("accelerator", cls, description or cls.__name__, dict(init_params))
            return cls

        return add(accelerator) if accelerator is not None else add

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        """An accelerator built from the arguments registered with ``name`` (``default`` when not registered)."""
        return self._build(name, default)

    def available_accelerators(self) -> set[str]:
        return set(self.keys())

    def remove(self, name: str) -> None:
        """Forget a name registered through this view."""
        self._own.pop(name, None)


#: Lightning's ``lightning.pytorch.strategies.StrategyRegistry``; Fabric's ``STRATEGY_REGISTRY`` is the same view
#: (one registry of names serves the Trainer and Fabric here).
StrategyRegistry = STRATEGY_REGISTRY = LightningStrategyRegistry()
#: Lightning's ``AcceleratorRegistry`` (``lightning.pytorch.accelerators``) and Fabric's ``ACCELERATOR_REGISTRY``.
AcceleratorRegistry = ACCELERATOR_REGISTRY = LightningAcceleratorRegistry()
