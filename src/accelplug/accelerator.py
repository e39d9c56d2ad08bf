"""The ``Accelerator`` abstract base class every accelerator, built-in or plugin, subclasses.

Queries that decide *whether and where* to run are classmethods: they must be cheap and must never
initialise a device runtime, because ``accelerator="auto"`` asks every registered accelerator before
a process forks. Work done *for one run* (selecting the current device, statistics, teardown) lives
on instances, created only once an accelerator has been chosen.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import torch

from .errors import MisconfigurationException
from .hardware.devices import parse_devices as _parse_devices
from .hardware.runtime import device_rng_state, set_device_rng_state

__all__ = ["NAME_PATTERN", "Accelerator"]

#: Registry keys are lowercase identifiers so they read well on a command line and in an env var.
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


class Accelerator(ABC):
    """A kind of hardware a run can use, and how to find out whether this machine has it."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    device_type: ClassVar[str]
    auto_priority: ClassVar[int] = 0
    is_gpu: ClassVar[bool] = False
    #: torch.distributed backend for multi-process runs on this accelerator, None when it has none.
    distributed_backend: ClassVar[str | None] = None

    # ---- class-level queries: cheap, no device initialised -------------------------------------
    @classmethod
    @abstractmethod
    def is_available(cls) -> bool:
        """Whether a run could use this accelerator right now, without initialising it."""

    @classmethod
    @abstractmethod
    def device_count(cls) -> int:
        """How many devices a run may use; 0 when unavailable."""

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """A diagnosis a person can act on; None exactly when the accelerator is available."""
        if cls.is_available():
            return None
        return (
            f"the {cls.name!r} accelerator reports that it is not available on this machine "
            f"(its plugin gives no further detail)."
        )

    @classmethod
    def auto_device_count(cls) -> int:
        """How many devices ``devices="auto"`` means: all of them, but one when the accelerator has
        no strategy that uses several (``supported_strategies()`` is only ``single_device``), so that
        ``Trainer()`` with every argument left at its default always runs."""
        count = cls.device_count()
        if set(cls.supported_strategies()) <= {"single_device"}:
            return min(count, 1)
        return count

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        """Strategy names this accelerator can run.

        ``strategy="auto"`` on one device uses the first when it runs in one process (so a backend whose
        device needs its own single-device strategy lists that one first), else ``single_device``.
        """
        return ("single_device",)

    @classmethod
    def supported_precisions(cls) -> tuple[str, ...]:
        """Canonical precision names (see :data:`accelplug.precision.names.PRECISIONS`) this accelerator trains in."""
        return ("32-true",)

    @classmethod
    def parse_devices(cls, devices: object) -> list[int]:
        """Device indices for a ``devices`` argument; a bad one raises ``MisconfigurationException``."""
        return _parse_devices(devices, cls.device_count(), cls.name, cls.auto_device_count())

    @classmethod
    def get_device(cls, index: int) -> torch.device:
        """The torch device for index ``index`` of this accelerator."""
        return torch.device(cls.device_type, index)

    @classmethod
    def get_parallel_devices(cls, devices: object) -> list[torch.device]:
        """The torch devices of a run, one per process (Lightning's classmethod): for a list of device indices (what
        ``parse_devices`` returns) the device of each index as given, for any other ``devices`` value the devices
        ``parse_devices`` selects."""
        if isinstance(devices, (list, tuple)) and all(isinstance(i, int) and not isinstance(i, bool) for i in devices):
            indices = list(devices)
        else:
            indices = cls.parse_devices(devices)
        return [cls.get_device(i) for i in indices]

    @classmethod
    def check_device_type(cls, device: torch.device, label: str) -> None:
        """Refuse a device of another type than this accelerator's (``setup_device(torch.device("cuda"))`` on the
        CPU accelerator): ``MisconfigurationException``, a ``ValueError`` as in Lightning, with Lightning's words."""
        if device.type != cls.device_type:
            raise MisconfigurationException(
                f"Device should be {label}, got {device} instead: the {cls.name!r} accelerator runs on "
                f"{cls.device_type!r} devices only."
            )

    # ---- per-run methods ------------------------------------------------------------------------
    def setup_device(self, device: torch.device) -> None:  # noqa: B027 - optional hook
        """Prepare ``device`` for this process (e.g. make it the current CUDA device)."""

    def setup(self, trainer: Any) -> None:  # noqa: B027 - optional hook
        """Lightning's per-call hook: the Trainer calls it at the start of each ``fit``/``validate``/``test``/
        ``predict``, after ``setup_device``, with itself (a backend that reads the Trainer's options overrides it)."""

    def teardown(self) -> None:  # noqa: B027 - optional hook
        """Release what ``setup_device`` acquired."""

    def get_device_stats(self, device: torch.device) -> dict[str, float]:
        """Memory and utilisation figures for logging; empty when the backend offers none."""
        return {}

    def get_rng_state(self) -> Any:
        """This device's own random-number state, for checkpoints and exact resumption; None when its
        random numbers come from generators accelplug already saves (torch's CPU generator, CUDA's).

        By default the state of the device module's generator (``torch.get_device_module(type)``: MPS,
        XPU, a PrivateUse1 backend), when its runtime is running. A backend whose device draws from a
        generator of another kind (a lazy device's seed) overrides this, returning tensors and plain values
        only, because checkpoints load with ``weights_only=True``.
        """
        if self.device_type in ("cpu", "cuda"):
            return None  # the checkpoint saves torch's and every CUDA device's generator itself
        return device_rng_state(self.device_type)

    def set_rng_state(self, state: Any) -> None:
        """Put back what :meth:`get_rng_state` returned (only ever from this same accelerator)."""
        if isinstance(state, torch.Tensor):
            set_device_rng_state(self.device_type, state)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
