"""``lightning.fabric.plugins.environments``'s path (imports only)."""

from __future__ import annotations

from ...._import_paths import lazy_submodules
from ....backends import XLAEnvironment
from ....environments import (
    ClusterEnvironment,
    KubeflowEnvironment,
    LightningEnvironment,
    LSFEnvironment,
    MPIEnvironment,
    SLURMEnvironment,
    TorchElasticEnvironment,
)

__all__ = [
    "ClusterEnvironment",
    "KubeflowEnvironment",
    "LSFEnvironment",
    "LightningEnvironment",
    "MPIEnvironment",
    "SLURMEnvironment",
    "TorchElasticEnvironment",
    "XLAEnvironment",
]

__getattr__ = lazy_submodules(
    __name__, ("cluster_environment", "kubeflow", "lightning", "lsf", "mpi", "slurm", "torchelastic", "xla")
)
