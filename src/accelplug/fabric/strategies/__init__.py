"""``accelplug.fabric.strategies``: the strategies a Fabric script imports, as ``lightning.fabric.strategies``.

They are accelplug's own strategy classes (the Trainer's), so a strategy from a plugin distribution works the
same way. ``FSDPStrategy`` here saves sharded checkpoints by default, as Lightning Fabric's does; pass
``state_dict_type="full"`` for one file that loads anywhere.
"""

from __future__ import annotations

from typing import Any

from ...errors import MisconfigurationException, did_you_mean
from ...strategies.base import Strategy
from ...strategies.ddp import DDPStrategy
from ...strategies.fsdp import _FSDP1_ONLY as _FSDP1_OPTIONS
from ...strategies.fsdp import FSDPStrategy as _FSDPStrategy
from ...strategies.fsdp import warn_activation_checkpointing_deprecated
from ...strategies.single_device import SingleDeviceStrategy

__all__ = ["DDPStrategy", "DeepSpeedStrategy", "FSDPStrategy", "SingleDeviceStrategy", "Strategy"]

#: Lightning's strategy classes that a plugin distribution gives accelplug: class name -> (the strategy's
#: registered name, the distribution to install). Importing the name always works, as in Lightning.
_FROM_PLUGINS = {"DeepSpeedStrategy": ("deepspeed", "accelplug-deepspeed")}
_MISSING: dict[str, type[Strategy]] = {}


def __getattr__(name: str) -> Any:
    if name not in _FROM_PLUGINS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ...registry import get_registry

    strategy, distribution = _FROM_PLUGINS[name]
    registry = get_registry()
    if strategy in registry.strategy_names():
        return registry.get_strategy(strategy)
    return _MISSING.setdefault(name, _missing_strategy(name, strategy, distribution))


class StrategyNotInstalledError(MisconfigurationException, ModuleNotFoundError):
    """A strategy class whose plugin distribution is not installed was instantiated (an ``ImportError``, as
    Lightning raises where the back end is missing)."""


def _missing_strategy(name: str, strategy: str, distribution: str) -> type[Strategy]:
    """A stand-in importable by Lightning's name that says, when instantiated, which distribution provides it."""

    def refuse(self: Strategy, *args: Any, **kwargs: Any) -> None:
        raise StrategyNotInstalledError(
            f"To use the `{name}`, install the plugin distribution that provides it: pip install {distribution} "
            f"(then strategy={strategy!r} works too). Installed strategies: `accelplug list`."
        )

    doc = f"Lightning's ``{name}``, which {distribution} provides; it is not installed here."
    return type(name, (Strategy,), {"__init__": refuse, "__module__": __name__, "__doc__": doc})


_OPTIONS = ("activation_checkpointing_policy", "cpu_offload", "sharding_strategy", "state_dict_type")


class FSDPStrategy(_FSDPStrategy):
    """accelplug's FSDP2 strategy with Lightning Fabric's defaults: ``state_dict_type="sharded"``.

    Lightning's FSDP1 options ``use_orig_params=True`` and ``limit_all_gathers=True`` are accepted (FSDP2 always
    does what they ask), ``activation_checkpointing`` with Lightning's deprecation; any other option this strategy
    does not have is refused by name.
    """

    def __init__(self, auto_wrap_policy: Any = None, *, state_dict_type: str = "sharded", **options: Any) -> None:
        older = options.pop("activation_checkpointing", None)
        if older is not None:
            if options.get("activation_checkpointing_policy") is not None:  # both: the strategy refuses that
                options["activation_checkpointing"] = older
            else:
                warn_activation_checkpointing_deprecated(older, stacklevel=3)
                options["activation_checkpointing_policy"] = older
        # torch FSDP1 options Lightning passes through: the strategy accepts those FSDP2 always honours, explains others
        known = (*_OPTIONS, *_FSDP1_OPTIONS, "activation_checkpointing")
        unknown = [name for name in options if name not in known]
        if unknown:
            accepted = ["auto_wrap_policy", *_OPTIONS]
            raise MisconfigurationException(
                f"FSDPStrategy({unknown[0]}=...) is not an option of accelplug's FSDP strategy (torch FSDP2). "
                f"Accepted: {', '.join(accepted)}.{did_you_mean(unknown[0], accepted)}"
            )
        super().__init__(auto_wrap_policy=auto_wrap_policy, state_dict_type=state_dict_type, **options)
