"""``lightning.fabric.utilities.data``'s path (imports only)."""

from __future__ import annotations

from ...core.hparams import AttributeDict
from ...data.lengths import has_iterable_dataset, has_len, sized_len
from ...data.workers import suggested_max_num_workers

__all__ = ["AttributeDict", "has_iterable_dataset", "has_len", "sized_len", "suggested_max_num_workers"]
