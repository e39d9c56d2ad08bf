"""Cluster environments: who started this process (Slurm, torchrun, LSF, MPI, Kubeflow) and its place in the job.

Each is a small class reading its launcher's variables (see :mod:`accelplug.environments.base` for
the interface); they are registered through the ``register_cluster_environments`` hook, and
``get_registry().detect_environment()`` says which one started this process. Nothing here imports
torch at import time. The built-ins are listed by name and where each class lives, and the plugin declares
them so (:class:`~accelplug.hookspecs.Deferred`): a process that none of them started imports none of their
modules. The classes are this package's attributes, each imported when first read.
"""

from __future__ import annotations

from .._import_paths import lazy_submodules
from .base import ClusterEnvironment, EnvironmentFacts

#: The built-in environments, in the order the built-in plugin registers them: (name, ``"module:Class"``,
#: ``detect_priority``, ``detect_when``). Detection asks them by ``detect_priority``, repeated here from each
#: class (the registry checks it when the class is imported); ``detect_when`` holds the variables without
#: which the class's ``detect()`` answers False (torch's ``is_torchelastic_launched`` reads
#: ``TORCHELASTIC_RUN_ID``; Kubeflow is never detected). ``LightningEnvironment`` is not among them: it is
#: what a run uses when none of these is detected.
BUILTIN_ENVIRONMENTS: tuple[tuple[str, str, int, tuple[str, ...]], ...] = (
    ("torchrun", f"{__name__}.torchelastic:TorchElasticEnvironment", 400, ("TORCHELASTIC_RUN_ID",)),
    ("slurm", f"{__name__}.slurm:SLURMEnvironment", 300, ("SLURM_NTASKS",)),
    (
        "lsf",
        f"{__name__}.lsf:LSFEnvironment",
        200,
        ("LSB_JOBID", "LSB_DJOB_RANKFILE", "JSM_NAMESPACE_LOCAL_RANK", "JSM_NAMESPACE_SIZE"),
    ),
    ("mpi", f"{__name__}.mpi:MPIEnvironment", 100, ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")),
    ("kubeflow", f"{__name__}.kubeflow:KubeflowEnvironment", 0, ()),
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

__getattr__ = lazy_submodules(
    __name__,
    (),
    {
        "KubeflowEnvironment": "kubeflow",
        "LSFEnvironment": "lsf",
        "LightningEnvironment": "lightning",
        "MPIEnvironment": "mpi",
        "SLURMEnvironment": "slurm",
        "TorchElasticEnvironment": "torchelastic",
    },
)
