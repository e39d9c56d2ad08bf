"""``OnExceptionCheckpoint``: a checkpoint of the state a fit was in when an exception stopped it.

The file, ``dirpath/filename.ckpt``, is written on ``on_exception`` and removed at ``teardown`` when the call ends
without one, so finding it means the run failed there (resume with ``ckpt_path=callback.ckpt_path``). ``dirpath``
is required because an exception can come before any folder is decided.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import MisconfigurationException
from .base import Checkpoint

__all__ = ["OnExceptionCheckpoint"]


class OnExceptionCheckpoint(Checkpoint):
    FILE_EXTENSION = ".ckpt"

    def __init__(self, dirpath: str | os.PathLike[str], filename: str = "on_exception") -> None:
        if not filename:
            raise MisconfigurationException(
                "OnExceptionCheckpoint(filename='') is invalid: name the file (default 'on_exception')."
            )
        self.dirpath = dirpath
        self.filename = filename
        self._saved_on_exception = False

    @property
    def ckpt_path(self) -> str:
        return os.path.join(self.dirpath, self.filename + self.FILE_EXTENSION)

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        self._saved_on_exception = False

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        trainer.save_checkpoint(self.ckpt_path)
        self._saved_on_exception = True

    def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
        # accelplug also tears down after an exception (Lightning does not): keep the file just written then
        if not self._saved_on_exception and os.path.exists(self.ckpt_path):
            trainer.strategy.remove_checkpoint(self.ckpt_path)
