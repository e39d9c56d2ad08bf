"""The one way a module is made ready to train, shared by the Trainer and a custom loop (``accelplug.fabric``).

Two steps, in this order, and neither needs a Trainer object:

1. :func:`setup_environment`: this process takes its place in the run on its device (for DDP and FSDP,
   the process group); the accelerator prepares the device.
2. :func:`prepare_module`: the strategy's preparation order (:meth:`Strategy.setup_module_and_optimizers`)::

       SyncBatchNorm (when asked, distributed only) -> precision conversion (dtype) -> device
       -> strategy wrap (DDP / sharding) -> optional torch.compile -> configure_optimizers()
       -> the strategy's optimizer setup

The Trainer calls both from :mod:`accelplug.trainer._setup`, with its setup hooks in between (Lightning's
order: ``setup``, ``configure_model``, then the preparation). A custom loop calls the same two functions
and gets the same :class:`~accelplug.strategies.prepared.PreparedModule`; the batches it feeds that
module go through :func:`accelplug.data.batches.make_transfer` and its loaders through
:func:`accelplug.data.loaders.prepare_loader`, as the Trainer's do. Anything that changes how a module
is prepared changes here or in the strategy, never in one caller only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..precision.base import NumericPrecision
    from .base import Strategy
    from .prepared import PreparedModule

__all__ = ["prepare_module", "setup_environment"]


def setup_environment(strategy: Strategy, accelerator: Accelerator, device: torch.device) -> None:
    """Step 1: bring this process up on ``device`` under ``strategy`` (once per fit/validate/test/predict)."""
    strategy.setup_environment(accelerator, device)


def prepare_module(
    strategy: Strategy,
    module: torch.nn.Module,
    precision: NumericPrecision,
    *,
    with_optimizers: bool = True,
    compile_options: dict[str, Any] | None = None,
    sync_batchnorm: bool = False,
    layer_sync: Callable[[torch.nn.Module], torch.nn.Module] | None = None,
) -> PreparedModule:
    """Step 2: ``module`` converted, placed, wrapped, compiled, and (``with_optimizers``) its optimizers set up.

    ``compile_options`` are ``torch.compile`` keyword arguments (None: no compiling); ``sync_batchnorm``
    turns BatchNorm layers into SyncBatchNorm when the strategy runs several processes, and ``layer_sync``
    (a ``LayerSync`` plugin's ``apply``) rewrites the module's layers the plugin's way, also only then.
    """
    if sync_batchnorm and layer_sync is None:
        layer_sync = torch.nn.SyncBatchNorm.convert_sync_batchnorm
    if layer_sync is not None and strategy.is_distributed:
        module = layer_sync(module)
    return strategy.setup_module_and_optimizers(
        module, precision, compile_options=compile_options, with_optimizers=with_optimizers
    )
