"""Device-neutral calls into a device's runtime, for every device type torch knows, not only CUDA.

The core once spelled these per backend (``torch.cuda.synchronize``, ``non_blocking`` only on CUDA, the
loss scaler only on CUDA); an out-of-tree backend (a PrivateUse1 device such as PyTorch's reference
``openreg``, an Ascend NPU, Intel's XPU) then timed its compile step before its kernels finished and never
got asynchronous copies. torch offers the neutral spellings itself: ``torch.accelerator`` for the current
accelerator's type, and ``torch.get_device_module(type)`` for the module of any registered type.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["copies_may_overlap", "device_module", "device_rng_state", "set_device_rng_state", "synchronize"]

#: Device types whose host-to-device copies are kept blocking: the CPU has nothing to overlap, and MPS's
#: unified memory gains nothing while asynchronous copies there have produced wrong values (the same
#: pair Lightning keeps blocking in ``move_data_to_device``).
_BLOCKING_COPIES = frozenset({"cpu", "mps", "meta"})


def copies_may_overlap(device: torch.device) -> bool:
    """Whether a ``non_blocking`` copy to ``device`` is both safe and useful."""
    return device.type not in _BLOCKING_COPIES


def device_module(device_type: str) -> Any | None:
    """torch's module for ``device_type`` (``torch.cuda``, ``torch.mps``, a backend's registered module),
    or None when torch knows no module for it."""
    try:
        return torch.get_device_module(device_type)
    except (RuntimeError, AttributeError):
        return None


def synchronize(device: torch.device) -> None:
    """Wait until the work queued on ``device`` has finished, so a clock read next measures it.

    Through the device module's own ``synchronize`` (``torch.cuda``, ``torch.mps``, a backend's registered
    module), which waits for the current device, the one ``setup_device`` chose; a backend that registered
    no such function is asked through the device-neutral ``torch.accelerator.synchronize``. The CPU runs
    synchronously and needs nothing.
    """
    if device.type in ("cpu", "meta"):
        return
    sync = getattr(device_module(device.type), "synchronize", None)
    if callable(sync):
        sync()
    else:
        torch.accelerator.synchronize(device)


def device_rng_state(device_type: str) -> torch.Tensor | None:
    """The random-number state of ``device_type``'s current device, when its runtime is already running
    (asking an idle runtime would initialise it, which a checkpoint must never do); None otherwise."""
    if device_type in ("cpu", "meta"):
        return None
    module = device_module(device_type)
    get_state = getattr(module, "get_rng_state", None)
    is_initialized = getattr(module, "is_initialized", None)
    if not callable(get_state) or (callable(is_initialized) and not is_initialized()):
        return None
    state = get_state()
    return state.cpu() if isinstance(state, torch.Tensor) else None


def set_device_rng_state(device_type: str, state: torch.Tensor) -> None:
    """Put back a state :func:`device_rng_state` returned, on ``device_type``'s current device."""
    set_state = getattr(device_module(device_type), "set_rng_state", None)
    if callable(set_state):
        set_state(state.cpu())
