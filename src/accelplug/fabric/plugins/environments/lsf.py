"""``lightning.fabric.plugins.environments.lsf``'s path (imports only)."""

from __future__ import annotations

from ....environments.lsf import LSFEnvironment

__all__ = ["LSFEnvironment"]
