"""``lightning.fabric.plugins.environments.xla``'s path (imports only)."""

from __future__ import annotations

from ....backends import XLAEnvironment

__all__ = ["XLAEnvironment"]
