"""``lightning.pytorch.utilities.signature_utils``'s path (imports only)."""

from __future__ import annotations

from ...core.overridden import is_param_in_hook_signature

__all__ = ["is_param_in_hook_signature"]
