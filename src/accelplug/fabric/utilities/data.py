"""``lightning.fabric.utilities.data``'s path (imports only)."""

from __future__ import annotations

# ``os`` is in Lightning's module too, where code written for it replaces the CPU count
# (``monkeypatch.setattr(lightning.fabric.utilities.data.os, "cpu_count", ...)``): it is the one ``os`` module, so the
# replacement reaches ``suggested_max_num_workers``, which asks ``os`` each time it is called.
import os  # noqa: F401 - reachable as an attribute, as in Lightning

from ...core.hparams import AttributeDict
from ...data.lengths import has_iterable_dataset, has_len, sized_len
from ...data.workers import suggested_max_num_workers

__all__ = ["AttributeDict", "has_iterable_dataset", "has_len", "sized_len", "suggested_max_num_workers"]
