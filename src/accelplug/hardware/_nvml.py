"""NVIDIA GPUs seen through NVML, the driver's management library, without initialising CUDA.

``torch.cuda.device_count()`` may fall back to ``cudaGetDeviceCount``, which initialises the driver
in this process and makes a later ``fork`` unsafe. NVML only reads the driver's device list, so
``accelerator="auto"`` can ask it freely. ``CUDA_VISIBLE_DEVICES`` is applied by
:mod:`accelplug.hardware.cuda_visible`, the way the CUDA runtime applies it; where NVML cannot decide (MIG
instances) :class:`VisibilityUndecided` tells the caller to count in a child process.

A hand-written ctypes binding rather than NVIDIA's ``nvidia-ml-py``: six functions are needed, the
same few PyTorch itself binds this way, and every accelplug user (CPU, macOS) would otherwise carry
a dependency that only NVIDIA machines use.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

from .cuda_visible import resolve_visible_devices

__all__ = [
    "GpuInfo",
    "NvmlUnavailable",
    "PhysicalGpu",
    "VisibilityUndecided",
    "physical_gpus",
    "visible_gpus",
    "why_hidden",
]

_LIBRARY_NAMES = ("libnvidia-ml.so.1", "libnvidia-ml.so", "nvml.dll")
_BUFFER = 96  # NVML_DEVICE_UUID_V2_BUFFER_SIZE and NVML_DEVICE_NAME_V2_BUFFER_SIZE are both 96


class NvmlUnavailable(RuntimeError):
    """NVML could not be loaded or initialised (no NVIDIA driver, or a platform without NVML)."""


class VisibilityUndecided(NvmlUnavailable):
    """NVML's GPU list cannot say what ``CUDA_VISIBLE_DEVICES`` selects (MIG instances).

    A kind of ``NvmlUnavailable`` so that code that only wants NVML's answer treats both alike.
    """


@dataclass(frozen=True)
class PhysicalGpu:
    """One GPU as NVML lists it, before ``CUDA_VISIBLE_DEVICES`` is applied."""

    index: int
    name: str
    uuid: str
    total_memory: int  # bytes


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
    for name in _LIBRARY_NAMES:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise NvmlUnavailable(
        "the NVIDIA driver's NVML library (libnvidia-ml.so.1) could not be loaded, so no NVIDIA "
        "driver is installed here or it is not on the library path"
    )


def _read_gpus(lib: ctypes.CDLL) -> list[PhysicalGpu]:
    count = ctypes.c_uint()
    if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
        raise NvmlUnavailable("NVML could not count the GPUs (nvmlDeviceGetCount failed)")
    gpus = []
    for i in range(count.value):
        handle = ctypes.c_void_p()
        if lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(i), ctypes.byref(handle)) != 0:
            # A GPU NVML cannot open (fallen off the bus, no permission): keep its place in the
            # numbering, which CUDA_VISIBLE_DEVICES indices refer to, with a UUID nothing matches.
            gpus.append(PhysicalGpu(i, "unknown (NVML could not open it)", "", 0))
            continue
        name = ctypes.create_string_buffer(_BUFFER)
        uuid = ctypes.create_string_buffer(_BUFFER)
        memory = _Memory()
        lib.nvmlDeviceGetName(handle, name, ctypes.c_uint(_BUFFER))
        lib.nvmlDeviceGetUUID(handle, uuid, ctypes.c_uint(_BUFFER))
        lib.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(memory))
        gpus.append(
            PhysicalGpu(i, name.value.decode(errors="replace"), uuid.value.decode(errors="replace"), memory.total)
        )
    return gpus


def physical_gpus() -> list[PhysicalGpu]:
    """Every GPU the driver knows, in NVML's order; raises ``NvmlUnavailable`` without NVML."""
    lib = _load()
    if lib.nvmlInit_v2() != 0:
        raise NvmlUnavailable("NVML is installed but failed to initialise (is the NVIDIA driver loaded?)")
    try:
        return _read_gpus(lib)
    finally:
        lib.nvmlShutdown()


def visible_gpus() -> list[GpuInfo]:
    """The GPUs this process's CUDA runtime would see.

    Raises ``NvmlUnavailable`` without NVML and ``VisibilityUndecided`` when ``CUDA_VISIBLE_DEVICES``
    names MIG instances.
    """
    gpus = physical_gpus()
    visibility = resolve_visible_devices(os.environ.get("CUDA_VISIBLE_DEVICES"), [g.uuid for g in gpus])
    if visibility.physical is None:
        raise VisibilityUndecided(visibility.note or "NVML cannot tell which GPUs CUDA_VISIBLE_DEVICES selects")
    chosen = [gpus[i] for i in visibility.physical]
    return [GpuInfo(i, g.index, g.name, g.uuid, g.total_memory) for i, g in enumerate(chosen)]


def why_hidden(visible: str) -> str | None:
    """Why ``CUDA_VISIBLE_DEVICES=visible`` leaves fewer GPUs than it names (for error messages)."""
    try:
        gpus = physical_gpus()
    except NvmlUnavailable:
        return None
    return resolve_visible_devices(visible, [g.uuid for g in gpus]).note
