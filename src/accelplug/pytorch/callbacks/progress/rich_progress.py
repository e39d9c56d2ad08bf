"""``lightning.pytorch.callbacks.progress.rich_progress``'s path (imports only).

Code written for Lightning replaces names here (``mock.patch(".../rich_progress.CustomBarColumn")``,
``_RICH_AVAILABLE``); the bar reads them from this module, so the replacement is used. ``Progress`` is rich's class.
"""

from __future__ import annotations

from rich.progress import Progress

from ...._optional import _RICH_AVAILABLE as _RICH_AVAILABLE
from ....callbacks.rich_progress import (
    BatchesProcessedColumn,
    CustomBarColumn,
    CustomInfiniteTask,
    CustomProgress,
    CustomTimeColumn,
    MetricsTextColumn,
    ProcessingSpeedColumn,
    RichProgressBar,
    RichProgressBarTheme,
)

__all__ = [
    "BatchesProcessedColumn",
    "CustomBarColumn",
    "CustomInfiniteTask",
    "CustomProgress",
    "CustomTimeColumn",
    "MetricsTextColumn",
    "ProcessingSpeedColumn",
    "Progress",
    "RichProgressBar",
    "RichProgressBarTheme",
]
