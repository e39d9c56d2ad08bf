"""``lightning.pytorch.callbacks.progress``'s path (imports only)."""

from __future__ import annotations

from ...._import_paths import lazy_submodules
from ....callbacks.progress import ProgressBar, TQDMProgressBar
from ....callbacks.rich_progress import RichProgressBar

__all__ = ["ProgressBar", "RichProgressBar", "TQDMProgressBar"]

__getattr__ = lazy_submodules(__name__, ("progress_bar", "rich_progress", "tqdm_progress"))
