"""``lightning.fabric.plugins``'s path: Lightning's precision, checkpoint-IO and cluster-environment plugins, the
same classes the Trainer takes (``Fabric(plugins=MixedPrecision("bf16-mixed", "cpu"))``), and accelplug's own
precisions (``BF16MixedPrecision("cpu")``...), which ``precision="..."`` selects."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...checkpoint import CheckpointIO, TorchCheckpointIO
from ...environments import ClusterEnvironment
from ...precision import BF16MixedPrecision, Float32Precision, Float64Precision, FP16MixedPrecision
from ...precision.bf16_true import BF16TruePrecision
from ...precision.fp16_true import FP16TruePrecision
from ...precision.lightning import (
    BitsandbytesPrecision,
    DoublePrecision,
    FSDPPrecision,
    HalfPrecision,
    MixedPrecision,
    Precision,
    TransformerEnginePrecision,
)
from ...precision.lightning.deepspeed import FabricDeepSpeedPrecision as DeepSpeedPrecision

__all__ = [
    "BF16MixedPrecision",
    "BF16TruePrecision",
    "BitsandbytesPrecision",
    "CheckpointIO",
    "ClusterEnvironment",
    "DeepSpeedPrecision",
    "DoublePrecision",
    "FP16MixedPrecision",
    "FP16TruePrecision",
    "FSDPPrecision",
    "Float32Precision",
    "Float64Precision",
    "HalfPrecision",
    "MixedPrecision",
    "Precision",
    "TorchCheckpointIO",
    "TransformerEnginePrecision",
    "XLACheckpointIO",
    "XLAPrecision",
]

__getattr__ = lazy_submodules(
    __name__,
    ("collectives", "environments", "io", "precision"),
    {"XLACheckpointIO": "accelplug.backends", "XLAPrecision": "accelplug.backends"},
)
