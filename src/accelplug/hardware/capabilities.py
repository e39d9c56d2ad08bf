"""What a device type can do besides holding tensors, probed once per process: the one place accelplug asks.

A backend that plugs into torch through PrivateUse1 (torchvulkan's ``vulkan``, torch_npu's ``npu``, a
pure-Python test device) must run the kernels a model needs; nearly everything else is optional, and torch's
device-neutral calls do not say in advance which parts a backend has. They raise when it lacks one:
``torch.accelerator.empty_cache()`` on torchvulkan fails with "Allocator for vulkan is not a DeviceAllocator"
because the backend has its own allocator rather than torch's caching one. A core path that called such a
function directly (a teardown, a statistics callback, a checkpoint's RNG capture) would end a finished run
in a crash.

So every core path that touches a device asks this module, never torch directly, and each optional
capability has one of two kinds of answer:

* **static**, read without starting the device's runtime: the autocast dtypes torch accepts on the device
  type, whether torch.compile's Inductor has a code generator for it, and which function would serve each
  call (the device module's own, ``torch.vulkan.empty_cache``, preferred to ``torch.accelerator``'s). These
  are what ``accelplug env`` prints.
* **only a call can tell** (synchronize, empty_cache, memory_stats, the RNG state, pinned host memory): the
  first call is made guarded. If it raises, the capability is recorded as missing with torch's message,
  logged at debug level (logger ``accelplug.capabilities``), and not tried again in this process; the caller
  gets the documented fallback (no wait, no statistics, no device RNG state, pageable memory). A call that
  succeeded once is trusted: a later failure is a real error (a device fault surfacing at a synchronize)
  and propagates, as does running out of memory.

What the user explicitly asked for and a backend lacks is refused where it is asked, with the reason given
here (:meth:`DeviceCapabilities.autocast_refusal`, :meth:`DeviceCapabilities.compile_refusal`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["RUNTIME_CAPABILITIES", "Capability", "DeviceCapabilities", "capabilities", "forget_capabilities"]

log = logging.getLogger("accelplug.capabilities")

#: Capabilities only a call can tell, in the order reports list them.
RUNTIME_CAPABILITIES = ("synchronize", "empty_cache", "memory_stats", "rng_state", "pinned_memory")
#: Device types with no runtime of their own: nothing to wait for, empty, measure or pin.
_HOST_TYPES = frozenset({"cpu", "meta"})
#: Device types torch ships code generators and autocast tables for (checked elsewhere in accelplug).
_BUILTIN_TYPES = frozenset({"cpu", "cuda", "mps", "xpu", "meta"})


def _always_raised() -> tuple[type[BaseException], ...]:
    """Failures that are never a missing capability: memory ran out, or the device itself reported an error."""
    kinds: list[type[BaseException]] = [torch.OutOfMemoryError]
    accelerator_error = getattr(torch, "AcceleratorError", None)  # torch >= 2.8
    if isinstance(accelerator_error, type):
        kinds.append(accelerator_error)
    return tuple(kinds)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else 'no message'}"


def _pin_one_tensor() -> bool:
    """Pin one float; a backend that hands back pageable memory counts as one that cannot pin."""
    if not torch.empty(1).pin_memory().is_pinned():
        raise RuntimeError("it returned pageable memory")
    return True


@dataclass(frozen=True)
class Capability:
    """One optional capability of a device type, as known in this process."""

    name: str
    #: True or False once known; None for a runtime capability not yet called in this process.
    available: bool | None
    #: The function that serves it (``"torch.vulkan.empty_cache"``), or why it is missing.
    detail: str

    def describe(self) -> str:
        state = {True: "yes", False: "no", None: "not tried yet"}[self.available]
        return f"{self.name}: {state} ({self.detail})"


class DeviceCapabilities:
    """The optional capabilities of one device type; get it with :func:`capabilities`, which keeps one per type."""

    def __init__(self, device_type: str) -> None:
        self.device_type = device_type
        #: Runtime capabilities decided by a first call: name -> (works, reason when it does not).
        self._verdicts: dict[str, tuple[bool, str | None]] = {}
        self._lock = threading.Lock()

    # ---- where each call would go (static) ---------------------------------------------------------
    def module(self) -> Any | None:
        """torch's module for the device type (``torch.cuda``, a backend's registered module), or None."""
        try:
            return torch.get_device_module(self.device_type)
        except (RuntimeError, AttributeError):
            return None

    def is_privateuse1(self) -> bool:
        """Whether this type is torch's PrivateUse1 slot (renamed by the backend that took it, as ``vulkan``)."""
        return bool(self.device_type == torch._C._get_privateuse1_backend_name())

    def _is_current_accelerator(self) -> bool:
        """Whether ``torch.accelerator`` speaks for this type (it serves only torch's current accelerator)."""
        api = getattr(torch, "accelerator", None)
        current = getattr(api, "current_accelerator", None)
        if not callable(current):
            return False
        try:
            device = current(check_available=False)
        except TypeError:  # torch < 2.7 has no check_available; asking without it may start the runtime
            return False
        return device is not None and device.type == self.device_type

    def route(self, function: str) -> tuple[str, Callable[..., Any]] | None:
        """The function serving ``function`` on this type, and its dotted name: the device module's own
        (backends ship them as ``torch.cuda`` does), else ``torch.accelerator``'s; None when neither exists."""
        own = getattr(self.module(), function, None)
        if callable(own):
            return f"torch.{self.device_type}.{function}", own
        if self._is_current_accelerator():
            neutral = getattr(torch.accelerator, function, None)
            if callable(neutral):
                return f"torch.accelerator.{function}", neutral
        return None

    # ---- static answers ----------------------------------------------------------------------------
    def autocast_dtypes(self) -> tuple[torch.dtype, ...]:
        """The dtypes ``torch.autocast`` accepts on this type, asked without starting its runtime.

        A PrivateUse1 backend lists them in its module's ``get_amp_supported_dtype()`` (torch's autocast asks
        the same function, refuses the other dtypes, and refuses autocast altogether on a backend without the
        function); a built-in type takes both half types.
        """
        available = getattr(torch.amp, "is_autocast_available", None)
        try:
            if not callable(available) or not available(self.device_type):
                return ()
        except RuntimeError:  # not a device type torch knows
            return ()
        if not self.is_privateuse1():
            return (torch.bfloat16, torch.float16)
        declared = getattr(self.module(), "get_amp_supported_dtype", None)
        if not callable(declared):
            return ()
        try:
            return tuple(declared())
        except (RuntimeError, AttributeError, TypeError) as exc:
            log.debug("capability autocast of %r: get_amp_supported_dtype() raised %s", self.device_type, exc)
            return ()

    def autocast_refusal(self, dtype: torch.dtype) -> str | None:
        """Why autocast in ``dtype`` cannot run on this type, or None when it can."""
        dtypes = self.autocast_dtypes()
        if dtype in dtypes:
            return None
        name = str(dtype).removeprefix("torch.")
        if not dtypes:
            return f"torch's autocast is not available on {self.device_type!r}, in {name} or any other dtype"
        accepted = ", ".join(str(d).removeprefix("torch.") for d in dtypes)
        return (
            f"torch's autocast on {self.device_type!r} accepts {accepted} only (the backend's "
            f"get_amp_supported_dtype()), not {name}"
        )

    def compile_refusal(self) -> str | None:
        """Why torch.compile's default Inductor backend cannot generate code for this type, or None.

        Built-in types have their own checks (a C++ compiler, Triton); for any other type the question is
        whether the backend registered a code generator with Inductor. Imports Inductor (seconds), so it is
        asked only when compiling was requested.
        """
        if self.device_type in _BUILTIN_TYPES:
            return None
        try:
            from torch._inductor.codegen.common import get_scheduling_for_device, init_backend_registration
        except ImportError:  # an Inductor without this registry: nothing to tell in advance
            return None
        init_backend_registration()
        if get_scheduling_for_device(self.device_type) is not None:
            return None
        return (
            f"torch.compile's default backend, Inductor, has no code generator registered for {self.device_type!r} "
            "(a backend registers one with torch._inductor.codegen.common.register_backend_for_device)"
        )

    # ---- calls only a first try can judge ----------------------------------------------------------
    def _lacking(self, name: str) -> bool:
        verdict = self._verdicts.get(name)
        return verdict is not None and not verdict[0]

    def _record(self, name: str, works: bool, reason: str | None) -> None:
        with self._lock:
            if name in self._verdicts:
                return
            self._verdicts[name] = (works, reason)
        if works:
            log.debug("capability %s of %r: works", name, self.device_type)
        else:
            log.debug("capability %s of %r: missing, skipped from now on: %s", name, self.device_type, reason)

    def _try(self, name: str, call: Callable[[], Any], route: str) -> tuple[bool, Any]:
        """``call()`` guarded as the module docstring says: (True, result), or (False, None) when missing."""
        if self._lacking(name):
            return False, None
        decided = name in self._verdicts
        try:
            result = call()
        except _always_raised():
            raise
        except (RuntimeError, AttributeError, TypeError) as exc:
            if decided:
                raise  # it worked before: this is a real failure, not a missing capability
            self._record(name, False, f"{route} raised {_first_line(exc)}")
            return False, None
        self._record(name, True, route)
        return True, result

    def _missing(self, name: str, reason: str) -> None:
        self._record(name, False, reason)

    def synchronize(self, device: torch.device) -> bool:
        """Wait for the work queued on ``device`` (its type's current device); False when the backend cannot.

        The device module's ``synchronize`` waits for the current device, which ``setup_device`` chose;
        ``torch.accelerator.synchronize`` is given the device itself.
        """
        if self.device_type in _HOST_TYPES:
            return True
        found = self.route("synchronize")
        if found is None:
            self._missing("synchronize", f"neither torch.{self.device_type} nor torch.accelerator has synchronize")
            return False
        route, function = found
        call = function if route.startswith(f"torch.{self.device_type}.") else (lambda: function(device))
        return self._try("synchronize", call, route)[0]

    def empty_cache(self) -> bool:
        """Hand cached device memory back to the driver; False when the backend keeps no cache torch can empty."""
        if self.device_type in _HOST_TYPES:
            return False
        found = self.route("empty_cache")
        if found is None:
            self._missing("empty_cache", f"neither torch.{self.device_type} nor torch.accelerator has empty_cache")
            return False
        route, function = found
        return self._try("empty_cache", function, route)[0]

    def memory_stats(self, device: torch.device) -> dict[str, float]:
        """The allocator's numeric statistics for ``device`` as floats; empty when the backend keeps none."""
        if self.device_type in _HOST_TYPES:
            return {}
        found = self.route("memory_stats")
        if found is None:
            self._missing("memory_stats", f"neither torch.{self.device_type} nor torch.accelerator has memory_stats")
            return {}
        route, function = found
        index = device.index if device.index is not None else 0
        works, stats = self._try("memory_stats", lambda: function(index), route)
        if not works or not hasattr(stats, "items"):
            return {}
        return {str(k): float(v) for k, v in stats.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}

    def rng_state(self) -> torch.Tensor | None:
        """The current device's random-number state on the CPU, when the runtime is already running (asking an
        idle runtime would start it, which a checkpoint must never do); None when there is none to save."""
        if self.device_type in _HOST_TYPES:
            return None
        module = self.module()
        get_state = getattr(module, "get_rng_state", None)
        if not callable(get_state):
            self._missing("rng_state", f"torch.{self.device_type} has no get_rng_state")
            return None
        is_initialized = getattr(module, "is_initialized", None)
        if callable(is_initialized) and not is_initialized():
            return None
        works, state = self._try("rng_state", get_state, f"torch.{self.device_type}.get_rng_state")
        return state.cpu() if works and isinstance(state, torch.Tensor) else None

    def set_rng_state(self, state: torch.Tensor) -> bool:
        """Put back a state :meth:`rng_state` returned; False when the backend has no way to take it."""
        set_state = getattr(self.module(), "set_rng_state", None)
        if not callable(set_state):
            return False
        set_state(state.cpu())  # a state this backend produced: a failure here is a real error
        return True

    def pins_memory(self) -> bool:
        """Whether host memory can be pinned for this type, so a ``non_blocking`` copy from a ``DataLoader``'s
        pinned batch overlaps compute. Pinning serves torch's current accelerator only; a backend that cannot
        pin raises, or returns pageable memory (torchvulkan), and then a loader pins for nothing."""
        if self.device_type in _HOST_TYPES or self.device_type == "mps":
            return False
        if self.device_type == "cuda":
            return True
        verdict = self._verdicts.get("pinned_memory")
        if verdict is not None:
            return verdict[0]
        if not self._is_current_accelerator():
            reason = f"torch pins host memory for its current accelerator, not {self.device_type!r}"
            self._missing("pinned_memory", reason)
            return False
        return self._try("pinned_memory", _pin_one_tensor, "Tensor.pin_memory")[0]

    # ---- for people -------------------------------------------------------------------------------
    def report(self) -> list[Capability]:
        """Every capability as known now, without starting the runtime: what was tried in this process,
        and for the rest the function a first call would use."""
        rows: list[Capability] = []
        for name in RUNTIME_CAPABILITIES:
            verdict = self._verdicts.get(name)
            if verdict is not None:
                works, reason = verdict
                rows.append(Capability(name, works, reason or "worked in this process"))
                continue
            function = {"rng_state": "get_rng_state", "pinned_memory": "pin_memory"}.get(name, name)
            if name == "pinned_memory":
                rows.append(Capability(name, None, "Tensor.pin_memory, tried on the first loader"))
                continue
            found = self.route(function)
            detail = found[0] if found else f"neither torch.{self.device_type} nor torch.accelerator has {function}"
            rows.append(Capability(name, None if found else False, detail))
        dtypes = self.autocast_dtypes()
        rows.append(
            Capability(
                "autocast",
                bool(dtypes),
                ", ".join(str(d).removeprefix("torch.") for d in dtypes) or "not available for this device type",
            )
        )
        return rows


_capabilities: dict[str, DeviceCapabilities] = {}
_registry_lock = threading.Lock()


def capabilities(device_type: str) -> DeviceCapabilities:
    """The process-wide record of ``device_type``'s capabilities (one per type, so each probe runs once)."""
    with _registry_lock:
        found = _capabilities.get(device_type)
        if found is None:
            found = _capabilities[device_type] = DeviceCapabilities(device_type)
        return found


def forget_capabilities() -> None:
    """Drop every verdict (for tests that give the same device type different backends)."""
    with _registry_lock:
        _capabilities.clear()
