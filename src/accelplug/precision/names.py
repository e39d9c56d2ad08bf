"""The precision names users type, read from the built-in precision classes, and what each dtype word means.

Each built-in precision class (:data:`accelplug.precision.BUILTIN_PRECISIONS`) declares its ``name`` and
``aliases``; the tables here are built from them, so a name is written once. The classes import no torch
(they import it inside their methods), so a config file is still checked without torch. A plugin adds
names through the ``register_precisions`` hook, and the registry passes its own alias table here.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import MisconfigurationException, did_you_mean
from . import BUILTIN_PRECISIONS

__all__ = ["ACCEPTED_PRECISIONS", "DTYPE_WORDS", "PRECISIONS", "PRECISION_ALIASES", "normalize_precision"]

#: The canonical names of the built-in precisions, in their classes' order.
PRECISIONS: tuple[str, ...] = tuple(cls.name for cls in BUILTIN_PRECISIONS)

#: Every accepted spelling of a built-in precision (lowercase) -> its canonical name.
PRECISION_ALIASES: dict[str, str] = {
    **{name: name for name in PRECISIONS},
    **{alias.lower(): cls.name for cls in BUILTIN_PRECISIONS for alias in cls.aliases},
}


def _shown(spelling: str) -> str:
    return spelling if spelling.isdigit() else repr(spelling)  # 16 is passed as an int as often as not


#: The built-in names and aliases, in words (the end of every precision error).
ACCEPTED_PRECISIONS = (
    ", ".join(repr(name) for name in PRECISIONS)
    + f" (aliases: {', '.join(_shown(a) for cls in BUILTIN_PRECISIONS for a in cls.aliases)})"
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
            f"precision={precision!r} is not a supported precision. Accepted: {accepted}.{hint} "
            f"(Lightning's words: Precision {precision!r} is invalid.)"
        )
    return table[key]
