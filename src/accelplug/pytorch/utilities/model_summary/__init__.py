"""``lightning.pytorch.utilities.model_summary``'s path (imports only)."""

from __future__ import annotations

from ...._import_paths import lazy_submodules
from ....core.summary import (
    DeepSpeedSummary,
    LayerSummary,
    get_formatted_model_size,
    get_human_readable_count,
    parse_batch_shape,
    summarize,
)
from ....core.summary import (
    ModuleSummary as ModelSummary,
)

__all__ = [
    "DeepSpeedSummary",
    "LayerSummary",
    "ModelSummary",
    "get_formatted_model_size",
    "get_human_readable_count",
    "parse_batch_shape",
    "summarize",
]

__getattr__ = lazy_submodules(__name__, ("model_summary", "model_summary_deepspeed"))
