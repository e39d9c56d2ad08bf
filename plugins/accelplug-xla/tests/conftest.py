"""Shared fixtures: XLA on this machine's CPU when torch_xla can run here, a clean skip when it cannot.

The tests that train need torch_xla installed for the installed torch (its own environment: see the
README or ``nox -s xla``); everywhere else they skip with the plugin's own diagnosis, while the tests
of what the plugin answers without torch_xla still run. ``PJRT_DEVICE`` is set to ``CPU`` for the
session when it is unset, so a plain ``pytest`` in that environment trains on the host CPU.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from accelplug_xla import environment

from accelplug.registry import reset_registry

XLA_PROBLEM = environment.torch_xla_problem()

if XLA_PROBLEM is None and not os.environ.get(environment.PJRT_DEVICE_ENV):
    os.environ[environment.PJRT_DEVICE_ENV] = "CPU"


def needs_xla() -> None:
    """Skip the calling test, with the reason, when torch_xla cannot run on this machine's CPU here."""
    if XLA_PROBLEM is not None:
        pytest.skip(f"needs torch_xla: {XLA_PROBLEM}")
    device = os.environ.get(environment.PJRT_DEVICE_ENV)
    if device != "CPU":
        pytest.skip(f"these tests run XLA on the host CPU; PJRT_DEVICE={device!r} here")


@pytest.fixture
def xla() -> None:
    """Use in a test that runs on the XLA CPU device."""
    needs_xla()


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    """Each test asks the plugin afresh: its answers depend on environment variables tests change."""
    reset_registry()
    yield
    reset_registry()
