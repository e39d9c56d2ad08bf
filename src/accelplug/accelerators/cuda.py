"""NVIDIA GPUs through CUDA, counted through NVML so that asking never initialises CUDA."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import torch

from .._import_paths import seen_at
from ..accelerator import Accelerator

__all__ = [
    "CUDAAccelerator",
    "find_usable_cuda_devices",
    "get_nvidia_gpu_stats",
    "is_cuda_available",
    "num_cuda_devices",
]

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
    from ..hardware import _nvml  # the driver's view, asked only where torch can use CUDA at all

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
        return _count()[0] > 0

    @classmethod
    def device_count(cls) -> int:
        """The visible devices; at least one where ``is_available`` was replaced to say there is a GPU (a test's
        ``mock.patch(...CUDAAccelerator.is_available, return_value=True)``), so the two answers agree."""
        count = _count()[0]
        return count if count or not cls.is_available() else 1

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why there is no device; none where ``is_available`` says there is one, also where a test replaced it
        (``mock.patch("lightning.pytorch.accelerators.cuda.CUDAAccelerator.is_available", return_value=True)``):
        the two answers must agree, or the registry reports the accelerator as misbehaving."""
        if cls.is_available():
            return None
        return _count()[1] or f"{cls.__name__}.is_available(), replaced in this process, reports no CUDA device"

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("single_device", "ddp")

    @classmethod
    def supported_precisions(cls) -> tuple[str, ...]:
        return ("32-true", "64-true", "bf16-mixed", "16-mixed")

    def setup_device(self, device: torch.device) -> None:
        """Make ``device`` current so that kernels and NCCL land on the GPU this process owns."""
        self.check_device_type(device, "CUDA")
        torch.cuda.set_device(device)

    def teardown(self) -> None:
        if _cuda_initialized():
            torch.cuda.empty_cache()

    def get_device_stats(self, device: torch.device) -> dict[str, float]:
        return {k: float(v) for k, v in torch.cuda.memory_stats(device).items() if isinstance(v, (int, float))}


def num_cuda_devices() -> int:
    """How many CUDA devices this process may use, counted without initialising CUDA here."""
    return _probe()[0]


#: The original counter; a path whose ``num_cuda_devices`` is anything else has been replaced by its user.
_UNREPLACED = num_cuda_devices

#: Where code written for Lightning replaces the count to fake GPUs in its tests (Lightning's conftest
#: ``cuda_count_N`` fixtures patch both). The Trainer's path comes first: Lightning's Trainer counts through it.
_PATCH_POINTS = ("accelplug.pytorch.accelerators.cuda", "accelplug.fabric.accelerators.cuda")


def _count() -> tuple[int, str | None]:
    """(count, reason when none) as the accelerator reports it: what a user put in place of ``num_cuda_devices``
    at one of Lightning's paths (:data:`_PATCH_POINTS`) or here, else the probe's answer.

    Lightning's accelerator counts through the module global ``num_cuda_devices`` of its own module, so a test
    (``monkeypatch.setattr(lightning.fabric.accelerators.cuda, "num_cuda_devices", lambda: 2)``) makes the
    Trainer choose two GPUs. accelplug's paths only re-export this module's function, so the count looks the name
    up at the paths each time (:func:`~accelplug._import_paths.seen_at`, which never imports them) and then in
    this module's globals; unreplaced, that is the probe, which never initialises CUDA.
    """
    for path in _PATCH_POINTS:
        replaced = seen_at(path, "num_cuda_devices", _UNREPLACED)
        if replaced is not _UNREPLACED:
            return _replaced_count(replaced(), f"{path}.num_cuda_devices()")
    if num_cuda_devices is not _UNREPLACED:
        return _replaced_count(num_cuda_devices(), f"{__name__}.num_cuda_devices()")
    return _probe()


def _replaced_count(count: int, where: str) -> tuple[int, str | None]:
    return int(count), None if count else f"{where}, replaced in this process, reports no CUDA device"


def is_cuda_available() -> bool:
    """Whether this process may use a CUDA device, asked without initialising CUDA here."""
    return num_cuda_devices() > 0


def find_usable_cuda_devices(num_devices: int = -1) -> list[int]:
    """The indices of ``num_devices`` CUDA devices (all of them for -1) on which a tensor can be made now: a GPU in
    exclusive-process mode that another process holds is skipped. Fewer than asked is an error."""
    if num_devices == 0:
        return []
    visible = list(range(_count()[0]))  # a count replaced at Lightning's paths is the one asked, as for the Trainer
    if not visible:
        raise ValueError(
            f"You requested to find {num_devices} devices but there are no visible CUDA devices on this machine."
        )
    if num_devices > len(visible):
        raise ValueError(f"You requested to find {num_devices} devices but this machine only has {len(visible)} GPUs.")
    usable: list[int] = []
    busy: list[int] = []
    for index in visible:
        try:
            torch.tensor(0, device=torch.device("cuda", index))
        except RuntimeError:
            busy.append(index)
            continue
        usable.append(index)
        if len(usable) == num_devices:
            break
    if num_devices != -1 and len(usable) != num_devices:
        raise RuntimeError(
            f"You requested to find {num_devices} devices but only {len(usable)} are currently available. The devices "
            f"{busy} are occupied by other processes and can't be used at the moment."
        )
    return usable


#: What ``get_nvidia_gpu_stats`` asks ``nvidia-smi``, with each figure's unit (Lightning's keys).
_SMI_FIGURES = (
    ("utilization.gpu", "%"),
    ("memory.used", "MB"),
    ("memory.free", "MB"),
    ("utilization.memory", "%"),
    ("fan.speed", "%"),
    ("temperature.gpu", "°C"),
    ("temperature.memory", "°C"),
)


def _smi_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:  # "[N/A]" for a figure the card does not report
        return 0.0


def get_nvidia_gpu_stats(device: torch.device | str | int) -> dict[str, float]:
    """The figures ``nvidia-smi`` reports for ``device`` (utilization, memory, fan, temperatures), keyed
    ``"<figure> (<unit>)"``; ``FileNotFoundError`` without ``nvidia-smi``."""
    import shutil

    smi = shutil.which("nvidia-smi")
    if smi is None:
        raise FileNotFoundError("nvidia-smi: command not found")
    index = torch.device(device).index if not isinstance(device, int) else device
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    gpu_id = visible[index or 0] if visible and (index or 0) < len(visible) else str(index or 0)
    query = ",".join(name for name, _ in _SMI_FIGURES)
    result = subprocess.run(
        [smi, f"--query-gpu={query}", "--format=csv,nounits,noheader", f"--id={gpu_id}"],
        encoding="utf-8",
        capture_output=True,
        check=True,
    )
    values = [_smi_number(text) for text in result.stdout.strip().split(", ")]
    return {f"{name} ({unit})": value for (name, unit), value in zip(_SMI_FIGURES, values, strict=False)}
