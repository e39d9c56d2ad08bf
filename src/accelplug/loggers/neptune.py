"""Lightning's ``NeptuneLogger``: Neptune was shut down, and Lightning 2.6 keeps only the name, which refuses.

Building one raises a ``RuntimeError`` that points to ``LitLogger`` (:mod:`accelplug.loggers.litlogger`), as
Lightning's does, so a script still importing it learns what to use instead.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NeptuneLogger"]


class NeptuneLogger:
    """The Neptune logger's name; making one raises ``RuntimeError``: use ``LitLogger``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "NeptuneLogger is no longer supported. Neptune has been sunset.\n\nPlease migrate to LitLogger, the "
            "recommended logger for AI experiments (accelplug.loggers.LitLogger).\nSee: https://github.com/lightning-ai/litlogger\n"
        )
