"""How long ``torch.compile`` took: the first training step of a compiled fit, timed once.

torch compiles lazily, at the first call: the forward graph when the first ``training_step`` runs,
the backward graph at the first ``backward``. The first batch therefore carries the whole cost, and
timing it (with one device synchronisation, once) measures compilation without adding anything to
later steps: the wrapper replaces itself with the real batch path after its one call.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from .fit_loop import FitLoop

__all__ = ["timed_first_batch"]


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def timed_first_batch(loop: FitLoop, path: Callable[[Any, int], Any]) -> Callable[[Any, int], Any]:
    """``path`` for every batch, with the first one timed into ``state.compile_seconds`` and reported on rank 0."""

    def first(batch: Any, batch_idx: int) -> Any:
        loop.batch_step = path
        started = time.perf_counter()
        output = path(batch, batch_idx)
        _synchronize(loop.run_.device)
        seconds = time.perf_counter() - started
        loop.state.compile_seconds = seconds
        if loop.run_.trainer._chatty:
            print(
                f"accelplug: torch.compile: the first training step took {seconds:.1f} s (compiling forward and "
                "backward); the following steps run the compiled code",
                file=sys.stderr,
            )
        return output

    return first
