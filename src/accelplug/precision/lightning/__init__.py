"""Lightning's precision plugins (``lightning.pytorch.plugins.precision``) over accelplug's built-in precisions.

``Trainer(plugins=[MixedPrecision("bf16-mixed", "cpu")])`` trains exactly as ``precision="bf16-mixed"``; a
subclass that rewrites a step method (``optimizer_step``, ``backward``...) has it called by the loop.
"""

from .base import Precision
from .deepspeed import DeepSpeedPrecision
from .float8 import Float8Precision
from .fsdp import FSDPPrecision
from .half import DoublePrecision, HalfPrecision
from .mixed import MixedPrecision
from .quantized import BitsandbytesPrecision, TransformerEnginePrecision

__all__ = [
    "BitsandbytesPrecision",
    "DeepSpeedPrecision",
    "DoublePrecision",
    "FSDPPrecision",
    "Float8Precision",
    "HalfPrecision",
    "MixedPrecision",
    "Precision",
    "TransformerEnginePrecision",
]
