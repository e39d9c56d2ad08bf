"""The ``Strategy`` base class: how a run is spread over the selected devices."""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

__all__ = ["Strategy"]


class Strategy(ABC):
    """A way to run training on the selected devices (registered through ``register_strategies``)."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: True when the strategy runs one process per device and needs a process group.
    is_distributed: ClassVar[bool] = False
