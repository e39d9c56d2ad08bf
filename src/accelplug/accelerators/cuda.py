"""NVIDIA GPUs through CUDA, counted through NVML so that asking never initialises CUDA."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import torch

from ..accelerator import Accelerator
from ..hardware import _nvml

__all__ = ["CUDAAccelerator"]

_JETSON_DEVICE_NODE = "/dev/nvhost-ctrl-gpu"  # Jetson boards have CUDA but no NVML


def _cuda_initialized() -> bool:
    return bool(torch.cuda.is_initialized())  # type: ignore[no-untyped-call]


#: A child that imports torch and counts; generous because a cold start on a cluster file system is slow.
_SUBPROCESS_TIMEOUT_S = 60.0


def _count_in_subprocess() -> tuple[int, str | None]:
    """(count, error) from torch in a child process, so CUDA is initialised there and not here.

    The child inherits this process's environment, ``CUDA_VISIBLE_DEVICES`` included, so it sees
    exactly what a run started from here would see.
    """
    code = "import torch; print(torch.cuda.device_count())"
    try:
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=_SUBPROCESS_TIMEOUT_S, check=True
        )
        return int(out.stdout.strip().splitlines()[-1]), None
    except subprocess.TimeoutExpired:
        return 0, f"counting the GPUs in a child process took longer than {_SUBPROCESS_TIMEOUT_S:g} s"
    except subprocess.CalledProcessError as exc:
        last = (exc.stderr or "").strip().splitlines()[-1:] or ["no message"]
        return 0, f"counting the GPUs in a child process failed ({last[0]})"
    except (OSError, ValueError, IndexError) as exc:
        return 0, f"counting the GPUs in a child process failed ({type(exc).__name__}: {exc})"


def _probe() -> tuple[int, str | None]:
    """(visible device count, reason when there are none), asked once per visibility setting."""
    return _probe_cached(os.environ.get("CUDA_VISIBLE_DEVICES"), _cuda_initialized())


@functools.lru_cache(maxsize=8)
def _probe_cached(visible: str | None, initialized: bool) -> tuple[int, str | None]:
    if torch.version.cuda is None and torch.version.hip is None:
        return 0, (
            f"the installed torch {torch.__version__} was built without CUDA support. Install a CUDA "
            "build, for example: pip install torch --index-url https://download.pytorch.org/whl/cu128"
        )
    if initialized or torch.version.hip is not None:
        count = torch.cuda.device_count()  # already initialised (or ROCm): asking costs nothing
        return count, None if count else "torch sees no GPU in this process"
    note = None
    try:
        gpus = _nvml.visible_gpus()
        count = len(gpus)
        if count == 0 and visible is not None:
            note = _nvml.why_hidden(visible)
    except _nvml.VisibilityUndecided:
        count, error = _count_in_subprocess()  # MIG instances: only the runtime can say
        if error is not None:
            return 0, error
    except _nvml.NvmlUnavailable as exc:
        if not os.path.exists(_JETSON_DEVICE_NODE):
            return 0, str(exc)
        count, error = _count_in_subprocess()
        if count == 0:
            return 0, error or "this Jetson-style device exposes no CUDA device to torch"
    if count == 0:
        if visible is not None:
            because = f" ({note})" if note else ""
            return 0, (
                f"CUDA_VISIBLE_DEVICES={visible!r} hides every NVIDIA GPU of this machine from this "
                f"process{because}; unset it or list valid GPU indices or GPU-<uuid> prefixes"
            )
        return 0, "the NVIDIA driver is installed but reports no GPU"
    return count, None


class CUDAAccelerator(Accelerator):
    name = "cuda"
    description = "NVIDIA GPUs through CUDA (DDP over NCCL)"
    device_type = "cuda"
    auto_priority = 100
    is_gpu = True
    distributed_backend = "nccl"

    @classmethod
    def is_available(cls) -> bool:
        return _probe()[0] > 0

    @classmethod
    def device_count(cls) -> int:
        return _probe()[0]

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return _probe()[1]

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("single_device", "ddp")

    @classmethod
    def supported_precisions(cls) -> tuple[str, ...]:
        return ("32-true", "64-true", "bf16-mixed", "16-mixed")

    def setup_device(self, device: torch.device) -> None:
        """Make ``device`` current so that kernels and NCCL land on the GPU this process owns."""
        torch.cuda.set_device(device)

    def teardown(self) -> None:
        if _cuda_initialized():
            torch.cuda.empty_cache()

    def get_device_stats(self, device: torch.device) -> dict[str, float]:
        return {k: float(v) for k, v in torch.cuda.memory_stats(device).items() if isinstance(v, (int, float))}
