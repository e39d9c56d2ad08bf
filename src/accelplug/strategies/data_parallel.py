"""Lightning Fabric's ``DataParallelStrategy`` (``strategy="dp"``): importable, refused when used.

torch's ``DataParallel`` runs one process that copies the model to every GPU at each step and gathers the outputs
on the first; torch itself recommends ``DistributedDataParallel`` instead, which accelplug runs (``strategy="ddp"``)
on one or several machines. Code that only names the class (an ``isinstance`` check, an import beside the others)
keeps working; building one says what to use.
"""

from __future__ import annotations

from typing import Any

from ..errors import MisconfigurationException
from .parallel import ParallelStrategy

__all__ = ["DataParallelStrategy"]


class DataParallelStrategy(ParallelStrategy):
    """Refused at construction: accelplug trains several GPUs with DDP (one process per GPU), not ``DataParallel``."""

    strategy_name = "dp"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise MisconfigurationException(
            "DataParallelStrategy (strategy='dp', torch.nn.DataParallel) is not supported by accelplug: torch "
            "recommends DistributedDataParallel instead. Use strategy='ddp' (one process per GPU; "
            "accelplug launches them), which Lightning Fabric also accepts."
        )
