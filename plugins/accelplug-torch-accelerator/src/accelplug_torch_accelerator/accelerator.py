"""A bridge to the device ``torch.accelerator`` reports, for hardware no dedicated plugin covers.

Out-of-tree backends (Ascend NPU through ``torch_npu``, other PrivateUse1 devices) implement
``torch.accelerator``'s device-neutral API, so one accelerator class can drive any of them:
counting devices, making one current, synchronising, and reading allocator statistics all go
through ``torch.accelerator``. accelplug then supports new hardware on the day torch does.

Where a dedicated accelerator already serves the device type (``cuda`` is built in, ``xpu`` has its
plugin), the bridge steps aside: it reports itself unavailable and names the owner, so
``accelerator="auto"`` picks the dedicated one, which knows the device better. Setting
``ACCELPLUG_TORCH_ACCELERATOR_FORCE=1`` runs it anyway, which is how it is proven on a CUDA machine.

The device type is read once, when the plugin is imported, from
``torch.accelerator.current_accelerator()`` without its runtime check: that answer is fixed when
torch and its backends are built and loaded, and asking it initialises nothing. Backends that
register through torch's device-backend autoloading (entry-point group ``torch.backends``) are
already loaded by ``import torch``; one that must be imported by hand must be imported before
accelplug loads its plugins, and the bridge says so if it was not.
"""

from __future__ import annotations

import inspect

import torch

from accelplug import Accelerator, get_registry
from accelplug.envvars import env_flag
from accelplug.hardware.capabilities import capabilities

__all__ = ["FORCE_ENV", "TorchAcceleratorBridge", "torch_accelerator_type"]

FORCE_ENV = "ACCELPLUG_TORCH_ACCELERATOR_FORCE"
#: torch's name for the PrivateUse1 device type before a backend renames it: the slot out-of-tree
#: backends plug into, and the bridge's device type when torch reports no accelerator at all.
PRIVATEUSE1_DEVICE_TYPE = "privateuseone"


def _has_neutral_api() -> bool:
    """Whether this torch has ``current_accelerator(check_available=...)``.

    The flag, and the promise that asking without it never initialises a device (and so never
    breaks a later fork), came with pytorch/pytorch#146443 (torch 2.7); the bridge needs both.
    """
    api = getattr(torch, "accelerator", None)
    current = getattr(api, "current_accelerator", None)
    return current is not None and "check_available" in inspect.signature(current).parameters


def torch_accelerator_type() -> str | None:
    """The device type of torch's current accelerator (``"cuda"``, ``"npu"``, ...), or None.

    Compile-time answer only (``check_available=False``): no runtime is initialised.
    """
    if not _has_neutral_api():
        return None
    device = torch.accelerator.current_accelerator(check_available=False)
    return None if device is None else device.type


def _forced() -> bool:
    """``ACCELPLUG_TORCH_ACCELERATOR_FORCE``: 1/true/yes/on or 0/false/no/off; anything else is refused."""
    return env_flag(FORCE_ENV)


def _distributed_backend(device_type: str | None) -> str | None:
    """torch.distributed's default backend for ``device_type`` (nccl for cuda, hccl once torch_npu
    registers it), from the map ``Backend.register_backend(..., devices=...)`` fills; None if none."""
    if device_type is None:
        return None
    import torch.distributed as dist

    if not dist.is_available():
        return None
    return dist.Backend.default_device_backend_map.get(device_type)


_DEVICE_TYPE = torch_accelerator_type()


class TorchAcceleratorBridge(Accelerator):
    """The current ``torch.accelerator`` device, unless a dedicated accelerator owns its type."""

    name = "torch_accelerator"
    description = f"the device torch.accelerator reports ({_DEVICE_TYPE or 'none in this torch'})"
    device_type = _DEVICE_TYPE or PRIVATEUSE1_DEVICE_TYPE
    auto_priority = 10  # above the CPU; below every dedicated accelerator
    is_gpu = False  # an NPU or other PrivateUse1 device is not necessarily a GPU
    distributed_backend = _distributed_backend(_DEVICE_TYPE)

    # ---- class-level queries: no runtime initialised ----------------------------------------------
    @classmethod
    def owner(cls) -> str | None:
        """The name of another registered accelerator serving this device type, if any."""
        for entry in get_registry().entries():
            if entry.cls is not cls and entry.cls.device_type == cls.device_type:
                return entry.cls.name
        return None

    @classmethod
    def unavailable_reason(cls) -> str | None:
        if not _has_neutral_api():
            return (
                f"torch {torch.__version__} predates torch.accelerator.current_accelerator(check_available=...) "
                "(torch 2.7), which the bridge needs to find the device without initialising it. Upgrade torch."
            )
        current = torch_accelerator_type()
        if current is None:
            return (
                f"torch {torch.__version__} reports no accelerator (torch.accelerator.current_accelerator() is "
                "None): it is a CPU-only build and no out-of-tree backend is loaded. Install the torch build "
                "or the backend package for your device (e.g. torch_npu for Ascend NPUs)."
            )
        if current != cls.device_type:
            return (
                f"torch's current accelerator is {current!r}, but it was {cls.device_type!r} when accelplug loaded "
                f"its plugins: import the backend of {current!r} before using accelplug (or enable torch's "
                "backend autoloading, TORCH_DEVICE_BACKEND_AUTOLOAD=1)."
            )
        if not _forced():
            owner = cls.owner()
            if owner is not None:
                return (
                    f"torch's current accelerator is {current!r}, which accelerator {owner!r} already serves; "
                    f"use accelerator={owner!r} (the bridge steps aside so 'auto' picks it), or set {FORCE_ENV}=1 "
                    "to run through torch.accelerator anyway."
                )
        if cls._count() == 0:
            return (
                f"torch.accelerator reports the {current!r} backend but no visible device "
                "(torch.accelerator.device_count() is 0): check the device driver and any variable that "
                "restricts which devices this process sees."
            )
        return None

    @classmethod
    def _count(cls) -> int:
        # torch.accelerator.device_count() delegates to the backend's device_count(); for CUDA it
        # counts through NVML when it can, so it initialises nothing (torch 2.13 docstring).
        return int(torch.accelerator.device_count())

    @classmethod
    def is_available(cls) -> bool:
        return cls.unavailable_reason() is None

    @classmethod
    def device_count(cls) -> int:
        return cls._count() if cls.is_available() else 0

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("single_device", "ddp") if cls.distributed_backend else ("single_device",)

    @classmethod
    def supported_precisions(cls) -> tuple[str, ...]:
        """Mixed precision in each half type torch's autocast accepts on the device (a PrivateUse1 backend
        lists them in ``get_amp_supported_dtype()``); float64 is not promised."""
        dtypes = capabilities(cls.device_type).autocast_dtypes()
        mixed = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}
        return ("32-true", *(name for name, dtype in mixed.items() if dtype in dtypes))

    # ---- per run ------------------------------------------------------------------------------------
    def __init__(self) -> None:
        self._device: torch.device | None = None

    def setup_device(self, device: torch.device) -> None:
        """Make ``device`` current: ``set_device_index``, or its older name ``set_device_idx`` (still
        present, deprecated, in torch 2.13) on a torch that predates the rename."""
        api = torch.accelerator
        set_index = getattr(api, "set_device_index", None) or api.set_device_idx
        set_index(device.index if device.index is not None else 0)
        self._device = device

    def teardown(self) -> None:
        """Wait for queued work, then return cached memory, each where the backend can (a backend may keep
        no caching allocator: torchvulkan's ``torch.accelerator.empty_cache()`` raises "not a
        DeviceAllocator"); :mod:`accelplug.hardware.capabilities` asks, and logs what it lacks at debug level."""
        if self._device is None:
            return  # never set up: touching the device now would initialise its runtime for nothing
        found = capabilities(self._device.type)
        found.synchronize(self._device)
        found.empty_cache()
        self._device = None

    def get_device_stats(self, device: torch.device) -> dict[str, float]:
        """The allocator's statistics (the backend module's ``memory_stats``, else ``torch.accelerator``'s);
        empty for a backend that keeps none."""
        return capabilities(device.type).memory_stats(device)
