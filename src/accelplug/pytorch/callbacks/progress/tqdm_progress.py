"""``lightning.pytorch.callbacks.progress.tqdm_progress``'s path (it imports tqdm, as Lightning's does)."""

from __future__ import annotations

from ....callbacks.progress import TQDMProgressBar
from ....callbacks.tqdm_bar import Tqdm, convert_inf

__all__ = ["TQDMProgressBar", "Tqdm", "convert_inf"]
