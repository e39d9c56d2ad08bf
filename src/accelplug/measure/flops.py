"""FLOPs of one forward (and backward) pass, counted by torch's own ``FlopCounterMode``."""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["measure_flops"]


def measure_flops(
    model: torch.nn.Module,
    forward_fn: Callable[[], torch.Tensor],
    loss_fn: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> int:
    """FLOPs ``forward_fn()`` runs, plus the loss and backward pass when ``loss_fn`` is given.

    Build the model on the ``meta`` device to count without computing anything. ``model`` is not read: it is
    Lightning's signature, which names the module being measured.
    """
    from torch.utils.flop_counter import FlopCounterMode  # loaded only when counting

    counter = FlopCounterMode(display=False)
    with counter:
        output = forward_fn()
        if loss_fn is not None:
            loss_fn(output).backward()  # type: ignore[no-untyped-call]
    return int(counter.get_total_flops())
