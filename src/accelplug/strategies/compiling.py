"""``Trainer(compile=...)``: where ``torch.compile`` enters the preparation order, and what it accepts.

The module is compiled in place (``nn.Module.compile``), after it was moved to its device and
converted to its precision and after the strategy wrapped it: its ``forward`` (what a hand-written
loop would compile) runs compiled wherever ``training_step`` calls ``self(...)``, the object the user
holds stays the same, and its ``state_dict`` keeps the user's keys (no ``_orig_mod.`` prefix), so a
checkpoint loads into an uncompiled module as well.

Placement follows torch's guidance for each strategy:

- one device: the module's forward, as a hand-written loop would compile it;
- DDP: the same in-place compile, called from inside ``DistributedDataParallel.forward``. Dynamo
  sees the active DDP module there and compiles through its ``DDPOptimizer``, which splits the graph
  at DDP's gradient-bucket boundaries so that all-reduces overlap the backward pass (what
  ``torch.compile(DDP(model))`` gets);
- FSDP: each shard unit (a transformer block) is compiled on its own, per block as torch recommends
  for FSDP2; only its ``forward`` is compiled, so FSDP's all-gather/reduce-scatter hooks, which run
  around it, stay outside the compiled graphs (``FSDPStrategy``).

What cannot compile is refused when the Trainer is built (no C++ compiler for the CPU backend, no
Triton for CUDA, MPS before torch 2.6) or when the device is known (a GPU too old for Triton),
with the cause and a remedy, instead of a traceback from inside inductor at the first step.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping
from typing import Any

import torch

from ..errors import MisconfigurationException, did_you_mean

__all__ = [
    "COMPILE_MODES",
    "check_compile_device",
    "check_compile_support",
    "compile_in_place",
    "compile_module",
    "normalize_compile",
    "unwrap_compiled",
]

#: ``torch.compile`` modes accepted by name (``True`` means "default").
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_KWARGS = ("fullgraph", "dynamic", "backend", "mode", "options", "disable")
ACCEPTED_COMPILE = (
    "False, True, a mode name ('default', 'reduce-overhead', 'max-autotune', 'max-autotune-no-cudagraphs') "
    "or a dict of torch.compile keyword arguments (fullgraph, dynamic, backend, mode, options, disable)"
)


def normalize_compile(value: object) -> dict[str, Any] | None:
    """The ``torch.compile`` keyword arguments for a ``compile`` option, or None for no compiling."""
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if isinstance(value, str):
        mode = value.strip().lower()
        if mode not in COMPILE_MODES:
            raise MisconfigurationException(
                f"compile={value!r} is not a torch.compile mode. Accepted: {ACCEPTED_COMPILE}."
                f"{did_you_mean(mode, list(COMPILE_MODES))}"
            )
        return {} if mode == "default" else {"mode": mode}
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in _KWARGS]
        if unknown:
            raise MisconfigurationException(
                f"compile={dict(value)!r} holds {unknown[0]!r}, which is not a torch.compile keyword argument. "
                f"Accepted: {ACCEPTED_COMPILE}.{did_you_mean(str(unknown[0]), list(_KWARGS))}"
            )
        chosen: Any = value.get("mode")
        if chosen is not None and chosen not in COMPILE_MODES:
            raise MisconfigurationException(
                f"compile={dict(value)!r}: mode={chosen!r} is not a torch.compile mode; accepted: {COMPILE_MODES}."
            )
        return dict(value)
    raise MisconfigurationException(f"compile={value!r} is invalid. Accepted: {ACCEPTED_COMPILE}.")


def unwrap_compiled(module: torch.nn.Module) -> torch.nn.Module:
    """The original module of one the user compiled with ``torch.compile(model)`` before handing it over."""
    original = getattr(module, "_orig_mod", None)
    return original if isinstance(original, torch.nn.Module) else module


def _uses_inductor(options: dict[str, Any]) -> bool:
    """Whether torch.compile's default code generator runs (a user-chosen backend is the user's business)."""
    backend = options.get("backend", "inductor")
    return isinstance(backend, str) and backend == "inductor"


def _cxx_compiler() -> str | None:
    """The C++ compiler inductor's CPU backend would call (``$CXX``, else the usual names on ``PATH``)."""
    names = [os.environ["CXX"]] if os.environ.get("CXX") else []
    names += ["cl"] if sys.platform == "win32" else ["g++", "clang++", "c++"]
    return next((found for name in names if (found := shutil.which(name))), None)


def check_compile_support(device_type: str, options: dict[str, Any] | None) -> None:
    """Refuse ``compile=...`` where torch.compile cannot work here (cheap checks: no device is touched)."""
    if options is None or not _uses_inductor(options):
        return
    version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2] if p.isdigit())
    remedy = "or pass compile={'backend': 'aot_eager'} (compiles the graph, runs it without code generation)"
    if device_type == "mps" and version < (2, 6):
        raise MisconfigurationException(
            f"compile=... on 'mps' needs torch >= 2.6 (torch.compile's inductor backend has no Metal code generator "
            f"before it); this is torch {torch.__version__}. Upgrade torch, train without compile, {remedy}."
        )
    if device_type == "cpu" and _cxx_compiler() is None:
        where = "MSVC's cl.exe (a Visual Studio Build Tools prompt)" if sys.platform == "win32" else "g++ or clang++"
        raise MisconfigurationException(
            f"compile=... on the CPU needs a C++ compiler: torch.compile's inductor backend builds C++ kernels, and "
            f"no {where} was found on PATH (nor $CXX). Install one (e.g. `apt install g++`, `xcode-select --install`), "
            f"train without compile, {remedy}."
        )
    from ..hardware.capabilities import capabilities  # the probe, loaded when compile=... is checked

    lacking = capabilities(device_type).compile_refusal()
    if lacking is not None:
        raise MisconfigurationException(
            f"compile=... cannot run on {device_type!r}: {lacking}. Train without compile, {remedy}."
        )
    if device_type == "cuda":
        import importlib.util

        if importlib.util.find_spec("triton") is None:
            hint = " (on Windows: pip install triton-windows)" if sys.platform == "win32" else ""
            raise MisconfigurationException(
                f"compile=... on CUDA needs Triton, which torch.compile's inductor backend generates GPU kernels with, "
                f"and it is not installed{hint}. Install the triton that matches your torch, {remedy}."
            )


def check_compile_device(device: torch.device, options: dict[str, Any]) -> None:
    """The checks that need the device or torch's compiler stack (run once, when the module is prepared)."""
    from torch._dynamo.eval_frame import check_if_dynamo_supported

    try:
        check_if_dynamo_supported()
    except RuntimeError as exc:
        raise MisconfigurationException(f"compile=... cannot work here: {exc}") from None
    if device.type == "cuda" and _uses_inductor(options):
        major, minor = torch.cuda.get_device_capability(device)
        if (major, minor) < (7, 0):
            raise MisconfigurationException(
                f"compile=... on {torch.cuda.get_device_name(device)} (compute capability {major}.{minor}): Triton, "
                "which torch.compile's inductor backend uses, needs capability 7.0 or newer. Train without compile, "
                "or pass compile={'backend': 'aot_eager'}."
            )


def compile_module(
    module: torch.nn.Module, wrapped: torch.nn.Module | None, options: dict[str, Any], device: torch.device
) -> Callable[[Any, int], Any]:
    """Compile ``module``'s forward in place; the callable the loop runs a training step with.

    Compilation itself happens at the first call (the first training step, timed and reported by the
    fit loop); under DDP that call is inside ``DistributedDataParallel.forward`` (see the module docstring).
    """
    from .prepared import training_step_caller  # here: every Trainer() checks its compile option with this module

    check_compile_device(device, options)
    compile_in_place(module, options)
    return wrapped if wrapped is not None else training_step_caller(module)


def compile_in_place(module: torch.nn.Module, options: dict[str, Any]) -> None:
    """Compile ``module``'s forward so that the object (and its ``state_dict`` keys) stay the same.

    ``nn.Module.compile`` compiles the first frame dynamo does not skip under ``__call__``: the
    forward of a class written outside torch (a LightningModule, a transformer block). A class whose
    forward is torch's own (``nn.Sequential``, ``nn.TransformerEncoderLayer``) lies wholly in dynamo's
    skip list, and ``.compile()`` silently compiles nothing; its bound ``forward`` is compiled instead.
    """
    forward = type(module).forward
    if getattr(forward, "__module__", "").startswith("torch."):
        module.forward = torch.compile(module.forward, **options)  # type: ignore[method-assign]
    else:
        module.compile(**options)
