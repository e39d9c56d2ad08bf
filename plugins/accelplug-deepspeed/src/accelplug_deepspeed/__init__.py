"""DeepSpeed ZeRO as an accelplug strategy: ``Trainer(strategy="deepspeed_stage_2")`` or ``DeepSpeedStrategy(...)``.

Importing this package does not import deepspeed; the engine is built when a run prepares its module.
"""

from __future__ import annotations

from .config import deepspeed_config
from .strategy import STRATEGY_VARIANTS, DeepSpeedStrategy

__all__ = ["STRATEGY_VARIANTS", "DeepSpeedStrategy", "deepspeed_config"]
