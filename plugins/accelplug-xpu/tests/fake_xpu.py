"""A stand-in for ``torch.xpu``, the one boundary accelplug-xpu talks to.

It implements the functions of the real module that the plugin calls, with the real names and
arguments, and behaves like the real one where the contract cares: counting devices does not
initialise the runtime, while setting a device or reading a device's name does.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch


class FakeXPU:
    """``torch.xpu`` on a machine with ``count`` Intel GPUs (or a torch built without XPU)."""

    def __init__(self, count: int = 2, *, compiled: bool = True) -> None:
        self.count = count
        self.compiled = compiled
        self.initialized = False
        self.current: int | None = None
        self.emptied = 0

    def _lazy_init(self) -> None:
        self.initialized = True

    def _is_compiled(self) -> bool:
        return self.compiled

    def device_count(self) -> int:
        return self.count if self.compiled else 0

    def is_available(self) -> bool:
        return self.device_count() > 0

    def is_initialized(self) -> bool:
        return self.initialized

    def _index(self, device: torch.device | int | None) -> int:
        index = device.index if isinstance(device, torch.device) else device
        index = self.current if index is None else index
        if index is None or not 0 <= index < self.device_count():
            raise RuntimeError(f"invalid XPU device {device!r}")
        return index

    def set_device(self, device: torch.device | int) -> None:
        self._lazy_init()
        self.current = self._index(device)

    def get_device_name(self, device: torch.device | int | None = None) -> str:
        self._lazy_init()
        return f"Intel(R) Data Center GPU Max 1550 #{self._index(device)}"

    def memory_stats(self, device: torch.device | int | None = None) -> OrderedDict[str, Any]:
        index = self._index(device)
        return OrderedDict([("allocated_bytes.all.current", 1024 * (index + 1)), ("num_alloc_retries", 0)])

    def empty_cache(self) -> None:
        self.emptied += 1
