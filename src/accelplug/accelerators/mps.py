"""Apple silicon GPUs through Metal Performance Shaders (MPS): one device, no distributed backend.

When MPS cannot be used, ``unavailable_reason()`` names the real cause, in the order a person would
check it: not a Mac; a Python translated by Rosetta; a torch built without MPS; a macOS older than
what this torch needs; and finally torch's own refusal. The platform is read through
``platform.system()``, ``platform.machine()`` and ``platform.mac_ver()`` at call time, and the OS is
asked about Rosetta only in :func:`is_rosetta_translated`, so each cause can be reproduced in tests.
"""

from __future__ import annotations

import platform
import subprocess

import torch

from .._import_paths import seen_at
from ..accelerator import Accelerator

__all__ = ["MPSAccelerator", "is_rosetta_translated", "minimum_macos_for_torch", "mps_host_stats"]

ROSETTA_EXPLANATION = (
    "this Python is an x86_64 (Intel) program running under Rosetta 2 emulation on an Apple silicon "
    "Mac. A translated process cannot use the Apple GPU, and PyTorch publishes no MPS build for "
    "x86_64, so MPS is refused even if torch claims otherwise. Install a native arm64 Python and "
    "reinstall torch in it: e.g. the universal2 installer from python.org, `brew install python` "
    "with an arm64 Homebrew in /opt/homebrew, or Miniforge's osx-arm64 conda. Check with "
    "`python -c \"import platform; print(platform.machine())\"`: it must print 'arm64', not 'x86_64'."
)


def is_rosetta_translated() -> bool:
    """Whether this process is an x86_64 binary translated by Rosetta 2 (asks sysctl)."""
    if platform.system() != "Darwin":
        return False
    import ctypes.util  # macOS only (binds ctypes too)

    value = ctypes.c_int(0)
    size = ctypes.c_size_t(ctypes.sizeof(value))
    libc_path = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(libc_path)
        status = libc.sysctlbyname(
            b"sysctl.proc_translated", ctypes.byref(value), ctypes.byref(size), None, ctypes.c_size_t(0)
        )
        if status == 0:
            return value.value == 1
        return False  # ENOENT: a Mac without Rosetta (Intel), so nothing is translated
    except (OSError, AttributeError):
        pass
    try:
        out = subprocess.run(["sysctl", "-n", "sysctl.proc_translated"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.stdout.strip() == "1"


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def minimum_macos_for_torch(torch_version: str | None = None) -> tuple[int, int]:
    """The oldest macOS whose MPS the given torch supports.

    torch 2.9 raised it to macOS 14 (pytorch/pytorch#163515); earlier 2.x releases need macOS 13.
    """
    version = _version_tuple(torch_version or torch.__version__)
    return (14, 0) if version[:2] >= (2, 9) else (13, 0)


class MPSAccelerator(Accelerator):
    """The Apple GPU. Unified memory is one device, and neither gloo nor NCCL can move MPS tensors."""

    name = "mps"
    description = "Apple silicon GPU through Metal Performance Shaders (one device)"
    device_type = "mps"
    auto_priority = 90
    is_gpu = True
    distributed_backend = None

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why MPS cannot be used; none where ``is_available`` says it can, also where a test replaced it on the
        class (Lightning's ``mps_count_1`` fixture): the two answers must agree, or the registry reports the
        accelerator as misbehaving."""
        if cls.is_available():
            return None
        return cls._diagnosis() or f"{cls.__name__}.is_available(), replaced in this process, reports no Apple GPU"

    @classmethod
    def _diagnosis(cls) -> str | None:
        """The first reason, in the order a person would check them, that MPS cannot be used here."""
        system = platform.system()
        if system != "Darwin":
            return (
                f"MPS needs macOS on an Apple silicon Mac, and this machine runs {system or 'an unknown OS'} "
                f"({platform.machine() or 'unknown machine'}). On Linux or Windows use 'cuda' or 'cpu'."
            )
        if is_rosetta_translated():
            return ROSETTA_EXPLANATION
        if not torch.backends.mps.is_built():
            return (
                f"the installed torch {torch.__version__} was built without MPS support "
                "(torch.backends.mps.is_built() is False). Install the official macOS arm64 wheel: "
                "pip install --force-reinstall torch"
            )
        found = platform.mac_ver()[0]
        needed = minimum_macos_for_torch()
        needed_text = ".".join(map(str, needed))
        if found == "10.16":
            return (
                "this Python reports macOS 10.16, a compatibility number given to programs built "
                "against an old SDK, so the real macOS version is hidden from torch. Use a Python "
                f"built for macOS 11 or newer (python.org universal2, Homebrew, conda); torch "
                f"{torch.__version__} needs macOS {needed_text} or newer for MPS."
            )
        if found and _version_tuple(found)[:2] < needed:
            return (
                f"this Mac runs macOS {found}, and torch {torch.__version__} needs macOS {needed_text} "
                "or newer for MPS. Update macOS (System Settings > General > Software Update) or "
                "install an older torch that supports it."
            )
        if not torch.backends.mps.is_available():
            return (
                f"torch.backends.mps.is_available() is False on macOS {found or 'unknown'} "
                f"({platform.machine()}), for example in a virtual machine without GPU access."
            )
        return None

    @classmethod
    def is_available(cls) -> bool:
        return cls._diagnosis() is None

    @classmethod
    def device_count(cls) -> int:
        """At most one: the GPU shares the Mac's unified memory and torch exposes it as ``mps:0``.

        Counted through ``_get_all_available_mps_gpus`` as seen at Lightning's path, where code written for
        Lightning fakes the Apple GPU in its tests (with ``MPSAccelerator.is_available``, on this same class)."""
        listed = seen_at(
            "accelplug.fabric.accelerators.mps", "_get_all_available_mps_gpus", _get_all_available_mps_gpus
        )
        return min(len(listed()), 1)

    @classmethod
    def auto_device_count(cls) -> int:
        """One, as in Lightning, whether or not this machine has the Apple GPU (``device_count()`` says that)."""
        return 1

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("single_device",)

    def setup_device(self, device: torch.device) -> None:
        self.check_device_type(device, "MPS")

    @classmethod
    def supported_precisions(cls) -> tuple[str, ...]:
        # float64 does not exist on the Apple GPU.
        return ("32-true", "bf16-mixed", "16-mixed")

    def get_device_stats(self, device: torch.device) -> dict[str, float]:
        mps = torch.mps
        return {
            "allocated_bytes": float(mps.current_allocated_memory()),
            "driver_allocated_bytes": float(mps.driver_allocated_memory()),
            "recommended_max_bytes": float(mps.recommended_max_memory()),
        }

    def teardown(self) -> None:
        if self.is_available():
            torch.mps.empty_cache()


def _get_all_available_mps_gpus() -> list[int]:
    """The indices of the usable Apple GPUs: ``[0]`` or none. Lightning's private name, kept because it is the
    patch point of Lightning's ``mps_count_N`` test fixtures (``lightning.fabric.accelerators.mps``)."""
    return [0] if MPSAccelerator.is_available() else []


def mps_host_stats() -> dict[str, float]:
    """The Mac's load under Lightning's MPS names (``M1_vm_percent``, ``M1_percent``, ``M1_swap_percent``, in %),
    read through psutil (Lightning's module-level ``get_device_stats``); ``ModuleNotFoundError`` without it."""
    try:
        import psutil
    except ImportError:
        raise ModuleNotFoundError(
            "The MPS host stats are read through psutil, which is not installed: pip install psutil"
        ) from None
    return {
        "M1_vm_percent": float(psutil.virtual_memory().percent),
        "M1_percent": float(psutil.cpu_percent()),
        "M1_swap_percent": float(psutil.swap_memory().percent),
    }
