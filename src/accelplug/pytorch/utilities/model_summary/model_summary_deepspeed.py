"""``lightning.pytorch.utilities.model_summary.model_summary_deepspeed``'s path (imports only)."""

from __future__ import annotations

from ....core.summary import DeepSpeedLayerSummary, DeepSpeedSummary, deepspeed_param_size

__all__ = ["DeepSpeedLayerSummary", "DeepSpeedSummary", "deepspeed_param_size"]
