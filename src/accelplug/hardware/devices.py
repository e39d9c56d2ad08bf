"""Turning the many accepted spellings of ``devices`` into a list of device indices.

Two steps, so that every place that reads a ``devices`` value agrees on what it means:

1. :func:`tokenize_devices` reads the *shape* of the value on its own, without knowing any
   accelerator: ``"auto"``, all (``-1``), a count, or a list of indices. Selection, the config file
   and ``accelplug launch`` all call it, so ``"2"`` in a config file, ``--devices 2`` and
   ``Trainer(devices="2")`` can never be read differently.
2. :func:`parse_devices` checks that request against an accelerator's device count.

Only ASCII digits count as digits. Python's ``str.isdigit()`` is also true for ``"²"`` or ``"٣"``,
which ``int()`` then refuses or reads as a number nobody typed on purpose; such a value is refused
here with the same message everywhere. Kept free of torch and of the registry.
"""

from __future__ import annotations

from typing import Literal

from .._record import record
from ..errors import MisconfigurationException

__all__ = [
    "ACCEPTED_DEVICES_FORMS",
    "DevicesRequest",
    "DevicesSpec",
    "InvalidDevicesError",
    "devices_from_text",
    "parse_devices",
    "tokenize_devices",
    "tokenize_devices_or_none",
]

DevicesSpec = int | str | list[int] | tuple[int, ...]

ACCEPTED_DEVICES_FORMS = (
    '"auto" (all devices of the accelerator), a positive int n (the first n devices), '
    '-1 or "-1" (all devices), a list of distinct indices such as [0, 2], '
    'a count string such as "2", or an index string such as "0,2"'
)


class InvalidDevicesError(MisconfigurationException, TypeError):
    """A ``devices`` value of a shape no accelerator accepts; ``why`` is the short cause. Also a ``TypeError``, as
    Lightning's CPU accelerator refuses such a value (``devices="x"``); its GPU parser's is a ``ValueError``, which a
    configuration error already is."""

    def __init__(self, devices: object, why: str, message: str | None = None) -> None:
        self.devices = devices
        self.why = why
        super().__init__(
            message or f"devices={devices!r} is not valid: {why}. Accepted forms: {ACCEPTED_DEVICES_FORMS}."
        )


@record(frozen=True)
class DevicesRequest:
    """What a ``devices`` value asks for, before any accelerator is consulted."""

    kind: Literal["auto", "all", "count", "indices"]
    #: The count for ``"count"``, the indices for ``"indices"``; empty otherwise.
    numbers: tuple[int, ...] = ()

    def as_argument(self) -> int | str | list[int]:
        """The plain Python value meaning the same (``"auto"``, ``-1``, ``2`` or ``[0, 2]``)."""
        if self.kind == "auto":
            return "auto"
        if self.kind == "all":
            return -1
        if self.kind == "count":
            return self.numbers[0]
        return list(self.numbers)

    def as_text(self) -> str:
        """The canonical string form (``"auto"``, ``"-1"``, ``"2"``, ``"0,2"``), as a config file stores it.

        A single index keeps a trailing comma (``[1]`` is ``"1,"``): ``"1"`` would read back as a count.
        """
        if self.kind == "indices":
            return ",".join(str(i) for i in self.numbers) + ("," if len(self.numbers) == 1 else "")
        return str(self.as_argument())


def _ascii_number(text: str) -> int | None:
    """The value of a string of ASCII digits, or None for anything else (signs, ``"²"``, ``"٣"``)."""
    return int(text) if text and text.isascii() and text.isdigit() else None


def _indices(devices: object, indices: list[int]) -> DevicesRequest:
    if not indices:
        raise InvalidDevicesError(devices, "the list of device indices is empty")
    if len(set(indices)) != len(indices):
        raise InvalidDevicesError(devices, "a device index appears more than once")
    negative = [i for i in indices if i < 0]
    if negative:
        raise InvalidDevicesError(devices, f"index {negative[0]} is negative")
    return DevicesRequest("indices", tuple(indices))


def _tokenize_text(devices: str) -> DevicesRequest:
    text = devices.strip()
    if text.lower() == "auto":
        return DevicesRequest("auto")
    if text == "-1":
        return DevicesRequest("all")
    if "," in text:
        parts = [p.strip() for p in text.split(",")]
        if parts[-1] == "":  # "0," is Lightning's spelling of "device 0"
            parts = parts[:-1]
        numbers = [_ascii_number(p) for p in parts]
        if not parts or any(n is None for n in numbers):
            raise InvalidDevicesError(devices, "an index string holds only ASCII digits and commas")
        return _indices(devices, [n for n in numbers if n is not None])
    count = _ascii_number(text)
    if count is None:
        if text and all(ch.isdigit() or ch in "+-" for ch in text):
            why = "a count is written with the ASCII digits 0-9 and no sign (other digit characters are not read)"
        else:
            why = "this string is neither a count nor a list of indices"
        raise InvalidDevicesError(devices, why)
    if count < 1:
        raise InvalidDevicesError(devices, "a device count must be positive")
    return DevicesRequest("count", (count,))


def tokenize_devices(devices: object) -> DevicesRequest:
    """Read the shape of a ``devices`` value; anything else raises :class:`InvalidDevicesError`.

    Accepted: ``"auto"`` (any case, spaces around), ``-1``/``"-1"``, a positive int or a string of
    ASCII digits, a non-empty list or tuple of distinct non-negative ints, or a comma-separated
    string of them (a trailing comma allowed). Whether the indices exist is :func:`parse_devices`'s
    question, asked against an accelerator.
    """
    if isinstance(devices, bool):
        raise InvalidDevicesError(devices, "a bool is not a device count")
    if isinstance(devices, int):
        if devices == -1:
            return DevicesRequest("all")
        if devices < 1:
            raise InvalidDevicesError(devices, "a device count must be a positive int or -1")
        return DevicesRequest("count", (devices,))
    if isinstance(devices, str):
        return _tokenize_text(devices)
    if isinstance(devices, (list, tuple)):
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in devices):
            raise InvalidDevicesError(devices, "a list of devices must hold ints only")
        return _indices(devices, list(devices))
    raise InvalidDevicesError(devices, f"a value of type {type(devices).__name__} is not accepted")


def tokenize_devices_or_none(devices: object) -> DevicesRequest | None:
    """:func:`tokenize_devices`, None for a value it refuses (the caller reports it with its own context)."""
    try:
        return tokenize_devices(devices)
    except InvalidDevicesError:
        return None


def devices_from_text(text: str) -> int | str:
    """A ``devices`` value typed as text (``--devices``), checked by :func:`tokenize_devices`.

    A number comes back as an int, so messages about it read ``devices=0`` as in Python; anything
    else comes back in its canonical text form (``"auto"``, ``"0,2"``).
    """
    stripped = text.strip()
    digits = stripped.removeprefix("-")
    if digits.isascii() and digits.isdigit():
        number = int(stripped)
        tokenize_devices(number)
        return number
    return tokenize_devices(text).as_text()


def _fail_message(devices: object, accelerator: str, count: int, why: str) -> str:
    return (
        f"devices={devices!r} is not valid for accelerator {accelerator!r}, which has {count} "
        f"device(s) here: {why}. Accepted forms: {ACCEPTED_DEVICES_FORMS}."
    )


def _fail(devices: object, accelerator: str, count: int, why: str) -> MisconfigurationException:
    return MisconfigurationException(_fail_message(devices, accelerator, count, why))


def parse_devices(devices: object, device_count: int, accelerator: str, auto_count: int | None = None) -> list[int]:
    """Device indices for ``devices``; any other input raises ``MisconfigurationException``.

    ``auto_count`` is how many devices ``"auto"`` means (all of them unless the accelerator says
    otherwise, e.g. the CPU runs one process by default).
    """
    count = device_count
    try:
        request = tokenize_devices(devices)
    except InvalidDevicesError as exc:  # a shape no accelerator reads: still the TypeError Lightning's CPU raises
        raise InvalidDevicesError(devices, exc.why, _fail_message(devices, accelerator, count, exc.why)) from None
    if request.kind in ("all", "auto") and count < 1:
        raise _fail(devices, accelerator, count, "there are no devices to use")
    if request.kind == "all" or (request.kind == "auto" and auto_count is None):
        return list(range(count))
    if request.kind in ("auto", "count"):
        n = request.numbers[0] if request.kind == "count" else max(auto_count or 1, 1)
        if n > count:
            raise _fail(devices, accelerator, count, f"asks for {n} devices but only {count} exist")
        return list(range(n))
    bad = [i for i in request.numbers if i >= count]
    if bad:
        valid = f"0..{count - 1}" if count else "none"
        raise _fail(devices, accelerator, count, f"index {bad[0]} is out of range (valid: {valid})")
    return list(request.numbers)
