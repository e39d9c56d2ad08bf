"""Device-neutral calls into a device's runtime, for every device type torch knows, not only CUDA.

The core once spelled these per backend (``torch.cuda.synchronize``, ``non_blocking`` only on CUDA, the
loss scaler only on CUDA); an out-of-tree backend (a PrivateUse1 device such as PyTorch's reference
``openreg``, an Ascend NPU, Intel's XPU) then timed its compile step before its kernels finished and never
got asynchronous copies. torch offers the neutral spellings itself: ``torch.accelerator`` for the current
accelerator's type, and ``torch.get_device_module(type)`` for the module of any registered type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from .capabilities import DeviceCapabilities

__all__ = ["copies_may_overlap", "device_module", "device_rng_state", "set_device_rng_state", "synchronize"]

#: Device types whose host-to-device copies are kept blocking: the CPU has nothing to overlap, and MPS's
#: unified memory gains nothing while asynchronous copies there have produced wrong values (the same
#: pair Lightning keeps blocking in ``move_data_to_device``).
_BLOCKING_COPIES = frozenset({"cpu", "mps", "meta"})


def copies_may_overlap(device: torch.device) -> bool:
    """Whether a ``non_blocking`` copy to ``device`` is both safe and useful: on CUDA and XPU, and on an
    out-of-tree backend only where host memory can be pinned for it (a backend that cannot pin copies
    from pageable memory, where asking for an asynchronous copy gains nothing and promises what the
    backend may not keep)."""
    if device.type in _BLOCKING_COPIES:
        return False
    return device.type in ("cuda", "xpu") or _capabilities(device.type).pins_memory()


def device_module(device_type: str) -> Any | None:
    """torch's module for ``device_type`` (``torch.cuda``, ``torch.mps``, a backend's registered module),
    or None when torch knows no module for it."""
    try:
        return torch.get_device_module(device_type)
    except (RuntimeError, AttributeError):
        return None


def synchronize(device: torch.device) -> None:
    """Wait until the work queued on ``device`` has finished, so a clock read next measures it.

    Through :mod:`accelplug.hardware.capabilities`: the device module's own ``synchronize`` (``torch.cuda``,
    ``torch.mps``, a backend's registered module), which waits for the current device, the one
    ``setup_device`` chose, else the device-neutral ``torch.accelerator.synchronize``; a backend that can do
    neither is not waited for (the reason is logged once at debug level). The CPU runs synchronously.
    """
    _capabilities(device.type).synchronize(device)


def device_rng_state(device_type: str) -> torch.Tensor | None:
    """The random-number state of ``device_type``'s current device, when its runtime is already running
    (asking an idle runtime would initialise it, which a checkpoint must never do); None otherwise, and
    None for a backend without a generator of its own (see :mod:`accelplug.hardware.capabilities`)."""
    return _capabilities(device_type).rng_state()


def set_device_rng_state(device_type: str, state: torch.Tensor) -> None:
    """Put back a state :func:`device_rng_state` returned, on ``device_type``'s current device."""
    _capabilities(device_type).set_rng_state(state)


def _capabilities(device_type: str) -> DeviceCapabilities:
    """The capability probe of ``device_type``, imported at the first runtime call rather than with this module:
    the accelerator base imports this module, and ``import accelplug`` + ``Trainer()`` calls none of it."""
    from .capabilities import capabilities

    return capabilities(device_type)
