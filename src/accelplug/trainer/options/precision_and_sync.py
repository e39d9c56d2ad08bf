"""What a precision or layer-sync object in ``plugins=`` means beside ``precision=`` and ``sync_batchnorm=``.

Lightning's rules: a precision plugin and an explicit ``precision=`` argument are refused together (even
when they agree, since one of them would be ignored); ``sync_batchnorm=True`` is a ``TorchSyncBatchNorm``,
and beside another ``LayerSync`` it is refused. A precision plugin's ``connect`` and ``convert_input``, where
a subclass rewrote them, are called where Lightning calls them: once the optimizers exist, and on each batch.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import MisconfigurationException
from ...overrides import overrides
from ...strategies.layer_sync import LayerSync, TorchSyncBatchNorm

if TYPE_CHECKING:
    from ...precision.base import NumericPrecision
    from ...strategies.prepared import PreparedModule

__all__ = ["connect_precision", "layer_sync_from", "plugin_transfer"]


def layer_sync_from(plugin: LayerSync | None, sync_batchnorm: bool) -> LayerSync | None:
    """The layer sync a distributed run applies: the plugin's, or ``TorchSyncBatchNorm`` for ``sync_batchnorm``."""
    if plugin is not None and sync_batchnorm and not isinstance(plugin, TorchSyncBatchNorm):
        raise MisconfigurationException(
            f"You set `Trainer(sync_batchnorm=True)` and provided a `LayerSync` plugin (`{type(plugin).__name__}`), "
            "but this is not allowed. Choose one or the other."
        )
    if plugin is None and sync_batchnorm:
        return TorchSyncBatchNorm()
    return plugin


def connect_precision(precision: NumericPrecision, prepared: PreparedModule) -> None:
    """A plugin's own ``connect(model, optimizers, lr_schedulers)``, once they exist; the optimizers and
    scheduler configs it hands back are the ones the run steps (the model it returns must be the same one)."""
    if not _rewritten(precision, "connect") or prepared.optim is None:
        return
    optim = prepared.optim
    connect = precision.connect  # type: ignore[attr-defined]
    returned = connect(prepared.module, list(optim.optimizers), list(optim.schedulers))
    if not (isinstance(returned, tuple) and len(returned) == 3):
        raise MisconfigurationException(
            f"{type(precision).__name__}.connect() returned {returned!r}; expected (model, optimizers, lr_schedulers)."
        )
    model, optimizers, schedulers = returned
    if model is not prepared.module:
        raise MisconfigurationException(
            f"{type(precision).__name__}.connect() returned another model; accelplug's Trainer keeps the module it "
            "prepared: wrap the optimizers there, and the model in configure_model()."
        )
    optim.optimizers[:] = list(optimizers)
    optim.schedulers[:] = list(schedulers)


def plugin_transfer(precision: NumericPrecision, transfer: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The batch move, then the plugin's own ``convert_input`` where a subclass rewrote it (Lightning's order)."""
    if not _rewritten(precision, "convert_input"):
        return transfer
    convert = precision.convert_input

    def move_and_convert(batch: Any) -> Any:
        return convert(transfer(batch))

    return move_and_convert


def _rewritten(precision: NumericPrecision, name: str) -> bool:
    """Whether ``name`` on a precision plugin is a user's own, not one of accelplug's plugin defaults."""
    if "accelplug.precision.lightning" not in sys.modules:  # no plugin precision exists before its classes load
        return False
    from ...precision.lightning.base import is_plugin

    return is_plugin(precision) and overrides(precision, name)
