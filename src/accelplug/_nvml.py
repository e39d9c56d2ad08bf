"""NVIDIA GPUs seen through NVML, the driver's management library, without initialising CUDA.

``torch.cuda.device_count()`` may fall back to ``cudaGetDeviceCount``, which initialises the driver
in this process and makes a later ``fork`` unsafe. NVML only reads the driver's device list, so
``accelerator="auto"`` can ask it freely. ``CUDA_VISIBLE_DEVICES`` is applied the way the CUDA runtime
applies it: indices or UUID prefixes, read left to right, stopping at the first entry that matches
no device.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

__all__ = ["GpuInfo", "NvmlUnavailable", "visible_gpus"]

_LIBRARY_NAMES = ("libnvidia-ml.so.1", "libnvidia-ml.so", "nvml.dll")


class NvmlUnavailable(RuntimeError):
    """NVML could not be loaded or initialised (no NVIDIA driver, or a platform without NVML)."""


@dataclass(frozen=True)
class GpuInfo:
    index: int  # the index CUDA will give it in this process (after CUDA_VISIBLE_DEVICES)
    physical_index: int
    name: str
    uuid: str
    total_memory: int  # bytes


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


def _load() -> ctypes.CDLL:
    errors = []
    for name in _LIBRARY_NAMES:
        try:
            return ctypes.CDLL(name)
        except OSError as exc:
            errors.append(str(exc))
    raise NvmlUnavailable(
        "the NVIDIA driver's NVML library (libnvidia-ml.so.1) could not be loaded, so no NVIDIA "
        "driver is installed here or it is not on the library path"
    )


def _physical_gpus(lib: ctypes.CDLL) -> list[tuple[int, str, str, int]]:
    count = ctypes.c_uint()
    if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
        raise NvmlUnavailable("NVML could not count the GPUs (nvmlDeviceGetCount failed)")
    gpus = []
    for i in range(count.value):
        handle = ctypes.c_void_p()
        if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle)) != 0:
            continue
        name = ctypes.create_string_buffer(96)
        uuid = ctypes.create_string_buffer(96)
        memory = _Memory()
        lib.nvmlDeviceGetName(handle, name, 96)
        lib.nvmlDeviceGetUUID(handle, uuid, 96)
        lib.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(memory))
        gpus.append((i, name.value.decode(errors="replace"), uuid.value.decode(errors="replace"), memory.total))
    return gpus


def _apply_visible(gpus: list[tuple[int, str, str, int]], visible: str | None) -> list[tuple[int, str, str, int]]:
    if visible is None:
        return gpus
    chosen: list[tuple[int, str, str, int]] = []
    for entry in (e.strip() for e in visible.split(",")):
        match = None
        if entry.lstrip("-").isdigit():
            index = int(entry)
            match = next((g for g in gpus if g[0] == index), None)
        elif entry:
            found = [g for g in gpus if g[2].startswith(entry) or g[2].startswith("GPU-" + entry)]
            match = found[0] if len(found) == 1 else None
        if match is None or match in chosen:
            break  # the CUDA runtime ignores everything after the first invalid entry
        chosen.append(match)
    return chosen


def visible_gpus() -> list[GpuInfo]:
    """The GPUs this process's CUDA runtime would see; raises ``NvmlUnavailable`` without NVML."""
    lib = _load()
    if lib.nvmlInit_v2() != 0:
        raise NvmlUnavailable("NVML is installed but failed to initialise (is the NVIDIA driver loaded?)")
    try:
        gpus = _physical_gpus(lib)
    finally:
        lib.nvmlShutdown()
    visible = _apply_visible(gpus, os.environ.get("CUDA_VISIBLE_DEVICES"))
    return [GpuInfo(i, g[0], g[1], g[2], g[3]) for i, g in enumerate(visible)]
