"""Cluster environments: who started this process (Slurm, torchrun, LSF, MPI, Kubeflow) and its place in the job.

Each is a small class reading its launcher's variables (see :mod:`accelplug.environments.base` for
the interface); they are registered through the ``register_cluster_environments`` hook, and
``get_registry().detect_environment()`` says which one started this process. Nothing here imports
torch at import time.
"""

from __future__ import annotations

from .base import ClusterEnvironment, EnvironmentFacts
from .kubeflow import KubeflowEnvironment
from .lightning import LightningEnvironment
from .lsf import LSFEnvironment
from .mpi import MPIEnvironment
from .slurm import SLURMEnvironment
from .torchelastic import TorchElasticEnvironment

#: The built-in environments, in the order the built-in plugin registers them (detection order is each
#: class's ``detect_priority``). ``LightningEnvironment`` is not among them: it is what a run uses when
#: none of these is detected.
BUILTIN_ENVIRONMENTS: tuple[type[ClusterEnvironment], ...] = (
    TorchElasticEnvironment,
    SLURMEnvironment,
    LSFEnvironment,
    MPIEnvironment,
    KubeflowEnvironment,
)

__all__ = [
    "BUILTIN_ENVIRONMENTS",
    "ClusterEnvironment",
    "EnvironmentFacts",
    "KubeflowEnvironment",
    "LSFEnvironment",
    "LightningEnvironment",
    "MPIEnvironment",
    "SLURMEnvironment",
    "TorchElasticEnvironment",
]
