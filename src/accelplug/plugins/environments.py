"""Lightning's ``plugins.environments`` path: the cluster environments for ``Trainer(plugins=[...])``.

``from accelplug.plugins.environments import SLURMEnvironment`` as with Lightning; the classes live in
:mod:`accelplug.environments`.
"""

from __future__ import annotations

from ..environments import (
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
]
