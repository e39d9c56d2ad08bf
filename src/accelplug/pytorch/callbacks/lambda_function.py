"""``lightning.pytorch.callbacks.lambda_function``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.lambda_function import LambdaCallback

__all__ = ["LambdaCallback"]
