"""``lightning.pytorch.callbacks.stochastic_weight_avg``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.stochastic_weight_avg import StochasticWeightAveraging, log

__all__ = ["StochasticWeightAveraging", "log"]
