"""``lightning.pytorch.loggers.neptune``'s path (imports only)."""

from __future__ import annotations

from ...loggers.neptune import NeptuneLogger

__all__ = ["NeptuneLogger"]
