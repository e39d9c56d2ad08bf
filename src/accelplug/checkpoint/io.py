"""``CheckpointIO`` (the interface a strategy writes through) and ``TorchCheckpointIO`` (accelplug's file).

The interface has Lightning 2.6's exact method signatures, so a Lightning project's own ``CheckpointIO``
subclass works unchanged. ``TorchCheckpointIO`` is not ``torch.save`` alone: it writes through
:func:`accelplug.checkpoint.file.atomic_save` (a temporary file renamed over the target, with a SHA-256
digest of the contents), so a crash mid-save never leaves a torn file, and its load refuses a file whose
digest no longer matches.
"""

from __future__ import annotations

import contextlib
import os
from abc import ABC, abstractmethod
from typing import Any, TypeAlias

from ..errors import MisconfigurationException
from .file import atomic_save, filesystem, is_url, load_verified, resolve_weights_only

__all__ = ["PATH", "CheckpointIO", "StorageOptionsError", "TorchCheckpointIO"]

#: What a checkpoint path may be: a local path or an fsspec URL string.
PATH: TypeAlias = "str | os.PathLike[str]"


class StorageOptionsError(MisconfigurationException, TypeError):
    """``storage_options`` given to a writer that takes none: a configuration mistake (accelplug's type), and
    a ``TypeError`` as well, which is what Lightning raises for it."""


class CheckpointIO(ABC):
    """Saves, loads and removes checkpoint files for a strategy; subclass it to store checkpoints your way.

    Pass an instance with ``Trainer(plugins=[MyCheckpointIO()])`` (or ``strategy=...(checkpoint_io=...)``): every
    checkpoint the Trainer writes (``ModelCheckpoint``, ``trainer.save_checkpoint``, the signal and requeue
    checkpoints) goes through :meth:`save_checkpoint`, resuming with ``ckpt_path=`` through
    :meth:`load_checkpoint`, and ``ModelCheckpoint`` drops old files through :meth:`remove_checkpoint`.
    """

    @abstractmethod
    def save_checkpoint(self, checkpoint: dict[str, Any], path: PATH, storage_options: Any | None = None) -> None:
        """Write ``checkpoint`` (module, optimizer and loop state) to ``path``."""

    @abstractmethod
    def load_checkpoint(
        self, path: PATH, map_location: Any | None = None, weights_only: bool | None = None
    ) -> dict[str, Any]:
        """The checkpoint stored at ``path``, its tensors placed by ``map_location`` (as ``torch.load``'s)."""

    @abstractmethod
    def remove_checkpoint(self, path: PATH) -> None:
        """Delete the checkpoint at ``path`` (no error when it is already gone)."""

    def teardown(self) -> None:  # noqa: B027 - optional hook
        """Release what saving holds (threads, connections) at the end of a Trainer call."""


def _on_cpu(storage: Any, location: str) -> Any:
    """``torch.load``'s map_location that keeps every storage where deserialisation put it: the CPU."""
    return storage


class TorchCheckpointIO(CheckpointIO):
    """``torch.save``/``torch.load`` files written atomically with a SHA-256 digest, at local paths or fsspec URLs.

    A URL (``s3://bucket/run/last.ckpt``, ``memory://x.ckpt``) is uploaded in one piece; a local file is written
    beside its target and renamed over it. Loading verifies the digest of a file accelplug wrote and also reads
    a plain ``torch.save`` file (which has none to check).
    """

    def save_checkpoint(self, checkpoint: dict[str, Any], path: PATH, storage_options: Any | None = None) -> None:
        if storage_options is not None:
            raise StorageOptionsError(
                f"{type(self).__name__}.save_checkpoint(storage_options={storage_options!r}): this writer takes no "
                "storage options (a URL's file system reads its credentials from fsspec's configuration and the "
                "environment). Leave it None, or pass your own CheckpointIO subclass that uses them."
            )
        _check_path(path, "save_checkpoint")
        if not isinstance(checkpoint, dict):
            raise MisconfigurationException(
                f"{type(self).__name__}.save_checkpoint(checkpoint={type(checkpoint).__name__}): expected a dict."
            )
        atomic_save(checkpoint, path)

    def load_checkpoint(
        self, path: PATH, map_location: Any | None = _on_cpu, weights_only: bool | None = None
    ) -> dict[str, Any]:
        _check_path(path, "load_checkpoint")
        shown = os.fspath(path)
        exists = filesystem(shown).exists(shown) if is_url(shown) else os.path.isfile(shown)
        if not exists:
            raise FileNotFoundError(f"Checkpoint file not found: {shown}")
        state: dict[str, Any] = load_verified(
            shown if is_url(shown) else path,  # type: ignore[arg-type]
            map_location,
            weights_only=resolve_weights_only(weights_only),
            label="path",
            require_format=False,
        )
        return state

    def remove_checkpoint(self, path: PATH) -> None:
        _check_path(path, "remove_checkpoint")
        shown = os.fspath(path)
        if is_url(shown):
            fs = filesystem(shown)
            if fs.exists(shown):
                fs.rm(shown, recursive=True)
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(shown)


def _check_path(path: object, method: str) -> None:
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise MisconfigurationException(
            f"TorchCheckpointIO.{method}(path={path!r}): expected a file path (str or pathlib.Path) or an fsspec URL."
        )
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip() or "\x00" in text:
        raise MisconfigurationException(f"TorchCheckpointIO.{method}(path={path!r}) is not a usable file path.")
