"""``lightning.fabric.plugins.environments.kubeflow``'s path (imports only)."""

from __future__ import annotations

from ....environments.kubeflow import KubeflowEnvironment

__all__ = ["KubeflowEnvironment"]
