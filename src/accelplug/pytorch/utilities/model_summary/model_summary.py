"""``lightning.pytorch.utilities.model_summary.model_summary``'s path (imports only)."""

from __future__ import annotations

from ....core.summary import (
    LEFTOVER_PARAMS_NAME,
    NOT_APPLICABLE,
    PARAMETER_NUM_UNITS,
    UNKNOWN_SIZE,
    LayerSummary,
    get_formatted_model_size,
    get_human_readable_count,
    parse_batch_shape,
    summarize,
    warning_cache,
)
from ....core.summary import (
    ModuleSummary as ModelSummary,
)

__all__ = [
    "LEFTOVER_PARAMS_NAME",
    "NOT_APPLICABLE",
    "PARAMETER_NUM_UNITS",
    "UNKNOWN_SIZE",
    "LayerSummary",
    "ModelSummary",
    "get_formatted_model_size",
    "get_human_readable_count",
    "parse_batch_shape",
    "summarize",
    "warning_cache",
]
