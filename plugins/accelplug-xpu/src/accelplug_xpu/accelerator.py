"""Intel GPUs through ``torch.xpu``, PyTorch's upstream Intel GPU backend (SYCL / Level Zero).

Everything goes through ``torch.xpu``'s public functions, looked up at call time (so tests can put a
stand-in for ``torch.xpu`` in place), plus ``torch.xpu._is_compiled()``: the check
``torch.xpu.device_count()`` itself makes first, and the only way to tell "this torch has no XPU
support" from "this machine has no Intel GPU", which need different remedies.

Asking whether XPU is available never initialises the XPU runtime (``torch.xpu.is_initialized()``
stays False): ``torch.xpu.device_count()`` counts devices through Level Zero Sysman when it can and
initialises nothing either way. Device names and float64 support need device properties, which do
initialise the runtime, so they are asked only once a run has chosen this accelerator.
"""

from __future__ import annotations

import os

import torch

from accelplug import Accelerator

__all__ = ["XPUAccelerator", "choose_distributed_backend"]

#: The pip index of PyTorch's XPU wheels (see pytorch.org "Getting Started on Intel GPU").
XPU_WHEEL_INDEX = "https://download.pytorch.org/whl/xpu"


def choose_distributed_backend() -> str | None:
    """``"xccl"`` when this torch can all-reduce XPU tensors with it, else None (no multi-device runs).

    torch.distributed's XCCL backend (oneCCL; pytorch/pytorch#136343) is built into the XPU release
    wheels from torch 2.8 (intel/torch-xpu-ops#1318 kept it off for 2.7; vllm-project/vllm#19410
    relies on it from 2.8), and ``torch.distributed.is_xccl_available()`` says whether this build
    has it. There is no fallback: gloo cannot reduce XPU tensors (pytorch/pytorch#142096, and
    intel/torch-xpu-ops#5387 declines to add it), so without XCCL an XPU run uses one device.
    """
    import torch.distributed as dist

    if not dist.is_available():
        return None
    probe = getattr(dist, "is_xccl_available", None)  # absent before XCCL landed in torch
    return "xccl" if callable(probe) and probe() else None


def _built_with_xpu() -> bool:
    return bool(torch.xpu._is_compiled())


class XPUAccelerator(Accelerator):
    """Intel Data Center GPU Max, Arc and integrated GPUs that ``torch.xpu`` supports."""

    name = "xpu"
    description = "Intel GPUs through torch.xpu (DDP over XCCL where torch has it)"
    device_type = "xpu"
    auto_priority = 80  # below CUDA (100) and MPS (90): a machine with both GPUs keeps using CUDA
    is_gpu = True
    distributed_backend = choose_distributed_backend()

    # ---- class-level queries: no runtime initialised ----------------------------------------------
    @classmethod
    def device_count(cls) -> int:
        return int(torch.xpu.device_count()) if _built_with_xpu() else 0

    @classmethod
    def is_available(cls) -> bool:
        return cls.device_count() > 0

    @classmethod
    def unavailable_reason(cls) -> str | None:
        if not _built_with_xpu():
            return (
                f"the installed torch {torch.__version__} was built without XPU support (torch.xpu._is_compiled() "
                f"is False). Install an XPU build: pip install torch --index-url {XPU_WHEEL_INDEX}"
            )
        if torch.xpu.device_count() > 0:
            return None
        mask = os.environ.get("ZE_AFFINITY_MASK")
        hidden = (
            f" ZE_AFFINITY_MASK={mask!r} restricts which devices this process sees; unset it or name "
            "devices that exist."
            if mask is not None
            else ""
        )
        return (
            f"torch {torch.__version__} supports XPU but finds no Intel GPU. Install the Intel GPU driver "
            f"(the Level Zero compute runtime) and check that this user may open /dev/dri/renderD*.{hidden}"
        )

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("single_device", "ddp") if cls.distributed_backend else ("single_device",)

    @classmethod
    def supported_precisions(cls) -> tuple[str, ...]:
        """Autocast on ``xpu`` does bfloat16 and float16; float64 is left out on purpose.

        Some Intel GPUs (the Arc A-series) have no native float64, and telling them apart needs
        ``torch.xpu.get_device_properties().has_fp64``, which initialises the runtime.
        """
        return ("32-true", "bf16-mixed", "16-mixed")

    @classmethod
    def device_names(cls) -> list[str]:
        """Marketing names of the visible devices. Initialises the XPU runtime: call it after selection."""
        return [str(torch.xpu.get_device_name(i)) for i in range(cls.device_count())]

    # ---- per run ------------------------------------------------------------------------------------
    def setup_device(self, device: torch.device) -> None:
        """Make ``device`` current, so kernels and XCCL land on the GPU this process owns."""
        torch.xpu.set_device(device)

    def teardown(self) -> None:
        if torch.xpu.is_initialized():  # type: ignore[no-untyped-call]
            torch.xpu.empty_cache()

    def get_device_stats(self, device: torch.device) -> dict[str, float]:
        """torch.xpu's caching-allocator statistics (``allocated_bytes.all.current``, ...)."""
        stats = torch.xpu.memory_stats(device)
        return {k: float(v) for k, v in stats.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
