"""The built-in precision names and their aliases, kept free of torch so configuration can be checked without it.

The precision objects themselves (what each name does) are :mod:`accelplug.precision`; a plugin adds
names through the ``register_precisions`` hook, and the registry passes its alias table here.
"""

from __future__ import annotations

from collections.abc import Mapping

from .errors import MisconfigurationException, did_you_mean

__all__ = ["ACCEPTED_PRECISIONS", "DTYPE_WORDS", "PRECISIONS", "PRECISION_ALIASES", "normalize_precision"]

#: The canonical precision names the Trainer understands.
PRECISIONS = ("32-true", "bf16-mixed", "16-mixed", "64-true", "bf16-true", "16-true")

PRECISION_ALIASES: dict[str, str] = {
    **{p: p for p in PRECISIONS},
    "32": "32-true",
    "16": "16-mixed",
    "bf16": "bf16-mixed",
    "64": "64-true",
}
ACCEPTED_PRECISIONS = (
    "'32-true', 'bf16-mixed', '16-mixed', '64-true', 'bf16-true', '16-true' (aliases: 32, 16, 'bf16', 64)"
)

#: Dtype words people type for a precision, and the precision that word most likely means. Spelling
#: distance alone suggests 'bf16' for "fp16", a different dtype; these are meanings, not typos.
DTYPE_WORDS: dict[str, str] = {
    **dict.fromkeys(("fp16", "float16", "half", "torch.float16", "torch.half", "amp", "mixed"), "16-mixed"),
    **dict.fromkeys(("bfloat16", "torch.bfloat16", "bf16mixed"), "bf16-mixed"),
    **dict.fromkeys(("fp32", "float32", "float", "full", "single", "torch.float32", "torch.float"), "32-true"),
    **dict.fromkeys(("fp64", "float64", "double", "torch.float64", "torch.double"), "64-true"),
}


def normalize_precision(precision: object, aliases: Mapping[str, str] | None = None) -> str:
    """The canonical name of a precision value or alias.

    ``aliases`` (spelling -> canonical name) comes from the registry when plugins may have added
    precisions; without it only the built-in names are known, and no torch is imported.
    """
    table = PRECISION_ALIASES if aliases is None else aliases
    key = (
        str(precision).strip().lower()
        if isinstance(precision, (int, str)) and not isinstance(precision, bool)
        else None
    )
    if key is None or key not in table:
        extra = sorted(set(table.values()) - set(PRECISIONS))
        accepted = ACCEPTED_PRECISIONS + (f"; from plugins: {', '.join(repr(e) for e in extra)}" if extra else "")
        meant = DTYPE_WORDS.get(str(precision).strip().lower()) if not isinstance(precision, bool) else None
        hint = f" Did you mean {meant!r}?" if meant in table else did_you_mean(precision, list(table))
        raise MisconfigurationException(
            f"precision={precision!r} is not a supported precision. Accepted: {accepted}.{hint}"
        )
    return table[key]
