"""The profiler protocol the Trainer drives: ``setup`` once per call, ``start``/``stop`` per action, ``describe``.

An action is a name (``run_training_batch``, ``[LightningModule]Model.training_step``...) timed between
``start`` and ``stop``; what a profiler measures in between is its own business. The report goes to
``{dirpath}/{stage}-{filename}.txt`` (appended, as Lightning does, so ``fit`` then ``test`` share nothing but
the folder) when a ``filename`` is given, else to the ``accelplug.profilers`` logger, printed when nothing
listens to it. ``dirpath`` defaults to the Trainer's ``log_dir``, handed over by ``setup``.
"""

from __future__ import annotations

import logging
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ..errors import MisconfigurationException

__all__ = ["PassThroughProfiler", "Profiler"]

log = logging.getLogger("accelplug.profilers")
if log.level == logging.NOTSET:  # the report is INFO, shown by whatever handler is set up (Lightning's is INFO too)
    log.setLevel(logging.INFO)

#: characters no file name may hold on some platform, replaced by ``_`` in a report's or trace's name
_UNSAFE = re.compile(r"[\\/:*?\"<>|\n\r\t]")


def _open_for_append(path: str, folder: str) -> IO[str]:
    """A local file, or one on an fsspec file system when the folder is a URL (``s3://...``)."""
    from ..checkpoint.file import filesystem, is_url

    if is_url(folder):
        fs = filesystem(folder)
        fs.makedirs(folder, exist_ok=True)
        handle: IO[str] = fs.open(path, "a")
        return handle
    os.makedirs(folder, exist_ok=True)
    return open(path, "a", encoding="utf-8")  # closed by teardown, maybe much later


class Profiler(ABC):
    """What ``Trainer(profiler=...)`` accepts: subclass it and define ``start`` and ``stop``."""

    def __init__(self, dirpath: str | Path | None = None, filename: str | None = None) -> None:
        self._output_file: IO[str] | None = None
        self._write_stream: Callable[[str], Any] | None = None
        self._local_rank: int | None = None
        self._stage: str | None = None
        if dirpath is not None and not isinstance(dirpath, (str, os.PathLike)):
            raise MisconfigurationException(
                f"{type(self).__name__}(dirpath={dirpath!r}): expected a folder path (str or Path) or None."
            )
        if filename is not None and not isinstance(filename, str):
            raise MisconfigurationException(
                f"{type(self).__name__}(filename={filename!r}): expected a file name without extension (str) or None."
            )
        self.dirpath = dirpath
        self.filename = filename

    @abstractmethod
    def start(self, action_name: str) -> None:
        """Begin recording ``action_name``."""

    @abstractmethod
    def stop(self, action_name: str) -> None:
        """End recording ``action_name`` (started before)."""

    def summary(self) -> str:
        return ""

    @contextmanager
    def profile(self, action_name: str) -> Iterator[str]:
        """``start``/``stop`` around a block, ``stop`` also when the block raises."""
        try:
            self.start(action_name)
            yield action_name
        finally:
            self.stop(action_name)

    def _rank_zero_info(self, *args: Any) -> None:
        """The report without a file: logged at INFO on local rank 0, printed when no handler would show it."""
        if self._local_rank not in (None, 0):
            return
        if log.isEnabledFor(logging.INFO) and log.hasHandlers():
            log.info(*args)
        else:
            print(*args, flush=True)

    def _prepare_filename(self, action_name: str | None = None, extension: str = ".txt") -> str:
        """``{stage}-{filename}-{local_rank}-{action}{extension}``, the parts that are set, safe on every platform."""
        parts = [p for p in (self._stage, self.filename) if p]
        if self._local_rank is not None:
            parts.append(str(self._local_rank))
        if action_name is not None:
            parts.append(action_name)
        base = re.sub(r"_+", "_", _UNSAFE.sub("_", "-".join(parts))).strip()
        return (base or "profile") + extension

    def _prepare_streams(self) -> None:
        if self._write_stream is not None:
            return
        if self.filename and self.dirpath:
            folder = os.fspath(self.dirpath)
            self._output_file = _open_for_append(os.path.join(folder, self._prepare_filename()), folder)
            self._write_stream = self._output_file.write
        else:
            self._write_stream = self._rank_zero_info

    def describe(self) -> None:
        """Write the report (file or log) and close the file: the Trainer calls it when a call ends."""
        self._prepare_streams()
        summary = self.summary()
        if summary and self._write_stream is not None:
            self._write_stream(summary)
        if self._output_file is not None:
            self._output_file.flush()
        self.teardown(stage=self._stage)

    def _stats_to_str(self, stats: dict[str, str]) -> str:
        """A report of one section per action, headed as Lightning heads them."""
        stage = f"{self._stage.upper()} " if self._stage is not None else ""
        lines = [stage + "Profiler Report"]
        for action, value in stats.items():
            header = f"Profile stats for: {action}"
            if self._local_rank is not None:
                header += f" rank: {self._local_rank}"
            lines += [header, value]
        return os.linesep.join(lines)

    def setup(self, stage: str, local_rank: int | None = None, log_dir: str | None = None) -> None:
        """Called by the Trainer before a call's first action: which stage, which process, where to write."""
        self._stage = stage
        self._local_rank = local_rank
        self.dirpath = self.dirpath or log_dir

    def teardown(self, stage: str | None) -> None:
        """Close the report's file (a later ``describe`` opens it again, appending)."""
        self._write_stream = None
        if self._output_file is not None:
            self._output_file.close()
            self._output_file = None

    def __del__(self) -> None:
        # a profiler dropped without the Trainer's describe (a failed call, one used by hand) still closes its file
        # and, for torch's profiler, leaves the recording; teardown is safe on one never set up or already torn down
        self.teardown(stage=self._stage)

    @property
    def local_rank(self) -> int:
        return 0 if self._local_rank is None else self._local_rank


class PassThroughProfiler(Profiler):
    """Records nothing: ``trainer.profiler`` when no profiler was asked for.

    The Trainer does not even call it per step: it chooses its instrumented path only for another profiler.
    """

    def start(self, action_name: str) -> None:
        pass

    def stop(self, action_name: str) -> None:
        pass
