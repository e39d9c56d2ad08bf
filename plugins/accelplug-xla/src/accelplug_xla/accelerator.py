"""XLA devices through torch_xla's PJRT runtime: ``accelerator="xla"`` and ``accelerator="tpu"``.

``xla`` is whatever device ``PJRT_DEVICE`` names (the host CPU with ``PJRT_DEVICE=CPU``, TPUs);
``tpu`` is the same accelerator restricted to TPUs, the name Lightning users type. Both run one
device in one process through the ``single_xla`` strategy (:mod:`.strategy`), which marks each step
of the lazy device, uploads batches in the background and writes checkpoints from CPU copies.

The class-level queries read package metadata and environment variables only (:mod:`.environment`);
torch_xla is imported, and its runtime started, by ``setup_device`` once a run has chosen XLA.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from accelplug import Accelerator

from . import environment

__all__ = ["TPUAccelerator", "XLAAccelerator"]


class XLAAccelerator(Accelerator):
    """One XLA device of the PJRT device type ``PJRT_DEVICE`` names."""

    name = "xla"
    description = "XLA devices through torch_xla's PJRT runtime (PJRT_DEVICE=CPU: the host CPU; TPU)"
    device_type = "xla"
    # Below the CPU (0): XLA on the host CPU is a way to run XLA code without a TPU, not a faster CPU,
    # so accelerator="auto" never picks it; on a TPU VM the "tpu" accelerator (above CUDA) is picked.
    auto_priority = -1
    #: The PJRT device types this class accepts (the ``tpu`` subclass narrows them to TPUs).
    device_types: ClassVar[tuple[str, ...]] = environment.SUPPORTED_DEVICE_TYPES

    # ---- class-level queries: no torch_xla import, no runtime ----------------------------------------
    @classmethod
    def unavailable_reason(cls) -> str | None:
        problem = environment.torch_xla_problem()
        if problem is not None:
            return problem
        devices = environment.pjrt_devices()
        if devices.problem is not None:
            return devices.problem
        if devices.device_type not in cls.device_types:
            return cls._wrong_device_type(devices.device_type)
        return None

    @classmethod
    def _wrong_device_type(cls, device_type: str | None) -> str:
        return f"PJRT device type {device_type!r} is not one of {cls.device_types}."

    @classmethod
    def is_available(cls) -> bool:
        return cls.unavailable_reason() is None

    @classmethod
    def device_count(cls) -> int:
        if not cls.is_available():
            return 0
        return environment.pjrt_devices().count

    @classmethod
    def auto_device_count(cls) -> int:
        """One: this plugin runs one XLA device per process (see ``supported_strategies``)."""
        return min(cls.device_count(), 1)

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        """``single_xla`` only: several XLA devices need torch_xla's own multi-process launcher
        (``xmp.spawn``) and its collectives, which this plugin does not drive."""
        return ("single_xla",)

    @classmethod
    def supported_precisions(cls) -> tuple[str, ...]:
        """float32; bfloat16 under ``torch.autocast("xla")`` or throughout; float64 on the CPU only.

        TPUs have no native float64 (XLA emulates it slowly, when at all), and float16 with loss
        scaling would need torch_xla's own gradient scaler, which accelplug's precisions do not use.
        """
        devices = environment.pjrt_devices()
        if devices.device_type == "CPU":
            return ("32-true", "bf16-mixed", "bf16-true", "64-true")
        return ("32-true", "bf16-mixed", "bf16-true")

    # ---- per run -----------------------------------------------------------------------------------------
    def __init__(self) -> None:
        self._device: torch.device | None = None

    def setup_device(self, device: torch.device) -> None:
        """Start torch_xla's runtime and seed the device's generator from torch's seed.

        XLA devices draw random numbers (dropout, ``torch.rand(device=...)``) from a generator of their
        own, which ``torch.manual_seed`` does not reach; seeding it from ``torch.initial_seed()`` makes
        ``seed_everything(n)`` (and ``Trainer(seed=n)``) decide them too, without drawing from torch's
        generator.
        """
        from . import runtime

        runtime.set_rng_state(torch.initial_seed(), device)
        self._device = device

    def get_device_stats(self, device: torch.device) -> dict[str, float]:
        from . import runtime

        return runtime.memory_info(device)

    def get_rng_state(self) -> Any:
        """The device generator's seed (an int), once ``setup_device`` has run; None before.

        Still answered after the run's teardown, so ``trainer.save_checkpoint()`` after ``fit`` records it.
        """
        if self._device is None:
            return None
        from . import runtime

        return runtime.get_rng_state(self._device)

    def set_rng_state(self, state: Any) -> None:
        if self._device is not None:
            from . import runtime

            runtime.set_rng_state(int(state), self._device)


class TPUAccelerator(XLAAccelerator):
    """XLA on TPU chips only: Lightning's ``accelerator="tpu"``."""

    name = "tpu"
    description = "Google TPUs through torch_xla (PJRT_DEVICE=TPU, or unset on a TPU VM)"
    # Above CUDA (100), as Lightning ranks TPUs first: a TPU VM has no other accelerator worth choosing.
    auto_priority = 110
    device_types = ("TPU",)

    @classmethod
    def _wrong_device_type(cls, device_type: str | None) -> str:
        return (
            f"PJRT_DEVICE={device_type!r} runs XLA on the host {device_type}, not on a TPU: use accelerator='xla' "
            f"for it, or set PJRT_DEVICE=TPU on a machine with TPU chips for accelerator='tpu'."
        )
