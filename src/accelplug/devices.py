"""Turning the many accepted spellings of ``devices`` into a list of device indices.

Kept free of torch and of the registry so every accelerator (built-in or third-party) shares one
parser and one error message, whatever it was given.
"""

from __future__ import annotations

from .errors import MisconfigurationException

__all__ = ["ACCEPTED_DEVICES_FORMS", "DevicesSpec", "parse_devices"]

DevicesSpec = int | str | list[int] | tuple[int, ...]

ACCEPTED_DEVICES_FORMS = (
    '"auto" (all devices of the accelerator), a positive int n (the first n devices), '
    '-1 or "-1" (all devices), a list of distinct indices such as [0, 2], '
    'a count string such as "2", or an index string such as "0,2"'
)


def _fail(devices: object, accelerator: str, count: int, why: str) -> MisconfigurationException:
    return MisconfigurationException(
        f"devices={devices!r} is not valid for accelerator {accelerator!r}, which has {count} "
        f"device(s) here: {why}. Accepted forms: {ACCEPTED_DEVICES_FORMS}."
    )


def _first_n(devices: object, n: int, accelerator: str, count: int) -> list[int]:
    if n > count:
        raise _fail(devices, accelerator, count, f"asks for {n} devices but only {count} exist")
    return list(range(n))


def _indices(devices: object, indices: list[int], accelerator: str, count: int) -> list[int]:
    if not indices:
        raise _fail(devices, accelerator, count, "the list of device indices is empty")
    if len(set(indices)) != len(indices):
        raise _fail(devices, accelerator, count, "a device index appears more than once")
    bad = [i for i in indices if i < 0 or i >= count]
    if bad:
        valid = f"0..{count - 1}" if count else "none"
        raise _fail(devices, accelerator, count, f"index {bad[0]} is out of range (valid: {valid})")
    return indices


def _all(devices: object, accelerator: str, count: int) -> list[int]:
    if count < 1:
        raise _fail(devices, accelerator, count, "there are no devices to use")
    return list(range(count))


def parse_devices(devices: object, device_count: int, accelerator: str, auto_count: int | None = None) -> list[int]:
    """Device indices for ``devices``; any other input raises ``MisconfigurationException``.

    ``auto_count`` is how many devices ``"auto"`` means (all of them unless the accelerator says
    otherwise, e.g. the CPU runs one process by default).
    """
    count = device_count
    if isinstance(devices, bool):
        raise _fail(devices, accelerator, count, "a bool is not a device count")
    if isinstance(devices, int):
        if devices == -1:
            return _all(devices, accelerator, count)
        if devices < 1:
            raise _fail(devices, accelerator, count, "a device count must be a positive int or -1")
        return _first_n(devices, devices, accelerator, count)
    if isinstance(devices, str):
        text = devices.strip()
        if text.lower() == "auto":
            n = count if auto_count is None else auto_count
            return _first_n(devices, n, accelerator, count) if n > 0 else _all(devices, accelerator, 0)
        if text == "-1":
            return _all(devices, accelerator, count)
        if "," in text:
            parts = text.split(",")
            if parts and parts[-1].strip() == "":  # "0," is Lightning's spelling of "device 0"
                parts = parts[:-1]
            if not all(p.strip().isdigit() for p in parts):
                raise _fail(devices, accelerator, count, "an index string holds only digits and commas")
            return _indices(devices, [int(p) for p in parts], accelerator, count)
        if text.isdigit():
            n = int(text)
            if n < 1:
                raise _fail(devices, accelerator, count, "a device count must be positive")
            return _first_n(devices, n, accelerator, count)
        raise _fail(devices, accelerator, count, "this string is neither a count nor a list of indices")
    if isinstance(devices, (list, tuple)):
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in devices):
            raise _fail(devices, accelerator, count, "a list of devices must hold ints only")
        return _indices(devices, list(devices), accelerator, count)
    raise _fail(devices, accelerator, count, f"a value of type {type(devices).__name__} is not accepted")
