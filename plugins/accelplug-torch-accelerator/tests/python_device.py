"""A real PrivateUse1 device made in pure Python with torch's own registration API, for the bridge's tests.

``torch.utils.backend_registration._setup_privateuseone_for_python_backend`` (experimental, torch >= 2.5)
renames torch's PrivateUse1 slot, registers a device module and the hooks and device guard torch's C++ side
expects, so ``torch.accelerator`` answers for it exactly as for an out-of-tree backend written in C++:
``current_accelerator()`` is ``pydev``, ``device_count()`` is what the module says. It has no kernels (no
tensor can live on it) and, like many young backends, none of the optional parts: no ``synchronize``, no
caching allocator (``torch.accelerator.empty_cache()``/``memory_stats()`` raise "not a DeviceAllocator", as
on torchvulkan), no generator of its own, no pinned host memory; its autocast takes float16 only. So the
bridge is tested against torch's real device-neutral API, and every capability it must not assume is
really missing.

A process can take the PrivateUse1 slot once: :func:`install` is called by ``conftest.py`` before the
bridge's module is imported, and only where torch reports no accelerator of its own.
"""

from __future__ import annotations

import torch

NAME = "pydev"
COUNT = 2


class PyDevModule:
    """``torch.pydev``: what torch asks a backend module for, and ``get_amp_supported_dtype`` for autocast."""

    def is_available(self) -> bool:
        return True

    def is_initialized(self) -> bool:
        return False  # nothing to start: the conformance kit sees no runtime initialised by a query

    def current_device(self) -> int:
        return 0

    def device_count(self) -> int:
        return COUNT

    def _is_in_bad_fork(self) -> bool:
        return False

    def manual_seed_all(self, seed: int) -> None:
        """torch.manual_seed calls this on every registered backend; the device draws no random numbers."""

    def get_amp_supported_dtype(self) -> list[torch.dtype]:
        return [torch.float16]


def install() -> bool:
    """Take the PrivateUse1 slot as ``pydev`` unless torch already reports an accelerator (a GPU machine
    running the forced checks); True when ``pydev`` is torch's current accelerator afterwards."""
    from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

    current = torch.accelerator.current_accelerator(check_available=False)
    if current is None:
        _setup_privateuseone_for_python_backend(rename=NAME, backend_module=PyDevModule())
        current = torch.accelerator.current_accelerator(check_available=False)
    return current is not None and current.type == NAME
