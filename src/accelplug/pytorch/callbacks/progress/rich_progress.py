"""``lightning.pytorch.callbacks.progress.rich_progress``'s path (imports only)."""

from __future__ import annotations

from ....callbacks.progress import RichProgressBar, RichProgressBarTheme

__all__ = ["RichProgressBar", "RichProgressBarTheme"]
