"""The calls into torch_xla, each a typed function that imports torch_xla only when it is called.

Importing torch_xla costs seconds, so nothing here runs at import time: the accelerator's class-level
queries never come here (see :mod:`.environment`), and a run imports torch_xla once it has chosen an
XLA device. Keeping every torch_xla call in this one module also gives the rest of the plugin plain
types to work with (torch_xla's own annotations are partial), and one place to follow torch_xla's
renames (``xm.mark_step`` became ``torch_xla.sync`` in 2.x).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import torch

__all__ = [
    "get_rng_state",
    "mark_step",
    "memory_info",
    "parallel_loader",
    "runtime_initialized",
    "set_rng_state",
    "sync",
    "tpu_device_count",
    "upload_error",
]


def sync() -> None:
    """Cut the graph of pending operations, compile it (or reuse the compiled one) and run it.

    XLA tensors are lazy: operations only record a graph until something needs values or the step is
    marked. Marking once per training step gives one graph per step, which XLA compiles once and then
    reuses, instead of one ever-growing graph.
    """
    import torch_xla

    mark = getattr(torch_xla, "sync", None)
    if mark is None:  # torch_xla before 2.5
        import torch_xla.core.xla_model as xm

        mark = xm.mark_step
    mark()


def mark_step(device: torch.device) -> None:
    """:func:`sync`, leaving ``device``'s random generator where the random operations left it.

    torch_xla advances the generator's seed at every mark, whether or not the graph drew random
    numbers, so the random numbers of a step would depend on how many marks came before it (a batch
    prefetched, a checkpoint saved, a resume that skips batches) and a resumed run would not repeat an
    uninterrupted one. Putting back the running seed (which every random operation has already
    advanced) makes the generator move with the random draws only, as torch's own generators do,
    while consecutive graphs still get different random numbers.
    """
    seed = get_rng_state(device)
    sync()
    set_rng_state(seed, device)


def runtime_initialized() -> bool:
    """Whether torch_xla's PJRT runtime (its device client) has started in this process.

    False without importing anything when torch_xla was never imported: then it cannot have started.
    """
    if "torch_xla" not in sys.modules:
        return False
    import torch_xla

    return bool(torch_xla._XLAC._xla_runtime_is_initialized())


def get_rng_state(device: torch.device) -> int:
    """The seed of ``device``'s XLA random generator (an integer that every random op advances)."""
    import torch_xla.core.xla_model as xm

    return int(xm.get_rng_state(device=device))


def set_rng_state(seed: int, device: torch.device) -> None:
    import torch_xla.core.xla_model as xm

    xm.set_rng_state(int(seed), device=device)


def memory_info(device: torch.device) -> dict[str, float]:
    """torch_xla's memory figures for ``device`` (TPU: bytes used, limit, peak); empty where the PJRT
    client has none (the CPU client answers UNIMPLEMENTED)."""
    import torch_xla.core.xla_model as xm

    try:
        info = xm.get_memory_info(device)
    except RuntimeError:
        return {}
    return {str(k): float(v) for k, v in dict(info).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def parallel_loader(source: Iterable[Any], device: torch.device) -> Any:
    """torch_xla's ``ParallelLoader`` over ``source`` for ``device`` (the machinery of ``MpDeviceLoader``).

    Background threads read ``source`` and upload each batch to the device ahead of the step that
    needs it; ``next_item(device)`` takes the next uploaded batch (None at the end), ``close()`` stops
    the threads.
    """
    from torch_xla.distributed.parallel_loader import ParallelLoader

    return ParallelLoader(source, [device])


def upload_error(loader: Any) -> BaseException | None:
    """The error that stopped ``loader``'s upload thread (a batch it could not send), if any."""
    errors = getattr(loader, "_exception_queue", None)
    if errors is None or errors.empty():
        return None
    error: BaseException = errors.get()
    return error


def tpu_device_count() -> int:
    """TPU chips attached to this host, as torch_xla counts them on the PCI bus (starts no runtime).

    One XLA device per chip from TPU v4 on. ``tpu.num_available_devices()`` would also count the two
    cores per chip of v2/v3, but asks the cloud metadata server which TPU this is (a network call),
    which a class-level query must not make; a run uses one device either way.
    """
    from torch_xla._internal import tpu

    try:
        return int(tpu.num_available_chips())
    except OSError:
        return 0
