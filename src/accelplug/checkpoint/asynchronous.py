"""``AsyncCheckpointIO``: the checkpoint is written by a background thread while training goes on.

What the caller's thread still does, and why:

- it waits for the previous background save first, so at most one snapshot is held besides the
  weights (a ~1 GB model does not pile up copies when saves come faster than the disk), and so a
  file is complete before ``ModelCheckpoint`` removes or replaces anything;
- it snapshots every tensor of the checkpoint (a copy on the CPU, tensors shared within the checkpoint
  stay shared) before the thread starts, so the optimizer steps that follow cannot change what is
  written: the file holds the weights of the step the save was asked at.

A save that fails in the background is raised as :class:`BackgroundSaveError` naming the file at the
next save, at the next training step (the Trainer stops the loop through its existing stop check, so the
loop does no new work per step), or at ``teardown``, which the Trainer calls at the end of every
fit/validate/test/predict and which waits for the last save: a process that ends after ``fit`` (also
after SIGTERM, whose checkpoint is saved this way) has a complete file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import torch

from .io import CheckpointIO
from .wrapping import _WrappingCheckpointIO

__all__ = ["AsyncCheckpointIO", "BackgroundSaveError", "snapshot"]


class BackgroundSaveError(RuntimeError):
    """A checkpoint save that ran in :class:`AsyncCheckpointIO`'s thread failed; ``path`` names the file and
    ``__cause__`` is the original error."""

    def __init__(self, path: str, error: BaseException) -> None:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
        super().__init__(
            f"AsyncCheckpointIO: saving the checkpoint {path} in the background failed: {type(error).__name__}"
            + (f": {detail}" if detail else "")
            + ". Training was stopped; the previous checkpoint files are untouched."
        )
        self.path = path


def snapshot(value: Any, memo: dict[int, torch.Tensor] | None = None) -> Any:
    """``value`` with every tensor replaced by a CPU copy taken now (containers rebuilt, other values kept).

    The same tensor met twice (tied weights) is copied once, so the file keeps them shared.
    """
    memo = {} if memo is None else memo
    if isinstance(value, torch.Tensor):
        copied = memo.get(id(value))
        if copied is None:
            copied = value.detach().to("cpu", copy=True)
            memo[id(value)] = copied
        return copied
    if isinstance(value, dict):
        items = [(key, snapshot(item, memo)) for key, item in value.items()]
        try:
            rebuilt = type(value)(items)
        except TypeError:  # a dict subclass whose constructor takes other arguments
            rebuilt = dict(items)
        if hasattr(value, "__dict__") and hasattr(rebuilt, "__dict__"):
            rebuilt.__dict__.update(value.__dict__)  # a state_dict's ``_metadata`` travels with it
        return rebuilt
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*(snapshot(item, memo) for item in value))
    if isinstance(value, (list, tuple)):
        return type(value)(snapshot(item, memo) for item in value)
    return value


class AsyncCheckpointIO(_WrappingCheckpointIO):
    """Saves checkpoints in a background thread through ``checkpoint_io`` (the strategy's default when None).

    Training continues while the file is written: the caller's thread only waits for the previous save and
    copies the tensors. Loading and removing a file wait for a save in flight first.
    """

    def __init__(self, checkpoint_io: CheckpointIO | None = None) -> None:
        super().__init__(checkpoint_io)
        self._executor: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        self._pending_path: str | None = None
        self._error: BackgroundSaveError | None = None
        self._lock = threading.Lock()
        #: called (from the saving thread) when a save fails; the Trainer points it at its loop's stop flag
        self._on_failure: Callable[[], None] | None = None

    def save_checkpoint(self, *args: Any, **kwargs: Any) -> None:
        self.wait()
        checkpoint, path = _checkpoint_and_path(args, kwargs)
        memo: dict[int, torch.Tensor] = {}
        if "checkpoint" in kwargs:
            kwargs = {**kwargs, "checkpoint": snapshot(checkpoint, memo)}
        else:
            args = (snapshot(args[0], memo), *args[1:])
        inner = self._inner()
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="accelplug-checkpoint")
        shown = os.fspath(path) if isinstance(path, (str, os.PathLike)) else repr(path)

        def write() -> None:
            try:
                inner.save_checkpoint(*args, **kwargs)
            except BaseException as exc:
                error = BackgroundSaveError(str(shown), exc)
                error.__cause__ = exc
                with self._lock:
                    self._error = error
                listener = self._on_failure
                if listener is not None:
                    listener()

        self._pending_path = str(shown)
        self._pending = self._executor.submit(write)

    def wait(self) -> None:
        """Block until the save in flight (if any) is on disk; raise its failure, naming the file."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()
        self._pending_path = None
        self.raise_failure()

    def raise_failure(self) -> None:
        """Raise a background save's failure once (the Trainer calls this when the loop's stop flag is up)."""
        with self._lock:
            error, self._error = self._error, None
        if error is not None:
            raise error

    @property
    def saving(self) -> bool:
        """Whether a save is still being written."""
        return self._pending is not None and not self._pending.done()

    def load_checkpoint(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.wait()
        return super().load_checkpoint(*args, **kwargs)

    def remove_checkpoint(self, *args: Any, **kwargs: Any) -> None:
        target = args[0] if args else kwargs.get("path")
        writing = self._pending is not None and isinstance(target, (str, os.PathLike))
        if writing and os.fspath(target) == self._pending_path:  # type: ignore[arg-type]
            self.wait()  # removing the file being written: let it finish, or it would reappear
        super().remove_checkpoint(*args, **kwargs)

    def teardown(self) -> None:
        """Wait for the last save, stop the thread, and raise a failure not raised yet."""
        try:
            self.wait()
        finally:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None


def _checkpoint_and_path(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """The checkpoint and path of a ``save_checkpoint`` call made positionally or by keyword."""
    names = ("checkpoint", "path")
    values = dict(zip(names, args, strict=False))
    for name in names:
        if name in kwargs:
            values[name] = kwargs[name]
    missing = [name for name in names if name not in values]
    if missing:
        from ..errors import MisconfigurationException

        raise MisconfigurationException(
            f"AsyncCheckpointIO.save_checkpoint(...) is missing {', '.join(missing)}; expected "
            "save_checkpoint(checkpoint, path, storage_options=None)."
        )
    return values["checkpoint"], values["path"]
