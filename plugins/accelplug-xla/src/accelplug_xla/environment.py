"""What this environment offers XLA, found out without importing torch_xla or starting its runtime.

``accelerator="auto"`` asks every installed accelerator whether it is available, in every process,
before anything is chosen; importing torch_xla takes seconds and its runtime must not start in a
process that may fork afterwards. So the answers here come from package metadata and environment
variables, read at call time:

- whether ``torch_xla`` is installed, and whether it was built for the installed torch (each
  torch_xla release is built against one torch release and fails to import with any other);
- ``PJRT_DEVICE``, the variable torch_xla's PJRT runtime reads to pick its device type (it is case
  sensitive: ``cpu`` is refused by torch_xla, ``CPU`` accepted);
- how many devices that device type has: ``CPU_NUM_DEVICES`` (default 1) for the host CPU, and for
  TPUs the chips torch_xla counts on the PCI bus (``torch_xla._internal.tpu``, which reads files and
  starts no runtime; it is imported only where TPUs are asked for, and its answer is cached).
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import os
from dataclasses import dataclass
from importlib import metadata

__all__ = [
    "CPU_NUM_DEVICES_ENV",
    "INSTALL_HINT",
    "PJRT_DEVICE_ENV",
    "SUPPORTED_DEVICE_TYPES",
    "PjrtDevices",
    "pjrt_devices",
    "torch_xla_problem",
    "version_problem",
]

PJRT_DEVICE_ENV = "PJRT_DEVICE"
CPU_NUM_DEVICES_ENV = "CPU_NUM_DEVICES"
#: The PJRT device types this plugin drives: the host CPU (tested here) and TPUs.
SUPPORTED_DEVICE_TYPES = ("CPU", "TPU")
INSTALL_HINT = (
    "install a torch_xla release with the exact torch it was built for, in an environment of their own, "
    "e.g. `pip install torch==2.9.0 torch_xla==2.9.0` (see the accelplug-xla README)"
)


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _major_minor(version: str) -> tuple[int, ...]:
    release = version.split("+")[0]
    parts = []
    for piece in release.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def torch_xla_problem() -> str | None:
    """Why torch_xla cannot be used in this environment, or None when it is installed for this torch."""
    if importlib.util.find_spec("torch_xla") is None:
        return f"torch_xla is not installed in this environment; {INSTALL_HINT}."
    xla_version, torch_version = _version("torch_xla") or _version("torch-xla"), _version("torch")
    if xla_version and torch_version:
        return version_problem(xla_version, torch_version)
    return None


def version_problem(xla_version: str, torch_version: str) -> str | None:
    """Why torch_xla ``xla_version`` cannot run with torch ``torch_version`` (None when they match).

    Each torch_xla release is built against the torch release of the same major.minor version.
    """
    if _major_minor(xla_version) == _major_minor(torch_version):
        return None
    wanted = ".".join(str(p) for p in _major_minor(xla_version))
    return (
        f"torch_xla {xla_version} is built for torch {wanted}.x, but torch {torch_version} is installed, and "
        f"torch_xla cannot load with another torch. Install the matching pair: "
        f"`pip install 'torch=={wanted}.*' torch_xla=={xla_version}` (in an environment of their own)."
    )


@dataclass(frozen=True)
class PjrtDevices:
    """The PJRT device type this process would use and its device count, or why there is none."""

    device_type: str | None
    count: int
    problem: str | None = None


def pjrt_devices() -> PjrtDevices:
    """What ``PJRT_DEVICE`` (or, unset, torch_xla's own default) gives this process."""
    raw = os.environ.get(PJRT_DEVICE_ENV)
    if raw is None or not raw.strip():
        if importlib.util.find_spec("libtpu") is not None and _tpu_devices() > 0:
            return PjrtDevices("TPU", _tpu_devices())  # what torch_xla itself picks on a TPU VM
        return PjrtDevices(
            None,
            0,
            f"{PJRT_DEVICE_ENV} is not set, so torch_xla does not know which device to use (without it, it guesses, "
            f"and falls back to the CPU with a warning). Set {PJRT_DEVICE_ENV}=CPU to run XLA on this machine's "
            f"CPU, or {PJRT_DEVICE_ENV}=TPU on a TPU VM.",
        )
    value = raw.strip()
    device_type = value.split("_")[0]  # torch_xla reads "TPU_C_API" and the like by their first word
    if device_type not in SUPPORTED_DEVICE_TYPES:
        if device_type.upper() in SUPPORTED_DEVICE_TYPES:
            hint = f" torch_xla reads it case-sensitively: set {PJRT_DEVICE_ENV}={device_type.upper()}."
        else:
            close = difflib.get_close_matches(device_type.upper(), SUPPORTED_DEVICE_TYPES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
        return PjrtDevices(
            None,
            0,
            f"{PJRT_DEVICE_ENV}={raw!r} is not a device type accelplug-xla drives; it supports "
            f"{', '.join(repr(t) for t in SUPPORTED_DEVICE_TYPES)}.{hint}",
        )
    if device_type == "CPU":
        return _cpu_devices()
    count = _tpu_devices()
    if count == 0:
        return PjrtDevices(
            "TPU",
            0,
            f"{PJRT_DEVICE_ENV}={raw!r}, but no TPU chip is attached to this machine (torch_xla finds none on its PCI "
            f"bus). Run on a TPU VM, or set {PJRT_DEVICE_ENV}=CPU to run XLA on the CPU.",
        )
    return PjrtDevices("TPU", count)


def _cpu_devices() -> PjrtDevices:
    raw = os.environ.get(CPU_NUM_DEVICES_ENV)
    if raw is None or not raw.strip():
        return PjrtDevices("CPU", 1)
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        return PjrtDevices(
            "CPU",
            0,
            f"{CPU_NUM_DEVICES_ENV}={raw!r} is not a number of devices; torch_xla's CPU client needs a positive "
            f"integer (or leave it unset for one device).",
        )
    return PjrtDevices("CPU", int(text))


@functools.cache
def _tpu_devices() -> int:
    """TPU devices on this host, counted by torch_xla without starting its runtime (0 without torch_xla)."""
    if torch_xla_problem() is not None:
        return 0
    from . import runtime

    return runtime.tpu_device_count()
