"""Lightning's strategy classes that a plugin distribution gives accelplug, importable by Lightning's name.

``from lightning.fabric.strategies import DeepSpeedStrategy`` works in Lightning whether or not DeepSpeed is
installed; the error comes when the class is instantiated. The same holds here: reading a name of
:data:`FROM_PLUGINS` from this module gives the registered plugin's class where its distribution is installed,
and otherwise a stand-in whose instantiation raises :class:`StrategyNotInstalledError` (an ``ImportError``, as
Lightning's) naming the distribution to install. Lightning's paths (``accelplug.fabric.strategies``,
``accelplug.pytorch.strategies``) import the names from here. It sits above ``strategies/`` because it asks the
registry, which imports the strategy classes.
"""

from __future__ import annotations

from typing import Any

from ..errors import MisconfigurationException
from ..strategies.base import Strategy

__all__ = ["FROM_PLUGINS", "StrategyNotInstalledError"]

#: Lightning's class name -> (the strategy's registered name, the distribution that provides it).
FROM_PLUGINS = {"DeepSpeedStrategy": ("deepspeed", "accelplug-deepspeed")}
_MISSING: dict[str, type[Strategy]] = {}


class StrategyNotInstalledError(MisconfigurationException, ModuleNotFoundError):
    """A strategy class whose plugin distribution is not installed was instantiated (an ``ImportError``, as
    Lightning raises where the back end is missing)."""


def __getattr__(name: str) -> Any:
    """The plugin's class for a name of :data:`FROM_PLUGINS`, asked of the registry on every read (so a plugin
    installed later is found), or the stand-in."""
    if name not in FROM_PLUGINS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ..registry import get_registry

    strategy, distribution = FROM_PLUGINS[name]
    registry = get_registry()
    if strategy in registry.strategy_names():
        return registry.get_strategy(strategy)
    return _MISSING.setdefault(name, _missing_strategy(name, strategy, distribution))


def _missing_strategy(name: str, strategy: str, distribution: str) -> type[Strategy]:
    """A stand-in importable by Lightning's name that says, when instantiated, which distribution provides it."""

    def refuse(self: Strategy, *args: Any, **kwargs: Any) -> None:
        raise StrategyNotInstalledError(
            f"To use the `{name}`, install the plugin distribution that provides it: pip install {distribution} "
            f"(then strategy={strategy!r} works too). Installed strategies: `accelplug list`."
        )

    doc = f"Lightning's ``{name}``, which {distribution} provides; it is not installed here."
    return type(name, (Strategy,), {"__init__": refuse, "__module__": "accelplug.fabric.strategies", "__doc__": doc})
