"""Lightning's ``CheckpointIO`` plugins: how a checkpoint dict becomes a file, and back.

The strategy hands every checkpoint the Trainer (or Fabric) writes to its ``checkpoint_io``: by default a
:class:`TorchCheckpointIO`, which is accelplug's atomic, checksummed writer (:mod:`accelplug.checkpoint.file`);
``Trainer(plugins=[AsyncCheckpointIO()])`` moves the write to a background thread; a user's own subclass of
:class:`CheckpointIO` replaces the file format or the storage altogether. Lightning's import paths for these
names are :mod:`accelplug.plugins` and :mod:`accelplug.pytorch.plugins`; this package sits below the
strategies so the ``Strategy`` base can make its default writer. Each name is imported from its module when
first used: a Trainer that writes synchronously never loads the background writer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._import_paths import lazy_submodules

if TYPE_CHECKING:
    from .asynchronous import AsyncCheckpointIO, BackgroundSaveError
    from .io import CheckpointIO, TorchCheckpointIO
    from .wrapping import _WrappingCheckpointIO

__all__ = ["AsyncCheckpointIO", "BackgroundSaveError", "CheckpointIO", "TorchCheckpointIO", "_WrappingCheckpointIO"]

__getattr__ = lazy_submodules(
    __name__,
    ("asynchronous", "file", "io", "wrapping"),
    {
        "AsyncCheckpointIO": "asynchronous",
        "BackgroundSaveError": "asynchronous",
        "CheckpointIO": "io",
        "TorchCheckpointIO": "io",
        "_WrappingCheckpointIO": "wrapping",
    },
)
