"""The warning category for "this may be a mistake" notices, and the switch that silences them."""

from __future__ import annotations

import warnings

__all__ = ["PossibleUserWarning", "disable_possible_user_warnings"]


class PossibleUserWarning(UserWarning):
    """Something that is often, not always, a mistake (few data-loader workers, a tiny logging interval)."""


def disable_possible_user_warnings(module: str = "") -> None:
    """Ignore ``PossibleUserWarning`` from every module, or from the modules whose name starts with ``module``."""
    warnings.filterwarnings("ignore", category=PossibleUserWarning, module=module)
