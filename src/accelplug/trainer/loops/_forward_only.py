"""An epoch that runs ``training_step`` forward only: StochasticWeightAveraging's BatchNorm pass.

After copying the averaged weights into the module, ``StochasticWeightAveraging`` needs the BatchNorm
running statistics recomputed for those weights, so it asks for one more epoch (``state.extra_epochs``) and
flags it ``state.forward_only`` in ``on_train_epoch_start``. Lightning builds that epoch from three
settings (``fit_loop._skip_backward``, ``max_batches += 1``, ``accumulate_grad_batches = max_batches``);
what they add up to, and what is reproduced here so the weights end the same:

- every batch of the epoch (as many as a normal epoch: the loader is limited to ``limit_train_batches``
  and its end is the epoch's end) runs ``training_step`` in train mode, with the batch hooks, so the
  BatchNorm layers (their momentum set to None) accumulate a plain average; no ``zero_grad``, no backward;
- at the epoch's last batch the optimizers step once, through the usual ``optimizer_step`` path (hooks,
  clipping, precision), with the gradients the last training step left behind.

The fast path is untouched: the loop checks the flag once per epoch, after ``on_train_epoch_start``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ._losses import loss_of
from ._transfer import SKIP_REST_OF_EPOCH

if TYPE_CHECKING:
    import torch

    from ..state import LoopState
    from ._limits import Limits
    from .optimization import Optimization

__all__ = ["ForwardOnly", "forward_only_step"]


class _Loop(Protocol):
    """The part of the fit loop the pass uses (``FitLoop``; typed here so this module never imports it)."""

    opt: Optimization
    state: LoopState
    limits: Limits

    def _batch_start(self, batch: Any, batch_idx: int) -> Any: ...
    def _optimizer_stepped(self, batch_idx: int, count: int = 1) -> None: ...


class ForwardOnly:
    """The batch path of the pass; it remembers the loop's own path, put back when the epoch ends."""

    def __init__(self, loop: _Loop, normal_path: Callable[[Any, int], Any]) -> None:
        self.loop, self.normal_path = loop, normal_path

    def __call__(self, batch: Any, batch_idx: int) -> Any:
        loop = self.loop
        batch = loop._batch_start(batch, batch_idx)
        if batch is SKIP_REST_OF_EPOCH:
            return batch
        state = loop.state
        output = forward_only_step(loop.opt, batch, batch_idx, last=state.is_last_batch, epoch=state.current_epoch)
        if loop.opt.stepped:
            loop._optimizer_stepped(batch_idx)
        return output


def forward_only_step(opt: Optimization, batch: Any, batch_idx: int, *, last: bool, epoch: int) -> Any:
    """One batch of the pass; ``opt.stepped`` says whether the optimizers stepped (the last batch only)."""
    opt.stepped = False
    if not last:
        with opt.strategy.no_gradient_sync(opt.wrapped):
            return opt.forward(batch, batch_idx)
    result: dict[str, Any] = {}

    def closure() -> torch.Tensor | None:
        result["output"] = output = opt.forward(batch, batch_idx)
        loss = loss_of(output)
        return None if loss is None else loss.detach()

    opt.step_optimizers(epoch, batch_idx, closure)
    return result.get("output")
