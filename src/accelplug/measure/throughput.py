"""Throughput from running totals: Lightning Fabric's ``Throughput`` and ``get_available_flops``, below the callbacks
so ``ThroughputMonitor`` can use them (``accelplug.utilities.throughput`` is their public path).

:class:`Throughput` is given, after each batch, the elapsed time and the running totals of batches, samples
(and optionally items and FLOPs); :meth:`Throughput.compute` turns the last ``window_size`` of them into rates,
under Lightning's keys. Rates appear once the window is full. ``device/mfu`` (model FLOPs utilisation) needs
the device's theoretical FLOPs, which :func:`get_available_flops` knows for common NVIDIA data-center chips.
"""

from __future__ import annotations

import warnings
from collections import deque
from typing import Any

import torch

__all__ = ["Throughput", "get_available_flops", "precision_compute_dtype"]

#: Theoretical FLOPs per second of one device by chip and compute dtype (Lightning's figures, from the vendors'
#: data sheets); "tfloat32" is float32 matmuls on Ampere and later when torch's matmul precision allows TF32.
_CUDA_FLOPS: dict[str, dict[torch.dtype | str, float]] = {
    "h200 sxm1": {torch.float64: 3.4e13, torch.float32: 6.7e13, "tfloat32": 9.9e14, torch.bfloat16: 2.0e15,
                  torch.float16: 2.0e15, torch.int8: 4.0e15},
    "h200 nvl1": {torch.float64: 3.0e13, torch.float32: 6.0e13, "tfloat32": 8.4e14, torch.bfloat16: 1.7e15,
                  torch.float16: 1.7e15, torch.int8: 3.3e15},
    "h100 nvl": {torch.float64: 67e12, torch.float32: 133.8e12, "tfloat32": 989.4e12, torch.bfloat16: 1978.8e12,
                 torch.float16: 1978.8e12, torch.int8: 3957.8e12},
    "h100 sxm": {torch.float64: 33.5e12, torch.float32: 66.9e12, "tfloat32": 494.7e12, torch.bfloat16: 989.4e12,
                 torch.float16: 989.4e12, torch.int8: 1978.9e12},
    "h100 pcie": {torch.float64: 25.6e12, torch.float32: 51.2e12, "tfloat32": 378e12, torch.bfloat16: 756e12,
                  torch.float16: 756e12, torch.int8: 1513e12},
    "a100": {torch.float64: 9.7e12, torch.float32: 19.5e12, "tfloat32": 156e12, torch.bfloat16: 312e12,
             torch.float16: 312e12, torch.int8: 624e12},
    "a6000": {torch.float32: 38.7e12, "tfloat32": 77.4e12, torch.bfloat16: 38.7e12, torch.float16: 38.7e12,
              torch.int8: 309.7e12},
    "a40": {torch.float32: 37.4e12, "tfloat32": 74.8e12, torch.bfloat16: 37.4e12, torch.float16: 37.4e12,
            torch.int8: 299.3e12},
    "a10g": {torch.float32: 31.2e12, "tfloat32": 62.5e12, torch.bfloat16: 125e12, torch.float16: 125e12,
             torch.int8: 250e12},
    "l4": {torch.float32: 30.3e12, "tfloat32": 60e12, torch.bfloat16: 121e12, torch.float16: 121e12,
           torch.int8: 242e12},
    "l40": {torch.float32: 90.5e12, "tfloat32": 90.5e12, torch.bfloat16: 181e12, torch.float16: 181e12,
            torch.int8: 362e12},
    "t4": {torch.float32: 8.1e12, torch.float16: 65e12, torch.int8: 130e12},
    "v100 sxm": {torch.float64: 7.8e12, torch.float32: 15.7e12, torch.float16: 125e12},
    "v100 pcie": {torch.float64: 7e12, torch.float32: 14e12, torch.float16: 112e12},
}  # fmt: skip

_PRECISION_DTYPES = {
    "64-true": torch.float64,
    "bf16-mixed": torch.bfloat16,
    "bf16-true": torch.bfloat16,
    "16-mixed": torch.float16,
    "16-true": torch.float16,
    "transformer-engine": torch.int8,
    "transformer-engine-float16": torch.int8,
}


def precision_compute_dtype(precision: str) -> torch.dtype:
    """The dtype the matmuls of a run at ``precision`` (the Trainer's precision name) compute in."""
    return _PRECISION_DTYPES.get(str(precision), torch.float32)


def _chip(name: str) -> str | None:
    chip = name.lower()
    if "h200" in chip:
        return "h200 sxm1" if "sxm1" in chip else "h200 nvl1" if "nvl1" in chip else chip
    if "h100" in chip:
        if "hbm3" in chip:
            return "h100 sxm"
        if "nvl" in chip:
            return "h100 nvl"
        return "h100 pcie" if "pcie" in chip or "hbm2e" in chip else chip
    if "l4" in chip:
        return "l40" if "tesla" in chip else "l4"
    for known in ("a6000", "a100", "a40", "a10g", "t4"):
        if known in chip:
            return known
    for known in ("v100-sxm", "v100-pcie"):
        if known in chip:
            return known.replace("-", " ")
    return None


def get_available_flops(device: torch.device, dtype: torch.dtype | str) -> int | None:
    """Theoretical FLOPs per second of ``device`` computing in ``dtype``; None when unknown (CPU, unlisted chips)."""
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    chip = _chip(name)
    if chip is None or chip not in _CUDA_FLOPS:
        warnings.warn(f"FLOPs not found for {name!r}", stacklevel=2)
        return None
    table = _CUDA_FLOPS[chip]
    ampere_or_later = torch.cuda.get_device_capability(device)[0] >= 8
    if dtype is torch.float32 and ampere_or_later and torch.get_float32_matmul_precision() != "highest":
        dtype = "tfloat32"
    if dtype not in table:
        warnings.warn(f"{name!r} does not support {dtype}", stacklevel=2)
        return None
    return int(table[dtype])


class _Increasing(list[Any]):
    """The last ``maxlen`` values of a running total, which must grow with each append."""

    def __init__(self, maxlen: int) -> None:
        super().__init__()
        self.maxlen = maxlen

    def append(self, value: Any) -> None:
        if self and self[-1] >= value:
            raise ValueError(f"Expected the value to increase, last: {self[-1]}, current: {value}")
        super().append(value)
        if len(self) > self.maxlen:
            del self[0]


class Throughput:
    """Rates over the last ``window_size`` updates (see the module docstring); global (all devices) rates are
    added when ``world_size > 1``."""

    def __init__(
        self, available_flops: float | None = None, world_size: int = 1, window_size: int = 100, separator: str = "/"
    ) -> None:
        from ..errors import MisconfigurationException

        if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
            raise MisconfigurationException(f"world_size={world_size!r} is not accepted: an int >= 1.")
        if isinstance(window_size, bool) or not isinstance(window_size, int) or window_size < 2:
            raise MisconfigurationException(
                f"window_size={window_size!r} is not accepted: an int >= 2 (the rates span the window's updates)."
            )
        if not isinstance(separator, str):
            raise MisconfigurationException(f"separator={separator!r} is not accepted: a string such as '/'.")
        self.available_flops = available_flops
        self.separator = separator
        self.world_size = world_size
        self._time: _Increasing = _Increasing(window_size)
        self._batches: _Increasing = _Increasing(window_size)
        self._samples: _Increasing = _Increasing(window_size)
        self._lengths: _Increasing = _Increasing(window_size)
        self._flops: deque[float] = deque(maxlen=window_size)

    def update(
        self, *, time: float, batches: int, samples: int, lengths: int | None = None, flops: int | None = None
    ) -> None:
        """Running totals after another batch: seconds, batches, samples (items with ``lengths``) so far on this
        device; ``flops``: this device's FLOPs since the last update."""
        self._time.append(time)
        if samples < batches:
            raise ValueError(f"Expected samples ({samples}) to be greater or equal than batches ({batches})")
        self._batches.append(batches)
        self._samples.append(samples)
        if lengths is not None:
            if lengths < samples:
                raise ValueError(f"Expected lengths ({lengths}) to be greater or equal than samples ({samples})")
            self._lengths.append(lengths)
            if len(self._samples) != len(self._lengths):
                raise RuntimeError(
                    f"If lengths are passed ({len(self._lengths)}), there needs to be the same number of samples"
                    f" ({len(self._samples)})"
                )
        if flops is not None:
            self._flops.append(flops * self.world_size)

    def compute(self) -> dict[str, int | float]:
        sep = self.separator
        metrics: dict[str, int | float] = {
            "time": self._time[-1],
            "batches": self._batches[-1],
            "samples": self._samples[-1],
        }
        if self._lengths:
            metrics["lengths"] = self._lengths[-1]
        several = self.world_size > 1
        if len(self._time) == self._time.maxlen:
            elapsed = self._time[-1] - self._time[0]
            batches_per_sec = (self._batches[-1] - self._batches[0]) / elapsed
            samples_per_sec = (self._samples[-1] - self._samples[0]) / elapsed
            metrics[f"device{sep}batches_per_sec"] = batches_per_sec
            metrics[f"device{sep}samples_per_sec"] = samples_per_sec
            if several:
                metrics["batches_per_sec"] = batches_per_sec * self.world_size
                metrics["samples_per_sec"] = samples_per_sec * self.world_size
            if len(self._lengths) == self._lengths.maxlen:
                items_per_sec = (self._lengths[-1] - self._lengths[0]) / elapsed
                metrics[f"device{sep}items_per_sec"] = items_per_sec
                if several:
                    metrics["items_per_sec"] = items_per_sec * self.world_size
        if len(self._flops) == self._flops.maxlen:
            # the first entry's FLOPs were spent before the window's first time stamp
            flops_per_sec = (sum(self._flops) - self._flops[0]) / (self._time[-1] - self._time[0])
            device_flops_per_sec = flops_per_sec / self.world_size
            if several:
                metrics["flops_per_sec"] = flops_per_sec
            metrics[f"device{sep}flops_per_sec"] = device_flops_per_sec
            if self.available_flops:
                metrics[f"device{sep}mfu"] = device_flops_per_sec / self.available_flops
        return metrics

    def reset(self) -> None:
        for window in (self._time, self._batches, self._samples, self._lengths, self._flops):
            window.clear()
