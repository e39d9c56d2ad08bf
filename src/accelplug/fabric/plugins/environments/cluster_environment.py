"""``lightning.fabric.plugins.environments.cluster_environment``'s path (imports only)."""

from __future__ import annotations

from ....environments.base import ClusterEnvironment

__all__ = ["ClusterEnvironment"]
