"""Precision names and their aliases, kept free of torch so configuration can be checked without it."""

from __future__ import annotations

from .errors import MisconfigurationException, did_you_mean

__all__ = ["ACCEPTED_PRECISIONS", "PRECISIONS", "PRECISION_ALIASES", "normalize_precision"]

#: The canonical precision names the Trainer understands.
PRECISIONS = ("32-true", "bf16-mixed", "16-mixed", "64-true")

PRECISION_ALIASES: dict[str, str] = {
    **{p: p for p in PRECISIONS},
    "32": "32-true",
    "16": "16-mixed",
    "bf16": "bf16-mixed",
    "64": "64-true",
}
ACCEPTED_PRECISIONS = "'32-true', 'bf16-mixed', '16-mixed', '64-true' (aliases: 32, 16, 'bf16', 64)"


def normalize_precision(precision: object) -> str:
    """The canonical name of a precision value or alias."""
    key = (
        str(precision).strip().lower()
        if isinstance(precision, (int, str)) and not isinstance(precision, bool)
        else None
    )
    if key is None or key not in PRECISION_ALIASES:
        raise MisconfigurationException(
            f"precision={precision!r} is not a supported precision. Accepted: {ACCEPTED_PRECISIONS}."
            f"{did_you_mean(precision, list(PRECISION_ALIASES))}"
        )
    return PRECISION_ALIASES[key]
