"""accelplug's accelerators inside Lightning itself: one plugin, three audiences.

A hardware maker writes one accelplug plugin (an ``Accelerator`` subclass behind the ``register_accelerators``
hook) and reaches accelplug's Trainer and Fabric. With this module, Lightning 2.x's own ``Trainer`` and
``Fabric`` accept the same names, through nothing but Lightning's public extension points: the ``Accelerator``
base class of ``lightning.pytorch.accelerators`` and the registries Lightning's connectors look names up in
(``lightning.pytorch.accelerators.AcceleratorRegistry`` for the Trainer, ``lightning.fabric.accelerators.
ACCELERATOR_REGISTRY`` for Fabric, and the two strategy registries). The opt-in is one line::

    from accelplug.interop.lightning_accelerators import register_with_lightning

    register_with_lightning()  # every accelplug accelerator name, built-in or from a plugin
    trainer = lightning.Trainer(accelerator="torch_accelerator", devices=1)
    fabric = lightning.Fabric(accelerator="torch_accelerator", devices=1, strategy="single_torch_accelerator")

What Lightning 2.6 decides itself, and how this module meets it:

* **Names Lightning already has** (``cpu``, ``cuda``, ``mps``, ``tpu``) stay Lightning's own; only the others
  are added, so nothing Lightning users rely on changes.
* **One device.** With ``strategy="auto"`` and one device, Lightning's connector gives every accelerator it
  does not know by type a ``SingleDeviceStrategy`` on the CPU. The Trainer asks the accelerator's
  ``setup(trainer)`` before the model moves, and there the adapter points that strategy at the accelerator's
  device 0, so ``Trainer(accelerator=NAME, devices=1)`` trains on the device. Fabric has no such step: each
  accelerator ``NAME`` also gets a registered strategy ``"single_NAME"`` (Lightning's own spelling, as
  ``"single_xla"``), and ``Fabric(accelerator=NAME)`` left at ``"auto"`` is refused when it launches (at
  ``setup_device``, before any step) with that remedy, rather than trained on the CPU unnoticed.
* **Several devices** go to Lightning's ``ddp`` with the accelerator's own devices, when the accelerator lists
  ``ddp`` among its strategies; otherwise the run is refused naming the strategies it supports.
* **Mixed precision.** Lightning builds its ``MixedPrecision`` for ``"cuda"`` on any accelerator it does not
  know; the Trainer refuses that when the run starts, naming ``plugins=[MixedPrecision(precision, device=...)]``
  with the accelerator's device type, and refuses an autocast dtype the backend lacks (as
  :mod:`accelplug.hardware.capabilities` finds it) with the reason.

Every class-level answer comes from accelplug's registry (``get_registry().status(cls)``: a plugin's answers are
asked once, in isolation, and checked), so a plugin misbehaves no worse inside Lightning than inside accelplug.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from ..accelerator import Accelerator
from ..errors import MisconfigurationException
from ..hardware.capabilities import capabilities
from ..registry import get_registry
from ..selection import select

if TYPE_CHECKING:
    from lightning.pytorch.accelerators import Accelerator as LightningAccelerator

__all__ = ["fabric_accelerator", "lightning_accelerator", "register_with_lightning", "single_device_strategy_name"]

#: Adapters made so far, by accelplug accelerator class: the same class each time one is asked for.
_ADAPTERS: dict[type[Accelerator], type[LightningAccelerator]] = {}
_FABRIC_ADAPTERS: dict[type[Accelerator], type[LightningAccelerator]] = {}


def single_device_strategy_name(name: str) -> str:
    """The Lightning strategy name that runs accelerator ``name`` on one device (``"single_" + name``)."""
    return f"single_{name}"


def _host_for_foreign(cls: type[Accelerator], device: torch.device) -> bool:
    """Whether Lightning placed a run of a non-CPU accelerator on the CPU (its connector's choice for one device of
    an accelerator it does not know by type)."""
    return device.type == "cpu" and torch.device(cls.device_type).type != "cpu"


def _move_single_device_strategy(cls: type[Accelerator], strategy: Any) -> None:
    """Point Lightning's single-device strategy at this accelerator's first device, before the model moves.

    Lightning's ``SingleDeviceStrategy`` keeps its device in ``_root_device`` and has no public setter; the
    connector left it on the CPU only because it does not know the accelerator by type.
    """
    from lightning.pytorch.strategies import SingleDeviceStrategy

    if not isinstance(strategy, SingleDeviceStrategy) or strategy.root_device.type != "cpu":
        _refuse_foreign_device(cls, strategy.root_device)
        return
    strategy._root_device = cls.get_device(0)


def _refuse_foreign_device(cls: type[Accelerator], device: torch.device) -> None:
    if device.type == torch.device(cls.device_type).type:
        return
    raise MisconfigurationException(
        f"Lightning placed this run of accelerator {cls.name!r} on {str(device)!r}: with strategy='auto' and one "
        f"device, Lightning 2.x gives an accelerator it does not know by type a single-device strategy on the CPU. "
        f"Pass strategy={single_device_strategy_name(cls.name)!r} (registered by accelplug's register_with_lightning) "
        f"to run on {cls.device_type!r}, or accelerator='cpu' to train on the CPU."
    )


def _check_precision(cls: type[Accelerator], precision_plugin: Any) -> None:
    """Refuse a Lightning ``MixedPrecision`` whose autocast is for another device type, or in a dtype the
    backend's autocast does not take."""
    from lightning.pytorch.plugins.precision import MixedPrecision

    if not isinstance(precision_plugin, MixedPrecision):
        return
    precision = precision_plugin.precision
    if precision_plugin.device != cls.device_type:
        raise MisconfigurationException(
            f"precision={precision!r} with accelerator {cls.name!r}: Lightning 2.x made its MixedPrecision for "
            f"{precision_plugin.device!r}, not for {cls.device_type!r}. Pass "
            f"plugins=[MixedPrecision({precision!r}, device={cls.device_type!r})] "
            "(from lightning.pytorch.plugins.precision) instead of precision=."
        )
    dtype = torch.bfloat16 if precision == "bf16-mixed" else torch.float16
    lacking = capabilities(cls.device_type).autocast_refusal(dtype)
    if lacking is not None and cls.device_type != "cpu":
        raise MisconfigurationException(f"precision={precision!r} cannot run on {cls.name!r}: {lacking}.")


def _check_strategy(cls: type[Accelerator], strategy: Any) -> None:
    from lightning.pytorch.strategies import DDPStrategy

    if isinstance(strategy, DDPStrategy) and "ddp" not in get_registry().status(cls).strategies:
        supported = get_registry().status(cls).strategies
        raise MisconfigurationException(
            f"accelerator {cls.name!r} cannot run Lightning's {type(strategy).__name__}: it supports "
            f"{', '.join(repr(s) for s in supported)}. Use devices=1 with "
            f"strategy={single_device_strategy_name(cls.name)!r}."
        )


def _setup_run(adapter: Any, cls: type[Accelerator], trainer: Any) -> None:
    """Refuse, before the model moves, a strategy or precision Lightning chose that cannot run here; and give
    Lightning's single-device strategy this accelerator's device where its connector chose the CPU."""
    if adapter._placed_on_host:
        _move_single_device_strategy(cls, trainer.strategy)
        adapter._placed_on_host = False
        adapter.accelerator.setup_device(trainer.strategy.root_device)
    _check_strategy(cls, trainer.strategy)
    _check_precision(cls, trainer.precision_plugin)


def _setup_device(adapter: Any, cls: type[Accelerator], device: torch.device) -> None:
    if _host_for_foreign(cls, device):
        # The Trainer's strategy sets the environment up before the accelerator's setup(trainer), which moves it;
        # Fabric has no such step (:func:`fabric_accelerator`'s adapter refuses here instead).
        adapter._placed_on_host = True
        return
    _refuse_foreign_device(cls, device)
    adapter.accelerator.setup_device(device)


def lightning_accelerator(cls: type[Accelerator]) -> type[LightningAccelerator]:
    """A subclass of Lightning's ``Accelerator`` that runs accelplug accelerator ``cls`` (made once per class)."""
    found = _ADAPTERS.get(cls)
    if found is not None:
        return found
    from lightning.pytorch.accelerators import Accelerator as LightningAccelerator

    def status() -> Any:
        return get_registry().status(cls)

    class Adapter(LightningAccelerator):
        __doc__ = f"accelplug's {cls.name!r} accelerator ({cls.description or cls.__qualname__}) as Lightning sees it."

        accelplug_accelerator = cls

        def __init__(self) -> None:
            super().__init__()
            self.accelerator = cls()

        #: Lightning's Trainer put this run on the CPU (``strategy="auto"``, one device): :meth:`setup` moves it.
        _placed_on_host = False

        # ---- per run --------------------------------------------------------------------------------
        def setup(self, trainer: Any) -> None:
            _setup_run(self, cls, trainer)

        def setup_device(self, device: torch.device) -> None:
            _setup_device(self, cls, device)

        def teardown(self) -> None:
            self.accelerator.teardown()

        def get_device_stats(self, device: Any) -> dict[str, Any]:
            return dict(self.accelerator.get_device_stats(torch.device(device)))

        # ---- what Lightning's connectors ask ----------------------------------------------------------
        @staticmethod
        def parse_devices(devices: Any) -> list[int]:
            """accelplug's rules for ``devices`` (a bad value raises ``MisconfigurationException`` naming it)."""
            return list(select(accelerator=cls, devices=devices).device_ids)

        @staticmethod
        def get_parallel_devices(devices: Any) -> list[torch.device]:
            return [cls.get_device(index) for index in devices]

        @staticmethod
        def auto_device_count() -> int:
            return int(status().auto_device_count)

        @staticmethod
        def is_available() -> bool:
            return bool(status().available)

        @staticmethod
        def name() -> str:
            return cls.name

    Adapter.__name__ = Adapter.__qualname__ = f"Lightning{cls.__name__}"
    _ADAPTERS[cls] = Adapter
    return Adapter


def fabric_accelerator(cls: type[Accelerator]) -> type[LightningAccelerator]:
    """What Lightning's Fabric registry gets for ``cls``: the Trainer's adapter, refusing the CPU placement that
    Fabric's connector gives an accelerator it does not know (Fabric has no later step that could move it)."""
    found = _FABRIC_ADAPTERS.get(cls)
    if found is not None:
        return found
    base: Any = lightning_accelerator(cls)

    class FabricAdapter(base):  # type: ignore[misc, valid-type]
        def setup_device(self, device: torch.device) -> None:
            _refuse_foreign_device(cls, device)
            self.accelerator.setup_device(device)

    FabricAdapter.__name__ = FabricAdapter.__qualname__ = base.__name__
    _FABRIC_ADAPTERS[cls] = FabricAdapter
    return FabricAdapter


def register_with_lightning() -> list[str]:
    """Add every accelplug accelerator Lightning does not already have to Lightning's Trainer and Fabric
    registries, with its single-device strategy; the names added (again: none). Needs Lightning installed."""
    try:
        from lightning.fabric.accelerators import ACCELERATOR_REGISTRY
        from lightning.fabric.strategies import STRATEGY_REGISTRY
        from lightning.fabric.strategies.single_device import SingleDeviceStrategy as FabricSingleDevice
        from lightning.pytorch.accelerators import AcceleratorRegistry
        from lightning.pytorch.strategies import SingleDeviceStrategy, StrategyRegistry
    except ImportError as exc:
        raise MisconfigurationException(
            f"register_with_lightning() needs the lightning package, which could not be imported ({exc}). "
            "Install it (pip install lightning) or use accelplug's own Trainer and Fabric."
        ) from exc
    added: list[str] = []
    registry = get_registry()
    for entry in registry.entries():
        cls = entry.cls
        if cls.name in AcceleratorRegistry or cls.name in ACCELERATOR_REGISTRY:
            continue  # Lightning's own accelerator keeps its name
        adapter = lightning_accelerator(cls)
        description = f"accelplug {cls.name!r}: {cls.description}".rstrip(": ")
        AcceleratorRegistry.register(cls.name, adapter, description=description)
        ACCELERATOR_REGISTRY.register(cls.name, fabric_accelerator(cls), description=description)
        strategy = single_device_strategy_name(cls.name)
        where = f"accelplug {cls.name!r} on one device"
        if strategy not in StrategyRegistry:
            StrategyRegistry.register(strategy, SingleDeviceStrategy, description=where, device=cls.get_device(0))
        if strategy not in STRATEGY_REGISTRY:
            STRATEGY_REGISTRY.register(strategy, FabricSingleDevice, description=where, device=cls.get_device(0))
        added.append(cls.name)
    return added
