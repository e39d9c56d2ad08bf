"""``lightning.pytorch.loggers.litlogger``'s path (imports only)."""

from __future__ import annotations

from ...loggers.litlogger import LitLogger

__all__ = ["LitLogger"]
