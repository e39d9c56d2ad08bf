"""accelplug's own accelerators, strategies, precisions and cluster environments, registered through the public
hooks like any plugin."""

from __future__ import annotations

from collections.abc import Iterable

from .accelerator import Accelerator
from .environments.base import ClusterEnvironment
from .hookspecs import hookimpl
from .precision.base import Precision
from .strategies.base import Strategy


@hookimpl
def register_accelerators() -> Iterable[type[Accelerator]]:
    from .accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator

    return [CPUAccelerator, CUDAAccelerator, MPSAccelerator]


@hookimpl
def register_strategies() -> Iterable[type[Strategy]]:
    from .strategies import DDPStrategy, FSDPStrategy, SingleDeviceStrategy

    return [SingleDeviceStrategy, DDPStrategy, FSDPStrategy]


@hookimpl
def register_precisions() -> Iterable[type[Precision]]:
    from .precision import BF16MixedPrecision, Float32Precision, Float64Precision, FP16MixedPrecision
    from .precision.bf16_true import BF16TruePrecision
    from .precision.fp16_true import FP16TruePrecision

    return [
        Float32Precision,
        BF16MixedPrecision,
        FP16MixedPrecision,
        Float64Precision,
        BF16TruePrecision,
        FP16TruePrecision,
    ]


@hookimpl
def register_cluster_environments() -> Iterable[type[ClusterEnvironment]]:
    from .environments import (
        KubeflowEnvironment,
        LSFEnvironment,
        MPIEnvironment,
        SLURMEnvironment,
        TorchElasticEnvironment,
    )

    return [TorchElasticEnvironment, SLURMEnvironment, LSFEnvironment, MPIEnvironment, KubeflowEnvironment]
