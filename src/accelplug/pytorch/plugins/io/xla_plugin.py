"""``lightning.pytorch.plugins.io.xla_plugin``'s path (imports only): the XLA back end's class, or its stand-in."""

from __future__ import annotations

from ....backends import XLACheckpointIO

__all__ = ["XLACheckpointIO"]
