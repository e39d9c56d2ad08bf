"""How long ``torch.compile`` took: the first training step of a compiled fit, timed once.

torch compiles lazily, at the first call: the forward graph when the first ``training_step`` runs,
the backward graph at the first ``backward``. The first batch therefore carries the whole cost, and
timing it (with one device synchronisation, once) measures compilation without adding anything to
later steps: the wrapper replaces itself with the real batch path after its one call.

The same first step checks that a compiled module ran at all: only ``forward`` is compiled, so a
``training_step`` that calls ``self.model(x)`` instead of ``self(x)`` would train uncompiled, silently.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from ...hardware.runtime import synchronize as _synchronize

if TYPE_CHECKING:
    from .._run import Run

__all__ = ["timed_first_batch"]


def _note_calls(module: torch.nn.Module, called: list[bool]) -> Callable[[], None]:
    """Record in ``called`` whether ``module``'s compiled code runs; returns what puts it back as it was.

    The compiled callable itself is wrapped (``_compiled_call_impl``, set by ``nn.Module.compile``, or the
    instance ``forward`` that ``compile_in_place`` compiled), never the module's hooks: a forward hook added
    for the first step is part of what dynamo guards on, so removing it after the step recompiled forward at
    the second step and left a second compiled entry guarded on every later call.
    """
    attribute = "_compiled_call_impl" if getattr(module, "_compiled_call_impl", None) is not None else "forward"
    compiled = module.__dict__.get(attribute)
    if compiled is None:  # compiled some other way: a hook still tells (at the cost of one recompile)
        handle = module.register_forward_pre_hook(lambda *_: called.append(True))
        return handle.remove

    def noting(*args: Any, **kwargs: Any) -> Any:
        called.append(True)
        return compiled(*args, **kwargs)

    setattr(module, attribute, noting)

    def undo() -> None:
        setattr(module, attribute, compiled)

    return undo


def timed_first_batch(
    path: Callable[[Any, int], Any], run: Run, *, on_timed: Callable[[float], None]
) -> Callable[[Any, int], Any]:
    """``path`` for the first batch, timed; ``on_timed(seconds)`` then lets the loop swap in ``path`` itself.

    The loop hands over the one callable it needs called (it is never imported here): nothing of this
    wrapper stays on the path of later steps.
    """
    modules, device, chatty = run.prepared.compiled_modules, run.device, run.chatty

    def first(batch: Any, batch_idx: int) -> Any:
        called: list[bool] = []
        restore = [_note_calls(m, called) for m in modules]
        started = time.perf_counter()
        try:
            output = path(batch, batch_idx)
        finally:
            for undo in restore:
                undo()
        _synchronize(device)
        seconds = time.perf_counter() - started
        on_timed(seconds)
        if not called:
            warnings.warn(
                f"compile=... compiled {type(modules[0]).__name__}.forward, but the first training_step never "
                "called it, so training runs uncompiled. Call self(...) in training_step (forward is what is "
                "compiled, as in Lightning), or compile the submodule you call yourself (self.model.compile()).",
                UserWarning,
                stacklevel=2,
            )
        if chatty:
            print(
                f"accelplug: torch.compile: the first training step took {seconds:.1f} s (compiling forward and "
                "backward); the following steps run the compiled code",
                file=sys.stderr,
            )
        return output

    return first
