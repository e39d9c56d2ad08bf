"""``lightning.pytorch.callbacks.timer``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.timer import Interval, Timer

__all__ = ["Interval", "Timer"]
