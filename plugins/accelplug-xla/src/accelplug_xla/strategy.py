"""``strategy="single_xla"``: one XLA device in this process (Lightning's name for the same thing).

What differs from accelplug's ``single_device`` strategy, each through a method every strategy has:

- ``optimizer_step``: the step goes through the precision as usual, then the step is *marked*
  (``torch_xla.sync()``), so each training step is one XLA graph, compiled once and reused. This is
  what ``xm.optimizer_step(optimizer, barrier=True)`` does on one device (its gradient all-reduce
  only acts across several replicas), keeping the precision in the path. Every mark this plugin
  makes leaves the device's random generator where the step's random operations left it
  (:func:`~accelplug_xla.runtime.mark_step`), so a resumed run draws what an uninterrupted one draws.
- ``process_dataloader``: every loader becomes a :class:`~accelplug_xla.loader.DeviceFeed`, which
  uploads batches in the background and marks the step before each batch (evaluation and
  prediction included, which have no optimizer step to mark it).
- ``save_checkpoint``: the pending graph is run and every tensor copied to the CPU before the file
  is written, so the checkpoint loads anywhere, also where torch_xla is not installed (a file of XLA
  tensors would need torch_xla to load); ``checkpoint_map_location`` loads onto the CPU, from where
  ``load_state_dict`` copies into the XLA parameters.
- evaluation runs under ``no_grad`` rather than ``inference_mode``, which XLA tensors do not support.
- ``torch.compile`` is refused: XLA already compiles each marked step's graph.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from accelplug import MisconfigurationException, Strategy

from . import runtime
from .loader import DeviceFeed

if TYPE_CHECKING:
    from accelplug.accelerator import Accelerator
    from accelplug.precision.base import NumericPrecision
    from accelplug.strategies.base import PreparedModule

__all__ = ["SingleXLAStrategy", "to_cpu"]


def to_cpu(value: Any) -> Any:
    """``value`` with every tensor in it copied to the CPU (containers rebuilt, their types kept).

    A dict is copied with ``copy.copy`` before its values are replaced, so a state dict keeps its
    ``_metadata`` (the module versions ``load_state_dict`` reads) and an ``OrderedDict`` its order.
    """
    if isinstance(value, torch.Tensor):
        return value.detach().cpu() if value.device.type != "cpu" else value
    if isinstance(value, dict):
        moved = copy.copy(value)
        for key, item in value.items():
            moved[key] = to_cpu(item)
        return moved
    if isinstance(value, Mapping):
        return {key: to_cpu(item) for key, item in value.items()}
    if isinstance(value, tuple):
        items = [to_cpu(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [to_cpu(item) for item in value]
    return value


class SingleXLAStrategy(Strategy):
    name = "single_xla"
    description = "one XLA device in one process: steps marked, batches uploaded in the background"
    #: Evaluation runs under ``no_grad``: torch_xla cannot run on inference tensors ("Cannot set
    #: version_counter for inference tensor"), as Lightning also found for TPUs.
    allows_inference_mode = False

    def __init__(self) -> None:
        super().__init__()
        self._feeds: list[DeviceFeed] = []

    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        return accelerator.device_type == "xla"

    @classmethod
    def unsupported_reason(cls, accelerator: type[Accelerator]) -> str | None:
        return (
            f"'single_xla' runs on XLA devices (accelerator='xla' or 'tpu'); {accelerator.name!r} has "
            f"{accelerator.device_type!r} devices"
        )

    # ---- preparing the module ------------------------------------------------------------------------
    def setup_module_and_optimizers(
        self,
        module: torch.nn.Module,
        precision: NumericPrecision,
        *,
        compile_options: dict[str, Any] | None = None,
        with_optimizers: bool = True,
    ) -> PreparedModule:
        if compile_options is not None:
            raise MisconfigurationException(
                f"compile={compile_options!r} cannot run on an XLA device: XLA traces each step into a graph and "
                "compiles that itself (once per distinct graph), and torch.compile's default backend cannot generate "
                "code for XLA tensors. Train with compile=False."
            )
        return super().setup_module_and_optimizers(module, precision, with_optimizers=with_optimizers)

    # ---- the step --------------------------------------------------------------------------------------
    def optimizer_step(
        self,
        optimizer: torch.optim.Optimizer,
        closure: Callable[[], Any] | None = None,
        precision: Any = None,
        **kwargs: Any,
    ) -> Any:
        """The precision's step (the base class's, which also takes Lightning Fabric's call), then the step marked:
        one graph per training step."""
        value = super().optimizer_step(optimizer, closure, precision, **kwargs)
        runtime.mark_step(self._device())
        return value

    # ---- data --------------------------------------------------------------------------------------------
    def process_dataloader(self, loader: Any) -> Any:
        feed = DeviceFeed(loader, self._device())
        self._feeds.append(feed)
        return feed

    def set_epoch(self, loader: Any, epoch: int) -> None:
        super().set_epoch(loader.loader if isinstance(loader, DeviceFeed) else loader, epoch)

    # ---- checkpoints ---------------------------------------------------------------------------------
    def checkpoint_map_location(self) -> torch.device:
        """The CPU: torch.load cannot place storages on an XLA device; ``load_state_dict`` copies them there."""
        return torch.device("cpu")

    def save_checkpoint(
        self,
        checkpoint: Any = None,
        path: Any = None,
        write: Callable[[dict[str, Any], Path], object] | None = None,
        *,
        tensor_keys: tuple[str, ...] = ("state_dict", "optimizer_states"),
        **fabric_form: Any,
    ) -> None:
        """Run what is pending, then write CPU copies of every tensor (the file loads without torch_xla)."""
        if write is None:  # Lightning Fabric's form: the base class gathers the states, then calls back with a writer
            super().save_checkpoint(checkpoint, path, write, **fabric_form)
            return
        runtime.mark_step(self._device())
        super().save_checkpoint(to_cpu(checkpoint), path, write, tensor_keys=tensor_keys)

    # ---- the end ---------------------------------------------------------------------------------------
    def teardown(self) -> None:
        feeds, self._feeds = self._feeds, []
        for feed in feeds:
            feed.close()
        if self.root_device is not None and runtime.runtime_initialized():
            runtime.mark_step(self.root_device)
        super().teardown()
