"""``CUDA_VISIBLE_DEVICES`` read the way the CUDA runtime reads it, without asking the runtime.

The runtime's rules, as measured on an H100 (one fresh process per value) and as PyTorch's own
NVML-based count applies them (``torch.cuda._parse_visible_devices``):

- unset: every GPU; set but empty: none.
- A value that starts with ``GPU-`` is a list of UUIDs. Each entry must start with ``GPU-`` and
  carry at least one character after it; it may be abbreviated to any prefix that matches exactly
  one GPU. Reading stops at the first entry that is not such a prefix.
- A value that starts with ``MIG-`` names MIG instances, which NVML's GPU list cannot resolve: the
  answer is "undecided" and the caller counts in a child process.
- Otherwise each entry is read like C's ``strtoul``: spaces around it, an optional sign, then ASCII
  digits, and whatever follows the digits is ignored (``"0gpu"`` is 0, ``"+0"`` is 0, ``"-0"`` is 0).
  Reading stops at an entry with no digits or a negative number; of what was read, the GPUs up to
  the first index past the last GPU are visible.
- A device named twice in what was read (``"0,0"``, the same UUID twice, ``"GPU-9e8,GPU-9e8d"``)
  leaves the process with no GPU at all.

Where this module differs from ``torch.cuda._parse_visible_devices`` it follows the runtime: only
ASCII digits are digits (torch's ``str.isdigit()`` takes ``"²"`` and then fails in ``int()``), and a
bare ``GPU-`` matches nothing (torch lets it match the only GPU of a one-GPU machine; the runtime
shows none). torch's version is a private function whose behaviour has changed between releases,
so it is not called; the test suite checks this module against PyTorch's own test cases.
Kept free of torch and of NVML: it maps a string and a list of UUIDs to indices.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Visibility", "resolve_visible_devices"]

_STRTOUL = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class Visibility:
    """The physical GPUs (NVML indices) a process sees, in CUDA's order, and why the list ends where it does.

    ``physical`` is None when NVML cannot decide (MIG instances): count in a child process instead.
    """

    physical: tuple[int, ...] | None
    #: Why fewer GPUs are visible than the value seems to name; None when nothing was cut short.
    note: str | None = None


def _strtoul(entry: str) -> int | None:
    """The number an entry starts with, as C's ``strtoul`` reads it (ASCII only); None without digits."""
    match = _STRTOUL.match(entry.strip(" \t\n\r\f\v"))  # C isspace(): ASCII whitespace only
    return int(match.group()) if match else None


def _ordinals(value: str, gpu_count: int) -> Visibility:
    # Read left to right as the runtime does (measured on an H100): the first entry that is not a
    # number, is negative or names no GPU ends the list; a GPU named twice before that hides them all.
    listed: list[int] = []
    for entry in value.split(","):
        number = _strtoul(entry)
        if number is None or number < 0:
            why = "has no leading digits" if number is None else "is negative"
            return Visibility(tuple(listed), f"entry {entry.strip()!r} {why}, so the entries from it on are ignored")
        if number >= gpu_count:
            return Visibility(
                tuple(listed),
                f"GPU {number} does not exist (this machine has {gpu_count}), so the entries from it on are ignored",
            )
        if number in listed:
            return Visibility((), f"GPU {number} is named twice, and the CUDA runtime then shows no GPU at all")
        listed.append(number)
    return Visibility(tuple(listed))


def _uuids(value: str, uuids: Sequence[str]) -> Visibility:
    # As for indices: read left to right; an entry that does not start with GPU- or does not match
    # exactly one GPU (by UUID prefix) ends the list; a GPU named twice before that hides them all.
    chosen: list[int] = []
    for entry in value.split(","):
        if not entry.startswith("GPU-"):
            return Visibility(
                tuple(chosen), f"entry {entry!r} does not start with GPU-, so the entries from it on are ignored"
            )
        matches = [i for i, uuid in enumerate(uuids) if uuid.startswith(entry)] if len(entry) > len("GPU-") else []
        if len(matches) != 1:
            why = "matches several GPUs" if matches else "matches no GPU"
            return Visibility(tuple(chosen), f"{entry!r} {why}, so the entries from it on are ignored")
        if matches[0] in chosen:
            return Visibility(
                (), f"{entry!r} names a GPU already listed, and the CUDA runtime then shows no GPU at all"
            )
        chosen.append(matches[0])
    return Visibility(tuple(chosen))


def resolve_visible_devices(value: str | None, uuids: Sequence[str]) -> Visibility:
    """Which of the GPUs with these ``uuids`` (NVML's order) a process started with ``value`` sees."""
    if value is None:
        return Visibility(tuple(range(len(uuids))))
    if value.startswith("MIG-"):
        return Visibility(None, "MIG instances are not in NVML's list of GPUs")
    if value.startswith("GPU-"):
        return _uuids(value, uuids)
    return _ordinals(value, len(uuids))
