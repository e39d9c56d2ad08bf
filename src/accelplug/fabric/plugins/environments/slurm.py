"""``lightning.fabric.plugins.environments.slurm``'s path (imports only)."""

from __future__ import annotations

from ....environments.slurm import SLURMEnvironment

__all__ = ["SLURMEnvironment"]
