"""The ``devices`` arguments the contract accepts and rejects, generated for a given device count.

The expected results follow the selection rules of the public contract, not the implementation in
``accelplug.hardware.devices``, so an accelerator that overrides ``parse_devices`` is held to the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DevicesCase", "invalid_devices_arguments", "valid_devices_cases"]


@dataclass(frozen=True)
class DevicesCase:
    """A ``devices`` argument and the device indices the contract says it selects."""

    argument: object
    expected: list[int]


def valid_devices_cases(device_count: int, auto_device_count: int) -> list[DevicesCase]:
    """Every accepted spelling of ``devices``, for an accelerator with ``device_count`` devices.

    Empty when there are no devices: then every argument, ``"auto"`` included, must be rejected.
    """
    if device_count < 1:
        return []
    every = list(range(device_count))
    last = device_count - 1
    cases = [
        DevicesCase("auto", list(range(auto_device_count))),
        DevicesCase(" AUTO ", list(range(auto_device_count))),
        DevicesCase(1, [0]),
        DevicesCase(device_count, every),
        DevicesCase(-1, every),
        DevicesCase("-1", every),
        DevicesCase("1", [0]),
        DevicesCase(str(device_count), every),
        DevicesCase([0], [0]),
        DevicesCase((0,), [0]),
        DevicesCase([last], [last]),
        DevicesCase("0,", [0]),
    ]
    if device_count >= 2:
        cases += [
            DevicesCase("0,1", [0, 1]),
            DevicesCase(" 0 , 1 ", [0, 1]),
            DevicesCase([1, 0], [1, 0]),
            DevicesCase([0, last], [0, last]),
        ]
    return cases


def invalid_devices_arguments(device_count: int) -> list[object]:
    """Arguments the contract rejects with ``MisconfigurationException`` for ``device_count`` devices.

    With no devices, every otherwise valid spelling is rejected as well.
    """
    too_many = device_count + 1
    arguments: list[object] = [
        0,
        -2,
        "0",
        "-2",
        too_many,
        str(too_many),
        [device_count],
        [-1],
        [0, 0],
        [],
        "",
        "two",
        "0,x",
        "1.5",
        1.5,
        None,
        True,
        {0},
        [0.0],
    ]
    if device_count < 1:
        arguments += ["auto", 1, -1, "-1", "1", [0], "0,"]
    return arguments
