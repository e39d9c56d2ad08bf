"""The CPU: always there, the fallback of ``accelerator="auto"``."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings

import torch

from ..accelerator import Accelerator
from ..errors import MisconfigurationException
from ..hardware.devices import tokenize_devices_or_none

__all__ = ["CPUAccelerator", "get_cpu_stats"]

# The names of the CPU's figures in get_cpu_stats (Lightning's keys, also held as these constants by its module)
_CPU_VM_PERCENT = "cpu_vm_percent"
_CPU_PERCENT = "cpu_percent"
_CPU_SWAP_PERCENT = "cpu_swap_percent"


def get_cpu_stats() -> dict[str, float]:
    """The host's load under Lightning's names (``cpu_percent``, ``cpu_vm_percent``, ``cpu_swap_percent``, each
    system-wide, in %), read through psutil; ``ModuleNotFoundError`` naming it where it is not installed."""
    try:
        import psutil
    except ImportError:
        raise ModuleNotFoundError(
            "The CPU's device stats (cpu_percent, cpu_vm_percent, cpu_swap_percent) are read through psutil, which "
            "is not installed here: pip install psutil."
        ) from None
    return {
        _CPU_VM_PERCENT: float(psutil.virtual_memory().percent),
        _CPU_PERCENT: float(psutil.cpu_percent()),
        _CPU_SWAP_PERCENT: float(psutil.swap_memory().percent),
    }


@functools.cache
def _cpu_fp16_autocast_works() -> bool:
    """Older torch builds accept ``autocast("cpu", float16)`` only to warn and switch it off."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autocast("cpu", dtype=torch.float16):
            enabled = torch.is_autocast_enabled("cpu")
    return enabled and not caught


#: The most CPU "devices" (processes on this machine) a run may ask for: beyond the cores they only share them, and
#: far beyond, a count is a typo that would build a list and start processes until memory ran out.
MAX_CPU_PROCESSES = 1024


class CPUAccelerator(Accelerator):
    """Devices are processes: ``devices=2`` runs two processes that talk over gloo."""

    name = "cpu"
    description = "the host CPU (devices are processes; DDP over gloo)"
    device_type = "cpu"
    auto_priority = 0
    is_gpu = False
    distributed_backend = "gloo"

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        """The cores this process may run on: what ``devices=-1`` means (``parse_devices`` accepts a larger count)."""
        if hasattr(os, "sched_getaffinity"):
            return len(os.sched_getaffinity(0))
        return os.cpu_count() or 1

    @classmethod
    def auto_device_count(cls) -> int:
        """One process: it already uses every core through torch's intra-op threads."""
        return 1

    @classmethod
    def parse_devices(cls, devices: object) -> list[int]:
        """As every accelerator's, except that a count is not capped by the cores: a CPU "device" is a process, and
        ``devices=8`` on a 2-core machine starts 8 of them, as in Lightning (they share the cores)."""
        request = tokenize_devices_or_none(devices)
        if request is not None and request.kind == "count":
            count = request.numbers[0]
            if count > MAX_CPU_PROCESSES:  # a typo such as devices=10**6 would otherwise build that many processes
                raise MisconfigurationException(
                    f"devices={devices!r} asks for {count} devices, that is {count} CPU processes on this machine: "
                    f"at most {MAX_CPU_PROCESSES} are started. Use a count up to the cores ({cls.device_count()} "
                    "here), or devices=-1 for all of them."
                )
            return list(range(count))
        return super().parse_devices(devices)

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("single_device", "ddp")

    @classmethod
    def supported_precisions(cls) -> tuple[str, ...]:
        precisions = ["32-true", "64-true", "bf16-mixed"]
        if _cpu_fp16_autocast_works():
            precisions.append("16-mixed")
        return tuple(precisions)

    @classmethod
    def get_device(cls, index: int) -> torch.device:
        """Every CPU process uses the one host device; the index only numbers the processes."""
        return torch.device("cpu")

    def setup_device(self, device: torch.device) -> None:
        self.check_device_type(device, "CPU")

    def get_device_stats(self, device: torch.device) -> dict[str, float]:
        """Lightning's CPU figures (:func:`get_cpu_stats`, where psutil is installed) and this process's peak
        resident memory, ``max_rss_bytes`` (where the platform tells it)."""
        stats: dict[str, float] = {}
        with contextlib.suppress(ModuleNotFoundError):
            stats.update(get_cpu_stats())
        try:
            import resource
        except ImportError:  # Windows
            return stats
        peak = float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        # ru_maxrss is in kilobytes on Linux and in bytes on macOS.
        stats["max_rss_bytes"] = peak if sys.platform == "darwin" else peak * 1024
        return stats
