"""Fixtures of the real-device tests: the device made ready once, and each child run once per session.

Where the device cannot run here the tests skip with the reason, unless ``TESTS_VULKAN=require`` (CI), where
they fail. pytest's summary prints what lavapipe's installation and each child run took.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.warm_python import WarmPython

from .vulkan import MODE_ENV, REPO, Device, VulkanUnavailable, mode, prepare

HERE = Path(__file__).resolve().parent
_timings: list[str] = []


def unavailable(reason: str) -> None:
    if mode() == "require":
        pytest.fail(f"{MODE_ENV}=require, but the vulkan device cannot run here: {reason}", pytrace=False)
    pytest.skip(f"the vulkan device cannot run here: {reason}")


@pytest.fixture(scope="session")
def vulkan(tmp_path_factory: pytest.TempPathFactory) -> Device:
    """lavapipe, torchvulkan and the bridge, ready for child processes."""
    begin = time.perf_counter()
    try:
        device = prepare(tmp_path_factory.getbasetemp())
    except VulkanUnavailable as exc:
        unavailable(str(exc))
        raise  # pragma: no cover - skip() and fail() raise
    _timings.append(f"vulkan: {device.installation}; ready in {time.perf_counter() - begin:.1f} s")
    return device


@pytest.fixture(scope="session")
def device_python() -> Iterator[WarmPython]:
    """The server the device's child processes are forked from (``tests/warm_python.py``): torch imported once
    and nothing else; torchvulkan, the Vulkan driver, accelplug, the bridge and Lightning are each child's own."""
    python = WarmPython()
    yield python
    python.close()


def run_child(
    python: WarmPython,
    device: Device,
    script: str,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> dict[str, Any]:
    """Run ``python tests/real_device/SCRIPT args`` on the device, forked from ``python``; its last stdout line,
    parsed as JSON."""
    begin = time.perf_counter()
    result = python.run([str(HERE / script), *args], env=device.env(env), timeout=600, cwd=cwd or REPO)
    seconds = time.perf_counter() - begin
    output = f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    assert result.returncode == 0, f"{script} {' '.join(args)} failed:\n{output}"
    _timings.append(f"vulkan: {script} {' '.join(args[1:])} took {seconds:.1f} s")
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


#: Scenarios of ``vulkan_child.py`` run together in one child process (strict mode needs a process of its own).
TOGETHER = ("stages", "fabric", "precisions", "compiling", "optional_parts")


@pytest.fixture(scope="session")
def scenario(
    vulkan: Device, device_python: WarmPython, tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., dict[str, Any]]:
    """``scenario("stages")``: that scenario's report; each child process runs once per session."""
    done: dict[str, dict[str, Any]] = {}

    def get(name: str) -> dict[str, Any]:
        if name not in done:
            names = TOGETHER if name in TOGETHER else (name,)
            env = {"TORCHVULKAN_STRICT": "1"} if name == "strict" else {}
            done.update(
                run_child(device_python, vulkan, "vulkan_child.py", str(tmp_path_factory.mktemp(name)), *names, env=env)
            )
        return done[name]

    return get


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in _timings:
        terminalreporter.write_line(line)
