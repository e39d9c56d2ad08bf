"""``lightning.pytorch.utilities.data``'s path (imports only)."""

from __future__ import annotations

from ...data.lengths import BType, extract_batch_size, has_len_all_ranks

__all__ = ["BType", "extract_batch_size", "has_len_all_ranks"]
