"""Lightning Fabric's ``ThroughputMonitor``: :class:`~accelplug.measure.throughput.Throughput` that logs through Fabric.

Built from a launched ``Fabric``: the peak FLOPs are read for its device and precision (for MFU), the world size
from the run, and ``compute_and_log()`` sends the rates to Fabric's loggers at a step it counts itself (or the one
given). Only the global-zero process measures and logs; the others get empty results. (The Trainer's callback of the
same Lightning name is :class:`accelplug.callbacks.ThroughputMonitor`.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._import_paths import seen_at
from ..distributed.rank_zero import is_rank_zero
from ..measure.throughput import Throughput, get_available_flops, precision_compute_dtype

if TYPE_CHECKING:
    from .fabric import Fabric

__all__ = ["FabricThroughputMonitor"]

#: Lightning's path of this class, which also holds the ``get_available_flops`` it calls: code written for Lightning
#: gives a device its peak by replacing the function there (``mock.patch("lightning.fabric.utilities.throughput.
#: get_available_flops", return_value=...)``), so the function is read from that module when it is loaded.
_PUBLIC_PATH = "accelplug.fabric.utilities.throughput"


class FabricThroughputMonitor(Throughput):
    """``Throughput`` that counts its log calls and logs through ``fabric`` (Fabric's ``ThroughputMonitor``)."""

    def __init__(self, fabric: Fabric, **kwargs: Any) -> None:
        dtype = precision_compute_dtype(getattr(fabric._precision, "name", "32-true"))
        available = seen_at(_PUBLIC_PATH, "get_available_flops", get_available_flops)(fabric.device, dtype)
        super().__init__(available_flops=available, world_size=fabric.world_size, **kwargs)
        self._fabric = fabric
        self.step = -1

    def update(
        self, *, time: float, batches: int, samples: int, lengths: int | None = None, flops: int | None = None
    ) -> None:
        if is_rank_zero():
            super().update(time=time, batches=batches, samples=samples, lengths=lengths, flops=flops)

    def compute(self) -> dict[str, int | float]:
        return super().compute() if is_rank_zero() else {}

    def reset(self) -> None:
        if is_rank_zero():
            super().reset()

    def compute_and_log(self, step: int | None = None) -> dict[str, int | float]:
        """:meth:`compute` the rates and log them at ``step`` (default: one more than the last log call)."""
        if not is_rank_zero():
            return {}
        self.step = self.step + 1 if step is None else step
        metrics = self.compute()
        self._fabric.log_dict(metrics=metrics, step=self.step)
        return metrics
