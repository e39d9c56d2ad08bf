"""``lightning.pytorch.callbacks.weight_averaging``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.weight_averaging import EMAWeightAveraging, WeightAveraging, log

__all__ = ["EMAWeightAveraging", "WeightAveraging", "log"]
