"""Slurm's compact host lists (``node[001-003,007],gpu[1-2]x[1-2]``), read the way Slurm reads them.

``SLURM_NODELIST`` names a job's nodes in this notation, and the first name is where rank 0 runs,
so the rendezvous address of a multi-node job is only right if the notation is expanded exactly as
Slurm does. The rules below were checked against ``scontrol show hostnames`` of Slurm 22.05 (the
test suite compares the two on generated lists):

- items are separated by commas or whitespace outside brackets; empty items are skipped;
- an item is text with one or more bracket groups; several groups multiply out, the first group
  varying slowest (``x[1-2]y[3-4]`` is ``x1y3 x1y4 x2y3 x2y4``); no text may follow the last group;
- a group is comma-separated numbers or ``low-high`` ranges (``low <= high``), and every number of a
  range is zero-padded to the width of ``low`` as written (``[09-10]`` gives ``09 10``, ``[9-010]``
  gives ``9 10``);
- duplicates are kept, in order.

Where Slurm would print something odd for malformed input (``n[1-2`` gives ``n]``), this module
refuses it with the reason: such a value never comes from Slurm, so it was typed by hand and wrong.
Parsing checks the whole list at once; expansion is lazy, so the first host of a list that names a
million nodes costs nothing.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import MisconfigurationException

__all__ = ["HostList", "expand_hostlist", "first_host", "parse_hostlist"]

_SEPARATOR = re.compile(r"[\s,]")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")
EXAMPLE = "'node[001-003,007]' or 'a,b,c'"


@dataclass(frozen=True)
class _Range:
    low: int
    high: int
    width: int

    def names(self) -> Iterator[str]:
        return (str(number).zfill(self.width) for number in range(self.low, self.high + 1))

    def __len__(self) -> int:
        return self.high - self.low + 1


@dataclass(frozen=True)
class _Item:
    """One host pattern: literal text parts and bracket groups, in order."""

    parts: tuple[str | tuple[_Range, ...], ...]

    def names(self) -> Iterator[str]:
        choices = [
            [part] if isinstance(part, str) else itertools.chain.from_iterable(r.names() for r in part)
            for part in self.parts
        ]
        return ("".join(combo) for combo in itertools.product(*[list(c) for c in choices]))

    def count(self) -> int:
        total = 1
        for part in self.parts:
            if not isinstance(part, str):
                total *= sum(len(r) for r in part)
        return total

    def first(self) -> str:
        return "".join(part if isinstance(part, str) else str(part[0].low).zfill(part[0].width) for part in self.parts)


@dataclass(frozen=True)
class HostList:
    """A parsed host list: iterate it for the names, ``len()`` for how many, ``first`` for rank 0's node."""

    text: str
    items: tuple[_Item, ...]

    def __iter__(self) -> Iterator[str]:
        for item in self.items:
            yield from item.names()

    def __len__(self) -> int:
        return sum(item.count() for item in self.items)

    @property
    def first(self) -> str | None:
        return self.items[0].first() if self.items else None


def _fail(source: str, text: str, problem: str) -> MisconfigurationException:
    return MisconfigurationException(
        f"{source}={text!r} is not a Slurm host list: {problem}. Expected host names and bracketed "
        f"ranges, such as {EXAMPLE} (`scontrol show hostnames` expands one)."
    )


def _group(body: str, text: str, source: str) -> tuple[_Range, ...]:
    ranges = []
    for piece in body.split(","):
        match = _RANGE.match(piece)
        if match is None:
            raise _fail(source, text, f"[{body}] holds {piece!r}, which is neither a number nor a low-high range")
        low_text, high_text = match.group(1), match.group(2)
        low = int(low_text)
        high = low if high_text is None else int(high_text)
        if high < low:
            raise _fail(source, text, f"the range {piece!r} runs backwards")
        ranges.append(_Range(low, high, len(low_text)))
    return tuple(ranges)


def _item(chunk: str, text: str, source: str) -> _Item:
    parts: list[str | tuple[_Range, ...]] = []
    position = 0
    while position < len(chunk):
        opening = chunk.find("[", position)
        closing = chunk.find("]", position)
        if opening == -1:
            if closing != -1:
                raise _fail(source, text, f"{chunk!r} has a ']' with no '['")
            if parts:
                raise _fail(source, text, f"{chunk!r} has text after its last ']' (Slurm allows none)")
            parts.append(chunk[position:])
            break
        if closing != -1 and closing < opening:
            raise _fail(source, text, f"{chunk!r} has a ']' with no '['")
        end = chunk.find("]", opening)
        if end == -1:
            raise _fail(source, text, f"{chunk!r} has a '[' that is never closed")
        if "[" in chunk[opening + 1 : end]:
            raise _fail(source, text, f"{chunk!r} nests brackets")
        if opening > position:
            parts.append(chunk[position:opening])
        parts.append(_group(chunk[opening + 1 : end], text, source))
        position = end + 1
    return _Item(tuple(parts))


def _split(text: str, source: str) -> list[str]:
    """Split at separators outside brackets."""
    chunks: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if depth == 0 and _SEPARATOR.match(char):
            chunks.append("".join(current))
            current = []
            continue
        if depth > 0 and char.isspace():
            continue  # "1.2.3.[089, 100-110]": spaces in a range list are read past, as Lightning does
        current.append(char)
    chunks.append("".join(current))
    return [chunk for chunk in chunks if chunk]


def parse_hostlist(text: str, source: str = "host list") -> HostList:
    """Parse ``text`` (checking all of it); ``source`` names it in errors (``"SLURM_NODELIST"``)."""
    if not isinstance(text, str):
        raise MisconfigurationException(f"{source}={text!r} is not a Slurm host list: expected text such as {EXAMPLE}")
    return HostList(text, tuple(_item(chunk, text, source) for chunk in _split(text, source)))


def expand_hostlist(text: str, source: str = "host list") -> list[str]:
    """Every host name ``text`` stands for, in Slurm's order (``scontrol show hostnames``)."""
    return list(parse_hostlist(text, source))


def first_host(text: str, source: str = "host list") -> str | None:
    """The first host name (where Slurm places rank 0), None for an empty list."""
    return parse_hostlist(text, source).first
