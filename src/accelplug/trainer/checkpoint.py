"""Writing checkpoints that survive a crash, and the random-number state that makes resuming exact.

A checkpoint is first written to a temporary file in the destination's own folder, flushed to disk
with ``fsync`` and then renamed over the destination with ``os.replace``; a rename within one file
system is atomic, so a process killed at any moment leaves either the old file or the new one, never
a torn one. Everything stored is a tensor or a plain Python value, so it loads with
``torch.load(weights_only=True)``: loading a checkpoint cannot run code.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

__all__ = ["atomic_save", "capture_rng_state", "load_checkpoint", "restore_rng_state"]


def atomic_save(obj: Any, path: str | os.PathLike[str]) -> Path:
    """``torch.save(obj)`` to ``path`` so that a crash mid-write leaves the previous file intact."""
    target = Path(path).expanduser().resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(obj, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    _fsync_directory(target.parent)
    return target


def _fsync_directory(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def load_checkpoint(path: str | os.PathLike[str], device: torch.device, *, weights_only: bool = True) -> Any:
    """Load a checkpoint onto ``device``: a CUDA checkpoint loads on a CPU-only or MPS machine."""
    return torch.load(Path(path).expanduser(), map_location=device, weights_only=weights_only)


def capture_rng_state() -> dict[str, Any]:
    """Every random-number generator a training step may draw from, as weights-only-safe values."""
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
        state["cuda"] = torch.cuda.get_rng_state_all()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        kind, keys, pos, has_gauss, cached = numpy.random.get_state()
        state["numpy"] = {
            "kind": str(kind),
            "keys": torch.from_numpy(keys.astype("int64")),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached),
        }
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    """Put back what :func:`capture_rng_state` recorded (generators absent here are skipped)."""
    torch.set_rng_state(state["torch"].cpu())
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    if "cuda" in state and torch.cuda.is_available() and len(state["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([s.cpu() for s in state["cuda"]])
    if "numpy" in state:
        import numpy

        saved = state["numpy"]
        keys = saved["keys"].cpu().numpy().astype(numpy.uint32)
        numpy.random.set_state((saved["kind"], keys, saved["pos"], saved["has_gauss"], saved["cached_gaussian"]))
