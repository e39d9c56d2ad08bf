"""The tqdm bar the ``TQDMProgressBar`` draws (Lightning's ``Tqdm``), and ``convert_inf``.

A plain tqdm bar whose numbers in the postfix are padded with zeros to five characters (``2.37`` -> ``2.370``), so
the text after the bar keeps its width from one update to the next instead of flickering. Importing this module
imports tqdm, which only the tqdm bar needs.
"""

from __future__ import annotations

import math

from tqdm.auto import tqdm as _tqdm  # type: ignore[import-untyped]

__all__ = ["Tqdm", "convert_inf"]

_PAD = 5


def _padded(text: str, number: bool) -> str:
    """Numbers padded with zeros to five characters (``2.37`` -> ``2.370``), so the bar's text does not jitter."""
    if not number or "e" in text:
        return text
    if "." not in text and len(text) < _PAD:
        try:
            float(text)
        except ValueError:
            return text
        text += "."
    return text + "0" * (_PAD - len(text))


class Tqdm(_tqdm):  # type: ignore[misc]
    """tqdm with Lightning's padded numbers (:meth:`format_num`)."""

    @staticmethod
    def format_num(n: int | float | str) -> str:
        """A number as tqdm writes it, floats and numeric strings padded to five characters."""
        text = n if isinstance(n, str) else _tqdm.format_num(n)
        return _padded(text, isinstance(n, (float, str)))


def convert_inf(x: int | float | None) -> int | float | None:
    """``x``, or None for an infinite or NaN total (tqdm shows no total then)."""
    if x is None or math.isinf(x) or math.isnan(x):
        return None
    return x
