"""``lightning.pytorch.callbacks.callback``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.base import Callback

__all__ = ["Callback"]
