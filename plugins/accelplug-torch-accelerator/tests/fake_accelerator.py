"""A stand-in for the ``torch.accelerator`` functions the bridge calls, the one boundary it talks to.

Each method has the name and arguments of the real function (torch 2.13), and the fixture in
``conftest.py`` patches them onto the real ``torch.accelerator`` module one by one.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch


class FakeTorchAccelerator:
    """``torch.accelerator`` on a machine whose torch reports ``device_type`` with ``count`` devices."""

    def __init__(self, device_type: str | None, count: int) -> None:
        self.device_type = device_type
        self.count = count
        self.current: int | None = None
        self.synchronized: list[object] = []
        self.emptied = 0

    def current_accelerator(self, check_available: bool = False) -> torch.device | None:
        if self.device_type is None or (check_available and self.count == 0):
            return None
        return torch.device(self.device_type)

    def device_count(self) -> int:
        return self.count if self.device_type is not None else 0

    def set_device_index(self, device: torch.device | str | int | None, /) -> None:
        index = torch.device(device).index if isinstance(device, (str, torch.device)) else device
        if index is None or not 0 <= index < self.count:
            raise RuntimeError(f"invalid device index {device!r}")
        self.current = index

    def synchronize(self, device: torch.device | str | int | None = None, /) -> None:
        self.synchronized.append(device)

    def empty_cache(self) -> None:
        self.emptied += 1

    def memory_stats(self, device_index: torch.device | str | int | None = None, /) -> OrderedDict[str, Any]:
        return OrderedDict([("allocated_bytes.all.current", 512), ("num_ooms", 0)])
